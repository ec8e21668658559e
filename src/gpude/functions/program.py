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
  takes the remainder.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import cecdata
from . import basic
from .suites import COMPOSITION, HYBRID, FunctionDef

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
    shift: np.ndarray      # (C, D) float64; C = G for compositions, else 1
    rot: np.ndarray        # (C, D, D) float64, row-major M (z = M @ y); identity if not rotated
    perm: np.ndarray       # (D,) int64, 0-based shuffle (identity unless hybrid)
    optimum: np.ndarray    # (D,) float64, x*

    @property
    def n_components(self) -> int:
        return len(self.codes)


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


def build_program(fdef: FunctionDef, dim: int) -> Program:
    """Read the data of ``fdef`` at ``dim`` and lay it out for the evaluators."""
    comps = fdef.components
    n_comp = len(comps)
    codes = np.array([c.code for c in comps], dtype=np.int64)
    rates = np.array([basic.BASIC[c.code].rate if c.rate is None else c.rate for c in comps])
    offsets = np.array(
        [basic.BASIC[c.code].offset if c.offset is None else c.offset for c in comps]
    )

    if fdef.kind == COMPOSITION:
        rows = cecdata.load_array(fdef.shift_file)
        if rows.shape[0] < n_comp or rows.shape[1] < dim:
            raise cecdata.CECDataError(
                f"{cecdata.data_dir() / fdef.shift_file}: expected at least {n_comp} rows of "
                f"{dim} numbers, found shape {rows.shape}; restore the data with `gpude fetch-data`"
            )
        shift = np.array(rows[:n_comp, :dim])
        n_mat = n_comp
    else:
        shift = np.array(_first_values(fdef.shift_file, dim)).reshape(1, dim)
        n_mat = 1
    optimum = shift[0].copy()
    if fdef.shift_minus_one:
        shift -= 1.0  # CEC 2005 F6: z = x - (o - 1)

    if fdef.rotated:
        rot = _first_values(fdef.rotation_file.format(dim=dim), n_mat * dim * dim)
        rot = np.array(rot).reshape(n_mat, dim, dim)
    else:
        rot = np.eye(dim).reshape(1, dim, dim)

    if fdef.kind == HYBRID:
        relpath = fdef.shuffle_file.format(dim=dim)
        raw = _first_values(relpath, dim)
        perm = raw.astype(np.int64) - 1  # the file is 1-based
        if not np.array_equal(np.sort(perm), np.arange(dim)) or np.any(raw != perm + 1):
            raise cecdata.CECDataError(
                f"{cecdata.data_dir() / relpath}: the first {dim} numbers are not a permutation "
                f"of 1..{dim}; restore the data with `gpude fetch-data`"
            )
        lengths = np.array(hybrid_group_sizes([c.fraction for c in comps], dim), dtype=np.int64)
        starts = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64)
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
        optimum=_readonly(optimum),
    )
