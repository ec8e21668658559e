"""Percentile bootstrap confidence intervals for ratios of two samples (numpy only, a fixed seed)."""

from __future__ import annotations

import numpy as np

#: resamples per interval, and the seed that makes every interval of the report the same run after run
RESAMPLES = 2000
SEED = 20261121


#: what an interval function returns where it has nothing to resample
NO_INTERVAL = (float("nan"), float("nan"), float("nan"))


def _values(sample) -> np.ndarray:
    """A sample as a flat float array, NaN dropped."""
    v = np.asarray(sample, dtype=float).ravel()
    return v[~np.isnan(v)]


def _resampled(rng, values: np.ndarray, resamples: int, statistic=np.mean) -> np.ndarray:
    """``statistic`` of each of ``resamples`` resamples of ``values`` (with replacement, its own length)."""
    return statistic(values[rng.integers(0, len(values), (resamples, len(values)))], axis=-1)


def _holding(point: float, resampled: np.ndarray, level: float) -> tuple[float, float, float]:
    """(point, lo, hi): the percentile interval of ``resampled`` at ``level``, widened to hold ``point``
    (a percentile interval of a skewed statistic may miss the point by a hair)."""
    tail = (1 - level) / 2 * 100
    lo, hi = np.percentile(resampled, [tail, 100 - tail])
    return point, float(min(lo, point)), float(max(hi, point))


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
    a, b = _values(ours), _values(theirs)
    if not len(a) or not len(b):
        return NO_INTERVAL
    rng = np.random.default_rng(seed)
    ra = _resampled(rng, a, resamples, statistic)
    rb = _resampled(rng, b, resamples, statistic)
    return _holding(float(statistic(a) / statistic(b)), ra / rb, level)


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
    found = [g for g in map(_values, groups) if len(g)]
    if not found or not np.isfinite(theirs) or theirs == 0:
        return NO_INTERVAL
    rng = np.random.default_rng(seed)
    means = np.mean([_resampled(rng, g, resamples) for g in found], axis=0)
    return _holding(float(np.mean([g.mean() for g in found]) / theirs), means / theirs, level)


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
    found = [(_values(a), _values(b)) for a, b in pairs]
    if not found or any(not len(a) or not len(b) for a, b in found):
        return NO_INTERVAL
    rng = np.random.default_rng(seed)
    ratios = [_resampled(rng, a, resamples) / _resampled(rng, b, resamples) for a, b in found]
    return _holding(float(np.median([a.mean() / b.mean() for a, b in found])), np.median(ratios, axis=0), level)


def format_interval(point: float, lo: float, hi: float, spec: str = "{:.3g}", unit: str = "") -> str:
    """'x [lo, hi]', ``unit`` after each number ('-' where the point is NaN)."""
    if np.isnan(point):
        return "-"
    return f"{spec.format(point)}{unit} [{spec.format(lo)}{unit}, {spec.format(hi)}{unit}]"
