"""``gpude.minimize``: any registered algorithm and implementation on your own objective, the way
scipy users call ``differential_evolution(func, bounds)``."""

from __future__ import annotations

import numpy as np

from ..core.errors import InvalidInputError


def minimize(func, bounds, algorithm: str = "de", implementation: str = "sequential", popsize: int | None = None,
             max_fes: int | None = None, seed: int = 0, target: float | None = None, max_time_s: float | None = None,
             dtype: str = "float64", name: str | None = None, **options):
    """Minimise ``func(x)`` over ``bounds`` with a gpude algorithm.

    Parameters
    ----------
    func : callable
        ``func(x) -> float`` for a 1-D float array ``x``; numba must be able to compile it (``@njit``
        style: numpy arrays, math, loops), for the GPU as a CUDA device function. A function numba
        cannot compile fails with numba's reason. Return ``+inf`` to reject a point; NaN and ``-inf``
        are errors.
    bounds : sequence of (low, high)
        One pair per coordinate (the dimension is their number).
    algorithm, implementation : str
        Any registered pair that calls a problem's evaluators (``gpude list``; ``docs/problems.md``):
        ``de`` with ``sequential``, ``master_slave`` or ``many_threaded`` (GPU), ``jde``, ``pso``, ``ss``,
        ``masw`` with ``sequential``; ``masw/gpu``. Implementations that fuse a benchmark function's
        formula into their kernels (``ide``, ``all_gpu``, ...) say so.
    popsize : int, optional
        Default ``max(10, 10 * D)`` capped at 200.
    max_fes : int, optional
        Function evaluations; default ``1000 * D`` (at least 10 generations).
    seed : int
        Same seed, same result.
    target : float, optional
        Stop once the best value is <= target (a number >= 0); default: no target.
    max_time_s : float, optional
        A wall-clock budget per run.
    dtype : {"float64", "float32"}
        The population's type (the objective is evaluated in float64).
    **options
        Algorithm parameters (``F``, ``CR``, ``bounds`` (repair mode), jDE's ``tau1``, ...) and
        implementation options (``workers``, ``trials_per_launch``, ...), as ``gpude.run.trial.make_runner``.

    Returns
    -------
    scipy.optimize.OptimizeResult
        ``x`` (in ``bounds``), ``fun``, ``nfev``, ``nit`` (generations), ``success`` (True: the budget or
        the target ended the run normally), ``message``, and gpude's ``trial`` (the full
        :class:`gpude.implementations.base.TrialResult`: trace, wall time, ...).

    Examples
    --------
    >>> import numpy as np
    >>> from gpude import minimize
    >>> def sphere(x):
    ...     return float(np.sum(x * x))
    >>> r = minimize(sphere, [(-5, 5)] * 4, max_fes=4000, seed=1)
    >>> r.fun < 1e-2
    True
    """
    from scipy.optimize import OptimizeResult

    from ..problems.objective import ObjectiveError, UserObjective
    from .trial import make_runner

    problem = UserObjective(func, bounds, name=name)
    D = problem.dim
    popsize = int(popsize) if popsize is not None else min(200, max(10, 10 * D))
    max_fes = int(max_fes) if max_fes is not None else max(1000 * D, 10 * popsize)
    if target is not None and (not np.isfinite(target) or target < 0):
        raise InvalidInputError(f"target must be a finite number >= 0 (the objective's value to reach), got {target!r}")
    runner = make_runner(algorithm, implementation, problem, D, popsize, max_fes, dtype=dtype,
                         target=-np.inf if target is None else float(target), max_time_s=max_time_s, **options)
    r = runner.run(seed)
    ev = getattr(runner, "ev", None)
    if ev is not None and hasattr(ev, "bad_count") and ev.bad_count():
        raise ObjectiveError(f"{problem.fid} returned NaN or -inf at {ev.bad_count()} point(s) on the GPU; return a "
                             "finite number (or +inf for a point to reject)")
    message = {"budget": "the FE budget is spent", "target": "the target was reached",
               "time": "the time budget is spent"}[r.stopped_by]
    return OptimizeResult(x=problem.to_x(r.best_x), fun=float(r.best_error), nfev=int(r.fes_used),
                          nit=int(r.generations), success=bool(np.isfinite(r.best_error)), message=message,
                          trial=r)
