"""``run_trial``: one run of one (algorithm, implementation) on one function."""

from __future__ import annotations

import dataclasses
import inspect

from ..algorithms import params_class
from ..core.errors import InvalidInputError
from ..functions import get_function
from ..implementations.registry import get


def make_runner(algorithm: str, implementation: str, function: str, dim: int, popsize: int,
                max_fes: int, F: float | None = None, CR: float | None = None, bounds: str | None = None,
                dtype: str = "float64", target: float = 1e-8, max_time_s: float | None = None, *,
                entry=None, **options):
    """Build and warm up (JIT) an implementation; call ``.run(seed)`` on it for each trial.

    ``F``, ``CR`` and ``bounds`` default to the algorithm's own defaults (DE: 0.5, 0.3, resample;
    jDE's initial values: 0.5, 0.9); an algorithm without them (PSO, scatter search) rejects them.
    Options that name a field of the algorithm's parameters (e.g. jDE's ``tau1``, PSO's ``w``) go
    to the parameters; the rest to the implementation (e.g. master_slave's ``workers``).
    ``max_time_s`` is a wall-clock budget per trial (see :class:`gpude.algorithms.base.RunParams`).
    ``entry``: the pair's registry entry where the caller has it (:attr:`gpude.run.spec.RunSpec.entry`).
    """
    cls = (entry or get(algorithm, implementation)).load()
    Params = params_class(algorithm)
    fields = {f.name for f in dataclasses.fields(Params)}
    algorithm_params = {k: options.pop(k) for k in list(options) if k in fields}
    given = {k: v for k, v in (("F", F), ("CR", CR), ("bounds", bounds)) if v is not None}
    wrong = sorted(set(given) - fields)
    if wrong:
        raise InvalidInputError(f"algorithm {algorithm!r} has no parameter {', '.join(wrong)}; its "
                                f"parameters: {', '.join(sorted(fields))}")
    params = Params(popsize=popsize, max_fes=max_fes, target=target, dtype=dtype,
                    max_time_s=max_time_s, **given, **algorithm_params)
    # a name, or a problem object (e.g. gpude.problems.LinearOrdering.from_matrix(C)) of that dimension
    problem = get_function(function, dim) if isinstance(function, str) else function
    if not isinstance(function, str) and dim not in (None, "instance") and int(dim) != problem.dim:
        raise InvalidInputError(f"{problem.fid} has dimension {problem.dim}, not {dim}")
    # an option the class does not take: the error every implementation gives (base.Implementation's),
    # also for a class whose own __init__ lists its options and takes no others
    accepted = inspect.signature(cls.__init__).parameters
    unknown = sorted(set(options) - set(accepted))
    if unknown and not any(p.kind is p.VAR_KEYWORD for p in accepted.values()):
        raise InvalidInputError(f"{algorithm}/{implementation} takes no option {', '.join(unknown)}; see `gpude "
                                "list` and docs/implementations.md for each implementation's options")
    runner = cls(problem, params, **options)
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
