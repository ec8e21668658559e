"""Percentile bootstrap confidence intervals for ratios of two samples (numpy only, a fixed seed)."""

from __future__ import annotations

import numpy as np

#: resamples per interval, and the seed that makes every interval of the report the same run after run
RESAMPLES = 2000
SEED = 20261121


def ratio_interval(ours, theirs, statistic=np.median, level: float = 0.95, resamples: int = RESAMPLES,
                   seed: int = SEED) -> tuple[float, float, float]:
    """The ratio ``statistic(ours) / statistic(theirs)`` and its percentile bootstrap interval.

    Each sample is resampled on its own (independent samples, with replacement), ``resamples`` times,
    from a generator seeded with ``seed``, so the interval is the same on every call.

    Parameters
    ----------
    ours, theirs : array_like
        The per-trial values of each side (NaN dropped); the same ``statistic`` is taken on both.
    statistic : callable
        Reduces a 1-d array (axis=-1 supported), e.g. ``np.median`` or ``np.mean``.
    level : float
        The interval's coverage.

    Returns
    -------
    (point, lo, hi) : tuple of float
        NaN throughout where a side has no value.
    """
    a = np.asarray(ours, dtype=float)
    b = np.asarray(theirs, dtype=float)
    a, b = a[~np.isnan(a)], b[~np.isnan(b)]
    if not len(a) or not len(b):
        return float("nan"), float("nan"), float("nan")
    point = float(statistic(a) / statistic(b))
    rng = np.random.default_rng(seed)
    ra = statistic(a[rng.integers(0, len(a), (resamples, len(a)))], axis=-1)
    rb = statistic(b[rng.integers(0, len(b), (resamples, len(b)))], axis=-1)
    tail = (1 - level) / 2 * 100
    lo, hi = np.percentile(ra / rb, [tail, 100 - tail])
    # a percentile interval of a skewed statistic may miss the point by a hair: widen it to hold it
    return point, float(min(lo, point)), float(max(hi, point))


def mean_of_means_ratio_interval(groups, theirs: float, level: float = 0.95, resamples: int = RESAMPLES,
                                 seed: int = SEED) -> tuple[float, float, float]:
    """The ratio of the mean over ``groups`` of each group's mean to a fixed number ``theirs`` (a paper's
    mean over the same groups), and its percentile bootstrap interval: each group resampled on its own
    (a stratified bootstrap: every resample keeps every group, as the statistic does).

    Parameters
    ----------
    groups : iterable of array_like
        Per-trial values of each group (e.g. the runs of each instance; NaN dropped, empty groups left out).
    theirs : float
        The fixed denominator.

    Returns
    -------
    (point, lo, hi) : tuple of float
        NaN throughout without a group or with a zero or NaN ``theirs``.
    """
    found = [g[~np.isnan(g)] for g in (np.asarray(v, dtype=float).ravel() for v in groups)]
    found = [g for g in found if len(g)]
    if not found or not np.isfinite(theirs) or theirs == 0:
        return float("nan"), float("nan"), float("nan")
    point = float(np.mean([g.mean() for g in found]) / theirs)
    rng = np.random.default_rng(seed)
    means = np.mean([g[rng.integers(0, len(g), (resamples, len(g)))].mean(axis=-1) for g in found], axis=0)
    tail = (1 - level) / 2 * 100
    lo, hi = np.percentile(means / theirs, [tail, 100 - tail])
    return point, float(min(lo, point)), float(max(hi, point))


def median_of_ratios_interval(pairs, level: float = 0.95, resamples: int = RESAMPLES,
                              seed: int = SEED) -> tuple[float, float, float]:
    """The median over ``pairs`` of each pair's ratio of means (numerator's mean over denominator's), and
    its percentile bootstrap interval: every sample of every pair resampled on its own (stratified: each
    resample keeps every pair, as the statistic does).

    Parameters
    ----------
    pairs : iterable of (array_like, array_like)
        Per-trial values of each pair's numerator and denominator (e.g. the times of one series at its
        smallest and its largest NP; NaN dropped).

    Returns
    -------
    (point, lo, hi) : tuple of float
        NaN throughout where a pair has an empty side or there is no pair.
    """
    found = []
    for a, b in pairs:
        a, b = (np.asarray(v, dtype=float).ravel() for v in (a, b))
        found.append((a[~np.isnan(a)], b[~np.isnan(b)]))
    if not found or any(not len(a) or not len(b) for a, b in found):
        return float("nan"), float("nan"), float("nan")
    point = float(np.median([a.mean() / b.mean() for a, b in found]))
    rng = np.random.default_rng(seed)
    ratios = [a[rng.integers(0, len(a), (resamples, len(a)))].mean(axis=-1)
              / b[rng.integers(0, len(b), (resamples, len(b)))].mean(axis=-1) for a, b in found]
    tail = (1 - level) / 2 * 100
    lo, hi = np.percentile(np.median(ratios, axis=0), [tail, 100 - tail])
    return point, float(min(lo, point)), float(max(hi, point))


def format_interval(point: float, lo: float, hi: float, spec: str = "{:.3g}", unit: str = "") -> str:
    """'x [lo, hi]', ``unit`` after each number ('-' where the point is NaN)."""
    if np.isnan(point):
        return "-"
    return f"{spec.format(point)}{unit} [{spec.format(lo)}{unit}, {spec.format(hi)}{unit}]"
