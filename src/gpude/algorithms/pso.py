"""Particle Swarm Optimization (PSO): parameters and operators, written once for every implementation.

The algorithm is the synchronous inertia-weight PSO of libCudaOptimize (Nashed, Ugolotti,
Mesejo & Cagnoni, PPSN 2012; GPU layout of Mussi et al.), with Nashed et al.'s Table 1
parameters w = 0.494, c1 = 1.862, c2 = 1.881 as defaults.

**State.** Every particle i has a position x_i, a velocity v_i, its personal best position p_i
(pbest) and error pf_i. An implementation's final population is (p, pf).

**Initialisation** (generation 0): x_ij uniform in [lower, upper]; v_ij uniform in
[-s, s] with s = vmax * (upper - lower), or s = upper - lower when ``vmax = 0`` (no clamp);
all NP particles are evaluated (NP FEs) and p_i = x_i, pf_i = f(x_i).

**Generation g >= 1** (synchronous: every particle reads the pbest of the end of generation g-1):

* lbest index l_i: ``topology="ring"`` (the default): the particle with the smallest pf among
  i-1, i, i+1 (mod NP); ``"global"``: the smallest pf among all NP. Ties go to the lowest index.
* per coordinate j, with r1_j, r2_j ~ U[0, 1) drawn per coordinate:
  ``v = w v + c1 r1 (p_ij - x_ij) + c2 r2 (p_lj - x_ij)``, computed as
  ``fma(a1, p_ij - x_ij, fma(a2, p_lj - x_ij, w * v))`` with ``a1 = T(c1 r1)``, ``a2 = T(c2 r2)``
  (the products c r in float64, then cast to the floating type T): explicit FMAs, so the CPU and
  the GPU round identically (see :mod:`gpude.core.fma`);
* velocity clamp (``vmax > 0``): v in [-vmax (upper - lower), vmax (upper - lower)];
* ``x = x + v``, then the bound mode (see :data:`BOUND_MODES`):
  ``"clip"`` (the default): a coordinate outside the box is put on the violated bound and its
  velocity set to 0; ``"reflect"``: it is mirrored at the violated bound (``lo + (lo - x)``) and
  its velocity negated; if the mirror image is still outside (a step longer than the box, only
  possible with ``vmax > 1`` or no clamp) it is clipped onto the bound (velocity kept negated);
* evaluate the moved particles; p_i, pf_i := x_i, f(x_i) when ``f(x_i) <= pf_i`` (not worse
  replaces, as DE's selection); the swarm's best error is min pf.

**Budget.** A generation costs NP FEs; a last generation that would overrun ``max_fes`` moves and
evaluates only the first n < NP particles (the others keep x, v, p, pf), as DE does.

**Random numbers** (:mod:`gpude.core.rng`): 2D slots per (generation, particle),
``counter(g, i, slot) = (g NP + i) 2D + slot``; generation 0: slot j = initial position of
coordinate j, slot D + j = its initial velocity; generation g >= 1: slot j = r1_j,
slot D + j = r2_j. So every implementation, in any execution order, draws the same numbers and
makes the same decisions for a seed.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from ..core.errors import InvalidInputError
from ..core.fma import fma_for
from ..core.rng import build_rng
from .base import RunParams, operator_jit

RING, GLOBAL = 0, 1
#: neighbourhoods: ``ring`` (lbest of i among i-1, i, i+1 mod NP) or ``global`` (gbest)
TOPOLOGIES = {"ring": RING, "global": GLOBAL}
CLIP, REFLECT = 0, 1
#: position bound handling (see the module docstring)
BOUND_MODES = {"clip": CLIP, "reflect": REFLECT}


def _is_number(value) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float, np.integer, np.floating)) \
        and bool(np.isfinite(value))


@dataclass(frozen=True)
class PSOParams(RunParams):
    """Parameters of PSO, validated on construction (the run fields are :class:`RunParams`'s).

    Parameters
    ----------
    popsize : int
        NP, the swarm size: >= 3 for the ring topology, >= 1 for the global one.
    w : float
        Inertia weight, finite (Nashed et al.: 0.494).
    c1, c2 : float
        Cognitive and social acceleration coefficients, finite and >= 0 (1.862, 1.881).
    topology : str
        ``"ring"`` (the default) or ``"global"`` (see :data:`TOPOLOGIES`).
    vmax : float
        Velocity clamp as a fraction of (upper - lower) per coordinate, > 0; 0 means no clamp.
        Default 0.5. Also sets the initial velocity range (module docstring).
    bounds : str
        ``"clip"`` (the default) or ``"reflect"`` (see :data:`BOUND_MODES`).
    max_fes, target, dtype, max_time_s
        See :class:`gpude.algorithms.base.RunParams`.
    """

    w: float = 0.494
    c1: float = 1.862
    c2: float = 1.881
    topology: str = "ring"
    vmax: float = 0.5
    bounds: str = "clip"

    min_popsize = 1

    def __post_init__(self):
        super().__post_init__()

        def bad(msg):
            raise InvalidInputError(msg)

        if not _is_number(self.w):
            bad(f"w (inertia weight) must be a finite number, got {self.w!r}")
        for name in ("c1", "c2"):
            v = getattr(self, name)
            if not _is_number(v) or v < 0:
                bad(f"{name} must be a finite number >= 0, got {v!r}")
        if self.topology not in TOPOLOGIES:
            bad(f"unknown topology {self.topology!r}; use one of {', '.join(TOPOLOGIES)}")
        if self.topology == "ring" and self.popsize < 3:
            bad(f"popsize (NP) must be an integer >= 3 for the ring topology (neighbours i-1, i, i+1 "
                f"distinct), got {self.popsize!r}; use topology='global' for a smaller swarm")
        if not _is_number(self.vmax) or self.vmax < 0:
            bad(f"vmax must be a finite number > 0 (velocity clamp as a fraction of upper - lower) "
                f"or 0 for no clamp, got {self.vmax!r}")
        if self.bounds not in BOUND_MODES:
            bad(f"unknown bound mode {self.bounds!r}; use one of {', '.join(BOUND_MODES)}")

    @property
    def topology_code(self) -> int:
        return TOPOLOGIES[self.topology]

    @property
    def bound_mode(self) -> int:
        return BOUND_MODES[self.bounds]

    def velocity_clamp(self, lower: float, upper: float) -> float:
        """The absolute clamp vmax (upper - lower), 0.0 for none (float64, computed on the host)."""
        return float(self.vmax) * (float(upper) - float(lower))

    def initial_velocity_span(self, lower: float, upper: float) -> float:
        """Initial velocities are uniform in [-s, s]: s = the clamp, or upper - lower without one."""
        return self.velocity_clamp(lower, upper) if self.vmax > 0 else float(upper) - float(lower)


def build_pso_ops(dtype, target: str = "cpu") -> SimpleNamespace:
    """The PSO operators for one floating type, compiled for ``"cpu"`` or ``"cuda"``.

    Returns
    -------
    types.SimpleNamespace
        ``counter(g, i, slot, popsize, dim)``, ``init_position(key, i, j, popsize, dim, lower,
        upper)``, ``init_velocity(key, i, j, popsize, dim, span)``, ``neighbour_best(pfit, i,
        popsize, topology)`` (the lbest index), ``move(key, g, i, j, popsize, dim, x, v, p, lb, w,
        c1, c2, vclamp, lower, upper, mode) -> (x', v')``, ``uniform``, ``best_index(fit, n)``.
    """
    T = np.dtype(dtype).type
    rng = build_rng(target)
    uniform = rng.uniform
    fma = fma_for(target)
    jit = operator_jit(target)
    zero = T(0.0)

    @jit
    def counter(g, i, slot, popsize, dim):
        return (np.int64(g) * popsize + i) * (2 * dim) + slot

    @jit
    def init_position(key, i, j, popsize, dim, lower, upper):
        u = uniform(key, counter(0, i, j, popsize, dim))
        return T(fma(u, upper - lower, lower))  # in float64, then cast: same bits on every target

    @jit
    def init_velocity(key, i, j, popsize, dim, span):
        u = uniform(key, counter(0, i, dim + j, popsize, dim))
        return T(fma(u, 2.0 * span, -span))  # uniform in [-span, span)

    @jit
    def best_index(fit, n):
        """Index of the smallest of ``fit[:n]``, the lowest on ties."""
        best = 0
        for k in range(1, n):
            if fit[k] < fit[best]:
                best = k
        return best

    @jit
    def neighbour_best(pfit, i, popsize, topology):
        """lbest of particle i: the smallest pbest error of its neighbourhood, the lowest index on ties."""
        if topology == GLOBAL:
            return best_index(pfit, popsize)
        best = i
        left = i - 1 if i > 0 else popsize - 1
        right = i + 1 if i < popsize - 1 else 0
        if pfit[left] < pfit[best] or (pfit[left] == pfit[best] and left < best):
            best = left
        if pfit[right] < pfit[best] or (pfit[right] == pfit[best] and right < best):
            best = right
        return best

    @jit
    def move(key, g, i, j, popsize, dim, x, v, p, lb, w, c1, c2, vclamp, lower, upper, mode):
        """Coordinate j of particle i in generation g: the new (position, velocity)."""
        r1 = uniform(key, counter(g, i, j, popsize, dim))
        r2 = uniform(key, counter(g, i, dim + j, popsize, dim))
        a1, a2 = T(c1 * r1), T(c2 * r2)
        nv = fma(a1, p - x, fma(a2, lb - x, T(w) * v))
        if vclamp > 0:
            vc = T(vclamp)
            if nv > vc:
                nv = vc
            elif nv < -vc:
                nv = -vc
        nx = x + nv
        lo, hi = T(lower), T(upper)
        if nx < lo:
            if mode == CLIP:
                nx, nv = lo, zero
            else:
                nx, nv = lo + (lo - nx), -nv
                if nx > hi:
                    nx = hi
        elif nx > hi:
            if mode == CLIP:
                nx, nv = hi, zero
            else:
                nx, nv = hi - (nx - hi), -nv
                if nx < lo:
                    nx = lo
        return nx, nv

    return SimpleNamespace(counter=counter, init_position=init_position, init_velocity=init_velocity,
                           best_index=best_index, neighbour_best=neighbour_best, move=move,
                           uniform=uniform, dtype=T, target=target)
