"""CEC 2010 large-scale benchmark data at any D (Lastra et al.'s F1, F2, F3, F4, F6, F8, F13, F18,
F20): the official C++ generator rule for the shift o, the permutation P and the rotation M, and a
CPU reference value of each function (float64, numpy) to test evaluators against.

The rule (the official C++ code, qzcwx/CEC2010SS-LSGO-Benchmarks-CPP): every function starts a fresh
java.util.Random-style 48-bit LCG seeded with 0 *without* Java's seed scrambling; o is filled from index D-1
down to 0 with ``(lo + hi)/2 + g (hi - lo)/2``, g Gaussian (Marsaglia polar, second value cached), redrawn until
inside [lo, hi]; then P: the identity and 8D + 1 swaps of P[j], P[k] with j, k = nextInt(D),
k redrawn until k != j; then M (m x m, m = 50): Gaussians filled from the last row and column
backwards, Gram-Schmidt from the last row up. Reproduces the official values at x = 0 to 2e-14
relative at D = 1,000 and 100,000 (tests/test_cec2010.py).

Generating at D = 3e6 takes 2.4e7 LCG swaps: :func:`data` does it once and keeps the arrays in a
checksummed cache outside the repository (``$GPUDE_CACHE`` or ``~/.cache/gpude``); nothing is
generated at import time.
"""

from __future__ import annotations

import hashlib
import io
import math
import os
from pathlib import Path

import numba
import numpy as np

from ..core.errors import InvalidInputError, UnknownFunctionError
from ..core.io import write_atomic

GROUP = 50  # m, the size of the permuted (and rotated) groups
_MASK = (1 << 48) - 1
_MULT = 0x5DEECE66D

#: function -> (o's lower bound, o's upper bound, has a permutation, has a rotation); the
#: Rosenbrock functions draw o in [-100, 99] so that x* = o + 1 stays in the box
SPEC = {"F1": (-100.0, 100.0, False, False), "F2": (-5.0, 5.0, False, False),
        "F3": (-32.0, 32.0, False, False), "F4": (-100.0, 100.0, True, True),
        "F6": (-32.0, 32.0, True, True), "F8": (-100.0, 99.0, True, False),
        "F13": (-100.0, 99.0, True, False), "F18": (-100.0, 99.0, True, False),
        "F20": (-100.0, 99.0, False, False)}


@numba.njit(cache=True)
def _next(state, bits):
    """java.util.Random.next(bits) on ``state[0]`` (signed for bits = 32, as Java's int)."""
    state[0] = (state[0] * _MULT + 0xB) & _MASK
    v = state[0] >> (48 - bits)
    if bits == 32 and v >= 2 ** 31:
        v -= 2 ** 32
    return v


@numba.njit(cache=True)
def _next_int(state, n):
    """java.util.Random.nextInt(n): the power-of-two shortcut, else rejection of 31-bit draws whose
    ``bits - val + (n - 1)`` overflows Java's int."""
    if (n & -n) == n:
        return (n * _next(state, 31)) >> 31
    while True:
        bits = _next(state, 31)
        val = bits % n
        if bits - val + (n - 1) < 2 ** 31:
            return val


@numba.njit(cache=True)
def _next_double(state):
    return ((_next(state, 26) << 27) + _next(state, 27)) * (1.0 / (1 << 53))


@numba.njit(cache=True)
def _next_gaussian(state, cache):
    """Marsaglia's polar method; the second value is kept in ``cache`` (value, has-value)."""
    if cache[1] != 0.0:
        cache[1] = 0.0
        return cache[0]
    while True:
        v1 = 2.0 * _next_double(state) - 1.0
        v2 = 2.0 * _next_double(state) - 1.0
        s = v1 * v1 + v2 * v2
        if s < 1.0 and s != 0.0:
            break
    mult = math.sqrt(-2.0 * math.log(s) / s)
    cache[0] = v2 * mult
    cache[1] = 1.0
    return v1 * mult


@numba.njit(cache=True)
def _shift(state, cache, dim, lo, hi):
    o = np.empty(dim)
    for i in range(dim - 1, -1, -1):  # the official code fills o backwards
        while True:
            s = (lo + hi) / 2.0 + _next_gaussian(state, cache) * (hi - lo) / 2.0
            if lo <= s <= hi:
                break
        o[i] = s
    return o


@numba.njit(cache=True)
def _permutation(state, dim):
    p = np.arange(dim)
    for _ in range(8 * dim + 1):
        j = _next_int(state, dim)
        k = _next_int(state, dim)
        while k == j:
            k = _next_int(state, dim)
        p[j], p[k] = p[k], p[j]
    return p


@numba.njit(cache=True)
def _rotation(state, cache, m):
    M = np.empty((m, m))
    for i in range(m - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            M[i, j] = _next_gaussian(state, cache)
    for i in range(m - 1, -1, -1):  # Gram-Schmidt from the last row up
        for j in range(m - 1, i, -1):
            d = 0.0
            for k in range(m):
                d += M[i, k] * M[j, k]
            for k in range(m):
                M[i, k] -= d * M[j, k]
        norm = 0.0
        for k in range(m):
            norm += M[i, k] * M[i, k]
        norm = math.sqrt(norm)
        for k in range(m):
            M[i, k] /= norm
    return M


def check(fid: str, dim: int) -> tuple:
    """The function's SPEC entry, or an error naming what is supported."""
    fid = fid.upper()
    if fid not in SPEC:
        raise UnknownFunctionError(f"unknown CEC 2010 function {fid!r}; generated here: {', '.join(SPEC)}")
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or dim < 2 * GROUP or dim % (2 * GROUP):
        raise InvalidInputError(f"CEC 2010 dimension must be a positive multiple of {2 * GROUP} (groups of "
                                f"m = {GROUP}, D/2m of them in F13), got {dim!r}")
    return SPEC[fid]


def generate(fid: str, dim: int) -> dict:
    """o, and P and M where the function has them, by the official rule (seconds at D = 3e6)."""
    lo, hi, perm, rot = check(fid, dim)
    state, cache = np.zeros(1, np.int64), np.zeros(2)
    out = {"o": _shift(state, cache, int(dim), lo, hi)}
    if perm:
        out["P"] = _permutation(state, int(dim)).astype(np.int32)  # 12 MB, not 24, at D = 3e6
    if rot:
        out["M"] = _rotation(state, cache, GROUP)
    return out


def cache_dir() -> Path:
    return Path(os.environ.get("GPUDE_CACHE", Path.home() / ".cache" / "gpude")) / "cec2010"


def data(fid: str, dim: int, directory=None) -> dict:
    """:func:`generate`'s arrays, from the checksummed cache when there (made there on first use).

    A cached file whose SHA-256 does not match its ``.sha256`` fails with an error that names the
    file and the fix (delete it; it is made again).
    """
    fid = fid.upper()
    check(fid, dim)
    folder = Path(directory) if directory is not None else cache_dir()
    path, digest_path = folder / f"{fid}_D{dim}.npz", folder / f"{fid}_D{dim}.npz.sha256"
    if path.is_file() and digest_path.is_file():
        blob = path.read_bytes()
        if hashlib.sha256(blob).hexdigest() != digest_path.read_text().split()[0]:
            raise InvalidInputError(f"{path} does not match its checksum {digest_path.name} (a corrupted or "
                                    f"altered cache file); delete both and it is generated again")
        with np.load(io.BytesIO(blob)) as z:
            return {k: z[k] for k in z.files}
    arrays = generate(fid, dim)
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    blob = buf.getvalue()
    write_atomic(path, blob)
    write_atomic(digest_path, f"{hashlib.sha256(blob).hexdigest()}  {path.name}\n")
    return arrays


def _elliptic(y):
    d = y.shape[-1]
    return np.sum(1e6 ** (np.arange(d) / (d - 1)) * y * y, axis=-1)


def _rastrigin(y):
    return np.sum(y * y - 10.0 * np.cos(2.0 * np.pi * y) + 10.0, axis=-1)


def _ackley(y):
    d = y.shape[-1]
    return (-20.0 * np.exp(-0.2 * np.sqrt(np.sum(y * y, axis=-1) / d))
            - np.exp(np.sum(np.cos(2.0 * np.pi * y), axis=-1) / d) + 20.0 + np.e)


def _rosenbrock(y):
    return np.sum(100.0 * (y[..., :-1] ** 2 - y[..., 1:]) ** 2 + (y[..., :-1] - 1.0) ** 2, axis=-1)


def _sphere(y):
    return np.sum(y * y, axis=-1)


def reference_value(fid: str, x, arrays: dict | None = None) -> np.ndarray:
    """F(x) for a point or an (n, D) array, in float64 with numpy: the CPU reference of the CEC 2010
    definitions (as the official C++ code computes them; all biases 0). ``arrays`` defaults to :func:`data`'s."""
    x = np.asarray(x, dtype=np.float64)
    fid, dim, m = fid.upper(), x.shape[-1], GROUP
    check(fid, dim)
    a = arrays if arrays is not None else data(fid, dim)
    z = x - a["o"]
    if fid == "F1":
        return _elliptic(z)
    if fid == "F2":
        return _rastrigin(z)
    if fid == "F3":
        return _ackley(z)
    if fid == "F20":
        return _rosenbrock(z)
    zp = z[..., a["P"]]
    head, rest = zp[..., :m], zp[..., m:]
    if fid == "F4":
        return 1e6 * _elliptic(head @ a["M"]) + _elliptic(rest)
    if fid == "F6":
        return 1e6 * _ackley(head @ a["M"]) + _ackley(rest)
    if fid == "F8":
        return 1e6 * _rosenbrock(head) + _sphere(rest)
    groups = zp[..., : dim // 2 if fid == "F13" else dim].reshape(*zp.shape[:-1], -1, m)
    total = np.sum(_rosenbrock(groups), axis=-1)
    return total + _sphere(zp[..., dim // 2:]) if fid == "F13" else total
