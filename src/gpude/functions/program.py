"""A function definition at one dimension, as the arrays the evaluators run.

A :class:`Program` holds, for one (function, D), the per-component constants
(basic-function code, shrink rate, offset, lambda, sigma, bias, coordinate
range) and the official data (shift vectors, rotation matrices, permutation),
read from ``data/cec`` exactly as the official C code reads them:

* simple and hybrid functions read the first D numbers of the shift file and
  the first D*D numbers of the rotation file, in file order;
* composition functions read the first D numbers of row k of the shift file
  and the k-th D x D block of the (10 D) x D rotation file;
* hybrid functions read D 1-based indices from the shuffle file;
* hybrid group sizes are ``ceil(p_k * D)`` for all groups but the last, which
  takes the remainder;
* compositions of hybrids (CEC 2017 F29, F30) read composition-style shift rows
  and matrix blocks, and D numbers of the shuffle file per component (``perm``
  holds them one after the other, C D numbers).

The Nashed functions have no shift file (o = 0) and, for N06, N07 and N17, a
linear stage in place of a rotation file (:func:`linear_matrix`): the matrix is
then D x W with W = D, or W = 2 D when trigonometric features phi(y) = [sin y,
1 - cos y] come before it (N17).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import cecdata
from . import basic
from .suites import COMPOSITION, HYBRID, HYBRID_COMPOSITION, FunctionDef

#: ``Program.features`` values: none, or phi(y) = [sin y, 1 - cos y] before the matrix.
FEATURES_NONE, FEATURES_TRIG = 0, 1
_FEATURES = {None: FEATURES_NONE, "trig": FEATURES_TRIG}

@dataclass(frozen=True, eq=False)
class Program:
    """Everything an evaluator needs for one (function, D); arrays are read-only."""

    fid: str
    dim: int
    kind: int
    rotated: bool
    codes: np.ndarray      # (G,) int64
    rates: np.ndarray      # (G,) float64
    offsets: np.ndarray    # (G,) float64
    lam_num: np.ndarray    # (G,) float64
    lam_den: np.ndarray    # (G,) float64
    sigmas: np.ndarray     # (G,) float64
    comp_bias: np.ndarray  # (G,) float64
    starts: np.ndarray     # (G,) int64: first coordinate of each hybrid group
    lengths: np.ndarray    # (G,) int64: coordinates per group (D for simple/composition)
    shift: np.ndarray      # (C, D) float64; C = G for compositions, parts for F29/F30, else 1
    rot: np.ndarray        # (C, D, W) float64, row-major M (z = M @ y); identity if not rotated
    perm: np.ndarray       # (C D,) int64, 0-based shuffle per component (identity unless hybrid)
    optimum: np.ndarray    # (D,) float64, x*
    features: int = FEATURES_NONE  # FEATURES_TRIG: y -> [sin y, 1 - cos y] before the matrix
    sources: np.ndarray | None = None     # (G,) int64: first shuffled coordinate a group reads
    group_comp: np.ndarray | None = None  # (G,) int64: composition component of each group (F29/F30)

    def __post_init__(self):
        # Defaults: each group reads its own coordinates; every group is its own component.
        if self.sources is None:
            object.__setattr__(self, "sources", _readonly(np.array(self.starts, dtype=np.int64)))
        if self.group_comp is None:
            comp = np.arange(len(self.codes)) if self.kind == COMPOSITION else np.zeros(len(self.codes))
            object.__setattr__(self, "group_comp", _readonly(comp.astype(np.int64)))

    @property
    def width(self) -> int:
        """W, the length of the vector the matrix acts on (D, or 2 D with trig features)."""
        return int(self.rot.shape[2])

    @property
    def n_components(self) -> int:
        """Groups (basic functions): the hybrids' groups, the compositions' components."""
        return len(self.codes)

    @property
    def n_parts(self) -> int:
        """Composition components (C): the rows of ``shift``."""
        return int(self.shift.shape[0])


def hybrid_group_sizes(fractions, dim: int) -> list[int]:
    """Group sizes of a hybrid function as the official code computes them."""
    sizes = [math.ceil(p * dim) for p in fractions[:-1]]
    sizes.append(dim - sum(sizes))
    return sizes


def _first_values(relpath: str, count: int) -> np.ndarray:
    flat = cecdata.load_array(relpath).ravel()
    if flat.size < count:
        raise cecdata.CECDataError(
            f"{cecdata.data_dir() / relpath}: expected at least {count} numbers, found "
            f"{flat.size}; restore the data with `gpude fetch-data`"
        )
    return flat[:count]


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.flags.writeable = False
    return a


def linear_matrix(fdef: FunctionDef, dim: int) -> np.ndarray:
    """The D x W matrix of a Nashed function's linear stage (``FunctionDef.linear``).

    ``"lower_ones"``: L[i, j] = 1 for j <= i (Schwefel 1.2). ``("file", relpath, blocks)``: the
    blocks ``sign * data[first_row:first_row + D, :D]`` side by side (Schwefel 2.6: A; Schwefel
    2.13: [-a | b]).
    """
    if fdef.linear == "lower_ones":
        return np.tril(np.ones((dim, dim)))
    kind, relpath, blocks = fdef.linear
    if kind != "file":
        raise ValueError(f"{fdef.fid}: unknown linear stage {fdef.linear!r}")
    data = cecdata.load_array(relpath)
    parts = []
    for first_row, sign in blocks:
        if data.shape[0] < first_row + dim or data.shape[1] < dim:
            raise cecdata.CECDataError(
                f"{cecdata.data_dir() / relpath}: expected rows {first_row + 1}..{first_row + dim} "
                f"with at least {dim} numbers, found shape {data.shape}; restore the data with "
                f"`gpude fetch-data`"
            )
        parts.append(sign * data[first_row:first_row + dim, :dim])
    return np.hstack(parts)


def build_program(fdef: FunctionDef, dim: int) -> Program:
    """Read the data of ``fdef`` at ``dim`` and lay it out for the evaluators."""
    comps = fdef.components
    n_comp = len(comps)
    codes = np.array([c.code for c in comps], dtype=np.int64)
    rates = np.array([basic.BASIC[c.code].rate if c.rate is None else c.rate for c in comps])
    offsets = np.array(
        [basic.BASIC[c.code].offset if c.offset is None else c.offset for c in comps]
    )

    for c in comps:
        if c.code in basic.ROW3_SUM_CODES and fdef.kind in (COMPOSITION, HYBRID_COMPOSITION):
            # A composition's fourth reduction row is its distance, not the term's sum (gpu.py).
            raise ValueError(f"{fdef.fid}: {c.name} cannot be a composition's component")
    parts = max(c.part for c in comps) + 1
    if fdef.kind == HYBRID_COMPOSITION:
        n_comp = parts  # shift rows and matrix blocks: one per composition component

    if fdef.kind in (COMPOSITION, HYBRID_COMPOSITION):
        rows = cecdata.load_array(fdef.shift_file)
        if rows.shape[0] < n_comp or rows.shape[1] < dim:
            raise cecdata.CECDataError(
                f"{cecdata.data_dir() / fdef.shift_file}: expected at least {n_comp} rows of "
                f"{dim} numbers, found shape {rows.shape}; restore the data with `gpude fetch-data`"
            )
        shift = np.array(rows[:n_comp, :dim])
        n_mat = n_comp
    elif fdef.shift_file:
        shift = np.array(_first_values(fdef.shift_file, dim)).reshape(1, dim)
        n_mat = 1
    else:  # unshifted (the Nashed functions): o = 0, x* documented per function
        shift = np.zeros((1, dim))
        n_mat = 1
    if fdef.minimizer is not None:
        optimum = np.array(fdef.minimizer(dim), dtype=np.float64).reshape(dim)
    elif fdef.shift_file:
        optimum = shift[0].copy()
    else:
        optimum = np.zeros(dim)
    if fdef.shift_minus_one:
        shift -= 1.0  # CEC 2005 F6: z = x - (o - 1)

    features = _FEATURES[fdef.features]
    if features != 0 and not (fdef.rotated and fdef.linear is not None):
        raise ValueError(f"{fdef.fid}: features={fdef.features!r} needs a linear stage")
    if fdef.rotated and fdef.linear is not None:
        rot = linear_matrix(fdef, dim).reshape(1, dim, -1)
        want = 2 * dim if features == FEATURES_TRIG else dim
        if rot.shape[2] != want:
            raise ValueError(f"{fdef.fid}: the linear stage is {rot.shape[1:]} but needs width {want}")
    elif fdef.rotated:
        rot = _first_values(fdef.rotation_file.format(dim=dim), n_mat * dim * dim)
        rot = np.array(rot).reshape(n_mat, dim, dim)
    else:
        rot = np.eye(dim).reshape(1, dim, dim)

    if fdef.kind in (HYBRID, HYBRID_COMPOSITION):
        relpath = fdef.shuffle_file.format(dim=dim)
        n_perm = parts if fdef.kind == HYBRID_COMPOSITION else 1
        raw = _first_values(relpath, n_perm * dim)
        perm = raw.astype(np.int64) - 1  # the file is 1-based
        for k in range(n_perm):
            block = perm[k * dim:(k + 1) * dim]
            if not np.array_equal(np.sort(block), np.arange(dim)) or np.any(raw[k * dim:(k + 1) * dim] != block + 1):
                raise cecdata.CECDataError(
                    f"{cecdata.data_dir() / relpath}: numbers {k * dim + 1}..{(k + 1) * dim} are not a "
                    f"permutation of 1..{dim}; restore the data with `gpude fetch-data`"
                )
        lengths, starts = [], []
        for k in range(parts):  # each part (one, unless F29/F30) splits the D coordinates anew
            group = [c for c in comps if c.part == k]
            sizes = hybrid_group_sizes([c.fraction for c in group], dim)
            lengths += sizes
            starts += list(np.concatenate(([0], np.cumsum(sizes)[:-1])))
        lengths = np.array(lengths, dtype=np.int64)
        starts = np.array(starts, dtype=np.int64)
    else:
        perm = np.arange(dim, dtype=np.int64)
        lengths = np.full(n_comp, dim, dtype=np.int64)
        starts = np.zeros(n_comp, dtype=np.int64)

    return Program(
        fid=fdef.fid, dim=dim, kind=fdef.kind, rotated=fdef.rotated,
        codes=_readonly(codes), rates=_readonly(rates), offsets=_readonly(offsets),
        lam_num=_readonly(np.array([c.lam_num for c in comps])),
        lam_den=_readonly(np.array([c.lam_den for c in comps])),
        sigmas=_readonly(np.array([c.sigma for c in comps])),
        comp_bias=_readonly(np.array([c.bias for c in comps])),
        starts=_readonly(starts), lengths=_readonly(lengths),
        shift=_readonly(shift), rot=_readonly(rot), perm=_readonly(perm),
        optimum=_readonly(optimum), features=features,
        sources=_readonly(np.array([0 if c.head else s for c, s in zip(comps, starts)], dtype=np.int64)),
        group_comp=_readonly(np.array([k if fdef.kind == COMPOSITION else c.part
                                       for k, c in enumerate(comps)], dtype=np.int64)),
    )
