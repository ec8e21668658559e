"""Problems: what the algorithms optimise, and the one registry of them by name.

Every problem is seen by the algorithms alike (the protocol of :mod:`gpude.problems.base`): real
vectors in a box, evaluated a population at a time on the CPU or the GPU, ``evaluate(X) -> errors``
to minimise. The registry (:mod:`gpude.problems.registry`; :func:`get_problem`,
:func:`list_problems`, ``gpude problems``) resolves a name to a problem, family by family:

* the benchmark functions F01..F10, Q01..Q04, N00..N19 and the large-scale L01..L06, C01..C20
  (:mod:`gpude.functions`, which plugs its families in from the layer above);
* Kromer et al.'s linear ordering problem on LOLIB / N-LOLIB matrices and independent task
  scheduling on Braun et al.'s ETC matrices (:mod:`gpude.problems.lop`,
  :mod:`gpude.problems.scheduling`). What differs from a function is the decoding (random keys to
  a permutation, keys to a machine per task) and what a solution reports (:meth:`summary`).
  Instances come from ``gpude fetch-data lolib|etc`` (:mod:`gpude.problems.instances`);
* problems registered by name (:func:`register_problem`), e.g. a user's objective
  (:class:`gpude.problems.objective.UserObjective`).

An instance is named as in the paper's tables (``be75eec``, ``N-be75eec``, ``ThMhCc``) wherever a
function id goes (an experiment's ``functions``); its dimension is its own (``dims: [instance]`` in
an experiment).
"""

from __future__ import annotations

from importlib import import_module

from . import registry
from .base import Problem, has_program
from .instance_sets import ETC, LOP
from .registry import (
    ProblemFamily,
    UnknownProblemError,
    canonical_name,
    describe,
    find_problem,
    get_problem,
    instance_data_set,
    instance_dim,
    list_problems,
    problem_set,
    register_family,
    register_problem,
    registered_names,
    registered_problem,
    suites,
)

# the problem modules import numba.cuda: loaded on first use, so that `from gpude.problems.base import
# has_program` (every CPU implementation) stays light
_LAZY = {"LinearOrdering": "lop", "get_lop": "lop", "list_lop": "lop", "TaskScheduling": "scheduling",
         "get_etc": "scheduling", "list_etc": "scheduling", "min_min": "scheduling"}


def __getattr__(name):
    if name in _LAZY:
        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# the instance sets belong to this layer; the functions' families are registered by gpude/__init__.py
register_family(LOP)
register_family(ETC)

__all__ = ["Problem", "ProblemFamily", "UnknownProblemError", "has_program", "registry", "register_family",
           "register_problem", "registered_problem", "registered_names", "LinearOrdering", "get_lop",
           "list_lop", "TaskScheduling", "get_etc", "list_etc", "min_min", "get_problem", "list_problems",
           "find_problem", "canonical_name", "describe", "suites", "problem_set", "instance_dim", "instance_data_set"]
