"""An experiment's batch jobs on a GPU host without Snakemake (the wheelhouse carries none), with the
workflow rules' own ``gpude warmup`` and ``gpude run`` command lines (:meth:`gpude.run.spec.RunSpec.run_command`), in an
order where implementations alternate, so that a drift of the machine hits each alike: chunk by chunk,
within a chunk function by function, within a function the implementations in the experiment's order
(the side by side with the authors' programs: theirs and ours alternate). The workflow then merges
the batch files as its own (``snakemake --config gpu=yes``, README "Side by side with the authors'
code"). The batches run in one ``gpude run-batches`` process (the imports, the CUDA context and the
kernels' loading paid once, not ~3 s a batch; ``--process-per-batch``: a process each)::

    python -m gpude.campaign interleave --experiment config/experiments/side_by_side.yaml --max-seconds 520
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ..core.errors import GpudeError
from ..study import experiment as model
from .cells import load_experiment


def interleaved_jobs(experiment: dict, path: str) -> list[dict]:
    """The experiment's batch jobs (its grid, :func:`gpude.study.experiment.grid`, with a GPU; ``experiment``
    as :func:`gpude.campaign.cells.load_experiment` reads it; ``path``: its file, which an outside
    program's batch names) in the order :func:`interleave` runs them, each with the rules' command
    lines as the workflow writes them on a host of one GPU (tests compare them with ``snakemake -n
    -p``). One algorithm: the side by side's shape."""
    if len(experiment["algorithms"]) != 1:
        raise GpudeError(f"interleave runs an experiment of one algorithm; {experiment['name']} has "
                         f"{', '.join(experiment['algorithms'])}")
    batches = model.grid(experiment)
    # chunk by chunk; within a chunk the cells in the grid's order, each cell's implementations together
    cells = {}
    for b in batches:
        cells.setdefault((b.setting, b.function, b.dim, b.popsize, b.dtype), len(cells))
    order = {i: k for k, i in enumerate(experiment["algorithms"][batches[0].algorithm]["implementations"]
                                         if batches else [])}
    batches.sort(key=lambda b: (b.chunk, cells[b.setting, b.function, b.dim, b.popsize, b.dtype],
                                order[b.implementation]))
    jobs = []
    for b in batches:
        stem = b.path(experiment["name"])
        first, count = model.chunk_trials(experiment, b.algorithm, b.implementation, b.chunk)
        spec = model.run_spec(experiment, b, first, count, experiment_file=path)
        jobs.append(dict(stem=stem, implementation=b.implementation, function=b.function, chunk=b.chunk,
                         run=spec.run_command(stem), warmup=spec.warmup_command(f"{stem}.warmup.json")))
    return jobs


def log_path(experiment: str, job: dict, what: str) -> Path:
    """Where the workflow writes a batch job's log (``what``: run or warmup)."""
    return Path("logs", experiment, "run_batch" if what == "run" else "warmup",
                job["stem"].split("/batches/", 1)[1] + ".log")


def in_one_process(experiment: str, jobs: list[dict], max_seconds: float | None) -> int:
    """``jobs``' batches in one ``gpude run-batches`` process (its progress lines on stdout): how many
    failed or were not started."""
    from ..run.batches import Job, write_jobs

    if not jobs:
        return 0
    for job in jobs:
        Path(job["stem"]).parent.mkdir(parents=True, exist_ok=True)
    listing = Path("logs", experiment, "run_batches.jsonl")
    listing.parent.mkdir(parents=True, exist_ok=True)
    write_jobs([Job(shlex.split(j["run"])[3:], str(log_path(experiment, j, "run"))) for j in jobs], listing)
    cmd = [sys.executable, "-m", "gpude", "run-batches", str(listing)]
    if max_seconds is not None:
        cmd += ["--max-seconds", f"{max(max_seconds, 1e-3):.3f}"]
    rc = subprocess.run(cmd).returncode
    done = sum(Path(j["stem"] + ".csv").is_file() and Path(j["stem"] + ".npz").is_file() for j in jobs)
    if done < len(jobs):
        print(f"{len(jobs) - done} of {len(jobs)} batches not made: run the same command again to go on", flush=True)
    return max(len(jobs) - done, 1 if rc else 0)


def interleave(path: str, max_seconds: float | None = None, dry_run: bool = False, workers: int | None = None,
               implementations: list[str] | None = None, process_per_batch: bool = False) -> int:
    """Run the experiment's batch jobs (:func:`interleaved_jobs`): first the warm-ups of the jobs to
    do, ``workers`` at a time (as the workflow runs them: compiling only, before any timed batch), then
    the batches one at a time in their interleaved order, skipping those whose files exist (a later
    call goes on); no batch starts after ``max_seconds``. ``implementations`` replaces the
    experiment's list (e.g. ``block`` beside ``resident`` and the authors' iDE). Returns the number of
    jobs that failed."""
    experiment = load_experiment(path)
    if implementations:
        (spec,) = experiment["algorithms"].values()
        spec["implementations"] = list(implementations)
    start = time.monotonic()
    jobs = interleaved_jobs(experiment, str(path))
    todo = [j for j in jobs if not (Path(j["stem"] + ".csv").is_file() and Path(j["stem"] + ".npz").is_file())]
    print(f"{len(jobs)} batch jobs, {len(jobs) - len(todo)} done before", flush=True)
    if dry_run:
        for job in todo:
            print(job["warmup"], job["run"], sep="\n")
        return 0

    def call(job, what):
        Path(job["stem"]).parent.mkdir(parents=True, exist_ok=True)
        log = log_path(experiment["name"], job, what)
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "w") as out:
            return subprocess.run(shlex.split(job[what]), stdout=out, stderr=subprocess.STDOUT).returncode

    cold = [j for j in todo if not Path(j["stem"] + ".warmup.json").is_file()]
    with ThreadPoolExecutor(workers or max(1, (os.cpu_count() or 2) - 1)) as pool:
        codes = list(pool.map(lambda j: call(j, "warmup"), cold))
    failed = sum(1 for c in codes if c)
    print(f"{len(cold)} warm-ups, {failed} failed, at {time.monotonic() - start:.0f} s", flush=True)
    if not process_per_batch:  # every batch in one process: its imports and CUDA context paid once
        left = None if max_seconds is None else max(0.0, max_seconds - (time.monotonic() - start))
        return failed + in_one_process(experiment["name"], todo, left)
    for k, job in enumerate(todo):
        if max_seconds is not None and time.monotonic() - start > max_seconds:
            print(f"out of time after {k} of {len(todo)} batches: run the same command again to go on", flush=True)
            break
        rc = call(job, "run")
        failed += rc != 0
        print(f"[{k + 1}/{len(todo)}] {job['implementation']} {job['function']} chunk{job['chunk']}: exit {rc} "
              f"at {time.monotonic() - start:.0f} s", flush=True)
    return failed


def main(argv=None) -> int:
    """``python -m gpude.campaign interleave``; errors are one line, exit status 1."""
    p = argparse.ArgumentParser(prog="python -m gpude.campaign interleave",
                                description="an experiment's batch jobs, interleaved, on a host without Snakemake")
    p.add_argument("--experiment", default="config/experiments/side_by_side.yaml")
    p.add_argument("--max-seconds", type=float, default=None, help="start no job after this")
    p.add_argument("--dry-run", action="store_true", help="print the command lines only")
    p.add_argument("--implementations", default="", help="instead of the experiment's, comma-separated")
    p.add_argument("--process-per-batch", action="store_true",
                   help="a `gpude run` process each batch (as the workflow) instead of all in one `gpude run-batches`")
    args = p.parse_args(argv)
    try:
        return 1 if interleave(args.experiment, args.max_seconds, args.dry_run,
                               implementations=[i for i in args.implementations.split(",") if i],
                               process_per_batch=args.process_per_batch) else 0
    except (GpudeError, OSError) as exc:
        print(f"campaign interleave: {exc}", file=sys.stderr)
        return 1
