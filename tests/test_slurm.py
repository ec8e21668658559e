"""The workflow on a real SLURM cluster (`-m slurm`): the smoke experiment through
`--workflow-profile profiles/slurm`, every batch submitted with sbatch, the run ending in bounded time,
and its trials equal to a local run's. Needs a cluster: `scripts/slurm-cluster.sh start` makes a
one-node one on this machine (as root; .ci/run does it before the tests)."""

import os
import re
import shutil
import signal
import subprocess
import sys

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
