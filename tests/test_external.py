"""Outside programs as competitors (gpude.implementations.external): the spec's checks, the two
output readers, a build run once per source hash, trials through `gpude run` with a failing one kept
as a row, and a C program read by a pattern where a C compiler is installed."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gpude.core.errors import InvalidInputError
from gpude.implementations.external import ProgramError, ProgramSpec, read_points, register_programs, source_digest
from gpude.run.trial import make_runner

DATA = Path(__file__).parent / "data" / "programs"


@pytest.fixture(autouse=True)
def registry_as_it_was():
    """The programs a test registers leave with it (the battery of test_implementations lists entries)."""
    from gpude.implementations import registry

    registry._ensure_loaded()
    saved = dict(registry._REGISTRY)
    yield
    registry._REGISTRY.clear()
    registry._REGISTRY.update(saved)
TOY = {"command": "{python} {source} --function {function} --dim {dim} --max-fes {max_fes} --seed {seed}",
       "source": str(DATA / "toy_search.py")}


@pytest.mark.parametrize("spec,message", [
    ({}, "'command' is required"),
    ({"command": "x", "colour": "red"}, "unknown field(s) colour"),
    ({"command": "x", "device": "tpu"}, "device must be cpu or gpu"),
    ({"command": "x", "output": "best (\\d+)"}, "needs a named group (?P<best_error>...)"),
    ({"command": "x", "output": "best ("}, "output is 'jsonl' or a regular expression"),
    ({"command": "x", "timeout_s": -1}, "timeout_s must be a number of seconds >= 0"),
])
def test_a_bad_spec_is_named(spec, message):
    with pytest.raises(InvalidInputError, match=message.replace("(", "\\(").replace(")", "\\)").replace("?", "\\?")):
        ProgramSpec.from_mapping("toy", spec)


def test_the_two_output_readers():
    out = "\n".join(['warming up', json.dumps({"fes": 10, "best_error": 3.0}), '{"not": "a point"}',
                     json.dumps({"fes": 20, "best_error": 1.5, "time_s": 0.25}), "{broken"])
    assert read_points(out, "jsonl") == [{"fes": 10, "best_error": 3.0}, {"fes": 20, "best_error": 1.5, "time_s": 0.25}]
    printed = "gen 1 best 2.5 fes 100\ngen 2 best 0.5 fes 200\n"
    pattern = r"best (?P<best_error>\S+) fes (?P<fes>\d+)"
    assert read_points(printed, pattern) == [{"best_error": "2.5", "fes": "100"}, {"best_error": "0.5", "fes": "200"}]


def test_trials_of_a_program_and_a_source_that_differs(tmp_path, monkeypatch):
    monkeypatch.setattr("gpude.implementations.external.BUILD_ROOT", tmp_path / "builds")
    register_programs({"toy_py": TOY})
    runner = make_runner("de", "toy_py", "F01", 10, 10, 1200)
    a, b = runner.run(3), runner.run(3)
    assert a.best_error == b.best_error and a.fes_used == 1200 and a.implementation == "toy_py"
    assert list(a.trace["fes"]) == [500, 1000, 1200]
    assert np.all(np.diff(a.trace["best_error"]) <= 0) and a.info["timed_by"] == "program"
    assert a.info["options"]["source_sha256"] == source_digest(DATA / "toy_search.py")
    assert runner.run(4).best_error != a.best_error  # the seed reaches the program
    with pytest.raises(ProgramError, match="exited with status 1: toy_search: no function Q01 here"):
        make_runner("de", "toy_py", "Q01", 10, 10, 1200).run(3)
    # a result that is no number is named as such
    register_programs({"garbled": {"command": "{python} -c \"print('{{\\\"best_error\\\": \\\"abc\\\"}}')\""}})
    with pytest.raises(ProgramError, match="printed a result gpude cannot read"):
        make_runner("de", "garbled", "F01", 10, 10, 1200).run(3)
    # the fields a command may name: a program that prints them back as its result
    echo = "{python} -c \"import json; print(json.dumps({{'best_error': {function_number}, 'fes': {dim}}}))\""
    register_programs({"echo": {"command": echo}})
    r = make_runner("de", "echo", "Q04", 10, 10, 1200).run(3)
    assert (r.best_error, r.fes_used, r.info["timed_by"]) == (4.0, 10, "process")
    register_programs({"toy_pinned": {**TOY, "sha256": "0" * 64}})
    with pytest.raises(InvalidInputError, match="has SHA-256 .* not the 0000"):
        make_runner("de", "toy_pinned", "F01", 10, 10, 1200)


def test_a_build_runs_once_per_source_and_its_failure_is_named(tmp_path, monkeypatch):
    monkeypatch.setattr("gpude.implementations.external.BUILD_ROOT", tmp_path / "builds")
    log = tmp_path / "built.txt"
    spec = {**TOY, "build": f"{sys.executable} -c \"open('{log}', 'a').write('x')\""}
    register_programs({"toy_built": spec})
    make_runner("de", "toy_built", "F01", 10, 10, 600).run(1)
    make_runner("de", "toy_built", "F01", 10, 10, 600).run(2)
    assert log.read_text() == "x"
    register_programs({"toy_broken": {**TOY, "build": f"{sys.executable} -c \"raise SystemExit('no compiler')\""}})
    with pytest.raises(Exception, match="did not build .*no compiler"):
        make_runner("de", "toy_broken", "F01", 10, 10, 600)


def test_gpude_run_keeps_a_failed_trial_as_a_row(tmp_path):
    programs = tmp_path / "programs.yaml"
    programs.write_text(json.dumps({"programs": {"toy": TOY}}))  # (JSON is YAML)
    rows = []
    for function in ("F01", "Q01"):
        out = tmp_path / f"{function}.csv"
        res = subprocess.run([sys.executable, "-m", "gpude", "run", "--programs", str(programs), "--implementation",
                              "toy", "--function", function, "--dim", "10", "--popsize", "10", "--max-fes", "1000",
                              "--trials", "2", "--keep-failed", "--out-csv", str(out),
                              "--out-traces", str(tmp_path / f"{function}.npz")],
                             capture_output=True, text=True, timeout=300,
                             env={**os.environ, "GPUDE_BUILD_DIR": str(tmp_path / "builds")})
        assert res.returncode == 0, res.stderr[-2000:]
        rows.append(pd.read_csv(out))
    ok, failed = rows  # (Q01: exit status 1 unless --keep-failed, the rows written either way)
    assert list(ok["status"]) == ["budget", "budget"] and ok["best_error"].notna().all()
    assert json.loads(ok["params"].iloc[0])["program"] == "toy"
    assert failed["status"].str.startswith("error:ProgramError: program 'toy' exited with status 1").all()


def test_several_runs_in_one_call_each_line_a_trial(tmp_path, monkeypatch):
    monkeypatch.setattr("gpude.implementations.external.BUILD_ROOT", tmp_path / "builds")
    authors_line = r"Function:\s*(\d+)\s+Best fitness:\s*(?P<best_error>\S+)\s+Time:\s*(?P<time_s>\S+)"
    runs = str(DATA / "runs.py")
    register_programs({"batchy": {"command": f"{{python}} {runs} {{function_number}} {{trials}} 9",
                                  "output": authors_line, "runs_per_call": "all"},
                       "stops_early": {"command": f"{{python}} {runs} {{function_number}} {{trials}} 2",
                                       "output": authors_line, "runs_per_call": "all"}})
    runner = make_runner("de", "batchy", "F01", 10, 10, 1000)
    assert runner.trials_per_launch > 1000
    results = runner.run_batch([11, 12, 13])
    assert [r.best_error for r in results] == [1.0, 0.5, 0.25]
    assert [r.wall_time_s for r in results] == [0.01, 0.02, 0.03] and [r.seed for r in results] == [11, 12, 13]
    short = make_runner("de", "stops_early", "F01", 10, 10, 1000).run_batch([1, 2, 3])
    assert [r.best_error for r in short[:2]] == [1.0, 0.5]
    assert isinstance(short[2], ProgramError) and "no result for trial 2 of its call's 3" in str(short[2])
    with pytest.raises(InvalidInputError, match="runs_per_call must be one or all"):
        ProgramSpec.from_mapping("x", {"command": "x", "runs_per_call": "some"})


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler (cc) on this machine")
def test_a_c_program_built_by_the_spec_and_read_by_a_pattern(tmp_path, monkeypatch):
    monkeypatch.setattr("gpude.implementations.external.BUILD_ROOT", tmp_path / "builds")
    register_programs({"toy_c": {
        "source": str(DATA / "toy.c"), "build": "cc -O2 -o {build}/toy {source}",
        "command": "{build}/toy -d {dim} -n {max_fes} -s {seed}",
        "output": r"best (?P<best_error>\S+) fes (?P<fes>\d+) time (?P<time_s>\S+)"}})
    r = make_runner("de", "toy_c", "F01", 10, 10, 1500).run(7)
    assert r.fes_used == 1500 and list(r.trace["fes"]) == [500, 1000, 1500] and 0 <= r.best_error < 10 * 25
    assert r.best_error == make_runner("de", "toy_c", "F01", 10, 10, 1500).run(7).best_error
