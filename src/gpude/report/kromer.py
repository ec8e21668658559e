"""Krömer, Platoš, Snášel & Abraham, "Many-threaded differential evolution on the GPU": Rastrigin
(Table 1), the linear ordering problem (Tables 2-3, Fig. 6), independent task scheduling (Table 4,
Figs. 8-9) and evaluation speed (Figs. 5 and 7).

One section serves the three experiments (``kromer_rastrigin``, ``kromer_lop``, ``kromer_etc``); what
it writes follows from the study inputs the experiment names (``report: study_inputs:``):

* ``table1`` -> ``table_rastrigin.csv``: per D, the best value after 0.64 s and 27 s (mean, best over
  runs; N09 is unshifted, so its error is f), beside the paper's and de Veronese & Krohling's;
* ``table2`` / ``table3`` -> ``table_lop.csv``: per instance and implementation, the best and mean
  error % = 100 (optimum - f) / optimum after 5 s and 10 s, beside the paper's; ``lop_summary.csv``:
  the mean over instances and the instances solved in every run, beside the paper's claims;
  ``figure_lop_progress.png``: error % vs time on be75eec, GPU and CPU (Fig. 6);
* ``table4`` -> ``table_etc.csv``: per (ETC matrix, NP, implementation) the mean fit after 30 s and
  its makespan and flowtime (from the trial rows' ``solution``), beside the paper's Table 4 and the
  Min-Min makespan; ``figure_etc_progress_Th.png`` / ``_Tl.png``: fit vs time at NP = 64 (Figs. 8-9);
* ``eval_speed`` (``benchmarks/kromer_eval_speed.py``'s CSV) -> ``eval_speed.csv`` and
  ``figure_eval_speed.png`` (Figs. 5 and 7) with the CPU/GPU ratios the paper quotes;
* ``fe_rate`` (``benchmarks/kromer_fe_rate.py``'s CSV) -> ``fe_rate.csv``: per case, the FEs per second
  of each column's implementation run alone, and the GPU / CPU and GPU / CPU opt. ratios (the paper's
  25.2-216.5x and 2.2-12.5x);
* ``contention`` (a CSV of trial rows with a column ``at_once``: the same cell run alone and k at
  once) -> ``contention.csv``: the FEs of a 30 s run against the number of runs beside it, with the
  reference's own rows of that cell (how many ran at once read from their time stamps);
* ``claims`` (``paper/published/kromer_claims.csv``): the paper's numeric claims, put beside ours;
  those with a ``check`` key are checked on our tables (``claims_check.csv``).

**The paper's columns** (sec. 5.3): "The GPU implementation was compared to a simple CPU implementation
(high level object oriented C++ code) and optimized CPU implementation (low level C code to achieve
maximum performance) ... Optimized CPU and GPU implementations ... were identical with the exception
of CUDA-C language constructions". Ours: CPU = ``de/high_level`` (plain Python and numpy, no JIT),
CPU opt. = ``de/sequential`` (one thread, compiled by numba), GPU = ``de/many_threaded``; the three
make the same run for a seed and differ in speed only.

**Values at a time t** are read from a run's trace: the best error of the last generation that ended
by t (``gpude run``'s traces keep a point whenever the best fell by 0.01 decades, so a value read between
points is at most 2.3% above the run's; a reference merged by ``python -m gpude.campaign merge
--trace-decades 0.1`` keeps one per 0.1 decade: up to 26% above; at t = the budget, the row's final best
is used). The paper made separate
5 s and 10 s (0.64 s and 27 s) runs; a run does not know its budget, so the best of a 10 s run at 5 s
is a 5 s run's.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd

from ..io import save_figure, write_csv_atomic
from .section import Section, _read, fmt
from .panels import wrap
from .sources import made_by
from .verdict import SAME_MAGNITUDE, Verdict, coverage_verdict, magnitude_finding, n_by, paper_n, ratio_span

#: gpude implementation -> the paper's column (Table 4: "CPU", "CPU opt.", "GPU"; sec. 5.3: a simple,
#: high-level CPU program, an optimised low-level one identical to the GPU's but for CUDA, the GPU's)
PAPER_COLUMN = {"high_level": "cpu", "sequential": "cpu_optimized", "many_threaded": "gpu"}
COLUMN_NAMES = {"cpu": "CPU", "cpu_optimized": "CPU opt.", "gpu": "GPU"}
COLUMNS = ("cpu", "cpu_optimized", "gpu")
#: the implementation of each column (the inverse of PAPER_COLUMN)
IMPLEMENTATION_OF = {c: i for i, c in PAPER_COLUMN.items()}
#: the paper's two sentences that define its columns (sec. 5.3), quoted wherever the mapping is stated
PAPER_COLUMNS_QUOTE = ('"The GPU implementation was compared to a simple CPU implementation (high level object '
                       'oriented C++ code) and optimized CPU implementation (low level C code to achieve maximum '
                       'performance)"; "Optimized CPU and GPU implementations of the DE for scheduling optimization '
                       'were identical with the exception of CUDA-C language constructions"')
STUDY_INPUTS = ("table1", "table2", "table3", "table4", "eval_speed", "fe_rate", "contention", "claims")
LOP_TIMES = (5.0, 10.0)
RASTRIGIN_TIMES = (0.64, 27.0)
FIG6_INSTANCE = "be75eec"
FIG_POPSIZE = 64


def _runs(trials: pd.DataFrame) -> pd.DataFrame:
    ok = trials[~trials["status"].astype(str).str.startswith("error")]
    return ok.assign(column=ok["implementation"].map(PAPER_COLUMN).fillna(ok["implementation"]))


def best_at(trace: dict | None, t: float, final: float, budget: float | None) -> float:
    """A run's best error after t seconds: from its trace; the row's final best at the budget; NaN
    past a shorter budget (the run never had t seconds)."""
    if budget is not None and not pd.isna(budget):
        if t > budget * (1 + 1e-9):
            return np.nan
        if t >= budget * (1 - 1e-9):
            return final
    if trace is None or not len(trace["time_s"]) or not np.isfinite(trace["time_s"]).all():
        return np.nan
    i = np.searchsorted(trace["time_s"], t, side="right") - 1
    return float(trace["best_error"][i]) if i >= 0 else np.nan


def values_at(trials: pd.DataFrame, traces: dict, times) -> pd.DataFrame:
    """The rows with a column ``at_<t>`` per time: each run's best error after t seconds."""
    cols = {}
    for t in times:
        cols[f"at_{t:g}"] = [best_at(traces.get((r.get("source"), r["run_id"])), t, r["best_error"],
                                     r.get("max_time_s")) for r in trials.to_dict("records")]
    return trials.assign(**cols)


# --- Table 1 ----------------------------------------------------------------------------------

def rastrigin_table(trials: pd.DataFrame, traces: dict, published: pd.DataFrame | None) -> pd.DataFrame:
    runs = _runs(trials)
    runs = values_at(runs[runs["function"] == "N09"], traces, RASTRIGIN_TIMES)
    rows = []
    for (impl, dim, machine), g in runs.groupby(["implementation", "dim", "machine"]):
        row = {"implementation": impl, "dim": dim, "machine": machine, "n": len(g)}
        for t in RASTRIGIN_TIMES:
            row[f"mean_{t:g}s"], row[f"best_{t:g}s"] = g[f"at_{t:g}"].mean(), g[f"at_{t:g}"].min()
        rows.append(row)
    table = pd.DataFrame(rows, columns=["implementation", "dim", "machine", "n",
                                        *[f"{k}_{t:g}s" for t in RASTRIGIN_TIMES for k in ("mean", "best")]])
    if published is not None and len(table):
        k = published[published["source"] == "kromer"]
        for t in RASTRIGIN_TIMES:  # the paper's value at the time closest to t (0.66 s, 27.0 s)
            near = k.loc[(k["time_s"] - t).abs() < 0.1 * t].set_index("variables")["value"]
            table[f"paper_{t:g}s"] = table["dim"].map(near)
    return table


# --- Tables 2-3 and Fig. 6 ------------------------------------------------------------------------

def lop_table(trials: pd.DataFrame, traces: dict, published: dict[int, pd.DataFrame]) -> pd.DataFrame:
    from ..instances import catalog
    from ..problems.lop import optima

    runs = _runs(trials)
    runs = runs[runs["function"].isin(list(catalog("lop")))]
    runs = values_at(runs, traces, LOP_TIMES)
    opt = optima()["optimum"]
    rows = []
    for (impl, instance, machine), g in runs.groupby(["implementation", "function", "machine"]):
        row = {"implementation": impl, "instance": instance, "table": 3 if instance.startswith("N-") else 2,
               "machine": machine, "n": len(g), "optimum": int(opt[instance])}
        for t in LOP_TIMES:
            pct = 100.0 * g[f"at_{t:g}"] / opt[instance]
            row[f"best_{t:g}s"], row[f"avg_{t:g}s"] = pct.min(), pct.mean()
        # the paper's "global optimum in all test runs": every run at 0 after 5 s and after 10 s
        row["solved_every_run"] = bool(all((g[f"at_{t:g}"] == 0).all() for t in LOP_TIMES))
        rows.append(row)
    cols = ["implementation", "instance", "table", "machine", "n", "optimum",
            *[f"{k}_{t:g}s" for t in LOP_TIMES for k in ("best", "avg")], "solved_every_run"]
    table = pd.DataFrame(rows, columns=cols)
    for number, paper in published.items():
        p = paper.set_index("instance")
        for c in ("best_5s", "avg_5s", "best_10s", "avg_10s"):
            mask = table["table"] == number
            table.loc[mask, f"paper_{c}"] = table.loc[mask, "instance"].map(p[c])
    return table


def lop_summary(table: pd.DataFrame, published: dict[int, pd.DataFrame]) -> pd.DataFrame:
    """Per table and implementation: instances, runs, mean of the per-instance mean error % after 5 s
    and 10 s, instances solved in every run; the paper's own numbers beside (from its table), ours
    over the paper's means, and the instances where our mean error is below, equal to or above the
    paper's (after 5 s and 10 s: the REPORT says by how much ours differs, and over how many)."""
    rows = []
    paper_mean = {n: {t: p[f"avg_{t:g}s"].mean() for t in LOP_TIMES} for n, p in published.items()}
    for (number, impl), g in table.groupby(["table", "implementation"]):
        row = {"table": number, "implementation": impl, "instances": len(g), "runs": int(g["n"].sum()),
               "mean_avg_5s": g["avg_5s"].mean(), "mean_avg_10s": g["avg_10s"].mean(),
               "solved_every_run": int(g["solved_every_run"].sum())}
        for t in LOP_TIMES:
            paper = paper_mean.get(number, {}).get(t, np.nan)
            row[f"over_paper_{t:g}s"] = row[f"mean_avg_{t:g}s"] / paper if paper else np.nan
            if f"paper_avg_{t:g}s" in g:
                both = g.dropna(subset=[f"paper_avg_{t:g}s", f"avg_{t:g}s"])
                ours, theirs = both[f"avg_{t:g}s"], both[f"paper_avg_{t:g}s"]
                row[f"below_paper_{t:g}s"] = int((ours < theirs).sum())
                row[f"equal_paper_{t:g}s"] = int((ours == theirs).sum())
                row[f"above_paper_{t:g}s"] = int((ours > theirs).sum())
        rows.append(row)
    for number, paper in published.items():
        solved = int(((paper["avg_5s"] == 0) & (paper["avg_10s"] == 0)).sum())
        rows.append({"table": number, "implementation": "paper (GPU)", "instances": len(paper),
                     "mean_avg_5s": paper["avg_5s"].mean(), "mean_avg_10s": paper["avg_10s"].mean(),
                     "solved_every_run": solved})
    return pd.DataFrame(rows)


def _progress(ax, trials, traces, label, percent_of=None, t_max=None):
    """Median and min-max of best error (or % of ``percent_of``) vs time over a group's runs."""
    curves = []
    for r in trials.to_dict("records"):
        tr = traces.get((r.get("source"), r["run_id"]))
        if tr is not None and len(tr["time_s"]) and np.isfinite(tr["time_s"]).all():
            curves.append(tr)
    if not curves:
        return False
    end = t_max or max(float(c["time_s"][-1]) for c in curves)
    grid = np.geomspace(max(min(float(c["time_s"][0]) for c in curves), 1e-4), end, 200)
    values = np.array([c["best_error"][np.clip(np.searchsorted(c["time_s"], grid, side="right") - 1, 0, None)]
                       for c in curves], dtype=float)
    if percent_of:
        values = 100.0 * values / percent_of
    values = np.maximum(values, 1e-6 if percent_of else 1e-300)
    line, = ax.plot(grid, np.median(values, axis=0), label=label)
    ax.fill_between(grid, values.min(axis=0), values.max(axis=0), alpha=0.2, color=line.get_color())
    return True


def figure_lop_progress(trials, traces, out_dir) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..problems.lop import optima

    runs = _runs(trials)
    runs = runs[runs["function"] == FIG6_INSTANCE]
    if not len(runs):
        return []
    fig, ax = plt.subplots(figsize=(5, 3.2))
    # the paper's Fig. 6 has "CPU" and "GPU" only (sec. 5.2: "a sequential DE implementation", without
    # saying which of sec. 5.3's two CPU programs): every CPU implementation is "CPU" here
    drawn = [_progress(ax, g, traces, f"{'GPU' if c == 'gpu' else 'CPU'} ({impl})",
                       percent_of=float(optima().loc[FIG6_INSTANCE, "optimum"]))
             for (c, impl), g in runs.groupby(["column", "implementation"])]
    if not any(drawn):
        plt.close(fig)
        return []
    ax.set(xscale="log", yscale="log", xlabel="wall-clock time (s)", ylabel="error % (floor 1e-6)",
           title=wrap(f"{FIG6_INSTANCE}: median and range over runs ({made_by(runs)})", 60))
    ax.legend(fontsize=8)
    fig.tight_layout()
    paths = save_figure(fig, Path(out_dir) / "figure_lop_progress")
    plt.close(fig)
    return paths


# --- Table 4 and Figs. 8-9 --------------------------------------------------------------------------

def etc_table(trials: pd.DataFrame, published: pd.DataFrame | None) -> pd.DataFrame:
    from ..instances import catalog
    from ..problems.scheduling import instances

    runs = _runs(trials)
    runs = runs[runs["function"].isin(list(catalog("etc")))]
    parts = [json.loads(s) if isinstance(s, str) and s else {} for s in runs.get("solution", [])]
    runs = runs.assign(makespan=[p.get("makespan", np.nan) for p in parts],
                       flowtime=[p.get("flowtime", np.nan) for p in parts])
    table = (runs.groupby(["function", "popsize", "implementation", "column", "machine"])
             .agg(n=("best_error", "size"), fit_mean=("best_error", "mean"), fit_std=("best_error", "std"),
                  fit_best=("best_error", "min"), makespan_mean=("makespan", "mean"),
                  flowtime_mean=("flowtime", "mean"), fes_mean=("fes_used", "mean"))
             .reset_index().rename(columns={"function": "etc"}))
    table["min_min_makespan"] = table["etc"].map(instances()["minmin_makespan_computed"])
    if published is not None and len(table):
        p = published.set_index(["etc", "popsize", "implementation"])["fitness"]
        table["paper_fit"] = [p.get((e, n, c), np.nan) for e, n, c in
                              zip(table["etc"], table["popsize"], table["column"])]
        table["ours_over_paper"] = table["fit_mean"] / table["paper_fit"]
        best = published.loc[published.groupby(["etc", "popsize"])["fitness"].idxmin()]
        best = best.set_index(["etc", "popsize"])["implementation"]
        table["paper_best"] = [best.get((e, n), np.nan) for e, n in zip(table["etc"], table["popsize"])]
    return table


def best_columns(table: pd.DataFrame, value: str) -> pd.DataFrame:
    """Per (etc, popsize): the column with the lowest ``value`` (the paper's bold)."""
    t = table.dropna(subset=[value])
    idx = t.groupby(["etc", "popsize"])[value].idxmin()
    return t.loc[idx, ["etc", "popsize", "column"]].rename(columns={"column": f"best_by_{value}"})


def figure_etc_progress(trials, traces, out_dir) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..instances import catalog

    runs = _runs(trials)
    runs = runs[runs["function"].isin(list(catalog("etc"))) & (runs["popsize"] == FIG_POPSIZE)]
    paths = []
    for prefix, figno in (("Th", 8), ("Tl", 9)):
        names = [n for n in catalog("etc") if n.startswith(prefix) and n in set(runs["function"])]
        if not names:
            continue
        fig, axes = plt.subplots(2, 3, figsize=(10, 5.5), squeeze=False)
        for ax, name in zip(axes.flat, names):
            for (c, impl), g in runs[runs["function"] == name].groupby(["column", "implementation"]):
                _progress(ax, g, traces, f"{COLUMN_NAMES.get(c, c)} ({impl})")
            ax.set(xscale="log", yscale="log", title=name, xlabel="time (s)", ylabel="fit")
        for ax in list(axes.flat)[len(names):]:
            ax.axis("off")
        axes.flat[0].legend(fontsize=7)
        fig.suptitle(wrap(f"Fit vs time, NP = {FIG_POPSIZE} (the paper's Fig. {figno}): median and range over runs "
                          f"({made_by(runs)}; traces may be thinned to a point per 0.1 decade)", 130), fontsize=9)
        fig.tight_layout()
        paths += save_figure(fig, Path(out_dir) / f"figure_etc_progress_{prefix}")
        plt.close(fig)
    return paths


# --- Figs. 5 and 7 --------------------------------------------------------------------------------

#: the GPU evaluation the CPU ones are set against: the pre-bound launch where it was measured (the
#: many-threaded DE launches so), else the launch through the evaluator's function object
GPU_DEVICES = ("gpu_prebound", "gpu")


def eval_speed_table(speed: pd.DataFrame) -> pd.DataFrame:
    """Per (problem, popsize): seconds per population evaluation on each device, and the CPU / GPU
    ratios the paper quotes (the speed-up of the GPU over each CPU evaluator), against the pre-bound
    launch where the CSV has it (``gpu_device`` says which); ``machine`` names the host and GPU."""
    t = speed.pivot_table(index=["problem", "instance", "popsize"], columns="device",
                          values="seconds_median").reset_index()
    t.columns.name = None
    gpu = next((d for d in GPU_DEVICES if d in t), None)
    if gpu is not None:
        t["gpu_device"] = gpu
        for cpu in ("cpu", "cpu_parallel"):
            if cpu in t:
                t[f"{cpu}_over_gpu"] = t[cpu] / t[gpu]
    if {"gpu", "cpu", "cpu_cores"} <= set(speed):
        first = speed.iloc[0]
        t["machine"] = f"{first['gpu']} / {first['cpu']} x{first['cpu_cores']}"
    return t


def fe_rate_table(rate: pd.DataFrame, trials: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per case (problem, D, NP, CR, machine): each implementation's FEs per second (one run alone,
    ``benchmarks/kromer_fe_rate.py``), and the ratios of the paper's columns: GPU / CPU, GPU / CPU opt.
    and CPU opt. / CPU (``PAPER_COLUMN``). ``stopped_early`` names the implementations whose run ended
    before its budget (at the optimum: its rate is over the shorter time). Where ``trials`` (the
    experiment's rows) hold the case, ``reference_over_alone_<implementation>``: the median FEs of its
    runs there over what one run alone makes in their budget (rate x ``max_time_s``): below 1 where
    runs shared the machine (CPU runs side by side, GPU runs several per launch)."""
    from ..machines import machine_label

    rate = rate.assign(machine=[machine_label(r) for r in rate.to_dict("records")])
    keys = ["problem", "dim", "popsize", "CR", "machine"]
    t = rate.pivot_table(index=keys, columns="implementation", values="fes_per_s", sort=False).reset_index()
    t.columns.name = None
    early = rate[rate["wall_time_s"] < 0.99 * rate["seconds"]]
    stopped = early.groupby(keys)["implementation"].agg(lambda v: ", ".join(sorted(v)))
    t["stopped_early"] = [stopped.get(tuple(r[k] for k in keys), "") for r in t.to_dict("records")]
    gpu, cpu, opt = (IMPLEMENTATION_OF[c] for c in ("gpu", "cpu", "cpu_optimized"))
    for name, a, b in (("gpu_over_cpu", gpu, cpu), ("gpu_over_cpu_optimized", gpu, opt),
                       ("cpu_optimized_over_cpu", opt, cpu)):
        t[name] = t[a] / t[b] if a in t and b in t else np.nan
    if trials is not None and len(trials) and {"function", "popsize", "fes_used", "max_time_s"} <= set(trials):
        ok = trials[~trials["status"].astype(str).str.startswith("error")] if "status" in trials else trials
        median = ok.groupby(["implementation", "function", "popsize"])[["fes_used", "max_time_s"]].median()
        for i in (cpu, opt, gpu):
            if i in t:
                t[f"reference_over_alone_{i}"] = [
                    median.loc[(i, r["problem"], r["popsize"]), "fes_used"]
                    / (median.loc[(i, r["problem"], r["popsize"]), "max_time_s"] * r[i])
                    if (i, r["problem"], r["popsize"]) in median.index else np.nan for r in t.to_dict("records")]
    return t


def _processes_at_once(rows: pd.DataFrame, row: dict) -> tuple[int, str]:
    """How many processes ran during ``row``'s run on its machine instance: the rows of the same
    ``boot_id`` whose run [end - wall time, end] overlaps it by more than a second (``timestamp_utc``
    is a run's end, to the second), counting a GPU launch (its rows timed ``exclusive``: the trials of
    one cell in one process) once and every other row (one CPU run per process) as its own."""
    end = pd.to_datetime(rows["timestamp_utc"], utc=True).map(pd.Timestamp.timestamp)
    start = end - rows["wall_time_s"]
    r_end = pd.Timestamp(row["timestamp_utc"]).timestamp()
    r_start = r_end - row["wall_time_s"]
    o = rows[(rows["boot_id"] == row["boot_id"]) & (start < r_end - 1.0) & (end > r_start + 1.0)]
    launch = o["concurrency"].astype(str).str.startswith("exclusive")
    parts = [f"{n} {impl}" for impl, n in o[~launch].groupby("implementation").size().items()]
    for impl, g in o[launch].groupby("implementation"):
        k = g.groupby(["function", "dim", "popsize", "dtype"]).ngroups
        parts.append(f"{k} {impl} launch{'es' if k > 1 else ''}")
    cells = ["implementation", "function", "dim", "popsize", "dtype"]
    launches = o[launch].groupby(cells).ngroups if launch.any() else 0
    return int((~launch).sum()) + launches, " + ".join(parts)


def contention_table(check: pd.DataFrame, reference: pd.DataFrame | None = None) -> pd.DataFrame:
    """The FEs a 30 s run makes against how many ran at once: per (implementation, cell, at_once) of the
    contention check (rows of ``gpude run`` with ``at_once``), the runs, the FEs of the probe trial
    (the lowest trial run alone) and its ratio to the same trial alone, and the min / median / max
    FEs over the group; then, from ``reference`` (the experiment's reference rows), the same cell's
    rows with the processes that ran beside the probe trial's (:func:`_processes_at_once`)."""
    keys = ["implementation", "function", "popsize"]
    rows = []
    for key, g in check.groupby(keys, sort=False):
        alone = g[g["at_once"] == 1]
        probe = int(alone["trial"].min()) if len(alone) else int(g["trial"].min())
        alone_fes = float(alone.loc[alone["trial"] == probe, "fes_used"].iloc[0]) if len(alone) else np.nan
        groups = [(int(k), f"{int(k)} {key[0]}", "check", part) for k, part in g.groupby("at_once")]
        if reference is not None and len(reference):
            cell = reference[(reference[keys] == pd.Series(dict(zip(keys, key)))).all(axis=1)]
            cell = cell[~cell["status"].astype(str).str.startswith("error")]
            if len(cell) and (cell["trial"] == probe).any():
                p = cell[cell["trial"] == probe].iloc[0].to_dict()
                groups.append((*_processes_at_once(reference, p), "reference", cell))
        for at_once, which, source, part in groups:
            at_probe = part.loc[part["trial"] == probe, "fes_used"]
            fes = float(at_probe.iloc[0]) if len(at_probe) else np.nan
            rows.append({**dict(zip(keys, key)), "source": source, "at_once": at_once, "processes": which,
                         "boot_id": ", ".join(sorted(set(part["boot_id"].astype(str)))), "runs": len(part),
                         "probe_trial": probe, "probe_fes": fes, "probe_over_alone": fes / alone_fes,
                         "fes_min": part["fes_used"].min(), "fes_median": part["fes_used"].median(),
                         "fes_max": part["fes_used"].max(), "min_over_alone": part["fes_used"].min() / alone_fes})
    return pd.DataFrame(rows, columns=[*keys, "source", "at_once", "processes", "boot_id", "runs", "probe_trial",
                                       "probe_fes", "probe_over_alone", "fes_min", "fes_median", "fes_max", "min_over_alone"])


def _count(n, of) -> str:
    return f"{n} of {of}"


def claims_check(claims: pd.DataFrame, etc: pd.DataFrame | None = None, published4: pd.DataFrame | None = None,
                 fe_rate: pd.DataFrame | None = None, speed: pd.DataFrame | None = None) -> pd.DataFrame:
    """The claims with a ``check`` key that our tables can answer: the paper's value, what its own
    table gives where it has one, ours, and whether ours agrees. Table 4's claims are counts of cells
    (the best column, from ``etc_table``); the speed-ups are ranges: ours from the FE-rate table (whole
    DE runs alone on the ETC cases) and, for the optimised CPU, the evaluation alone (``eval_speed``:
    one compiled thread over the GPU at NP 64-1024)."""
    if "check" not in claims:
        return pd.DataFrame()
    rows = []
    consistent = lambda e: str(e).endswith("Cc")  # noqa: E731  (Braun et al.'s consistent matrices)

    def best_of(table, value, column):  # (etc, popsize) -> the best column
        t = table.dropna(subset=[value])
        return t.loc[t.groupby(["etc", "popsize"])[value].idxmin()].set_index(["etc", "popsize"])[column]

    ours = best_of(etc, "fit_mean", "column") if etc is not None and len(etc) else None
    paper = (best_of(published4.rename(columns={"implementation": "column"}), "fitness", "column")
             if published4 is not None and len(published4) else None)

    def cells(best, which):
        if best is None:
            return None
        if which == "gpu_best_np512_1024":
            b = best[best.index.get_level_values("popsize") > 64]
            return (b == "gpu").sum(), len(b)
        b = best[best.index.get_level_values("popsize") == 64]
        cons = np.array([consistent(e) for e in b.index.get_level_values("etc")])
        if which == "cpu_opt_best_np64_consistent":
            return (b[cons] == "cpu_optimized").sum(), int(cons.sum())
        if which == "gpu_best_np64_other":
            return (b[~cons] == "gpu").sum(), int((~cons).sum())
        return None

    def np64_best(table, value):
        if table is None or not len(table):
            return None
        t = table.dropna(subset=[value])
        top = t.loc[t.groupby("etc")[value].idxmin()]
        return int((top["popsize"] == 64).sum()), len(top)

    def opt_beats_cpu(table, value, column):
        if table is None or not len(table):
            return None
        w = table[table["popsize"] == 64].pivot_table(index="etc", columns=column, values=value)
        if not {"cpu", "cpu_optimized"} <= set(w.columns):
            return None
        w = w.dropna(subset=["cpu", "cpu_optimized"])
        return int((w["cpu_optimized"] < w["cpu"]).sum()), len(w)

    def ratio_range(which):
        parts = []
        if fe_rate is not None and len(fe_rate):
            f = fe_rate[fe_rate["problem"].astype(str).str.startswith(("Th", "Tl"))]
            col = "gpu_over_cpu" if which == "gpu_over_cpu_speed" else "gpu_over_cpu_optimized"
            if col in f and f[col].notna().any():
                parts.append(("whole DE, FE rate (ETC, NP "
                              + "/".join(str(int(n)) for n in f["popsize"]) + ")", f[col].min(), f[col].max()))
        if which == "gpu_over_cpu_opt_speed" and speed is not None and len(speed) and "cpu_over_gpu" in speed:
            e = speed[(speed["problem"] == "etc") & speed["popsize"].between(64, 1024)]
            if len(e):
                parts.append(("evaluation alone, one compiled thread (eval_speed, NP 64-1024)",
                              e["cpu_over_gpu"].min(), e["cpu_over_gpu"].max()))
        return parts

    for r in claims.dropna(subset=["check"]).to_dict("records"):
        key, lo, hi = r["check"], float(r["value_low"]), float(r["value_high"])
        stated = f"{lo:g}" if lo == hi else f"{lo:g}-{hi:g}"
        row = {"claim": r["claim"], "figure_or_table": r["figure_or_table"], "check": key,
               "paper_text": f"{stated} {r['unit']}", "paper_table": "", "ours": "", "holds": ""}
        if key in ("gpu_best_np512_1024", "cpu_opt_best_np64_consistent", "gpu_best_np64_other",
                   "np64_most_successful", "cpu_opt_beats_cpu_np64"):
            if key == "np64_most_successful":
                got = np64_best(etc, "fit_mean")
                own = np64_best(published4, "fitness")
            elif key == "cpu_opt_beats_cpu_np64":
                got = opt_beats_cpu(etc, "fit_mean", "column")
                own = opt_beats_cpu(published4, "fitness", "implementation")
            else:
                got, own = cells(ours, key), cells(paper, key)
            if got is None or not got[1]:
                continue
            row["paper_table"] = _count(*own) if own else ""
            row["ours"] = _count(*got)
            row["holds"] = "yes" if got[0] == got[1] else ("mostly" if got[0] >= 0.75 * got[1] else "no")
        elif key in ("gpu_over_cpu_speed", "gpu_over_cpu_opt_speed"):
            parts = ratio_range(key)
            if not parts:
                continue
            row["ours"] = "; ".join(f"{a:.3g}-{b:.3g}x ({what})" for what, a, b in parts)
            verdicts = ["within" if lo <= a and b <= hi else "above" if a > hi else "below" if b < lo
                        else "overlaps" for _, a, b in parts]
            row["holds"] = "; ".join(verdicts)
        else:
            continue
        rows.append(row)
    return pd.DataFrame(rows, columns=["claim", "figure_or_table", "check", "paper_text", "paper_table", "ours",
                                       "holds"])


def figure_eval_speed(table: pd.DataFrame, out_dir) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    problems = list(dict.fromkeys(table["problem"]))
    fig, axes = plt.subplots(1, len(problems), figsize=(4.5 * len(problems), 3.2), squeeze=False)
    for ax, problem in zip(axes.flat, problems):
        t = table[table["problem"] == problem]
        for device, label in (("cpu", "CPU, one compiled thread"), ("cpu_parallel", "CPU, every core"),
                              ("gpu_prebound", "GPU, pre-bound launch (as the DE)"),
                              ("gpu", "GPU, through the function object")):
            if device in t and t[device].notna().any():
                ax.plot(t["popsize"], t[device], marker="o", label=label)
        fig_no = 5 if problem == "lop" else 7
        ax.set(xscale="log", yscale="log", xlabel="population size", ylabel="s per evaluation of the population",
               title=f"{problem.upper()} {t['instance'].iloc[0]} (the paper's Fig. {fig_no})")
        ax.legend(fontsize=7)
    if "machine" in table:
        fig.suptitle(table["machine"].iloc[0], fontsize=8)
    fig.tight_layout()
    paths = save_figure(fig, Path(out_dir) / "figure_eval_speed")
    plt.close(fig)
    return paths


def write_outputs(trials: pd.DataFrame, traces: dict, out_dir, **inputs) -> list[Path]:
    unknown = set(inputs) - set(STUDY_INPUTS)
    if unknown:
        from ..errors import InvalidInputError

        raise InvalidInputError(f"the kromer section reads no study input {', '.join(sorted(unknown))}; "
                                f"its inputs (report: study_inputs:): {', '.join(STUDY_INPUTS)}")
    out_dir = Path(out_dir)
    read = {k: _read(v) for k, v in inputs.items() if v}
    files = []
    if "claims" in read:
        files.append(write_csv_atomic(read["claims"], out_dir / "claims.csv"))
    etc = speed = rate = None
    if "table1" in read:
        files.append(write_csv_atomic(rastrigin_table(trials, traces, read["table1"]), out_dir / "table_rastrigin.csv"))
    lop_published = {n: read[f"table{n}"] for n in (2, 3) if f"table{n}" in read}
    if lop_published:
        table = lop_table(trials, traces, lop_published)
        files += [write_csv_atomic(table, out_dir / "table_lop.csv"),
                  write_csv_atomic(lop_summary(table, lop_published), out_dir / "lop_summary.csv")]
        files += figure_lop_progress(trials, traces, out_dir)
    if "table4" in read:
        etc = etc_table(trials, read["table4"])
        if len(etc):
            etc = etc.merge(best_columns(etc, "fit_mean"), on=["etc", "popsize"], how="left")
        files.append(write_csv_atomic(etc, out_dir / "table_etc.csv"))
        files += figure_etc_progress(trials, traces, out_dir)
    if "eval_speed" in read and len(read["eval_speed"]):
        speed = eval_speed_table(read["eval_speed"])
        files += [write_csv_atomic(speed, out_dir / "eval_speed.csv"), *figure_eval_speed(speed, out_dir)]
    if "fe_rate" in read and len(read["fe_rate"]):
        rate = fe_rate_table(read["fe_rate"], trials)
        files.append(write_csv_atomic(rate, out_dir / "fe_rate.csv"))
    if "contention" in read and len(read["contention"]):
        files.append(write_csv_atomic(contention_table(read["contention"], trials), out_dir / "contention.csv"))
    if "claims" in read and etc is not None:  # the checked claims are sec. 5.3's (task scheduling)
        checked = claims_check(read["claims"], etc, read.get("table4"), rate, speed)
        if len(checked):
            files.append(write_csv_atomic(checked, out_dir / "claims_check.csv"))
    return files


def _pct(v) -> str:
    return fmt(v, "{:.2e}")


class Kromer(Section):

    write_outputs = staticmethod(write_outputs)
    study = "Krömer et al."
    generic_outputs = ()  # a time budget per run: every run's wall time is the budget

    def __init__(self, spec, paper_dir, report_dir):
        super().__init__(spec, paper_dir, report_dir)
        self.rastrigin = _read(self.dir / "table_rastrigin.csv")
        self.lop = _read(self.dir / "table_lop.csv")
        self.lop_summary = _read(self.dir / "lop_summary.csv")
        self.etc = _read(self.dir / "table_etc.csv")
        self.speed = _read(self.dir / "eval_speed.csv")
        self.fe_rate = _read(self.dir / "fe_rate.csv")
        self.contention = _read(self.dir / "contention.csv")
        self.claims = _read(self.dir / "claims.csv")
        self.claims_check = _read(self.dir / "claims_check.csv")

    def title(self) -> str:
        return f"Krömer, Platoš, Snášel & Abraham: many-threaded DE on the GPU — {self.spec.get('description', '')}"

    def verdicts(self) -> list[Verdict]:
        """Table 1 (Rastrigin), Tables 2-3 (LOP) and Table 4 (ETC), whichever this experiment makes: our
        n against the paper's, our errors against the paper's (within a factor of 2 either way: the same
        magnitude), and for Table 4 the paper's claims checked (``claims_check.csv``)."""
        wanted, machines = paper_n(self.spec), "; ".join(self.machines)
        tuned = "F and CR chosen by our pilot, the paper gives none: docs/kromer.md"
        rows = []
        if len(self.rastrigin):
            t = self.rastrigin
            gpu = t[t["implementation"] == "many_threaded"]
            early = gpu["mean_0.64s"] / gpu["paper_0.64s"]
            late = gpu["mean_27s"] / gpu["paper_27s"]
            rows.append(coverage_verdict(
                "Table 1", n_by(t), wanted,
                f"many-threaded DE's mean error at 0.64 s {ratio_span(early)} the paper's, at 27 s "
                f"{', '.join(fmt(v, '{:.3g}') for v in gpu['mean_27s'])} (paper "
                f"{', '.join(fmt(v, '{:.3g}') for v in gpu['paper_27s'])}; D = {', '.join(map(str, gpu['dim']))}; "
                f"{machines})", magnitude_finding(list(early) + list(late.replace(0, np.nan))) or "holds in part",
                f"our errors are far below the paper's ({tuned}; another GPU)"))
        if len(self.lop_summary):
            t = self.lop_summary
            ours = t[t["implementation"] == "many_threaded"]
            above = int(ours[["above_paper_5s", "above_paper_10s"]].sum().sum())
            ratios = list(ours["over_paper_5s"]) + list(ours["over_paper_10s"])
            finding = "does not hold" if above else magnitude_finding(ratios)
            runs = self.lop.groupby(["implementation", "instance"])["n"].min().reset_index() \
                if len(self.lop) and "instance" in self.lop and "n" in self.lop else pd.DataFrame()
            rows.append(coverage_verdict(
                "Tables 2-3, Fig. 6", n_by(runs) if len(runs) else {"many_threaded": (wanted, wanted)}, wanted,
                f"many-threaded DE's mean error % {ratio_span(ratios)} the paper's (5 s and 10 s); above the "
                f"paper's on {above} instances ({machines})", finding,
                f"instances above the paper's error: {above}" if above else
                f"our errors are more than {SAME_MAGNITUDE:g}x below the paper's ({tuned}; another GPU)"))
        if len(self.claims_check):
            c = self.claims_check
            holds = c["holds"].astype(str)
            yes = int(holds.str.fullmatch("yes").sum())
            no = int(holds.str.contains(r"\bno\b").sum())
            finding = "holds" if yes == len(c) else ("does not hold" if no == len(c) else "holds in part")
            rows.append(coverage_verdict(
                "Table 4, Figs. 7-9", n_by(self.etc) if len(self.etc) else {}, wanted,
                f"of the paper's {len(c)} claims on Table 4 and Figs. 7-9: {yes} hold, {len(c) - yes - no} in part "
                f"(mostly, or ranges that overlap), {no} not ({machines})", finding,
                "claims in part: " + "; ".join(f"{r['claim']} ({r['holds']})" for r in c.to_dict("records")
                                                if str(r["holds"]) != "yes")))
        if not rows:  # no results: the items the experiment's description names
            named = re.search(r"\((Tables? [^)]*)\)", str(self.spec.get("description", "")))
            rows.append(coverage_verdict(named.group(1) if named else self.spec["name"], {}, wanted, ""))
        return rows

    def protocol(self) -> str:
        s = self.spec
        de = s["algorithms"]["de"]
        budget = s.get("max_time_s")
        return (f"Protocol (`config/experiments/{s['name']}.yaml`, whose comments give the reasons): DE/rand/1/bin, "
                f"F = {de.get('F')}, CR = {de.get('CR')}, NP = {', '.join(map(str, de['popsizes']))} (none of the "
                f"three is given in the paper; the choice and its pilot: `docs/kromer.md`); implementations "
                f"{', '.join(de['implementations'])} ({self.mapping(de['implementations'])}); {budget:g} s of wall "
                f"time per run; seeds from {s['seed']}. The paper's hardware: a Tesla C2050 beside two dual-core "
                "AMD Opterons at 2.6 GHz; ours is named in every table.")

    def mapping(self, implementations) -> str:
        """Which implementation stands for which of the paper's programs, in this experiment's terms."""
        inputs = self.spec.get("report", {}).get("study_inputs", {})
        gpu = IMPLEMENTATION_OF["gpu"]
        if "table4" in inputs:
            return ("the paper's CPU = " + ", CPU opt. = ".join(IMPLEMENTATION_OF[c] for c in ("cpu", "cpu_optimized"))
                    + f", GPU = {gpu}; sec. 5.3: {PAPER_COLUMNS_QUOTE}. `high_level` is the DE in "
                    "plain Python and numpy (no JIT), `sequential` the same DE compiled by numba on one thread; "
                    "the three make the same run for a seed and differ in speed only")
        kinds = "; ".join(f"{i} is of sec. 5.3's {COLUMN_NAMES[PAPER_COLUMN[i]]} kind"
                          + (" (one thread, compiled)" if i == "sequential" else " (plain Python and numpy)"
                             if i == "high_level" else "")
                          for i in implementations if i != gpu and i in PAPER_COLUMN)
        if "table2" in inputs or "table3" in inputs:
            return (f"the paper's GPU DE = {gpu}; sec. 5.2 compares it with \"a sequential DE implementation\" "
                    "(Fig. 6: \"CPU\") without saying which of sec. 5.3's two CPU programs (the high-level C++ one "
                    "or the optimised C one) that was" + (f"; {kinds}" if kinds else ""))
        return (f"the paper's many-threaded DE = {gpu}; sec. 5.1's Table 1 has no CPU column (it sets the GPU DE "
                "beside de Veronese & Krohling's GPU DE)" + (f"; ours for reference: {kinds}" if kinds else ""))

    def rastrigin_markdown(self) -> str:
        t = self.rastrigin
        if not len(t):
            return ""
        lines = ["**Table 1** (Rastrigin f2, unshifted, [-5.12, 5.12]^D; value of the best solution; ours: mean and "
                 "best over n runs, read at 0.64 s and 27 s of one 27 s run; paper: the many-threaded DE's value at "
                 "0.66 s and 27.0 s; de Veronese & Krohling ran 100 variables: 278.18 after 0.64 s, 98.53 after "
                 "27.47 s).", "",
                 "| implementation | D | machine | n | ours 0.64 s mean (best) | paper 0.66 s | ours 27 s mean (best) | paper 27 s |",
                 "|---|---|---|---|---|---|---|---|"]
        for r in t.to_dict("records"):
            lines.append(f"| {r['implementation']} | {r['dim']} | {r['machine']} | {r['n']} | "
                         f"{fmt(r['mean_0.64s'])} ({fmt(r['best_0.64s'])}) | {fmt(r.get('paper_0.64s'))} | "
                         f"{fmt(r['mean_27s'])} ({fmt(r['best_27s'])}) | {fmt(r.get('paper_27s'))} |")
        return "\n".join(lines) + "\n"

    def lop_markdown(self) -> str:
        t, s = self.lop, self.lop_summary
        if not len(t):
            return ""
        lines = ["**Tables 2 and 3** (error % = 100 (optimum - f) / optimum with the proven optima of "
                 "`data/lolib/optima.csv`: Table 2 the LOLIB matrices, Table 3 the normalised N-LOLIB ones). "
                 f"Ours: {'; '.join(self.machines)}, n runs per instance as the per-instance table gives. "
                 "Summary: the mean over instances of the mean error %, and the instances where every run reached "
                 "the optimum after 5 s and after 10 s. 'paper (GPU)' is computed from the transcribed tables; "
                 "the paper's text says 0.043 / 0.031 % and 15 of 49 for LOLIB (as its table gives) and 0.034 / "
                 "0.037 % and 18 of 50 for N-LOLIB (its table gives 0.0375 / 0.0367 % and 15; "
                 "`tests/test_kromer_published.py`).", "",
                 "| table | implementation | instances (runs) | mean avg error % 5 s | mean avg error % 10 s | "
                 "ours / paper 5 s, 10 s | instances below / equal / above the paper's mean, 5 s; 10 s | "
                 "solved in every run |",
                 "|---|---|---|---|---|---|---|---|"]

        def count(r, t):
            cells = [r.get(f"{k}_paper_{t}s") for k in ("below", "equal", "above")]
            return "-" if any(pd.isna(c) for c in cells) else " / ".join(str(int(c)) for c in cells)

        for r in s.to_dict("records"):
            runs = f" ({int(r['runs'])})" if pd.notna(r.get("runs")) else ""
            ratio = ("-" if pd.isna(r.get("over_paper_5s")) else
                     f"{fmt(r['over_paper_5s'], '{:.2g}')}, {fmt(r['over_paper_10s'], '{:.2g}')}")
            lines.append(f"| {r['table']} | {r['implementation']} | {r['instances']}{runs} | "
                         f"{fmt(r['mean_avg_5s'], '{:.2g}')} | {fmt(r['mean_avg_10s'], '{:.2g}')} | {ratio} | "
                         f"{count(r, 5)}; {count(r, 10)} | {r['solved_every_run']} |")
        lines += ["", "Ours / paper: our mean over the table's instances of the per-instance mean error over the "
                  "paper's (from its table; 0 where every run of every instance reached the optimum). Below / "
                  "equal / above: per instance, our mean error over the runs against the paper's mean over its "
                  "10 runs (equal: mostly both 0)."]
        gpu = t[t["implementation"] == "many_threaded"]
        cpu = t[t["implementation"] == "sequential"].set_index("instance")
        if len(gpu):
            lines += ["", f"Per instance (GPU = many_threaded on {', '.join(sorted(set(gpu['machine'])))}; mean error % "
                      "over its runs, best in parentheses; CPU = sequential, the compiled one-thread DE: the "
                      "paper's \"sequential DE implementation\", of unstated kind; in sec. 5.3's terms ours is "
                      "the CPU opt. kind):", "",
                      "| instance | n | paper 5 s | GPU 5 s | paper 10 s | GPU 10 s | CPU 10 s |", "|---|---|---|---|---|---|---|"]
            for r in gpu.sort_values(["table", "instance"]).to_dict("records"):
                c = cpu["avg_10s"].get(r["instance"], np.nan) if len(cpu) else np.nan
                lines.append(f"| {r['instance']} | {r['n']} | {_pct(r.get('paper_avg_5s'))} | {_pct(r['avg_5s'])} "
                             f"({_pct(r['best_5s'])}) | {_pct(r.get('paper_avg_10s'))} | {_pct(r['avg_10s'])} "
                             f"({_pct(r['best_10s'])}) | {_pct(c)} |")
        return "\n".join(lines) + "\n"

    def etc_markdown(self) -> str:
        t = self.etc
        if not len(t):
            return ""
        machines = []
        for c in COLUMNS:
            part = t[t["column"] == c]
            if len(part):
                per = part.groupby("machine").size()
                machines.append(f"{COLUMN_NAMES[c]} ({IMPLEMENTATION_OF.get(c, c)}): " + "; ".join(
                    f"{m}" + (f" ({k} cells)" if len(per) > 1 else "") for m, k in per.items()))
        lines = ["**Table 4** (fit = 0.75 makespan + 0.25 flowtime / 16 of the best schedule after 30 s, mean over "
                 "n runs; lower is better; the paper's lambda is not stated, so its values compare in magnitude, not "
                 "digit for digit). Per column: ours (n), the paper's value and ours / paper; best = the column "
                 "with the lowest mean in the row (the paper's bold), ours and the paper's. Machines: "
                 + "; ".join(machines) + ".", "",
                 "| ETC | NP | " + " | ".join(f"{COLUMN_NAMES[c]} ours (n) | paper | ours / paper" for c in COLUMNS)
                 + " | best, ours | best, paper |", "|---" * (4 + 3 * len(COLUMNS)) + "|"]
        for (etc, popsize), g in t.groupby(["etc", "popsize"]):
            cells = []
            for c in COLUMNS:
                part = g[g["column"] == c].to_dict("records")  # one row per machine the cell ran on
                if part:
                    cells += ["; ".join(f"{fmt(r['fit_mean'])} ({r['n']})" for r in part),
                              fmt(part[0].get("paper_fit")),
                              "; ".join(fmt(r.get("ours_over_paper"), "{:.2f}") for r in part)]
                else:
                    cells += ["-", "-", "-"]
            ours_best = g["best_by_fit_mean"].iloc[0] if "best_by_fit_mean" in g else np.nan
            paper_best = g["paper_best"].iloc[0] if "paper_best" in g else np.nan
            lines.append(f"| {etc} | {popsize} | " + " | ".join(cells) + f" | {COLUMN_NAMES.get(ours_best, '-')} | "
                         f"{COLUMN_NAMES.get(paper_best, '-')} |")
        if "ours_over_paper" in t:
            spans = []
            for c in COLUMNS:
                r = t.loc[t["column"] == c, "ours_over_paper"].dropna()
                if len(r):
                    spans.append(f"{COLUMN_NAMES[c]} {r.min():.2f}-{r.max():.2f} (median {r.median():.2f})")
            same = int((t.drop_duplicates(["etc", "popsize"]).pipe(
                lambda d: d["best_by_fit_mean"] == d["paper_best"])).sum()) if "paper_best" in t else 0
            lines += ["", f"Ours / paper over the cells: {'; '.join(spans)}. The best column is the paper's in "
                      f"{same} of {t.drop_duplicates(['etc', 'popsize']).shape[0]} rows." + self._cpu_caveat()]
        return "\n".join(lines) + "\n"

    def _cpu_caveat(self) -> str:
        """What the contention check says about the CPU columns' FEs (where it ran)."""
        c = self.contention
        if not len(c):
            return ""
        ref = c[c["source"] == "reference"]
        if not len(ref):
            return ""
        parts = [f"{r['implementation']} {r['at_once']} processes at once ({r['processes']}), "
                 f"{r['probe_over_alone']:.2f}x its FEs alone" for r in ref.to_dict("records")]
        return (" The CPU columns ran side by side on the host (`shared`), and the contention check below shows "
                "what that cost a run on one cell: " + "; ".join(parts) + ". The CPU columns therefore stand for fewer "
                "FEs than one such run alone would make; the GPU column ran " + self._per_launch()
                + ", one launch per GPU, each run a share of it (the FE table below).")

    def _per_launch(self) -> str:
        k = self.spec.get("trials_per_launch", {})
        k = k.get(IMPLEMENTATION_OF["gpu"], k.get("default", 1)) if isinstance(k, dict) else k
        return f"{k} per launch"

    def fe_rate_markdown(self) -> str:
        t = self.fe_rate
        if not len(t):
            return ""
        impl = [IMPLEMENTATION_OF[c] for c in COLUMNS]
        lines = ["**FEs per second** of the three columns (`benchmarks/kromer_fe_rate.py`: one run of 3 s of "
                 "each implementation, alone on the machine, after a warm-up; F = 0.5, the experiments' CR). "
                 "The paper: \"The GPU implementation was 25.2 - 216.5 times faster than CPU implementation and "
                 "2.2 - 12.5 times faster than optimized CPU implementation\" (sec. 5.3, of the evaluation of a "
                 "population, Fig. 7, Tesla C2050 against a 2.6 GHz Opteron); ours are whole DE runs (`high_level`: "
                 "the DE's operators in Python and numpy, the evaluation compiled as `sequential`'s). Machine: "
                 + "; ".join(sorted(set(t["machine"]))) + ".", "",
                 "| case | D | NP | CR | " + " | ".join(f"{COLUMN_NAMES[PAPER_COLUMN[i]]} ({i}) FEs/s" for i in impl)
                 + " | GPU / CPU | GPU / CPU opt. | CPU opt. / CPU |", "|---" * (7 + len(impl)) + "|"]
        for r in t.to_dict("records"):
            early = r.get("stopped_early")
            note = f" (reached the optimum before the budget: {early})" if isinstance(early, str) and early else ""
            lines.append(f"| {r['problem']}{note} | {r['dim']} | {r['popsize']} | {r['CR']:g} | "
                         + " | ".join(fmt(r.get(i), "{:.3g}") for i in impl)
                         + f" | {fmt(r.get('gpu_over_cpu'), '{:.1f}')} | {fmt(r.get('gpu_over_cpu_optimized'), '{:.1f}')}"
                         f" | {fmt(r.get('cpu_optimized_over_cpu'), '{:.1f}')} |")
        share = [c for c in (f"reference_over_alone_{i}" for i in impl) if c in t]
        held = t.dropna(subset=share, how="all") if share else t.iloc[:0]
        if len(held):
            lines += ["", "The same cases in this experiment's reference: the median FEs of a run there over what "
                      "one run alone makes in the same time (above). Below 1: the CPU runs ran side by side on "
                      "the host's cores (contention, below), the GPU runs " + self._per_launch() + ", each a share "
                      "of the GPU (the paper does not say it ran several at once).", "",
                      "| case | NP | " + " | ".join(f"{COLUMN_NAMES[PAPER_COLUMN[i]]} ({i})" for i in impl) + " |",
                      "|---" * (2 + len(impl)) + "|"]
            for r in held.to_dict("records"):
                lines.append(f"| {r['problem']} | {r['popsize']} | "
                             + " | ".join(fmt(r.get(f"reference_over_alone_{i}"), "{:.2f}") for i in impl) + " |")
        return "\n".join(lines) + "\n"

    def contention_markdown(self) -> str:
        c = self.contention
        if not len(c):
            return ""
        lines = ["**Contention**: the FEs of a 30 s run of one cell against how many runs shared the host "
                 "(`results/benchmarks/kromer_contention_*.csv`: the same seeds as the reference's rows, alone "
                 "and k at once; 'reference' = the reference's own rows of that cell, with the processes that ran "
                 "during its probe trial, counted from the rows' time stamps: CPU runs one per process, a GPU "
                 "launch as one).", "",
                 "| implementation | cell | rows | at once | instance | runs | probe trial's FEs | x alone | FEs min / median / max |",
                 "|---|---|---|---|---|---|---|---|---|"]
        for r in c.to_dict("records"):
            at_once = f"{r['at_once']}" + (f" ({r['processes']})" if r["source"] == "reference" else "")
            lines.append(f"| {r['implementation']} | {r['function']} NP {r['popsize']} | {r['source']} | {at_once} | "
                         f"{r['boot_id']} | {r['runs']} | {r['probe_fes']:,.0f} (t{r['probe_trial']}) | "
                         f"{fmt(r['probe_over_alone'], '{:.3f}')} | {r['fes_min']:,.0f} / {r['fes_median']:,.0f} / "
                         f"{r['fes_max']:,.0f} |")
        return "\n".join(lines) + "\n"

    def claims_markdown(self) -> str:
        c = self.claims_check
        if not len(c):
            return ""
        lines = ["**The paper's claims on our data** (`paper/published/kromer_claims.csv`, rows with a `check`; "
                 "'paper's table' = what the paper's own Table 4 gives for the claim):", "",
                 "| claim | where | paper's text | paper's table | ours | holds |", "|---|---|---|---|---|---|"]
        for r in c.to_dict("records"):
            lines.append(f"| {r['claim']} | {r['figure_or_table']} | {r['paper_text']} | "
                         f"{'' if pd.isna(r['paper_table']) else r['paper_table']} | {r['ours']} | {r['holds']} |")
        return "\n".join(lines) + "\n"

    def speed_markdown(self) -> str:
        t = self.speed
        if not len(t):
            return ""
        gpu = t["gpu_device"].iloc[0] if "gpu_device" in t else "gpu"
        launch = ("the pre-bound launch the many-threaded DE makes (`gpu_prebound`)" if gpu == "gpu_prebound" else
                  "a launch through the evaluator's function object (`gpu`)")
        machine = f" Machine: {t['machine'].iloc[0]}." if "machine" in t else ""
        lines = ["**Evaluation speed** (Figs. 5 and 7; `benchmarks/kromer_eval_speed.py`): seconds per evaluation of "
                 "a population (median of 20), GPU with the data on the device, launched by " + launch + "; "
                 "cpu = one compiled thread (numba: the paper's optimised CPU kind), cpu_parallel = every core."
                 + machine + " The paper: for LOP the Tesla equalled the Opteron at "
                 "16 candidates and was 1.4-9.7x faster above; for schedules the GPU was 25.2-216.5x faster than the "
                 "(high-level) CPU and 2.2-12.5x faster than the optimised CPU. No high-level evaluator is timed "
                 "here: the FEs per second above have the CPU column.", "",
                 "| problem | NP | cpu s | cpu_parallel s | gpu s | cpu / gpu | cpu_parallel / gpu |",
                 "|---|---|---|---|---|---|---|"]
        for r in t.to_dict("records"):
            lines.append(f"| {r['problem']} | {r['popsize']} | {fmt(r.get('cpu'), '{:.3g}')} | "
                         f"{fmt(r.get('cpu_parallel'), '{:.3g}')} | {fmt(r.get(gpu), '{:.3g}')} | "
                         f"{fmt(r.get('cpu_over_gpu'), '{:.2g}')} | {fmt(r.get('cpu_parallel_over_gpu'), '{:.2g}')} |")
        lop = t[t["problem"] == "lop"] if "cpu_over_gpu" in t else t.iloc[:0]
        if len(lop):
            faster = lop[lop["cpu_over_gpu"] >= 1]
            lines += ["", "LOP against the paper's Fig. 5: " + (
                f"the GPU is at least as fast as one CPU thread from NP {int(faster['popsize'].min())} on (the paper: "
                f"from 16), {fmt(faster['cpu_over_gpu'].min(), '{:.2g}')}-{fmt(faster['cpu_over_gpu'].max(), '{:.3g}')}x"
                f" faster at NP {int(faster['popsize'].min())}-{int(faster['popsize'].max())} (the paper: 1.4-9.7x"
                " above 16); below, a launch and its wait cost more than the CPU's whole evaluation"
                if len(faster) else "one CPU thread is faster at every NP measured")
                + "."]
        return "\n".join(lines) + "\n"

    def body(self) -> str:
        return "\n".join(part for part in [
            self.protocol(), "",
            self.rastrigin_markdown(), self.lop_markdown(),
            self.figure("figure_lop_progress", "Error % vs time on be75eec, GPU and CPU (the paper's Fig. 6)"),
            self.etc_markdown(),
            self.figure("figure_etc_progress_Th", "Fit vs time for the ThM*C* matrices, NP = 64 (the paper's Fig. 8; "
                        "a reference's traces may be thinned to a point per 0.1 decade, so a step is up to 26 %)"),
            self.figure("figure_etc_progress_Tl", "Fit vs time for the TlM*C* matrices, NP = 64 (the paper's Fig. 9; "
                        "the same)"),
            self.fe_rate_markdown(), self.contention_markdown(),
            self.speed_markdown(),
            self.figure("figure_eval_speed", "Seconds per population evaluation (the paper's Figs. 5 and 7)"),
            self.claims_markdown(),
            "### Statistics", "", self.statistics(), self.sources()] if part is not None)
