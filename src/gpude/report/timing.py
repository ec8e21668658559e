"""Janssen et al.'s Table 3 and Fig. 6 for any experiment: mean wall time per function and
implementation, speed-up against the sequential model, beside the published numbers.

Every table is per machine (``machine`` column, see :mod:`gpude.report.sources`): times from
different machines are never averaged together.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..core.io import save_figure, write_atomic, write_csv_atomic
from ..core.machines import names_a_gpu
from .intervals import ratio, stored
from .trial_params import trials_per_launch

ORDER = ["sequential", "master_slave", "naive_gpu", "all_gpu", "ide"]


def _ordered(names):
    """The five models in the paper's order, then the rest by name with numbers compared as numbers
    (de/ide/50 before de/ide/100)."""
    import re

    def key(n):
        parts = re.split(r"(\d+)", str(n))
        return (ORDER.index(n) if n in ORDER else len(ORDER),
                [(0, int(t), "") if t.isdigit() else (1, 0, t) for t in parts])

    return sorted(names, key=key)


def _machine(trials: pd.DataFrame) -> pd.DataFrame:
    if "machine" not in trials:
        trials = trials.assign(machine="unknown machine")
    return trials


def implementation_labels(trials: pd.DataFrame) -> pd.Series:
    """Each trial's implementation as tables and figures label it: ``algorithm/implementation``
    where two algorithms of ``trials`` share the implementation's name (``pso/gpu`` and ``ss/gpu``,
    not "gpu" twice), else the implementation alone. Competitor labels (``gpude paper``'s
    ``pso/gpu/125``, which name the algorithm wherever several run) never share a name."""
    impl = trials["implementation"].astype(str)
    if "algorithm" not in trials or not len(trials):
        return impl
    algorithms = trials["algorithm"].astype(str).groupby(impl).nunique()
    shared = impl.isin(algorithms[algorithms > 1].index)
    return impl.where(~shared, trials["algorithm"].astype(str) + "/" + impl)


def _labelled(trials: pd.DataFrame) -> pd.DataFrame:
    """``trials`` (with a machine) whose implementation column holds :func:`implementation_labels`."""
    trials = _machine(trials)
    return trials.assign(implementation=implementation_labels(trials)) if len(trials) else trials


def timed_rows(trials: pd.DataFrame) -> pd.DataFrame:
    """The rows whose times a table averages: per machine, implementation and function, those timed
    alone (:func:`gpude.run.rows.timed_alone`) where there are any, else all (e.g. standard DE's runs
    side by side, one core each); a ``timed`` column says which ("alone" or the rows' concurrency)."""
    from ..run.rows import timed_alone

    if "concurrency" not in trials or not len(trials):
        return trials.assign(timed="alone")
    alone = timed_alone(trials["concurrency"])
    keys = ["machine", "implementation", "function"]
    has_alone = alone.groupby([trials[k] for k in keys]).transform("any")
    keep = alone | ~has_alone
    kept = trials[keep]
    return kept.assign(timed=kept["concurrency"].astype(str).where(~alone[keep], "alone"))


def _timed_trials(trials: pd.DataFrame) -> pd.DataFrame:
    """The finished trials (labelled) whose times the time table averages (:func:`timed_rows`)."""
    ok = _labelled(trials)
    return timed_rows(ok[ok["wall_time_s"].notna()])


def timing_table(trials: pd.DataFrame, baseline: str = "sequential") -> pd.DataFrame:
    """Long table: machine, implementation, function, n, mean and std of wall time, how the rows were
    timed (``timed``: "alone", or how they shared the machine where no row of the cell was timed alone:
    :func:`timed_rows`), speed-up vs ``baseline`` on the same machine (NaN where the baseline did not
    run that function). Failed trials are not averaged; ``n`` counts the timed trials that finished."""
    ok = _timed_trials(trials)
    t = (ok.groupby(["machine", "implementation", "function"])
         .agg(n=("wall_time_s", "count"), mean_s=("wall_time_s", "mean"), std_s=("wall_time_s", "std"),
              timed=("timed", lambda v: "; ".join(sorted(set(v))))).reset_index())
    base = t[t.implementation == baseline].set_index(["machine", "function"])
    t["speedup"] = [base["mean_s"].get((m, f), np.nan) / v for m, f, v in zip(t.machine, t.function, t.mean_s)]
    # the speed-up's 95 % bootstrap interval, the baseline's runs and the cell's each resampled (none for
    # the baseline itself, 1 by definition, nor where a side has fewer than 3 runs: intervals.MIN_N)
    times = ok.groupby(["machine", "implementation", "function"])["wall_time_s"]
    found = [ratio(times.get_group((m, baseline, f)), times.get_group((m, i, f))) if i != baseline
             and (m, baseline, f) in times.groups else None for m, i, f in zip(t.machine, t.implementation, t.function)]
    t["speedup_lo"] = [r.lo if r is not None else np.nan for r in found]
    t["speedup_hi"] = [r.hi if r is not None else np.nan for r in found]
    t["baseline_n"] = [int(base["n"].get((m, f), 0)) for m, f in zip(t.machine, t.function)]
    t["implementation"] = pd.Categorical(t["implementation"], _ordered(t["implementation"].unique()))
    return t.sort_values(["machine", "implementation", "function"]).reset_index(drop=True)


def trial_times(trials: pd.DataFrame) -> pd.DataFrame:
    """One row per timed trial behind :func:`timing_table`: machine, implementation, function, trial,
    ``wall_time_s``, ``fes_used`` and ``timed``, so that a ratio of two cells' times can carry its interval
    (:mod:`gpude.stats.bootstrap`) and say how its rows were timed (and a time out of order, how many FEs
    its runs made: :func:`gpude.report.anomalies.cost_order`)."""
    ok = _timed_trials(trials)
    keep = [c for c in ("machine", "implementation", "function", "dim", "popsize", "trial", "wall_time_s", "fes_used",
                        "timed") if c in ok]
    return ok[keep].sort_values([c for c in ("machine", "implementation", "function", "trial") if c in ok])


def trial_errors(trials: pd.DataFrame) -> pd.DataFrame:
    """One row per finished trial behind :func:`error_table`: machine, implementation, function, trial and
    ``best_error``, so that a ratio of mean errors can carry its interval (:mod:`gpude.stats.bootstrap`)."""
    ok = _labelled(trials)
    ok = ok[ok["best_error"].notna()] if len(ok) else ok
    keep = [c for c in ("machine", "implementation", "function", "trial", "best_error") if c in ok]
    return ok[keep].sort_values([c for c in ("machine", "implementation", "function", "trial") if c in ok])


def error_table(trials: pd.DataFrame) -> pd.DataFrame:
    """Long table: machine, implementation, function, n, mean / median best error, success rate."""
    t = (_labelled(trials).groupby(["machine", "implementation", "function"])
         .agg(n=("best_error", "count"), mean_error=("best_error", "mean"),
              median_error=("best_error", "median"), success_rate=("hit_target", "mean"))
         .reset_index())
    t["implementation"] = pd.Categorical(t["implementation"], _ordered(t["implementation"].unique()))
    return t.sort_values(["machine", "implementation", "function"]).reset_index(drop=True)


AGREEMENT_COLUMNS = ["machine", "function", "paired_trials", "implementations", "max_rel_diff", "same_share",
                     "cpu_max_rel_diff", "gpu_max_rel_diff"]


def _spread(wide: pd.DataFrame) -> pd.Series:
    """Per trial: the largest final error's distance from the smallest, relative to the largest."""
    return (wide.max(axis=1) - wide.min(axis=1)) / wide.abs().max(axis=1).clip(lower=1e-300)


def agreement_table(trials: pd.DataFrame) -> pd.DataFrame:
    """Per machine and function: how far apart the implementations' final errors are on the same
    trial (same seed): over all of them (``max_rel_diff``; ``same_share``: the share of paired trials
    on which all end on the same error), and among the CPU implementations and among the GPU ones
    apart (NaN with fewer than two). Every implementation draws the same random numbers and builds
    the same trial vectors, so 0 is expected within a group; across the groups a function's value may
    differ in its last bits (the GPU's transcendental functions and order of sums), and one such
    difference in a selection sends the two runs apart."""
    rows = []
    t = _labelled(trials)
    on_gpu = t["gpu"].map(names_a_gpu) if "gpu" in t else pd.Series(False, index=t.index)
    for (machine, function), part in t.groupby(["machine", "function"]):
        wide = part.pivot_table(index="trial", columns="implementation", values="best_error", observed=True)
        shared = wide.dropna(thresh=2)
        if not len(shared):
            continue
        spread = _spread(shared)
        gpu_impls = set(part.loc[on_gpu.loc[part.index], "implementation"])
        within = {}
        groups = {"cpu": [c for c in wide if c not in gpu_impls], "gpu": [c for c in wide if c in gpu_impls]}
        for group, cols in groups.items():
            pair = wide[cols].dropna(thresh=2) if len(cols) > 1 else pd.DataFrame()
            within[group] = float(_spread(pair).max()) if len(pair) else float("nan")
        rows.append({"machine": machine, "function": function, "paired_trials": len(shared),
                     "implementations": wide.shape[1], "max_rel_diff": float(spread.max()),
                     "same_share": float((spread == 0).mean()), "cpu_max_rel_diff": within["cpu"],
                     "gpu_max_rel_diff": within["gpu"]})
    return pd.DataFrame(rows, columns=AGREEMENT_COLUMNS)


def provenance_table(trials: pd.DataFrame) -> pd.DataFrame:
    """Where the numbers come from: per machine and implementation, the trial count, how the
    batches shared the machine, and the code and software that ran."""
    def values(v):
        return "; ".join(sorted(set(v.dropna().astype(str))))

    t = _labelled(trials).assign(trials_per_launch=lambda d: trials_per_launch(d))
    cols = {c: values for c in ("concurrency", "trials_per_launch", "git_commit", "boot_id", "numba",
                                   "numba_cuda", "cuda_driver", "python", "dtype") if c in t}
    agg = t.groupby(["machine", "implementation"]).agg(
        trials=("run_id", "count") if "run_id" in t else ("implementation", "size"),
        **{c: (c, f) for c, f in cols.items()},
        **({"first_utc": ("timestamp_utc", "min"), "last_utc": ("timestamp_utc", "max")}
           if "timestamp_utc" in t else {}))
    agg = agg.reset_index()
    agg["implementation"] = pd.Categorical(agg["implementation"], _ordered(agg["implementation"].unique()))
    return agg.sort_values(["machine", "implementation"]).reset_index(drop=True)


def _wide(table: pd.DataFrame, value: str, fmt) -> pd.DataFrame:
    wide = table.pivot(index="implementation", columns="function", values=value)
    return wide.map(lambda v: "-" if pd.isna(v) else fmt(v))


def _per_machine(table: pd.DataFrame):
    for machine, part in table.groupby("machine", sort=True):
        part = part.copy()
        part["implementation"] = part["implementation"].cat.remove_unused_categories()
        yield machine, part


def _speedups(part: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """The speed-up cells of one machine's table: '2.0x [1.8x, 2.2x]' (its 95 % interval), '(n = k: no
    interval)' where a side has fewer runs than an interval needs, '1.0x' for the baseline."""
    def text(r):
        if pd.isna(r["speedup"]):
            return "-"
        if r["implementation"] == baseline or "speedup_lo" not in r:  # (a table written without intervals)
            return f"{r['speedup']:.1f}x"
        return stored(r["speedup"], r["speedup_lo"], r["speedup_hi"], r["n"], r.get("baseline_n")).text("{:.1f}")

    cells = part.assign(text=[text(r) for r in part.to_dict("records")])
    return cells.pivot(index="implementation", columns="function", values="text").fillna("-")


def markdown(table: pd.DataFrame, baseline: str = "sequential") -> str:
    blocks = []
    for machine, part in _per_machine(table):
        times = _wide(part, "mean_s", lambda v: f"{v:.3g}")
        n = part.pivot(index="implementation", columns="function", values="n")
        speed = _speedups(part, baseline)
        cols = list(times.columns)
        has_speedup = part["speedup"].notna().any()  # no `sequential` on this machine: no speed-up rows
        # a row per implementation (its speed-up after its time): the table's height is its implementations'
        lines = ["Mean wall time in seconds (n trials)"
                 + ("; after it the speed-up against `sequential` and its 95 % interval" if has_speedup else "")
                 + f"; machine: {machine}.",
                 "", "| implementation | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
        for impl in times.index:
            cells = [f"{times.loc[impl, c]} ({int(n.loc[impl, c]) if pd.notna(n.loc[impl, c]) else 0})"
                     + (f"; {speed.loc[impl, c]}" if has_speedup and impl != baseline else "") for c in cols]
            lines.append(f"| {impl} | " + " | ".join(cells) + " |")
        if "timed" in part:
            shared = part[part["timed"] != "alone"]
            if len(shared):
                lines += ["", "Not timed alone (no run of the cell was; their times include the machine's sharing): "
                          + "; ".join(f"{impl} on {', '.join(map(str, g['function']))} "
                                      f"({'; '.join(sorted(set(g['timed'])))})"
                                      for impl, g in shared.groupby("implementation", observed=True)) + "."]
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks)


def latex(table: pd.DataFrame) -> str:
    out = ["% generated by gpude.report.timing"]
    for machine, part in _per_machine(table):
        times = _wide(part, "mean_s", lambda v: f"{v:.3g}")
        speed = _wide(part, "speedup", lambda v: f"{v:.1f}")
        cols = list(times.columns)
        out += [f"% machine: {machine}", "\\begin{tabular}{ll" + "r" * len(cols) + "}", "\\hline",
                "Implementation & & " + " & ".join(cols) + " \\\\", "\\hline"]
        for impl in times.index:
            name = str(impl).replace("_", "\\_")
            out.append(f"{name} & time (s) & " + " & ".join(times.loc[impl, c] for c in cols) + " \\\\")
            if part["speedup"].notna().any():
                out.append(" & speed-up & " + " & ".join(speed.loc[impl, c] for c in cols) + " \\\\")
        out += ["\\hline", "\\end{tabular}"]
    return "\n".join(out) + "\n"


def bar_chart(table: pd.DataFrame, stem: Path, title: str = "DE/rand/1/bin") -> list[Path]:
    """Fig. 6: grouped bars of mean wall time per function, logarithmic axis, a panel per
    machine, each bar with an error bar of +-1 standard deviation over the cell's trials (``std_s``;
    none where a cell has one trial); PNG and PDF."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    parts = list(_per_machine(table))
    fig, axes = plt.subplots(len(parts), 1, figsize=(10, 4.5 * len(parts)), squeeze=False)
    for ax, (machine, part) in zip(axes[:, 0], parts):
        wide = part.pivot(index="function", columns="implementation", values="mean_s")
        std = (part.pivot(index="function", columns="implementation", values="std_s")
               .reindex(index=wide.index, columns=wide.columns) if "std_s" in part else wide * np.nan)
        width = 0.8 / max(1, wide.shape[1])
        x = np.arange(len(wide.index))
        for k, impl in enumerate(wide.columns):
            mean, sd = wide[impl].to_numpy(dtype=float), std[impl].to_numpy(dtype=float)
            # on a log axis a bar may not reach 0: the lower arm stops at a tenth of the mean; a NaN
            # (one trial, or no cell) draws no bar and no cap
            yerr = np.vstack([np.minimum(sd, 0.9 * mean), sd])
            ax.bar(x + (k - (wide.shape[1] - 1) / 2) * width, mean, width, yerr=yerr,
                   label=str(impl), color=f"C{ORDER.index(impl) if impl in ORDER else k}",
                   error_kw={"elinewidth": 0.8, "capsize": 2, "ecolor": "0.2"})
        ax.set_yscale("log")
        ax.set_xticks(x, wide.index)
        ax.set_ylabel("mean wall-clock time (s)")
        ax.set_title(f"{title} ({machine})", fontsize=10)
        ax.legend(ncol=min(5, wide.shape[1]), fontsize=8)
        ax.grid(axis="y", which="both", alpha=0.3)
    fig.tight_layout()
    paths = save_figure(fig, stem, dpi=150)
    plt.close(fig)
    return paths


def published_comparison(table: pd.DataFrame, published: pd.DataFrame,
                         others: dict[str, pd.DataFrame] | None = None) -> str:
    """Ours (per machine) beside the paper's table and any other measured tables (e.g. the
    authors' code on our GPU), as Markdown with ratio rows ours / theirs."""
    pub = published.set_index("implementation")
    cols = [c for c in pub.columns if c.startswith("F")]
    others = {k: v.set_index("implementation") for k, v in (others or {}).items()}
    machines = sorted(table["machine"].unique())
    lines = ["| implementation | | " + " | ".join(cols) + " |", "|---" * (len(cols) + 2) + "|"]

    def fmt(v, spec="{:.3g}"):
        return "-" if v is None or pd.isna(v) else spec.format(v)

    for impl in pub.index:
        lines.append(f"| {impl} | paper (s) | " + " | ".join(fmt(pub.loc[impl, c]) for c in cols) + " |")
        rows = {name: [o.loc[impl, c] if impl in o.index and c in o.columns else np.nan for c in cols]
                for name, o in others.items()}
        for name, vals in rows.items():
            lines.append(f"| | {name} (s) | " + " | ".join(fmt(v) for v in vals) + " |")
        for m in machines:
            part = table[table.machine == m]
            mean = part.pivot(index="implementation", columns="function", values="mean_s")
            n = part.pivot(index="implementation", columns="function", values="n")
            got = [mean.loc[impl, c] if impl in mean.index and c in mean.columns else np.nan for c in cols]
            cnt = [n.loc[impl, c] if impl in n.index and c in n.columns else np.nan for c in cols]
            tag = f"ours, {m}" if len(machines) > 1 else "ours"
            lines.append(f"| | {tag} (s, n) | " + " | ".join(
                "-" if pd.isna(v) else f"{v:.3g} ({int(k)})" for v, k in zip(got, cnt)) + " |")
            lines.append(f"| | {tag} / paper | " + " | ".join(
                fmt(v / pub.loc[impl, c], "{:.2f}") for v, c in zip(got, cols)) + " |")
            for name, vals in rows.items():
                lines.append(f"| | {tag} / {name} | " + " | ".join(
                    fmt(v / w, "{:.2f}") for v, w in zip(got, vals)) + " |")
    return "\n".join(lines) + "\n"


def write_all(trials: pd.DataFrame, out_dir, published: pd.DataFrame | None = None,
              others: dict[str, pd.DataFrame] | None = None, time: bool = True) -> dict:
    """Error, agreement and provenance tables; with ``time``, the wall-time table (CSV, Markdown,
    LaTeX), its figure (PNG, PDF) and, given the paper's numbers, the comparison."""
    out = Path(out_dir)
    files = {"errors": write_csv_atomic(error_table(trials), out / "table_error.csv"),
             "trial_errors": write_csv_atomic(trial_errors(trials), out / "trial_errors.csv"),
             "agreement": write_csv_atomic(agreement_table(trials), out / "table_agreement.csv"),
             "provenance": write_csv_atomic(provenance_table(trials), out / "provenance.csv")}
    if not time:  # e.g. a study with a time budget, where every run's wall time is the budget
        return files
    table = timing_table(trials)
    files.update({"csv": write_csv_atomic(table, out / "table_time.csv"),
                  "trial_times": write_csv_atomic(trial_times(trials), out / "trial_times.csv"),
                  "md": write_atomic(out / "table_time.md", markdown(table)),
                  "tex": write_atomic(out / "table_time.tex", latex(table))})
    files["figure"] = bar_chart(table, out / "figure_time")
    if published is not None:
        files["comparison"] = write_atomic(out / "table_time_vs_published.md",
                                           published_comparison(table, published, others))
    return files
