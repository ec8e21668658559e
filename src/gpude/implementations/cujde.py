"""``jde/cujde``: jDE on the GPU after the design of Boiani, Dominico & Parpinelli's cujDE (2020),
as Janssen et al. describe it (sec. 6.1-6.2).

Per generation, four kernels on one stream:

1. parameter update (a thread per individual): each individual's candidate (F', CR');
2. trial generation (a block per individual, a thread per dimension, the block size the next
   power of two >= D): thread 0 draws r1, r2, r3 and j_rand (uniform, or cujDE's displacement
   scheme) and loads (F', CR') into shared memory; every thread builds its coordinates;
3. evaluation (the population kernel of :mod:`gpude.functions.gpu`);
4. selection (a block per individual): the trial replaces the parent when not worse and the
   winner keeps (F', CR').

The published cujDE indexes its per-thread random states as ``id_d * id_p``, so many threads share
a stream and individuals are correlated. This implementation draws every decision from the
counter-based generator instead (:mod:`gpude.algorithms.jde`), so it makes exactly the decisions of
``jde/sequential`` for the same seed; the report says so.
"""

from __future__ import annotations

from functools import cache

import numpy as np
from numba import cuda

from ..algorithms.jde import build_jde_ops
from ..core.prebound import PreboundLaunch
from ..functions import gpu
from .all_gpu import _grid, rows
from .device_loop import DeviceLoopImplementation, init_stats_kernel, select_block


@cache
def build_kernels(dtype):
    """The four per-generation kernels; arrays carry the trials of a batch first (pop (B, NP, D),
    Fs (B, NP), keys (B,)), and the block kernels take the trial from ``blockIdx.y``."""
    ops = build_jde_ops(dtype, "cuda")
    init_value, pick_by, trial_value, new_params = ops.init_value, ops.pick_by, ops.trial_value, ops.new_params

    @cuda.jit(cache=True)
    def init_kernel(pop, Fs, CRs, keys, lower, upper, F0, CR0):
        t = cuda.grid(1)
        trials, popsize, dim = pop.shape
        if t < trials * popsize * dim:
            b, i, j = t // (popsize * dim), (t // dim) % popsize, t % dim
            pop[b, i, j] = init_value(keys[b], i, j, popsize, dim, lower, upper)
            if j == 0:
                Fs[b, i], CRs[b, i] = F0, CR0

    @cuda.jit(cache=True)
    def params_kernel(Fs, CRs, newF, newCR, keys, g, dim, tau1, tau2, F_lower, F_range, n):
        t = cuda.grid(1)
        if t < Fs.shape[0] * n:
            b, i = t // n, t % n
            F, CR = new_params(keys[b], g, i, Fs.shape[1], dim, Fs[b, i], CRs[b, i], tau1, tau2,
                               F_lower, F_range)
            newF[b, i], newCR[b, i] = F, CR

    @cuda.jit(cache=True)
    def trial_kernel(pop, trials, newF, newCR, keys, g, scheme, lower, upper, mode, n, hit_gen):
        i, b = cuda.blockIdx.x, cuda.blockIdx.y
        if i >= n or hit_gen[b] < g:
            return  # past the budget, or the trial has reached the target
        _, popsize, dim = pop.shape
        idx = cuda.shared.array(4, np.int64)
        par = cuda.shared.array(2, np.float64)  # the individual's (F', CR')
        if cuda.threadIdx.x == 0:
            r1, r2, r3, jrand = pick_by(scheme, keys[b], g, i, popsize, dim)
            idx[0], idx[1], idx[2], idx[3] = r1, r2, r3, jrand
            par[0], par[1] = newF[b, i], newCR[b, i]
        cuda.syncthreads()
        j = cuda.threadIdx.x
        while j < dim:
            trials[b, i, j] = trial_value(keys[b], g, i, j, popsize, dim, idx[3], par[0], par[1],
                                          pop[b, i, j], pop[b, idx[0], j], pop[b, idx[1], j],
                                          pop[b, idx[2], j], lower, upper, mode)
            j += cuda.blockDim.x

    @cuda.jit(cache=True)
    def select_kernel(pop, fit, trials, tfit, Fs, CRs, newF, newCR, n, g, trace, hit_gen, target):
        i, b = cuda.blockIdx.x, cuda.blockIdx.y
        if hit_gen[b] < g:
            return  # a previous generation of this trial reached the target: keep its state
        take = cuda.shared.array(1, np.int32)
        select_block(pop, fit, trials, tfit, n, g, trace, hit_gen, target, take)
        if cuda.threadIdx.x == 0 and take[0] == 1:
            Fs[b, i], CRs[b, i] = newF[b, i], newCR[b, i]  # the winner keeps the parameters that made it

    return init_kernel, init_stats_kernel, params_kernel, trial_kernel, select_kernel


class CuJDE(DeviceLoopImplementation):
    algorithm = "jde"
    name = "cujde"

    def allocate(self):
        T, B, NP, D = self.dtype, self.batch, self.popsize, self.dim
        self.fn = gpu.compile_function(self.function.program, T)
        (self.k_init, self.k_init_stats, self.k_params, self.k_trial,
         self.k_select) = build_kernels(T)
        self.d_pop = cuda.device_array((B, NP, D), dtype=T)
        self.d_fit = cuda.device_array((B, NP), dtype=T)
        self.d_trials = cuda.device_array((B, NP, D), dtype=T)
        self.d_tfit = cuda.device_array((B, NP), dtype=T)
        self.d_F, self.d_CR, self.d_newF, self.d_newCR = (cuda.device_array((B, NP), dtype=np.float64)
                                                          for _ in range(4))
        p, s, keys = self.params, self.compute, self.d_keys
        threads = self.fn.threads  # next power of two >= D, as cujDE
        # every generation's launches, bound once (g, and n for a last partial generation, set per
        # launch; the evaluation always covers the whole population, and only n trial vectors count)
        self.bound = [
            PreboundLaunch(self.k_params, (self.d_F, self.d_CR, self.d_newF, self.d_newCR, keys, 1, D,
                                           p.tau1, p.tau2, p.F_lower, p.F_range, NP),
                           *_grid(B * NP), s, {"g": 5, "n": 11}),
            PreboundLaunch(self.k_trial, (self.d_pop, self.d_trials, self.d_newF, self.d_newCR, keys, 1,
                                          p.index_code, self.lower, self.upper, p.bound_mode, NP, self.d_hit),
                           (NP, B), threads, s, {"g": 5, "n": 10}),
            PreboundLaunch(self.fn.population_kernel, (rows(self.d_trials), rows(self.d_tfit), *self.fn.data),
                           B * NP, self.fn.threads, s),
            PreboundLaunch(self.k_select, (self.d_pop, self.d_fit, self.d_trials, self.d_tfit, self.d_F,
                                           self.d_CR, self.d_newF, self.d_newCR, NP, 1, self.d_trace,
                                           self.d_hit, p.target),
                           (NP, B), threads, s, {"n": 8, "g": 9}),
        ]
        self.prebound = all(b.fast for b in self.bound)

    def launch_init(self):
        p, s, B, NP, D = self.params, self.compute, self.batch, self.popsize, self.dim
        self.k_init[_grid(B * NP * D) + (s,)](self.d_pop, self.d_F, self.d_CR, self.d_keys, self.lower,
                                              self.upper, p.F, p.CR)
        self.fn.population_kernel[B * NP, self.fn.threads, s](rows(self.d_pop), rows(self.d_fit),
                                                              *self.fn.data)
        self.k_init_stats[_grid(B * NP) + (s,)](self.d_fit, self.d_trace, self.d_hit, p.target)

    def launch_generation(self, g, n):
        params, trial, evaluate, select = self.bound
        params.launch(g=g, n=n)
        trial.launch(g=g, n=n)
        evaluate.launch()
        select.launch(n=n, g=g)

    def final_population(self, b, last_generation):
        return self.d_pop[b], self.d_fit[b]

    def population(self, trial: int = 0):
        """Host copies of the final population, errors and per-individual (F, CR) of trial
        ``trial`` of the last batch."""
        pop, fit = super().population(trial)
        return pop, fit, self.d_F[trial].copy_to_host(), self.d_CR[trial].copy_to_host()
