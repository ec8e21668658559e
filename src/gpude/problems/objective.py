"""Your own objective as a problem: a Python function of one point, compiled by numba for the CPU and
(when a GPU implementation asks) as a CUDA device function.

``func(x) -> float`` takes a 1-D float array of length D. ``bounds`` is one ``(low, high)`` pair for
every coordinate, as scipy's ``differential_evolution`` takes them. The algorithms search one box for
all coordinates, so when the pairs differ the problem searches the unit cube and evaluates
``func(low + u (high - low))`` (:meth:`UserObjective.to_x` maps a solution back); when they are all
equal it searches that box directly.

The "error" the algorithms minimise is ``func(x)`` itself (no optimum is known; runs use no target
unless one is given). A NaN from ``func`` is an error that names the point; ``+inf`` is allowed (a
penalty, e.g. for an infeasible point) and ``-inf`` is refused.
"""

from __future__ import annotations

import numpy as np

from ..core.errors import InvalidInputError
from .base import Problem
from .objective_errors import ObjectiveError
from .objective_errors import first_lines as _first_line


def _check_bounds(bounds) -> np.ndarray:
    try:
        b = np.asarray(bounds, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidInputError(f"bounds must be a sequence of (low, high) pairs, got {bounds!r}") from None
    if b.ndim != 2 or b.shape[1] != 2 or b.shape[0] < 1:
        raise InvalidInputError(f"bounds must be a sequence of (low, high) pairs, one per coordinate; got shape "
                                f"{b.shape}")
    if not np.isfinite(b).all() or (b[:, 0] >= b[:, 1]).any():
        bad = int(np.flatnonzero(~np.isfinite(b).all(axis=1) | (b[:, 0] >= b[:, 1]))[0])
        raise InvalidInputError(f"bounds[{bad}] = ({b[bad, 0]:g}, {b[bad, 1]:g}): "
                                "each pair must be finite with low < high")
    return b


class UserObjective(Problem):
    """A numba-compilable ``func(x)`` on a box (see the module docstring)."""

    suite = "user"

    def __init__(self, func, bounds, name: str | None = None):
        if not callable(func):
            raise InvalidInputError(f"the objective must be callable, got {type(func).__name__}")
        self.func, self.bounds = func, _check_bounds(bounds)
        self.dim = self.bounds.shape[0]
        self.fid = self.name = str(name or getattr(func, "__name__", "objective"))
        low, high = self.bounds[:, 0], self.bounds[:, 1]
        self.scaled = not (np.all(low == low[0]) and np.all(high == high[0]))
        self.lower, self.upper = (0.0, 1.0) if self.scaled else (float(low[0]), float(high[0]))
        self._low, self._width = np.ascontiguousarray(low), np.ascontiguousarray(high - low)
        self._cpu = {}

    def __repr__(self) -> str:
        return f"UserObjective({self.fid}, D={self.dim}{', scaled to the unit cube' if self.scaled else ''})"

    def to_x(self, u) -> np.ndarray:
        """A point of the search box as a point of ``bounds``."""
        u = np.asarray(u, dtype=np.float64)
        return self._low + u * self._width if self.scaled else u

    # --- CPU -----------------------------------------------------------------------------------------
    def _cpu_kernel(self, parallel: bool):
        if parallel in self._cpu:
            return self._cpu[parallel]
        import numba

        try:
            f = self.func if hasattr(self.func, "py_func") else numba.njit(nogil=True)(self.func)
        except Exception as exc:  # numba raises its own error types
            raise ObjectiveError(f"numba cannot compile {self.fid} for the CPU: {_first_line(exc)}") from exc
        scaled = self.scaled

        @numba.njit(nogil=True, parallel=parallel)
        def evaluate(X, out, low, width):
            for r in numba.prange(X.shape[0]):
                x = np.empty(X.shape[1])
                for j in range(X.shape[1]):
                    x[j] = low[j] + X[r, j] * width[j] if scaled else X[r, j]
                out[r] = f(x)
        try:  # compile now, so an objective numba cannot type fails here with its reason
            probe = np.full((1, self.dim), 0.5 if scaled else self.lower, dtype=np.float64)
            evaluate(probe, np.empty(1), self._low, self._width)
        except Exception as exc:
            raise ObjectiveError(f"numba cannot compile {self.fid} for the CPU: {_first_line(exc)}") from exc
        self._cpu[parallel] = evaluate
        return evaluate

    def cpu_evaluator(self, dtype, parallel: bool = False):
        kernel, low, width, fid = self._cpu_kernel(bool(parallel)), self._low, self._width, self.fid
        to_x = self.to_x

        def evaluate(X, out):
            tmp = np.empty(X.shape[0])
            kernel(np.asarray(X, dtype=np.float64), tmp, low, width)
            bad = np.isnan(tmp) | (tmp == -np.inf)
            if bad.any():
                r = int(np.flatnonzero(bad)[0])
                raise ObjectiveError(f"{fid} returned {tmp[r]} at x = {np.array2string(to_x(X[r]), precision=6)}; "
                                     "return a finite number (or +inf for a point to reject)")
            out[:] = tmp
        return evaluate

    # --- GPU -----------------------------------------------------------------------------------------
    def gpu_evaluator(self, dtype, max_rows: int | None = None, **options):
        if options:
            raise InvalidInputError(f"the objective's GPU evaluator takes no options, got {', '.join(sorted(options))}")
        from .objective_gpu import ObjectiveGPUEvaluator

        return ObjectiveGPUEvaluator(self)

    def summary(self, x) -> dict:
        return {"x": self.to_x(x).tolist()} if self.dim <= 20 else {}
