"""Whether CUDA code can run here: a usable GPU, or numba's CUDA simulator.

The lowest layer of the package (beside :mod:`gpude.core.errors`): the problems' GPU evaluators, the
implementations and the workflow all ask it, so it imports nothing of gpude but the errors. It
imports ``numba.cuda`` itself, so it is imported where a GPU path is taken, not at start-up.
"""

from __future__ import annotations

import os
from functools import cache

from numba import cuda

from .errors import GPUUnavailableError


def simulator_enabled() -> bool:
    """True when numba runs CUDA kernels on its CPU simulator."""
    return bool(getattr(cuda, "simulator_enabled", False)) or os.environ.get(
        "NUMBA_ENABLE_CUDASIM", "0"
    ) == "1"


@cache
def warp_barrier(warp: bool = True):
    """A device function that waits for one warp (``syncwarp``) where ``warp``, else for the block
    (``syncthreads``). numba's CUDA simulator has no ``syncwarp``: there it is the block's barrier, so
    every warp of the block must call it the same number of times."""
    sync_warp = bool(warp) and not simulator_enabled()

    @cuda.jit(device=True, inline=True)
    def barrier():
        if sync_warp:
            cuda.syncwarp(0xFFFFFFFF)
        else:
            cuda.syncthreads()

    return barrier


def require_gpu() -> None:
    """Raise :class:`GPUUnavailableError` unless a CUDA GPU (or the simulator) is usable."""
    if simulator_enabled():
        return
    try:
        ok = cuda.is_available()
    except Exception:  # a broken driver install raises instead of returning False
        ok = False
    if not ok:
        raise GPUUnavailableError(
            "a GPU code path was requested but no usable CUDA GPU was found "
            "(numba.cuda.is_available() is False). Use device='cpu' / a CPU "
            "implementation, or set NUMBA_ENABLE_CUDASIM=1 before starting Python to run "
            "the CUDA code on numba's CUDA simulator (slow; for testing only)."
        )


def copy_bandwidth(nbytes: int = 1 << 30, reps: int = 20) -> float:
    """Bytes a second that a device-to-device copy of ``nbytes`` moves on the current GPU (its read and
    its write counted), over ``reps`` copies timed by CUDA events: the bandwidth the benchmarks set
    beside the datasheet's."""
    import numpy as np

    a = cuda.device_array(nbytes // 8, np.float64)
    b = cuda.device_array_like(a)
    b.copy_to_device(a)
    return 2 * nbytes * reps / event_seconds(lambda: b.copy_to_device(a), reps)


def event_seconds(call, reps: int = 1, stream=0) -> float:
    """Seconds that ``reps`` back-to-back calls of ``call`` take on the GPU, timed by CUDA events recorded
    on ``stream`` (the one the calls queue their work on) before the first and after the last."""
    start, stop = cuda.event(), cuda.event()
    start.record(stream)
    for _ in range(reps):
        call()
    stop.record(stream)
    stop.synchronize()
    return start.elapsed_time(stop) / 1e3
