"""Lastra et al.'s profile (Tables 13-14): the share of a MA-SW-Chains run's time per module.

One profiled run (``profile=True``: :mod:`gpude.implementations.masw_profile`) per D, as the paper
made one: ``masw/sequential`` (``--device cpu``; the paper's D: 1e5 and 5e5) or ``masw/gpu``
(``--device gpu``; 1e5, 5e5 and 1e6), of L01 (shifted Rastrigin: the paper does not say which
function it profiled; Rastrigin is its first). Population size, FE budget, floating type, target and
seed are the experiment's (``--experiment``, default ``config/experiments/lastra.yaml``; the seed is
that of the cell's trial 0, :func:`gpude.core.rng.trial_seed`), read through :mod:`gpude.study.experiment`.
``--max-fes`` runs fewer FEs than the experiment's (a sample of the run: its cycles cost alike, so
the shares are the full run's but for the initial population's); each row says its FEs.

Each run compiles first (a warm-up trial, untimed), then runs once. A row per (run, module): the
module's seconds and its share of the run's wall time (``other``: the wall time no module holds), the
run's wall time, FEs, best error and options, the host's load average before and after (other
processes share a CPU run's cores and memory), and the provenance (:func:`gpude.core.provenance.record`).
The rows go to ``<out>/<device>_<machine>.csv`` (merged with the file's rows of other (D, function,
FEs, variant)), written after each run.

    python benchmarks/lastra_profile.py --device cpu --dims 100000 --out results/benchmarks/lastra_profile
    python benchmarks/lastra_profile.py --device gpu --out results/benchmarks/lastra_profile
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: the D of the paper's Table 13 (CPU) and Table 14 (GPU)
PAPER_DIMS = {"cpu": (100_000, 500_000), "gpu": (100_000, 500_000, 1_000_000)}
IMPLEMENTATION = {"cpu": "sequential", "gpu": "gpu"}
FUNCTION = "L01"
EXPERIMENT = REPO / "config" / "experiments" / "lastra.yaml"
#: a run's rows are replaced by a later run of the same key
KEY = ("device", "dim", "function", "max_fes", "variant")
PROVENANCE = ("gpu", "cpu", "cpu_cores", "host", "boot_id", "python", "numpy", "numba", "numba_cuda", "gpude",
              "git_commit", "timestamp_utc")
COLUMNS = ("device", "dim", "function", "module", "seconds", "share", "wall_time_s", "fes_used", "max_fes",
           "popsize", "dtype", "seed", "best_error", "implementation", "variant", "options", "load_1min_before",
           "load_1min_after") + PROVENANCE


def settings(experiment_path, function: str, dim: int) -> dict:
    """What the experiment fixes for one (function, D) run of MA-SW-Chains: popsize, max_fes, dtype,
    target, seed (trial 0's) and the algorithm's parameters."""
    from gpude.core.rng import trial_seed
    from gpude.study import experiment as ex

    e = ex.load_experiment(str(experiment_path))
    popsize = int(ex.popsizes_of(e, "masw")[0])
    return dict(popsize=popsize, max_fes=ex.max_fes(e, dim), dtype=e["dtypes"][0], target=float(e["target"]),
                seed=trial_seed(int(e["seed"]), function, dim, popsize, 0),
                params=ex.algorithm_params(e["algorithms"]["masw"]))


def profile_run(device: str, function: str, dim: int, experiment_path=EXPERIMENT, max_fes: int | None = None,
                options: dict | None = None) -> list[dict]:
    """One profiled run (after a warm-up): its rows, a module each and ``other``."""
    from gpude.core import provenance
    from gpude.implementations.masw_profile import shares
    from gpude.run.trial import make_runner

    s = settings(experiment_path, function, dim)
    budget = s["max_fes"] if max_fes is None else int(max_fes)
    options = dict(options or {})
    if device == "gpu":
        options.setdefault("quiet", True)
    load_before = os.getloadavg()[0]
    runner = make_runner("masw", IMPLEMENTATION[device], function, dim, s["popsize"], budget, dtype=s["dtype"],
                         target=s["target"], profile=True, **s["params"], **options)
    result = runner.run(s["seed"])
    load_after = os.getloadavg()[0]
    module_s = result.info["module_s"]
    fractions = shares(module_s, result.wall_time_s)
    prov = provenance.record(uses_gpu=device == "gpu")
    variant = ",".join(f"{k}={v}" for k, v in sorted(options.items()) if k != "quiet") or "default"
    common = dict(device=device, dim=dim, function=function, wall_time_s=result.wall_time_s,
                  fes_used=result.fes_used, max_fes=budget, popsize=s["popsize"], dtype=s["dtype"], seed=s["seed"],
                  best_error=result.best_error, implementation=f"masw/{IMPLEMENTATION[device]}", variant=variant,
                  options=json.dumps(result.info.get("options", {}), sort_keys=True),
                  load_1min_before=load_before, load_1min_after=load_after,
                  **{k: prov.get(k, "") for k in PROVENANCE})
    rows = []
    for module, share in sorted(fractions.items(), key=lambda kv: -kv[1]):
        seconds = module_s.get(module, result.wall_time_s * share)
        rows.append({**common, "module": module, "seconds": seconds, "share": share})
    return rows


def output_path(out: Path, device: str, rows: list[dict]) -> Path:
    """``<out>/<device>_<machine>.csv``: the GPU's name, or the CPU's, made file-name safe."""
    from gpude.core.provenance import slug

    return Path(out) / f"{device}_{slug(rows[0]['gpu'] if device == 'gpu' else rows[0]['cpu'])}.csv"


def merge(path: Path, rows: list[dict]):
    """The file's rows with those of ``rows``' runs replaced (:data:`KEY`), written atomically."""
    import pandas as pd

    from gpude.core.io import replace_rows, write_csv_atomic

    new = replace_rows(path, pd.DataFrame(rows, columns=list(COLUMNS)), KEY)
    new = new.sort_values(["device", "dim", "max_fes", "variant", "share"], ascending=[True, True, True, True, False],
                          kind="stable", ignore_index=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_csv_atomic(new, path)
    return path


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", choices=("cpu", "gpu"), required=True)
    p.add_argument("--out", type=Path, required=True, help="the folder of the CSV")
    p.add_argument("--dims", default="", help="comma-separated D (default: the paper's for the device)")
    p.add_argument("--function", default=FUNCTION)
    p.add_argument("--experiment", type=Path, default=EXPERIMENT)
    p.add_argument("--max-fes", type=int, default=None, help="fewer FEs than the experiment's (a sample of the run)")
    p.add_argument("--ls-mode", choices=("fused", "steps"), default=None,
                   help="masw/gpu's local search (default: its own default for the function and D)")
    args = p.parse_args(argv)
    if args.ls_mode and args.device != "gpu":
        p.error("--ls-mode is masw/gpu's option")
    if args.device == "gpu":
        from numba import cuda  # noqa: F401  (so that the provenance names the GPU)
    dims = [int(float(d)) for d in args.dims.split(",") if d] or list(PAPER_DIMS[args.device])
    options = {"ls_mode": args.ls_mode} if args.ls_mode else {}
    for dim in dims:
        rows = profile_run(args.device, args.function, dim, args.experiment, args.max_fes, options)
        path = merge(output_path(args.out, args.device, rows), rows)
        print(f"{args.device} D={dim:,} {rows[0]['fes_used']:,} FEs in {rows[0]['wall_time_s']:.1f} s -> {path}: "
              + ", ".join(f"{r['module']} {r['share']:.1%}" for r in rows), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
