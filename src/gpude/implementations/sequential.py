"""``sequential``: DE/rand/1/bin on one CPU thread (numba)."""

from __future__ import annotations

from ..functions import cpu
from .base import HostLoopImplementation
from .cpu_de import CPUGenerationMixin


class Sequential(CPUGenerationMixin, HostLoopImplementation):
    name = "sequential"
    device = "cpu"

    def setup(self):
        super().setup()
        self._evaluate_rows, _ = cpu.build_cpu_evaluator(self.dtype)
        self._args = cpu.program_args(self.function.program, self.dtype)

    def evaluate(self, X, out):
        self._evaluate_rows(X, out, *self._args)
