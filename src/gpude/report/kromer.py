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
* ``claims`` (``paper/published/kromer_claims.csv``): the paper's numeric claims, put beside ours.

**Values at a time t** are read from a run's trace: the best error of the last generation that ended
by t (traces keep a point whenever the best fell by 0.01 decades, so a value read between points is at
most 2.3% above the run's; at t = the budget, the row's final best is used). The paper made separate
5 s and 10 s (0.64 s and 27 s) runs; a run does not know its budget, so the best of a 10 s run at 5 s
is a 5 s run's.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from ..io import save_figure, write_csv_atomic
from .section import Section, _read, fmt

#: gpude implementation -> the paper's column (Table 4: "CPU", "CPU opt.", "GPU")
PAPER_COLUMN = {"sequential": "cpu", "master_slave": "cpu_optimized", "many_threaded": "gpu"}
COLUMN_NAMES = {"cpu": "CPU", "cpu_optimized": "CPU opt.", "gpu": "GPU"}
STUDY_INPUTS = ("table1", "table2", "table3", "table4", "eval_speed", "claims")
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
    """Per table and implementation: instances, mean of the per-instance mean error % after 5 s and
    10 s, instances solved in every run; the paper's own numbers beside (from its table)."""
    rows = []
    for (number, impl), g in table.groupby(["table", "implementation"]):
        rows.append({"table": number, "implementation": impl, "instances": len(g),
                     "mean_avg_5s": g["avg_5s"].mean(), "mean_avg_10s": g["avg_10s"].mean(),
                     "solved_every_run": int(g["solved_every_run"].sum())})
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
    drawn = [_progress(ax, g, traces, f"{COLUMN_NAMES.get(c, c)} ({impl})",
                       percent_of=float(optima().loc[FIG6_INSTANCE, "optimum"]))
             for (c, impl), g in runs.groupby(["column", "implementation"])]
    if not any(drawn):
        plt.close(fig)
        return []
    ax.set(xscale="log", yscale="log", xlabel="wall-clock time (s)", ylabel="error % (floor 1e-6)",
           title=f"{FIG6_INSTANCE}: median and range over runs")
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
        fig.suptitle(f"Fit vs time, NP = {FIG_POPSIZE} (the paper's Fig. {figno}): median and range over runs")
        fig.tight_layout()
        paths += save_figure(fig, Path(out_dir) / f"figure_etc_progress_{prefix}")
        plt.close(fig)
    return paths


# --- Figs. 5 and 7 --------------------------------------------------------------------------------

def eval_speed_table(speed: pd.DataFrame) -> pd.DataFrame:
    """Per (problem, popsize): seconds per population evaluation on each device, and the CPU / GPU
    ratios the paper quotes (the speed-up of the GPU over each CPU evaluator)."""
    t = speed.pivot_table(index=["problem", "instance", "popsize"], columns="device",
                          values="seconds_median").reset_index()
    for cpu in ("cpu", "cpu_parallel"):
        if cpu in t and "gpu" in t:
            t[f"{cpu}_over_gpu"] = t[cpu] / t["gpu"]
    return t


def figure_eval_speed(table: pd.DataFrame, out_dir) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    problems = list(dict.fromkeys(table["problem"]))
    fig, axes = plt.subplots(1, len(problems), figsize=(4.5 * len(problems), 3.2), squeeze=False)
    for ax, problem in zip(axes.flat, problems):
        t = table[table["problem"] == problem]
        for device in ("cpu", "cpu_parallel", "gpu"):
            if device in t:
                ax.plot(t["popsize"], t[device], marker="o", label=device)
        fig_no = 5 if problem == "lop" else 7
        ax.set(xscale="log", yscale="log", xlabel="population size", ylabel="s per evaluation of the population",
               title=f"{problem.upper()} {t['instance'].iloc[0]} (the paper's Fig. {fig_no})")
        ax.legend(fontsize=8)
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
    if "table1" in read:
        files.append(write_csv_atomic(rastrigin_table(trials, traces, read["table1"]), out_dir / "table_rastrigin.csv"))
    lop_published = {n: read[f"table{n}"] for n in (2, 3) if f"table{n}" in read}
    if lop_published:
        table = lop_table(trials, traces, lop_published)
        files += [write_csv_atomic(table, out_dir / "table_lop.csv"),
                  write_csv_atomic(lop_summary(table, lop_published), out_dir / "lop_summary.csv")]
        files += figure_lop_progress(trials, traces, out_dir)
    if "table4" in read:
        table = etc_table(trials, read["table4"])
        if len(table):
            table = table.merge(best_columns(table, "fit_mean"), on=["etc", "popsize"], how="left")
        files.append(write_csv_atomic(table, out_dir / "table_etc.csv"))
        files += figure_etc_progress(trials, traces, out_dir)
    if "eval_speed" in read and len(read["eval_speed"]):
        table = eval_speed_table(read["eval_speed"])
        files += [write_csv_atomic(table, out_dir / "eval_speed.csv"), *figure_eval_speed(table, out_dir)]
    return files


def _pct(v) -> str:
    return fmt(v, "{:.2e}")


class Kromer(Section):

    write_outputs = staticmethod(write_outputs)
    generic_outputs = ()  # a time budget per run: every run's wall time is the budget

    def __init__(self, spec, paper_dir, report_dir):
        super().__init__(spec, paper_dir, report_dir)
        self.rastrigin = _read(self.dir / "table_rastrigin.csv")
        self.lop = _read(self.dir / "table_lop.csv")
        self.lop_summary = _read(self.dir / "lop_summary.csv")
        self.etc = _read(self.dir / "table_etc.csv")
        self.speed = _read(self.dir / "eval_speed.csv")
        self.claims = _read(self.dir / "claims.csv")

    def title(self) -> str:
        return f"Krömer, Platoš, Snášel & Abraham: many-threaded DE on the GPU — {self.spec.get('description', '')}"

    def protocol(self) -> str:
        s = self.spec
        de = s["algorithms"]["de"]
        budget = s.get("max_time_s")
        return (f"Protocol (`config/experiments/{s['name']}.yaml`, whose comments give the reasons): DE/rand/1/bin, "
                f"F = {de.get('F')}, CR = {de.get('CR')}, NP = {', '.join(map(str, de['popsizes']))} (none of the "
                f"three is given in the paper; the choice and its pilot: `docs/kromer.md`); implementations "
                f"{', '.join(de['implementations'])} (the paper's GPU = many_threaded, CPU = sequential, CPU opt. = "
                f"master_slave); {budget:g} s of wall time per run; seeds from {s['seed']}. The paper's hardware: "
                "a Tesla C2050 beside two dual-core AMD Opterons at 2.6 GHz; ours is named in every table.")

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
                 "Summary: the mean over instances of the mean error %, and the instances where every run reached "
                 "the optimum after 5 s and after 10 s. 'paper (GPU)' is computed from the transcribed tables; "
                 "the paper's text says 0.043 / 0.031 % and 15 of 49 for LOLIB (as its table gives) and 0.034 / "
                 "0.037 % and 18 of 50 for N-LOLIB (its table gives 0.0375 / 0.0367 % and 15; "
                 "`tests/test_kromer_published.py`).", "",
                 "| table | implementation | instances | mean avg error % 5 s | mean avg error % 10 s | solved in every run |",
                 "|---|---|---|---|---|---|"]
        for r in s.to_dict("records"):
            lines.append(f"| {r['table']} | {r['implementation']} | {r['instances']} | {fmt(r['mean_avg_5s'], '{:.3f}')} | "
                         f"{fmt(r['mean_avg_10s'], '{:.3f}')} | {r['solved_every_run']} |")
        gpu = t[t["implementation"] == "many_threaded"]
        cpu = t[t["implementation"] == "sequential"].set_index("instance")
        if len(gpu):
            lines += ["", f"Per instance (GPU = many_threaded on {', '.join(sorted(set(gpu['machine'])))}; mean error % "
                      "over its runs, best in parentheses; CPU = sequential):", "",
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
        lines = ["**Table 4** (fit = 0.75 makespan + 0.25 flowtime / 16 of the best schedule after 30 s, mean over "
                 "n runs; lower is better; the paper's lambda is not stated, so its values compare in magnitude, not "
                 "digit for digit). Ours / paper per column; best = the column with the lowest mean in the row (the "
                 "paper's bold).", "",
                 "| ETC | NP | column | machine | n | ours | paper | ours / paper | makespan | Min-Min makespan |",
                 "|---|---|---|---|---|---|---|---|---|---|"]
        for r in t.sort_values(["etc", "popsize", "column"]).to_dict("records"):
            best = " **best**" if r.get("best_by_fit_mean") == r["column"] else ""
            lines.append(f"| {r['etc']} | {r['popsize']} | {COLUMN_NAMES.get(r['column'], r['column'])}{best} | "
                         f"{r['machine']} | {r['n']} | {fmt(r['fit_mean'])} | {fmt(r.get('paper_fit'))} | "
                         f"{fmt(r.get('ours_over_paper'), '{:.2f}')} | {fmt(r['makespan_mean'])} | "
                         f"{fmt(r['min_min_makespan'])} |")
        return "\n".join(lines) + "\n"

    def speed_markdown(self) -> str:
        t = self.speed
        if not len(t):
            return ""
        lines = ["**Evaluation speed** (Figs. 5 and 7; `benchmarks/kromer_eval_speed.py`): seconds per evaluation of "
                 "a population, GPU with the data on the device. The paper: for LOP the Tesla equalled the Opteron at "
                 "16 candidates and was 1.4-9.7x faster above; for schedules the GPU was 25.2-216.5x faster than the "
                 "CPU and 2.2-12.5x faster than the optimised CPU.", "",
                 "| problem | NP | cpu / gpu | cpu_parallel / gpu |", "|---|---|---|---|"]
        for r in t.to_dict("records"):
            lines.append(f"| {r['problem']} | {r['popsize']} | {fmt(r.get('cpu_over_gpu'), '{:.1f}')} | "
                         f"{fmt(r.get('cpu_parallel_over_gpu'), '{:.1f}')} |")
        return "\n".join(lines) + "\n"

    def body(self) -> str:
        return "\n".join(part for part in [
            self.protocol(), "", self.sources(),
            self.rastrigin_markdown(), self.lop_markdown(),
            self.figure("figure_lop_progress", "Error % vs time on be75eec, GPU and CPU (the paper's Fig. 6)"),
            self.etc_markdown(),
            self.figure("figure_etc_progress_Th", "Fit vs time for the ThM*C* matrices, NP = 64 (the paper's Fig. 8)"),
            self.figure("figure_etc_progress_Tl", "Fit vs time for the TlM*C* matrices, NP = 64 (the paper's Fig. 9)"),
            self.speed_markdown(),
            self.figure("figure_eval_speed", "Seconds per population evaluation (the paper's Figs. 5 and 7)"),
            "### Statistics", "", self.statistics()] if part is not None)
