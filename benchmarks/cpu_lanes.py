"""Can single-threaded timed batches share a CPU-only host, one per core, without slowing down?

Runs the README main job's standard-DE batch (config/experiments/default.yaml: de/sequential, D=30,
NP=50, 300,000 FEs, 5 trials) alone, then k copies at once (k = the host's cores), in alternating
rounds, and writes each batch's mean per-trial wall time with the round's mode to a CSV: the ratio
"at once / alone" decides whether the workflow may time CPU batches in lanes on such a host.

    python benchmarks/cpu_lanes.py --rounds 3 --function F08 --out results/benchmarks/cpu_lanes_<host>.csv
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

from gpude.core.io import write_csv_atomic
from gpude.study.experiment import Batch, Experiment

ROOT = Path(__file__).resolve().parents[1]


def batch(experiment: Experiment, out: Path, function: str, trials: int, max_fes: int) -> subprocess.Popen:
    """The main job's standard-DE batch of ``function`` (``experiment``'s command line, ``max_fes`` aside)."""
    cell = Batch("de", "sequential", function, experiment.spec["dims"][0], experiment.spec["popsizes"][0],
                 experiment.spec["dtypes"][0], 0)
    spec = dataclasses.replace(experiment.run_spec(cell, 0, trials, "exclusive"), max_fes=max_fes)
    cmd = [sys.executable, "-m", "gpude", "run", *shlex.split(spec.to_args()), "--out-csv", str(out),
           "--out-traces", str(out.with_suffix(".npz"))]
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--function", default="F08")
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--max-fes", type=int, default=300_000, help="the main job's budget (smaller: a quick check)")
    ap.add_argument("--lanes", type=int, default=len(os.sched_getaffinity(0)))
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    experiment = Experiment.load(ROOT / "config" / "experiments" / "default.yaml")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for mode, k in (("alone", 1), ("at_once", args.lanes)):
                outs = [Path(tmp) / f"r{r}_{mode}_{i}.csv" for i in range(k)]
                procs = [batch(experiment, o, args.function, args.trials, args.max_fes) for o in outs]
                for p in procs:
                    _, err = p.communicate()
                    if p.returncode:
                        raise SystemExit(f"gpude run failed: {err[-2000:]}")
                for i, o in enumerate(outs):
                    t = pd.read_csv(o)
                    rows.append({"round": r, "mode": mode, "batches_at_once": k, "batch": i,
                                 "function": args.function, "max_fes": args.max_fes, "trials": len(t),
                                 "mean_trial_s": t["wall_time_s"].mean(), "cpu": t["cpu"].iloc[0],
                                 "host_cores": len(os.sched_getaffinity(0)), "python": platform.python_version(),
                                 "git_commit": t["git_commit"].iloc[0] if "git_commit" in t else ""})
    df = pd.DataFrame(rows)
    write_csv_atomic(df, args.out)
    alone = df[df["mode"] == "alone"]["mean_trial_s"].mean()
    both = df[df["mode"] == "at_once"]["mean_trial_s"].mean()
    print(df.to_string(index=False))
    print(f"mean trial: alone {alone:.3f} s, {args.lanes} at once {both:.3f} s: ratio {both / alone:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
