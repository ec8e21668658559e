"""Large-scale functions (D up to millions): Lastra et al.'s six and the CEC 2010 subset.

The suite's other functions keep a whole individual in a thread block's shared memory; these
stream over D instead, so one evaluation may cover 3,000,000 coordinates:

* on the CPU, one loop over the coordinates (numba, float64 accumulation);
* on the GPU, one kernel on a 2-D grid (blocks along D, one row of blocks per individual; each
  thread sums a strided bucket of coordinates, warps read consecutive addresses, a block reduces
  in shared memory); the row's last block to finish reduces the blocks' partials and applies the
  function's closing formula (:mod:`gpude.functions.streaming_gpu`), the two steps of Lastra et
  al. sec. 5.1 without a second launch.

The terms are scalar functions compiled for both targets (:func:`build_terms`), so the CPU and
the GPU compute each coordinate's contribution alike; only the order of the final summation
differs (rounding in the last bits).

Definitions (``docs/functions.md``, section "Large-scale functions"):

* L01..L06, Lastra et al. sec. 6.3 with their fBias = -330 (errors here are f - f(x*), so the
  bias drops out): Rastrigin, Griewank, Salomon, Discus (``1e6 z_1^2 + sum_{i>=2} z_i^2``, the
  form of their sec. 6.3.2.5 that their values follow, not the i-weighted sec. 6.3.1.4), Sum
  Squares, Schwefel 1.2. The paper gives no domain and no shift: all six use the box [-1, 1] and
  o ~ U[-1, 1]^D drawn from the counter RNG with a fixed key (:data:`LASTRA_SHIFT_SEED`); see
  :data:`LASTRA_DOMAIN` for why.
* C01..C20 (the subset F1, F2, F3, F4, F6, F8, F13, F18, F20), the CEC 2010 definitions with o,
  P and M by the official C++ generator rule (:mod:`gpude.functions.cec2010`), any D that is a
  multiple of 100.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from functools import cache

import numpy as np

from ..core.errors import InvalidInputError, UnsupportedDimensionError
from ..problems.base import DEVICES, resolve_dtype
from . import cec2010
from .largescale_terms import (  # noqa: F401  (the formulas, imported from here too)
    ACKLEY,
    ACKLEY_ROT,
    DISCUS,
    ELLIPTIC,
    ELLIPTIC_ROT,
    GRIEWANK,
    HEAD_CODES,
    NEXT_CODES,
    RASTRIGIN,
    ROSEN,
    ROSEN_GROUPS,
    ROSEN_HALF,
    ROSEN_HEAD,
    SALOMON,
    SCHWEFEL12,
    SUM_SQUARES,
    TWO_ACC_CODES,
    build_terms,
)

#: Lastra et al. give neither domain nor shift. Their distances to the optimum are a per-coordinate
#: RMS of about 0.9 for all six functions at every D (the search moves little: 500,000 FEs for
#: up to 3e6 variables), i.e. the start lies that close to o: the same small box for all six.
#: A uniform start and o ~ U[-1, 1] in [-1, 1] give an RMS of sqrt(2/3) = 0.82.
LASTRA_DOMAIN = (-1.0, 1.0)
LASTRA_SHIFT_SEED = 2015  # the key of o's draws (the paper's year): o_j = uniform(key, j) mapped to the box
LASTRA_BIAS = -330.0
CEC2010_DIM_STEP = 2 * cec2010.GROUP
MIN_LASTRA_DIM = 2


@dataclass(frozen=True)
class LargeScaleDef:
    """One large-scale function: id, name, suite, formula code, box and f(x*)."""

    fid: str
    name: str
    suite: str          # "lastra" or "cec2010"
    code: int
    lower: float
    upper: float
    bias: float
    cec_id: str = ""    # "F1".. for the CEC 2010 functions
    notes: str = ""

    @property
    def origin(self) -> str:
        return "Lastra et al. 2015, sec. 6.3" if self.suite == "lastra" else f"CEC 2010 LSGO {self.cec_id}"

    @property
    def kind_name(self) -> str:
        return "large-scale"

    dims = None
    max_dim = None

    def supports(self, dim) -> bool:
        if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)):
            return False
        if self.suite == "cec2010":
            return dim >= CEC2010_DIM_STEP and dim % CEC2010_DIM_STEP == 0
        return dim >= MIN_LASTRA_DIM

    def dims_text(self) -> str:
        return (f"any positive multiple of {CEC2010_DIM_STEP}" if self.suite == "cec2010"
                else f"any integer >= {MIN_LASTRA_DIM}")


_L = dict(suite="lastra", lower=LASTRA_DOMAIN[0], upper=LASTRA_DOMAIN[1], bias=LASTRA_BIAS)
LASTRA = (
    LargeScaleDef("L01", "Shifted Rastrigin", code=RASTRIGIN, **_L),
    LargeScaleDef("L02", "Shifted Griewank", code=GRIEWANK, **_L),
    LargeScaleDef("L03", "Shifted Salomon", code=SALOMON, **_L),
    LargeScaleDef("L04", "Shifted Discus", code=DISCUS, **_L,
                  notes="1e6 z_1^2 + sum_{i>=2} z_i^2 (sec. 6.3.2.5; sec. 6.3.1.4 prints i z_i^2)"),
    LargeScaleDef("L05", "Shifted Sum Squares", code=SUM_SQUARES, **_L),
    LargeScaleDef("L06", "Shifted Schwefel 1.2", code=SCHWEFEL12, **_L),
)


def _cec(n, name, code):
    lo, hi = (-5.0, 5.0) if n == 2 else (-32.0, 32.0) if n in (3, 6) else (-100.0, 100.0)
    return LargeScaleDef(f"C{n:02d}", f"CEC 2010 F{n}: {name}", "cec2010", code, lo, hi, 0.0, f"F{n}")


CEC2010 = (
    _cec(1, "shifted elliptic", ELLIPTIC),
    _cec(2, "shifted Rastrigin", RASTRIGIN),
    _cec(3, "shifted Ackley", ACKLEY),
    _cec(4, "single-group shifted m-rotated elliptic", ELLIPTIC_ROT),
    _cec(6, "single-group shifted m-rotated Ackley", ACKLEY_ROT),
    _cec(8, "single-group shifted m-dimensional Rosenbrock", ROSEN_HEAD),
    _cec(13, "D/2m-group shifted m-dimensional Rosenbrock", ROSEN_HALF),
    _cec(18, "D/m-group shifted m-dimensional Rosenbrock", ROSEN_GROUPS),
    _cec(20, "shifted Rosenbrock", ROSEN),
)
LARGE_SCALE = {d.fid: d for d in (*LASTRA, *CEC2010)}
SUITES = ("lastra", "cec2010")

def lastra_shift(dim: int) -> np.ndarray:
    """o for L01..L06 at ``dim``: coordinate j is uniform draw j of key :data:`LASTRA_SHIFT_SEED`
    mapped to the box (so o at a smaller D is a prefix of o at a larger one)."""
    from ..core.rng import seed_key

    draws = _uniform_filler()(seed_key(LASTRA_SHIFT_SEED), int(dim))
    lo, hi = LASTRA_DOMAIN
    return lo + (hi - lo) * draws


@cache
def _uniform_filler():
    import numba

    from ..core.rng import build_rng

    uniform = build_rng("cpu").uniform

    @numba.njit(cache=True)
    def fill(key, n):
        out = np.empty(n)
        for j in range(n):
            out[j] = uniform(key, j)
        return out

    return fill


@cache
def _cpu_row_evaluator():
    import numba

    term, close, head_from, rotated = build_terms("cpu")

    @numba.njit(cache=True, nogil=True)
    def head_value(code, x, o, perm, M, m):
        y, r = np.empty(m), np.empty(m)
        for i in range(m):
            y[i] = float(x[perm[i]]) - float(o[perm[i]])
        if code != ROSEN_HEAD:
            for t in range(m):
                r[t] = rotated(y, M, t, m)
        return head_from(code, y, r, m)

    @numba.njit(cache=True, nogil=True)
    def evaluate_rows(X, out, code, o, perm, has_perm, M, m):
        n, dim = X.shape
        for r in range(n):
            x = X[r]
            if code == SCHWEFEL12:
                s0, prefix = 0.0, 0.0
                for k in range(dim):
                    prefix += float(x[k]) - float(o[k])
                    s0 += prefix * prefix
                out[r] = s0
                continue
            head = 0.0
            k0 = 0
            if code == ELLIPTIC_ROT or code == ACKLEY_ROT or code == ROSEN_HEAD:
                head = head_value(code, x, o, perm, M, m)
                k0 = m
            s0, s1 = 0.0, 1.0 if code == GRIEWANK else 0.0
            needs_next = code == ROSEN_HALF or code == ROSEN_GROUPS or code == ROSEN
            for k in range(k0, dim):
                p = perm[k] if has_perm else k
                y = float(x[p]) - float(o[p])
                y_next = 0.0
                if needs_next and k + 1 < dim:
                    q = perm[k + 1] if has_perm else k + 1
                    y_next = float(x[q]) - float(o[q])
                a, b = term(code, k, y, y_next, dim, m)
                s0 += a
                if code == GRIEWANK:
                    s1 *= b
                else:
                    s1 += b
            out[r] = close(code, s0, s1, head, dim, m)

    return evaluate_rows


class LargeScaleFunction:
    """A large-scale function at one dimension (same public face as
    :class:`gpude.functions.BenchmarkFunction`: ``fid``, ``dim``, ``lower``, ``upper``, ``bias``,
    ``optimum``, ``evaluate``), with evaluators that stream over D.

    The data (o; P and M for the CEC 2010 functions) are made on first use: L01..L06 draw o in
    milliseconds; CEC 2010 arrays come from the checksummed cache of
    :func:`gpude.functions.cec2010.data` (generated there once, seconds at D = 3e6).
    """

    streaming = True

    def __init__(self, definition: LargeScaleDef, dim: int):
        self.definition = definition
        self.fid, self.dim = definition.fid, int(dim)
        self.lower, self.upper, self.bias = definition.lower, definition.upper, definition.bias
        self.code = definition.code
        self._lock = threading.Lock()
        self._data = None

    @property
    def name(self) -> str:
        return self.definition.name

    def __repr__(self) -> str:
        return f"<LargeScaleFunction {self.fid} D={self.dim}: {self.name} ({self.definition.origin})>"

    @property
    def data(self) -> dict:
        """``o`` (float64, D), ``P`` (int32, D; the identity's absence is ``None``), ``M`` (m x m or
        a 1 x 1 placeholder), ``m`` (the group size)."""
        with self._lock:
            if self._data is None:
                d, m = self.definition, cec2010.GROUP
                if d.suite == "lastra":
                    arrays = {"o": lastra_shift(self.dim)}
                else:
                    arrays = cec2010.data(d.cec_id, self.dim)
                self._data = {"o": np.asarray(arrays["o"], np.float64), "P": arrays.get("P"),
                              "M": np.asarray(arrays.get("M", np.zeros((1, 1))), np.float64), "m": m}
            return self._data

    @property
    def optimum(self) -> np.ndarray:
        """x*: o, plus 1 on the coordinates of Rosenbrock terms (CEC 2010 F8, F13, F18, F20)."""
        d = self.data
        x = d["o"].copy()
        code, m, D = self.code, d["m"], self.dim
        if code in (ROSEN_HEAD, ROSEN_HALF, ROSEN_GROUPS):
            count = m if code == ROSEN_HEAD else D // 2 if code == ROSEN_HALF else D
            x[d["P"][:count]] += 1.0
        elif code == ROSEN:
            x += 1.0
        x.setflags(write=False)
        return x

    def evaluator_args(self, dtype):
        """(o, perm, has_perm, M, m) as the CPU evaluator takes them (o in ``dtype``)."""
        d = self.data
        perm = d["P"] if d["P"] is not None else np.zeros(1, np.int32)
        return (np.ascontiguousarray(d["o"], dtype=dtype), perm, d["P"] is not None, d["M"], d["m"])

    def cpu_evaluator(self, dtype, parallel: bool = False):
        """``f(X, out)``: errors of the rows of X into out, one CPU thread (``parallel``: a row per
        thread of numba's pool)."""
        rows = _cpu_parallel_rows() if parallel else _cpu_row_evaluator()
        args = self.evaluator_args(np.dtype(dtype).type)
        code = self.code

        def evaluate(X, out):
            tmp = out if out.dtype == np.float64 else np.empty(out.shape[0])
            rows(X, tmp, code, *args)
            if tmp is not out:
                out[:] = tmp
        return evaluate

    def gpu_evaluator(self, dtype, **options):
        """A :class:`gpude.functions.streaming_gpu.StreamingEvaluator` for this function."""
        from .streaming_gpu import StreamingEvaluator

        return StreamingEvaluator(self, np.dtype(dtype).type, **options)

    def evaluate(self, X, device: str = "cpu", dtype="float64", threads: int = 1):
        """Errors ``f(x) - f(x*)`` of the rows of ``X`` (or of one point), as float64; rows with NaN
        or inf get NaN. ``threads`` is accepted for the common interface (one thread here)."""
        if device not in DEVICES:
            raise InvalidInputError(f"device {device!r} is not supported; use 'cpu' or 'gpu'")
        T = resolve_dtype(dtype)
        X = np.asarray(X)
        if X.dtype.kind not in "fiu":
            raise InvalidInputError(f"points must be real numbers (float or integer), got dtype {X.dtype}")
        single = X.ndim == 1
        X = X[np.newaxis, :] if single else X
        if X.ndim != 2 or X.shape[1] != self.dim:
            raise InvalidInputError(f"{self.fid} at D={self.dim} takes points of shape (n, {self.dim}) or "
                                    f"({self.dim},), got shape {X.shape}")
        out = np.full(X.shape[0], np.nan)
        finite = np.isfinite(X).all(axis=1)
        if finite.any():
            rows = np.ascontiguousarray(X[finite], dtype=T)
            vals = np.empty(rows.shape[0])
            if device == "cpu":
                self.cpu_evaluator(T)(rows, vals)
            else:
                from numba import cuda

                ev = self.gpu_evaluator(T)
                d_X, d_out = cuda.to_device(rows), cuda.device_array(rows.shape[0], np.float64)
                ev.launch(d_X, d_out, 0, rows.shape[0])
                vals = d_out.copy_to_host()
            out[finite] = vals
        return float(out[0]) if single else out

    __call__ = evaluate


@cache
def _cpu_parallel_rows():
    import numba

    one = _cpu_row_evaluator()

    @numba.njit(nogil=True, parallel=True)
    def evaluate_rows(X, out, code, o, perm, has_perm, M, m):
        for r in numba.prange(X.shape[0]):  # each row as the one-thread evaluator computes it
            one(X[r:r + 1], out[r:r + 1], code, o, perm, has_perm, M, m)
    return evaluate_rows


_CACHE: dict = {}
_CACHE_LOCK = threading.Lock()


def get_large_scale(fid: str, dim) -> LargeScaleFunction:
    d = LARGE_SCALE[fid]
    if not d.supports(dim):
        raise UnsupportedDimensionError(f"{fid} is not available at dim={dim!r}; supported dimensions: "
                                        f"{d.dims_text()}")
    with _CACHE_LOCK:
        key = (fid, int(dim))
        if key not in _CACHE:
            _CACHE[key] = LargeScaleFunction(d, int(dim))
        return _CACHE[key]
