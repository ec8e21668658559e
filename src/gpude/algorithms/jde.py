"""jDE (Brest, Greiner, Boskovic, Mernik & Zumer 2006): DE/rand/1/bin whose F and CR belong
to each individual and adapt themselves.

Before producing its trial in generation g, individual i draws new parameters

* F' = F_l + F_u * rand  with probability tau1, else F' = F_i   (F_l = 0.1, F_u = 0.9);
* CR' = rand             with probability tau2, else CR' = CR_i  (tau1 = tau2 = 0.1);

and builds its trial with (F', CR') exactly as DE/rand/1/bin does. When the trial replaces the
parent (not worse), the individual keeps (F', CR'); otherwise it keeps (F_i, CR_i). Every
individual starts with F = 0.5, CR = 0.9 (Brest et al.'s initial values).

Random decisions extend DE's counter layout (:mod:`gpude.algorithms.de`) by four slots per
(generation, individual): ``4 + 2D`` the tau1 test, ``+1`` the new F, ``+2`` the tau2 test,
``+3`` the new CR. So every jDE implementation makes the same decisions for the same seed.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from ..core.errors import InvalidInputError
from ..core.fma import fma_for
from .base import operator_jit
from .de import DEParams, build_de_ops

JDE_SLOTS = 4
INDEX_SCHEMES = {"uniform": 0, "displacement": 1}


@dataclass(frozen=True)
class JDEParams(DEParams):
    """Parameters of jDE. ``F`` and ``CR`` are every individual's initial values.

    Parameters
    ----------
    tau1, tau2 : float
        Probabilities of drawing a new F and a new CR, in [0, 1].
    F_lower, F_range : float
        A new F is ``F_lower + F_range * rand``.
    index_scheme : str
        ``"uniform"``: r1, r2, r3 uniform among the mutually distinct choices (as DE);
        ``"displacement"``: cujDE's three random displacements and partial sums.
    """

    F: float = 0.5
    CR: float = 0.9
    tau1: float = 0.1
    tau2: float = 0.1
    F_lower: float = 0.1
    F_range: float = 0.9
    index_scheme: str = "uniform"

    def __post_init__(self):
        super().__post_init__()
        for name in ("tau1", "tau2"):
            v = getattr(self, name)
            if not np.isfinite(v) or not 0.0 <= v <= 1.0:
                raise InvalidInputError(f"{name} must lie in [0, 1], got {v!r}")
        if not np.isfinite(self.F_lower) or self.F_lower <= 0 or not np.isfinite(self.F_range) or self.F_range < 0:
            raise InvalidInputError(f"F_lower must be > 0 and F_range >= 0, got {self.F_lower!r}, {self.F_range!r}")
        if self.index_scheme not in INDEX_SCHEMES:
            raise InvalidInputError(f"unknown index_scheme {self.index_scheme!r}; use one of "
                                    f"{', '.join(INDEX_SCHEMES)}")

    @property
    def index_code(self) -> int:
        return INDEX_SCHEMES[self.index_scheme]


def build_jde_ops(dtype, target: str = "cpu") -> SimpleNamespace:
    """DE's operators on jDE's counter layout, plus ``new_params`` and ``pick_by``."""
    ops = build_de_ops(dtype, target, extra_slots=JDE_SLOTS)
    counter, uniform = ops.counter, ops.uniform
    pick, pick_displacement = ops.pick, ops.pick_displacement
    fma = fma_for(target)  # F' = F_lower + F_range * U rounded once on every target (a real H200
    # contracted the plain expression into an FMA, 1 ulp away from the CPU's)
    jit = operator_jit(target)

    @jit
    def new_params(key, g, i, popsize, dim, F_i, CR_i, tau1, tau2, F_lower, F_range):
        base = 4 + 2 * dim
        F = F_i
        if uniform(key, counter(g, i, base, popsize, dim)) < tau1:
            F = fma(F_range, uniform(key, counter(g, i, base + 1, popsize, dim)), F_lower)
        CR = CR_i
        if uniform(key, counter(g, i, base + 2, popsize, dim)) < tau2:
            CR = uniform(key, counter(g, i, base + 3, popsize, dim))
        return F, CR

    @jit
    def pick_by(scheme, key, g, i, popsize, dim):
        if scheme == 1:
            return pick_displacement(key, g, i, popsize, dim)
        return pick(key, g, i, popsize, dim)

    ops.new_params = new_params
    ops.pick_by = pick_by
    return ops
