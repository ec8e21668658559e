"""``ss/gpu``: scatter search with the population, reference set, pool and Solis-Wets state on the GPU.

The decisions are ``ss/sequential``'s (same operators, same random counters, same step-major
order and budget rule, :mod:`gpude.algorithms.ss`).

**Trials per launch.** Every array carries a trial axis first (B trials of a batch), and
``run_batch(seeds)`` advances them together: each launch below covers all trials of the batch
(``blockIdx.y`` = trial for the element-wise kernels and the evaluation, ``blockIdx.x`` = trial for
the one-block kernels), each trial with its own key (``d_keys``), state and budget. The host
writes each trial's budget for the iteration (``nbud[b]``: the most evaluations it may use, 0 for
a trial that has stopped) before the iteration; every kernel of a trial with budget 0 returns at
once, and a per-trial row count (``limit[b]``, written on the device by the kernel that precedes
each evaluation) says which rows the evaluation kernel evaluates. So each trial of a batch makes
exactly the run it makes alone, and ``run(seed)`` is a batch of one. Kernels per iteration:

* BLX children: a thread per (child, coordinate); evaluation of the first min(children, budget);
* per Solis-Wets step: "+" candidates of the children within the budget (a thread per (child,
  coordinate)), their evaluation, the acceptance (a block per trial, a thread per child; the
  evaluations used live on the device, so a child's candidate counts only while the budget lasts;
  it also counts the "-" tries the budget allows), "-" candidates up to the last child whose "-"
  try counts, their evaluation, their acceptance;
* reference-set update: a block per trial, rank by counting over R u pool;
* restart (launched every iteration; a trial restarts when no child entered R and budget is left,
  decided on the device): the fresh rows, their evaluation, the rebuild of R (a block per trial).

The host syncs once per iteration: two asynchronous copies (each trial's evaluations used and
restart flag; R's errors) and one ``synchronize``. The launches are bound once per batch shape
(:class:`~gpude.core.prebound.PreboundLaunch`), so an iteration's host cost does not
grow with B.

**Time.** The batch's loop is :class:`~gpude.implementations.batched.HostSteppedBatch`'s: stopping
is decided on the host after each iteration's sync (a trial stops at its target, or when its budget
is spent: each trial spends its own number of evaluations per iteration), the wall-clock budget is
checked before each iteration, and a trial's time is its charge of the batch's
(:mod:`gpude.implementations.batched`: a fair share until the sync where the host sees it stop, or
under ``max_time_s`` the time it ran). The trace's ``time_s`` is the host's clock at each
iteration's sync.

A batch keeps the GPU busier than a lone trial, up to the point where the GPU, not the launches,
sets the pace (docs/algorithms.md gives the FEs bought per trial in a batch, per device). Batches
and lone runs make the same runs, bit for bit.

Evaluating the "-" candidates of every child up to the last counted one (not only the failed
ones) spends GPU time but no budget. On a real GPU ``log``/``cos`` may differ from the CPU's in the
last ulp, so runs can drift from ``sequential``'s; on numba's simulator they are identical.
"""

from __future__ import annotations

import dataclasses
import math
from functools import cache
from types import SimpleNamespace

import numpy as np
from numba import cuda

from ..algorithms.solis_wets import build_sw_ops
from ..algorithms.ss import RHO_FLOOR, build_ss_ops, layout, pair_arrays
from ..core.errors import InvalidInputError, require_positive_int
from ..core.prebound import PreboundLaunch
from ..functions import gpu
from .batched import HostSteppedBatch


@cache
def build_gpu_ss(dtype):
    """The kernels of one iteration. Arrays are (B, ...); ``nbud`` (B,) is each trial's budget for
    the iteration (0: stopped), ``state`` (B, 4) its (evaluations used in the iteration, children whose
    "+" try failed in the step, a child entered R, restarted), ``limit`` (B,) the rows the next
    evaluation covers."""
    T = np.dtype(dtype).type
    ops, sw = build_ss_ops(T, "cuda"), build_sw_ops(T, "cuda")
    init_value, blx_value, sw_counter = ops.init_value, ops.blx_value, ops.sw_counter
    sq_dist, ranks_before = ops.sq_dist, ops.ranks_before
    dif, plus, minus = sw.dif, sw.plus, sw.minus
    bias_plus, bias_minus, bias_fail, counts = sw.bias_plus, sw.bias_minus, sw.bias_fail, sw.counts
    inf = T(np.inf)

    @cuda.jit(cache=True)
    def new_rows(pop, fit, refX, refF, keys, g, row0, unit0, units, width, lower, upper, nbud,
                 state, limit):
        """Rows row0.. uniform. row0 = 0: every trial's initial population (all rows evaluated).
        row0 = 1: a restart, in the trials whose iteration left budget and let no child into R:
        row 0 is R's best, rows 1..q are evaluated (q = min(P - 1, budget left)), the rest +inf."""
        b = cuda.blockIdx.y
        t = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        _, P, D = pop.shape
        rows = P
        if row0 == 1:
            n, used = nbud[b], state[b, 0]
            rows = 0
            if n > 0 and state[b, 2] == 0 and used < n:
                rows = 1 + min(P - 1, n - used)
        if t == 0:
            limit[b] = rows
        if rows == 0:
            return
        if t < (P - row0) * D:
            i, j = row0 + t // D, t % D
            pop[b, i, j] = init_value(keys[b], g, unit0 + i, j, units, width, lower, upper)
        if rows <= t < P:
            fit[b, t] = inf
        if row0 == 1 and t < D:
            pop[b, 0, t] = refX[b, 0, t]
            if t == 0:
                fit[b, 0] = refF[b, 0]

    @cuda.jit(cache=True)
    def build_reference(pop, fit, ref_best, ref_diverse, refX, refF, in_ref, mind, row0, state,
                        limit):
        """A block per trial: R from the population (trials with ``limit[b]`` = 0 keep theirs);
        after a restart (row0 = 1) the evaluations it used go into ``state``."""
        b = cuda.blockIdx.x
        if limit[b] == 0:
            return
        tid, bd = cuda.threadIdx.x, cuda.blockDim.x
        _, m, D = pop.shape
        far = cuda.shared.array(1, np.int64)
        for k in range(tid, m, bd):
            r = ranks_before(fit[b], m, k)
            in_ref[b, k] = r < ref_best
            if r < ref_best:
                for j in range(D):
                    refX[b, r, j] = pop[b, k, j]
                refF[b, r] = fit[b, k]
        cuda.syncthreads()
        for k in range(tid, m, bd):
            if not in_ref[b, k]:
                d = np.inf
                for r in range(ref_best):
                    d = min(d, sq_dist(pop[b, k], refX[b, r]))
                mind[b, k] = d
        cuda.syncthreads()
        for nr in range(ref_best, ref_best + ref_diverse):
            if tid == 0:
                f = -1
                for k in range(m):
                    if not in_ref[b, k] and (f < 0 or mind[b, k] > mind[b, f]):
                        f = k
                far[0] = f
                in_ref[b, f] = True
                refF[b, nr] = fit[b, f]
            cuda.syncthreads()
            f = far[0]
            for j in range(tid, D, bd):
                refX[b, nr, j] = pop[b, f, j]
            cuda.syncthreads()
            for k in range(tid, m, bd):
                if not in_ref[b, k]:
                    mind[b, k] = min(mind[b, k], sq_dist(pop[b, k], refX[b, nr]))
            cuda.syncthreads()
        if row0 == 1 and tid == 0:
            state[b, 0] += limit[b] - 1
            state[b, 3] = 1

    @cuda.jit(cache=True)
    def make_children(refX, children, cfit, pa, pb, keys, g, lam, units, width, lower, upper,
                      nbud, limit):
        """All children; the first m = min(children, budget) are evaluated, the rest get +inf."""
        b = cuda.blockIdx.y
        t = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        _, nc, D = children.shape
        m = min(nc, nbud[b])
        if t == 0:
            limit[b] = m
        if m == 0:
            return
        if t < nc * D:
            c, j = t // D, t % D
            p = c // 2
            alpha = 0.5 + lam if c % 2 == 0 else 0.5 - lam
            children[b, c, j] = blx_value(keys[b], g, c, j, units, width, refX[b, pa[p], j],
                                          refX[b, pb[p], j], alpha, lower, upper)
        if m <= t < nc:
            cfit[b, t] = inf

    @cuda.jit(cache=True)
    def init_sw(refX, pa, pb, bias, rho, succ, fail, rho_cap, rho_floor, nbud, state):
        b = cuda.blockIdx.y
        c = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        _, nc, D = bias.shape
        n = nbud[b]
        if n == 0:
            return
        if c < nc:
            p = c // 2
            d = math.sqrt(sq_dist(refX[b, pa[p]], refX[b, pb[p]])) / D / 2.0
            rho[b, c] = max(min(rho_cap, d), rho_floor)
            succ[b, c] = 0
            fail[b, c] = 0
            for j in range(D):
                bias[b, c, j] = 0
            if c == 0:
                state[b, 0] = min(nc, n)  # the children's evaluations
                state[b, 1] = 0
                state[b, 2] = 0
                state[b, 3] = 0

    @cuda.jit(cache=True)
    def plus_candidates(children, bias, rho, cand, difs, keys, g, s, units, width, lower, upper,
                        nbud, state, limit):
        """The "+" candidates of the a children the budget allows (a = 0 in a stopped trial)."""
        b = cuda.blockIdx.y
        t = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        _, nc, D = children.shape
        n = nbud[b]
        a = max(min(min(nc, n), n - state[b, 0]), 0)
        if t == 0:
            limit[b] = a
        if t < a * D:
            c, j = t // D, t % D
            d = dif(keys[b], sw_counter(g, c, s, j, units, width, D), rho[b, c])
            difs[b, c, j] = d
            cand[b, c, j] = plus(children[b, c, j], bias[b, c, j], d, lower, upper)

    @cuda.jit(cache=True)
    def accept_plus(children, cfit, bias, rho, succ, fail, cand, cfc, difs, flag, state, nbud,
                    limit):
        """A block per trial, a thread per child. ``limit[b]`` <- one past the last child whose
        "-" try the budget allows (the "-" candidates to compute and evaluate)."""
        b = cuda.blockIdx.x
        n = nbud[b]
        if n == 0:
            return
        c = cuda.threadIdx.x
        _, nc, D = children.shape
        used = state[b, 0]
        a = max(min(min(nc, n), n - used), 0)
        better = False
        if c < nc:
            better = c < a and cfc[b, c] < cfit[b, c]
            flag[b, c] = c < a and not better
        cuda.syncthreads()
        if better:
            for j in range(D):
                children[b, c, j] = cand[b, c, j]
                bias[b, c, j] = bias_plus(bias[b, c, j], difs[b, c, j])
            cfit[b, c] = cfc[b, c]
            succ[b, c], fail[b, c], rho[b, c] = counts(True, succ[b, c], fail[b, c], rho[b, c])
        if c == 0:
            nf = 0
            for k in range(nc):
                if flag[b, k]:
                    nf += 1
            q = max(min(nf, n - used - a), 0)
            k, r = 0, 0
            while r < q:
                if flag[b, k]:
                    r += 1
                k += 1
            state[b, 0] = used + a
            state[b, 1] = nf
            limit[b] = k

    @cuda.jit(cache=True)
    def minus_candidates(children, bias, difs, cand, lower, upper, limit):
        b = cuda.blockIdx.y
        t = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        D = children.shape[2]
        if t < limit[b] * D:  # 0 in a stopped trial (plus_candidates wrote it)
            c, j = t // D, t % D
            cand[b, c, j] = minus(children[b, c, j], bias[b, c, j], difs[b, c, j], lower, upper)

    @cuda.jit(cache=True)
    def accept_minus(children, cfit, bias, rho, succ, fail, cand, cfc, difs, flag, state, nbud):
        b = cuda.blockIdx.x
        n = nbud[b]
        if n == 0:
            return
        c = cuda.threadIdx.x
        _, nc, D = children.shape
        used, nf = state[b, 0], state[b, 1]
        q = max(min(nf, n - used), 0)
        cuda.syncthreads()
        if c < nc and flag[b, c]:
            r = 0
            for k in range(c):
                if flag[b, k]:
                    r += 1
            if r < q and cfc[b, c] < cfit[b, c]:
                for j in range(D):
                    children[b, c, j] = cand[b, c, j]
                    bias[b, c, j] = bias_minus(bias[b, c, j], difs[b, c, j])
                cfit[b, c] = cfc[b, c]
                succ[b, c], fail[b, c], rho[b, c] = counts(True, succ[b, c], fail[b, c],
                                                           rho[b, c])
            else:
                for j in range(D):
                    bias[b, c, j] = bias_fail(bias[b, c, j])
                succ[b, c], fail[b, c], rho[b, c] = counts(False, succ[b, c], fail[b, c],
                                                           rho[b, c])
        cuda.syncthreads()
        if c == 0:
            state[b, 0] = used + q

    @cuda.jit(cache=True)
    def update_reference(refX, refF, children, cfit, allE, newX, newF, state, nbud):
        b = cuda.blockIdx.x
        if nbud[b] == 0:
            return
        tid, bd = cuda.threadIdx.x, cuda.blockDim.x
        _, nr, D = refX.shape
        nc = cfit.shape[1]
        for k in range(tid, nr + nc, bd):
            allE[b, k] = refF[b, k] if k < nr else cfit[b, k - nr]
        if tid == 0:
            state[b, 2] = 0
        cuda.syncthreads()
        for k in range(tid, nr + nc, bd):
            r = ranks_before(allE[b], nr + nc, k)
            if r < nr:
                newF[b, r] = allE[b, k]
                for j in range(D):
                    newX[b, r, j] = refX[b, k, j] if k < nr else children[b, k - nr, j]
                if k >= nr:
                    state[b, 2] = 1
        cuda.syncthreads()
        for k in range(tid, nr, bd):
            refF[b, k] = newF[b, k]
            for j in range(D):
                refX[b, k, j] = newX[b, k, j]

    return SimpleNamespace(new_rows=new_rows, build_reference=build_reference,
                           make_children=make_children, init_sw=init_sw,
                           plus_candidates=plus_candidates, accept_plus=accept_plus,
                           minus_candidates=minus_candidates, accept_minus=accept_minus,
                           update_reference=update_reference)


def _grid(count):
    """(blocks, threads) for a thread per element: blocks of up to 256 threads (no more than the
    elements: a warp costs the same on a GPU, and fewer threads run faster on the simulator)."""
    threads = min(256, gpu.next_pow2(count))
    return max(1, (count + threads - 1) // threads), threads


@cache
def build_evaluate_kernel(block_evaluate, dtype, threads, buf):
    """``evaluate[(rows, B), threads](X, out, first, limit, shift, rot_t, perm)``: a block per (row,
    trial) evaluates row i of trial b (``X`` is (B, rows, D)) when ``first <= i < limit[b]``."""
    T = np.dtype(dtype).type
    P, BUF = int(threads), int(buf)

    @cuda.jit(cache=True)
    def evaluate(X, out, first, limit, shift, rot_t, perm):
        i, b = cuda.blockIdx.x, cuda.blockIdx.y
        if i < first or i >= limit[b]:
            return  # the whole block: block_evaluate synchronises it
        a = cuda.shared.array(BUF, T)
        z = cuda.shared.array(BUF, T)
        red = cuda.shared.array((4, P), T)
        v = block_evaluate(X[b, i], a, z, red, shift, rot_t, perm, cuda.threadIdx.x)
        if cuda.threadIdx.x == 0:
            out[b, i] = v

    return evaluate


class SSGPU(HostSteppedBatch):
    """Scatter search with Solis-Wets improvement, state on the GPU, B trials per launch."""

    algorithm = "ss"
    name = "gpu"
    device = "gpu"

    def __init__(self, function, params, trials_per_launch: int = 1):
        super().__init__(function, params)
        require_positive_int("trials_per_launch", trials_per_launch)
        if params.n_children > 1024:
            raise InvalidInputError(f"ss/gpu runs at most 1024 children (a block), got "
                                    f"{params.n_children}")
        self.trials_per_launch = trials_per_launch
        self.prebound = False
        self.restarts = 0  # restarts of the last batch, all trials together
        self.trial_restarts = []  # per trial of the last batch

    def evaluations_per_generation(self) -> int:
        return self.params.evaluations_per_iteration()

    def _allocate(self, B):
        p, T, D = self.params, self.dtype, self.dim
        shape_key = (B, dataclasses.replace(p, max_fes=p.popsize, target=0.0, max_time_s=None))
        if getattr(self, "_allocated_for", None) == shape_key:
            return
        P, nr, nc = p.popsize, p.ref_size, p.n_children
        self.k = build_gpu_ss(T)
        fn = self._fn = gpu.compile_function(self.function.program, T)
        evaluate = build_evaluate_kernel(fn.block_evaluate, T, fn.threads, fn.buffer_size)
        self._evaluate = evaluate
        self.units, self.width = layout(p, D)
        pa, pb = pair_arrays(nr)
        self.pa, self.pb = cuda.to_device(pa), cuda.to_device(pb)
        dev = cuda.device_array
        self.stream = s = cuda.stream()
        self.d_keys, self.h_keys = dev(B, np.uint64), cuda.pinned_array(B, np.uint64)
        self.d_nbud, self.h_nbud = dev(B, np.int64), cuda.pinned_array(B, np.int64)
        self.d_state, self.h_state = dev((B, 4), np.int64), cuda.pinned_array((B, 4), np.int64)
        self.h_refF = cuda.pinned_array((B, nr), T)
        self.limit = dev(B, np.int64)
        self.pop, self.fit = dev((B, P, D), T), dev((B, P), T)
        self.in_ref, self.mind = dev((B, P), np.bool_), dev((B, P), np.float64)
        self.refX, self.refF = dev((B, nr, D), T), dev((B, nr), T)
        self.newX, self.newF, self.allE = dev((B, nr, D), T), dev((B, nr), T), dev((B, nr + nc), T)
        self.children, self.cfit = dev((B, nc, D), T), dev((B, nc), T)
        self.bias, self.difs = dev((B, nc, D), T), dev((B, nc, D), T)
        self.rho = dev((B, nc), np.float64)
        self.succ, self.fail = dev((B, nc), np.int64), dev((B, nc), np.int64)
        self.cand, self.cfc = dev((B, nc, D), T), dev((B, nc), T)
        self.flag = dev((B, nc), np.bool_)
        self.block = min(1024, gpu.next_pow2(max(P, nr + nc)))  # >= the children

        k, lo, hi, U, W = self.k, float(self.lower), float(self.upper), self.units, self.width
        keys, nbud, state, limit = self.d_keys, self.d_nbud, self.d_state, self.limit
        ch_blocks, ch_threads = _grid(nc * D)
        c_blocks, c_threads = _grid(nc)
        p_blocks, p_threads = _grid(P * D)
        sw_ = (self.children, self.cfit, self.bias, self.rho, self.succ, self.fail, self.cand,
               self.cfc, self.difs, self.flag, state, nbud)

        def bind(kernel, args, grid, block, variable=None):
            return PreboundLaunch(kernel, args, grid, block, s, variable)

        self.launches = SimpleNamespace(
            children=bind(k.make_children, (self.refX, self.children, self.cfit, self.pa, self.pb,
                                            keys, 1, float(p.lam), U, W, lo, hi, nbud, limit),
                          (ch_blocks, B), ch_threads, {"g": 6}),
            evaluate_children=bind(evaluate, (self.children, self.cfit, 0, limit, *fn.data),
                                   (nc, B), fn.threads),
            init_sw=bind(k.init_sw, (self.refX, self.pa, self.pb, self.bias, self.rho, self.succ,
                                     self.fail, float(p.rho_max * (hi - lo)),
                                     float(RHO_FLOOR * (hi - lo)), nbud, state),
                         (c_blocks, B), c_threads),
            plus=bind(k.plus_candidates, (self.children, self.bias, self.rho, self.cand, self.difs,
                                          keys, 1, 0, U, W, lo, hi, nbud, state, limit),
                      (ch_blocks, B), ch_threads, {"g": 6, "s": 7}),
            evaluate_candidates=bind(evaluate, (self.cand, self.cfc, 0, limit, *fn.data),
                                     (nc, B), fn.threads),
            accept_plus=bind(k.accept_plus, (*sw_, limit), B, self.block),
            minus=bind(k.minus_candidates, (self.children, self.bias, self.difs, self.cand, lo, hi,
                                            limit), (ch_blocks, B), ch_threads),
            accept_minus=bind(k.accept_minus, sw_, B, self.block),
            update=bind(k.update_reference, (self.refX, self.refF, self.children, self.cfit,
                                             self.allE, self.newX, self.newF, state, nbud),
                        B, self.block),
            restart_rows=bind(k.new_rows, (self.pop, self.fit, self.refX, self.refF, keys, 1, 1,
                                           nc, U, W, lo, hi, nbud, state, limit),
                              (p_blocks, B), p_threads, {"g": 5}),
            evaluate_restart=bind(evaluate, (self.pop, self.fit, 1, limit, *fn.data), (P, B),
                                  fn.threads),
            rebuild=bind(k.build_reference, (self.pop, self.fit, p.ref_best, p.ref_diverse,
                                             self.refX, self.refF, self.in_ref, self.mind, 1,
                                             state, limit), B, self.block),
        )
        self._init_args = (lo, hi, p_blocks, p_threads)
        self.prebound = all(b.fast for b in vars(self.launches).values())
        self._allocated_for = shape_key

    def _launch_init(self, B):
        """Every trial's initial population, its evaluation and R."""
        p, s, k, fn = self.params, self.stream, self.k, self._fn
        lo, hi, p_blocks, p_threads = self._init_args
        k.new_rows[(p_blocks, B), p_threads, s](self.pop, self.fit, self.refX, self.refF,
                                                 self.d_keys, 0, 0, 0, self.units, self.width, lo,
                                                 hi, self.d_nbud, self.d_state, self.limit)
        self._evaluate[(p.popsize, B), fn.threads, s](self.pop, self.fit, 0, self.limit, *fn.data)
        k.build_reference[B, self.block, s](self.pop, self.fit, p.ref_best, p.ref_diverse,
                                            self.refX, self.refF, self.in_ref, self.mind, 0,
                                            self.d_state, self.limit)

    def _launch_iteration(self, g, steps):
        L = self.launches
        L.children.launch(g=g)
        L.evaluate_children.launch()
        L.init_sw.launch()
        for s in range(steps):
            L.plus.launch(g=g, s=s)
            L.evaluate_candidates.launch()
            L.accept_plus.launch()
            L.minus.launch()
            L.evaluate_candidates.launch()
            L.accept_minus.launch()
        L.update.launch()
        L.restart_rows.launch(g=g)
        L.evaluate_restart.launch()
        L.rebuild.launch()

    # -- the batch's steps (the loop: gpude.implementations.batched.HostSteppedBatch) --------------
    def start_trials(self, keys):
        B = len(keys)
        self._allocate(B)
        self.h_keys[:] = keys
        self.d_keys.copy_to_device(self.h_keys, stream=self.stream)
        self.stream.synchronize()
        self.batch, self.trial_restarts, self._iteration = B, [0] * B, 0

    def batch_context(self):
        return gpu.no_performance_warnings()  # small grids are legitimate

    def initialize_trials(self):
        s = self.stream
        self._launch_init(self.batch)
        self.refF.copy_to_host(self.h_refF, stream=s)
        s.synchronize()
        return [self.h_refF[b].min() for b in range(self.batch)]

    def advance_trials(self, budgets):
        """One iteration of the trials in ``budgets`` (the others' budget 0: their kernels return at
        once), then the iteration's sync."""
        s, nc = self.stream, self.params.n_children
        self._iteration += 1
        self.h_nbud[:] = 0
        for b, n in budgets.items():
            self.h_nbud[b] = n
        self.d_nbud.copy_to_device(self.h_nbud, stream=s)
        # a trial whose budget ends with its children runs no step (alone: none either)
        steps = self.params.ls_steps if any(n > nc for n in budgets.values()) else 0
        self._launch_iteration(self._iteration, steps)
        self.d_state.copy_to_host(self.h_state, stream=s)
        self.refF.copy_to_host(self.h_refF, stream=s)
        s.synchronize()  # the iteration's sync
        out = {}
        for b in budgets:
            self.trial_restarts[b] += int(self.h_state[b, 3])
            out[b] = (int(self.h_state[b, 0]), self.h_refF[b].min())
        return out

    def final_vectors(self, B):
        s = self.stream
        refX = self.refX.copy_to_host(stream=s)
        refF = self.refF.copy_to_host(stream=s)
        s.synchronize()
        self._final = (refX, refF)
        return [self.best_vector(b) for b in range(B)]

    def teardown(self):
        self.restarts = sum(self.trial_restarts)

    def batch_info(self, batch: int) -> dict:
        return {"options": {"trials_per_launch": batch}, "prebound": self.prebound}

    def population(self, trial: int = 0):
        """Copies of trial ``trial``'s final reference set and its errors (float64), last batch."""
        refX, refF = self._final
        return refX[trial].copy(), refF[trial].astype(np.float64)

    def best_vector(self, trial: int = 0):
        X, F = self.population(trial)
        return X[int(np.argmin(F))].copy()
