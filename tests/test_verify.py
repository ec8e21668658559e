"""``gpude verify``: committed rows re-made on this machine, compared bit for bit, and every reason a
row cannot be re-made said instead of failing."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from gpude import cli
from gpude.core.errors import InvalidInputError
from gpude.core.io import read_csv, write_csv_atomic
from gpude.run import verify

pytestmark = pytest.mark.io

# (--gpu shared: on a GPU host this process's CUDA is started by the tests before, and a lease must
# come first)
RUN = ["--function", "Q01", "--dim", "10", "--popsize", "8", "--max-fes", "80", "--seed", "7", "--gpu", "shared"]


def made(tmp_path, name, *args):
    """The trials table of a `gpude run` with ``args`` (in this process)."""
    out = tmp_path / f"{name}.csv"
    assert cli.main(["run", *RUN, *args, "--out-csv", str(out), "--out-traces", str(tmp_path / f"{name}.npz")]) == 0
    return out


def verified(capsys, table, *args):
    """(exit status, outcomes table, printed text) of `gpude verify table args`."""
    out = table.with_name(table.stem + "_verify.csv")
    code = cli.main(["verify", str(table), "--out", str(out), "--gpu", "shared", *args])
    return code, read_csv(out), capsys.readouterr().out


@pytest.fixture(scope="module")
def cpu_table(tmp_path_factory):
    return made(tmp_path_factory.mktemp("cpu"), "sequential", "--implementation", "sequential", "--trials", "3")


def test_a_cpu_row_is_re_made_bit_for_bit(cpu_table, capsys):
    code, outcomes, text = verified(capsys, cpu_table, "--rows", "2")
    assert code == 0 and list(outcomes["outcome"]) == ["same", "same"]
    assert "2 rows: 2 the same bits, 0 differ, 0 cannot be re-made here" in text
    assert set(outcomes["run_id"]) <= set(read_csv(cpu_table)["run_id"])


def test_a_tampered_row_is_caught(cpu_table, tmp_path, capsys):
    table = read_csv(cpu_table)
    table.loc[1, "best_error"] = np.nextafter(table.loc[1, "best_error"], np.inf)
    table.loc[2, "fes_used"] += 8
    write_csv_atomic(table, tmp_path / "tampered.csv")
    code, outcomes, text = verified(capsys, tmp_path / "tampered.csv", "--rows", "3")
    assert code == 1 and list(outcomes["outcome"]) == ["same", "differs", "differs"]
    assert "best_error" in outcomes.loc[1, "detail"] and "1 ulp" in outcomes.loc[1, "detail"]
    assert outcomes.loc[2, "detail"].startswith("fes_used 88.0 -> 80.0")
    assert "differs  de/sequential/Q01/d10/np8/float64/t1" in text


def test_the_rows_asked_for_and_a_seeded_sample(cpu_table, capsys):
    rows = ["de/sequential/Q01/d10/np8/float64/t2", "de/sequential/Q01/d10/np8/float64/t0"]
    code, outcomes, _ = verified(capsys, cpu_table, "--run-id", rows[0], "--run-id", rows[1])
    assert code == 0 and list(outcomes["run_id"]) == rows
    table = read_csv(cpu_table)
    a, b = (verify.select_rows(table, rows=2, sample_seed=s)["run_id"].tolist() for s in (3, 3))
    assert a == b and len(set(a)) == 2
    with pytest.raises(InvalidInputError, match="no row has run_id 'de/nope'"):
        verify.select_rows(table, run_ids=["de/nope"])
    with pytest.raises(InvalidInputError, match="no row of implementation ide"):
        verify.select_rows(table, implementations=["ide"])
    with pytest.raises(InvalidInputError, match="no row of status time"):
        verify.select_rows(table, statuses=["time"])
    assert len(verify.select_rows(table, rows=5, statuses=["budget"])) == 3
    with pytest.raises(InvalidInputError, match="lacks the columns .*seed"):
        verify.select_rows(table.drop(columns=["seed"]))


@pytest.mark.cudasim
def test_a_gpu_row_from_a_batch_is_re_made_alone(tmp_path, capsys):
    # three trials per launch; the middle one re-made by itself (a seed's run does not depend on the
    # others in its launch), on the simulator in CI and on the GPU itself on a GPU host
    table = made(tmp_path, "ide", "--implementation", "ide", "--trials", "3", "--trials-per-launch", "3",
                 "--max-fes", "40")  # (the last --max-fes counts)
    assert json.loads(read_csv(table).loc[0, "params"])["trials_per_launch"] == 3
    code, outcomes, text = verified(capsys, table, "--run-id", "de/ide/Q01/d10/np8/float64/t1")
    assert code == 0 and list(outcomes["outcome"]) == ["same"], text
    assert outcomes.loc[0, "remade_on"] == read_csv(table).loc[1, "gpu"]
    # another GPU model: said, not re-made, unless asked
    other = read_csv(table).assign(gpu="NVIDIA Z9000")
    write_csv_atomic(other, tmp_path / "other.csv")
    code, outcomes, _ = verified(capsys, tmp_path / "other.csv", "--rows", "1")
    assert code == 0 and outcomes.loc[0, "outcome"] == "cannot"
    assert "made on NVIDIA Z9000" in outcomes.loc[0, "detail"] and "--any-gpu" in outcomes.loc[0, "detail"]
    code, outcomes, _ = verified(capsys, tmp_path / "other.csv", "--rows", "1", "--any-gpu")
    assert code == 0 and outcomes.loc[0, "outcome"] == "same"


def test_a_time_budgeted_run_is_re_made_when_it_stopped_at_its_target(tmp_path, capsys):
    table = made(tmp_path, "timed", "--implementation", "sequential", "--trials", "2", "--max-time-s", "60",
                 "--target", "1e6")
    assert list(read_csv(table)["status"]) == ["target", "target"]
    code, outcomes, _ = verified(capsys, table, "--rows", "2")
    assert code == 0 and list(outcomes["outcome"]) == ["same", "same"]


def _row(cpu_table, **changes) -> pd.DataFrame:
    return read_csv(cpu_table).iloc[[0]].assign(**changes).reset_index(drop=True)


@pytest.mark.parametrize("changes,reason", [
    ({"status": "error:GPUOutOfMemoryError: out of memory"}, "records a failed trial"),
    ({"status": "time", "max_time_s": 4.0}, "ran out of a wall-clock budget (max_time_s=4.0)"),
    ({"implementation": "ide_x30"}, "an experiment's plugin or outside program? give its --plugin"),
    ({"implementation": "ide", "gpu": "NVIDIA H200"}, "it ran on a GPU (NVIDIA H200); this machine has none"),
    ({"function": "Q99"}, "cannot be built here: "),
])
def test_each_reason_a_row_cannot_be_re_made_is_said(cpu_table, monkeypatch, changes, reason):
    monkeypatch.setattr(verify, "this_gpu", lambda: "")  # (the no-GPU case on any machine)
    outcomes = verify.verify_rows(_row(cpu_table, **changes))
    assert [o.outcome for o in outcomes] == ["cannot"]
    assert reason in outcomes[0].detail


def test_recorded_params_that_are_no_input_are_left_out(cpu_table):
    row = _row(cpu_table, implementation="all_gpu",
               params=json.dumps({"F": 0.5, "CR": 0.3, "bounds": "resample", "poll_every": 1,
                                  "graph_generations": 32, "graph_captured": True, "trials_per_launch": 30}))
    options, dropped = verify.runner_arguments(row.iloc[0])
    assert options == {"F": 0.5, "CR": 0.3, "bounds": "resample", "poll_every": 1, "graph_generations": 32,
                       "trials_per_launch": 30}
    assert dropped == ["graph_captured"]


def test_a_distance_within_its_summation_rounding_is_the_same_and_said(cpu_table, tmp_path, capsys):
    """A row whose distance was summed by BLAS (before the correctly rounded sum) differs from a
    re-made one in its last bits: the same run, said in the detail; a larger change is caught."""
    table = read_csv(cpu_table)
    table.loc[0, "distance_to_optimum"] = np.nextafter(table.loc[0, "distance_to_optimum"], np.inf)
    table.loc[1, "distance_to_optimum"] *= 1 + 1e-9  # beyond (D - 1) * 2**-53 at D = 10
    write_csv_atomic(table, tmp_path / "blas.csv")
    code, outcomes, _ = verified(capsys, tmp_path / "blas.csv", "--rows", "3")
    assert code == 1 and list(outcomes["outcome"]) == ["same", "differs", "same"]
    assert "within the rounding of a sum of 10 squares" in outcomes.loc[0, "detail"]
    assert outcomes.loc[1, "detail"].startswith("distance_to_optimum")
    assert pd.isna(outcomes.loc[2, "detail"]) or outcomes.loc[2, "detail"] == ""


def test_a_row_made_before_the_distance_was_recorded_is_compared_without_it(cpu_table, tmp_path, capsys):
    """An empty distance and solution (a row older than those columns) are not a difference; an empty
    best error is."""
    table = read_csv(cpu_table)
    table.loc[0, ["distance_to_optimum", "solution"]] = np.nan
    table.loc[1, "best_error"] = np.nan
    write_csv_atomic(table, tmp_path / "old.csv")
    code, outcomes, _ = verified(capsys, tmp_path / "old.csv", "--rows", "3")
    assert code == 1 and list(outcomes["outcome"]) == ["same", "differs", "same"]


@pytest.mark.parametrize("dim, ulps, within",
                         [(10, 6, True), (10, 7, False), (1000, 749, True), (1000, 750, False), (1, 1, False)])
def test_distance_rounding_bound(dim, ulps, within):
    a = 3.0  # an ulp of 3.0 is 2**-51: the bound (D - 1) * 2**-53 * 3 is (D - 1) * 3 / 4 ulp
    b = a
    for _ in range(ulps):
        b = np.nextafter(b, np.inf)
    assert verify.distance_rounding(a, b, dim) is within
