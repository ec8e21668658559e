"""``sequential``: DE/rand/1/bin on one CPU thread (numba)."""

from __future__ import annotations

from ..functions import cpu
from .base import HostLoopImplementation
from .cpu_de import CPUGenerationMixin


class OneThreadEvaluation:
    """Fitness on the calling thread with the numba CPU evaluator (sequential DE and jDE)."""

    def setup_evaluator(self):
        self._evaluate_rows, _ = cpu.build_cpu_evaluator(self.dtype)
        self._args = cpu.program_args(self.function.program, self.dtype)

    def evaluate(self, X, out):
        self._evaluate_rows(X, out, *self._args)


class Sequential(OneThreadEvaluation, CPUGenerationMixin, HostLoopImplementation):
    name = "sequential"
    device = "cpu"

    def setup(self):
        super().setup()
        self.setup_evaluator()
