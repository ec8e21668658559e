"""Scatter search (Nashed, Ugolotti, Mesejo & Cagnoni, PPSN 2012, libCudaOptimize): parameters
and operators, written once for the CPU and the GPU implementations.

The algorithm (the paper's section 2.3 and Table 1; what the paper leaves open is chosen here and
marked *choice*):

* **diversification**: P (``popsize``, 140) solutions uniform in the box, evaluated;
* **reference set** R from a population: the ``ref_best`` (|R1| = 9) best, ranked by (error, index),
  then ``ref_diverse`` (|R2| = 1) times the solution not yet in R farthest from R (Euclidean;
  distance to R = min over its members; the largest, lowest index on ties) is added;
* an **iteration** (a "generation" of the run loop):

  1. *combination*: every pair (a < b) of R, in lexicographic order of R's positions (45 pairs
     for |R| = 10), gives two BLX-alpha children, alpha = 0.5 + ``lam`` (child 2p) and 0.5 - ``lam``
     (child 2p + 1), ``lam`` = 0.220: gene j uniform in [lo - alpha I, hi + alpha I], lo/hi the
     parents' min/max, I = hi - lo, clipped to the box (*choice*: clip); the children are evaluated;
  2. *improvement*: every child runs ``ls_steps`` (85) Solis-Wets steps
     (:mod:`gpude.algorithms.solis_wets`, Realea's rules) from a fresh state (bias 0, counters 0);
     one step costs 1 or 2 evaluations (the opposite direction is tried after a failure), so an
     iteration costs at most 2 |pairs| (1 + 2 ls_steps) evaluations. The children step together
     (step-major: step s of every child, then step s + 1), the GPU's order, which fixes which
     evaluations happen when the budget ends mid-step: in step s the "+" candidates of children
     0, 1, ... while the budget lasts, then the "-" candidates of the children that failed, in
     index order, while it lasts (a child without budget for its "-" try counts a failure).
     *Choice* of the initial step size (the paper gives none): Realea's rule
     ``rho0 = min(rho_max (upper - lower), d / 2)``, d = ||x_a - x_b||_2 / D the distance between
     the child's parents divided by D as Realea divides its nearest-neighbour distance, with
     ``rho_max`` = 0.2 (Realea's cap, here as a fraction of the box width) and a floor of
     ``1e-12 (upper - lower)``: the step follows the spread of the reference set, as Realea's
     follows the population's, so a converged set is searched finely;
  3. *reference set update*: R becomes the best |R| of R u pool, ranked by (error, index), R's
     members before the pool's (so on ties the old member stays), in rank order;
  4. *restart* (*choice*; the paper says nothing): if no child entered R, R's best member is kept
     and R is rebuilt by the diversification rule from a population of that member and P - 1 fresh
     uniform solutions (evaluated: P - 1 evaluations).

  When the budget ends mid-iteration the iteration stops there (evaluations are made in the order
  above and never exceed the budget); unevaluated solutions have error +inf and never enter R ahead
  of an evaluated one.

Random numbers (counter-based, :mod:`gpude.core.rng`): draw ``counter(g, unit, slot)`` =
``(g * U + unit) * W + slot`` with U = children + P units and W = D + 2 D ls_steps slots:

* g = 0 (initial population): unit i (< P), slot j: gene j of solution i;
* iteration g >= 1: unit c (< children), slot j: the BLX draw of gene j of child c; slots
  ``D + 2 (s D + j)`` and ``+1``: the Box-Muller pair of coordinate j of child c's step s;
  unit ``children + i`` (1 <= i < P), slot j: gene j of restart solution i.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from types import SimpleNamespace

import numpy as np

from ..core.errors import InvalidInputError
from ..core.fma import fma_for
from ..core.rng import build_rng
from .base import RunParams, _is_int, operator_jit

#: bound handling of the BLX children and Solis-Wets candidates (clip only)
BOUND_MODES = ("clip",)
#: the floor of the initial Solis-Wets step, as a fraction of the box width
RHO_FLOOR = 1e-12


@dataclass(frozen=True)
class SSParams(RunParams):
    """Parameters of scatter search, validated on construction.

    Parameters
    ----------
    popsize : int
        P, the diversification population (140 in the paper); >= ref_best + ref_diverse.
    ref_best : int
        |R1|, the best solutions in R (9); >= 1.
    ref_diverse : int
        |R2|, the diverse solutions in R (1); >= 0. |R| = ref_best + ref_diverse >= 2.
    lam : float
        lambda of the BLX-alpha combination: alphas 0.5 + lam and 0.5 - lam (0.220); in [0, 0.5].
    ls_steps : int
        Solis-Wets steps per child (85); >= 0. A step is 1 or 2 evaluations.
    rho_max : float
        Cap of the initial Solis-Wets step as a fraction of the box width (0.2); > 0.
    bounds : str
        ``"clip"`` (the only mode).
    max_fes, target, dtype, max_time_s
        See :class:`gpude.algorithms.base.RunParams`.
    """

    popsize: int = 140
    ref_best: int = 9
    ref_diverse: int = 1
    lam: float = 0.220
    ls_steps: int = 85
    rho_max: float = 0.2
    bounds: str = "clip"

    min_popsize = 2
    min_popsize_reason = " (a reference set of at least two solutions)"

    def __post_init__(self):
        super().__post_init__()

        def bad(msg):
            raise InvalidInputError(msg)

        if not _is_int(self.ref_best) or self.ref_best < 1:
            bad(f"ref_best (|R1|) must be an integer >= 1, got {self.ref_best!r}")
        if not _is_int(self.ref_diverse) or self.ref_diverse < 0:
            bad(f"ref_diverse (|R2|) must be an integer >= 0, got {self.ref_diverse!r}")
        if self.ref_size < 2:
            bad(f"the reference set needs at least two solutions (ref_best + ref_diverse >= 2), "
                f"got {self.ref_size}")
        if self.ref_size > self.popsize:
            bad(f"popsize ({self.popsize}) must be >= ref_best + ref_diverse ({self.ref_size})")
        if isinstance(self.lam, bool) or not isinstance(self.lam, (int, float, np.floating)) \
                or not np.isfinite(self.lam) or not 0.0 <= self.lam <= 0.5:
            bad(f"lam must lie in [0, 0.5] (alphas 0.5 + lam and 0.5 - lam), got {self.lam!r}")
        if not _is_int(self.ls_steps) or self.ls_steps < 0:
            bad(f"ls_steps must be an integer >= 0, got {self.ls_steps!r}")
        if isinstance(self.rho_max, bool) or not isinstance(self.rho_max, (int, float, np.floating)) \
                or not np.isfinite(self.rho_max) or self.rho_max <= 0:
            bad(f"rho_max must be a finite number > 0, got {self.rho_max!r}")
        if self.bounds not in BOUND_MODES:
            bad(f"unknown bound mode {self.bounds!r}; scatter search uses 'clip'")

    @property
    def ref_size(self) -> int:
        return self.ref_best + self.ref_diverse

    @property
    def n_pairs(self) -> int:
        return self.ref_size * (self.ref_size - 1) // 2

    @property
    def n_children(self) -> int:
        return 2 * self.n_pairs

    def evaluations_per_iteration(self) -> int:
        """The most evaluations one iteration can use: children, two per step, a restart."""
        return self.n_children * (1 + 2 * self.ls_steps) + self.popsize - 1


def pair_arrays(ref_size: int) -> tuple[np.ndarray, np.ndarray]:
    """Positions (a, b), a < b, of every pair of R in lexicographic order."""
    a, b = np.triu_indices(ref_size, k=1)
    return a.astype(np.int64), b.astype(np.int64)


def layout(params: SSParams, dim: int) -> tuple[int, int]:
    """(U, W): units per iteration and slots per unit of the counter layout."""
    return params.n_children + params.popsize, dim + 2 * dim * params.ls_steps


@cache
def build_ss_ops(dtype, target: str = "cpu") -> SimpleNamespace:
    """The scatter-search operators for one floating type, compiled for ``"cpu"`` or ``"cuda"``.

    Returns
    -------
    types.SimpleNamespace
        ``counter(g, unit, slot, units, width)``; ``init_value(key, g, unit, j, units, width,
        lower, upper)`` (a uniform gene); ``blx_value(key, g, c, j, units, width, xa, xb, alpha,
        lower, upper)`` (gene j of child c); ``sw_counter(g, c, s, j, units, width, dim)`` (the
        first of the Box-Muller pair); ``sq_dist(x, y)`` (squared Euclidean distance of two rows,
        float64, FMA accumulation in coordinate order); ``ranks_before(err, n, k)`` (how many of
        ``err[:n]`` rank before k by (error, index)); ``uniform``.
    """
    T = np.dtype(dtype).type
    rng = build_rng(target)
    uniform = rng.uniform
    fma = fma_for(target)
    jit = operator_jit(target)

    @jit
    def counter(g, unit, slot, units, width):
        return (np.int64(g) * units + unit) * width + slot

    @jit
    def init_value(key, g, unit, j, units, width, lower, upper):
        u = uniform(key, counter(g, unit, j, units, width))
        return T(fma(u, upper - lower, lower))

    @jit
    def blx_value(key, g, c, j, units, width, xa, xb, alpha, lower, upper):
        lo = xa if xa < xb else xb
        hi = xb if xa < xb else xa
        span = np.float64(hi) - np.float64(lo)
        start = fma(-alpha, span, np.float64(lo))
        u = uniform(key, counter(g, c, j, units, width))
        v = T(fma(u, fma(2.0 * alpha, span, span), start))
        lo_b, hi_b = T(lower), T(upper)
        if v < lo_b:
            return lo_b
        if v > hi_b:
            return hi_b
        return v

    @jit
    def sw_counter(g, c, s, j, units, width, dim):
        return counter(g, c, dim + 2 * (np.int64(s) * dim + j), units, width)

    @jit
    def sq_dist(x, y):
        acc = 0.0
        for j in range(x.shape[0]):
            d = np.float64(x[j]) - np.float64(y[j])
            acc = fma(d, d, acc)
        return acc

    @jit
    def ranks_before(err, n, k):
        e = err[k]
        r = 0
        for m in range(n):
            if err[m] < e or (err[m] == e and m < k):
                r += 1
        return r

    return SimpleNamespace(counter=counter, init_value=init_value, blx_value=blx_value,
                           sw_counter=sw_counter, sq_dist=sq_dist, ranks_before=ranks_before,
                           uniform=uniform, dtype=T, target=target)
