"""What every section of paper/REPORT.md shares: :class:`Section` (the generic section, and the base
of the studies' own writers) and the small helpers the studies use with it (:func:`_read`,
:func:`fmt`, :func:`_order`).

Its own module so that the studies (:mod:`gpude.report.janssen`, ...) import it while
:mod:`gpude.report.document`, which assembles the report, imports the studies: neither imports the
other in a circle.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd

from ..core.io import read_csv
from ..implementations import registry
from .intervals import Ratio, Samples, of_means, ratio
from .timing import _ordered
from .verdict import n_per_cell, span


def _read(path) -> pd.DataFrame:
    path = Path(path)
    return read_csv(path, comment="#") if path.is_file() else pd.DataFrame()


def fmt(v, spec="{:.3g}") -> str:
    return "-" if v is None or pd.isna(v) else spec.format(v)


#: the appendix file beside the report (``REPORT.md`` -> ``REPORT_appendix.md``), which the body links to
APPENDIX_SUFFIX = "_appendix"

#: the kinds of deviation from a paper, in the order each paper's list gives them
DEVIATION_TOPICS = ("hardware", "trials", "budget", "parameters chosen by us", "left unstated by the paper",
                    "implementation", "timing")


@dataclass(frozen=True)
class Deviation:
    """One way our reproduction departs from the paper's setup, for the paper's list of deviations.

    Parameters
    ----------
    topic : str
        One of :data:`DEVIATION_TOPICS`.
    text : str
        What differs, in a sentence or a few (Markdown).
    """

    topic: str
    text: str

    def __post_init__(self):
        if self.topic not in DEVIATION_TOPICS:
            raise ValueError(f"a deviation's topic is one of {', '.join(DEVIATION_TOPICS)}, got {self.topic!r}")


def appendix_name(report) -> str:
    """The appendix's file name beside the report ``report`` (a path or a name)."""
    report = Path(report)
    return f"{report.stem}{APPENDIX_SUFFIX}{report.suffix or '.md'}"


def split_bullets(text: str) -> list[tuple[str, str]]:
    """The (label, text) of each '* **Label.** text' bullet of a Markdown block, its continuation lines
    joined to it and its sub-bullets kept on their own lines; lines before the first bullet are dropped."""
    items: list[list[str]] = []
    for line in text.splitlines():
        m = re.match(r"\* \*{1,2}(.+?)\*{1,2}\s*(.*)", line)
        if m:
            items.append([m.group(1).rstrip(".").rstrip(), m.group(2)])
        elif items and line.strip():
            items[-1][1] += f"\n  {line.strip()}" if line.lstrip().startswith("- ") else f" {line.strip()}"
    return [(label, text.strip()) for label, text in items]


def sorted_out(items: list[tuple[str, str]], topics: dict[str, str]) -> tuple[list[Deviation], list[tuple[str, str]]]:
    """``items`` (label, text) split into deviations (labels that ``topics`` maps to a topic of
    :data:`DEVIATION_TOPICS`; a key also matches the labels it starts before a colon, e.g. "Time" matches
    "Time: 30 trials per launch") and the rest, the section's anomalies and their causes."""
    deviations, rest = [], []
    for label, text in items:
        topic = topics.get(label, topics.get(label.split(":")[0]))
        if topic is None:
            rest.append((label, text))
        else:
            deviations.append(Deviation(topic, text if label.lower() == topic else f"*{label}.* {text}"))
    return deviations, rest


def bullets(items) -> str:
    """Markdown bullets of (label, text) pairs ('* **label.** text'); '' without items."""
    return "".join(f"* **{label}.** {text}\n" for label, text in items)


#: what the error bars of a time figure (:func:`gpude.report.timing.bar_chart`) show, for its caption
TIME_BARS = "error bars: +-1 standard deviation over the trials of the cell, none for a cell of one trial"

#: the generic outputs of ``gpude paper`` a section may leave out (the others are always written):
#: "time", the wall-time tables and figure (table_time.csv/.md/.tex, figure_time, the comparison
#: with a published time table); "time_vs_popsize", the mean wall time against NP per function;
#: "figures", the figures of every trial (FIGURES: convergence against FEs and time, ECDF, final error
#: against time), drawn for a study whose section shows them and on request for any other
GENERIC_OUTPUTS = ("time", "time_vs_popsize", "figures")
#: the figures of every trial, by file stem (written by :func:`gpude.report.paper.write_figures`)
FIGURES = ("convergence", "convergence_time", "ecdf", "error_vs_time")


class Section:
    """What every section has: the experiment, its paper folder, its tables."""

    #: which of :data:`GENERIC_OUTPUTS` this study wants (`gpude paper --study` writes only these,
    #: and the workflow's paper rule declares only these); a study whose runs have a time budget
    #: leaves out the wall-time outputs, which say nothing there (every run takes the budget)
    generic_outputs = GENERIC_OUTPUTS
    #: the study's name in the report's verdict table (None: a section of no study, with no verdicts)
    study: str | None = None
    #: a reference's guest rows (another host of its GPU, its times uncounted there) join its machine
    #: with their times dropped (:func:`gpude.report.sources.at_home`); False for a study that compares
    #: each host's own rows, batched shares included, as measured
    join_guests = True

    @staticmethod
    def write_outputs(trials: pd.DataFrame, traces: dict, out_dir, **inputs) -> list[Path]:
        """A study's own tables and figures, written by ``gpude paper --study <section>`` beside the
        generic ones (e.g. Nashed et al.'s Table 2 statistics); none by default. ``inputs`` are the
        files the experiment names under ``report: study_inputs:`` (name -> path)."""
        if inputs:
            from ..core.errors import InvalidInputError

            raise InvalidInputError(f"this report section reads no study inputs; got {', '.join(inputs)}")
        return []

    def __init__(self, spec: dict, paper_dir: Path, report_dir: Path):
        self.spec, self.dir = spec, Path(paper_dir)
        # the links from the report to the section's files (a report written elsewhere: '../' up to them)
        self.rel = Path(os.path.relpath(Path(paper_dir).resolve(), Path(report_dir).resolve())).as_posix()
        self.times = _read(self.dir / "table_time.csv")
        self.errors = _read(self.dir / "table_error.csv")
        self.provenance = _read(self.dir / "provenance.csv")
        #: one row per timed trial behind table_time.csv (how each was timed: ``timed``), for intervals
        self.trial_times = _read(self.dir / "trial_times.csv")
        self.trial_errors = _read(self.dir / "trial_errors.csv")
        listed = self.times if len(self.times) else self.errors  # a study without wall-time tables
        self.machines = sorted(listed["machine"].unique()) if len(listed) else []
        #: the appendix file the body links to (:func:`gpude.report.document.build` names it)
        self.appendix_file = appendix_name("REPORT.md")

    @property
    def anchor(self) -> str:
        """The id of this section's part of the appendix."""
        return f"appendix-{self.spec['name']}"

    def appendix_link(self, what: str = "tables per cell, statistics and where the numbers come from") -> str:
        """A sentence pointing at this section's part of the appendix."""
        return f"In the appendix: [{what}]({self.appendix_file}#{self.anchor}).\n"

    def figure(self, stem: str, caption: str) -> str:
        """A figure of the paper folder with its caption, which names the machine(s) and n (added where
        the caption does not say them)."""
        if not (self.dir / f"{stem}.png").is_file():
            return ""
        caption += self.made_by(caption)
        # a link only to a PDF that was written (the figure formats are the experiment's choice)
        pdf = f" ([PDF]({self.rel}/{stem}.pdf))" if (self.dir / f"{stem}.pdf").is_file() else ""
        # the caption right under its image (one paragraph), so that a figure takes two lines of the report
        return f"![{caption}]({self.rel}/{stem}.png)\n*{caption}*{pdf}\n"

    def made_by(self, caption: str = "") -> str:
        """' (machine; n = lo-hi trials per cell)': what a caption must say of its numbers, less what
        ``caption`` says already ('' where it names a machine of the section and n)."""
        parts = []
        if not any(m in caption for m in self.machines):
            parts.append("; ".join(self.machines) or "no machine")
        listed = self.times if len(self.times) else self.errors
        if not re.search(r"\bn\s*=", caption) and len(listed) and "n" in listed:
            parts.append(n_per_cell(int(listed["n"].min()), int(listed["n"].max())))
        return f" ({'; '.join(parts)})" if parts else ""

    def title(self) -> str:
        return self.spec.get("description") or self.spec["name"]

    def verdicts(self) -> list:
        """This section's rows of the report's verdict table (:class:`gpude.report.verdict.Verdict`),
        from the same data as its text; none for a section of no study."""
        return []

    def deviations(self) -> list[Deviation]:
        """Where this experiment departs from its paper's setup (hardware, trials, budgets, parameters
        we chose, what the paper leaves unstated), for the paper's list of deviations. The generic
        section says its machines and its trials per cell."""
        found = []
        if self.machines:
            found.append(Deviation("hardware", f"Ours ran on {'; '.join(self.machines)}."))
        if len(self.times):
            found.append(Deviation("trials", f"n per cell: {self.trials_per_cell()}."))
        return found

    #: which labels of the section's notes (:meth:`notes`) are deviations from the paper's setup, by
    #: topic of :data:`DEVIATION_TOPICS`; the other notes are its anomalies
    DEVIATIONS: dict[str, str] = {}

    def notes(self) -> str:
        """The section's '* **Label.** text' notes on what differs from the paper and why (Markdown); none
        in the generic section."""
        return ""

    @cached_property
    def sorted_notes(self) -> tuple[list[Deviation], list[tuple[str, str]]]:
        """:meth:`notes` split into deviations (labels of :data:`DEVIATIONS`) and anomalies."""
        return sorted_out(split_bullets(self.notes()), self.DEVIATIONS)

    def anomalies(self) -> list[tuple[str, str]]:
        """Where our results differ from the paper's or from what is expected, each with its check or
        cause as the section's data say it, as (label, text): the notes that are no deviation."""
        return self.sorted_notes[1]

    def cell_checks(self) -> dict[str, str]:
        """The section's own check of single cells it compares with the paper, as {cell label (the
        labels its verdicts give :func:`gpude.report.verdict.numbers_of`): cause and check}, for the
        anomaly list (:mod:`gpude.report.anomalies`); none in the generic section."""
        return {}

    def cells_table(self) -> pd.DataFrame:
        """``table_cells.csv``: one row per cell and commit or session, what the figures of time against
        NP plot (empty where not written)."""
        return _read(self.dir / "table_cells.csv")

    def appendix(self) -> str:
        """What the body leaves to the appendix: the tables per cell, the figures of every trial, the
        statistics and where the numbers come from. The generic section's final errors, figures,
        statistics and sources."""
        return "\n".join(part for part in [
            self.figure("figure_time", f"Mean wall-clock time per function (log scale; {TIME_BARS})"),
            "### Final error", "", self.error_markdown(),
            self.figure("convergence_time", "Median best error vs wall-clock time, min-max band over trials"),
            self.figure("convergence", "Median best error vs FEs, min-max band over trials"),
            self.figure("error_vs_time", "Final error vs wall-clock time, one point per trial"),
            self.figure("ecdf", "Fraction of (trial, target) pairs reached vs FEs, targets 1e2..1e-8"),
            self.statistics_block(), self.sources()] if part)

    def statistics_block(self) -> str:
        """The statistics under their heading ('' without statistics files)."""
        text = self.statistics()
        return f"### Statistics\n\n{text}" if text else ""

    def settings(self) -> str:
        s = self.spec
        def params(v):
            given = [f"{k}={x}" for k, x in v.items() if k != "implementations"]
            return f" ({', '.join(given)})" if given else " (its default parameters)"
        algos = "; ".join(f"{a}{params(v)}" for a, v in s["algorithms"].items())
        ran = ", ".join(_order(self.times["implementation"].astype(str).unique())) if len(self.times) else "none"
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
        return ", ".join(f"{i} {span(int(n.loc[i, 'min']), int(n.loc[i, 'max']))}" for i in _order(n.index))

    def batched_note(self) -> str:
        """Where rows advanced several trials per launch: which, and that their times are each run's
        share of its launch (throughput), not the latency of one run ('' where every run had its own)."""
        p = self.provenance
        if not len(p) or "trials_per_launch" not in p:
            return ""
        per = pd.to_numeric(p["trials_per_launch"], errors="coerce")
        batched = p[per > 1]
        if not len(batched):
            return ""
        named = sorted({f"{r.implementation} ({int(float(r.trials_per_launch))} a launch)"
                        for r in batched.itertuples()})
        return ("Batched rows: " + ", ".join(named) + ". Their time per trial is the trial's share of its launch "
                "(while k trials still run, each is charged 1/k of the time): throughput, not the latency of one "
                "run; a time of one run a launch is the latency.\n")

    @cached_property
    def time_samples(self) -> Samples:
        """``time_samples(implementation, function, machine)``: a cell's wall times in trial_times.csv."""
        return Samples(self.trial_times)

    @cached_property
    def error_samples(self) -> Samples:
        """``error_samples(implementation, function, machine)``: a cell's final errors in trial_errors.csv."""
        return Samples(self.trial_errors, "best_error")

    def time_ratio(self, implementation: str, function: str, theirs, machine: str | None = None,
                   statistic=np.mean) -> Ratio:
        """The ratio of ``implementation``'s wall time on ``function`` to ``theirs`` (another of our
        implementations, whose trials are resampled too, or a fixed number such as a paper's), with its
        bootstrap interval over the rows of trial_times.csv (:mod:`gpude.report.intervals`); from the
        time table's means, without an interval, where trial_times.csv lacks the cell."""
        ours = self.time_samples(implementation, function, machine)
        other = self.time_samples(theirs, function, machine) if isinstance(theirs, str) else theirs
        if len(ours) and (not isinstance(theirs, str) or len(other)):
            return ratio(ours, other, statistic)
        t = self.times
        if not len(t):
            return of_means(float("nan"), 0)
        t = t if machine is None else t[t["machine"] == machine]
        cell = t.set_index(["implementation", "function"])
        def mean(impl):
            return cell["mean_s"].get((impl, function), np.nan) if (impl, function) in cell.index else np.nan
        def n(impl):
            return int(cell["n"].get((impl, function), 0)) if (impl, function) in cell.index else 0
        if isinstance(theirs, str):
            return of_means(mean(implementation) / mean(theirs), n(implementation), n(theirs))
        return of_means(mean(implementation) / float(theirs), n(implementation))

    def error_ratio(self, implementation: str, function: str, theirs: float, machine: str | None = None) -> Ratio:
        """``implementation``'s mean final error on ``function`` over a fixed number ``theirs`` (a paper's mean),
        with its bootstrap interval over the rows of trial_errors.csv (none where it lacks the cell)."""
        ours = self.error_samples(implementation, function, machine)
        return ratio(ours, float(theirs)) if len(ours) else of_means(float("nan"), 0)

    def rows_label(self, implementations=None) -> str:
        """What a ratio or table of ``implementations`` (labels, or their first part: ``many_threaded``
        covers ``many_threaded/64``; every implementation by default) must say of its rows, from the data:
        those made several to a launch (``trials_per_launch`` > 1 in provenance.csv; under the experiment's
        wall-clock budget where it has one) and those not timed alone (trial_times.csv's ``timed``, else
        provenance.csv's ``concurrency``). '' where every row ran one a launch and was timed alone."""
        from ..run.rows import timed_alone

        def wanted(frame):
            if implementations is None or not len(frame):
                return frame
            names = {str(i) for i in implementations}
            label = frame["implementation"].astype(str)
            return frame[label.isin(names) | label.str.split("/").str[0].isin(names)]

        p, t = wanted(self.provenance), wanted(self.trial_times)
        batched: dict[str, set[int]] = {}
        if len(p) and "trials_per_launch" in p:
            for impl, value in zip(p["implementation"].astype(str), p["trials_per_launch"].astype(str)):
                counts = {int(float(v)) for v in value.split(";") if v.strip().replace(".", "", 1).isdigit()}
                if max(counts, default=1) > 1:
                    batched.setdefault(impl.split("/")[0], set()).update(k for k in counts if k > 1)
        shared: dict[str, set[str]] = {}
        if len(t) and "timed" in t:
            for impl, how in zip(t["implementation"].astype(str), t["timed"].astype(str)):
                if how != "alone":
                    shared.setdefault(impl, set()).add(how)
        elif len(p) and "concurrency" in p:
            for impl, how in zip(p["implementation"].astype(str), p["concurrency"].astype(str)):
                if not timed_alone(pd.Series([how])).iloc[0]:
                    shared.setdefault(impl.split("/")[0], set()).add(how)
        parts = []
        if batched:
            budget = self.spec.get("max_time_s")
            under = (f" under a wall-clock budget of {budget:g} s a run" if isinstance(budget, (int, float))
                     else " under a wall-clock budget" if budget else "")
            parts.append("rows made several to a launch" + under + ": " + ", ".join(
                f"{i} ({'-'.join(map(str, sorted(k)))} a launch)" for i, k in sorted(batched.items()))
                + ", each run a share of its launch (throughput, not a lone run's latency)")
        if shared:
            parts.append("rows timed side by side with other batches, not alone: " + ", ".join(
                f"{i} ({'; '.join(f'`{h}`' for h in sorted(hows))})" for i, hows in sorted(shared.items())))
        return ("Rows used here: " + "; ".join(parts) + ".") if parts else ""

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

    def _stats(self, name: str) -> pd.DataFrame:
        """A statistics file (``stats/<name>.csv``); one written before the files were per machine
        reads as one unnamed machine."""
        frame = _read(self.dir / f"stats/{name}.csv")
        if len(frame.columns) and "machine" not in frame:
            frame.insert(0, "machine", "")
        return frame

    def stats_machines(self) -> list[str]:
        """The machines of the statistics files, the one with the most trials first."""
        machines = self._stats("machines")
        if len(machines):
            return list(machines["machine"])
        scores = self._stats("rank_sum_fes")
        return list(dict.fromkeys(scores["machine"])) if len(scores) else []

    def statistics(self) -> str:
        """The statistics block: rank-sum scores and tests, one part per machine (a time-based score
        compares only on one machine, and no trial counts twice)."""
        scores, fes = self._stats("rank_sum_time"), self._stats("rank_sum_fes")
        if not len(scores) and not len(fes):
            return ""
        excluded, kw, fr = self._stats("excluded"), self._stats("kruskal"), self._stats("friedman")
        machines, same = self._stats("machines"), self._stats("same_runs")
        omitted = self._stats("omitted")
        no_time = len(omitted) and "rank_sum_time.csv" in set(omitted["file"])
        lines = ["Rank-sum score (Janssen et al. sec. 7.3.5; higher is better): all trials of all competitors "
                 "on a function ranked together, trials that reached the target ahead of the rest (by "
                 "wall-clock time; CEC 2022 variant: by FEs), the rest by final error. Every score and test "
                 "is computed within one machine (GPU model, CPU, cores): wall-clock times compare only "
                 "there, and no trial counts twice where the same runs were made on two machines."]
        if no_time:
            reason = omitted.set_index("file").loc["rank_sum_time.csv", "reason"]
            lines += ["", f"No time-based score: {reason}. The FE-based score stands alone."]
        for machine in self.stats_machines():
            def here(frame, machine=machine):
                return frame[frame["machine"] == machine] if len(frame) else frame
            m = here(machines)
            n = (f"{int(m['trials'].iloc[0])} trials, {int(m['trials_per_cell'].iloc[0])} per competitor and "
                 "function" if len(m) else "")
            lines += ["", f"**On {machine or 'the machine'}**" + (f" ({n})" if n else "") + ":", ""]
            t, f = here(scores), here(fes)
            total = t.set_index("function").loc["total"] if len(t) else None
            total_fes = f.set_index("function").loc["total"] if len(f) else None
            if total is None and total_fes is None:
                continue
            comps = [c for c in (f if len(f) else t).columns if c not in ("machine", "function")]
            comps = [c for c in comps if pd.notna((total_fes if total_fes is not None else total)[c])]
            head = ["competitor"] + ([] if no_time else ["score, time"]) + ["score, FEs"]
            lines += ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
            for c in comps:
                cells = [c] + ([] if no_time else [fmt(total[c] if total is not None else np.nan, "{:.1f}")])
                cells.append(fmt(total_fes[c] if total_fes is not None else np.nan, "{:.1f}"))
                lines.append("| " + " | ".join(cells) + " |")
            pairs = here(same)
            if len(pairs):
                who = "; ".join(f"{r.a} and {r.b}" for r in pairs.itertuples())
                lines += ["", f"Same runs: {who} made the very same runs here (the same final error and FEs on "
                          "every trial): " + ("nothing separates them." if no_time else
                                              "only the time score can separate them, and any difference "
                                              "there is one of speed, not of search.")]
            left = here(excluded)
            if len(left):
                lines += ["", "Left out of the scores for having fewer trials than the others (the score needs "
                          "equal counts): " + ", ".join(left["competitor"]) + "."]
            r = here(fr)
            if len(r):
                lines += ["", f"Friedman test across the {int(r['functions'].iloc[0])} functions (median final "
                          f"error per function): chi2 = {fmt(r['statistic'].iloc[0])}, p = {fmt(r['p'].iloc[0])}; "
                          "mean ranks " + ", ".join(f"{c} {v:.2f}" for c, v in zip(r["competitor"], r["mean_rank"]))
                          + "."]
            k = here(kw)
            if len(k):
                sig = int((k["p"] < 0.05).sum())
                lines += ["", f"Kruskal-Wallis on the final error across these competitors: p < 0.05 on {sig} of "
                          f"{len(k)} functions (`{self.rel}/stats/kruskal.csv`; pairwise Mann-Whitney U with "
                          f"Holm correction in `{self.rel}/stats/pairwise_mannwhitney.csv`)."]
        return "\n".join(lines) + "\n"

    def body(self) -> str:
        """The section's setup and its results beside the paper's (the rest: :meth:`appendix`)."""
        table = (self.dir / "table_time.md").read_text() if (self.dir / "table_time.md").is_file() else ""
        return "\n".join(part for part in [
            "### Setup", "", self.settings(), "", "### Wall time", "", self.batched_note(), table] if part is not None)

    def render(self) -> str:
        """The section of the report's body: its title, :meth:`body`, :meth:`anomalies` and the link to
        its part of the appendix (the paper's deviations follow its last section)."""
        found = self.anomalies()
        parts = [f"## {self.title()}", "", self.body()]
        if found:
            parts += ["### What differs and why (anomalies and their causes)", "", bullets(found)]
        if self.appendix().strip():
            parts.append(self.appendix_link())
        return "\n".join(parts) + "\n"

    def render_appendix(self) -> str:
        """This section's part of the appendix, under an anchor the body links to ('' when empty)."""
        text = self.appendix()
        return f'<a id="{self.anchor}"></a>\n\n## {self.title()}\n\n{text}\n' if text.strip() else ""


def _order(names):
    return _ordered(list(names))
