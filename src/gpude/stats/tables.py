"""The statistics files of one trials table, computed within one machine at a time: rank-sum
scores (time and FEs), Kruskal-Wallis per function, pairwise Mann-Whitney U with Holm correction,
Friedman across functions.

Why per machine: a time-based score ranks wall-clock times, which compare only on one machine (GPU
model, CPU, cores); the FE- and error-based ones are kept per machine too, so that no trial is
counted twice where the same runs were made on two machines. Every file has a ``machine`` column
and no row pools two machines.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..core.io import write_csv_atomic
from ..core.machines import machine_column
from .comparisons import friedman, kruskal_by_function, pairwise_mannwhitney
from .ranksum import rank_sum_scores

#: why no time-based score is written for a study whose budget is wall-clock time
TIME_BUDGET_REASON = ("the runs have a wall-clock budget (max_time_s): every run that does not reach "
                      "the target takes the whole budget, so a score by time to target says nothing "
                      "about the search")
#: the files of a time-based score (left empty, with a row in omitted.csv, under a time budget)
TIME_FILES = ("rank_sum_time", "ranks_time")


def with_competitors(trials: pd.DataFrame) -> pd.DataFrame:
    """Add ``competitor`` (what varies besides the problem and the trial) and make ``function``
    name the problem (function, and dimension where several are run)."""
    trials = trials.copy()
    varying = [c for c in ("algorithm", "implementation", "popsize", "dtype")
               if c in trials and trials[c].nunique() > 1]
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
    function, ties averaged, and the final rank from the total score (row ``rank``).

    ``scores`` are one machine's (:func:`rank_sum_scores`: indexed by function, one numeric column
    per competitor); a file's ``machine`` column must be selected on and dropped first.
    """
    text = [c for c in scores.columns if not pd.api.types.is_numeric_dtype(scores[c])]
    if text:
        raise ValueError(f"scores must be one machine's, one numeric column per competitor; got the "
                         f"non-numeric column(s) {text} (select one machine and drop its column)")
    per_function = scores.drop(index="total").rank(axis=1, ascending=False, method="average")
    final = scores.loc[["total"]].rank(axis=1, ascending=False, method="average").rename(index={"total": "rank"})
    return pd.concat([per_function, final])


def time_budgeted(trials: pd.DataFrame) -> bool:
    """Whether the trials ran under a wall-clock budget: ``max_time_s`` set on some row, or some run
    stopped by the time budget (``status == "time"``)."""
    if "max_time_s" in trials and pd.to_numeric(trials["max_time_s"], errors="coerce").notna().any():
        return True
    return "status" in trials and bool((trials["status"].astype(str) == "time").any())


def same_runs(trials: pd.DataFrame) -> pd.DataFrame:
    """Pairs of competitors that made the very same runs: the same final error and FEs on every
    (function, trial). Between them only the wall time differs, so a time-based score separates
    them by speed alone, not by their search.

    ``trials`` is one machine's, with ``competitor``. Returns columns a, b, trials (empty without the
    ``trial`` column, which pairs the runs, or ``fes_used``, the FEs each run spent).
    """
    columns = ["a", "b", "trials"]
    fes = "fes_used"
    if "trial" not in trials or fes not in trials or trials["competitor"].nunique() < 2:
        return pd.DataFrame(columns=columns)
    key = ["function", "trial"]
    runs = {c: part.set_index(key)[["best_error", fes]].sort_index()
            for c, part in trials.groupby("competitor", sort=False)}
    rows = []
    names = list(runs)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            x, y = runs[a], runs[b]
            if x.index.has_duplicates or not x.index.equals(y.index):
                continue  # not paired trial by trial
            # NaN (a failed run) equals NaN here: the same run failed the same way
            if all(np.array_equal(x[c].to_numpy(dtype=float), y[c].to_numpy(dtype=float), equal_nan=True)
                   for c in x.columns):
                rows.append({"a": a, "b": b, "trials": len(x)})
    return pd.DataFrame(rows, columns=columns)


def _machine_order(trials: pd.DataFrame) -> list[str]:
    """The machines, most trials first (ties by name): the first is the report's main machine."""
    counts = trials["machine"].value_counts()
    return sorted(counts.index, key=lambda m: (-counts[m], m))


def _with_machine(frame: pd.DataFrame, machine: str) -> pd.DataFrame:
    frame = frame.copy()
    frame.insert(0, "machine", machine)
    return frame


def write_statistics(trials: pd.DataFrame, out_dir, time_budget: bool | None = None) -> dict[str, Path]:
    """Write the statistics files into ``out_dir``, every one computed within one machine.

    Parameters
    ----------
    trials : DataFrame
        One row per trial. The machine is its ``machine`` column where there is one (``gpude
        paper`` adds it), else made from ``gpu``, ``cpu`` and ``cpu_cores``
        (:func:`gpude.core.machines.machine_labels`).
    out_dir : path
        The folder to write into.
    time_budget : bool, optional
        Whether the runs had a wall-clock budget (the experiment's ``max_time_s``); then no
        time-based score is written (``rank_sum_time.csv`` and ``ranks_time.csv`` hold no rows and
        ``omitted.csv`` says why). ``None``: read from the trials (:func:`time_budgeted`).

    Returns
    -------
    dict
        name -> path of: ``rank_sum_time``, ``rank_sum_fes`` (per machine and function, one column
        per competitor, a ``total`` row per machine), ``ranks_time``, ``ranks_fes`` (Janssen et
        al.'s Table 4 ranks, a ``rank`` row per machine), ``kruskal``, ``pairwise``
        (``pairwise_mannwhitney.csv``), ``friedman``, ``excluded`` (competitors left out on a machine
        for having fewer trials), ``machines`` (per machine: trials, competitors, functions),
        ``same_runs`` (competitor pairs with the very same runs on a machine), ``omitted`` (file,
        reason: what was not computed).
    """
    if not len(trials):
        raise ValueError("write_statistics needs at least one trial")
    missing = [c for c in ("function", "implementation", "dim", "best_error") if c not in trials]
    if missing:
        raise ValueError(f"trials lack the column(s) {missing}")
    out = Path(out_dir)
    if time_budget is None:
        time_budget = time_budgeted(trials)
    labelled = with_competitors(trials.assign(machine=machine_column(trials)))
    # the target that counts as solved is the one the trials stopped at (e.g. 0 where, as in Qin et al.,
    # every run spends its whole budget), so that every solved trial has its cost to target
    targets = labelled["target_error"].dropna().unique() if "target_error" in labelled else []
    target = float(min(targets)) if len(targets) else 1e-8
    costs = ("fes",) if time_budget else ("time", "fes")
    found: dict[str, list[pd.DataFrame]] = {name: [] for name in (
        "excluded", "machines", "same_runs", "kruskal", "pairwise", "friedman",
        *(f"{kind}_{cost}" for kind in ("rank_sum", "ranks") for cost in costs))}
    for machine in _machine_order(labelled):
        part, excluded = comparable(labelled[labelled["machine"] == machine])
        found["excluded"].append(pd.DataFrame({"machine": machine, "competitor": excluded}))
        if not len(part):  # no competitor with the full count on every function: nothing to rank
            continue
        cells = part.groupby(["competitor", "function"]).size()
        found["machines"].append(pd.DataFrame([{
            "machine": machine, "trials": len(part), "competitors": part["competitor"].nunique(),
            "functions": part["function"].nunique(), "trials_per_cell": int(cells.min())}]))
        found["same_runs"].append(_with_machine(same_runs(part), machine))
        for cost in costs:
            scores = rank_sum_scores(part, cost=cost, target=target)
            found[f"rank_sum_{cost}"].append(_with_machine(scores.reset_index(), machine))
            found[f"ranks_{cost}"].append(_with_machine(ranks_from_scores(scores).reset_index(), machine))
        if part["competitor"].nunique() > 1:
            found["kruskal"].append(_with_machine(kruskal_by_function(part).reset_index(), machine))
            found["pairwise"].append(_with_machine(pairwise_mannwhitney(part), machine))
        # Friedman across functions: needs three competitors and two functions
        if part["competitor"].nunique() >= 3 and part["function"].nunique() >= 2:
            result = friedman(part)
            found["friedman"].append(pd.DataFrame([
                {"machine": machine, "competitor": c, "mean_rank": r, "statistic": result["statistic"],
                 "p": result["p"], "functions": result["functions"]} for c, r in result["mean_rank"].items()]))
    # the columns every file has even when empty (one competitor: nothing to compare, but the files
    # exist for the workflow); a score file's competitor columns are those ranked on some machine
    score_columns = ["machine", "function"]
    columns = {"excluded": ["machine", "competitor"],
               "machines": ["machine", "trials", "competitors", "functions", "trials_per_cell"],
               "same_runs": ["machine", "a", "b", "trials"],
               "kruskal": ["machine", "function", "H", "p", "competitors"],
               "pairwise": ["machine", "function", "a", "b", "U", "p", "median_a", "median_b", "p_holm"],
               "friedman": ["machine", "competitor", "mean_rank", "statistic", "p", "functions"],
               **{f"{kind}_{cost}": score_columns for kind in ("rank_sum", "ranks") for cost in ("time", "fes")}}
    names = {"pairwise": "pairwise_mannwhitney"}
    omitted = [{"file": f"{name}.csv", "reason": TIME_BUDGET_REASON} for name in TIME_FILES if time_budget]
    files = {}
    for name, cols in columns.items():
        frames = [f for f in found.get(name, []) if len(f)]
        table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=cols)
        files[name] = write_csv_atomic(table, out / f"{names.get(name, name)}.csv")
    files["omitted"] = write_csv_atomic(pd.DataFrame(omitted, columns=["file", "reason"]), out / "omitted.csv")
    return files
