"""The kernel of ``jso/block``: each trial's whole jSO (or L-SHADE) run in one thread block.

Block b of the launch is trial b. A generation is six steps between block barriers, each spread over
the block's threads (the prototype's timing put a generation's time in its serial steps and latency
chains, not in the evaluation: ``results/benchmarks/jso_prototype/``):

1. the ranking: each thread ranks its individuals by counting (:func:`rank_of`, ties by index);
2. the draws: a thread a child draws its memory slot, CR, F, pbest, r1, r2 and j_rand (the chains of
   ``log``/``cos``/``tan`` run side by side, not one after the other in a warp);
3. the children: a warp a child builds the trial vector over its lanes in shared memory and evaluates it
   with the function's warp evaluator (:func:`gpude.functions.gpu.make_block_evaluator` with
   ``warp=True``: every function of the suite runs);
4. the selection: the outcomes and each success's place among the successes (prefix counts over chunks
   of 32), the successes' F, CR and improvement in index order, the archive's rows (appended while it
   has room, else the drawn slot, the later success winning a slot as in the sequential loop), then
   the memory update on one thread (:func:`memory_update`, the CPU's very loop), the copies by all
   threads and the best-so-far (a block argmin, the lowest index on ties);
5. the population size reduction: the worst go (:func:`removal_rank`), the others keep their order,
   through an index list (logical individual -> physical row), so no vector moves;
6. the trace entry and the target test.

Every random decision and every rule is :mod:`gpude.algorithms.jso`'s operator, compiled for CUDA, so a
seed makes ``jso/sequential``'s run to the rounding of the function evaluation.

Shared memory: 92 NP_init bytes of state (dynamic; opted in above 48 KB) and the warps' trial vectors
and evaluation buffers (static), so a block holds a whole trial's bookkeeping next to its SM.
"""

from __future__ import annotations

import math
from functools import cache

import numba
import numpy as np
from numba import cuda

from ..algorithms.jso import build_jso_ops
from ..core.gpu_runtime import simulator_enabled
from ..core.gpu_runtime import warp_barrier as make_warp_barrier
from .device_loop import NO_HIT, mark_hit

#: the int64 state of a trial (global memory between launches)
ST_NP, ST_A, ST_CAP, ST_POS, ST_NFES = range(5)
INT_STATE = 5
#: the float64 state of a trial: p, the best error so far
FS_P, FS_BEST = range(2)
FLOAT_STATE = 2
#: a selection's outcome (values >= 0: a success whose parent goes to that archive row)
KEEP_PARENT, TAKE_CHILD = -1, -2
#: float64 and int32 arrays of NP_init entries in the dynamic shared memory
F64_ARRAYS, I32_ARRAYS = 7, 9


def dynamic_shared_bytes(np_init: int) -> int:
    """The block's dynamic shared memory: :data:`F64_ARRAYS` float64 and :data:`I32_ARRAYS` int32
    arrays of NP_init entries."""
    return (8 * F64_ARRAYS + 4 * I32_ARRAYS) * int(np_init)


@cache
def build_jso_block_kernel(warp_evaluate, dtype, warps: int, buf: int, dim: int, settings):
    """The kernel for one (function build, D, dtype, warps a block, settings).

    ``settings``: (NP_init, NP_min, H, archive rows, arc_rate, p_max, p_min, M_F0, M_CR0, fixed_last_slot,
    weighted_F, cr_schedule, f_schedule, averaged_memory, pbest_not_self, error floor), the run's
    parameters as compile-time constants. Launch: ``kernel[B, 32 warps, stream, dynamic_shared_bytes]
    (pop, tb, arch, best_x, order_g, last, mem, st, fst, fit, keys, lower, upper, shift, rot_t, perm,
    trace, hit_gen, gstate, target, max_fes, g_first, g_last)``.
    """
    T = np.dtype(dtype).type
    (NPI, NPMIN, H, ACAP, ARC_RATE, P_MAX, P_MIN, MF0, MCR0, FIXED_LAST, WEIGHTED_F, CR_SCHEDULE, F_SCHEDULE,
     AVERAGED, NOT_SELF, FLOOR) = settings
    NPI, NPMIN, H, ACAP = int(NPI), int(NPMIN), int(H), int(ACAP)
    W, D, BUF = int(warps), int(dim), int(buf)
    P = 32 * W
    HALF = 1 << max(0, (P - 1).bit_length() - 1)  # the block argmin's first stride: half the next power of two
    CHUNKS = (NPI + 31) // 32
    COUNTS = CHUNKS + 1  # (a shape must be a constant: numba does not fold CHUNKS + 1 for CUDA)
    STAMP = NPI + 1  # last[row] = g STAMP + i: the success that wrote the row (the highest i wins)
    SIM = simulator_enabled()
    INF = math.inf
    ops = build_jso_ops(T, "cuda")
    init_value, draw_memory_slot, slot_means = ops.init_value, ops.draw_memory_slot, ops.slot_means
    draw_CR, draw_F, weighted, pick, trial_value = ops.draw_CR, ops.draw_F, ops.weighted, ops.pick, ops.trial_value
    archive_slot, archive_capacity, archive_removal = ops.archive_slot, ops.archive_capacity, ops.archive_removal
    next_popsize, p_at, p_count, clamped = ops.next_popsize, ops.p_at, ops.p_count, ops.clamped
    rank_of, removal_rank, memory_update = ops.rank_of, ops.removal_rank, ops.memory_update
    I0 = 2 * F64_ARRAYS * NPI  # where the int32 arrays start, in int32 units

    warp_barrier = make_warp_barrier()

    @cuda.jit(device=True)
    def exclusive_prefix(flags, n, place, counts, tid, w, lane):
        """place[i] = how many of flags[0 .. i-1] are 1 (i < n), counts[CHUNKS] = how many of all n:
        prefix counts within chunks of 32 (a warp a chunk), then the chunks' offsets on thread 0.
        Every thread of the block calls it (it ends at a barrier)."""
        nchunks = (n + 31) // 32
        for k in range((nchunks + W - 1) // W):
            c = w + k * W
            i = 32 * c + lane
            if c < nchunks and i < n:
                s = 0
                for q in range(lane):
                    s += flags[32 * c + q]
                place[i] = s
                if i == n - 1 or lane == 31:
                    counts[c] = s + flags[i]
        cuda.syncthreads()
        if tid == 0:
            s = 0
            for c in range(nchunks):
                cnt = counts[c]
                counts[c] = s
                s += cnt
            counts[CHUNKS] = s
        cuda.syncthreads()
        i = tid
        while i < n:
            place[i] += counts[i // 32]
            i += P
        cuda.syncthreads()

    # a block's threads share an SM's 65,536 registers, allocated in units of 8 a thread
    options = {} if SIM else {"max_registers": max(32, min(255, (65536 // P) // 8 * 8))}

    @cuda.jit(**options)
    def kernel(pop, tb, arch, best_x, order_g, last, mem, st, fst, fit, keys, lower, upper, shift, rot_t, perm,
               trace, hit_gen, gstate, target, max_fes, g_first, g_last):
        dynf = cuda.shared.array(0, numba.float64)
        dyni = cuda.shared.array(0, numba.int32)
        fitc, ft, Fs, CRs = dynf[0:NPI], dynf[NPI:2 * NPI], dynf[2 * NPI:3 * NPI], dynf[3 * NPI:4 * NPI]
        s_f, s_cr, delta = dynf[4 * NPI:5 * NPI], dynf[5 * NPI:6 * NPI], dynf[6 * NPI:7 * NPI]
        order, srt, rank = dyni[I0:I0 + NPI], dyni[I0 + NPI:I0 + 2 * NPI], dyni[I0 + 2 * NPI:I0 + 3 * NPI]
        xpr, x1r, x2c = (dyni[I0 + 3 * NPI:I0 + 4 * NPI], dyni[I0 + 4 * NPI:I0 + 5 * NPI],
                         dyni[I0 + 5 * NPI:I0 + 6 * NPI])
        jrs, jobs, tmp = (dyni[I0 + 6 * NPI:I0 + 7 * NPI], dyni[I0 + 7 * NPI:I0 + 8 * NPI],
                          dyni[I0 + 8 * NPI:I0 + 9 * NPI])
        counts = cuda.shared.array(COUNTS, numba.int32)
        memf = cuda.shared.array((2, H), numba.float64)
        shi = cuda.shared.array(8, numba.int64)
        shf = cuda.shared.array(2, numba.float64)
        red_v = cuda.shared.array(P, numba.float64)
        red_i = cuda.shared.array(P, numba.int32)
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
        xpop, xtb, xarch, lastb = pop[b], tb[b], arch[b], last[b]

        if g_first == 1:  # reset the trace and the flag, then generation 0
            t = tid
            while t < trace.shape[1]:
                trace[b, t] = INF
                t += P
            t = tid
            while t < ACAP:
                lastb[t] = -1
                t += P
            t = tid
            while t < NPI:
                order_g[b, t] = t
                t += P
            if tid == 0:
                hit_gen[b] = NO_HIT
            for k in range((NPI + W - 1) // W):
                i = w + k * W
                if i < NPI or SIM:
                    ii = min(i, NPI - 1)
                    j = lane
                    while j < D:
                        xs[j] = init_value(key, ii, j, NPI, D, lower, upper)
                        j += 32
                    warp_barrier()
                    f = warp_evaluate(xs, buf_a, buf_z, red, shift, rot_t, perm, lane)
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
                best, bi = INF, 0
                for i in range(NPI):
                    if fit[b, i] < best:
                        best, bi = fit[b, i], i
                shi[6] = bi
                for h in range(H):
                    mem[b, 0, h] = MF0
                    mem[b, 1, h] = MCR0
                st[b, ST_NP], st[b, ST_A], st[b, ST_POS] = NPI, 0, 0
                st[b, ST_CAP] = archive_capacity(NPI, ARC_RATE, True)
                st[b, ST_NFES] = min(NPI, max_fes)
                fst[b, FS_P], fst[b, FS_BEST] = P_MAX, best
                trace[b, 0] = best
                if best <= target:
                    mark_hit(hit_gen, b, 0)
            cuda.syncthreads()
            j = tid
            while j < D:
                best_x[b, j] = xpop[shi[6], j]
                j += P

        # the trial's state into shared memory
        if tid == 0:
            shi[0], shi[1], shi[2], shi[3], shi[4] = (st[b, ST_NP], st[b, ST_A], st[b, ST_CAP], st[b, ST_POS],
                                                      st[b, ST_NFES])
            shf[0], shf[1] = fst[b, FS_P], fst[b, FS_BEST]
            for h in range(H):
                MF[h] = mem[b, 0, h]
                MCR[h] = mem[b, 1, h]
        t = tid
        while t < NPI:
            fitc[t] = fit[b, t]
            order[t] = order_g[b, t]
            t += P
        g = g_first
        cuda.syncthreads()
        while g <= g_last:
            NP, A, cap, nfes = shi[0], shi[1], shi[2], shi[4]
            if nfes >= max_fes or hit_gen[b] <= g - 1:
                break
            n = min(NP, max_fes - nfes)
            p_num = p_count(shf[0], NP)
            # 1. the ranking of the generation-start population
            k = tid
            while k < NP:
                r = rank_of(fitc, NP, k, FLOOR)
                rank[k] = r
                srt[r] = k
                k += P
            cuda.syncthreads()
            # 2. the draws, a thread a child
            i = tid
            while i < n:
                r = draw_memory_slot(key, g, i, NPI, D, H)
                mu_F, mu_CR = slot_means(r, H, MF, MCR, FIXED_LAST)
                CRs[i] = draw_CR(key, g, i, NPI, D, mu_CR, nfes, max_fes, CR_SCHEDULE)
                Fs[i] = draw_F(key, g, i, NPI, D, mu_F, nfes, max_fes, F_SCHEDULE)
                pb, r1, r2, jr = pick(key, g, i, NPI, D, NP, A, p_num, rank[i], nfes, max_fes, NOT_SELF)
                xpr[i] = order[srt[pb]]
                x1r[i] = order[r1]
                x2c[i] = order[r2] if r2 < NP else -1 - (r2 - NP)
                jrs[i] = jr
                i += P
            cuda.syncthreads()
            # 3. the children, a warp each
            for k in range((n + W - 1) // W):
                i = w + k * W
                if i < n or SIM:
                    ii = min(i, n - 1)
                    F, CR = Fs[ii], CRs[ii]
                    Fw = weighted(F, nfes, max_fes, WEIGHTED_F)
                    row_i, row_p, row_1, c2, jr = order[ii], xpr[ii], x1r[ii], x2c[ii], jrs[ii]
                    j = lane
                    while j < D:
                        x2 = xpop[c2, j] if c2 >= 0 else xarch[-1 - c2, j]
                        xs[j] = trial_value(key, g, ii, j, NPI, D, jr, F, Fw, CR, xpop[row_i, j], xpop[row_p, j],
                                            xpop[row_1, j], x2, lower, upper)
                        j += 32
                    warp_barrier()
                    f = warp_evaluate(xs, buf_a, buf_z, red, shift, rot_t, perm, lane)
                    if i < n:
                        j = lane
                        while j < D:
                            xtb[ii, j] = xs[j]
                            j += 32
                        if lane == 0:
                            ft[ii] = f
                    warp_barrier()
            cuda.syncthreads()
            # 4. the selection: outcomes, and each success's place among the successes
            i = tid
            while i < n:
                fu, fx = clamped(ft[i], FLOOR), clamped(fitc[i], FLOOR)
                tmp[i] = 1 if fu < fx else 0
                jobs[i] = TAKE_CHILD if fu <= fx else KEEP_PARENT
                i += P
            cuda.syncthreads()
            exclusive_prefix(tmp, n, rank, counts, tid, w, lane)  # (the ranking is spent: rank holds the places)
            # the best so far (raw errors; the lowest index among equal minima)
            v, vi = INF, -1
            i = tid
            while i < n:
                if ft[i] < v:
                    v, vi = ft[i], i
                i += P
            red_v[tid], red_i[tid] = v, vi
            cuda.syncthreads()
            half = HALF
            while half > 0:
                if tid < half and tid + half < P:
                    v2, i2 = red_v[tid + half], red_i[tid + half]
                    if v2 < red_v[tid] or (v2 == red_v[tid] and i2 >= 0 and i2 < red_i[tid]):
                        red_v[tid], red_i[tid] = v2, i2
                cuda.syncthreads()
                half //= 2
            if tid == 0:
                shi[5] = counts[CHUNKS]  # the successes
                v, vi = red_v[0], red_i[0]
                shi[6] = vi if v < shf[1] else -1
                if v < shf[1]:
                    shf[1] = v
            cuda.syncthreads()
            i = tid
            while i < n:
                if tmp[i] != 0:
                    q = rank[i]
                    s_f[q], s_cr[q] = Fs[i], CRs[i]
                    delta[q] = clamped(fitc[i], FLOOR) - clamped(ft[i], FLOOR)
                    if cap > 1:
                        dst = A + q if A + q < cap else archive_slot(key, g, i, NPI, D, cap)
                        jobs[i] = dst
                        cuda.atomic.max(lastb, dst, np.int64(g) * STAMP + i)
                i += P
            cuda.syncthreads()
            if tid == 0:
                wins = shi[5]
                if wins > 0:
                    pos = shi[3]
                    memory_update(MF, MCR, pos, s_f, s_cr, delta, wins, AVERAGED)
                    shi[3] = (pos + 1) % H
                if cap > 1:
                    shi[1] = min(cap, A + wins)
                shi[4] = nfes + n
                shi[7] = next_popsize(NP, nfes + n, NPI, NPMIN, max_fes)
            # the copies: parents into the archive (the last success writing a row wins), then the
            # winners into the population, and the best so far
            t = tid
            while t < n * D:
                i, j = t // D, t % D
                dst = jobs[i]
                if dst >= 0 and lastb[dst] == np.int64(g) * STAMP + i:
                    xarch[dst, j] = xpop[order[i], j]
                t += P
            cuda.syncthreads()
            t = tid
            while t < n * D:
                i, j = t // D, t % D
                if jobs[i] != KEEP_PARENT:
                    xpop[order[i], j] = xtb[i, j]
                t += P
            bi = shi[6]
            if bi >= 0:
                j = tid
                while j < D:
                    best_x[b, j] = xtb[bi, j]
                    j += P
            i = tid
            while i < n:
                if jobs[i] != KEEP_PARENT:
                    fitc[i] = ft[i]
                i += P
            cuda.syncthreads()
            # 5. the population size reduction: the NP - new_np worst go, the others keep their order
            new_np = shi[7]
            if new_np < NP:
                drop = NP - new_np
                k = tid
                while k < NP:
                    tmp[k] = 1 if removal_rank(fitc, NP, k, FLOOR) >= drop else 0
                    k += P
                cuda.syncthreads()
                exclusive_prefix(tmp, NP, rank, counts, tid, w, lane)
                k = tid
                while k < NP:
                    if tmp[k] != 0:
                        q = rank[k]
                        srt[q] = order[k]
                        ft[q] = fitc[k]
                    k += P
                cuda.syncthreads()
                k = tid
                while k < new_np:
                    order[k] = srt[k]
                    fitc[k] = ft[k]
                    k += P
                if tid == 0:
                    cap = archive_capacity(new_np, ARC_RATE, False)
                    shi[0], shi[2] = new_np, cap
                    shi[1] = archive_removal(shi[1], cap)
                    shf[0] = p_at(shi[4], P_MAX, P_MIN, max_fes)
            # 6. the trace and the target
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
        if tid == 0:
            (st[b, ST_NP], st[b, ST_A], st[b, ST_CAP], st[b, ST_POS],
             st[b, ST_NFES]) = shi[0], shi[1], shi[2], shi[3], shi[4]
            fst[b, FS_P], fst[b, FS_BEST] = shf[0], shf[1]
            for h in range(H):
                mem[b, 0, h] = MF[h]
                mem[b, 1, h] = MCR[h]
            if g - 1 >= g_first:
                cuda.atomic.max(gstate, 0, np.int64(g - 1))

    return kernel
