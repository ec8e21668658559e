"""FEs per second of Krömer et al.'s three columns: "CPU" (``de/high_level``), "CPU opt."
(``de/sequential``) and "GPU" (``de/many_threaded``), each one run alone on the machine.

The paper: "The GPU implementation was 25.2 - 216.5 times faster than CPU implementation and 2.2 -
12.5 times faster than optimized CPU implementation" (task scheduling). Measured here, not tuned:
for each case (the ETC instance ThMhCi at NP 64, 512 and 1024 with CR 0.01; the LOLIB instance
be75eec at NP 256 with CR 0.005; Rastrigin at D = 512, NP 256, CR 0.001: the experiments'
parameters) each implementation makes ``--repeats`` time-budgeted runs of ``--seconds`` (seeds 1, 2, ...)
after a warm-up (JIT compilation excluded), one run at a time; a row gives the run, its FEs, the seconds
and FEs per second, with the machine's provenance (three runs a cell give the ratios an interval). The
instance files come from ``gpude fetch-data`` or ``GPUDE_INSTANCE_DATA``.

    python3 benchmarks/kromer_fe_rate.py --out $OUT/kromer_fe_rate_nvidia-h100.csv
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gpude.core.errors import GpudeError

IMPLEMENTATIONS = ("high_level", "sequential", "many_threaded")
#: (problem, dim, NP, CR): the parameters of kromer_etc, kromer_lop and kromer_rastrigin
CASES = (("ThMhCi", "instance", 64, 0.01), ("ThMhCi", "instance", 512, 0.01), ("ThMhCi", "instance", 1024, 0.01),
         ("be75eec", "instance", 256, 0.005), ("N09", 512, 256, 0.001))
COLUMNS = ("problem", "dim", "popsize", "implementation", "run", "F", "CR", "seconds", "fes", "wall_time_s",
           "fes_per_s", "generations", "gpu", "cpu", "cpu_cores", "host", "boot_id", "numba", "numba_cuda", "numpy",
           "git_commit", "timestamp_utc")


def measure(problem, dim, popsize, CR, implementation, seconds, seed=1) -> dict:
    from gpude.core.provenance import record
    from gpude.problems import get_problem
    from gpude.run.trial import make_runner

    instance = get_problem(problem, None if dim == "instance" else int(dim))
    runner = make_runner("de", implementation, instance, instance.dim, popsize, 10**12, F=0.5, CR=CR,
                         max_time_s=seconds, target=0.0)
    r = runner.run(seed)
    prov = record()
    row = {"problem": problem, "dim": instance.dim, "popsize": popsize, "implementation": implementation,
           "run": seed, "F": 0.5,
           "CR": CR, "seconds": seconds, "fes": r.fes_used, "wall_time_s": r.wall_time_s,
           "fes_per_s": r.fes_used / r.wall_time_s, "generations": r.generations}
    row.update({k: prov.get(k) for k in COLUMNS if k not in row})
    return row


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True, help="the CSV to write (atomically)")
    p.add_argument("--seconds", type=float, default=4.0, help="wall-clock budget of each run")
    p.add_argument("--implementations", default=",".join(IMPLEMENTATIONS))
    p.add_argument("--repeats", type=int, default=3, help="runs a case and implementation, one after another")
    args = p.parse_args(argv)
    import pandas as pd

    from gpude.core.io import write_csv_atomic

    rows = []
    try:
        for problem, dim, popsize, CR in CASES:
            for implementation in args.implementations.split(","):
                for seed in range(1, args.repeats + 1):
                    rows.append(measure(problem, dim, popsize, CR, implementation, args.seconds, seed))
                    r = rows[-1]
                    print(f"kromer_fe_rate: {problem} NP={popsize} {implementation} run {seed}: "
                          f"{r['fes_per_s']:.4g} FEs/s", flush=True)
    except GpudeError as exc:
        print(f"kromer_fe_rate: {exc}", file=sys.stderr)
        return 1
    finally:
        if rows:
            write_csv_atomic(pd.DataFrame(rows, columns=list(COLUMNS)), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
