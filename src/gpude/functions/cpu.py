"""CPU evaluator: numba, one individual after another, GIL-free.

One compiled function per floating type evaluates every benchmark function;
the function's structure comes in as a :class:`~gpude.functions.program.Program`.
The loops follow the official C code's order (shift, shrink, rotate with the
sum over j in order, shuffle, groups), so float64 results agree with the
official code to rounding of the libm calls.

``evaluate_rows`` releases the GIL, so a thread pool can split a population
across cores (the master-slave implementation does exactly that).
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from functools import cache

import numba
import numpy as np

from . import basic
from .program import FEATURES_TRIG, Program
from .suites import HYBRID, HYBRID_COMPOSITION, SIMPLE


@cache
def build_cpu_evaluator(dtype=np.float64):
    """Compile (or load from numba's cache) the CPU evaluator for ``dtype``.

    Returns
    -------
    callable
        ``evaluate_rows(X, out, kind, rotated, features, codes, rates, offsets,
        lam_num, lam_den, sigmas, comp_bias, starts, lengths, sources, group_comp, shift, rot,
        perm)``
        (the arguments after ``out`` are :func:`program_args`): writes the error
        of every row of ``X`` into ``out``.
    """
    B = basic.build_basic(dtype, "cpu")
    term, final, T = B.term, B.final, B.dtype
    comp_weight, comp_combine = B.comp_weight, B.comp_combine
    zero, one = T(0.0), T(1.0)
    jit = numba.njit(cache=True, nogil=True)
    ROW3_SUM = basic.ROW3_SUM_CODES[0]        # bi-Rastrigin: the fourth quantity is a sum
    UNROTATED = basic.UNROTATED_PAIR_CODES[0]  # bi-Rastrigin: zn is u[i], the unrotated coordinate
    SIGNED = basic.SHIFT_SIGN_CODES[0]        # bi-Rastrigin: negated where the shift is negative

    @jit
    def component_value(z, start, length, code, u):
        s1, s2, p, m = zero, zero, one, zero
        for i in range(length):
            nxt = i + 1 if i + 1 < length else 0
            zn = u[start + i] if code == UNROTATED else z[start + nxt]
            t1, t2, t3, t4 = term(code, z[start + i], zn, i, length)
            s1 += t1
            s2 += t2
            p *= t3
            if code == ROW3_SUM:
                m += t4
            elif t4 > m:
                m = t4
        return final(code, s1, s2, p, m, length)

    @jit
    def hybrid_groups(z, a, k, codes, rates, offsets, starts, lengths, sources, group_comp, shift,
                      perm):
        # The groups of composition component k (all of them for a hybrid): a[start + j] =
        # z[perm[k D + source + j]] at the group's own rate and offset, then its basic function.
        d = z.shape[0]
        total = zero
        for g in range(codes.shape[0]):
            if group_comp[g] != k:
                continue
            lo, src = starts[g], sources[g]
            for j in range(lengths[g]):
                v = z[perm[k * d + src + j]] * rates[g] + offsets[g]
                if codes[g] == SIGNED and shift[k, j] < zero:
                    v = -v
                a[lo + j] = v
            total += component_value(a, lo, lengths[g], codes[g], a)
        return total

    @jit
    def rotate(rot, k, a, z, offset):
        # z_i = sum_j M[k, i, j] a_j for i < D, j < W (W = D, or 2 D after trig features)
        d, w = rot.shape[1], rot.shape[2]
        for i in range(d):
            acc = zero
            for j in range(w):
                acc += rot[k, i, j] * a[j]
            z[i] = acc + offset

    @jit
    def evaluate_one(x, kind, rotated, features, codes, rates, offsets, lam_num, lam_den, sigmas,
                     comp_bias, starts, lengths, sources, group_comp, shift, rot, perm, a, z, fit, w):
        d = x.shape[0]
        if kind == SIMPLE:
            signed = codes[0] == SIGNED
            for i in range(d):
                a[i] = (x[i] - shift[0, i]) * rates[0]
                if signed and shift[0, i] < zero:
                    a[i] = -a[i]
            if features == FEATURES_TRIG:  # phi(y) = [sin y, 1 - cos y], length 2 D
                for i in range(d):
                    t = a[i]
                    a[i] = math.sin(t)
                    a[d + i] = one - math.cos(t)
            if rotated:
                rotate(rot, 0, a, z, offsets[0])
            else:
                for i in range(d):
                    z[i] = a[i] + offsets[0]
            return component_value(z, 0, d, codes[0], a)

        if kind == HYBRID:
            for i in range(d):
                a[i] = x[i] - shift[0, i]
            rotate(rot, 0, a, z, zero)
            return hybrid_groups(z, a, 0, codes, rates, offsets, starts, lengths, sources, group_comp,
                                 shift, perm)

        if kind == HYBRID_COMPOSITION:  # component k: the hybrid of its groups on o_k, M_k, perm_k
            n_parts = shift.shape[0]
            for k in range(n_parts):
                d2 = zero
                for i in range(d):
                    diff = x[i] - shift[k, i]
                    d2 += diff * diff
                    a[i] = diff
                rotate(rot, k, a, z, zero)
                g0 = 0
                while group_comp[g0] != k:
                    g0 += 1
                h = hybrid_groups(z, a, k, codes, rates, offsets, starts, lengths, sources, group_comp,
                                  shift, perm)
                fit[k] = lam_num[g0] * h / lam_den[g0] + comp_bias[g0]
                w[k] = comp_weight(d2, sigmas[g0], d)
            return comp_combine(fit, w, n_parts)

        # COMPOSITION
        n_comp = codes.shape[0]
        for k in range(n_comp):
            d2 = zero
            for i in range(d):
                diff = x[i] - shift[k, i]
                d2 += diff * diff
                a[i] = diff * rates[k]
            rotate(rot, k, a, z, offsets[k])
            g = component_value(z, 0, d, codes[k], a)
            fit[k] = lam_num[k] * g / lam_den[k] + comp_bias[k]
            w[k] = comp_weight(d2, sigmas[k], d)
        return comp_combine(fit, w, n_comp)

    @jit
    def evaluate_rows(X, out, kind, rotated, features, codes, rates, offsets, lam_num, lam_den,
                      sigmas, comp_bias, starts, lengths, sources, group_comp, shift, rot, perm):
        d = X.shape[1]
        a = np.empty(max(d, rot.shape[2]), dtype=X.dtype)
        z = np.empty(d, dtype=X.dtype)
        fit = np.empty(codes.shape[0], dtype=X.dtype)
        w = np.empty(codes.shape[0], dtype=X.dtype)
        for r in range(X.shape[0]):
            out[r] = evaluate_one(X[r], kind, rotated, features, codes, rates, offsets, lam_num, lam_den,
                                  sigmas, comp_bias, starts, lengths, sources, group_comp, shift, rot,
                                  perm, a, z, fit, w)

    return evaluate_rows, evaluate_one


@cache
def build_parallel_evaluator(dtype=np.float64):
    """``evaluate_rows`` with the rows split over numba's worker threads (``prange``).

    The threads are numba's own pool (size set by ``numba.set_num_threads``): dispatching a
    parallel region costs microseconds, where a Python thread pool costs tens per task.
    """
    _, evaluate_one = build_cpu_evaluator(dtype)

    @numba.njit(cache=True, nogil=True, parallel=True)
    def evaluate_rows_parallel(X, out, kind, rotated, features, codes, rates, offsets, lam_num,
                               lam_den, sigmas, comp_bias, starts, lengths, sources, group_comp,
                               shift, rot, perm):
        d, n_comp = X.shape[1], codes.shape[0]
        width = max(d, rot.shape[2])
        for r in numba.prange(X.shape[0]):
            a = np.empty(width, dtype=X.dtype)
            z = np.empty(d, dtype=X.dtype)
            fit = np.empty(n_comp, dtype=X.dtype)
            w = np.empty(n_comp, dtype=X.dtype)
            out[r] = evaluate_one(X[r], kind, rotated, features, codes, rates, offsets, lam_num, lam_den,
                                  sigmas, comp_bias, starts, lengths, sources, group_comp, shift, rot,
                                  perm, a, z, fit, w)

    return evaluate_rows_parallel


def program_args(prog: Program, dtype) -> tuple:
    """The program's arrays in the order ``evaluate_rows`` takes them, cast to ``dtype``."""
    T = np.dtype(dtype).type
    f = lambda a: np.ascontiguousarray(a, dtype=T)  # noqa: E731
    return (
        np.int64(prog.kind), prog.rotated, np.int64(prog.features), prog.codes, f(prog.rates), f(prog.offsets),
        f(prog.lam_num), f(prog.lam_den), f(prog.sigmas), f(prog.comp_bias),
        prog.starts, prog.lengths, prog.sources, prog.group_comp, f(prog.shift), f(prog.rot), prog.perm,
    )


def evaluate(prog: Program, X: np.ndarray, dtype=np.float64, threads: int = 1) -> np.ndarray:
    """Errors of the rows of ``X`` (already validated, finite, C-contiguous).

    Parameters
    ----------
    prog : Program
    X : ndarray, shape (n, D)
    dtype : numpy floating type
        Arithmetic type (float64 unless asked otherwise).
    threads : int
        Rows are split into this many contiguous chunks evaluated concurrently.
    """
    T = np.dtype(dtype).type
    X = np.ascontiguousarray(X, dtype=T)
    if not X.flags.writeable:  # e.g. f.optimum: numba would compile a second, read-only variant
        X = X.copy()
    out = np.empty(X.shape[0], dtype=np.float64)
    kernel, _ = build_cpu_evaluator(T)
    args = program_args(prog, T)
    threads = max(1, min(int(threads), X.shape[0]))
    if threads == 1:
        kernel(X, out, *args)
        return out
    bounds = np.linspace(0, X.shape[0], threads + 1).astype(int)
    with ThreadPoolExecutor(max_workers=threads) as pool:
        jobs = [pool.submit(kernel, X[lo:hi], out[lo:hi], *args)
                for lo, hi in zip(bounds[:-1], bounds[1:])]
        for job in jobs:
            job.result()
    return out
