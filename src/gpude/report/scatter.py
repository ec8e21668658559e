"""Janssen et al.'s Fig. 7 for any experiment: every trial's final error against its wall-clock
time, a panel per function, a colour per competitor."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..core.io import save_figure
from .panels import label_panel, panel_grid, title_figure
from .sources import made_by
from .timing import ORDER, _ordered, implementation_labels


def log_ticks(lo: float, hi: float, most: int = 6) -> list[float]:
    """At most ``most`` tick positions in [lo, hi] for a log axis: 1, 2 and 5 x 10^k, else only
    the decades (every n-th where there are many), else, in a narrow range, 1..9 x 10^k."""
    if not (np.isfinite(lo) and np.isfinite(hi)) or lo <= 0 or hi <= lo:
        return []
    decades = range(int(np.floor(np.log10(lo))), int(np.ceil(np.log10(hi))) + 1)

    def inside(mantissas):
        return [m * 10.0 ** k for k in decades for m in mantissas if lo <= m * 10.0 ** k <= hi]

    for mantissas in ((1, 2, 5), (1,)):
        ticks = inside(mantissas)
        if 2 <= len(ticks) <= most:
            return ticks
    ticks = inside((1,))
    if len(ticks) > most:
        return ticks[:: -(-len(ticks) // most)]
    ticks = inside(range(1, 10))
    return ticks[:: max(1, -(-len(ticks) // 4))]


def error_vs_time(trials: pd.DataFrame, out_dir, label: str = "implementation") -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    ok = trials[trials["wall_time_s"].notna() & trials["best_error"].notna()]
    if label == "implementation":  # pso/gpu and ss/gpu, not "gpu" twice
        ok = ok.assign(implementation=implementation_labels(ok))
    functions = sorted(ok["function"].unique()) or ["(no trials)"]
    competitors = _ordered(list(dict.fromkeys(ok[label])))
    fig, axes = panel_grid(len(functions), height=2.8)
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
        # a panel often spans less than a decade, where matplotlib's minor labels (6x10^-2,
        # 7x10^-2, ...) run into each other: a few ticks of our own, in plain numbers
        for axis, limits in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
            axis.set_major_locator(FixedLocator(log_ticks(*limits)))
            axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            axis.set_minor_locator(NullLocator())  # unlabelled minor ticks are still measured at every draw
        label_panel(ax, f, "wall-clock time (s)", "final error")
    if competitors:
        axes.flat[0].legend(fontsize=6, ncol=2)
    title_figure(fig, f"final error vs wall-clock time, one point per trial ({made_by(ok)})")
    paths = save_figure(fig, Path(out_dir) / "error_vs_time", dpi=130)
    plt.close(fig)
    return paths
