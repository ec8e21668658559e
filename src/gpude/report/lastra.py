"""Lastra, Molina & Benitez (2015): GPU MA-SW-Chains at 100,000 to 3,000,000 dimensions.

``gpude paper --study lastra`` writes, beside the generic tables (:func:`write_outputs`):

* ``table_runtime.csv``: per (function, D) of the paper's six functions: our GPU run time (runs
  timed alone on the machine), the paper's GPU and CPU times, our CPU time *extrapolated* from the
  CPU sample (``--study-input cpu_sample=<trials.csv>``: MA-SW-Chains/sequential with a few
  thousand FEs at the smallest D, linear in FEs and in D, since every step of the algorithm is
  O(D) per FE), and both speed-ups;
* ``table_quality.csv``: per (function, D): mean, std and median of the objective (error + the
  paper's fBias of -330) and of the distance to the optimum, ours beside the paper's GPU and CPU;
* ``table_cec2010.csv``: the CEC 2010 subset (C01..C20 = F1..F20), ours beside Tables 21-30, with
  our GPU run time;
* ``figure_time_vs_d.png``: run time vs D (log-log) and speed-up vs D, ours beside the paper's;
* ``performance.csv`` (from ``--study-input perf=<perf.csv>``): the issue's targets, each with its
  ratio and verdict; ``float32_error.csv`` (``--study-input float32=<csv>``): what float32 costs;
  ``profile.csv`` (``--study-input profile=<folder>``): Tables 13-14's runs (:mod:`.lastra_profile`).

**Times.** The paper's run-time tables do not say whether a cell is one run or the sum over the
cell's runs: the 30 CPU cells add up to the "over 150 days" and the GPU cells to the "over 38 h"
that sec. 6.5 quotes for the whole experimentation, which reads as sums over runs. Both readings
are kept: ``paper_gpu_s`` as printed, ``paper_gpu_per_run_s`` divided by the runs the paper states.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..core.io import read_csv, save_figure, write_csv_atomic
from ..run.rows import one_per_launch, timed_alone
from . import lastra_profile
from .intervals import Ratio, bounds_over_fixed, column_extremes, extremes_text, stored
from .lastra_outliers import OUTLIERS_CSV, outliers_markdown, write_outlier_table
from .section import Deviation, Section, _read, fmt
from .verdict import Verdict, cell_labels, coverage_verdict, numbers_of, span

PUBLISHED_DIR = Path(__file__).resolve().parents[3] / "paper" / "published"
#: gpude id -> the paper's function (the id column of paper/published/lastra_*.csv)
PAPER_NAMES = {"L01": "rastrigin", "L02": "griewank", "L03": "salomon", "L04": "discus",
               "L05": "sum_squares", "L06": "schwefel_1_2"}
LABELS = {"L01": "Rastrigin", "L02": "Griewank", "L03": "Salomon", "L04": "Discus", "L05": "Sum Squares",
          "L06": "Schwefel 1.2"}
CEC_NAMES = {"C01": "F1", "C02": "F2", "C03": "F3", "C04": "F4", "C06": "F6", "C08": "F8", "C13": "F13",
             "C18": "F18", "C20": "F20"}
BIAS = -330.0  # the paper's fBias: its tables print objective values, ours are errors f - f*
PROTOCOL_FES = 500_000
#: a target is met when ratio <= limit: the run time against 60 s (ratio 1), an evaluation
#: against the memory-bandwidth bound (within 2x)
LIMITS = {"time": 1.0, "eval": 2.0}


def _published(name: str) -> pd.DataFrame:
    return _read(PUBLISHED_DIR / f"lastra_{name}.csv")


def _gpu_runs(trials: pd.DataFrame) -> pd.DataFrame:
    return trials[(trials["algorithm"] == "masw") & (trials["implementation"] == "gpu")
                  & (trials["status"] != "failed")]


def timed_runs(runs: pd.DataFrame, machine: str | None) -> pd.Series:
    """The runs whose times the tables use: made on ``machine``, alone on their device and one per
    launch (a trial of a batch of several per launch records its share of the launch's time: its
    error counts, its time does not)."""
    return (runs["machine"] == machine) & timed_alone(runs["concurrency"]) & one_per_launch(runs)


def quality_runs(trials: pd.DataFrame) -> pd.DataFrame:
    """The runs whose errors the tables use: every GPU run on the main machine's GPU (a run's result
    does not depend on the host around the GPU; its time does, :func:`timed_runs`)."""
    runs = _gpu_runs(trials)
    main = main_machine(trials)
    if main is None:
        return runs
    gpu = runs.loc[runs["machine"] == main, "gpu"].iloc[0] if "gpu" in runs else None
    return runs[runs["gpu"] == gpu] if gpu is not None else runs[runs["machine"] == main]


def main_machine(trials: pd.DataFrame) -> str | None:
    """The machine whose times the tables use: the one with the most GPU runs timed alone and made one
    per launch (another host of the same GPU may add runs made several per launch: their errors count,
    their times are shares and do not); of all GPU runs where none is timed so."""
    runs = _gpu_runs(trials)
    timed = runs[timed_alone(runs["concurrency"]) & one_per_launch(runs)]
    runs = timed if len(timed) else runs
    return runs["machine"].value_counts().index[0] if len(runs) else None


def cpu_rate(sample: pd.DataFrame) -> pd.DataFrame:
    """Seconds per FE and per coordinate of MA-SW-Chains/sequential, per function (mean over the
    sample's runs): what the extrapolation multiplies by 500,000 FEs x D."""
    s = sample[(sample["implementation"] == "sequential") & (sample["status"] != "failed")]
    s = s.assign(rate=s["wall_time_s"] / (s["fes_used"] * s["dim"]))
    return (s.groupby("function").agg(cpu_n=("rate", "size"), cpu_rate=("rate", "mean"),
                                      cpu_sample_dim=("dim", "max"), cpu_sample_fes=("fes_used", "max"),
                                      cpu_sample_s=("wall_time_s", "mean"),
                                      cpu_concurrency=("concurrency", lambda c: "/".join(sorted(set(c)))))
            .reset_index())


def gpu_time_ratio(row, per_run: bool = False) -> Ratio:
    """A runtime row's ours / the paper's GPU time (``per_run``: over the printed time divided by the runs the
    paper states) with its interval (NaN bounds in a table written without them)."""
    def get(key):
        value = row.get(key) if isinstance(row, dict) else getattr(row, key, None)
        return np.nan if value is None else value
    scale = get("paper_runs") if per_run else 1.0
    over = get("paper_gpu_per_run_over_ours") if per_run else get("paper_gpu_over_ours")
    return stored(1 / over, get("ours_over_paper_gpu_lo") * scale, get("ours_over_paper_gpu_hi") * scale, get("n"))


def runtime_table(trials: pd.DataFrame, cpu_sample: pd.DataFrame | None = None) -> pd.DataFrame:
    """Our GPU times (exclusive runs of the main machine) beside the paper's, with our CPU extrapolated."""
    runs = _gpu_runs(trials)
    runs = runs[timed_runs(runs, main_machine(trials)) & runs["function"].isin(list(PAPER_NAMES))]
    t = (runs.groupby(["function", "dim"])["wall_time_s"]
         .agg(n="size", gpu_s="mean", gpu_std_s="std", gpu_min_s="min").reset_index())
    t.insert(0, "machine", main_machine(trials))
    paper = _published("runtime")
    runs_stated = _published("quality").groupby("function")["runs"].max()
    if len(paper):
        paper = paper.rename(columns={"cpu_s": "paper_cpu_s", "gpu_s": "paper_gpu_s", "speedup": "paper_speedup"})
        paper["function"] = paper["function"].map({v: k for k, v in PAPER_NAMES.items()})
        paper["paper_runs"] = paper["function"].map(lambda f: runs_stated.get(PAPER_NAMES[f], np.nan))
        t = t.merge(paper[["function", "dim", "paper_cpu_s", "paper_gpu_s", "paper_speedup", "paper_runs"]],
                    on=["function", "dim"], how="outer")
        t["paper_gpu_per_run_s"] = t["paper_gpu_s"] / t["paper_runs"]
        t["paper_gpu_over_ours"] = t["paper_gpu_s"] / t["gpu_s"]
        t["paper_gpu_per_run_over_ours"] = t["paper_gpu_per_run_s"] / t["gpu_s"]
        # ours / the paper's GPU time with its 95 % bootstrap interval: our timed runs resampled, the
        # paper's printed time fixed (a cell of fewer than 3 runs: none)
        t["ours_over_paper_gpu_lo"], t["ours_over_paper_gpu_hi"] = bounds_over_fixed(
            runs.groupby(["function", "dim"])["wall_time_s"], zip(t["function"], t["dim"]), t["paper_gpu_s"])
    if cpu_sample is not None and len(cpu_sample):
        t = t.merge(cpu_rate(cpu_sample), on="function", how="left")
        t["cpu_extrapolated_s"] = t["cpu_rate"] * PROTOCOL_FES * t["dim"]
        t["speedup_extrapolated"] = t["cpu_extrapolated_s"] / t["gpu_s"]
    return t.sort_values(["function", "dim"], ignore_index=True)


def _stats(runs: pd.DataFrame, bias: float, machine: str | None) -> pd.DataFrame:
    r = runs.assign(objective=runs["best_error"] + bias, timed=timed_runs(runs, machine))
    return (r.groupby(["function", "dim"])
            .agg(n=("objective", "size"), n_timed=("timed", "sum"), objective_mean=("objective", "mean"),
                 objective_std=("objective", "std"),
                 objective_median=("objective", "median"), distance_mean=("distance_to_optimum", "mean"),
                 distance_std=("distance_to_optimum", "std"), distance_median=("distance_to_optimum", "median"),
                 gpu_s=("wall_time_s", lambda s: s[r.loc[s.index, "timed"]].mean()))
            .reset_index())


def _over_paper(t: pd.DataFrame, runs: pd.DataFrame, values: pd.Series, paper: str, name: str) -> pd.DataFrame:
    """``<name>_lo``, ``<name>_hi``: the 95 % bootstrap interval of our mean of ``values`` (one per row of
    ``runs``) over the paper's printed ``paper`` column, per (function, D) of ``t`` (ours resampled, the
    paper's fixed; a cell of fewer than 3 runs or without the paper's number: NaN)."""
    lo, hi = bounds_over_fixed(values.groupby([runs["function"], runs["dim"]]), zip(t["function"], t["dim"]), t[paper])
    return t.assign(**{f"{name}_lo": lo, f"{name}_hi": hi})


def _partial(t: pd.DataFrame) -> pd.DataFrame:
    """``partial``: a cell of ours with fewer runs than the paper states for it."""
    return t.assign(partial=t["n"].notna() & t["paper_runs"].notna() & (t["n"] < t["paper_runs"]))


def quality_table(trials: pd.DataFrame) -> pd.DataFrame:
    """Objective (error + fBias) and distance to the optimum of the six functions, ours and the paper's."""
    runs = quality_runs(trials)
    runs = runs[runs["function"].isin(list(PAPER_NAMES))]
    t = _stats(runs, BIAS, main_machine(trials))
    paper = _published("quality")
    if len(paper):
        wide = paper.pivot_table(index=["function", "dim"], columns=["device", "measure"],
                                 values=["mean", "std", "median"])
        wide.columns = [f"paper_{dev}_{m}_{stat}" for stat, dev, m in wide.columns]
        wide = wide.reset_index()
        wide["function"] = wide["function"].map({v: k for k, v in PAPER_NAMES.items()})
        t = t.merge(wide, on=["function", "dim"], how="outer")
        runs_stated = paper.groupby("function")["runs"].max()
        t["paper_runs"] = t["function"].map(lambda f: runs_stated.get(PAPER_NAMES.get(f), np.nan))
        t = _over_paper(t, runs, runs["distance_to_optimum"], "paper_gpu_distance_mean", "distance_over_paper")
        t = _partial(_over_paper(t.assign(paper_gpu_error_mean=t["paper_gpu_objective_mean"] - BIAS), runs,
                                 runs["best_error"], "paper_gpu_error_mean", "error_over_paper"))
    return t.sort_values(["function", "dim"], ignore_index=True)


def cec_table(trials: pd.DataFrame) -> pd.DataFrame:
    """The CEC 2010 subset (optimum 0, so objective = error), ours beside Tables 21-30."""
    runs = quality_runs(trials)
    runs = runs[runs["function"].isin(list(CEC_NAMES))]
    t = _stats(runs, 0.0, main_machine(trials))
    paper = _published("cec2010")
    if len(paper):
        paper = paper.rename(columns={c: f"paper_{c}" for c in ("mean", "std", "median", "distance", "runs")})
        paper["function"] = paper["function"].map({v: k for k, v in CEC_NAMES.items()})
        t = t.merge(paper.drop(columns="table"), on=["function", "dim"], how="outer")
        t = _partial(_over_paper(t, runs, runs["best_error"], "paper_mean", "objective_over_paper"))
    return t.sort_values(["function", "dim"], key=lambda c: c.str[1:].astype(int) if c.name == "function" else c,
                         ignore_index=True)


#: the issue's two targets (the protocol's function and precision); the other rows are diagnostics
TARGET_METRICS = ("time_500k_fes_L01_d3e6", "eval_L01_d3e6_float64")


def performance_table(perf: pd.DataFrame) -> pd.DataFrame:
    kind = np.where(perf["metric"].str.startswith("time_"), "time", "eval")
    limit = pd.Series(kind).map(LIMITS).to_numpy()
    role = np.where(perf["metric"].isin(TARGET_METRICS), "target", "diagnostic")
    return perf.assign(role=role, limit=limit, met=perf["ratio"] <= limit)


def figure_time_vs_d(runtime: pd.DataFrame, out_dir) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(12, 4.8))
    colors = dict(zip(PAPER_NAMES, plt.get_cmap("tab10").colors))
    for f, part in runtime.groupby("function"):
        part = part.sort_values("dim")
        c = colors.get(f, "k")
        if "paper_gpu_s" in part:
            ax.plot(part["dim"], part["paper_gpu_s"], "s--", color=c, mfc="none", lw=1)
            ax.plot(part["dim"], part["paper_cpu_s"], "x:", color=c, lw=1)
            ax2.plot(part["dim"], part["paper_speedup"], "s--", color=c, mfc="none", lw=1)
        if "cpu_extrapolated_s" in part and part["cpu_extrapolated_s"].notna().any():
            ax.plot(part["dim"], part["cpu_extrapolated_s"], "-", color=c, lw=0.8, alpha=0.6)
            ax2.plot(part["dim"], part["speedup_extrapolated"], "o-", color=c, ms=4)
        ours = part[part["gpu_s"].notna()]
        ax.plot(ours["dim"], ours["gpu_s"], "o-", color=c, ms=5, label=LABELS.get(f, f))
    from matplotlib.lines import Line2D

    styles = [Line2D([], [], color="k", marker="o", label="ours, GPU (measured)"),
              Line2D([], [], color="k", alpha=0.6, lw=0.8, label="ours, CPU (extrapolated)"),
              Line2D([], [], color="k", ls="--", marker="s", mfc="none", label="paper, GTX Titan"),
              Line2D([], [], color="k", ls=":", marker="x", label="paper, i7-930 (1 thread)")]
    for a in (ax, ax2):
        a.set_xscale("log")
        a.set_yscale("log")
        a.set_xlabel("dimension D")
        a.grid(True, which="both", alpha=0.3)
    ax.set_ylabel("run time of 500,000 FEs (s)")
    ax.set_title("Run time vs D (paper: as printed)")
    ax2.set_ylabel("speed-up of the GPU over the CPU")
    ax2.set_title("Speed-up vs D (ours: extrapolated CPU / measured GPU)")
    first = ax.legend(loc="upper left", fontsize=7, ncol=2)
    ax.add_artist(first)
    ax.legend(handles=styles, loc="lower right", fontsize=7)
    machine = runtime["machine"].dropna()
    fig.suptitle(f"MA-SW-Chains, Lastra et al. (2015) functions; ours on {machine.iloc[0] if len(machine) else '?'}",
                 fontsize=9)
    fig.tight_layout()
    files = save_figure(fig, Path(out_dir) / "figure_time_vs_d")
    plt.close(fig)
    return files


STUDY_INPUTS = ("cpu_sample", "perf", "float32", "profile")


def write_outputs(trials: pd.DataFrame, traces: dict, out_dir, **inputs) -> list[Path]:
    unknown = set(inputs) - set(STUDY_INPUTS)
    if unknown:
        from ..core.errors import InvalidInputError

        raise InvalidInputError(f"the lastra section reads no study input {', '.join(sorted(unknown))}; "
                                f"its inputs (report: study_inputs:): {', '.join(STUDY_INPUTS)}")
    cpu_sample, perf, float32, profile = (inputs.get(k) for k in STUDY_INPUTS)
    out_dir = Path(out_dir)
    sample = read_csv(cpu_sample) if cpu_sample else None
    runtime = runtime_table(trials, sample)
    files = [write_csv_atomic(runtime, out_dir / "table_runtime.csv"),
             write_csv_atomic(quality_table(trials), out_dir / "table_quality.csv"),
             write_csv_atomic(cec_table(trials), out_dir / "table_cec2010.csv")]
    files.append(write_outlier_table(cec_table(trials), quality_runs(trials), traces, out_dir))
    if sample is not None:
        files.append(write_csv_atomic(sample, out_dir / "cpu_sample.csv"))
    if perf:
        files.append(write_csv_atomic(performance_table(read_csv(perf)), out_dir / "performance.csv"))
    if float32:
        files.append(write_csv_atomic(read_csv(float32, comment="#"), out_dir / "float32_error.csv"))
    if profile:  # Tables 13-14's runs (a folder of benchmarks/lastra_profile.py's CSVs)
        files.append(write_csv_atomic(lastra_profile.measured(profile), out_dir / "profile.csv"))
    if runtime["gpu_s"].notna().any():
        files += figure_time_vs_d(runtime, out_dir)
    return files


def _e(v) -> str:
    return fmt(v, "{:.2e}")


def _n(r) -> str:
    """'n (timed)', and 'partial' where the cell has fewer runs than the paper's."""
    if pd.isna(r.n):
        return "-"
    text = f"{int(r.n)} ({int(r.n_timed)})"
    return f"{text} partial" if getattr(r, "partial", False) else text


class Lastra(Section):

    write_outputs = staticmethod(write_outputs)
    study = "Lastra et al."
    # the figures of every trial are left out: the section shows the paper's own (time against D)
    generic_outputs = ("time", "time_vs_popsize")

    def __init__(self, spec, paper_dir, report_dir):
        super().__init__(spec, paper_dir, report_dir)
        self.runtime = _read(self.dir / "table_runtime.csv")
        self.quality = _read(self.dir / "table_quality.csv")
        self.cec = _read(self.dir / "table_cec2010.csv")
        self.perf = _read(self.dir / "performance.csv")
        self.float32 = _read(self.dir / "float32_error.csv")
        self.sample = _read(self.dir / "cpu_sample.csv")
        self.profile = _read(self.dir / "profile.csv")
        m = self.runtime["machine"].dropna() if len(self.runtime) else []
        self.machine = m.iloc[0] if len(m) else "no machine"

    def title(self) -> str:
        return ("Lastra, Molina & Benitez (2015): GPU MA-SW-Chains at 100,000 to 3,000,000 dimensions "
                "(Tables 1-30)")

    def cell_checks(self) -> dict[str, str]:
        """The CEC 2010 cells outside the factor, each with the cause and check of the outlier table
        (:mod:`.lastra_outliers`), by the label its verdict gives them ('C01 D=100000')."""
        t = _read(self.dir / OUTLIERS_CSV)
        if not len(t) or not {"cause", "check"} <= set(t):
            return {}
        return {label: f"{r.cause} ({r.check}; {OUTLIERS_CSV})"
                for label, r in zip(cell_labels(t, ["function", "dim"]), t.itertuples())}

    def _runs_per_cell(self, t: pd.DataFrame) -> dict[str, tuple[int, int]]:
        """(fewest, most) runs of the run-time table's cells (function, D), all of them (table_error.csv:
        the batched ones too); {} where the error table lacks a cell."""
        if not len(self.errors) or not {"function", "n"} <= set(self.errors):
            return {}
        n = self.errors.groupby(self.errors["function"].astype(str))["n"].max()
        runs = [n.get(f"{r.function}/d{int(r.dim)}") for r in t.itertuples()]
        if any(v is None or pd.isna(v) for v in runs):
            return {}
        return {"masw/gpu": (int(min(runs)), int(max(runs)))}

    def verdicts(self) -> list[Verdict]:
        """The run-time tables (1-12: runs timed alone against the paper's runs per cell), the quality
        tables of the large-scale functions (15-20) and of CEC 2010 (21-30: our n against the paper's, our
        mean within a factor of 2 of the paper's), and the profile (13-14: :mod:`.lastra_profile`)."""
        def counts(t, n="n"):  # (fewest, most) runs per cell, and the paper's fewest
            have = t[t[n].notna()]
            return ({"masw/gpu": (int(have[n].min()), int(have[n].max()))} if len(have) else {},
                    int(t["paper_runs"].min()) if "paper_runs" in t and t["paper_runs"].notna().any() else 10)

        rows = []
        if len(self.runtime):
            t = self.runtime
            over_paper = 1 / t["paper_gpu_per_run_over_ours"]
            per_run = extremes_text([gpu_time_ratio(r, per_run=True) for r in t.to_dict("records")], "{:.2g}")
            timed, wanted = counts(t)
            have = self._runs_per_cell(t) or timed
            rows.append(coverage_verdict(
                "Tables 1-12 (run time)", have, wanted,
                f"a GPU run's time {per_run} the paper's GPU time per run ({self.machine} against "
                "the paper's GTX Titan)",
                numbers_of(over_paper, "another GPU", labels=cell_labels(t, ["function", "dim"])),
                # a time counts only from a run made alone on its GPU, one per launch (protocol)
                short_cause="fewer runs made", timed=timed,
                timed_cause="by the protocol: 3 runs a cell timed alone, the rest ten a launch"))
        for item, t, ours, theirs, name in (("Tables 15-20 (quality)", self.quality, "distance_mean",
                                             "paper_gpu_distance_mean", "distance_over_paper"),
                                            ("Tables 21-30 (CEC 2010)", self.cec, "objective_mean", "paper_mean",
                                             "objective_over_paper")):
            if not len(t):
                continue
            over_paper = t[ours] / t[theirs]
            have, wanted = counts(t)
            # the paper gives no shift vectors at these D: ours are drawn (docs/functions.md)
            rows.append(coverage_verdict(
                item, have, wanted,
                f"mean {ours.split('_')[0]} {column_extremes(t, over_paper, name)} the paper's ({self.machine})",
                numbers_of(over_paper, "shifts ours", labels=cell_labels(t, ["function", "dim"])),
                short_cause="runs not yet made"))
        rows.append(lastra_profile.verdict(self.profile))
        return rows

    def protocol(self) -> str:
        s = self.spec
        trials = s["trials"] if isinstance(s["trials"], int) else s["trials"].get("default")
        q = self.quality.dropna(subset=["n"]) if len(self.quality) else self.quality
        c = self.cec.dropna(subset=["n"]) if len(self.cec) else self.cec
        counts = pd.concat([q, c])["n"] if len(q) or len(c) else pd.Series(dtype=float)
        present = (f"{int(counts.min())}-{int(counts.max())}" if len(counts) and counts.min() != counts.max()
                   else (f"{int(counts.min())}" if len(counts) else "none"))
        cells = len(q) + len(c)
        planned = len(s["functions"]) * len(s["dims"])
        return (
            f"Protocol (`config/experiments/{s['name']}.yaml`): MA-SW-Chains (`masw/gpu`; Molina's Realea rules, "
            "`docs/algorithms.md`): steady-state GA of 60 individuals (the paper does not print its population "
            "size; 60 is the SSGA default of Realea), negative assortative mating (3 candidates), BLX-0.5, "
            "BGA mutation (p = 0.125), replace-worst; 20 children per GA step evaluated together and "
            "(mu + 20) replacement, as the paper's GPU design; Solis-Wets chains of I_str = 500 FEs with the "
            "chain state (bias, rho, successes, failures) kept per individual, r_L/G = 0.5; no restarts. "
            f"D = {', '.join(f'{d:,}' for d in s['dims'])}; {s['max_fes']:,} FEs per run; float64. "
            f"The paper states ten runs per cell in sec. 6.2, twenty for Schwefel 1.2 (Table 20) and for the CEC "
            f"2010 tables; the experiment asks for {trials} (`--config trials=20` for the twenty). **Runs present "
            f"in the committed reference: {present} per cell, {cells} of {planned} cells** (every number below "
            "says its n; a mean of one run is that run; 'partial': fewer runs than the paper's). Times are only "
            f"from runs timed alone on their GPU of {self.machine} (`concurrency` exclusive) and made one "
            "per launch: a run made several per launch (`trials_per_launch` in its `params`: each cell's "
            "first three runs were made one per launch and the others ten per launch) records a fair share of "
            "its launch's time, "
            "and a run made while other processes shared the GPU, or on another host, time-slicing or another "
            "CPU: those count for quality only. The paper makes no statistical test (it compares means, "
            "standard deviations and medians, and finds 'no relevant differences' between its CPU and GPU "
            "runs); the tables below do the same, ours beside its numbers.")

    def runtime_summary(self) -> str:
        """Tables 1-12 in brief, per function over the D: ours / the paper's GPU time and both speed-ups
        (the table per D: :meth:`runtime_markdown`, in the appendix)."""
        t = self.runtime
        if not len(t) or not t["gpu_s"].notna().any():
            return "(no GPU runs of the six functions)\n"
        has_cpu = "speedup_extrapolated" in t
        lines = [f"**Run time of 500,000 FEs**, range over D = {t['dim'].min():,}-{t['dim'].max():,} (ours: mean "
                 f"over n = {span(int(t['n'].min()), int(t['n'].max()))} runs a cell on {self.machine}; paper: GTX "
                 "Titan and one core of an i7-930, as printed; 'paper/run': the printed GPU time divided by the "
                 "runs the paper states, if its cells are sums over runs; our CPU time extrapolated from a sample, "
                 "as the appendix's table per D says).", "",
                 "| function | ours / paper, GPU | ours / (paper/run), GPU | speed-up paper |"
                 + (" speed-up ours (extrap.) |" if has_cpu else ""), "|---" * (5 if has_cpu else 4) + "|"]
        for f, g in t.groupby("function", sort=False):
            def rng(v, spec="{:.2g}"):
                v = v.dropna()
                return "-" if not len(v) else f"{spec.format(v.min())}-{spec.format(v.max())}"
            rows = g.to_dict("records")
            lines.append(f"| {LABELS.get(f, f)} | {extremes_text([gpu_time_ratio(r) for r in rows], '{:.2g}')} | "
                         f"{extremes_text([gpu_time_ratio(r, per_run=True) for r in rows], '{:.2g}')} | "
                         f"{rng(g['paper_speedup'], '{:.0f}')} |"
                         + (f" {rng(g['speedup_extrapolated'], '{:.0f}')} |" if has_cpu else ""))
        return "\n".join(lines) + "\n"

    def runtime_markdown(self) -> str:
        t = self.runtime
        if not len(t) or not t["gpu_s"].notna().any():
            return "(no GPU runs of the six functions yet)\n"
        has_cpu = "cpu_extrapolated_s" in t
        lines = [f"**Run time of 500,000 FEs** (s; ours: mean over n runs on {self.machine}; paper: GTX Titan and "
                 "one core of an i7-930, as printed; 'paper/run': the printed GPU time divided by the runs the "
                 "paper states, if the cells are sums over runs). Ours, CPU: the CPU sample's time per FE and "
                 "coordinate x 500,000 x D (extrapolated, not run).", "",
                 "| function | D | n | ours GPU | paper GPU | ours / paper | ours / (paper/run) |"
                 + (" ours CPU (extrap.) | paper CPU | speed-up ours (extrap.) | speed-up paper |" if has_cpu
                    else " paper CPU | speed-up paper |"),
                 "|---" * (11 if has_cpu else 9) + "|"]
        for r in t.itertuples():
            row = (f"| {LABELS.get(r.function, r.function)} | {r.dim:,} | {fmt(r.n, '{:.0f}')} | "
                   f"{fmt(r.gpu_s, '{:.1f}')} | "
                   f"{fmt(r.paper_gpu_s, '{:,.0f}')} | {gpu_time_ratio(r).text('{:.2g}')} | "
                   f"{gpu_time_ratio(r, per_run=True).text('{:.2g}')} |")
            if has_cpu:
                row += (f" {fmt(r.cpu_extrapolated_s, '{:,.0f}')} | {fmt(r.paper_cpu_s, '{:,.0f}')} | "
                        f"{fmt(r.speedup_extrapolated, '{:.0f}')} | {fmt(r.paper_speedup, '{:.1f}')} |")
            else:
                row += f" {fmt(r.paper_cpu_s, '{:,.0f}')} | {fmt(r.paper_speedup, '{:.1f}')} |"
            lines.append(row)
        text = "\n".join(lines) + "\n"
        s = self.sample
        if len(s):
            conc = ", ".join(sorted(set(s["concurrency"])))
            text += (f"\nThe CPU sample: MA-SW-Chains/sequential, {int(s['fes_used'].max()):,} FEs at D = "
                     f"{int(s['dim'].max()):,}, one run per function ({len(s)} runs; "
                     f"{s['wall_time_s'].min():.0f}-{s['wall_time_s'].max():.0f} s) on the CPU of the sample's own "
                     "host (its section below names it; "
                     "the GPU runs' host may differ, so the extrapolated speed-ups divide times of two hosts), "
                     f"timing `{conc}`" + (" (other processes shared the machine, so these CPU times are too long, "
                                           "and the speed-ups made from them too high)" if "shared" in conc
                                           else "") +
                     ". Extrapolating linearly in FEs assumes that the sample's mix of GA steps and Solis-Wets "
                     "steps is the whole run's (it is: the GA and the local search alternate from the first "
                     f"FEs); in D, that every operator is O(D) per FE. 500,000 FEs at 3e6 on this CPU would take "
                     f"about {t['cpu_extrapolated_s'].max() / 86400:.0f} days.\n")
        return text

    def quality_markdown(self) -> str:
        t = self.quality
        if not len(t) or not t["n"].notna().any():
            return ""
        lines = ["**Quality** (the paper's Tables 15-20): mean objective of the best individual (error + fBias "
                 f"-330; the optimum is -330) and mean Euclidean distance to the optimum; ours (n runs on "
                 f"{self.machine.split(' / ')[0]} hosts: a run's result is the same on every host of one GPU) "
                 "beside the paper's GPU and CPU means.", "",
                 "| function | D | n (timed) | paper n | objective ours | paper GPU | paper CPU | std ours | "
                 "paper GPU | median ours | paper GPU | distance ours | paper GPU | paper CPU |",
                 "|---" * 14 + "|"]
        for r in t.itertuples():
            lines.append(f"| {LABELS.get(r.function, r.function)} | {r.dim:,} | {_n(r)} | "
                         f"{fmt(getattr(r, 'paper_runs', np.nan), '{:.0f}')} | "
                         f"{_e(r.objective_mean)} | {_e(getattr(r, 'paper_gpu_objective_mean', np.nan))} | "
                         f"{_e(getattr(r, 'paper_cpu_objective_mean', np.nan))} | {_e(r.objective_std)} | "
                         f"{_e(getattr(r, 'paper_gpu_objective_std', np.nan))} | {_e(r.objective_median)} | "
                         f"{_e(getattr(r, 'paper_gpu_objective_median', np.nan))} | {fmt(r.distance_mean, '{:.3g}')} | "
                         f"{fmt(getattr(r, 'paper_gpu_distance_mean', np.nan), '{:.2g}')} | "
                         f"{fmt(getattr(r, 'paper_cpu_distance_mean', np.nan), '{:.2g}')} |")
        return "\n".join(lines) + "\n" + self._quality_notes()

    def _quality_notes(self) -> str:
        t = self.quality.dropna(subset=["objective_mean", "paper_gpu_objective_mean"]) \
            if "paper_gpu_objective_mean" in self.quality else pd.DataFrame()
        if not len(t):
            return ""
        err = (t["objective_mean"] - BIAS) / (t["paper_gpu_objective_mean"] - BIAS)
        dist = t["distance_mean"] / t["paper_gpu_distance_mean"]
        err_range = column_extremes(t, err, "error_over_paper", unit="")
        dist_range = column_extremes(t, dist, "distance_over_paper", spec="{:.2f}", unit="")
        return (f"\nOurs / the paper's GPU, as errors (objective + 330): median {err.median():.2f} "
                f"(range {err_range}); distances: median {dist.median():.2f} "
                f"(range {dist_range}). The paper gives no shift and no "
                "domain: ours are o ~ U[-1, 1]^D in the box [-1, 1] (`docs/functions.md`), chosen because the "
                "paper's distances (about 0.9 per coordinate at every D) and objectives fit a small box around o; "
                "another choice changes every number of this table, so it compares orders of magnitude and the "
                "growth with D, not digits.\n")

    def cec_summary(self) -> str:
        """Tables 21-30 in brief: ours / the paper's mean objective over the cells (the table: the appendix)."""
        t = self.cec.dropna(subset=["objective_mean", "paper_mean"]) if len(self.cec) else self.cec
        if not len(t):
            return ""
        r = t["objective_mean"] / t["paper_mean"]
        spread = column_extremes(t, r, "objective_over_paper", unit="")
        return (f"**CEC 2010 functions** (Tables 21-30; n = {span(int(t['n'].min()), int(t['n'].max()))} runs a "
                f"cell on {self.machine.split(' / ')[0]} hosts; the table: the appendix): ours / the paper's mean "
                f"objective, median {r.median():.2g} (range {spread}) over {len(t)} cells.\n")

    def cec_markdown(self) -> str:
        t = self.cec
        if not len(t) or not t["n"].notna().any():
            return ""
        lines = ["**CEC 2010 functions** (Tables 21-29: mean and median of the best objective, optimum 0; Table 30: "
                 f"distance to the optimum), ours (n runs on {self.machine.split(' / ')[0]} hosts) "
                 "beside the paper's GPU runs; our GPU "
                 "time in s.", "",
                 "| function | D | n (timed) | paper n | mean ours | paper | std ours | paper | median ours | paper | "
                 "distance ours | paper | time ours (s) |",
                 "|---" * 13 + "|"]
        for r in t.itertuples():
            lines.append(f"| {CEC_NAMES.get(r.function, r.function)} ({r.function}) | {r.dim:,} | {_n(r)} | "
                         f"{fmt(r.paper_runs, '{:.0f}')} | {_e(r.objective_mean)} | {_e(r.paper_mean)} | "
                         f"{_e(r.objective_std)} | {_e(r.paper_std)} | {_e(r.objective_median)} | "
                         f"{_e(r.paper_median)} | {fmt(r.distance_mean, '{:.3g}')} | "
                         f"{fmt(r.paper_distance, '{:.2g}')} | "
                         f"{fmt(r.gpu_s, '{:.1f}')} |")
        return "\n".join(lines) + "\n"

    def performance_markdown(self) -> str:
        p = self.perf
        if not len(p):
            return ""
        lines = [f"**Evaluation speed against its bounds** (benchmark runs, `results/reference/*/lastra/perf.csv`; "
                 "device: "
                 f"{', '.join(sorted(set(p['device'])))}). Time: 500,000 FEs on the D = 3e6 Rastrigin against 60 s. "
                 "Evaluation: time of one evaluation at D = 3e6 against the memory-bandwidth bound (bytes the "
                 "evaluation must read / the device's specified bandwidth); met when within the limit.", "",
                 "| metric | role | measured | bound or target | ratio | limit | met | commit |", "|---" * 8 + "|"]
        for r in p.itertuples():
            lines.append(f"| {r.metric} | {r.role} | {r.value:g} {r.unit} | {r.target:g} | {r.ratio:.2f} | "
                         f"{r.limit:g} | "
                         f"{'yes' if r.met else ('**no**' if r.role == 'target' else 'no')} | {r.git_commit} |")
        missed = p[~p["met"].astype(bool)]
        targets = missed[missed["role"] == "target"]
        text = "\n".join(lines) + "\n"
        if len(missed):
            text += (("\nTargets missed: " + ", ".join(targets["metric"]) + "; " if len(targets)
                      else "\nBoth targets met; ")
                     + "diagnostics beyond 2x: " + ", ".join(missed[missed["role"] != "target"]["metric"])
                     + ". Why, and what would close it: each measurement is one row per launch (a Solis-Wets "
                     "step), so a launch and the last block's closing reduction (a few us) are in every evaluation; "
                     "Rastrigin's float64 cos() costs about 40 FP64 operations per coordinate (about 7 us at D = 3e6 "
                     "on an H200, as long as reading x and o at full bandwidth), and the terms are float64 in float32 "
                     "runs too, so float32 halves the bound but not the arithmetic; Schwefel 1.2 needs a second "
                     "(scan) kernel; the rotated CEC functions (C04, C18) gather x through the permutation P (random "
                     "access: a 32-byte sector per 8 useful bytes). "
                     "The notes column of perf.csv has each measurement's bytes and bandwidth.\n")
        return text

    def float32_markdown(self) -> str:
        f = self.float32
        if not len(f):
            return ("float32: the reference runs are float64 only; perf.csv has float32 evaluation times. "
                    "What float32 costs in accuracy is not measured here yet.\n")
        lines = ["**What float32 costs**: relative difference of the float32 evaluation from the float64 one "
                 "(CPU evaluators; x and o rounded to float32, sums in float64), at random points of the box and at "
                 "points 1e-3 from the optimum, the largest over the sample.", "",
                 "| function | D | random points | near the optimum |", "|---|---|---|---|"]
        for r in f.itertuples():
            lines.append(f"| {r.function} | {r.dim:,} | {r.rel_diff_random:.1e} | {r.rel_diff_near:.1e} |")
        return "\n".join(lines) + "\n"

    def oddities(self) -> str:
        return ("**What the published tables leave open** (each file in `paper/published/lastra_*.csv` lists its "
                "own): whether a run-time cell is one run or the sum over the cell's runs (see above); the short "
                "Tables 2-12 print means that differ from the appendix's Tables 15-20 in eleven places (the "
                "appendix is kept) and the optimum as -3.3x10^3 (a typo for -330); Table 28's F18 median "
                "(1.37e16) cannot go with its mean and std, nor Table 26's F8 at 5e5; Tables 28 and 29 print the "
                "same means for F18 and F20 at every D.\n")

    def body(self) -> str:
        return "\n".join(part for part in [
            "### Setup", "", self.protocol(), "", "### Run time", "", self.runtime_summary(),
            self.figure("figure_time_vs_d", "Run time and speed-up vs D, ours (GPU measured, CPU extrapolated) "
                        "beside the paper's (as printed)"),
            "### Quality", "", "Tables 15-20 (the quality table: the appendix).", self._quality_notes(),
            self.cec_summary(), outliers_markdown(_read(self.dir / OUTLIERS_CSV), self.cec),
            "### Profile (Tables 13-14)\n\nThe share of a run's time per module, ours beside the paper's: the "
            "appendix." if len(self.profile) else ""] if part)

    def deviations(self) -> list[Deviation]:
        return [
            Deviation("hardware", f"The paper: a GTX Titan and one core of an i7-930; ours: {self.machine}. Our CPU "
                                  "times are extrapolated from a sample of short runs (the run-time table says how)."),
            Deviation("trials", "The paper states ten runs per cell (twenty for Schwefel 1.2 and the CEC 2010 "
                                "tables); every table says our n per cell, 'partial' where it is fewer."),
            Deviation("left unstated by the paper", "The population size (ours: 60, Realea's SSGA default) and the "
                                                    "functions' shift and domain (ours: o ~ U[-1, 1]^D in the box "
                                                    "[-1, 1], `docs/functions.md`)."),
            Deviation("left unstated by the paper", self.oddities().replace("**What the published tables leave "
                                                                            "open** ", "").strip()),
            Deviation("timing", "Times only from runs timed alone on their GPU and made one per launch; the "
                                "others count for quality only.")]

    def appendix(self) -> str:
        return "\n".join(part for part in [
            "### Run time per D", "", self.runtime_markdown(), self.quality_markdown(), self.cec_markdown(),
            "### Profile (Tables 13-14)\n\n" + lastra_profile.markdown(self.profile) if len(self.profile) else "",
            "### Performance", "", self.performance_markdown(),
            self.float32_markdown(),
            f"Tables as CSV: `{self.rel}/table_runtime.csv`, `{self.rel}/table_quality.csv`, "
            f"`{self.rel}/table_cec2010.csv`, `{self.rel}/performance.csv`.", "", self.sources()] if part)
