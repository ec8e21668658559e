"""Janssen et al.'s Fig. 7 for any experiment: every trial's final error against its wall-clock
time, a panel per function, a colour per competitor."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..io import save_figure
from .timing import ORDER, _ordered


def error_vs_time(trials: pd.DataFrame, out_dir, label: str = "implementation") -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ok = trials[trials["wall_time_s"].notna() & trials["best_error"].notna()]
    functions = sorted(ok["function"].unique()) or ["(no trials)"]
    competitors = _ordered(list(dict.fromkeys(ok[label])))
    cols = min(5, len(functions))
    rows = -(-len(functions) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 2.8 * rows), squeeze=False)
    markers = "os^vDP*X<>"
    for ax, f in zip(axes.flat, functions):
        part = ok[ok["function"] == f]
        for k, c in enumerate(competitors):
            mine = part[part[label] == c]
            colour = ORDER.index(c) if c in ORDER else k  # the bar chart's colour for the five models
            ax.scatter(mine["wall_time_s"], np.maximum(mine["best_error"], 1e-12), s=10, alpha=0.7,
                       color=f"C{colour % 10}", marker=markers[(k // 10) % len(markers)], label=str(c))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(f, fontsize=9)
        ax.set_xlabel("wall-clock time (s)", fontsize=7)
        ax.set_ylabel("final error", fontsize=7)
        ax.tick_params(labelsize=7)
    for ax in list(axes.flat)[len(functions):]:
        ax.axis("off")
    if competitors:
        axes.flat[0].legend(fontsize=6, ncol=2)
    fig.suptitle("final error vs wall-clock time, one point per trial", fontsize=9)
    fig.tight_layout()
    paths = save_figure(fig, Path(out_dir) / "error_vs_time", dpi=130)
    plt.close(fig)
    return paths
