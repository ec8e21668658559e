"""masw/gpu's GA children made and evaluated in one pass (large-scale functions but Schwefel 1.2).

The GA step's crossover wrote its children (a row of D values each) and the function's evaluator read
them back: a sizeable part of a run's bytes per dimension per FE (counted in
results/benchmarks/masw_perf/README.md). Here the kernel that makes child c's coordinate p
(BLX-alpha of its parents, the mutated gene moved and clipped) also adds its term to the child's
sums, with the evaluator's own pieces (:func:`gpude.functions.streaming_gpu.device_functions`): the
same coordinates to the same threads and blocks, the same block sums, the same closing by the row's
last block. So the errors are bit for bit those of the separate evaluation, and the children are
still written (where ``where`` stores them: an entering child swaps stored rows with its slot).
What is read: the parents and o.

Rosenbrock's next coordinate is made again where a term needs it (not read back: another block may
not have written it yet); the rotated head's coordinates (k < m, read by the closing block) are
written by block 0 before its ticket, and every thread fences its writes before the block takes its
ticket, so the closing block sees them. Schwefel 1.2's scan needs the whole row written first: its
children are evaluated apart, as before.
"""

from __future__ import annotations

import threading

import numpy as np
from numba import cuda, float64

from ...algorithms.masw import build_masw_ops
from ...functions.largescale_terms import SCHWEFEL12
from ...functions.streaming_gpu import device_functions

_KERNELS: dict = {}
_LOCK = threading.Lock()


def fusable(code: int) -> bool:
    """Whether a function's children can be evaluated as they are made (all but Schwefel 1.2)."""
    return code != SCHWEFEL12


def build_crossover_evaluation(code: int, dim: int, m: int, has_perm: bool, threads: int, dtype,
                               layout: bool = False):
    """The kernel for one (function code, D, head size m, permutation?, threads, dtype).

    ``crossover_evaluate[(B k, blocks), threads](pop, row0, plan, delta, keys, unit0, W, alpha, lower,
    upper, k, off, active, partials, counters, out, o, perm, M)``: child c of trial b (grid row
    i = b k + c) into ``pop[row0 + b off + c]`` and its error into ``out`` at that row, as
    ``masw_gpu``'s ``crossover`` and the streaming evaluator's ``partial`` (``partials`` and
    ``counters`` are the evaluator's, at least B k rows); a stopped trial's children are skipped.
    ``layout``: the rows in position order (``has_perm`` False, ``perm`` the layout's: index s holds
    coordinate perm[s], whose numbers it draws).
    """
    key = (int(code), int(dim), int(m), bool(has_perm), int(threads), np.dtype(dtype).name, bool(layout))
    with _LOCK:
        if key in _KERNELS:
            return _KERNELS[key]
    if not fusable(code):
        raise ValueError("Schwefel 1.2's children are evaluated after they are written (its scan)")
    ops = build_masw_ops(dtype, "cuda")
    blx, clip = ops.blx, ops.clip
    fns = device_functions(code, dim, m, has_perm, threads)
    add_term, block_reduce, close_row, position = fns.add_term, fns.block_reduce, fns.close_row, fns.position
    shift_at = fns.shift  # (``shift`` is the mutation's step below)
    T = np.dtype(dtype).type
    NT, D, PERM = int(threads), int(dim), bool(has_perm)
    K0, J0, ONE1, NEXT, HEAD = fns.K0, fns.J0, fns.ONE1, fns.NEXT, fns.HEAD

    LAY = bool(layout)

    @cuda.jit(device=True)
    def gene(pop, perm, mother, father, mutated, shift, key, unit, W, p, alpha, lower, upper):
        """Index p of the child, as ``crossover`` stores it (type T): coordinate p, or perm[p] (layout)."""
        q = perm[p] if LAY else p
        v = blx(key, unit, W, q, pop[mother, p], pop[father, p], alpha, lower, upper)
        if q == mutated:
            v = clip(v + shift, lower, upper)
        return T(v)

    @cuda.jit(cache=True)
    def crossover_evaluate(pop, where, row0, plan, delta, keys, unit0, W, alpha, lower, upper, k, off, active,
                           partials, counters, out, o, perm, M):
        red0 = cuda.shared.array(NT, float64)
        red1 = cuda.shared.array(NT, float64)
        tid, i, blk = cuda.threadIdx.x, cuda.blockIdx.x, cuda.blockIdx.y
        nb = cuda.gridDim.y
        b, c = i // k, i % k
        if active[b] == 0:
            return
        r = b * off + c
        row = row0 + r
        mother, father, mutated, shift = where[plan[r, 0]], where[plan[r, 1]], plan[r, 2], delta[r]
        key, unit = keys[b], unit0 + c
        child = pop[where[row]]
        if HEAD and blk == 0:  # the head group's coordinates, read by the row's closing block
            t = tid
            while t < K0:
                p = perm[t] if PERM else t
                child[p] = gene(pop, perm, mother, father, mutated, shift, key, unit, W, p, alpha, lower, upper)
                t += NT
        s0, s1 = 0.0, ONE1
        j = J0 + blk * NT + tid  # the coordinates of ``partial``'s thread (tid, blk), in its order
        while j < D:
            q, p = position(perm, j)
            if q >= K0:  # (in memory order a head coordinate comes by: block 0 made it above)
                v = gene(pop, perm, mother, father, mutated, shift, key, unit, W, p, alpha, lower, upper)
                child[p] = v
                y = float64(v) - shift_at(o, q, p)
                y_next = 0.0
                if NEXT and q + 1 < D:
                    pn = perm[q + 1] if PERM else q + 1
                    y_next = float64(gene(pop, perm, mother, father, mutated, shift, key, unit, W, pn, alpha, lower,
                                          upper)) - shift_at(o, q + 1, pn)
                s0, s1 = add_term(s0, s1, q, y, y_next)
            j += nb * NT
        cuda.threadfence()  # this thread's writes of the child before its block's ticket
        s0, s1 = block_reduce(s0, s1, red0, red1, tid, NT)
        if tid == 0:
            partials[i, blk, 0] = s0
            partials[i, blk, 1] = s1
        close_row(child, row, i, partials, counters, out, o, perm, M, red0, red1, tid)

    with _LOCK:
        _KERNELS[key] = crossover_evaluate
    return crossover_evaluate
