"""What every problem offers the algorithms: the protocol shared by benchmark functions, LOP and
scheduling instances.

A *problem* is a box of real vectors and an error to minimise, evaluated a population at a time:

* ``fid`` (the id in trial rows), ``name``, ``dim``, ``lower``, ``upper`` (the box, the same in every
  coordinate);
* ``evaluate(X, device="cpu", dtype="float64", threads=1)``: errors of the rows of X (float64; one
  float for one point), rows with NaN or inf get NaN;
* ``cpu_evaluator(dtype, parallel=False)``: ``f(X, out)`` filling ``out`` with the rows' errors on
  the calling thread (``parallel=True``: numba's thread pool);
* ``gpu_evaluator(dtype, **options)``: an object with ``launch(X, out, row0, n, stream=0,
  gate=None)`` (rows ``row0 .. row0 + n - 1`` of the device array X into ``out[row0 ..]``, float64;
  nothing when ``gate[0] == 0``) and ``device_bytes``; an evaluator whose ``row_map`` is True also
  takes ``rows=`` (a device int64 array: row r's values are ``X[rows[r]]``, its error ``out[r]``);
* ``optimum``: x* when one point is *the* optimum (benchmark functions), else ``None``;
* ``summary(x)``: what a report shows of a solution besides its error (LOP: the objective and
  error %; scheduling: fit, makespan, flowtime), numbers only.

Benchmark functions also carry ``program`` (their formula as data), which the implementations that
fuse the evaluation into their own kernels (``ide``, ``all_gpu``, ...) need; problems without one run
on the implementations that call an evaluator (:data:`gpude.implementations.base.Implementation.needs_program`).
"""

from __future__ import annotations

import numpy as np

from ..core.errors import InvalidInputError

#: the numpy types of the ``dtype`` names every problem's evaluators take
DTYPES = {"float64": np.float64, "float32": np.float32}
#: where ``evaluate`` runs
DEVICES = ("cpu", "gpu")


def resolve_dtype(dtype) -> type:
    """``"float64"``/``"float32"`` (or the numpy types) to the numpy type; clear error otherwise."""
    try:
        name = np.dtype(dtype).name
    except TypeError:
        name = str(dtype)
    if name not in DTYPES:
        raise InvalidInputError(f"dtype {dtype!r} is not supported; use 'float64' (default) or 'float32'")
    return DTYPES[name]


def has_program(problem) -> bool:
    """Whether the problem's formula can be fused into an implementation's kernels."""
    return getattr(problem, "program", None) is not None


class Problem:
    """Shared input checks and ``evaluate`` of the problems defined by their evaluators."""

    fid: str
    name: str
    dim: int
    lower: float
    upper: float
    optimum = None
    program = None

    def _rows(self, X) -> tuple[np.ndarray, bool]:
        X = np.asarray(X)
        if X.dtype.kind not in "fiu":
            raise InvalidInputError(f"points must be real numbers (float or integer), got dtype {X.dtype}")
        single = X.ndim == 1
        X = X[np.newaxis, :] if single else X
        if X.ndim != 2 or X.shape[1] != self.dim:
            raise InvalidInputError(f"{self.fid} takes key vectors of shape (n, {self.dim}) or ({self.dim},), "
                                    f"got shape {np.shape(X) if not single else X.shape[1:]}")
        return X, single

    def evaluate(self, X, device: str = "cpu", dtype="float64", threads: int = 1):
        """Errors of the rows of X (float64), NaN for rows with NaN or inf; one float for one point.

        ``device``: ``"cpu"`` (numba; ``threads > 1``: numba's thread pool) or ``"gpu"``.
        """
        if device not in DEVICES:
            raise InvalidInputError(f"device {device!r} is not supported; use 'cpu' or 'gpu'")
        T = resolve_dtype(dtype)
        if not isinstance(threads, (int, np.integer)) or threads < 1:
            raise InvalidInputError(f"threads must be a positive integer, got {threads!r}")
        X, single = self._rows(X)
        out = np.full(X.shape[0], np.nan)
        finite = np.isfinite(X).all(axis=1)
        if finite.any():
            rows = np.ascontiguousarray(X[finite], dtype=T)
            vals = np.empty(rows.shape[0])
            if device == "cpu":
                self.cpu_evaluator(T, parallel=threads > 1)(rows, vals)
            else:
                from numba import cuda

                from ..core.gpu_runtime import require_gpu

                require_gpu()
                ev = self.gpu_evaluator(T)
                d_out = cuda.device_array(rows.shape[0], np.float64)
                ev.launch(cuda.to_device(rows), d_out, 0, rows.shape[0])
                vals = d_out.copy_to_host()
            out[finite] = vals
        return float(out[0]) if single else out

    __call__ = evaluate

    def summary(self, x) -> dict:
        return {}


class DeviceEvaluator:
    """What the GPU evaluators of problems share: ``prebound`` (the interface of the streaming
    evaluators: a callable that queues ``launch`` with fixed arguments; here a plain closure) and
    ``max_rows`` (no limit: a block or a thread per row, nothing sized by rows)."""

    max_rows = 1 << 30

    def prebound(self, X, out, row0: int, n: int, stream, gate=None):
        def run():
            self.launch(X, out, row0, n, stream, gate)
        return run
