"""The GPU lease (gpude.core.gpu_lease) with fake devices: N processes get N different GPUs, the next
one waits, a killed holder's GPU is free again; `gpude run` records the GPU it leased."""

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from gpude.core import gpu_lease
from gpude.core.errors import GpudeError

ROOT = Path(__file__).resolve().parents[1]

# A process that leases a GPU, prints its UUID and holds the lease until its stdin closes.
HOLDER = """
import sys
from gpude.core import gpu_lease
lease = gpu_lease.acquire(wait={wait}, timeout_s={timeout})
print(lease.device.uuid, flush=True)
sys.stdin.read()
"""


@pytest.fixture()
def fake_gpus(tmp_path, monkeypatch):
    """A host with 3 fake GPUs and a lock folder of its own."""
    env = {"GPUDE_FAKE_GPUS": "3", "GPUDE_GPU_LOCK_DIR": str(tmp_path / "locks")}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    for var in ("CUDA_VISIBLE_DEVICES", gpu_lease.INDEX_VAR, gpu_lease.UUID_VAR, gpu_lease.NAME_VAR):
        monkeypatch.setenv(var, "")  # so that the test's end restores what a lease taken here sets
        monkeypatch.delenv(var)
    return {**os.environ, **env}


def start_holder(env, wait=True, timeout=None):
    return subprocess.Popen([sys.executable, "-c", HOLDER.format(wait=wait, timeout=timeout)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)


def leased_uuid(proc, timeout=30):
    """The UUID the holder printed once it held its lease."""
    line = proc.stdout.readline().strip()
    if not line:
        proc.wait(timeout)
        raise AssertionError(f"the holder leased nothing: {proc.stderr.read()}")
    return line


def stop(*procs):
    for proc in procs:
        if proc.poll() is None:
            proc.stdin.close()
            proc.wait(30)


def test_n_processes_get_n_different_gpus_and_the_next_one_waits(fake_gpus):
    holders = [start_holder(fake_gpus) for _ in range(3)]
    try:
        uuids = [leased_uuid(p) for p in holders]
        assert sorted(uuids) == ["GPU-fake-0000", "GPU-fake-0001", "GPU-fake-0002"]
        # a fourth finds all three leased: without waiting it fails, naming the holders ...
        with pytest.raises(gpu_lease.GPUBusyError, match=f"GPU 0 by pid {holders[uuids.index('GPU-fake-0000')].pid}"):
            gpu_lease.acquire(wait=False)
        # ... and waiting, it gets the GPU that the first holder to end gives back
        waiter = start_holder(fake_gpus)
        time.sleep(1.0)
        assert waiter.poll() is None and not _ready(waiter)  # still waiting
        stop(holders[1])
        assert leased_uuid(waiter) == uuids[1]
        assert "waiting for a GPU" in _stderr_so_far(waiter)
        stop(waiter)
    finally:
        stop(*holders)


def test_a_killed_holders_gpu_is_free_again(fake_gpus):
    holders = [start_holder(fake_gpus) for _ in range(3)]
    try:
        uuids = [leased_uuid(p) for p in holders]
        with pytest.raises(gpu_lease.GPUBusyError):
            gpu_lease.acquire(wait=False)
        holders[2].send_signal(signal.SIGKILL)  # no clean-up runs: the kernel drops the flock
        holders[2].wait(30)
        with gpu_lease.acquire(wait=False) as lease:
            assert lease.device.uuid == uuids[2]
            assert os.environ["CUDA_VISIBLE_DEVICES"] == uuids[2]
            assert os.environ[gpu_lease.INDEX_VAR] == str(lease.device.index)
        assert not lease.held
    finally:
        stop(*holders)


def test_waiting_gives_up_after_its_timeout(fake_gpus):
    holders = [start_holder(fake_gpus) for _ in range(3)]
    try:
        [leased_uuid(p) for p in holders]
        start = time.monotonic()
        with pytest.raises(gpu_lease.GPUBusyError, match="every GPU this process may lease is leased"):
            gpu_lease.acquire(timeout_s=0.6, poll_s=0.1, log=lambda text: None)
        assert 0.5 < time.monotonic() - start < 10
    finally:
        stop(*holders)


def test_a_named_gpu_is_the_one_leased(fake_gpus):
    with pytest.raises(GpudeError, match=r"no GPU '7' here to lease; this process may lease 0 \(GPU-fake-0000\)"):
        gpu_lease.acquire("7")
    with gpu_lease.acquire(2) as lease:
        assert lease.device == gpu_lease.Device(2, "GPU-fake-0002", "fake GPU")
        with pytest.raises(gpu_lease.GPUBusyError):
            gpu_lease.acquire("GPU-fake-0002", wait=False)
        other = start_holder(fake_gpus)  # another process gets another GPU
        assert leased_uuid(other) == "GPU-fake-0000"
        stop(other)
    # CUDA in this process now sees only the GPU it leased (it reads CUDA_VISIBLE_DEVICES once)
    assert gpu_lease.list_devices() == [lease.device]


def test_cuda_visible_devices_limits_what_is_leased(fake_gpus, monkeypatch):
    # a SLURM job (or a user) that was given GPUs 2 and 0 leases only those
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,0")
    assert [d.index for d in gpu_lease.list_devices()] == [2, 0]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-fake-0001")
    assert [d.index for d in gpu_lease.list_devices()] == [1]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "fake-0001,5,0")  # CUDA stops at the first it cannot resolve
    assert [d.index for d in gpu_lease.list_devices()] == [1]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    with pytest.raises(GpudeError, match="no GPU to lease"):
        gpu_lease.acquire()


def test_a_bad_fake_gpu_count_is_named(monkeypatch):
    monkeypatch.setenv("GPUDE_FAKE_GPUS", "two")
    with pytest.raises(GpudeError, match="GPUDE_FAKE_GPUS must be a number of fake GPUs, got 'two'"):
        gpu_lease.list_devices()


def test_nvidia_smi_output_is_parsed(monkeypatch):
    out = "0, GPU-11111111-2222, NVIDIA H200\n1, GPU-33333333-4444, NVIDIA H200\n"
    monkeypatch.delenv("GPUDE_FAKE_GPUS", raising=False)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(a, 0, out, ""))
    assert gpu_lease.list_devices() == [gpu_lease.Device(0, "GPU-11111111-2222", "NVIDIA H200"),
                                        gpu_lease.Device(1, "GPU-33333333-4444", "NVIDIA H200")]


def test_a_parents_listing_replaces_nvidia_smi_and_visible_devices_still_apply(monkeypatch):
    out = "0, GPU-11111111-2222, NVIDIA H200\n1, GPU-33333333-4444, NVIDIA H200\n"
    for var in ("GPUDE_FAKE_GPUS", "CUDA_VISIBLE_DEVICES"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv(gpu_lease.DEVICES_VAR, "")  # (so that the listing export_devices sets goes with the test)
    calls = []
    monkeypatch.setattr(subprocess, "run",
                        lambda *a, **k: calls.append(a) or subprocess.CompletedProcess(a, 0, out, ""))
    gpu_lease.export_devices()  # the workflow, once
    assert len(calls) == 1
    listed = gpu_lease.list_devices()  # a batch: no nvidia-smi
    assert len(calls) == 1 and [d.uuid for d in listed] == ["GPU-11111111-2222", "GPU-33333333-4444"]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    assert gpu_lease.list_devices() == [gpu_lease.Device(1, "GPU-33333333-4444", "NVIDIA H200")] and len(calls) == 1
    monkeypatch.setenv(gpu_lease.DEVICES_VAR, "GPU-1")
    with pytest.raises(GpudeError, match="GPUDE_GPU_DEVICES must be a JSON list of"):
        gpu_lease.list_devices()


def test_the_listing_went_with_the_test_that_made_it():
    # (a listing left in os.environ would send every later lease of this process to those GPUs)
    assert not os.environ.get(gpu_lease.DEVICES_VAR)


def run_all_gpu(tmp_path, tag, env, *extra):
    """`gpude run` of de/all_gpu (tiny), its first row and its log."""
    out = tmp_path / f"{tag}.csv"
    res = subprocess.run([sys.executable, "-m", "gpude", "run", "--implementation", "all_gpu", "--function", "Q01",
                          "--dim", "10", "--popsize", "8", "--max-fes", "16", *extra, "--out-csv", str(out),
                          "--out-traces", str(tmp_path / f"{tag}.npz")],
                         capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 0, res.stderr
    return pd.read_csv(out).iloc[0], res.stderr


@pytest.mark.cudasim
@pytest.mark.skipif(os.environ.get("NUMBA_ENABLE_CUDASIM") != "1", reason="fake GPUs need the simulator: "
                    "CUDA cannot open one (test_gpude_run_on_a_real_gpu_leases_it is the real GPU's)")
def test_gpude_run_leases_a_gpu_and_its_rows_say_which(fake_gpus, tmp_path):
    holder = start_holder(fake_gpus)  # GPU 0 is taken by another process
    try:
        assert leased_uuid(holder) == "GPU-fake-0000"
        rows, logs = {}, {}
        for gpu in ("any", "shared"):
            rows[gpu], logs[gpu] = run_all_gpu(tmp_path, gpu, fake_gpus, "--gpu", gpu)
        assert "GPU 1 (GPU-fake-0001, fake GPU) leased at" in logs["any"] and "released at" in logs["any"]
        # with the process's age (Linux): a batch's start to its first trial is read from its log
        age = re.search(r"leased at [\d.]+, ([\d.]+) s after its process started", logs["any"])
        assert age and 0 < float(age.group(1)) < 120, logs["any"]
        assert "leased" not in logs["shared"]
        assert (rows["any"].gpu_index, rows["any"].gpu_uuid, rows["any"].gpu_lease) == (1, "GPU-fake-0001", "exclusive")
        assert rows["shared"].gpu_lease == "none" and pd.isna(rows["shared"].gpu_uuid)
        assert rows["any"].best_error == rows["shared"].best_error  # the lease changes nothing else
    finally:
        stop(holder)


def _ready(proc) -> bool:
    import select

    return bool(select.select([proc.stdout], [], [], 0)[0])


def _stderr_so_far(proc) -> str:
    proc.stdin.close()
    proc.wait(30)
    return proc.stderr.read()


@pytest.mark.cudasim
@pytest.mark.skipif(os.environ.get("NUMBA_ENABLE_CUDASIM") == "1" or not gpu_lease._nvidia_smi(),
                    reason="needs a real GPU (NUMBA_ENABLE_CUDASIM=0 and nvidia-smi)")
def test_gpude_run_on_a_real_gpu_leases_it(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUDE_GPU_LOCK_DIR", str(tmp_path / "locks"))
    monkeypatch.delenv("GPUDE_FAKE_GPUS", raising=False)
    devices = gpu_lease.list_devices()
    # the last GPU this process may use, named by index: the row must say that one, by index and UUID
    row, log = run_all_gpu(tmp_path, "real", dict(os.environ), "--gpu", str(devices[-1].index))
    assert (row.gpu_index, row.gpu_uuid, row.gpu_lease) == (devices[-1].index, devices[-1].uuid, "exclusive")
    assert f"GPU {devices[-1].index} ({devices[-1].uuid}" in log
    # while a holder has it, a run that asks for it waits, and says for whom
    holder = start_holder({**os.environ, "CUDA_VISIBLE_DEVICES": devices[-1].uuid})
    try:
        assert leased_uuid(holder) == devices[-1].uuid
        with pytest.raises(subprocess.TimeoutExpired):
            subprocess.run([sys.executable, "-m", "gpude", "run", "--implementation", "all_gpu", "--function", "Q01",
                            "--dim", "10", "--popsize", "8", "--max-fes", "16", "--gpu", devices[-1].uuid,
                            "--out-csv", str(tmp_path / "w.csv"), "--out-traces", str(tmp_path / "w.npz")],
                           capture_output=True, text=True, timeout=8)
        assert not (tmp_path / "w.csv").exists()
    finally:
        stop(holder)
