"""`gpude run` as a new user types it (issue 39): --param never duplicates a flag, --trials is
positive, and a run without --out-csv/--out-traces prints its trials and a summary and writes nothing.
In this process (gpude.cli.main), like tests/test_cli_battery.py."""

from __future__ import annotations

import pytest

from gpude import cli
from gpude.run.spec import RunSpec

RUN = ["run", "--implementation", "sequential", "--function", "F01", "--dim", "10", "--popsize", "10",
       "--max-fes", "100"]


def call(argv, capsys):
    try:
        status = cli.main(argv)
    except SystemExit as exc:
        status = exc.code
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return status, out, err


@pytest.mark.parametrize("param,flag", [("CR=0.5", "--CR 0.5"), ("F=0.7", "--F 0.7"), ("bounds=clip", "--bounds clip"),
                                        ("max_time_s=2", "--max-time-s 2"),
                                        ("trials-per-launch=2", "--trials-per-launch 2")])
def test_param_that_is_a_flag_is_refused_naming_the_flag(param, flag, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    status, out, err = call(RUN + ["--param", param, "--out-csv", "o.csv", "--out-traces", "o.npz"], capsys)
    assert status == 2 and len(err.strip().splitlines()) == 1, err
    assert f"give {flag} instead" in err and "gpude run: error: --param" in err, err
    assert list(tmp_path.iterdir()) == []


def test_param_values_are_numbers_booleans_or_text():
    # a boolean option (masw/gpu's ls_dual, say) reaches the implementation as a bool, as the workflow
    # writes an experiment file's `true` (Python's True) and as a user types it
    args = cli.build_parser().parse_args(RUN + ["--param", "a=true", "--param", "b=False", "--param", "c=3",
                                                "--param", "d=0.5", "--param", "e=exp"])
    assert RunSpec.from_namespace(args).options() == {"a": True, "b": False, "c": 3, "d": 0.5, "e": "exp"}


def test_param_help_says_which_flags_it_refuses():
    run = next(a for a in cli.build_parser()._actions if a.dest == "command").choices["run"]
    text = " ".join(next(a for a in run._actions if a.dest == "param").help.split())
    assert all(flag in text for flag in ("--F,", "--CR,", "--bounds", "--trials-per-launch")) and "refused" in text


@pytest.mark.parametrize("trials", ["0", "-1"])
def test_trials_must_be_positive(trials, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    status, out, err = call(RUN + ["--trials", trials], capsys)
    assert status == 2 and len(err.strip().splitlines()) == 1, err
    assert f"argument --trials: takes an integer >= 1, got '{trials}'" in err, err


def test_run_without_outputs_prints_the_trials_and_a_summary_and_writes_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    status, out, err = call(RUN + ["--trials", "2"], capsys)
    assert status == 0, err
    lines = err.strip().splitlines()
    assert [line.startswith(f"[{k}/2] trial {k - 1} seed ") and " best " in line and " fes " in line
            for k in (1, 2) for line in lines if line.startswith(f"[{k}/2]")] == [True, True], err
    summary = lines[-1]
    assert summary.startswith("sequential F01 D=10 NP=10: 2/2 trials, best error "), summary
    assert "), FEs " in summary and "s in all (nothing written" in summary, summary
    assert list(tmp_path.iterdir()) == []


def test_out_csv_and_out_traces_go_together(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    status, out, err = call(RUN + ["--out-csv", "o.csv"], capsys)
    assert status == 2 and "--out-csv and --out-traces go together" in err and len(err.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def test_readme_first_run_example_needs_no_output_flags():
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    first = next(line for line in readme.splitlines() if line.strip().startswith("gpude run "))
    assert "--out-csv" not in first and "writes nothing" in readme.split(first, 1)[1][:400]


def test_target_minus_inf_still_means_no_target():
    # the workflow's `--target=-inf` (an experiment without a target): a number the type takes
    args = cli.build_parser().parse_args(RUN[:1] + ["--target=-inf"] + RUN[1:])
    assert args.target == float("-inf") and args.out_csv is None and args.trials == 1
