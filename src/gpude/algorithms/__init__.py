"""Algorithms: what is computed (parameters and operators), independent of how it runs."""

from __future__ import annotations

from importlib import import_module

from ..errors import InvalidInputError

#: Each algorithm's parameter class (a frozen dataclass validated on construction), as an import
#: string so that naming it imports nothing heavy. A new algorithm adds its line here.
PARAMS = {
    "de": "gpude.algorithms.de:DEParams",
    "jde": "gpude.algorithms.jde:JDEParams",
    "pso": "gpude.algorithms.pso:PSOParams",
    "ss": "gpude.algorithms.ss:SSParams",
    "masw": "gpude.algorithms.masw:MASWParams",
}


def params_class(algorithm: str) -> type:
    """The parameter class of ``algorithm``, or an error that lists the known ones."""
    if algorithm not in PARAMS:
        raise InvalidInputError(f"unknown algorithm {algorithm!r}; known: {', '.join(PARAMS)}")
    module, _, name = PARAMS[algorithm].partition(":")
    return getattr(import_module(module), name)
