"""jSO (Brest, Maucec & Boskovic, CEC 2017) and L-SHADE (Tanabe & Fukunaga, CEC 2014): parameters and
operators, written once for the CPU and CUDA.

Both are SHADE with linear population size reduction (LPSR): a memory of H pairs (M_F, M_CR) from which
each individual draws its F (Cauchy) and CR (normal), mutation current-to-pbest/1 with an archive of
replaced parents, binomial crossover, the midpoint bound repair, and a population that shrinks
linearly in the FEs from NP_init to NP_min. jSO is L-SHADE at other settings plus four rules (the
weighted F of the pbest term, the CR and F schedules, the averaged memory update, p decreasing from
p_max to p_min) and iL-SHADE's fixed last memory slot and "pbest is not the target in the first half".
The rules, as coded here and in Brest's C++ (``justinjk007/Pentagonal-tiling`` archive/DE/lshade.cc):
``docs/algorithms.md`` (section jSO and L-SHADE), the specification every implementation follows.

Random decisions use :mod:`gpude.core.rng`'s counter generator on this layout: ``S = 72 + max(D, NP_init)``
slots per row, ``NP_init + 1`` rows per generation, ``counter(g, row, slot) = (g (NP_init + 1) + row) S
+ slot``. Generation 0: ``x_ij`` at slot ``72 + j`` of row i. Generation g >= 1, row i: 0 the memory
slot, 1-2 the normal CR (Box-Muller), 3 pbest, 4 r1, 5 r2, 6 j_rand, 7 the archive slot replaced when the
archive is full, 8..71 the Cauchy F's attempts, ``72 + j`` the crossover draw of coordinate j. Row
NP_init is reserved (Brest's code truncates the archive after a shrink: no draw).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from ..core.errors import InvalidInputError
from ..core.fma import fma_for
from ..core.rng import build_rng
from .base import RunParams, _is_int, operator_jit

#: fixed slots per row before the crossover draws (0..7 decisions, 8..71 the F attempts)
FIXED_SLOTS = 72
F_ATTEMPTS = 64
F_SLOT0 = 8
#: the terminal value of M_CR (CR = 0 for an individual that draws a negative mu_CR)
TERMINAL_CR = -1.0


def c_round(x: float) -> int:
    """C's ``round`` (half away from zero), as Brest's and Tanabe's code round NP, p_num and the plan."""
    r = math.floor(x)
    if x - r >= 0.5:
        r += 1
    return int(r)


def jso_popsize(dim: int) -> int:
    """jSO's NP_init for dimension D: round(25 sqrt(D) ln D) (at least 4)."""
    return max(4, c_round(25.0 * math.sqrt(dim) * math.log(dim)))


def lshade_popsize(dim: int) -> int:
    """L-SHADE's NP_init for dimension D: round(18 D) (at least 4)."""
    return max(4, c_round(18.0 * dim))


def slots_per_row(dim: int, np_init: int) -> int:
    """Random-number slots per (generation, row): 72 + max(D, NP_init)."""
    return FIXED_SLOTS + max(dim, np_init)


@dataclass(frozen=True)
class JSOParams(RunParams):
    """Parameters of jSO (the defaults) and of L-SHADE (:class:`LSHADEParams`: the same code at other
    settings). Validated on construction.

    Parameters
    ----------
    popsize : int
        NP_init, the initial population (>= np_min). :func:`jso_popsize` gives jSO's
        round(25 sqrt(D) ln D), :func:`lshade_popsize` L-SHADE's round(18 D).
    np_min : int
        NP_min, the final population of the linear reduction (>= 4: r1, r2 and pbest besides i).
    memory_size : int
        H, the pairs of the success-history memory.
    memory_F, memory_CR : float
        Initial M_F and M_CR (jSO 0.3 / 0.8; L-SHADE 0.5 / 0.5).
    fixed_last_slot : bool
        Drawing the memory's last slot gives mu_F = mu_CR = 0.9 (jSO, from iL-SHADE).
    arc_rate : float
        Archive capacity: round(NP_init arc_rate) at the start, int(NP arc_rate) after each shrink
        (Brest's/Tanabe's code); no archive when the capacity is <= 1.
    p_max, p_min : float
        p of current-to-pbest/1: p_max at the start, p_max (1 - (1 - p_min/p_max) nfes/max_fes)
        recomputed when the population shrinks (jSO 0.25 -> 0.125; L-SHADE 0.11 fixed). p_num =
        max(2, round(p NP)).
    weighted_F : bool
        jSO's Fw on the pbest term: 0.7 F (nfes < 0.2 max_fes), 0.8 F (< 0.4), else 1.2 F.
    cr_schedule : bool
        jSO: CR = max(CR, 0.7) while nfes < 0.25 max_fes, max(CR, 0.6) while < 0.5.
    f_schedule : bool
        jSO: F = min(F, 0.7) while nfes < 0.6 max_fes.
    averaged_memory : bool
        jSO: the memory's new value is (old + Lehmer mean) / 2; L-SHADE: the Lehmer mean.
    pbest_not_self : bool
        jSO (iL-SHADE): while nfes < 0.5 max_fes, pbest is never the target itself.
    bounds : str
        ``"midpoint"`` only: a mutant component outside the box becomes (bound + x_ij) / 2.
    error_floor : float
        Errors below it count as 0 in every comparison, as the CEC codes clamp them (1e-8); 0: off.
        Ignored (no clamp) when ``target`` is ``-inf`` (an objective's values are not errors).
    """

    np_min: int = 4
    memory_size: int = 5
    memory_F: float = 0.3
    memory_CR: float = 0.8
    fixed_last_slot: bool = True
    arc_rate: float = 1.0
    p_max: float = 0.25
    p_min: float = 0.125
    weighted_F: bool = True
    cr_schedule: bool = True
    f_schedule: bool = True
    averaged_memory: bool = True
    pbest_not_self: bool = True
    bounds: str = "midpoint"
    error_floor: float = 1e-8

    min_popsize = 4
    min_popsize_reason = " (pbest, r1 and r2 besides the target)"

    def __post_init__(self):
        super().__post_init__()

        def bad(msg):
            raise InvalidInputError(msg)

        def number(name):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not np.isfinite(v):
                bad(f"{name} must be a finite number, got {v!r}")
            return float(v)

        if not _is_int(self.np_min) or self.np_min < 4 or self.np_min > self.popsize:
            bad(f"np_min must be an integer in [4, popsize ({self.popsize})], got {self.np_min!r}")
        need = 2 if self.fixed_last_slot else 1
        if not _is_int(self.memory_size) or self.memory_size < need:
            bad(f"memory_size (H) must be an integer >= {need}"
                f"{' (its last slot is fixed at 0.9)' if self.fixed_last_slot else ''}, got {self.memory_size!r}")
        if not 0.0 < number("memory_F") <= 1.0:
            bad(f"memory_F must lie in (0, 1], got {self.memory_F!r}")
        if not 0.0 <= number("memory_CR") <= 1.0:
            bad(f"memory_CR must lie in [0, 1], got {self.memory_CR!r}")
        if number("arc_rate") < 0.0:
            bad(f"arc_rate must be >= 0 (0: no archive), got {self.arc_rate!r}")
        if not 0.0 < number("p_min") <= number("p_max") <= 1.0:
            bad(f"p_min and p_max must satisfy 0 < p_min <= p_max <= 1, got p_min={self.p_min!r}, "
                f"p_max={self.p_max!r}")
        for name in ("fixed_last_slot", "weighted_F", "cr_schedule", "f_schedule", "averaged_memory",
                     "pbest_not_self"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                bad(f"{name} must be true or false, got {getattr(self, name)!r}")
        if self.bounds != "midpoint":
            bad(f"unknown bound mode {self.bounds!r}; jSO and L-SHADE use 'midpoint' ((bound + x_ij) / 2)")
        if number("error_floor") < 0.0:
            bad(f"error_floor must be >= 0, got {self.error_floor!r}")

    @property
    def floor(self) -> float:
        """The error floor the operators compare with (-inf: no clamp, when there is no target)."""
        return -np.inf if self.target == -np.inf else float(self.error_floor)

    def archive_capacity0(self) -> int:
        """The archive's capacity at the start: round(NP_init arc_rate)."""
        return c_round(self.popsize * self.arc_rate)


@dataclass(frozen=True)
class LSHADEParams(JSOParams):
    """L-SHADE's settings (Tanabe & Fukunaga 2014; their CEC 2014 code): H = 6, M_F = M_CR = 0.5,
    arc_rate 2.6, p = 0.11 fixed, none of jSO's rules. ``popsize`` (NP_init) is round(18 D):
    :func:`lshade_popsize`."""

    memory_size: int = 6
    memory_F: float = 0.5
    memory_CR: float = 0.5
    fixed_last_slot: bool = False
    arc_rate: float = 2.6
    p_max: float = 0.11
    p_min: float = 0.11
    weighted_F: bool = False
    cr_schedule: bool = False
    f_schedule: bool = False
    averaged_memory: bool = False
    pbest_not_self: bool = False


def build_jso_ops(dtype, target: str = "cpu") -> SimpleNamespace:
    """jSO's operators for one floating type, compiled for ``"cpu"`` (numba.njit) or ``"cuda"``
    (device functions). Scalars F, CR, p and the memory are float64 on every dtype; the population's
    values are ``dtype``. ``np_init`` and ``dim`` fix the counter layout (:func:`slots_per_row`).

    Returns
    -------
    types.SimpleNamespace
        ``counter(g, row, slot, np_init, dim)``; ``init_value(key, i, j, np_init, dim, lower, upper)``;
        ``draw_memory_slot(key, g, i, np_init, dim, H) -> r``; ``slot_means(r, H, m_f, m_cr,
        fixed_last) -> (mu_F, mu_CR)``; ``draw_CR(key, g, i, np_init, dim, mu_CR, nfes, max_fes,
        cr_schedule)``; ``draw_F(key, g, i, np_init, dim, mu_F, nfes, max_fes, f_schedule)``;
        ``weighted(F, nfes, max_fes, weighted_F) -> Fw``; ``pick(key, g, i, np_init, dim, NP, A, p_num,
        rank_i, nfes, max_fes, pbest_not_self) -> (pbest_rank, r1, r2, jrand)``; ``trial_value(key, g,
        i, j, np_init, dim, jrand, F, Fw, CR, xi, xpbest, xr1, xr2, lower, upper)``; ``archive_slot(key,
        g, i, np_init, dim, arc_cap)``; ``archive_capacity(NP, arc_rate, first)``; ``archive_removal(A,
        arc_cap) -> A'``; ``planned_popsize(nfes, np_init, np_min, max_fes)``; ``next_popsize(NP, nfes,
        np_init, np_min, max_fes)``; ``p_at(nfes, p_max, p_min, max_fes)``; ``p_count(p, NP)``;
        ``clamped(e, floor)``; ``rank_of(fit, NP, i, floor)`` (0 = best, ties by index);
        ``removal_rank(fit, NP, i, floor)`` (0 = removed first: worst, ties lower index first);
        ``memory_update(m_f, m_cr, pos, s_f, s_cr, delta, n, averaged)``; ``c_round(x)``.
    """
    T = np.dtype(dtype).type
    rng = build_rng(target)
    uniform, below = rng.uniform, rng.below
    fma = fma_for(target)
    jit = operator_jit(target)
    half = T(0.5)
    pi = math.pi

    @jit
    def round_c(x):
        r = math.floor(x)
        if x - r >= 0.5:
            r += 1.0
        return np.int64(r)

    @jit
    def counter(g, row, slot, np_init, dim):
        S = FIXED_SLOTS + max(dim, np_init)
        return (np.int64(g) * (np_init + 1) + row) * S + slot

    @jit
    def init_value(key, i, j, np_init, dim, lower, upper):
        u = uniform(key, counter(0, i, FIXED_SLOTS + j, np_init, dim))
        return T(fma(u, upper - lower, lower))

    @jit
    def draw_memory_slot(key, g, i, np_init, dim, H):
        return below(key, counter(g, i, 0, np_init, dim), H)

    @jit
    def slot_means(r, H, m_f, m_cr, fixed_last):
        if fixed_last and r == H - 1:
            return 0.9, 0.9
        return m_f[r], m_cr[r]

    @jit
    def draw_CR(key, g, i, np_init, dim, mu_CR, nfes, max_fes, cr_schedule):
        if mu_CR < 0.0:  # the terminal value (Brest: mu_cr < 0, as the averaged memory makes -1 negative)
            CR = 0.0
        else:
            u1 = uniform(key, counter(g, i, 1, np_init, dim))
            u2 = uniform(key, counter(g, i, 2, np_init, dim))
            n = math.sqrt(-2.0 * math.log(1.0 - u1)) * math.cos(2.0 * pi * u2)
            CR = mu_CR + 0.1 * n
            if CR > 1.0:
                CR = 1.0
            elif CR < 0.0:
                CR = 0.0
        if cr_schedule:
            if nfes < 0.25 * max_fes and CR < 0.7:
                CR = 0.7
            if nfes < 0.5 * max_fes and CR < 0.6:
                CR = 0.6
        return CR

    @jit
    def draw_F(key, g, i, np_init, dim, mu_F, nfes, max_fes, f_schedule):
        F = mu_F
        for k in range(F_ATTEMPTS):
            u = uniform(key, counter(g, i, F_SLOT0 + k, np_init, dim))
            c = mu_F + 0.1 * math.tan(pi * (u - 0.5))
            if c > 0.0:
                F = c
                break
        if F > 1.0:
            F = 1.0
        if f_schedule and nfes < 0.6 * max_fes and F > 0.7:
            F = 0.7
        return F

    @jit
    def weighted(F, nfes, max_fes, weighted_F):
        if not weighted_F:
            return F
        if nfes < 0.2 * max_fes:
            return 0.7 * F
        if nfes < 0.4 * max_fes:
            return 0.8 * F
        return 1.2 * F

    @jit
    def pick(key, g, i, np_init, dim, NP, A, p_num, rank_i, nfes, max_fes, pbest_not_self):
        # pbest: a rank among the p_num best; jSO's first half skips the target's own rank
        if pbest_not_self and nfes < 0.5 * max_fes and rank_i < p_num:
            pbest_rank = below(key, counter(g, i, 3, np_init, dim), p_num - 1)
            if pbest_rank >= rank_i:
                pbest_rank += 1
        else:
            pbest_rank = below(key, counter(g, i, 3, np_init, dim), p_num)
        r1 = below(key, counter(g, i, 4, np_init, dim), NP - 1)
        if r1 >= i:
            r1 += 1
        lo, hi = min(i, r1), max(i, r1)
        r2 = below(key, counter(g, i, 5, np_init, dim), NP + A - 2)
        if r2 >= lo:
            r2 += 1
        if r2 >= hi:
            r2 += 1
        jrand = below(key, counter(g, i, 6, np_init, dim), dim)
        return pbest_rank, r1, r2, jrand

    @jit
    def crossover_takes(key, g, i, j, np_init, dim, jrand, CR):
        return uniform(key, counter(g, i, FIXED_SLOTS + j, np_init, dim)) < CR or j == jrand

    @jit
    def mutant(F, Fw, xi, xpbest, xr1, xr2):
        """v = x_i + Fw (x_pbest - x_i) + F (x_r1 - x_r2), two FMAs (the same rounding on every target)."""
        return fma(T(F), xr1 - xr2, fma(T(Fw), xpbest - xi, xi))

    @jit
    def repaired(v, xi, lower, upper):
        lo, hi = T(lower), T(upper)
        if v < lo:
            return (lo + xi) * half
        if v > hi:
            return (hi + xi) * half
        return v

    @jit
    def trial_value(key, g, i, j, np_init, dim, jrand, F, Fw, CR, xi, xpbest, xr1, xr2, lower, upper):
        if not crossover_takes(key, g, i, j, np_init, dim, jrand, CR):
            return xi
        return repaired(mutant(F, Fw, xi, xpbest, xr1, xr2), xi, lower, upper)

    @jit
    def archive_slot(key, g, i, np_init, dim, arc_cap):
        return below(key, counter(g, i, 7, np_init, dim), arc_cap)

    @jit
    def archive_capacity(NP, arc_rate, first):
        # Brest's/Tanabe's code: (int)round(NP * arc_rate) at the start, (int)(NP * arc_rate) after a shrink
        if first:
            return round_c(NP * arc_rate)
        return np.int64(NP * arc_rate)

    @jit
    def archive_removal(A, arc_cap):
        """The archive's count after a shrink: the first arc_cap entries are kept (Brest's code)."""
        return min(A, arc_cap)

    @jit
    def planned_popsize(nfes, np_init, np_min, max_fes):
        return round_c(((np_min - np_init) / np.float64(max_fes)) * nfes + np_init)

    @jit
    def next_popsize(NP, nfes, np_init, np_min, max_fes):
        plan = planned_popsize(nfes, np_init, np_min, max_fes)
        if NP > plan:
            return max(plan, np_min)
        return NP

    @jit
    def p_at(nfes, p_max, p_min, max_fes):
        return p_max * (1.0 - (1.0 - p_min / p_max) * nfes / np.float64(max_fes))

    @jit
    def p_count(p, NP):
        return max(np.int64(2), round_c(NP * p))

    @jit
    def clamped(e, floor):
        if e < floor:
            return 0.0
        return np.float64(e)

    @jit
    def rank_of(fit, NP, i, floor):
        fi = clamped(fit[i], floor)
        r = 0
        for k in range(NP):
            fk = clamped(fit[k], floor)
            if fk < fi or (fk == fi and k < i):
                r += 1
        return r

    @jit
    def removal_rank(fit, NP, i, floor):
        fi = clamped(fit[i], floor)
        r = 0
        for k in range(NP):
            fk = clamped(fit[k], floor)
            if fk > fi or (fk == fi and k < i):
                r += 1
        return r

    @jit
    def memory_update(m_f, m_cr, pos, s_f, s_cr, delta, n, averaged):
        """M_F[pos], M_CR[pos] from the n successes (in index order), as Brest's code: weights delta_k /
        sum(delta), Lehmer means; M_CR = -1 when sum(w CR) == 0; jSO averages both with the old value."""
        total = 0.0
        for k in range(n):
            total += delta[k]
        sf2 = 0.0
        sf1 = 0.0
        scr2 = 0.0
        scr1 = 0.0
        for k in range(n):
            w = delta[k] / total
            sf2 = fma(w * s_f[k], s_f[k], sf2)
            sf1 = fma(w, s_f[k], sf1)
            scr2 = fma(w * s_cr[k], s_cr[k], scr2)
            scr1 = fma(w, s_cr[k], scr1)
        new_f = sf2 / sf1
        if scr1 == 0.0:
            new_cr = TERMINAL_CR
        else:
            new_cr = scr2 / scr1
        if averaged:
            new_f = (new_f + m_f[pos]) / 2.0
            new_cr = (new_cr + m_cr[pos]) / 2.0
        m_f[pos] = new_f
        m_cr[pos] = new_cr

    return SimpleNamespace(counter=counter, init_value=init_value, draw_memory_slot=draw_memory_slot,
                           slot_means=slot_means, draw_CR=draw_CR, draw_F=draw_F, weighted=weighted,
                           pick=pick, crossover_takes=crossover_takes, mutant=mutant, repaired=repaired,
                           trial_value=trial_value, archive_slot=archive_slot,
                           archive_capacity=archive_capacity, archive_removal=archive_removal,
                           planned_popsize=planned_popsize, next_popsize=next_popsize, p_at=p_at,
                           p_count=p_count, clamped=clamped, rank_of=rank_of, removal_rank=removal_rank,
                           memory_update=memory_update, c_round=round_c, uniform=uniform, below=below,
                           dtype=T)


def lehmer(weights, values) -> float:
    """The weighted Lehmer mean sum(w v^2) / sum(w v) (host side, for checks)."""
    w, v = np.asarray(weights, dtype=np.float64), np.asarray(values, dtype=np.float64)
    return float((w * v * v).sum() / (w * v).sum())
