"""Rank-sum scores and the scipy-based comparisons, on hand-computed cases."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from gpude.stats import friedman, holm, kruskal_by_function, pairwise_mannwhitney, rank_sum_scores
from gpude.stats.ranksum import trial_ranks


def frame(rows):
    return pd.DataFrame(rows, columns=["function", "competitor", "best_error", "time_to_target_s",
                                       "fes_to_target"])


def test_hand_computed_scores_with_ties_and_the_target_tier():
    # A: one solved trial (2 s), one unsolved (error 5); B: one solved (1 s), one unsolved (error 5)
    t = frame([("F01", "A", 1e-9, 2.0, 5000), ("F01", "A", 5.0, np.nan, np.nan),
               ("F01", "B", 0.0, 1.0, 6000), ("F01", "B", 5.0, np.nan, np.nan)])
    # order by time: B solved (rank 4), A solved (3), the two error-5 trials tie (1.5 each)
    np.testing.assert_array_equal(trial_ranks(t, "time"), [3.0, 1.5, 4.0, 1.5])
    s = rank_sum_scores(t, cost="time")
    # n = 2, correction 3: A = 3 + 1.5 - 3 = 1.5, B = 4 + 1.5 - 3 = 2.5
    assert s.loc["F01", "A"] == 1.5 and s.loc["F01", "B"] == 2.5
    # by FEs, A's solved trial (5000) beats B's (6000): the scores swap
    s = rank_sum_scores(t, cost="fes")
    assert s.loc["F01", "A"] == 2.5 and s.loc["F01", "B"] == 1.5
    assert list(s.index) == ["F01", "total"]


def test_the_target_boundary_is_inclusive():
    t = frame([("F01", "A", 1e-8, 9.0, 100), ("F01", "B", np.nextafter(1e-8, 1), np.nan, np.nan)])
    s = rank_sum_scores(t)  # 1e-8 counts as solved however slow; just above does not
    assert s.loc["F01", "A"] == 1.0 and s.loc["F01", "B"] == 0.0


def test_two_competitors_score_is_the_mann_whitney_u():
    rng = np.random.default_rng(3)
    rows = []
    for comp in ("A", "B"):
        for _ in range(15):
            solved = rng.random() < 0.4
            err = rng.choice([1e-9, 0.0]) if solved else float(rng.choice([0.5, 1.0, 2.0, 3.0]))
            rows.append(("F03", comp, err, float(rng.choice([1.0, 2.0, 3.0])) if solved else np.nan, 0))
    t = frame(rows)
    s = rank_sum_scores(t, cost="time")
    # "badness": solved trials by time (below 1e-3 offset), unsolved by error (above 1e3 offset)
    bad = np.where(t.best_error <= 1e-8, t.time_to_target_s, 1e3 + t.best_error)
    a, b = bad[t.competitor == "A"], bad[t.competitor == "B"]
    # A's score counts pairs where A is better (lower badness): U of B against A
    assert s.loc["F03", "A"] == stats.mannwhitneyu(b, a).statistic
    assert s.loc["F03", "A"] + s.loc["F03", "B"] == 15 * 15


def test_scores_sum_to_the_number_of_cross_pairs_and_total_adds_up():
    rng = np.random.default_rng(5)
    rows = [(f, c, float(rng.integers(1, 5)), np.nan, np.nan)  # none solved: ordered by error
            for f in ("F01", "F02") for c in ("A", "B", "C") for _ in range(4)]
    s = rank_sum_scores(frame(rows))
    for f in ("F01", "F02"):
        assert s.loc[f].sum() == 4 * 4 * 3  # n^2 * m(m-1)/2 pairs between different competitors
    np.testing.assert_allclose(s.loc["total"], s.loc["F01"] + s.loc["F02"])


def test_unequal_trial_counts_are_rejected():
    t = frame([("F01", "A", 1.0, np.nan, np.nan), ("F01", "A", 2.0, np.nan, np.nan),
               ("F01", "B", 1.0, np.nan, np.nan)])
    with pytest.raises(ValueError, match=r"unequal trial counts on F01: \{'A': 2, 'B': 1\}"):
        rank_sum_scores(t)


def test_bad_cost_and_missing_columns_are_rejected():
    t = frame([("F01", "A", 1.0, np.nan, np.nan)])
    with pytest.raises(ValueError, match="cost must be 'time'"):
        rank_sum_scores(t, cost="gen")
    with pytest.raises(ValueError, match="lack the column"):
        rank_sum_scores(t.drop(columns="time_to_target_s"))


def test_failed_trials_rank_last():
    t = frame([("F01", "A", np.nan, np.nan, np.nan), ("F01", "B", 1e6, np.nan, np.nan)])
    s = rank_sum_scores(t)
    assert s.loc["F01", "B"] == 1.0 and s.loc["F01", "A"] == 0.0


def test_holm_matches_the_hand_computed_procedure():
    p = [0.01, 0.04, 0.03, 0.20]
    # sorted 0.01, 0.03, 0.04, 0.20 -> x4, x3, x2, x1 = 0.04, 0.09, 0.08 -> running max 0.09, 0.20
    np.testing.assert_allclose(holm(p), [0.04, 0.09, 0.09, 0.20])


def test_kruskal_pairwise_and_friedman():
    rng = np.random.default_rng(0)
    rows = [(f, c, float(rng.normal(loc={"A": 0, "B": 0, "C": 5}[c])), np.nan, np.nan)
            for f in ("F01", "F02", "F03", "F04") for c in "ABC" for _ in range(10)]
    t = frame(rows)
    k = kruskal_by_function(t)
    assert (k.p < 1e-3).all() and list(k.index) == ["F01", "F02", "F03", "F04"]
    pw = pairwise_mannwhitney(t)
    assert len(pw) == 4 * 3
    ab = pw[(pw.a == "A") & (pw.b == "B")]
    assert (ab.p_holm > 0.001).all()  # A and B come from one distribution
    ac = pw[(pw.a == "A") & (pw.b == "C")]
    assert (ac.p_holm < 0.01).all() and (ac.p_holm >= ac.p).all()
    fr = friedman(t)
    assert fr["functions"] == 4 and list(fr["mean_rank"])[-1] == "C"


def test_identical_results_give_no_difference_instead_of_an_error():
    t = frame([("F01", c, 0.0, 1.0, 100) for c in "AB" for _ in range(3)])
    assert kruskal_by_function(t).loc["F01", "p"] == 1.0
    assert pairwise_mannwhitney(t).p_holm.iloc[0] == 1.0
