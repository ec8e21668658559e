"""Kromer et al.'s Figs. 5 and 7: seconds to evaluate a population of LOP candidates (a 50-row
instance) and of 512-task schedules, on one compiled CPU thread (the kind of the paper's "optimized
CPU implementation", single-threaded low-level C), on every core (numba's thread pool) and on the
GPU, for population sizes 16..4096.

Each evaluator is first checked against the one-thread CPU evaluator on the same keys (they must
agree exactly: the same sums in the same order), then timed: the median (and minimum) of
``--repeats`` evaluations after a warm-up. GPU times have the keys already on the device (a DE keeps
its population there); ``seconds_with_copies`` adds the copy of the keys in and of the errors out,
since the paper does not say which it measured. ``gpu_prebound`` launches through the evaluator's
pre-bound launch, as the many-threaded DE does: ``seconds_median`` is one launch and its
synchronisation, ``seconds_queued`` the mean of 100 back-to-back launches (a generation loop that
never waits sees that per evaluation). Writes one row per (problem, popsize, device),
atomically, with the machine and versions:

    python benchmarks/kromer_eval_speed.py --out results/benchmarks/kromer_eval_speed_<machine>.csv

The instance files come from ``gpude fetch-data lolib`` / ``gpude fetch-data etc``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numba
import numpy as np
import pandas as pd

from gpude.core import provenance
from gpude.core.errors import GpudeError
from gpude.core.io import write_csv_atomic

DEVICES = ("cpu", "cpu_parallel", "gpu", "gpu_prebound")
#: back-to-back launches of ``seconds_queued`` (what a generation loop that never waits sees per launch)
QUEUED = 100


def problems(lop: str, etc: str) -> dict:
    from gpude.problems import get_etc, get_lop

    return {"lop": get_lop(lop), "etc": get_etc(etc)}


def keys(problem, popsize: int, seed: int = 5) -> np.ndarray:
    return np.random.default_rng(seed).uniform(problem.lower, problem.upper, (popsize, problem.dim))


def evaluator(problem, device: str, queued: int = QUEUED):
    """``run(X) -> errors`` (host in, host out) and ``timed(X) -> (seconds, seconds_with_copies)``."""
    if device in ("cpu", "cpu_parallel"):
        ev = problem.cpu_evaluator(np.float64, parallel=device == "cpu_parallel")

        def run(X):
            out = np.empty(X.shape[0])
            ev(X, out)
            return out

        def timed(X):
            out = np.empty(X.shape[0])
            t0 = time.perf_counter()
            ev(X, out)
            return time.perf_counter() - t0, np.nan
        return run, timed
    from numba import cuda

    from gpude.functions.gpu import require_gpu

    require_gpu()
    ev = problem.gpu_evaluator(np.float64)
    if device == "gpu_prebound":
        return _prebound(ev, queued)

    def run(X):
        d_out = cuda.device_array(X.shape[0])
        ev.launch(cuda.to_device(X), d_out, 0, X.shape[0])
        return d_out.copy_to_host()

    def timed(X):
        d_X, d_out = cuda.to_device(X), cuda.device_array(X.shape[0])
        cuda.synchronize()
        t0 = time.perf_counter()
        ev.launch(d_X, d_out, 0, X.shape[0])
        cuda.synchronize()
        on_device = time.perf_counter() - t0
        out = np.empty(X.shape[0])
        t0 = time.perf_counter()
        d_X2 = cuda.to_device(X)
        ev.launch(d_X2, d_out, 0, X.shape[0])
        d_out.copy_to_host(out)
        return on_device, time.perf_counter() - t0
    return run, timed


def _prebound(ev, queued: int = QUEUED):
    """The evaluator's pre-bound launch (what the many-threaded DE queues each generation):
    ``timed(X) -> (one launch and its synchronisation, the mean of QUEUED back-to-back launches)``."""
    from numba import cuda

    bound = {}

    def launch_for(X):
        n = X.shape[0]
        if n not in bound:
            d_X, d_out = cuda.to_device(X), cuda.device_array(n)
            bound[n] = (d_X, d_out, ev.prebound(d_X, d_out, 0, n, cuda.default_stream()))
        return bound[n]

    def run(X):
        d_X, d_out, launch = launch_for(X)
        d_X.copy_to_device(X)
        launch()
        return d_out.copy_to_host()

    def timed(X):
        _, _, launch = launch_for(X)
        cuda.synchronize()
        t0 = time.perf_counter()
        launch()
        cuda.synchronize()
        one = time.perf_counter() - t0
        t0 = time.perf_counter()
        for _ in range(queued):
            launch()
        cuda.synchronize()
        return one, (time.perf_counter() - t0) / queued
    return run, timed


def check_agreement(problem, devices, popsize: int = 16) -> None:
    """Every evaluator gives the one-thread CPU evaluator's errors, exactly."""
    X = keys(problem, popsize, seed=11)
    want = evaluator(problem, "cpu")[0](X)
    for device in devices:
        got = evaluator(problem, device)[0](X)
        if not np.array_equal(got, want):
            raise GpudeError(f"{problem.fid}: the {device} evaluator differs from the CPU one by up to "
                             f"{np.max(np.abs(got - want)):.3g}; timings of a wrong evaluator mean nothing")


def measure(problem, kind: str, device: str, popsize: int, repeats: int, queued: int = QUEUED) -> dict:
    X = np.ascontiguousarray(keys(problem, popsize))
    _, timed = evaluator(problem, device, queued)
    timed(X)  # warm-up: compilation, first launch
    runs = [timed(X) for _ in range(repeats)]
    seconds = [r[0] for r in runs]
    median = statistics.median(seconds)
    return {"problem": kind, "instance": problem.fid, "dim": problem.dim, "popsize": popsize, "device": device,
            "threads": numba.get_num_threads() if device == "cpu_parallel" else 1, "repeats": repeats,
            "seconds_median": median, "seconds_min": min(seconds),
            # every repeat, for the report's bootstrap interval of the ratios of medians
            "seconds_runs": ";".join(f"{x:.9g}" for x in seconds),
            "seconds_with_copies": statistics.median(r[1] for r in runs) if device == "gpu" else np.nan,
            "seconds_queued": statistics.median(r[1] for r in runs) if device == "gpu_prebound" else np.nan,
            "evaluations_per_s": popsize / median}


def gpu_available() -> bool:
    try:
        from gpude.functions.gpu import require_gpu

        require_gpu()
        return True
    except GpudeError:
        return False


def ratios(frame: pd.DataFrame) -> pd.DataFrame:
    t = frame.pivot_table(index=["problem", "popsize"], columns="device", values="seconds_median")
    for cpu in ("cpu", "cpu_parallel"):
        if cpu in t and "gpu" in t:
            t[f"{cpu}_over_gpu"] = t[cpu] / t["gpu"]
    if "cpu" in t and "cpu_parallel" in t:
        t["cpu_over_cpu_parallel"] = t["cpu"] / t["cpu_parallel"]
    return t


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    p.add_argument("--popsizes", default=",".join(str(2 ** k) for k in range(4, 13)))
    p.add_argument("--repeats", type=int, default=20)
    p.add_argument("--devices", default=None, help="cpu,cpu_parallel,gpu (default: all; gpu only where there is one)")
    p.add_argument("--queued", type=int, default=QUEUED, help="gpu_prebound: back-to-back launches timed together")
    p.add_argument("--lop", default="be75eec")
    p.add_argument("--etc", default="ThMhCc")
    args = p.parse_args(argv)
    if args.devices is None:
        devices = [d for d in DEVICES if not d.startswith("gpu") or gpu_available()]
        if "gpu" not in devices:
            print("no GPU here: timing the CPU evaluators only (--devices gpu asks for it and fails clearly)")
    else:
        devices = [d.strip() for d in args.devices.split(",")]
        unknown = set(devices) - set(DEVICES)
        if unknown:
            raise GpudeError(f"unknown device(s) {', '.join(sorted(unknown))}; use {', '.join(DEVICES)}")
    popsizes = [int(n) for n in args.popsizes.split(",")]
    rows = []
    for kind, problem in problems(args.lop, args.etc).items():
        check_agreement(problem, devices)
        rows += [measure(problem, kind, d, n, args.repeats, args.queued) for n in popsizes for d in devices]
    info = {**provenance.cpu(), **provenance.software(), "git_commit": provenance.git_commit()}
    if any(d.startswith("gpu") for d in devices):
        info.update(provenance.gpu())
    frame = pd.DataFrame(rows).assign(**{k: v for k, v in info.items() if np.isscalar(v)})
    write_csv_atomic(frame, args.out)
    print(ratios(frame).to_string(float_format=lambda v: f"{v:.3g}"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
