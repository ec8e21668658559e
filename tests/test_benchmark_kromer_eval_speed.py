"""benchmarks/kromer_eval_speed.py (Kromer et al.'s Figs. 5 and 7) on tiny hand-made instances: its
rows, and its refusal to time evaluators that disagree."""

import numpy as np
import pandas as pd
import pytest
from _benchmarks import load_benchmark

from gpude.core.errors import GpudeError
from gpude.problems import LinearOrdering, TaskScheduling

bench = load_benchmark("kromer_eval_speed")
RNG = np.random.default_rng(3)
SMALL = {"lop": LinearOrdering.from_matrix(RNG.integers(0, 9, (6, 6)), name="lop6"),
         "etc": TaskScheduling.from_matrix(RNG.uniform(1, 50, (10, 3)), name="etc10x3")}


@pytest.fixture()
def small(monkeypatch):
    monkeypatch.setattr(bench, "problems", lambda lop, etc: SMALL)


@pytest.mark.parametrize("devices", ["cpu,cpu_parallel", pytest.param("gpu,gpu_prebound", marks=pytest.mark.cudasim)])
def test_rows_per_problem_popsize_and_device(small, tmp_path, devices):
    out = tmp_path / "speed.csv"
    assert bench.main(["--out", str(out), "--popsizes", "2,4", "--repeats", "2", "--queued", "2",
                       "--devices", devices]) == 0
    t = pd.read_csv(out)
    n_devices = len(devices.split(","))
    assert len(t) == 2 * 2 * n_devices and set(t["instance"]) == {"lop6", "etc10x3"}
    assert (t["seconds_median"] > 0).all() and (t["seconds_min"] <= t["seconds_median"]).all()
    # (a CSV round trip may move the last digit)
    assert np.allclose(t["evaluations_per_s"], t["popsize"] / t["seconds_median"], rtol=1e-12)
    assert {"cpu", "numba", "git_commit"} <= set(t.columns)
    # every repeat kept (the report's intervals resample them), their median the row's
    repeats = t["seconds_runs"].map(lambda v: [float(x) for x in v.split(";")])
    assert (repeats.map(len) == 2).all()
    assert np.allclose(repeats.map(np.median), t["seconds_median"], rtol=1e-6)
    if devices.startswith("gpu"):
        assert (t.loc[t["device"] == "gpu", "seconds_with_copies"] > 0).all()
        assert (t.loc[t["device"] == "gpu_prebound", "seconds_queued"] > 0).all()


def test_disagreeing_evaluators_are_not_timed(small, monkeypatch, tmp_path):
    real = bench.evaluator

    def skewed(problem, device):
        run, timed = real(problem, device)
        return (lambda X: run(X) + (device == "cpu_parallel")), timed
    monkeypatch.setattr(bench, "evaluator", skewed)
    with pytest.raises(GpudeError, match="cpu_parallel evaluator differs from the CPU one"):
        bench.main(["--out", str(tmp_path / "x.csv"), "--popsizes", "2", "--devices", "cpu,cpu_parallel"])
    assert not (tmp_path / "x.csv").exists()
    with pytest.raises(GpudeError, match="unknown device"):
        bench.main(["--out", str(tmp_path / "x.csv"), "--devices", "tpu"])
