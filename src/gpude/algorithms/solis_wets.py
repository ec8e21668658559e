"""Solis-Wets local search (Solis & Wets 1981) as Molina's Realea implements it (solis.cc).

Shared by scatter search (:mod:`gpude.algorithms.ss`, its improvement method) and the memetic
algorithm to come. The operators are scalar functions compiled for ``"cpu"`` (numba.njit) or
``"cuda"`` (device functions), so a CPU loop and a thread per (individual, coordinate) on the GPU
compute the same numbers; the random draws come from explicit counters of :mod:`gpude.core.rng`.

State per individual (an "LS chain"): ``rho`` (one step size, the standard deviation of the
perturbation, float64), the ``bias`` vector (length D, the population's floating type), the
consecutive success count and the consecutive failure count.

One step from x (error f(x)):

1. ``dif_j = rho * N(0, 1)``, the normal from two counter-based uniforms (Box-Muller:
   ``sqrt(-2 ln(1 - u1)) cos(2 pi u2)``, draws ``ctr`` and ``ctr + 1`` of coordinate j);
2. candidate ``x + bias + dif``, clipped to the box, evaluated (1 evaluation). If strictly better:
   accept, ``bias <- 0.2 bias + 0.4 (dif + bias)``, success += 1, failures = 0;
3. else, if the budget allows a second evaluation: candidate ``x - bias - dif`` (clipped),
   evaluated; if strictly better: accept, ``bias <- bias - 0.4 (dif + bias)``, success += 1,
   failures = 0;
4. else (or without budget for step 3): ``bias <- bias / 2``, failures += 1, successes = 0;
5. then: successes >= 5: ``rho <- 2 rho``, successes = 0; else failures >= 3: ``rho <- rho / 2``,
   failures = 0. No bound on rho, no restart of rho (Realea).

So a step costs 1 or 2 evaluations. Multiply-adds are explicit FMAs (:mod:`gpude.core.fma`) so CPU and
GPU round alike; ``log``/``cos``/``sqrt`` are the targets' math libraries (identical on numba's
CUDA simulator; on a real GPU they may differ from the CPU's in the last ulp).

Initial rho: a parameter of the caller. Realea uses ``min(0.2, d_nn / 2)`` with d_nn the distance to
the nearest other individual divided by D; :func:`initial_rho` is that rule with the cap expressed
as a fraction of the box width (see :mod:`gpude.algorithms.ss` for scatter search's choice).
"""

from __future__ import annotations

import math
from functools import cache
from types import SimpleNamespace

import numpy as np

from ..core.fma import fma_for
from ..core.rng import build_rng
from .base import operator_jit

#: successes in a row that double rho, failures in a row that halve it (Realea)
SUCCESS_LIMIT, FAILURE_LIMIT = 5, 3


@cache
def build_sw_ops(dtype, target: str = "cpu") -> SimpleNamespace:
    """The Solis-Wets operators for one floating type, compiled for ``"cpu"`` or ``"cuda"``.

    Returns
    -------
    types.SimpleNamespace
        ``gaussian(key, ctr)`` (standard normal from draws ctr, ctr + 1), ``dif(key, ctr, rho)``
        (``rho * gaussian`` cast to the floating type), ``clip(v, lower, upper)``,
        ``plus(x, b, d, lower, upper)``, ``minus(x, b, d, lower, upper)`` (the two candidates'
        coordinates), ``bias_plus(b, d)``, ``bias_minus(b, d)``, ``bias_fail(b)`` (the bias
        updates), ``counts(success, succ, fail, rho) -> (succ, fail, rho)`` (step 4-5 bookkeeping).
    """
    T = np.dtype(dtype).type
    rng = build_rng(target)
    uniform = rng.uniform
    fma = fma_for(target)
    jit = operator_jit(target)
    two_pi = 2.0 * math.pi
    c02, c04, m04, half = T(0.2), T(0.4), T(-0.4), T(0.5)

    @jit
    def gaussian(key, ctr):
        u1 = 1.0 - uniform(key, ctr)  # (0, 1]: log is finite
        u2 = uniform(key, ctr + 1)
        return math.sqrt(-2.0 * math.log(u1)) * math.cos(two_pi * u2)

    @jit
    def dif(key, ctr, rho):
        return T(rho * gaussian(key, ctr))

    @jit
    def clip(v, lower, upper):
        lo, hi = T(lower), T(upper)
        if v < lo:
            return lo
        if v > hi:
            return hi
        return v

    @jit
    def plus(x, b, d, lower, upper):
        return clip(x + b + d, lower, upper)

    @jit
    def minus(x, b, d, lower, upper):
        return clip(x - b - d, lower, upper)

    @jit
    def bias_plus(b, d):
        return fma(c02, b, c04 * (d + b))

    @jit
    def bias_minus(b, d):
        return fma(m04, d + b, b)

    @jit
    def bias_fail(b):
        return b * half

    @jit
    def counts(success, succ, fail, rho):
        if success:
            succ += 1
            fail = 0
        else:
            fail += 1
            succ = 0
        if succ >= SUCCESS_LIMIT:
            rho = rho * 2.0
            succ = 0
        elif fail >= FAILURE_LIMIT:
            rho = rho * 0.5
            fail = 0
        return succ, fail, rho

    return SimpleNamespace(gaussian=gaussian, dif=dif, clip=clip, plus=plus, minus=minus,
                           bias_plus=bias_plus, bias_minus=bias_minus, bias_fail=bias_fail,
                           counts=counts, dtype=T, target=target)


def initial_rho(distance: float, dim: int, width: float, rho_max: float) -> float:
    """Realea's initial step ``min(rho_max, d / 2)`` with d = ``distance / dim`` (Realea divides the
    Euclidean distance by the dimension) and the cap ``rho_max * width`` (a fraction of the box)."""
    return min(rho_max * width, distance / dim / 2.0)


def sw_step(f, x, fx, bias, rho, succ, fail, dif, lower, upper, budget=2, dtype=np.float64):
    """One Solis-Wets step with the perturbation ``dif`` given (the reference the tests read).

    ``f`` maps a vector to its error; ``budget`` is the evaluations the step may use (1: no
    opposite try). Returns ``(x, fx, bias, rho, succ, fail, evaluations)`` (new arrays).
    """
    ops = build_sw_ops(dtype, "cpu")
    T = ops.dtype
    x, bias, dif = (np.asarray(v, dtype=T) for v in (x, bias, dif))
    cand = np.array([ops.plus(x[j], bias[j], dif[j], lower, upper) for j in range(x.size)], dtype=T)
    fc, used = f(cand), 1
    if fc < fx:
        bias = np.array([ops.bias_plus(bias[j], dif[j]) for j in range(x.size)], dtype=T)
        succ, fail, rho = ops.counts(True, succ, fail, rho)
        return cand, fc, bias, rho, succ, fail, used
    if budget >= 2:
        cand = np.array([ops.minus(x[j], bias[j], dif[j], lower, upper) for j in range(x.size)],
                        dtype=T)
        fc, used = f(cand), 2
        if fc < fx:
            bias = np.array([ops.bias_minus(bias[j], dif[j]) for j in range(x.size)], dtype=T)
            succ, fail, rho = ops.counts(True, succ, fail, rho)
            return cand, fc, bias, rho, succ, fail, used
    bias = np.array([ops.bias_fail(bias[j]) for j in range(x.size)], dtype=T)
    succ, fail, rho = ops.counts(False, succ, fail, rho)
    return x.copy(), fx, bias, rho, succ, fail, used
