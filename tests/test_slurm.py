"""The workflow on a real SLURM cluster (`-m slurm`): the smoke experiment through
`--workflow-profile profiles/slurm`, every batch submitted with sbatch, the run ending in bounded time,
and its trials equal to a local run's; under faults (issue 38): a batch cancelled with scancel is
reported and the same command then completes the trials (one cluster run of the smoke experiment
serves both: its first batch to run is cancelled), and a SIGTERM cancels the workflow's SLURM
jobs and ends Snakemake. Needs a cluster: `scripts/slurm-cluster.sh start` makes a
one-node one on this machine (as root; .ci/run does it before the tests)."""

import io
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from test_workflow import SMOKE, copy_workflow, smoke_run  # noqa: F401 (a fixture: the smoke experiment run here)

#: A hang (the plugin waiting for ever on a job it cannot see end) fails the test after this long.
BOUND_S = 420
DETERMINISTIC = ["run_id", "function", "dim", "implementation", "popsize", "trial", "seed", "best_error",
                 "fes_used", "generations", "status"]


def cluster_answers() -> str | None:
    """Why there is no cluster to use, or None if `sinfo` lists an idle or mixed node."""
    if shutil.which("sinfo") is None:
        return "no SLURM here (sinfo not found)"
    try:
        out = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True, timeout=20)
    except subprocess.TimeoutExpired:
        return "the SLURM controller does not answer"
    if out.returncode or not {"idle", "mixed", "allocated"} & set(out.stdout.split()):
        return f"no SLURM node takes jobs ({(out.stdout + out.stderr).strip() or 'sinfo printed nothing'})"
    return None


pytestmark = [pytest.mark.slurm, pytest.mark.slow, pytest.mark.xdist_group("slurm")]


@pytest.fixture(scope="module")
def cluster():
    reason = cluster_answers()
    if reason:
        pytest.skip(f"{reason}: start a one-node cluster with scripts/slurm-cluster.sh start (as root)")


def run_bounded(args, cwd, timeout_s):
    """Snakemake in its own process group; on a hang, the whole group is killed and the test fails."""
    proc = subprocess.Popen([sys.executable, "-m", "snakemake", *args], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        pytest.fail(f"snakemake on SLURM did not end within {timeout_s} s (a hang); its output ends:\n{out[-4000:]}")
    return proc.returncode, out


LIVE = "PD,R,CG,S,CF,RQ"  # squeue states of a job not yet ended


def jobs_of(workdir, states=LIVE) -> dict[str, tuple[str, str]]:
    """This run's SLURM jobs (those working in its folder): id -> (state, comment: rule and wildcards)."""
    out = subprocess.run(["squeue", "-h", "-t", states, "-o", "%i|%T|%k|%Z"], capture_output=True, text=True,
                         timeout=30).stdout
    return {i: (state, comment) for i, state, comment, wd in (line.split("|", 3) for line in out.splitlines())
            if wd == str(workdir)}


def wait_for(condition, timeout_s, what):
    end = time.monotonic() + timeout_s
    while not (value := condition()):
        if time.monotonic() > end:
            pytest.fail(f"not within {timeout_s} s: {what}")
        time.sleep(0.1)
    return value


@pytest.fixture()
def start_snakemake():
    """Snakemake in its own session, its output in a file; whatever is left at the end (a failed
    test) is killed and its SLURM jobs cancelled."""
    started = []

    def start(args, cwd, env=None):
        log = cwd / f"snakemake{len(started)}.out"
        proc = subprocess.Popen([sys.executable, "-m", "snakemake", *args], cwd=cwd, stdout=log.open("w"),
                                stderr=subprocess.STDOUT, start_new_session=True, env=env)
        started.append((proc, cwd))
        proc.output = lambda: log.read_text()
        return proc

    yield start
    for proc, cwd in started:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        if left := jobs_of(cwd):
            subprocess.run(["scancel", *left])


def wait_to_end(proc, what):
    try:
        proc.wait(timeout=BOUND_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"snakemake did not end within {BOUND_S} s {what}:\n{proc.output()[-4000:]}")
    return proc.returncode, proc.output()


def submitted_jobs(out) -> dict[str, str]:
    """SLURM job id -> its log, of every job a run's output says it submitted."""
    return dict(re.findall(r"Job \d+ has been submitted with SLURM jobid (\d+) \(log: (\S+)\)", out))


# --- the smoke experiment on the cluster, a batch of it cancelled there (issue 38) ---

# no --cores: a cluster run needs none (the master-slave batches take a node's CPUs, from sinfo).
# Status checks every 2 s instead of the plugin's 40 while a job is in flight, 10 s longer after each
# check that sees none end (the plugin's rule; back to 2 s once one ends), so that the test is short: a
# batch takes 6-12 s from sbatch to its end (the job's own Snakemake reads the workflow first), and the
# second check, 13-14 s after sbatch, sees the re-run's one batch ended.
SMOKE_ON_SLURM = ("--workflow-profile", "profiles/slurm", *SMOKE, "--config", "gpu=no",
                  "--slurm-init-seconds-before-status-checks", "2", "--", "results/smoke/trials.csv")
#: a batch's SLURM job comment: rule_run_batch_wildcards_<its wildcards, joined by _>
BATCH_JOB = re.compile(r"rule_run_batch_wildcards_(smoke_de_(\w+)_(F01|Q01)_10_8_float64_(\d+))")


def job_state(job):
    return re.search(r"JobState=(\w+)", subprocess.run(["scontrol", "show", "job", job], capture_output=True,
                                                        text=True).stdout).group(1)


def cancel_a_running_batch(workdir):
    """Cancel the first batch of the smoke experiment that runs on the cluster, as a user or the admin
    would, once the batch itself runs (its `gpude run` has made its log; the cluster runs one batch at a
    time, each job ~9 s, the first ~6 s its own Snakemake reading the workflow); should that job end
    first, the next one. Its job id, its wildcards (as in its SLURM log's path) and its batch's path."""
    while True:
        running = wait_for(lambda: jobs_of(workdir, "R"), BOUND_S, "a batch of the smoke experiment runs on SLURM")
        job, (_, comment) = next(iter(running.items()))
        match = BATCH_JOB.fullmatch(comment)
        assert match, f"not a batch of the smoke experiment: {comment}"
        wildcards, implementation, function, chunk = match.groups()
        batch = f"de/{implementation}/{function}/d10/np8/float64/chunk{chunk}"
        log = workdir / f"logs/smoke/run_batch/{batch}.log"
        wait_for(lambda log=log, job=job: log.is_file() or job not in jobs_of(workdir), BOUND_S, f"{batch} runs")
        subprocess.run(["scancel", job], check=True)  # (0 also for a job that has ended)
        ended = wait_for(lambda job=job: job not in jobs_of(workdir) and job_state(job), 60, f"job {job} ends")
        if ended == "CANCELLED":
            return job, wildcards, f"results/smoke/batches/{batch}"


def test_the_smoke_experiment_runs_on_slurm_as_it_runs_here_after_a_cancelled_batch(cluster, tmp_path,
                                                                                      start_snakemake, request):
    # One cluster run for both: the smoke experiment through sbatch, as a user would run it, under a
    # fault: a batch cancelled with scancel while it runs; the run reports it and stops; the same
    # command then completes the trials, which are those of a run here (the smoke experiment's run of
    # tests/test_workflow.py's end-to-end test, made meanwhile on another worker: the fixture
    # smoke_run, asked for at the end, made here only if no other test has made it).
    workdir = tmp_path / "cluster"
    workdir.mkdir()
    copy_workflow(workdir)
    run = start_snakemake(SMOKE_ON_SLURM, workdir)
    job0, wildcards, cancelled = cancel_a_running_batch(workdir)
    code, out = wait_to_end(run, "after its job was cancelled")
    assert code != 0, out[-4000:]
    # reported: the failed job, its SLURM id and state, its outputs
    assert "Error in rule run_batch" in out and f"SLURM-job '{job0}' failed, SLURM status is: 'CANCELLED'" in out, out
    assert f"{cancelled}.csv" in out.split("Error in rule run_batch")[1]
    # the cancelled batch left nothing; the run waited for the others, in flight, which finished
    batches = workdir / "results/smoke/batches"
    after_first = {p: p.read_bytes() for p in batches.rglob("chunk*")}
    assert not [p for p in after_first if str(p).startswith(str(workdir / cancelled))], sorted(after_first)
    finished = [p for p in after_first if p.suffix == ".csv"]
    assert len(finished) == 7 and all(p.with_suffix(".npz") in after_first for p in finished), sorted(after_first)
    first = submitted_jobs(out)

    code, out = run_bounded(SMOKE_ON_SLURM, workdir, BOUND_S)  # the same command
    assert code == 0, out[-4000:]
    again = submitted_jobs(out)
    # only the cancelled batch ran again; the finished ones are as they were
    assert len(again) == 1 and f"/rule_run_batch/{wildcards}/" in next(iter(again.values())), out
    assert not [p for p, data in after_first.items() if p.read_bytes() != data]
    trials = pd.read_csv(workdir / "results/smoke/trials.csv")
    assert len(trials) == 12 and trials["run_id"].is_unique, trials  # none lost, none twice
    for path in finished:  # the finished batches' rows, as they were
        before = pd.read_csv(io.BytesIO(after_first[path]))
        columns = [c for c in before.columns if c not in ("trace_path", "trace_index")]
        merged = trials[trials["run_id"].isin(before["run_id"])].sort_values("run_id", ignore_index=True)
        pd.testing.assert_frame_equal(merged[columns], before[columns].sort_values("run_id", ignore_index=True))

    # every batch went through sbatch: one SLURM job per batch (the cancelled one's again in the second
    # run), each logged by its job, each run as that job in this run's folder; the merge is a local rule
    batch_logs = [log for log in first.values() if "/rule_run_batch/" in log]
    assert len(list(batches.rglob("chunk*.csv"))) == 8 and len(batch_logs) == 8, first
    for job_id, log in {**first, **again}.items():
        if "/rule_run_batch/" in log:
            job = subprocess.run(["scontrol", "show", "job", job_id], capture_output=True, text=True).stdout
            ended = "CANCELLED" if job_id == job0 else "COMPLETED"
            assert f"JobState={ended}" in job and f"WorkDir={workdir}" in job, job
    assert "merge_trials" not in " ".join([*first.values(), *again.values()])

    # the same trials as the smoke experiment's run here
    here = request.getfixturevalue("smoke_run")
    assert here["code"] == 0, here["out"][-4000:]
    on_cluster = trials.sort_values("run_id", ignore_index=True)
    local = pd.read_csv(Path(here["folder"]) / "results/smoke/trials.csv").sort_values("run_id", ignore_index=True)
    pd.testing.assert_frame_equal(on_cluster[DETERMINISTIC], local[DETERMINISTIC])


# --- Snakemake sent SIGTERM on the cluster (issue 38) ---

#: One-trial batches of the plain-Python DE (no JIT: nothing to compile, whatever numba's cache
#: holds), each trial stopped by a time budget, so that the batches are still running at the SIGTERM.
FAULTS = """name: faults
description: SLURM fault tests (tests/test_slurm.py)
seed: 7
trials: {trials}
trials_per_job: 1
algorithms:
  de:
    implementations: [high_level]
functions: [F01]
dims: [10]
popsizes: [8]
max_fes: 100000000
max_time_s: {seconds}
timing: shared
"""
BATCHES = "results/faults/batches/de/high_level/F01/d10/np8/float64"


def faults_args(first_check_s):
    """The command of a fault test: status checks every `first_check_s` seconds until a job is in
    flight, then 10 s longer after each check that sees none end (the plugin's rule; back to
    `first_check_s` once one ends)."""
    return ("--workflow-profile", "profiles/slurm", "--configfile", "faults.yaml",
            "--slurm-init-seconds-before-status-checks", str(first_check_s), "--", "results/faults/trials.csv")


def faults_workdir(tmp_path, trials, seconds):
    copy_workflow(tmp_path)
    (tmp_path / "faults.yaml").write_text(FAULTS.format(trials=trials, seconds=seconds))
    return tmp_path


def test_snakemake_cancels_its_slurm_jobs_and_exits_on_sigterm(cluster, tmp_path, start_snakemake):
    # Snakemake's own SIGTERM handler waits for every submitted job to end (here a minute; on a real
    # run hours), cancelling none; workflow/rules/common.smk makes SIGTERM take Ctrl-C's path (scancel),
    # and its onerror cancels the jobs the plugin's submission threads submitted after that: here an
    # sbatch that takes 0.3 s (as on a busy controller) makes sure some are.
    workdir = faults_workdir(tmp_path, trials=6, seconds=60)
    (tmp_path / "bin").mkdir()
    slow = tmp_path / "bin/sbatch"
    slow.write_text(f'#!/bin/sh\nsleep 0.3\nexec {shutil.which("sbatch")} "$@"\n')
    slow.chmod(0o755)
    run = start_snakemake(faults_args(1), workdir, env={**os.environ, "PATH": f"{slow.parent}:{os.environ['PATH']}"})
    first = wait_for(lambda: jobs_of(workdir), BOUND_S, "a batch of the workflow submitted to SLURM")
    os.kill(run.pid, signal.SIGTERM)  # while it waits on that job, the others being submitted
    at_sigterm = set(jobs_of(workdir))
    try:
        run.wait(timeout=60)  # after its status-check thread's sleep: 1 s, 10 s more after each check
    except subprocess.TimeoutExpired:
        pytest.fail(f"snakemake did not exit within 60 s of SIGTERM:\n{run.output()[-4000:]}")
    out = run.output()
    assert run.returncode != 0 and "SIGTERM: cancelling the submitted jobs" in out, out[-4000:]
    wait_for(lambda: not jobs_of(workdir), 10, f"none left behind: {jobs_of(workdir)}")  # (cancelled ones stop)
    submitted = re.findall(r"submitted with SLURM jobid (\d+)", out)
    assert set(first) <= set(submitted) and len(submitted) == 6 and len(at_sigterm) < 6, (at_sigterm, out[-4000:])
    for job in submitted:
        state = subprocess.run(["scontrol", "show", "job", job], capture_output=True, text=True).stdout
        assert "JobState=CANCELLED" in state, state
    assert not list((workdir / BATCHES).glob("chunk*"))
