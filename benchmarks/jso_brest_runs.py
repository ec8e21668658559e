"""Brest's jSO per-run speed on one core of a host (g++ and Python 3; no Snakemake).

From the repository root, with ``src`` on PYTHONPATH (a GPU host: after ``source
.whl-slim/activate.sh .whl-slim``) and Brest's pinned tree in ``.authors/jso`` (git-ignored: `python -m
gpude.implementations.jso_brest pack`, carried to the host).

``speed``: wall time per run of Brest's code (our driver's clock around their run) at D = 30 and 100
on one core (pinned with ``taskset`` where there is one), F1, F5, F10, F20, F30, 3 runs each, one after
another, into a CSV that names the host's CPU model, cores, compiler and flags::

    python3 benchmarks/jso_brest_runs.py speed --out results/benchmarks/jso_brest_speed_<host>.csv

``host``: the whole host at once, as a user running Brest's code on a CPU host would: for each (function,
D), ``--lanes`` runs side by side (default: every core this process may use), each process pinned to its
own core, seeds as ``speed``'s; each row has its run's time (``time_s``, the driver's clock around his run;
``process_wall_s`` runs until the process was waited for, in lane order) and the batch's wall time
(``batch_wall_s``: the first start to the last end), so that a host's seconds a run are
``batch_wall_s / lanes``; ``--batches K`` makes K such batches a cell, one after another (``batch``: 0 to
K - 1; batch k's runs take the seeds of trials k lanes to (k + 1) lanes - 1), for an interval::

    python3 benchmarks/jso_brest_runs.py host --out results/benchmarks/jso_brest_host_<host>.csv

It builds first (g++ only; once per tree hash in the program cache) and takes its data from
data/cec/cec2017 (a missing file stops it with its name; ``GPUDE_DATA_DIR`` points elsewhere).
Brest's reference runs are a campaign:
``python -m gpude.campaign run --experiment config/experiments/cec2017_jso.yaml --implementations brest``
(``benchmarks/gpu_checks.sh jso_brest``).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

from gpude.core import provenance
from gpude.implementations import jso_brest as jb

ROOT = Path(__file__).resolve().parents[1]

SOURCE = ROOT / ".authors" / "jso"


def ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def check_data(functions, dims) -> None:
    """Every data file the runs need, checked before any run (a missing one named)."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        jb.fill_data(Path(tmp), functions, dims)


def prepare(args):
    """(functions, dims, executable, build folder, taskset or None, compiler line, machine)."""
    functions, dims = ints(args.functions), ints(args.dims)
    check_data(functions, dims)
    build_dir = Path(args.build)
    exe = jb.build(SOURCE, build_dir, echo=False)
    jb.fill_data(build_dir, functions, dims)
    gxx = subprocess.run(["g++", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    return functions, dims, exe, build_dir, shutil.which("taskset"), gxx, provenance.cpu()


def row(name, dim, np_init, t, seed, last, wall, core, gxx, machine) -> dict:
    return {"function": name, "dim": dim, "popsize": np_init, "max_fes": last["fes"], "run": t, "seed": seed,
            "best_error": last["best_error"], "time_s": last["time_s"], "process_wall_s": round(wall, 6),
            "pinned_core": core, "cpu": machine["cpu"], "cpu_cores": machine["cpu_cores"], "host": machine["host"],
            "boot_id": machine.get("boot_id", ""), "compiler": gxx, "cxx_flags": jb.CXX_FLAGS,
            "source_sha256": jb.SOURCE_SHA256,
            "brest_commit": jb.BREST_COMMIT[:7], "timestamp_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def write_rows(rows, out) -> None:
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {out} ({len(rows)} runs)")


def speed(args) -> int:
    from gpude.core.rng import trial_seed

    functions, dims, exe, build_dir, taskset, gxx, machine = prepare(args)
    pin = [taskset, "-c", str(args.core)] if taskset else []
    rows = []
    for dim in dims:
        np_init = jb.jso_popsize(dim)
        for f in functions:
            name = f"cec17_f{f:02d}"
            for t in range(args.runs):
                seed = trial_seed(args.seed, name, dim, np_init, t)
                t0 = time.perf_counter()
                done = subprocess.run([*pin, str(exe), "--function", name, "--dim", str(dim), "--seed", str(seed)],
                                      cwd=build_dir, capture_output=True, text=True)
                wall = time.perf_counter() - t0
                if done.returncode != 0:
                    print(f"{name} D={dim} run {t}: exit {done.returncode}: {done.stderr.strip()}", file=sys.stderr)
                    return 1
                last = json.loads(done.stdout.strip().splitlines()[-1])
                rows.append(row(name, dim, np_init, t, seed, last, wall, args.core if pin else "", gxx, machine))
                print(f"{name} D={dim} run {t}: {last['time_s']:.3f} s, error {last['best_error']:.6g}", flush=True)
    write_rows(rows, args.out)
    return 0


def host(args) -> int:
    if args.batches < 1:
        raise jb.GpudeError(f"--batches {args.batches}: give 1 or more batches a cell")
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else list(range(os.cpu_count() or 1))
    lanes = args.lanes or len(cores)
    if not 0 < lanes <= len(cores):
        raise jb.GpudeError(f"--lanes {lanes}: this process may use {len(cores)} core(s); give 1 to {len(cores)}")
    functions, dims, exe, build_dir, taskset, gxx, machine = prepare(args)
    rows = []
    for dim in dims:
        np_init = jb.jso_popsize(dim)
        for f in functions:
            name = f"cec17_f{f:02d}"
            for k in range(args.batches):
                if one_batch(name, dim, np_init, k, lanes, cores, exe, build_dir, taskset, gxx, machine, args, rows):
                    return 1
    write_rows(rows, args.out)
    return 0


def one_batch(name, dim, np_init, k, lanes, cores, exe, build_dir, taskset, gxx, machine, args, rows) -> int:
    """Batch ``k`` of a cell: ``lanes`` runs side by side, a core each; its rows appended to ``rows``
    (1 where a run failed, after saying which)."""
    from gpude.core.rng import trial_seed

    seeds = [trial_seed(args.seed, name, dim, np_init, k * lanes + t) for t in range(lanes)]
    t0 = time.perf_counter()
    procs = [subprocess.Popen([*([taskset, "-c", str(cores[t])] if taskset else []), str(exe), "--function",
                               name, "--dim", str(dim), "--seed", str(seeds[t])], cwd=build_dir,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for t in range(lanes)]
    outs, ends = [], []
    for proc in procs:
        outs.append(proc.communicate())
        ends.append(time.perf_counter())
    batch = max(ends) - t0  # (a process that ended before an earlier one was waited for: no matter)
    for t, (proc, (stdout, stderr)) in enumerate(zip(procs, outs)):
        if proc.returncode != 0:
            print(f"{name} D={dim} lane {t}: exit {proc.returncode}: {stderr.strip()}", file=sys.stderr)
            return 1
        last = json.loads(stdout.strip().splitlines()[-1])
        rows.append({**row(name, dim, np_init, k * lanes + t, seeds[t], last, ends[t] - t0,
                           cores[t] if taskset else "", gxx, machine), "lanes": lanes, "batch": k,
                     "batch_wall_s": batch})
    print(f"{name} D={dim} batch {k}: {lanes} runs side by side in {batch:.3f} s ({batch / lanes:.4f} s a run, "
          "host)", flush=True)
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="mode", required=True)
    s = sub.add_parser("speed", help="per-run wall time on one core")
    s.add_argument("--out", default=f"results/benchmarks/jso_brest_speed_{platform.node() or 'host'}.csv")
    s.add_argument("--dims", default="30,100")
    s.add_argument("--functions", default="1,5,10,20,30")
    s.add_argument("--runs", type=int, default=3)
    s.add_argument("--core", type=int, default=1, help="the core taskset pins the runs to")
    s.add_argument("--seed", type=int, default=20261127)
    s.add_argument("--build", default=str(Path(os.environ.get("TMPDIR", "/tmp")) / "jso_brest_speed"))
    h = sub.add_parser("host", help="runs side by side on every core of the host")
    h.add_argument("--out", default=f"results/benchmarks/jso_brest_host_{platform.node() or 'host'}.csv")
    h.add_argument("--dims", default="30,100")
    h.add_argument("--functions", default="1,5,10,20,30")
    h.add_argument("--lanes", type=int, default=0, help="runs side by side (default: every core this process may use)")
    h.add_argument("--batches", type=int, default=1, help="batches a cell, one after another (an interval: 3)")
    h.add_argument("--seed", type=int, default=20261127)
    h.add_argument("--build", default=str(Path(os.environ.get("TMPDIR", "/tmp")) / "jso_brest_speed"))
    args = p.parse_args(argv)
    try:
        return speed(args) if args.mode == "speed" else host(args)
    except jb.GpudeError as exc:
        print(f"jso_brest_runs: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
