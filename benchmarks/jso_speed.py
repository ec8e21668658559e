"""Our GPU-batched jSO per run: ``jso/block`` with ``--trials`` runs in one launch (the CEC protocol's 51),
the whole budget (10,000 D FEs) on the GPU host, written as one CSV row per (function, D).

Each cell is launched once to compile and warm (its own process's first launch) and then timed
``--repeats`` times; ``launch_s`` is the fastest batch wall time (the batch's rows' wall times add up to
it), ``per_run_s`` = launch_s / trials. The target is 0, so that a run goes on to its last FE as
Brest's code does (errors below 1e-8 count as 0 in its comparisons, the rows say how many FEs ran).
Brest's per-run times come from ``benchmarks/jso_brest_runs.py speed`` (one core); the REPORT's cec2017_jso
section sets the two side by side (``gpude.report.cec2017_jso.speed_table``: ratio = Brest's median seconds a
run / ours; study inputs ``speed_ours``, ``speed_brest``).

    python benchmarks/jso_speed.py --out OUT.csv [--functions CEC17_F05,...] [--dims 30,100] [--trials 51,132]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from gpude.algorithms.jso import jso_popsize
from gpude.core import provenance
from gpude.core.io import write_csv_atomic
from gpude.run.trial import make_runner


def cell(function: str, dim: int, trials: int, repeats: int, algorithm: str = "jso") -> dict:
    np_init = jso_popsize(dim)
    runner = make_runner(algorithm, "block", function, dim, np_init, 10_000 * dim, target=0.0,
                         trials_per_launch=trials)
    seeds = list(range(1, trials + 1))
    t0 = time.perf_counter()
    runner.run_batch(seeds)  # compiles and warms
    first = time.perf_counter() - t0
    walls, results = [], None
    for _ in range(repeats):
        results = runner.run_batch(seeds)
        walls.append(sum(r.wall_time_s for r in results))
    launch = min(walls)
    return {"algorithm": algorithm, "implementation": "block", "function": function, "dim": dim, "popsize": np_init,
            "max_fes": 10_000 * dim, "trials": trials, "first_batch_s": round(first, 4), "launch_s": launch,
            "launch_s_all": " ".join(f"{w:.5f}" for w in walls), "per_run_s": launch / trials,
            "fes_used_min": min(r.fes_used for r in results),
            "median_error": float(np.median([r.best_error for r in results])),
            "warps": runner.threads // 32}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--functions", default="CEC17_F01,CEC17_F05,CEC17_F10,CEC17_F20,CEC17_F30")
    ap.add_argument("--dims", default="30,100")
    ap.add_argument("--trials", default="51", help="runs a launch, comma-separated (51: the CEC protocol's; 132: "
                    "a block an SM of an H100 or H200)")
    ap.add_argument("--repeats", type=int, default=2)
    a = ap.parse_args(argv)
    import pandas as pd

    rows = []
    for dim in (int(d) for d in a.dims.split(",")):
        for function in a.functions.split(","):
            for trials in (int(t) for t in a.trials.split(",")):
                r = cell(function, dim, trials, a.repeats)
                r.update(provenance.record(uses_gpu=True))  # after the cell: the process has its CUDA context
                print({k: r[k] for k in ("function", "dim", "trials", "launch_s", "per_run_s", "first_batch_s",
                                         "fes_used_min", "median_error", "warps")}, flush=True)
                rows.append(r)
                write_csv_atomic(pd.DataFrame(rows), a.out)  # after every cell: a call cut short keeps them
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
