"""MA-SW-Chains' NAM parent choice on the CPU: the one numba loop that ``masw/sequential``'s GA step
and its profiled split (:mod:`gpude.implementations.masw_profile`) both run."""

from __future__ import annotations

from functools import cache

import numba
import numpy as np

from ..algorithms.masw import build_masw_ops


@cache
def build_nam(dtype):
    """``(sq_dist, nam_parents)``, numba functions:

    ``sq_dist(x, y)``
        The squared Euclidean distance of two vectors, summed in float64 in coordinate order.
    ``nam_parents(pop, k, key, unit0, W, nam, parents)``
        The mother and father of children 0..k-1 (units unit0..) into ``parents``: the mother is the
        unit's first pick, the father the farthest from her of its next ``nam`` picks.
    """
    pick = build_masw_ops(dtype, "cpu").pick
    jit = numba.njit(cache=True, nogil=True)

    @jit
    def sq_dist(x, y):
        acc = 0.0
        for j in range(x.shape[0]):
            d = np.float64(x[j]) - np.float64(y[j])
            acc += d * d
        return acc

    @jit
    def nam_parents(pop, k, key, unit0, W, nam, parents):
        P = pop.shape[0]
        picks = np.empty(nam + 1, np.int64)
        for c in range(k):
            pick(key, unit0 + c, W, P, nam, picks)
            mother = picks[0]
            father, far = picks[1], -1.0
            for q in range(1, nam + 1):
                d = sq_dist(pop[mother], pop[picks[q]])
                if d > far:
                    far, father = d, picks[q]
            parents[c, 0], parents[c, 1] = mother, father

    return sq_dist, nam_parents
