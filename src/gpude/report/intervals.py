"""Ratios the report prints, with their 95 % bootstrap interval (:mod:`gpude.stats.bootstrap`).

A ratio of two of our samples (a speed-up: one implementation's times over another's) resamples both
sides; a ratio to a paper's fixed number (ours / the paper's) resamples ours only. A side of fewer than
:data:`MIN_N` values gets no interval: the ratio prints with "(n = k: no interval)" instead of an
interval that a resample of one or two values cannot give.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..stats.bootstrap import format_interval, ratio_interval

#: the fewest values a side may have for its ratio to carry an interval
MIN_N = 3
#: the intervals' coverage
LEVEL = 0.95


@dataclass(frozen=True)
class Ratio:
    """One ratio ``statistic(ours) / statistic(theirs)`` and its interval (NaN bounds where a side is short).

    ``n_theirs`` is None where ``theirs`` is a fixed number (a paper's), not a sample.
    """

    point: float
    lo: float
    hi: float
    n_ours: int
    n_theirs: int | None

    @property
    def short(self) -> int | None:
        """The n of the smaller sampled side where it is below :data:`MIN_N` (None where both have enough)."""
        sides = [n for n in (self.n_ours, self.n_theirs) if n is not None]
        k = min(sides) if sides else 0
        return k if k < MIN_N else None

    def text(self, spec: str = "{:.3g}", unit: str = "x") -> str:
        """'x [lo, hi]' (``unit`` after each number), or 'x (n = k: no interval)'; '-' without a point."""
        if np.isnan(self.point):
            return "-"
        point = f"{spec.format(self.point)}{unit}"
        if self.short is not None:
            return f"{point} (n = {self.short}: no interval)"
        if np.isnan(self.lo):  # a point from a table's means, without the trials behind it
            return point
        return format_interval(self.point, self.lo, self.hi, spec, unit)


def ratio(ours, theirs, statistic=np.mean) -> Ratio:
    """:class:`Ratio` of ``statistic(ours)`` over ``statistic(theirs)``, the same statistic on both sides.

    Parameters
    ----------
    ours : array_like
        Our per-trial values (NaN dropped).
    theirs : array_like or float
        The other side's per-trial values, or a fixed number (a paper's), which is not resampled.
    statistic : callable
        ``np.mean`` (what the time tables print) or ``np.median``.
    """
    a = np.asarray(ours, dtype=float).ravel()
    a = a[~np.isnan(a)]
    fixed = np.ndim(theirs) == 0
    b = np.atleast_1d(np.asarray(theirs, dtype=float))
    b = b[~np.isnan(b)]
    n_theirs = None if fixed else len(b)
    if not len(a) or not len(b):
        return Ratio(float("nan"), float("nan"), float("nan"), len(a), n_theirs)
    point, lo, hi = ratio_interval(a, b, statistic=statistic, level=LEVEL)
    found = Ratio(point, lo, hi, len(a), n_theirs)
    return found if found.short is None else Ratio(point, float("nan"), float("nan"), len(a), n_theirs)


def extremes_text(ratios, spec: str = "{:.3g}", unit: str = "x") -> str:
    """'107-204x (95% CI of the extremes 98-221x)': the range of the points over ``ratios`` and the lower
    bound of the smallest's interval and the upper of the largest's; where the smallest or the largest has
    a short side, '(n = k: no interval)' instead; '-' without a finite point. ``unit`` follows each
    range ('' for a plain ratio)."""
    found = [r for r in ratios if not np.isnan(r.point)]
    if not found:
        return "-"
    low, high = min(found, key=lambda r: r.point), max(found, key=lambda r: r.point)
    points = (f"{spec.format(low.point)}{unit}" if low.point == high.point
              else f"{spec.format(low.point)}-{spec.format(high.point)}{unit}")
    short = [r.short for r in (low, high) if r.short is not None]
    if short:
        return f"{points} (n = {min(short)}: no interval)"
    if np.isnan(low.lo) or np.isnan(high.hi):
        return points
    return f"{points} ({LEVEL:.0%} CI of the extremes {spec.format(low.lo)}-{spec.format(high.hi)}{unit})"


def stored(point, lo, hi, n_ours, n_theirs=None) -> Ratio:
    """A :class:`Ratio` read back from a table's columns: a missing or empty bound (a table written without
    the interval columns) or n reads as NaN or 0; ``n_theirs`` None or empty: a fixed number."""
    def number(v):
        return float("nan") if v is None or pd.isna(v) else float(v)

    return Ratio(number(point), number(lo), number(hi), 0 if n_ours is None or pd.isna(n_ours) else int(n_ours),
                 None if n_theirs is None or pd.isna(n_theirs) else int(n_theirs))


def bounds_over_fixed(groups, keys, theirs) -> tuple[list[float], list[float]]:
    """Per key of ``keys`` beside its fixed number of ``theirs`` (a paper's): the bounds of the interval of
    the key's values in ``groups`` (a one-column pandas GroupBy) over that number (:func:`ratio`: ours
    resampled); NaN where the key has no values or the number is missing or 0. Returns (lows, highs), in the
    keys' order: the ``*_lo`` and ``*_hi`` columns of a table."""
    lows, highs = [], []
    for key, fixed in zip(keys, theirs):
        if key in groups.groups and pd.notna(fixed) and fixed != 0:
            found = ratio(groups.get_group(key).to_numpy(dtype=float), float(fixed))
            lows.append(found.lo)
            highs.append(found.hi)
        else:
            lows.append(float("nan"))
            highs.append(float("nan"))
    return lows, highs


def column_extremes(table: pd.DataFrame, points, name: str, n: str = "n", spec: str = "{:.2g}",
                    unit: str = "x") -> str:
    """:func:`extremes_text` of the ratios ``points`` (one per row of ``table``) with their bounds from the
    columns ``<name>_lo`` and ``<name>_hi`` (a table written without them: the points alone) and our n from
    the column ``n`` (:func:`stored`)."""
    lo, hi = (table[c] if c in table else pd.Series(np.nan, index=table.index) for c in (f"{name}_lo", f"{name}_hi"))
    return extremes_text([stored(*r) for r in zip(points, lo, hi, table[n])], spec, unit)


def of_means(point: float, n_ours: int, n_theirs: int | None = None) -> Ratio:
    """A :class:`Ratio` of two means without the trials behind them (an older paper folder without
    trial_times.csv): its point, and no interval."""
    return Ratio(float(point), float("nan"), float("nan"), int(n_ours), n_theirs)


class Samples:
    """The values of one column of ``trial_times.csv`` (:func:`gpude.report.timing.trial_times`: the rows its
    time table averages) or ``trial_errors.csv`` (``column`` "best_error") by cell, indexed once for the many
    lookups of a report section: ``Samples(table)(implementation, function, machine)`` is the cell's values in
    the table's order, on ``machine`` or on every machine of the table (empty where it has none)."""

    def __init__(self, table: pd.DataFrame, column: str = "wall_time_s"):
        self._any, self._on = {}, {}
        if not len(table):
            return
        values = table[column].to_numpy(dtype=float)
        keys = [table["implementation"].astype(str), table["function"].astype(str)]
        self._any = {k: values[i] for k, i in table.groupby(keys, sort=False).indices.items()}
        if "machine" in table:
            by = [*keys, table["machine"].astype(str)]
            self._on = {k: values[i] for k, i in table.groupby(by, sort=False).indices.items()}

    def __call__(self, implementation: str, function: str, machine: str | None = None) -> np.ndarray:
        key = (str(implementation), str(function))
        found = self._any.get(key) if machine is None else self._on.get((*key, str(machine)))
        return np.array([]) if found is None else found
