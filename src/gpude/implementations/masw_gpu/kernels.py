"""The CUDA kernels of ``masw/gpu`` over a batch of trials, and the host's GA step planner.

The kernels over D (initialisation, the NAM distances, the crossover, the copies of entering
children, the Solis-Wets steps) take a row of D values per block row; the one-thread decisions
(fathers, replacement, a step's acceptance and counts) take a thread or a block per trial. Rows are
read and written where ``where[row]`` says they are stored (see the package docstring). The
Solis-Wets state's slots are :mod:`.state`'s.

The GA kernels' grids put the rows (pairs, children) in blockIdx.x, the fastest-varying index, so
the blocks that run together read the same stretch of the parents and of o: a row read by several
pairs or children comes from memory once and from the L2 cache after that.
"""

from __future__ import annotations

import math
import threading
from functools import cache

import numpy as np
from numba import cuda, float64

from ...algorithms.masw import build_masw_ops
from ...algorithms.solis_wets import build_sw_ops
from ..masw_sequential import HEADER
from .state import BUDGET, F_LS, FAIL, OUTCOME, RHO, SUCC, USED

#: threads per block of the kernels over D (the default, at most)
THREADS = 256
#: coordinates per thread (at least) when a grid over D is sized
BUCKET = 4
MAX_BLOCKS = 4096
#: threads of a trial's replacement block (each ranks some of the popsize + offspring entries; one
#: on numba's simulator, where every thread is a Python thread: the same moves, tested with several)
RANK_THREADS = 128


def rank_threads() -> int:
    """Threads of a trial's replacement block on this device (1 on numba's simulator)."""
    from ...core.gpu_runtime import simulator_enabled

    return 1 if simulator_enabled() else RANK_THREADS


_KERNELS: dict = {}
_LOCK = threading.Lock()


def grid_blocks(dim, threads):
    """Blocks of a grid over D: BUCKET coordinates per thread at least, MAX_BLOCKS at most."""
    return max(1, min(MAX_BLOCKS, math.ceil(dim / (threads * BUCKET))))


def build_gpu_masw(dtype, popsize: int, threads: int, layout: bool = False):
    """The kernels for one (dtype, popsize, threads per block, rows in position order?). With
    ``layout`` a row's index s holds coordinate ``lay[s]`` (the function's permutation): the kernels
    that draw per coordinate (the initial population, the crossover, the Solis-Wets perturbation)
    draw coordinate lay[s]'s numbers for index s, so the run is the same."""
    key = (np.dtype(dtype).name, popsize, threads, bool(layout))
    with _LOCK:
        if key in _KERNELS:
            return _KERNELS[key]
    ops, sw = build_masw_ops(dtype, "cuda"), build_sw_ops(dtype, "cuda")
    init_column, blx, clip, ctr = ops.init_column, ops.blx, ops.clip, ops.ctr
    dif, plus, minus = sw.dif, sw.plus, sw.minus
    bias_plus, bias_minus, bias_fail, counts = sw.bias_plus, sw.bias_minus, sw.bias_fail, sw.counts
    T, P, NT = np.dtype(dtype).type, int(popsize), int(threads)
    LAY = bool(layout)
    int64 = np.int64

    @cuda.jit(device=True)
    def coordinate(lay, j):
        """The coordinate a row's index j holds (its draws' index)."""
        return int64(lay[j]) if LAY else int64(j)

    @cuda.jit(cache=True)
    def init_population(pop, keys, strata, W, lower, upper, lay):
        """Trial blockIdx.y's population (rows b P .. b P + P - 1, its key), a thread per coordinate."""
        perm = cuda.local.array(P, int64)
        col = cuda.local.array(P, T)
        b = cuda.blockIdx.y
        key = keys[b]
        j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        while j < pop.shape[1]:
            init_column(key, coordinate(lay, j), P, strata, W, lower, upper, perm, col)
            for i in range(P):
                pop[b * P + i, j] = col[i]
            j += cuda.gridDim.x * cuda.blockDim.x

    @cuda.jit(device=True)
    def block_sum(red, s, tid):
        """Every thread's s summed into red[0] (a shared-memory tree over the NT threads)."""
        red[tid] = s
        cuda.syncthreads()
        h = NT // 2
        while h > 0:
            if tid < h:
                red[tid] += red[tid + h]
            cuda.syncthreads()
            h //= 2

    @cuda.jit(cache=True)
    def dist_partial(pop, where, pairs, per, n, active, partials):
        """Pair q (rows pairs[q], stored at where[row]) belongs to trial q // per: the pairs
        q % per >= n (a short step) and those of a stopped trial are skipped."""
        red = cuda.shared.array(NT, float64)
        tid, q, blk = cuda.threadIdx.x, cuda.blockIdx.x, cuda.blockIdx.y
        if q % per >= n or active[q // per] == 0:
            return
        x, y = pop[where[pairs[q, 0]]], pop[where[pairs[q, 1]]]
        s = 0.0
        j = blk * NT + tid
        while j < pop.shape[1]:
            d = float64(x[j]) - float64(y[j])
            s += d * d
            j += cuda.gridDim.y * NT
        block_sum(red, s, tid)
        if tid == 0:
            partials[q, blk] = red[0]

    @cuda.jit(cache=True)
    def dist_final(partials, nb, out):
        red = cuda.shared.array(NT, float64)
        tid, q = cuda.threadIdx.x, cuda.blockIdx.x
        s = 0.0
        j = tid
        while j < nb:
            s += partials[q, j]
            j += NT
        block_sum(red, s, tid)
        if tid == 0:
            out[q] = red[0]

    @cuda.jit(cache=True)
    def crossover(pop, where, row0, plan, delta, keys, unit0, W, alpha, lower, upper, k, off, active, lay):
        """Child c of trial b (blockIdx.x = b k + c; row row0 + b off + c) of parents plan[r, 0],
        plan[r, 1], r = b off + c; plan[r, 2] the mutated gene; trial b's key (every row stored at
        where[row])."""
        b, c = cuda.blockIdx.x // k, cuda.blockIdx.x % k
        if active[b] == 0:
            return
        r = b * off + c
        mother, father, gene = where[plan[r, 0]], where[plan[r, 1]], plan[r, 2]
        child = pop[where[row0 + r]]
        key = keys[b]
        j = cuda.blockIdx.y * NT + cuda.threadIdx.x
        while j < pop.shape[1]:
            q = coordinate(lay, j)
            v = blx(key, unit0 + c, W, q, pop[mother, j], pop[father, j], alpha, lower, upper)
            if q == gene:
                v = clip(v + delta[r], lower, upper)
            child[j] = v
            j += cuda.gridDim.y * NT

    @cuda.jit(cache=True)
    def choose_fathers(cands, dists, plan, k, nam, off, trials):
        """Child c of trial b's plan (mother, father, gene), r = b off + c, from cands[r] = (mother,
        nam candidates, gene): the candidate farthest from the mother (the first on ties), as
        masw/sequential chooses."""
        t = cuda.grid(1)
        b, c = t // off, t % off
        if b < trials and c < k:
            r = b * off + c
            father, far = cands[r, 1], -1.0
            for q in range(nam):
                d = dists[r * nam + q]
                if d > far:
                    far, father = d, cands[r, 1 + q]
            plan[r, 0], plan[r, 1], plan[r, 2] = cands[r, 0], father, cands[r, nam + 1]

    @cuda.jit(device=True)
    def entry(b, trials, mu, off, e):
        """Where entry e of trial b's (mu + k) ranking is in ``fit``: its population, then its children."""
        return b * mu + e if e < mu else trials * mu + b * off + (e - mu)

    @cuda.jit(device=True)
    def before(fit, b, trials, mu, off, ea, eb):
        """Whether entry ea ranks before entry eb: (error, NaN last; population first; index)."""
        fa, fb = fit[entry(b, trials, mu, off, ea)], fit[entry(b, trials, mu, off, eb)]
        fa = math.inf if fa != fa else fa
        fb = math.inf if fb != fb else fb
        return fa < fb or (fa == fb and ea < eb)

    @cuda.jit(device=True)
    def replace_trial(fit, mu, k, off, b, trials, plan, moves, nmoves, replaced, tally, where, swap, rank):
        """(mu + k) replacement (algorithms.masw.replacement) of trial b by the threads of a block (any
        number, all of them calling): each thread ranks some entries (rank[b (mu + off) + e]: the
        entries that rank before e), then thread 0 lists moves[b off + r] = (row of the slot, row of the
        entering child), updates the slots' errors and marks them in ``replaced``; tally[2 b] += the
        moves, tally[2 b + 1] += the distinct parents of the step (for the traffic count). With
        ``swap`` the slot and its child exchange their stored rows (where): the child's values become
        the slot's without a copy, and the leaving row is where a later child is made; else
        ``copy_moves`` copies them. (One thread ranking all mu + k entries made ~6,400 comparisons a
        GA step, one after the other.)"""
        n = mu + k
        t, nt = cuda.threadIdx.x, cuda.blockDim.x
        r0 = b * (mu + off)
        m0 = b * off
        e = t
        while e < n:
            r = 0
            for f in range(n):
                if before(fit, b, trials, mu, off, f, e):
                    r += 1
            rank[r0 + e] = r
            e += nt
        distinct = 0
        q = t
        while q < 2 * k:  # a parent row counted where it first appears
            row = plan[m0 + q // 2, q % 2]
            seen = False
            for e in range(q):
                if plan[m0 + e // 2, e % 2] == row:
                    seen = True
            if not seen:
                distinct += 1
            q += nt
        if distinct > 0:
            cuda.atomic.add(tally, 2 * b + 1, distinct)
        cuda.syncthreads()  # every rank written (and every error read) before thread 0 moves them
        if t != 0:
            return
        nl = 0
        for i in range(mu):  # leaving: ranked mu or later, ascending slots
            if rank[r0 + i] >= mu:
                moves[m0 + nl, 0] = b * mu + i
                nl += 1
        ne = 0
        for c in range(k):  # entering: ranked before mu, in child order
            if rank[r0 + mu + c] < mu:
                moves[m0 + ne, 1] = trials * mu + m0 + c
                ne += 1
        for r in range(nl):
            slot, child = moves[m0 + r, 0], moves[m0 + r, 1]
            fit[slot] = fit[child]
            replaced[slot] = 1
            if swap != 0:
                where[slot], where[child] = where[child], where[slot]
        nmoves[b] = nl
        tally[2 * b] += nl

    @cuda.jit(cache=True)
    def replace_children(fit, P, k, plan, moves, nmoves, replaced, tally, where, swap, rank):
        """One trial's (mu + k) replacement by block 0 (:func:`replace_trial`, children at P + c)."""
        if cuda.blockIdx.x != 0:
            return
        replace_trial(fit, P, k, k, 0, 1, plan, moves, nmoves, replaced, tally, where, swap, rank)

    @cuda.jit(cache=True)
    def replace_batch(fit, P, k, off, plan, moves, nmoves, replaced, tally, active, where, swap, rank):
        """Trial blockIdx.x's replacement (:func:`replace_trial`) by its block; a stopped trial
        makes no move."""
        b = cuda.blockIdx.x
        if active[b] == 0:
            if cuda.threadIdx.x == 0:
                nmoves[b] = 0
            return
        replace_trial(fit, P, k, off, b, nmoves.shape[0], plan, moves, nmoves, replaced, tally, where, swap, rank)

    @cuda.jit(cache=True)
    def copy_moves(pop, moves, nmoves, off):
        """pop[moves[r, 0]] <- pop[moves[r, 1]] for the moves r = b off + m, m < nmoves[b] (a block
        row per possible move)."""
        r = cuda.blockIdx.x
        if r % off >= nmoves[r // off]:
            return
        dst, src = pop[moves[r, 0]], pop[moves[r, 1]]
        j = cuda.blockIdx.y * NT + cuda.threadIdx.x
        while j < pop.shape[1]:
            dst[j] = src[j]
            j += cuda.gridDim.y * NT

    # -- Solis-Wets: trial b in blockIdx.y (kernels over D) or in threadIdx.x (the decisions) -----
    @cuda.jit(cache=True)
    def ls_begin(pop, where, x, bias, rows, fresh):
        """x[b] <- row rows[b] (stored at where[rows[b]]) for the trials with an application
        (rows[b] >= 0); a new chain's bias (fresh[b]) zeroed."""
        b = cuda.blockIdx.y
        r = rows[b]
        if r < 0:
            return
        stored = pop[where[r]]
        j = cuda.blockIdx.x * NT + cuda.threadIdx.x
        while j < x.shape[1]:
            x[b, j] = stored[j]
            if fresh[b] != 0:
                bias[r, j] = 0
            j += cuda.gridDim.x * NT

    @cuda.jit(cache=True)
    def ls_keep(pop, where, fit, x, rows, keep, st):
        """A kept result (keep[b]) into its individual's row (stored at where[row]) and error."""
        b = cuda.blockIdx.y
        if keep[b] == 0:
            return
        r = rows[b]
        stored = pop[where[r]]
        j = cuda.blockIdx.x * NT + cuda.threadIdx.x
        while j < x.shape[1]:
            stored[j] = x[b, j]
            j += cuda.gridDim.x * NT
        if cuda.blockIdx.x == 0 and cuda.threadIdx.x == 0:
            fit[r] = st[b, F_LS]

    @cuda.jit(cache=True)
    def sw_plus(ls, bias, rows, d, st, gate, keys, unit, W, lower, upper, lay):
        """Trial b's step: its '+' candidate into ls[B + b] (x is ls[b]); its perturbation into d[b]."""
        b, B = cuda.blockIdx.y, st.shape[0]
        if gate[b] == 0:
            return
        rho = st[b, RHO]
        bb = bias[rows[b]]
        key = keys[b]
        j = cuda.blockIdx.x * NT + cuda.threadIdx.x
        while j < ls.shape[1]:
            dj = dif(key, ctr(unit, HEADER + 2 * coordinate(lay, j), W), rho)
            d[b, j] = dj
            ls[B + b, j] = plus(ls[b, j], bb[j], dj, lower, upper)
            j += cuda.gridDim.x * NT

    @cuda.jit(cache=True)
    def sw_after_plus(st, out, gate, gate_minus, gate_minus_any):
        """Thread b: trial b accepts its '+' candidate or opens its '-' gate; gate_minus_any[0]: some
        trial tries a '-' candidate (the gate of their evaluation, all trials in one launch)."""
        b, B = cuda.threadIdx.x, st.shape[0]
        flag = 0
        if b < B and gate[b] != 0:
            st[b, USED] += 1.0
            if out[B + b] < st[b, F_LS]:
                st[b, F_LS] = out[B + b]
                st[b, OUTCOME] = 1.0
                gate_minus[b] = 0
            else:
                st[b, OUTCOME] = 0.0
                gate_minus[b] = 1 if st[b, USED] < st[b, BUDGET] else 0
            flag = gate_minus[b]
        opened = cuda.syncthreads_or(flag)
        if b == 0:
            gate_minus_any[0] = opened

    @cuda.jit(cache=True)
    def sw_minus(ls, bias, rows, d, gate_minus, lower, upper):
        b, B = cuda.blockIdx.y, d.shape[0]
        if gate_minus[b] == 0:
            return
        bb = bias[rows[b]]
        j = cuda.blockIdx.x * NT + cuda.threadIdx.x
        while j < ls.shape[1]:
            ls[2 * B + b, j] = minus(ls[b, j], bb[j], d[b, j], lower, upper)
            j += cuda.gridDim.x * NT

    @cuda.jit(cache=True)
    def sw_after_minus(st, out, gate_minus):
        b, B = cuda.threadIdx.x, st.shape[0]
        if b >= B or gate_minus[b] == 0:
            return
        st[b, USED] += 1.0
        if out[2 * B + b] < st[b, F_LS]:
            st[b, F_LS] = out[2 * B + b]
            st[b, OUTCOME] = -1.0

    @cuda.jit(cache=True)
    def sw_finish(ls, bias, rows, d, st, gate):
        b, B = cuda.blockIdx.y, st.shape[0]
        if gate[b] == 0:
            return
        outcome = st[b, OUTCOME]
        bb = bias[rows[b]]
        j = cuda.blockIdx.x * NT + cuda.threadIdx.x
        while j < ls.shape[1]:
            if outcome > 0:
                bb[j] = bias_plus(bb[j], d[b, j])
                ls[b, j] = ls[B + b, j]
            elif outcome < 0:
                bb[j] = bias_minus(bb[j], d[b, j])
                ls[b, j] = ls[2 * B + b, j]
            else:
                bb[j] = bias_fail(bb[j])
            j += cuda.gridDim.x * NT

    @cuda.jit(cache=True)
    def sw_end(st, gate, gate_minus, gate_any, gate_minus_any):
        """Thread b: trial b's counts and rho; whether its next step has budget; gate_any[0]: whether
        some trial's has (the gate of the '+' evaluation)."""
        b, B = cuda.threadIdx.x, st.shape[0]
        flag = 0
        if b < B:
            gate_minus[b] = 0  # a step queued after the budget must not try a '-' candidate
            if gate[b] != 0:
                succ, fail, rho = counts(st[b, OUTCOME] != 0.0, int64(st[b, SUCC]), int64(st[b, FAIL]),
                                         st[b, RHO])
                st[b, SUCC], st[b, FAIL], st[b, RHO] = float64(succ), float64(fail), rho
                gate[b] = 1 if st[b, USED] < st[b, BUDGET] else 0
            flag = gate[b]
        opened = cuda.syncthreads_or(flag)
        if b == 0:
            gate_minus_any[0] = 0
            gate_any[0] = opened

    kernels = dict(init_population=init_population, dist_partial=dist_partial, dist_final=dist_final,
                   crossover=crossover, sw_plus=sw_plus,
                   choose_fathers=choose_fathers, replace_children=replace_children,
                   replace_batch=replace_batch, copy_moves=copy_moves,
                   ls_begin=ls_begin, ls_keep=ls_keep,
                   sw_after_plus=sw_after_plus, sw_minus=sw_minus, sw_after_minus=sw_after_minus,
                   sw_finish=sw_finish, sw_end=sw_end)
    with _LOCK:
        _KERNELS[key] = kernels
    return kernels


@cache
def build_step_planner(dtype):
    """``plan(keys, active, unit, W, P, nam, k, off, dim, prob, lower, upper, cands, pairs, delta) ->
    distinct``: one GA step's counter draws (mothers, NAM candidates, mutations) of every active trial b
    (its own key) into the pinned buffers in one compiled call (not a Python loop over the children, on
    the host's critical path every GA step): child c of trial b in row r = b off + c of cands and delta,
    its distance pairs in rows r nam .. r nam + nam - 1 of pairs, the individuals as rows of the batch's
    population (b P + i). Returns the number of distinct rows among each trial's distance pairs, summed
    over the trials (for the traffic count)."""
    import numba

    ops = build_masw_ops(dtype, "cpu")
    pick, mutation = ops.pick, ops.mutation

    @numba.njit(cache=True, nogil=True)
    def plan(keys, active, unit, W, P, nam, k, off, dim, prob, lower, upper, cands, pairs, delta):
        picks = np.empty(nam + 1, np.int64)
        used = np.empty(P, np.bool_)
        distinct = 0
        for b in range(keys.shape[0]):
            if active[b] == 0:
                continue
            key, base = keys[b], b * P
            used[:] = False
            for c in range(k):
                r = b * off + c
                pick(key, unit + c, W, P, nam, picks)
                gene, dl = mutation(key, unit + c, W, dim, prob, lower, upper)
                for q in range(nam + 1):
                    cands[r, q] = base + picks[q]
                    if not used[picks[q]]:
                        used[picks[q]] = True
                        distinct += 1
                cands[r, nam + 1] = gene
                delta[r] = dl
                for q in range(nam):
                    pairs[r * nam + q, 0] = base + picks[0]
                    pairs[r * nam + q, 1] = base + picks[1 + q]
        return distinct

    return plan

