"""docs/tutorial.md, run as written: a competitor of one's own (algorithm + implementation in one
plugin file) registered from outside the package, run by the workflow beside gpude's DE, in the
rank-sum table and the REPORT. Everything runs in subprocesses, so the plugin never enters this
process's registry (the battery of tests/test_implementations.py lists the built-in entries)."""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from _helpers import with_path

ROOT = Path(__file__).resolve().parents[1]


def write_tutorial(work: Path) -> str:
    """The page's `# file:` blocks as files under ``work``; returns its `# run:` block."""
    check = ""
    for _, body in re.findall(r"```(\w+)\n(.*?)```", (ROOT / "docs" / "tutorial.md").read_text(), re.S):
        first = body.splitlines()[0]
        if first.startswith("# file: "):
            path = work / first[len("# file: "):].strip()
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(body)
        elif first.startswith("# run: "):
            check += body
    return check


@pytest.mark.slow
def test_the_tutorial_runs_as_written(tmp_path):
    for part in ("Snakefile", "workflow", "config", "profiles"):
        src = ROOT / part
        (shutil.copytree if src.is_dir() else shutil.copy)(src, tmp_path / part)
    check = write_tutorial(tmp_path)
    # the plugin's folder first on PYTHONPATH
    env = with_path(tmp_path)
    run = lambda *cmd: subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)  # noqa: E731
    res = run(sys.executable, "-c", check)
    assert res.returncode == 0, res.stderr[-2000:]
    res = run(sys.executable, "-m", "snakemake", "--cores", "2", "--configfile", "config/experiments/mine.yaml",
              "--", "results/mine/stats/rank_sum_time.csv", "paper/mine/table_time.md")
    assert res.returncode == 0, (res.stdout + res.stderr)[-3000:]
    trials = pd.read_csv(tmp_path / "results/mine/trials.csv")
    assert set(trials["algorithm"]) == {"de", "pbest"} and len(trials) == 2 * 3 * 3
    assert set(trials["function"]) == {"Q01", "F01", "rosen10"} and (trials["status"] != "failed").all()
    assert (trials[trials["algorithm"] == "pbest"]["fes_used"] <= 3000).all()
    assert '"p": 0.2' in trials[trials["algorithm"] == "pbest"]["params"].iloc[0]
    scores = pd.read_csv(tmp_path / "results/mine/stats/rank_sum_time.csv", index_col="function")
    assert {"de/sequential", "pbest/numpy"} <= set(scores.columns) and "total" in scores.index
    res = run(sys.executable, "-m", "gpude", "report", "--section", "config/experiments/mine.yaml=paper/mine",
              "--out", "paper/REPORT.md")
    assert res.returncode == 0, res.stderr[-2000:]
    report = (tmp_path / "paper/REPORT.md").read_text()
    assert "DE/current-to-pbest/1 against gpude's DE/rand/1" in report and "pbest/numpy" in report


@pytest.mark.slow
def test_an_outside_program_runs_through_the_workflow_and_its_failed_run_is_a_row(tmp_path):
    # docs/tutorial.md, section 5: the program's one entry in the experiment file, through the workflow
    for part in ("Snakefile", "workflow", "config", "profiles"):
        src = ROOT / part
        (shutil.copytree if src.is_dir() else shutil.copy)(src, tmp_path / part)
    write_tutorial(tmp_path)
    env = {**with_path(tmp_path), "GPUDE_BUILD_DIR": str(tmp_path / "builds")}
    res = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "2", "--configfile",
                          "config/experiments/outside.yaml", "--", "results/outside/stats/rank_sum_time.csv"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, (res.stdout + res.stderr)[-3000:]
    trials = pd.read_csv(tmp_path / "results/outside/trials.csv")
    toy = trials[trials["implementation"] == "toy"].set_index("function")
    assert len(trials) == 2 * 2 * 2 and len(toy) == 4
    assert (toy.loc["F01", "status"] == "budget").all() and toy.loc["F01", "best_error"].notna().all()
    assert toy.loc["Q01", "status"].str.startswith(
        "error:ProgramError: program 'toy' exited with status 1: toy_search: no function Q01 here").all()
    params = json.loads(toy.loc["F01", "params"].iloc[0])
    assert params["program"] == "toy" and len(params["source_sha256"]) == 64
    # the rank-sum scores: on Q01 toy's failed runs rank below sequential's two finished ones
    scores = pd.read_csv(tmp_path / "results/outside/stats/rank_sum_time.csv", index_col="function")
    assert scores.loc["Q01", "toy"] == 0 and scores.loc["Q01", "sequential"] == 4
