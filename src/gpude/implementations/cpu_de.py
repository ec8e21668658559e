"""The DE generation on the CPU (numba), shared by sequential, master_slave and naive_gpu.

``make_trials`` builds the trial vectors of a generation, ``replace`` applies the
generational replacement; fitness evaluation is what the three implementations do
differently. All three run every mutation and crossover of :mod:`gpude.algorithms.de`.
"""

from __future__ import annotations

from functools import lru_cache

import numba
import numpy as np

from ..algorithms.de import build_de_ops


@lru_cache(maxsize=None)
def build_cpu_de(dtype):
    ops = build_de_ops(dtype, "cpu")
    init_value, pick, trial_value = ops.init_value, ops.pick, ops.trial_value
    variant_trial_value, best_index = ops.variant_trial_value, ops.best_index
    jit = numba.njit(cache=True, nogil=True)

    @jit
    def init_population(pop, key, lower, upper):
        popsize, dim = pop.shape
        for i in range(popsize):
            for j in range(dim):
                pop[i, j] = init_value(key, i, j, popsize, dim, lower, upper)

    @jit
    def make_trials(pop, fit, trials, key, g, F, CR, lower, upper, mode, n, mutation, crossover):
        popsize, dim = pop.shape
        if mutation == 0 and crossover == 0:  # rand1/bin, the original operator
            for i in range(n):
                r1, r2, r3, jrand = pick(key, g, i, popsize, dim)
                for j in range(dim):
                    trials[i, j] = trial_value(key, g, i, j, popsize, dim, jrand, F, CR, pop[i, j],
                                               pop[r1, j], pop[r2, j], pop[r3, j], lower, upper, mode)
            return
        best = best_index(fit, popsize)  # of the population the generation starts from
        for i in range(n):
            r1, r2, r3, jrand = pick(key, g, i, popsize, dim)
            for j in range(dim):
                trials[i, j] = variant_trial_value(mutation, crossover, key, g, i, j, popsize, dim,
                                                   jrand, F, CR, pop[i, j], pop[best, j], pop[r1, j],
                                                   pop[r2, j], pop[r3, j], lower, upper, mode)

    @jit
    def replace(pop, fit, trials, tfit, n):
        for i in range(n):
            if tfit[i] <= fit[i]:  # "not worse" replaces (the papers' rule)
                pop[i, :] = trials[i, :]
                fit[i] = tfit[i]
        return fit.min()

    return init_population, make_trials, replace


class CPUGenerationMixin:
    """Population buffers and the CPU operators; ``self.evaluate(X, out)`` is the subclass's."""

    variants = "all"  # every mutation and crossover (see gpude.algorithms.de)

    def setup(self):
        T = self.dtype
        self.pop = np.empty((self.popsize, self.dim), dtype=T)
        self.fit = np.empty(self.popsize, dtype=T)
        self.trials = np.empty_like(self.pop)
        self.tfit = np.empty_like(self.fit)
        self._init, self._make_trials, self._replace = build_cpu_de(T)

    def initialize(self, key):
        self._init(self.pop, key, self.lower, self.upper)
        self.evaluate(self.pop, self.fit)
        return self.fit.min()

    def generation(self, key, g, n):
        p = self.params
        self._make_trials(self.pop, self.fit, self.trials, key, g, p.F, p.CR, self.lower, self.upper,
                          p.bound_mode, n, p.mutation_code, p.crossover_code)
        self.evaluate(self.trials[:n], self.tfit[:n])
        return self._replace(self.pop, self.fit, self.trials, self.tfit, n)

    def population(self):
        """Copies of the final population and errors of the last run."""
        return self.pop.copy(), self.fit.astype(np.float64)

    def best_vector(self):
        return self.pop[int(np.argmin(self.fit))].copy()
