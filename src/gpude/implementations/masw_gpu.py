"""``masw/gpu``: Lastra, Molina & Benítez's GPU MA-SW-Chains (2015), for any D that fits the device.

As their Fig. 3: every loop over D runs on the GPU (initialisation, the NAM distances, BLX
crossover of ``offspring`` (20) children at once into a padding area after the population, their
evaluation, the Solis-Wets candidates and bias updates, the evaluations), with the function's
evaluator streaming over D (:mod:`gpude.functions.streaming_gpu`). The host keeps the scalars and
makes the scalar decisions with the same code as ``masw/sequential``: mothers, NAM candidates and
mutations (counter draws), fathers (from the distances), (mu + 20) replacement and the choice of
the individual to improve.

**Rows by reference.** Every row (a population slot ``b P + i``, a child) is read and written where
``where[row]`` says it is stored. An entering child and the slot it takes swap their stored rows
(``replace_batch``: two integers) instead of the child's D values being copied into the slot (a
read and a write of D values per replacement: 7-14 % of a cycle's DRAM bytes at D = 3e6 as counted
on an H100); the leaving member's row is where a later child is made. The function's evaluator reads
the children through the same map (``StreamingEvaluator``'s ``rows``); with an evaluator that has no
row map (LOP, scheduling, CEC 2005 functions) the map stays the identity and the children are copied.

Solis-Wets steps need no host round trip. On the large-scale functions (``ls_mode="fused"``, the
default there up to D = 1e6 or 5e5, where it was measured faster) a whole application is one
cooperative launch
(:mod:`gpude.implementations.masw_gpu_ls`): each candidate is generated inside its evaluation and
never stored, every block makes the step's decision from the blocks' sums after a grid barrier,
and a failed step writes nothing. Elsewhere (any problem's evaluator, ``ls_mode="steps"``) a
step's decisions (accept the '+' candidate, try the '-' one, the counts and rho) are made by
one-thread kernels on the device, and kernels whose work a decision cancels exit at once (a gate
flag); the host queues ``ceil(remaining / 2)`` steps, reads how many evaluations they used, and
repeats until the application's 500 are spent (about nine reads per application). Either way the
random numbers, the decisions and the results are those of ``masw/sequential`` for the same seed
(tested); the evaluations' last bits may differ (sums in another order).

The GA kernels' grids put the rows (pairs, children) in blockIdx.x, the fastest-varying index, so
the blocks that run together read the same stretch of the parents and of o: a row read by several
pairs or children comes from memory once and from the L2 cache after that.

**Trials per launch** (``trials_per_launch`` = B, :meth:`MASWGPU.run_batch`). At D = 1e5 a cycle
is bound by launch latency and host round trips (~10 ms per 1,000 FEs where its memory traffic
needs ~1 ms), so B trials of one (function, D) cell advance together, each with its own key:

* **layout**: one population array for all, rows ``[0, B P)`` the populations (trial b's individual
  i at ``b P + i``), rows ``[B P, B P + B offspring)`` the children (trial b's child c at
  ``B P + b offspring + c``), so every trial's children are one range of rows for the function's
  evaluator, unchanged; the biases ``(B P, D)``, row ``b P + i``; the steps mode's vectors
  ``(3 B, D)``: the trials' x, then their '+' candidates, then their '-' ones (each set one range of
  rows); the perturbations ``(B, D)``, the Solis-Wets states ``(B, 8)``, the gates per trial;
* **shared launches**: a launch per GA kernel for all the trials (the trial from the grid: pairs,
  children and moves are flat over (trial, row), ``replace_batch`` a block per trial), one
  evaluation of all their children, and in the steps mode one launch per step kernel (the D-long
  ones with the trial in blockIdx.y, the decisions a thread per trial in one block, which also
  opens the evaluator's gate when any trial's is open) and one evaluation of all the candidates;
  the fused mode runs the trials' applications as one cooperative launch each, queued one after
  the other without a host read between them;
* **the host** draws every trial's GA step in one compiled call, and makes each trial's decisions
  (the individual to improve, a new chain's rho, keep or drop) in turn, after one read of the
  batch's state where a trial alone reads its own;
* **stopping**: the trials are in step (the same budget, the same units), and a trial that reaches
  its target stops being advanced (the kernels skip it) while the others go on; its trial row is
  that of its run alone (tested), its wall time its fair share of the batch's
  (:func:`gpude.implementations.device_loop.fair_shares`); the trace's times are the batch's clock.

Device memory per trial: ``(popsize + offspring + popsize + 4) D`` values (population and padding,
a Solis-Wets bias per individual, the step's vectors) plus the function's data (once per batch);
:meth:`setup` says how much before the run and fails with the largest D (or, for a batch, the
largest ``trials_per_launch``) that fits when it does not.
"""

from __future__ import annotations

import math
import sys
import threading
import time
import warnings
from functools import lru_cache

import numpy as np
from numba import cuda, float64

from ..algorithms.masw import build_masw_ops, first_unit, ls_choice, width
from ..algorithms.solis_wets import build_sw_ops
from ..errors import InvalidInputError, require_positive_int
from ..rng import seed_key
from .base import HostLoopImplementation, points_trace
from .masw_gpu_ls import ACCEPTED as LS_ACCEPTED, STEPS as LS_STEPS
from .masw_sequential import HEADER, build_cpu_masw

THREADS = 256
BUCKET = 4
MAX_BLOCKS = 4096
#: threads of a trial's replacement block (each ranks some of the popsize + offspring entries; one
#: on numba's simulator, where every thread is a Python thread: the same moves, tested with several)
RANK_THREADS = 128


def rank_threads() -> int:
    from ..gpu_runtime import simulator_enabled

    return 1 if simulator_enabled() else RANK_THREADS
#: trials per launch at most (the Solis-Wets decisions: a thread per trial in one block)
MAX_TRIALS_PER_LAUNCH = 1024
# device state vector
F_LS, RHO, SUCC, FAIL, USED, BUDGET, OUTCOME = range(7)

_KERNELS: dict = {}
_LOCK = threading.Lock()


def _blocks(dim, threads):
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
    def copy_rows(pop, moves):
        """pop[moves[r, 0]] <- pop[moves[r, 1]]."""
        r = cuda.blockIdx.x
        dst, src = pop[moves[r, 0]], pop[moves[r, 1]]
        j = cuda.blockIdx.y * NT + cuda.threadIdx.x
        while j < pop.shape[1]:
            dst[j] = src[j]
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
                   crossover=crossover, copy_rows=copy_rows, sw_plus=sw_plus,
                   choose_fathers=choose_fathers, replace_children=replace_children,
                   replace_batch=replace_batch, copy_moves=copy_moves,
                   ls_begin=ls_begin, ls_keep=ls_keep,
                   sw_after_plus=sw_after_plus, sw_minus=sw_minus, sw_after_minus=sw_after_minus,
                   sw_finish=sw_finish, sw_end=sw_end)
    with _LOCK:
        _KERNELS[key] = kernels
    return kernels


@lru_cache(maxsize=None)
def build_step_planner(dtype):
    """``plan(keys, active, unit, W, P, nam, k, off, dim, prob, lower, upper, cands, pairs, delta) ->
    distinct``: one GA step's counter draws (mothers, NAM candidates, mutations) of every active
    trial b (its own key) into the pinned buffers in one compiled call (a Python loop over the
    children cost ~0.2 ms per step): child c of trial b in row r = b off + c of cands and delta, its
    distance pairs in rows r nam .. r nam + nam - 1 of pairs, the individuals as rows of the batch's
    population (b P + i). Returns the number of distinct rows among each trial's distance pairs,
    summed over the trials (for the traffic count)."""
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


def bytes_per_trial(popsize: int, offspring: int, dim: int, itemsize: int) -> int:
    """Device bytes of one trial's arrays (without the function's data)."""
    vectors = popsize + offspring + popsize + 4  # population + padding, biases, ls (3), d
    return vectors * dim * itemsize


def _mode(name: str, value: str, modes: tuple[str, str], able: bool, needs: str) -> str:
    """``value`` if it is one of ``modes`` and, for the first (the fused one), ``able``; else a clear error."""
    if value not in modes:
        raise InvalidInputError(f"{name} must be {modes[0]!r} or {modes[1]!r}, got {value!r}")
    if value == modes[0] and not able:
        raise InvalidInputError(f"{name}={modes[0]!r} needs {needs}: use {name}={modes[1]!r}")
    return value


class MASWGPU(HostLoopImplementation):
    """MA-SW-Chains on the GPU (Lastra et al. 2015).

    Options
    -------
    threads : int
        Threads per block of the kernels over D (default: 256, or the next power of two >= D when
        D is smaller).
    ls_mode : {"fused", "steps"}
        How a Solis-Wets application runs: one cooperative launch that generates each candidate
        inside its evaluation (``"fused"``: the large-scale functions only), or kernels queued step
        by step with the decisions on the device (``"steps"``: any problem). Default: ``"fused"`` on
        the large-scale functions up to the D where it was measured faster
        (:data:`gpude.implementations.masw_gpu_ls.FUSED_MAX_DIM`), ``"steps"`` otherwise.
    ga_mode : {"fused", "separate"}
        How a GA step's children are evaluated: as the crossover makes them, in the same kernel
        (``"fused"``, :mod:`gpude.implementations.masw_gpu_ga`: the large-scale functions but
        Schwefel 1.2), or by the function's evaluator after they are written (``"separate"``: any
        problem; the default: on an H100 the fused form was 1.5x faster for L01 at D = 1e5, even at
        1e6-3e6, and 1.5-2.7x slower for C04 and C13 at 1e6-3e6). The same errors bit for bit.
    ls_unroll : {1, 4}
        Coordinates the fused local search's loop loads before computing them (more reads in flight
        per thread; the same run bit for bit). Default: 4 for pointwise terms and the rotated head,
        else 1 (:func:`gpude.implementations.masw_gpu_ls.fused_options`, from H100 measurements).
    ls_regen : bool
        The fused local search draws each step's perturbation again where the '-' candidate and the
        update need it instead of storing it (default False; the same run).
    ls_dual : bool
        The fused local search sums a step's '+' and '-' candidates in one pass over x, the bias and
        the shift (one draw of the perturbation), so that a failed '+' costs no second pass: about
        half the local search's reads and grid barriers where most steps fail (default: on wherever
        it applies; the same run bit for bit). Pointwise terms, the rotated head group,
        Schwefel 1.2's scan and, with ``ls_share_next``, Rosenbrock's next coordinate
        (:func:`gpude.implementations.masw_gpu_ls.dual_supported`); elsewhere it changes nothing, and
        ``ls_dual`` reads False after.
    ls_share_next : bool
        Rosenbrock's next coordinate (C13, C18, C20) in the fused local search: a coordinate's term
        takes its neighbour's value from the thread that computes it (shared memory) instead of
        drawing the neighbour's perturbation and reading its x, bias and shift again (default False:
        measured slower at large D; the same run bit for bit; other kinds: no effect, and
        ``ls_share_next`` reads False after).
    ls_min_blocks : int
        Blocks per SM the fused local search's kernel is compiled to keep resident (launch bounds,
        0-32; 0: none). Default: 2 for pointwise terms and the rotated head, 3 for Schwefel 1.2 from
        D = 1e6, else 0.
    trials_per_launch : int
        Trials a driver (``gpude run``) hands to :meth:`run_batch` at once (default 1, at most
        :data:`MAX_TRIALS_PER_LAUNCH`). The trials of a batch share every launch: the GA kernels, the
        evaluation of all their children (one range of rows), the steps mode's kernels and the
        evaluation of their candidates; the host makes each trial's decisions in turn and reads the
        batch's state once where a trial alone reads its own. In the fused mode each trial's
        Solis-Wets application is still its own cooperative launch (queued one after the other,
        one host read for all). Each trial makes the run it makes alone (its key, its decisions),
        stops at its own target, and is charged its fair share of the batch's wall time. Memory:
        ``trials_per_launch`` times a trial's (:func:`bytes_per_trial`).
    quiet : bool
        Do not print the memory line before the run.

    Notes
    -----
    After a run (or a batch) the runner's ``counts`` (the traffic counters of
    ``benchmarks/masw_perf.py``), ``ls_applications``, ``ls_improved`` and ``phase_s`` are the
    batch's: summed over its trials, except ``ga_steps`` (GA steps launched: one for all the trials)
    and ``phase_s`` (the batch's time in each phase).
    """

    needs_program = False  # the problem's evaluators (large-scale functions have no program)
    algorithm = "masw"
    name = "gpu"
    device = "gpu"

    def __init__(self, function, params, threads: int | None = None, ls_mode: str | None = None,
                 quiet: bool = False, trials_per_launch: int = 1, ga_mode: str | None = None,
                 ls_unroll: int | None = None, ls_min_blocks: int | None = None, ls_regen: bool = False,
                 layout: str | None = None, ls_dual: bool | None = None, ls_share_next: bool = False, **options):
        super().__init__(function, params, **options)
        require_positive_int("trials_per_launch", trials_per_launch)
        from .masw_gpu_ls import UNROLLS, dual_supported, fused_options, kind

        fusable = getattr(function, "streaming", False) and hasattr(function, "code")
        # the fused kernel's options measured best for the function's kind and D, unless given
        best = fused_options(function.code, function.dim) if fusable else {"ls_unroll": 1, "ls_min_blocks": 0}
        ls_unroll = best["ls_unroll"] if ls_unroll is None else ls_unroll
        ls_min_blocks = best["ls_min_blocks"] if ls_min_blocks is None else ls_min_blocks
        if ls_unroll not in UNROLLS or isinstance(ls_unroll, bool):
            raise InvalidInputError(f"ls_unroll must be one of {', '.join(map(str, UNROLLS))} (coordinates the fused "
                                    f"local search loads together), got {ls_unroll!r}")
        if isinstance(ls_min_blocks, bool) or not isinstance(ls_min_blocks, int) or not 0 <= ls_min_blocks <= 32:
            raise InvalidInputError(f"ls_min_blocks must be an integer in [0, 32] (resident blocks per SM asked of "
                                    f"the fused local search's compiler; 0: none), got {ls_min_blocks!r}")
        for name, value, what in (("ls_regen", ls_regen, "draws its perturbation again instead of storing it"),
                                  ("ls_dual", True if ls_dual is None else ls_dual,
                                   "sums a step's two candidates in one pass"),
                                  ("ls_share_next", ls_share_next, "takes a neighbour's value from the thread "
                                                                   "that computes it")):
            if not isinstance(value, bool):
                raise InvalidInputError(f"{name} must be True or False (the fused local search {what}), got {value!r}")
        self.ls_unroll, self.ls_min_blocks, self.ls_regen = ls_unroll, ls_min_blocks, ls_regen
        if trials_per_launch > MAX_TRIALS_PER_LAUNCH:
            raise InvalidInputError(f"masw/gpu runs at most {MAX_TRIALS_PER_LAUNCH} trials per launch (a "
                                    f"thread per trial in one block), got trials_per_launch={trials_per_launch}")
        self.trials_per_launch = trials_per_launch
        if ls_mode is None:
            from .masw_gpu_ls import default_ls_mode

            ls_mode = default_ls_mode(function.code, function.dim) if fusable else "steps"
        self.ls_mode = _mode("ls_mode", ls_mode, ("fused", "steps"), fusable,
                             f"a large-scale function (its terms are compiled into the local search's kernel); "
                             f"{function.fid} is evaluated through its own evaluator")
        # (in effect: the fused kernel, on a kind whose terms it can sum for both candidates at once)
        self.ls_share_next = ls_share_next and self.ls_mode == "fused" and kind(function.code) == "next"
        # ls_dual on by default wherever it applies (the same run, measured faster: docs/implementations.md)
        ls_dual = True if ls_dual is None else ls_dual
        self.ls_dual = ls_dual and self.ls_mode == "fused" and dual_supported(function.code, self.ls_share_next)
        from .masw_gpu_ga import fusable as ga_fusable

        # "fused" becomes ga_mode's default once a GPU has timed it (benchmarks/masw_perf.py --ga-fused-too)
        self.ga_mode = _mode("ga_mode", "separate" if ga_mode is None else ga_mode, ("fused", "separate"),
                             fusable and ga_fusable(function.code),
                             f"a large-scale function other than Schwefel 1.2 (its terms are compiled into the "
                             f"crossover, which evaluates each child as it makes it); {function.fid} is not one")
        if threads is None:
            threads = min(THREADS, 1 << max(0, (function.dim - 1).bit_length()))
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1 or threads & (threads - 1) \
                or threads > 1024:
            raise InvalidInputError(f"threads must be a power of two in [1, 1024], got {threads!r}")
        self.threads, self.quiet = threads, quiet
        from ..functions.streaming_gpu import LAYOUTS, position_layout

        has_perm = fusable and bool(function.evaluator_args(np.float64)[2])
        if layout is None:
            layout = "position" if has_perm and position_layout(function.code, has_perm) else "natural"
        if layout not in LAYOUTS:
            raise InvalidInputError(f"layout must be one of {', '.join(LAYOUTS)} (how a row holds a permuted "
                                    f"function's coordinates), got {layout!r}")
        if layout == "position" and not has_perm:
            raise InvalidInputError(f"layout='position' keeps a permuted large-scale function's rows in position "
                                    f"order; {function.fid} has no permutation: use layout='natural'")
        self.layout = layout
        self.cpu = build_cpu_masw(self.dtype)
        self.host_ops = build_masw_ops(self.dtype, "cpu")
        self.plan_step = build_step_planner(self.dtype)
        self.kernels = build_gpu_masw(self.dtype, params.popsize, threads, layout == "position")
        self.W = width(self.dim)
        self.blocks = _blocks(self.dim, threads)
        self._allocated = None

    def evaluations_per_generation(self) -> int:
        return self.params.cycle_evals

    def warmup_evaluations(self) -> int:
        """Into the first local search (its '+' and '-' candidates), so every kernel is compiled."""
        p = self.params
        return p.popsize + p.ssga_evals + min(p.ls_intensity, 4)

    def warmup(self) -> None:
        """Check that a batch of ``trials_per_launch`` fits before compiling (a trial of one)."""
        if self.trials_per_launch > 1:
            self.check_memory(self.trials_per_launch)
        super().warmup()

    # -- memory ------------------------------------------------------------------------------
    def check_memory(self, batch: int = 1):
        """Print a trial's device memory (and a batch's); fail clearly if the batch does not fit."""
        p, D = self.params, self.dim
        item = np.dtype(self.dtype).itemsize
        data = 3 * D * 8  # the function's data, allowed for once
        per_trial = bytes_per_trial(p.popsize, p.offspring, D, item)
        need = batch * per_trial + data
        try:
            free, total = cuda.current_context().get_memory_info()
        except Exception:  # the simulator has no memory info
            free = total = None
        if not self.quiet:
            have = f" of {free / 1e9:.2f} GB free ({total / 1e9:.1f} GB total)" if free else ""
            both = f"; {need / 1e9:.3f} GB for {batch} trials per launch" if batch > 1 else ""
            print(f"masw/gpu: {self.function.fid} D={D:,} popsize={p.popsize} offspring={p.offspring} "
                  f"{np.dtype(self.dtype).name}: {(per_trial + data) / 1e9:.3f} GB of device memory per "
                  f"trial{both}{have}", file=sys.stderr)
        if free is not None and need > 0.95 * free:
            fit_trials = int((0.95 * free - data) // per_trial)
            if batch > 1 and fit_trials >= 1:
                raise InvalidInputError(
                    f"masw/gpu needs {need / 1e9:.2f} GB of device memory for trials_per_launch={batch} "
                    f"({per_trial / 1e9:.3f} GB per trial at D={D:,}, popsize {p.popsize}, offspring "
                    f"{p.offspring}, {np.dtype(self.dtype).name}) but the GPU has {free / 1e9:.2f} GB free; "
                    f"the largest trials_per_launch that fits is {fit_trials}")
            one = per_trial + data
            per_dim = one / D
            fit = int(0.95 * free / per_dim)
            raise InvalidInputError(
                f"masw/gpu needs {one / 1e9:.2f} GB of device memory for D={D:,} (popsize "
                f"{p.popsize}, offspring {p.offspring}, {np.dtype(self.dtype).name}) but the GPU has "
                f"{free / 1e9:.2f} GB free; the largest D that fits is about {fit:,} (or use float32, "
                f"or a smaller popsize)")
        return need

    # -- set-up --------------------------------------------------------------------------------
    def setup(self, batch: int = 1):
        """Device arrays for ``batch`` trials (see the module docstring for their layout); per-run state."""
        p, T, D, P, off, nam = self.params, self.dtype, self.dim, self.params.popsize, self.params.offspring, \
            self.params.nam
        B = batch
        shape = (B, P, off, D)
        if self._allocated != shape:
            self.check_memory(B)
            self.batch = B
            dev, pinned = cuda.device_array, cuda.pinned_array
            self.stream = cuda.stream()
            # rows [0, B P): the populations; rows [B P, B (P + off)): the children (trial b's at B P + b off)
            self.pop = dev((B * (P + off), D), T)
            self.fit_all = dev(B * (P + off), np.float64)
            self.bias = dev((B * P, D), T)
            if self.ls_mode == "steps":
                # rows [0, B): the trials' x, [B, 2B): their '+' candidates, [2B, 3B): their '-' ones
                self.ls = dev((3 * B, D), T)
                self.x_ls = self.ls[:B]
            else:
                self.x_ls = dev((B, D), T)
            self.d = dev((B, D), T)
            self.st = dev((B, 8), np.float64)
            self.out = dev(3 * B, np.float64)
            # per-trial gates, then whether any trial's '+' and '-' evaluation is open (the evaluator's gates)
            self.gates = dev(2 * B + 2, np.int32)
            self.gate, self.gate_minus = self.gates[:B], self.gates[B:2 * B]
            self.gate_any, self.gate_minus_any = self.gates[2 * B:2 * B + 1], self.gates[2 * B + 1:]
            self.h_gates = pinned(2 * B + 2, np.int32)
            self.ls_threads = 32 * -(-B // 32)  # a thread per trial
            max_pairs = max(B * off * nam, B * (P - 1))
            self.partials = dev((max_pairs, self.blocks), np.float64)
            self.dists = dev(max_pairs, np.float64)
            options = {"threads": self.threads} if getattr(self.function, "streaming", False) else {}
            if self.layout == "position":
                options["layout"] = "position"
            self.ev = self.function.gpu_evaluator(T, max_rows=max(B * off, min(B * P, 64)), **options)
            # the coordinate each index of a row holds (a dummy the kernels do not read, in natural order)
            lay = self.function.evaluator_args(T)[1] if self.layout == "position" else np.zeros(1)
            self.h_lay = np.ascontiguousarray(lay, dtype=np.int32)
            self.d_lay = cuda.to_device(self.h_lay)
            if self.ga_mode == "fused":
                from .masw_gpu_ga import build_crossover_evaluation

                _, _, has_perm, _, m = self.function.evaluator_args(T)
                self.crossover_evaluate = build_crossover_evaluation(
                    self.function.code, D, m, has_perm and self.layout == "natural", self.ev.threads, T,
                    layout=self.layout == "position")
            self._eval_ranges = {}
            # small per-step inputs: pinned host arrays copied to fixed device arrays
            self.h_pairs = pinned((max_pairs, 2), np.int64)
            self.h_fit = pinned(B * (P + off), np.float64)
            self.h_dists = pinned(max_pairs, np.float64)
            self.d_pairs = dev((max_pairs, 2), np.int64)
            self.d_plan = dev((B * off, 3), np.int64)
            self.d_delta = dev(B * off, np.float64)
            self.d_moves = dev((B * off, 2), np.int64)
            # where each row (population slot or child) is stored in pop: an entering child swaps rows
            # with the slot it takes (no copy) where the evaluator reads rows through a map
            self.swap_rows = bool(getattr(self.ev, "row_map", False))
            self.h_identity = np.arange(B * (P + off), dtype=np.int64)
            self.d_where = cuda.to_device(self.h_identity)
            self.h_where = pinned(B * (P + off), np.int64)
            self.d_rank = dev(B * (P + off), np.int32)  # the replacement's ranks (scratch)
            self.rank_threads = rank_threads()
            # the GA steps of a cycle are queued without a host read: each has its own pinned inputs
            steps = -(-p.ssga_evals // off)
            self.h_cands = pinned((steps, B * off, nam + 2), np.int64)
            self.h_step_pairs = pinned((steps, B * off * nam, 2), np.int64)
            self.h_step_delta = pinned((steps, B * off), np.float64)
            for a in (self.h_cands, self.h_step_pairs, self.h_step_delta):
                a[:] = 0  # rows a step does not fill (a short step, a stopped trial) stay valid rows
            self.d_step_pairs = self.d_pairs[:B * off * nam]
            self.d_cands = dev((B * off, nam + 2), np.int64)
            self.d_nmoves = dev(B, np.int64)
            self.d_replaced = dev(B * P, np.int32)
            self.h_replaced = pinned(B * P, np.int32)
            self.h_no_replaced = pinned(B * P, np.int32)
            self.h_no_replaced[:] = 0
            self.d_tally = dev(2 * B, np.int64)
            self.h_tally = pinned(2 * B, np.int64)
            self.d_keys, self.h_keys = dev(B, np.uint64), pinned(B, np.uint64)
            self.d_active, self.h_active = dev(B, np.int32), pinned(B, np.int32)
            self.d_all = cuda.to_device(np.ones(B, np.int32))
            self.d_rows, self.h_rows = dev(B, np.int64), pinned(B, np.int64)
            self.d_fresh, self.h_fresh = dev(B, np.int32), pinned(B, np.int32)
            self.d_keep, self.h_keep = dev(B, np.int32), pinned(B, np.int32)
            self.h_st = pinned((B, 8), np.float64)
            if self.ls_mode == "fused":
                self._bind_fused_ls()
            self._prebind()
            self._allocated = shape
        self.fit = np.empty((B, P))
        self.rho = np.zeros((B, P))
        self.succ, self.fail = np.zeros((B, P), np.int64), np.zeros((B, P), np.int64)
        self.has_chain, self.non_improved = np.zeros((B, P), np.bool_), np.zeros((B, P), np.bool_)
        self.d_replaced.copy_to_device(self.h_no_replaced, stream=self.stream)
        self.d_where.copy_to_device(self.h_identity, stream=self.stream)
        self.d_tally.copy_to_device(np.zeros(2 * B, np.int64), stream=self.stream)
        self.ls_applications = self.ls_improved = 0
        self.phase_s = {"ga": 0.0, "ls": 0.0}
        # what the kernels did, for the traffic model of benchmarks/masw_perf.py (rows of D values),
        # summed over the batch's trials (ga_steps: the steps launched, one for all the trials)
        self.counts = dict(ga_steps=0, children=0, dist_pairs=0, dist_rows=0, parent_rows=0, moves=0, copies=0,
                           ls_evaluations=0, ls_steps=0, ls_accepted=0, new_chains=0, fused_children=0)

    def _bind_fused_ls(self):
        """The cooperative Solis-Wets kernel, its grid and a pre-marshalled launch per trial (its x,
        perturbation and state rows)."""
        from .masw_gpu_ls import build_sw_application, cooperative_blocks
        from ..prebound import PreboundLaunch

        f, T, D = self.function, self.dtype, self.dim
        _, _, has_perm, _, m = f.evaluator_args(T)
        position = self.layout == "position"  # the function without its permutation; lay in perm's place
        kernel = build_sw_application(f.code, D, m, has_perm and not position, self.threads, T, self.ls_unroll,
                                      self.ls_min_blocks, self.ls_regen, layout=position, dual=self.ls_dual,
                                      share_next=self.ls_share_next)
        self.sw_kernel = kernel
        o, perm, M = self.ev.data
        perm = self.d_lay if position else perm

        def args(b, partials):
            return [self.x_ls[b], self.bias, np.int64(0), self.d[b], self.st[b], np.uint64(0), np.int64(0),
                    np.int64(self.W), o, perm, M, partials, float(self.lower), float(self.upper)]

        grid = cooperative_blocks(kernel, args(0, cuda.device_array((2, 2, 4), np.float64)), self.threads, D)
        # the applications run one after the other on one stream: they share the partials
        self.ls_partials = cuda.device_array((2, grid + 1, 4), np.float64)
        self.ls_grid = grid
        self.sw_applications = [PreboundLaunch(kernel, tuple(args(b, self.ls_partials)), grid, self.threads,
                                               self.stream, variable={"row": 2, "key": 5, "unit": 6})
                                for b in range(self.batch)]

    def _prebind(self):
        """Pre-marshalled launches of one Solis-Wets step and of a full GA step (the hot loops)."""
        from ..prebound import PreboundLaunch

        k, s, nb, nt, B = self.kernels, self.stream, self.blocks, self.threads, self.batch
        lo, hi = self.lower, self.upper
        if self.ls_mode == "steps":
            rows, tb = self.d_rows, self.ls_threads
            self.step_launches = {
                "plus": PreboundLaunch(k["sw_plus"], (self.ls, self.bias, rows, self.d, self.st, self.gate,
                                                      self.d_keys, np.int64(0), np.int64(self.W), lo, hi,
                                                      self.d_lay),
                                       (nb, B), nt, s, variable={"unit": 7}),
                "after_plus": PreboundLaunch(k["sw_after_plus"], (self.st, self.out, self.gate, self.gate_minus,
                                                                  self.gate_minus_any), 1, tb, s),
                "minus": PreboundLaunch(k["sw_minus"], (self.ls, self.bias, rows, self.d, self.gate_minus, lo, hi),
                                        (nb, B), nt, s),
                "after_minus": PreboundLaunch(k["sw_after_minus"], (self.st, self.out, self.gate_minus), 1, tb, s),
                "finish": PreboundLaunch(k["sw_finish"], (self.ls, self.bias, rows, self.d, self.st, self.gate),
                                         (nb, B), nt, s),
                "end": PreboundLaunch(k["sw_end"], (self.st, self.gate, self.gate_minus, self.gate_any,
                                                    self.gate_minus_any), 1, tb, s),
            }
            # every trial's candidate in one launch, run while some trial's gate is open
            self.eval_plus = self.ev.prebound(self.ls, self.out, B, B, s, self.gate_any)
            self.eval_minus = self.ev.prebound(self.ls, self.out, 2 * B, B, s, self.gate_minus_any)
        # a full GA step of every trial: off * nam distances, off children, their evaluation
        p, P, off = self.params, self.params.popsize, self.params.offspring
        npairs = B * off * p.nam
        per = np.int64(off * p.nam)
        self.full_step = {
            "dist_partial": PreboundLaunch(k["dist_partial"], (self.pop, self.d_where, self.d_pairs, per, per,
                                                               self.d_active, self.partials), (npairs, nb), nt, s),
            "dist_final": PreboundLaunch(k["dist_final"], (self.partials, np.int64(nb), self.dists),
                                         npairs, nt, s),
            "choose_fathers": PreboundLaunch(k["choose_fathers"], (self.d_cands, self.dists, self.d_plan,
                                                                   np.int64(off), np.int64(p.nam), np.int64(off),
                                                                   np.int64(B)), -(-B * off // 32), 32, s),
            "crossover": PreboundLaunch(k["crossover"], (self.pop, self.d_where, np.int64(B * P), self.d_plan,
                                                         self.d_delta, self.d_keys, np.int64(0), np.int64(self.W),
                                                         float(p.alpha), float(lo), float(hi), np.int64(off),
                                                         np.int64(off), self.d_active, self.d_lay),
                                        (B * off, nb), nt, s, variable={"unit": 6}),
            "replace_children": PreboundLaunch(k["replace_batch"], (self.fit_all, np.int64(P), np.int64(off),
                                                                    np.int64(off), self.d_plan, self.d_moves,
                                                                    self.d_nmoves, self.d_replaced, self.d_tally,
                                                                    self.d_active, self.d_where,
                                                                    np.int32(self.swap_rows), self.d_rank),
                                                B, self.rank_threads, s),
            "copy_moves": PreboundLaunch(k["copy_moves"], (self.pop, self.d_moves, self.d_nmoves, np.int64(off)),
                                         (B * off, nb), nt, s),
        }
        if self.ga_mode == "fused":
            self.full_step["crossover_evaluate"] = PreboundLaunch(
                self.crossover_evaluate, self._crossover_evaluate_args(off), (B * off, self.ev.blocks),
                self.ev.threads, s, variable={"unit": 6})

    def _crossover_evaluate_args(self, k, unit=0):
        """The arguments of the fused crossover (:mod:`masw_gpu_ga`) for k children per trial from
        unit ``unit``."""
        p, B, P, off = self.params, self.batch, self.params.popsize, self.params.offspring
        o, perm, M = self.ev.data
        perm = self.d_lay if self.layout == "position" else perm  # (the draws' coordinates: masw_gpu_ga)
        return (self.pop, self.d_where, np.int64(B * P), self.d_plan, self.d_delta, self.d_keys, np.int64(unit),
                np.int64(self.W), float(p.alpha), float(self.lower), float(self.upper), np.int64(k), np.int64(off),
                self.d_active, self.ev.partials, self.ev.counters, self.fit_all, o, perm, M)

    def _launch(self, name, grid, block, *args):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.kernels[name][grid, block, self.stream](*args)

    def _rows(self):
        """The evaluator's row map argument (none for an evaluator that reads rows in place)."""
        return {"rows": self.d_where} if self.swap_rows else {}

    def _evaluate_rows(self, row0, n):
        for r in range(row0, row0 + n, self.ev.max_rows):
            self.ev.launch(self.pop, self.fit_all, r, min(self.ev.max_rows, row0 + n - r), self.stream,
                           **self._rows())

    def _evaluate_children(self, k, active):
        """The first k children of every active trial: one range of rows, from the first active
        trial's children to the last's (a stopped trial's in between are evaluated, not used)."""
        P, off, B = self.params.popsize, self.params.offspring, self.batch
        row0 = B * P + active[0] * off
        n = (active[-1] - active[0]) * off + k
        launch = self._eval_ranges.get((row0, n))
        if launch is None:
            launch = self._eval_ranges[row0, n] = self.ev.prebound(self.pop, self.fit_all, row0, n, self.stream,
                                                                   **self._rows())
        launch()

    def _chain_distances(self, chains):
        """Squared Euclidean distances from individual i of trial b to the trial's others, for each
        (b, i) in ``chains``: an array (len(chains), P - 1), in one launch and one host read."""
        P = self.params.popsize
        n = len(chains) * (P - 1)
        h = self.h_pairs
        for c, (b, i) in enumerate(chains):
            rows = h[c * (P - 1):(c + 1) * (P - 1)]
            rows[:, 0] = b * P + i
            rows[:, 1] = [b * P + q for q in range(P) if q != i]
        self.d_pairs[:n].copy_to_device(h[:n], stream=self.stream)
        per = np.int64(P - 1)
        self._launch("dist_partial", (n, self.blocks), self.threads, self.pop, self.d_where, self.d_pairs, per, per,
                     self.d_all, self.partials)
        self._launch("dist_final", n, self.threads, self.partials, np.int64(self.blocks), self.dists)
        self.dists[:n].copy_to_host(self.h_dists[:n], stream=self.stream)
        self.stream.synchronize()
        return self.h_dists[:n].reshape(len(chains), P - 1)

    def _set_active(self, active):
        """The trials the next generation advances (the kernels skip the others' work)."""
        self.h_active[:] = 0
        self.h_active[list(active)] = 1
        self.d_active.copy_to_device(self.h_active, stream=self.stream)

    def initialize(self):
        """Every trial's initial population and its errors; each trial's best."""
        p, B, P = self.params, self.batch, self.params.popsize
        self.d_keys.copy_to_device(self.h_keys, stream=self.stream)
        self._launch("init_population", (self.blocks, B), self.threads, self.pop, self.d_keys, p.strata, self.W,
                     self.lower, self.upper, self.d_lay)
        self._evaluate_rows(0, B * P)
        self.fit_all.copy_to_host(self.h_fit, stream=self.stream)
        self.stream.synchronize()
        self.fit[:] = self.h_fit[:B * P].reshape(B, P)
        self.unit = first_unit(p.popsize)
        return self.fit.min(axis=1)

    # -- the GA phase ------------------------------------------------------------------------
    def ga_step(self, k, step, active):
        """One GA step of k children per active trial, queued without a host round trip: the host
        draws every trial's mothers, NAM candidates and mutations (counter draws: no device data
        needed) into its pinned buffers for this step of the cycle; the device computes the
        distances, picks the fathers, makes and evaluates the children and replaces
        (``replace_batch``, a block per trial), for all the trials in one launch each. The host
        reads the populations' errors once, after the GA phase (:meth:`_read_ga_phase`)."""
        p, P, nam, off, B = self.params, self.params.popsize, self.params.nam, self.params.offspring, self.batch
        cands, pairs, delta = self.h_cands[step], self.h_step_pairs[step], self.h_step_delta[step]
        distinct = self.plan_step(self.h_keys, self.h_active, np.int64(self.unit), np.int64(self.W), P, nam, k,
                                  off, self.dim, p.mutation_prob, float(self.lower), float(self.upper), cands, pairs,
                                  delta)
        counts = self.counts
        counts["ga_steps"] += 1
        counts["children"] += k * len(active)
        counts["dist_pairs"] += k * nam * len(active)
        counts["dist_rows"] += distinct
        s = self.stream
        self.d_step_pairs.copy_to_device(pairs, stream=s)
        self.d_cands.copy_to_device(cands, stream=s)
        self.d_delta.copy_to_device(delta, stream=s)
        fused = self.ga_mode == "fused"
        if fused:
            counts["fused_children"] += k * len(active)
        if k == off:
            g = self.full_step
            g["dist_partial"].launch()
            g["dist_final"].launch()
            g["choose_fathers"].launch()
            if fused:
                g["crossover_evaluate"].launch(unit=np.int64(self.unit))
            else:
                g["crossover"].launch(unit=np.int64(self.unit))
                self._evaluate_children(k, active)
            g["replace_children"].launch()
            if not self.swap_rows:
                g["copy_moves"].launch()
        else:
            nb, nt, npairs = self.blocks, self.threads, B * off * nam
            per, o64, k64 = np.int64(off * nam), np.int64(off), np.int64(k)
            self._launch("dist_partial", (npairs, nb), nt, self.pop, self.d_where, self.d_pairs, per,
                         np.int64(k * nam), self.d_active, self.partials)
            self._launch("dist_final", npairs, nt, self.partials, np.int64(nb), self.dists)
            self._launch("choose_fathers", -(-B * off // 32), 32, self.d_cands, self.dists, self.d_plan, k64,
                         np.int64(nam), o64, np.int64(B))
            if fused:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    self.crossover_evaluate[(B * k, self.ev.blocks), self.ev.threads, s](
                        *self._crossover_evaluate_args(k, self.unit))
            else:
                self._launch("crossover", (B * k, nb), nt, self.pop, self.d_where, np.int64(B * P), self.d_plan,
                             self.d_delta,
                             self.d_keys, np.int64(self.unit), np.int64(self.W), float(p.alpha),
                             float(self.lower), float(self.upper), k64, o64, self.d_active, self.d_lay)
                self._evaluate_children(k, active)
            self._launch("replace_batch", B, self.rank_threads, self.fit_all, np.int64(P), k64, o64, self.d_plan,
                         self.d_moves, self.d_nmoves, self.d_replaced, self.d_tally, self.d_active, self.d_where,
                         np.int32(self.swap_rows), self.d_rank)
            if not self.swap_rows:
                self._launch("copy_moves", (B * off, nb), nt, self.pop, self.d_moves, self.d_nmoves, o64)
        self.unit += k

    def _read_ga_phase(self):
        """The populations' errors after the GA phase, and the slots it replaced (their chains end)."""
        P, B, s = self.params.popsize, self.batch, self.stream
        self.fit_all.copy_to_host(self.h_fit, stream=s)
        self.d_replaced.copy_to_host(self.h_replaced, stream=s)
        self.d_tally.copy_to_host(self.h_tally, stream=s)
        self.d_replaced.copy_to_device(self.h_no_replaced, stream=s)
        s.synchronize()
        self.fit[:] = self.h_fit[:B * P].reshape(B, P)
        gone = self.h_replaced.reshape(B, P).astype(bool)
        self.has_chain[gone] = False
        self.non_improved[gone] = False
        self.counts["moves"] = int(self.h_tally[0::2].sum())
        self.counts["copies"] = 0 if self.swap_rows else self.counts["moves"]  # (swapped rows move no data)
        self.counts["parent_rows"] = int(self.h_tally[1::2].sum())

    # -- the local search phase ----------------------------------------------------------------
    def local_search(self, budget, active):
        """One Solis-Wets application of ``budget`` evaluations per active trial, all queued
        together (steps: one launch per kernel for all; fused: one cooperative launch per trial);
        one host read of the trials' states at the end (steps: every ``ceil(remaining / 2)`` steps)."""
        p, P, B = self.params, self.params.popsize, self.batch
        unit = self.unit
        self.unit += 1 + p.ls_intensity
        chosen, fresh = {}, []
        for b in active:
            i = ls_choice(self.fit[b], self.non_improved[b])
            if i < 0:
                i = int(self.cpu["below"](self.h_keys[b], self.cpu["ctr"](unit, 0, self.W), P))
            chosen[b] = i
            if not self.has_chain[b, i]:
                fresh.append(b)
        if fresh:
            self.counts["new_chains"] += len(fresh)
            for b, d2 in zip(fresh, self._chain_distances([(b, chosen[b]) for b in fresh])):
                i = chosen[b]
                d = math.sqrt(d2.min()) / self.dim
                self.rho[b, i] = min(p.rho_max, d / 2.0)
                self.succ[b, i] = self.fail[b, i] = 0
        h, s = self.h_st, self.stream
        h[:] = 0.0
        self.h_rows[:], self.h_fresh[:], self.h_gates[:] = -1, 0, 0
        for b, i in chosen.items():
            self.h_rows[b] = b * P + i
            self.h_fresh[b] = b in fresh
            h[b, F_LS], h[b, RHO], h[b, SUCC], h[b, FAIL] = self.fit[b, i], self.rho[b, i], self.succ[b, i], \
                self.fail[b, i]
            h[b, BUDGET] = budget
            self.h_gates[b] = 1
        self.h_gates[2 * B] = 1  # some trial's '+' evaluation is open
        self.d_rows.copy_to_device(self.h_rows, stream=s)
        self.d_fresh.copy_to_device(self.h_fresh, stream=s)
        self.st.copy_to_device(h, stream=s)
        self._launch("ls_begin", (self.blocks, B), self.threads, self.pop, self.d_where, self.x_ls, self.bias,
                     self.d_rows, self.d_fresh)
        if self.ls_mode == "fused":
            for b, i in chosen.items():
                self.sw_applications[b].launch(row=np.int64(b * P + i), key=self.h_keys[b], unit=np.int64(unit + 1))
            self.st.copy_to_host(h, stream=s)
            s.synchronize()
            self.counts["ls_steps"] += int(sum(h[b, LS_STEPS] for b in chosen))
            self.counts["ls_accepted"] += int(sum(h[b, LS_ACCEPTED] for b in chosen))
        else:
            self.gates.copy_to_device(self.h_gates, stream=s)
            L = self.step_launches
            t, used = 0, 0
            while used < budget:  # the trial that used the fewest evaluations sets the steps queued
                for _ in range(max(1, (budget - used + 1) // 2)):
                    L["plus"].launch(unit=np.int64(unit + 1 + t))
                    self.eval_plus()
                    L["after_plus"].launch()
                    L["minus"].launch()
                    self.eval_minus()
                    L["after_minus"].launch()
                    L["finish"].launch()
                    L["end"].launch()
                    t += 1
                self.st.copy_to_host(h, stream=s)
                s.synchronize()
                used = min(int(h[b, USED]) for b in chosen)
        used = {b: int(h[b, USED]) for b in chosen}
        self.counts["ls_evaluations"] += sum(used.values())
        self.h_keep[:] = 0
        for b, i in chosen.items():
            self.h_keep[b] = self.keep(b, i, float(h[b, F_LS]), float(h[b, RHO]), int(h[b, SUCC]), int(h[b, FAIL]))
        if self.h_keep.any():  # the kept results into their rows (the device's copy of the errors too)
            self.d_keep.copy_to_device(self.h_keep, stream=s)
            self._launch("ls_keep", (self.blocks, B), self.threads, self.pop, self.d_where, self.fit_all, self.x_ls,
                         self.d_rows, self.d_keep, self.st)
        return used

    def keep(self, b, i, f, rho, succ, fail):
        """Realea's rule on the host (as masw/sequential); whether trial b's result replaces individual i."""
        self.ls_applications += 1
        if f < self.fit[b, i] and self.fit[b, i] - f >= self.params.improvement:
            self.fit[b, i] = f
            self.rho[b, i], self.succ[b, i], self.fail[b, i] = rho, succ, fail
            self.has_chain[b, i], self.non_improved[b, i] = True, False
            self.ls_improved += 1
            return True
        self.has_chain[b, i], self.non_improved[b, i] = False, True
        return False

    def generation(self, n, active):
        """One cycle of every active trial (n evaluations at most, the same for all: they are in
        step); each trial's evaluations used."""
        p = self.params
        ga = min(p.ssga_evals, n)
        used = 0
        t0 = time.perf_counter()
        step = 0
        while used < ga:
            k = min(p.offspring, ga - used)
            self.ga_step(k, step, active)
            used += k
            step += 1
        if step:
            self._read_ga_phase()
        t1 = time.perf_counter()
        spent = {b: used for b in active}
        if n - used > 0:
            for b, u in self.local_search(min(p.ls_intensity, n - used), active).items():
                spent[b] += u
        # each phase ends with a host read of its results, so these are the phases' GPU times too
        self.phase_s["ga"] += t1 - t0
        self.phase_s["ls"] += time.perf_counter() - t1
        return spent

    # -- the run loop --------------------------------------------------------------------------
    def run(self, seed: int):
        return self.run_batch([seed])[0]

    def run_batch(self, seeds):
        """One trial per seed, all advanced together: each makes the run it makes alone (the host
        loop of :class:`HostLoopImplementation` per trial), stops at its own target or budget (its
        population is no longer advanced), and is charged its fair share of the batch's wall time
        (:func:`gpude.implementations.device_loop.fair_shares`)."""
        from .device_loop import fair_shares, times_run

        seeds = list(seeds)
        p, B = self.params, len(seeds)
        if B == 0:
            return []
        self.setup(B)
        self.h_keys[:] = [seed_key(s) for s in seeds]
        per_generation = self.evaluations_per_generation()
        deadline = math.inf if p.max_time_s is None else p.max_time_s
        traces = [[] for _ in range(B)]
        fes, gens, best = [min(p.popsize, p.max_fes)] * B, [0] * B, [math.inf] * B
        hit_fes, ends, stopped = [None] * B, [None] * B, [None] * B

        def record(b, now):
            traces[b].append((gens[b], fes[b], best[b], now))
            if best[b] <= p.target:
                hit_fes[b], ends[b], stopped[b] = fes[b], now, "target"
            elif fes[b] >= p.max_fes:
                ends[b], stopped[b] = now, "budget"

        t0 = time.perf_counter()
        self._set_active(range(B))
        initial = self.initialize()
        now = time.perf_counter() - t0
        for b in range(B):
            best[b] = float(initial[b])
            record(b, now)
        active = [b for b in range(B) if stopped[b] is None]
        while active and now < deadline:
            if len(active) < int(self.h_active.sum()):
                self._set_active(active)
            n = min(per_generation, p.max_fes - fes[active[0]])  # the same for all: they are in step
            spent = self.generation(n, active)
            now = time.perf_counter() - t0
            for b in active:
                gens[b] += 1
                fes[b] += spent[b]
                best[b] = float(self.fit[b].min())
                record(b, now)
            active = [b for b in range(B) if stopped[b] is None]
        for b in active:
            stopped[b] = "time"
        best_x = [self.best_vector(b) for b in range(B)]
        wall = time.perf_counter() - t0
        self.teardown()
        if p.max_time_s is not None:  # every trial had the whole budget, concurrently: charged the time it ran
            shares = times_run(ends, wall)
            charged = shares
        else:
            shares = fair_shares(ends, wall)
            # up to its end (what a trial alone records at its hit), without the final copies' share
            charged = shares - (wall - max(min(e, wall) if e is not None else wall for e in ends)) / B
        results = []
        for b, seed in enumerate(seeds):
            trace = points_trace(traces[b])
            hit = stopped[b] == "target"
            results.append(self._result(
                seed, best[b], best_x[b], fes[b], gens[b], shares[b], hit_fes[b],
                float(charged[b]) if hit else None, trace, stopped[b],
                options={**self.run_options(), "trials_per_launch": B}, batch_wall_time_s=wall))
        return results

    def run_options(self) -> dict:
        """The options a result records beside ``trials_per_launch`` (the batch's size): how the run was
        made. They change its time, not its result (each is the same run bit for bit), so that rows of
        one cell made two ways can be told apart, e.g. before and after a default changes."""
        options = {"ls_mode": self.ls_mode, "ga_mode": self.ga_mode, "layout": self.layout, "threads": self.threads}
        if self.ls_mode == "fused":
            options.update(ls_unroll=self.ls_unroll, ls_min_blocks=self.ls_min_blocks, ls_regen=self.ls_regen,
                           ls_dual=self.ls_dual, ls_share_next=self.ls_share_next)
        return options

    def _natural(self, rows: np.ndarray) -> np.ndarray:
        """Rows in the function's coordinate order (``layout="position"`` keeps them in position order)."""
        if self.layout != "position":
            return rows
        out = np.empty_like(rows)
        out[..., self.h_lay] = rows
        return out

    def _stored(self, rows) -> np.ndarray:
        """Rows (population slots b P + i) read from where they are stored."""
        self.d_where.copy_to_host(self.h_where, stream=self.stream)
        self.stream.synchronize()
        return np.stack([self.pop[int(self.h_where[r])].copy_to_host() for r in rows])

    def population(self, trial: int = 0):
        """Copies of trial ``trial``'s final population and its errors (float64), last batch."""
        P = self.params.popsize
        return self._natural(self._stored(range(trial * P, (trial + 1) * P))), self.fit[trial].copy()

    def best_vector(self, trial: int = 0):
        i = int(np.argmin(self.fit[trial]))
        return self._natural(self._stored([trial * self.params.popsize + i])[0])
