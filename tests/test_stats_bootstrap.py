"""The percentile bootstrap interval on a ratio (gpude.stats.bootstrap)."""

import numpy as np

from gpude.stats.bootstrap import (
    format_interval,
    mean_of_means_ratio_interval,
    median_of_ratios_interval,
    ratio_interval,
)


def test_seeded_deterministic_and_holding_its_point():
    rng = np.random.default_rng(1)
    ours, theirs = rng.lognormal(0, 0.3, 20), rng.lognormal(1, 0.3, 20)
    first, again = ratio_interval(ours, theirs), ratio_interval(ours, theirs)
    assert first == again
    point, lo, hi = first
    assert lo <= point <= hi and point == np.median(ours) / np.median(theirs)
    assert ratio_interval(ours, theirs, seed=2) != first


def test_narrower_with_more_data():
    rng = np.random.default_rng(3)
    small = ratio_interval(rng.lognormal(0, 0.3, 10), rng.lognormal(0, 0.3, 10), statistic=np.mean)
    large = ratio_interval(rng.lognormal(0, 0.3, 1000), rng.lognormal(0, 0.3, 1000), statistic=np.mean)
    assert large[2] - large[1] < small[2] - small[1]


def test_empty_side_and_format():
    assert np.isnan(ratio_interval([], [1.0])[0])
    assert format_interval(*ratio_interval([], [1.0])) == "-"
    assert format_interval(2.0, 1.5, 2.5) == "2 [1.5, 2.5]"


def test_a_mean_of_group_means_resamples_each_group_on_its_own():
    # group means 2 and 10 over a fixed 2: 3; the first group's resampled mean is 1, 2 or 3 and the second
    # stays 10, so every resample lies in [2.75, 3.25] (a pooled resample could drop the second group)
    point, lo, hi = mean_of_means_ratio_interval([[1.0, 3.0], [10.0, 10.0, 10.0]], 2.0)
    assert point == 3.0 and 2.75 <= lo < point < hi <= 3.25
    assert mean_of_means_ratio_interval([[1.0, 3.0], [10.0, 10.0, 10.0]], 2.0) == (point, lo, hi)  # seeded
    # NaN runs and empty groups are left out; no group or no denominator: NaN
    assert mean_of_means_ratio_interval([[1.0, np.nan, 3.0], [], [10.0]], 2.0)[0] == 3.0
    assert all(np.isnan(v) for v in mean_of_means_ratio_interval([[], [np.nan]], 2.0))
    assert all(np.isnan(v) for v in mean_of_means_ratio_interval([[1.0]], 0.0))


def test_a_median_of_ratios_of_means_resamples_every_side_of_every_pair():
    # three pairs whose ratios of means are 4, 2 and 10 (hand-computed): the median is 4
    pairs = [([3.0, 5.0], [1.0, 1.0]), ([2.0, 2.0, 2.0], [0.5, 1.5]), ([10.0], [1.0, 1.0, 1.0])]
    point, lo, hi = median_of_ratios_interval(pairs)
    assert point == 4.0 and lo <= 4.0 <= hi
    # the spread comes from the trials: constant samples give a point interval
    assert median_of_ratios_interval([([2.0, 2.0], [1.0, 1.0]), ([6.0], [2.0, 2.0])]) == (2.5, 2.5, 2.5)
    # more trials, the same ratios: a narrower interval
    rng = np.random.default_rng(5)
    def made(n):
        return [(rng.lognormal(np.log(r), 0.2, n), rng.lognormal(0, 0.2, n)) for r in (2, 4, 8)]
    few, many = median_of_ratios_interval(made(5)), median_of_ratios_interval(made(500))
    assert many[2] - many[1] < few[2] - few[1]
    # a pair with an empty side: no number rather than one from fewer pairs
    assert all(np.isnan(v) for v in median_of_ratios_interval([([1.0], [1.0]), ([], [1.0])]))
    assert all(np.isnan(v) for v in median_of_ratios_interval([]))
