"""``run_trial``: one run of one (algorithm, implementation) on one function."""

from __future__ import annotations

from .algorithms.de import DEParams
from .functions import get_function
from .registry import get


def make_runner(algorithm: str, implementation: str, function: str, dim: int, popsize: int,
                max_fes: int, F: float = 0.5, CR: float = 0.3, bounds: str = "resample",
                dtype: str = "float64", target: float = 1e-8, **options):
    """Build and warm up (JIT) an implementation; call ``.run(seed)`` on it for each trial."""
    entry = get(algorithm, implementation)
    params = DEParams(popsize=popsize, F=F, CR=CR, max_fes=max_fes, target=target, bounds=bounds,
                      dtype=dtype)
    runner = entry.load()(get_function(function, dim), params, **options)
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
