"""Convergence (best error vs FEs) and ECDF (targets reached vs FEs) figures from batch traces.

Traces are per batch (``results/<experiment>/batches/.../chunk<k>.npz``, written by
``gpude run``): concatenated per-generation best errors with ``trial_start`` offsets.
The FEs axis is used because implementations whose host does not see every generation
(all_gpu, ide) record no per-generation time.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..io import save_figure

TARGETS = 10.0 ** np.arange(2, -9, -1)  # 1e2 .. 1e-8, as COCO's fixed targets


def load_traces(trials: pd.DataFrame) -> list[dict]:
    """One dict per trial: implementation, function, fes, best_error (arrays)."""
    out = []
    for path, rows in trials.dropna(subset=["trace_path"]).groupby("trace_path"):
        with np.load(path) as z:
            starts = list(z["trial_start"]) + [len(z["fes"])]
            where = {int(t): k for k, t in enumerate(z["trial"])}
            for _, row in rows.iterrows():
                k = where.get(int(row["trial"]))
                if k is None:
                    continue
                sl = slice(starts[k], starts[k + 1])
                out.append({"implementation": row["implementation"], "function": row["function"],
                            "fes": z["fes"][sl].astype(float), "best_error": z["best_error"][sl]})
    return out


def _grid(traces):
    fes_max = max(float(t["fes"][-1]) for t in traces)
    return np.unique(np.geomspace(max(1.0, min(float(t["fes"][0]) for t in traces)), fes_max, 200))


def _best_at(trace, grid):
    # best error after each grid point (step function; before the first record: the first value)
    idx = np.searchsorted(trace["fes"], grid, side="right") - 1
    return trace["best_error"][np.clip(idx, 0, None)]


def figures(trials: pd.DataFrame, out_dir, device: str = "") -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    traces = load_traces(trials)
    functions = sorted({t["function"] for t in traces})
    impls = list(dict.fromkeys(t["implementation"] for t in traces))
    cols = min(5, len(functions))
    rows = -(-len(functions) // cols)
    colors = {impl: f"C{k}" for k, impl in enumerate(impls)}  # one colour per implementation everywhere
    paths = []
    for kind in ("convergence", "ecdf"):
        fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 2.6 * rows), squeeze=False)
        for ax, f in zip(axes.flat, functions):
            ft = [t for t in traces if t["function"] == f]
            grid = _grid(ft)
            for impl in impls:
                mine = [t for t in ft if t["implementation"] == impl]
                if not mine:
                    continue
                vals = np.array([_best_at(t, grid) for t in mine])
                if kind == "convergence":
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
            ax.set_xlabel("function evaluations", fontsize=7)
            ax.set_ylabel("best error" if kind == "convergence" else "targets reached", fontsize=7)
            ax.set_title(f, fontsize=9)
            ax.tick_params(labelsize=7)
        for ax in list(axes.flat)[len(functions):]:
            ax.axis("off")
        handles = [plt.Line2D([], [], color=colors[i], label=i) for i in impls]
        axes.flat[0].legend(handles=handles, fontsize=7)
        what = ("median best error (band: min-max over trials) vs FEs" if kind == "convergence" else
                "fraction of (trial, target) pairs reached, targets 1e2..1e-8, vs FEs")
        fig.suptitle(f"{what} {('(' + device + ')') if device else ''}", fontsize=9)
        fig.tight_layout()
        paths += save_figure(fig, Path(out_dir) / kind, dpi=130)
        plt.close(fig)
    return paths
