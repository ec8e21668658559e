"""The kernel of ``jso/block``: each trial's whole jSO (or L-SHADE) run in one thread block.

Block b of the launch is trial b; a warp is an individual (as ``de/block``): the block's W warps share
a generation's children, each warp drawing its child's parameters and partners, building the trial
vector over its lanes in shared memory and evaluating it with the function's warp evaluator
(:func:`gpude.functions.gpu.make_block_evaluator` with ``warp=True``), so every function of the suite
runs. What jSO adds to DE's generation runs inside the block, between barriers:

* the ranking of the population (for the p-best choice and the population size reduction): each
  thread ranks its individuals by counting, ties by index, from the errors in shared memory;
* the selection's bookkeeping in index order on thread 0 (successes, the archive's slots, the
  memory's Lehmer means, the FE count and the planned population size), which keeps the sequential
  order of the specification without atomics;
* the copies (parents into the archive, winners into the population), by all threads, coalesced;
* the population size reduction through an index list (logical individual -> physical row), so
  removing individuals moves no vector.

The counter layout, the ordering rules and the arithmetic are :mod:`gpude.algorithms.jso`'s (its
operators, compiled for CUDA), so a seed makes ``jso/sequential``'s run to the rounding of the
function evaluation.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import cuda

from ..gpu_runtime import simulator_enabled
from .device_loop import NO_HIT, mark_hit

#: per-trial int64 state: NP, archive count, FEs, memory position
ST_NP, ST_A, ST_NFES, ST_POS = range(4)
INT_STATE = 4
#: per-trial float64 state: p, best error
FS_P, FS_BEST = range(2)
FLOAT_STATE = 2
#: a selection's outcome in the int32 scratch: the parent stays / the child replaces it without a
#: success; values >= 0: a success, whose parent goes to that archive row
KEEP_PARENT, TAKE_CHILD = -1, -2


def dynamic_shared_bytes(np_init: int, archive_rows: int) -> int:
    """Dynamic shared memory of a block: errors, children's errors, F, CR (float64, NP_init each), then
    the index list, the ranking and the selection's outcomes (int32, NP_init each) and the archive's
    index list and last writers (int32, archive rows each)."""
    return 8 * 4 * int(np_init) + 4 * (3 * int(np_init) + 2 * int(archive_rows))


def c_round(x):
    """C's round() for x >= 0 (half away from zero), as Brest's and Tanabe's code round."""
    return math.floor(x + 0.5)


#: steps a timing run may leave out (benchmarks/jso_prototype.py), to see what a generation's time is made of
SKIP_RANK, SKIP_DRAW, SKIP_BOOK, SKIP_COPY = 1, 2, 4, 8


def build_jso_block_kernel(warp_evaluate, ops, dtype, warps: int, buf: int, dim: int, settings, skip: int = 0):
    """The kernel for one (function build, D, dtype, warps, settings).

    ``ops`` is ``build_jso_ops(dtype, "cuda")``; ``settings`` a tuple of the run's compile-time
    constants: (NP_init, NP_min, H, archive rows, arc_rate, p_max, p_min, M_F0, M_CR0,
    last_slot_fixed, weighted_F, schedules, averaged_memory).
    """
    T = np.dtype(dtype).type
    (NPI, NPMIN, H, ACAP, ARC_RATE, P_MAX, P_MIN, MF0, MCR0, LAST_FIXED, WEIGHTED_F, SCHEDULES,
     AVERAGED) = settings
    NPI, NPMIN, H, ACAP = int(NPI), int(NPMIN), int(H), int(ACAP)
    W, D, BUF = int(warps), int(dim), int(buf)
    P = 32 * W
    SKIP = int(skip)
    SIM = simulator_enabled()
    INF = math.inf
    CLAMP = 1e-8
    draw_child, child_value, archive_slot, archive_removal, init_value, planned = (
        ops.draw_child, ops.child_value, ops.archive_slot, ops.archive_removal, ops.init_value,
        ops.planned_popsize)
    lehmer_add, p_at = ops.lehmer_add, ops.p_at
    I0 = 8 * NPI  # the int32 part of the dynamic shared memory starts after the 4 NP_init float64

    @cuda.jit(device=True, inline=True)
    def warp_barrier():
        if SIM:
            cuda.syncthreads()
        else:
            cuda.syncwarp(0xFFFFFFFF)

    # a block's threads share an SM's 65,536 registers, allocated in units of 8 a thread
    options = {} if SIM else {"max_registers": max(32, min(255, (65536 // P) // 8 * 8))}

    @cuda.jit(**options)
    def kernel(pop, tb, arch, order_g, ax_g, mem, st, fst, fit, keys, lower, upper, shift, rot_t, perm,
               trace, hit_gen, gstate, target, max_fes, g_first, g_last):
        dynf = cuda.shared.array(0, numba.float64)
        dyni = cuda.shared.array(0, numba.int32)
        fitc, ft, Fs, CRs = dynf[0:NPI], dynf[NPI:2 * NPI], dynf[2 * NPI:3 * NPI], dynf[3 * NPI:4 * NPI]
        order, srt, jobs = dyni[I0:I0 + NPI], dyni[I0 + NPI:I0 + 2 * NPI], dyni[I0 + 2 * NPI:I0 + 3 * NPI]
        ax, last = dyni[I0 + 3 * NPI:I0 + 3 * NPI + ACAP], dyni[I0 + 3 * NPI + ACAP:I0 + 3 * NPI + 2 * ACAP]
        memf = cuda.shared.array((2, H), numba.float64)
        shi = cuda.shared.array(8, numba.int64)
        shf = cuda.shared.array(4, numba.float64)
        xs_all = cuda.shared.array((W, D), T)
        bufs = cuda.shared.array((W, 2, BUF), T)
        reds = cuda.shared.array((W, 4, 32), T)
        tid, b = cuda.threadIdx.x, cuda.blockIdx.x
        lane, w = tid % 32, tid // 32
        if b >= keys.shape[0]:
            return
        xs, buf_a, buf_z, red = xs_all[w], bufs[w, 0], bufs[w, 1], reds[w]
        MF, MCR = memf[0], memf[1]
        key = keys[b]
        xpop, xtb, xarch = pop[b], tb[b], arch[b]

        if g_first == 1:
            t = tid
            while t < trace.shape[1]:
                trace[b, t] = INF
                t += P
            t = tid
            while t < NPI:
                order_g[b, t] = t
                t += P
            t = tid
            while t < ACAP:
                ax_g[b, t] = t
                t += P
            if tid == 0:
                hit_gen[b] = NO_HIT
                for h in range(H):
                    mem[b, 0, h] = MF0
                    mem[b, 1, h] = MCR0
            cuda.syncthreads()
            for k in range((NPI + W - 1) // W):
                i = w + k * W
                if i < NPI or SIM:
                    ii = min(i, NPI - 1)
                    j = lane
                    while j < D:
                        xs[j] = init_value(key, ii, j, lower, upper)
                        j += 32
                    warp_barrier()
                    f = warp_evaluate(xs, buf_a, buf_z, red, shift, rot_t, perm, lane)
                    if f < CLAMP:
                        f = 0.0
                    if i < NPI:
                        j = lane
                        while j < D:
                            xpop[ii, j] = xs[j]
                            j += 32
                        if lane == 0:
                            fit[b, ii] = f
                    warp_barrier()
            cuda.syncthreads()
            if tid == 0:
                best = INF
                for i in range(NPI):
                    best = min(best, fit[b, i])
                st[b, ST_NP], st[b, ST_A], st[b, ST_NFES], st[b, ST_POS] = NPI, 0, NPI, 0
                fst[b, FS_P], fst[b, FS_BEST] = P_MAX, best
                trace[b, 0] = best
                if best <= target:
                    mark_hit(hit_gen, b, 0)
            cuda.syncthreads()

        # the trial's state into shared memory
        if tid == 0:
            shi[0], shi[1], shi[2], shi[3] = st[b, ST_NP], st[b, ST_A], st[b, ST_NFES], st[b, ST_POS]
            shf[0], shf[1] = fst[b, FS_P], fst[b, FS_BEST]
            for h in range(H):
                MF[h] = mem[b, 0, h]
                MCR[h] = mem[b, 1, h]
        t = tid
        while t < NPI:
            fitc[t] = fit[b, t]
            order[t] = order_g[b, t]
            t += P
        t = tid
        while t < ACAP:
            ax[t] = ax_g[b, t]
            t += P
        g = g_first
        cuda.syncthreads()
        while g <= g_last:
            NP, A, nfes = shi[0], shi[1], shi[2]
            if nfes >= max_fes or hit_gen[b] <= g - 1:
                break
            n = min(NP, max_fes - nfes)
            p_num = max(2, int(math.floor(shf[0] * NP + 0.5)))
            # 1. rank the population (ties by index)
            k = tid
            while k < NP:
                fk, r = fitc[k], 0
                if SKIP & SKIP_RANK:
                    r = k
                else:
                    for j in range(NP):
                        fj = fitc[j]
                        if fj < fk or (fj == fk and j < k):
                            r += 1
                srt[r] = k
                k += P
            cuda.syncthreads()
            # 2. children, a warp each
            for k in range((n + W - 1) // W):
                i = w + k * W
                if i < n or SIM:
                    ii = min(i, n - 1)
                    if SKIP & SKIP_DRAW:
                        F, Fw, CR, pb, r1, r2, jr = 0.5, 0.5, 0.9, 0, (ii + 1) % NP, (ii + 2) % NP, 0
                    else:
                        F, Fw, CR, pb, r1, r2, jr = draw_child(key, g, ii, NP, A, p_num, MF, MCR, nfes, max_fes)
                    row_i, row_p, row_1 = order[ii], order[srt[pb]], order[r1]
                    in_pop = r2 < NP
                    row_2 = order[r2] if in_pop else ax[r2 - NP]
                    j = lane
                    while j < D:
                        x2 = xpop[row_2, j] if in_pop else xarch[row_2, j]
                        xs[j] = child_value(key, g, ii, j, jr, F, Fw, CR, xpop[row_i, j], xpop[row_p, j],
                                            xpop[row_1, j], x2, lower, upper)
                        j += 32
                    warp_barrier()
                    f = warp_evaluate(xs, buf_a, buf_z, red, shift, rot_t, perm, lane)
                    if f < CLAMP:
                        f = 0.0
                    if i < n:
                        j = lane
                        while j < D:
                            xtb[ii, j] = xs[j]
                            j += 32
                        if lane == 0:
                            ft[ii] = f
                            Fs[ii] = F
                            CRs[ii] = CR
                    warp_barrier()
            cuda.syncthreads()
            # 3.-5. the selection's bookkeeping in index order
            if SKIP & SKIP_BOOK:
                t = tid
                while t < n:
                    jobs[t] = TAKE_CHILD if ft[t] <= fitc[t] else KEEP_PARENT
                    t += P
                if tid == 0:
                    shi[2] = nfes + n
                    shi[4] = max(min(NP, planned(nfes + n, max_fes)), NPMIN)
            if tid == 0 and not (SKIP & SKIP_BOOK):
                cap = int(math.floor(NP * ARC_RATE + 0.5))
                best = shf[1]
                sum_d, wins, max_cr = 0.0, 0, 0.0
                for i in range(n):
                    fi, fu = fitc[i], ft[i]
                    if fu < fi:
                        sum_d += fi - fu
                        wins += 1
                        max_cr = max(max_cr, CRs[i])
                        if A < cap:
                            dst = ax[A]
                            A += 1
                        else:
                            dst = ax[archive_slot(key, g, i, cap)]
                        jobs[i] = dst
                        last[dst] = i
                        best = min(best, fu)
                    elif fu == fi:
                        jobs[i] = TAKE_CHILD
                    else:
                        jobs[i] = KEEP_PARENT
                pos = shi[3]
                if wins > 0:
                    sf2, sf, sc2, sc = 0.0, 0.0, 0.0, 0.0
                    for i in range(n):
                        if jobs[i] >= 0:
                            wk = (fitc[i] - ft[i]) / sum_d
                            sf2, sf = lehmer_add(sf2, sf, wk, Fs[i])
                            sc2, sc = lehmer_add(sc2, sc, wk, CRs[i])
                    lf = sf2 / sf
                    MF[pos] = (MF[pos] + lf) / 2.0 if AVERAGED else lf
                    if MCR[pos] == -1.0 or max_cr == 0.0:
                        MCR[pos] = -1.0
                    else:
                        lc = sc2 / sc
                        MCR[pos] = (MCR[pos] + lc) / 2.0 if AVERAGED else lc
                    shi[3] = (pos + 1) % H
                nfes += n
                shi[1], shi[2] = A, nfes
                shi[4] = max(min(NP, planned(nfes, max_fes)), NPMIN)
                shf[1] = best
            cuda.syncthreads()
            # the copies: parents into the archive (the last writer of a row wins), then the winners
            t = tid if not (SKIP & SKIP_COPY) else n * D
            while t < n * D:
                i, j = t // D, t % D
                dst = jobs[i]
                if dst >= 0 and last[dst] == i:
                    xarch[dst, j] = xpop[order[i], j]
                t += P
            cuda.syncthreads()
            t = tid if not (SKIP & SKIP_COPY) else n * D
            while t < n * D:
                i, j = t // D, t % D
                if jobs[i] != KEEP_PARENT:
                    xpop[order[i], j] = xtb[i, j]
                t += P
            t = tid
            while t < n:
                if jobs[t] != KEEP_PARENT:
                    fitc[t] = ft[t]
                t += P
            cuda.syncthreads()
            # population size reduction: the worst go, the others keep their order
            np_new = shi[4]
            if np_new < NP:
                k = tid
                while k < NP:
                    fk, r = fitc[k], 0
                    if SKIP & SKIP_RANK:
                        r = k
                    else:
                        for j in range(NP):
                            fj = fitc[j]
                            if fj < fk or (fj == fk and j < k):
                                r += 1
                    srt[k] = 1 if r < np_new else 0
                    k += P
                cuda.syncthreads()
                if tid == 0:
                    m = 0
                    for k in range(NP):
                        if srt[k] != 0:
                            order[m] = order[k]
                            fitc[m] = fitc[k]
                            m += 1
                    A = shi[1]
                    cap = int(math.floor(np_new * ARC_RATE + 0.5))
                    r = 0
                    while A > cap:  # a random entry goes; the last one takes its place
                        s = archive_removal(key, g, r, A)
                        gone = ax[s]
                        ax[s] = ax[A - 1]
                        ax[A - 1] = gone
                        A -= 1
                        r += 1
                    shi[0], shi[1] = np_new, A
                    shf[0] = p_at(shi[2], max_fes)
                cuda.syncthreads()
            if tid == 0:
                trace[b, g] = shf[1]
                if shf[1] <= target:
                    mark_hit(hit_gen, b, g)
            cuda.syncthreads()
            g += 1
        # the trial's state back to global memory (a time-budgeted run goes on in the next launch)
        t = tid
        while t < NPI:
            fit[b, t] = fitc[t]
            order_g[b, t] = order[t]
            t += P
        t = tid
        while t < ACAP:
            ax_g[b, t] = ax[t]
            t += P
        if tid == 0:
            st[b, ST_NP], st[b, ST_A], st[b, ST_NFES], st[b, ST_POS] = shi[0], shi[1], shi[2], shi[3]
            fst[b, FS_P], fst[b, FS_BEST] = shf[0], shf[1]
            for h in range(H):
                mem[b, 0, h] = MF[h]
                mem[b, 1, h] = MCR[h]
            if g - 1 >= g_first:
                cuda.atomic.max(gstate, 0, np.int64(g - 1))

    return kernel
