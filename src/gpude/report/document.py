"""paper/REPORT.md: one section per experiment (a reproduced study, or this machine's run),
assembled from the files ``gpude paper`` wrote into ``paper/<experiment>/``.

A study with something to say beyond the generic tables has a section writer (a subclass of
:class:`gpude.report.section.Section`) listed in :func:`_sections`, and names it by ``report: section:``
in its experiment file. The studies import their kit from :mod:`gpude.report.section`, never from here.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from ..core.io import write_atomic
from .section import GENERIC_OUTPUTS, Section, _order, _read, fmt  # noqa: F401  (the studies' kit, imported from here too)
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
                      "`+cpu`: beside the CPU lane), `exclusive-cpu:L` (a single-threaded CPU batch on a core of "
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


def build(sections: list[tuple[str, str]], out, gpu_scaling: Path | None = None) -> Path:
    """Write the report from (experiment YAML, paper folder) pairs, in :data:`STUDY_ORDER` (then the rest),
    and last, where ``gpu_scaling`` names the folder ``gpude paper-gpu-scaling`` wrote, the section on
    runs per hour against the number of GPUs (:mod:`gpude.report.runs_per_hour`)."""
    out = Path(out)
    parts = []
    for yaml_path, paper_dir in sections:
        spec = yaml.safe_load(Path(yaml_path).read_text())
        name = spec.get("report", {}).get("section")
        parts.append((name is None, section_class(name)(spec, Path(paper_dir), out.parent)))
    parts.sort(key=lambda p: _place(*p))
    text = ["# gpude report", "",
            "Written by the workflow (`snakemake --cores all`, rule `report`) from committed reference results "
            "(`results/reference/<machine>/<experiment>/`) and this machine's run; every table names the "
            "machine that produced it. Regenerate it with the same command; nothing here is typed by hand "
            "except the published numbers in `paper/published/` (each file names its source).", "",
            render_verdicts([(s.study, v) for _, s in parts if s.study for v in s.verdicts()]),
            "## Terms", "", *(f"* **{term}**: {text}." for term, text in GLOSSARY), ""]
    text += [s.render() for _, s in parts]
    if gpu_scaling is not None:
        from .runs_per_hour import render as render_runs_per_hour

        text.append(render_runs_per_hour(gpu_scaling, out.parent))
    # a part with nothing to say (no data for it) leaves its blank lines: one blank line between blocks
    report = re.sub(r"\n(?:[ \t]*\n){2,}", "\n\n", "\n".join(text))
    # what the report must not hold, each with where to mend it
    for check, what, fix in (
            (leftovers, "working note(s) (words of the development, not of the results; "
                        "gpude.report.document.LEFTOVERS)",
             "reword them in the section writer (gpude/report/) or the experiment file (its description) that "
             "says them"),
            (uncaptioned_tables, "table(s) whose caption names no machine or no n",
             "say them in the caption (the text above the table) or in a column of it, in the section writer "
             "(gpude/report/) that writes the table")):
        found = check(report)
        if found:
            from ..core.errors import GpudeError

            raise GpudeError(f"the report has {len(found)} {what}: {'; '.join(found[:5])}; {fix}")
    return write_atomic(out, report)
