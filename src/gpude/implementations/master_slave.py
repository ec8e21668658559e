"""``master_slave``: operators on the master thread, fitness on a pool of worker threads.

The workers run the numba CPU evaluator, which releases the GIL, on contiguous
chunks of the trial population; the master waits for all of them, then applies
the replacement. Results are identical to ``sequential`` (each row is evaluated
by the same code; only the thread differs).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..errors import InvalidInputError
from ..functions import cpu
from .base import HostLoopImplementation
from .cpu_de import CPUGenerationMixin


class MasterSlave(CPUGenerationMixin, HostLoopImplementation):
    name = "master_slave"
    device = "cpu"

    def __init__(self, function, params, workers: int | None = None):
        super().__init__(function, params)
        workers = os.cpu_count() or 1 if workers is None else workers
        if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) or workers < 1:
            raise InvalidInputError(f"workers must be a positive integer, got {workers!r}")
        self.workers = int(workers)

    def setup(self):
        super().setup()
        self._evaluate_rows = cpu.build_cpu_evaluator(self.dtype)
        self._args = cpu.program_args(self.function.program, self.dtype)
        self._pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="gpude-slave")

    def teardown(self):
        self._pool.shutdown(wait=True)

    def evaluate(self, X, out):
        n = X.shape[0]
        bounds = np.linspace(0, n, min(self.workers, n) + 1).astype(int)
        jobs = [self._pool.submit(self._evaluate_rows, X[lo:hi], out[lo:hi], *self._args)
                for lo, hi in zip(bounds[:-1], bounds[1:]) if hi > lo]
        for job in jobs:
            job.result()
