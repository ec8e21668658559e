"""``two_kernel``: DE in the two-kernel design of Nashed et al. (PPSN 2012, libCudaOptimize).

Per generation, two kernels:

1. **trial vectors** -- a thread per (individual, coordinate) of each trial of the batch (the
   trial is ``blockIdx.y``); thread 0 of every block first finds x_best of its trial by scanning
   the NP errors of the population the generation starts from (lowest index on ties: NP is small,
   ~48), then every thread draws its individual's partners and builds its coordinate of the trial
   vector: mutation (``rand1``, ``best1``, ``current_to_best1``), crossover (``bin``, ``exp``)
   and bound repair, the operators of :func:`gpude.algorithms.de.build_de_ops`;
2. **evaluation and selection** -- a block per (individual, trial) evaluates the trial vector with
   the function's ``block_evaluate`` (shared buffers and reduction in shared memory) and replaces
   the parent when not worse (:func:`~gpude.implementations.device_loop.select_block`, which also
   writes the trace and the hit flag).

Replacement is deferred (trial vectors live in their own array), so every variant makes the
decisions of ``sequential`` for a seed. Initialisation is all_gpu's. The run loop, batches of
trials and the stopping test are :mod:`gpude.implementations.device_loop`'s.
"""

from __future__ import annotations

from functools import cache

import numpy as np
from numba import cuda

from ..algorithms.de import build_de_ops
from ..core.prebound import PreboundLaunch
from ..functions import gpu
from . import all_gpu
from .device_loop import DeviceLoopImplementation, select_block

MAX_TRIAL_THREADS = 256


@cache
def build_trial_kernel(dtype):
    """Kernel 1: ``trial_kernel[(blocks, B), threads](pop, fit, trials, keys, g, n, F, CR, lower,
    upper, mode, mutation, crossover, hit_gen)``; a thread per (individual < n, coordinate)."""
    ops = build_de_ops(dtype, "cuda")
    pick, variant_trial_value, best_index = ops.pick, ops.variant_trial_value, ops.best_index

    @cuda.jit(cache=True)
    def trial_kernel(pop, fit, trials, keys, g, n, F, CR, lower, upper, mode, mutation, crossover,
                     hit_gen):
        b = cuda.blockIdx.y
        if hit_gen[b] < g:
            return  # an earlier generation of this trial reached the target: keep its state
        best = cuda.shared.array(1, np.int64)
        _, popsize, dim = pop.shape
        if cuda.threadIdx.x == 0:
            best[0] = best_index(fit[b], popsize)
        cuda.syncthreads()
        t = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        if t < n * dim:
            i, j = t // dim, t % dim
            key = keys[b]
            r1, r2, r3, jrand = pick(key, g, i, popsize, dim)
            trials[b, i, j] = variant_trial_value(
                mutation, crossover, key, g, i, j, popsize, dim, jrand, F, CR, pop[b, i, j],
                pop[b, best[0], j], pop[b, r1, j], pop[b, r2, j], pop[b, r3, j], lower, upper, mode)

    return trial_kernel


@cache
def build_select_kernel(block_evaluate, dtype, threads, buf):
    """Kernel 2: ``select_kernel[(NP, B), threads](pop, fit, trials, tfit, n, g, shift, rot_t, perm,
    trace, hit_gen, target)``; a block per (individual, trial)."""
    T = np.dtype(dtype).type
    P, BUF = int(threads), int(buf)

    @cuda.jit(cache=True)
    def select_kernel(pop, fit, trials, tfit, n, g, shift, rot_t, perm, trace, hit_gen, target):
        b, i, tid = cuda.blockIdx.y, cuda.blockIdx.x, cuda.threadIdx.x
        if hit_gen[b] < g:
            return
        a = cuda.shared.array(BUF, T)
        z = cuda.shared.array(BUF, T)
        red = cuda.shared.array((4, P), T)
        take = cuda.shared.array(1, np.int32)
        if i < n:  # the last generation of a budget may hold fewer trial vectors
            f = block_evaluate(trials[b, i], a, z, red, shift, rot_t, perm, tid)
            if tid == 0:
                tfit[b, i] = f
        cuda.syncthreads()
        select_block(pop, fit, trials, tfit, n, g, trace, hit_gen, target, take)

    return select_kernel


def _trial_grid(count):
    threads = min(MAX_TRIAL_THREADS, max(32, gpu.next_pow2(count)))
    return max(1, (count + threads - 1) // threads), threads


class TwoKernelDE(DeviceLoopImplementation):
    """Nashed et al.'s two-kernel DE; every mutation and crossover of :class:`DEParams`."""

    name = "two_kernel"
    variants = "all"

    def allocate(self):
        T, B, NP, D = self.dtype, self.batch, self.popsize, self.dim
        self.fn = gpu.compile_function(self.function.program, T)
        kernels = all_gpu.build_kernels(T)
        self.k_init, self.k_init_stats = kernels[0], kernels[1]
        self.k_trials = build_trial_kernel(T)
        self.k_select = build_select_kernel(self.fn.block_evaluate, T, self.fn.threads,
                                            self.fn.buffer_size)
        self.d_pop = cuda.device_array((B, NP, D), dtype=T)
        self.d_fit = cuda.device_array((B, NP), dtype=T)
        self.d_trials = cuda.device_array((B, NP, D), dtype=T)
        self.d_tfit = cuda.device_array((B, NP), dtype=T)
        # arguments marshalled once (a numba launch re-types every argument: ~100 us a generation);
        # kernel 1's grid covers a full generation (its threads check t < n D)
        p, s = self.params, self.compute
        blocks, threads = _trial_grid(NP * D)
        self.bound = [
            PreboundLaunch(self.k_trials, (self.d_pop, self.d_fit, self.d_trials, self.d_keys, 1, NP, p.F, p.CR,
                                           self.lower, self.upper, p.bound_mode, p.mutation_code,
                                           p.crossover_code, self.d_hit),
                           (blocks, B), threads, s, {"g": 4, "n": 5}),
            PreboundLaunch(self.k_select, (self.d_pop, self.d_fit, self.d_trials, self.d_tfit, NP, 1,
                                           *self.fn.data, self.d_trace, self.d_hit, p.target),
                           (NP, B), self.fn.threads, s, {"n": 4, "g": 5}),
        ]
        self.prebound = all(b.fast for b in self.bound)

    def launch_init(self):
        s, B, NP, D = self.compute, self.batch, self.popsize, self.dim
        self.k_init[all_gpu._grid(B * NP * D) + (s,)](self.d_pop, self.d_keys, self.lower, self.upper)
        self.fn.population_kernel[B * NP, self.fn.threads, s](
            all_gpu.rows(self.d_pop), all_gpu.rows(self.d_fit), *self.fn.data)
        self.k_init_stats[all_gpu._grid(B * NP) + (s,)](self.d_fit, self.d_trace, self.d_hit,
                                                        self.params.target)

    def launch_generation(self, g, n):
        trials, select = self.bound
        trials.launch(g=g, n=n)
        select.launch(n=n, g=g)

    def final_population(self, b, last_generation):
        return self.d_pop[b], self.d_fit[b]
