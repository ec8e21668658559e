"""The benchmark functions: F01..F10 (Janssen, Pullan & Liew) and Q01..Q04 (Qin et al.).

Each function is a table entry, not code: its kind (simple, hybrid or
composition), its basic functions with the constants of the official C code,
and the data files it reads. :mod:`gpude.functions.program` turns an entry and
a dimension into the arrays that the evaluators run.

Where the paper's Table 2 and the official code disagree, the code wins
(see ``../shared/cec_reference/README.md`` and ``docs/functions.md``):

* F07 (CEC'14 F22) uses the code's group fractions p = [0.1, 0.2, 0.2, 0.2, 0.3],
  not the paper's [0.3, 0.2, 0.2, 0.1, 0.2];
* F10 (CEC'17 F26) uses the code's lambda = [5e-4, 1, 10, 1, 10]
  (10000/2e7 = 5e-4), not the paper's 0.005.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import basic as b

SIMPLE, HYBRID, COMPOSITION = 0, 1, 2
KIND_NAMES = {SIMPLE: "simple", HYBRID: "hybrid", COMPOSITION: "composition"}

DIMS = (10, 30, 50, 100)
LOWER, UPPER = -100.0, 100.0


@dataclass(frozen=True)
class Component:
    """One basic function inside a function definition.

    Attributes
    ----------
    code : int
        Basic-function code from :mod:`gpude.functions.basic`.
    fraction : float
        Hybrid functions: share of the coordinates (``ceil(fraction * D)``;
        the last group takes the remainder).
    lam_num, lam_den : float
        Composition functions: the height lambda, kept as the C code writes it
        (``fit = lam_num * fit / lam_den``) so that it rounds the same way.
    sigma : float
        Composition functions: the width delta of the component's weight.
    bias : float
        Composition functions: the component's bias (its optimum's error).
    offset : float or None
        Overrides the basic function's own post-rotation offset (CEC 2005 F6).
    rate : float or None
        Overrides the basic function's own shrink rate (CEC 2005 uses none).
    """

    code: int
    fraction: float = 0.0
    lam_num: float = 1.0
    lam_den: float = 1.0
    sigma: float = 0.0
    bias: float = 0.0
    offset: float | None = None
    rate: float | None = None

    @property
    def name(self) -> str:
        return b.BASIC[self.code].name


@dataclass(frozen=True)
class FunctionDef:
    """A benchmark function as the official code defines it.

    Attributes
    ----------
    fid : str
        Suite identifier, ``"F01"``.. ``"F10"``, ``"Q01"``.. ``"Q04"``.
    name : str
        Descriptive name.
    suite : str
        ``"janssen"`` or ``"qin_cec2005"``.
    cec_year, cec_fn : int
        Competition year and function number in the official code's numbering.
    kind : int
        ``SIMPLE``, ``HYBRID`` or ``COMPOSITION``.
    components : tuple of Component
    bias : float
        ``f(x*)`` as the official entry point reports it (error = f - bias).
    rotated : bool
        Whether a rotation matrix is applied (the CEC 2005 functions used by
        Qin et al. are shifted only).
    shift_file : str
        Data file of the shift vector(s), relative to ``data/cec``.
    rotation_file : str or None
        Pattern with ``{dim}`` for the rotation matrix file.
    shuffle_file : str or None
        Pattern with ``{dim}`` for the hybrid functions' 1-based permutation.
    shift_minus_one : bool
        CEC 2005 F6 subtracts 1 from the shift vector when it loads it.
    lower, upper : float
        The search box (every coordinate): [-100, 100] except where CEC 2005 defines another
        (Griewank [-600, 600], Rastrigin [-5, 5]).
    notes : str
        Deviations from the paper's description, and other remarks.
    """

    fid: str
    name: str
    suite: str
    cec_year: int
    cec_fn: int
    kind: int
    components: tuple[Component, ...]
    bias: float
    rotated: bool = True
    shift_file: str = ""
    rotation_file: str | None = None
    shuffle_file: str | None = None
    shift_minus_one: bool = False
    notes: str = ""
    dims: tuple[int, ...] = field(default=DIMS)
    lower: float = LOWER
    upper: float = UPPER

    @property
    def kind_name(self) -> str:
        return KIND_NAMES[self.kind]

    def data_files(self, dim: int) -> list[str]:
        """The data files (relative to ``data/cec``) this function reads at ``dim``."""
        files = [self.shift_file]
        if self.rotation_file:
            files.append(self.rotation_file.format(dim=dim))
        if self.shuffle_file:
            files.append(self.shuffle_file.format(dim=dim))
        return files


def _cec17_simple(fid, cec_fn, code, name):
    return FunctionDef(
        fid, name, "janssen", 2017, cec_fn, SIMPLE, (Component(code),), 100.0 * cec_fn,
        shift_file=f"cec2017/shift_data_{cec_fn}.txt",
        rotation_file=f"cec2017/M_{cec_fn}_D{{dim}}.txt",
    )


def _hybrid(fid, year, cec_fn, parts, name, notes=""):
    return FunctionDef(
        fid, name, "janssen", year, cec_fn, HYBRID,
        tuple(Component(code, fraction=p) for code, p in parts), 100.0 * cec_fn,
        shift_file=f"cec{year}/shift_data_{cec_fn}.txt",
        rotation_file=f"cec{year}/M_{cec_fn}_D{{dim}}.txt",
        shuffle_file=f"cec{year}/shuffle_data_{cec_fn}_D{{dim}}.txt",
        notes=notes,
    )


def _composition(fid, cec_fn, parts, name, notes=""):
    # parts: (code, lam_num, lam_den, sigma); biases are 0, 100, 200, ...
    comps = tuple(
        Component(code, lam_num=num, lam_den=den, sigma=sigma, bias=100.0 * k)
        for k, (code, num, den, sigma) in enumerate(parts)
    )
    return FunctionDef(
        fid, name, "janssen", 2017, cec_fn, COMPOSITION, comps, 100.0 * cec_fn,
        shift_file=f"cec2017/shift_data_{cec_fn}.txt",
        rotation_file=f"cec2017/M_{cec_fn}_D{{dim}}.txt",
        notes=notes,
    )


def _cec05(fid, cec_fn, code, name, data, bias, **kw):
    comp = Component(code, rate=1.0, offset=0.0)
    return FunctionDef(
        fid, name, "qin_cec2005", 2005, cec_fn, SIMPLE, (comp,), bias, rotated=False,
        shift_file=f"cec2005/{data}_func_data.txt", **kw,
    )


FUNCTIONS: dict[str, FunctionDef] = {
    f.fid: f
    for f in (
        _cec17_simple("F01", 3, b.ZAKHAROV, "Shifted and rotated Zakharov"),
        _cec17_simple("F02", 4, b.ROSENBROCK, "Shifted and rotated Rosenbrock"),
        _cec17_simple("F03", 5, b.RASTRIGIN, "Shifted and rotated Rastrigin"),
        _cec17_simple("F04", 10, b.SCHWEFEL, "Shifted and rotated Schwefel"),
        _hybrid("F05", 2014, 18, ((b.BENT_CIGAR, 0.3), (b.HGBAT, 0.3), (b.RASTRIGIN, 0.4)),
                "Hybrid function 1 (N=3)"),
        _hybrid("F06", 2017, 16,
                ((b.ESCAFFER6, 0.2), (b.HGBAT, 0.2), (b.ROSENBROCK, 0.3), (b.SCHWEFEL, 0.3)),
                "Hybrid function 2 (N=4)"),
        _hybrid("F07", 2014, 22,
                ((b.KATSUURA, 0.1), (b.HAPPYCAT, 0.2), (b.GRIEROSEN, 0.2), (b.SCHWEFEL, 0.2),
                 (b.ACKLEY, 0.3)),
                "Hybrid function 3 (N=5)",
                notes="p = [0.1, 0.2, 0.2, 0.2, 0.3] as in the official code; the paper's "
                      "Table 2 prints [0.3, 0.2, 0.2, 0.1, 0.2]."),
        _composition("F08", 22,
                     ((b.RASTRIGIN, 1.0, 1.0, 10.0), (b.GRIEWANK, 1000.0, 100.0, 20.0),
                      (b.SCHWEFEL, 1.0, 1.0, 30.0)),
                     "Composition function 1 (N=3)"),
        _composition("F09", 24,
                     ((b.ACKLEY, 1000.0, 100.0, 10.0), (b.ELLIPTIC, 10000.0, 1e10, 20.0),
                      (b.GRIEWANK, 1000.0, 100.0, 30.0), (b.RASTRIGIN, 1.0, 1.0, 40.0)),
                     "Composition function 2 (N=4)"),
        _composition("F10", 26,
                     ((b.ESCAFFER6, 10000.0, 2e7, 10.0), (b.SCHWEFEL, 1.0, 1.0, 20.0),
                      (b.GRIEWANK, 1000.0, 100.0, 20.0), (b.ROSENBROCK, 1.0, 1.0, 30.0),
                      (b.RASTRIGIN, 10000.0, 1e3, 40.0)),
                     "Composition function 3 (N=5)",
                     notes="lambda = [5e-4, 1, 10, 1, 10] as in the official code "
                           "(10000/2e7 = 5e-4); the paper's Table 2 prints 0.005."),
        _cec05("Q01", 1, b.SPHERE, "Shifted sphere (CEC 2005 F1)", "sphere", -450.0),
        _cec05("Q02", 6, b.ROSENBROCK, "Shifted Rosenbrock (CEC 2005 F6)", "rosenbrock", 390.0,
               shift_minus_one=True,
               notes="The official code subtracts 1 from o when loading (z = x - o + 1); "
                     "the optimum is the file's o."),
        _cec05("Q03", 7, b.GRIEWANK, "Shifted Griewank, no rotation (CEC 2005 F7 data)",
               "griewank", -180.0,
               lower=-600.0, upper=600.0,
               notes="Qin et al. use F7's shift data without its rotation matrix. Search box "
                     "[-600, 600], Griewank's usual one: the data's optimum lies in [-600, 0], "
                     "outside [-100, 100] (CEC 2005 F7 initialises in [0, 600] and has no bounds)."),
        _cec05("Q04", 9, b.RASTRIGIN, "Shifted Rastrigin (CEC 2005 F9)", "rastrigin", -330.0,
               lower=-5.0, upper=5.0, notes="Search box [-5, 5], as CEC 2005 F9."),
    )
}
