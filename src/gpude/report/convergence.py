"""Convergence (best error vs FEs and vs wall-clock time) and ECDF (targets reached vs FEs)
figures from trial traces.

Traces come from the merged ``traces.npz`` beside each trials table (thinned best-so-far
curves, see :func:`gpude.run.rows.thin_trace`). Implementations whose host does not see every
generation (all_gpu, ide) record no per-generation time: their time axis spreads the trial's wall
time evenly over its FEs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..core.io import save_figure
from .panels import label_panel, panel_grid, title_figure
from .sources import made_by
from .timing import ORDER, _ordered, implementation_labels

TARGETS = 10.0 ** np.arange(2, -9, -1)  # 1e2 .. 1e-8, as COCO's fixed targets


def trial_traces(trials: pd.DataFrame, traces: dict) -> list[dict]:
    """One dict per trial that has a trace: label, function, fes, best_error."""
    several = trials["machine"].nunique() > 1 if "machine" in trials else False
    out = []
    for row, impl in zip(trials.to_dict("records"), implementation_labels(trials)):  # pso/gpu, ss/gpu
        t = traces.get((row.get("source"), row["run_id"]))
        if t is None or len(t["fes"]) == 0:
            continue
        label = impl + (f" ({row['machine']})" if several else "")
        fes = t["fes"].astype(float)
        time_s = np.asarray(t["time_s"], dtype=float)
        if not np.isfinite(time_s).all():
            # implementations whose host does not see every generation record no per-generation
            # time; a generation costs the same throughout a run, so spread the wall time by FEs
            time_s = fes / float(row["fes_used"]) * float(row["wall_time_s"])
        out.append({"implementation": label, "function": row["function"], "fes": fes,
                    "time": np.maximum(time_s, 1e-6), "best_error": t["best_error"]})
    return out


def _grid(traces, x="fes"):
    hi = max(float(t[x][-1]) for t in traces)
    lo = min(float(t[x][0]) for t in traces)
    return np.unique(np.geomspace(max(lo, hi * 1e-9, 1e-6), max(hi, lo * 1.0001, 2e-6), 200))


def _best_at(trace, grid, x="fes"):
    # best error after each grid point (step function; before the first record: the first value)
    idx = np.searchsorted(trace[x], grid, side="right") - 1
    return trace["best_error"][np.clip(idx, 0, None)]


def figures(trials: pd.DataFrame, traces: dict, out_dir, device: str = "") -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import LogLocator, NullLocator

    traces = trial_traces(trials, traces)
    if not traces:  # e.g. every trial failed: say so in the figures the workflow expects
        paths = []
        for kind in ("convergence", "convergence_time", "ecdf"):
            fig, ax = plt.subplots(figsize=(4, 2))
            ax.text(0.5, 0.5, "no traces in these results", ha="center", va="center")
            ax.axis("off")
            paths += save_figure(fig, Path(out_dir) / kind, dpi=100)
            plt.close(fig)
        return paths
    functions = sorted({t["function"] for t in traces})
    impls = _ordered(list(dict.fromkeys(t["implementation"] for t in traces)))
    # one colour per implementation in every figure (the bar chart's too)
    colors = {impl: f"C{ORDER.index(impl) if impl in ORDER else len(ORDER) + k}" for k, impl in enumerate(impls)}
    paths = []
    for kind, x in (("convergence", "fes"), ("convergence_time", "time"), ("ecdf", "fes")):
        fig, axes = panel_grid(len(functions))
        for ax, f in zip(axes.flat, functions):
            ft = [t for t in traces if t["function"] == f]
            grid = _grid(ft, x)
            for impl in impls:
                mine = [t for t in ft if t["implementation"] == impl]
                if not mine:
                    continue
                vals = np.array([_best_at(t, grid, x) for t in mine])
                if kind != "ecdf":
                    med = np.median(vals, axis=0)
                    ax.plot(grid, np.maximum(med, 1e-12), label=impl, color=colors[impl])
                    ax.fill_between(grid, np.maximum(vals.min(0), 1e-12), np.maximum(vals.max(0), 1e-12),
                                    alpha=0.15, color=colors[impl])
                    ax.set_yscale("log")
                else:
                    reached = (vals[:, None, :] <= TARGETS[None, :, None]).mean(axis=(0, 1))
                    ax.step(grid, reached, where="post", label=impl, color=colors[impl])
                    ax.set_ylim(-0.02, 1.02)
            ax.set_xscale("log")
            label_panel(ax, f, "function evaluations" if x == "fes" else "wall-clock time (s)",
                        "targets reached" if kind == "ecdf" else "best error")
            # log axes spanning 20 decades get hundreds of minor ticks, each a text to measure at every
            # draw (most of the time of a 20-panel figure): a few major ticks say what is needed
            for axis in (ax.xaxis, ax.yaxis):
                if axis.get_scale() == "log":
                    axis.set_major_locator(LogLocator(numticks=5))
                    axis.set_minor_locator(NullLocator())
        handles = [plt.Line2D([], [], color=colors[i], label=i) for i in impls]
        axes.flat[0].legend(handles=handles, fontsize=7)
        what = {"convergence": "median best error (band: min-max over trials) vs FEs",
                "convergence_time": "median best error (band: min-max over trials) vs wall-clock time",
                "ecdf": "fraction of (trial, target) pairs reached, targets 1e2..1e-8, vs FEs"}[kind]
        title_figure(fig, f"{what} ({device or made_by(trials)})")
        paths += save_figure(fig, Path(out_dir) / kind, dpi=130)
        plt.close(fig)
    return paths
