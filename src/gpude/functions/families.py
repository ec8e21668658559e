"""The benchmark functions as families of the problem registry (:mod:`gpude.problems.registry`):
the CEC and Nashed functions (F, Q, N) and the large-scale functions (L, C). :mod:`gpude` registers
them by import string, so that naming a problem imports them only when a lookup reaches them."""

from __future__ import annotations

from ..core.errors import InvalidInputError, UnknownFunctionError
from .function import benchmark_function
from .largescale import LARGE_SCALE, get_large_scale
from .largescale import SUITES as LARGE_SCALE_SUITES
from .suites import CEC2017_EXCLUDED, FUNCTIONS, SUITES


class FunctionFamily:
    """Functions defined at a dimension the caller chooses (``instances = False``), by id
    (case-insensitive; trial rows record it upper-case)."""

    instances = False

    def __init__(self, name: str, definitions: dict, suites: tuple[str, ...], build, refused=None):
        self.name, self.suites = name, suites
        self._definitions, self._build = definitions, build
        self._refused = dict(refused or {})  # names refused with a message of their own (CEC17_F02)

    def __repr__(self) -> str:
        return f"<FunctionFamily {self.name}>"

    def names(self, suite: str | None = None) -> list[str]:
        if suite is not None and suite not in self.suites:
            raise InvalidInputError(f"{self.name} has no suite {suite!r}; its suites: {', '.join(self.suites)}")
        return [fid for fid, d in self._definitions.items() if suite is None or d.suite == suite]

    def resolve(self, name) -> str | None:
        key = str(name).strip().upper()
        if key in self._refused:
            raise UnknownFunctionError(self._refused[key])
        return key if key in self._definitions else None

    def get(self, name: str, dim):
        return self._build(name, dim)

    def own_dim(self, name: str) -> None:
        return None

    def data_set(self, name: str) -> None:
        return None  # the CEC data are committed (data/cec); the large-scale ones are generated

    def describe(self, name: str) -> tuple[str, str]:
        d = self._definitions[name]
        return d.dims_text(), f"{d.name} ({d.origin.strip()}, {d.kind_name})"


#: F01..F10, Q01..Q04 (the CEC functions), N00..N19 (Nashed et al.) and the CEC 2017 suite
#: (CEC17_F01, CEC17_F03..CEC17_F30; CEC17_F02 is refused: the organisers excluded F2)
BENCHMARK_FUNCTIONS = FunctionFamily("functions", FUNCTIONS, SUITES, benchmark_function,
                                     refused=CEC2017_EXCLUDED)
#: L01..L06 (Lastra et al.) and C01..C20 (the CEC 2010 subset)
LARGE_SCALE_FUNCTIONS = FunctionFamily("large-scale", LARGE_SCALE, LARGE_SCALE_SUITES, get_large_scale)
