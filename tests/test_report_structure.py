"""paper/REPORT.md as a paper: abstract, verdict, methods, a part per paper with its deviations, conclusion and
references in the body, at most :data:`BODY_LINES` lines; tables per cell, statistics and provenance in the
appendix beside it; every link of either file resolves."""

import os
import re
import shutil
from pathlib import Path

import pytest

from gpude.report.document import build
from gpude.report.papers import PAPERS
from gpude.report.section import Deviation, sorted_out, split_bullets

ROOT = Path(__file__).resolve().parents[1]
#: the body's length a reader can take in; the rest goes to the appendix
BODY_LINES = 600
#: the experiments of the workflow's report (workflow/rules/paper.smk, rule report), each with its paper folder
EXPERIMENTS = ("default", "cec2017_jso", "janssen_cs1", "janssen_cs2", "kromer_etc", "kromer_lop", "kromer_rastrigin",
               "lastra", "lastra_cpu", "nashed", "qin", "side_by_side")


def test_bullets_split_into_deviations_and_anomalies():
    text = ("### a heading, dropped\n"
            "* **Hardware.** The paper ran on a GTX560;\n  ours on an H200.\n"
            "* **Time: 30 trials per launch.** Each trial charged its share.\n"
            "* *f11 (Katsuura).* Every point on the grid is a minimum:\n"
            "  - F01: one sub-point.\n")
    items = split_bullets(text)
    assert items == [("Hardware", "The paper ran on a GTX560; ours on an H200."),
                     ("Time: 30 trials per launch", "Each trial charged its share."),
                     ("f11 (Katsuura)", "Every point on the grid is a minimum:\n  - F01: one sub-point.")]
    deviations, anomalies = sorted_out(items, {"Hardware": "hardware", "Time": "timing"})
    assert deviations == [Deviation("hardware", "The paper ran on a GTX560; ours on an H200."),
                          Deviation("timing", "*Time: 30 trials per launch.* Each trial charged its share.")]
    assert [label for label, _ in anomalies] == ["f11 (Katsuura)"]
    with pytest.raises(ValueError, match="topic is one of"):
        Deviation("weather", "rain")


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """The report built from the paper folders the workflow wrote (copied: a section's folder must lie
    under the report's), with the workflow's sections and its runs-per-hour folder."""
    if not all((ROOT / "paper" / e / "table_error.csv").is_file() for e in EXPERIMENTS if e != "default"):
        pytest.skip("the paper folders are not written (snakemake paper/REPORT.md writes them)")
    out = tmp_path_factory.mktemp("report") / "paper"
    present = [e for e in EXPERIMENTS if (ROOT / "paper" / e / "table_error.csv").is_file()]
    for e in [*present, "gpu_scaling"]:
        if (ROOT / "paper" / e).is_dir():
            shutil.copytree(ROOT / "paper" / e, out / e)
    here = os.getcwd()
    os.chdir(ROOT)  # the section writers read paper/published/ from the workflow's root
    try:
        body = build([(str(ROOT / f"config/experiments/{e}.yaml"), str(out / e)) for e in present],
                     out / "REPORT.md", gpu_scaling=out / "gpu_scaling" if (out / "gpu_scaling").is_dir() else None)
    finally:
        os.chdir(here)
    return body, body.with_name("REPORT_appendix.md")


def test_the_body_reads_as_a_paper_within_its_length(report):
    body, _ = report
    text = body.read_text()
    assert len(text.splitlines()) <= BODY_LINES, len(text.splitlines())
    headings = [line[3:] for line in text.splitlines() if line.startswith("## ")]
    assert headings[:3] == ["Abstract", "Verdict", "Methods"]
    assert headings[-3:] == ["Anomalies", "Conclusion", "References"]
    papers = headings[3:-3]
    # the papers in order, then this machine's run (the default experiment, of no paper) where it was made
    if (ROOT / "paper" / "default" / "table_error.csv").is_file():
        assert papers[:-1] == [p.heading for p in PAPERS] and papers[-1].startswith("This machine"), papers
    else:
        assert papers == [p.heading for p in PAPERS], papers
    # every paper's part ends on its one list of deviations, each item under a topic
    parts = re.split(r"^## ", text, flags=re.MULTILINE)
    for paper in PAPERS:
        part = next(p for p in parts if p.startswith(paper.heading))
        deviations = part[part.index("### Deviations from "):]
        assert re.search(r"^\* \*\*(Hardware|Trials|Timing|Implementation)\*\*", deviations, re.MULTILINE), paper.key
        assert f"[{paper.key}]" in text[text.index("## References"):]
    # the abstract says its machines and counts from the verdicts, the methods what a time includes
    abstract = parts[1]
    assert re.search(r"Of the \d+ tables and figures judged across \d+ studies, \d+ reproduced", abstract)
    assert "NVIDIA H200" in abstract
    assert not re.search(r"\b([02-9]|\d\d+) agrees\b", abstract)  # "2 agree", "1 agrees"
    methods = text[text.index("## Methods"):text.index(f"## {PAPERS[0].heading}")]
    for words in ("`wall_time_s`", "excludes process start-up, JIT compilation", "timed alone", "Kruskal-Wallis",
                  "Holm", "trials_per_launch"):
        assert words in methods, words
    # developer material stays out of the body: provenance, statistics, campaign commands, targets
    for words in ("### Where the numbers come from", "### Statistics", "gpude.campaign run", "Next steps",
                  "Target, ", "No measurements", "Runs per hour against the number of GPUs"):
        assert words not in text, words


def test_the_appendix_holds_what_the_body_leaves_and_every_link_resolves(report):
    body, appendix = report
    text, extra = body.read_text(), appendix.read_text()
    assert extra.count("### Where the numbers come from") >= len(EXPERIMENTS) - 1  # a provenance table each
    assert "Runs per hour against the number of GPUs" in extra
    assert "| instance | n | paper 5 s | GPU 5 s |" in extra  # Krömer's per-instance table
    anchors = set(re.findall(r'<a id="([^"]+)"></a>', extra))
    links = re.findall(r"\]\(([^)#\s]+)(?:#([^)\s]+))?\)", text + extra)
    assert links
    for target, anchor in links:
        if target.startswith("http"):
            continue
        assert (body.parent / target).is_file(), target
        if anchor:
            assert target == appendix.name and anchor in anchors, (target, anchor)
    # every section of the body links to its part of the appendix
    assert len(re.findall(rf"\]\({appendix.name}#appendix-", text)) >= len(EXPERIMENTS) - 1


def test_a_report_written_outside_the_paper_folder_links_up_to_its_files(tmp_path):
    # `gpude report --out` anywhere: the figures' and files' links climb to the section's folder
    from gpude.report.section import Section

    paper = tmp_path / "paper" / "exp"
    paper.mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    assert Section({"name": "exp"}, paper, tmp_path / "paper").rel == "exp"
    assert Section({"name": "exp"}, paper, tmp_path / "elsewhere").rel == "../paper/exp"
