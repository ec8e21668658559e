"""``all_gpu``: the population stays on the GPU, one kernel per operator.

Qin et al. Fig. 1 / Janssen et al. Fig. 4: initialise, evaluate, then per
generation select indices, mutate, cross over, evaluate, replace. Element-wise
kernels use a thread per (individual, coordinate); evaluation uses the
population kernel of :mod:`gpude.functions.gpu` (a block per individual);
replacement a block per individual. The "solution found" test is on the GPU
(see :mod:`gpude.implementations.device_loop`).
"""

from __future__ import annotations

from functools import cache

import numpy as np
from numba import cuda

from ..algorithms.de import build_de_ops, require_variant_support
from ..core.errors import require_positive_int
from ..core.prebound import PreboundLaunch
from ..functions import gpu
from .device_loop import GRAPH_GENERATIONS, DeviceLoopImplementation, init_stats_kernel, select_block

MAX_ELEMENTWISE_THREADS = 256


@cache
def build_kernels(dtype):
    """The operator kernels. Arrays carry the trials of a batch first: pop (B, NP, D), idx
    (B, NP, 4), keys (B,); element-wise kernels use a flat thread index over (trial, individual,
    coordinate). The generation kernels work on generation ``base[0] + k`` (``base`` a one-element
    device array: see :mod:`gpude.implementations.generation_graph`)."""
    ops = build_de_ops(dtype, "cuda")
    init_value, pick, mutant = ops.init_value, ops.pick, ops.mutant
    cross_over = ops.cross_over

    @cuda.jit(cache=True)
    def init_kernel(pop, keys, lower, upper):
        t = cuda.grid(1)
        trials, popsize, dim = pop.shape
        if t < trials * popsize * dim:
            b, i, j = t // (popsize * dim), (t // dim) % popsize, t % dim
            pop[b, i, j] = init_value(keys[b], i, j, popsize, dim, lower, upper)

    @cuda.jit(cache=True)
    def indices_kernel(idx, keys, base, k, dim, n):
        t = cuda.grid(1)
        if t < idx.shape[0] * n:
            b, i = t // n, t % n
            r1, r2, r3, jrand = pick(keys[b], base[0] + k, i, idx.shape[1], dim)
            idx[b, i, 0], idx[b, i, 1], idx[b, i, 2], idx[b, i, 3] = r1, r2, r3, jrand

    @cuda.jit(cache=True)
    def mutate_kernel(pop, idx, mutants, F, n):
        t = cuda.grid(1)
        dim = pop.shape[2]
        if t < pop.shape[0] * n * dim:
            b, i, j = t // (n * dim), (t // dim) % n, t % dim
            mutants[b, i, j] = mutant(F, pop[b, idx[b, i, 0], j], pop[b, idx[b, i, 1], j],
                                      pop[b, idx[b, i, 2], j])

    @cuda.jit(cache=True)
    def crossover_kernel(pop, mutants, idx, trials, keys, base, k, CR, lower, upper, mode, n):
        t = cuda.grid(1)
        _, popsize, dim = pop.shape
        if t < pop.shape[0] * n * dim:
            b, i, j = t // (n * dim), (t // dim) % n, t % dim
            trials[b, i, j] = cross_over(keys[b], base[0] + k, i, j, popsize, dim, idx[b, i, 3], CR, mutants[b, i, j],
                                         pop[b, i, j], lower, upper, mode)

    @cuda.jit(cache=True)
    def replace_kernel(pop, fit, trials, tfit, n, base, k, trace, hit_gen, target):
        # a block per (individual, trial): thread 0 decides, all threads copy the row
        g = base[0] + k
        if hit_gen[cuda.blockIdx.y] < g:
            return  # a previous generation of this trial reached the target: keep its state
        take = cuda.shared.array(1, np.int32)
        select_block(pop, fit, trials, tfit, n, g, trace, hit_gen, target, take)

    return (init_kernel, init_stats_kernel, indices_kernel, mutate_kernel, crossover_kernel,
            replace_kernel)


def _grid(count):
    """(blocks, threads) for a thread per element: blocks of up to 256 threads."""
    threads = min(MAX_ELEMENTWISE_THREADS, max(32, gpu.next_pow2(count)))
    return max(1, (count + threads - 1) // threads), threads


def rows(array):
    """A (B, NP, ...) device array as (B*NP, ...) rows, for the population evaluation kernel."""
    return array.reshape(array.shape[0] * array.shape[1], *array.shape[2:])


class AllGPU(DeviceLoopImplementation):
    """All-GPU DE. Options: ``poll_every`` and ``trials_per_launch``
    (:class:`~gpude.implementations.device_loop.DeviceLoopImplementation`), and
    ``graph_generations``: generations the host launches with one call, as a CUDA graph of their
    kernels (:mod:`gpude.implementations.generation_graph`; 1: each kernel launched on its own;
    default ``GRAPH_GENERATIONS``, 32).
    The kernels and their order are the same either way, and so is every run."""

    name = "all_gpu"

    def __init__(self, function, params, poll_every: int = 1, trials_per_launch: int = 1,
                 graph_generations: int = GRAPH_GENERATIONS):
        super().__init__(function, params, poll_every=poll_every, trials_per_launch=trials_per_launch)
        require_variant_support(self, params)  # DE/rand/1/bin only
        require_positive_int("graph_generations", graph_generations)
        self.graph_generations = graph_generations

    def allocate(self):
        T, B, NP, D = self.dtype, self.batch, self.popsize, self.dim
        self.fn = gpu.compile_function(self.function.program, T)
        (self.k_init, self.k_init_stats, self.k_indices, self.k_mutate, self.k_crossover,
         self.k_replace) = build_kernels(T)
        self._allocate_operator_arrays()
        # every generation's launches, bound once (g, and n for a last partial generation, set per
        # launch; the evaluation always covers the whole population, and only n trial vectors count)
        p, s, keys = self.params, self.compute, self.d_keys
        base = self._make_graph(self.graph_generations)
        self.bound = [
            PreboundLaunch(self.k_indices, (self.d_idx, keys, base, 1, D, NP), *_grid(B * NP), s,
                           {"k": 3, "n": 5}),
            PreboundLaunch(self.k_mutate, (self.d_pop, self.d_idx, self.d_mutants, p.F, NP),
                           *_grid(B * NP * D), s, {"n": 4}),
            PreboundLaunch(self.k_crossover, (self.d_pop, self.d_mutants, self.d_idx, self.d_trials, keys, base,
                                              1, p.CR, self.lower, self.upper, p.bound_mode, NP),
                           *_grid(B * NP * D), s, {"k": 6, "n": 11}),
            PreboundLaunch(self.fn.population_kernel, (rows(self.d_trials), rows(self.d_tfit), *self.fn.data),
                           B * NP, self.fn.threads, s),
            PreboundLaunch(self.k_replace, (self.d_pop, self.d_fit, self.d_trials, self.d_tfit, NP, base, 1,
                                            self.d_trace, self.d_hit, p.target),
                           (NP, B), self.fn.threads, s, {"n": 4, "k": 6}),
        ]
        self.prebound = all(b.fast for b in self.bound)
        self.graph.set_capturable(self.prebound)

    def _allocate_operator_arrays(self):
        """Population, errors, mutants, trial vectors, their errors and indices of every trial."""
        T, B, NP, D = self.dtype, self.batch, self.popsize, self.dim
        self.d_pop = cuda.device_array((B, NP, D), dtype=T)
        self.d_fit = cuda.device_array((B, NP), dtype=T)
        self.d_mutants = cuda.device_array((B, NP, D), dtype=T)
        self.d_trials = cuda.device_array((B, NP, D), dtype=T)
        self.d_tfit = cuda.device_array((B, NP), dtype=T)
        self.d_idx = cuda.device_array((B, NP, 4), dtype=np.int64)

    def launch_init(self):
        s, B, NP, D = self.compute, self.batch, self.popsize, self.dim
        self.k_init[_grid(B * NP * D) + (s,)](self.d_pop, self.d_keys, self.lower, self.upper)
        self.fn.population_kernel[B * NP, self.fn.threads, s](rows(self.d_pop), rows(self.d_fit),
                                                              *self.fn.data)
        self.k_init_stats[_grid(B * NP) + (s,)](self.d_fit, self.d_trace, self.d_hit, self.params.target)

    def launch_offset(self, k, n):
        """The generation at offset ``k`` from the graph's base, with ``n`` trial vectors."""
        indices, mutate, crossover, evaluate, replace = self.bound
        indices.launch(k=k, n=n)
        mutate.launch(n=n)
        crossover.launch(k=k, n=n)
        evaluate.launch()
        replace.launch(n=n, k=k)

    def final_population(self, b, last_generation):
        return self.d_pop[b], self.d_fit[b]
