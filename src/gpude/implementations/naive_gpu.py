"""``naive_gpu``: DE on the CPU; each generation's trials are evaluated on the GPU.

Per generation: the trial population is copied to the GPU, evaluated by the
population kernel of :mod:`gpude.functions.gpu` (a block per individual), and the
errors are copied back for the replacement on the CPU.
"""

from __future__ import annotations

from numba import cuda

from ..functions import gpu
from .base import HostLoopImplementation
from .cpu_de import CPUGenerationMixin


class NaiveGPU(CPUGenerationMixin, HostLoopImplementation):
    name = "naive_gpu"
    device = "gpu"

    def setup(self):
        super().setup()
        self._fn = gpu.compile_function(self.function.program, self.dtype)
        self._d_X = cuda.device_array((self.popsize, self.dim), dtype=self.dtype)
        self._d_out = cuda.device_array(self.popsize, dtype=self.dtype)
        self._stream = cuda.stream()

    def evaluate(self, X, out):
        n = X.shape[0]
        s = self._stream
        self._d_X[:n].copy_to_device(X, stream=s)
        self._fn.population_kernel[n, self._fn.threads, s](self._d_X[:n], self._d_out[:n], *self._fn.data)
        self._d_out[:n].copy_to_host(out, stream=s)
        s.synchronize()
