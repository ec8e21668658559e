"""benchmarks/jso_brest_runs.py's host mode refuses more lanes than the process has cores, before it
builds anything (Brest's tree is fetched, not committed: its runs are the GPU host's)."""

import os

from _benchmarks import load_benchmark

bench = load_benchmark("jso_brest_runs")


def test_more_lanes_than_cores_is_refused_by_name(tmp_path, capsys):
    cores = len(os.sched_getaffinity(0))
    args = ["host", "--lanes", str(cores + 1), "--out", str(tmp_path / "x.csv"), "--build", str(tmp_path / "b")]
    assert bench.main(args) == 1
    assert f"--lanes {cores + 1}: this process may use {cores} core(s); give 1 to {cores}" in capsys.readouterr().err
    assert not (tmp_path / "x.csv").exists() and not (tmp_path / "b").exists()
