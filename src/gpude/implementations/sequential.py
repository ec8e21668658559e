"""``sequential``: DE/rand/1/bin on one CPU thread (numba)."""

from __future__ import annotations

from ..functions import cpu
from ..problems.base import has_program
from .base import HostLoopImplementation
from .cpu_de import CPUGenerationMixin


class OneThreadEvaluation:
    """Fitness on the calling thread with the numba CPU evaluator (sequential DE, jDE, PSO, SS): a
    benchmark function's program, or any other problem's ``cpu_evaluator``."""

    needs_program = False

    def setup_evaluator(self):
        if has_program(self.function):
            self._evaluate_rows, _ = cpu.build_cpu_evaluator(self.dtype)
            self._args = cpu.program_args(self.function.program, self.dtype)
        else:
            self._evaluate_rows, self._args = self.function.cpu_evaluator(self.dtype), ()

    def evaluate(self, X, out):
        self._evaluate_rows(X, out, *self._args)


class Sequential(OneThreadEvaluation, CPUGenerationMixin, HostLoopImplementation):
    name = "sequential"
    device = "cpu"

    def setup(self):
        super().setup()
        self.setup_evaluator()
