"""A warm process per GPU for the workflow's GPU batches (and one for its thread-pool CPU batches):
``gpude run`` as a thin client.

A GPU batch started as its own process pays the interpreter, the imports, the CUDA context and the
kernels' loading from numba's cache before its first trial, more than the trials of a small batch
(``results/benchmarks/inprocess_batches_nvidia-h100.csv``: 18 batches on an H100 took 3.0 s each beyond
their trials as a process each, 0.68 s in one process; 83 s against 42 s in all). ``gpude run-batches``
pays them once for a list of batches; the workflow instead keeps one Snakemake job per batch (so that
its rerun triggers re-run only the batches whose inputs changed) and, where ``GPUDE_BATCH_SERVER=1``
(set by the workflow on a local run, config ``batch_server``), each GPU batch's ``gpude run`` becomes a
client:

1. it leases its GPU as a ``gpude run`` does (:mod:`gpude.core.gpu_lease`), so batches never share a
   GPU and the lease's lines and the rows' ``gpu_lease`` are as before;
2. it hands its command line to the batch server of that GPU (one per GPU, code and environment:
   :func:`server_key`), starting it when there is none;
3. the server runs the batch in its process exactly as ``gpude run-batches`` runs one (its rows and
   traces written atomically, byte for byte a ``gpude run``'s but for the times), streams the
   batch's output back to the client, which prints it (the batch's log, as before), and returns its
   exit status, which the client exits with.

A batch of an implementation that takes every core (``threads="all"``: master_slave's pool, timed alone on
the host) goes to the host's CPU server the same way, without a lease (:data:`CPU_SERVER`): it pays the
interpreter, the imports and the pool's start once, like a GPU batch on its server.

A GPU server imports what a batch's setup would (the run's modules and numba-cuda's typing and lowering
registries: :func:`prime`) before it takes its first batch, and the workflow's GPU warm-ups start the GPU
servers (:func:`prestart`, outside the timed window), so that a server's first batch is as warm as its next:
its setup 0.3-0.6 s instead of 0.9-2.8 s (``results/benchmarks/server_prime_nvidia-h200.csv``).
A server runs one batch at a time, takes no lease of its own (its client holds one while its batch
runs) and leaves after ``--idle`` seconds without a batch, or when the workflow ends
(:func:`stop_servers`). A client that dies (Snakemake cancelling its job) stops its batch at the
batch's next line of output, and the server removes what that batch wrote. Where no server can be had
(:class:`ServerUnavailable`: it cannot start, or it left before the batch began), ``gpude run`` says so
and runs the batch in its own process. Another checkout, Python, source tree or ``NUMBA_*``/``GPUDE_*``
environment gets another server.

Servers live in ``<tmp>/gpude-batch-servers/`` (``GPUDE_BATCH_SERVER_DIR``): a socket, a JSON note
(pid, package, GPU) and a log of the server's own errors each.
"""

from __future__ import annotations

import contextlib
import fcntl
import gc
import hashlib
import io
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ..core.errors import GpudeError
from ..core.gpu_lease import DEVICES_VAR, INDEX_VAR, NAME_VAR, UUID_VAR

#: ``1``: ``gpude run`` of a GPU implementation hands its batch to its GPU's batch server (and one of a
#: thread-pool implementation to the CPU's)
ENV_VAR = "GPUDE_BATCH_SERVER"
#: the device a thread-pool batch's server is keyed by, in place of a GPU's UUID
CPU_SERVER = "cpu"
#: where the servers' sockets, notes and logs live
DIR_VAR = "GPUDE_BATCH_SERVER_DIR"
#: seconds a server waits for its next batch before it leaves
IDLE_S = 120.0
#: seconds a client waits for a server it started to listen
START_TIMEOUT_S = 120.0
#: the environment a batch's run depends on beyond its command line: a server serves only clients whose
#: values are its own (the lease's variables excepted: they come with each batch)
_ENV_PREFIXES = ("NUMBA_", "GPUDE_", "PYTHON", "OMP_", "MKL_", "OPENBLAS_")
_LEASE_ENV = (INDEX_VAR, UUID_VAR, NAME_VAR)
_PER_BATCH_ENV = (*_LEASE_ENV, DEVICES_VAR, ENV_VAR, DIR_VAR)


class ServerUnavailable(GpudeError):
    """No batch server could be started or reached; said before the batch was handed over (the caller
    may run it in its own process)."""


class ClientGone(BaseException):
    """The client of the running batch has gone (not an ``Exception``: a batch's own error handling must
    not swallow it)."""


def enabled() -> bool:
    return os.environ.get(ENV_VAR, "") == "1"


def configure_workflow(config: dict, on_cluster: bool) -> bool:
    """Whether a workflow's GPU batches use batch servers (its config's ``batch_server``, default on; never
    on a cluster, where each job runs on a node of its own): sets or clears :data:`ENV_VAR` in this
    process, which the workflow's local jobs inherit."""
    value = config.get("batch_server", True)
    if isinstance(value, str):
        value = value.strip().lower() not in ("false", "no", "off", "0", "")
    on = bool(value) and not on_cluster
    if on:
        os.environ[ENV_VAR] = "1"
    else:
        os.environ.pop(ENV_VAR, None)
    return on


def server_dir() -> Path:
    return Path(os.environ.get(DIR_VAR) or Path(tempfile.gettempdir()) / "gpude-batch-servers")


def _package_dir() -> Path:
    return Path(__file__).resolve().parents[1]


def source_fingerprint() -> str:
    """A digest of the package's source files (path, size, modification time): a server started before
    an edit does not run the edited code."""
    h = hashlib.sha256()
    for path in sorted(_package_dir().rglob("*.py")):
        st = path.stat()
        h.update(f"{path}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def server_key(gpu_uuid: str) -> str:
    """The server a client of this process may use: one per GPU, Python, package source and environment."""
    env = sorted((k, v) for k, v in os.environ.items()
                 if k.startswith(_ENV_PREFIXES) and k not in _PER_BATCH_ENV)
    text = json.dumps([gpu_uuid, sys.executable, str(_package_dir()), source_fingerprint(), env])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


#: the longest path a Unix socket may have (sun_path's 108 bytes, less its terminating zero)
_SOCKET_PATH_MAX = 107


def _paths(key: str) -> tuple[Path, Path, Path]:
    folder = server_dir()
    if len(os.fsencode(folder / f"{key}.sock")) > _SOCKET_PATH_MAX:
        raise ServerUnavailable(f"{folder}: too long a folder for a socket ({_SOCKET_PATH_MAX} bytes at most); "
                                f"set {DIR_VAR} to a shorter one")
    return folder / f"{key}.sock", folder / f"{key}.json", folder / f"{key}.log"


# -- the client --------------------------------------------------------------------------------------

def _send(sock: socket.socket, message: dict) -> None:
    sock.sendall((json.dumps(message) + "\n").encode())


def _ask(sock: socket.socket, message: dict) -> str:
    """Send a request that the server answers in one line (a ping, a stop), and wait for that line."""
    _send(sock, message)
    return sock.makefile("r").readline()


def _connect(path: Path) -> socket.socket | None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(path))
    except OSError:
        sock.close()
        return None
    return sock


def _start(key: str, on_gpu: bool) -> tuple[socket.socket, bool]:
    """Connect to the server of ``key``, starting it first where none listens (under a lock: two clients
    without a lease, e.g. on the simulator, start one server); the socket and whether this call started it."""
    path, _, log = _paths(key)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        sock = _connect(path)
        if sock is not None:
            return sock, False
        with open(log, "a") as err:
            proc = subprocess.Popen([sys.executable, "-m", "gpude", "serve-batches", "--key", key,
                                     "--device", "gpu" if on_gpu else "cpu"],
                                    stdin=subprocess.DEVNULL, stdout=err, stderr=err, start_new_session=True)
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            sock = _connect(path)
            if sock is not None:
                return sock, True
            if proc.poll() is not None:
                raise ServerUnavailable(f"the batch server ended before it listened (exit {proc.returncode}); "
                                        f"its log: {log}")
            time.sleep(0.05)
        proc.kill()
        raise ServerUnavailable(f"the batch server did not listen within {START_TIMEOUT_S:g} s; its log: {log}")


def submit(run_args: list[str], gpu: str, on_gpu: bool = True) -> int:
    """Run the batch of ``run_args`` (``gpude run``'s arguments, ``run`` first) on its GPU's batch server,
    under a lease this process holds until the batch ends (``on_gpu``; else on the CPU's server, without a
    lease); its output printed here; its exit status. Raises :class:`ServerUnavailable` before the batch is
    handed over where no server can be had."""
    from ..core.gpu_lease import held

    with held(gpu, True) if on_gpu else contextlib.nullcontext() as lease:
        key = server_key(CPU_SERVER if not on_gpu else lease.device.uuid if lease is not None else "none")
        env = {k: os.environ[k] for k in _LEASE_ENV if k in os.environ}
        sock, started = _start(key, on_gpu)
        if started:  # (the batch's log says so: its setup then includes the server's imports)
            print(f"gpude: started the batch server {key}", file=sys.stderr, flush=True)
        with sock:
            _send(sock, {"args": run_args, "gpu": gpu, "cwd": os.getcwd(), "env": env})
            reader = sock.makefile("r", encoding="utf-8")
            answered = False
            for line in reader:
                message = json.loads(line)
                answered = True
                if "out" in message:
                    sys.stdout.write(message["out"])
                    sys.stdout.flush()
                elif "rc" in message:
                    return int(message["rc"])
    if not answered:  # it left before a word of the batch (its idle time ran out as we came): none ran
        raise ServerUnavailable(f"the batch server closed before the batch began; its log: {_paths(key)[2]}")
    raise GpudeError(f"the batch server ended during the batch, without its exit status; its log: {_paths(key)[2]}")


def prestart() -> int:
    """Start the GPU servers a batch of this process's environment would use and that do not listen yet (one
    per GPU this process may lease), each waited for until it has primed (:func:`prime`): what a GPU
    warm-up calls, so that the servers' start and imports fall in its time, not in a timed batch's. How
    many it started. (Not the CPU's: a thread-pool batch's job has another environment than its warm-up,
    the thread counts Snakemake sets, and so another server.)"""
    from ..core.gpu_lease import list_devices

    started = 0
    for device in list_devices():
        sock, new = _start(server_key(device.uuid), True)
        with sock:
            if new:  # its answer comes once it has primed and takes requests
                _ask(sock, {"ping": True})
                started += 1
    return started


def stop_servers() -> int:
    """Ask every batch server of this package (this checkout) to leave; how many were asked."""
    stopped, folder = 0, server_dir()
    for note in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        with contextlib.suppress(OSError, ValueError):
            if json.loads(note.read_text()).get("package") != str(_package_dir()):
                continue
            sock = _connect(note.with_suffix(".sock"))
            if sock is not None:
                with sock:
                    _ask(sock, {"stop": True})
                stopped += 1
    return stopped


# -- the server --------------------------------------------------------------------------------------

class _Stream(io.TextIOBase):
    """The running batch's stdout and stderr, sent to its client line by line."""

    def __init__(self, sock: socket.socket):
        self._sock = sock

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if text:
            try:
                _send(self._sock, {"out": text})
            except OSError:
                raise ClientGone from None
        return len(text)


def _run_one(request: dict, sock: socket.socket) -> int:
    from .batches import Job, parse_runs, run_batch

    previous_cwd, previous_env = os.getcwd(), dict(os.environ)
    stream = _Stream(sock)
    outputs: list[Path] = []
    started = time.time()
    try:
        os.chdir(request["cwd"])
        for k in _LEASE_ENV:  # the server's own lease variables never reach a batch: its client's do
            os.environ.pop(k, None)
        os.environ.update(request.get("env", {}))
        with contextlib.redirect_stdout(stream), contextlib.redirect_stderr(stream):
            try:
                [(spec, out_csv, out_traces)] = parse_runs([Job(list(request["args"]), "-")],
                                                           gpu=str(request.get("gpu", "any")))
            except GpudeError as exc:
                print(f"gpude run: error: {exc}")
                return 2
            outputs = [Path(out_csv).resolve(), Path(out_traces).resolve()]
            return run_batch(spec, out_csv, out_traces)
    except ClientGone:
        for path in outputs:  # nobody waits for them: the workflow has given the job up
            with contextlib.suppress(OSError):
                if path.stat().st_mtime >= started:
                    path.unlink()
        raise
    finally:
        os.chdir(previous_cwd)
        os.environ.clear()
        os.environ.update(previous_env)
        gc.collect()  # the batch's runner and its device buffers


def prime() -> None:
    """Import what a GPU batch's setup imports before its first trial, without a CUDA context: the run's
    modules, the implementations' registry and numba-cuda's typing and lowering registries (~1-2 s of the
    first batch's setup otherwise, ``benchmarks/server_prime.py``). A GPU server does it before it takes a
    batch; the CPU's does not (it starts with its first batch, which would only wait for it: 0.2 s more on
    this project's VM). What fails here is left for the batch to meet and say."""
    from ..core.gpu_runtime import simulator_enabled
    from ..implementations import registry  # noqa: F401
    from . import batches, trials  # noqa: F401

    if not simulator_enabled():  # (the simulator compiles nothing)
        from numba.cuda.descriptor import cuda_target

        cuda_target.typing_context.refresh()
        cuda_target.target_context.refresh()


def serve(key: str, idle_s: float = IDLE_S, on_gpu: bool = True) -> int:
    """Serve batches on the socket of ``key`` until ``idle_s`` pass without one, or a stop request; a GPU
    server (``on_gpu``) primed (:func:`prime`) before it takes the first request (a client connecting
    meanwhile waits in the queue)."""
    path, note, log = _paths(key)
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileNotFoundError):
        path.unlink()  # a server that died left it (the client's lock keeps two from starting here)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    ours = path.stat().st_ino  # a server started after this one left may bind the same path: not ours to remove
    listener.listen(128)  # (every GPU warm-up connects once, some while the server primes)
    listener.settimeout(idle_s)

    def leave() -> None:  # (twice is harmless)
        listener.close()
        with contextlib.suppress(FileNotFoundError):
            if path.stat().st_ino == ours:
                path.unlink()
                note.unlink()

    note.write_text(json.dumps({"pid": os.getpid(), "package": str(_package_dir()), "python": sys.executable,
                                "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES", ""),
                                "since": time.time()}))
    try:
        try:
            if on_gpu:
                prime()
        except Exception as exc:  # noqa: BLE001 (a batch meets it again and says it where it is read)
            print(f"batch server: priming failed ({type(exc).__name__}: {exc}); its batches import as they go",
                  file=sys.stderr, flush=True)
        while True:
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                return 0
            with conn:
                conn.settimeout(None)
                try:
                    request = json.loads(conn.makefile("r", encoding="utf-8").readline() or "{}")
                    if not request:  # a client that only checked that the server listens
                        continue
                    if request.get("stop"):  # gone before it says so: a client that asked finds no socket
                        leave()
                        _send(conn, {"rc": 0})
                        return 0
                    if request.get("ping"):
                        _send(conn, {"rc": 0})
                        continue
                    _send(conn, {"rc": _run_one(request, conn)})
                except ClientGone:
                    print(f"batch server: a client left during its batch {request.get('args', '')!s:.200}",
                          file=sys.stderr, flush=True)
                except (OSError, ValueError) as exc:
                    print(f"batch server: a request failed: {exc}", file=sys.stderr, flush=True)
    finally:
        leave()
        with contextlib.suppress(OSError):
            if log.stat().st_size == 0:  # nothing went wrong: no log left behind
                log.unlink()
