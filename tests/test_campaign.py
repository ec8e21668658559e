"""gpude.campaign (`python -m gpude.campaign`): a reference made, completed and re-made over several time-limited calls.

A tiny experiment (de/sequential on the sphere, D = 2) runs for real through the rule's own `gpude
run` command line; the checks are on what a campaign must guarantee: the workflow's seeds, resuming
without re-running, more trials per function, stale rows (other parameters, shared timing) re-made
and replaced, rows that count never replaced, and nothing started that cannot end in time."""

import json
import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from gpude import campaign
from gpude.campaign import fill_reference
from gpude.core.errors import GpudeError
from gpude.core.rng import trial_seed
from gpude.problems import instances

ROOT = Path(__file__).resolve().parents[1]

TINY = {"name": "tiny", "seed": 7, "trials": 2, "trials_per_job": 2, "target": 0, "max_fes": 60,
        "algorithms": {"de": {"implementations": ["sequential"], "popsizes": [6], "F": 0.5, "CR": 0.9}},
        "functions": ["N01", "N09"], "dims": [2], "dtypes": ["float64"], "timing": "exclusive"}


def _experiment(tmp_path, **changes):
    spec = {**TINY, **changes}
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def _call(action, tmp_path, experiment, *extra):
    return campaign.main([action, "--experiment", str(experiment), "--reference", str(tmp_path / "ref"),
                          "--out", str(tmp_path / "out"), "--root", str(ROOT), "--default-run-s", "2", *extra])


def test_a_reference_made_resumed_extended_and_remade(tmp_path, capsys, monkeypatch):
    # the rule's command line calls `python3 -m gpude`: this interpreter's
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    experiment = _experiment(tmp_path)
    # nothing fits in no time: the call ends cleanly with everything left for the next
    assert _call("run", tmp_path, experiment, "--max-seconds", "0") == 0
    assert "0 process(es) ran" in capsys.readouterr().out and not (tmp_path / "out").exists()
    # N09 gets 3 trials (--trials), N01 the experiment's 2; one process per cell
    assert _call("run", tmp_path, experiment, "--trials", "N09=3", "--max-seconds", "300") == 0
    assert "2 process(es) ran" in capsys.readouterr().out
    # a second call runs nothing again
    assert _call("run", tmp_path, experiment, "--trials", "N09=3") == 0
    assert "0 to run (0 of them stale in the reference, 5 done in" in capsys.readouterr().out
    assert _call("merge", tmp_path, experiment, "--trials", "N09=3") == 0
    ref = pd.read_csv(tmp_path / "ref" / "trials.csv")
    assert sorted(zip(ref["function"], ref["trial"])) == [("N01", 0), ("N01", 1), ("N09", 0), ("N09", 1), ("N09", 2)]
    assert [int(s) for s in ref["seed"]] == [trial_seed(7, f, 2, 6, int(t))
                                             for f, t in zip(ref["function"], ref["trial"])]
    campaigns = (tmp_path / "ref" / "CAMPAIGNS.md").read_text()
    assert "| de/sequential | N09 | 2 | 6 | float64 | 3 | 1: 3 | exclusive |" in campaigns
    # the same files merged twice (a warm host sends its folder back): the rows are there, nothing to do
    before = (tmp_path / "ref" / "trials.csv").read_text()
    assert _call("merge", tmp_path, experiment, "--trials", "N09=3") == 1
    assert "in the reference already" in capsys.readouterr().err
    assert (tmp_path / "ref" / "trials.csv").read_text() == before
    # a file that makes a counting row again (another run of it) would replace it: refused, nothing written
    batch = next((tmp_path / "out").rglob("t0-2.csv"))
    again = pd.read_csv(batch).assign(timestamp_utc="2099-01-01T00:00:00")
    again.to_csv(batch, index=False)
    assert _call("merge", tmp_path, experiment, "--trials", "N09=3") == 1
    assert "counts as it is" in capsys.readouterr().err
    assert (tmp_path / "ref" / "trials.csv").read_text() == before
    batch.unlink()
    batch.with_suffix(".npz").unlink()

    # the experiment changes CR: every row is stale, the campaign re-makes and replaces them all
    changed = _experiment(tmp_path, algorithms={"de": {**TINY["algorithms"]["de"], "CR": 0.1}})
    assert _call("plan", tmp_path, changed, "--trials", "N09=3") == 0
    assert "5 to run (5 of them stale in the reference" in capsys.readouterr().out
    # (the campaign folder's files of CR 0.9 no longer count: they are made again, not merged)
    assert _call("run", tmp_path, changed, "--trials", "N09=3") == 0
    assert _call("merge", tmp_path, changed, "--trials", "N09=3") == 0
    remade = pd.read_csv(tmp_path / "ref" / "trials.csv")
    assert len(remade) == 5 and {json.loads(p)["CR"] for p in remade["params"]} == {0.1}
    assert "0 trial(s) still to run" in capsys.readouterr().out


def test_where_cells_ran_names_a_column_an_older_row_lacks_as_unrecorded():
    """An older reference's rows lack ``boot_id`` (read back as missing, not as text): CAMPAIGNS.md says
    "unrecorded" for them beside the new rows' instance, and is written from a table mixing both."""
    row = {"algorithm": "de", "implementation": "sequential", "function": "N01", "dim": 2, "popsize": 6,
           "dtype": "float64", "params": json.dumps({"CR": 0.9}), "concurrency": "exclusive", "gpu": "none",
           "cpu": "Xeon", "cpu_cores": 16, "git_commit": "abc", "timestamp_utc": "2026-11-28T20:00:00"}
    table = pd.DataFrame([row, {**row, "boot_id": "boot-1", "git_commit": "def"}])
    table.loc[0, "boot_id"] = np.nan
    text = campaign.campaigns_markdown(table, {"name": "tiny"})
    assert "| 2 | 1: 2 | exclusive | none | Xeon x16 | boot-1, unrecorded | abc, def |" in text


def test_stale_reasons():
    cell = campaign.Cell("de", "sequential", "N01", 2, 6, "float64", 2, per_launch=1, timing="exclusive")
    row = {"params": json.dumps({"F": 0.5, "CR": 0.9, "bounds": "resample"}), "max_fes": 60, "max_time_s": None,
           "concurrency": "exclusive", "status": "ok"}
    assert campaign.stale_reason(row, TINY, cell) is None
    assert campaign.stale_reason({**row, "concurrency": "exclusive-gpu:2"}, TINY, cell) is None
    assert "timed shared" in campaign.stale_reason({**row, "concurrency": "shared"}, TINY, cell)
    assert "CR 0.1" in campaign.stale_reason({**row, "params": json.dumps({"F": 0.5, "CR": 0.1})}, TINY, cell)
    assert "max_fes 90" in campaign.stale_reason({**row, "max_fes": 90}, TINY, cell)
    assert campaign.stale_reason({**row, "status": "error: x"}, TINY, cell) == "failed"
    shared = campaign.Cell("de", "sequential", "N01", 2, 6, "float64", 2, per_launch=1, timing="shared")
    assert campaign.stale_reason({**row, "concurrency": "shared"}, TINY, shared) is None


def test_a_reference_is_completed_on_the_machine_of_its_newest_gpu_rows():
    # the REPORT times one machine (GPU, CPU, cores): a GPU row made on another host is stale
    cell = campaign.Cell("masw", "gpu", "L01", 100, 6, "float64", 2, per_launch=1, timing="exclusive")
    experiment = {"algorithms": {"masw": {"implementations": ["gpu"]}}, "max_fes": 60}
    row = lambda cores, stamp: {"params": "{}", "max_fes": 60, "concurrency": "exclusive", "status": "ok",  # noqa: E731
                                "gpu": "NVIDIA H200", "cpu": "Xeon", "cpu_cores": cores, "timestamp_utc": stamp}
    reference = pd.DataFrame([row(16, "2026-11-22T23:00"), row(32, "2026-11-26T02:30"), row(16, "2026-11-23T00:00")])
    machine = campaign.reference_machine(reference)
    assert machine == "NVIDIA H200 / Xeon x32"
    assert "made on NVIDIA H200 / Xeon x16" in campaign.stale_reason(row(16, "x"), experiment, cell, machine)
    assert campaign.stale_reason(row(32, "x"), experiment, cell, machine) is None
    assert campaign.stale_reason(row(16, "x"), experiment, cell) is None  # no machine given: not checked
    cpu_row = {**row(16, "x"), "gpu": "none"}  # a CPU implementation's row: its GPU is not asked
    assert campaign.stale_reason(cpu_row, experiment, cell, machine) is None
    assert campaign.reference_machine(reference.assign(gpu="none")) is None
    # a row made several per launch counts from any host of the same GPU (its time is not used), and
    # the reference's machine is that of its newest row made one per launch
    batched = lambda cores, stamp, gpu="NVIDIA H200": {  # noqa: E731
        **row(cores, stamp), "gpu": gpu, "params": json.dumps({"trials_per_launch": 10})}
    assert campaign.stale_reason(batched(64, "x"), experiment, cell, machine) is None
    # ... and of any GPU: its result is the same bits there (its distance summed correctly rounded)
    assert campaign.stale_reason(batched(64, "x", "NVIDIA H100"), experiment, cell, machine) is None
    assert "made on NVIDIA H100" in campaign.stale_reason({**row(32, "x"), "gpu": "NVIDIA H100"}, experiment, cell,
                                                          machine)
    newer = pd.concat([reference, pd.DataFrame([batched(64, "2026-11-27T00:00")])], ignore_index=True)
    assert campaign.reference_machine(newer) == "NVIDIA H200 / Xeon x32"


def test_another_host_makes_only_the_batched_runs(tmp_path, monkeypatch, capsys):
    """Another host of the reference's GPU (e.g. four H200s beside 64 cores for a reference of two
    beside 32), or of another GPU, makes the runs made several per launch and leaves those made one
    per launch (timed) to the reference's machine."""
    from gpude.campaign import cli

    experiment = _experiment(tmp_path, trials=4, algorithms={"de": {"implementations": ["all_gpu"], "popsizes": [6],
                                                                    "F": 0.5, "CR": 0.9}})
    (tmp_path / "ref").mkdir()
    pd.DataFrame([{"run_id": "x", "algorithm": "de", "implementation": "all_gpu", "function": "N01", "dim": 2,
                   "popsize": 6, "dtype": "float64", "trial": 0, "params": "{}", "max_fes": 60, "max_time_s": None,
                   "concurrency": "exclusive", "status": "ok", "wall_time_s": 1.0, "gpu": "NVIDIA H200",
                   "cpu": "Xeon", "cpu_cores": 32, "timestamp_utc": "2026-11-26T10:00:00Z"}]).to_csv(
        tmp_path / "ref" / "trials.csv", index=False)
    planned = []
    monkeypatch.setattr(cli, "run_groups", lambda experiment, plan, *a, **k: planned.extend(plan) or
                        {"ran": len(plan), "failed": 0, "skipped_time": 0, "interrupted": 0})
    monkeypatch.setattr(cli, "check_machine", lambda reference, cells: None)
    monkeypatch.setattr(cli, "host_machine", lambda: "NVIDIA H200 / Xeon x64")
    assert _call("run", tmp_path, experiment, "--alone", "1", "--per-launch", "3") == 0
    out = capsys.readouterr().out
    assert "it makes only the runs made several per launch" in out and "left for the reference's machine" in out
    assert planned and all(g.per_launch == 3 for g in planned)
    assert sorted((g.cell.function, g.first, g.count) for g in planned) == [("N01", 1, 3), ("N09", 1, 3)]
    planned.clear()
    monkeypatch.setattr(cli, "host_machine", lambda: "NVIDIA H100 / Xeon x64")
    assert _call("run", tmp_path, experiment, "--alone", "1", "--per-launch", "3") == 0
    out = capsys.readouterr().out
    assert "has another GPU than the reference's (NVIDIA H200)" in out and "left for the reference's machine" in out
    assert sorted((g.cell.function, g.first, g.count) for g in planned) == [("N01", 1, 3), ("N09", 1, 3)]


def test_groups_projections_and_the_command_line():
    experiment = {**fill_reference.DEFAULTS, **TINY}
    cells = campaign.grid(experiment, trials_by_function=campaign.parse_trials("N0*=4"))
    assert [(c.function, c.trials) for c in cells] == [("N01", 4), ("N09", 4)]
    ref = pd.DataFrame([{"algorithm": "de", "implementation": "sequential", "function": "N01", "dim": 2, "popsize": 6,
                         "dtype": "float64", "concurrency": "exclusive", "status": "ok", "wall_time_s": w}
                        for w in (1.0, 3.0)])
    expected = campaign.projections(experiment, cells, [ref], default_s=99.0)
    assert expected[cells[0].key()] == 2.0  # the cell's median
    assert expected[cells[1].key()] == 2.0  # N09 at D = 2: any function's median at that D
    work = [(cells[0], [0, 1, 3], {}), (cells[1], [0, 1, 2, 3], {})]
    plan = campaign.groups(work, expected, group=3)
    assert [(g.cell.function, g.first, g.count) for g in plan] == [("N01", 0, 2), ("N01", 3, 1), ("N09", 0, 3),
                                                                   ("N09", 3, 1)]
    cmd = fill_reference.gpude_command(experiment, cells[0], 3, 1, "out/x", "out/x.log")
    assert "--seed 7 --first-trial 3 --trials 1" in cmd and "--concurrency exclusive" in cmd
    assert "--CR 0.9" in cmd and cmd.endswith("--out-csv out/x.csv --out-traces out/x.npz > out/x.log 2>&1")
    with pytest.raises(GpudeError, match="PATTERN=N"):
        campaign.parse_trials("L06:20")


def test_the_command_line_parses_without_a_target_and_names_an_outside_programs_spec():
    """The campaign writes its lines with the RunSpec, as the workflow does: "no target" as
    ``--target=-inf`` (argparse refuses ``--target -inf``), and an outside program's batch with the
    experiment's file and --keep-failed."""
    import shlex

    from gpude.cli import build_parser

    experiment = {**fill_reference.DEFAULTS, **TINY, "target": float("-inf")}
    cell = campaign.grid(experiment)[0]
    cmd = fill_reference.gpude_command(experiment, cell, 0, 2, "out/x", "out/x.log")
    assert "--target=-inf " in cmd
    args = build_parser().parse_args(shlex.split(cmd.split(" > ")[0])[3:])  # after `python3 -m gpude`
    assert args.target == float("-inf") and args.first_trial == 0 and args.trials == 2
    outside = {**experiment, "programs": {"sequential": {}}}
    with pytest.raises(GpudeError, match="--programs"):
        fill_reference.gpude_command(outside, cell, 0, 2, "out/x", "out/x.log")
    cmd = fill_reference.gpude_command(outside, cell, 0, 2, "out/x", "out/x.log", experiment_file="my exp.yaml")
    assert "--programs 'my exp.yaml'" in cmd and "--keep-failed" in cmd
    assert build_parser().parse_args(shlex.split(cmd.split(" > ")[0])[3:]).keep_failed


def test_a_function_without_rows_at_a_d_is_projected_by_its_ratio_to_its_peers():
    # time need not be linear in D (Lastra's MA-SW-Chains: a fixed part dominates): A, twice as slow as
    # B and C at D = 1e5, is expected at twice their 3e6 median, not 30x its own 1e5 time
    experiment = {"algorithms": {"masw": {"implementations": ["gpu"]}}, "max_fes": 60}
    row = lambda f, d, w, popsize=6: {  # noqa: E731
        "algorithm": "masw", "implementation": "gpu", "function": f, "dim": d, "popsize": popsize,
        "dtype": "float64", "concurrency": "exclusive", "status": "ok", "wall_time_s": w}
    table = pd.DataFrame([row("A", 100_000, 20.0), row("B", 100_000, 10.0), row("C", 100_000, 10.0),
                          row("B", 3_000_000, 40.0), row("C", 3_000_000, 40.0),
                          # another popsize: no peers of A's (else its peers' 1e5 median would be 505)
                          row("Y", 100_000, 1000.0, popsize=60), row("Z", 100_000, 1000.0, popsize=60)])
    cell = lambda f, d: campaign.Cell("masw", "gpu", f, d, 6, "float64", 2, timing="exclusive")  # noqa: E731
    cells = [cell("A", 3_000_000), cell("A", 5_000_000), cell("A", 100_000), cell("D", 3_000_000),
             cell("E", 7)]
    expected = campaign.projections(experiment, cells, [table], default_s=99.0)
    assert expected[cells[0].key()] == pytest.approx(80.0)  # 40 x 20 / 10, not 20 x 30 = 600
    assert expected[cells[1].key()] == pytest.approx(1000.0)  # no peer at 5e6: A's 1e5 scaled linearly
    assert expected[cells[2].key()] == 20.0  # its own rows
    assert expected[cells[3].key()] == 40.0  # no rows of its own: the other functions' median at 3e6
    assert expected[cells[4].key()] == 99.0  # nothing to go by


def test_alone_trials_go_one_per_launch_first_and_the_rest_in_batches():
    # --alone 3 --per-launch 4: trials 0-2 of every cell one per launch (timed), before any batch;
    # the others 4 per launch, expected at the measured share of a batched trial's time
    experiment = {**fill_reference.DEFAULTS, **TINY}
    cells = campaign.grid(experiment, trials_by_function=campaign.parse_trials("N09=12"), alone=3, per_launch=4)
    assert [(c.function, c.trials, c.alone, c.per_launch) for c in cells] == [("N01", 2, 3, 4), ("N09", 12, 3, 4)]
    assert [cells[1].launch_size(t) for t in (0, 2, 3, 11)] == [1, 1, 4, 4]
    row = lambda size, trial, wall: {  # noqa: E731
        "algorithm": "de", "implementation": "sequential", "function": "N09", "dim": 2, "popsize": 6,
        "dtype": "float64", "concurrency": "exclusive-gpu:2", "status": "ok", "wall_time_s": wall, "trial": trial,
        "params": json.dumps({"F": 0.5, "CR": 0.9, "trials_per_launch": size} if size > 1 else {"F": 0.5, "CR": 0.9})}
    table = pd.DataFrame([row(1, 0, 10.0), row(1, 1, 12.0), row(4, 3, 4.0), row(4, 4, 5.0),
                          {**row(1, 0, 10.0), "function": "N01"}, {**row(4, 3, 9.0), "function": "N01"}])
    share = campaign.batch_share([table])
    # per cell where it has both (N09 4.5 / 11, N01 9 / 10), per D the cells' median
    assert share[cells[1].key()] == pytest.approx(4.5 / 11.0) and share[cells[0].key()] == pytest.approx(0.9)
    assert share[2] == pytest.approx((4.5 / 11.0 + 0.9) / 2) and share[None] == share[2]
    expected = campaign.projections(experiment, cells, [table], default_s=99.0)
    assert expected[cells[1].key()] == 11.0  # the runs alone only: a batched row's time is a share
    work = [(cells[0], [0, 1], {}), (cells[1], [2, 5, 6, 7, 8, 9, 10, 11], {})]
    plan = campaign.groups(work, expected, group=5, share=share)
    assert [(g.cell.function, g.first, g.count, g.per_launch) for g in plan] == [
        ("N01", 0, 2, 1), ("N09", 2, 1, 1), ("N09", 5, 4, 4), ("N09", 9, 3, 4)]
    assert plan[2].expected_s == pytest.approx(4 * 11.0 * 4.5 / 11.0)  # the cell's own share, not the D's
    cmd = fill_reference.gpude_command(experiment, cells[1], 5, 4, "o/x", "o/x.log", per_launch=plan[2].per_launch)
    assert "--trials-per-launch 4" in cmd and "--first-trial 5 --trials 4" in cmd
    assert "--trials-per-launch" not in fill_reference.gpude_command(experiment, cells[1], 2, 1, "o/x", "o/x.log",
                                                                     per_launch=1)
    # a trial below --alone made in a batch is stale (its time is a share); from --alone on it counts
    made = {**row(4, 1, 5.0), "max_fes": 60, "max_time_s": None}
    assert "made 4 per launch" in campaign.stale_reason(made, experiment, cells[1])
    assert campaign.stale_reason({**made, "trial": 3}, experiment, cells[1]) is None
    # no --alone: any batch counts
    plain = campaign.grid(experiment, trials_by_function=campaign.parse_trials("N09=12"))[1]
    assert campaign.stale_reason(made, experiment, plain) is None
    assert campaign.batch_share([]) == {None: 1.0}
    assert [c.function for c in campaign.grid(experiment, functions=["N0?"])] == ["N01", "N09"]
    assert [c.function for c in campaign.grid(experiment, functions=["N09", "X*"])] == ["N09"]


def test_alone_needs_a_batch_size(tmp_path, capsys):
    experiment = _experiment(tmp_path)
    assert _call("plan", tmp_path, experiment, "--alone", "3") == 1
    assert "--alone K needs --per-launch B > 1" in capsys.readouterr().err
    assert _call("plan", tmp_path, experiment, "--alone", "-1", "--per-launch", "4") == 1
    assert "--alone takes a count >= 0" in capsys.readouterr().err
    assert _call("plan", tmp_path, experiment, "--functions", "L0*") == 1
    assert "no cell of the experiment matches --functions L0*" in capsys.readouterr().err


def test_a_missing_file_is_one_line_not_a_traceback(tmp_path, capsys):
    assert _call("plan", tmp_path, tmp_path / "nope.yaml") == 1
    err = capsys.readouterr().err
    assert err.startswith("campaign: --experiment") and "nope.yaml" in err and len(err.splitlines()) == 1
    assert fill_reference.main(["missing", "--experiment", str(_experiment(tmp_path)), "--reference",
                                str(tmp_path / "none")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("fill_reference:") and "trials.csv" in err and len(err.splitlines()) == 1


def test_set_overrides_a_parameter_and_names_a_bad_one(tmp_path):
    path = _experiment(tmp_path)
    experiment = campaign.load_experiment(path, ["de.CR=0.01", "de.F=0.7"])
    assert experiment["algorithms"]["de"]["CR"] == 0.01 and experiment["algorithms"]["de"]["F"] == 0.7
    cell = campaign.grid(experiment)[0]
    row = {"params": json.dumps({"F": 0.5, "CR": 0.9}), "max_fes": 60, "concurrency": "exclusive", "status": "ok"}
    assert "CR 0.9 (experiment: 0.01)" in campaign.stale_reason(row, experiment, cell)
    for bad in ("CR=0.01", "pso.w=0.5", "de.popsizes=[4]", "de.CR="):
        with pytest.raises(GpudeError, match="ALGORITHM.KEY=VALUE"):
            campaign.load_experiment(path, [bad])


#: where `gpude fetch-data` puts the instance files (data/, or $GPUDE_INSTANCE_DATA when that is set)
INSTANCES = instances.data_dir("lolib").parent


@pytest.mark.skipif(not ((INSTANCES / "lolib" / "LOLIB" / "be75eec").is_file()
                         and (INSTANCES / "etc" / "u_i_hihi.0").is_file()),
                    reason="needs the instance files: gpude fetch-data lolib; gpude fetch-data etc "
                           "(or GPUDE_INSTANCE_DATA=DIR)")
def test_pack_carries_the_experiments_instance_files_and_run_finds_them(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("GPUDE_INSTANCE_DATA", str(INSTANCES))
    experiment = _experiment(tmp_path, functions=["ThMhCi", "be75eec"], dims=["instance"], max_fes=40, trials=1,
                             timing="shared",
                             algorithms={"de": {"implementations": ["sequential"], "popsizes": [4], "F": 0.5,
                                                "CR": 0.1}})
    archive = tmp_path / "instances.tgz"
    assert _call("pack", tmp_path, experiment, "--archive", str(archive)) == 0
    import tarfile

    with tarfile.open(archive) as tar:
        assert sorted(tar.getnames()) == ["etc/u_i_hihi.0", "lolib/LOLIB/be75eec"]
    # the host has no instance files but the archive
    monkeypatch.setenv("GPUDE_INSTANCE_DATA", str(tmp_path / "empty"))
    assert _call("run", tmp_path, experiment, "--instance-data", str(archive), "--jobs", "2") == 0
    assert "2 process(es) ran, 0 failed" in capsys.readouterr().out
    assert _call("merge", tmp_path, experiment) == 0
    rows = pd.read_csv(tmp_path / "ref" / "trials.csv")
    assert sorted(rows["function"]) == ["ThMhCi", "be75eec"]
    assert set(rows["concurrency"]) == {"shared:2"}  # shared-timed rows say how many ran side by side


def test_exclusive_gpu_runs_go_one_per_gpu_and_say_so(tmp_path, monkeypatch, capsys):
    """--gpus 2: the exclusive GPU processes run two at a time (each leases a GPU of its own; on the
    simulator's one device the second waits for the first's lease) and their rows say exclusive-gpu:2,
    which counts as exclusive."""
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    experiment = _experiment(tmp_path, trials=1, max_fes=24,
                             algorithms={"de": {"implementations": ["all_gpu"], "popsizes": [6], "F": 0.5, "CR": 0.9}})
    assert _call("run", tmp_path, experiment, "--gpus", "2") == 0
    assert "2 process(es) ran, 0 failed" in capsys.readouterr().out
    assert _call("merge", tmp_path, experiment) == 0
    rows = pd.read_csv(tmp_path / "ref" / "trials.csv")
    assert list(rows["concurrency"]) == ["exclusive-gpu:2"] * 2
    assert _call("plan", tmp_path, experiment) == 0 and "0 to run" in capsys.readouterr().out


def test_an_interrupt_stops_the_running_processes_and_keeps_what_ran(tmp_path, monkeypatch, capsys):
    """The host script's backstop (`timeout -s INT`) interrupts a call whose projection was short: the
    campaign stops the processes still running (a process group each), reports them in one line, and
    returns what ran; no traceback."""
    from gpude.campaign import run as run_module

    experiment = {**fill_reference.DEFAULTS, **TINY}
    cells = campaign.grid(experiment)
    plan = campaign.groups([(c, [0, 1], {}) for c in cells], {c.key(): 1.0 for c in cells}, group=2)
    started = []
    monkeypatch.setattr(run_module, "gpude_command", lambda *a, **k: "sleep 60")
    monkeypatch.setattr(run_module, "runs_on_gpu", lambda cell: False)
    real_popen = run_module.subprocess.Popen

    def popen(*args, **kwargs):
        started.append(real_popen(*args, **kwargs))
        return started[-1]

    def sleep(_):
        raise KeyboardInterrupt  # the interrupt arrives while the first process runs

    monkeypatch.setattr(run_module.subprocess, "Popen", popen)
    monkeypatch.setattr(run_module.time, "sleep", sleep)
    stats = run_module.run(experiment, plan, tmp_path / "out", max_seconds=100, jobs=1, setup_s=0)
    assert stats == {"ran": 0, "failed": 0, "skipped_time": 0, "interrupted": 1}
    assert len(started) == 1 and started[0].poll() is not None  # stopped, not left running
    err = capsys.readouterr().err
    assert "interrupted: de/sequential N01" in err and "Traceback" not in err


def test_a_shared_cells_first_trials_are_timed_in_lanes(tmp_path, monkeypatch, capsys):
    """--alone K --alone-lanes L: a shared cell's trials 0..K-1 run first, L at a time with nothing
    beside them (rows exclusive-cpu:L), the rest shared; a trial below K timed shared is stale."""
    from gpude.campaign import run as run_module

    experiment = _experiment(tmp_path, trials=4, timing={"default": "shared"})
    cells = campaign.grid(campaign.load_experiment(experiment), alone=2, alone_lanes=3)
    assert cells and all(c.in_lane(0) and c.in_lane(1) and not c.in_lane(2) for c in cells)
    assert not any(c.in_lane(0) for c in campaign.grid(campaign.load_experiment(experiment), alone=2))
    shared_row = {"params": json.dumps({"CR": 0.9, "F": 0.5}), "max_fes": 60, "concurrency": "shared:15",
                  "status": "ok", "trial": 1}
    assert "timed shared:15 (trials below 2" in campaign.stale_reason(shared_row, campaign.load_experiment(experiment),
                                                                       cells[0])
    lane_row = {**shared_row, "concurrency": "exclusive-cpu:3"}
    assert campaign.stale_reason(lane_row, campaign.load_experiment(experiment), cells[0]) is None
    assert campaign.stale_reason({**shared_row, "trial": 2}, campaign.load_experiment(experiment), cells[0]) is None
    started = []
    monkeypatch.setattr(run_module, "gpude_command", lambda experiment, cell, first, count, stem, log, concurrency,
                        *a: started.append((cell.function, first, count, concurrency)) or "true")
    assert _call("run", tmp_path, experiment, "--alone", "2", "--alone-lanes", "3", "--jobs", "2", "--group", "1",
                 "--dry-run") == 0
    lanes = [s for s in started if s[3] == "exclusive-cpu:3"]
    assert sorted((f, first) for f, first, _, _ in lanes) == [("N01", 0), ("N01", 1), ("N09", 0), ("N09", 1)]
    assert started[:4] == lanes and all(s[3] == "shared:2" for s in started[4:]) and len(started) == 8
    started.clear()  # --phases shared: a host of many cores makes the untimed trials, leaving the lanes
    assert _call("run", tmp_path, experiment, "--alone", "2", "--alone-lanes", "3", "--jobs", "2", "--group", "1",
                 "--phases", "shared", "--dry-run") == 0
    assert sorted((f, first) for f, first, _, _ in started) == [("N01", 2), ("N01", 3), ("N09", 2), ("N09", 3)]
    assert _call("run", tmp_path, experiment, "--phases", "shared,lane") == 1
    assert "--phases takes some of lanes,shared,gpu,cpu (comma-separated), not lane" in capsys.readouterr().err
    assert _call("run", tmp_path, experiment, "--alone-lanes", "3") == 1
    assert "--alone-lanes L takes L >= 1 with --alone K" in capsys.readouterr().err


def test_exclusive_gpu_launches_start_longest_first(monkeypatch, tmp_path):
    """Under a deadline the longest GPU launch starts first. Two GPUs, launches of 4.5, 4.5 and 9 s, 10
    s left: in the plan's order the two short ones take both GPUs and the long one no longer fits; longest
    first, it runs beside a short one and the other short one fills the GPU freed at 4.5 s. On a clock
    of our own (processes that end when it says), so the test does not depend on the machine's speed."""
    from gpude.campaign import run as run_module

    experiment = {**fill_reference.DEFAULTS, **TINY, "functions": ["N01", "N02", "N09"]}
    cells = campaign.grid(experiment)
    seconds = {cells[0].key(): 4.5, cells[1].key(): 4.5, cells[2].key(): 9.0}
    plan = campaign.groups([(c, [0], {}) for c in cells], seconds, group=1)
    assert [g.expected_s for g in plan] == [4.5, 4.5, 9.0]
    now, started = [0.0], []

    class Process:
        def __init__(self, cmd, **_):
            self.pid, self.end = 0, now[0] + float(cmd.split()[1])

        def poll(self):
            return 0 if now[0] >= self.end else None

        def wait(self):
            return 0

    def command(experiment, cell, *a):
        started.append((cell.function, now[0]))
        return f"sleep {seconds[cell.key()]}"

    monkeypatch.setattr(run_module, "gpude_command", command)
    monkeypatch.setattr(run_module, "runs_on_gpu", lambda cell: True)
    monkeypatch.setattr(run_module.subprocess, "Popen", Process)
    monkeypatch.setattr(run_module.time, "monotonic", lambda: now[0])
    monkeypatch.setattr(run_module.time, "sleep", lambda s: now.__setitem__(0, now[0] + s))
    stats = run_module.run(experiment, plan, tmp_path / "out", max_seconds=10, jobs=1, setup_s=0, gpus=2)
    assert stats["ran"] == 3 and stats["skipped_time"] == 0
    assert started[0] == ("N09", 0.0) and started[1][1] == 0.0 and started[2][1] == pytest.approx(4.5, abs=0.3)


def test_a_cell_timed_only_side_by_side_is_projected_by_its_peers_ratio_of_alone_to_shared():
    # standard DE's F09 takes 4-5x F01's: a cell without exclusive rows but with shared:60 ones is expected
    # at its shared median times its peers' (exclusive / shared:60), not at any function's median
    experiment = {"algorithms": {"de": {"implementations": ["sequential"]}}, "max_fes": 60}
    row = lambda f, conc, w: {  # noqa: E731
        "algorithm": "de", "implementation": "sequential", "function": f, "dim": 100, "popsize": 250,
        "dtype": "float32", "concurrency": conc, "status": "ok", "wall_time_s": w}
    table = pd.DataFrame([row("F01", "exclusive-cpu:4", 60.0), row("F01", "shared:60", 120.0),
                          row("F02", "exclusive-cpu:4", 70.0), row("F02", "shared:60", 100.0),
                          row("F09", "shared:60", 550.0), row("F09", "shared:60", 450.0),
                          row("F10", "shared:48", 600.0),  # no peer with both at shared:48
                          {**row("F03", "shared:60", 1.0), "status": "error: boom"}])
    cell = lambda f: campaign.Cell("de", "sequential", f, 100, 250, "float32", 5, timing="shared")  # noqa: E731
    cells = [cell("F01"), cell("F09"), cell("F10"), cell("F03")]
    expected = campaign.projections(experiment, cells, [table], default_s=99.0)
    assert expected[cells[0].key()] == 60.0  # its own exclusive rows
    assert expected[cells[1].key()] == pytest.approx(65.0 * 500.0 / 110.0)  # peers' 65 s x 500 / 110
    assert expected[cells[2].key()] == 65.0  # no peer timed both ways at shared:48: any function's median
    assert expected[cells[3].key()] == 65.0  # a failed row tells nothing
