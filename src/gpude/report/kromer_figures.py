"""The figures of Krömer et al.'s study: error % vs time on a LOP instance (Fig. 6), fit vs time on
the ETC matrices (Figs. 8-9), seconds per population evaluation (Figs. 5 and 7); median and
range over runs, from their traces.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..core.io import save_figure
from .kromer_tables import COLUMN_NAMES, paper_runs
from .panels import wrap
from .sources import made_by

#: the LOP instance of the paper's Fig. 6, and the NP of its Figs. 8-9
FIG6_INSTANCE = "be75eec"
FIG_POPSIZE = 64


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
    """Fig. 6: error % vs time on be75eec, a curve per implementation (none: no file)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..problems.lop import optima

    runs = paper_runs(trials)
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


def figure_etc_progress(trials, traces, out_dir) -> list[Path]:
    """Figs. 8-9: fit vs time at NP = 64, a panel per ThM*C* (Fig. 8) or TlM*C* (Fig. 9) matrix."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..problems.instances import catalog

    runs = paper_runs(trials)
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


def figure_eval_speed(table: pd.DataFrame, out_dir) -> list[Path]:
    """Figs. 5 and 7: seconds per population evaluation vs NP, a panel per problem, from
    :func:`gpude.report.kromer_tables.eval_speed_table`."""
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
