"""``gpude run-batches``: several ``gpude run`` batches, one after the other, in one process.

A batch started as its own process pays the interpreter, the imports, the CUDA context and the
kernels' loading from numba's cache before its first trial: seconds, more than the trials of a
small batch (docs/startup.md gives the measurements). Here those are paid once; each batch still builds and warms
its runner before its first trial (its ``setup_time_s``, outside every trial's time), its trials run
alone (one batch at a time), and its rows and traces are written atomically as ``gpude run`` writes
them, byte for byte the same but for the times. One GPU lease is taken for the whole process (CUDA
reads its device once): a batch line may not name another ``--gpu``.

The jobs file has one batch a line, as JSON: ``{"args": [the gpude run arguments], "log": PATH}``
(each batch's output goes to its log, as the workflow's own ``> {log} 2>&1``).
"""

from __future__ import annotations

import contextlib
import gc
import json
import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.errors import GpudeError, say_error

if TYPE_CHECKING:
    from .spec import RunSpec


@dataclass
class Job:
    args: list[str]
    log: str


def read_jobs(path) -> list[Job]:
    """The jobs of a jobs file (module docstring), every line checked before any batch runs."""
    jobs = []
    for number, line in enumerate(Path(path).read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            args, log = item["args"], item["log"]
        except (ValueError, KeyError, TypeError):
            raise GpudeError(f"{path}, line {number}: expected a JSON object with \"args\" (the gpude run "
                             f"arguments, a list) and \"log\" (a path), got {line[:80]!r}") from None
        if not (isinstance(args, list) and all(isinstance(a, str) for a in args) and isinstance(log, str) and log):
            raise GpudeError(f"{path}, line {number}: \"args\" must be a list of strings and \"log\" a path")
        jobs.append(Job(list(args), log))
    return jobs


def write_jobs(jobs: list[Job], path) -> None:
    from ..core.io import write_atomic

    write_atomic(path, "".join(json.dumps({"args": j.args, "log": j.log}) + "\n" for j in jobs))


def parse_runs(jobs: list[Job], gpu: str) -> list[tuple[RunSpec, str, str]]:
    """Each job's ``gpude run`` command line as (its RunSpec, rows file, traces file), refused before any
    batch runs where it does not parse, does not write its files, or names a GPU other than ``gpu``."""
    from .spec import RunSpec, run_parser

    parser, parsed = run_parser(), []
    for k, job in enumerate(jobs, 1):
        args = job.args[job.args.index("run"):] if "run" in job.args else job.args
        if args[:1] != ["run"]:
            raise GpudeError(f"batch {k}: not a `gpude run` command line: {shlex.join(job.args)[:120]}")
        try:
            with contextlib.redirect_stderr(sys.stdout):
                ns = parser.parse_args(args[1:])
        except SystemExit:
            raise GpudeError(f"batch {k}: its `gpude run` arguments do not parse (above): "
                             f"{shlex.join(args)[:120]}") from None
        if not (ns.out_csv and ns.out_traces):
            raise GpudeError(f"batch {k}: give --out-csv and --out-traces (a batch of run-batches writes its files)")
        for flag, value in (("--out-csv", ns.out_csv), ("--out-traces", ns.out_traces)):
            if Path(value).is_dir():
                raise GpudeError(f"batch {k}: {flag} {value}: is a folder; {flag} takes a file path")
        if "--gpu" in args and ns.gpu != gpu:
            raise GpudeError(f"batch {k} asks for --gpu {ns.gpu}, the process has --gpu {gpu}: one process "
                             "holds one GPU; leave --gpu out of the batch lines")
        parsed.append((RunSpec.from_namespace(ns), ns.out_csv, ns.out_traces))
    return parsed


def run_batch(spec: RunSpec, out_csv: str, out_traces: str) -> int:
    """One batch's exit status, as ``gpude run`` gives it: 0, 1 (a trial failed) or 2 (an error, said in
    one line: the batch's log)."""
    from .trials import run_trials

    try:
        results = run_trials(spec, out_csv, out_traces)
    except Exception as exc:  # the batch's error or bug, as `gpude run` says it; the next batch goes on
        return say_error("run", exc)
    return 0 if spec.keep_failed or all(r is not None for r in results) else 1


def run_batches(jobs: list[Job], *, gpu: str, max_seconds: float | None) -> int:
    """Run ``jobs`` in order under one GPU lease; no batch starts after ``max_seconds``. Returns the exit
    status: 0 when every batch ran and exited 0, 1 otherwise (each batch's own status and log are
    printed)."""
    from ..core.gpu_lease import held

    start = time.monotonic()
    runs = parse_runs(jobs, gpu)
    needs = any(spec.needs_gpu for spec, _, _ in runs)  # (the plugins and programs registered first)
    failed = done = 0
    with held(gpu, needs):
        for k, (job, (spec, out_csv, out_traces)) in enumerate(zip(jobs, runs), 1):
            if max_seconds is not None and time.monotonic() - start > max_seconds:
                print(f"out of time: {len(jobs) - done} of {len(jobs)} batches not started", flush=True)
                return 1
            Path(job.log).parent.mkdir(parents=True, exist_ok=True)
            t = time.monotonic()
            with open(job.log, "w") as out, contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                rc = run_batch(spec, out_csv, out_traces)
            gc.collect()  # the last batch's runner and its device buffers
            done += 1
            failed += rc != 0
            print(f"[{k}/{len(jobs)}] {spec.implementation} {spec.function} D={spec.dim} NP={spec.popsize}: exit {rc} "
                  f"in {time.monotonic() - t:.1f} s (log {job.log})", flush=True)
    return 1 if failed else 0
