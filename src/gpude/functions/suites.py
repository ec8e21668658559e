"""The benchmark functions: F01..F10 (Janssen, Pullan & Liew), Q01..Q04 (Qin et al.),
N00..N19 (Nashed et al., PPSN 2012, Table 3: their f0..f19) and the whole CEC 2017 suite
(CEC17_F01, CEC17_F03..CEC17_F30, the official code's quirks replicated).

Each function is a table entry, not code: its kind (simple, hybrid or
composition), its basic functions with the constants of the official C code,
and the data files it reads. :mod:`gpude.functions.program` turns an entry and
a dimension into the arrays that the evaluators run.

Where the paper's Table 2 and the official code disagree, the code wins
(``docs/functions.md``):

* F07 (CEC'14 F22) uses the code's group fractions p = [0.1, 0.2, 0.2, 0.2, 0.3],
  not the paper's [0.3, 0.2, 0.2, 0.1, 0.2];
* F10 (CEC'17 F26) uses the code's lambda = [5e-4, 1, 10, 1, 10]
  (10000/2e7 = 5e-4), not the paper's 0.005.

The Nashed functions are unshifted (x* = 0 except N08 and N10), bias 0, and defined at every
D >= 2 (N07 and N17 up to 100, the width of their CEC 2005 data matrices); where Table 3's formula
is garbled or ambiguous, ``docs/functions.md`` says which reading is implemented and why.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from . import basic as b

SIMPLE, HYBRID, COMPOSITION, HYBRID_COMPOSITION = 0, 1, 2, 3
KIND_NAMES = {SIMPLE: "simple", HYBRID: "hybrid", COMPOSITION: "composition",
              HYBRID_COMPOSITION: "composition of hybrids"}

DIMS = (10, 30, 50, 100)
LOWER, UPPER = -100.0, 100.0
#: The smallest dimension of the functions defined at any D (``FunctionDef.dims is None``).
MIN_ANY_DIM = 2
#: The suites: Janssen et al.'s CEC functions, Qin et al.'s CEC 2005 ones, Nashed et al.'s Table 3,
#: and the whole CEC 2017 suite (CEC17_F01, CEC17_F03..CEC17_F30).
SUITES = ("janssen", "qin_cec2005", "nashed", "cec2017")


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
    head : bool
        Hybrid functions: the group reads the *first* coordinates of the shuffled vector, not its own
        (cec17_func.cpp's schaffer_F7_func reads the global buffer ``y`` from index 0 in hf04 and hf10).
    part : int
        Compositions of hybrids (CEC 2017 F29, F30): the composition component this group belongs
        to; ``sigma``, ``bias`` and lambda are the component's (equal on all its groups).
    """

    code: int
    fraction: float = 0.0
    lam_num: float = 1.0
    lam_den: float = 1.0
    sigma: float = 0.0
    bias: float = 0.0
    offset: float | None = None
    rate: float | None = None
    head: bool = False
    part: int = 0

    @property
    def name(self) -> str:
        return b.BASIC[self.code].name


@dataclass(frozen=True)
class FunctionDef:
    """A benchmark function as the official code defines it.

    Attributes
    ----------
    fid : str
        Suite identifier, ``"F01"``.. ``"F10"``, ``"Q01"``.. ``"Q04"``, ``"N00"``.. ``"N19"``.
    name : str
        Descriptive name.
    suite : str
        ``"janssen"``, ``"qin_cec2005"`` or ``"nashed"``.
    cec_year, cec_fn : int
        Competition year and function number in the official code's numbering (the Nashed
        functions: year 0 and the paper's function number, f0..f19).
    kind : int
        ``SIMPLE``, ``HYBRID`` or ``COMPOSITION``.
    components : tuple of Component
    bias : float
        ``f(x*)`` as the official entry point reports it (error = f - bias).
    rotated : bool
        Whether a matrix is applied, z = M (rate (x - o)) (the CEC 2005 functions used by
        Qin et al. are shifted only; of the Nashed functions, N06, N07 and N17 have one).
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
        (Griewank [-600, 600], Rastrigin [-5, 5]), and the Nashed functions' Table 3 boxes.
    notes : str
        Deviations from the paper's description, and other remarks.
    dims : tuple of int or None
        The supported dimensions; ``None``: every integer from :data:`MIN_ANY_DIM` to
        ``max_dim`` (the Nashed functions).
    max_dim : int or None
        With ``dims=None``: the largest supported D (``None``: no limit).
    linear : None, "lower_ones" or ("file", relpath, blocks)
        The Nashed functions' linear stage instead of a CEC rotation file (needs ``rotated``):
        ``"lower_ones"`` is the D x D lower-triangular matrix of ones (z_i = sum_{j<=i} x_j);
        ``("file", relpath, ((first_row, sign), ...))`` puts side by side the blocks
        ``sign * data[first_row:first_row + D, :D]`` of a data file, a D x (k D) matrix.
    features : None or "trig"
        ``"trig"``: the linear stage acts on phi(y) = [sin y_0..sin y_{D-1}, 1 - cos y_0..
        1 - cos y_{D-1}] (length 2 D) instead of y (N17, Schwefel 2.13).
    minimizer : callable or None
        ``minimizer(D)`` is x* where it is not the shift vector (``None``: the shift vector, or the
        origin without a shift file): the Nashed functions N08, N10, and CEC 2017 F9, whose minimum
        the code puts at o + M^-1 1.
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
    dims: tuple[int, ...] | None = field(default=DIMS)
    lower: float = LOWER
    upper: float = UPPER
    max_dim: int | None = None
    linear: object = None
    features: str | None = None
    minimizer: Callable[[int], np.ndarray] | None = field(default=None, repr=False)

    @property
    def kind_name(self) -> str:
        return KIND_NAMES[self.kind]

    @property
    def origin(self) -> str:
        """Where the function comes from, e.g. ``"CEC'17 F3 "`` or ``"Nashed f7 "`` (11 wide)."""
        if self.suite == "nashed":
            return f"Nashed f{self.cec_fn:<3d}"
        if self.suite == "cec2017":
            return f"CEC'17 F{self.cec_fn:<3d}"
        return f"CEC'{self.cec_year % 100:02d} F{self.cec_fn:<3d}"

    def supports(self, dim) -> bool:
        """Whether ``dim`` (an integer, not a bool) is a supported dimension."""
        if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)):
            return False
        if self.dims is not None:
            return int(dim) in self.dims
        return int(dim) >= MIN_ANY_DIM and (self.max_dim is None or int(dim) <= self.max_dim)

    def dims_text(self) -> str:
        """The supported dimensions in words, for error messages and tables."""
        if self.dims is not None:
            return ", ".join(map(str, self.dims))
        if self.max_dim is None:
            return f"any integer >= {MIN_ANY_DIM}"
        return f"any integer from {MIN_ANY_DIM} to {self.max_dim}"

    def data_files(self, dim: int) -> list[str]:
        """The data files (relative to ``data/cec``) this function reads at ``dim``."""
        files = [self.shift_file] if self.shift_file else []
        if isinstance(self.linear, tuple):
            files.append(self.linear[1])
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


def _nashed(fn, code, name, lower, upper, notes="", rate=1.0, offset=0.0, rotated=False, **kw):
    # Unshifted (o = 0), bias 0, any D >= 2; rate and offset 1 and 0 unless given.
    comp = Component(code, rate=rate, offset=offset)
    return FunctionDef(
        f"N{fn:02d}", name, "nashed", 0, fn, SIMPLE, (comp,), 0.0, rotated=rotated, dims=None, lower=lower, upper=upper,
        notes=notes, **kw,
    )


def dixon_price_minimizer(dim: int) -> np.ndarray:
    """x* of N08 (Dixon-Price as printed): x_0 = 1, x_i = sqrt(x_{i-1} / 2); f(x*) = 0."""
    x = np.empty(dim)
    x[0] = 1.0
    for i in range(1, dim):
        x[i] = math.sqrt(x[i - 1] / 2.0)
    return x


def _schwefel_226_minimizer(dim: int) -> np.ndarray:
    return np.full(dim, b.SCHWEFEL_SHIFT)


_S206 = "cec2005/schwefel_206_data.txt"
_S213 = "cec2005/schwefel_213_data.txt"
_NASHED_MAX_DIM = 100  # the CEC 2005 Schwefel 2.6 / 2.13 matrices are 100 wide

NASHED = (
    _nashed(0, b.SPHERE, "Sphere", -100.0, 100.0),
    _nashed(1, b.ELLIPTIC, "Elliptic", -100.0, 100.0,
            notes="sum (1e6)^(i/(n-1)) x_i^2, i = 0..n-1 (Table 3's (i-1)/(D-1) mixes 1- and "
                  "0-based indices)."),
    _nashed(2, b.SUM_SQUARES, "Sum of Squares", -1.0, 1.0,
            notes="sum (i+1) x_i^2: Table 3's weight i (0-based) would give x_0 weight 0."),
    _nashed(3, b.HYPERELLIPSOID, "HyperEllipsoid", -1.0, 1.0,
            notes="sum (i+1)^2 x_i^2: Table 3's weight i^2 (0-based) would give x_0 weight 0."),
    _nashed(4, b.SCHWEFEL_222, "Schwefel 2.22", -10.0, 10.0,
            notes="sum |x_i| + prod |x_i| (the absolute-value bars are lost in Table 3)."),
    _nashed(5, b.ZAKHAROV, "Zakharov", -10.0, 10.0,
            notes="Standard form sum x_i^2 + (sum 0.5 (i+1) x_i)^2 + (...)^4 (Table 3 prints x_i^2 "
                  "and 0-based weights inside the powers)."),
    _nashed(6, b.SPHERE, "Schwefel 1.2", -100.0, 100.0, rotated=True, linear="lower_ones",
            notes="sum_i (sum_{j<=i} x_j)^2, as a sphere after z = L x (L lower-triangular ones)."),
    _nashed(7, b.MAX_ABS, "Schwefel 2.6 (CEC 2005 F5 data, o = 0)", -100.0, 100.0, rotated=True,
            linear=("file", _S206, ((1, 1.0),)), max_dim=_NASHED_MAX_DIM,
            notes="max_i |A_i x - B_i| with o = 0 (so B = A o = 0): ||A x||_inf, A the top-left "
                  "D x D block of rows 2..101 of schwefel_206_data.txt; D <= 100."),
    _nashed(8, b.DIXON_PRICE, "Dixon-Price (as printed)", -10.0, 10.0,
            minimizer=dixon_price_minimizer,
            notes="Exactly as printed, (x_0-1)^2 + sum_{i=1}^{n-1} i (2 x_i^2 - x_{i-1})^2; its "
                  "minimum 0 is at x_0 = 1, x_i = sqrt(x_{i-1}/2), not at 0 (f(0) = 1)."),
    _nashed(9, b.RASTRIGIN, "Rastrigin", -5.12, 5.12),
    _nashed(10, b.SCHWEFEL_226, "Schwefel 2.26", -500.0, 500.0,
            minimizer=_schwefel_226_minimizer,
            notes="418.9828872724338 n - sum x_i sin(sqrt|x_i|) (Table 3 prints '+' and 418.9829, "
                  "which leaves a floor of 1.27e-5 per dimension); minimizer x_i = "
                  "420.9687462275036, not 0."),
    _nashed(11, b.KATSUURA_PROD, "Katsuura", -1000.0, 1000.0,
            notes="prod_i (1 + (i+1) sum_{k=1}^{32} |2^k x_i - round(2^k x_i)| 2^-k) - 1: Table 3 "
                  "lacks the distance to the nearest integer and d; f = 0 wherever every 2 x_i is "
                  "an integer, so the minimizer is not unique."),
    _nashed(12, b.GRIEWANK, "Griewank", -600.0, 600.0,
            notes="cos(x_i / sqrt(i+1)) (Table 3's sqrt(i), 0-based, divides by 0)."),
    _nashed(13, b.ROSENBROCK, "Rosenbrock (z = x + 1)", -100.0, 100.0, offset=1.0,
            notes="CEC 2005 F6 with o = 0: z = x + 1, sum_{i<n-1} 100 (z_i^2 - z_{i+1})^2 + "
                  "(z_i - 1)^2, so the minimizer is x = 0."),
    _nashed(14, b.ACKLEY, "Ackley", -32.0, 32.0),
    _nashed(15, b.GRIEROSEN, "Griewank + Rosenbrock (z = x + 1)", -5.12, 5.12, offset=1.0,
            notes="CEC 2005 F13 with o = 0: z = x + 1, sum G(R(z_i, z_{i+1})) with wrap-around."),
    _nashed(16, b.SCHAFFER_PRINTED, "Schaffer (printed form)", -100.0, 100.0,
            notes="As printed: F = 0.5 + (sin^2 sqrt(s) - 0.5)/(1 + 0.0001 s), s = x^2 + y^2, with "
                  "wrap-around; CEC 2005 F14 uses (1 + 0.001 s)^2 instead."),
    _nashed(17, b.SPHERE, "Schwefel 2.13 (CEC 2005 F12 data, alpha = 0)", -math.pi, math.pi,
            rotated=True, features="trig", linear=("file", _S213, ((0, -1.0), (100, 1.0))),
            max_dim=_NASHED_MAX_DIM,
            notes="sum_i (A_i - B_i(x))^2 with alpha = 0: z = [-a | b] [sin x; 1 - cos x], a and b "
                  "the top-left D x D blocks of rows 1..100 and 101..200 of "
                  "schwefel_213_data.txt; D <= 100."),
    _nashed(18, b.SALOMON, "Salomon", -10.0, 10.0),
    _nashed(19, b.LEVY, "Levy (y = 1 + x/4)", -10.0, 10.0, rate=0.25, offset=1.0,
            notes="Standard Levy on y = 1 + x/4 (minimizer x = 0; Table 3's y = 1 + (x-1)/4 puts "
                  "it at 1 and drops the 1 + in two brackets)."),
)

# --- The CEC 2017 bound-constrained suite, whole: cec17_func.cpp's F1, F3..F30 ---------------------
#
# P-N-Suganthan/CEC2017-BoundContrained, CEC17_fast_pow-C++.zip (cec17_test_fast_pow.cpp), replicated
# with its quirks (docs/functions.md, "The CEC 2017 suite"); tests/test_cec2017_suite.py checks every
# function at every D against that code's values. The ids keep the code's numbers: CEC17_F01,
# CEC17_F03..CEC17_F30 (F2, sum of different powers, was excluded by the organisers).

CEC2017_PREFIX = "CEC17_F"
#: The organisers excluded F2; asking for it is refused with this message.
CEC2017_EXCLUDED = {
    "CEC17_F02": "CEC17_F02 does not exist: the organisers excluded CEC 2017 F2 (shifted and rotated sum "
                 "of different powers) from the suite; its functions are CEC17_F01 and CEC17_F03..CEC17_F30",
}


def cec2017_id(fn: int) -> str:
    return f"{CEC2017_PREFIX}{fn:02d}"


def _c17(fn, kind, comps, name, notes="", **kw):
    shuffled = kind == HYBRID or kind == HYBRID_COMPOSITION
    return FunctionDef(
        cec2017_id(fn), name, "cec2017", 2017, fn, kind, tuple(comps), 100.0 * fn,
        shift_file=f"cec2017/shift_data_{fn}.txt",
        rotation_file=f"cec2017/M_{fn}_D{{dim}}.txt",
        shuffle_file=f"cec2017/shuffle_data_{fn}_D{{dim}}.txt" if shuffled else None,
        notes=notes, **kw,
    )


def _c17_simple(fn, code, name, notes="", **kw):
    return _c17(fn, SIMPLE, (Component(code),), name, notes, **kw)


def _c17_hybrid(fn, parts, name, notes=""):
    # parts: (code, fraction) or (code, fraction, "head")
    return _c17(fn, HYBRID, (Component(p[0], fraction=p[1], head=len(p) > 2) for p in parts), name, notes)


def _c17_composition(fn, parts, sigmas, name, notes=""):
    # parts: (code, lam_num, lam_den); biases 0, 100, 200, ...
    comps = (Component(code, lam_num=num, lam_den=den, sigma=sig, bias=100.0 * k)
             for k, ((code, num, den), sig) in enumerate(zip(parts, sigmas)))
    return _c17(fn, COMPOSITION, comps, name, notes)


# cec17_func.cpp's hybrids hf05, hf06, hf07, hf08, hf09, which F29 and F30 compose (and F15..F19 are).
_HF05 = ((b.BENT_CIGAR, 0.2), (b.HGBAT, 0.2), (b.RASTRIGIN, 0.3), (b.ROSENBROCK, 0.3))
_HF06 = ((b.ESCAFFER6, 0.2), (b.HGBAT, 0.2), (b.ROSENBROCK, 0.3), (b.SCHWEFEL, 0.3))
_HF07 = ((b.KATSUURA, 0.1), (b.ACKLEY, 0.2), (b.GRIEROSEN, 0.2), (b.SCHWEFEL, 0.2), (b.RASTRIGIN, 0.3))
_HF08 = ((b.ELLIPTIC, 0.2), (b.ACKLEY, 0.2), (b.RASTRIGIN, 0.2), (b.HGBAT, 0.2), (b.DISCUS, 0.2))
_HF09 = ((b.BENT_CIGAR, 0.2), (b.RASTRIGIN, 0.2), (b.GRIEROSEN, 0.2), (b.WEIERSTRASS, 0.2),
         (b.ESCAFFER6, 0.2))


def _c17_hybrid_composition(fn, hybrids, sigmas, name, notes=""):
    # Component k is the hybrid hybrids[k] at rate 1 on o_k, M_k and the k-th D numbers of the
    # shuffle file; lambda 1, biases 0, 100, 200.
    comps = (Component(code, fraction=p, sigma=sig, bias=100.0 * k, part=k)
             for k, (parts, sig) in enumerate(zip(hybrids, sigmas)) for code, p in parts)
    return _c17(fn, HYBRID_COMPOSITION, comps, name, notes)


def cec2017_levy_minimizer(dim: int) -> np.ndarray:
    """x* of CEC 2017 F9: o + M^-1 1. The code's Levy takes w = 1 + (z - 1)/4 with z = M (x - o), so
    its minimum (w = 1) is at z = 1, not at the shift o (where the error is 1.44 at D = 10)."""
    from .. import cecdata

    o = cecdata.load_array("cec2017/shift_data_9.txt").ravel()[:dim]
    m = cecdata.load_array(f"cec2017/M_9_D{dim}.txt").ravel()[:dim * dim].reshape(dim, dim)
    return o + np.linalg.solve(m, np.ones(dim))


_HEAD_NOTE = ("The Schaffer F7 group reads the first coordinates of the shuffled vector, not its own "
              "(schaffer_F7_func reads the global y from index 0).")

CEC2017 = (
    _c17_simple(1, b.BENT_CIGAR, "Shifted and rotated Bent Cigar"),
    _c17_simple(3, b.ZAKHAROV, "Shifted and rotated Zakharov"),
    _c17_simple(4, b.ROSENBROCK, "Shifted and rotated Rosenbrock"),
    _c17_simple(5, b.RASTRIGIN, "Shifted and rotated Rastrigin"),
    _c17_simple(6, b.SCHAFFER_F7, "Shifted Schaffer F7 (the code does not rotate it)", rotated=False,
                notes="schaffer_F7_func reads y = x - o, the vector before the rotation: the code "
                      "computes z = M y and ignores it."),
    _c17_simple(7, b.BI_RASTRIGIN, "Shifted and rotated Lunacek bi-Rastrigin",
                notes="The code's form: u = 0.1 (x - o), negated where o < 0; tmpx = 2 u; the sums "
                      "of (tmpx + mu0 - mu0)^2 and (tmpx + mu0 - mu1)^2 on the unrotated tmpx, the "
                      "cosines on M tmpx."),
    _c17_simple(8, b.RASTRIGIN, "Shifted and rotated non-continuous Rastrigin (as the code: Rastrigin)",
                notes="step_rastrigin_func rounds y before sr_func overwrites y: the rounding has no "
                      "effect, so F8 is the shifted and rotated Rastrigin on F8's data."),
    _c17_simple(9, b.LEVY_CEC17, "Shifted and rotated Levy", minimizer=cec2017_levy_minimizer,
                notes="w = 1 + (z - 1)/4 with z = M (x - o): the minimum is at z = 1, x* = o + M^-1 1, "
                      "and the error at x = o is not 0."),
    _c17_simple(10, b.SCHWEFEL, "Shifted and rotated Schwefel"),
    _c17_hybrid(11, ((b.ZAKHAROV, 0.2), (b.ROSENBROCK, 0.4), (b.RASTRIGIN, 0.4)), "Hybrid function 1 (N=3)"),
    _c17_hybrid(12, ((b.ELLIPTIC, 0.3), (b.SCHWEFEL, 0.3), (b.BENT_CIGAR, 0.4)), "Hybrid function 2 (N=3)"),
    _c17_hybrid(13, ((b.BENT_CIGAR, 0.3), (b.ROSENBROCK, 0.3), (b.BI_RASTRIGIN, 0.4)),
                "Hybrid function 3 (N=3)",
                notes="The bi-Rastrigin group negates its coordinate j where the shift's o_j (the first "
                      "numbers of the shift, not the shuffled ones) is negative."),
    _c17_hybrid(14, ((b.ELLIPTIC, 0.2), (b.ACKLEY, 0.2), (b.SCHAFFER_F7, 0.2, "head"), (b.RASTRIGIN, 0.4)),
                "Hybrid function 4 (N=4)", notes=_HEAD_NOTE),
    _c17_hybrid(15, _HF05, "Hybrid function 5 (N=4)"),
    _c17_hybrid(16, _HF06, "Hybrid function 6 (N=4)"),
    _c17_hybrid(17, _HF07, "Hybrid function 7 (N=5)"),
    _c17_hybrid(18, _HF08, "Hybrid function 8 (N=5)"),
    _c17_hybrid(19, _HF09, "Hybrid function 9 (N=5)"),
    _c17_hybrid(20, ((b.HGBAT, 0.1), (b.KATSUURA, 0.1), (b.ACKLEY, 0.2), (b.RASTRIGIN, 0.2),
                     (b.SCHWEFEL, 0.2), (b.SCHAFFER_F7, 0.2, "head")),
                "Hybrid function 10 (N=6)",
                notes=_HEAD_NOTE + " The code loads F20's data as a composition's (its test is "
                      "func_num < 20) and uses the first D numbers of the shift and the first D x D "
                      "matrix, as for the other hybrids."),
    _c17_composition(21, ((b.ROSENBROCK, 1.0, 1.0), (b.ELLIPTIC, 10000.0, 1e10), (b.RASTRIGIN, 1.0, 1.0)),
                     (10.0, 20.0, 30.0), "Composition function 1 (N=3)"),
    _c17_composition(22, ((b.RASTRIGIN, 1.0, 1.0), (b.GRIEWANK, 1000.0, 100.0), (b.SCHWEFEL, 1.0, 1.0)),
                     (10.0, 20.0, 30.0), "Composition function 2 (N=3)"),
    _c17_composition(23, ((b.ROSENBROCK, 1.0, 1.0), (b.ACKLEY, 1000.0, 100.0), (b.SCHWEFEL, 1.0, 1.0),
                          (b.RASTRIGIN, 1.0, 1.0)),
                     (10.0, 20.0, 30.0, 40.0), "Composition function 3 (N=4)"),
    _c17_composition(24, ((b.ACKLEY, 1000.0, 100.0), (b.ELLIPTIC, 10000.0, 1e10), (b.GRIEWANK, 1000.0, 100.0),
                          (b.RASTRIGIN, 1.0, 1.0)),
                     (10.0, 20.0, 30.0, 40.0), "Composition function 4 (N=4)"),
    _c17_composition(25, ((b.RASTRIGIN, 10000.0, 1e3), (b.HAPPYCAT, 1000.0, 1e3), (b.ACKLEY, 1000.0, 100.0),
                          (b.DISCUS, 10000.0, 1e10), (b.ROSENBROCK, 1.0, 1.0)),
                     (10.0, 20.0, 30.0, 40.0, 50.0), "Composition function 5 (N=5)"),
    _c17_composition(26, ((b.ESCAFFER6, 10000.0, 2e7), (b.SCHWEFEL, 1.0, 1.0), (b.GRIEWANK, 1000.0, 100.0),
                          (b.ROSENBROCK, 1.0, 1.0), (b.RASTRIGIN, 10000.0, 1e3)),
                     (10.0, 20.0, 20.0, 30.0, 40.0), "Composition function 6 (N=5)"),
    _c17_composition(27, ((b.HGBAT, 10000.0, 1000.0), (b.RASTRIGIN, 10000.0, 1e3), (b.SCHWEFEL, 10000.0, 4e3),
                          (b.BENT_CIGAR, 10000.0, 1e30), (b.ELLIPTIC, 10000.0, 1e10),
                          (b.ESCAFFER6, 10000.0, 2e7)),
                     (10.0, 20.0, 30.0, 40.0, 50.0, 60.0), "Composition function 7 (N=6)"),
    _c17_composition(28, ((b.ACKLEY, 1000.0, 100.0), (b.GRIEWANK, 1000.0, 100.0), (b.DISCUS, 10000.0, 1e10),
                          (b.ROSENBROCK, 1.0, 1.0), (b.HAPPYCAT, 1000.0, 1e3), (b.ESCAFFER6, 10000.0, 2e7)),
                     (10.0, 20.0, 30.0, 40.0, 50.0, 60.0), "Composition function 8 (N=6)"),
    _c17_hybrid_composition(29, (_HF05, _HF06, _HF07), (10.0, 30.0, 50.0),
                            "Composition function 9 (N=3): hybrids 5, 6, 7",
                            notes="Component k is the hybrid on o_k, M_k and the k-th D numbers of the "
                                  "shuffle file."),
    _c17_hybrid_composition(30, (_HF05, _HF08, _HF09), (10.0, 30.0, 50.0),
                            "Composition function 10 (N=3): hybrids 5, 8, 9",
                            notes="Component k is the hybrid on o_k, M_k and the k-th D numbers of the "
                                  "shuffle file."),
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
        *NASHED,
        *CEC2017,
    )
}

#: The functions of the CEC suites (F01..F10, Q01..Q04), the ones with official reference values in
#: tests/reference/cec (the CEC 2017 suite has its own, tests/reference/cec2017).
CEC_FUNCTIONS: tuple[str, ...] = tuple(f.fid for f in FUNCTIONS.values() if f.suite in ("janssen", "qin_cec2005"))
