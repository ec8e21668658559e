"""Krömer et al.'s unstated DE parameters: the parameter pilot's summary, which F and CR to use per
problem class, and whether one choice serves every class.

The pilot's stages are the experiments ``config/experiments/kromer_pilot_*.yaml`` (``de/sequential``
over a grid of F x CR [x NP], one run per core, at the paper's budgets); where a later stage's
settings were picked from an earlier stage's results, the file holds the pilot's picks and says so.
Their rows become readout rows (:func:`readouts`: one per run and readout, from the run's trace with
:func:`gpude.report.kromer_tables.best_at`), the same rows as the pilot's own stage files
(``results/benchmarks/kromer_pilot/<stage>.csv.gz``, the committed legacy input read by
:func:`legacy_rows`; its README says what they are). Each experiment's report section (``report:
section: kromer_pilot``) summarises its own runs (``pilot_summary.md``/``.csv``); the summary across
stages, as the pilot's ``SUMMARY.md``, comes from this module's command line:

    python -m gpude.report.kromer_pilot [--legacy results/benchmarks/kromer_pilot]
        [--trials results/kromer_pilot_etc_cr/trials.csv ...] --out-md FILE [--out-csv FILE]

(``--trials`` reads the ``traces.npz`` beside each table; ``--gpu-rates`` the H200's FEs per second,
default ``results/benchmarks/kromer_pilot/inputs/gpu_rates.csv``).

**Measure.** ETC: the fit after the budget over the paper's GPU fit at NP 64 for the same matrix
(Table 4; the paper's lambda is unknown, so this is a common scale per matrix, not a claim of equal
fitness functions); LOP: error % = 100 (optimum - f) / optimum, as the REPORT's Tables 2-3;
Rastrigin (N09, unshifted): f itself.

**Classes.** ETC: consistent, inconsistent, semi-consistent (4 matrices each); LOP: LOLIB (Table 2),
N-LOLIB (Table 3); Rastrigin: each D (128, 256, 512).

**Readouts.** Every run is read at CPU times (``cpu_time``: the paper's budgets and a few earlier
ones; Table 4's and Tables 2-3's CPU columns) and at the FEs the H200's many-threaded DE made in the
same times (``gpu_fes``: a run's trajectory per seed is the same on every DE implementation, so this
is the GPU's value at that budget). They are summarised separately: a choice at one need not be the
choice at the other. A workflow run is read from its trace, which the workflow thins to 0.01 decades
(a value between trace points is at most 2.3% above the run's); the pilot's own rows were read from
the full trace. The GPU's FEs per second: the median of the H200 references' many-threaded DE (CR
0.1) at this NP (ETC: over its matrices; LOP: this matrix; Rastrigin: this D), frozen in
``inputs/gpu_rates.csv``.

**Choice** per (problem, NP, readout, time, class): the (F, CR) with the lowest median measure over
the class's runs (every matrix x seed), among the configurations run on all of them (a stage cut short
leaves some with fewer runs: they are listed but not chosen). Ties on the median: the lower mean,
then the larger sample, then the one nearer the current protocol (F nearer 0.5, then the larger CR).
**Common choice** per (problem, NP, readout, time): among the configurations complete in every class,
the lowest mean over classes of its rank there (by median, then mean; ties share ranks); further ties as
above. A class is **served** by the common choice when its median is at most 5 % above the class's
best median (or both are 0); otherwise the class best beats it by the factor the summary gives.
Deterministic: the same CSVs give the same files.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from ..core.io import read_csv, write_atomic, write_csv_atomic
from .section import Section

_ROOT = Path(__file__).resolve().parents[3]
PILOT_DIR = _ROOT / "results" / "benchmarks" / "kromer_pilot"
GPU_RATES = PILOT_DIR / "inputs" / "gpu_rates.csv"
TABLE4 = _ROOT / "paper" / "published" / "kromer_table4.csv"
#: the F and CR of the committed kromer_* experiments, chosen by the first 2 s pilot
PROTOCOL = (0.5, 0.1)
#: a class is served by the common choice when its median is within this fraction of the class best
SERVED_TOLERANCE = 0.05
MEASURE_NAMES = {"etc": "fit / paper's GPU fit at NP 64", "lop": "error %", "rastrigin": "f"}
UNIT = ["problem", "popsize", "readout", "at_s"]
CONFIG = ["F", "CR"]
#: the readout times of each problem (the paper's budgets and earlier ones), seconds
READOUT_S = {"etc": (5.0, 10.0, 20.0, 30.0), "lop": (5.0, 10.0), "rastrigin": (0.64, 27.0)}
#: the committed experiment of each problem whose H200 rates the GPU readouts use
RATE_EXPERIMENT = {"etc": "kromer_etc", "lop": "kromer_lop", "rastrigin": "kromer_rastrigin"}
STUDY_INPUTS = ("gpu_rates", "table4")


# --- readout rows: from the workflow's trials and traces, or the pilot's own stage files ----------

def problem_of(function: str) -> str:
    """etc, lop or rastrigin (N09) for a trial row's function."""
    from ..problems.instances import catalog

    if function in catalog("etc"):
        return "etc"
    if function in catalog("lop"):
        return "lop"
    return "rastrigin"


def gpu_fes_per_s(rates: pd.DataFrame | None, problem: str, instance: str, dim, popsize: int):
    """Median FEs per second of the H200 reference's many-threaded DE for this problem at this NP
    (ETC: over its matrices; LOP: this matrix; Rastrigin: this D); None without one."""
    if rates is None or not len(rates):
        return None
    t = rates[(rates["experiment"] == RATE_EXPERIMENT[problem]) & (rates["implementation"] == "many_threaded")
              & (rates["wall_time_s"] > 0) & (rates["popsize"] == popsize)]
    if problem == "lop":
        t = t[t["function"] == instance]
    elif problem == "rastrigin":
        t = t[t["dim"].astype(str) == str(dim)]
    return float((t["fes_used"] / t["wall_time_s"]).median()) if len(t) else None


def readouts(trials: pd.DataFrame, traces: dict, rates: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per run and readout, as the pilot's stage files have them: at each CPU time
    (``cpu_time``: :func:`gpude.report.kromer_tables.best_at` on the run's trace) and at the FEs the H200's
    GPU makes in that time (``gpu_fes``: the best of the last trace point within those FEs; reached
    if the run made them or stopped at its target). ``best_error`` is the REPORT's measure (LOP:
    error %); runs that failed are left out."""
    from .kromer_tables import best_at

    ok = trials[~trials["status"].astype(str).str.startswith("error")]
    optima = None
    rows = []
    for r in ok.to_dict("records"):
        problem = problem_of(r["function"])
        params = json.loads(r["params"]) if isinstance(r.get("params"), str) and r["params"] else {}
        trace = traces.get((r.get("source"), r["run_id"]))
        scale = 1.0
        if problem == "lop":
            if optima is None:
                from ..problems.lop import optima as lop_optima

                optima = lop_optima()["optimum"]
            scale = 100.0 / float(optima[r["function"]])
        base = {"problem": problem, "instance": r["function"], "dim": int(r["dim"]), "popsize": int(r["popsize"]),
                "F": round(float(params.get("F", np.nan)), 12), "CR": round(float(params.get("CR", np.nan)), 12),
                "seed": int(r["seed"]), "trial": int(r["trial"]), "max_time_s": r["max_time_s"],
                "max_fes": int(r["max_fes"]), "run_best_error": r["best_error"], "run_fes_used": r["fes_used"],
                "run_stopped_by": r["status"], "run_id": r["run_id"], "source": r.get("source", "")}
        for key in ("machine", "git_commit", "cpu", "cpu_cores", "boot_id"):
            if key in r:
                base[key] = r[key]
        rate = gpu_fes_per_s(rates, problem, r["function"], r["dim"], int(r["popsize"]))
        for t in READOUT_S[problem]:
            value = best_at(trace, t, r["best_error"], r["max_time_s"])
            last = trace["time_s"][-1] if trace is not None and len(trace["time_s"]) else np.inf
            reached = bool(np.isfinite(value)) and not (r["status"] == "budget" and last < t)
            rows.append({**base, "readout": "cpu_time", "at_s": t, "reached": reached,
                         "best_error": value * scale if reached else np.nan})
            if rate is None:
                continue
            target_fes = int(round(rate * t))
            reached = bool(r["fes_used"] >= target_fes or r["status"] == "target") and trace is not None
            value = np.nan
            if reached and len(trace["fes"]):
                j = max(int(np.searchsorted(trace["fes"], target_fes, side="right")) - 1, 0)
                value = float(trace["best_error"][j]) * scale
            rows.append({**base, "readout": "gpu_fes", "at_s": t, "reached": reached and np.isfinite(value),
                         "best_error": value, "at_fes": target_fes})
    return pd.DataFrame(rows)


# --- the pilot's own stage files (the committed legacy input) --------------------------------------

def stage_files(pilot_dir) -> list[Path]:
    """The pilot's stage files (``<stage>.csv.gz``, or a plain ``.csv``), not the SUMMARY files."""
    pilot_dir = Path(pilot_dir)
    return sorted(p for p in [*pilot_dir.glob("*.csv.gz"), *pilot_dir.glob("*.csv")]
                  if not p.name.startswith("SUMMARY"))


def read_stage(path) -> pd.DataFrame:
    """A stage file, its floats exactly as written (:func:`gpude.core.io.read_csv`: a stage file rewritten
    through pandas 2's default parser would drift by an ulp)."""
    return read_csv(path)


def legacy_rows(pilot_dir=PILOT_DIR) -> pd.DataFrame:
    """Every readout row of the pilot's stage files, before :func:`prepare` (F and CR as the grid has
    them: some calls wrote 0.7 as 0.69999999999999984)."""
    frames = [f for f in (read_stage(p) for p in stage_files(pilot_dir)) if len(f)]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def prepare(rows: pd.DataFrame, reached_only: bool = True, table4=None) -> pd.DataFrame:
    """Readout rows (legacy or :func:`readouts`) with ``class`` and ``measure``; F and CR rounded to
    the grid's values; a run named twice kept once; rows of runs that did not reach a readout
    dropped unless ``reached_only`` is False."""
    if not len(rows):
        return pd.DataFrame()
    rows = rows.copy()
    rows["F"], rows["CR"] = rows["F"].round(12), rows["CR"].round(12)
    key = ["problem", "instance", "dim", "popsize", "F", "CR", "seed", "max_time_s", "max_fes", "readout", "at_s"]
    rows = rows.drop_duplicates(key, keep="first")
    if reached_only:
        rows = rows[rows["reached"].astype(bool) & rows["best_error"].notna()].copy()
    return add_measure(rows, table4)


def etc_consistency() -> dict[str, str]:
    """ETC matrix (the paper's name) -> consistent / inconsistent / semi-consistent."""
    from ..problems.instances import table_dir

    table = read_csv(table_dir("etc") / "instances.csv")
    return dict(zip(table["paper_name"], table["consistency"]))


def problem_class(problem: str, instance: str, dim: int) -> str:
    """The class a run's instance belongs to (the unit of the per-class choice)."""
    if problem == "etc":
        return "ETC " + etc_consistency()[instance]
    if problem == "lop":
        return "N-LOLIB" if instance.startswith("N-") else "LOLIB"
    return f"Rastrigin D={int(dim)}"


def paper_gpu_fit_np64(table4=None) -> dict[str, float]:
    """Table 4's GPU fit at NP 64 per ETC matrix: the common scale of the ETC measure."""
    table = read_csv(table4 or TABLE4, comment="#")
    gpu = table[(table["implementation"] == "gpu") & (table["popsize"] == 64)]
    return dict(zip(gpu["etc"], gpu["fitness"].astype(float)))


def add_measure(rows: pd.DataFrame, table4=None) -> pd.DataFrame:
    """Columns ``class`` and ``measure`` (see the module docstring)."""
    if not len(rows):
        return rows.assign(**{"class": [], "measure": []})
    consistency = etc_consistency() if (rows["problem"] == "etc").any() else {}
    paper = paper_gpu_fit_np64(table4) if (rows["problem"] == "etc").any() else {}
    classes, measures = [], []
    for problem, instance, dim, best in zip(rows["problem"], rows["instance"], rows["dim"], rows["best_error"]):
        if problem == "etc":
            classes.append("ETC " + consistency[instance])
            measures.append(best / paper[instance])
        else:
            classes.append(problem_class(problem, instance, dim))
            measures.append(float(best))
    return rows.assign(**{"class": classes, "measure": measures})


# --- per-class statistics and choices ---------------------------------------------------------

def config_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Per (problem, NP, readout, time, class, F, CR): runs, matrices, median, mean and share at 0 of
    the measure; ``complete`` where the configuration ran every (instance, seed) of the class that any
    configuration ran."""
    cols = [*UNIT, "class", *CONFIG]
    if not len(rows):
        return pd.DataFrame(columns=[*cols, "n", "instances", "median", "mean", "at_zero", "complete"])
    table = (rows.groupby(cols).agg(n=("measure", "size"), instances=("instance", "nunique"),
                                    median=("measure", "median"), mean=("measure", "mean"),
                                    at_zero=("measure", lambda m: float((m == 0).mean())))
             .reset_index())
    pairs = rows.assign(pair=rows["instance"].astype(str) + "#" + rows["seed"].astype(str))
    covered = pairs.groupby(cols)["pair"].agg(frozenset).rename("pairs").reset_index()
    every = pairs.groupby([*UNIT, "class"])["pair"].agg(frozenset).rename("all_pairs").reset_index()
    covered = covered.merge(every, on=[*UNIT, "class"])
    covered["complete"] = [p == a for p, a in zip(covered["pairs"], covered["all_pairs"])]
    table = table.merge(covered[[*cols, "complete"]], on=cols)
    return table.sort_values(cols, kind="mergesort").reset_index(drop=True)


def _preference(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows ordered best first: median, mean, larger n, F nearer 0.5, larger CR."""
    return frame.assign(_f=(frame["F"] - PROTOCOL[0]).abs(), _n=-frame["n"], _cr=-frame["CR"]).sort_values(
        ["median", "mean", "_n", "_f", "_cr"], kind="mergesort").drop(columns=["_f", "_n", "_cr"])


def class_choices(table: pd.DataFrame) -> pd.DataFrame:
    """The best complete configuration per (problem, NP, readout, time, class)."""
    best = [_preference(g[g["complete"]]).iloc[0] for _, g in table.groupby([*UNIT, "class"], sort=True)
            if g["complete"].any()]
    return pd.DataFrame(best).reset_index(drop=True) if best else table.iloc[:0]


def common_choices(table: pd.DataFrame) -> pd.DataFrame:
    """Per (problem, NP, readout, time): the configuration with the lowest mean rank over the classes,
    among those complete in every class; columns F, CR, mean_rank, classes."""
    out = []
    for unit, g in table.groupby(UNIT, sort=True):
        classes = sorted(g["class"].unique())
        complete = g[g["complete"]]
        counts = complete.groupby(CONFIG)["class"].nunique()
        candidates = set(counts[counts == len(classes)].index)
        if not candidates:
            continue
        ranks = []
        for _, c in complete.groupby("class", sort=True):
            c = c[[(f, cr) in candidates for f, cr in zip(c["F"], c["CR"])]]
            ranks.append(c[[*CONFIG, "n"]].assign(rank=_lexical_rank(c["median"], c["mean"]).to_numpy()))
        ranked = pd.concat(ranks).groupby(CONFIG).agg(mean_rank=("rank", "mean"), n=("n", "sum")).reset_index()
        ranked = ranked.assign(_f=(ranked["F"] - PROTOCOL[0]).abs(), _n=-ranked["n"], _cr=-ranked["CR"]).sort_values(
            ["mean_rank", "_n", "_f", "_cr"], kind="mergesort")
        best = ranked.iloc[0]
        out.append({**dict(zip(UNIT, unit)), "F": best["F"], "CR": best["CR"], "mean_rank": best["mean_rank"],
                    "classes": len(classes)})
    return pd.DataFrame(out, columns=[*UNIT, "F", "CR", "mean_rank", "classes"])


def _lexical_rank(primary: pd.Series, secondary: pd.Series) -> pd.Series:
    """Average ranks (1 = best) by (primary, secondary), equal pairs sharing their mean rank."""
    keys = list(zip(primary.to_numpy(), secondary.to_numpy()))
    order = sorted(range(len(keys)), key=lambda i: keys[i])
    ranks = np.empty(len(keys))
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and keys[order[j + 1]] == keys[order[i]]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return pd.Series(ranks, index=primary.index)


def paired_wins(runs: pd.DataFrame, mine: tuple, other: tuple) -> str:
    """``"w/n"``: of the n (instance, seed) pairs both configurations ran, those where ``mine`` ended
    strictly lower (how often the class's choice really beats another, with so few seeds)."""
    def values(config):
        sel = runs[(runs["F"] == config[0]) & (runs["CR"] == config[1])]
        return dict(zip(zip(sel["instance"], sel["seed"]), sel["measure"]))
    a, b = values(mine), values(other)
    pairs = sorted(set(a) & set(b))
    return f"{sum(a[p] < b[p] for p in pairs)}/{len(pairs)}" if pairs and mine != other else "-"


def verdicts(table: pd.DataFrame, rows: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per (problem, NP, readout, time, class): the class's choice, the common choice and the protocol
    (F 0.5, CR 0.1) with their medians; ``served`` (the common choice within 5 % of the class best, or
    both 0) and ``class_gain`` (the common choice's median over the class best's; inf where the class
    best is 0 and the common choice is not); with the runs' ``rows``, the choice's paired wins over
    the common choice and over the protocol (:func:`paired_wins`)."""
    per_class = class_choices(table)
    common = common_choices(table).set_index(UNIT)
    out = []
    for r in per_class.to_dict("records"):
        unit = tuple(r[k] for k in UNIT)
        cls = table[(table[UNIT] == pd.Series(dict(zip(UNIT, unit)))).all(axis=1) & (table["class"] == r["class"])]
        row = {**{k: r[k] for k in UNIT}, "class": r["class"], "choice_F": r["F"], "choice_CR": r["CR"],
               "choice_median": r["median"], "choice_mean": r["mean"], "choice_n": r["n"]}
        for label, (F, CR) in (("protocol", PROTOCOL),
                               ("common", tuple(common.loc[unit, CONFIG]) if unit in common.index
                                else (np.nan, np.nan))):
            match = cls[(cls["F"] == F) & (cls["CR"] == CR)]
            row[f"{label}_F"], row[f"{label}_CR"] = F, CR
            row[f"{label}_median"] = float(match["median"].iloc[0]) if len(match) else np.nan
        best, com = row["choice_median"], row["common_median"]
        row["class_gain"] = (np.nan if pd.isna(com) else 1.0 if com == best else
                             np.inf if best == 0 else com / best)
        row["served"] = bool(not pd.isna(com) and (com == best or (best > 0 and com <= best * (1 + SERVED_TOLERANCE))))
        if rows is not None:
            runs = rows[(rows[UNIT] == pd.Series(dict(zip(UNIT, unit)))).all(axis=1) & (rows["class"] == r["class"])]
            mine = (r["F"], r["CR"])
            row["wins_vs_common"] = paired_wins(runs, mine, (row["common_F"], row["common_CR"]))
            row["wins_vs_protocol"] = paired_wins(runs, mine, PROTOCOL)
        out.append(row)
    return pd.DataFrame(out)


# --- planning helpers for the pilot's later stages ---------------------------------------------

def best_crs(rows: pd.DataFrame, problem: str, popsize: int, readout: str, at_s: float, F: float,
             k: int = 2) -> dict[str, list[float]]:
    """Per class, the ``k`` best CRs at ``F`` (complete configurations only), best first."""
    table = config_table(rows[(rows["problem"] == problem) & (rows["popsize"] == popsize) &
                              (rows["readout"] == readout) & np.isclose(rows["at_s"], at_s) &
                              np.isclose(rows["F"], F)])
    out = {}
    for cls, g in table.groupby("class", sort=True):
        out[cls] = [float(c) for c in _preference(g[g["complete"]])["CR"].head(k)]
    return out


def common_choice(rows: pd.DataFrame, problem: str, popsize: int, readout: str,
                  at_s: float) -> tuple[float, float] | None:
    """The common (F, CR) of a problem at one NP and readout, or None without complete data."""
    sel = rows[(rows["problem"] == problem) & (rows["popsize"] == popsize) & (rows["readout"] == readout) &
               np.isclose(rows["at_s"], at_s)]
    common = common_choices(config_table(sel))
    return None if not len(common) else (float(common["F"].iloc[0]), float(common["CR"].iloc[0]))


# --- the document -------------------------------------------------------------------------------

def _g(v, spec="{:.4g}") -> str:
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return "-"
    if isinstance(v, float) and np.isinf(v):
        return "inf"
    return spec.format(v)


def _readout_name(readout: str, at_s: float) -> str:
    return f"CPU {at_s:g} s" if readout == "cpu_time" else f"GPU-equivalent FEs of {at_s:g} s"


def render(rows: pd.DataFrame, table: pd.DataFrame, verdict: pd.DataFrame, sources: list[str],
           unreached: pd.DataFrame | None = None) -> str:
    lines = ["# Krömer et al.'s DE parameters: the pilot", "",
             "Made by `python -m gpude.report.kromer_pilot` from " + ", ".join(f"`{s}`" for s in sources) +
             " (`de/sequential`, one run per process and core). The measure, the "
             "classes, the choices and 'served' are defined in `gpude.report.kromer_pilot`'s docstring. "
             "In short: per class "
             "the lowest median; the common choice has the lowest mean rank over the classes; a class is served "
             f"when the common choice's median is within {SERVED_TOLERANCE:.0%} of the class best's.", ""]
    if not len(rows):
        return "\n".join(lines + ["No pilot rows yet.", ""])
    if {"cpu", "cpu_cores", "boot_id", "git_commit"} <= set(rows):
        machines = rows.drop_duplicates(["cpu", "cpu_cores", "boot_id"]).groupby(["cpu", "cpu_cores"]).size()
        commits = sorted(set(map(str, rows["git_commit"])))
        at_once = (f"; at most {int(rows['jobs'].max())} runs at once"
                   if "jobs" in rows and rows["jobs"].notna().any() else "")
        lines += ["Machines: " + ", ".join(f"{c} ({int(k)} cores, {n} boot(s))" for (c, k), n in machines.items()) +
                  f"; commits {', '.join(commits)}{at_once}.", ""]
    lines += [
              "A CPU time's values are Table 4's / Tables 2-3's CPU column; the GPU-equivalent FEs of a time are what "
              "the H200's many-threaded DE made in that time (its FEs per second in "
              "the H200 references of CR = 0.1, `results/benchmarks/kromer_pilot/inputs/gpu_rates.csv`): "
              "one seed makes the same run on every implementation, so "
              "these are the GPU column's values.", ""]
    for (problem, popsize), v in verdict.groupby(["problem", "popsize"], sort=True):
        measure = MEASURE_NAMES.get(problem, "measure")
        name = "Rastrigin (N09)" if problem == "rastrigin" else problem.upper()
        lines += [f"## {name}, NP {int(popsize)}", "", f"Measure: {measure}. Wins: of the (matrix, seed) pairs, "
                  "those where the class's choice ended lower than the common choice / the protocol.", "",
                  "| readout | class | choice F, CR | its median | n | common choice | its median | common / best "
                  "| served | wins | protocol (0.5, 0.1) median | wins |",
                  "| --- | --- | --- | ---: | ---: | --- | ---: | ---: | --- | ---: | ---: | ---: |"]
        v = v.assign(_order=(v["readout"] != "cpu_time").astype(int)).sort_values(["_order", "at_s", "class"])
        for r in v.to_dict("records"):
            common = "-" if pd.isna(r["common_F"]) else f"{r['common_F']:g}, {r['common_CR']:g}"
            lines.append(f"| {_readout_name(r['readout'], r['at_s'])} | {r['class']} | {r['choice_F']:g}, "
                         f"{r['choice_CR']:g} | {_g(r['choice_median'])} | {int(r['choice_n'])} | {common} | "
                         f"{_g(r['common_median'])} | {_g(r['class_gain'], '{:.3g}')} | "
                         f"{'yes' if r['served'] else 'no'} "
                         f"| {r.get('wins_vs_common', '-')} | {_g(r['protocol_median'])} | "
                         f"{r.get('wins_vs_protocol', '-')} |")
        lines.append("")
        for (readout, at_s), u in v.groupby(["readout", "at_s"], sort=False):
            if pd.isna(u["common_F"].iloc[0]):
                lines.append(f"* {_readout_name(readout, at_s)}: "
                             "no configuration ran in every class, no common choice.")
            elif u["served"].all():
                lines.append(f"* {_readout_name(readout, at_s)}: F = {u['common_F'].iloc[0]:g}, CR = "
                             f"{u['common_CR'].iloc[0]:g} serves every class.")
            else:
                worst = u.loc[u["class_gain"].idxmax()]
                lines.append(f"* {_readout_name(readout, at_s)}: F = {u['common_F'].iloc[0]:g}, CR = "
                             f"{u['common_CR'].iloc[0]:g} does not serve {', '.join(u.loc[~u['served'], 'class'])}: "
                             f"the class's own choice is better by up to {_g(worst['class_gain'], '{:.3g}')}x "
                             f"({worst['class']}).")
        lines.append("")
        sub = table[(table["problem"] == problem) & (table["popsize"] == popsize)]
        readouts = sorted({(r, t) for r, t in zip(sub["readout"], sub["at_s"])},
                          key=lambda x: (x[0] != "cpu_time", x[1]))
        head = max((t for r, t in readouts if r == "cpu_time"), default=None)
        wide = sub.pivot_table(index=["class", *CONFIG], columns=["readout", "at_s"], values="median", aggfunc="first")
        info = sub[(sub["readout"] == "cpu_time") & (sub["at_s"] == head)].set_index(["class", *CONFIG])
        lines += [f"All configurations: median {measure} at each readout; n and the share of runs at 0 at CPU "
                  f"{_g(head, '{:g}')} s (* = not run on every matrix and seed of the class); best first at that "
                  "readout.", "",
                  "| class | F | CR | n | at 0 | "
                  + " | ".join(_readout_name(r, t).replace("GPU-equivalent FEs of", "GPU-eq.") for r, t in readouts)
                  + " |",
                  "| --- | ---: | ---: | ---: | ---: | " + " | ".join("---:" for _ in readouts) + " |"]
        ordered = _ordered(sub[(sub["readout"] == "cpu_time") & (sub["at_s"] == head)])
        for r in ordered.to_dict("records"):
            key = (r["class"], r["F"], r["CR"])
            cells = [_g(wide.loc[key].get((ro, t), np.nan)) if key in wide.index else "-" for ro, t in readouts]
            i = info.loc[key]
            lines.append(f"| {r['class']} | {r['F']:g} | {r['CR']:g} | {int(i['n'])}{'' if i['complete'] else '*'} | "
                         f"{i['at_zero']:.2f} | " + " | ".join(cells) + " |")
        lines.append("")
    if unreached is not None and len(unreached):
        lines += ["## Readouts some runs did not reach", "",
                  "A run that ended (its time, or its FE cap) before a readout has no value there; such readouts "
                  "are left out above where no run reached them, and compare fewer runs where some did.", "",
                  "| problem | NP | readout | runs not reaching it | of |", "| --- | ---: | --- | ---: | ---: |"]
        for r in unreached.to_dict("records"):
            lines.append(f"| {r['problem']} | {int(r['popsize'])} | {_readout_name(r['readout'], r['at_s'])} | "
                         f"{int(r['missed'])} | {int(r['runs'])} |")
        lines.append("")
    return "\n".join(lines)


def _ordered(sub: pd.DataFrame) -> pd.DataFrame:
    parts = [_preference(g) for _, g in sub.groupby("class", sort=True)]
    return pd.concat(parts) if parts else sub




def summarise(rows: pd.DataFrame, sources: list[str], out_md, out_csv=None,
              table4=None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Write the summary (markdown) and the per-configuration table with the choices marked (CSV)
    from readout rows (legacy and/or :func:`readouts`)."""
    everything = prepare(rows, reached_only=False, table4=table4)
    rows = prepare(rows, table4=table4)
    table = config_table(rows)
    verdict = verdicts(table, rows) if len(table) else pd.DataFrame(columns=[*UNIT, "class"])
    marked = table.copy()
    if len(table):
        key = [*UNIT, "class"]
        choice = verdict[[*key, "choice_F", "choice_CR", "common_F", "common_CR"]]
        marked = marked.merge(choice, on=key, how="left")
        marked["class_choice"] = (marked["F"] == marked["choice_F"]) & (marked["CR"] == marked["choice_CR"])
        marked["common_choice"] = (marked["F"] == marked["common_F"]) & (marked["CR"] == marked["common_CR"])
        marked = marked.drop(columns=["choice_F", "choice_CR", "common_F", "common_CR"])
    unreached = None
    if len(everything):
        counts = everything.assign(missed=~everything["reached"].astype(bool)).groupby(UNIT).agg(
            missed=("missed", "sum"), runs=("missed", "size")).reset_index()
        unreached = counts[counts["missed"] > 0]
    if out_csv:
        write_csv_atomic(marked, out_csv)
    write_atomic(out_md, render(rows, table, verdict, sources, unreached))
    return marked, verdict


# --- the report section ----------------------------------------------------------------------------

def write_outputs(trials: pd.DataFrame, traces: dict, out_dir, **inputs) -> list[Path]:
    """``gpude paper --study kromer_pilot``: the experiment's readout rows (``pilot_readouts.csv``) and
    its summary (``pilot_summary.md``, ``pilot_summary.csv``)."""
    unknown = set(inputs) - set(STUDY_INPUTS)
    if unknown:
        from ..core.errors import InvalidInputError

        raise InvalidInputError(f"the kromer_pilot section reads no {', '.join(sorted(unknown))}; "
                                f"its inputs (report: study_inputs:): {', '.join(STUDY_INPUTS)}")
    out_dir = Path(out_dir)
    rates = read_csv(inputs["gpu_rates"]) if inputs.get("gpu_rates") else None
    rows = readouts(trials, traces, rates)
    written = [write_csv_atomic(rows, out_dir / "pilot_readouts.csv")]
    sources = sorted({str(s) for s in trials.get("source", pd.Series(dtype=str)).dropna()})
    summarise(rows, sources, out_dir / "pilot_summary.md", out_dir / "pilot_summary.csv", inputs.get("table4"))
    return written + [out_dir / "pilot_summary.md", out_dir / "pilot_summary.csv"]


class KromerPilot(Section):
    """An experiment of the Krömer parameter pilot: its settings and its summary (the choices per
    class at each readout), below the experiment's generic tables."""

    # every run takes its time budget: no wall-time tables, which say nothing; the generic appendix
    # shows the figures of every trial
    generic_outputs = ("figures",)
    write_outputs = staticmethod(write_outputs)

    def body(self) -> str:
        summary = self.dir / "pilot_summary.md"
        text = summary.read_text().split("\n", 2)[-1] if summary.is_file() else "No pilot summary yet.\n"
        text = text.replace("\n## ", "\n### ")
        return "\n".join([self.settings(), "", text, self.sources()])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--legacy", type=Path, action="append", default=[],
                   help="a folder of the pilot's own stage files (results/benchmarks/kromer_pilot)")
    p.add_argument("--trials", type=Path, action="append", default=[],
                   help="a pilot experiment's trials.csv (its traces.npz beside it)")
    p.add_argument("--gpu-rates", type=Path, default=GPU_RATES)
    p.add_argument("--table4", type=Path, default=TABLE4)
    p.add_argument("--out-md", type=Path, required=True)
    p.add_argument("--out-csv", type=Path)
    args = p.parse_args(argv)
    frames, sources = [], []
    for folder in args.legacy:
        frames.append(legacy_rows(folder))
        sources += [str(s.resolve().relative_to(_ROOT)) if s.resolve().is_relative_to(_ROOT) else str(s)
                    for s in stage_files(folder)]
    if args.trials:
        from .sources import load_sources

        trials, traces = load_sources([str(t) for t in args.trials])
        frames.append(readouts(trials, traces, read_csv(args.gpu_rates) if args.gpu_rates.is_file() else None))
        sources += [str(t) for t in args.trials]
    frames = [f for f in frames if len(f)]
    rows = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    _, verdict = summarise(rows, sorted(sources), args.out_md, args.out_csv, args.table4)
    print(f"wrote {args.out_md} ({len(verdict)} class choices)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
