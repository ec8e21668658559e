"""Algorithms: what is computed (parameters and operators), independent of how it runs."""

from __future__ import annotations

from importlib import import_module

from ..core.errors import InvalidInputError

#: Each algorithm's parameter class (a frozen dataclass validated on construction), as an import
#: string so that naming it imports nothing heavy. A new algorithm adds its line here.
PARAMS = {
    "de": "gpude.algorithms.de:DEParams",
    "jde": "gpude.algorithms.jde:JDEParams",
    "pso": "gpude.algorithms.pso:PSOParams",
    "ss": "gpude.algorithms.ss:SSParams",
    "masw": "gpude.algorithms.masw:MASWParams",
    "jso": "gpude.algorithms.jso:JSOParams",
    "lshade": "gpude.algorithms.jso:LSHADEParams",
}


def params_class(algorithm: str) -> type:
    """The parameter class of ``algorithm``, or an error that lists the known ones."""
    if algorithm not in PARAMS:
        raise InvalidInputError(f"unknown algorithm {algorithm!r}; known: {', '.join(PARAMS)}")
    module, _, name = PARAMS[algorithm].partition(":")
    return getattr(import_module(module), name)


def register_algorithm(name: str, params_target: str) -> None:
    """Add an algorithm from outside the package (a plugin, ``docs/tutorial.md``): its name and its
    parameter class as ``"module:Class"``. A name already taken is an error."""
    if name in PARAMS and PARAMS[name] != params_target:
        raise RuntimeError(f"name collision: algorithm {name!r} is already registered ({PARAMS[name]})")
    PARAMS[name] = params_target


def load_plugins(modules) -> None:
    """Import plugin modules (each registers its algorithms and implementations when imported)."""
    for module in modules or []:
        try:
            import_module(module)
        except ImportError as exc:
            raise InvalidInputError(f"plugin {module!r} cannot be imported ({exc}); it must be an importable module "
                                    "(on PYTHONPATH, or installed)") from exc
