"""Speed of ``de/master_slave`` against ``de/sequential``: FEs per second and where a generation's
time goes (Kromer et al.'s columns are ``high_level``, ``sequential`` and ``many_threaded``:
docs/kromer.md).

Per problem and NP: ``de/sequential`` and ``de/master_slave`` at each worker count, each a warmed-up
run of ``--seconds``, ``--repeats`` rounds taken in turn (a passing load hits all alike); a row: median
FEs per second and seconds per generation over the rounds, the best round, ``speedup`` over sequential's
FEs per second, and the median seconds of a generation's steps timed apart over ``--phase-generations``
generations (the master's ``make_trials``, the evaluation, the replacement; overlapped where
``pipelined``: :mod:`gpude.implementations.master_slave`). Defaults: the ETC instance ThMhCi (F = 0.5,
CR = 0.1 as ``config/experiments/kromer_etc.yaml``; ``gpude fetch-data etc`` or ``GPUDE_INSTANCE_DATA``),
F01 and F10 at D = 100, NP 16-1024, workers 1, 2, 4, ... and the cores. Each row has the machine's
provenance, ``cpu_per_wall`` (below ``workers``: other jobs took cores), the load average, numba's
threading layer and the commit; the CSV is written atomically:

    python benchmarks/master_slave_speed.py --machine cpu-2core
    python3 benchmarks/master_slave_speed.py --machine nvidia-h100 \\
        --out $OUT/master_slave_speed_nvidia-h100.csv

(default ``--out``: ``results/benchmarks/master_slave_speed_<machine>.csv``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from gpude.core.errors import InvalidInputError

REPO = Path(__file__).resolve().parents[1]

IMPLEMENTATIONS = ("sequential", "master_slave")
COLUMNS = ("machine", "problem", "dim", "popsize", "implementation", "workers", "pipelined", "F", "CR",
           "seconds", "repeats", "generations", "fes_per_s", "fes_per_s_max", "s_per_generation",
           "speedup", "cpu_per_wall", "make_trials_s", "evaluate_s", "replace_s", "load_avg_1min", "host", "cpu",
           "cpu_cores", "boot_id", "numba", "numpy", "threading_layer", "commit")


def int_list(text: str, name: str, least: int = 1) -> list[int]:
    """``"16,64"`` -> [16, 64]; an entry that is no integer >= ``least`` is an InvalidInputError."""
    try:
        values = [int(v) for v in text.split(",")]
    except ValueError:
        raise InvalidInputError(f"--{name} takes comma-separated integers, got {text!r}") from None
    if not values or min(values) < least:
        raise InvalidInputError(f"--{name}: every value must be >= {least}, got {text!r}")
    return values


def default_workers(cores: int) -> list[int]:
    """1, 2, 4, ... below ``cores``, and ``cores``."""
    return sorted({2 ** k for k in range(cores.bit_length()) if 2 ** k < cores} | {cores})


def runner_for(implementation: str, problem: str, dim, popsize: int, workers: int, args):
    """A warmed-up runner (JIT done) with a wall-clock budget of ``args.seconds``."""
    from gpude.run.trial import make_runner

    options = {"workers": workers} if implementation == "master_slave" else {}
    return make_runner("de", implementation, problem, dim, popsize, max_fes=10 ** 12, F=args.F,
                       CR=args.CR, target=-np.inf, max_time_s=args.seconds, **options)


def phase_seconds(runner, generations: int, seed: int) -> dict:
    """Median seconds per generation of the master's operators, the evaluation and the
    replacement, timed apart (the steps of ``CPUGenerationMixin.generation``)."""
    key = np.uint64(seed)
    runner.setup()
    try:
        runner.initialize(key)
        n, steps = runner.popsize, {"make_trials_s": [], "evaluate_s": [], "replace_s": []}
        for g in range(1, generations + 1):  # new generations: new random decisions each time
            t0 = time.perf_counter()
            runner.make_trials(key, g, n)
            t1 = time.perf_counter()
            runner.evaluate(runner.trials[:n], runner.tfit[:n])
            t2 = time.perf_counter()
            runner.replace(n)
            t3 = time.perf_counter()
            for name, dt in zip(steps, (t1 - t0, t2 - t1, t3 - t2)):
                steps[name].append(dt)
    finally:
        runner.teardown()
    return {name: statistics.median(v) for name, v in steps.items()}


def timed_run(runner, seed: int) -> dict:
    """FEs per second and seconds per generation of one run, and the CPU seconds all the process's
    threads used per wall second: about ``workers`` on cores of its own (a waiting worker spins),
    less where other jobs share the cores."""
    cpu = time.process_time()
    result = runner.run(seed)
    cpu = time.process_time() - cpu
    return {"fes_per_s": result.fes_used / result.wall_time_s,
            "s_per_generation": result.wall_time_s / max(result.generations, 1),
            "generations": result.generations, "cpu_per_wall": cpu / result.wall_time_s}


def measure_cell(problem: str, dim, popsize: int, runs: list, args) -> list[dict]:
    """Rows of one (problem, NP): the runs of ``runs`` taken in turn, ``args.repeats`` rounds
    (a load that comes and goes hits every implementation alike), then each one's phases."""
    runners = [runner_for(implementation, problem, dim, popsize, workers, args)
               for implementation, workers in runs]
    timings = [[] for _ in runners]
    for _ in range(args.repeats):
        for runner, times in zip(runners, timings):
            times.append(timed_run(runner, args.seed))
    rows = []
    for (implementation, workers), runner, times in zip(runs, runners, timings):
        median = {k: statistics.median(t[k] for t in times) for k in times[0]}
        rows.append({"problem": problem, "dim": runner.dim, "popsize": popsize,
                     "implementation": implementation, "workers": workers,
                     "pipelined": bool(getattr(runner, "pipelined", False)), "F": args.F, "CR": args.CR,
                     "seconds": args.seconds, "repeats": args.repeats, **median,
                     "fes_per_s_max": max(t["fes_per_s"] for t in times),
                     **phase_seconds(runner, args.phase_generations, args.seed),
                     "load_avg_1min": os.getloadavg()[0]})
    return rows


def problem_dim(name: str, dim: int):
    """``dim`` for a function, ``"instance"`` for an instance (its own size). An unknown name or
    a dimension the function lacks fails here, before any run."""
    from gpude.problems.registry import find_problem, get_problem

    found = find_problem(name)
    if found is not None and (found[0] is None or found[0].instances):
        dim = "instance"
    get_problem(name, dim)
    return dim


def cases(args, cores: int) -> list[tuple[str, int]]:
    """(implementation, workers) in the order they run: sequential first, then the workers."""
    import numba

    pool = numba.config.NUMBA_NUM_THREADS
    workers = int_list(args.workers, "workers") if args.workers else default_workers(min(cores, pool))
    if max(workers) > pool:
        raise InvalidInputError(f"--workers {max(workers)} exceeds numba's thread pool ({pool}); "
                                "set NUMBA_NUM_THREADS higher")
    return [("sequential", 1)] + [("master_slave", w) for w in workers]


def provenance_fields(machine: str) -> dict:
    from gpude.core import provenance

    software = provenance.software()
    return {"machine": machine, **provenance.cpu(), "numba": software["numba"],
            "numpy": software["numpy"], "threading_layer": threading_layer(),
            "commit": provenance.git_commit()}


def threading_layer() -> str:
    """numba's threading layer (known once a parallel region has run; the runs have)."""
    import numba

    try:
        return numba.threading_layer()
    except ValueError:
        return "unset"


def with_speedup(rows: list[dict]) -> list[dict]:
    """Each row's FEs per second over sequential's at the same (problem, NP)."""
    base = {(r["problem"], r["popsize"]): r["fes_per_s"] for r in rows if r["implementation"] == "sequential"}
    return [{**r, "speedup": r["fes_per_s"] / base[(r["problem"], r["popsize"])]} for r in rows]


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--machine", default=f"cpu-{os.cpu_count()}core",
                   help="the machine's name in the rows and the file name (default cpu-<cores>core)")
    p.add_argument("--out", help="default: results/benchmarks/master_slave_speed_<machine>.csv")
    p.add_argument("--problems", default="ThMhCi,F01,F10", help="comma-separated problem names")
    p.add_argument("--dim", type=int, default=100, help="dimension of the functions (instances have their own)")
    p.add_argument("--popsizes", default="16,64,256,1024")
    p.add_argument("--workers", help="comma-separated worker counts (default 1, 2, 4, ... and the cores)")
    p.add_argument("--seconds", type=float, default=1.0, help="wall-clock budget of each timed run")
    p.add_argument("--repeats", type=int, default=3,
                   help="rounds of the runs of a (problem, NP), taken in turn (rows give the median)")
    p.add_argument("--phase-generations", type=int, default=50,
                   help="generations whose steps are timed apart (medians)")
    p.add_argument("--F", type=float, default=0.5)
    p.add_argument("--CR", type=float, default=0.1)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    if not args.seconds > 0:
        raise InvalidInputError(f"--seconds must be > 0, got {args.seconds}")
    if args.repeats < 1:
        raise InvalidInputError(f"--repeats must be >= 1, got {args.repeats}")
    if args.phase_generations < 1:
        raise InvalidInputError(f"--phase-generations must be >= 1, got {args.phase_generations}")
    return args


def summary(r: dict) -> str:
    return (f"{r['problem']} NP={r['popsize']:5d} {r['implementation']:>12s} x{r['workers']:<3d} "
            f"{r['fes_per_s'] / 1e6:7.3f} M FEs/s (x{r['speedup']:.2f})  make "
            f"{r['make_trials_s'] * 1e6:8.1f} us  evaluate {r['evaluate_s'] * 1e6:8.1f} us  replace "
            f"{r['replace_s'] * 1e6:6.1f} us  (cpu/wall {r['cpu_per_wall']:.2f}, load {r['load_avg_1min']:.1f})")


def main(argv=None) -> int:
    import pandas as pd

    from gpude.core.io import write_csv_atomic

    args = parse(argv)
    popsizes = int_list(args.popsizes, "popsizes", least=4)
    runs = cases(args, os.cpu_count() or 1)
    rows = []
    dims = {name: problem_dim(name, args.dim) for name in args.problems.split(",")}  # all, before any run
    for name, dim in dims.items():
        for popsize in popsizes:
            for r in with_speedup(measure_cell(name, dim, popsize, runs, args)):
                rows.append(r)
                print(summary(r), flush=True)
    info = provenance_fields(args.machine)
    frame = pd.DataFrame([{**info, **r} for r in rows])[list(COLUMNS)]
    out = Path(args.out or REPO / f"results/benchmarks/master_slave_speed_{args.machine}.csv")
    write_csv_atomic(frame, out)
    print("wrote", out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
