"""MA-SW-Chains (Molina, Lozano & Herrera 2010) as Molina's Realea code runs it, with Lastra,
Molina & Benítez's (2015) GPU change: parameters and operators, written once for the CPU and the
GPU implementations.

The algorithm (Molina et al.'s MA-SW-Chains as Realea and Lastra et al. describe it; *choice* marks what
the sources leave open):

* **initial population**: ``popsize`` individuals, stratified per coordinate as Realea's
  ``initind.cc``: the box is cut into S = ceil(popsize / 10) equal intervals, a random permutation
  of the individuals assigns each to an interval (individual i gets interval
  ``perm_j(i) * S // popsize``: each interval is used by 10 individuals when popsize is a multiple
  of 10, Realea's requirement, and by about popsize / S otherwise), uniform inside it.
* a **cycle** (a "generation" of the run loop) alternates
  1. the **steady-state GA** for ``ssga_evals`` evaluations (500: ``ls_intensity (1 - ls_share) /
     ls_share`` with r_L/G = ``ls_share`` = 0.5, Realea's n_frec), in steps of ``offspring``
     children evaluated together (Lastra's GPU design: 20; Realea's SSGA: 1). Per child: mother
     uniform; ``nam`` (3) further individuals drawn without replacement, the one farthest from the
     mother (Euclidean) is the father (negative assortative mating); BLX-``alpha`` (0.5): gene j
     uniform in [max(lower, lo - I), min(upper, hi + I)], lo/hi the parents' values, I = alpha
     (hi - lo); BGA mutation with probability ``mutation_prob`` (0.125): one uniform gene
     +- 0.1 (upper - lower) sum_{k<16} a_k 2^-k, a_k = 1 with probability 1/16, clipped.
     Replacement (mu + offspring): population and children ranked by (error, population before
     children, index); the best ``popsize`` stay, entering children take the slots of the leaving
     individuals (ascending), and a replaced slot loses its LS chain. With offspring = 1 this is
     Realea's replace-worst (a child enters only if strictly better than the worst).
  2. **Solis-Wets** for ``ls_intensity`` (I_str = 500) evaluations on one individual: the best of
     S_LS (individuals not marked "non-improved"; lowest error, lowest index on ties), or a
     uniform one when S_LS is empty. Its chain (bias, rho, success and failure counts) continues
     if it has one; otherwise bias = 0, counts 0, ``rho = min(rho_max, d_nn / 2)``, d_nn the
     Euclidean distance to the nearest other individual divided by D (Realea). The steps are
     :mod:`gpude.algorithms.solis_wets`'s (1 or 2 evaluations each). If the result is better by at
     least ``improvement`` (1e-9: Realea's threshold 1e-8 / 10, absolute) it replaces the individual
     in place and the chain is stored; otherwise the individual is marked non-improved, its chain
     dropped and the result discarded.

  The budget may end inside either phase; no evaluation beyond it is made. Restarts: off
  (Rmalschains disables Realea's).

Random numbers (counter-based, :mod:`gpude.core.rng`): draw ``unit * W + slot`` with W = 64 + 2 D.
Units 0 .. popsize - 1 (slot 64 + j: the uniform inside the interval of individual i, coordinate
j) and popsize .. 2 popsize - 2 (slot 64 + j: the Fisher-Yates draws of coordinate j's
permutation) initialise; after that the run hands out units in order: one per child (slots 0-22:
mother, NAM candidates, mutation; slot 64 + j: gene j's BLX draw), and per LS phase one unit
(slot 0: the uniform choice) followed by ``ls_intensity`` units, one per possible step (slots
64 + 2 j, 64 + 2 j + 1: coordinate j's normal). So a CPU loop and GPU threads draw the same
numbers for the same decisions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from types import SimpleNamespace

import numpy as np

from ..core.errors import InvalidInputError
from ..core.fma import fma_for
from ..core.rng import build_rng
from .base import RunParams, _is_int, operator_jit

BOUND_MODES = ("clip",)
#: slots of a unit before the per-coordinate draws
HEADER_SLOTS = 64
SLOT_MOTHER, SLOT_NAM, SLOT_MUTATE, SLOT_GENE, SLOT_SIGN, SLOT_BITS = 0, 1, 17, 18, 19, 20
BGA_BITS = 16
MAX_NAM = SLOT_MUTATE - SLOT_NAM
#: individuals per initial interval (Realea)
STRATUM = 10


def _number(v) -> bool:
    return not isinstance(v, bool) and isinstance(v, (int, float, np.floating)) and np.isfinite(v)


@dataclass(frozen=True)
class MASWParams(RunParams):
    """Parameters of MA-SW-Chains, validated on construction.

    Parameters
    ----------
    popsize : int
        The steady-state GA's population (60, Realea's SSGA default; Lastra et al. do not say;
        Rmalschains uses 50). >= 4 (a mother and three NAM candidates).
    offspring : int
        Children per GA step, evaluated together (20, Lastra's GPU design; 1 is Realea's SSGA).
    ls_intensity : int
        I_str, evaluations per Solis-Wets application (500).
    ls_share : float
        r_L/G, the share of evaluations given to the local search (0.5), in (0, 1).
    nam : int
        N_NAM, candidates for the father (3); 1 <= nam <= popsize - 1.
    alpha : float
        BLX-alpha's alpha (0.5), >= 0.
    mutation_prob : float
        BGA mutation probability per child (0.125), in [0, 1].
    rho_max : float
        Cap of a new chain's step size (0.2, Realea's "sw"), in the coordinates' units; > 0.
    improvement : float
        The least improvement that keeps an LS result and its chain (1e-9), >= 0.
    bounds : str
        ``"clip"`` (the only mode).
    max_fes, target, dtype, max_time_s
        See :class:`gpude.algorithms.base.RunParams`.
    """

    popsize: int = 60
    offspring: int = 20
    ls_intensity: int = 500
    ls_share: float = 0.5
    nam: int = 3
    alpha: float = 0.5
    mutation_prob: float = 0.125
    rho_max: float = 0.2
    improvement: float = 1e-9
    bounds: str = "clip"

    min_popsize = 4
    min_popsize_reason = " (a mother and three candidates for negative assortative mating)"

    def __post_init__(self):
        super().__post_init__()

        def bad(msg):
            raise InvalidInputError(msg)

        if not _is_int(self.offspring) or self.offspring < 1:
            bad(f"offspring must be an integer >= 1 (children per GA step), got {self.offspring!r}")
        if not _is_int(self.ls_intensity) or self.ls_intensity < 1:
            bad(f"ls_intensity (I_str) must be an integer >= 1, got {self.ls_intensity!r}")
        if not _number(self.ls_share) or not 0.0 < self.ls_share < 1.0:
            bad(f"ls_share (r_L/G) must lie strictly between 0 and 1, got {self.ls_share!r}")
        if not _is_int(self.nam) or not 1 <= self.nam <= min(MAX_NAM, self.popsize - 1):
            bad(f"nam must be an integer in [1, min({MAX_NAM}, popsize - 1)], got {self.nam!r}")
        if not _number(self.alpha) or self.alpha < 0:
            bad(f"alpha (BLX) must be a finite number >= 0, got {self.alpha!r}")
        if not _number(self.mutation_prob) or not 0.0 <= self.mutation_prob <= 1.0:
            bad(f"mutation_prob must lie in [0, 1], got {self.mutation_prob!r}")
        if not _number(self.rho_max) or self.rho_max <= 0:
            bad(f"rho_max must be a finite number > 0, got {self.rho_max!r}")
        if not _number(self.improvement) or self.improvement < 0:
            bad(f"improvement must be a finite number >= 0, got {self.improvement!r}")
        if self.bounds not in BOUND_MODES:
            bad(f"unknown bound mode {self.bounds!r}; MA-SW-Chains uses 'clip'")

    @property
    def ssga_evals(self) -> int:
        """Evaluations of the GA phase of a cycle (Realea's n_frec)."""
        return max(1, int(round(self.ls_intensity * (1.0 - self.ls_share) / self.ls_share)))

    @property
    def cycle_evals(self) -> int:
        return self.ssga_evals + self.ls_intensity

    @property
    def strata(self) -> int:
        return -(-self.popsize // STRATUM)


def width(dim: int) -> int:
    """W, the slots per unit."""
    return HEADER_SLOTS + 2 * int(dim)


def first_unit(popsize: int) -> int:
    """The first unit after initialisation."""
    return 2 * popsize - 1


@cache
def build_masw_ops(dtype, target: str = "cpu") -> SimpleNamespace:
    """The operators for one floating type, compiled for ``"cpu"`` or ``"cuda"``.

    Returns
    -------
    types.SimpleNamespace
        ``ctr(unit, slot, W)``; ``init_column(key, j, popsize, strata, W, lower, upper, perm, col)``
        (coordinate j of every initial individual into ``col``; ``perm`` scratch of popsize ints);
        ``pick(key, unit, W, popsize, nam, picks)`` (mother then the NAM candidates into
        ``picks``); ``blx(key, unit, W, j, a, b, alpha, lower, upper)``; ``mutation(key, unit, W,
        dim, prob, lower, upper) -> (gene or -1, delta)``; ``uniform``, ``below``, ``clip``.
    """
    T = np.dtype(dtype).type
    rng = build_rng(target)
    uniform, below = rng.uniform, rng.below
    fma = fma_for(target)
    jit = operator_jit(target)
    H = HEADER_SLOTS
    inv16 = 1.0 / 16.0

    @jit
    def ctr(unit, slot, W):
        return np.int64(unit) * W + slot

    @jit
    def clip(v, lower, upper):
        lo, hi = T(lower), T(upper)
        if v < lo:
            return lo
        if v > hi:
            return hi
        return v

    @jit
    def init_column(key, j, popsize, strata, W, lower, upper, perm, col):
        for i in range(popsize):
            perm[i] = i
        for t in range(popsize - 1, 0, -1):  # Fisher-Yates, draws of units popsize .. 2 popsize - 2
            s = below(key, ctr(popsize + t - 1, H + j, W), t + 1)
            tmp = perm[t]
            perm[t] = perm[s]
            perm[s] = tmp
        step = (upper - lower) / strata
        for i in range(popsize):
            k = (perm[i] * strata) // popsize
            u = uniform(key, ctr(i, H + j, W))
            lo = fma(np.float64(k), step, lower)
            col[i] = clip(T(fma(u, step, lo)), lower, upper)

    @jit
    def pick(key, unit, W, popsize, nam, picks):
        """picks[0] = mother, picks[1..nam] = candidates (distinct, not the mother)."""
        picks[0] = below(key, ctr(unit, 0, W), popsize)
        for k in range(nam):
            v = below(key, ctr(unit, 1 + k, W), popsize - 1 - k)
            # the v-th (0-based) individual not picked yet, in index order
            r = -1
            seen = -1
            for idx in range(popsize):
                taken = False
                for q in range(k + 1):
                    if picks[q] == idx:
                        taken = True
                if not taken:
                    seen += 1
                    if seen == v:
                        r = idx
                        break
            picks[1 + k] = r

    @jit
    def blx(key, unit, W, j, a, b, alpha, lower, upper):
        lo = np.float64(a) if a < b else np.float64(b)
        hi = np.float64(b) if a < b else np.float64(a)
        span = alpha * (hi - lo)
        start = max(lo - span, lower)
        end = min(hi + span, upper)
        u = uniform(key, ctr(unit, H + j, W))
        return clip(T(fma(u, end - start, start)), lower, upper)

    @jit
    def mutation(key, unit, W, dim, prob, lower, upper):
        """(gene, delta): gene -1 when the child is not mutated."""
        if not uniform(key, ctr(unit, SLOT_MUTATE, W)) < prob:
            return -1, 0.0
        gene = below(key, ctr(unit, SLOT_GENE, W), dim)
        s = 0.0
        w = 1.0
        for k in range(BGA_BITS):
            if uniform(key, ctr(unit, SLOT_BITS + k, W)) < inv16:
                s += w
            w *= 0.5
        delta = 0.1 * (upper - lower) * s
        if uniform(key, ctr(unit, SLOT_SIGN, W)) < 0.5:
            delta = -delta
        return gene, delta

    return SimpleNamespace(ctr=ctr, clip=clip, init_column=init_column, pick=pick, blx=blx,
                           mutation=mutation, uniform=uniform, below=below, dtype=T, target=target)


def replacement(fit: np.ndarray, cfit: np.ndarray) -> list[tuple[int, int]]:
    """(mu + lambda) replace-worst: ``(slot, child)`` pairs, children entering the population.

    Ranked by (error, population before children, index); the best ``len(fit)`` stay; entering
    children (in child order) take the leaving individuals' slots (ascending). NaN ranks last.
    """
    mu = len(fit)
    key = [(_sortable(f), 0, i) for i, f in enumerate(fit)] + [(_sortable(f), 1, c) for c, f in enumerate(cfit)]
    order = sorted(key)
    stay = order[:mu]
    leaving = sorted(i for _, src, i in order[mu:] if src == 0)
    entering = sorted(c for _, src, c in stay if src == 1)
    return list(zip(leaving, entering))


def _sortable(f: float) -> float:
    return math.inf if f != f else float(f)


def ls_choice(fit: np.ndarray, non_improved: np.ndarray) -> int:
    """The best individual not marked non-improved (lowest index on ties), or -1 if none."""
    best, where = math.inf, -1
    for i, f in enumerate(fit):
        if not non_improved[i] and (where < 0 or f < best):
            best, where = f, i
    return where
