"""Check the CUDA evaluator on a real GPU and measure evaluation throughput.

For every function (F01..F10, Q01..Q04) and D in {10, 30, 50, 100}, in float64
and float32:

* ``reference``: the GPU evaluator on the official C code's points
  (tests/reference/cec), error measure |got - want| / max(|want|, 1);
* ``random``: GPU vs the CPU evaluator (float64) on 1,000 points uniform in
  [-100, 100]^D;
* ``near_optimum``: GPU vs CPU (float64) on 200 points x* + U(-1e-2, 1e-2)^D,
  where errors are small and float32's absolute error matters most.

Writes ``results/validation/functions_<gpu>.csv`` (max errors per function, dim,
dtype, check) and ``results/validation/throughput_<gpu>.csv`` (errors per second
for a population of 10,000 at D=100, GPU kernel-only and with transfers, CPU on
one thread and on every core). Every row carries the device, versions and git
commit. Run from the repository root:

    python benchmarks/validate_functions.py [--functions F01,F05] [--dims 10,30]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # conftest: the oracle's loader and error measure

from numba import cuda  # noqa: E402

from gpude.core import provenance  # noqa: E402
from gpude.core.gpu_runtime import event_seconds  # noqa: E402
from gpude.core.io import write_csv_atomic  # noqa: E402
from gpude.functions import DIMS, get_function, gpu, list_functions  # noqa: E402

SEED = 20261121
TOL64 = 1e-9  # relative, with the same absolute floor (tests/reference/cec/README.md)


def accuracy_rows(fid, dim, reference, n_random, rng):
    # imported here, after numba.cuda: conftest defaults NUMBA_ENABLE_CUDASIM to 1 when unset
    from conftest import relative_error

    f = get_function(fid, dim)
    X_ref, rows = reference[(fid, dim)]
    want_ref = rows.error_value.to_numpy()
    X_rand = rng.uniform(-100.0, 100.0, size=(n_random, dim))
    X_near = f.optimum + rng.uniform(-1e-2, 1e-2, size=(200, dim))
    cpu_rand, cpu_near = f.evaluate(X_rand), f.evaluate(X_near)
    out = []
    for dtype in ("float64", "float32"):
        checks = (
            ("reference", f.evaluate(X_ref, device="gpu", dtype=dtype)[rows.row.to_numpy()], want_ref),
            ("random", f.evaluate(X_rand, device="gpu", dtype=dtype), cpu_rand),
            ("near_optimum", f.evaluate(X_near, device="gpu", dtype=dtype), cpu_near),
        )
        for check, got, want in checks:
            r, a = relative_error(got, want), np.abs(got - want)
            passed = bool(np.all((r <= TOL64) | (a <= TOL64))) if dtype == "float64" else None
            out.append(dict(function=fid, dim=dim, dtype=dtype, check=check, n_points=len(want),
                            max_rel_error=float(r.max()), median_rel_error=float(np.median(r)),
                            max_abs_error=float(a.max()), min_abs_value=float(np.abs(want).min()),
                            tolerance=TOL64 if dtype == "float64" else np.nan, passed=passed))
    return out


def time_gpu(fn, X, repeats):
    """Median seconds: kernel alone (data resident) and with both transfers."""
    d_X = cuda.to_device(X)
    d_out = cuda.device_array(X.shape[0], dtype=fn.dtype)
    kernel_s, total_s = [], []
    for _ in range(repeats):
        kernel_s.append(event_seconds(lambda: fn.population_kernel[X.shape[0], fn.threads](d_X, d_out, *fn.data)))
        t0 = time.perf_counter()
        d_in = cuda.to_device(X)
        fn.population_kernel[X.shape[0], fn.threads](d_in, d_out, *fn.data)
        d_out.copy_to_host()
        total_s.append(time.perf_counter() - t0)
    return statistics.median(kernel_s), statistics.median(total_s)


def time_cpu(f, X, dtype, threads, repeats):
    f.evaluate(X[:2], dtype=dtype, threads=1)  # compile / load from cache
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        f.evaluate(X, dtype=dtype, threads=threads)
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def throughput_rows(fid, dim, popsize, rng, repeats, cpu_repeats):
    f = get_function(fid, dim)
    X = rng.uniform(-100.0, 100.0, size=(popsize, dim))
    cores = provenance.cpu()["cpu_cores"]
    out = []
    for dtype in ("float64", "float32"):
        Xt = X.astype(dtype)
        fn = gpu.compile_function(f.program, np.dtype(dtype).type)
        fn.population_kernel[popsize, fn.threads](cuda.to_device(Xt), cuda.device_array(popsize, dtype), *fn.data)
        cuda.synchronize()  # warm-up: JIT and first launch stay out of the numbers
        kernel_s, total_s = time_gpu(fn, Xt, repeats)
        runs = [("gpu_kernel", 1, kernel_s), ("gpu_with_transfers", 1, total_s)]
        for threads in (1, cores):
            runs.append(("cpu", threads, time_cpu(f, X, dtype, threads, cpu_repeats)))
        for evaluator, threads, seconds in runs:
            out.append(dict(function=fid, dim=dim, popsize=popsize, dtype=dtype, evaluator=evaluator,
                            cpu_threads=threads, threads_per_block=fn.threads if evaluator != "cpu" else 0,
                            seconds=seconds, evals_per_second=popsize / seconds))
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--functions", default=",".join(list_functions()))
    p.add_argument("--dims", default=",".join(map(str, DIMS)))
    p.add_argument("--random-points", type=int, default=1000)
    p.add_argument("--popsize", type=int, default=10_000)
    p.add_argument("--repeats", type=int, default=10)
    p.add_argument("--cpu-repeats", type=int, default=3)
    p.add_argument("--skip-throughput", action="store_true")
    p.add_argument("--out", default=str(ROOT / "results" / "validation"))
    args = p.parse_args(argv)

    gpu.require_gpu()
    from conftest import load_reference

    fids = args.functions.split(",")
    dims = [int(d) for d in args.dims.split(",")]
    prov = provenance.record()
    name = provenance.slug(prov["gpu"])
    print(f"device: {prov['gpu']} ({prov.get('compute_capability', '?')}), cpu: {prov['cpu']} "
          f"x{prov['cpu_cores']}, numba {prov['numba']}, numba-cuda {prov['numba_cuda']}", flush=True)
    reference = load_reference()
    rng = np.random.default_rng(SEED)

    rows, t0 = [], time.perf_counter()
    for fid in fids:
        for dim in dims:
            rows += accuracy_rows(fid, dim, reference, args.random_points, rng)
        print(f"  accuracy {fid} done ({time.perf_counter() - t0:.0f}s)", flush=True)
    acc = pd.DataFrame(rows).assign(seed=SEED, **prov)
    path = write_csv_atomic(acc, Path(args.out) / f"functions_{name}.csv")
    print(f"wrote {path}")

    if not args.skip_throughput:
        trows = []
        for fid in fids:
            trows += throughput_rows(fid, 100, args.popsize, rng, args.repeats, args.cpu_repeats)
            print(f"  throughput {fid} done ({time.perf_counter() - t0:.0f}s)", flush=True)
        thr = pd.DataFrame(trows).assign(seed=SEED, **prov)
        path = write_csv_atomic(thr, Path(args.out) / f"throughput_{name}.csv")
        print(f"wrote {path}")
        wide = thr.pivot_table(index="function", columns=["dtype", "evaluator", "cpu_threads"],
                               values="evals_per_second")
        print((wide / 1e6).round(3).to_string())

    f64 = acc[acc.dtype == "float64"]
    print("float64 checks passed:", int(f64.passed.sum()), "of", len(f64))
    summary = acc.groupby(["dtype", "check"]).agg(max_rel=("max_rel_error", "max"),
                                                  max_abs=("max_abs_error", "max"))
    print(summary.to_string())
    return 0 if bool(f64.passed.all()) else 1


if __name__ == "__main__":
    sys.exit(main())
