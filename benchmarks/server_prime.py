"""What a batch server's first GPU batch pays before its first trial, and how much of it a server could pay
at its start, before any batch (and any lease): a probe for issue 66's warm first trial.

Per GPU implementation of the main job (config/experiments/default.yaml: naive_gpu, all_gpu, ide; F01,
D 30, NP 50), after a ``gpude warmup`` has filled numba's cache, three fresh processes, each as a server
would run its first batch:

* ``cold``: the batch's imports (``gpude.run.batches``), then its runner built and warmed (the batch logs'
  ``setup``), each timed; the modules the setup imported are written down;
* ``primed``: those modules imported first (what a server could do at its start), then the setup, timed;
* ``primed_context``: the same, and the CUDA context made before the setup too;
* ``primed_server``: what a batch server imports at its start (``gpude.run.batch_server.prime``), then the
  setup.

Rows: seconds of each step and the setup that is left for the batch (its lease to its first trial).

    python benchmarks/server_prime.py --out results/benchmarks/server_prime_<device>.csv
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
IMPLEMENTATIONS = ("naive_gpu", "all_gpu", "ide")

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
mode, args, listing = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
from gpude.run import batches  # the server's import at its first batch
from gpude.run.spec import RunSpec, run_parser
t_import = time.perf_counter() - t0
prime = context = 0.0
if mode in ("primed", "primed_context"):
    import importlib
    t = time.perf_counter()
    for name in json.load(open(listing)):
        try:
            importlib.import_module(name)
        except Exception:
            pass
    prime = time.perf_counter() - t
if mode == "primed_server":
    from gpude.run import batch_server
    t = time.perf_counter()
    batch_server.prime()
    prime = time.perf_counter() - t
if mode == "primed_context":
    from numba import cuda
    t = time.perf_counter()
    cuda.current_context()
    context = time.perf_counter() - t
spec = RunSpec.from_namespace(run_parser().parse_args(args))
before = set(sys.modules)
t = time.perf_counter()
spec.make_runner()
setup = time.perf_counter() - t
if mode == "cold":
    json.dump(sorted(set(sys.modules) - before), open(listing, "w"))
print(json.dumps({"import_s": t_import, "prime_s": prime, "context_s": context, "setup_s": setup,
                  "modules_in_setup": len(set(sys.modules) - before)}))
"""


def run_args(implementation: str) -> list[str]:
    return ["--implementation", implementation, "--function", "F01", "--dim", "30", "--popsize", "50",
            "--max-fes", "300000"]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--modes", default="cold,primed,primed_context,primed_server",
                   help="comma-separated, in order (cold first: it lists the modules the primed modes import)")
    args = p.parse_args(argv)
    from gpude.core import provenance

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "NUMBA_CACHE_DIR": str(Path(tmp) / "cache")}
        for implementation in IMPLEMENTATIONS:
            subprocess.run([sys.executable, "-m", "gpude", "warmup", *run_args(implementation)], check=True,
                           cwd=REPO, env=env, capture_output=True, timeout=600)
            listing = Path(tmp) / f"{implementation}.json"
            for repeat in range(args.repeats):
                for mode in args.modes.split(","):
                    res = subprocess.run([sys.executable, "-c", CHILD, mode, json.dumps(run_args(implementation)),
                                          str(listing)], cwd=REPO, env=env, capture_output=True, text=True,
                                         timeout=600)
                    if res.returncode != 0:
                        raise SystemExit(f"{implementation} {mode} failed:\n{res.stderr[-3000:]}")
                    r = json.loads(res.stdout.strip().splitlines()[-1])
                    rows.append({"implementation": implementation, "function": "F01", "dim": 30, "popsize": 50,
                                 "mode": mode, "repeat": repeat, **{k: round(v, 4) if isinstance(v, float) else v
                                                                     for k, v in r.items()}})
                    print(rows[-1], flush=True)
    from numba import cuda

    cuda.current_context()  # (after the children; the record reads the GPU from this process's context)
    info = provenance.record(uses_gpu=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]) + list(info))
        w.writeheader()
        for r in rows:
            w.writerow({**r, **info})
    print(f"wrote {args.out} ({len(rows)} rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
