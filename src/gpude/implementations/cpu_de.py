"""The DE generation on the CPU (numba), shared by sequential, master_slave and naive_gpu.

``make_trials`` builds the trial vectors of a generation, ``replace`` applies the
generational replacement; fitness evaluation is what the three implementations do
differently. All three run every mutation and crossover of :mod:`gpude.algorithms.de`.
"""

from __future__ import annotations

from functools import cache

import numba
import numpy as np

from ..algorithms.de import EXP, RAND1, build_de_ops


@cache
def build_cpu_de(dtype):
    ops = build_de_ops(dtype, "cpu")
    init_value, pick, counter, uniform = ops.init_value, ops.pick, ops.counter, ops.uniform
    mutant_of, exp_length, best_index = ops.mutant_of, ops.exp_length, ops.best_index
    inside, repaired = ops.inside, ops.repaired
    jit = numba.njit(cache=True, nogil=True)

    @jit
    def init_population(pop, key, lower, upper):
        popsize, dim = pop.shape
        for i in range(popsize):
            for j in range(dim):
                pop[i, j] = init_value(key, i, j, popsize, dim, lower, upper)

    @jit
    def trial_row(pop, trials, key, g, i, best, F, CR, lower, upper, mode, mutation, crossover):
        """Row i of the trials: ``variant_trial_value`` of every coordinate, computed branch-free.

        Every coordinate makes its crossover draw and its resample draw (slots 4 + j and 4 + D + j)
        and computes its mutant; selects keep what ``variant_trial_value`` would return. The same
        decisions and values, but a loop without data-dependent branches, which LLVM vectorises
        (the draws' 64-bit multiplies dominate). The exponential crossover copies coordinate j iff
        its cyclic distance from j_rand is below L (``exp_takes``), so L is drawn once per row.
        """
        popsize, dim = pop.shape
        r1, r2, r3, jrand = pick(key, g, i, popsize, dim)
        c = counter(g, i, 4, popsize, dim)  # slot 4 + j is c + j, slot 4 + D + j is c + D + j
        L = exp_length(key, g, i, popsize, dim, CR) if crossover == EXP else 0
        for j in range(dim):
            xi = pop[i, j]
            v = mutant_of(mutation, F, xi, pop[best, j], pop[r1, j], pop[r2, j], pop[r3, j])
            if crossover == EXP:
                takes = (j - jrand) % dim < L
            else:
                takes = (uniform(key, c + j) < CR) | (j == jrand)
            fixed = repaired(mode, v, xi, lower, upper, uniform(key, c + dim + j))
            w = v if inside(v, lower, upper) else fixed
            trials[i, j] = w if takes else xi

    @jit
    def make_trials(pop, fit, trials, key, g, F, CR, lower, upper, mode, start, stop, mutation,
                    crossover):
        """Trials ``start .. stop - 1`` of generation g (the rows are independent, so a caller may
        build them in chunks)."""
        # x_best of the population the generation starts from (rand1 reads none)
        best = best_index(fit, pop.shape[0]) if mutation != RAND1 else 0
        for i in range(start, stop):
            trial_row(pop, trials, key, g, i, best, F, CR, lower, upper, mode, mutation, crossover)

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
        self.make_trials(key, g, n)
        self.evaluate(self.trials[:n], self.tfit[:n])
        return self.replace(n)

    # the generation's three steps, apart so that benchmarks/master_slave_speed.py can time each

    def make_trials(self, key, g, n):
        """The first ``n`` trial vectors of generation ``g`` (the master's operators)."""
        p = self.params
        self._make_trials(self.pop, self.fit, self.trials, key, g, p.F, p.CR, self.lower, self.upper,
                          p.bound_mode, 0, n, p.mutation_code, p.crossover_code)

    def replace(self, n):
        """Generational replacement of the first ``n`` targets; returns the best error."""
        return self._replace(self.pop, self.fit, self.trials, self.tfit, n)

    def population(self):
        """Copies of the final population and errors of the last run."""
        return self.pop.copy(), self.fit.astype(np.float64)

    def best_vector(self):
        return self.pop[int(np.argmin(self.fit))].copy()
