"""`gpude run-batches`: several batches in one process make the rows and traces that a `gpude run` each
makes, byte for byte but for the times; bad jobs files are refused before any batch runs; a failed
batch does not stop the others; no batch starts after --max-seconds. In this process
(gpude.cli.main), GPU batches on the simulator."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_cli_run import call  # gpude.cli.main in this process: status, stdout, stderr

REPO = Path(__file__).resolve().parents[1]
# what differs between two makings of the same rows: the times, and where and when they were made
TIMES = ["wall_time_s", "setup_time_s", "time_to_target_s", "timestamp_utc", "trace_path"]


def run_args(implementation, function, stem, trials=2, extra=()):
    return ["run", "--implementation", implementation, "--function", function, "--dim", "10", "--popsize", "8",
            "--max-fes", "80", "--trials", str(trials), "--seed", "11", *extra,
            "--out-csv", f"{stem}.csv", "--out-traces", f"{stem}.npz"]


def write_jobs(path, jobs):
    path.write_text("".join(json.dumps({"args": a, "log": log}) + "\n" for a, log in jobs))


def same_batch(a: Path, b: Path):
    """Two makings of one batch: the same rows but for the times, the same traces."""
    ra, rb = pd.read_csv(a, dtype=str, keep_default_na=False), pd.read_csv(b, dtype=str, keep_default_na=False)
    assert list(ra.columns) == list(rb.columns)
    pd.testing.assert_frame_equal(ra.drop(columns=TIMES), rb.drop(columns=TIMES))
    with np.load(a.with_suffix(".npz")) as ta, np.load(b.with_suffix(".npz")) as tb:
        assert sorted(ta.files) == sorted(tb.files)
        for key in ta.files:
            if key not in ("time_s",):
                np.testing.assert_array_equal(ta[key], tb[key], err_msg=key)


BATCHES = [("sequential", "Q01"), ("naive_gpu", "Q01"), ("sequential", "F05")]


def test_batches_in_one_process_make_the_rows_of_a_run_each(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for implementation, function in BATCHES:  # a gpude run each (as the workflow; shared: on a real GPU this
        # process may have started CUDA already, and a lease must come first)
        alone = run_args(implementation, function, f"alone/{implementation}_{function}", extra=["--gpu", "shared"])
        assert call(alone, capsys)[0] == 0
    write_jobs(tmp_path / "jobs.jsonl", [(run_args(i, f, f"together/{i}_{f}"), f"logs/{i}_{f}.log")
                                         for i, f in BATCHES])
    status, out, err = call(["run-batches", "jobs.jsonl", "--gpu", "shared"], capsys)
    assert status == 0, out + err
    assert len([line for line in out.splitlines() if ": exit 0 in " in line]) == len(BATCHES), out
    for implementation, function in BATCHES:
        stem = f"{implementation}_{function}"
        same_batch(Path("alone", stem + ".csv"), Path("together", stem + ".csv"))
        log = Path("logs", stem + ".log").read_text()
        assert "2/2 trials" in log and "first trial at" in log, log
    rows = pd.read_csv("together/sequential_F05.csv")
    # a CPU batch after a GPU batch in one process: its rows name no GPU (its own process would not)
    assert set(rows["gpu"]) == {"none"}
    # and a GPU batch's rows name the GPU it ran on, as its own process's rows do (the simulator here)
    gpu_rows = set(pd.read_csv("together/naive_gpu_Q01.csv")["gpu"])
    assert gpu_rows == set(pd.read_csv("alone/naive_gpu_Q01.csv")["gpu"]) and "none" not in gpu_rows


def test_a_batch_in_its_own_process_makes_the_same_rows(tmp_path, monkeypatch, capsys):
    # against a real `python -m gpude run` process (a CPU batch: the simulator is slow in a fresh process)
    monkeypatch.chdir(tmp_path)
    subprocess.run([sys.executable, "-m", "gpude", *run_args("sequential", "F03", "alone/b")], check=True,
                   capture_output=True, cwd=tmp_path)
    write_jobs(tmp_path / "jobs.jsonl", [(run_args("sequential", "F03", "together/b"), "b.log")])
    assert call(["run-batches", "jobs.jsonl"], capsys)[0] == 0
    same_batch(Path("alone/b.csv"), Path("together/b.csv"))


@pytest.mark.parametrize("line,message", [
    ("not json", "expected a JSON object"),
    (json.dumps({"args": ["run"]}), "expected a JSON object"),
    (json.dumps({"args": "run --trials 1", "log": "x.log"}), "must be a list of strings"),
    (json.dumps({"args": ["warmup", "--function", "F01"], "log": "x.log"}), "not a `gpude run` command line"),
    (json.dumps({"args": run_args("sequential", "F01", "b")[:-4], "log": "x.log"}), "give --out-csv"),
    (json.dumps({"args": run_args("sequential", "F01", "b", extra=["--gpu", "1"]), "log": "x.log"}),
     "leave --gpu out of the batch lines"),
    (json.dumps({"args": run_args("sequential", "F01", "b", extra=["--trials", "0"]), "log": "x.log"}),
     "do not parse"),
])
def test_a_bad_jobs_file_is_refused_before_any_batch_runs(line, message, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    good = json.dumps({"args": run_args("sequential", "Q01", "first"), "log": "first.log"})
    (tmp_path / "jobs.jsonl").write_text(good + "\n" + line + "\n")
    status, out, err = call(["run-batches", "jobs.jsonl"], capsys)
    assert status == 2 and message in err, out + err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["jobs.jsonl"]  # not even the first batch ran


def test_a_failed_batch_leaves_the_others_and_the_exit_status_says_so(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    write_jobs(tmp_path / "jobs.jsonl", [(run_args("sequential", "F99", "bad"), "bad.log"),
                                         (run_args("sequential", "Q01", "good"), "good.log")])
    status, out, err = call(["run-batches", "jobs.jsonl"], capsys)
    assert status == 1 and "exit 2" in out and "exit 0" in out, out
    assert "error" in Path("bad.log").read_text() and not Path("bad.csv").exists()
    assert len(pd.read_csv("good.csv")) == 2


def test_a_batch_that_hits_a_bug_says_so_in_its_log_and_the_next_runs(tmp_path, monkeypatch, capsys):
    from gpude.run import trials

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GPUDE_DEBUG", raising=False)
    real = trials.run_trials
    monkeypatch.setattr(trials, "run_trials", lambda spec, *a: (_ for _ in ()).throw(ValueError("a bug"))
                        if spec.function == "F05" else real(spec, *a))
    write_jobs(tmp_path / "jobs.jsonl", [(run_args("sequential", "F05", "bug"), "bug.log"),
                                         (run_args("sequential", "Q01", "good"), "good.log")])
    status, out, err = call(["run-batches", "jobs.jsonl"], capsys)
    assert status == 1 and "exit 2" in out and "exit 0" in out, out
    assert "gpude run: internal error: ValueError: a bug" in Path("bug.log").read_text()
    assert len(pd.read_csv("good.csv")) == 2


def test_no_batch_starts_after_max_seconds(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    write_jobs(tmp_path / "jobs.jsonl", [(run_args("sequential", "Q01", f"b{k}"), f"b{k}.log") for k in range(3)])
    clock = iter([0.0, 0.0, 0.0, 5.0, 5.0, 5.0, 5.0])
    monkeypatch.setattr("gpude.run.batches.time.monotonic", lambda: next(clock, 5.0))
    status, out, err = call(["run-batches", "jobs.jsonl", "--max-seconds", "1"], capsys)
    assert status == 1 and "2 of 3 batches not started" in out, out
    assert Path("b0.csv").exists() and not Path("b1.csv").exists() and not Path("b2.csv").exists()


def test_the_interleave_runs_its_batches_in_one_process_as_it_did_a_process_each(tmp_path, monkeypatch):
    from gpude.campaign.interleave import interleave

    experiment = tmp_path / "tiny.yaml"
    experiment.write_text("name: tiny\ndescription: two small CPU batches\nseed: 5\ntrials: 2\ntrials_per_job: 2\n"
                          "algorithms:\n  de:\n    implementations: [sequential]\nfunctions: [F01, Q01]\n"
                          "dims: [10]\npopsizes: [8]\nmax_fes: 80\ntiming: exclusive\n")
    for mode in ("one", "each"):
        (tmp_path / mode).mkdir()
        monkeypatch.chdir(tmp_path / mode)
        assert interleave(str(experiment), workers=2, process_per_batch=mode == "each") == 0
    batches = sorted(Path(tmp_path / "one").rglob("chunk0.csv"))
    assert len(batches) == 2
    for one in batches:
        same_batch(one, tmp_path / "each" / one.relative_to(tmp_path / "one"))
    listing = (tmp_path / "one/logs/tiny/run_batches.jsonl").read_text().splitlines()
    assert len(listing) == 2 and all(Path(tmp_path / "one", json.loads(x)["log"]).is_file() for x in listing)
