"""``ss/gpu``: scatter search with the population, reference set, pool and Solis-Wets state on the GPU.

The decisions are ``ss/sequential``'s (same operators, same random counters, same step-major
order and budget rule, :mod:`gpude.algorithms.ss`). Kernels per iteration:

* BLX children: a thread per (child, coordinate); evaluation: the function's ``population_kernel``;
* per Solis-Wets step: "+" candidates (a thread per (child, coordinate)), their evaluation, the
  acceptance (one block, a thread per child; the budget left lives on the device, so a child's
  candidate counts only while it lasts), "-" candidates of every child (evaluated for all; only
  the failed children within the budget count), their acceptance;
* reference-set update: one block, rank by counting over R u pool.

The host syncs once per iteration to read R's best error, the evaluations used and whether a child
entered R; a restart (rare) costs a second sync. Evaluating the "-" candidates of every child
(not only the failed ones) spends GPU time but no budget. On a real GPU ``log``/``cos`` may differ
from the CPU's in the last ulp, so runs can drift from ``sequential``'s; on numba's simulator they
are identical.
"""

from __future__ import annotations

import math
import warnings
from functools import lru_cache

import numpy as np
from numba import cuda
from numba.core.errors import NumbaPerformanceWarning

from ..algorithms.solis_wets import build_sw_ops
from ..algorithms.ss import RHO_FLOOR, build_ss_ops, layout, pair_arrays
from ..functions import gpu
from .base import HostLoopImplementation

THREADS = 128


@lru_cache(maxsize=None)
def build_gpu_ss(dtype):
    T = np.dtype(dtype).type
    ops, sw = build_ss_ops(T, "cuda"), build_sw_ops(T, "cuda")
    init_value, blx_value, sw_counter = ops.init_value, ops.blx_value, ops.sw_counter
    sq_dist, ranks_before = ops.sq_dist, ops.ranks_before
    dif, plus, minus = sw.dif, sw.plus, sw.minus
    bias_plus, bias_minus, bias_fail, counts = sw.bias_plus, sw.bias_minus, sw.bias_fail, sw.counts
    inf = T(np.inf)

    @cuda.jit
    def init_rows(pop, fit, refX, refF, key, g, row0, unit0, units, width, lower, upper):
        """Rows row0.. uniform; with row0 = 1 row 0 is R's best (a restart)."""
        t = cuda.grid(1)
        P, D = pop.shape
        if t < (P - row0) * D:
            i, j = row0 + t // D, t % D
            pop[i, j] = init_value(key, g, unit0 + i, j, units, width, lower, upper)
        if row0 == 1 and t < D:
            pop[0, t] = refX[0, t]
            if t == 0:
                fit[0] = refF[0]

    @cuda.jit
    def fill_inf(a, start):
        t = cuda.grid(1)
        if start <= t < a.shape[0]:
            a[t] = inf

    @cuda.jit
    def build_reference(pop, fit, ref_best, ref_diverse, refX, refF, in_ref, mind):
        tid, bd = cuda.threadIdx.x, cuda.blockDim.x
        m, D = pop.shape
        far = cuda.shared.array(1, np.int64)
        for k in range(tid, m, bd):
            r = ranks_before(fit, m, k)
            in_ref[k] = r < ref_best
            if r < ref_best:
                for j in range(D):
                    refX[r, j] = pop[k, j]
                refF[r] = fit[k]
        cuda.syncthreads()
        for k in range(tid, m, bd):
            if not in_ref[k]:
                d = np.inf
                for r in range(ref_best):
                    d = min(d, sq_dist(pop[k], refX[r]))
                mind[k] = d
        cuda.syncthreads()
        for nr in range(ref_best, ref_best + ref_diverse):
            if tid == 0:
                f = -1
                for k in range(m):
                    if not in_ref[k] and (f < 0 or mind[k] > mind[f]):
                        f = k
                far[0] = f
                in_ref[f] = True
                refF[nr] = fit[f]
            cuda.syncthreads()
            f = far[0]
            for j in range(tid, D, bd):
                refX[nr, j] = pop[f, j]
            cuda.syncthreads()
            for k in range(tid, m, bd):
                if not in_ref[k]:
                    mind[k] = min(mind[k], sq_dist(pop[k], refX[nr]))
            cuda.syncthreads()

    @cuda.jit
    def make_children(refX, children, pa, pb, key, g, lam, units, width, lower, upper):
        t = cuda.grid(1)
        nc, D = children.shape
        if t < nc * D:
            c, j = t // D, t % D
            p = c // 2
            alpha = 0.5 + lam if c % 2 == 0 else 0.5 - lam
            children[c, j] = blx_value(key, g, c, j, units, width, refX[pa[p], j], refX[pb[p], j],
                                       alpha, lower, upper)

    @cuda.jit
    def init_sw(refX, pa, pb, bias, rho, succ, fail, rho_cap, rho_floor):
        c = cuda.grid(1)
        nc, D = bias.shape
        if c < nc:
            p = c // 2
            d = math.sqrt(sq_dist(refX[pa[p]], refX[pb[p]])) / D / 2.0
            rho[c] = max(min(rho_cap, d), rho_floor)
            succ[c] = 0
            fail[c] = 0
            for j in range(D):
                bias[c, j] = 0

    @cuda.jit
    def plus_candidates(children, bias, rho, cand, difs, key, g, s, units, width, lower, upper):
        t = cuda.grid(1)
        nc, D = children.shape
        if t < nc * D:
            c, j = t // D, t % D
            d = dif(key, sw_counter(g, c, s, j, units, width, D), rho[c])
            difs[c, j] = d
            cand[c, j] = plus(children[c, j], bias[c, j], d, lower, upper)

    @cuda.jit
    def accept_plus(children, cfit, bias, rho, succ, fail, cand, cfc, difs, flag, state, m, n):
        c = cuda.threadIdx.x
        nc, D = children.shape
        used = state[0]
        a = max(min(m, n - used), 0)
        better = False
        if c < nc:
            better = c < a and cfc[c] < cfit[c]
            flag[c] = c < a and not better
        cuda.syncthreads()
        if better:
            for j in range(D):
                children[c, j] = cand[c, j]
                bias[c, j] = bias_plus(bias[c, j], difs[c, j])
            cfit[c] = cfc[c]
            succ[c], fail[c], rho[c] = counts(True, succ[c], fail[c], rho[c])
        if c == 0:
            nf = 0
            for k in range(nc):
                if flag[k]:
                    nf += 1
            state[0] = used + a
            state[1] = nf

    @cuda.jit
    def minus_candidates(children, bias, difs, cand, lower, upper):
        t = cuda.grid(1)
        nc, D = children.shape
        if t < nc * D:
            c, j = t // D, t % D
            cand[c, j] = minus(children[c, j], bias[c, j], difs[c, j], lower, upper)

    @cuda.jit
    def accept_minus(children, cfit, bias, rho, succ, fail, cand, cfc, difs, flag, state, n):
        c = cuda.threadIdx.x
        nc, D = children.shape
        used, nf = state[0], state[1]
        q = max(min(nf, n - used), 0)
        cuda.syncthreads()
        if c < nc and flag[c]:
            r = 0
            for k in range(c):
                if flag[k]:
                    r += 1
            if r < q and cfc[c] < cfit[c]:
                for j in range(D):
                    children[c, j] = cand[c, j]
                    bias[c, j] = bias_minus(bias[c, j], difs[c, j])
                cfit[c] = cfc[c]
                succ[c], fail[c], rho[c] = counts(True, succ[c], fail[c], rho[c])
            else:
                for j in range(D):
                    bias[c, j] = bias_fail(bias[c, j])
                succ[c], fail[c], rho[c] = counts(False, succ[c], fail[c], rho[c])
        cuda.syncthreads()
        if c == 0:
            state[0] = used + q

    @cuda.jit
    def update_reference(refX, refF, children, cfit, allE, newX, newF, state):
        tid, bd = cuda.threadIdx.x, cuda.blockDim.x
        nr, D = refX.shape
        nc = cfit.shape[0]
        for k in range(tid, nr + nc, bd):
            allE[k] = refF[k] if k < nr else cfit[k - nr]
        if tid == 0:
            state[2] = 0
        cuda.syncthreads()
        for k in range(tid, nr + nc, bd):
            r = ranks_before(allE, nr + nc, k)
            if r < nr:
                newF[r] = allE[k]
                for j in range(D):
                    newX[r, j] = refX[k, j] if k < nr else children[k - nr, j]
                if k >= nr:
                    state[2] = 1
        cuda.syncthreads()
        for k in range(tid, nr, bd):
            refF[k] = newF[k]
            for j in range(D):
                refX[k, j] = newX[k, j]

    return dict(init_rows=init_rows, fill_inf=fill_inf, build_reference=build_reference,
                make_children=make_children, init_sw=init_sw, plus_candidates=plus_candidates,
                accept_plus=accept_plus, minus_candidates=minus_candidates,
                accept_minus=accept_minus, update_reference=update_reference)


def _blocks(n):
    return max(1, (n + THREADS - 1) // THREADS)


class SSGPU(HostLoopImplementation):
    """Scatter search with Solis-Wets improvement, state on the GPU."""

    algorithm = "ss"
    name = "gpu"
    device = "gpu"

    def evaluations_per_generation(self) -> int:
        return self.params.evaluations_per_iteration()

    def setup(self):
        p, T, D = self.params, self.dtype, self.dim
        P, nr, nc = p.popsize, p.ref_size, p.n_children
        self.k = build_gpu_ss(T)
        self._fn = gpu.compile_function(self.function.program, T)
        self.units, self.width = layout(p, D)
        pa, pb = pair_arrays(nr)
        self.pa, self.pb = cuda.to_device(pa), cuda.to_device(pb)
        dev = cuda.device_array
        self.pop, self.fit = dev((P, D), T), dev(P, T)
        self.in_ref, self.mind = dev(P, np.bool_), dev(P, np.float64)
        self.refX, self.refF = dev((nr, D), T), dev(nr, T)
        self.newX, self.newF, self.allE = dev((nr, D), T), dev(nr, T), dev(nr + nc, T)
        self.children, self.cfit = dev((nc, D), T), dev(nc, T)
        self.bias, self.difs = dev((nc, D), T), dev((nc, D), T)
        self.rho = dev(nc, np.float64)
        self.succ, self.fail = dev(nc, np.int64), dev(nc, np.int64)
        self.cand, self.cfc = dev((nc, D), T), dev(nc, T)
        self.flag = dev(nc, np.bool_)
        self.state = dev(3, np.int64)
        self.block = max(32, 1 << (max(P, nr + nc) - 1).bit_length())
        self.block = min(self.block, 1024)
        if nc > 1024:
            from ..errors import InvalidInputError

            raise InvalidInputError(f"ss/gpu runs at most 1024 children (a block), got {nc}")
        self.restarts = 0

    def _evaluate(self, X, out):
        if X.shape[0] > 0:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", NumbaPerformanceWarning)
                self._fn.population_kernel[X.shape[0], self._fn.threads](X, out, *self._fn.data)

    def _build_reference(self):
        p = self.params
        self.k["build_reference"][1, self.block](self.pop, self.fit, p.ref_best, p.ref_diverse,
                                                 self.refX, self.refF, self.in_ref, self.mind)

    def _launch(self, name, n, *args):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NumbaPerformanceWarning)
            self.k[name][_blocks(n), THREADS](*args)

    def initialize(self, key):
        P, D = self.pop.shape
        self._launch("init_rows", P * D, self.pop, self.fit, self.refX, self.refF, key, 0, 0, 0,
                     self.units, self.width, self.lower, self.upper)
        self._evaluate(self.pop, self.fit)
        self._build_reference()
        return float(self.refF.copy_to_host().min())

    def generation(self, key, g, n):
        k, p = self.k, self.params
        lo, hi, U, W = self.lower, self.upper, self.units, self.width
        nc, D = p.n_children, self.dim
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NumbaPerformanceWarning)
            self._launch("make_children", nc * D, self.refX, self.children, self.pa, self.pb, key,
                         g, p.lam, U, W, lo, hi)
            m = min(nc, n)
            self._evaluate(self.children[:m], self.cfit[:m])
            self._launch("fill_inf", nc, self.cfit, m)
            self.state.copy_to_device(np.array([m, 0, 0], np.int64))
            self._launch("init_sw", nc, self.refX, self.pa, self.pb, self.bias, self.rho, self.succ,
                         self.fail, p.rho_max * (hi - lo), RHO_FLOOR * (hi - lo))
            for s in range(p.ls_steps if n > m else 0):
                self._launch("plus_candidates", nc * D, self.children, self.bias, self.rho,
                             self.cand, self.difs, key, g, s, U, W, lo, hi)
                self._evaluate(self.cand[:m], self.cfc[:m])
                k["accept_plus"][1, self.block](self.children, self.cfit, self.bias, self.rho,
                                                self.succ, self.fail, self.cand, self.cfc,
                                                self.difs, self.flag, self.state, m, n)
                self._launch("minus_candidates", nc * D, self.children, self.bias, self.difs,
                             self.cand, lo, hi)
                self._evaluate(self.cand[:m], self.cfc[:m])
                k["accept_minus"][1, self.block](self.children, self.cfit, self.bias, self.rho,
                                                 self.succ, self.fail, self.cand, self.cfc,
                                                 self.difs, self.flag, self.state, n)
            k["update_reference"][1, self.block](self.refX, self.refF, self.children, self.cfit,
                                                 self.allE, self.newX, self.newF, self.state)
            used, _, entered = (int(v) for v in self.state.copy_to_host())  # the iteration's sync
            best = float(self.refF.copy_to_host().min())
            if not entered and used < n:
                q = min(p.popsize - 1, n - used)
                P = p.popsize
                self._launch("init_rows", P * D, self.pop, self.fit, self.refX, self.refF, key, g,
                             1, nc, U, W, lo, hi)
                self._evaluate(self.pop[1:1 + q], self.fit[1:1 + q])
                self._launch("fill_inf", P, self.fit, 1 + q)
                self._build_reference()
                used += q
                self.restarts += 1
                best = float(self.refF.copy_to_host().min())
        return best, used

    def population(self):
        return self.refX.copy_to_host(), self.refF.copy_to_host().astype(np.float64)

    def best_vector(self):
        X, F = self.population()
        return X[int(np.argmin(F))].copy()
