"""A GPU of one's own: an exclusive lease on one device of this host, per process.

On a host with several GPUs, every process that runs GPU trials (``gpude run`` of a GPU
implementation, by hand or as a workflow batch) first leases a device: it takes an exclusive lock
on one file per GPU, named by the GPU's UUID, and then makes only that GPU visible to CUDA
(``CUDA_VISIBLE_DEVICES=<uuid>``). The lock is an ``flock`` held by an open file descriptor, so
the kernel releases it when the process ends, however it ends (``kill -9`` included); nothing is
left to clean up. A process that finds every GPU leased waits, and says for whom.

The lease is taken before CUDA initialises in the process: CUDA reads ``CUDA_VISIBLE_DEVICES``
once, when the driver starts. Devices are listed with ``nvidia-smi`` (which does not create a
CUDA context in this process). Where the caller already restricted the visible devices (a SLURM
job's allocated GPUs, or a user's ``CUDA_VISIBLE_DEVICES``), only those are leased.

Environment
-----------
GPUDE_GPU_LOCK_DIR
    where the lock files live (default: ``<tmp>/gpude-gpu-locks``; one folder per host, shared by
    every checkout and user on it).
GPUDE_FAKE_GPUS
    ``N``: pretend the host has N GPUs (for tests on machines without any; CUDA is not touched).
GPUDE_GPU_DEVICES
    the host's GPUs as ``nvidia-smi`` listed them (JSON, :func:`export_devices`): a local workflow run
    lists them once and passes them to its batches, which then skip ``nvidia-smi`` (CUDA_VISIBLE_DEVICES
    still applies).
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import fcntl
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .errors import GpudeError

#: environment variables a lease sets in its process (and so in the rows it writes)
INDEX_VAR, UUID_VAR, NAME_VAR = "GPUDE_GPU_INDEX", "GPUDE_GPU_UUID", "GPUDE_GPU_NAME"
#: the host's GPUs, listed once by a parent process (:func:`export_devices`)
DEVICES_VAR = "GPUDE_GPU_DEVICES"


class GPUBusyError(GpudeError, TimeoutError):
    """Every GPU a process may lease is leased by another process (and it would not wait)."""


@dataclasses.dataclass(frozen=True)
class Device:
    """One GPU of this host: its index as ``nvidia-smi`` numbers it, its UUID and its name."""

    index: int
    uuid: str
    name: str


def lock_dir() -> Path:
    return Path(os.environ.get("GPUDE_GPU_LOCK_DIR") or Path(tempfile.gettempdir()) / "gpude-gpu-locks")


def _nvidia_smi() -> list[Device]:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=index,uuid,name", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError):  # no driver, or no nvidia-smi
        return []
    devices = []
    for line in out.splitlines():
        parts = [p.strip() for p in line.split(",", 2)]
        if len(parts) == 3 and parts[0].isdigit():
            devices.append(Device(int(parts[0]), parts[1], parts[2]))
    return devices


def _host_devices() -> list[Device]:
    """The host's GPUs: as a parent process listed them (:data:`DEVICES_VAR`), else ``nvidia-smi``'s."""
    listed = os.environ.get(DEVICES_VAR)
    if listed:
        try:
            return [Device(int(i), str(u), str(n)) for i, u, n in json.loads(listed)]
        except (ValueError, TypeError) as exc:
            raise GpudeError(f"{DEVICES_VAR} must be a JSON list of [index, uuid, name] (as export_devices "
                             f"writes it); got {listed[:80]!r} ({exc}); unset it to list the GPUs again") from None
    return _nvidia_smi()


def export_devices() -> None:
    """List the host's GPUs once (``nvidia-smi``) into :data:`DEVICES_VAR`, for the processes this one
    starts (a workflow's batches: ``nvidia-smi`` takes a moment on every call). Nothing under
    ``GPUDE_FAKE_GPUS``, or where none is listed."""
    if not os.environ.get("GPUDE_FAKE_GPUS") and not os.environ.get(DEVICES_VAR):
        devices = _nvidia_smi()
        if devices:
            os.environ[DEVICES_VAR] = json.dumps([[d.index, d.uuid, d.name] for d in devices])


def _visible(devices: list[Device], spec: str | None) -> list[Device]:
    """The devices a ``CUDA_VISIBLE_DEVICES`` value leaves visible (indices or UUID prefixes; CUDA
    stops at the first entry it cannot resolve, and so does this)."""
    if spec is None:
        return devices
    chosen = []
    for entry in (e.strip() for e in spec.split(",")):
        match = ([d for d in devices if d.index == int(entry)] if entry.isdigit() else
                 [d for d in devices if d.uuid.startswith(entry if entry.startswith(("GPU-", "MIG-"))
                                                          else "GPU-" + entry)])
        if len(match) != 1:
            break
        chosen.append(match[0])
    return chosen


def list_devices() -> list[Device]:
    """The GPUs this process may lease: the host's (``nvidia-smi``), less those that
    ``CUDA_VISIBLE_DEVICES`` hides; fake ones under ``GPUDE_FAKE_GPUS``; none without a driver."""
    fake = os.environ.get("GPUDE_FAKE_GPUS")
    if fake:
        if not fake.isdigit():
            raise GpudeError(f"GPUDE_FAKE_GPUS must be a number of fake GPUs, got {fake!r}")
        devices = [Device(i, f"GPU-fake-{i:04d}", "fake GPU") for i in range(int(fake))]
    else:
        devices = _host_devices()
    return _visible(devices, os.environ.get("CUDA_VISIBLE_DEVICES"))


def holder(device: Device) -> dict:
    """What the process that leases ``device`` wrote about itself (pid, host, command, since)."""
    try:
        return json.loads((lock_dir() / f"{device.uuid}.lock").read_text() or "{}")
    except (OSError, ValueError):
        return {}


class GpuLease:
    """An exclusive lease on one GPU, held until :meth:`release` or the end of the process."""

    def __init__(self, device: Device, fd: int):
        self.device, self._fd = device, fd

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor drops the flock
            self._fd = None
            for var in (INDEX_VAR, UUID_VAR, NAME_VAR):  # rows made from now on were not under it
                os.environ.pop(var, None)

    def __enter__(self) -> GpuLease:
        return self

    def __exit__(self, *exc) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"GpuLease(index={self.device.index}, uuid={self.device.uuid!r}, held={self.held})"


def _try_lock(device: Device) -> int | None:
    folder = lock_dir()
    folder.mkdir(parents=True, exist_ok=True)
    try:
        folder.chmod(0o1777)  # one folder for every user of the host, like /tmp
    except OSError:
        pass
    path = folder / f"{device.uuid}.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            return None
        raise
    # who holds it, for the message of a process that waits (the lock, not this text, decides)
    note = json.dumps({"pid": os.getpid(), "host": os.uname().nodename, "since": time.time(),
                       "command": " ".join(sys.argv)[:300]}).encode()
    os.ftruncate(fd, 0)
    os.pwrite(fd, note, 0)
    return fd


def acquire(device: str | int | None = None, *, wait: bool = True, timeout_s: float | None = None,
            poll_s: float = 0.05, log=None, devices: list[Device] | None = None) -> GpuLease:
    """Lease a GPU of this host and make it the only one CUDA sees in this process.

    Parameters
    ----------
    device : str, int or None
        ``None`` (any free GPU, the first in index order), or the index or UUID of the one to take.
    wait : bool
        Wait while every candidate is leased (default); else raise :class:`GPUBusyError` at once.
    timeout_s : float, optional
        Give up waiting after this many seconds (:class:`GPUBusyError`).
    log : callable, optional
        Called with a one-line message when the process starts to wait (default: print to stderr).
    devices : list of Device, optional
        The candidates, if the caller has listed them already (default: :func:`list_devices`).

    Returns
    -------
    GpuLease
        Held until released or until the process ends. ``CUDA_VISIBLE_DEVICES`` is set to the GPU's
        UUID, and ``GPUDE_GPU_INDEX``/``GPUDE_GPU_UUID``/``GPUDE_GPU_NAME`` to what the trial rows record.
    """
    log = log or (lambda text: print(text, file=sys.stderr, flush=True))
    candidates = list_devices() if devices is None else devices
    if device is not None:
        key = str(device)
        candidates = [d for d in candidates if key in (str(d.index), d.uuid)]
        if not candidates:
            raise GpudeError(f"no GPU {device!r} here to lease; this process may lease "
                             f"{', '.join(f'{d.index} ({d.uuid})' for d in (devices or list_devices())) or 'none'}")
    if not candidates:
        raise GpudeError("no GPU to lease: nvidia-smi lists none (or CUDA_VISIBLE_DEVICES hides them all); "
                         "run a CPU implementation, or pass --gpu shared to use CUDA's default device unleased")
    if not os.environ.get("GPUDE_FAKE_GPUS"):  # a fake GPU is never CUDA's
        _check_cuda_not_started()
    start, told = time.monotonic(), False
    while True:
        for candidate in candidates:
            fd = _try_lock(candidate)
            if fd is not None:
                os.environ.update({"CUDA_VISIBLE_DEVICES": candidate.uuid, INDEX_VAR: str(candidate.index),
                                   UUID_VAR: candidate.uuid, NAME_VAR: candidate.name})
                if told:
                    log(f"gpude: leased GPU {candidate.index} ({candidate.uuid}) after "
                        f"{time.monotonic() - start:.1f} s")
                return GpuLease(candidate, fd)
        waited = time.monotonic() - start
        if not wait or (timeout_s is not None and waited >= timeout_s):
            raise GPUBusyError(f"every GPU this process may lease is leased: {_holders(candidates)}; "
                               "wait for one (the default), or pass --gpu shared to share one unleased")
        if not told:
            log(f"gpude: waiting for a GPU: {_holders(candidates)}")
            told = True
        time.sleep(poll_s)


def _holders(devices: list[Device]) -> str:
    return "; ".join(f"GPU {d.index} by pid {holder(d).get('pid', '?')} on {holder(d).get('host', '?')}"
                     for d in devices)


def _check_cuda_not_started() -> None:
    """CUDA reads CUDA_VISIBLE_DEVICES once: a lease taken after the driver started would not bind."""
    if "numba.cuda" not in sys.modules:
        return
    try:
        from numba.cuda.cudadrv.driver import driver

        started = bool(getattr(driver, "is_initialized", False))
    except Exception:  # the simulator, or no driver at all
        return
    if started:
        raise GpudeError("CUDA was already started in this process, so a GPU lease can no longer choose "
                         "its device; take the lease first (gpude run does)")


#: the lines :func:`lease_for` and :func:`release` write into a batch's log, as their readers parse them: index,
#: UUID, name, epoch seconds and (where written) the process's age; index, UUID, epoch seconds
LEASED_LINE = re.compile(r"GPU (\d+) \((\S+), (.*)\) leased at ([\d.]+)(?:, ([\d.]+) s after its process started)?")
RELEASED_LINE = re.compile(r"GPU (\d+) \((\S+)\) released at ([\d.]+)")


def lease_for(gpu: str, needed: bool):
    """The lease a run takes (``gpu``: ``any`` free GPU, one named by index or UUID, or ``shared``), or
    None: no GPU needed, ``shared``, or a host whose GPUs cannot be listed (the simulator). The lease
    and release times (epoch seconds) go to stderr, so that the logs show no GPU was leased twice at once."""
    if gpu == "shared" or not needed:
        return None
    devices = list_devices()
    if not devices:  # no driver (the implementation then says so), or the simulator
        return None
    lease = acquire(None if gpu == "any" else gpu, devices=devices)
    age = process_age_s()
    print(f"gpude: GPU {lease.device.index} ({lease.device.uuid}, {lease.device.name}) leased at "
          f"{time.time():.3f}" + (f", {age:.2f} s after its process started" if age is not None else ""),
          file=sys.stderr, flush=True)
    return lease


def process_age_s() -> float | None:
    """Seconds since this process started (Linux: its start in clock ticks after boot, against the
    uptime; both to 10 ms), or None where /proc does not say: what a batch's log needs to time its
    start to its first trial, imports included."""
    try:
        with open("/proc/self/stat") as f:
            started_ticks = int(f.read().rsplit(")", 1)[1].split()[19])  # field 22, starttime
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
        return max(0.0, uptime - started_ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def release(lease) -> None:
    """Release :func:`lease_for`'s lease (None: nothing to release), with the time in the log."""
    if lease is not None:
        lease.release()
        print(f"gpude: GPU {lease.device.index} ({lease.device.uuid}) released at {time.time():.3f}",
              file=sys.stderr, flush=True)


@contextlib.contextmanager
def held(gpu: str, needed: bool):
    """:func:`lease_for` for the ``with`` block, released however the block ends."""
    lease = lease_for(gpu, needed)
    try:
        yield lease
    finally:
        release(lease)
