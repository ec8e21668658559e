"""Hypothesis tests across competitors (scipy only; Holm in numpy)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
from scipy import stats


def holm(pvalues) -> np.ndarray:
    """Holm-Bonferroni adjusted p-values (equal to statsmodels' ``multipletests(method='holm')``)."""
    p = np.asarray(pvalues, dtype=float)
    m = p.size
    order = np.argsort(p)
    adjusted = np.maximum.accumulate((m - np.arange(m)) * p[order]).clip(max=1.0)
    out = np.empty(m)
    out[order] = adjusted
    return out


def _groups(frame, value, group):
    return {g: s[value].to_numpy(dtype=float) for g, s in frame.groupby(group, sort=False)}


def kruskal_by_function(trials: pd.DataFrame, value: str = "best_error",
                        group: str = "competitor") -> pd.DataFrame:
    """Kruskal-Wallis H test of ``value`` across competitors, one row per function.

    Identical values in every group (e.g. all trials solved to 0) give H = 0, p = 1.
    """
    rows = []
    for f, frame in trials.groupby("function", sort=False):
        samples = list(_groups(frame, value, group).values())
        if len(samples) < 2:
            raise ValueError(f"{f}: Kruskal-Wallis needs at least two competitors")
        if np.unique(np.concatenate(samples)).size == 1:
            h, p = 0.0, 1.0
        else:
            h, p = stats.kruskal(*samples)
        rows.append({"function": f, "H": float(h), "p": float(p), "competitors": len(samples)})
    return pd.DataFrame(rows).set_index("function")


def pairwise_mannwhitney(trials: pd.DataFrame, value: str = "best_error",
                         group: str = "competitor") -> pd.DataFrame:
    """Two-sided Mann-Whitney U for every pair of competitors on every function, with
    Holm's correction over the pairs of each function (``p_holm``)."""
    rows = []
    for f, frame in trials.groupby("function", sort=False):
        samples = _groups(frame, value, group)
        pairs = []
        for a, b in itertools.combinations(samples, 2):
            x, y = samples[a], samples[b]
            if np.unique(np.concatenate([x, y])).size == 1:
                u, p = x.size * y.size / 2.0, 1.0
            else:
                res = stats.mannwhitneyu(x, y, alternative="two-sided", method="auto")
                u, p = float(res.statistic), float(res.pvalue)
            pairs.append({"function": f, "a": a, "b": b, "U": u, "p": p,
                          "median_a": float(np.median(x)), "median_b": float(np.median(y))})
        adjusted = holm([r["p"] for r in pairs])
        for r, q in zip(pairs, adjusted):
            r["p_holm"] = float(q)
        rows += pairs
    return pd.DataFrame(rows)


def friedman(trials: pd.DataFrame, value: str = "best_error", group: str = "competitor") -> dict:
    """Friedman test across functions (blocks) on each competitor's median ``value`` per function.

    Returns the statistic, p-value, and the competitors' mean ranks (1 = best, lowest median).
    """
    medians = trials.pivot_table(index="function", columns=group, values=value, aggfunc="median")
    if medians.shape[1] < 3:
        raise ValueError("the Friedman test needs at least three competitors")
    if medians.isna().any().any():
        raise ValueError("every competitor needs results on every function for the Friedman test")
    stat, p = stats.friedmanchisquare(*[medians[c].to_numpy() for c in medians.columns])
    ranks = medians.rank(axis=1, method="average").mean()
    return {"statistic": float(stat), "p": float(p), "mean_rank": ranks.sort_values().to_dict(),
            "functions": int(medians.shape[0])}
