"""Problems that are not boxes of real numbers with a formula (Kromer et al.): the linear ordering
problem on LOLIB / N-LOLIB matrices and independent task scheduling on Braun et al.'s ETC matrices.

Each is seen by the algorithms as the benchmark functions are (the protocol of
:mod:`gpude.problems.base`): real vectors in a box, evaluated a population at a time on the CPU or
the GPU, ``evaluate(X) -> errors`` to minimise. What differs is the decoding (random keys to a
permutation, keys to a machine per task) and what a solution reports (:meth:`summary`). Instances
come from ``gpude fetch-data lolib|etc`` (:mod:`gpude.instances`).

An instance is named as in the paper's tables (``be75eec``, ``N-be75eec``, ``ThMhCc``) wherever a
function id goes (``gpude.functions.get_function``, an experiment's ``functions``); its dimension is
its own (``dims: [instance]`` in an experiment).
"""

from __future__ import annotations

from importlib import import_module

from .base import Problem, has_program

# the problem modules import numba.cuda: loaded on first use, so that `from gpude.problems.base import
# has_program` (every CPU implementation) stays light
_LAZY = {"LinearOrdering": "lop", "get_lop": "lop", "list_lop": "lop", "TaskScheduling": "scheduling",
         "get_etc": "scheduling", "list_etc": "scheduling", "min_min": "scheduling"}


def __getattr__(name):
    if name in _LAZY:
        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: problem sets: name -> (module and constructor, instance data set of ``gpude fetch-data``)
SETS = {"lop": ("lop:get_lop", "lolib"), "etc": ("scheduling:get_etc", "etc")}


#: problems registered by name from outside the package (a plugin's objective): name -> problem
_REGISTERED: dict = {}


def register_problem(name: str, problem) -> None:
    """Make ``problem`` (any object with the protocol of :mod:`gpude.problems.base`, e.g. a
    :class:`gpude.problems.objective.UserObjective`) available by ``name`` wherever a function id goes
    (an experiment's ``functions``, with its own dimension or ``dims: [instance]``)."""
    from ..errors import InvalidInputError

    missing = [a for a in ("dim", "lower", "upper", "evaluate", "cpu_evaluator") if not hasattr(problem, a)]
    if missing:
        raise InvalidInputError(f"problem {name!r} lacks {', '.join(missing)} (docs/problems.md: the protocol)")
    if name in _REGISTERED and _REGISTERED[name] is not problem:
        raise RuntimeError(f"name collision: problem {name!r} is already registered")
    problem.fid = name
    _REGISTERED[name] = problem


def registered_problem(name: str):
    return _REGISTERED.get(str(name).strip())


def registered_names() -> list[str]:
    return list(_REGISTERED)


def problem_set(name: str) -> str | None:
    """``"lop"`` or ``"etc"`` for an instance name (exact, as in the paper), ``"registered"`` for a
    registered problem, else None."""
    from ..instances import find_instance

    if name in _REGISTERED:
        return "registered"
    found = find_instance(name)
    return found[0] if found and found[1] == name else None


def instance_data_set(name: str) -> str | None:
    """The ``gpude fetch-data`` set an instance needs (``lolib`` or ``etc``), else None."""
    kind = problem_set(name)
    return SETS[kind][1] if kind in SETS else None


def instance_dim(name: str) -> int:
    """The dimension of an instance, from the committed tables (no instance file is read)."""
    from ..instances import catalog

    if name in _REGISTERED:
        return int(_REGISTERED[name].dim)
    return catalog(problem_set(name))[name]


def get_problem(name: str, dim=None):
    """The instance ``name``; ``dim`` (optional) must be its own dimension."""
    from ..errors import UnsupportedDimensionError

    kind = problem_set(name)
    if kind is None:
        from ..errors import UnknownFunctionError

        raise UnknownFunctionError(f"unknown problem instance {name!r}")
    own = instance_dim(name)
    if dim is not None and dim != "instance" and int(dim) != own:
        raise UnsupportedDimensionError(f"{name} has dimension {own} (its instance's size), not {dim}; "
                                        f"use dims: [instance] in an experiment")
    if kind == "registered":
        return _REGISTERED[name]
    module, _, constructor = SETS[kind][0].partition(":")
    return getattr(import_module(f".{module}", __name__), constructor)(name)


__all__ = ["Problem", "has_program", "register_problem", "registered_problem", "registered_names", "LinearOrdering", "get_lop", "list_lop", "TaskScheduling", "get_etc",
           "list_etc", "min_min", "get_problem", "problem_set", "instance_dim", "instance_data_set"]
