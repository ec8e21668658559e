"""benchmarks/kromer_fe_rate.py (issue 30: FEs per second of Krömer's three columns) at tiny sizes: a
row per case and implementation, FEs per second that are the run's FEs over its seconds, and a
clear error for an unknown implementation (no half-written CSV)."""

import numpy as np
from _benchmarks import load_benchmark

from gpude.core.io import read_csv

bench = load_benchmark("kromer_fe_rate")


def test_a_row_per_case_and_implementation(tmp_path, monkeypatch):
    monkeypatch.setattr(bench, "CASES", (("N09", 10, 8, 0.5), ("F01", 10, 6, 0.9)))
    out = tmp_path / "rate.csv"
    assert bench.main(["--out", str(out), "--seconds", "0.05", "--implementations", "high_level,sequential",
                       "--repeats", "1"]) == 0
    t = read_csv(out)
    assert list(t.columns) == list(bench.COLUMNS)
    assert list(zip(t["problem"], t["implementation"])) == [("N09", "high_level"), ("N09", "sequential"),
                                                            ("F01", "high_level"), ("F01", "sequential")]
    # one division, written with 17 digits and read back exactly: equal within the division's rounding
    np.testing.assert_allclose(t["fes_per_s"], t["fes"] / t["wall_time_s"], rtol=2 * np.finfo(float).eps, atol=0)
    assert (t["wall_time_s"] >= 0.05).all()
    assert list(t["popsize"]) == [8, 8, 6, 6] and list(t["CR"]) == [0.5, 0.5, 0.9, 0.9]
    assert (t["git_commit"].astype(str).str.len() > 0).all()


def test_an_unknown_implementation_is_named_and_nothing_is_written(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(bench, "CASES", (("N09", 10, 8, 0.5),))
    out = tmp_path / "rate.csv"
    assert bench.main(["--out", str(out), "--seconds", "0.05", "--implementations", "turbo"]) == 1
    assert "unknown implementation 'turbo'" in capsys.readouterr().err and not out.exists()


def test_repeats_make_runs_of_seeds_one_after_another(tmp_path, monkeypatch):
    monkeypatch.setattr(bench, "CASES", (("N09", 10, 8, 0.5),))
    out = tmp_path / "rate.csv"
    assert bench.main(["--out", str(out), "--seconds", "0.05", "--implementations", "sequential",
                       "--repeats", "3"]) == 0
    t = read_csv(out)
    assert list(t["run"]) == [1, 2, 3] and (t["implementation"] == "sequential").all()
