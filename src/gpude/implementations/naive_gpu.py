"""``naive_gpu``: DE on the CPU; each generation's trials are evaluated on the GPU.

Per generation (the paper's naive model): the operators make the trial vectors on the CPU (numba),
the trial population is copied to the GPU, evaluated by a block per individual
(:class:`gpude.functions.gpu.ProgramEvaluator`), and the errors are copied back for the replacement
on the CPU.

Nothing of our own on top of the model's copies: the host buffers are pinned (the copies are DMA,
asynchronous on one stream), allocated once; the copies go through pointers taken once
(:class:`gpude.core.prebound.PreboundCopy`) and the kernel through a pre-bound launch
(:class:`gpude.core.prebound.PreboundLaunch`, one per row count: NP, and the budget's partial last
generation); the host waits once a generation, for the errors.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from ..core.prebound import PreboundCopy
from ..functions import gpu
from .base import HostLoopImplementation
from .cpu_de import CPUGenerationMixin


class NaiveGPU(CPUGenerationMixin, HostLoopImplementation):
    name = "naive_gpu"
    device = "gpu"

    def setup(self):
        super().setup()
        T, NP, D = self.dtype, self.popsize, self.dim
        # the buffers the copies read and write, pinned (replacing the mixin's pageable ones)
        self.pop, self.trials = cuda.pinned_array((NP, D), T), cuda.pinned_array((NP, D), T)
        self.fit, self.tfit = cuda.pinned_array(NP, T), cuda.pinned_array(NP, T)
        self._stream = s = cuda.stream()
        self._evaluator = gpu.ProgramEvaluator(self.function, T)
        self._d_X = cuda.device_array((NP, D), dtype=T)
        self._d_out = cuda.device_array(NP, dtype=T)
        # (X, out) of the mixin's two calls -> their copies
        self._copies = {
            (self.pop.ctypes.data, self.fit.ctypes.data):
                (PreboundCopy(self._d_X, self.pop, s, True), PreboundCopy(self._d_out, self.fit, s, False)),
            (self.trials.ctypes.data, self.tfit.ctypes.data):
                (PreboundCopy(self._d_X, self.trials, s, True), PreboundCopy(self._d_out, self.tfit, s, False)),
        }
        self._launches = {}  # rows -> the pre-bound launch of rows 0 .. rows - 1

    def _launch(self, n: int):
        if n not in self._launches:
            self._launches[n] = self._evaluator.prebound(self._d_X, self._d_out, 0, n, self._stream)
        return self._launches[n]

    def evaluate(self, X, out):
        n = X.shape[0]
        copies = self._copies.get((X.ctypes.data, out.ctypes.data)) if n else None
        if copies is None:  # rows of another buffer (not the run's own): numba's copies
            if n == 0:
                return
            self._d_X[:n].copy_to_device(np.ascontiguousarray(X), stream=self._stream)
            self._launch(n)()
            self._d_out[:n].copy_to_host(out, stream=self._stream)
        else:
            to_gpu, back = copies
            to_gpu.copy(n)
            self._launch(n)()
            back.copy(n)
        self._stream.synchronize()
