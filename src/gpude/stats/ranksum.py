"""The rank-sum score of Janssen, Pullan & Liew (sec. 7.3.5) and its CEC 2022 original.

For one function, all n trials of all m competitors are ranked together, best
trial n*m, ties sharing the average rank. A trial that reached the target error
(``best_error <= target``, 1e-8) ranks above every trial that did not; among
themselves, successful trials are ordered by their cost to reach the target
(wall-clock seconds for Janssen et al., ``cost="time"``; function evaluations for
CEC 2022, ``cost="fes"``), unsuccessful ones by final error. A competitor's score on
the function is its rank sum minus n(n+1)/2 (the number of trials of the other
competitors it beats, ties counting half); its total is the sum over functions.
With two competitors the score is the Mann-Whitney U statistic.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

COST_COLUMNS = {"time": "time_to_target_s", "fes": "fes_to_target"}
REQUIRED = ("function", "competitor", "best_error")


def _check(trials: pd.DataFrame, cost: str) -> str:
    if cost not in COST_COLUMNS:
        raise ValueError(f"cost must be 'time' (Janssen et al.) or 'fes' (CEC 2022), got {cost!r}")
    column = COST_COLUMNS[cost]
    missing = [c for c in (*REQUIRED, column) if c not in trials.columns]
    if missing:
        raise ValueError(f"trials lack the column(s) {missing}; rank_sum_scores needs "
                         f"{list(REQUIRED) + [column]}")
    return column


def trial_ranks(trials: pd.DataFrame, cost: str = "time", target: float = 1e-8) -> pd.Series:
    """The rank of every trial within its function (best = number of trials there).

    Trials without a final error (NaN: a failed run) rank below every finished trial.
    A successful trial must have its cost to target.
    """
    column = _check(trials, cost)
    error = trials["best_error"].to_numpy(dtype=float)
    spent = trials[column].to_numpy(dtype=float)
    success = error <= target
    if np.any(success & np.isnan(spent)):
        bad = trials.index[success & np.isnan(spent)].tolist()
        raise ValueError(f"trials {bad} reached the target but have no {column}")
    # (tier, value), lower is better: 0 = reached the target (by cost), 1 = finished (by error),
    # 2 = no result
    tier = np.where(success, 0, np.where(np.isnan(error), 2, 1))
    value = np.where(success, spent, np.where(np.isnan(error), 0.0, error))
    ranks = pd.Series(np.nan, index=trials.index)
    for _, idx in trials.groupby("function", sort=False).groups.items():
        pos = trials.index.get_indexer(idx)
        # one integer per distinct (tier, value) in lexicographic order, then average ties
        t, v = tier[pos], value[pos]
        order = np.lexsort((v, t))
        step = (np.diff(t[order]) != 0) | (np.diff(v[order]) != 0)
        dense = np.empty(len(pos), dtype=np.int64)
        dense[order] = np.concatenate([[0], np.cumsum(step)])
        ranks.loc[idx] = len(pos) + 1 - stats.rankdata(dense, method="average")
    return ranks


def rank_sum_scores(trials: pd.DataFrame, cost: str = "time", target: float = 1e-8) -> pd.DataFrame:
    """Rank-sum scores per function and in total.

    Parameters
    ----------
    trials : DataFrame
        One row per trial, with columns ``function``, ``competitor``, ``best_error``,
        ``time_to_target_s`` (``cost="time"``) or ``fes_to_target`` (``cost="fes"``).
    cost : {"time", "fes"}
        What orders two trials that both reached the target: wall-clock time (Janssen et al.)
        or function evaluations (CEC 2022).
    target : float
        The error that counts as solved (``<=``), 1e-8.

    Returns
    -------
    DataFrame
        Indexed by function (in order of appearance) plus a final ``"total"`` row; one column
        per competitor; higher is better.

    Raises
    ------
    ValueError
        If competitors have unequal trial counts on a function (the correction term n(n+1)/2
        assumes equal n), or a column is missing.
    """
    _check(trials, cost)
    counts = trials.groupby(["function", "competitor"], sort=False).size().unstack(fill_value=0)
    uneven = counts[counts.nunique(axis=1) > 1]
    if not uneven.empty:
        f = uneven.index[0]
        raise ValueError(f"unequal trial counts on {f}: {uneven.loc[f].to_dict()}; every competitor "
                         "needs the same number of trials on every function")
    ranks = trial_ranks(trials, cost, target)
    n = counts.iloc[:, 0]  # trials per competitor, per function
    sums = ranks.groupby([trials["function"], trials["competitor"]], sort=False).sum().unstack()
    scores = sums.sub(n * (n + 1) / 2, axis=0)
    scores = scores[list(dict.fromkeys(trials["competitor"]))]
    scores.loc["total"] = scores.sum()
    scores.index.name = "function"
    scores.columns.name = None
    return scores
