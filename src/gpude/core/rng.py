"""Counter-based random numbers: the same numbers on every implementation.

Every random decision of a run is a pure function of the run's seed and of the
decision's coordinates (generation, individual, slot): draw ``c`` of the run
with key ``k`` is ``mix64(k + (c + 1) * GOLDEN)``, i.e. element ``c`` of the
SplitMix64 sequence started at ``k`` (Steele, Lea & Flood, OOPSLA 2014), which
can be computed in any order, by any thread, on the CPU or the GPU. So a
sequential CPU loop, a thread pool and thousands of CUDA threads draw exactly
the same numbers for the same decisions, and runs are reproducible by seed.

The arithmetic is uint64 only (add, xor, shift, multiply), identical on every
target; uniform floats take the top 53 bits, so they are exact float64 values
in [0, 1).
"""

from __future__ import annotations

import warnings
from types import SimpleNamespace

import numpy as np

GOLDEN = 0x9E3779B97F4A7C15
_M1 = 0xBF58476D1CE4E5B9
_M2 = 0x94D049BB133111EB
_MASK = (1 << 64) - 1


def _mix64_py(z: int) -> int:
    z = ((z ^ (z >> 30)) * _M1) & _MASK
    z = ((z ^ (z >> 27)) * _M2) & _MASK
    return z ^ (z >> 31)


def seed_key(seed: int) -> np.uint64:
    """The key of a run: the seed (any int >= 0) mixed once, so nearby seeds give unrelated keys."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return np.uint64(_mix64_py((int(seed) + GOLDEN) & _MASK))


def trial_seed(base_seed: int, function: str, dim: int, popsize: int, trial: int) -> int:
    """The seed of one trial, derived from the experiment's seed and the trial's coordinates.

    It does not depend on the implementation (nor the algorithm), so every implementation
    runs the same trials and comparisons are paired (Qin et al. share initial states).
    """
    z = int(seed_key(base_seed))
    for part in (*function.encode(), 0xFF, dim, popsize, trial):
        z = _mix64_py((z ^ int(part)) + GOLDEN & _MASK)
    return z >> 1  # non-negative int64, safe in CSV and numpy


def build_rng(target: str = "cpu") -> SimpleNamespace:
    """``uniform(key, counter) -> float64 in [0, 1)`` and ``below(key, counter, n) -> int in [0, n)``
    compiled for ``"cpu"`` (numba.njit) or ``"cuda"`` (device functions)."""
    if target == "cpu":
        import numba

        jit = numba.njit(cache=True, nogil=True)
    elif target == "cuda":
        from numba import cuda

        jit = cuda.jit(device=True)
    else:
        raise ValueError(f"unknown target {target!r}; use 'cpu' or 'cuda'")
    if target == "cuda":
        # On numba's CUDA simulator these run as numpy scalar code, which warns on the
        # intended uint64 wrap-around.
        warnings.filterwarnings("ignore", "overflow encountered", RuntimeWarning, __name__)

    # uint64 constants: numba would turn mixed int64/uint64 arithmetic into float64.
    golden, m1, m2 = np.uint64(GOLDEN), np.uint64(_M1), np.uint64(_M2)
    one = np.uint64(1)
    s11, s27, s30, s31 = np.uint64(11), np.uint64(27), np.uint64(30), np.uint64(31)
    two_m53 = 1.0 / 9007199254740992.0  # 2**-53

    @jit
    def draw(key, counter):
        z = key + (np.uint64(counter) + one) * golden
        z = (z ^ (z >> s30)) * m1
        z = (z ^ (z >> s27)) * m2
        return z ^ (z >> s31)

    @jit
    def uniform(key, counter):
        return np.float64(draw(key, counter) >> s11) * two_m53

    @jit
    def below(key, counter, n):
        # floor(u * n) is exact for u < 1 and n < 2**31; the min guards the rounding edge
        r = np.int64(uniform(key, counter) * n)
        return min(r, n - 1)

    return SimpleNamespace(draw=draw, uniform=uniform, below=below)


def uniforms(key, counters) -> np.ndarray:
    """Draws ``counters`` (an array of ints) of the run with ``key`` as float64 in [0, 1), in plain
    numpy: the same numbers as ``build_rng(...).uniform`` (numpy's uint64 arrays wrap as C's do)."""
    z = np.uint64(key) + (np.asarray(counters, dtype=np.uint64) + np.uint64(1)) * np.uint64(GOLDEN)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(_M1)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(_M2)
    z = z ^ (z >> np.uint64(31))
    return (z >> np.uint64(11)).astype(np.float64) * (1.0 / 9007199254740992.0)
