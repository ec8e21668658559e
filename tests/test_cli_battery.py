"""Every option of every `gpude` command tried with bad values (issue 39): one line on stderr that
names the option or the thing, exit status 2 (`fetch-data`'s failures: its documented 1), no
traceback, nothing written.

The cases are generated from the parser (gpude.cli.build_parser(): every subcommand, every option),
so an option added tomorrow is tried tomorrow: by its type (int, float, choices, a flag), by its
name (the files a command reads or writes) and by the small tables below, which say what the
generic rules cannot (each exclusion with its reason). Every case runs in this process
(gpude.cli.main(argv)), in a folder of its own, and fails before any trial runs: the whole battery
takes a few seconds.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pytest

from gpude import cli

# a good command line per subcommand (its files made by make_files); each case changes one option
BASE = {
    "eval": ["F01", "--dim", "10", "--points", "points.npy"],
    "run": ["--implementation", "sequential", "--function", "F01", "--dim", "10", "--popsize", "10",
            "--max-fes", "100", "--out-csv", "out.csv", "--out-traces", "out.npz"],
    "warmup": ["--implementation", "sequential", "--function", "F01", "--dim", "10", "--popsize", "10",
               "--max-fes", "100", "--out", "warm.json"],
    "merge": ["--out", "merged.csv", "batch.csv"],
    "rerun-check": ["--reference", "batch.csv", "--rerun", "batch.csv", "--out", "check.csv"],
    "stats": ["--trials", "batch.csv", "--out-dir", "stats"],
    "paper": ["--trials", "batch.csv", "--out-dir", "paper"],
    "report": ["--section", "experiment.yaml=paper_in", "--out", "REPORT.md"],
    "paper-gpu-scaling": ["--scaling-dir", "scaling_in", "--out-dir", "gpu_scaling"],
    "export-ioh": ["results_in", "--out", "ioh"],
    "verify": ["trials.csv", "--out", "verified.csv"],
    "run-batches": ["jobs.jsonl"],
    "serve-batches": ["--key", "0123456789abcdef"],
    "list": [], "problems": [], "functions": [],
}

# the options that name a file a command reads, by (command, dest): what kind of file
INPUT_FILES = {("run-batches", "jobs"): "csv", ("eval", "points"): "npy", ("run", "programs"): "yaml",
               ("warmup", "programs"): "yaml", ("merge", "inputs"): "csv", ("rerun-check", "reference"): "csv",
               ("rerun-check", "rerun"): "csv",
               ("stats", "trials"): "csv", ("paper", "trials"): "csv", ("paper", "alone"): "csv",
               ("paper", "published"): "csv", ("paper", "compare"): "label=csv",
               ("paper", "study_input"): "label=path", ("report", "section"): "yaml=folder",
               ("export-ioh", "results"): "folder", ("verify", "table"): "csv", ("verify", "programs"): "yaml",
               ("report", "gpu_scaling"): "folder", ("paper-gpu-scaling", "scaling_dir"): "folder",
               ("paper-gpu-scaling", "reference_root"): "folder"}
# the options that name a file or folder a command writes (dest -> file or folder)
OUTPUTS = {"out_csv": "file", "out_traces": "file", "traces_out": "file", "out": "file", "out_dir": "folder"}
OUTPUT_FOLDERS = {("export-ioh", "out")}

# bad values beyond the generic ones (a wrong type, and -1 for an integer or a number), by dest
BAD_VALUES = {
    "algorithm": ["nope"], "implementation": ["nope"], "function": ["NOPE"], "bounds": ["nope"],
    "dim": ["0", "7"], "popsize": ["0", "2"], "max_fes": ["0", "5", "nan", "inf"], "F": ["0", "nan", "inf"],
    "CR": ["1.5"], "target": ["-1", "nan", "inf"], "max_time_s": ["0", "nan"], "workers": ["0"],
    "members_per_block": ["0"],
    "trials_per_launch": ["0"], "trials": ["0"], "threads": ["0"], "trace_decades": ["0"],
    "param": ["nope", "=1", "CR=0.5", "F=0.7", "bounds=clip", "workers=2", "members-per-block=2",
              "trials_per_launch=2", "dtype=float32", "target=0", "max_time_s=1", "no_such_parameter=1"],
    "plugin": ["no_such_plugin_module"], "seeds": ["a,b", "1,-2", ""], "gpu": ["nope", "-1"],
    "study": ["nope"], "experiment": ["nope"], "suite": ["nope"], "run_id": ["de/nope"], "status": ["nope"],
    "rows": ["0"], "max_row_seconds": ["0"], "figure_formats": ["pdf", "png,jpeg"],
    "key": ["../../etc/x", "0123456789ABCDEF"], "idle": ["0"],
}
# options without a bad value, and why
NO_BAD_VALUE = {
    ("run", "concurrency"): "free text recorded in each row",
    ("run", "suite"): "free text recorded in each row (the experiment's name)",
    ("run", "setting"): "free text: the parameter setting's label, part of each row's run_id",
}


def make_files(folder: Path) -> None:
    """The good files the base command lines name, and the bad ones the cases name."""
    np.save(folder / "points.npy", np.zeros((2, 10)))
    (folder / "batch.csv").write_text("run_id,best_error\nr0,1.0\nr1,2.0\n")
    (folder / "trials.csv").write_text("run_id,algorithm,implementation,function,dim,popsize,dtype,seed,max_fes,"
                                       "trial,status\nde/sequential/F01/d10/np10/float64/t0,de,sequential,F01,10,10,"
                                       "float64,1,100,0,budget\n")
    (folder / "experiment.yaml").write_text("name: smoke\nfunctions: [F01]\n")
    (folder / "jobs.jsonl").write_text(json.dumps({"args": ["run", *BASE["run"]], "log": "run.log"}) + "\n")
    (folder / "paper_in").mkdir()
    (folder / "results_in").mkdir()
    (folder / "results_in" / "trials.csv").write_text("run_id,best_error\nr0,1.0\n")
    # a scaling folder as gpude.study.gpu_scaling writes it (the committed one's tables)
    scaling = Path(__file__).resolve().parents[1] / "results/benchmarks/gpu_scaling/h100x4_scaling_886691b"
    (folder / "scaling_in" / "run").mkdir(parents=True)
    for name in ("rows.csv", "batches.csv"):
        (folder / "scaling_in" / "run" / name).write_bytes((scaling / name).read_bytes())
    (folder / "empty").write_text("")
    (folder / "a_folder").mkdir()
    (folder / "a_file").write_text("x\n")
    (folder / "garbage").write_bytes(b"\xff\xfe\x00\x81" * 64)
    good = {"npy": (folder / "points.npy").read_bytes(), "csv": b"run_id,best_error\nr0,1.0\nr1,2.0\n",
            "yaml": b"programs:\n  toy:\n    command: \"python toy.py\n"}  # an unterminated quote
    for kind, data in good.items():
        (folder / f"truncated.{kind}").write_bytes(data[:len(data) // 2] if kind != "yaml" else data)


def bad_files(kind: str) -> list[tuple[str, str]]:
    """(what, value) of the bad files for an input of this kind."""
    if kind == "folder":
        return [("missing folder", "no_such_folder"), ("a file", "a_file"), ("empty folder", "a_folder")]
    if kind == "yaml=folder":
        return [("no =", "experiment.yaml"), ("missing file", "no_such.yaml=paper_in"),
                ("empty file", "empty=paper_in"), ("truncated file", "truncated.yaml=paper_in"),
                ("unreadable file", "garbage=paper_in"), ("a folder", "a_folder=paper_in"),
                ("missing folder", "experiment.yaml=no_such_folder")]
    if kind == "label=path":  # a study's input: a file or a folder, read by the study's section (its
        # contents are the section's to check: only a missing path and an empty file are bad for any)
        return [("missing file", "label=no_such.csv"), ("empty file", "label=empty"), ("no =", "no_such.csv")]
    prefix, ext = ("label=", "csv") if kind == "label=csv" else ("", kind)
    cases = [("missing file", f"{prefix}no_such.{ext}"), ("empty file", f"{prefix}empty"),
             ("truncated file", f"{prefix}truncated.{ext}"), ("unreadable file", f"{prefix}garbage"),
             ("a folder", f"{prefix}a_folder")]
    if prefix:
        cases.append(("no =", f"no_such.{ext}"))
    return cases


def _replace(argv: list[str], action, value: str) -> list[str]:
    """``argv`` with the option's value replaced by ``value`` (or the option added)."""
    argv = list(argv)
    if not action.option_strings:  # a positional argument: the base's first bare word after options
        positional = [i for i in range(1, len(argv)) if not argv[i].startswith("-")
                      and not argv[i - 1].startswith("-")]
        argv[positional[0]] = value
        return argv
    flag = action.option_strings[0]
    for i, a in enumerate(argv):
        if a in action.option_strings:
            argv[i + 1] = value
            return argv
    return argv + [flag, value]


def _without(argv: list[str], action) -> list[str]:
    argv = list(argv)
    i = next(i for i, a in enumerate(argv) if a in action.option_strings)
    return argv[:i] + argv[i + 2:]


def generate_cases() -> list[tuple[str, list[str], tuple[str, ...]]]:
    """(label, argv, the words of which one names the option or the thing) of every case."""
    cases = [("gpude unknown command", ["nope"], ("nope",)), ("gpude no command", [], ("command",))]
    parser = cli.build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert set(subparsers.choices) - {"fetch-data"} == set(BASE), "a new subcommand: add its good command line to BASE"
    for command, sub in subparsers.choices.items():
        if command == "fetch-data":
            continue  # its own parsers (gpude.cecdata.fetch, gpude.problems.instances): FETCH_CASES below
        base = [command, *BASE[command]]
        cases.append((f"{command} unknown option", base + ["--no-such-option"], ("--no-such-option",)))
        for action in sub._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            dest, names = action.dest, (*action.option_strings, action.dest, action.dest.replace("_", "-"))
            label = f"{command} {action.option_strings[0] if action.option_strings else dest}"
            if action.required and action.option_strings:
                cases.append((f"{label} left out", _without(base, action), names))
            if action.nargs == 0:  # a flag (store_true): it takes no value
                cases.append((f"{label} given a value", base + [f"{action.option_strings[0]}=yes"], names))
                continue
            values = []
            if action.choices is not None:
                values.append("nope")
            if (command, dest) in INPUT_FILES:
                for what, value in bad_files(INPUT_FILES[(command, dest)]):
                    cases.append((f"{label} {what}", _replace(base, action, value), (*names, value)))
            elif dest in OUTPUTS:
                kind = "folder" if (command, dest) in OUTPUT_FOLDERS else OUTPUTS[dest]
                value = "a_file" if kind == "folder" else "a_folder"  # the wrong kind of thing
                cases.append((f"{label} is a {'file' if kind == 'folder' else 'folder'}",
                              _replace(base, action, value), (*names, value)))
            if action.type is not None and action.choices is None:
                values += ["abc", "-1"]
            if (command, dest) not in NO_BAD_VALUE:
                values += [v for v in BAD_VALUES.get(dest, []) if v not in values]
            if not values and (command, dest) not in INPUT_FILES and dest not in OUTPUTS:
                assert (command, dest) in NO_BAD_VALUE, f"{label}: no bad value; add one to BAD_VALUES or a reason"
            for value in values:
                cases.append((f"{label} {value!r}", _replace(base, action, value), (*names, value)))
    return cases


# `gpude fetch-data`: its own parsers, never a download (a --wheel or --from is always given) and never
# the repository's data folders (--dest and GPUDE_INSTANCE_DATA point into the case's folder); its
# failures exit 1 (gpude.cecdata.fetch.main's documented status), its usage errors 2
FETCH_CASES = [
    ("fetch-data unknown option", ["fetch-data", "--no-such-option"], ("--no-such-option",)),
    ("fetch-data --wheel missing", ["fetch-data", "--dest", "cec", "--wheel", "no_such.whl"], ("no_such.whl",)),
    ("fetch-data --wheel empty", ["fetch-data", "--dest", "cec", "--wheel", "empty"], ("empty",)),
    ("fetch-data --wheel truncated", ["fetch-data", "--dest", "cec", "--wheel", "truncated.csv"], ("truncated.csv",)),
    ("fetch-data --wheel a folder", ["fetch-data", "--dest", "cec", "--wheel", "a_folder"], ("a_folder",)),
    ("fetch-data --dest a file", ["fetch-data", "--dest", "a_file", "--wheel", "empty"], ("a_file", "empty")),
    ("fetch-data --force=yes", ["fetch-data", "--force=yes"], ("--force",)),
    ("fetch-data lolib unknown option", ["fetch-data", "lolib", "--no-such-option"], ("--no-such-option",)),
    ("fetch-data lolib --from missing", ["fetch-data", "lolib", "--from", "no_such_folder"], ("no_such_folder",)),
    ("fetch-data etc --from a file", ["fetch-data", "etc", "--from", "a_file"], ("a_file",)),
    ("fetch-data etc --from empty folder", ["fetch-data", "etc", "--from", "a_folder"], ("a_folder",)),
]

CASES = generate_cases() + FETCH_CASES


def _listing(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


@pytest.mark.parametrize("label,argv,names", CASES,
                         ids=[f"{k}/{len(CASES)} {label}" for k, (label, _, _) in enumerate(CASES, 1)])
def test_bad_value_gives_one_line_and_status_2(label, argv, names, tmp_path, monkeypatch, capsys):
    make_files(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GPUDE_INSTANCE_DATA", str(tmp_path / "instances"))
    monkeypatch.delenv("GPUDE_DEBUG", raising=False)
    before = _listing(tmp_path)
    try:
        status = cli.main(argv)
    except SystemExit as exc:
        status = exc.code
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    fetch_failure = argv[:1] == ["fetch-data"] and "--no-such-option" not in argv and "--force=yes" not in argv
    assert status == (1 if fetch_failure else 2), (status, err)
    assert "Traceback" not in err + out and len(lines) == 1, err
    assert "internal error" not in err, err  # main()'s net for the unforeseen: a case the CLI should say
    assert any(name and name in lines[0] for name in names), (names, err)
    left = {p for p in _listing(tmp_path) - before if not p.startswith("warmup-locks")}
    assert left == set(), left  # nothing written, whole or half


def test_the_battery_tries_every_option_of_every_command():
    parser = cli.build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    tried = {(label.split()[0], label.split()[1]) for label, _, _ in CASES if len(label.split()) > 1}
    for command, sub in subparsers.choices.items():
        for action in sub._actions:
            if isinstance(action, argparse._HelpAction) or command == "fetch-data":
                continue
            name = action.option_strings[0] if action.option_strings else action.dest
            assert (command, name) in tried or (command, action.dest) in NO_BAD_VALUE, (command, name)
    print(f"\ncli battery: {len(CASES)} cases over {len(subparsers.choices)} commands")
    assert len(CASES) > 150


@pytest.mark.io
def test_a_gzipped_table_is_read_not_refused_as_truncated(tmp_path):
    # the large committed references are trials.csv.gz (the workflow hands them to `gpude paper`)
    import gzip

    import pandas as pd

    table = tmp_path / "trials.csv.gz"
    with gzip.open(table, "wt") as fh:
        pd.DataFrame({"run_id": ["a/b/F01/d10/np8/float64/t0"], "best_error": [1.5]}).to_csv(fh, index=False)
    cli._check_inputs(argparse.Namespace(command="stats", trials=str(table)))  # no GpudeError
    truncated = tmp_path / "trials.csv"
    truncated.write_text("run_id,best_error\nx,1.")
    with pytest.raises(cli.GpudeError, match="ends mid-line"):
        cli._check_inputs(argparse.Namespace(command="stats", trials=str(truncated)))
