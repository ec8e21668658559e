"""Time per run of DE on the GPU against NP and D, beside the floor (issue 25, item 7): the table and
figure of ``benchmarks/scaling.py``'s CSVs (``results/benchmarks/scaling/<device>.csv``) in case
study 1's section of the REPORT.

Not Qin et al.'s figures of time against NP (:mod:`gpude.report.scaling`): those come from an
experiment's trials; these from a benchmark that sweeps NP and D around case study 1's setting for
the GPU implementations, with the roofline floor of ``benchmarks/de_floor.py`` beside them.

``write_outputs`` (at ``gpude paper`` time) turns the CSVs into ``scaling.csv`` and one
``figure_scaling_<device>`` per device in the paper folder; ``markdown`` (at report time) writes the
section from ``scaling.csv`` alone. No CSV, no numbers: the section says what to run instead.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..functions.suites import FUNCTIONS
from ..io import save_figure, write_csv_atomic
from ..provenance import slug
from .panels import label_panel, panel_grid, title_figure

SOURCE = "results/benchmarks/scaling"
COMMAND = "python benchmarks/scaling.py --functions F01,F10,N05 --out results/benchmarks/scaling --max-seconds 500"
COLUMNS = ["device", "function", "implementation", "trials_per_launch", "line", "dim", "popsize", "base_dim",
           "base_popsize", "max_fes", "dtype", "repeats", "runs", "wall_s_per_run", "wall_s_per_run_std",
           "floor_s_run", "over_floor", "floor_device", "best_error_mean", "fes_mean", "status", "git_commit",
           "timestamp_utc", "source"]
#: the lines' drawing order and colours (others follow in the CSV's order)
LINE_ORDER = ["ide", "resident", "all_gpu"]


def line_label(implementation: str, trials_per_launch: int) -> str:
    """'ide', or 'ide, 30/launch' for a batched line (its own line in the table and figure)."""
    return implementation if int(trials_per_launch) == 1 else f"{implementation}, {int(trials_per_launch)}/launch"


def load(source) -> pd.DataFrame:
    """The rows of a CSV, or of every CSV in a folder (failed points too: their status says why);
    empty when there is none."""
    source = Path(source)
    files = sorted(source.glob("*.csv")) if source.is_dir() else [source] if source.is_file() else []
    frames = [pd.read_csv(f).assign(source=str(f)) for f in files]
    if not frames:
        return pd.DataFrame(columns=COLUMNS)
    return pd.concat(frames, ignore_index=True)


def table(df: pd.DataFrame) -> pd.DataFrame:
    """One row per (device, function, line, D, NP): the time per run, the floor and their ratio (a
    failed point: its status, no time)."""
    if not len(df):
        return pd.DataFrame(columns=COLUMNS)
    t = df.assign(line=[line_label(i, b) for i, b in zip(df["implementation"], df["trials_per_launch"])],
                  over_floor=df["wall_s_per_run"] / df["floor_s_run"])
    order = {impl: k for k, impl in enumerate(LINE_ORDER)}
    t = t.assign(_o=[order.get(i, len(order)) for i in t["implementation"]])
    t = t.sort_values(["device", "function", "_o", "trials_per_launch", "dim", "popsize"])
    return t[[c for c in COLUMNS if c in t]].reset_index(drop=True)


def _sweeps(part: pd.DataFrame):
    """The NP sweep (at the base D) and the D sweep (at the base NP) of one device and function."""
    base_dim, base_popsize = int(part["base_dim"].iloc[0]), int(part["base_popsize"].iloc[0])
    return ((part[part["dim"] == base_dim], "popsize", f"NP (D={base_dim})"),
            (part[part["popsize"] == base_popsize], "dim", f"D (NP={base_popsize})"))


def figure(t: pd.DataFrame, device: str, out_dir) -> list[Path]:
    """Per function two panels, time per run against NP and against D (log-log), a line per
    implementation (batched on its own line) and the floor dashed (per trials per launch)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    d = t[(t["device"] == device) & (t["status"] == "ok")]
    functions = list(dict.fromkeys(d["function"]))
    fig, axes = panel_grid(2 * len(functions), width=3.6, height=2.9, most_columns=2)
    colours = {line: f"C{k}" for k, line in enumerate(dict.fromkeys(d["line"]))}
    for row, fid in enumerate(functions):
        for ax, (sweep, x, xlabel) in zip(axes[row], _sweeps(d[d["function"] == fid])):
            for line, g in sweep.groupby("line", sort=False):
                g = g.sort_values(x)
                ax.errorbar(g[x], g["wall_s_per_run"], yerr=g["wall_s_per_run_std"].fillna(0), marker="o",
                            ms=3, lw=1, capsize=2, color=colours[line], label=line)
            for b, g in sweep.drop_duplicates([x, "trials_per_launch"]).groupby("trials_per_launch"):
                g = g.sort_values(x)
                ax.plot(g[x], g["floor_s_run"], ls="--" if b == 1 else ":", color="0.3", lw=1,
                        label="floor" if b == 1 else f"floor, {b}/launch")
            ax.set(xscale="log", yscale="log")
            label_panel(ax, f"{fid}: time per run vs {xlabel.split()[0]}", xlabel, "s per run")
    axes[0][0].legend(fontsize=6)
    budget = ", ".join(f"{m:,}" for m in sorted(d["max_fes"].unique()))
    title_figure(fig, f"Time per run on {device} ({budget} FEs per run; dashed: the floor)")
    paths = save_figure(fig, Path(out_dir) / f"figure_scaling_{slug(device)}")
    plt.close(fig)
    return paths


def write_outputs(source, out_dir) -> list[Path]:
    """``scaling.csv`` (empty when nothing was measured) and a figure per device in ``out_dir``."""
    t = table(load(source))
    files = [write_csv_atomic(t, Path(out_dir) / "scaling.csv")]
    for device in dict.fromkeys(t["device"]):
        files += figure(t, device, out_dir)
    return files


def _cell(v) -> str:
    return "-" if v is None or pd.isna(v) else f"{v:.3g}"


def _sweep_table(d: pd.DataFrame, which: int) -> list[str]:
    """A Markdown table of one sweep of a device: a row per function and line, one per floor, a
    column per value of the swept axis (those of every function; '-' where a function has none)."""
    d = d[d["status"] == "ok"]
    parts = [_sweeps(d[d["function"] == fid])[which] for fid in dict.fromkeys(d["function"])]
    x, xlabel = parts[0][1], parts[0][2]
    xs = sorted(set().union(*(set(sweep[x]) for sweep, _, _ in parts)))
    lines = [f"| function | {xlabel} | " + " | ".join(map(str, xs)) + " |", "|---" * (len(xs) + 2) + "|"]
    for sweep, _, _ in parts:
        fid = sweep["function"].iloc[0]
        for line, g in sweep.groupby("line", sort=False):
            s = g.set_index(x)["wall_s_per_run"]
            lines.append(f"| {fid} | {line} | " + " | ".join(_cell(s.get(v)) for v in xs) + " |")
        for b, g in sweep.groupby("trials_per_launch"):
            s = g.drop_duplicates(x).set_index(x)["floor_s_run"]
            name = "floor" if b == 1 else f"floor, {b}/launch"
            lines.append(f"| {fid} | *{name}* | " + " | ".join(_cell(s.get(v)) for v in xs) + " |")
    return lines + [""]


def markdown(t: pd.DataFrame, figure_of=lambda stem, caption: "") -> str:
    """The section's text from ``scaling.csv``; ``figure_of(stem, caption)`` links a figure."""
    head = ["### Time per run against NP and D, beside the floor", "",
            "Measured by `benchmarks/scaling.py`: DE/rand/1/bin (F=0.5, CR=0.3, float32) with no target, "
            "so every run spends the FE budget; per point `ide` (one trial per launch), `resident` (the "
            "whole run in one cooperative launch), `ide` with several trials per launch (a batch's fair "
            "share per run) and `all_gpu`. Seconds per run, mean over the runs (compilation excluded). The "
            "floor is `benchmarks/de_floor.py`'s roofline bound at the same point (flops and bytes per "
            "generation over the device's peak arithmetic and memory bandwidth; no latency), so the "
            "distance to it is what launch and synchronisation latency, occupancy and the rest take.", ""]
    if not len(t):
        return "\n".join(head + [f"Not yet measured: no CSV in `{SOURCE}/`; run `{COMMAND}` on a GPU host "
                            "(results/campaigns/README.md, the device queue's item 0: repeated calls resume).", ""])
    out = head
    for device in dict.fromkeys(t["device"]):
        d = t[t["device"] == device]
        commits = ", ".join(sorted({str(c)[:12] for c in d["git_commit"]}))
        budget = ", ".join(f"{m:,}" for m in sorted(d["max_fes"].unique()))
        floors = ", ".join(sorted(set(d["floor_device"])))
        sources = ", ".join(f"`{SOURCE}/{Path(s).name}`" for s in dict.fromkeys(d["source"]))
        out += [f"#### {device}", "",
                f"Measured on {device} ({sources}; commit {commits}; {budget} FEs per run; "
                f"{int(d['repeats'].max())} timed call(s) per point; runs per point "
                f"{int(d['runs'].min())}-{int(d['runs'].max())}). Floor on the peaks of {floors}.", "",
                f"Seconds per run against NP on {device}:", "", *_sweep_table(d, 0),
                f"Seconds per run against D on {device}:", "", *_sweep_table(d, 1)]
        failed = d[d["status"] != "ok"]
        if len(failed):
            out += ["Failed points (no time): " + "; ".join(
                f"{r.function} {r.line} D={r.dim} NP={r.popsize} ({r.status})" for r in failed.itertuples()) + ".", ""]
        fixed = [f for f in dict.fromkeys(d["function"]) if f in FUNCTIONS and FUNCTIONS[f].dims is not None]
        if fixed:
            out += [f"{', '.join(fixed)}: defined at D = {FUNCTIONS[fixed[0]].dims_text()} only (official CEC "
                    "data), so the D axis stops there; the Nashed functions (e.g. N05, Zakharov without shift "
                    "or rotation) are defined at any D and carry it further.", ""]
        out.append(figure_of(f"figure_scaling_{slug(device)}",
                             f"Time per run against NP and D on {device}, a line per implementation; "
                             "dashed: the floor"))
    return "\n".join(out)
