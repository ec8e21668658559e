"""What float32 costs on Lastra et al.'s large-scale functions: the relative difference of the
float32 evaluation (x and o rounded to float32, sums in float64, as both evaluators do) from the
float64 one, of the error f(x) - f(x*), at random points of the box and at points 1e-3 (per
coordinate, uniform) from the optimum, where the error is small and rounding matters most.

CPU evaluators (the GPU's compute the same terms; tests/test_largescale.py checks that they agree).
Writes one row per (function, D), atomically:

    python benchmarks/lastra_float32.py --out results/benchmarks/lastra_float32_error.csv
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from gpude.core import provenance
from gpude.functions import get_function
from gpude.core.io import write_csv_atomic

LASTRA = ("L01", "L02", "L03", "L04", "L05", "L06")
CEC = ("C01", "C02", "C03", "C04", "C06", "C08", "C13", "C18", "C20")


def rel_diff(f, X) -> float:
    e64 = f.evaluate(X, dtype="float64")
    e32 = f.evaluate(X, dtype="float32")
    return float(np.max(np.abs(e32 - e64) / np.abs(e64)))


def measure(fid: str, dim: int, points: int, seed: int) -> dict:
    f = get_function(fid, dim)
    rng = np.random.default_rng(seed)
    random = rng.uniform(f.lower, f.upper, (points, dim))
    near = np.clip(f.optimum + rng.uniform(-1e-3, 1e-3, (points, dim)), f.lower, f.upper)
    return {"function": fid, "dim": dim, "points": points, "rel_diff_random": rel_diff(f, random),
            "rel_diff_near": rel_diff(f, near)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    p.add_argument("--dims", default="100000,1000000", help="D for L01..L06 (CEC 2010: the first only)")
    p.add_argument("--points", type=int, default=4)
    p.add_argument("--seed", type=int, default=2015)
    args = p.parse_args(argv)
    dims = [int(d) for d in args.dims.split(",")]
    rows = [measure(fid, d, args.points, args.seed) for d in dims for fid in LASTRA]
    rows += [measure(fid, dims[0], args.points, args.seed) for fid in CEC]
    info = {**provenance.cpu(), **provenance.software(), "git_commit": provenance.git_commit()}
    frame = pd.DataFrame(rows).assign(**{k: info[k] for k in ("cpu", "numpy", "numba", "git_commit") if k in info})
    write_csv_atomic(frame, args.out)
    print(frame.to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
