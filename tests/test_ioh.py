"""gpude export-ioh: IOHprofiler files written from a committed reference and read back."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gpude.core.errors import GpudeError
from gpude.run.rows import load_traces
from gpude.study.ioh import export, read_dat

ROOT = Path(__file__).resolve().parents[1]
REF = ROOT / "results" / "reference" / "nvidia-h200" / "qin"


@pytest.fixture(scope="module")
def qin():
    trials = pd.read_csv(REF / "trials.csv", comment="#")
    trials = trials[trials["function"].isin(["Q01", "Q04"]) & (trials["dim"] == 10)]
    return trials, load_traces(REF / "traces.npz")


def test_files_read_back_as_the_traces(qin, tmp_path):
    trials, traces = qin
    files = export(trials, traces, tmp_path / "ioh", suite="qin")
    competitors = {p.parent.name for p in files}
    assert "de_ide_np100_float64" in competitors and len(files) == 2 * len(competitors)
    info = json.loads((tmp_path / "ioh" / "de_ide_np100_float64" / "IOHprofiler_f2_Q04.json").read_text())
    assert info["function_id"] == 2 and info["function_name"] == "Q04" and info["maximization"] is False
    assert info["attributes"] == ["evaluations", "raw_y"] and info["suite"] == "qin"
    scenario = info["scenarios"][0]
    runs = read_dat(tmp_path / "ioh" / "de_ide_np100_float64" / scenario["path"])
    cell = trials[(trials["implementation"] == "ide") & (trials["function"] == "Q04") & (trials["popsize"] == 100)
                  & (trials["dtype"] == "float64")].sort_values("trial")
    assert len(runs) == len(scenario["runs"]) == len(cell)
    for run, meta, row in zip(runs, scenario["runs"], cell.to_dict("records")):
        t = traces[row["run_id"]]
        np.testing.assert_array_equal(run[:, 0], t["fes"])
        np.testing.assert_array_equal(run[:, 1], t["best_error"])  # %.17g round-trips a double
        assert meta["instance"] == row["trial"] + 1 and meta["evals"] == row["fes_used"]
        assert meta["best"]["y"] == pytest.approx(row["best_error"], rel=1e-12, abs=1e-300)


def test_a_failed_export_leaves_the_old_folder_and_no_staging(qin, tmp_path):
    trials, traces = qin
    export(trials, traces, tmp_path / "ioh")
    before = sorted(p.name for p in (tmp_path / "ioh").iterdir())
    broken = {k: {"fes": v["fes"], "best_error": None} for k, v in traces.items()}  # fails while writing
    with pytest.raises(TypeError):
        export(trials, broken, tmp_path / "ioh")
    assert sorted(p.name for p in (tmp_path / "ioh").iterdir()) == before
    assert not list(tmp_path.glob(".ioh.staging-*"))
    with pytest.raises(GpudeError, match="no trial of the table has a trace"):
        export(trials, {}, tmp_path / "ioh")
