"""benchmarks/master_slave_speed.py (issue 25: master_slave against sequential) at tiny sizes: its
rows and columns, and its refusal of bad input."""

import numba
import pandas as pd
import pytest
from _benchmarks import load_benchmark

from gpude.core.errors import GpudeError, InvalidInputError

bench = load_benchmark("master_slave_speed")
WORKERS = [1, 2] if numba.config.NUMBA_NUM_THREADS >= 2 else [1]


def test_one_row_per_problem_popsize_implementation_and_workers(tmp_path):
    out = tmp_path / "speed.csv"
    args = ["--machine", "test-box", "--out", str(out), "--problems", "F01", "--dim", "10",
            "--popsizes", "4,8", "--workers", ",".join(map(str, WORKERS)), "--seconds", "0.02",
            "--repeats", "2", "--phase-generations", "2"]
    assert bench.main(args) == 0
    t = pd.read_csv(out)
    assert list(t.columns) == list(bench.COLUMNS)
    assert len(t) == 2 * (1 + len(WORKERS))
    assert set(zip(t["implementation"], t["workers"])) == {("sequential", 1)} | {("master_slave", w) for w in WORKERS}
    assert (t["machine"] == "test-box").all() and (t["dim"] == 10).all() and set(t["popsize"]) == {4, 8}
    assert (t["fes_per_s"] > 0).all() and (t["fes_per_s"] <= t["fes_per_s_max"]).all()
    assert (t[["make_trials_s", "evaluate_s", "replace_s"]] > 0).all().all()
    sequential = t[t["implementation"] == "sequential"]
    assert (sequential["speedup"] == 1).all() and not sequential["pipelined"].any()
    assert t.loc[t["implementation"] == "master_slave", "pipelined"].all()  # F01 has a row kernel


@pytest.mark.parametrize("option, value, message", [
    ("--popsizes", "2", "--popsizes: every value must be >= 4"),
    ("--workers", "0", "--workers: every value must be >= 1"),
    ("--workers", "two", "comma-separated integers"),
    ("--workers", str(numba.config.NUMBA_NUM_THREADS + 1), "exceeds numba's thread pool"),
    ("--seconds", "0", "--seconds must be > 0"),
])
def test_bad_input_is_refused_before_any_run(tmp_path, option, value, message):
    with pytest.raises(InvalidInputError, match=message):
        bench.main(["--out", str(tmp_path / "x.csv"), "--problems", "F01", "--dim", "10", option, value])
    assert not (tmp_path / "x.csv").exists()


@pytest.mark.parametrize("problems, dim, message", [
    ("F01,F99x", "10", "unknown problem 'F99x'"),
    ("F01", "7", "F01 is not available at dim=7"),
])
def test_an_unknown_problem_or_dimension_is_refused_before_any_run(tmp_path, problems, dim, message):
    with pytest.raises(GpudeError, match=message):
        bench.main(["--out", str(tmp_path / "x.csv"), "--problems", problems, "--dim", dim])
