"""The run loop of implementations whose population lives on the GPU (all_gpu, ide).

The host only enqueues work. The "solution found" test runs on the GPU: the
kernel that finishes generation g does ``atomic.min(hit_gen, g)`` for every
individual whose error is <= target, and records the generation's best in a
device-side trace with ``atomic.min``. After each generation, a second stream
waits for the generation's event and copies ``hit_gen`` into pinned host memory
asynchronously; the host looks at that copy before enqueuing the next
generation, and stops once it shows a hit. Kernels of generations after the hit
(already enqueued while the copy was in flight) return at once, so the result is
exactly the state at the end of generation ``hit_gen``.

FEs follow from the generation count (NP per generation, fewer in a last
generation that would overrun the budget), so they never exceed max_fes.
``time_to_target_s`` is when the host saw the hit (a few generations after it
happened, at most the depth of the launch queue).
"""

from __future__ import annotations

import math
import time

import numpy as np
from numba import cuda

from ..rng import seed_key
from .base import Implementation, fes_after

NO_HIT = np.iinfo(np.int64).max


@cuda.jit
def init_stats_kernel(fit, trace, hit_gen, target):
    """After initialisation: the best error into the trace, and a hit at generation 0."""
    i = cuda.grid(1)
    if i < fit.shape[0]:
        cuda.atomic.min(trace, 0, np.float64(fit[i]))
        if fit[i] <= target:
            cuda.atomic.min(hit_gen, 0, 0)


@cuda.jit(device=True)
def select_block(pop, fit, trials, tfit, n, g, trace, hit_gen, target, take):
    """Generational replacement of individual ``blockIdx.x`` by its whole block: the trial replaces
    the parent when not worse; the result goes into the trace and the hit flag. ``take`` is a
    1-element shared array; on return ``take[0]`` says whether the trial was taken."""
    i = cuda.blockIdx.x
    if cuda.threadIdx.x == 0:
        take[0] = 1 if (i < n and tfit[i] <= fit[i]) else 0
    cuda.syncthreads()
    if take[0] == 1:
        j = cuda.threadIdx.x
        while j < pop.shape[1]:
            pop[i, j] = trials[i, j]
            j += cuda.blockDim.x
    if cuda.threadIdx.x == 0:
        f = tfit[i] if take[0] == 1 else fit[i]
        fit[i] = f
        cuda.atomic.min(trace, g, np.float64(f))
        if f <= target:
            cuda.atomic.min(hit_gen, 0, g)


@cuda.jit
def _reset_kernel(trace, hit_gen):
    t = cuda.grid(1)
    if t < trace.shape[0]:
        trace[t] = math.inf
    if t == 0:
        hit_gen[0] = NO_HIT


class DeviceLoopImplementation(Implementation):
    """Subclasses provide ``allocate()``, ``launch_init(key)``, ``launch_generation(key, g, n)``
    (on ``self.compute``) and ``final_population() -> (pop, fit)`` device arrays."""

    device = "gpu"

    def __init__(self, function, params, poll_every: int = 1):
        super().__init__(function, params)
        if isinstance(poll_every, bool) or not isinstance(poll_every, int) or poll_every < 1:
            from ..errors import InvalidInputError

            raise InvalidInputError(f"poll_every must be a positive integer, got {poll_every!r}")
        self.poll_every = poll_every  # generations between two asynchronous flag copies
        self.prebound = False

    def _allocate_common(self):
        p = self.params
        self.max_generations = math.ceil((p.max_fes - p.popsize) / p.popsize)
        shape_key = (self.max_generations, self.popsize)
        if getattr(self, "_allocated_for", None) == shape_key:
            return
        self.compute = cuda.stream()
        self.side = cuda.stream()  # kernel P (ide) and the asynchronous flag copies
        self.d_trace = cuda.device_array(self.max_generations + 1, dtype=np.float64)
        self.d_hit = cuda.device_array(1, dtype=np.int64)
        self.h_hit = cuda.pinned_array(1, dtype=np.int64)
        self.generation_done = cuda.event()
        self.allocate()
        self._allocated_for = shape_key

    def allocate(self) -> None:
        raise NotImplementedError

    def run(self, seed: int):
        p = self.params
        key = seed_key(seed)
        self._allocate_common()
        n_trace = self.d_trace.shape[0]
        _reset_kernel[(n_trace + 255) // 256, 256, self.compute](self.d_trace, self.d_hit)
        self.h_hit[0] = NO_HIT
        self.compute.synchronize()

        t0 = time.perf_counter()
        seen_at = None
        self.launch_init(key)
        self._poll()
        g, fes = 0, p.popsize
        while fes < p.max_fes:
            if self.h_hit[0] != NO_HIT:
                seen_at = time.perf_counter() - t0
                break
            g += 1
            n = min(p.popsize, p.max_fes - fes)
            self.launch_generation(key, g, n)
            fes += n
            if g % self.poll_every == 0:
                self._poll()
        self.compute.synchronize()
        self.side.synchronize()
        self.d_hit.copy_to_host(self.h_hit)  # the last poll may predate the last generations
        hit_gen = int(self.h_hit[0])
        last = min(g, hit_gen)
        self._last_generation = last
        d_pop, d_fit = self.final_population(last)
        fit = d_fit.copy_to_host()
        best_i = int(np.argmin(fit))
        best_x = d_pop[best_i].copy_to_host()
        wall = time.perf_counter() - t0
        if hit_gen != NO_HIT and seen_at is None:
            seen_at = wall
        trace_best = self.d_trace[: last + 1].copy_to_host()
        gens = np.arange(last + 1)
        trace = {"generation": gens,
                 "fes": np.array([fes_after(k, p.popsize, p.max_fes) for k in gens]),
                 "best_error": trace_best, "time_s": np.full(last + 1, np.nan)}
        hit_fes = fes_after(hit_gen, p.popsize, p.max_fes) if hit_gen != NO_HIT else None
        return self._result(seed, float(fit[best_i]), best_x, fes_after(last, p.popsize, p.max_fes),
                            last, wall, hit_fes, seen_at if hit_fes is not None else None, trace,
                            options={"poll_every": self.poll_every}, prebound=self.prebound)

    def population(self):
        """Host copies of the final population and errors of the last run."""
        d_pop, d_fit = self.final_population(self._last_generation)
        return d_pop.copy_to_host(), d_fit.copy_to_host().astype(np.float64)

    def _poll(self):
        """Enqueue the asynchronous copy of the hit flag behind the work enqueued so far."""
        self.generation_done.record(self.compute)
        self.generation_done.wait(self.side)
        self.d_hit.copy_to_host(self.h_hit, stream=self.side)
