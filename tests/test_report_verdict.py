"""The report's verdict table: its rules on hand-made counts, every study writer's verdicts without
data, and the table at the top of a built report."""

import pytest
import yaml
from test_report_document import MACHINE, PUBLISHED, ROOT, case_study_trials

from gpude.report.convergence import figures
from gpude.report.document import _sections, build
from gpude.report.timing import write_all
from gpude.report.verdict import (
    Judgement,
    Verdict,
    coverage_of,
    coverage_verdict,
    finding_of,
    n_text,
    numbers_of,
    render,
)
from gpude.stats.tables import write_statistics


def test_a_judgement_that_is_not_clean_needs_its_cause():
    with pytest.raises(ValueError, match="coverage of 'short' on Table 1 needs its cause"):
        Verdict("Table 1", "3", "10", "-", Judgement("short", "ide 3"))
    with pytest.raises(ValueError, match="numbers of 'outside' on Table 1 needs its cause"):
        Verdict("Table 1", "10", "10", "-", Judgement("complete"), Judgement("outside", "1 of 2 cells"))
    with pytest.raises(ValueError, match="finding of 'in part' on Table 1 needs its cause"):
        Verdict("Table 1", "10", "10", "-", Judgement("complete"), finding=Judgement("in part"))
    with pytest.raises(ValueError, match="needs its detail"):
        Verdict("Table 1", "3", "10", "-", Judgement("short", cause="fewer runs"))
    with pytest.raises(ValueError, match="finding of Table 1 is one of holds, in part, not, n.a."):
        Verdict("Table 1", "10", "10", "-", Judgement("complete"), finding=Judgement("mostly", cause="x"))
    with pytest.raises(ValueError, match="kind is one of paper, comparison"):
        Verdict("Table 1", "10", "10", "-", Judgement("complete"), kind="table")
    clean = Verdict("Table 1", "10", "10", "-", Judgement("complete"), Judgement("within"), Judgement("holds"))
    assert clean.status == "reproduced" and clean.reason == ""


def test_the_status_follows_the_three_judgements_by_its_rule():
    complete, within, holds = Judgement("complete"), Judgement("within"), Judgement("holds")
    def status(*judgements, kind="paper"):
        return Verdict("T", "10", "10", "-", *judgements, kind=kind).status
    assert status(complete, within, holds) == status(complete, Judgement("no paper numbers"), holds) == "reproduced"
    assert status(complete, within) == "reproduced"  # no finding beyond the numbers
    assert status(complete) == "partly"  # nothing checked
    assert status(Judgement("short", "ide 3", "slow"), within, holds) == "partly"
    assert status(complete, Judgement("outside", "1 of 9 cells", "another GPU"), holds) == "partly"
    assert status(complete, within, Judgement("in part", cause="x")) == "partly"
    assert status(complete, within, Judgement("not", cause="x")) == "not"
    assert status(Judgement("none", cause="no results")) == "not"


def test_a_comparison_row_is_never_reproduced():
    best = Verdict("theirs beside ours", "3", "3", "-", Judgement("complete"), Judgement("within"),
                   Judgement("holds"), kind="comparison")
    assert best.status == "agrees"
    rows = [("S", best), ("S", Verdict("theirs", "3", "30", "-", Judgement("short", "ours 3", "3 asked"),
                                       kind="comparison"))]
    assert [v.status for _, v in rows] == ["agrees", "partly"]
    table = render(rows)
    assert "reproduced**" not in table and "| theirs beside ours (comparison) | **agrees** |" in table


def test_coverage_is_complete_or_short_by_who_and_n():
    full = {"ide": (30, 30), "all_gpu": (30, 30)}
    assert coverage_of(full, 30) == Judgement("complete")
    short = coverage_of({"ide": (30, 30), "sequential": (1, 3)}, 30, "slow runs")
    assert short == Judgement("short", "sequential 1-3", "slow runs")
    assert short.text() == "short: sequential 1-3 — slow runs"
    assert coverage_of({"ide": (29, 30)}, 30).value == "short"  # one cell short is short
    assert coverage_of({}, 30) == Judgement("none", cause="no results")
    v = coverage_verdict("T", {"ide": (30, 30), "sequential": (1, 3)}, 30, "h", short_cause="slow runs")
    assert (v.status, v.ours_n, v.coverage.detail) == ("partly", "ide 30, sequential 1-3", "sequential 1-3")
    empty = coverage_verdict("T", {}, 30, "")
    assert (empty.status, empty.coverage.value, empty.headline, empty.ours_n) == ("not", "none", "-", "0")


def test_coverage_counts_every_run_and_names_times_from_fewer():
    # 30 runs a cell, 5 of standard DE's timed alone by the protocol: complete, and it says whose times
    runs, timed = {"ide": (30, 30), "sequential": (30, 30)}, {"ide": (30, 30), "sequential": (5, 5)}
    c = coverage_of(runs, 30, "slow runs", timed, "by the protocol")
    assert c == Judgement("complete", "times from sequential 5 runs a cell", "by the protocol")
    assert c.text() == "complete: times from sequential 5 runs a cell — by the protocol"
    v = coverage_verdict("T", runs, 30, "h", numbers=Judgement("within"), timed=timed, timed_cause="by the protocol")
    assert (v.status, v.ours_n) == ("reproduced", "30")
    # a cell short of runs is short whatever was timed
    assert coverage_of({"sequential": (13, 30)}, 30, "slow runs", {"sequential": (1, 5)}).value == "short"


def test_the_numbers_are_within_a_factor_of_two_either_way_and_counted_outside():
    assert numbers_of([0.5, 1.0, 2.0], "c") == Judgement("within")
    outside = numbers_of([0.49, 1.0, 2.1, float("nan")], "another GPU")
    assert outside == Judgement("outside", "2 of 3 cells", "another GPU")  # NaN: not compared
    assert outside.text() == "outside 2x in 2 of 3 cells — another GPU"
    # ours 0 against a paper's number (or the reverse) is no magnitude of the paper's
    assert numbers_of([0.0, float("inf"), 1.0], "c").detail == "2 of 3 cells"
    assert numbers_of([float("nan")], "c") == numbers_of([], "c") == Judgement("n.a.")
    assert finding_of(3, 3, "c") == Judgement("holds") and finding_of(0, 0, "c") == Judgement("n.a.")
    assert finding_of(2, 3, "another GPU", "cells") == Judgement("in part", "2 of 3 cells", "another GPU")
    assert finding_of(0, 3, "c").value == "not"
    assert n_text({"a": (10, 10), "b": (10, 10)}) == "10" and n_text({}) == "0"


def _experiment_of(section: str) -> dict:
    for path in sorted((ROOT / "config/experiments").glob("*.yaml")):
        spec = yaml.safe_load(path.read_text())
        if (spec.get("report") or {}).get("section") == section:
            return spec
    raise AssertionError(f"no experiment names the report section {section}")


@pytest.mark.parametrize("name", sorted(n for n, cls in _sections().items() if cls.study))
def test_every_study_says_not_reproduced_without_results(name, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)  # the writers read paper/published/
    empty = tmp_path / "paper" / name
    empty.mkdir(parents=True)
    rows = _sections()[name](_experiment_of(name), empty, tmp_path / "paper").verdicts()
    assert rows and all(isinstance(v, Verdict) for v in rows)
    assert {v.status for v in rows} == {"not"}, rows


def _case_study_paper(tmp_path, n_gpu, n_cpu):
    out = tmp_path / "paper" / "janssen_cs1"
    trials = case_study_trials(n_gpu=n_gpu, n_cpu=n_cpu)
    write_all(trials, out, PUBLISHED, {})
    figures(trials, {}, out)
    write_statistics(trials, out / "stats")
    report = build([(str(ROOT / "config/experiments/janssen_cs1.yaml"), str(out))], out.parent / "REPORT.md")
    return report.read_text() + "\n" + report.with_name("REPORT_appendix.md").read_text()


def test_the_report_opens_on_the_verdicts_of_its_studies(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    text = _case_study_paper(tmp_path, n_gpu=3, n_cpu=1)
    row = next(line for line in text.splitlines() if line.startswith("| Janssen et al., case study 1 |"))
    assert ("| Table 3, Fig. 6 | **partly** | short: sequential 1, master_slave 1, naive_gpu 1, all_gpu 3, "
            "ide 3 — ") in row
    assert "| sequential 1, master_slave 1, naive_gpu 1, all_gpu 3, ide 3 | 30 |" in row
    assert "iDE's mean time" in row and MACHINE in row
    assert (text.index("## Abstract") < text.index("## Verdict") < text.index("## Methods")
            < text.index("## Janssen, Pullan & Liew, case study 1"))
    # at the paper's n, the trial counts no longer stand in the way
    full = _case_study_paper(tmp_path / "full", n_gpu=30, n_cpu=30)
    row = next(line for line in full.splitlines() if line.startswith("| Janssen et al., case study 1 |"))
    assert "| Table 3, Fig. 6 | **" in row and "| complete |" in row and "short" not in row and "| 30 | 30 |" in row


def test_a_report_of_no_study_has_no_verdict_table(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    out = tmp_path / "paper" / "default"
    trials = case_study_trials()
    write_all(trials, out, None, {})
    write_statistics(trials, out / "stats")
    text = build([(str(ROOT / "config/experiments/default.yaml"), str(out))], out.parent / "REPORT.md").read_text()
    assert "## Verdict" not in text and "## Methods" in text


def test_every_figure_caption_names_its_machine_and_n(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    text = _case_study_paper(tmp_path, n_gpu=3, n_cpu=1)
    lines = text.splitlines()
    captions = [caption for image, caption in zip(lines, lines[1:]) if image.startswith("![")]
    assert len(captions) >= 4
    for caption in captions:
        assert MACHINE in caption and "n = 1-3 trials per cell" in caption, caption


def test_qin_figures_drawn_per_machine_are_in_its_section(tmp_path, monkeypatch):
    # cells of two machines: scaling.time_vs_popsize names each figure after its machine
    import pandas as pd
    from test_report_document import qin_trials

    from gpude.report.qin import Qin
    from gpude.report.scaling import cell_table, time_vs_popsize

    monkeypatch.chdir(ROOT)
    trials = qin_trials()
    other = trials[trials.implementation == "ide"].assign(machine="Other GPU / CPU x8",
                                                          run_id=lambda d: d.run_id + "/o")
    out = tmp_path / "paper" / "qin"
    out.mkdir(parents=True)
    cells = cell_table(pd.concat([trials, other], ignore_index=True))
    cells.to_csv(out / "table_cells.csv", index=False)
    assert any("_Other_GPU_CPU_x8.png" in p.name for p in time_vs_popsize(cells, out))
    text = Qin(yaml.safe_load((ROOT / "config/experiments/qin.yaml").read_text()), out, tmp_path / "paper").body()
    for k, f in ((3, "Q01"), (4, "Q04")):
        assert f"*Fig. {k}: {f}, mean wall time vs population size ({MACHINE})" in text
        assert f"qin/time_vs_popsize_{f}_NVIDIA_H200_Intel_Xeon_x16.png" in text


def test_a_figure_says_its_machines_and_trials_per_cell():
    import pandas as pd

    from gpude.report.sources import made_by

    trials = pd.DataFrame({"machine": ["B / x8", "A / x16", "A / x16", "A / x16"],
                           "implementation": ["sequential", "ide", "ide", "ide"],
                           "function": ["F01", "F01", "F01", "F02"], "dim": 30})
    assert made_by(trials) == "ide on A / x16; sequential on B / x8; n = 1-2 trials per cell"
    assert made_by(trials.iloc[:1]) == "B / x8; n = 1 trial per cell"


def test_every_table_caption_names_its_machine_and_n(tmp_path, monkeypatch):
    from gpude.report.document import uncaptioned_tables

    monkeypatch.chdir(ROOT)
    assert uncaptioned_tables(_case_study_paper(tmp_path, n_gpu=3, n_cpu=1)) == []
    bare = "## A\n\nMean time of each model.\n\n| model | time |\n|---|---|\n| ide | 1 |\n"
    assert [f[:8] for f in uncaptioned_tables(bare)] == ["line 5: "]
    # a machine and an n, in the caption, a heading or a column, are enough
    for said in ("#### NVIDIA H200 / Xeon x16\n\n| model | s/run (n) |",
                 "Mean time (n trials) on the machine below.\n\n| model | time |",
                 "Mean time.\n\n| machine | model | n | time |"):
        assert uncaptioned_tables(said + "\n|---|---|\n") == [], said


def test_a_report_with_a_table_of_no_machine_is_refused(tmp_path, monkeypatch):
    from gpude.core.errors import GpudeError
    from gpude.report.section import Section

    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(Section, "sources", lambda self: "### Sources\n\n| model | error |\n|---|---|\n| ide | 1 |\n")
    with pytest.raises(GpudeError, match="names no machine or no n"):
        _case_study_paper(tmp_path, n_gpu=3, n_cpu=1)
    assert not (tmp_path / "paper" / "REPORT.md").exists()


def test_the_abstract_counts_agree_with_their_number():
    from gpude.report.document import _counted

    assert _counted({"agrees": 2, "partly": 1}, ["agrees", "partly", "not"]) == "2 agree, 1 partly, 0 not"
    assert _counted({"agrees": 1}, ["agrees", "partly"]) == "1 agrees, 0 partly"
    assert _counted({"reproduced": 3}, ["reproduced"]) == "3 reproduced"
