"""``fpde``: the DE of Gonzalez & Barriga (2011), as Qin et al. (GECCO 2012, sec. 3.2) describe it.

One kernel per operator, as Qin's Fig. 1: I (initialise), E (evaluate), P (mutation indices),
M (mutate), C (cross over), E, R (replace), with a fixed launch configuration: the algorithmic
kernels run ceil(N/16) blocks of 16 threads, a thread per individual looping over the
coordinates; the evaluations run N blocks of 16 threads, a block per individual. Random numbers
are drawn on the device (the counter-based generator of :mod:`gpude.algorithms.de`, where FPDE
used CURAND), so fpde makes the run of ``sequential`` for the same seed. FPDE's texture-memory
reads are not reproduced (numba-cuda has no texture objects). The trials of a batch
(``run_batch``) are the grid's y dimension, as in the other device loops.
"""

from __future__ import annotations

from functools import cache

import numpy as np
from numba import cuda

from ..algorithms.de import build_de_ops
from ..core.prebound import PreboundLaunch
from ..functions import gpu
from .all_gpu import AllGPU, rows
from .base import Implementation
from .device_loop import init_stats_kernel, mark_hit

THREADS = 16  # FPDE's block size, for every kernel


@cache
def build_kernels(dtype):
    """I, P, M, C and R; arrays carry the trials of a batch first (pop (B, NP, D), keys (B,)),
    the block's trial is ``blockIdx.y``, a thread handles individual ``cuda.grid(1)``."""
    ops = build_de_ops(dtype, "cuda")
    init_value, pick, mutant = ops.init_value, ops.pick, ops.mutant
    cross_over = ops.cross_over

    @cuda.jit(cache=True)
    def init_kernel(pop, keys, lower, upper):
        i, b = cuda.grid(1), cuda.blockIdx.y
        _, popsize, dim = pop.shape
        if i < popsize:
            for j in range(dim):
                pop[b, i, j] = init_value(keys[b], i, j, popsize, dim, lower, upper)

    @cuda.jit(cache=True)
    def indices_kernel(idx, keys, g, dim, n, hit_gen):
        i, b = cuda.grid(1), cuda.blockIdx.y
        if i < n and hit_gen[b] >= g:
            r1, r2, r3, jrand = pick(keys[b], g, i, idx.shape[1], dim)
            idx[b, i, 0], idx[b, i, 1], idx[b, i, 2], idx[b, i, 3] = r1, r2, r3, jrand

    @cuda.jit(cache=True)
    def mutate_kernel(pop, idx, mutants, F, n, g, hit_gen):
        i, b = cuda.grid(1), cuda.blockIdx.y
        if i < n and hit_gen[b] >= g:
            for j in range(pop.shape[2]):
                mutants[b, i, j] = mutant(F, pop[b, idx[b, i, 0], j], pop[b, idx[b, i, 1], j],
                                          pop[b, idx[b, i, 2], j])

    @cuda.jit(cache=True)
    def crossover_kernel(pop, mutants, idx, trials, keys, g, CR, lower, upper, mode, n, hit_gen):
        i, b = cuda.grid(1), cuda.blockIdx.y
        _, popsize, dim = pop.shape
        if i < n and hit_gen[b] >= g:
            for j in range(dim):
                trials[b, i, j] = cross_over(keys[b], g, i, j, popsize, dim, idx[b, i, 3], CR, mutants[b, i, j],
                                             pop[b, i, j], lower, upper, mode)

    @cuda.jit(cache=True)
    def replace_kernel(pop, fit, trials, tfit, n, g, trace, hit_gen, target):
        i, b = cuda.grid(1), cuda.blockIdx.y
        if i >= pop.shape[1] or hit_gen[b] < g:
            return  # past the population, or a previous generation of this trial reached the target
        if i < n and tfit[b, i] <= fit[b, i]:
            for j in range(pop.shape[2]):
                pop[b, i, j] = trials[b, i, j]
            fit[b, i] = tfit[b, i]
        cuda.atomic.min(trace, (b, g), np.float64(fit[b, i]))
        if fit[b, i] <= target:
            mark_hit(hit_gen, b, g)

    return init_kernel, indices_kernel, mutate_kernel, crossover_kernel, replace_kernel


class FPDE(AllGPU):
    """All-GPU DE's arrays and generation (the same five launches per generation), with FPDE's
    kernels and launch configuration."""

    name = "fpde"
    graph = None  # its kernels take the generation as an argument: launched one by one

    def __init__(self, function, params, poll_every: int = 1, trials_per_launch: int = 1, **options):
        if options:  # the base class names the options it does not take (all_gpu's graph_generations)
            Implementation.__init__(self, function, params, **options)
        super().__init__(function, params, poll_every=poll_every, trials_per_launch=trials_per_launch)

    def allocate(self):
        T, B, NP, D = self.dtype, self.batch, self.popsize, self.dim
        self.fn = gpu.compile_function(self.function.program, T, THREADS)
        (self.k_init, self.k_indices, self.k_mutate, self.k_crossover,
         self.k_replace) = build_kernels(T)
        self._allocate_operator_arrays()
        p, s, keys, hit = self.params, self.compute, self.d_keys, self.d_hit
        self.grid = grid = (-(-NP // THREADS), B)  # ceil(N/16) blocks of 16 threads, per trial
        # every generation's launches, bound once (g, and n for a last partial generation, set per
        # launch; the evaluation covers the whole population, and only n trial vectors count)
        self.bound = [
            PreboundLaunch(self.k_indices, (self.d_idx, keys, 1, D, NP, hit), grid, THREADS, s, {"g": 2, "n": 4}),
            PreboundLaunch(self.k_mutate, (self.d_pop, self.d_idx, self.d_mutants, p.F, NP, 1, hit), grid,
                           THREADS, s, {"n": 4, "g": 5}),
            PreboundLaunch(self.k_crossover, (self.d_pop, self.d_mutants, self.d_idx, self.d_trials, keys, 1, p.CR,
                                              self.lower, self.upper, p.bound_mode, NP, hit),
                           grid, THREADS, s, {"g": 5, "n": 10}),
            PreboundLaunch(self.fn.population_kernel, (rows(self.d_trials), rows(self.d_tfit), *self.fn.data),
                           B * NP, THREADS, s),
            PreboundLaunch(self.k_replace, (self.d_pop, self.d_fit, self.d_trials, self.d_tfit, NP, 1,
                                            self.d_trace, hit, p.target), grid, THREADS, s, {"n": 4, "g": 5}),
        ]
        self.prebound = all(b.fast for b in self.bound)

    def launch_init(self):
        s, B, NP = self.compute, self.batch, self.popsize
        self.k_init[self.grid, THREADS, s](self.d_pop, self.d_keys, self.lower, self.upper)
        self.fn.population_kernel[B * NP, THREADS, s](rows(self.d_pop), rows(self.d_fit), *self.fn.data)
        init_stats_kernel[(B * NP + 255) // 256, 256, s](self.d_fit, self.d_trace, self.d_hit, self.params.target)

    def launch_generation(self, g, n):
        indices, mutate, crossover, evaluate, replace = self.bound
        indices.launch(g=g, n=n)
        mutate.launch(n=n, g=g)
        crossover.launch(g=g, n=n)
        evaluate.launch()
        replace.launch(n=n, g=g)
