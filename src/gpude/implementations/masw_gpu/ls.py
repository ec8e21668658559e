"""A whole Solis-Wets application of ``masw/gpu`` in one cooperative launch (large-scale functions).

The host-driven local search (the steps mode) queues about ten kernels per step (candidate,
evaluation, decisions, bias update) and reads the device's counters every few steps: launch-bound
at moderate D. Here one kernel runs the application's every step, with a
grid-wide barrier (``cuda.cg.this_grid().sync()``) where a decision needs every block's sum:

* **the candidate is generated where it is evaluated**: coordinate ``p`` of the '+' candidate is
  ``clip(x_p + b_p + d_p)`` with ``d_p = rho N(0, 1)`` drawn from its counter, computed in the
  evaluation's loop and never stored. The '+' evaluation reads x, b and o and writes d (drawing the
  normal again, in float64, was measured slower than reading it: results/benchmarks/masw_perf/README.md;
  ``regen`` draws it again), the '-' one
  reads x, b, o and d, so a failed step moves 8 D values where writing the candidates, reading
  them back and updating b moved 15 D;
* **the decision is made by every block** from the blocks' partial sums after the barrier (the
  same sums in the same order, so the same value in every block): no second launch, no host;
* **accepted steps are applied in place** (x and b, from the same counters); a failed step halves
  the bias, kept as a power-of-two ``scale`` applied when b is read (``b * 2^-k`` is the k-fold
  halving exactly, subnormal results aside), so it writes nothing; the scale is folded into b
  every 64 halvings and at the end of the application.

The per-coordinate terms and the closing formulas are :func:`gpude.functions.largescale.build_terms`'s
(the streaming evaluators' and the CPU's), the random numbers and the step's arithmetic
:mod:`gpude.algorithms.solis_wets`'s: the decisions are those of ``masw/sequential`` for the same
seed (the sums' last bits may differ, as for every GPU evaluator). Codes whose terms read other
coordinates (Rosenbrock's next one, the rotated head group, Schwefel 1.2's prefix sums) wait at a
barrier after every write to x or b; Schwefel 1.2 needs two barriers per evaluation (segment sums,
then the scan).

State: the trial's row of ``st`` (:mod:`.state`'s slots): the kernel reads F_LS, RHO, SUCC, FAIL
and BUDGET at the start and writes them, USED, and the steps made and accepted (STEPS, ACCEPTED) at
the end (one thread).

numba's simulator runs a cooperative grid of one block only; the tests run it so, and the GPU test
log covers many blocks.
"""

from __future__ import annotations

import math
import threading

import numpy as np
from numba import cuda, float64, int32, int64

from ...algorithms.masw import HEADER_SLOTS
from ...algorithms.solis_wets import build_sw_ops
from ...functions.largescale_terms import GRIEWANK, HEAD_CODES, NEXT_CODES, SCHWEFEL12, build_terms
from ...functions.streaming_gpu import device_functions
from .state import ACCEPTED, BUDGET, F_LS, FAIL, RHO, STEPS, SUCC, USED

#: halvings of the bias kept in ``scale`` before they are written into b (2^-64 stays normal)
MAX_PENDING_HALVINGS = 64
BUCKET = 4  # coordinates per thread (at least) when the grid is sized
STORE, COMPUTE, LOAD = 0, 1, 2  # how a coordinate's perturbation is had (see ``candidate``)
UNROLLS = (1, 4)  # coordinates loaded together by an evaluation's loop (``build_sw_application``)

_KERNELS: dict = {}
_LOCK = threading.Lock()


#: the largest D at which the fused application is the default, per kind of function (None: every D),
#: and (:func:`fused_options`) the fused kernel's options for each kind: the fastest measured per kind
#: and D, device and numbers in results/benchmarks/masw_perf/README.md. Rosenbrock's next coordinate
#: gathers its neighbour and waits at a barrier after every accepted step: the steps mode above 5e5.
FUSED_MAX_DIM = {"pointwise": None, "head": None, "scan": None, "next": 500_000}
BOUNDS_MIN_DIM = 1_000_000  # the scan's launch bounds from this D


def kind(code: int) -> str:
    """``"pointwise"``, ``"head"`` (a rotated or Rosenbrock head group), ``"scan"`` (Schwefel 1.2)
    or ``"next"`` (Rosenbrock's next coordinate)."""
    if code == SCHWEFEL12:
        return "scan"
    if code in NEXT_CODES:
        return "next"
    return "head" if code in HEAD_CODES else "pointwise"


def fused_options(code: int, dim: int) -> dict:
    """The fused kernel's measured-best ``ls_unroll`` and ``ls_min_blocks`` for the kind and D."""
    k = kind(code)
    if k in ("pointwise", "head"):
        return {"ls_unroll": 4, "ls_min_blocks": 2}
    if k == "scan":
        return {"ls_unroll": 1, "ls_min_blocks": 3 if dim >= BOUNDS_MIN_DIM else 0}
    return {"ls_unroll": 1, "ls_min_blocks": 0}


def dual_supported(code: int, share_next: bool = False) -> bool:
    """Whether the fused kernel can sum a step's two candidates in one pass (``dual``): pointwise terms,
    the rotated head and Schwefel 1.2's scan; Rosenbrock's next coordinate with ``share_next`` (both
    candidates' neighbours from shared memory), not without (each neighbour drawn again)."""
    return kind(code) in ("pointwise", "head", "scan") or (share_next and kind(code) == "next")


def default_ls_mode(code: int, dim: int) -> str:
    """``"fused"`` where one cooperative launch per application was measured faster, else ``"steps"``."""
    limit = FUSED_MAX_DIM[kind(code)]
    return "fused" if limit is None or dim <= limit else "steps"


def pointwise(code: int) -> bool:
    """Whether coordinate k's term reads coordinate k only (no barrier after writes)."""
    return code not in NEXT_CODES and code not in HEAD_CODES and code != SCHWEFEL12


def build_sw_application(code: int, dim: int, m: int, has_perm: bool, threads: int, dtype,
                         unroll: int = 1, min_blocks: int = 0, regen: bool = False, layout: bool = False,
                         dual: bool = False, share_next: bool = False):
    """The cooperative kernel for one (function code, D, head size m, permutation?, threads, dtype).

    ``unroll`` (1 or 4): coordinates an evaluation's loop loads before it computes any of them (x, b,
    o and, for the '-' candidate, d), so that a thread has that many rows' loads in flight; the terms
    are summed in the same order, so the run is the same. Not for Rosenbrock's next-coordinate codes
    (their loop reads a neighbour). ``min_blocks`` > 0 asks the compiler for that many resident
    blocks per SM (``launch_bounds``), capping the registers a thread may hold. ``regen``: the '-'
    candidate and the update draw the step's perturbation again from its counter instead of reading
    what the '+' evaluation stored (a row less written and one less read per step; the same numbers,
    so the same run). ``layout``: x's index s holds coordinate ``perm[s]`` (rows
    in position order, ``has_perm`` False: the function's terms read no permutation, and the kernel's
    ``perm`` argument is the layout's), so index s draws coordinate perm[s]'s numbers. ``dual``: a
    step's '+' and '-' candidates summed in one pass over x, b and o, from one draw of d: a failed '+'
    costs no second pass, no second grid barrier and no reads of x, b, o and d again; the '-' sums are
    those the second pass makes, in the same order, so the run is the same bit for bit (pointwise
    terms, the rotated head, Schwefel 1.2's scan with its two passes each for both, and Rosenbrock's
    next coordinate with ``share_next``: :func:`dual_supported`). ``share_next`` (Rosenbrock's next coordinate
    only): a block's threads take coordinates k, k + 1, ... of a tile together, and coordinate k's term
    takes its neighbour's value from the thread that computes it (shared memory) instead of drawing the
    neighbour's perturbation and reading its x, b and o again; only a tile's last coordinate computes
    its neighbour. The same values summed in the same order: the same run bit for bit.

    ``sw_apply[grid, threads](x, bias, row, dv, st, key, unit0, W, o, perm, M, partials, lower, upper)`` runs
    Solis-Wets steps on x (a working copy) with the chain's bias ``bias[row]`` until ``st[USED]`` reaches
    ``st[BUDGET]``; step t draws from unit ``unit0 + t``, its perturbation kept in ``dv``. ``partials`` is
    float64 of shape ``(2, grid + 1, 4)`` (a pass's two sums per block, and the '-' candidate's two with
    ``dual``).
    """
    T = np.dtype(dtype).type
    MAX_PENDING = int(MAX_PENDING_HALVINGS)  # read at build time (the tests lower it)
    if unroll not in UNROLLS:
        raise ValueError(f"unroll must be one of {UNROLLS}, got {unroll!r}")
    if code in NEXT_CODES or code == SCHWEFEL12:
        unroll = 1  # a neighbour's or a segment's coordinates: the plain loop
    share_next = bool(share_next) and kind(code) == "next"
    dual = bool(dual) and dual_supported(code, share_next)
    key_ = (int(code), int(dim), int(m), bool(has_perm), int(threads), np.dtype(dtype).name, MAX_PENDING,
            int(unroll), int(min_blocks), bool(regen), bool(layout), dual, share_next)
    with _LOCK:
        if key_ in _KERNELS:
            return _KERNELS[key_]
    sw = build_sw_ops(dtype, "cuda")
    dif, plus, minus = sw.dif, sw.plus, sw.minus
    bias_plus, bias_minus, counts = sw.bias_plus, sw.bias_minus, sw.counts
    _, close, head_from, _ = build_terms("cuda")  # (the terms: add_term, below)
    NT, D, M_ = int(threads), int(dim), int(m)
    CODE, PERM = int(code), bool(has_perm)
    HEAD = code in HEAD_CODES
    NEXT = code in NEXT_CODES
    SCAN = code == SCHWEFEL12
    PROD = code == GRIEWANK
    POINTWISE = pointwise(code)
    UNROLL = int(unroll)
    REGEN = bool(regen)  # the perturbation drawn again where it is needed, never stored
    LD = COMPUTE if REGEN else LOAD
    DUAL = dual  # both candidates in one pass (see the docstring)
    SHARE = share_next  # a neighbour's value from the thread that computes it (see the docstring)
    # the streaming evaluator's pieces: a loop index's (position, index) in its order (memory order
    # for a permuted row whose terms read their own position) and a term added to the sums
    streaming = device_functions(code, dim, m, has_perm, threads)
    position, add_term, shift = streaming.position, streaming.add_term, streaming.shift
    rotate_head = streaming.rotate_head  # (block 0's threads: the head group's rotation)
    HM = max(1, M_)
    K0 = M_ if HEAD else 0
    J0 = streaming.J0  # the loop's first index
    ONE1 = 1.0 if PROD else 0.0
    H = HEADER_SLOTS
    half = T(0.5)
    LAY = bool(layout)

    @cuda.jit(device=True)
    def coordinate(perm, p):
        """The coordinate index p of x holds (its draws' index)."""
        return int64(perm[p]) if LAY else int64(p)

    @cuda.jit(device=True)
    def candidate(sign, mode, x, b, dv, scale, p, q, key, unit, W, rho, lower, upper):
        """Coordinate p of the step's '+' (sign > 0) or '-' candidate; its perturbation drawn and
        stored in dv (mode STORE: the '+' evaluation's own coordinates), drawn only (COMPUTE: a
        neighbour's), or read back (LOAD: the '-' evaluation, the update)."""
        if mode == LOAD:
            d = dv[p]
        else:
            d = dif(key, int64(unit) * W + H + 2 * q, rho)
            if mode == STORE:
                dv[p] = d
        bt = b[p] * scale
        if sign > 0:
            return plus(x[p], bt, d, lower, upper)
        return minus(x[p], bt, d, lower, upper)

    @cuda.jit(device=True)
    def y_at(sign, mode, x, b, dv, scale, o, perm, k, key, unit, W, rho, lower, upper):
        p = perm[k] if PERM else k
        c = candidate(sign, mode, x, b, dv, scale, p, coordinate(perm, p), key, unit, W, rho, lower, upper)
        return float64(c) - shift(o, k, p)

    @cuda.jit(device=True)
    def load(mode, x, b, dv, o, perm, j):
        """The loop's index j's reads: its position k, index p, coordinate q, x_p, b_p, o_p and (mode
        LOAD) d_p."""
        k, p = position(perm, j)
        d = dv[p] if mode == LOAD else 0.0
        return k, p, coordinate(perm, p), x[p], b[p], shift(o, k, p), d

    @cuda.jit(device=True)
    def perturbation(mode, p, q, dp, dv, key, unit, W, rho):
        """The step's d of coordinate p (coordinate q's draw): ``dp`` as ``load`` read it (LOAD), or
        drawn, and stored in dv (STORE)."""
        if mode == LOAD:
            return dp
        d = dif(key, int64(unit) * W + H + 2 * q, rho)
        if mode == STORE:
            dv[p] = d
        return d

    @cuda.jit(device=True)
    def y_from(sign, mode, p, q, xp, bp, op, dp, dv, scale, key, unit, W, rho, lower, upper):
        """``y_at`` of coordinate p from its reads (``load``): the same arithmetic."""
        d = perturbation(mode, p, q, dp, dv, key, unit, W, rho)
        bt = bp * scale
        c = plus(xp, bt, d, lower, upper) if sign > 0 else minus(xp, bt, d, lower, upper)
        return float64(c) - float64(op)

    @cuda.jit(device=True)
    def add_loaded(s0, s1, sign, mode, k, p, q, xp, bp, op, dp, dv, scale, key, unit, W, rho, lower, upper):
        """The sums with the term of a coordinate ``load`` read (none for a head position, k < K0:
        block 0 has those)."""
        if k < K0:
            return s0, s1
        y = y_from(sign, mode, p, q, xp, bp, op, dp, dv, scale, key, unit, W, rho, lower, upper)
        return add_term(s0, s1, k, y, 0.0)

    @cuda.jit(device=True)
    def block_reduce(s0, s1, red0, red1, tid):
        """(sum of s0, sum or product of s1) over the block, returned to every thread."""
        red0[tid] = s0
        red1[tid] = s1
        cuda.syncthreads()
        h = NT // 2
        while h > 0:
            if tid < h:
                red0[tid] += red0[tid + h]
                if PROD:
                    red1[tid] *= red1[tid + h]
                else:
                    red1[tid] += red1[tid + h]
            cuda.syncthreads()
            h //= 2
        r0, r1 = red0[0], red1[0]
        cuda.syncthreads()  # everyone has read before the next reduction writes
        return r0, r1

    @cuda.jit(device=True)
    def total(partials, par, col, col1, nb, red0, red1, tid):
        """Every block sums the blocks' partials (columns col and col1) in the same order."""
        s0, s1 = 0.0, ONE1
        j = tid
        while j < nb:
            s0 += partials[par, j, col]
            if PROD:
                s1 *= partials[par, j, col1]
            elif not SCAN:
                s1 += partials[par, j, col1]
            j += NT
        return block_reduce(s0, s1, red0, red1, tid)

    @cuda.jit(device=True)
    def scan_tile(buf, buf2, two, tid):
        """buf (and buf2, if ``two``) <- its inclusive prefix sums over the block's threads
        (Hillis-Steele; every thread of the block, each having written its own entry)."""
        cuda.syncthreads()
        h = 1
        while h < NT:
            v = buf[tid - h] if tid >= h else 0.0
            v2 = buf2[tid - h] if two and tid >= h else 0.0
            cuda.syncthreads()
            buf[tid] += v
            if two:
                buf2[tid] += v2
            cuda.syncthreads()
            h *= 2

    @cuda.jit(device=True)
    def evaluate(sign, x, b, dv, scale, o, perm, M, key, unit, W, rho, lower, upper, partials, par,
                 red0, red1, buf, yh, rh):
        """f(candidate) - f(x*), the same in every thread of every block. The '+' evaluation draws
        the step's perturbation and stores it (each coordinate by the thread that visits it first),
        the '-' one reads it back (after the '+' evaluation's barrier); with ``regen`` both draw it."""
        own = (COMPUTE if REGEN else STORE) if sign > 0 else LD
        other = COMPUTE if sign > 0 else LD
        grid = cuda.cg.this_grid()
        tid, bid, nb = cuda.threadIdx.x, cuda.blockIdx.x, cuda.gridDim.x
        if SCAN:
            seg = (D + nb - 1) // nb
            start, end = bid * seg, min(D, (bid + 1) * seg)
            s = 0.0
            k = start + tid
            while k < end:
                s += y_at(sign, own, x, b, dv, scale, o, perm, k, key, unit, W, rho, lower, upper)
                k += NT
            s, _ = block_reduce(s, 0.0, red0, red1, tid)
            if tid == 0:
                partials[par, bid, 0] = s
            grid.sync()
            s = 0.0
            j = tid
            while j < bid:  # z summed over the segments before this one
                s += partials[par, j, 0]
                j += NT
            offset, _ = block_reduce(s, 0.0, red0, red1, tid)
            acc = 0.0
            base = start
            while base < end:  # tiles of NT coordinates: inclusive scan (Hillis-Steele)
                k = base + tid
                buf[tid] = y_at(sign, LD, x, b, dv, scale, o, perm, k, key, unit, W, rho, lower, upper) \
                    if k < end else 0.0  # stored by this thread before the barrier
                scan_tile(buf, buf, False, tid)
                if k < end:
                    q = offset + buf[tid]
                    acc += q * q
                offset += buf[NT - 1]
                cuda.syncthreads()
                base += NT
            acc, _ = block_reduce(acc, 0.0, red0, red1, tid)
            if tid == 0:
                partials[par, bid, 1] = acc
            grid.sync()
            s0, _ = total(partials, par, 1, 1, nb, red0, red1, tid)
            return s0
        s0, s1 = 0.0, ONE1
        j = J0 + bid * NT + tid
        step = nb * NT
        if UNROLL == 4:  # four coordinates' reads issued before any is computed or d stored
            while j + 3 * step < D:
                k0, p0, q0, x0, b0, o0, d0 = load(own, x, b, dv, o, perm, j)
                k1, p1, q1, x1, b1, o1, d1 = load(own, x, b, dv, o, perm, j + step)
                k2, p2, q2, x2, b2, o2, d2 = load(own, x, b, dv, o, perm, j + 2 * step)
                k3, p3, q3, x3, b3, o3, d3 = load(own, x, b, dv, o, perm, j + 3 * step)
                s0, s1 = add_loaded(s0, s1, sign, own, k0, p0, q0, x0, b0, o0, d0, dv, scale, key, unit, W, rho,
                                    lower, upper)
                s0, s1 = add_loaded(s0, s1, sign, own, k1, p1, q1, x1, b1, o1, d1, dv, scale, key, unit, W, rho,
                                    lower, upper)
                s0, s1 = add_loaded(s0, s1, sign, own, k2, p2, q2, x2, b2, o2, d2, dv, scale, key, unit, W, rho,
                                    lower, upper)
                s0, s1 = add_loaded(s0, s1, sign, own, k3, p3, q3, x3, b3, o3, d3, dv, scale, key, unit, W, rho,
                                    lower, upper)
                j += 4 * step
        if SHARE:  # tiles of NT consecutive positions (k = j here): every thread of the block goes round
            base = J0 + bid * NT
            while base < D:
                j = base + tid
                k = j
                y = 0.0
                if j < D:
                    k, _ = position(perm, j)
                    y = y_at(sign, own, x, b, dv, scale, o, perm, k, key, unit, W, rho, lower, upper)
                buf[tid] = y
                cuda.syncthreads()
                if j < D:
                    y_next = 0.0
                    if k + 1 < D:
                        if tid + 1 < NT:
                            y_next = buf[tid + 1]
                        else:  # the tile's last position: its neighbour is the next tile's first
                            y_next = y_at(sign, other, x, b, dv, scale, o, perm, k + 1, key, unit, W, rho, lower,
                                          upper)
                    s0, s1 = add_term(s0, s1, k, y, y_next)
                cuda.syncthreads()  # everyone has read buf before the next tile writes it
                base += step
            j = D  # (nothing left for the plain loop)
        while j < D:
            k, p = position(perm, j)
            if k >= K0:  # (in memory order a head coordinate comes by: block 0 has it)
                c = candidate(sign, own, x, b, dv, scale, p, coordinate(perm, p), key, unit, W, rho, lower, upper)
                y = float64(c) - shift(o, k, p)
                y_next = 0.0
                if NEXT and k + 1 < D:
                    y_next = y_at(sign, other, x, b, dv, scale, o, perm, k + 1, key, unit, W, rho, lower, upper)
                s0, s1 = add_term(s0, s1, k, y, y_next)
            j += step
        s0, s1 = block_reduce(s0, s1, red0, red1, tid)
        if tid == 0:
            partials[par, bid, 0] = s0
            partials[par, bid, 1] = s1
        if HEAD and bid == 0:  # the m head coordinates, a thread per coordinate
            t = tid
            while t < M_:
                yh[t] = y_at(sign, own, x, b, dv, scale, o, perm, t, key, unit, W, rho, lower, upper)
                t += NT
            rotate_head(yh, rh, M, tid)
            if tid == 0:
                partials[par, nb, 0] = head_from(CODE, yh, rh, M_)
        grid.sync()
        s0, s1 = total(partials, par, 0, 1, nb, red0, red1, tid)
        head = partials[par, nb, 0] if HEAD else 0.0
        return close(CODE, s0, s1, head, D, M_)

    @cuda.jit(device=True)
    def pair_from(mode, p, q, xp, bp, op, dp, dv, scale, key, unit, W, rho, lower, upper):
        """Coordinate p's '+' and '-' candidates less o_p (``y_from``'s arithmetic), from one draw
        (or read) of the step's perturbation."""
        d = perturbation(mode, p, q, dp, dv, key, unit, W, rho)
        bt = bp * scale
        return (float64(plus(xp, bt, d, lower, upper)) - float64(op),
                float64(minus(xp, bt, d, lower, upper)) - float64(op))

    @cuda.jit(device=True)
    def pair_at(mode, x, b, dv, scale, o, perm, k, key, unit, W, rho, lower, upper):
        """``pair_from`` of position k (``y_at``'s reads)."""
        p = perm[k] if PERM else k
        dp = dv[p] if mode == LOAD else 0.0
        return pair_from(mode, p, coordinate(perm, p), x[p], b[p], shift(o, k, p), dp, dv, scale, key, unit, W, rho,
                         lower, upper)

    @cuda.jit(device=True)
    def add_pair(sp0, sp1, sm0, sm1, mode, k, p, q, xp, bp, op, dp, dv, scale, key, unit, W, rho, lower, upper):
        """Both candidates' sums with the term of a coordinate ``load`` read (``add_loaded``'s rule)."""
        if k < K0:
            return sp0, sp1, sm0, sm1
        yp, ym = pair_from(mode, p, q, xp, bp, op, dp, dv, scale, key, unit, W, rho, lower, upper)
        sp0, sp1 = add_term(sp0, sp1, k, yp, 0.0)
        sm0, sm1 = add_term(sm0, sm1, k, ym, 0.0)
        return sp0, sp1, sm0, sm1

    @cuda.jit(device=True)
    def evaluate_both(x, b, dv, scale, o, perm, M, key, unit, W, rho, lower, upper, partials, par,
                      red0, red1, buf, buf2, yh, rh, yh2, rh2):
        """(f('+') - f(x*), f('-') - f(x*)) of the step, in one pass: ``evaluate``'s loop, sums, head
        group, scan and closing formula for each candidate, the perturbation drawn once (and stored,
        but with ``regen``). Rosenbrock's next coordinate with ``share_next`` only (``dual_supported``)."""
        own = COMPUTE if REGEN else STORE
        grid = cuda.cg.this_grid()
        tid, bid, nb = cuda.threadIdx.x, cuda.blockIdx.x, cuda.gridDim.x
        if SCAN:  # evaluate's two passes (segment sums, then the scan), each for both candidates
            seg = (D + nb - 1) // nb
            start, end = bid * seg, min(D, (bid + 1) * seg)
            sp, sm = 0.0, 0.0
            k = start + tid
            while k < end:
                yp, ym = pair_at(own, x, b, dv, scale, o, perm, k, key, unit, W, rho, lower, upper)
                sp += yp
                sm += ym
                k += NT
            sp, sm = block_reduce(sp, sm, red0, red1, tid)  # (both summed: a product only for Griewank)
            if tid == 0:
                partials[par, bid, 0] = sp
                partials[par, bid, 2] = sm
            grid.sync()
            sp, sm = 0.0, 0.0
            j = tid
            while j < bid:
                sp += partials[par, j, 0]
                sm += partials[par, j, 2]
                j += NT
            off_p, off_m = block_reduce(sp, sm, red0, red1, tid)
            acc_p, acc_m = 0.0, 0.0
            base = start
            while base < end:
                k = base + tid
                yp, ym = 0.0, 0.0
                if k < end:
                    yp, ym = pair_at(LD, x, b, dv, scale, o, perm, k, key, unit, W, rho, lower, upper)
                buf[tid] = yp
                buf2[tid] = ym
                scan_tile(buf, buf2, True, tid)
                if k < end:
                    q = off_p + buf[tid]
                    acc_p += q * q
                    q = off_m + buf2[tid]
                    acc_m += q * q
                off_p += buf[NT - 1]
                off_m += buf2[NT - 1]
                cuda.syncthreads()
                base += NT
            acc_p, acc_m = block_reduce(acc_p, acc_m, red0, red1, tid)
            if tid == 0:
                partials[par, bid, 1] = acc_p
                partials[par, bid, 3] = acc_m
            grid.sync()
            f_plus, _ = total(partials, par, 1, 1, nb, red0, red1, tid)
            f_minus, _ = total(partials, par, 3, 3, nb, red0, red1, tid)
            return f_plus, f_minus
        sp0, sp1, sm0, sm1 = 0.0, ONE1, 0.0, ONE1
        j = J0 + bid * NT + tid
        step = nb * NT
        if UNROLL == 4:  # as evaluate's: four coordinates' reads before any is computed
            while j + 3 * step < D:
                k0, p0, q0, x0, b0, o0, d0 = load(own, x, b, dv, o, perm, j)
                k1, p1, q1, x1, b1, o1, d1 = load(own, x, b, dv, o, perm, j + step)
                k2, p2, q2, x2, b2, o2, d2 = load(own, x, b, dv, o, perm, j + 2 * step)
                k3, p3, q3, x3, b3, o3, d3 = load(own, x, b, dv, o, perm, j + 3 * step)
                sp0, sp1, sm0, sm1 = add_pair(sp0, sp1, sm0, sm1, own, k0, p0, q0, x0, b0, o0, d0, dv, scale, key,
                                              unit, W, rho, lower, upper)
                sp0, sp1, sm0, sm1 = add_pair(sp0, sp1, sm0, sm1, own, k1, p1, q1, x1, b1, o1, d1, dv, scale, key,
                                              unit, W, rho, lower, upper)
                sp0, sp1, sm0, sm1 = add_pair(sp0, sp1, sm0, sm1, own, k2, p2, q2, x2, b2, o2, d2, dv, scale, key,
                                              unit, W, rho, lower, upper)
                sp0, sp1, sm0, sm1 = add_pair(sp0, sp1, sm0, sm1, own, k3, p3, q3, x3, b3, o3, d3, dv, scale, key,
                                              unit, W, rho, lower, upper)
                j += 4 * step
        if SHARE:  # Rosenbrock's next coordinate: evaluate's tiles, both candidates' neighbours shared
            base = J0 + bid * NT
            while base < D:
                j = base + tid
                k = j
                yp, ym = 0.0, 0.0
                if j < D:
                    k, _ = position(perm, j)
                    yp, ym = pair_at(own, x, b, dv, scale, o, perm, k, key, unit, W, rho, lower, upper)
                buf[tid] = yp
                buf2[tid] = ym
                cuda.syncthreads()
                if j < D:
                    next_p, next_m = 0.0, 0.0
                    if k + 1 < D:
                        if tid + 1 < NT:
                            next_p, next_m = buf[tid + 1], buf2[tid + 1]
                        else:  # the tile's last position: drawn, not stored (its own thread stores it)
                            next_p, next_m = pair_at(COMPUTE, x, b, dv, scale, o, perm, k + 1, key, unit, W, rho,
                                                     lower, upper)
                    sp0, sp1 = add_term(sp0, sp1, k, yp, next_p)
                    sm0, sm1 = add_term(sm0, sm1, k, ym, next_m)
                cuda.syncthreads()  # everyone has read the tile before the next one is written
                base += step
            j = D  # (nothing left for the plain loop)
        while j < D:
            k, p = position(perm, j)
            if k >= K0:  # (a head coordinate: block 0 has it)
                q = coordinate(perm, p)
                sp0, sp1, sm0, sm1 = add_pair(sp0, sp1, sm0, sm1, own, k, p, q, x[p], b[p], shift(o, k, p), 0.0,
                                              dv, scale, key, unit, W, rho, lower, upper)
            j += step
        sp0, sp1 = block_reduce(sp0, sp1, red0, red1, tid)
        sm0, sm1 = block_reduce(sm0, sm1, red0, red1, tid)
        if tid == 0:
            partials[par, bid, 0] = sp0
            partials[par, bid, 1] = sp1
            partials[par, bid, 2] = sm0
            partials[par, bid, 3] = sm1
        if HEAD and bid == 0:  # the m head coordinates, a thread per coordinate, each candidate's
            t = tid
            while t < M_:
                y_plus, y_minus = pair_at(own, x, b, dv, scale, o, perm, t, key, unit, W, rho, lower, upper)
                yh[t] = y_plus
                yh2[t] = y_minus
                t += NT
            rotate_head(yh, rh, M, tid)
            rotate_head(yh2, rh2, M, tid)
            if tid == 0:
                partials[par, nb, 0] = head_from(CODE, yh, rh, M_)
                partials[par, nb, 2] = head_from(CODE, yh2, rh2, M_)
        grid.sync()
        sp0, sp1 = total(partials, par, 0, 1, nb, red0, red1, tid)
        sm0, sm1 = total(partials, par, 2, 3, nb, red0, red1, tid)
        head_p = partials[par, nb, 0] if HEAD else 0.0
        head_m = partials[par, nb, 2] if HEAD else 0.0
        return close(CODE, sp0, sp1, head_p, D, M_), close(CODE, sm0, sm1, head_m, D, M_)

    @cuda.jit(device=True)
    def fold_scale(b, scale):
        """b <- b * scale (the pending halvings), coordinates of this thread."""
        j = cuda.blockIdx.x * NT + cuda.threadIdx.x
        while j < D:
            b[j] = b[j] * scale
            j += cuda.gridDim.x * NT

    from ...core.gpu_runtime import simulator_enabled

    # (numba's simulator has no launch bounds: there the kernel is the same without them)
    bounds = {"launch_bounds": (NT, int(min_blocks))} if min_blocks and not simulator_enabled() else {}
    MIN_BLOCKS = int(min_blocks)  # read in the kernel, so that numba's disk cache keys on it too

    @cuda.jit(cache=True, **bounds)
    def sw_apply(x, bias, row, dv, st, key, unit0, W, o, perm, M, partials, lower, upper):
        if MIN_BLOCKS < 0:  # never (a compile-time constant: the launch bounds' part of the cache key)
            return
        red0 = cuda.shared.array(NT, float64)
        red1 = cuda.shared.array(NT, float64)
        buf = cuda.shared.array(NT, float64)
        buf2 = cuda.shared.array(NT, float64)  # (dual: the '-' candidate's scan)
        yh = cuda.shared.array(HM, float64)
        rh = cuda.shared.array(HM, float64)
        yh2 = cuda.shared.array(HM, float64)  # (dual: the '-' candidate's head group)
        rh2 = cuda.shared.array(HM, float64)
        grid = cuda.cg.this_grid()
        b = bias[row]
        f_ls, rho = st[F_LS], st[RHO]
        succ, fail = int64(st[SUCC]), int64(st[FAIL])
        budget = int64(st[BUDGET])
        used, t, pending, par, accepted = int64(0), int64(0), int32(0), int32(0), int64(0)
        scale = T(1.0)
        j0, stride = cuda.blockIdx.x * NT + cuda.threadIdx.x, cuda.gridDim.x * NT
        while used < budget:
            unit = unit0 + t
            f_minus = 0.0
            if DUAL:
                f, f_minus = evaluate_both(x, b, dv, scale, o, perm, M, key, unit, W, rho, lower, upper, partials,
                                           par, red0, red1, buf, buf2, yh, rh, yh2, rh2)
            else:
                f = evaluate(1, x, b, dv, scale, o, perm, M, key, unit, W, rho, lower, upper, partials, par,
                             red0, red1, buf, yh, rh)
            par = 1 - par
            used += 1
            outcome = 0
            if f < f_ls:
                outcome, f_ls = 1, f
            elif used < budget:
                if DUAL:  # summed in the same pass: an evaluation made, no second pass
                    f = f_minus
                else:
                    f = evaluate(-1, x, b, dv, scale, o, perm, M, key, unit, W, rho, lower, upper, partials, par,
                                 red0, red1, buf, yh, rh)
                    par = 1 - par
                used += 1
                if f < f_ls:
                    outcome, f_ls = -1, f
            if outcome != 0:  # x <- the candidate, b updated (each thread its own coordinates)
                j = j0
                while j < D:
                    d = dif(key, int64(unit) * W + H + 2 * coordinate(perm, j), rho) if REGEN else dv[j]
                    bt = b[j] * scale
                    if outcome > 0:
                        x[j] = plus(x[j], bt, d, lower, upper)
                        b[j] = bias_plus(bt, d)
                    else:
                        x[j] = minus(x[j], bt, d, lower, upper)
                        b[j] = bias_minus(bt, d)
                    j += stride
                scale, pending = T(1.0), int32(0)
                accepted += 1
                if not POINTWISE:
                    grid.sync()
            else:
                scale = scale * half
                pending += 1
                if pending == MAX_PENDING:
                    fold_scale(b, scale)
                    scale, pending = T(1.0), int32(0)
                    if not POINTWISE:
                        grid.sync()
            succ, fail, rho = counts(outcome != 0, succ, fail, rho)
            t += 1
        if pending > 0:
            fold_scale(b, scale)
        if cuda.blockIdx.x == 0 and cuda.threadIdx.x == 0:
            st[F_LS], st[RHO] = f_ls, rho
            st[SUCC], st[FAIL], st[USED] = float64(succ), float64(fail), float64(used)
            st[STEPS], st[ACCEPTED] = float64(t), float64(accepted)

    with _LOCK:
        _KERNELS[key_] = sw_apply
    return sw_apply


def cooperative_blocks(kernel, args, threads: int, dim: int) -> int:
    """Blocks of the cooperative grid: enough for ``BUCKET`` coordinates per thread, at most what
    the device keeps resident at once (a cooperative launch needs every block resident); 1 on the
    simulator, which runs cooperative grids of one block only."""
    from ...core.gpu_runtime import simulator_enabled

    if simulator_enabled():
        return 1
    sig = tuple(kernel.typeof_pyval(a) for a in args)
    compiled = kernel.compile(sig)
    resident = compiled.max_cooperative_grid_blocks(threads)
    return max(1, min(math.ceil(dim / (threads * BUCKET)), resident))
