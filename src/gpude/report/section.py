"""What every section of paper/REPORT.md shares: :class:`Section` (the generic section, and the base
of the studies' own writers) and the small helpers the studies use with it (:func:`_read`,
:func:`fmt`, :func:`_order`).

Its own module so that the studies (:mod:`gpude.report.janssen`, ...) import it while
:mod:`gpude.report.document`, which assembles the report, imports the studies: neither imports the
other in a circle.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from .. import registry
from ..io import read_csv
from .timing import _ordered


def _read(path) -> pd.DataFrame:
    path = Path(path)
    return read_csv(path, comment="#") if path.is_file() else pd.DataFrame()


def fmt(v, spec="{:.3g}") -> str:
    return "-" if v is None or pd.isna(v) else spec.format(v)


#: the generic outputs of ``gpude paper`` a section may leave out (the others are always written):
#: "time", the wall-time tables and figure (table_time.csv/.md/.tex, figure_time, the comparison
#: with a published time table); "time_vs_popsize", the mean wall time against NP per function
GENERIC_OUTPUTS = ("time", "time_vs_popsize")


class Section:
    """What every section has: the experiment, its paper folder, its tables."""

    #: which of :data:`GENERIC_OUTPUTS` this study wants (`gpude paper --study` writes only these,
    #: and the workflow's paper rule declares only these); a study whose runs have a time budget
    #: leaves out the wall-time outputs, which say nothing there (every run takes the budget)
    generic_outputs = GENERIC_OUTPUTS
    #: the study's name in the report's verdict table (None: a section of no study, with no verdicts)
    study: str | None = None

    @staticmethod
    def write_outputs(trials: pd.DataFrame, traces: dict, out_dir, **inputs) -> list[Path]:
        """A study's own tables and figures, written by ``gpude paper --study <section>`` beside the
        generic ones (e.g. Nashed et al.'s Table 2 statistics); none by default. ``inputs`` are the
        files the experiment names under ``report: study_inputs:`` (name -> path)."""
        if inputs:
            from ..errors import InvalidInputError

            raise InvalidInputError(f"this report section reads no study inputs; got {', '.join(inputs)}")
        return []

    def __init__(self, spec: dict, paper_dir: Path, report_dir: Path):
        self.spec, self.dir = spec, Path(paper_dir)
        self.rel = Path(paper_dir).resolve().relative_to(report_dir.resolve()).as_posix()
        self.times = _read(self.dir / "table_time.csv")
        self.errors = _read(self.dir / "table_error.csv")
        self.provenance = _read(self.dir / "provenance.csv")
        listed = self.times if len(self.times) else self.errors  # a study without wall-time tables
        self.machines = sorted(listed["machine"].unique()) if len(listed) else []

    def figure(self, stem: str, caption: str) -> str:
        """A figure of the paper folder with its caption, which names the machine(s) and n (added where
        the caption does not say them)."""
        if not (self.dir / f"{stem}.png").is_file():
            return ""
        caption += self.made_by(caption)
        return f"![{caption}]({self.rel}/{stem}.png)\n\n*{caption}* ([PDF]({self.rel}/{stem}.pdf))\n"

    def made_by(self, caption: str = "") -> str:
        """' (machine; n = lo-hi trials per cell)': what a caption must say of its numbers, less what
        ``caption`` says already ('' where it names a machine of the section and n)."""
        parts = []
        if not any(m in caption for m in self.machines):
            parts.append("; ".join(self.machines) or "no machine")
        listed = self.times if len(self.times) else self.errors
        if not re.search(r"\bn\s*=", caption) and len(listed) and "n" in listed:
            lo, hi = int(listed["n"].min()), int(listed["n"].max())
            parts.append(f"n = {lo}" + (f"-{hi}" if hi != lo else "") + (" trial" if hi == 1 else " trials")
                         + " per cell")
        return f" ({'; '.join(parts)})" if parts else ""

    def title(self) -> str:
        return self.spec.get("description") or self.spec["name"]

    def verdicts(self) -> list:
        """This section's rows of the report's verdict table (:class:`gpude.report.verdict.Verdict`),
        from the same data as its text; none for a section of no study."""
        return []

    def settings(self) -> str:
        s = self.spec
        def params(v):
            given = [f"{k}={x}" for k, x in v.items() if k != "implementations"]
            return f" ({', '.join(given)})" if given else " (its default parameters)"
        algos = "; ".join(f"{a}{params(v)}" for a, v in s["algorithms"].items())
        ran = ", ".join(_order(self.times["implementation"].unique())) if len(self.times) else "none"
        listed = [i for v in s["algorithms"].values() for i in v["implementations"]]
        # table labels are implementations, or competitors such as de/ide/50 where more varies
        present = {part for label in self.times.get("implementation", []) for part in str(label).split("/")}
        missing = [i for i in listed if i not in present]
        def join(v):
            return ", ".join(map(str, v)) if isinstance(v, list) else str(v)
        # an experiment may give population sizes only per algorithm (listed with its parameters)
        nps = f"NP = {join(s['popsizes'])}" if "popsizes" in s else "NP per algorithm"
        text = (f"Experiment `{s['name']}` (`config/experiments/{s['name']}.yaml`): {algos}; functions "
                f"{join(s['functions'])}; D = {join(s['dims'])}; {nps}; budget "
                f"{s['max_fes']} FEs; target error {s.get('target', 1e-8):g}; {join(s.get('dtypes', ['float64']))}. "
                f"Implementations with results: {ran}.")
        if missing:
            text += f" No results (yet) for: {', '.join(missing)}."
            if any(registry.get(a, i).needs_gpu for a, v in s["algorithms"].items()
                   for i in v["implementations"] if i in missing):
                text += " A machine without a GPU leaves the GPU implementations out."
        return text + f" Machines: {'; '.join(self.machines) or 'none'}."

    def trials_per_cell(self) -> str:
        """'name n' (or 'name min-max') for every implementation or competitor in the time table."""
        if not len(self.times):
            return ""
        n = self.times.groupby("implementation", observed=True)["n"].agg(["min", "max"])
        return ", ".join(f"{i} {int(n.loc[i, 'min'])}"
                         + (f"-{int(n.loc[i, 'max'])}" if n.loc[i, "max"] != n.loc[i, "min"] else "")
                         for i in _order(n.index))

    def sources(self) -> str:
        """Where the numbers come from: a row per machine and implementation."""
        p = self.provenance
        if not len(p):
            return ""
        cols = [c for c in ("machine", "implementation", "trials", "concurrency", "trials_per_launch", "dtype",
                            "git_commit",
                            "numba", "numba_cuda", "cuda_driver", "first_utc", "last_utc") if c in p]
        lines = ["| " + " | ".join(cols) + " |", "|---" * len(cols) + "|"]
        for row in p[cols].to_dict("records"):
            lines.append("| " + " | ".join("" if pd.isna(row[c]) else str(row[c]) for c in cols) + " |")
        return "### Where the numbers come from\n\nTrials per machine and implementation, how their batches " \
               "shared the machine, and what ran them:\n\n" + "\n".join(lines) + "\n"

    def error_markdown(self) -> str:
        if not len(self.errors):
            return ""
        lines = []
        for machine, part in self.errors.groupby("machine"):
            mean = part.pivot(index="implementation", columns="function", values="mean_error")
            n = part.pivot(index="implementation", columns="function", values="n")
            rate = part.pivot(index="implementation", columns="function", values="success_rate")
            cols = list(mean.columns)
            lines += [f"Mean best error (n; success rate at the target) on {machine}.", "",
                      "| implementation | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
            for impl in _order(mean.index):
                lines.append(f"| {impl} | " + " | ".join(
                    f"{fmt(mean.loc[impl, c], '{:.3g}')} ({fmt(n.loc[impl, c], '{:.0f}')}; "
                    f"{fmt(rate.loc[impl, c], '{:.0%}')})" for c in cols) + " |")
            lines.append("")
        return "\n".join(lines)

    def statistics(self) -> str:
        scores = _read(self.dir / "stats/rank_sum_time.csv")
        fes = _read(self.dir / "stats/rank_sum_fes.csv")
        excluded = _read(self.dir / "stats/excluded.csv")
        kw = _read(self.dir / "stats/kruskal.csv")
        if not len(scores):
            return ""
        comps = [c for c in scores.columns if c != "function"]
        total = scores.set_index("function").loc["total"]
        total_fes = fes.set_index("function").loc["total"] if len(fes) else None
        lines = ["Rank-sum score (Janssen et al. sec. 7.3.5; higher is better): all trials of all competitors "
                 "on a function ranked together, trials that reached the target ahead of the rest (by "
                 "wall-clock time; CEC 2022 variant: by FEs), the rest by final error.", "",
                 "| competitor | score, time | score, FEs |", "|---|---|---|"]
        for c in comps:
            lines.append(f"| {c} | {fmt(total[c], '{:.1f}')} | "
                         f"{fmt(total_fes[c] if total_fes is not None else np.nan, '{:.1f}')} |")
        if len(excluded):
            lines += ["", "Left out of the scores for having fewer trials than the others (the score needs "
                      "equal counts): " + ", ".join(excluded["competitor"]) + "."]
        fr = _read(self.dir / "stats/friedman.csv")
        if len(fr):
            lines += ["", f"Friedman test across the {int(fr['functions'].iloc[0])} functions (median final error "
                      f"per function): chi2 = {fr['statistic'].iloc[0]:.3g}, p = {fr['p'].iloc[0]:.3g}; mean ranks "
                      + ", ".join(f"{c} {r:.2f}" for c, r in zip(fr["competitor"], fr["mean_rank"])) + "."]
        if len(kw):
            sig = int((kw["p"] < 0.05).sum())
            lines += ["", f"Kruskal-Wallis on the final error across these competitors: p < 0.05 on {sig} of "
                      f"{len(kw)} functions (`{self.rel}/stats/kruskal.csv`; pairwise Mann-Whitney U with "
                      f"Holm correction in `{self.rel}/stats/pairwise_mannwhitney.csv`)."]
        return "\n".join(lines) + "\n"

    def body(self) -> str:
        table = (self.dir / "table_time.md").read_text() if (self.dir / "table_time.md").is_file() else ""
        return "\n".join(part for part in [
            self.settings(), "", "### Wall time", "", table,
            self.figure("figure_time", "Mean wall-clock time per function (log scale)"),
            "### Final error", "", self.error_markdown(),
            self.figure("convergence_time", "Median best error vs wall-clock time, min-max band over trials"),
            self.figure("convergence", "Median best error vs FEs, min-max band over trials"),
            self.figure("error_vs_time", "Final error vs wall-clock time, one point per trial"),
            self.figure("ecdf", "Fraction of (trial, target) pairs reached vs FEs, targets 1e2..1e-8"),
            "### Statistics", "", self.statistics(), self.sources()] if part is not None)

    def render(self) -> str:
        return f"## {self.title()}\n\n{self.body()}"


def _order(names):
    return _ordered(list(names))
