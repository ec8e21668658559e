"""``masw/sequential``: MA-SW-Chains on one CPU thread (numba); the reference of ``masw/gpu``.

The algorithm, its choices and its random-number layout are :mod:`gpude.algorithms.masw`'s; the
Solis-Wets operators :mod:`gpude.algorithms.solis_wets`'s. A "generation" of the run loop is one
cycle (the GA phase, then one Solis-Wets application). Loops over D are numba; the decisions
between them (replacement, the choice of the individual, accepting a step) are a few scalar
comparisons on the host, the same code :mod:`gpude.implementations.masw_gpu` runs.

``profile=True`` times each module of the run (:mod:`gpude.implementations.masw_profile`: fitness
evaluation, random numbers, crossover, distances, ...) into ``module_s``; the same run bit for bit.
"""

from __future__ import annotations

from functools import cache

import numba
import numpy as np

from ..algorithms.masw import build_masw_ops, first_unit, ls_choice, replacement, width
from ..algorithms.solis_wets import build_sw_ops
from .base import HostLoopImplementation
from .masw_nam import build_nam
from .masw_profile import ModuleClock, profiled_cpu_kernels

HEADER = 64


@cache
def build_cpu_masw(dtype):
    """The numba loops over D (see :class:`MASWSequential`)."""
    ops, sw = build_masw_ops(dtype, "cpu"), build_sw_ops(dtype, "cpu")
    init_column, blx, mutation, clip, ctr = ops.init_column, ops.blx, ops.mutation, ops.clip, ops.ctr
    dif, plus, minus = sw.dif, sw.plus, sw.minus
    sq_dist, nam_parents = build_nam(dtype)
    bias_plus, bias_minus, bias_fail = sw.bias_plus, sw.bias_minus, sw.bias_fail
    jit = numba.njit(cache=True, nogil=True)

    @jit
    def init_population(pop, key, strata, W, lower, upper):
        P, D = pop.shape
        perm = np.empty(P, np.int64)
        col = np.empty(P, pop.dtype)
        for j in range(D):
            init_column(key, j, P, strata, W, lower, upper, perm, col)
            for i in range(P):
                pop[i, j] = col[i]

    @jit
    def make_children(pop, children, k, key, unit0, W, nam, alpha, prob, lower, upper, parents):
        """Children 0..k-1 from units unit0..: NAM parents (into ``parents``), BLX, BGA."""
        D = pop.shape[1]
        nam_parents(pop, k, key, unit0, W, nam, parents)
        for c in range(k):
            unit = unit0 + c
            mother, father = parents[c, 0], parents[c, 1]
            for j in range(D):
                children[c, j] = blx(key, unit, W, j, pop[mother, j], pop[father, j], alpha, lower, upper)
            gene, delta = mutation(key, unit, W, D, prob, lower, upper)
            if gene >= 0:
                children[c, gene] = clip(children[c, gene] + delta, lower, upper)

    @jit
    def nearest_distance(pop, p):
        best = np.inf
        for q in range(pop.shape[0]):
            if q != p:
                best = min(best, sq_dist(pop[p], pop[q]))
        return np.sqrt(best)

    @jit
    def plus_candidate(x, b, d, cand, key, unit, W, rho, lower, upper):
        for j in range(x.shape[0]):
            dj = dif(key, ctr(unit, HEADER + 2 * j, W), rho)
            d[j] = dj
            cand[j] = plus(x[j], b[j], dj, lower, upper)

    @jit
    def minus_candidate(x, b, d, cand, lower, upper):
        for j in range(x.shape[0]):
            cand[j] = minus(x[j], b[j], d[j], lower, upper)

    @jit
    def finish_step(x, b, d, cand, outcome):
        """outcome +1: x <- cand (the '+' candidate), -1: x <- cand (the '-' one), 0: failure."""
        for j in range(x.shape[0]):
            if outcome > 0:
                b[j] = bias_plus(b[j], d[j])
                x[j] = cand[j]
            elif outcome < 0:
                b[j] = bias_minus(b[j], d[j])
                x[j] = cand[j]
            else:
                b[j] = bias_fail(b[j])

    return dict(init_population=init_population, make_children=make_children,
                nearest_distance=nearest_distance, plus_candidate=plus_candidate,
                minus_candidate=minus_candidate, finish_step=finish_step, counts=sw.counts,
                below=ops.below, ctr=ctr)


class MASWSequential(HostLoopImplementation):
    """MA-SW-Chains, one CPU thread.

    Options
    -------
    profile : bool
        Time each module of a run (:mod:`gpude.implementations.masw_profile`): after a run the
        runner's ``module_s`` and the result's ``info["module_s"]`` hold the seconds per module.
        The same run bit for bit (a row's ``params`` say ``"profile": true``: its time is a profiled
        run's); default False (then nothing is timed).
    """

    needs_program = False  # the problem's evaluators (large-scale functions have no program)
    algorithm = "masw"
    name = "sequential"
    device = "cpu"

    def __init__(self, function, params, profile: bool = False, **options):
        super().__init__(function, params, **options)
        self.profile = bool(profile)
        self.module_s = None

    def evaluations_per_generation(self) -> int:
        return self.params.cycle_evals

    def warmup_evaluations(self) -> int:
        """Into the first local search (its '+' and '-' candidates), so every kernel is compiled."""
        p = self.params
        return p.popsize + p.ssga_evals + min(p.ls_intensity, 4)

    def setup(self):
        p, T, D, P = self.params, self.dtype, self.dim, self.params.popsize
        self.k = build_cpu_masw(T)
        self.W = width(D)
        self.pop, self.fit = np.empty((P, D), T), np.empty(P)
        self.children, self.cfit = np.empty((p.offspring, D), T), np.empty(p.offspring)
        self.parents = np.empty((p.offspring, 2), np.int64)
        self.bias = np.zeros((P, D), T)
        self.rho = np.zeros(P)
        self.succ, self.fail = np.zeros(P, np.int64), np.zeros(P, np.int64)
        self.has_chain, self.non_improved = np.zeros(P, np.bool_), np.zeros(P, np.bool_)
        self.x_ls, self.cand, self.dif = np.empty(D, T), np.empty(D, T), np.empty(D, T)
        self.one = np.empty(1)
        self._evaluate = self.function.cpu_evaluator(T)
        self.ls_applications = self.ls_improved = 0
        if self.profile:  # the same calls, each charged to its module (the shared kernels stay as built)
            self.clock = ModuleClock()
            self.k = profiled_cpu_kernels(self.k, self.clock, T, p.offspring, D)
            self._evaluate = self.clock.timed("fitness_evaluation", self._evaluate)
            self.replace = self.clock.timed("replacement", type(self).replace.__get__(self))
            self.keep = self.clock.timed("solis_wets", type(self).keep.__get__(self))

    def run(self, seed: int):
        result = super().run(seed)
        if self.profile:
            self.module_s = dict(self.clock.seconds)
            result.info["module_s"] = dict(self.module_s)
            result.info["options"] = {"profile": True}  # a row's params say its time is a profiled run's
        return result

    def evaluate(self, X, out):
        self._evaluate(X, out)

    def initialize(self, key):
        p = self.params
        self.k["init_population"](self.pop, key, p.strata, self.W, self.lower, self.upper)
        self.evaluate(self.pop, self.fit)
        self.unit = first_unit(p.popsize)
        return float(self.fit.min())

    # -- the GA phase ------------------------------------------------------------------------
    def replace(self, k):
        for slot, c in replacement(self.fit, self.cfit[:k]):
            self.pop[slot] = self.children[c]
            self.fit[slot] = self.cfit[c]
            self.has_chain[slot] = self.non_improved[slot] = False

    def ga_step(self, key, k):
        p = self.params
        self.k["make_children"](self.pop, self.children, k, key, self.unit, self.W, p.nam, p.alpha,
                                p.mutation_prob, self.lower, self.upper, self.parents)
        self.unit += k
        self.evaluate(self.children[:k], self.cfit[:k])
        self.replace(k)

    # -- the local search phase ----------------------------------------------------------------
    def choose(self, key, unit):
        i = ls_choice(self.fit, self.non_improved)
        return int(self.k["below"](key, self.k["ctr"](unit, 0, self.W), self.params.popsize)) if i < 0 else i

    def new_chain(self, i):
        d = self.k["nearest_distance"](self.pop, i) / self.dim
        self.rho[i] = min(self.params.rho_max, d / 2.0)
        self.bias[i] = 0
        self.succ[i] = self.fail[i] = 0

    def local_search(self, key, budget):
        p, k = self.params, self.k
        unit = self.unit
        self.unit += 1 + p.ls_intensity
        i = self.choose(key, unit)
        if not self.has_chain[i]:
            self.new_chain(i)
        x, b, d, cand = self.x_ls, self.bias[i], self.dif, self.cand
        x[:] = self.pop[i]
        f, rho, succ, fail = float(self.fit[i]), float(self.rho[i]), int(self.succ[i]), int(self.fail[i])
        used, t, lo, hi = 0, 0, self.lower, self.upper
        while used < budget:
            k["plus_candidate"](x, b, d, cand, key, unit + 1 + t, self.W, rho, lo, hi)
            fc = self.f_one(cand)
            used += 1
            outcome = 1 if fc < f else 0
            if not outcome and used < budget:
                k["minus_candidate"](x, b, d, cand, lo, hi)
                fc = self.f_one(cand)
                used += 1
                outcome = -1 if fc < f else 0
            if outcome:
                f = fc
            k["finish_step"](x, b, d, cand, outcome)
            succ, fail, rho = k["counts"](outcome != 0, succ, fail, rho)
            t += 1
        self.keep(i, x, f, rho, succ, fail)
        return used

    def keep(self, i, x, f, rho, succ, fail):
        """Realea: a result better by ``improvement`` replaces the individual and keeps its chain."""
        self.ls_applications += 1
        if f < self.fit[i] and self.fit[i] - f >= self.params.improvement:
            self.pop[i] = x
            self.fit[i] = f
            self.rho[i], self.succ[i], self.fail[i] = rho, succ, fail
            self.has_chain[i], self.non_improved[i] = True, False
            self.ls_improved += 1
        else:
            self.has_chain[i], self.non_improved[i] = False, True

    def f_one(self, v):
        self.evaluate(v[np.newaxis, :], self.one)
        return float(self.one[0])

    def generation(self, key, g, n):
        p = self.params
        ga = min(p.ssga_evals, n)
        used = 0
        while used < ga:
            k = min(p.offspring, ga - used)
            self.ga_step(key, k)
            used += k
        if n - used > 0:
            used += self.local_search(key, min(p.ls_intensity, n - used))
        return float(self.fit.min()), used

    def population(self):
        """Copies of the final population and its errors (float64)."""
        return self.pop.copy(), self.fit.copy()

    def best_vector(self):
        return self.pop[int(np.argmin(self.fit))].copy()
