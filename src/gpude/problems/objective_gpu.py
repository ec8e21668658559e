"""The GPU evaluator of :class:`gpude.problems.objective.UserObjective` (``cuda`` is imported at
module level: numba's CUDA simulator swaps a kernel module's globals)."""

from __future__ import annotations

import numpy as np
from numba import cuda

from .base import DeviceEvaluator
from .objective_errors import ObjectiveError
from .objective_errors import first_lines as _first_line


class ObjectiveGPUEvaluator(DeviceEvaluator):
    """A thread per row calls the objective compiled as a CUDA device function; a NaN or -inf is
    stored as +inf and counted in ``bad`` (read by :func:`gpude.minimize` after the run)."""

    THREADS = 128

    def __init__(self, problem):
        """``problem``: the :class:`gpude.problems.objective.UserObjective` to evaluate."""
        from ..core.gpu_runtime import require_gpu

        require_gpu()
        try:
            f = cuda.jit(device=True)(getattr(problem.func, "py_func", problem.func))
        except Exception as exc:
            raise ObjectiveError(f"numba cannot compile {problem.fid} for the GPU: {_first_line(exc)}") from exc
        D, scaled = problem.dim, problem.scaled

        @cuda.jit
        def evaluate(X, row0, n, gate, out, low, width, bad):
            if gate[0] == 0:
                return
            i = cuda.grid(1)
            if i >= n:
                return
            r = row0 + i
            x = cuda.local.array(D, np.float64)
            for j in range(D):
                x[j] = low[j] + X[r, j] * width[j] if scaled else X[r, j]
            v = f(x)
            if v != v or v == -np.inf:
                cuda.atomic.add(bad, 0, 1)
                v = np.inf
            out[r] = v
        self.kernel, self.fid = evaluate, problem.fid
        self.low, self.width = cuda.to_device(problem._low), cuda.to_device(problem._width)
        self.bad = cuda.to_device(np.zeros(1, np.int64))
        self.always = cuda.to_device(np.ones(1, np.int32))
        try:  # compile now (a launch on one row), so an objective the GPU cannot run fails here
            probe = cuda.to_device(np.full((1, D), 0.5 if scaled else problem.lower))
            self.launch(probe, cuda.device_array(1), 0, 1)
            cuda.synchronize()
            self.bad.copy_to_device(np.zeros(1, np.int64))
        except Exception as exc:
            raise ObjectiveError(f"numba cannot compile {problem.fid} for the GPU: {_first_line(exc)}") from exc

    @property
    def device_bytes(self) -> int:
        return self.low.nbytes + self.width.nbytes

    def launch(self, X, out, row0: int, n: int, stream=0, gate=None):
        gate = self.always if gate is None else gate
        blocks = max(1, -(-n // self.THREADS))
        self.kernel[blocks, self.THREADS, stream](X, row0, n, gate, out, self.low, self.width, self.bad)

    def bad_count(self) -> int:
        return int(self.bad.copy_to_host()[0])
