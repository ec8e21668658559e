"""``jde/sequential``: jDE on one CPU thread (numba); the reference the GPU jDE is checked against."""

from __future__ import annotations

from functools import cache

import numba
import numpy as np

from ..algorithms.jde import build_jde_ops
from .base import HostLoopImplementation
from .sequential import OneThreadEvaluation


@cache
def build_cpu_jde(dtype):
    ops = build_jde_ops(dtype, "cpu")
    init_value, pick_by, trial_value, new_params = ops.init_value, ops.pick_by, ops.trial_value, ops.new_params
    jit = numba.njit(cache=True, nogil=True)

    @jit
    def init_population(pop, Fs, CRs, key, lower, upper, F0, CR0):
        popsize, dim = pop.shape
        for i in range(popsize):
            Fs[i], CRs[i] = F0, CR0
            for j in range(dim):
                pop[i, j] = init_value(key, i, j, popsize, dim, lower, upper)

    @jit
    def make_trials(pop, trials, Fs, CRs, newF, newCR, key, g, tau1, tau2, F_lower, F_range, scheme,
                    lower, upper, mode, n):
        popsize, dim = pop.shape
        for i in range(n):
            F, CR = new_params(key, g, i, popsize, dim, Fs[i], CRs[i], tau1, tau2, F_lower, F_range)
            newF[i], newCR[i] = F, CR
            r1, r2, r3, jrand = pick_by(scheme, key, g, i, popsize, dim)
            for j in range(dim):
                trials[i, j] = trial_value(key, g, i, j, popsize, dim, jrand, F, CR, pop[i, j],
                                           pop[r1, j], pop[r2, j], pop[r3, j], lower, upper, mode)

    @jit
    def replace(pop, fit, trials, tfit, Fs, CRs, newF, newCR, n):
        for i in range(n):
            if tfit[i] <= fit[i]:  # the winner keeps the parameters that made it
                pop[i, :] = trials[i, :]
                fit[i] = tfit[i]
                Fs[i], CRs[i] = newF[i], newCR[i]
        return fit.min()

    return init_population, make_trials, replace


class JDESequential(OneThreadEvaluation, HostLoopImplementation):
    algorithm = "jde"
    name = "sequential"
    device = "cpu"

    def setup(self):
        T, n = self.dtype, self.popsize
        self.pop = np.empty((n, self.dim), dtype=T)
        self.trials = np.empty_like(self.pop)
        self.fit, self.tfit = np.empty(n, dtype=T), np.empty(n, dtype=T)
        # per-individual parameters stay float64 in every dtype (as the random draws)
        self.Fs, self.CRs, self.newF, self.newCR = (np.empty(n) for _ in range(4))
        self._init, self._make_trials, self._replace = build_cpu_jde(T)
        self.setup_evaluator()

    def initialize(self, key):
        p = self.params
        self._init(self.pop, self.Fs, self.CRs, key, self.lower, self.upper, p.F, p.CR)
        self.evaluate(self.pop, self.fit)
        return self.fit.min()

    def generation(self, key, g, n):
        p = self.params
        self._make_trials(self.pop, self.trials, self.Fs, self.CRs, self.newF, self.newCR, key, g,
                          p.tau1, p.tau2, p.F_lower, p.F_range, p.index_code, self.lower, self.upper,
                          p.bound_mode, n)
        self.evaluate(self.trials[:n], self.tfit[:n])
        return self._replace(self.pop, self.fit, self.trials, self.tfit, self.Fs, self.CRs,
                             self.newF, self.newCR, n)

    def population(self):
        """Copies of the final population, errors and per-individual (F, CR) of the last run."""
        return self.pop.copy(), self.fit.astype(np.float64), self.Fs.copy(), self.CRs.copy()

    def best_vector(self):
        return self.pop[int(np.argmin(self.fit))].copy()
