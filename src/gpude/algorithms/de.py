"""DE/rand/1/bin: parameters and operators, written once for every implementation.

The algorithm (Storn & Price 1997, as Janssen et al. and Qin et al. state it):

* NP vectors uniform in the search box;
* for each target i: r1, r2, r3 mutually distinct and different from i;
  mutant v = x_r1 + F (x_r2 - x_r3);
* binomial crossover: u_j = v_j if U(0,1) < CR or j = j_rand, else x_ij;
* a mutant component outside the box is repaired (see :data:`BOUND_MODES`);
* generational (deferred) replacement: u replaces x_i when f(u) <= f(x_i).

Random decisions use the counter-based generator of :mod:`gpude.rng`; each
decision has a fixed counter, computed by :func:`counter`:

* generation 0 (initialisation): ``x_ij`` uses slot ``4 + D + j``;
* generation g >= 1, individual i: slots 0..2 for r1, r2, r3, slot 3 for
  j_rand, slot ``4 + j`` for the crossover draw of coordinate j and slot
  ``4 + D + j`` for its bound repair (only read when needed).

So every implementation, in any execution order, makes the same decisions.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from ..errors import InvalidInputError
from ..fma import fma_for
from ..rng import build_rng

RESAMPLE, CLIP, MIDPOINT = 0, 1, 2
#: Bound handling for a mutant component outside [lower, upper]:
#: ``resample`` draws it uniformly in the bounds (the authors' code; the default),
#: ``clip`` puts it on the violated bound, ``midpoint`` sets it halfway between the
#: violated bound and the target's value (scipy's and many DE codes' choice).
BOUND_MODES = {"resample": RESAMPLE, "clip": CLIP, "midpoint": MIDPOINT}

TARGET_ERROR = 1e-8


def slots_per_individual(dim: int, extra_slots: int = 0) -> int:
    """Random-number slots per (generation, individual): DE's 4 + 2D, plus a variant's own."""
    return 4 + 2 * dim + extra_slots


@dataclass(frozen=True)
class DEParams:
    """Parameters of DE/rand/1/bin, validated on construction.

    Parameters
    ----------
    popsize : int
        NP >= 4 (three distinct partners besides the target).
    F : float
        Differential weight, > 0.
    CR : float
        Crossover rate in [0, 1].
    max_fes : int
        Budget of function evaluations (initial population included), >= popsize.
    target : float
        Stop when the best error is <= target (checked every generation).
    bounds : str
        ``"resample"``, ``"clip"`` or ``"midpoint"`` (see :data:`BOUND_MODES`).
    dtype : str
        ``"float64"`` or ``"float32"``: storage and arithmetic of the population and
        the function evaluations. Random draws are float64 in both.
    """

    popsize: int
    F: float = 0.5
    CR: float = 0.3
    max_fes: int = 10_000_000
    target: float = TARGET_ERROR
    bounds: str = "resample"
    dtype: str = "float64"

    def __post_init__(self):
        def bad(msg):
            raise InvalidInputError(msg)

        if isinstance(self.popsize, bool) or not isinstance(self.popsize, (int, np.integer)) or self.popsize < 4:
            bad(f"popsize (NP) must be an integer >= 4 (r1, r2, r3 distinct from i), got {self.popsize!r}")
        if not np.isfinite(self.F) or self.F <= 0:
            bad(f"F must be a finite number > 0, got {self.F!r}")
        if not np.isfinite(self.CR) or not 0.0 <= self.CR <= 1.0:
            bad(f"CR must lie in [0, 1], got {self.CR!r}")
        if isinstance(self.max_fes, bool) or not isinstance(self.max_fes, (int, np.integer)) or self.max_fes < self.popsize:
            bad(f"max_fes must be an integer >= popsize ({self.popsize}), got {self.max_fes!r}")
        if not np.isfinite(self.target) or self.target < 0:
            bad(f"target must be a finite number >= 0, got {self.target!r}")
        if self.bounds not in BOUND_MODES:
            bad(f"unknown bound mode {self.bounds!r}; use one of {', '.join(BOUND_MODES)}")
        if self.dtype not in ("float64", "float32"):
            bad(f"dtype must be 'float64' or 'float32', got {self.dtype!r}")

    @property
    def bound_mode(self) -> int:
        return BOUND_MODES[self.bounds]

    @property
    def numpy_dtype(self):
        return np.float64 if self.dtype == "float64" else np.float32


def build_de_ops(dtype, target: str = "cpu", extra_slots: int = 0) -> SimpleNamespace:
    """The DE operators for one floating type, compiled for ``"cpu"`` or ``"cuda"``.

    ``extra_slots`` reserves random-number slots ``4 + 2D ...`` per (generation, individual) for a
    variant's own decisions (jDE's parameter updates).

    Returns
    -------
    types.SimpleNamespace
        ``counter(g, i, slot, popsize, dim)``, ``init_value(key, i, j, popsize, dim, lower, upper)``,
        ``pick(key, g, i, popsize, dim) -> (r1, r2, r3, jrand)`` and
        ``trial_value(key, g, i, j, popsize, dim, jrand, F, CR, xi, x1, x2, x3, lower, upper, mode)``,
        and its three parts ``mutant``, ``crossover_takes`` and ``repair`` (for the
        kernel-per-operator implementation); ``pick_displacement``, the cheap index scheme of
        cujDE, beside ``pick``; ``uniform`` and ``below`` on this counter layout.
    """
    T = np.dtype(dtype).type
    rng = build_rng(target)
    uniform, below = rng.uniform, rng.below
    fma = fma_for(target)  # explicit FMAs: identical rounding on CPU and GPU
    if target == "cpu":
        import numba

        jit = numba.njit(cache=True, nogil=True)
    else:
        from numba import cuda

        jit = cuda.jit(device=True)
    half = T(0.5)

    @jit
    def counter(g, i, slot, popsize, dim):
        return (np.int64(g) * popsize + i) * (4 + 2 * dim + extra_slots) + slot

    @jit
    def init_value(key, i, j, popsize, dim, lower, upper):
        u = uniform(key, counter(0, i, 4 + dim + j, popsize, dim))
        return T(fma(u, upper - lower, lower))  # in float64, then cast: same bits on every target

    @jit
    def pick(key, g, i, popsize, dim):
        # Uniform choices without rejection: draw among the k still allowed, then step over
        # the excluded indices in increasing order.
        r1 = below(key, counter(g, i, 0, popsize, dim), popsize - 1)
        if r1 >= i:
            r1 += 1
        lo, hi = min(i, r1), max(i, r1)
        r2 = below(key, counter(g, i, 1, popsize, dim), popsize - 2)
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
        r3 = below(key, counter(g, i, 2, popsize, dim), popsize - 3)
        if r3 >= a:
            r3 += 1
        if r3 >= b:
            r3 += 1
        if r3 >= c:
            r3 += 1
        jrand = below(key, counter(g, i, 3, popsize, dim), dim)
        return r1, r2, r3, jrand

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
    def crossover_takes(key, g, i, j, popsize, dim, jrand, CR):
        return uniform(key, counter(g, i, 4 + j, popsize, dim)) < CR or j == jrand

    @jit
    def repair(key, g, i, j, popsize, dim, v, xi, lower, upper, mode):
        lo, hi = T(lower), T(upper)
        if lo <= v <= hi:
            return v
        if mode == RESAMPLE:
            u = uniform(key, counter(g, i, 4 + dim + j, popsize, dim))
            return T(fma(u, upper - lower, lower))
        if mode == CLIP:
            return lo if v < lo else hi
        return (lo + xi) * half if v < lo else (hi + xi) * half  # MIDPOINT

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

    return SimpleNamespace(counter=counter, init_value=init_value, pick=pick,
                           pick_displacement=pick_displacement, mutant=mutant,
                           crossover_takes=crossover_takes, repair=repair, cross_over=cross_over,
                           trial_value=trial_value, uniform=uniform, below=below, dtype=T,
                           target=target, extra_slots=extra_slots)
