"""``all_gpu``: the population stays on the GPU, one kernel per operator.

Qin et al. Fig. 1 / Janssen et al. Fig. 4: initialise, evaluate, then per
generation select indices, mutate, cross over, evaluate, replace. Element-wise
kernels use a thread per (individual, coordinate); evaluation uses the
population kernel of :mod:`gpude.functions.gpu` (a block per individual);
replacement a block per individual. The "solution found" test is on the GPU
(see :mod:`gpude.implementations.device_loop`).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numba import cuda

from ..algorithms.de import build_de_ops
from ..functions import gpu
from .device_loop import DeviceLoopImplementation, init_stats_kernel, select_block
from .prebound import PreboundLaunch

MAX_ELEMENTWISE_THREADS = 256


@lru_cache(maxsize=None)
def build_kernels(dtype):
    ops = build_de_ops(dtype, "cuda")
    init_value, pick, mutant = ops.init_value, ops.pick, ops.mutant
    crossover_takes, repair = ops.crossover_takes, ops.repair

    @cuda.jit
    def init_kernel(pop, key, lower, upper):
        t = cuda.grid(1)
        popsize, dim = pop.shape
        if t < popsize * dim:
            i, j = t // dim, t % dim
            pop[i, j] = init_value(key, i, j, popsize, dim, lower, upper)

    @cuda.jit
    def indices_kernel(idx, key, g, dim, n):
        i = cuda.grid(1)
        if i < n:
            r1, r2, r3, jrand = pick(key, g, i, idx.shape[0], dim)
            idx[i, 0], idx[i, 1], idx[i, 2], idx[i, 3] = r1, r2, r3, jrand

    @cuda.jit
    def mutate_kernel(pop, idx, mutants, F, n):
        t = cuda.grid(1)
        dim = pop.shape[1]
        if t < n * dim:
            i, j = t // dim, t % dim
            mutants[i, j] = mutant(F, pop[idx[i, 0], j], pop[idx[i, 1], j], pop[idx[i, 2], j])

    @cuda.jit
    def crossover_kernel(pop, mutants, idx, trials, key, g, CR, lower, upper, mode, n):
        t = cuda.grid(1)
        popsize, dim = pop.shape
        if t < n * dim:
            i, j = t // dim, t % dim
            if crossover_takes(key, g, i, j, popsize, dim, idx[i, 3], CR):
                trials[i, j] = repair(key, g, i, j, popsize, dim, mutants[i, j], pop[i, j],
                                      lower, upper, mode)
            else:
                trials[i, j] = pop[i, j]

    @cuda.jit
    def replace_kernel(pop, fit, trials, tfit, n, g, trace, hit_gen, target):
        # a block per individual: thread 0 decides, all threads copy the row
        if hit_gen[0] < g:
            return  # a previous generation reached the target: keep its state
        take = cuda.shared.array(1, np.int32)
        select_block(pop, fit, trials, tfit, n, g, trace, hit_gen, target, take)

    return (init_kernel, init_stats_kernel, indices_kernel, mutate_kernel, crossover_kernel,
            replace_kernel)


def _grid(count):
    """(blocks, threads) for a thread per element: blocks of up to 256 threads."""
    threads = min(MAX_ELEMENTWISE_THREADS, max(32, gpu.next_pow2(count)))
    return max(1, (count + threads - 1) // threads), threads


class AllGPU(DeviceLoopImplementation):
    name = "all_gpu"

    def allocate(self):
        T, NP, D = self.dtype, self.popsize, self.dim
        self.fn = gpu.compile_function(self.function.program, T)
        (self.k_init, self.k_init_stats, self.k_indices, self.k_mutate, self.k_crossover,
         self.k_replace) = build_kernels(T)
        self.d_pop = cuda.device_array((NP, D), dtype=T)
        self.d_fit = cuda.device_array(NP, dtype=T)
        self.d_mutants = cuda.device_array((NP, D), dtype=T)
        self.d_trials = cuda.device_array((NP, D), dtype=T)
        self.d_tfit = cuda.device_array(NP, dtype=T)
        self.d_idx = cuda.device_array((NP, 4), dtype=np.int64)
        # full generations launch through argument lists bound once (key and g set per launch)
        p, s, k0 = self.params, self.compute, np.uint64(0)
        self.bound = [
            PreboundLaunch(self.k_indices, (self.d_idx, k0, 1, D, NP), *_grid(NP), s, {"key": 1, "g": 2}),
            PreboundLaunch(self.k_mutate, (self.d_pop, self.d_idx, self.d_mutants, p.F, NP),
                           *_grid(NP * D), s),
            PreboundLaunch(self.k_crossover, (self.d_pop, self.d_mutants, self.d_idx, self.d_trials, k0, 1,
                                              p.CR, self.lower, self.upper, p.bound_mode, NP),
                           *_grid(NP * D), s, {"key": 4, "g": 5}),
            PreboundLaunch(self.fn.population_kernel, (self.d_trials, self.d_tfit, *self.fn.data),
                           NP, self.fn.threads, s),
            PreboundLaunch(self.k_replace, (self.d_pop, self.d_fit, self.d_trials, self.d_tfit, NP, 1,
                                            self.d_trace, self.d_hit, p.target),
                           NP, self.fn.threads, s, {"g": 5}),
        ]
        self.prebound = all(b.fast for b in self.bound)

    def launch_init(self, key):
        s, NP, D = self.compute, self.popsize, self.dim
        self.k_init[_grid(NP * D) + (s,)](self.d_pop, key, self.lower, self.upper)
        self.fn.population_kernel[NP, self.fn.threads, s](self.d_pop, self.d_fit, *self.fn.data)
        self.k_init_stats[_grid(NP) + (s,)](self.d_fit, self.d_trace, self.d_hit, self.params.target)

    def launch_generation(self, key, g, n):
        if n == self.popsize:
            indices, mutate, crossover, evaluate, replace = self.bound
            indices.launch(key=key, g=g)
            mutate.launch()
            crossover.launch(key=key, g=g)
            evaluate.launch()
            replace.launch(g=g)
            return
        # a last, partial generation (budget): the ordinary launches with n trials
        p, s, D = self.params, self.compute, self.dim
        self.k_indices[_grid(n) + (s,)](self.d_idx, key, g, D, n)
        self.k_mutate[_grid(n * D) + (s,)](self.d_pop, self.d_idx, self.d_mutants, p.F, n)
        self.k_crossover[_grid(n * D) + (s,)](self.d_pop, self.d_mutants, self.d_idx, self.d_trials,
                                              key, g, p.CR, self.lower, self.upper, p.bound_mode, n)
        self.fn.population_kernel[n, self.fn.threads, s](self.d_trials[:n], self.d_tfit[:n], *self.fn.data)
        # a block per individual, as many threads as the evaluator uses per individual
        self.k_replace[self.popsize, self.fn.threads, s](self.d_pop, self.d_fit, self.d_trials, self.d_tfit,
                                                         n, g, self.d_trace, self.d_hit, p.target)

    def final_population(self, last_generation):
        return self.d_pop, self.d_fit
