"""``run_trial``: one run of one (algorithm, implementation) on one function."""

from __future__ import annotations

import dataclasses

from .algorithms import params_class
from .functions import get_function
from .registry import get


def make_runner(algorithm: str, implementation: str, function: str, dim: int, popsize: int,
                max_fes: int, F: float | None = None, CR: float | None = None, bounds: str = "resample",
                dtype: str = "float64", target: float = 1e-8, **options):
    """Build and warm up (JIT) an implementation; call ``.run(seed)`` on it for each trial.

    ``F`` and ``CR`` default to the algorithm's own defaults (DE: 0.5, 0.3; jDE's initial values:
    0.5, 0.9). Options that name a field of the algorithm's parameters (e.g. jDE's ``tau1``) go
    to the parameters; the rest to the implementation (e.g. master_slave's ``workers``).
    """
    cls = get(algorithm, implementation).load()
    Params = params_class(algorithm)
    fields = {f.name for f in dataclasses.fields(Params)}
    algorithm_params = {k: options.pop(k) for k in list(options) if k in fields}
    given = {k: v for k, v in (("F", F), ("CR", CR)) if v is not None}
    params = Params(popsize=popsize, max_fes=max_fes, target=target, bounds=bounds, dtype=dtype,
                    **given, **algorithm_params)
    runner = cls(get_function(function, dim), params, **options)
    runner.warmup()
    return runner


def run_trial(algorithm: str = "de", implementation: str = "sequential", function: str = "F01",
              dim: int = 10, popsize: int = 50, max_fes: int = 100_000, seed: int = 0,
              **kwargs):
    """One trial; see :class:`gpude.implementations.base.TrialResult` for the fields.

    Examples
    --------
    >>> from gpude import run_trial
    >>> r = run_trial(algorithm="de", implementation="sequential", function="Q01", dim=10,
    ...               popsize=20, max_fes=2000, seed=7)
    >>> r.fes_used <= 2000
    True
    """
    runner = make_runner(algorithm, implementation, function, dim, popsize, max_fes, **kwargs)
    return runner.run(seed)
