"""Time per run of DE on the GPU against NP and D, beside the floor: the table and
figure of the scaling-curve experiments (``config/experiments/scaling_curves.yaml``: ide, resident and
all_gpu one trial per launch; ``scaling_curves_batched.yaml``: ide with 30 per launch) in case study
1's section of the REPORT, from their trial tables (``results/reference/<machine>/<experiment>/
trials.csv``), with the roofline floor of every point (:mod:`gpude.report.floor`) beside them.

Not Qin et al.'s figures of time against NP (:mod:`gpude.report.scaling`): those belong to Qin et
al.'s experiment; these sweep NP and D around case study 1's setting for the GPU implementations.

``write_outputs`` (at ``gpude paper`` time) turns the trials into ``scaling.csv`` (a row per point:
the mean and spread of the trials' ``wall_time_s``, the floor) and one ``figure_scaling_<device>``
per device in the paper folder; ``markdown`` (at report time) writes the section from
``scaling.csv`` alone. No trials, no numbers: the section says what to run instead.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..core.io import read_csv, save_figure, write_csv_atomic
from ..core.provenance import slug
from ..functions.suites import FUNCTIONS
from ..run.rows import launch_size
from . import floor
from .panels import label_panel, panel_grid, title_figure

#: the study input's folder, and the experiments whose trial tables it reads (``<folder>/<machine>/
#: <experiment>/trials.csv``, or a local run's ``<folder>/<experiment>/trials.csv``)
SOURCE = "results/reference"
EXPERIMENTS = ("scaling_curves", "scaling_curves_batched")
COMMAND = "benchmarks/gpu_checks.sh scaling_curves"
#: the peaks of the floor where the measured device's are not listed (gpude.report.floor.PEAKS)
FLOOR_FALLBACK = "NVIDIA H100 SXM"
#: a point: the trials of one (device, function, line, D, NP, budget, dtype)
POINT = ["device", "function", "implementation", "trials_per_launch", "dim", "popsize", "max_fes", "dtype"]
COLUMNS = ["device", "function", "implementation", "trials_per_launch", "line", "dim", "popsize", "base_dim",
           "base_popsize", "max_fes", "dtype", "runs", "wall_s_per_run", "wall_s_per_run_std",
           "floor_s_run", "over_floor", "floor_device", "best_error_mean", "fes_mean", "status", "git_commit",
           "timestamp_utc", "source"]
#: the lines' drawing order and colours (others follow in the table's order)
LINE_ORDER = ["ide", "resident", "all_gpu"]


def line_label(implementation: str, trials_per_launch: int) -> str:
    """'ide', or 'ide, 30/launch' for a batched line (its own line in the table and figure)."""
    return implementation if int(trials_per_launch) == 1 else f"{implementation}, {int(trials_per_launch)}/launch"


def trial_files(source) -> list[Path]:
    """The trial tables of :data:`EXPERIMENTS` under a folder (every machine's reference, or a local
    run's results folder), or the one file given."""
    source = Path(source)
    if source.is_file():
        return [source]
    if not source.is_dir():
        return []
    return sorted({f for e in EXPERIMENTS
                   for f in [*source.glob(f"{e}/trials.csv"), *source.glob(f"*/{e}/trials.csv")]})


def load(source) -> pd.DataFrame:
    """One row per point (:func:`points`) from the trial tables of ``source``; empty when there is none."""
    frames = [read_csv(f).assign(source=str(f)) for f in trial_files(source)]
    if not frames:
        return pd.DataFrame(columns=COLUMNS)
    return points(pd.concat(frames, ignore_index=True))


def _bases(d: pd.DataFrame) -> tuple[int, int]:
    """The sweeps' fixed values of one device and function: the D with the most NPs, the NP with the
    most Ds (the larger on a tie)."""
    base_dim = d.groupby("dim")["popsize"].nunique().sort_index().idxmax()
    base_popsize = d.groupby("popsize")["dim"].nunique().sort_index().idxmax()
    return int(base_dim), int(base_popsize)


def _floor(row) -> tuple[float, str]:
    """The point's floor per run on the measured device's peaks (else :data:`FLOOR_FALLBACK`'s); NaN
    where the floor has no flop count for the function's terms."""
    peaks = floor.peak_device(row.device) or FLOOR_FALLBACK
    try:
        f = floor.floor_point(row.function, int(row.dim), int(row.popsize), int(row.max_fes), peaks, row.dtype,
                              int(row.trials_per_launch))
    except KeyError:
        return float("nan"), peaks
    return f["floor_s_run"], peaks


def points(trials: pd.DataFrame) -> pd.DataFrame:
    """The trials (one row each, the workflow's schema) as points: per (device, function, line, D, NP,
    budget, dtype) the runs, the mean and standard deviation of ``wall_time_s`` (a batched trial's: its
    fair share of the launch), the mean final error and FEs, and the floor. A point whose every trial
    failed keeps the first failure's status and no time; failed trials beside good ones are left out of
    the means and counted in ``status``."""
    if not len(trials):
        return pd.DataFrame(columns=COLUMNS)
    t = trials.assign(device=trials["gpu"].fillna("none").astype(str),
                      trials_per_launch=trials["params"].map(launch_size) if "params" in trials else 1)
    t = t.assign(failed=t["status"].astype(str).str.startswith("error"))
    rows = []
    for key, g in t.groupby(POINT, sort=False):
        good = g[~g["failed"]]
        wall = pd.to_numeric(good["wall_time_s"], errors="coerce")
        status = "ok" if len(good) == len(g) else (
            str(g["status"][g["failed"]].iloc[0]) if not len(good) else f"ok ({int(g['failed'].sum())} failed)")
        rows.append(dict(zip(POINT, key), runs=len(good), wall_s_per_run=wall.mean() if len(good) else np.nan,
                         wall_s_per_run_std=wall.std(ddof=1) if len(good) > 1 else np.nan,
                         best_error_mean=pd.to_numeric(good["best_error"], errors="coerce").mean(),
                         fes_mean=pd.to_numeric(good["fes_used"], errors="coerce").mean(), status=status,
                         git_commit=", ".join(sorted({str(c) for c in g["git_commit"]})),
                         timestamp_utc=str(g["timestamp_utc"].max()), source=", ".join(dict.fromkeys(g["source"]))))
    p = pd.DataFrame(rows)
    floors = [_floor(r) for r in p.itertuples()]
    p = p.assign(floor_s_run=[f for f, _ in floors], floor_device=[d for _, d in floors])
    bases = {k: _bases(g) for k, g in p.groupby(["device", "function"])}
    p = p.assign(base_dim=[bases[(d, f)][0] for d, f in zip(p["device"], p["function"])],
                 base_popsize=[bases[(d, f)][1] for d, f in zip(p["device"], p["function"])])
    return p


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

    d = t[(t["device"] == device) & _ok(t)]
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


def _ok(t: pd.DataFrame) -> pd.Series:
    """The points with a time (every trial, or some, finished)."""
    return t["status"].astype(str).str.startswith("ok")


def _cell(v) -> str:
    return "-" if v is None or pd.isna(v) else f"{v:.3g}"


def _sweep_table(d: pd.DataFrame, which: int) -> list[str]:
    """A Markdown table of one sweep of a device: a row per function and line, one per floor, a
    column per value of the swept axis (those of every function; '-' where a function has none)."""
    d = d[_ok(d)]
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
            "Measured through the workflow by `config/experiments/scaling_curves.yaml` (`ide`, one trial per "
            "launch; `resident`, the whole run in one cooperative launch; `all_gpu`) and "
            "`scaling_curves_batched.yaml` (`ide` with 30 trials per launch: a trial's fair share of the "
            "launch per run): DE/rand/1/bin (F=0.5, CR=0.3, float32) with no target, so every run spends "
            "the FE budget; each batch timed alone on its GPU (`timing: exclusive`). Seconds per run: the "
            "mean of the trials' `wall_time_s` (compilation excluded). The floor is `gpude.report.floor`'s "
            "roofline bound at the same point (flops and bytes per generation over the device's peak "
            "arithmetic and memory bandwidth; no latency; `python -m gpude.report.floor` writes it for case study "
            "1), so the distance to it is what launch and synchronisation latency, occupancy and the rest "
            "take.", ""]
    if not len(t):
        return "\n".join(head + [f"No measurements: no trials of {' or '.join(f'`{e}`' for e in EXPERIMENTS)} "
                                 f"under `{SOURCE}/`. `{COMMAND}` on a GPU host makes them (repeated calls resume; "
                                 "results/campaigns/README.md); its `results/<experiment>/trials.csv` then goes to "
                                 f"`{SOURCE}/<machine>/<experiment>/`.", ""])
    out = head
    for device in dict.fromkeys(t["device"]):
        d = t[t["device"] == device]
        commits = ", ".join(sorted({c.strip()[:12] for cs in d["git_commit"].astype(str) for c in cs.split(",")}))
        budget = ", ".join(f"{m:,}" for m in sorted(d["max_fes"].unique()))
        floors = ", ".join(sorted(set(d["floor_device"])))
        sources = ", ".join(f"`{s}`" for s in dict.fromkeys(x.strip() for xs in d["source"].astype(str)
                                                           for x in xs.split(",")))
        runs = d.groupby("trials_per_launch")["runs"]
        per_point = "; ".join(f"{int(g.min())}-{int(g.max())}" + (f" at {b}/launch" if b > 1 else "")
                              for b, g in runs)
        out += [f"#### {device}", "",
                f"Measured on {device} ({sources}; commit {commits}; {budget} FEs per run; runs per point "
                f"{per_point}). Floor on the peaks of {floors}.", "",
                f"Seconds per run against NP on {device}:", "", *_sweep_table(d, 0),
                f"Seconds per run against D on {device}:", "", *_sweep_table(d, 1)]
        failed = d[~_ok(d)]
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
