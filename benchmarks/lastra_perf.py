"""Lastra et al.'s performance targets on a GPU, as ratios written to one CSV:

* **run time**: 500,000 FEs of MA-SW-Chains (masw/gpu, float64) on the D = 3,000,000 shifted
  Rastrigin (L01) against 60 s (``--trial``; one run, alone on the GPU);
* **evaluation throughput** at D = 3e6: time per evaluation of the streaming evaluator against the
  memory-bandwidth bound, bytes the evaluation must read (x and o, and the permutation P where the
  function has one) / the device's bandwidth. Two bandwidths: the specified peak (H200 4.8 TB/s,
  H100 SXM 3.35 TB/s) and the one measured here by a device-to-device copy; the target (within 2x)
  is taken against the specified peak. Measured for one row per launch (a Solis-Wets step) and 20
  (the GA step's children), with CUDA events around ``--reps`` back-to-back pre-bound launches,
  for every launch configuration of ``--threads`` x ``--blocks`` (the auto-sized one included).

Run on the GPU host (a few minutes; the trial about a minute):

    python benchmarks/lastra_perf.py --out perf.csv --trial
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from gpude.core import provenance
from gpude.core.gpu_runtime import copy_bandwidth, event_seconds
from gpude.core.io import write_csv_atomic
from gpude.functions import get_function
from gpude.report.floor import hbm_bandwidth as spec_bandwidth

TARGET_TIME_S = 60.0
TARGET_EVAL_RATIO = 2.0


def eval_rows(fid: str, dim: int, dtype: str, rows: int, threads: int, blocks: int | None, reps: int,
              X) -> dict:
    from numba import cuda

    f = get_function(fid, dim)
    ev = f.gpu_evaluator(dtype, threads=threads, blocks=blocks, max_rows=rows)
    out = cuda.device_array(rows, np.float64)
    stream = cuda.stream()
    run = ev.prebound(X, out, 0, rows, stream)
    for _ in range(3):
        run()
    stream.synchronize()
    per_launch = event_seconds(run, reps, stream) / reps
    # agreement with the CPU evaluator on the rows just evaluated (a fast kernel that is wrong is no result)
    host = X.copy_to_host()[:rows]
    cpu = f.evaluate(host, dtype=dtype)
    rel = float(np.max(np.abs(out.copy_to_host() - cpu) / np.maximum(np.abs(cpu), 1e-300)))
    itemsize = np.dtype(dtype).itemsize
    o, perm, has_perm, M, m = f.evaluator_args(np.dtype(dtype).type)
    nbytes = 2 * dim * itemsize + (dim * perm.itemsize if has_perm else 0) + (M.nbytes if m else 0)
    return {"function": fid, "dim": dim, "dtype": dtype, "rows": rows, "threads": threads, "blocks": ev.blocks,
            "auto": blocks is None, "us_per_launch": per_launch * 1e6, "us_per_eval": per_launch / rows * 1e6,
            "bytes_per_eval": nbytes, "rel_diff_cpu": rel}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    p.add_argument("--functions", default="L01,L02,L03,L04,L05,L06,C04,C18")
    p.add_argument("--dim", type=int, default=3_000_000)
    p.add_argument("--dtypes", default="float64,float32")
    p.add_argument("--rows", default="1,20")
    p.add_argument("--threads", default="128,256,512")
    p.add_argument("--blocks", default="auto,528,2112,4224", help="blocks per row ('auto': the evaluator's choice)")
    p.add_argument("--reps", type=int, default=100)
    p.add_argument("--copy-bytes", type=int, default=1 << 30, help="size of the bandwidth probe's copy")
    p.add_argument("--trial", action="store_true", help="also time one MA-SW-Chains run on L01 at --dim")
    p.add_argument("--trial-fes", type=int, default=500_000)
    args = p.parse_args(argv)
    from numba import cuda

    gpu = provenance.gpu()["gpu"]
    spec, copy_bw = spec_bandwidth(gpu), copy_bandwidth(args.copy_bytes)
    print(f"{gpu}: specified {spec / 1e12:.2f} TB/s, device-to-device copy {copy_bw / 1e12:.2f} TB/s", flush=True)
    rows_max = max(int(r) for r in args.rows.split(","))
    results = []
    for dtype in args.dtypes.split(","):
        rng = np.random.default_rng(2015)
        X = cuda.to_device(rng.uniform(-1, 1, (rows_max, args.dim)).astype(dtype))
        for fid in args.functions.split(","):
            for rows in (int(r) for r in args.rows.split(",")):
                for threads in (int(t) for t in args.threads.split(",")):
                    for blocks in args.blocks.split(","):
                        r = eval_rows(fid, args.dim, dtype, rows, threads, None if blocks == "auto" else int(blocks),
                                      args.reps, X)
                        results.append(r)
                        print(" ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in r.items()),
                              flush=True)
        del X
    t = pd.DataFrame(results)
    t["bound_spec_us"] = t["bytes_per_eval"] / spec * 1e6
    t["bound_copy_us"] = t["bytes_per_eval"] / copy_bw * 1e6
    t["ratio_spec"] = t["us_per_eval"] / t["bound_spec_us"]
    t["ratio_copy"] = t["us_per_eval"] / t["bound_copy_us"]
    t["achieved_gb_s"] = t["bytes_per_eval"] / t["us_per_eval"] / 1e3
    t["kind"] = "eval"
    t["target"] = TARGET_EVAL_RATIO
    if args.trial:
        from gpude.run.trial import make_runner

        runner = make_runner("masw", "gpu", "L01", args.dim, 60, args.trial_fes, target=0.0)  # compiled and warmed up
        t0 = time.perf_counter()
        result = runner.run(seed=20261122)
        wall = time.perf_counter() - t0
        print(f"trial: {wall:.2f} s, error {result.best_error:.6g}, {result.fes_used} FEs", flush=True)
        t = pd.concat([t, pd.DataFrame([{
            "function": "L01", "dim": args.dim, "dtype": "float64", "rows": 20, "kind": "time",
            "us_per_eval": wall / result.fes_used * 1e6, "run_s": wall, "target": TARGET_TIME_S,
            "ratio_spec": wall / TARGET_TIME_S, "fes": result.fes_used, "best_error": result.best_error}])],
            ignore_index=True)
    info = {**provenance.gpu(), **provenance.software(), "git_commit": provenance.git_commit()}
    t = t.assign(spec_bandwidth_tb_s=spec / 1e12, copy_bandwidth_tb_s=copy_bw / 1e12,
                 **{k: info[k] for k in ("gpu", "cuda_driver", "numba", "numba_cuda", "git_commit") if k in info})
    write_csv_atomic(t, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
