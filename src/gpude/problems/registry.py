"""The one registry of problems: every name an experiment's ``functions`` may list, a trial may run
or ``gpude problems`` shows.

Problems come in *families*, each a set of names with one way to build a problem from a name and a
dimension (the protocol :class:`ProblemFamily`):

* the LOP and ETC instances of Kromer et al. (:mod:`gpude.problems.instance_sets`, registered here);
* the benchmark functions (CEC and Nashed) and the large-scale functions
  (:mod:`gpude.functions.families`): they plug in from above, by an import string that
  :mod:`gpude` registers when it is imported (this layer never imports the functions);
* problems registered one by one (:func:`register_problem`, e.g. a user's objective).

A name is looked up among the registered problems first, then in the families in registration
order (the instances before the functions).
"""

from __future__ import annotations

from importlib import import_module
from typing import Protocol

from ..core.errors import InvalidInputError, UnknownFunctionError, UnsupportedDimensionError


class UnknownProblemError(UnknownFunctionError):
    """A problem name that no family resolves (an :class:`UnknownFunctionError`: one ``except`` serves
    function and problem names alike)."""


class ProblemFamily(Protocol):
    """What a family offers the registry.

    Attributes
    ----------
    name : str
        The family's name (``"functions"``, ``"large-scale"``, ``"lop"``, ``"etc"``).
    suites : tuple of str
        The suite names :func:`list_problems` accepts for it.
    instances : bool
        True when each problem has its own dimension (an instance), False when the caller chooses
        it (a function).
    """

    name: str
    suites: tuple[str, ...]
    instances: bool

    def names(self, suite: str | None = None) -> list[str]:
        """The family's names in order (one suite's, or all)."""

    def resolve(self, name) -> str | None:
        """The name as trial rows record it if ``name`` names a member (case-insensitively), else None."""

    def get(self, name: str, dim):
        """The problem ``name`` (as :meth:`resolve` returns it) at ``dim``."""

    def own_dim(self, name: str) -> int | None:
        """An instance's own dimension (None for a function)."""

    def data_set(self, name: str) -> str | None:
        """The ``gpude fetch-data`` set the problem's files come from, if any."""

    def describe(self, name: str) -> tuple[str, str]:
        """``(its dimensions in words, what it is)``, for ``gpude problems``."""


#: the families, in lookup order, as registered: a family object, or ``"module:attribute"``
_FAMILIES: list = []
#: the families registered by import string, once imported: import string -> family
_IMPORTED: dict = {}
#: problems registered by name (a plugin's objective): name -> problem
_REGISTERED: dict = {}
#: the suite name of the problems registered one by one
REGISTERED_SUITE = "registered"


def register_family(family) -> None:
    """Add a family at the end of the lookup order: a :class:`ProblemFamily`, or its import string
    ``"package.module:attribute"`` (imported when a lookup first reaches it, so that registering
    imports nothing). Registering the same family (or import string) twice changes nothing."""
    if isinstance(family, str) and ":" not in family:
        raise InvalidInputError(f"a family's import string is 'module:attribute', got {family!r}")
    if family not in _FAMILIES:
        _FAMILIES.append(family)


def _loaded(family):
    if not isinstance(family, str):
        return family
    if family not in _IMPORTED:
        module, _, attribute = family.partition(":")
        _IMPORTED[family] = getattr(import_module(module), attribute)
    return _IMPORTED[family]


def families():
    """The families in lookup order (each imported if it was registered by name)."""
    for family in list(_FAMILIES):
        yield _loaded(family)


def register_problem(name: str, problem) -> None:
    """Make ``problem`` (any object with the protocol of :mod:`gpude.problems.base`, e.g. a
    :class:`gpude.problems.objective.UserObjective`) available by ``name`` wherever a function id goes
    (an experiment's ``functions``, with its own dimension or ``dims: [instance]``)."""
    missing = [a for a in ("dim", "lower", "upper", "evaluate", "cpu_evaluator") if not hasattr(problem, a)]
    if missing:
        raise InvalidInputError(f"problem {name!r} lacks {', '.join(missing)} (docs/problems.md: the protocol)")
    if name in _REGISTERED and _REGISTERED[name] is not problem:
        raise RuntimeError(f"name collision: problem {name!r} is already registered")
    problem.fid = name
    _REGISTERED[name] = problem


def registered_problem(name: str):
    """The problem registered as ``name`` (exactly), else None."""
    return _REGISTERED.get(str(name).strip())


def registered_names() -> list[str]:
    return list(_REGISTERED)


def find_problem(name) -> tuple[object | None, str] | None:
    """``(family, name as trial rows record it)`` for a name; the family is None for a registered
    problem; None when nothing resolves the name."""
    if registered_problem(name) is not None:
        return None, str(name).strip()
    for family in families():
        found = family.resolve(name)
        if found is not None:
            return family, found
    return None


def canonical_name(name) -> str:
    """The name as trial rows record it: ``F01`` for ``f01``, an instance's name as in the paper;
    an unknown name upper-cased (as the function ids were before there were other problems)."""
    found = find_problem(name)
    return found[1] if found else str(name).strip().upper()


def get_problem(name: str, dim=None):
    """The problem ``name`` at dimension ``dim``.

    Parameters
    ----------
    name : str
        A benchmark or large-scale function id (``"F05"``, ``"n03"``, ``"L01"``, ``"C20"``;
        case-insensitive), a LOP or ETC instance (``"be75eec"``, ``"ThMhCc"``) or the name of a
        registered problem (:func:`register_problem`).
    dim : int, "instance" or None
        A function's dimension (required: :func:`gpude.functions.get_function` says which it
        supports); an instance's or registered problem's own size, ``"instance"`` or None.

    Raises
    ------
    UnknownProblemError
        Nothing resolves ``name`` (the message lists what exists).
    UnsupportedDimensionError
        ``dim`` is not one the problem has.
    """
    found = find_problem(name)
    if found is None:
        raise UnknownProblemError(_unknown_message(name))
    family, canonical = found
    if family is None or family.instances:
        own = instance_dim(canonical)
        if dim is not None and dim != "instance" and int(dim) != own:
            raise UnsupportedDimensionError(f"{canonical} has dimension {own} (its instance's size), not {dim}; "
                                            f"use dims: [instance] in an experiment")
        if family is None:
            return _REGISTERED[canonical]
    return family.get(canonical, dim)


def _unknown_message(name) -> str:
    functions = [n for family in families() if not family.instances for n in family.names()]
    sets = [family.name for family in families() if family.instances]
    registered = f"; registered: {', '.join(_REGISTERED)}" if _REGISTERED else ""
    return (f"unknown problem {name!r}; available: {', '.join(functions)}, the instances of "
            f"`gpude problems --suite {'|'.join(sets)}`{registered}")


def describe(name: str) -> tuple[str, str, str]:
    """``(family, dimensions in words, what it is)`` of a problem (as :func:`list_problems` names it)."""
    found = find_problem(name)
    if found is None:
        raise UnknownProblemError(_unknown_message(name))
    family, canonical = found
    if family is None:
        problem = _REGISTERED[canonical]
        return REGISTERED_SUITE, str(int(problem.dim)), type(problem).__name__
    return (family.name, *family.describe(canonical))


def suites() -> list[str]:
    """Every suite name :func:`list_problems` accepts, family by family, then ``"registered"``."""
    return [s for family in _functions_first() for s in family.suites] + [REGISTERED_SUITE]


def _functions_first() -> list:
    """The families for listing: the functions' before the instances' (lookup order otherwise)."""
    return sorted(families(), key=lambda family: family.instances)


def list_problems(suite: str | None = None) -> list[str]:
    """Names of problems, in order.

    Parameters
    ----------
    suite : str, optional
        ``None`` (default): every problem, family by family (the functions, the large-scale
        functions, the LOP and ETC instances), then the registered ones; or one suite of
        :func:`suites` (e.g. ``"janssen"``, ``"cec2010"``, ``"n-lolib"``, ``"etc"``,
        ``"registered"``).
    """
    if suite is None:
        return [n for family in _functions_first() for n in family.names()] + registered_names()
    if suite == REGISTERED_SUITE:
        return registered_names()
    for family in families():
        if suite in family.suites:
            return family.names(suite)
    raise InvalidInputError(f"unknown suite {suite!r}; use one of {', '.join(suites())}")


def problem_set(name: str) -> str | None:
    """``"lop"`` or ``"etc"`` (the instance's family) for an instance name exactly as in the paper,
    ``"registered"`` for a registered problem, else None (a function, or an unknown name)."""
    if name in _REGISTERED:
        return REGISTERED_SUITE
    found = find_problem(name)
    if found is None or found[0] is None or not found[0].instances or found[1] != name:
        return None
    return found[0].name


def instance_dim(name: str) -> int:
    """The dimension of an instance or registered problem, by its exact name (from the committed
    tables: no instance file is read)."""
    if name in _REGISTERED:
        return int(_REGISTERED[name].dim)
    if problem_set(name) is None:
        raise UnknownProblemError(f"{name!r} is no instance or registered problem (only those have a dimension "
                                  "of their own)")
    return find_problem(name)[0].own_dim(name)


def instance_data_set(name: str) -> str | None:
    """The ``gpude fetch-data`` set an instance needs (``lolib`` or ``etc``), by its exact name, else None."""
    kind = problem_set(name)
    if kind is None or kind == REGISTERED_SUITE:
        return None
    return find_problem(name)[0].data_set(name)
