"""``master_slave``: operators on the master thread, fitness on a pool of worker threads.

Each generation the master builds the trial vectors, then hands the evaluation
of the trial population to a pool of ``workers`` threads running the GIL-free
numba evaluator, waits for them, and applies the replacement. The pool is
numba's own (a ``prange`` region, its size set with ``numba.set_num_threads``):
a Python ``ThreadPoolExecutor`` cost about 1 ms of dispatch per generation for
16 workers on the GPU host, twenty times the evaluation itself at NP = 250.
Results are identical to ``sequential`` (each row is evaluated by the same
code; only the thread differs).
"""

from __future__ import annotations

import os

import numba
import numpy as np

from ..errors import InvalidInputError, require_positive_int
from ..functions import cpu
from ..problems.base import has_program
from .base import HostLoopImplementation
from .cpu_de import CPUGenerationMixin


class MasterSlave(CPUGenerationMixin, HostLoopImplementation):
    name = "master_slave"
    device = "cpu"
    needs_program = False

    def __init__(self, function, params, workers: int | None = None):
        super().__init__(function, params)
        workers = numba.config.NUMBA_NUM_THREADS if workers is None else workers
        require_positive_int("workers", workers, types=(int, np.integer))
        if workers > numba.config.NUMBA_NUM_THREADS:
            raise InvalidInputError(
                f"workers={workers} exceeds numba's thread pool ({numba.config.NUMBA_NUM_THREADS}, "
                f"from NUMBA_NUM_THREADS or the {os.cpu_count()} cores); set NUMBA_NUM_THREADS higher")
        self.workers = int(workers)

    def setup(self):
        super().setup()
        if has_program(self.function):
            self._evaluate_rows = cpu.build_parallel_evaluator(self.dtype)
            self._args = cpu.program_args(self.function.program, self.dtype)
        else:  # a problem's own parallel evaluator (numba prange over the rows)
            self._evaluate_rows, self._args = self.function.cpu_evaluator(self.dtype, parallel=True), ()
        self._saved_threads = numba.get_num_threads()
        numba.set_num_threads(self.workers)

    def teardown(self):
        numba.set_num_threads(self._saved_threads)

    def evaluate(self, X, out):
        self._evaluate_rows(X, out, *self._args)
