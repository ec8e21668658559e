"""Batches in one process against a process each: the same batch jobs, run both ways, timed.

An experiment's batch jobs (as ``python -m gpude.campaign interleave`` plans them: the workflow's own
``gpude warmup`` and ``gpude run`` command lines), the first ``--limit`` of them among
``--implementations``: their warm-ups first (in parallel, filling numba's cache), then

* ``process``: each batch a ``python -m gpude run`` process, as the workflow and the interleave run them;
* ``inprocess``: all of them one after the other in one process (``gpude.cli.main`` called per batch,
  its output to the batch's log).

Per batch: the wall time from its start to its files written, and its trials' own time (the rows'
``wall_time_s``); both modes' rows are compared column by column except the times (the same runs: the
same seeds, errors and FEs). Writes ``<out>.csv`` (a row per batch and mode) and prints the totals::

    NUMBA_ENABLE_CUDASIM=0 python benchmarks/inprocess_batches.py --experiment config/experiments/side_by_side.yaml \\
        --implementations ide,ide_x30,resident,resident_x30,all_gpu,all_gpu_x30 --limit 12 --out /tmp/inprocess
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

# the times, and the paths that name the mode's folder
TIME_COLUMNS = {"wall_time_s", "setup_time_s", "trace_path", "timestamp_utc", "time_to_target_s", "host", "pid", "trace_file"}


def relocate(command: str, results: str, root: Path) -> list[str]:
    """``command``'s argv (without ``python3 -m gpude``) with the experiment's results folder moved to
    ``root``."""
    argv = shlex.split(command.replace(results, str(root)))
    assert argv[:3] == ["python3", "-m", "gpude"], argv[:3]
    return argv[3:]


def out_csv(argv: list[str]) -> Path:
    """The batch's rows file of a ``gpude run`` argv."""
    return Path(argv[argv.index("--out-csv") + 1])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--experiment", default="config/experiments/side_by_side.yaml")
    p.add_argument("--implementations", default="ide,ide_x30,resident,resident_x30,all_gpu,all_gpu_x30")
    p.add_argument("--limit", type=int, default=12, help="how many batch jobs (in the interleave's order)")
    p.add_argument("--modes", default="process,inprocess")
    p.add_argument("--out", required=True, help="a folder: the batches, their logs and inprocess.csv")
    args = p.parse_args(argv)

    import pandas as pd

    from gpude import cli
    from gpude.core import provenance
    from gpude.campaign.cells import load_experiment
    from gpude.campaign.interleave import interleaved_jobs

    experiment = load_experiment(args.experiment)
    (spec,) = experiment["algorithms"].values()
    spec["implementations"] = args.implementations.split(",")
    jobs = interleaved_jobs(experiment, args.experiment)[:args.limit]
    results = f"results/{experiment['name']}"
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    warm = [relocate(j["warmup"], results, out / "warmup") for j in jobs]
    with ThreadPoolExecutor(max(1, (os.cpu_count() or 2) - 1)) as pool:
        codes = list(pool.map(lambda a: subprocess.run([sys.executable, "-m", "gpude", *a], cwd=REPO,
                                                       capture_output=True).returncode, warm))
    print(f"{len(jobs)} warm-ups ({sum(c != 0 for c in codes)} failed) in {time.monotonic() - t0:.1f} s", flush=True)

    rows = []
    for mode in args.modes.split(","):
        start = time.monotonic()
        for k, job in enumerate(jobs):
            run = relocate(job["run"], results, out / mode)
            csv = out_csv(run)
            csv.parent.mkdir(parents=True, exist_ok=True)
            log = csv.with_suffix(".log")
            t = time.monotonic()
            if mode == "process":
                with open(log, "w") as f:
                    rc = subprocess.run([sys.executable, "-m", "gpude", *run], cwd=REPO, stdout=f,
                                        stderr=subprocess.STDOUT).returncode
            else:  # one process cannot take a lease per batch (CUDA reads its device once): the GPU is
                # this benchmark's alone, as a lease would make it
                run = run + ["--gpu", "shared"]
                with open(log, "w") as f, contextlib.redirect_stdout(f), contextlib.redirect_stderr(f):
                    rc = cli.main(run)
            wall = time.monotonic() - t
            trials = pd.read_csv(csv) if csv.is_file() else pd.DataFrame({"wall_time_s": []})
            rows.append({"mode": mode, "batch": k, "implementation": job["implementation"],
                         "function": job["function"], "chunk": job["chunk"], "exit": rc,
                         "batch_wall_s": round(wall, 3), "trials": len(trials),
                         "trial_time_s": round(float(trials["wall_time_s"].sum()), 4)})
            print(f"{mode} [{k + 1}/{len(jobs)}] {job['implementation']} {job['function']}: exit {rc}, "
                  f"{wall:.2f} s ({rows[-1]['trial_time_s']:.3f} s of trials)", flush=True)
        print(f"{mode}: {time.monotonic() - start:.1f} s for {len(jobs)} batches", flush=True)

    same = True
    modes = args.modes.split(",")
    if len(modes) == 2:
        for job in jobs:
            a, b = (pd.read_csv(out_csv(relocate(job["run"], results, out / m))) for m in modes)
            keep = [c for c in a.columns if c not in TIME_COLUMNS]
            for c in keep:
                if not a[c].astype(str).equals(b[c].astype(str)):
                    same = False
                    print(f"differ: {job['stem']} column {c}", flush=True)
    table = pd.DataFrame(rows)
    meta = {**provenance.cpu(), **(provenance.gpu() if os.environ.get("NUMBA_ENABLE_CUDASIM") == "0" else {}),
            "commit": provenance.git_commit(), "same_rows": same}
    for k, v in meta.items():
        table[k] = v
    table.to_csv(out / "inprocess.csv", index=False)
    print(table.groupby("mode")[["batch_wall_s", "trial_time_s"]].sum().to_string())
    print("rows the same in both modes (all but times):", same)
    return 0


if __name__ == "__main__":
    sys.exit(main())
