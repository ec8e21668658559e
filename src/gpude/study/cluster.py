"""A workflow run that submits its jobs to SLURM: stopping it without leaving jobs behind, and the
threads of a job that wants a whole node.

Snakemake's own SIGTERM handler waits for every submitted job to end (hours), cancelling none, and
so was killed with its jobs running (``kill``, the time limit of a job that runs Snakemake); the
SLURM executor cancels its jobs only on Ctrl-C (KeyboardInterrupt). :func:`cancel_on_sigterm` makes
SIGTERM take Ctrl-C's path. The executor then cancels only the jobs in its list at that moment,
while its submission threads go on submitting the rest of the ready jobs (seen: 7 of 12 left
queued after an early SIGTERM), so :func:`cancel_left_behind` cancels, when the run ends in error,
whatever of it is still queued (tests/test_slurm.py).
"""

from __future__ import annotations

import functools
import signal
import subprocess
import sys


def cancel_on_sigterm(workflow) -> None:
    """On a cluster run, make SIGTERM raise KeyboardInterrupt (the executor's ``scancel`` of the jobs
    in flight, then exit after at most one status-check interval).

    Called from the workflow's ``onstart``, which runs after the scheduler has set its own handler;
    a local run keeps Snakemake's handler (its jobs are its children), and the jobs' own Snakemake
    runs no hooks.
    """
    if workflow.local_exec:
        return

    def interrupt(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # once: a second one would break off scancel
        print("SIGTERM: cancelling the submitted jobs, then exiting", file=sys.stderr, flush=True)
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)


def cancel_left_behind(workflow) -> None:
    """On a cluster run that ends in error, ``scancel`` its jobs still queued (they are named by the
    executor's run ID); a run that ends in error without interruption has waited for its jobs.
    Called from the workflow's ``onerror``."""
    run_id = getattr(getattr(workflow.scheduler, "_executor", None), "run_uuid", None)
    if not workflow.local_exec and run_id:
        subprocess.run(["scancel", "--name", run_id], check=False, timeout=60)


@functools.cache
def node_threads(configured: int | None = None) -> int:
    """Threads of a job that wants a whole node: ``configured`` (the experiment's ``cluster_threads``),
    else the fewest CPUs of a node in the default partition (``sinfo``), so that it fits on any
    node; 1 where sinfo says nothing usable. Asked once per process."""
    if configured:
        return int(configured)
    try:
        out = subprocess.run(["sinfo", "-h", "-o", "%c"], capture_output=True, text=True, timeout=60,
                             check=False).stdout
        return min(int(v.rstrip("+")) for v in out.split())
    except (OSError, subprocess.SubprocessError, ValueError):
        return 1
