"""The workflow on a real SLURM cluster (`-m slurm`): the smoke experiment through
`--workflow-profile profiles/slurm`, every batch submitted with sbatch, the run ending in bounded time,
and its trials equal to a local run's; under faults (issue 38): a batch cancelled with scancel is
reported and the same command then completes the trials, and a SIGTERM cancels the workflow's SLURM
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

import pandas as pd
import pytest

from test_workflow import SMOKE, copy_workflow

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


def test_the_smoke_experiment_runs_on_slurm_as_it_runs_here(cluster, tmp_path):
    cluster_dir, local_dir = tmp_path / "cluster", tmp_path / "local"
    for d in (cluster_dir, local_dir):
        d.mkdir()
        copy_workflow(d)
    target = ("--", "results/smoke/trials.csv")
    # no --cores: a cluster run needs none (the master-slave batches take a node's CPUs, from sinfo).
    # Status checks every 5 s instead of the plugin's 40, so that the test is short.
    code, out = run_bounded(["--workflow-profile", "profiles/slurm", *SMOKE, "--config", "gpu=no",
                             "--slurm-init-seconds-before-status-checks", "5", *target], cluster_dir, BOUND_S)
    assert code == 0, out[-4000:]
    # every batch went through sbatch: one SLURM job id per batch, each logged by its job
    submitted = dict(re.findall(r"Job \d+ has been submitted with SLURM jobid (\d+) \(log: (\S+)\)", out))
    batches = sorted((cluster_dir / "results/smoke/batches").rglob("chunk*.csv"))
    batch_logs = [log for log in submitted.values() if "/rule_run_batch/" in log]
    assert len(batches) == 8 and len(batch_logs) == len(batches), out[-4000:]
    for job_id, log in submitted.items():  # each ran as that SLURM job, in this run's folder
        if "/rule_run_batch/" in log:
            job = subprocess.run(["scontrol", "show", "job", job_id], capture_output=True, text=True).stdout
            assert "JobState=COMPLETED" in job and f"WorkDir={cluster_dir}" in job, job
    assert "merge_trials" not in " ".join(submitted.values())  # a local rule

    code, out = run_bounded(["--cores", "2", *SMOKE, "--config", "gpu=no", *target], local_dir, BOUND_S)
    assert code == 0, out[-4000:]
    on_cluster = pd.read_csv(cluster_dir / "results/smoke/trials.csv")
    here = pd.read_csv(local_dir / "results/smoke/trials.csv")
    assert len(on_cluster) == 12
    pd.testing.assert_frame_equal(on_cluster[DETERMINISTIC].sort_values("run_id", ignore_index=True),
                                  here[DETERMINISTIC].sort_values("run_id", ignore_index=True))


# --- the cluster path under faults (issue 38): a batch cancelled with scancel, Snakemake sent SIGTERM ---

#: One-trial batches of the plain-Python DE (no JIT: nothing to compile, whatever numba's cache
#: holds), each trial stopped by a time budget, so that a batch is still running when it is cancelled.
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
    `first_check_s` once one ends). A batch here takes 6-12 s from sbatch to its end (the job's own
    Snakemake reads the workflow first): 2 s makes the second check, 13-14 s after sbatch, see it ended."""
    return ("--workflow-profile", "profiles/slurm", "--configfile", "faults.yaml",
            "--slurm-init-seconds-before-status-checks", str(first_check_s), "--", "results/faults/trials.csv")

LIVE = "PD,R,CG,S,CF,RQ"  # squeue states of a job not yet ended


def faults_workdir(tmp_path, trials, seconds):
    copy_workflow(tmp_path)
    (tmp_path / "faults.yaml").write_text(FAULTS.format(trials=trials, seconds=seconds))
    return tmp_path


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


def test_a_cancelled_batch_is_reported_and_a_rerun_completes_the_trials(cluster, tmp_path, start_snakemake):
    workdir = faults_workdir(tmp_path, trials=2, seconds=2)
    run = start_snakemake(faults_args(2), workdir)
    # chunk 0's batch, once its trial runs (its log says so), is cancelled as a user or the admin would
    log0 = workdir / "logs/faults/run_batch/de/high_level/F01/d10/np8/float64/chunk0.log"
    wait_for(lambda: log0.is_file() and "setup" in log0.read_text(), BOUND_S, "chunk 0's trial starts")
    job0 = [i for i, (_, comment) in jobs_of(workdir).items() if comment.endswith("_float64_0")]
    assert job0, f"chunk 0's batch ended before it could be cancelled: {jobs_of(workdir, 'all')}"
    job0 = job0[0]
    subprocess.run(["scancel", job0], check=True)
    try:
        run.wait(timeout=BOUND_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"snakemake did not end after its job was cancelled:\n{run.output()[-4000:]}")
    out = run.output()
    assert run.returncode != 0, out[-4000:]
    # reported: the failed job, its SLURM id and state, its outputs
    assert "Error in rule run_batch" in out and f"SLURM-job '{job0}' failed, SLURM status is: 'CANCELLED'" in out, out
    assert f"{BATCHES}/chunk0.csv" in out.split("Error in rule run_batch")[1]
    # the cancelled batch left nothing, the other one finished
    batches = workdir / BATCHES
    assert not list(batches.glob("chunk0*")), sorted(batches.iterdir())
    finished = (batches / "chunk1.csv").read_bytes()
    assert (batches / "chunk1.npz").is_file()

    rerun = start_snakemake(faults_args(2), workdir)  # the same command
    rerun.wait(timeout=BOUND_S)
    out = rerun.output()
    assert rerun.returncode == 0, out[-4000:]
    submitted = re.findall(r"submitted with SLURM jobid \d+ \(log: (\S+)\)", out)
    assert len(submitted) == 1 and "_float64_0/" in submitted[0], out  # only the cancelled batch ran again
    assert (batches / "chunk1.csv").read_bytes() == finished
    trials = pd.read_csv(workdir / "results/faults/trials.csv")
    assert sorted(trials["trial"]) == [0, 1] and trials["run_id"].is_unique, trials  # none lost, none twice
    before = pd.read_csv(io.BytesIO(finished))
    columns = [c for c in before.columns if c not in ("trace_path", "trace_index")]
    pd.testing.assert_frame_equal(trials.loc[trials["trial"] == 1, columns].reset_index(drop=True), before[columns])


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
