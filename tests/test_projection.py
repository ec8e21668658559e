"""The projection of regenerating the references on N GPUs (gpude.study.projection): LPT scheduling on
hand-computed cases, the batches' times from a SYNTHETIC reference (trial rows made up here, in a
tmp_path), and the overheads from the committed scaling folder (its batches.csv and rows.csv are
real measurements, re-derived here by hand)."""

import csv
import math
from pathlib import Path

import pandas as pd
import pytest

from gpude.study import projection

ROOT = Path(__file__).resolve().parents[1]
SCALING = ROOT / "results/benchmarks/gpu_scaling/h100x4_scaling_886691b"


def test_lpt_on_a_case_where_it_meets_the_lower_bound():
    # 7 -> A, 5 -> B, 4 -> B (9), 3 -> A (10), 3 -> B (12), 2 -> A (12)
    durations = [7, 5, 4, 3, 3, 2]
    assert projection.lpt_makespan(durations, 2) == 12
    assert projection.lower_bound(durations, 2) == 12


def test_lpt_on_a_case_where_it_exceeds_the_lower_bound():
    # 3 -> A, 3 -> B, 2 -> A (5), 2 -> B (5), 2 -> A (7); the optimum is 3+3 | 2+2+2 = 6
    durations = [3, 3, 2, 2, 2]
    assert projection.lpt_makespan(durations, 2) == 7
    assert projection.lower_bound(durations, 2) == 6
    # one batch longer than the rest together: the longest batch is the bound, and LPT meets it
    assert projection.lpt_makespan([10, 1, 1], 4) == projection.lower_bound([10, 1, 1], 4) == 10
    assert projection.lpt_makespan([], 8) == 0
    with pytest.raises(projection.ProjectionError):
        projection.lpt_makespan([1, math.nan], 2)


EXPERIMENT = """\
name: tiny
description: two cells of a GPU implementation, and a CPU one that no projection counts
seed: 1
trials: 4
trials_per_job: 2
algorithms:
  de:
    implementations: [sequential, ide]
functions: [F01, F02]
dims: [10]
popsizes: [20]
dtypes: [float64]
max_fes: 1000
"""


def tiny_reference(root: Path) -> tuple[Path, Path]:
    """A SYNTHETIC experiment and reference: ide on F01 trials 0, 1 (chunk 0, whole) and 2 (chunk 1,
    half) at 1, 2 and 3 s, plus a failed trial 3 (not counted), none on F02; a sequential row (a CPU
    batch: left out); on a second machine one ide row (fewer GPU rows: not picked)."""
    experiments = root / "config/experiments"
    experiments.mkdir(parents=True)
    (experiments / "tiny.yaml").write_text(EXPERIMENT)
    base = dict(suite="tiny", algorithm="de", function="F01", dim=10, popsize=20, dtype="float64",
                params="{}", setup_time_s=0.5, gpu="NVIDIA H200", status="budget")
    rows = [dict(base, implementation="ide", trial=k, wall_time_s=float(k + 1)) for k in range(3)]
    rows += [dict(base, implementation="ide", trial=3, wall_time_s=9.0, status="error:Boom: x"),
             dict(base, implementation="sequential", trial=0, wall_time_s=100.0)]
    rows = [dict(r, run_id=f"de/{r['implementation']}/F01/d10/np20/float64/t{r['trial']}") for r in rows]
    references = root / "results/reference"
    for machine, part in (("nvidia-h200", rows), ("nvidia-h100", rows[:1])):
        (references / machine / "tiny").mkdir(parents=True)
        pd.DataFrame(part).to_csv(references / machine / "tiny" / "trials.csv", index=False)
    return experiments, references


def test_reference_batches_measure_scale_and_estimate(tmp_path):
    experiments, references = tiny_reference(tmp_path)
    b = projection.reference_batches(["tiny", "absent"], references, experiments)
    assert projection.missing_references(["tiny", "absent"], references) == ["absent"]
    assert list(b.columns) == projection.BATCH_COLUMNS
    assert set(b.implementation) == {"ide"} and set(b.machine) == {"nvidia-h200"} and len(b) == 4
    by = b.set_index(["function", "chunk"])
    assert by.loc[("F01", 0), ["measured_runs", "trial_s", "basis"]].tolist() == [2, 3.0, "measured"]
    assert not by.loc[("F01", 0), "estimated"]
    # trial 2 of chunk 1 measured, trial 3 failed: 3 s scaled to the batch's two runs
    assert by.loc[("F01", 1), ["measured_runs", "trial_s", "basis"]].tolist() == [1, 6.0, "scaled"]
    # F02 has no trial: two runs of the mean trial of ide at D=10 (1, 2, 3 s)
    for chunk in (0, 1):
        assert by.loc[("F02", chunk), ["measured_runs", "trial_s", "basis"]].tolist() == [0, 4.0, "same D"]
        assert by.loc[("F02", chunk), "estimated"]


def test_project_spreads_the_batches_with_their_overheads(tmp_path):
    experiments, references = tiny_reference(tmp_path)
    b = projection.reference_batches(["tiny"], references, experiments)
    p = projection.project(b, gpus=(1, 2), overhead_s=1.0, fixed_s=36.0).set_index("experiment")
    assert list(p.index) == ["tiny", "total"]
    tiny = p.loc["tiny"]
    assert tiny.batches == 4 and tiny.runs == 8 and tiny.gpu_hours == pytest.approx(17 / 3600)
    assert tiny.estimated_share == pytest.approx(14 / 17)
    # 4+7+5+5 s of batches with their overheads: 21 s on one GPU; on two, 7+4 | 5+5: 11 s
    assert tiny.hours_1 == pytest.approx((21 + 36) / 3600) and tiny.hours_2 == pytest.approx((11 + 36) / 3600)
    assert tiny.lower_2 == pytest.approx((10.5 + 36) / 3600)


def _by_hand(run: str) -> dict:
    """The overheads of one run of the committed folder, with csv and plain arithmetic."""
    with open(SCALING / "batches.csv") as fh:
        rows = [r for r in csv.DictReader(fh) if r["run"] == run]
    with open(SCALING / "rows.csv") as fh:
        wall = next(float(r["wall_s"]) for r in csv.DictReader(fh) if r["run"] == run)
    held = [float(r["released_s"]) - float(r["leased_s"]) - float(r["trial_s"]) for r in rows]
    gaps = []
    for gpu in {r["gpu_index"] for r in rows}:
        lane = sorted((float(r["leased_s"]), float(r["released_s"])) for r in rows if r["gpu_index"] == gpu)
        gaps += [b[0] - a[1] for a, b in zip(lane, lane[1:])]
    first = min(float(r["leased_s"]) for r in rows)
    last = max(float(r["released_s"]) for r in rows)
    return dict(setup_s=sum(held) / len(held), gap_s=sum(gaps) / len(gaps), fixed_s=first + wall - last)


@pytest.mark.parametrize("run", [None, "gpus4"])
def test_overheads_from_the_committed_scaling_folder(run):
    o = projection.overheads_from_folder(SCALING, run)
    expected = _by_hand(run or "gpus1")
    assert o["run"] == (run or "gpus1") and o["folder"] == SCALING.name
    for key, value in expected.items():
        assert o[key] == pytest.approx(value)
    assert o["overhead_s"] == pytest.approx(expected["setup_s"] + expected["gap_s"])
    # the folder's README: a batch holds its GPU 2.1-2.6 s, its trials take 0.6 s of it; 0.9-1.8 s
    # between leases; 4.0-4.2 s before the first lease and 2.1-2.5 s after the last
    assert 1.0 < o["setup_s"] < 2.5 and 0.8 < o["gap_s"] < 2.0 and 6.0 < o["fixed_s"] < 7.0


def test_the_newest_scaling_folder_comes_last(tmp_path):
    for name, started in (("b_old", "2026-01-01T00:00:00+00:00"), ("a_new", "2026-02-01T00:00:00+00:00")):
        (tmp_path / name).mkdir()
        pd.DataFrame([dict(run="gpus1", gpus=1, started_utc=started)]).to_csv(tmp_path / name / "rows.csv")
        (tmp_path / name / "batches.csv").write_text("run\n")
    (tmp_path / "no_batches").mkdir()
    pd.DataFrame([dict(run="gpus1", started_utc="2027")]).to_csv(tmp_path / "no_batches" / "rows.csv")
    assert [d.name for d in projection.scaling_folders(tmp_path)] == ["b_old", "a_new"]
