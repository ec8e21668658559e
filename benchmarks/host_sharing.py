"""What sharing the host with other GPUs' batches does to a host-bound GPU implementation.

On a host of N GPUs, a batch timed ``exclusive`` is alone on its GPU but shares the host's cores with
the batches on the other N - 1 GPUs. A host-bound implementation (``de/all_gpu``: a kernel per
operator, launched from the host every generation, the host waiting on each) needs one core of its
own; this script measures how its time changes as K other processes keep K cores busy.

With ``--background cpu`` (any host, one GPU is enough) the K others are ``de/sequential`` runs: a
busy core each, as the host side of a GPU batch is (it launches and then spins on the GPU), without
a GPU of their own. With ``--background gpu`` (a host of K + 1 GPUs or more) they are the same
GPU batch as the one measured, each on a GPU it leases. The measured runs and the background are
interleaved over ``--rounds`` so that a drift of the machine hits every K alike.

Writes one row per measured trial to ``--out`` (atomically): K, the background kind, the trial's
wall time, and the device, host, versions and commit of the measured rows.

Not an experiment of the workflow: what it varies is the load beside a batch (K
busy processes, started and stopped around each measurement), which the workflow's timing modes exist
to keep away and no experiment key can ask for; the measured runs themselves are plain ``gpude run``
calls. It is a micro-benchmark of the timing method, as the floor and start-up ones are of DE. On a
host of several GPUs the same question goes through the workflow: an experiment run with
``--config timing=exclusive`` (every GPU busy at once) against ``timing=host`` (one batch on the
host at a time), e.g. ``config/experiments/scaling.yaml`` with ``benchmarks/workflow_on_gpu_host.sh``.

    python benchmarks/host_sharing.py --out results/benchmarks/host_sharing/nvidia-h100.csv
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from gpude.core.io import write_csv_atomic  # noqa: E402


def gpude_run(args: list[str], out_dir: Path, tag: str) -> tuple[list[str], Path]:
    csv = out_dir / f"{tag}.csv"
    return ([sys.executable, "-m", "gpude", "run", *args, "--out-csv", str(csv),
             "--out-traces", str(out_dir / f"{tag}.npz")], csv)


def background(kind: str, k: int, opts, out_dir: Path) -> list[subprocess.Popen]:
    """K processes that keep a core each busy for far longer than the measurement."""
    if kind == "cpu":
        args = ["--implementation", "sequential", "--function", opts.function, "--dim", str(opts.dim),
                "--popsize", str(opts.popsize), "--max-fes", "1e12", "--max-time-s", "3600"]
    else:
        args = ["--implementation", opts.implementation, "--function", opts.function, "--dim", str(opts.dim),
                "--popsize", str(opts.popsize), "--max-fes", "1e12", "--max-time-s", "3600"]
    procs = []
    for i in range(k):
        cmd, _ = gpude_run(args + ["--seed", str(1000 + i)], out_dir, f"bg{i}")
        procs.append(subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True))
    return procs


def wait_until_busy(procs: list[subprocess.Popen], timeout_s: float = 120.0) -> None:
    """Until every background process has started its trial (past import and compilation)."""
    deadline = time.monotonic() + timeout_s
    for proc in procs:
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line or "trials, setup" in line:
                break
        if proc.poll() is not None:
            raise RuntimeError(f"a background run ended early: {proc.stderr.read()}")
    time.sleep(1.0)  # past the first generations


def stop(procs: list[subprocess.Popen]) -> None:
    for proc in procs:
        proc.terminate()
    for proc in procs:
        proc.wait(30)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--implementation", default="all_gpu")
    p.add_argument("--function", default="F01")
    p.add_argument("--dim", type=int, default=100)
    p.add_argument("--popsize", type=int, default=250)
    p.add_argument("--max-fes", default="2e6")
    p.add_argument("--trials", type=int, default=5)
    p.add_argument("--others", default="0,1,3,7,15", help="K values: how many other processes")
    p.add_argument("--background", choices=("cpu", "gpu"), default="cpu")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--out", required=True)
    opts = p.parse_args(argv)
    others = [int(k) for k in opts.others.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        # compile everything once, so no run below pays for it
        for impl in {opts.implementation, "sequential"}:
            cmd, _ = gpude_run(["--implementation", impl, "--function", opts.function, "--dim", str(opts.dim),
                                "--popsize", str(opts.popsize), "--max-fes", str(opts.popsize * 4)], work, "warm")
            subprocess.run(cmd, check=True, capture_output=True)
        for rnd in range(opts.rounds):
            for k in others:
                procs = background(opts.background, k, opts, work)
                try:
                    wait_until_busy(procs)
                    cmd, csv = gpude_run(["--implementation", opts.implementation, "--function", opts.function,
                                          "--dim", str(opts.dim), "--popsize", str(opts.popsize),
                                          "--max-fes", str(opts.max_fes), "--trials", str(opts.trials),
                                          "--seed", "7", "--concurrency", f"beside {k} {opts.background}"],
                                         work, f"m{rnd}_{k}")
                    res = subprocess.run(cmd, capture_output=True, text=True)
                    if res.returncode:
                        raise RuntimeError(res.stderr)
                finally:
                    stop(procs)
                frame = pd.read_csv(csv).assign(others=k, background=opts.background, round=rnd)
                rows.append(frame)
                print(f"round {rnd} K={k}: median {frame.wall_time_s.median():.4f} s", flush=True)
    table = pd.concat(rows, ignore_index=True)
    keep = ["others", "background", "round", "implementation", "function", "dim", "popsize", "max_fes", "trial",
            "seed", "best_error", "wall_time_s", "gpu", "gpu_index", "gpu_uuid", "gpu_lease", "cpu", "cpu_cores",
            "host", "boot_id", "numba", "numba_cuda", "git_commit", "timestamp_utc"]
    table = table[[c for c in keep if c in table]]
    Path(opts.out).parent.mkdir(parents=True, exist_ok=True)
    write_csv_atomic(table, opts.out)
    summary = table.groupby("others")["wall_time_s"].median()
    print((summary / summary.loc[min(others)]).rename("time / alone").to_string())
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
