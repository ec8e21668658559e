"""Brest's jSO reference runs and per-run speed, on a many-core host (g++ and Python 3; no Snakemake).

Two modes, from the repository root, with ``src`` on PYTHONPATH (a GPU host: after ``source
.whl-slim/activate.sh .whl-slim``) and Brest's pinned tree in ``.authors/jso`` (git-ignored: `python -m
gpude.implementations.jso_brest pack`, carried to the host):

``runs``: the 29 CEC 2017 functions (F1, F3..F30) x D in {10, 30} x 51 runs, each run one call of
Brest's code through its program spec (``config/programs/jso_brest.yaml``: jso/brest) by ``gpude run``
processes (the rows are gpude trial rows: every one names the host's CPU, cores, host name and boot),
seeds ``gpude.core.rng.trial_seed(SEED, cec17_fNN, D, NP, trial)`` like every gpude trial, NP jSO's own
(182 at D=10, 466 at D=30), MaxFES 10000 D. The cells, in chunks of ``--chunk`` trials, run on
``--jobs`` lanes (default: the host's cores less one), each lane one single-threaded run at a time;
rows say ``concurrency`` ``exclusive-cpu:<lanes>``. Then ``gpude merge`` makes ``OUT/trials.csv`` and
``OUT/traces.npz`` of the batches (``OUT/batches/``)::

    python3 benchmarks/jso_brest_runs.py runs --out results/jso_brest_runs [--dims 10,30] [--jobs N]

``speed``: wall time per run of Brest's code (our driver's clock around their run) at D = 30 and 100
on one core (pinned with ``taskset`` where there is one), F1, F5, F10, F20, F30, 3 runs each, one after
another, into a CSV that names the host's CPU model, cores, compiler and flags::

    python3 benchmarks/jso_brest_runs.py speed --out results/benchmarks/jso_brest_speed_<host>.csv

Both build first (g++ only; once per tree hash in the program cache) and take their data from
data/cec/cec2017 (a missing file stops them with its name; ``GPUDE_DATA_DIR`` points elsewhere).
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
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from gpude.core import provenance  # noqa: E402
from gpude.implementations import jso_brest as jb  # noqa: E402

PROGRAMS = ROOT / "config" / "programs" / "jso_brest.yaml"
SOURCE = ROOT / ".authors" / "jso"


def ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def check_data(functions, dims) -> None:
    """Every data file the runs need, checked before any run (a missing one named)."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        jb.fill_data(Path(tmp), functions, dims)


def runs(args) -> int:
    functions, dims = ints(args.functions), ints(args.dims)
    if not args.dry_run:
        check_data(functions, dims)
        jb.check_source(SOURCE)
    out = Path(args.out)
    batches = out / "batches"
    batches.mkdir(parents=True, exist_ok=True)
    lanes = args.jobs or max(1, (os.cpu_count() or 2) - 1)
    jobs = []
    for dim in dims:
        np_init = jb.jso_popsize(dim)
        for f in functions:
            name = f"cec17_f{f:02d}"
            for first in range(0, args.trials, args.chunk):
                n = min(args.chunk, args.trials - first)
                stem = batches / f"{name}_d{dim}_t{first}"
                if (stem.with_suffix(".csv")).is_file():
                    continue  # (a second call goes on where the first stopped)
                jobs.append((stem, [sys.executable, "-m", "gpude", "run", "--plugin", "gpude.implementations.jso_brest",
                                    "--programs", str(PROGRAMS), "--algorithm", "jso", "--implementation", "brest",
                                    "--function", name, "--dim", str(dim), "--popsize", str(np_init),
                                    "--max-fes", str(10000 * dim), "--seed", str(args.seed), "--trials", str(n),
                                    "--first-trial", str(first), "--suite", args.suite,
                                    "--concurrency", f"exclusive-cpu:{lanes}", "--keep-failed",
                                    "--out-csv", str(stem.with_suffix(".csv")),
                                    "--out-traces", str(stem.with_suffix(".npz"))]))
    # slowest first (D = 30 before D = 10), so that the lanes end together
    jobs.sort(key=lambda j: -int(j[0].name.split("_d")[1].split("_")[0]))
    print(f"{len(jobs)} batches on {lanes} lanes ({provenance.cpu()['cpu']}, {os.cpu_count()} cores)", flush=True)
    if args.dry_run:
        for _, cmd in jobs:
            print(" ".join(cmd[1:]))
        return 0
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")]))}
    t0 = time.time()

    def one(job):
        stem, cmd = job
        done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
        stem.with_suffix(".log").write_text(done.stdout + done.stderr)
        last = (done.stderr.strip().splitlines() or [""])[-1]
        print(f"[{time.time() - t0:7.0f} s] {stem.name}: exit {done.returncode}: {last[:160]}", flush=True)
        return done.returncode

    with ThreadPoolExecutor(lanes) as pool:
        failed = sum(rc != 0 for rc in pool.map(one, jobs))
    made = sorted(str(p) for p in batches.glob("*.csv"))
    if made:
        subprocess.run([sys.executable, "-m", "gpude", "merge", "--out", str(out / "trials.csv"),
                        "--traces-out", str(out / "traces.npz"), *made], cwd=ROOT, env=env, check=False)
    print(f"{len(jobs) - failed}/{len(jobs)} batches ran in {time.time() - t0:.0f} s; {len(made)} batch tables -> "
          f"{out / 'trials.csv'}", flush=True)
    return 1 if failed else 0


def speed(args) -> int:
    from gpude.core.rng import trial_seed

    functions, dims = ints(args.functions), ints(args.dims)
    check_data(functions, dims)
    build_dir = Path(args.build)
    exe = jb.build(SOURCE, build_dir, echo=False)
    jb.fill_data(build_dir, functions, dims)
    pin = ["taskset", "-c", str(args.core)] if shutil.which("taskset") else []
    gxx = subprocess.run(["g++", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    rows, machine = [], provenance.cpu()
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
                rows.append({"function": name, "dim": dim, "popsize": np_init, "max_fes": last["fes"], "run": t,
                             "seed": seed, "best_error": last["best_error"], "time_s": last["time_s"],
                             "process_wall_s": round(wall, 6), "pinned_core": args.core if pin else "",
                             "cpu": machine["cpu"], "cpu_cores": machine["cpu_cores"], "host": machine["host"],
                             "compiler": gxx, "cxx_flags": jb.CXX_FLAGS, "source_sha256": jb.SOURCE_SHA256,
                             "brest_commit": jb.BREST_COMMIT[:7],
                             "timestamp_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
                print(f"{name} D={dim} run {t}: {last['time_s']:.3f} s, error {last['best_error']:.6g}", flush=True)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {out} ({len(rows)} runs)")
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="mode", required=True)
    r = sub.add_parser("runs", help="29 functions x dims x 51 runs as gpude trial tables")
    r.add_argument("--out", default="results/jso_brest_runs")
    r.add_argument("--dims", default="10,30")
    r.add_argument("--functions", default=",".join(map(str, jb.FUNCTIONS)))
    r.add_argument("--trials", type=int, default=51)
    r.add_argument("--chunk", type=int, default=17, help="trials per gpude run process (default 17: 3 per cell)")
    r.add_argument("--jobs", type=int, default=0, help="lanes (default: the cores less one)")
    r.add_argument("--seed", type=int, default=20261127, help="the experiment seed the trial seeds derive from")
    r.add_argument("--suite", default="jso_brest_reference")
    r.add_argument("--dry-run", action="store_true", help="print the gpude run command lines, run nothing")
    s = sub.add_parser("speed", help="per-run wall time on one core")
    s.add_argument("--out", default=f"results/benchmarks/jso_brest_speed_{platform.node() or 'host'}.csv")
    s.add_argument("--dims", default="30,100")
    s.add_argument("--functions", default="1,5,10,20,30")
    s.add_argument("--runs", type=int, default=3)
    s.add_argument("--core", type=int, default=1, help="the core taskset pins the runs to")
    s.add_argument("--seed", type=int, default=20261127)
    s.add_argument("--build", default=str(Path(os.environ.get("TMPDIR", "/tmp")) / "jso_brest_speed"))
    args = p.parse_args(argv)
    try:
        return runs(args) if args.mode == "runs" else speed(args)
    except jb.GpudeError as exc:
        print(f"jso_brest_runs: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
