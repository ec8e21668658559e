"""The basic functions of the benchmarks, written once for every evaluator.

Each basic function g is split into two scalar pieces that both the sequential
CPU evaluator and the block-parallel CUDA evaluator call:

``term(code, zi, zn, i, n) -> (s1, s2, p, m)``
    the contribution of coordinate ``i`` (of ``n``) to two sums ``s1``, ``s2``,
    one product ``p`` and one maximum ``m`` (which starts at 0: only
    non-negative terms are maximised; a sum for the codes of
    :data:`ROW3_SUM_CODES`, bi-Rastrigin's cosines); ``zi`` is the transformed
    coordinate and ``zn`` its successor, wrapping from ``n - 1`` to ``0``
    (Rosenbrock, Expanded Schaffer F6, Schaffer F7, Griewank-Rosenbrock,
    Dixon-Price and Nashed's Schaffer work on pairs), or, for the codes of
    :data:`UNROTATED_PAIR_CODES`, the coordinate before the rotation;
``final(code, s1, s2, p, m, n) -> g``
    the value of the basic function from the reduced sums, product and maximum.

A CPU loop adds the terms in order; a CUDA block reduces them in shared
memory. The expressions of the CEC basic functions follow the official CEC
2005/2014/2017 C code (``cec14_func.cpp``, ``cec17_func.cpp``) operation by
operation; the codes from ``SUM_SQUARES`` to ``SCHAFFER_PRINTED`` are the extra basic
functions of Nashed et al.'s Table 3 (PPSN 2012), written from the formulas that
``docs/functions.md`` fixes; those from ``DISCUS`` on complete the CEC 2017 suite
(``cec17_test_fast_pow.cpp``, quirks included).

The transforms that precede ``term`` (shift, shrink, rotation, the per-function
offset such as Rosenbrock's +1) belong to the function definitions in
:mod:`gpude.functions.suites`; the constants they need are here, per basic
function, in :data:`BASIC`.

:func:`build_basic` instantiates the code for one floating type and one target
(``numba.njit`` for the CPU, ``numba.cuda.jit(device=True)`` for CUDA), with
every constant cast to that type so that float32 stays float32 on the GPU.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

# Basic-function codes (the values are what the evaluators branch on).
SPHERE = 0
ZAKHAROV = 1
ROSENBROCK = 2
RASTRIGIN = 3
SCHWEFEL = 4
BENT_CIGAR = 5
HGBAT = 6
ESCAFFER6 = 7
KATSUURA = 8
HAPPYCAT = 9
GRIEROSEN = 10
ACKLEY = 11
ELLIPTIC = 12
GRIEWANK = 13
# Nashed et al. (PPSN 2012, Table 3): the basic functions that CEC 2005/2014/2017 lack.
SUM_SQUARES = 14       # sum (i+1) z_i^2
HYPERELLIPSOID = 15    # sum (i+1)^2 z_i^2
SCHWEFEL_222 = 16      # sum |z_i| + prod |z_i|
MAX_ABS = 17           # max |z_i| (Schwefel 2.6 after z = A x)
DIXON_PRICE = 18       # (z_0 - 1)^2 + sum_{i>=1} i (2 z_i^2 - z_{i-1})^2, as printed
SCHWEFEL_226 = 19      # 418.98... n - sum z_i sin(sqrt|z_i|)
KATSUURA_PROD = 20     # prod (1 + (i+1) sum_k |2^k z - round(2^k z)| 2^-k) - 1
SALOMON = 21           # 1 - cos(2 pi |z|) + 0.1 |z|
LEVY = 22              # Levy on y = z (rate 1/4 and offset 1 make y = 1 + x/4)
SCHAFFER_PRINTED = 23  # sum F(z_i, z_{i+1}), F = 0.5 + (sin^2 r - 0.5)/(1 + 1e-4 r^2), wrapping
# CEC 2017 (cec17_func.cpp): the basic functions that F01..F10 and Nashed's lack.
DISCUS = 24            # 1e6 z_0^2 + sum_{i>=1} z_i^2
WEIERSTRASS = 25       # sum_i sum_{j=0}^{20} 0.5^j cos(2 pi 3^j (z_i + 0.5)) - n sum_j 0.5^j cos(pi 3^j)
SCHAFFER_F7 = 26       # (sum_{i<n-1} sqrt(s_i) (1 + sin^2(50 s_i^0.2)))^2 / (n-1)^2, s_i = sqrt(z_i^2 + z_{i+1}^2)
BI_RASTRIGIN = 27      # Lunacek bi-Rastrigin; term(zi = (M u)_i, zn = u_i): u unrotated, see term()
LEVY_CEC17 = 28        # Levy on w = 1 + (z - 1)/4 (the CEC 2017 code's; its minimum is at z = 1)

# The official code's constants (cec17_func.cpp: PI, E; Schwefel's optimum and value).
PI = 3.1415926535897932384626433832795029
E = 2.7182818284590452353602874713526625
SCHWEFEL_SHIFT = 4.209687462275036e002
SCHWEFEL_VALUE = 4.189828872724338e002


@dataclass(frozen=True)
class BasicInfo:
    """What the official code does around one basic function.

    Attributes
    ----------
    name : str
        Human-readable name.
    rate : float
        Shrink rate applied to ``x - o`` before rotation (CEC 2014/2017 code).
    offset : float
        Added to every coordinate after rotation (Rosenbrock's ``z + 1``,
        HGBat's ``z - 1``, Schwefel's ``z + 420.97...``).
    """

    name: str
    rate: float
    offset: float


# Rates are written as in the C code (e.g. 5.12/100.0) so that they round identically.
BASIC = {
    SPHERE: BasicInfo("Sphere", 1.0, 0.0),
    ZAKHAROV: BasicInfo("Zakharov", 1.0, 0.0),
    ROSENBROCK: BasicInfo("Rosenbrock", 2.048 / 100.0, 1.0),
    RASTRIGIN: BasicInfo("Rastrigin", 5.12 / 100.0, 0.0),
    SCHWEFEL: BasicInfo("Modified Schwefel", 1000.0 / 100.0, SCHWEFEL_SHIFT),
    BENT_CIGAR: BasicInfo("Bent Cigar", 1.0, 0.0),
    HGBAT: BasicInfo("HGBat", 5.0 / 100.0, -1.0),
    ESCAFFER6: BasicInfo("Expanded Schaffer F6", 1.0, 0.0),
    KATSUURA: BasicInfo("Katsuura", 5.0 / 100.0, 0.0),
    HAPPYCAT: BasicInfo("HappyCat", 5.0 / 100.0, -1.0),
    GRIEROSEN: BasicInfo("Expanded Griewank plus Rosenbrock", 5.0 / 100.0, 1.0),
    ACKLEY: BasicInfo("Ackley", 1.0, 0.0),
    ELLIPTIC: BasicInfo("High Conditioned Elliptic", 1.0, 0.0),
    GRIEWANK: BasicInfo("Griewank", 600.0 / 100.0, 0.0),
    SUM_SQUARES: BasicInfo("Sum of Squares", 1.0, 0.0),
    HYPERELLIPSOID: BasicInfo("HyperEllipsoid", 1.0, 0.0),
    SCHWEFEL_222: BasicInfo("Schwefel 2.22", 1.0, 0.0),
    MAX_ABS: BasicInfo("Max |z_i|", 1.0, 0.0),
    DIXON_PRICE: BasicInfo("Dixon-Price (as printed)", 1.0, 0.0),
    SCHWEFEL_226: BasicInfo("Schwefel 2.26", 1.0, 0.0),
    KATSUURA_PROD: BasicInfo("Katsuura (Nashed)", 1.0, 0.0),
    SALOMON: BasicInfo("Salomon", 1.0, 0.0),
    LEVY: BasicInfo("Levy", 0.25, 1.0),
    SCHAFFER_PRINTED: BasicInfo("Schaffer (Nashed's printed form)", 1.0, 0.0),
    DISCUS: BasicInfo("Discus", 1.0, 0.0),
    WEIERSTRASS: BasicInfo("Weierstrass", 0.5 / 100.0, 0.0),
    SCHAFFER_F7: BasicInfo("Schaffer F7", 1.0, 0.0),
    BI_RASTRIGIN: BasicInfo("Lunacek bi-Rastrigin", 10.0 / 100.0, 0.0),
    LEVY_CEC17: BasicInfo("Levy (CEC 2017)", 1.0, 0.0),
}

#: Codes whose fourth reduced quantity is a sum (the cosine sum of bi-Rastrigin), not a maximum.
ROW3_SUM_CODES = (BI_RASTRIGIN,)
#: Codes whose term reads the coordinate before the rotation as ``zn`` (instead of the successor).
UNROTATED_PAIR_CODES = (BI_RASTRIGIN,)
#: Codes whose coordinate is negated where the shift is negative, before the rotation (bi-Rastrigin:
#: cec17_func.cpp's ``if (Os[i] < 0.0) tmpx[i] *= -1.``, with the index i of the basic function's own
#: vector: inside a hybrid the first n numbers of the shift, not those of its shuffled coordinates).
SHIFT_SIGN_CODES = (BI_RASTRIGIN,)


def build_basic(dtype, target: str = "cpu") -> SimpleNamespace:
    """Compile the basic functions for one floating type and one target.

    Parameters
    ----------
    dtype : {numpy.float64, numpy.float32}
        Type of every constant and of the arithmetic.
    target : {"cpu", "cuda"}
        ``"cpu"`` decorates with ``numba.njit`` (cached, GIL-free);
        ``"cuda"`` with ``numba.cuda.jit(device=True)``.

    Returns
    -------
    types.SimpleNamespace
        ``term`` and ``final`` dispatchers (see the module docstring), and
        ``comp_weight``/``comp_combine``, the composition functions' weighting.
    """
    T = np.dtype(dtype).type
    if target == "cpu":
        import numba

        jit = numba.njit(cache=True, nogil=True)
        fmod = np.fmod  # numba's CPU target has no math.fmod; np.fmod is C's exact fmod
    elif target == "cuda":
        from numba import cuda

        jit = cuda.jit(device=True)
        fmod = math.fmod
    else:
        raise ValueError(f"unknown target {target!r}; use 'cpu' or 'cuda'")

    zero, one, half, two = T(0.0), T(1.0), T(0.5), T(2.0)
    ten, twenty, hundred = T(10.0), T(20.0), T(100.0)
    two_pi = T(2.0) * T(PI)
    e_const = T(E)
    f500 = T(500.0)
    million = T(1.0e6)
    schwefel_value = T(SCHWEFEL_VALUE)
    f4000 = T(4000.0)
    milli = T(0.001)
    quarter = T(0.25)
    ackley_a = T(-0.2)
    six = T(6.0)
    one_point_two = T(1.2)
    pi_const = T(PI)
    tenth = T(0.1)
    ten_thousandth = T(0.0001)
    four = T(4.0)
    fifty = T(50.0)
    three = T(3.0)
    fifth = T(0.2)
    mu0 = T(2.5)  # bi-Rastrigin's mu0 and d (d = 1)
    eight_point_two = T(8.2)

    @jit
    def zakharov(zi, i):
        return zi * zi, half * T(i + 1) * zi

    @jit
    def rosenbrock(zi, zn, i, n):
        # Pairs (z_i, z_{i+1}) for i < n-1; no wrap-around.
        if i == n - 1:
            return zero
        tmp1 = zi * zi - zn
        tmp2 = zi - one
        return hundred * tmp1 * tmp1 + tmp2 * tmp2

    @jit
    def rastrigin(zi):
        return zi * zi - ten * math.cos(two_pi * zi) + ten

    @jit
    def schwefel(zi, n):
        # zi already carries +420.9687462275036; branches as in the C code.
        if zi > f500:
            r = f500 - fmod(zi, f500)
            tmp = (zi - f500) / hundred
            return -r * math.sin(math.sqrt(r)) + tmp * tmp / T(n)
        elif zi < -f500:
            r = fmod(math.fabs(zi), f500)
            tmp = (zi + f500) / hundred
            return -(-f500 + r) * math.sin(math.sqrt(f500 - r)) + tmp * tmp / T(n)
        return -zi * math.sin(math.sqrt(math.fabs(zi)))

    @jit
    def escaffer6(zi, zn):
        s = zi * zi + zn * zn
        t1 = math.sin(math.sqrt(s))
        t1 = t1 * t1
        t2 = one + milli * s
        return half + (t1 - half) / (t2 * t2)

    @jit
    def katsuura(zi, i, n):
        temp = zero
        tmp1 = one
        for _ in range(32):  # j = 1..32, tmp1 = 2**j exactly
            tmp1 = tmp1 * two
            tmp2 = tmp1 * zi
            temp += math.fabs(tmp2 - math.floor(tmp2 + half)) / tmp1
        return math.pow(one + T(i + 1) * temp, ten / math.pow(T(n), one_point_two))

    @jit
    def grierosen(zi, zn):
        tmp1 = zi * zi - zn
        tmp2 = zi - one
        temp = hundred * tmp1 * tmp1 + tmp2 * tmp2
        return (temp * temp) / f4000 - math.cos(temp) + one

    @jit
    def elliptic(zi, i, n):
        return math.pow(ten, six * T(i) / T(n - 1)) * zi * zi

    @jit
    def katsuura_factor(zi, i):
        # 1 + (i+1) sum_{k=1}^{32} |2^k z - round(2^k z)| 2^-k, the inner loop of katsuura
        temp = zero
        tmp1 = one
        for _ in range(32):
            tmp1 = tmp1 * two
            tmp2 = tmp1 * zi
            temp += math.fabs(tmp2 - math.floor(tmp2 + half)) / tmp1
        return one + T(i + 1) * temp

    @jit
    def dixon_price(zi, zn, i, n):
        # (z_0 - 1)^2 for i == 0, plus the printed sum's term for the pair (i, i+1): weight i+1
        v = zero
        if i == 0:
            t = zi - one
            v = t * t
        if i < n - 1:
            t = two * zn * zn - zi
            v += T(i + 1) * t * t
        return v

    @jit
    def levy(y, i, n):
        v = zero
        if i == 0:
            s = math.sin(pi_const * y)
            v = s * s
        t = y - one
        if i < n - 1:
            s = math.sin(pi_const * y + one)
            v += t * t * (one + ten * s * s)
        else:
            s = math.sin(two_pi * y)
            v += t * t * (one + s * s)
        return v

    @jit
    def schaffer_printed(zi, zn):
        s = zi * zi + zn * zn
        t1 = math.sin(math.sqrt(s))
        return half + (t1 * t1 - half) / (one + ten_thousandth * s)

    def weierstrass_constant():
        # n sum_j a^j cos(pi b^j)'s sum, once on the host in T's arithmetic (the code's own loop); a
        # number, not a jitted function, so that `final` captures no dispatcher: numba keys a cached
        # closure by its captured values, and a captured dispatcher pickles with its process's state
        # (a `gpude run` after `gpude warmup` then recompiled the evaluator)
        s, aj, bj = zero, one, one
        for _ in range(21):
            arg = T(two_pi * bj * half)
            c = math.cos(arg) if T is np.float64 else np.cos(arg)  # libm's cos, as the C code's
            s = T(s + aj * T(c))
            aj = T(aj * half)
            bj = T(bj * three)
        return s

    weierstrass_c = weierstrass_constant()

    # cf_cal's INF (1e99) for a component whose optimum is hit exactly, kept finite in float32.
    huge = T(min(1.0e99, float(np.finfo(T).max) / 16.0))

    @jit
    def comp_weight(d2, sigma, dim):
        """Composition weight from the raw squared distance d2 = |x - o_k|^2 (cf_cal)."""
        if d2 != zero:
            return math.pow(one / d2, half) * math.exp(-d2 / two / T(dim) / (sigma * sigma))
        return huge

    @jit
    def comp_combine(fit, w, n_comp):
        """sum_k w_k / sum(w) * fit_k, with equal weights when every w_k is 0 (cf_cal)."""
        w_max = zero
        for k in range(n_comp):
            if w[k] > w_max:
                w_max = w[k]
        w_sum = zero
        for k in range(n_comp):
            w_sum += w[k]
        if w_max == zero:
            for k in range(n_comp):
                w[k] = one
            w_sum = T(n_comp)
        f = zero
        for k in range(n_comp):
            f += w[k] / w_sum * fit[k]
        return f

    @jit
    def term(code, zi, zn, i, n):
        """Contribution of coordinate i to (s1, s2, p, m)."""
        if code == SPHERE:
            return zi * zi, zero, one, zero
        elif code == ZAKHAROV:
            a, b = zakharov(zi, i)
            return a, b, one, zero
        elif code == ROSENBROCK:
            return rosenbrock(zi, zn, i, n), zero, one, zero
        elif code == RASTRIGIN:
            return rastrigin(zi), zero, one, zero
        elif code == SCHWEFEL:
            return schwefel(zi, n), zero, one, zero
        elif code == BENT_CIGAR:
            if i == 0:
                return zi * zi, zero, one, zero
            return million * zi * zi, zero, one, zero
        elif code == HGBAT or code == HAPPYCAT:
            return zi * zi, zi, one, zero
        elif code == ESCAFFER6:
            return escaffer6(zi, zn), zero, one, zero
        elif code == KATSUURA:
            return zero, zero, katsuura(zi, i, n), zero
        elif code == GRIEROSEN:
            return grierosen(zi, zn), zero, one, zero
        elif code == ACKLEY:
            return zi * zi, math.cos(two_pi * zi), one, zero
        elif code == ELLIPTIC:
            return elliptic(zi, i, n), zero, one, zero
        elif code == GRIEWANK:
            return zi * zi, zero, math.cos(zi / math.sqrt(one + T(i))), zero
        elif code == SUM_SQUARES:
            return T(i + 1) * zi * zi, zero, one, zero
        elif code == HYPERELLIPSOID:
            w = T(i + 1)
            return w * w * zi * zi, zero, one, zero
        elif code == SCHWEFEL_222:
            a = math.fabs(zi)
            return a, zero, a, zero
        elif code == MAX_ABS:
            return zero, zero, one, math.fabs(zi)
        elif code == DIXON_PRICE:
            return dixon_price(zi, zn, i, n), zero, one, zero
        elif code == SCHWEFEL_226:
            return -zi * math.sin(math.sqrt(math.fabs(zi))), zero, one, zero
        elif code == KATSUURA_PROD:
            return zero, zero, katsuura_factor(zi, i), zero
        elif code == SALOMON:
            return zi * zi, zero, one, zero
        elif code == LEVY:
            return levy(zi, i, n), zero, one, zero
        elif code == SCHAFFER_PRINTED:
            return schaffer_printed(zi, zn), zero, one, zero
        elif code == DISCUS:
            if i == 0:
                return million * zi * zi, zero, one, zero
            return zi * zi, zero, one, zero
        # (the CEC 2017 terms below are written out here, not as jitted helpers: numba keys a cached
        # closure by its captured values, and these helpers made `term`'s key differ between two
        # processes, so a `gpude run` after `gpude warmup` compiled the evaluators again)
        elif code == WEIERSTRASS:
            # sum_{j=0}^{20} a^j cos(2 pi b^j (z + 0.5)), a = 0.5, b = 3; a^j, b^j as fast_pow's products
            s = zero
            aj, bj = one, one
            for _ in range(21):
                s += aj * math.cos(two_pi * bj * (zi + half))
                aj = aj * half
                bj = bj * three
            return s, zero, one, zero
        elif code == SCHAFFER_F7:
            # pairs (z_i, z_{i+1}) for i < n-1, no wrap-around (schaffer_F7_func)
            if i == n - 1:
                return zero, zero, one, zero
            r = math.pow(zi * zi + zn * zn, half)
            tmp = math.sin(fifty * math.pow(r, fifth))
            sq = math.pow(r, half)
            return sq + sq * tmp * tmp, zero, one, zero
        elif code == BI_RASTRIGIN:
            # zn: the coordinate before the rotation (0.1 (x - o), negated where o < 0); zi: (M u)_i, or
            # zn itself where nothing rotates (hybrids). tmpx = 2 u as the code forms it, and the
            # code's cosine is of M tmpx = 2 M u (exact: doubling commutes with the rounding).
            s = one - one / (two * math.pow(T(n) + twenty, half) - eight_point_two)  # the code's s
            mu1 = -math.pow((mu0 * mu0 - one) / s, half)
            t = two * zn + mu0
            a = t - mu0
            b = t - mu1
            return a * a, b * b, one, math.cos(two_pi * (two * zi))
        elif code == LEVY_CEC17:
            return levy(one + (zi - one) / four, i, n), zero, one, zero
        return zero, zero, one, zero

    @jit
    def final(code, s1, s2, p, m, n):
        """Value of the basic function from the reduced sums, product and maximum."""
        fn = T(n)
        if code == ZAKHAROV:
            return s1 + s2 * s2 + (s2 * s2) * (s2 * s2)
        elif code == SCHWEFEL:
            return s1 + schwefel_value * fn
        elif code == HGBAT:
            return math.pow(math.fabs(s1 * s1 - s2 * s2), half) + (half * s1 + s2) / fn + half
        elif code == HAPPYCAT:
            return math.pow(math.fabs(s1 - fn), quarter) + (half * s1 + s2) / fn + half
        elif code == KATSUURA:
            tmp1 = ten / fn / fn
            return p * tmp1 - tmp1
        elif code == ACKLEY:
            sum1 = ackley_a * math.sqrt(s1 / fn)
            sum2 = s2 / fn
            return e_const - twenty * math.exp(sum1) - math.exp(sum2) + twenty
        elif code == GRIEWANK:
            return one + s1 / f4000 - p
        elif code == SCHWEFEL_222:
            return s1 + p
        elif code == MAX_ABS:
            return m
        elif code == SCHWEFEL_226:
            return schwefel_value * fn + s1
        elif code == KATSUURA_PROD:
            return p - one
        elif code == SALOMON:
            r = math.sqrt(s1)
            return one - math.cos(two_pi * r) + tenth * r
        elif code == WEIERSTRASS:
            return s1 - fn * weierstrass_c
        elif code == SCHAFFER_F7:
            fn1 = T(n - 1)
            return s1 * s1 / fn1 / fn1
        elif code == BI_RASTRIGIN:
            # min(tmp1, s tmp2 + d n) + 10 (n - sum cos), m holding the cosine sum
            tmp2 = s2 * (one - one / (two * math.pow(T(n) + twenty, half) - eight_point_two)) + fn
            low = s1 if s1 < tmp2 else tmp2
            return low + ten * (fn - m)
        return s1

    return SimpleNamespace(term=term, final=final, comp_weight=comp_weight,
                           comp_combine=comp_combine, huge=huge, dtype=T, target=target)
