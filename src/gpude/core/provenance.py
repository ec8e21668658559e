"""Where and with what a number was measured: hardware, software, code version.

Every result row the suite writes carries these fields, so that a table
regenerated elsewhere can say which device produced it.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import re
import subprocess
from functools import cache
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def git_commit() -> str:
    """The commit of the working tree (``GPUDE_GIT_COMMIT`` overrides; '+dirty' if modified)."""
    if os.environ.get("GPUDE_GIT_COMMIT"):
        return os.environ["GPUDE_GIT_COMMIT"]
    try:
        sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True,
                             text=True, check=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO,
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return sha + ("+dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


@cache
def software() -> dict:
    """Versions of Python and the numerical stack."""
    import numba
    import numpy

    from .. import __version__

    info = {"python": platform.python_version(), "numpy": numpy.__version__,
            "numba": numba.__version__, "gpude": __version__}
    try:
        from importlib.metadata import version

        info["numba_cuda"] = version("numba-cuda")
    except Exception:
        info["numba_cuda"] = "absent"
    return info


def _boot_id() -> str:
    """This boot of the machine (Linux), so that rows measured on different instances of one kind of
    cloud machine, all named alike, can be told apart: their speeds differ. 'boot-' keeps it text in
    a CSV (8 hex digits such as 1234e567 would read back as a float)."""
    try:
        return "boot-" + Path("/proc/sys/kernel/random/boot_id").read_text().strip()[:8]
    except OSError:
        return ""


@cache
def cpu() -> dict:
    return {"cpu": _cpu_model(), "cpu_cores": os.cpu_count() or 1, "host": platform.node(),
            "boot_id": _boot_id()}


def gpu() -> dict:
    """The CUDA device in use, or ``gpu='none'``; CUDA is only queried when the caller
    has imported numba.cuda (a CPU-only run never initialises it)."""
    import sys

    if "numba.cuda" not in sys.modules:
        return {"gpu": "none"}
    return _gpu_info()


@cache
def _gpu_info() -> dict:
    from numba import cuda

    if getattr(cuda, "simulator_enabled", False) or os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        return {"gpu": "numba-cuda-simulator", **_gpu_identity(None)}
    try:
        dev = cuda.get_current_device()
        name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
        info = {"gpu": name, **_gpu_identity(getattr(dev, "uuid", None)),
                "compute_capability": "{}.{}".format(*dev.compute_capability), "gpu_sms": dev.MULTIPROCESSOR_COUNT}
        try:
            info["cuda_driver"] = ".".join(map(str, cuda.cudadrv.driver.driver.get_version()))
        except Exception:
            pass
        try:
            info["cuda_runtime"] = ".".join(map(str, cuda.runtime.get_version()))
        except Exception:
            pass
        return info
    except Exception as exc:  # no device: say so rather than fail a CPU-only run
        return {"gpu": f"unavailable ({type(exc).__name__})"}


def _gpu_identity(uuid: str | None) -> dict:
    """Which GPU of the host ran the trials: its index (as nvidia-smi numbers it), its UUID, and
    whether the process held a lease on it (gpude.core.gpu_lease; ``none``: it may have shared the GPU).
    Under the simulator, a fake lease's (tests) or nothing."""
    from . import gpu_lease

    leased = os.environ.get(gpu_lease.UUID_VAR)
    if uuid is None or uuid == leased:
        return {"gpu_index": os.environ.get(gpu_lease.INDEX_VAR, ""), "gpu_uuid": leased or "",
                "gpu_lease": "exclusive" if leased else "none"}
    index = next((d.index for d in gpu_lease.list_devices() if d.uuid == uuid), "")
    return {"gpu_index": index, "gpu_uuid": uuid, "gpu_lease": "none"}


def record(uses_gpu: bool | None = None) -> dict:
    """All provenance fields, plus the git commit and a UTC timestamp. ``uses_gpu``: whether what
    made the rows ran on the GPU (False: ``gpu='none'`` even where this process has CUDA, as when a CPU
    batch follows a GPU batch in one process); None: as :func:`gpu` finds."""
    return {**(gpu() if uses_gpu is not False else {"gpu": "none"}), **cpu(), **software(), "git_commit": git_commit(),
            "timestamp_utc": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")}


def slug(text: str) -> str:
    """A file-name-safe form of a device name: 'NVIDIA H200' -> 'nvidia-h200'."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "unknown"
