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


def test_each_batch_of_a_cell_runs_new_seeds_side_by_side_and_keeps_its_wall_time(tmp_path):
    # a stand-in for Brest's program: its last line is his driver's JSON
    exe = tmp_path / "jso"
    exe.write_text("#!/bin/sh\necho '{\"fes\": 300000, \"best_error\": 0.5, \"time_s\": 0.01}'\n")
    exe.chmod(0o755)
    machine = {"cpu": "cpu", "cpu_cores": 2, "host": "h"}
    args = type("Args", (), {"seed": 7})()
    rows = []
    for k in range(2):
        assert bench.one_batch("cec17_f03", 30, 466, k, 2, [0, 1], exe, tmp_path, None, "g++", machine, args, rows) == 0
    assert [r["batch"] for r in rows] == [0, 0, 1, 1] and [r["run"] for r in rows] == [0, 1, 2, 3]
    assert len({r["seed"] for r in rows}) == 4  # batch 1 runs trials 2-3, not batch 0's again
    assert all(r["lanes"] == 2 and r["batch_wall_s"] > 0 for r in rows)
    assert rows[0]["batch_wall_s"] == rows[1]["batch_wall_s"] and rows[0]["time_s"] == 0.01
