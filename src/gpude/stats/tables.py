"""The statistics files of one trials table: rank-sum scores (time and FEs), Kruskal-Wallis per
function, pairwise Mann-Whitney U with Holm correction, Friedman across functions."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..io import write_csv_atomic
from .comparisons import friedman, kruskal_by_function, pairwise_mannwhitney
from .ranksum import rank_sum_scores


def with_competitors(trials: pd.DataFrame) -> pd.DataFrame:
    """Add ``competitor`` (what varies besides the problem and the trial) and make ``function``
    name the problem (function, and dimension where several are run)."""
    trials = trials.copy()
    varying = [c for c in ("algorithm", "implementation", "popsize", "dtype") if trials[c].nunique() > 1]
    parts = trials["run_id"].astype(str).str.split("/") if "run_id" in trials else None
    if parts is not None and (parts.str.len() == 8).any():
        # a parameter grid: the run_id's setting (algorithm/implementation/F0.3_CR0.01/function/...)
        trials["setting"] = [p[2] if len(p) == 8 else "" for p in parts]
        varying.append("setting")
    trials["competitor"] = trials[varying or ["implementation"]].astype(str).agg("/".join, axis=1)
    if trials["dim"].nunique() > 1:
        trials["function"] = trials["function"].astype(str) + "/d" + trials["dim"].astype(str)
    return trials


def comparable(trials: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """The competitors with the full trial count on every function (the rank-sum score needs equal
    counts), and the names of those left out (e.g. a slow CPU model run with fewer trials)."""
    counts = trials.groupby(["competitor", "function"]).size().unstack(fill_value=0)
    full = counts.max(axis=0)
    keep = [c for c in counts.index if (counts.loc[c] == full).all()]
    return trials[trials["competitor"].isin(keep)], sorted(set(counts.index) - set(keep))


def ranks_from_scores(scores: pd.DataFrame) -> pd.DataFrame:
    """Janssen et al.'s Table 4: each competitor's rank (1 = best, the highest score) on every
    function, ties averaged, and the final rank from the total score (row ``rank``)."""
    per_function = scores.drop(index="total").rank(axis=1, ascending=False, method="average")
    final = scores.loc[["total"]].rank(axis=1, ascending=False, method="average").rename(index={"total": "rank"})
    return pd.concat([per_function, final])


def write_statistics(trials: pd.DataFrame, out_dir) -> dict[str, Path]:
    """Write rank_sum_{time,fes}.csv, ranks_{time,fes}.csv, kruskal.csv, pairwise_mannwhitney.csv, friedman.csv (and
    excluded.csv, the competitors left out for having fewer trials) into ``out_dir``."""
    out = Path(out_dir)
    trials, excluded = comparable(with_competitors(trials))
    files = {"excluded": write_csv_atomic(pd.DataFrame({"competitor": excluded}), out / "excluded.csv")}
    # the target that counts as solved is the one the trials stopped at (e.g. 0 where, as in Qin et al.,
    # every run spends its whole budget), so that every solved trial has its cost to target
    targets = trials["target_error"].dropna().unique() if "target_error" in trials else []
    target = float(min(targets)) if len(targets) else 1e-8
    for cost in ("time", "fes"):
        scores = rank_sum_scores(trials, cost=cost, target=target)
        files[f"rank_sum_{cost}"] = write_csv_atomic(scores.reset_index(), out / f"rank_sum_{cost}.csv")
        files[f"ranks_{cost}"] = write_csv_atomic(ranks_from_scores(scores).reset_index(), out / f"ranks_{cost}.csv")
    if trials["competitor"].nunique() > 1:
        kruskal = kruskal_by_function(trials).reset_index()
        pairwise = pairwise_mannwhitney(trials)
    else:  # one competitor: nothing to compare, but the files exist for the workflow
        kruskal = pd.DataFrame(columns=["function", "H", "p", "competitors"])
        pairwise = pd.DataFrame(columns=["function", "a", "b", "U", "p", "p_holm"])
    files["kruskal"] = write_csv_atomic(kruskal, out / "kruskal.csv")
    files["pairwise"] = write_csv_atomic(pairwise, out / "pairwise_mannwhitney.csv")
    # Friedman across functions: needs three competitors and two functions; otherwise an empty table
    rows = []
    if trials["competitor"].nunique() >= 3 and trials["function"].nunique() >= 2:
        result = friedman(trials)
        rows = [{"competitor": c, "mean_rank": r, "statistic": result["statistic"], "p": result["p"],
                 "functions": result["functions"]} for c, r in result["mean_rank"].items()]
    files["friedman"] = write_csv_atomic(
        pd.DataFrame(rows, columns=["competitor", "mean_rank", "statistic", "p", "functions"]),
        out / "friedman.csv")
    return files
