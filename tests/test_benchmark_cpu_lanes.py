"""benchmarks/cpu_lanes.py at a tiny budget: a row per batch, alone then k at once, per round, and a
failed batch named."""

import pandas as pd
import pytest
from _benchmarks import load_benchmark

bench = load_benchmark("cpu_lanes")


def test_rows_alone_then_at_once_each_with_its_trials(tmp_path, capsys):
    out = tmp_path / "lanes.csv"
    assert bench.main(["--rounds", "1", "--trials", "2", "--lanes", "2", "--max-fes", "500", "--function", "F01",
                       "--out", str(out)]) == 0
    rows = pd.read_csv(out)
    assert rows[["mode", "batches_at_once", "batch"]].values.tolist() == [["alone", 1, 0], ["at_once", 2, 0],
                                                                          ["at_once", 2, 1]]
    assert (rows["trials"] == 2).all() and (rows["max_fes"] == 500).all() and (rows["mean_trial_s"] > 0).all()
    assert "ratio" in capsys.readouterr().out


def test_a_failed_batch_stops_the_measurement_with_its_message(tmp_path):
    with pytest.raises(SystemExit, match="gpude run failed: .*F99"):
        bench.main(["--rounds", "1", "--trials", "1", "--lanes", "1", "--max-fes", "500", "--function", "F99",
                    "--out", str(tmp_path / "x.csv")])
    assert not (tmp_path / "x.csv").exists()
