"""``ss/sequential``: scatter search on one CPU thread (numba); the reference of ``ss/gpu``.

The algorithm, its choices and its random-number layout are :mod:`gpude.algorithms.ss`'s; the
Solis-Wets operators :mod:`gpude.algorithms.solis_wets`'s. The host loop runs an iteration per
"generation"; an iteration returns ``(best, evaluations used)`` and never uses more than the
budget it is given.
"""

from __future__ import annotations

from functools import cache

import numba
import numpy as np

from ..algorithms.solis_wets import build_sw_ops
from ..algorithms.ss import RHO_FLOOR, build_ss_ops, layout, pair_arrays
from .base import HostLoopImplementation
from .sequential import OneThreadEvaluation


@cache
def build_cpu_ss(dtype):
    """The numba kernels of one iteration's parts (see :class:`SSSequential`)."""
    ops, sw = build_ss_ops(dtype, "cpu"), build_sw_ops(dtype, "cpu")
    init_value, blx_value, sw_counter = ops.init_value, ops.blx_value, ops.sw_counter
    sq_dist, ranks_before = ops.sq_dist, ops.ranks_before
    dif, plus, minus = sw.dif, sw.plus, sw.minus
    bias_plus, bias_minus, bias_fail, counts = sw.bias_plus, sw.bias_minus, sw.bias_fail, sw.counts
    jit = numba.njit(cache=True, nogil=True)

    @jit
    def init_rows(pop, key, g, row0, unit0, units, width, lower, upper):
        """Rows row0.. of ``pop`` uniform in the box; row i uses unit ``unit0 + i``."""
        for i in range(row0, pop.shape[0]):
            for j in range(pop.shape[1]):
                pop[i, j] = init_value(key, g, unit0 + i, j, units, width, lower, upper)

    @jit
    def build_reference(pop, fit, ref_best, ref_diverse, refX, refF, in_ref, mind):
        """R from ``pop``: the ref_best best by (error, index) in rank order, then ref_diverse
        times the non-member farthest from R (min squared distance; the lowest index on ties)."""
        m = pop.shape[0]
        for k in range(m):
            r = ranks_before(fit, m, k)
            in_ref[k] = r < ref_best
            if r < ref_best:
                refX[r, :] = pop[k, :]
                refF[r] = fit[k]
        for k in range(m):
            if not in_ref[k]:
                d = np.inf
                for r in range(ref_best):
                    d = min(d, sq_dist(pop[k], refX[r]))
                mind[k] = d
        nr = ref_best
        for _ in range(ref_diverse):
            far = -1
            for k in range(m):
                if not in_ref[k] and (far < 0 or mind[k] > mind[far]):
                    far = k
            refX[nr, :] = pop[far, :]
            refF[nr] = fit[far]
            in_ref[far] = True
            for k in range(m):
                if not in_ref[k]:
                    mind[k] = min(mind[k], sq_dist(pop[k], refX[nr]))
            nr += 1

    @jit
    def make_children(refX, children, pa, pb, key, g, lam, units, width, lower, upper):
        dim = refX.shape[1]
        for c in range(children.shape[0]):
            p = c // 2
            alpha = 0.5 + lam if c % 2 == 0 else 0.5 - lam
            for j in range(dim):
                children[c, j] = blx_value(key, g, c, j, units, width, refX[pa[p], j],
                                           refX[pb[p], j], alpha, lower, upper)

    @jit
    def init_sw(refX, pa, pb, bias, rho, succ, fail, rho_cap, rho_floor):
        dim = refX.shape[1]
        for c in range(bias.shape[0]):
            p = c // 2
            d = np.sqrt(sq_dist(refX[pa[p]], refX[pb[p]])) / dim / 2.0
            rho[c] = max(min(rho_cap, d), rho_floor)
            succ[c] = 0
            fail[c] = 0
            bias[c, :] = 0

    @jit
    def plus_candidates(children, bias, rho, cand, difs, key, g, s, m, units, width, lower, upper):
        dim = children.shape[1]
        for c in range(m):
            for j in range(dim):
                d = dif(key, sw_counter(g, c, s, j, units, width, dim), rho[c])
                difs[c, j] = d
                cand[c, j] = plus(children[c, j], bias[c, j], d, lower, upper)

    @jit
    def accept_plus(children, cfit, bias, rho, succ, fail, cand, cfc, difs, m, failed):
        nf = 0
        for c in range(m):
            if cfc[c] < cfit[c]:
                children[c, :] = cand[c, :]
                cfit[c] = cfc[c]
                for j in range(children.shape[1]):
                    bias[c, j] = bias_plus(bias[c, j], difs[c, j])
                succ[c], fail[c], rho[c] = counts(True, succ[c], fail[c], rho[c])
            else:
                failed[nf] = c
                nf += 1
        return nf

    @jit
    def minus_candidates(children, bias, difs, failed, q, cand, lower, upper):
        for r in range(q):
            c = failed[r]
            for j in range(children.shape[1]):
                cand[r, j] = minus(children[c, j], bias[c, j], difs[c, j], lower, upper)

    @jit
    def accept_minus(children, cfit, bias, rho, succ, fail, cand, cfc, difs, failed, nf, q):
        for r in range(nf):
            c = failed[r]
            if r < q and cfc[r] < cfit[c]:
                children[c, :] = cand[r, :]
                cfit[c] = cfc[r]
                for j in range(children.shape[1]):
                    bias[c, j] = bias_minus(bias[c, j], difs[c, j])
                succ[c], fail[c], rho[c] = counts(True, succ[c], fail[c], rho[c])
            else:
                for j in range(children.shape[1]):
                    bias[c, j] = bias_fail(bias[c, j])
                succ[c], fail[c], rho[c] = counts(False, succ[c], fail[c], rho[c])

    @jit
    def update_reference(refX, refF, children, cfit, allE, newX):
        """R <- the best |R| of R u pool by (error, index), R first; whether a child entered."""
        nr, nc = refF.shape[0], cfit.shape[0]
        for k in range(nr):
            allE[k] = refF[k]
        for k in range(nc):
            allE[nr + k] = cfit[k]
        entered = False
        for k in range(nr + nc):
            r = ranks_before(allE, nr + nc, k)
            if r < nr:
                if k < nr:
                    newX[r, :] = refX[k, :]
                else:
                    newX[r, :] = children[k - nr, :]
                    entered = True
        for k in range(nr + nc):
            r = ranks_before(allE, nr + nc, k)
            if r < nr:
                refF[r] = allE[k]
        refX[:, :] = newX[:, :]
        return entered

    return dict(init_rows=init_rows, build_reference=build_reference, make_children=make_children,
                init_sw=init_sw, plus_candidates=plus_candidates, accept_plus=accept_plus,
                minus_candidates=minus_candidates, accept_minus=accept_minus,
                update_reference=update_reference)


class SSSequential(OneThreadEvaluation, HostLoopImplementation):
    """Scatter search with Solis-Wets improvement, one CPU thread."""

    algorithm = "ss"
    name = "sequential"
    device = "cpu"

    def evaluations_per_generation(self) -> int:
        return self.params.evaluations_per_iteration()

    def setup(self):
        p, T, D = self.params, self.dtype, self.dim
        P, nr, nc = p.popsize, p.ref_size, p.n_children
        self.k = build_cpu_ss(T)
        self.units, self.width = layout(p, D)
        self.pa, self.pb = pair_arrays(nr)
        self.pop, self.fit = np.empty((P, D), T), np.empty(P, T)
        self.in_ref, self.mind = np.empty(P, np.bool_), np.empty(P, np.float64)
        self.refX, self.refF = np.empty((nr, D), T), np.empty(nr, T)
        self.newX, self.allE = np.empty((nr, D), T), np.empty(nr + nc, T)
        self.children, self.cfit = np.empty((nc, D), T), np.empty(nc, T)
        self.bias, self.difs = np.zeros((nc, D), T), np.zeros((nc, D), T)
        self.rho = np.empty(nc, np.float64)
        self.succ, self.fail = np.zeros(nc, np.int64), np.zeros(nc, np.int64)
        self.cand, self.cfc = np.empty((nc, D), T), np.empty(nc, T)
        self.failed = np.empty(nc, np.int64)
        self.restarts = 0
        self.setup_evaluator()

    def _build_reference(self):
        p = self.params
        self.k["build_reference"](self.pop, self.fit, p.ref_best, p.ref_diverse, self.refX,
                                  self.refF, self.in_ref, self.mind)

    def initialize(self, key):
        k = self.k
        k["init_rows"](self.pop, key, 0, 0, 0, self.units, self.width, self.lower, self.upper)
        self.evaluate(self.pop, self.fit)
        self._build_reference()
        return float(self.refF.min())

    def generation(self, key, g, n):
        k, p = self.k, self.params
        lo, hi = self.lower, self.upper
        U, W = self.units, self.width
        nc = p.n_children
        # 1. combination
        k["make_children"](self.refX, self.children, self.pa, self.pb, key, g, p.lam, U, W, lo, hi)
        m = min(nc, n)
        self.evaluate(self.children[:m], self.cfit[:m])
        self.cfit[m:] = np.inf
        used = m
        # 2. improvement: Solis-Wets, step-major
        k["init_sw"](self.refX, self.pa, self.pb, self.bias, self.rho, self.succ, self.fail,
                     p.rho_max * (hi - lo), RHO_FLOOR * (hi - lo))
        for s in range(p.ls_steps):
            if used >= n:
                break
            a = min(m, n - used)
            k["plus_candidates"](self.children, self.bias, self.rho, self.cand, self.difs, key, g, s,
                                 a, U, W, lo, hi)
            self.evaluate(self.cand[:a], self.cfc[:a])
            used += a
            nf = k["accept_plus"](self.children, self.cfit, self.bias, self.rho, self.succ,
                                  self.fail, self.cand, self.cfc, self.difs, a, self.failed)
            q = min(nf, n - used)
            k["minus_candidates"](self.children, self.bias, self.difs, self.failed, q, self.cand,
                                  lo, hi)
            self.evaluate(self.cand[:q], self.cfc[:q])
            used += q
            k["accept_minus"](self.children, self.cfit, self.bias, self.rho, self.succ, self.fail,
                              self.cand, self.cfc, self.difs, self.failed, nf, q)
        # 3. reference set update
        entered = k["update_reference"](self.refX, self.refF, self.children, self.cfit, self.allE,
                                        self.newX)
        # 4. restart of a stalled reference set
        if not entered and used < n:
            q = min(p.popsize - 1, n - used)
            self.pop[0, :] = self.refX[0, :]
            self.fit[0] = self.refF[0]
            k["init_rows"](self.pop, key, g, 1, nc, U, W, lo, hi)
            self.evaluate(self.pop[1:1 + q], self.fit[1:1 + q])
            self.fit[1 + q:] = np.inf
            used += q
            self._build_reference()
            self.restarts += 1
        return float(self.refF.min()), used

    def population(self):
        """Copies of the final reference set and its errors (float64)."""
        return self.refX.copy(), self.refF.astype(np.float64)

    def best_vector(self):
        return self.refX[int(np.argmin(self.refF))].copy()
