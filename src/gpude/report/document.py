"""paper/REPORT.md, read as a paper, and its appendix paper/REPORT_appendix.md, assembled from the
files ``gpude paper`` wrote into ``paper/<experiment>/``: an abstract and a conclusion derived from the
verdicts, the methods, one part per reproduced paper (:mod:`gpude.report.papers`: its experiments'
sections, each with its setup, results beside the paper and anomalies, then the paper's one list of
deviations), the experiments of no paper (this machine's run) and the references; the tables per cell,
statistics and provenance go to the appendix, which the body links to.

A study with something to say beyond the generic tables has a section writer (a subclass of
:class:`gpude.report.section.Section`) listed in :func:`_sections`, and names it by ``report: section:``
in its experiment file. The studies import their kit from :mod:`gpude.report.section`, never from here.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import yaml

from ..core.io import write_atomic
from .papers import PAPERS, Paper, paper_of, references
from .section import DEVIATION_TOPICS, GENERIC_OUTPUTS, Section, _order, _read, appendix_name, fmt  # noqa: F401  (the studies' kit, imported from here too)
from .verdict import CLEAN, KINDS, SAME_MAGNITUDE, Verdict
from .verdict import render as render_verdicts


def _sections():
    from .cec2017_jso import Cec2017Jso
    from .janssen import CaseStudy1, CaseStudy2
    from .kromer import Kromer
    from .kromer_pilot import KromerPilot
    from .lastra import Lastra
    from .nashed import Nashed
    from .qin import Qin
    from .side_by_side import SideBySide

    return {"janssen_cs1": CaseStudy1, "janssen_cs2": CaseStudy2, "qin": Qin, "nashed": Nashed, "lastra": Lastra,
            "kromer": Kromer, "kromer_pilot": KromerPilot, "side_by_side": SideBySide,
            "cec2017_jso": Cec2017Jso}


def section_class(name: str | None) -> type[Section]:
    """The section writer of ``report: section:`` (the generic one for None); unknown names fail."""
    writers = _sections()
    if name is not None and name not in writers:
        from ..core.errors import InvalidInputError

        raise InvalidInputError(f"unknown report section {name!r}; known: {', '.join(writers)}")
    return writers.get(name, Section)


# The report's own terms, defined before any section uses them
GLOSSARY = [
    ("machine", "the GPU model, the CPU model and its core count of the host that made a row (e.g. NVIDIA H200 / "
                "Intel Xeon x16); times are compared within one machine"),
    ("n", "the number of trials (independent runs, one seed each) behind a number"),
    ("`concurrency`", "how a row's batch shared its host: `exclusive` (alone on the host, or on a one-GPU "
                      "host's GPU), `exclusive-gpu:N` (alone on its GPU of a host of N GPUs, sharing the cores; "
                      "`+cpu`: beside the CPU lanes), `exclusive-cpu:L` (a single-threaded CPU batch on a core of "
                      "its own, at most L at once), `host` (alone on the whole machine), `shared` or `shared:N` "
                      "(side by side with other batches, at most N at once): every `exclusive*` and `host` row "
                      "is timed alone, a `shared` one is not"),
    ("trials per launch; a run's share of the launch", "GPU implementations may advance several trials in one "
                     "kernel launch (`trials_per_launch`); each such trial's time is the launch's time divided by "
                     "its trials (`share of n/launch`): throughput, not the latency of one run"),
    ("`graph_generations`", "all_gpu and many_threaded: G generations' kernel launches captured as one CUDA graph "
                            "and launched together (1: every kernel launched on its own)"),
    ("pre-bound launch", "a kernel launch whose arguments are converted once and reused every generation "
                         "(`gpude.core.prebound`), leaving only the driver's launch cost"),
    ("boot, session", "one boot of a machine (`boot_id`): rows of different boots ran on different instances "
                      "of the same machine kind"),
]


def methods() -> str:
    """The methods: how runs are made and timed, what "alone" means, seeds, floating types, machines,
    and the statistics the sections use (:mod:`gpude.stats`), then the report's terms."""
    return "\n".join([
        "## Methods", "",
        "**Implementations and runs.** Every algorithm is written once and compiled for the CPU (numba) and the "
        "GPU (numba-cuda); each paper's implementation models are separate implementations of the same algorithm. "
        "A *trial* is one independent run of one (algorithm, implementation, function, D, NP, floating type) "
        "cell. Runs stop at the first of: the target error reached, the FE budget spent, the wall-clock budget "
        "spent (checked after every generation, so a run may overrun a wall-clock budget by one generation; on "
        "the GPU by the few generations queued ahead of the host). Each experiment file "
        "(`config/experiments/<name>.yaml`) gives the cells, budgets and parameters; every section's setup "
        "repeats them.", "",
        "**Timing.** A trial's `wall_time_s` runs from the start of its initialisation until its best value "
        "is on the host. It excludes process start-up, JIT compilation (every implementation is compiled and "
        "warmed up before its first trial) and the batch's set-up (`setup_time_s`, recorded apart). Where "
        "several trials advance in one GPU launch (`trials_per_launch` > 1), a trial is charged its fair share "
        "of the launch's wall time: while k trials still run, each is charged 1/k of the elapsed time; that is "
        "throughput, not the latency of a lone run, and the tables say so wherever such rows are used. The "
        "authors' programs rerun beside ours (Janssen et al.'s CUDA code, Brest's jSO) are timed as their "
        "sections state. Times are compared only within one machine.", "",
        "**Alone or shared.** Every row records how its batch shared the host (`concurrency`): an "
        "`exclusive*` or `host` row was timed alone (on the host, on its GPU, or a single-threaded CPU batch "
        "on a core of its own); a `shared` row ran side by side with other batches, and its time includes "
        "that sharing. Tables that use shared rows say so.", "",
        "**Seeds and floating types.** Each trial's seed derives from the experiment's seed and the trial's "
        "(function, D, NP, trial index), never from the implementation, so every implementation runs the "
        "same trials and comparisons are paired; the random numbers come from a counter-based generator, so "
        "implementations of one algorithm make the same run for a seed wherever their arithmetic agrees (the "
        "sections check it). The floating type is the experiment's (float32 where the authors' code ran in "
        "float32, float64 elsewhere unless a section says otherwise).", "",
        "**Machines.** A machine is the GPU model with the CPU model and its core count; rows of different "
        "boots of one machine kind ran on different instances. Every table and figure names the machine(s) "
        "and the n behind it.", "",
        "**Statistics** (`gpude.stats`). Final errors are compared per function by the Kruskal-Wallis test "
        "across competitors, then two-sided Mann-Whitney U (rank-sum) tests for every pair with Holm's "
        "correction over the pairs of the function; with three or more competitors a Friedman test across "
        "functions on each competitor's median final error. Janssen et al.'s rank-sum score (their sec. 7.3.5) "
        "ranks all trials of all competitors on a function together, those that reached the target ahead of "
        "the rest (by wall-clock time; the CEC 2022 variant by FEs), the rest by final error; scores need equal "
        "trial counts, and competitors with fewer trials are left out and named. Rank orders are compared with "
        "the paper's by Kendall's tau. Every score and test is computed within one machine. In the verdict "
        f"table, ours and the paper's are *within* where the ratio lies within {SAME_MAGNITUDE:g}x either way.",
        "", "**Terms.**", "", *(f"* **{term}**: {text}." for term, text in GLOSSARY), ""])


# Words of the project's development, not of its results: a report that says them has a working note left
# in a section writer (or an experiment file's text), which build() refuses to write
LEFTOVERS = re.compile(r"\bissue \d+|\bissue brief\b|\.\./shared\b|\bdevice queue\b|\bTODO\b|\bFIXME\b|"
                       r"\bnot yet (?:measured|run)\b|\bnot run yet\b", re.IGNORECASE)


def leftovers(text: str) -> list[str]:
    """The lines of ``text`` with a working note (:data:`LEFTOVERS`), each as ``line N: ...``."""
    found = []
    for k, line in enumerate(text.splitlines(), 1):
        m = LEFTOVERS.search(line)
        if m:
            found.append(f"line {k}: ...{line[max(0, m.start() - 50):m.end() + 30]}...")
    return found


def uncaptioned_tables(text: str) -> list[str]:
    """The tables of a report whose caption (the text since the heading above them) and header row
    name no machine or no n: each as 'line N: caption...'. A machine is named by a GPU or CPU model or
    the words GPU, CPU, machine or device; n by an n or a count of runs or trials.
    The report's own tables (verdict, terms) name them in their rows."""
    machine = re.compile(r"\b(?:NVIDIA|Intel|AMD|H100|H200|GTX|RTX|Tesla|EPYC|Xeon|GPU|CPU|machine|device)\b",
                         re.IGNORECASE)
    count = re.compile(r"\bn\b|\bn\s*=|\(n\b|\bruns?\b|\btrials?\b", re.IGNORECASE)
    found, caption, in_table = [], [], False
    for k, line in enumerate(text.splitlines(), 1):
        if line.startswith("#"):  # a heading starts a caption (a machine's own table: its heading names it)
            caption, in_table = [line.lstrip("# ")], False
            continue
        if line.startswith("|"):
            if not in_table:
                said = " ".join(caption[-3:]) + " " + line
                if not (machine.search(said) and count.search(said)):
                    found.append(f"line {k}: {said.strip()[-120:]}")
            in_table = True
            continue
        in_table = False
        if line.strip():
            caption.append(line)
    return found


# The studies in the mission's order (an experiment belongs to the first whose name starts its own: the
# side by side with case study 1 of Janssen et al.'s, the Lastra CPU sample with Lastra), each study's
# experiments in its paper's table order; experiments of no study (this machine's run) last
STUDY_ORDER = ("janssen", "side_by_side", "qin", "kromer", "nashed", "lastra", "cec2017_jso")


def _place(generic: bool, section: Section) -> tuple:
    name = str(section.spec.get("name", ""))
    study = next((k for k, prefix in enumerate(STUDY_ORDER) if name.startswith(prefix)), len(STUDY_ORDER))
    table = re.search(r"\bTables? (\d+)", section.title())
    return (study, generic, int(table.group(1)) if table else 1_000, name)


def _demote(text: str) -> str:
    """Every heading of ``text`` one level down (a section under its paper's heading)."""
    return re.sub(r"^(#+) ", r"#\1 ", text, flags=re.MULTILINE)


def deviations_markdown(paper: Paper, sections: list[Section]) -> str:
    """The paper's one list of deviations, gathered from its sections' :meth:`Section.deviations`, by
    topic (:data:`DEVIATION_TOPICS`); an item several sections say is given once, and an item of one of
    several sections names that section's experiment."""
    said: dict[str, dict[str, list[str]]] = {topic: {} for topic in DEVIATION_TOPICS}
    for s in sections:
        for d in s.deviations():
            said[d.topic].setdefault(d.text, []).append(s.spec["name"])
    lines = [f"### Deviations from {paper.heading.split(':')[0]}", ""]
    for topic in DEVIATION_TOPICS:
        for text, names in said[topic].items():
            where = f" ({', '.join(f'`{n}`' for n in names)})" if len(sections) > 1 else ""
            lines.append(f"* **{topic.capitalize()}**{where}: {text}")
    return "\n".join(lines) + "\n" if len(lines) > 2 else ""


def _verdict_counts(verdicts: list[Verdict]) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = {}
    for v in verdicts:
        counts.setdefault(v.kind, {}).setdefault(v.status, 0)
        counts[v.kind][v.status] += 1
    return counts


def _counted(counts: dict[str, int], statuses) -> str:
    # a status that is a verb agrees with its count ("1 agrees", "2 agree")
    return ", ".join(f"{counts.get(s, 0)} {s[:-1] if s == 'agrees' and counts.get(s, 0) != 1 else s}"
                     for s in statuses)


def _causes(verdicts: list[Verdict]) -> list[tuple[str, int]]:
    """The causes the verdicts name for judgements that are not clean, the most frequent first."""
    found: dict[str, int] = {}
    for v in verdicts:
        for what, j in (("coverage", v.coverage), ("numbers", v.numbers), ("finding", v.finding)):
            if j.value not in CLEAN[what] and j.cause:
                for cause in j.cause.split("; "):  # a judgement may name several causes
                    found[cause] = found.get(cause, 0) + 1
    return sorted(found.items(), key=lambda kv: (-kv[1], kv[0]))


def abstract(rows: list[tuple[str, Verdict]], sections: list[Section], appendix: str,
             said: dict[Section, list[Verdict]]) -> str:
    """The abstract: what was reproduced, on which machines, and the verdicts' headline counts and
    causes, all from the data (the verdicts, ``said``: each section's, and the sections' machines)."""
    verdicts = [v for _, v in rows]
    studies = list(dict.fromkeys(study for study, v in rows if v.kind == "paper"))
    # a paper is reproduced where a section of it judges one of its tables; the rest are comparisons
    judged = {str(s.spec.get("name", "")) for s in sections if any(v.kind == "paper" for v in said[s])}
    compared = {str(s.spec.get("name", "")) for s in sections} - judged
    papers = [p for p in PAPERS if any(p.owns(name) for name in judged)]
    others = [p for p in PAPERS if p not in papers and any(p.owns(name) for name in compared)]
    machines = sorted({m for s in sections if paper_of(str(s.spec.get("name", ""))) for m in s.machines})
    counts = _verdict_counts(verdicts)
    text = [f"We re-ran the experiments of {len(papers)} published studies of differential evolution (and kin) "
            "on GPUs with one code base (gpude), from the papers' descriptions, and set our numbers beside "
            "the published ones table by table: " + "; ".join(p.heading.split(":")[0] for p in papers) + "."
            + (" Beside them, we ran " + "; ".join(p.heading.split(":")[0] for p in others) + ", comparing our "
               "implementation with its authors' program." if others else "")]
    if machines:
        text.append(f"Our runs were made on {len(machines)} machines: " + "; ".join(machines) + ".")
    if verdicts:
        paper_rows = counts.get("paper", {})
        text.append(f"Of the {sum(paper_rows.values())} tables and figures judged across {len(studies)} studies, "
                    f"{_counted(paper_rows, KINDS['paper'])}"
                    + (f"; of the {sum(counts['comparison'].values())} comparisons with the authors' own programs "
                       f"rerun beside ours, {_counted(counts['comparison'], KINDS['comparison'])}"
                       if "comparison" in counts else "") + ".")
        best = [f"{study} ({v.item})" for study, v in rows if v.status in (KINDS["paper"][0], KINDS["comparison"][0])]
        if best:
            text.append("Reproduced or in agreement: " + "; ".join(best) + ".")
        causes = _causes(verdicts)
        if causes:
            text.append("Where a result is reproduced only partly or not, the causes the data name most often are: "
                        + "; ".join(f"{cause} ({k})" for cause, k in causes[:5]) + ".")
    text.append(f"Methods first, then one part per paper with its setup, results beside the paper's, deviations "
                f"and anomalies; tables per cell, statistics and provenance are in the [appendix]({appendix}).")
    return "## Abstract\n\n" + " ".join(text) + "\n"


def conclusion(rows: list[tuple[str, Verdict]]) -> str:
    """The conclusion, per study from its verdict rows: their statuses and, where not clean, the causes."""
    if not rows:
        return ""
    lines = ["## Conclusion", ""]
    by_study: dict[str, list[Verdict]] = {}
    for study, v in rows:
        by_study.setdefault(study, []).append(v)
    for study, verdicts in by_study.items():
        said = "; ".join(f"{v.item}: {v.status}" for v in verdicts)
        causes = [cause for cause, _ in _causes(verdicts)]
        lines.append(f"* **{study}**: {said}." + (f" Causes: {'; '.join(causes)}." if causes else ""))
    counts = _verdict_counts([v for _, v in rows]).get("paper", {})
    best, partly, not_ = KINDS["paper"]
    verb = "is" if counts.get(best, 0) == 1 else "are"
    lines += ["", f"Of the papers' {sum(counts.values())} tables and figures judged, {counts.get(best, 0)} {verb} "
              f"reproduced in full by the rule of the verdict table, {counts.get(partly, 0)} in part and "
              f"{counts.get(not_, 0)} not; every judgement that is not clean names its cause above, from the data, "
              "and each paper's deviations and anomalies say what lies behind it."]
    return "\n".join(lines) + "\n"


def build(sections: list[tuple[str, str]], out, gpu_scaling: Path | None = None) -> Path:
    """Write the report's body to ``out`` and its appendix beside it (:func:`appendix_name`).

    The body: the abstract, the verdict table, the methods, one part per paper (its experiments'
    sections in :data:`STUDY_ORDER`, then the paper's deviations), the experiments of no paper (this
    machine's run), the anomalies the rules of :mod:`gpude.report.anomalies` find (counted), the conclusion and
    the references. The appendix: every section's tables per cell, statistics and provenance, the list of
    anomalies and, where ``gpu_scaling`` names the folder ``gpude paper-gpu-scaling`` wrote, runs per hour
    against the number of GPUs (:mod:`gpude.report.runs_per_hour`)."""
    out = Path(out)
    appendix_out = out.with_name(appendix_name(out))
    parts = []
    for yaml_path, paper_dir in sections:
        spec = yaml.safe_load(Path(yaml_path).read_text())
        name = spec.get("report", {}).get("section")
        section = section_class(name)(spec, Path(paper_dir), out.parent)
        section.appendix_file = appendix_out.name
        parts.append((name is None, section))
    parts.sort(key=lambda p: _place(*p))
    ordered = [s for _, s in parts]
    said = {s: s.verdicts() for s in ordered}  # (each section's verdicts, made once for every use below)
    rows = [(s.study, v) for s in ordered if s.study for v in said[s]]
    text = ["# Reproducing GPU differential evolution studies: the gpude report", "",
            abstract(rows, ordered, appendix_out.name, said), render_verdicts(rows), methods(), ""]
    appendix = [f"# Appendix to [{out.name}]({out.name})", "",
                "Per experiment: the tables per cell, the figures of every trial, the statistics and where the "
                "numbers come from (machine, commit, versions, how the batches shared the machine).", ""]
    for paper, group in itertools.groupby(ordered, key=lambda s: paper_of(str(s.spec.get("name", "")))):
        group = list(group)
        if paper is None:  # an experiment of no paper (this machine's run, one's own): after the papers
            text += [s.render() for s in group]
            appendix += [s.render_appendix() for s in group]
            continue
        text += [f"## {paper.heading}", ""]
        text += [_demote(s.render()) for s in group]
        text.append(deviations_markdown(paper, group))
        appendix += [s.render_appendix() for s in group]
    # every anomaly a rule finds: counts in the body, the list in the appendix
    from . import anomalies

    found = anomalies.find(ordered, said)
    text += ["", anomalies.summary_markdown(found, appendix_out.name), conclusion(rows), "", references()]
    appendix.append(anomalies.appendix_markdown(found))
    if gpu_scaling is not None:
        from .runs_per_hour import render as render_runs_per_hour

        appendix.append(render_runs_per_hour(gpu_scaling, out.parent))
    # a part with nothing to say (no data for it) leaves its blank lines: one blank line between blocks
    report, appendix_text = (re.sub(r"\n(?:[ \t]*\n){2,}", "\n\n", "\n".join(t)) for t in (text, appendix))
    # what the report must not hold, each with where to mend it
    for check, what, fix in (
            (leftovers, "working note(s) (words of the development, not of the results; "
                        "gpude.report.document.LEFTOVERS)",
             "reword them in the section writer (gpude/report/) or the experiment file (its description) that "
             "says them"),
            (uncaptioned_tables, "table(s) whose caption names no machine or no n",
             "say them in the caption (the text above the table) or in a column of it, in the section writer "
             "(gpude/report/) that writes the table")):
        for name, body in ((out.name, report), (appendix_out.name, appendix_text)):
            found = check(body)
            if found:
                from ..core.errors import GpudeError

                raise GpudeError(f"the report ({name}) has {len(found)} {what}: {'; '.join(found[:5])}; {fix}")
    write_atomic(appendix_out, appendix_text)
    return write_atomic(out, report)
