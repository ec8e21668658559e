"""GPU batches on a warm batch server (gpude.run.batch_server): `gpude run` as its client makes the rows and
traces of a `gpude run` of its own, byte for byte but for the times; two batches share one server; a batch's
error comes back as `gpude run` says it; a client that leaves gets nothing written; the server leaves when
idle or asked. GPU batches on the simulator (a GPU implementation, one trial, its initial population)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest
from test_run_batches import same_batch

from gpude.run import batch_server

REPO = Path(__file__).resolve().parents[1]


def run_args(stem, function="Q01", extra=()):
    return ["run", "--implementation", "naive_gpu", "--function", function, "--dim", "10", "--popsize", "8",
            "--max-fes", "8", "--trials", "1", "--seed", "11", *extra,
            "--out-csv", f"{stem}.csv", "--out-traces", f"{stem}.npz"]


@pytest.fixture
def servers(monkeypatch):
    """A folder of batch servers of this test alone (short: a socket's path has at most 107 bytes),
    every server in it stopped at the end."""
    folder = tempfile.mkdtemp(prefix="gbs")
    monkeypatch.setenv(batch_server.DIR_VAR, folder)
    yield Path(folder)
    batch_server.stop_servers()
    shutil.rmtree(folder, ignore_errors=True)


def gpude(args, cwd, server: bool):
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1"}
    env.pop(batch_server.ENV_VAR, None)
    if server:
        env[batch_server.ENV_VAR] = "1"
    return subprocess.run([sys.executable, "-m", "gpude", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def server_pids(folder: Path) -> set[int]:
    import json

    return {json.loads(p.read_text())["pid"] for p in folder.glob("*.json")}


@pytest.mark.cudasim
def test_a_gpu_batch_on_the_server_makes_the_rows_of_its_own_process(tmp_path, servers):
    alone = gpude(run_args("alone"), tmp_path, server=False)
    assert alone.returncode == 0, alone.stdout + alone.stderr
    first = gpude(run_args("first"), tmp_path, server=True)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "1/1 trials" in first.stdout  # the batch's output, printed by the client (the batch's log)
    assert "started the batch server" in first.stderr  # (its setup then includes the server's imports)
    (pid,) = server_pids(servers)
    second = gpude(run_args("second", function="F05"), tmp_path, server=True)
    assert second.returncode == 0, second.stdout + second.stderr
    assert server_pids(servers) == {pid} and "started the batch server" not in second.stderr  # the same process
    same_batch(tmp_path / "alone.csv", tmp_path / "first.csv")
    assert batch_server.stop_servers() == 1 and not list(servers.glob("*.sock"))


@pytest.mark.cudasim
def test_a_batch_s_error_comes_back_in_one_line_with_exit_status_2(tmp_path, servers):
    bad = gpude(run_args("bad", extra=["--dim", "7"]), tmp_path, server=True)
    assert bad.returncode == 2 and "not available at dim=7" in bad.stdout + bad.stderr
    assert not (tmp_path / "bad.csv").exists()


def test_a_thread_pool_batch_goes_to_the_cpu_server_without_a_lease(tmp_path, servers, monkeypatch):
    # master_slave (every core, timed alone): the CPU's warm process, the rows of its own process
    def pool_args(stem, function="F01"):
        return [*run_args(stem, function)[:2], "master_slave", *run_args(stem, function)[3:]]

    alone = gpude(pool_args("alone"), tmp_path, server=False)
    assert alone.returncode == 0, alone.stdout + alone.stderr
    first = gpude(pool_args("first"), tmp_path, server=True)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "1/1 trials" in first.stdout and "leased" not in first.stdout + first.stderr  # no GPU lease
    (pid,) = server_pids(servers)
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")  # the key under the clients' environment (a GPU host's is 0)
    assert (servers / f"{batch_server.server_key(batch_server.CPU_SERVER)}.json").exists()
    second = gpude(pool_args("second", function="F05"), tmp_path, server=True)
    assert second.returncode == 0 and server_pids(servers) == {pid}
    same_batch(tmp_path / "alone.csv", tmp_path / "first.csv")
    # a single-threaded CPU batch keeps its own process (its lanes run side by side)
    seq = gpude([*run_args("seq")[:2], "sequential", *run_args("seq")[3:]], tmp_path, server=True)
    assert seq.returncode == 0 and server_pids(servers) == {pid}


def warmup_args(implementation):
    return ["warmup", "--implementation", implementation, "--function", "Q01", "--dim", "10", "--popsize", "8",
            "--max-fes", "8", "--out", f"{implementation}.json"]


@pytest.mark.cudasim
def test_a_gpu_warm_up_starts_and_primes_the_servers_its_batches_will_use(tmp_path, servers, monkeypatch):
    # the servers' start and imports fall in the warm-up's time: the first timed batch finds its server warm
    monkeypatch.setenv("GPUDE_FAKE_GPUS", "2")  # a server each, keyed by the GPUs' UUIDs
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)  # (a GPU host's would hide one of the two)
    warm = gpude(warmup_args("naive_gpu"), tmp_path, server=True)
    assert warm.returncode == 0 and "started 2 batch servers" in warm.stderr, warm.stdout + warm.stderr
    pids = server_pids(servers)
    assert len(pids) == 2
    again = gpude(warmup_args("all_gpu"), tmp_path, server=True)  # the next warm-up: none new
    assert again.returncode == 0 and "started" not in again.stderr and server_pids(servers) == pids
    first = gpude(run_args("first"), tmp_path, server=True)
    assert first.returncode == 0 and "1/1 trials" in first.stdout, first.stdout + first.stderr
    assert "started the batch server" not in first.stderr and server_pids(servers) == pids
    # a CPU warm-up, and a GPU one without servers (a cluster, `batch_server=false`), start none
    assert batch_server.stop_servers() == 2
    for implementation, server in (("master_slave", True), ("naive_gpu", False)):
        off = gpude(warmup_args(implementation), tmp_path, server=server)
        assert off.returncode == 0 and "started" not in off.stderr and not server_pids(servers)


def test_a_server_answers_a_ping_and_skips_a_client_that_only_looked(servers):
    key = "p" * 16
    thread = threading.Thread(target=batch_server.serve, args=(key,), kwargs={"idle_s": 30, "on_gpu": False})
    thread.start()
    path = batch_server._paths(key)[0]
    for _ in range(600):
        sock = batch_server._connect(path)
        if sock is not None:
            break
        threading.Event().wait(0.05)
    sock.close()  # connected and left without a word: the server goes on
    for message in ({"ping": True}, {"stop": True}):
        with batch_server._connect(path) as sock:
            batch_server._send(sock, message)
            assert sock.makefile("r").readline().strip() == '{"rc": 0}'
    thread.join(timeout=30)
    assert not thread.is_alive() and not path.exists()


def test_another_environment_or_gpu_is_another_server(monkeypatch):
    key = batch_server.server_key("GPU-a")
    assert batch_server.server_key("GPU-a") == key and batch_server.server_key("GPU-b") != key
    monkeypatch.setenv("NUMBA_OPT", "0")
    assert batch_server.server_key("GPU-a") != key
    monkeypatch.delenv("NUMBA_OPT")
    monkeypatch.setenv("GPUDE_GPU_INDEX", "3")  # the lease's: comes with each batch, same server
    assert batch_server.server_key("GPU-a") == key


@pytest.mark.cudasim
def test_a_client_that_leaves_gets_nothing_written(tmp_path):
    ours, theirs = socket.socketpair()
    theirs.close()  # the client is gone before the batch's first line
    request = {"args": run_args(str(tmp_path / "gone")), "gpu": "any", "cwd": str(tmp_path), "env": {}}
    with pytest.raises(batch_server.ClientGone):
        batch_server._run_one(request, ours)
    ours.close()
    assert not list(tmp_path.glob("gone.*"))


def test_an_idle_server_leaves_and_removes_its_socket(servers):
    done = {}
    thread = threading.Thread(target=lambda: done.setdefault("rc", batch_server.serve("k" * 16, idle_s=0.3)))
    thread.start()
    thread.join(timeout=30)
    assert done == {"rc": 0} and not list(servers.glob("k*.sock")) and not list(servers.glob("k*.json"))


def test_a_server_that_cannot_start_is_said_with_its_log(servers, monkeypatch):
    with pytest.raises(batch_server.ServerUnavailable, match="ended before it listened.*its log"):
        batch_server._start("not-a-key", True)  # serve-batches refuses the key and exits
    monkeypatch.setenv(batch_server.DIR_VAR, str(servers / ("x" * 120)))  # a socket path too long to bind
    with pytest.raises(batch_server.ServerUnavailable, match=f"too long a folder.*{batch_server.DIR_VAR}"):
        batch_server._start("0" * 16, True)


@pytest.mark.cudasim
def test_without_a_server_the_batch_runs_in_its_own_process_and_says_so(tmp_path, servers, monkeypatch):
    monkeypatch.setenv(batch_server.DIR_VAR, str(servers / ("x" * 120)))
    run = gpude(run_args("here"), tmp_path, server=True)
    assert run.returncode == 0 and "the batch runs in this process" in run.stderr, run.stdout + run.stderr
    assert (tmp_path / "here.csv").exists()


def test_a_server_that_closes_before_the_batch_begins_leaves_it_to_the_client(servers, monkeypatch):
    # its idle time ran out just as the client came: nothing ran, so the client may run the batch itself
    from gpude.core import gpu_lease

    monkeypatch.setattr(gpu_lease, "list_devices", lambda: [])  # no lease (as on the simulator), on any host
    key = batch_server.server_key("none")
    path = batch_server._paths(key)[0]
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)

    def close_at_once():
        conn, _ = listener.accept()
        conn.makefile("r").readline()
        conn.close()

    thread = threading.Thread(target=close_at_once)
    thread.start()
    with pytest.raises(batch_server.ServerUnavailable, match="closed before the batch began"):
        batch_server.submit(run_args("never"), "any")
    thread.join(timeout=30)
    listener.close()


@pytest.mark.parametrize("config,on_cluster,on", [({}, False, True), ({"batch_server": False}, False, False),
                                                  ({"batch_server": "false"}, False, False), ({}, True, False)])
def test_the_workflow_uses_servers_on_a_local_run_unless_its_config_says_no(monkeypatch, config, on_cluster, on):
    monkeypatch.setenv(batch_server.ENV_VAR, "1" if not on else "0")  # whatever was there is replaced
    assert batch_server.configure_workflow(config, on_cluster) is on
    assert batch_server.enabled() is on
