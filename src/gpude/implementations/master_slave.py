"""``master_slave``: operators on the master thread, fitness on a pool of worker threads.

Each generation the master builds the trial vectors and the workers evaluate them; the master
then applies the replacement. The pool is numba's own (a ``prange`` region, its size set with
``numba.set_num_threads``): a Python ``ThreadPoolExecutor`` cost about 1 ms of dispatch per
generation for 16 workers on the GPU host, twenty times the evaluation itself at NP = 250.

**Pipeline.** Building the trials (two counter-based draws per coordinate) costs more than
evaluating them on cheap problems (ETC at NP 64 x 512 tasks: about 56 us against 31 us on one
core), so a master that builds everything before the workers start leaves them idle most of the
generation. Where the problem offers a one-thread row kernel callable from numba
(``cpu_rows_kernel``: the benchmark functions, ETC, LOP), a generation is one parallel region:
the first thread to arrive is the master and builds the trials chunk by chunk, publishing each
(an atomic counter); every thread claims chunks in order, waits until the master has built the
one it claimed and evaluates it; the master claims chunks too once it has built the last. The
replacement is generational, so nothing of it depends on the order. Other problems (user
objectives, large-scale functions) keep the two steps: build, then evaluate on the pool.

Results are identical to ``sequential`` either way: each row is built by the same operators
with the same counter-based draws and evaluated by the same code; only the thread differs.
"""

from __future__ import annotations

import os
from functools import cache

import numba
import numpy as np

from ..core.atomics import fetch_add, load_acquire, store_release, yield_cpu
from ..core.errors import InvalidInputError, require_positive_int
from ..functions import cpu
from ..problems.base import has_program
from .base import HostLoopImplementation
from .cpu_de import CPUGenerationMixin, build_cpu_de

#: the pipeline's counters: threads arrived (the first is the master), chunks built, chunks claimed
ARRIVED, BUILT, CLAIMED = 0, 1, 2
#: polls of a chunk's flag before a waiting worker starts yielding its core (about 10 us)
SPINS = 2000
#: chunks per worker in a generation: enough for the workers to start while the master builds,
#: few enough that publishing and claiming stay negligible
CHUNKS_PER_WORKER = 4


@numba.njit(nogil=True, cache=True)
def wait_built(counters, c):
    """Until the master has published chunk c: spin (it takes microseconds), then yield."""
    polls = 0
    while load_acquire(counters, BUILT) <= c:
        polls += 1
        if polls > SPINS:
            yield_cpu()


@cache
def build_pipeline(dtype, rows):
    """A generation as one parallel region (see the module docstring); ``rows(X, out, *args)`` is
    the problem's one-thread row kernel (compiled into the region, hence one build per kernel)."""
    _, make_trials, _ = build_cpu_de(dtype)

    @numba.njit(nogil=True, cache=True)
    def evaluate_chunks(trials, tfit, n, chunk, counters, args):
        """Claim chunks in order; evaluate each once the master has published it."""
        chunks = -(-n // chunk)
        c = fetch_add(counters, CLAIMED, 1)
        while c < chunks:
            wait_built(counters, c)
            lo, hi = c * chunk, min(n, (c + 1) * chunk)
            rows(trials[lo:hi], tfit[lo:hi], *args)
            c = fetch_add(counters, CLAIMED, 1)

    @numba.njit(nogil=True, cache=True)
    def build_chunks(pop, fit, trials, key, g, F, CR, lower, upper, mode, n, mutation, crossover,
                     chunk, counters):
        """The master's part: the trials, chunk by chunk, each published when complete."""
        for c in range(-(-n // chunk)):
            make_trials(pop, fit, trials, key, g, F, CR, lower, upper, mode, c * chunk,
                        min(n, (c + 1) * chunk), mutation, crossover)
            store_release(counters, BUILT, c + 1)

    @numba.njit(nogil=True, parallel=True, cache=True)
    def generation(pop, fit, trials, tfit, key, g, F, CR, lower, upper, mode, n, mutation,
                   crossover, chunk, workers, counters, args):
        counters[:] = 0
        for _ in numba.prange(workers):
            # The first to arrive is the master: it never waits, so no schedule of the
            # iterations onto threads can leave a worker waiting for a master that cannot run.
            if fetch_add(counters, ARRIVED, 1) == 0:
                build_chunks(pop, fit, trials, key, g, F, CR, lower, upper, mode, n, mutation,
                             crossover, chunk, counters)
            evaluate_chunks(trials, tfit, n, chunk, counters, args)

    return generation


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

    @property
    def pipelined(self) -> bool:
        """Whether a generation overlaps building and evaluating (the problem has a row kernel)."""
        return hasattr(self.function, "cpu_rows_kernel")

    def setup(self):
        super().setup()
        if has_program(self.function):
            self._evaluate_rows = cpu.build_parallel_evaluator(self.dtype)
            self._args = cpu.program_args(self.function.program, self.dtype)
        else:  # a problem's own parallel evaluator (numba prange over the rows)
            self._evaluate_rows, self._args = self.function.cpu_evaluator(self.dtype, parallel=True), ()
        if self.pipelined:
            rows, self._row_args = self.function.cpu_rows_kernel(self.dtype)
            self._pipeline = build_pipeline(self.dtype, rows)
            self._counters = np.zeros(3, np.int64)
        self._saved_threads = numba.get_num_threads()
        numba.set_num_threads(self.workers)

    def teardown(self):
        numba.set_num_threads(self._saved_threads)

    def evaluate(self, X, out):
        self._evaluate_rows(X, out, *self._args)

    def generation(self, key, g, n):
        if not self.pipelined:
            return super().generation(key, g, n)
        p = self.params
        chunk = max(1, -(-n // (CHUNKS_PER_WORKER * self.workers)))
        self._pipeline(self.pop, self.fit, self.trials, self.tfit, key, g, p.F, p.CR, self.lower,
                       self.upper, p.bound_mode, n, p.mutation_code, p.crossover_code, chunk,
                       self.workers, self._counters, self._row_args)
        return self.replace(n)
