"""The REPORT's section on runs per hour against the number of GPUs (gpude.report.runs_per_hour): from
the committed scaling folder (real measurements) and, for the projection, the SYNTHETIC reference of
tests/test_projection.py (made-up trial rows in a tmp_path), so that the test stays fast; the targets'
verdicts also from SYNTHETIC rows."""

from pathlib import Path

import pandas as pd
import pytest
from test_projection import tiny_reference

from gpude.cli import main
from gpude.report import runs_per_hour
from gpude.report.document import build, leftovers, uncaptioned_tables

ROOT = Path(__file__).resolve().parents[1]
SCALING = ROOT / "results/benchmarks/gpu_scaling"
# the tests that read paper_dir on one xdist worker, which makes it once
pytestmark = pytest.mark.xdist_group("runs_per_hour_paper_dir")


@pytest.fixture(scope="module")
def paper_dir(tmp_path_factory):
    """`gpude paper-gpu-scaling` over the committed h100x4 baseline folder (alone: the folders committed
    after it would change the newest run, which the overheads come from) and the synthetic reference."""
    import shutil

    root = tmp_path_factory.mktemp("runs_per_hour")
    experiments, references = tiny_reference(root)
    scaling = root / "gpu_scaling"
    shutil.copytree(SCALING / "h100x4_scaling_886691b", scaling / "h100x4_scaling_886691b")
    out = root / "paper" / "gpu_scaling"
    runs_per_hour.write_outputs(scaling, out, experiments=["tiny", "absent"], reference_root=references,
                            experiments_dir=experiments)
    return out


def test_the_paper_step_writes_the_tables_and_the_figure(paper_dir):
    table = pd.read_csv(paper_dir / "table_scaling.csv")
    assert "h100x4_scaling_886691b" in set(table.folder) and {"priming", "gpus1", "gpus4"} <= set(table.run)
    p = pd.read_csv(paper_dir / "projection.csv")
    assert list(p.experiment) == ["tiny", "absent", "total"] and p.batches.tolist() == [4, 0, 4]
    assert set(p.overhead_from) == {"h100x4_scaling_886691b/gpus1"}
    assert (paper_dir / "runs_per_hour.png").stat().st_size > 1000
    assert not (paper_dir / "runs_per_hour.pdf").exists()  # PDF on request only


def test_the_section_renders_in_the_appendix_without_targets_or_leftovers(paper_dir):
    out = build([], paper_dir.parent / "REPORT.md", gpu_scaling=paper_dir)
    assert runs_per_hour.TITLE not in out.read_text()  # performance material: the appendix's
    text = out.with_name("REPORT_appendix.md").read_text()
    section = text[text.index(f"## {runs_per_hour.TITLE}"):]
    assert "### h100x4_scaling_886691b" in section and "4 x NVIDIA H100 80GB HBM3, 64 CPU cores" in section
    assert "| 4 | 80 | 21.3 | 13,506 | 2.62 |" in section
    # the project's own targets are not results: they stay out of the report
    assert "at least 3.6x" not in section and "met**" not in section and "Target" not in section
    assert "| absent | none (no committed reference) |" in section and "](gpu_scaling/runs_per_hour.png)" in section
    assert not leftovers(text) and not uncaptioned_tables(text)


def _row(gpus, speedup, started):
    return dict(folder="synthetic", run=f"gpus{gpus}", gpus=gpus, host_gpus=8, gpu="NVIDIA H200", cpu_cores=96,
                speedup=speedup, started_utc=started)


def test_the_speedup_target_is_read_from_the_newest_run_of_each_count():
    """SYNTHETIC rows: an old 4-GPU run below the target, a newer one above; an 8-GPU run below."""
    t = pd.DataFrame([_row(1, 1.0, "2026-01"), _row(4, 3.0, "2026-01"), _row(4, 3.7, "2026-02"),
                      _row(8, 6.5, "2026-02")])
    said = runs_per_hour.speedup_sentence(t)
    assert "on 4 GPUs at least 3.6x: **met**, 3.70x" in said and "on 8 GPUs at least 7x: **not met**, 6.50x" in said


@pytest.mark.parametrize("hours,verdict", [(0.9, "**met**"), (1.2, "**not met**")])
def test_the_projected_target_follows_the_total(hours, verdict):
    """SYNTHETIC projection rows."""
    p = pd.DataFrame([dict(experiment="x", batches=3, runs=30, gpu_hours=2.0, hours_8=hours, lower_8=hours,
                           estimated_share=0.1),
                      dict(experiment="total", batches=3, runs=30, gpu_hours=2.0, hours_8=hours, lower_8=hours,
                           estimated_share=0.1)])
    assert f"(projected): {verdict}, {hours:.2f} h projected" in runs_per_hour.projection_sentence(p)


def test_the_report_command_refuses_a_missing_gpu_scaling_folder(tmp_path, capsys):
    assert main(["report", "--section", f"{ROOT}/config/experiments/smoke.yaml={tmp_path}", "--out",
                 str(tmp_path / "REPORT.md"), "--gpu-scaling", str(tmp_path / "nope")]) == 2
    assert "--gpu-scaling" in capsys.readouterr().err


def test_no_run_beats_what_its_batches_allow():
    """The bound (any order of a run's batches on its GPUs) holds for every committed timed run, and a
    run of a second batch per GPU lost less than 0.1 s between batches (the h200x4 A/B: 1 s without)."""
    t = runs_per_hour.timed(runs_per_hour.scaling_table(SCALING))
    assert t["bound_speedup"].notna().all()
    assert (t["speedup"] <= t["bound_speedup"] + 1e-9).all()
    ab = t.set_index(["folder", "gpus"])["gap_s"]
    assert (ab.loc["h200x4_scaling_d5f177d"] < 0.1).all() and (ab.loc["h200x4_scaling_d5f177d_prefetch0"] > 0.9).all()
