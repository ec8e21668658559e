"""The LOP and ETC instances of Kromer et al. as families of the problem registry
(:mod:`gpude.problems.registry`): names from the committed tables (:func:`gpude.problems.instances.catalog`),
a problem built from the instance file (``gpude fetch-data lolib|etc``) on first use."""

from __future__ import annotations

from .instances import catalog


class InstanceSet:
    """One set of instances: ``lop`` (LOLIB, Table 2, and N-LOLIB, Table 3) or ``etc`` (Braun et al.'s
    12 classes). Each instance has its own dimension."""

    instances = True

    def __init__(self, name: str, suites: tuple[str, ...], data_set: str):
        self.name, self.suites, self._data_set = name, suites, data_set
        self._by_lower = (None, {})  # (the catalog it was built from, lower-case name -> name)

    def __repr__(self) -> str:
        return f"<InstanceSet {self.name}>"

    def names(self, suite: str | None = None) -> list[str]:
        names = list(catalog(self.name))
        if suite in ("lolib", "n-lolib"):  # the two tables of the LOP set
            return [n for n in names if n.startswith("N-") == (suite == "n-lolib")]
        return names

    def resolve(self, name) -> str | None:
        """The name as in the paper for any spelling of it (as :func:`gpude.problems.instances.find_instance`)."""
        names = catalog(self.name)
        if self._by_lower[0] is not names:  # a dict lookup, not a scan: every problem name comes here first
            self._by_lower = (names, {known.lower(): known for known in names})
        return self._by_lower[1].get(str(name).strip().lower())

    def get(self, name: str, dim=None):
        # the problem modules import numba.cuda: imported here, on first use
        if self.name == "lop":
            from .lop import get_lop

            return get_lop(name)
        from .scheduling import get_etc

        return get_etc(name)

    def own_dim(self, name: str) -> int:
        return catalog(self.name)[name]

    def data_set(self, name: str) -> str:
        return self._data_set

    def describe(self, name: str) -> tuple[str, str]:
        n = self.own_dim(name)
        if self.name == "etc":
            return str(n), f"ETC class of Braun et al.: {n} tasks on 16 machines"
        table = "N-LOLIB (Table 3)" if name.startswith("N-") else "LOLIB (Table 2)"
        return str(n), f"linear ordering, {table}: {n} x {n} matrix"


LOP = InstanceSet("lop", ("lop", "lolib", "n-lolib"), "lolib")
ETC = InstanceSet("etc", ("etc",), "etc")
