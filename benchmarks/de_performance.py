"""Wall time of the five DE implementations in the setting of Janssen et al.'s case study 1.

D=100, NP=250, F=0.5, CR=0.3, 10,000,000 FEs, target 1e-8. Each (implementation,
function, dtype) is warmed up (JIT) once, then run for ``--trials`` seeds; one row
per trial goes to ``results/benchmarks/de_<gpu>_<tag>.csv`` with the device,
versions and commit. ``benchmarks/de_performance_summary.py`` puts the rows
beside the anchors (the authors' own code on an H200) as ratios.

    python benchmarks/de_performance.py --implementations ide,all_gpu --functions all \\
        --dtypes float32,float64 --trials 3 --tag gpu
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]

from numba import cuda  # noqa: E402,F401  (so the provenance names the GPU)

from gpude.core import provenance  # noqa: E402
from gpude.core.io import write_csv_atomic  # noqa: E402
from gpude.functions import list_functions  # noqa: E402
from gpude.run.trial import make_runner  # noqa: E402

SETTING = dict(dim=100, popsize=250, F=0.5, CR=0.3, max_fes=10_000_000)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--implementations", required=True)
    p.add_argument("--functions", default="all")
    p.add_argument("--dtypes", default="float32,float64")
    p.add_argument("--trials", type=int, default=3)
    p.add_argument("--max-fes", type=int, default=SETTING["max_fes"])
    p.add_argument("--option", action="append", default=[], help="implementation option key=int")
    p.add_argument("--tag", required=True, help="suffix of the output file")
    p.add_argument("--out", default=str(ROOT / "results" / "benchmarks"))
    args = p.parse_args(argv)

    fids = list_functions()[:10] if args.functions == "all" else args.functions.split(",")
    options = {k: int(v) for k, v in (o.split("=") for o in args.option)}
    rows = []
    prov = provenance.record()
    name = provenance.slug(prov["gpu"] if prov["gpu"] != "none" else prov["cpu"])
    out = Path(args.out) / f"de_{name}_{args.tag}.csv"
    for impl in args.implementations.split(","):
        for dtype in args.dtypes.split(","):
            for fid in fids:
                kw = {**SETTING, "max_fes": args.max_fes}
                opts = {k: v for k, v in options.items()
                        if (k in ("members_per_block", "poll_every") and impl in ("ide", "all_gpu"))
                        or (k == "workers" and impl == "master_slave")}
                if impl == "ide":
                    opts["quiet"] = False
                t0 = time.perf_counter()
                try:
                    runner = make_runner("de", impl, fid, kw.pop("dim"), kw.pop("popsize"),
                                         kw.pop("max_fes"), dtype=dtype, **kw, **opts)
                except Exception as exc:  # keep going: a failed configuration is a row
                    print(f"{impl} {dtype} {fid}: FAILED {type(exc).__name__}: {exc}", flush=True)
                    rows.append(dict(implementation=impl, function=fid, dtype=dtype,
                                     status=f"error:{type(exc).__name__}: {exc}"[:300]))
                    continue
                setup = time.perf_counter() - t0
                print(f"{impl} {dtype} {fid}: setup {setup:.2f} s, pre-bound launches: "
                      f"{getattr(runner, 'prebound', 'n/a')}", flush=True)
                for trial in range(args.trials):
                    r = runner.run(trial)
                    rows.append(dict(
                        implementation=impl, function=fid, dtype=dtype, trial=trial, seed=trial,
                        dim=r.dim, popsize=r.popsize, max_fes=r.params.max_fes, F=r.params.F,
                        CR=r.params.CR, wall_time_s=r.wall_time_s, best_error=r.best_error,
                        fes_used=r.fes_used, hit_target=r.hit_target, setup_time_s=setup,
                        prebound=r.info.get("prebound"), options=str(r.info.get("options", opts)),
                        launch=getattr(getattr(runner, "launch_config", None), "describe", lambda: "")(),
                        status="target" if r.hit_target else "budget",
                    ))
                    print(f"{impl:13s} {dtype} {fid} trial {trial}: {r.wall_time_s:8.3f} s  "
                          f"best {r.best_error:.4g}  fes {r.fes_used}", flush=True)
                # write after every configuration so a time-out keeps what finished
                write_csv_atomic(pd.DataFrame(rows).assign(**prov), out)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
