"""One source, two targets: the decorator that compiles a scalar function for the CPU or the GPU.

Below the problems layer: the large-scale functions' terms (:mod:`gpude.functions.largescale`) and
the algorithms' operators (:mod:`gpude.algorithms`) are both written once and compiled by it.
"""

from __future__ import annotations


def operator_jit(target: str):
    """The decorator that compiles an algorithm's operators for ``"cpu"`` (``numba.njit``, cached,
    GIL-free) or ``"cuda"`` (a CUDA device function): one source for both targets."""
    if target == "cpu":
        import numba

        return numba.njit(cache=True, nogil=True)
    from numba import cuda

    return cuda.jit(device=True)
