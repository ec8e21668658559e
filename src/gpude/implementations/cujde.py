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

from functools import lru_cache

import numpy as np
from numba import cuda

from ..algorithms.jde import build_jde_ops
from ..functions import gpu
from .all_gpu import _grid
from .device_loop import DeviceLoopImplementation, init_stats_kernel, select_block
from .prebound import PreboundLaunch


@lru_cache(maxsize=None)
def build_kernels(dtype):
    ops = build_jde_ops(dtype, "cuda")
    init_value, pick_by, trial_value, new_params = ops.init_value, ops.pick_by, ops.trial_value, ops.new_params

    @cuda.jit
    def init_kernel(pop, Fs, CRs, key, lower, upper, F0, CR0):
        t = cuda.grid(1)
        popsize, dim = pop.shape
        if t < popsize * dim:
            i, j = t // dim, t % dim
            pop[i, j] = init_value(key, i, j, popsize, dim, lower, upper)
            if j == 0:
                Fs[i], CRs[i] = F0, CR0

    @cuda.jit
    def params_kernel(Fs, CRs, newF, newCR, key, g, dim, tau1, tau2, F_lower, F_range, n):
        i = cuda.grid(1)
        if i < n:
            F, CR = new_params(key, g, i, Fs.shape[0], dim, Fs[i], CRs[i], tau1, tau2, F_lower, F_range)
            newF[i], newCR[i] = F, CR

    @cuda.jit
    def trial_kernel(pop, trials, newF, newCR, key, g, scheme, lower, upper, mode, n):
        i = cuda.blockIdx.x
        if i >= n:
            return
        popsize, dim = pop.shape
        idx = cuda.shared.array(4, np.int64)
        par = cuda.shared.array(2, np.float64)  # the individual's (F', CR')
        if cuda.threadIdx.x == 0:
            r1, r2, r3, jrand = pick_by(scheme, key, g, i, popsize, dim)
            idx[0], idx[1], idx[2], idx[3] = r1, r2, r3, jrand
            par[0], par[1] = newF[i], newCR[i]
        cuda.syncthreads()
        j = cuda.threadIdx.x
        while j < dim:
            trials[i, j] = trial_value(key, g, i, j, popsize, dim, idx[3], par[0], par[1], pop[i, j],
                                       pop[idx[0], j], pop[idx[1], j], pop[idx[2], j], lower, upper, mode)
            j += cuda.blockDim.x

    @cuda.jit
    def select_kernel(pop, fit, trials, tfit, Fs, CRs, newF, newCR, n, g, trace, hit_gen, target):
        if hit_gen[0] < g:
            return  # a previous generation reached the target: keep its state
        take = cuda.shared.array(1, np.int32)
        select_block(pop, fit, trials, tfit, n, g, trace, hit_gen, target, take)
        i = cuda.blockIdx.x
        if cuda.threadIdx.x == 0 and take[0] == 1:
            Fs[i], CRs[i] = newF[i], newCR[i]  # the winner keeps the parameters that made it

    return init_kernel, init_stats_kernel, params_kernel, trial_kernel, select_kernel


class CuJDE(DeviceLoopImplementation):
    algorithm = "jde"
    name = "cujde"

    def allocate(self):
        T, NP, D = self.dtype, self.popsize, self.dim
        self.fn = gpu.compile_function(self.function.program, T)
        (self.k_init, self.k_init_stats, self.k_params, self.k_trial,
         self.k_select) = build_kernels(T)
        self.d_pop = cuda.device_array((NP, D), dtype=T)
        self.d_fit = cuda.device_array(NP, dtype=T)
        self.d_trials = cuda.device_array((NP, D), dtype=T)
        self.d_tfit = cuda.device_array(NP, dtype=T)
        self.d_F, self.d_CR, self.d_newF, self.d_newCR = (cuda.device_array(NP, dtype=np.float64)
                                                          for _ in range(4))
        p, s, k0 = self.params, self.compute, np.uint64(0)
        threads = self.fn.threads  # next power of two >= D, as cujDE
        self.bound = [
            PreboundLaunch(self.k_params, (self.d_F, self.d_CR, self.d_newF, self.d_newCR, k0, 1, D,
                                           p.tau1, p.tau2, p.F_lower, p.F_range, NP),
                           *_grid(NP), s, {"key": 4, "g": 5}),
            PreboundLaunch(self.k_trial, (self.d_pop, self.d_trials, self.d_newF, self.d_newCR, k0, 1,
                                          p.index_code, self.lower, self.upper, p.bound_mode, NP),
                           NP, threads, s, {"key": 4, "g": 5}),
            PreboundLaunch(self.fn.population_kernel, (self.d_trials, self.d_tfit, *self.fn.data),
                           NP, self.fn.threads, s),
            PreboundLaunch(self.k_select, (self.d_pop, self.d_fit, self.d_trials, self.d_tfit, self.d_F,
                                           self.d_CR, self.d_newF, self.d_newCR, NP, 1, self.d_trace,
                                           self.d_hit, p.target),
                           NP, threads, s, {"g": 9}),
        ]
        self.prebound = all(b.fast for b in self.bound)

    def launch_init(self, key):
        p, s, NP, D = self.params, self.compute, self.popsize, self.dim
        self.k_init[_grid(NP * D) + (s,)](self.d_pop, self.d_F, self.d_CR, key, self.lower, self.upper,
                                          p.F, p.CR)
        self.fn.population_kernel[NP, self.fn.threads, s](self.d_pop, self.d_fit, *self.fn.data)
        self.k_init_stats[_grid(NP) + (s,)](self.d_fit, self.d_trace, self.d_hit, p.target)

    def launch_generation(self, key, g, n):
        if n == self.popsize:
            params, trial, evaluate, select = self.bound
            params.launch(key=key, g=g)
            trial.launch(key=key, g=g)
            evaluate.launch()
            select.launch(g=g)
            return
        # a last, partial generation (budget): the ordinary launches with n trials
        p, s, D, threads = self.params, self.compute, self.dim, self.fn.threads
        self.k_params[_grid(n) + (s,)](self.d_F, self.d_CR, self.d_newF, self.d_newCR, key, g, D,
                                       p.tau1, p.tau2, p.F_lower, p.F_range, n)
        self.k_trial[n, threads, s](self.d_pop, self.d_trials, self.d_newF, self.d_newCR, key, g,
                                    p.index_code, self.lower, self.upper, p.bound_mode, n)
        self.fn.population_kernel[n, self.fn.threads, s](self.d_trials[:n], self.d_tfit[:n], *self.fn.data)
        self.k_select[self.popsize, threads, s](self.d_pop, self.d_fit, self.d_trials, self.d_tfit, self.d_F,
                                                self.d_CR, self.d_newF, self.d_newCR, n, g, self.d_trace,
                                                self.d_hit, p.target)

    def final_population(self, last_generation):
        return self.d_pop, self.d_fit

    def population(self):
        """Host copies of the final population, errors and per-individual (F, CR) of the last run."""
        pop, fit = super().population()
        return pop, fit, self.d_F.copy_to_host(), self.d_CR.copy_to_host()
