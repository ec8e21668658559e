"""What every algorithm's parameters share: population size, budgets, stop test, floating type.

An algorithm's parameter class is a frozen dataclass that subclasses :class:`RunParams` and
validates its own fields in ``__post_init__`` (after calling ``super().__post_init__()``); the
run loops of :mod:`gpude.implementations` read only the fields defined here, so any population
metaheuristic (DE, jDE, PSO, scatter search, ...) runs on them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.errors import InvalidInputError
from ..core.jit import operator_jit  # noqa: F401  (the algorithms import it from here)

TARGET_ERROR = 1e-8
DTYPES = ("float64", "float32")


def _is_int(value) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, np.integer))


@dataclass(frozen=True)
class RunParams:
    """The fields every run loop reads, validated on construction.

    Parameters
    ----------
    popsize : int
        Individuals (particles, solutions) in the population; each algorithm sets its minimum
        in :attr:`min_popsize`.
    max_fes : int
        Budget of function evaluations (initial population included), >= popsize.
    target : float
        Stop when the best error is <= target (checked every generation); ``-inf``: never (a user's
        objective, :func:`gpude.minimize`, whose values are not errors and may be negative).
    dtype : str
        ``"float64"`` or ``"float32"``: storage and arithmetic of the population and the function
        evaluations. Random draws are float64 in both.
    max_time_s : float or None
        Wall-clock budget in seconds (``None``: none). Checked by the run loop after every
        generation, without waiting for the GPU (see :mod:`gpude.implementations.device_loop`).
        A run ends at whichever of ``max_fes``, ``target`` and ``max_time_s`` comes first.
    """

    popsize: int
    max_fes: int = 10_000_000
    target: float = TARGET_ERROR
    dtype: str = "float64"
    max_time_s: float | None = None

    #: the smallest population the algorithm's operators work with
    min_popsize = 1
    #: why (completes "popsize must be an integer >= {min_popsize} ...")
    min_popsize_reason = ""

    def __post_init__(self):
        def bad(msg):
            raise InvalidInputError(msg)

        if not _is_int(self.popsize) or self.popsize < self.min_popsize:
            bad(f"popsize (NP) must be an integer >= {self.min_popsize}{self.min_popsize_reason}, "
                f"got {self.popsize!r}")
        if not _is_int(self.max_fes) or self.max_fes < self.popsize:
            bad(f"max_fes must be an integer >= popsize ({self.popsize}), got {self.max_fes!r}")
        no_target = isinstance(self.target, (float, np.floating)) and self.target == -np.inf
        if not no_target and (not isinstance(self.target, (int, float, np.floating)) or not np.isfinite(self.target)
                              or self.target < 0):
            bad(f"target must be a finite number >= 0 (or -inf: no target, for an objective whose values may be "
                f"negative), got {self.target!r}")
        if self.dtype not in DTYPES:
            bad(f"dtype must be 'float64' or 'float32', got {self.dtype!r}")
        if self.max_time_s is not None and (
                isinstance(self.max_time_s, bool) or not isinstance(self.max_time_s, (int, float, np.floating))
                or not np.isfinite(self.max_time_s) or self.max_time_s <= 0):
            bad(f"max_time_s must be a number of seconds > 0 (or None for no time budget), "
                f"got {self.max_time_s!r}")

    @property
    def numpy_dtype(self):
        return np.float64 if self.dtype == "float64" else np.float32
