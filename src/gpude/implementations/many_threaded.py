"""``many_threaded``: Krömer et al.'s many-threaded DE (a thread block per individual, a thread per
parameter), the GPU DE that runs any problem.

Krömer, Platoš, Snášel & Abraham, "Many-threaded differential evolution on the GPU", sec. 4:

1. each candidate solution is processed by a thread block;
2. each of its parameters by a thread of that block (a block strides when D exceeds its threads);
3. each kernel processes the whole population in one launch;

and a generation forms the whole offspring population before merging it with the parents (Price,
Storn & Lampinen's formulation: trial vectors do not take part in the generation that made them).
Per generation: the *trial* kernel (thread 0 of a block draws r1, r2, r3 and j_rand into shared
memory; every thread builds its coordinate of the trial vector: mutation, crossover and the bound
repair Krömer calls verification), the problem's own evaluation kernel (a separate kernel, as in
the paper), and the *merge* kernel (a block per individual: the trial vector replaces its parent
when not worse).

Unlike the paper, no kernel fills batches of random numbers: the counter-based generator of
:mod:`gpude.core.rng` computes each decision where it is used, so a run makes exactly the decisions of
``de/sequential`` for the same seed (tested). The evaluation goes through the problem's
``gpu_evaluator`` (:mod:`gpude.problems.base`), so besides the benchmark functions this runs LOP
and scheduling instances and the large-scale functions. Several trials per launch
(``trials_per_launch``) add a second grid dimension, as in :mod:`gpude.implementations.device_loop`.

A generation's three launches are pre-bound (:class:`gpude.core.prebound.PreboundLaunch`: the arguments
marshalled once, ``g`` and ``n`` set per launch; the LOP and ETC evaluators bind theirs too): a numba
launch spends tens of microseconds on the host typing a kernel's arguments, more than the GPU work of
a 64-individual generation. With
``graph_generations`` > 1 the three launches of that many generations are replayed as one CUDA graph
(:mod:`gpude.implementations.generation_graph`): still a kernel per step over the whole population.
"""

from __future__ import annotations

from functools import cache

import numpy as np
from numba import cuda

from ..algorithms.de import build_de_ops, require_variant_support
from ..core.errors import InvalidInputError, require_positive_int
from ..core.prebound import PreboundLaunch
from .device_loop import GRAPH_GENERATIONS, DeviceLoopImplementation, init_stats_kernel, select_block

MAX_THREADS = 1024  # a block's limit since compute capability 2.x (the paper's Tesla C2050)


def block_threads(dim: int) -> int:
    """Threads per block: one per parameter, in whole warps, at most a block's limit."""
    return min(MAX_THREADS, 32 * -(-dim // 32))


@cache
def build_kernels(dtype):
    """Grids are (NP, trials): block (i, b) is individual i of trial b; its threads stride over D.
    The generation kernels work on generation ``base[0] + k`` (see
    :mod:`gpude.implementations.generation_graph`)."""
    ops = build_de_ops(dtype, "cuda")
    init_value, pick, trial_value = ops.init_value, ops.pick, ops.trial_value

    @cuda.jit(cache=True)
    def init_kernel(pop, keys, lower, upper):
        i, b = cuda.blockIdx.x, cuda.blockIdx.y
        popsize, dim = pop.shape[1], pop.shape[2]
        j = cuda.threadIdx.x
        while j < dim:
            pop[b, i, j] = init_value(keys[b], i, j, popsize, dim, lower, upper)
            j += cuda.blockDim.x

    @cuda.jit(cache=True)
    def trial_kernel(pop, trials, keys, base, k, F, CR, lower, upper, mode, n, hit_gen):
        i, b = cuda.blockIdx.x, cuda.blockIdx.y
        g = base[0] + k
        if i >= n or hit_gen[b] < g:  # past the last partial generation, or the trial has hit
            return
        popsize, dim = pop.shape[1], pop.shape[2]
        idx = cuda.shared.array(4, np.int64)
        if cuda.threadIdx.x == 0:
            r1, r2, r3, jrand = pick(keys[b], g, i, popsize, dim)
            idx[0], idx[1], idx[2], idx[3] = r1, r2, r3, jrand
        cuda.syncthreads()
        j = cuda.threadIdx.x
        while j < dim:
            trials[b, i, j] = trial_value(keys[b], g, i, j, popsize, dim, idx[3], F, CR, pop[b, i, j],
                                          pop[b, idx[0], j], pop[b, idx[1], j], pop[b, idx[2], j],
                                          lower, upper, mode)
            j += cuda.blockDim.x

    @cuda.jit(cache=True)
    def merge_kernel(pop, fit, trials, tfit, n, base, k, trace, hit_gen, target):
        g = base[0] + k
        if hit_gen[cuda.blockIdx.y] < g:
            return  # a previous generation of this trial reached the target: keep its state
        take = cuda.shared.array(1, np.int32)
        select_block(pop, fit, trials, tfit, n, g, trace, hit_gen, target, take)

    return init_kernel, trial_kernel, merge_kernel


class ManyThreaded(DeviceLoopImplementation):
    """Krömer et al.'s many-threaded DE (see the module docstring).

    Options: ``poll_every``, ``trials_per_launch`` (:class:`DeviceLoopImplementation`),
    ``graph_generations`` (generations the host launches with one call, as a CUDA graph of their
    three kernels; 1: each launched on its own; default 32) and ``evaluator`` (a dict of options for the
    problem's ``gpu_evaluator``, e.g. a function's ``threads``).
    """

    name = "many_threaded"
    needs_program = False  # the problem's evaluator, in a kernel of its own

    def __init__(self, function, params, poll_every: int = 1, trials_per_launch: int = 1,
                 graph_generations: int = GRAPH_GENERATIONS, evaluator: dict | None = None):
        super().__init__(function, params, poll_every=poll_every, trials_per_launch=trials_per_launch)
        require_variant_support(self, params)  # DE/rand/1/bin only
        require_positive_int("graph_generations", graph_generations)
        self.graph_generations = graph_generations
        if evaluator is not None and not isinstance(evaluator, dict):
            raise InvalidInputError(f"evaluator must be a dict of the problem evaluator's options, got {evaluator!r}")
        self.evaluator_options = dict(evaluator or {})

    def allocate(self):
        T, B, NP, D = self.dtype, self.batch, self.popsize, self.dim
        self.k_init, self.k_trial, self.k_merge = build_kernels(T)
        options = dict(self.evaluator_options)
        if getattr(self.function, "streaming", False):
            options.setdefault("max_rows", B * NP)  # one launch for the population
        self.ev = self.function.gpu_evaluator(T, **options)
        self.threads = block_threads(D)
        self.d_pop = cuda.device_array((B, NP, D), dtype=T)
        self.d_trials = cuda.device_array((B, NP, D), dtype=T)
        # errors in float64 whatever the arithmetic (the evaluators write float64; a float32
        # evaluation is exact in float64, so selection decides as in float32)
        self.d_fit = cuda.device_array((B, NP), dtype=np.float64)
        self.d_tfit = cuda.device_array((B, NP), dtype=np.float64)
        # a generation's three launches, bound once (g and n set per launch): numba's launch spends tens
        # of microseconds typing each kernel's arguments, more than a small population's GPU work
        p, s = self.params, self.compute
        base = self._make_graph(self.graph_generations)
        self.bound = [
            PreboundLaunch(self.k_trial, (self.d_pop, self.d_trials, self.d_keys, base, 1, p.F, p.CR, self.lower,
                                          self.upper, p.bound_mode, NP, self.d_hit), (NP, B), self.threads, s,
                           {"k": 4, "n": 10}),
            PreboundLaunch(self.k_merge, (self.d_pop, self.d_fit, self.d_trials, self.d_tfit, NP, base, 1,
                                          self.d_trace, self.d_hit, p.target), (NP, B), min(self.threads, 256), s,
                           {"n": 4, "k": 6}),
        ]
        self.evaluate_trials = self.ev.prebound(self.d_trials.reshape(B * NP, D), self.d_tfit.reshape(B * NP), 0,
                                                B * NP, s)
        self.prebound = all(b.fast for b in self.bound) and isinstance(
            getattr(self.evaluate_trials, "__self__", None), PreboundLaunch) and self.evaluate_trials.__self__.fast
        self.graph.set_capturable(self.prebound)

    def _evaluate(self, d_rows, d_out):
        B, NP = self.batch, self.popsize
        self.ev.launch(d_rows.reshape(B * NP, self.dim), d_out.reshape(B * NP), 0, B * NP, self.compute)

    def launch_init(self):
        s, B, NP = self.compute, self.batch, self.popsize
        self.k_init[(NP, B), self.threads, s](self.d_pop, self.d_keys, self.lower, self.upper)
        self._evaluate(self.d_pop, self.d_fit)
        init_stats_kernel[(B * NP + 255) // 256, 256, s](self.d_fit, self.d_trace, self.d_hit, self.params.target)

    def launch_offset(self, k, n):
        """The generation at offset ``k`` from the graph's base, with ``n`` trial vectors."""
        trial, merge = self.bound
        trial.launch(k=k, n=n)
        self.evaluate_trials()  # the whole population; only n trial vectors count
        merge.launch(n=n, k=k)

    def final_population(self, b, last_generation):
        return self.d_pop[b], self.d_fit[b]
