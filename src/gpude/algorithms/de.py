"""DE/rand/1/bin and its variants: parameters and operators, written once for every implementation.

The algorithm (Storn & Price 1997, as Janssen et al. and Qin et al. state it):

* NP vectors uniform in the search box;
* for each target i: r1, r2, r3 mutually distinct and different from i;
  mutant v = x_r1 + F (x_r2 - x_r3);
* binomial crossover: u_j = v_j if U(0,1) < CR or j = j_rand, else x_ij;
* a mutant component outside the box is repaired (see :data:`BOUND_MODES`);
* generational (deferred) replacement: u replaces x_i when f(u) <= f(x_i).

Random decisions use the counter-based generator of :mod:`gpude.core.rng`; each
decision has a fixed counter, computed by :func:`counter`:

* generation 0 (initialisation): ``x_ij`` uses slot ``4 + D + j``;
* generation g >= 1, individual i: slots 0..2 for r1, r2, r3, slot 3 for
  j_rand, slot ``4 + j`` for the crossover draw of coordinate j and slot
  ``4 + D + j`` for its bound repair (only read when needed).

So every implementation, in any execution order, makes the same decisions.

**Variants** (Nashed et al., PPSN 2012; :data:`MUTATIONS` x :data:`CROSSOVERS`):

* mutation ``rand1`` v = x_r1 + F (x_r2 - x_r3) (the default), ``best1``
  v = x_best + F (x_r1 - x_r2), ``current_to_best1`` v = x_i + F (x_best - x_i) + F (x_r1 - x_r2);
  x_best is the best individual of the population the generation starts from (lowest index on
  ties); ``pick`` draws r1, r2, r3 the same way for all three (r3 unused by the last two);
* crossover ``bin`` (above) or ``exp`` (Storn & Price): from j_rand (slot 3) the mutant is copied
  for L consecutive coordinates, cyclically; L = 1, then the k-th draw (slot ``4 + k``, k = 0, 1,
  ...) adds one while U < CR and L < D. Coordinate j is copied iff its cyclic distance from
  j_rand is < L, i.e. iff the draws 0 .. distance - 1 all fall below CR.

Random slots are the same for every variant, so rand1/bin makes exactly its old decisions.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from ..core.errors import InvalidInputError
from ..core.fma import fma_for
from ..core.rng import build_rng
from .base import RunParams, operator_jit

RESAMPLE, CLIP, MIDPOINT = 0, 1, 2
#: Bound handling for a mutant component outside [lower, upper]:
#: ``resample`` draws it uniformly in the bounds (the authors' code; the default),
#: ``clip`` puts it on the violated bound, ``midpoint`` sets it halfway between the
#: violated bound and the target's value (scipy's and many DE codes' choice).
BOUND_MODES = {"resample": RESAMPLE, "clip": CLIP, "midpoint": MIDPOINT}

RAND1, BEST1, CURRENT_TO_BEST1 = 0, 1, 2
#: mutation strategies (see the module docstring)
MUTATIONS = {"rand1": RAND1, "best1": BEST1, "current_to_best1": CURRENT_TO_BEST1}
BIN, EXP = 0, 1
#: crossovers: binomial (the default) and exponential
CROSSOVERS = {"bin": BIN, "exp": EXP}
#: implementations whose operators run every mutation and crossover; the others run rand1/bin only
VARIANT_IMPLEMENTATIONS = ("sequential", "high_level", "master_slave", "naive_gpu", "two_kernel")


def is_default_variant(params) -> bool:
    return (getattr(params, "mutation", "rand1"), getattr(params, "crossover", "bin")) == ("rand1", "bin")


def require_variant_support(implementation, params) -> None:
    """Refuse a mutation/crossover other than rand1/bin unless ``implementation.variants == "all"``."""
    if getattr(implementation, "variants", "rand1/bin") == "all" or is_default_variant(params):
        return
    name = getattr(implementation, "name", "") or type(implementation).__name__
    raise InvalidInputError(
        f"implementation {name!r} runs DE/rand/1/bin only, not mutation={params.mutation!r}, "
        f"crossover={params.crossover!r}; the implementations that support every mutation and "
        f"crossover: {', '.join(VARIANT_IMPLEMENTATIONS)}")



def slots_per_individual(dim: int, extra_slots: int = 0) -> int:
    """Random-number slots per (generation, individual): DE's 4 + 2D, plus a variant's own."""
    return 4 + 2 * dim + extra_slots


@dataclass(frozen=True)
class DEParams(RunParams):
    """Parameters of DE, validated on construction (the run fields are :class:`RunParams`'s).

    Parameters
    ----------
    popsize : int
        NP >= 4 (three distinct partners besides the target).
    F : float
        Differential weight, > 0.
    CR : float
        Crossover rate in [0, 1].
    bounds : str
        ``"resample"``, ``"clip"`` or ``"midpoint"`` (see :data:`BOUND_MODES`).
    mutation : str
        ``"rand1"`` (the default), ``"best1"`` or ``"current_to_best1"`` (see :data:`MUTATIONS`).
    crossover : str
        ``"bin"`` (the default) or ``"exp"`` (see :data:`CROSSOVERS`).
    max_fes, target, dtype, max_time_s
        See :class:`gpude.algorithms.base.RunParams`.
    """

    F: float = 0.5
    CR: float = 0.3
    bounds: str = "resample"
    mutation: str = "rand1"
    crossover: str = "bin"

    #: a parameter class whose algorithm runs the variants says so in its own body (subclasses,
    #: e.g. jDE's, run rand1/bin only unless they declare it too)
    supports_variants = True
    min_popsize = 4
    min_popsize_reason = " (r1, r2, r3 distinct from i)"

    def __post_init__(self):
        super().__post_init__()

        def bad(msg):
            raise InvalidInputError(msg)

        if not np.isfinite(self.F) or self.F <= 0:
            bad(f"F must be a finite number > 0, got {self.F!r}")
        if not np.isfinite(self.CR) or not 0.0 <= self.CR <= 1.0:
            bad(f"CR must lie in [0, 1], got {self.CR!r}")
        if self.bounds not in BOUND_MODES:
            bad(f"unknown bound mode {self.bounds!r}; use one of {', '.join(BOUND_MODES)}")
        if self.mutation not in MUTATIONS:
            bad(f"unknown mutation {self.mutation!r}; use one of {', '.join(MUTATIONS)}")
        if self.crossover not in CROSSOVERS:
            bad(f"unknown crossover {self.crossover!r}; use one of {', '.join(CROSSOVERS)}")
        if not type(self).__dict__.get("supports_variants", False) and not is_default_variant(self):
            bad(f"{type(self).__name__} runs mutation 'rand1' and crossover 'bin' only, got "
                f"mutation={self.mutation!r}, crossover={self.crossover!r}")

    @property
    def bound_mode(self) -> int:
        return BOUND_MODES[self.bounds]

    @property
    def mutation_code(self) -> int:
        return MUTATIONS[self.mutation]

    @property
    def crossover_code(self) -> int:
        return CROSSOVERS[self.crossover]


def build_de_ops(dtype, target: str = "cpu", extra_slots: int = 0) -> SimpleNamespace:
    """The DE operators for one floating type, compiled for ``"cpu"`` or ``"cuda"``.

    ``extra_slots`` reserves random-number slots ``4 + 2D ...`` per (generation, individual) for a
    variant's own decisions (jDE's parameter updates).

    Returns
    -------
    types.SimpleNamespace
        ``counter(g, i, slot, popsize, dim)``, ``init_value(key, i, j, popsize, dim, lower, upper)``,
        ``pick(key, g, i, popsize, dim) -> (r1, r2, r3, jrand)`` (its parts ``pick_draw(key, g, i, slot,
        popsize, dim)`` and ``pick_from(i, d1, d2, d3) -> (r1, r2, r3)``) and
        ``trial_value(key, g, i, j, popsize, dim, jrand, F, CR, xi, x1, x2, x3, lower, upper, mode)``,
        and its three parts ``mutant``, ``crossover_takes`` and ``repair`` (for the
        kernel-per-operator implementation); for the variants ``variant_trial_value(mutation,
        crossover, key, g, i, j, popsize, dim, jrand, F, CR, xi, xb, x1, x2, x3, lower, upper, mode)``,
        its parts ``mutant_of(mutation, F, xi, xb, x1, x2, x3)``, ``takes_of(crossover, ...)``
        (``exp_takes``, ``exp_length`` for exp) and ``best_index(fit, n)``; ``repair``'s parts
        ``inside(v, lower, upper)`` and ``repaired(mode, v, xi, lower, upper, u)`` (the resample
        draw ``u`` given, so that a vectorised loop can make it unconditionally);
        ``pick_displacement``, the cheap index scheme of cujDE, beside ``pick``; ``uniform`` and ``below``
        on this counter layout.
    """
    T = np.dtype(dtype).type
    rng = build_rng(target)
    uniform, below = rng.uniform, rng.below
    fma = fma_for(target)  # explicit FMAs: identical rounding on CPU and GPU
    jit = operator_jit(target)
    half = T(0.5)

    @jit
    def counter(g, i, slot, popsize, dim):
        return (np.int64(g) * popsize + i) * (4 + 2 * dim + extra_slots) + slot

    @jit
    def init_value(key, i, j, popsize, dim, lower, upper):
        u = uniform(key, counter(0, i, 4 + dim + j, popsize, dim))
        return T(fma(u, upper - lower, lower))  # in float64, then cast: same bits on every target

    @jit
    def pick_from(i, d1, d2, d3):
        # Uniform choices without rejection: r1, r2, r3 drawn among the k still allowed (d1 < NP - 1,
        # d2 < NP - 2, d3 < NP - 3), then stepped over the excluded indices in increasing order.
        r1 = d1
        if r1 >= i:
            r1 += 1
        lo, hi = min(i, r1), max(i, r1)
        r2 = d2
        if r2 >= lo:
            r2 += 1
        if r2 >= hi:
            r2 += 1
        # the three excluded values in increasing order
        a, b, c = i, r1, r2
        if a > b:
            a, b = b, a
        if b > c:
            b, c = c, b
        if a > b:
            a, b = b, a
        r3 = d3
        if r3 >= a:
            r3 += 1
        if r3 >= b:
            r3 += 1
        if r3 >= c:
            r3 += 1
        return r1, r2, r3

    @jit
    def pick_draw(key, g, i, slot, popsize, dim):
        """pick's draw ``slot``: 0-2 those of r1-r3 (:func:`pick_from`), 3 j_rand. Each has its range before
        the others are drawn, so that a warp's lanes can make the four at once."""
        span = dim if slot == 3 else popsize - 1 - slot
        return below(key, counter(g, i, slot, popsize, dim), span)

    @jit
    def pick(key, g, i, popsize, dim):
        r1, r2, r3 = pick_from(i, below(key, counter(g, i, 0, popsize, dim), popsize - 1),
                               below(key, counter(g, i, 1, popsize, dim), popsize - 2),
                               below(key, counter(g, i, 2, popsize, dim), popsize - 3))
        return r1, r2, r3, below(key, counter(g, i, 3, popsize, dim), dim)

    @jit
    def pick_displacement(key, g, i, popsize, dim):
        # cujDE's scheme (Janssen et al. sec. 6.2.3): three random displacements and their partial
        # sums instead of rejection. With each displacement in [1, m], m = (NP - 1) // 3, the sums
        # are distinct and below NP, so r1, r2, r3 and i are mutually distinct. (The paper draws the
        # first in [1, NP]; read literally that can return i itself, so all three share [1, m].)
        m = (popsize - 1) // 3
        r1 = (i + 1 + below(key, counter(g, i, 0, popsize, dim), m)) % popsize
        r2 = (r1 + 1 + below(key, counter(g, i, 1, popsize, dim), m)) % popsize
        r3 = (r2 + 1 + below(key, counter(g, i, 2, popsize, dim), m)) % popsize
        jrand = below(key, counter(g, i, 3, popsize, dim), dim)
        return r1, r2, r3, jrand

    @jit
    def mutant(F, x1, x2, x3):
        return fma(T(F), x2 - x3, x1)

    @jit
    def mutant_of(mutation, F, xi, xb, x1, x2, x3):
        """Component of the mutant of ``mutation`` (:data:`MUTATIONS`); ``xb`` is x_best's."""
        if mutation == BEST1:
            return fma(T(F), x1 - x2, xb)
        if mutation == CURRENT_TO_BEST1:
            return fma(T(F), x1 - x2, fma(T(F), xb - xi, xi))
        return fma(T(F), x2 - x3, x1)  # RAND1

    @jit
    def exp_length(key, g, i, popsize, dim, CR):
        """L of the exponential crossover: 1, plus one per draw (slots 4, 5, ...) below CR."""
        L = 1
        while L < dim and uniform(key, counter(g, i, 4 + L - 1, popsize, dim)) < CR:
            L += 1
        return L

    @jit
    def exp_takes(key, g, i, j, popsize, dim, jrand, CR):
        """Whether the exponential crossover copies coordinate j: its cyclic distance from
        ``jrand`` is below L, i.e. the draws 0 .. distance - 1 all fell below CR."""
        d = (j - jrand) % dim
        k = 0
        while k < d:
            if not uniform(key, counter(g, i, 4 + k, popsize, dim)) < CR:
                return False
            k += 1
        return True

    @jit
    def crossover_takes(key, g, i, j, popsize, dim, jrand, CR):
        return uniform(key, counter(g, i, 4 + j, popsize, dim)) < CR or j == jrand

    @jit
    def inside(v, lower, upper):
        """Whether the mutant's component ``v`` needs no repair (False for NaN)."""
        return (T(lower) <= v) & (v <= T(upper))

    @jit
    def repaired(mode, v, xi, lower, upper, u):
        """The repair of a component ``v`` outside the box; ``u`` is the resample draw (slot
        ``4 + D + j``), read by ``RESAMPLE`` only."""
        lo, hi = T(lower), T(upper)
        if mode == RESAMPLE:
            return T(fma(u, upper - lower, lower))
        if mode == CLIP:
            return lo if v < lo else hi
        return (lo + xi) * half if v < lo else (hi + xi) * half  # MIDPOINT

    @jit
    def repair(key, g, i, j, popsize, dim, v, xi, lower, upper, mode):
        if inside(v, lower, upper):
            return v
        u = uniform(key, counter(g, i, 4 + dim + j, popsize, dim)) if mode == RESAMPLE else 0.0
        return repaired(mode, v, xi, lower, upper, u)

    @jit
    def cross_over(key, g, i, j, popsize, dim, jrand, CR, v, xi, lower, upper, mode):
        """Coordinate j of the trial vector from the mutant's component ``v`` (already computed)."""
        if crossover_takes(key, g, i, j, popsize, dim, jrand, CR):
            return repair(key, g, i, j, popsize, dim, v, xi, lower, upper, mode)
        return xi

    @jit
    def trial_value(key, g, i, j, popsize, dim, jrand, F, CR, xi, x1, x2, x3, lower, upper, mode):
        if not crossover_takes(key, g, i, j, popsize, dim, jrand, CR):
            return xi
        return repair(key, g, i, j, popsize, dim, mutant(F, x1, x2, x3), xi, lower, upper, mode)

    @jit
    def takes_of(crossover, key, g, i, j, popsize, dim, jrand, CR):
        if crossover == EXP:
            return exp_takes(key, g, i, j, popsize, dim, jrand, CR)
        return crossover_takes(key, g, i, j, popsize, dim, jrand, CR)

    @jit
    def variant_trial_value(mutation, crossover, key, g, i, j, popsize, dim, jrand, F, CR, xi, xb,
                            x1, x2, x3, lower, upper, mode):
        """:func:`trial_value` for any mutation and crossover (codes of :data:`MUTATIONS`,
        :data:`CROSSOVERS`); ``xb`` is x_best's component."""
        if not takes_of(crossover, key, g, i, j, popsize, dim, jrand, CR):
            return xi
        return repair(key, g, i, j, popsize, dim, mutant_of(mutation, F, xi, xb, x1, x2, x3), xi,
                      lower, upper, mode)

    @jit
    def best_index(fit, n):
        """Index of the smallest of ``fit[:n]``, the lowest on ties."""
        best = 0
        for k in range(1, n):
            if fit[k] < fit[best]:
                best = k
        return best

    return SimpleNamespace(counter=counter, init_value=init_value, pick=pick, pick_from=pick_from,
                           pick_draw=pick_draw,
                           pick_displacement=pick_displacement, mutant=mutant,
                           crossover_takes=crossover_takes, repair=repair, cross_over=cross_over,
                           trial_value=trial_value, uniform=uniform, below=below, dtype=T,
                           target=target, extra_slots=extra_slots, mutant_of=mutant_of,
                           exp_length=exp_length, exp_takes=exp_takes, takes_of=takes_of,
                           variant_trial_value=variant_trial_value, best_index=best_index,
                           inside=inside, repaired=repaired)
