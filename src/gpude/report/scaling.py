"""Per-cell statistics (implementation x function x D x NP) and Qin et al.'s Figs. 3-6: mean
wall time against the population size, a figure per function, a panel per dimension, a line
per implementation."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from ..core.io import save_figure
from .timing import ORDER, _machine, _ordered, implementation_labels
from .trial_params import program_sources

SUCCESS_ERROR = 1e-8  # Qin et al.: a run succeeds when its final error is below 1e-8
CELL = ["machine", "algorithm", "implementation", "function", "dim", "popsize", "dtype"]


def cell_table(trials: pd.DataFrame) -> pd.DataFrame:
    """Per (machine, algorithm, implementation, function, D, NP, dtype): n, mean and standard
    deviation (n-1) of the final error and of the wall time, the success rate (final error below
    1e-8, whatever the experiment's stopping target), the fraction that stopped at the target, and
    the commits and sessions (boots of the machine, else commits) that ran the cell: each session's n, mean
    time and how its rows shared the host (``session_concurrency``), and, for an outside program's rows,
    the source it was built from (``program_source``)."""
    t = _machine(trials)
    t = t[t["best_error"].notna() & t["wall_time_s"].notna()]
    if "git_commit" in t:  # a session: one boot of the machine where recorded, else one commit
        session = "commit " + t["git_commit"].astype(str)
        if "boot_id" in t:
            boot = t["boot_id"].astype("string")
            session = boot.where(boot.notna() & (boot != ""), session)
        t = t.assign(session=session)
    cols = [c for c in CELL if c in t]
    out = (t.groupby(cols, observed=True)
           .agg(n=("best_error", "size"), mean_error=("best_error", "mean"), std_error=("best_error", "std"),
                mean_time_s=("wall_time_s", "mean"), std_time_s=("wall_time_s", "std"),
                success_rate=("best_error", lambda e: float((e < SUCCESS_ERROR).mean())),
                **({"hit_rate": ("hit_target", lambda h: float(h.astype(bool).mean()))} if "hit_target" in t else {}),
                **({k: (k, lambda c: ";".join(sorted(set(map(str, c))))) for k in ("git_commit", "session")
                    if k in t}))
           .reset_index())
    if "session" in t and len(out):
        # each session's n and mean time (``session_timed``: the sessions, in that order) over like rows
        # only: the runs timed alone and one a launch where the cell has any (the rows its time tables
        # use; ``session_rows`` "alone"), else all ("all")
        like = _timed_like(t, cols)
        if "concurrency" not in like:
            like = like.assign(concurrency="")
        per = like.groupby([*cols, "session"], observed=True).agg(
            size=("wall_time_s", "size"), mean=("wall_time_s", "mean"),
            sharing=("concurrency", lambda c: "+".join(sorted({str(x) for x in c if pd.notna(x) and str(x)})))
        ).reset_index()
        parts = per.groupby(cols, observed=True).agg(
            session_timed=("session", lambda v: ";".join(map(str, v))),
            session_n=("size", lambda v: ";".join(str(int(x)) for x in v)),
            session_mean_time_s=("mean", lambda v: ";".join(f"{x:.6g}" for x in v)),
            session_concurrency=("sharing", lambda v: ";".join(map(str, v)))).reset_index()
        kinds = like.groupby(cols, observed=True)["_alone"].all().rename("session_rows").reset_index()
        kinds["session_rows"] = kinds["session_rows"].map({True: "alone", False: "all"})
        out = out.merge(parts, on=cols, how="left").merge(kinds, on=cols, how="left")
    sources = program_sources(t)
    if sources is not None:  # an outside program's rows: the source its runs were built from
        out = out.merge(t.assign(_source=sources).groupby(cols, observed=True)["_source"]
                        .agg(lambda v: ";".join(sorted({x for x in v if x}))).rename("program_source")
                        .reset_index(), on=cols, how="left")
    out["implementation"] = pd.Categorical(out["implementation"], _ordered(out["implementation"].unique()))
    return out.sort_values(cols).reset_index(drop=True)


def _timed_like(t: pd.DataFrame, cols: list[str]) -> pd.DataFrame:
    """The rows of ``t`` timed alone and made one a launch (``_alone`` True) in the cells that have any,
    all rows (``_alone`` False) in the others."""
    from ..run.rows import one_per_launch, timed_alone

    alone = (timed_alone(t["concurrency"]) if "concurrency" in t else pd.Series(True, index=t.index)) \
        & one_per_launch(t).astype(bool)
    t = t.assign(_alone=alone)
    has = t.groupby(cols, observed=True)["_alone"].transform("any")
    return t[t["_alone"] | ~has]


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", str(text)).strip("_")


def time_vs_popsize(cells: pd.DataFrame, out_dir) -> list[Path]:
    """Figs. 3-6 of Qin et al.: per machine and function, mean wall time (log) against NP (log), a
    panel per D, a line per implementation (and dtype, dashed, where several ran). Nothing where no
    competitor ran two population sizes of a function (e.g. Nashed et al.: one NP per algorithm)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    line = [c for c in ("machine", "algorithm", "implementation", "function", "dim", "dtype") if c in cells]
    if not len(cells) or cells.groupby(line, observed=True)["popsize"].nunique().max() < 2:
        return []
    paths = []
    cells = cells.assign(implementation=implementation_labels(cells))  # pso/gpu and ss/gpu, not "gpu" twice
    machines = sorted(cells["machine"].unique())
    for machine in machines:
        for function, part in cells[cells["machine"] == machine].groupby("function", sort=True):
            dims = sorted(part["dim"].unique())
            fig, axes = plt.subplots(1, len(dims), figsize=(3.6 * len(dims), 3.2), squeeze=False)
            for ax, dim in zip(axes[0], dims):
                panel = part[part["dim"] == dim]
                dtypes = sorted(panel["dtype"].astype(str).unique(), reverse=True)  # float64 first
                for k, impl in enumerate(_ordered(list(panel["implementation"].astype(str).unique()))):
                    colour = ORDER.index(impl) if impl in ORDER else len(ORDER) + k
                    for j, dtype in enumerate(dtypes):  # a colour per implementation, a dash per dtype
                        line = panel[(panel["implementation"].astype(str) == impl)
                                     & (panel["dtype"].astype(str) == dtype)].sort_values("popsize")
                        if len(line):
                            ax.plot(line["popsize"], line["mean_time_s"], marker="o", color=f"C{colour % 10}",
                                    linestyle=("-", "--", ":")[j % 3],
                                    label=impl if len(dtypes) == 1 else f"{impl} {dtype}")
                ax.set_xscale("log")
                ax.set_yscale("log")
                ax.set_xticks(sorted(panel["popsize"].unique()))
                ax.set_xticklabels([str(p) for p in sorted(panel["popsize"].unique())])
                ax.minorticks_off()
                ax.set_title(f"{function}, D={dim}", fontsize=9)
                ax.set_xlabel("population size NP", fontsize=8)
                ax.set_ylabel("mean wall time (s)", fontsize=8)
                ax.tick_params(labelsize=7)
                ax.grid(True, which="major", alpha=0.3)
            axes[0][0].legend(fontsize=7)
            fig.suptitle(f"{function}: mean wall time vs population size ({machine})", fontsize=9)
            fig.tight_layout()
            stem = f"time_vs_popsize_{function}" + (f"_{_slug(machine)}" if len(machines) > 1 else "")
            paths += save_figure(fig, Path(out_dir) / stem, dpi=130)
            plt.close(fig)
    return paths
