"""The REPORT's section "Runs per hour against the number of GPUs": the committed scaling runs of
one host (``results/benchmarks/gpu_scaling/<folder>/``, written by :mod:`gpude.study.gpu_scaling`) and the
projection of regenerating the papers' GPU references on N GPUs (:mod:`gpude.study.projection`).

``write_outputs`` (the ``gpude paper-gpu-scaling`` step) writes ``table_scaling.csv`` (every
folder's rows), ``projection.csv`` and the figure ``runs_per_hour`` into the paper folder;
``render`` (at report time) writes the section from those files alone.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from ..core.errors import GpudeError
from ..core.io import read_csv, save_figure, write_csv_atomic
from ..study import projection
from ..study.gpu_scaling import lease_measures
from .section import fmt

TITLE = "Runs per hour against the number of GPUs"
#: the targets: runs per hour on N GPUs over one GPU's, and hours to regenerate the references on eight
SPEEDUP_TARGETS = {4: 3.6, 8: 7.0}
PROJECTED_HOURS_TARGET, PROJECTED_GPUS = 1.0, 8
FIGURE = "runs_per_hour"
COMMAND = "benchmarks/gpu_checks.sh gpu_scaling"


# --- the paper step ----------------------------------------------------------------------------------

def scaling_table(scaling_dir) -> pd.DataFrame:
    """Every committed scaling folder's ``rows.csv``, oldest folder first, with its ``folder``."""
    frames = [read_csv(d / "rows.csv").assign(folder=d.name) for d in projection.scaling_folders(scaling_dir)]
    if not frames:
        raise GpudeError(f"no scaling runs under {scaling_dir} (folders with rows.csv and batches.csv; "
                         f"`{COMMAND}` on a GPU host makes one, results/benchmarks/gpu_scaling/README.md)")
    t = pd.concat(frames, ignore_index=True)
    t = t.merge(batch_measures(scaling_dir), on=["folder", "run"], how="left")
    return t[["folder"] + [c for c in t if c != "folder"]]


def batch_measures(scaling_dir) -> pd.DataFrame:
    """Per folder and timed run, from its batches.csv: ``gap_s``, the mean time between one batch's
    release of a GPU and the next batch's lease of it; ``longest_batch_s``; and ``bound_speedup``, the
    most runs per hour over the one-GPU run's that any order of these batches could give on the run's
    GPUs: the one-GPU wall time over the run's start and end plus the larger of its longest batch and
    its batches' leased time divided evenly."""
    rows = []
    for d in projection.scaling_folders(scaling_dir):
        b = read_csv(d / "batches.csv")
        walls = read_csv(d / "rows.csv").set_index("run")
        if "gpus1" not in walls.index:
            continue
        one_wall = float(walls.loc["gpus1", "wall_s"])
        for run, part in b.groupby("run"):
            if run == "priming" or run not in walls.index:
                continue
            gpus = int(walls.loc[run, "gpus"])
            m = lease_measures(part, float(walls.loc[run, "wall_s"]))
            best = m["fixed_s"] + max(m["longest_s"], m["held_s"] / gpus)
            rows.append(dict(folder=d.name, run=run, gap_s=m["gap_s"], longest_batch_s=m["longest_s"],
                             bound_speedup=one_wall / best))
    return pd.DataFrame(rows, columns=["folder", "run", "gap_s", "longest_batch_s", "bound_speedup"])


def timed(t: pd.DataFrame) -> pd.DataFrame:
    """The timed runs (the priming run, which fills numba's cache, left out)."""
    return t[t["run"].astype(str) != "priming"]


def host_label(row) -> str:
    """'4 x NVIDIA H100 80GB HBM3, 64 CPU cores'."""
    return f"{int(row['host_gpus'])} x {row['gpu']}, {int(row['cpu_cores'])} CPU cores"


def series_label(folder: str, part: pd.DataFrame) -> str:
    """A scaling folder's line: its config and host."""
    first = part.iloc[0]
    return f"{Path(str(first['config'])).stem} on {int(first['host_gpus'])} x {first['gpu']} ({folder})"


def figure(t: pd.DataFrame, out_dir) -> list[Path]:
    """Runs per hour against GPUs, a line per scaling folder and its ideal (one GPU's runs per hour
    times N) dashed in the same colour; GPUs on a log2 axis."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker
    from matplotlib.lines import Line2D

    t = timed(t)
    fig, ax = plt.subplots(figsize=(7.2, 5.2))
    counts = sorted(set(int(g) for g in t["gpus"]) | {1, 2, 4, 8})
    for k, (folder, part) in enumerate(t.groupby("folder", sort=False)):
        part = part.sort_values("gpus")
        colour = f"C{k % 10}"
        ax.plot(part["gpus"], part["runs_per_hour"], marker="o", color=colour, label=series_label(folder, part))
        one = part[part["gpus"] == 1]
        if len(one):
            base = float(one["runs_per_hour"].iloc[0])
            ax.plot(counts, [base * n for n in counts], ls="--", lw=1, color=colour)
            ax.plot(list(SPEEDUP_TARGETS), [base * x for x in SPEEDUP_TARGETS.values()], ls="none", marker="x",
                    color=colour)
    # both axes logarithmic: the ideal is a straight line, and a fixed share of it lies parallel to it
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(counts)
    ax.set_xticklabels([str(n) for n in counts])
    ax.yaxis.set_major_locator(matplotlib.ticker.LogLocator(base=10, subs=(1, 2, 3, 5)))
    ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    ax.set_xlabel("GPUs")
    ax.set_ylabel("runs per hour")
    ax.grid(True, alpha=0.3)
    # a line per folder (its colour); what the dashes and crosses mean, once
    styles = [Line2D([], [], color="grey", ls="--", lw=1, label="ideal: one GPU's runs per hour x N"),
              Line2D([], [], color="grey", ls="none", marker="x",
                     label="target: " + ", ".join(f"{x:g}x on {n}" for n, x in SPEEDUP_TARGETS.items()))]
    handles, _ = ax.get_legend_handles_labels()
    ax.legend(handles=handles + styles, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=1,
              frameon=False)
    ax.set_title("Runs per hour against the number of GPUs (a line per scaling set and host)", fontsize=9)
    fig.tight_layout()
    paths = save_figure(fig, Path(out_dir) / FIGURE)
    plt.close(fig)
    return paths


def projection_table(experiments, reference_root, experiments_dir, overheads: dict,
                     gpus=projection.DEFAULT_GPUS) -> pd.DataFrame:
    """:func:`gpude.study.projection.project` of the experiments' references with ``overheads``, a row per
    experiment without a reference (machine 'none', no batches) before the total, and the overheads'
    origin and the references' GPU models as columns."""
    batches = projection.reference_batches(experiments, reference_root, experiments_dir)
    if not len(batches):
        raise GpudeError(f"none of {', '.join(experiments)} has a committed reference under {reference_root}")
    table = projection.project(batches, gpus, overhead_s=overheads["overhead_s"], fixed_s=overheads["fixed_s"])
    gpus_of = batches.groupby("experiment")["gpu"].agg(lambda g: ", ".join(dict.fromkeys(g.astype(str))))
    table["gpu"] = table["experiment"].map(gpus_of).fillna(", ".join(dict.fromkeys(batches["gpu"].astype(str))))
    missing = pd.DataFrame([dict(experiment=e, machine="none", batches=0, runs=0) for e in
                            projection.missing_references(experiments, reference_root)])
    table = pd.concat([table.iloc[:-1], missing, table.iloc[-1:]], ignore_index=True) if len(missing) else table
    return table.assign(overhead_from=f"{overheads['folder']}/{overheads['run']}", setup_s=overheads["setup_s"],
                        gap_s=overheads["gap_s"], overhead_s=overheads["overhead_s"], fixed_s=overheads["fixed_s"])


def write_outputs(scaling_dir, out_dir, experiments=projection.PAPER_EXPERIMENTS,
                  reference_root=projection.REFERENCE_ROOT,
                  experiments_dir=projection.EXPERIMENTS_DIR) -> list[Path]:
    """``table_scaling.csv``, ``projection.csv`` (overheads from the newest folder's one-GPU run) and
    the figure in ``out_dir``."""
    t = scaling_table(scaling_dir)
    newest = projection.scaling_folders(scaling_dir)[-1]
    overheads = projection.overheads_from_folder(newest)
    table = projection_table(list(experiments), reference_root, experiments_dir, overheads)
    out_dir = Path(out_dir)
    return [write_csv_atomic(t, out_dir / "table_scaling.csv"), write_csv_atomic(table, out_dir / "projection.csv"),
            *figure(t, out_dir)]


# --- the section -------------------------------------------------------------------------------------

def _hours(v) -> str:
    return fmt(v, "{:.2f}")


def folder_table(folder: str, part: pd.DataFrame) -> list[str]:
    """A scaling folder's caption and table (its timed runs, by GPUs)."""
    part = timed(part).sort_values("gpus")
    first = part.iloc[0]
    commit = str(first["git_commit"])[:7]
    runs = ", ".join(dict.fromkeys(str(int(r)) for r in part["runs"]))
    lines = [f"### {folder}", "",
             f"Host: {host_label(first)} (`{first['host']}`, boot `{first['boot_id']}`); config "
             f"`{first['config']}`; commit {commit}; numba {first['numba']}, numba-cuda {first['numba_cuda']}; "
             f"started {first['started_utc']}. Each row is one workflow run on GPUs 0..N-1 after a priming run "
             f"(left out) filled numba's cache; n = {runs} runs per row.", "",
             "| GPUs | runs | wall s | runs per hour | x one GPU | at most, these batches | "
             "GPU leased fraction (mean) | s between batches | longest batch s | CPU busy cores (mean / peak) |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in part.itertuples():
        lines.append(f"| {int(r.gpus)} | {int(r.runs)} | {r.wall_s:.1f} | {r.runs_per_hour:,.0f} | "
                     f"{fmt(r.speedup, '{:.2f}')} | {fmt(getattr(r, 'bound_speedup', None), '{:.2f}')} | "
                     f"{fmt(r.leased_fraction_mean, '{:.2f}')} | {fmt(getattr(r, 'gap_s', None), '{:.2f}')} | "
                     f"{fmt(getattr(r, 'longest_batch_s', None), '{:.1f}')} | "
                     f"{fmt(r.cpu_busy_cores_mean, '{:.1f}')} / {fmt(r.cpu_busy_cores_peak, '{:.1f}')} of "
                     f"{int(r.cpu_cores)} |")
    return lines + [""]


def speedup_sentence(t: pd.DataFrame) -> str:
    """The runs-per-hour target, met or not, from the newest folder that ran each GPU count."""
    t = timed(t)
    said = []
    for n, target in SPEEDUP_TARGETS.items():
        rows = t[t["gpus"] == n].sort_values("started_utc")
        if not len(rows):
            said.append(f"on {n} GPUs at least {target:g}x: not shown, no committed scaling run has {n} GPUs")
            continue
        r = rows.iloc[-1]
        verdict = "met" if r["speedup"] >= target else "not met"
        said.append(f"on {n} GPUs at least {target:g}x: **{verdict}**, {r['speedup']:.2f}x ({r['folder']}, "
                    f"{host_label(r)})")
    return ("Target, runs per hour against one GPU's (the newest committed run of each GPU count): "
            + "; ".join(said) + ".")


def projection_caption(p: pd.DataFrame) -> str:
    rows = p[(p["experiment"] != "total") & (p["batches"] > 0)]
    machines = "; ".join(f"{m} ({g}: {', '.join(part['experiment'])})" for (m, g), part in
                         rows.groupby(["machine", "gpu"], sort=False))
    first = p.iloc[0]
    return (f"Projected from the committed references' GPU trials, per experiment the reference of the machine "
            f"with more GPU rows: {machines}. Each GPU batch of the experiment's grid counts its trials' summed "
            "`wall_time_s` (scaled up to the batch's runs where the reference holds only some of them; a batch "
            "with none: its runs x the mean trial time of its implementation at its D, else at any D; "
            "`estimated` is that time's share), plus {:.2f} s per batch ({:.2f} s of its lease beyond its "
            "trials, {:.2f} s between leases of a GPU) and {:.1f} s per workflow run (its start and end), "
            "measured on the one-GPU run `{}` above; the batches spread over N GPUs longest first, each to the "
            "GPU that frees first (LPT), beside the lower bound (the work divided evenly, or the longest "
            "batch). Hours; n = runs. Left out: the CPU batches, the warm-ups that compile into numba's cache "
            "and the merges. `total`: every batch in one workflow run, as a scaling set runs them."
            ).format(first["overhead_s"], first["setup_s"], first["gap_s"], first["fixed_s"], first["overhead_from"])


def projection_lines(p: pd.DataFrame) -> list[str]:
    counts = [int(c.split("_")[1]) for c in p if c.startswith("hours_")]
    head = ("| experiment | reference machine | batches | runs | GPU-hours | "
            + " | ".join(f"{n} GPU{'s' if n > 1 else ''}" for n in counts)
            + f" | lower bound, {counts[-1]} GPUs | estimated |")
    lines = [projection_caption(p), "", head, "|---" * (len(counts) + 7) + "|"]
    for r in p.to_dict("records"):
        name = "**total**" if r["experiment"] == "total" else r["experiment"]
        if not r["batches"]:
            lines.append(f"| {name} | none (no committed reference) | - | - | - | "
                         + " | ".join("-" for _ in counts) + " | - | - |")
            continue
        lines.append(f"| {name} | {r['machine']} | {int(r['batches']):,} | {int(r['runs']):,} | "
                     f"{_hours(r['gpu_hours'])} | " + " | ".join(_hours(r[f'hours_{n}']) for n in counts)
                     + f" | {_hours(r[f'lower_{counts[-1]}'])} | {fmt(r['estimated_share'], '{:.0%}')} |")
    return lines + [""]


def projection_sentence(p: pd.DataFrame) -> str:
    """The eight-GPU target, met or not, from the projection's total."""
    total = p[p["experiment"] == "total"].iloc[0]
    column = f"hours_{PROJECTED_GPUS}"
    missing = p.loc[p["batches"] == 0, "experiment"].tolist()
    of = (f"the {int((p['batches'] > 0).sum()) - 1} experiments with a reference"
          + (f" ({', '.join(missing)}: no committed reference, not projected)" if missing else ""))
    if column not in total or pd.isna(total[column]):
        return (f"Target, all five papers' GPU references regenerated in at most {PROJECTED_HOURS_TARGET:g} hour on "
                f"an eight-GPU host (projected): not shown, the projection has no {PROJECTED_GPUS}-GPU column.")
    verdict = "met" if total[column] <= PROJECTED_HOURS_TARGET else "not met"
    return (f"Target, all five papers' GPU references regenerated in at most {PROJECTED_HOURS_TARGET:g} hour on an "
            f"eight-GPU host (projected): **{verdict}**, {total[column]:.2f} h projected (lower bound "
            f"{total[f'lower_{PROJECTED_GPUS}']:.2f} h) for {int(total['batches']):,} GPU batches, "
            f"{int(total['runs']):,} runs, {total['gpu_hours']:.1f} GPU-hours of trials, of {of}; "
            f"{total['estimated_share']:.0%} of that time estimated.")


def render(paper_dir, report_dir) -> str:
    """The section's Markdown from ``paper_dir``'s ``table_scaling.csv`` and ``projection.csv``."""
    paper_dir = Path(paper_dir)
    table = paper_dir / "table_scaling.csv"
    if not table.is_file():
        raise GpudeError(f"--gpu-scaling {paper_dir}: no table_scaling.csv (`gpude paper-gpu-scaling --out-dir "
                         f"{paper_dir}` writes it)")
    t = read_csv(table)
    rel = Path(os.path.relpath(paper_dir.resolve(), Path(report_dir).resolve())).as_posix()
    out = [f"## {TITLE}", "",
           "Runs per hour of one workflow run (`snakemake --cores all` over a config's GPU batches, "
           f"`{COMMAND}`) on 1, 2, 4, ... GPUs of one host, as `gpude.study.gpu_scaling` summarises it "
           "(results/benchmarks/gpu_scaling/<folder>/rows.csv, batches.csv: a row per batch with its lease). "
           "`x one GPU`: runs per hour over those of the same folder's one-GPU run; `at most, these batches`: "
           "the most that any order of the run's batches could give on its GPUs (its start and end, plus the "
           "larger of its longest batch and its batches' time spread evenly): a run below it lost time between "
           "batches, one at it was held back by its longest batch; GPU leased fraction: the share of the run's "
           "wall time a GPU was held by a batch, the mean over the GPUs used; s between batches: from one "
           "batch's release of a GPU to the next one's lease of it. Where the host has the cores (twice the "
           "GPUs and two more), the workflow starts a second batch per GPU, which starts up and waits at the "
           "lease (`GPUDE_GPU_PREFETCH`, `gpude.study.host_shape`); `h200x4_scaling_d5f177d_prefetch0` is the same "
           "run as `h200x4_scaling_d5f177d` without it.", ""]
    for folder, part in t.groupby("folder", sort=False):
        out += folder_table(folder, part)
    devices = "; ".join(dict.fromkeys(host_label(r) for _, r in timed(t).iterrows()))
    if (paper_dir / f"{FIGURE}.png").is_file():
        caption = (f"Runs per hour against GPUs on {devices}, a line per scaling folder (config and host); "
                   "dashed: one GPU's runs per hour times N (n = runs per point in the tables above)")
        pdf = f" ([PDF]({rel}/{FIGURE}.pdf))" if (paper_dir / f"{FIGURE}.pdf").is_file() else ""
        out += [f"![{caption}]({rel}/{FIGURE}.png)", f"*{caption}*{pdf}", ""]

    p = paper_dir / "projection.csv"
    if p.is_file():
        p = read_csv(p)
        out += ["### Regenerating the papers' GPU references on N GPUs (projected)", "", *projection_lines(p), ""]
    return "\n".join(out)

