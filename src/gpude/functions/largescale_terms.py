"""The large-scale functions' formulas (:mod:`gpude.functions.largescale`): their codes and the
per-coordinate terms and closing formulas, one source compiled for the CPU and the GPU.

Its own module so that the GPU evaluator that streams over D (:mod:`gpude.functions.streaming_gpu`)
and MA-SW's fused local search read the formulas without importing the function objects, which
import that evaluator in turn.
"""

from __future__ import annotations

import math
from functools import cache

# formula codes
RASTRIGIN, GRIEWANK, SALOMON, DISCUS, SUM_SQUARES, SCHWEFEL12 = range(6)
ELLIPTIC, ACKLEY, ELLIPTIC_ROT, ACKLEY_ROT, ROSEN_HEAD, ROSEN_HALF, ROSEN_GROUPS, ROSEN = range(6, 14)

#: codes whose first m permuted coordinates form a separately treated group ("head")
HEAD_CODES = (ELLIPTIC_ROT, ACKLEY_ROT, ROSEN_HEAD)
#: codes with a second accumulator (Griewank's product, Ackley's cosine sum)
TWO_ACC_CODES = (GRIEWANK, ACKLEY, ACKLEY_ROT)
#: codes whose terms read the next position too (Rosenbrock)
NEXT_CODES = (ROSEN_HALF, ROSEN_GROUPS, ROSEN)


@cache
def build_terms(target: str = "cpu"):
    """The per-coordinate terms and closing formulas, compiled for ``"cpu"`` or ``"cuda"``
    (float64 arithmetic: the coordinates may be stored as float32, the sums of millions of terms
    are not)."""
    from ..core.jit import operator_jit

    jit = operator_jit(target)
    two_pi, e = 2.0 * math.pi, math.e
    log_1e6 = math.log(1e6)

    @jit
    def rastrigin(y):
        return y * y - 10.0 * math.cos(two_pi * y) + 10.0

    @jit
    def ro(a, b):  # one Rosenbrock term
        t = a * a - b
        return 100.0 * t * t + (a - 1.0) * (a - 1.0)

    @jit
    def elliptic_weight(i, n):
        if n == 1:
            return 1.0
        return math.exp(log_1e6 * i / (n - 1))

    @jit
    def ackley(s2, sc, n):
        return -20.0 * math.exp(-0.2 * math.sqrt(s2 / n)) - math.exp(sc / n) + 20.0 + e

    @jit
    def term(code, k, y, y_next, dim, m):
        """(contribution to sum 0, to accumulator 1) of coordinate position k (value y, the next
        position's value y_next) for the positions streamed (the head, if any, excluded)."""
        if code == RASTRIGIN:
            return rastrigin(y), 0.0
        if code == GRIEWANK:
            return y * y / 4000.0, math.cos(y / math.sqrt(k + 1.0))
        if code == SALOMON:
            return y * y, 0.0
        if code == DISCUS:
            return (1e6 if k == 0 else 1.0) * y * y, 0.0
        if code == SUM_SQUARES:
            return (k + 1.0) * y * y, 0.0
        if code == ELLIPTIC:
            return elliptic_weight(k, dim) * y * y, 0.0
        if code == ACKLEY:
            return y * y, math.cos(two_pi * y)
        if code == ELLIPTIC_ROT:
            return elliptic_weight(k - m, dim - m) * y * y, 0.0
        if code == ACKLEY_ROT:
            return y * y, math.cos(two_pi * y)
        if code == ROSEN_HEAD:
            return y * y, 0.0
        if code == ROSEN_HALF:
            if k >= dim // 2:
                return y * y, 0.0
            if k % m == m - 1:
                return 0.0, 0.0
            return ro(y, y_next), 0.0
        if code == ROSEN_GROUPS:
            if k % m == m - 1:
                return 0.0, 0.0
            return ro(y, y_next), 0.0
        if code == ROSEN:
            if k == dim - 1:
                return 0.0, 0.0
            return ro(y, y_next), 0.0
        return 0.0, 0.0  # SCHWEFEL12 has its own scan

    @jit
    def close(code, s0, s1, head, dim, m):
        """f(x) - f(x*) from the sums (and the head group's value, 0 without one)."""
        if code == GRIEWANK:
            return s0 - s1 + 1.0
        if code == SALOMON:
            r = math.sqrt(s0)
            return 1.0 - math.cos(two_pi * r) + 0.1 * r
        if code == ACKLEY:
            return ackley(s0, s1, dim)
        if code == ACKLEY_ROT:
            return 1e6 * head + ackley(s0, s1, dim - m)
        if code == ELLIPTIC_ROT or code == ROSEN_HEAD:
            return 1e6 * head + s0
        return s0

    @jit
    def head_from(code, y, r, m):
        """The head group's value from its coordinates y (z[P_0..P_{m-1}]) and, for F4 and F6, their
        rotation r = y M: Ro(y) (F8), E(r) (F4), A(r) (F6)."""
        if code == ROSEN_HEAD:
            h = 0.0
            for i in range(m - 1):
                h += ro(y[i], y[i + 1])
            return h
        s0 = 0.0
        s1 = 0.0
        for t in range(m):
            if code == ELLIPTIC_ROT:
                s0 += elliptic_weight(t, m) * r[t] * r[t]
            else:
                s0 += r[t] * r[t]
                s1 += math.cos(two_pi * r[t])
        if code == ELLIPTIC_ROT:
            return s0
        return ackley(s0, s1, m)

    @jit
    def rotated(y, M, t, m):
        """(y M)_t, summed in index order."""
        r = 0.0
        for i in range(m):
            r += y[i] * M[i, t]
        return r

    return term, close, head_from, rotated
