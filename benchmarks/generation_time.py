"""Microseconds per generation of the GPU device loops, launched one by one and replayed as CUDA graphs.

How much of a generation the host costs. For each case (implementation,
problem, D, NP, trials per launch) and each graph span of ``--spans`` (1: every kernel launched on
its own; G > 1: ``graph_generations=G``, G generations per ``cuGraphLaunch``), a runner is made
and warmed up (``make_runner`` compiles and runs a short run of the same shapes), then
``--repeats`` runs of ``--generations`` generations each (a fixed FE budget, no target: every
generation runs) are timed; a row per run gives the batch's wall time over its generations. The
targets it measures against: ``many_threaded`` at NP 64 on a 512-task schedule at most 30 us per
generation; ``all_gpu`` no slower than the authors' All-GPU DE (``config/experiments/side_by_side.yaml``
compares whole runs).

A case is ``IMPLEMENTATION:FUNCTION:DIM:NP[:TRIALS]`` (DIM ``instance`` for a LOP or ETC instance,
found through ``GPUDE_INSTANCE_DATA``; TRIALS per launch, default 1). Spans above 1 apply to the
implementations that take ``graph_generations`` (all_gpu, many_threaded); others are measured at
span 1 only. Rows carry the device, host, versions and commit; the CSV is written atomically.

    python benchmarks/generation_time.py --out results/benchmarks/generation_time_<device>.csv
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

#: case study 1 (D=100, NP=250) and a small population; Kromer's ETC at NP 64 and 1024
DEFAULT_CASES = ("all_gpu:F01:100:250", "all_gpu:F01:100:50", "all_gpu:F01:100:250:30",
                 "many_threaded:ThMhCi:instance:64", "many_threaded:ThMhCi:instance:1024",
                 "many_threaded:ThMhCi:instance:64:10")


def parse_case(text: str) -> dict:
    """``all_gpu:F01:100:250[:30]`` -> its fields; a clear error for anything else."""
    parts = text.split(":")
    if len(parts) not in (4, 5) or not parts[3].isdigit() or (len(parts) == 5 and not parts[4].isdigit()):
        raise SystemExit(f"generation_time: bad case {text!r}; write IMPLEMENTATION:FUNCTION:DIM:NP[:TRIALS], "
                         f"e.g. all_gpu:F01:100:250 or many_threaded:ThMhCi:instance:64:10")
    dim = parts[2] if parts[2] == "instance" else int(parts[2])
    return dict(implementation=parts[0], function=parts[1], dim=dim, popsize=int(parts[3]),
                trials_per_launch=int(parts[4]) if len(parts) == 5 else 1)


def takes_graphs(implementation: str) -> bool:
    """Whether the DE implementation has the option ``graph_generations`` (its own signature says)."""
    import inspect

    from gpude.implementations import registry

    cls = registry.get("de", implementation).load(check_device=False)
    return "graph_generations" in inspect.signature(cls.__init__).parameters


def spans_for(implementation: str, spans) -> list[int]:
    return list(spans) if takes_graphs(implementation) else [1]


def time_case(case: dict, span: int, generations: int, repeats: int, seed: int = 1) -> list[dict]:
    """``repeats`` timed runs of ``generations`` generations (after the runner's warm-up)."""
    from gpude.run.trial import make_runner

    NP, B = case["popsize"], case["trials_per_launch"]
    options = {"graph_generations": span} if takes_graphs(case["implementation"]) else {}
    if B > 1:
        options["trials_per_launch"] = B
    runner = make_runner("de", case["implementation"], case["function"], case["dim"], NP,
                         NP * (generations + 1), **options)
    rows = []
    for r in range(repeats):
        seeds = list(range(seed + r * B, seed + r * B + B))
        t0 = time.perf_counter()
        results = runner.run_batch(seeds) if B > 1 else [runner.run(seeds[0])]
        wall = time.perf_counter() - t0
        made = results[0].generations
        run_options = results[0].info.get("options", {})
        rows.append(dict(**case, graph_generations=span, repeat=r, generations=made, wall_s=wall,
                         us_per_generation=1e6 * wall / made,
                         graph_captured=run_options.get("graph_captured", ""),
                         prebound=results[0].info.get("prebound", "")))
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--cases", default=",".join(DEFAULT_CASES),
                   help="comma-separated IMPLEMENTATION:FUNCTION:DIM:NP[:TRIALS]")
    p.add_argument("--spans", default="1,8,32", help="graph spans (generations per replay); 1 = single launches")
    p.add_argument("--generations", type=int, default=2000, help="generations per timed run")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--out", required=True, help="the CSV (written atomically)")
    args = p.parse_args(argv)
    cases = [parse_case(c) for c in args.cases.split(",") if c]
    try:
        spans = [int(s) for s in args.spans.split(",") if s]
    except ValueError:
        raise SystemExit(f"generation_time: --spans takes comma-separated integers, got {args.spans!r}") from None
    if not spans or min(spans) < 1 or args.generations < 1 or args.repeats < 1:
        raise SystemExit("generation_time: --spans, --generations and --repeats must be positive")

    import numba.cuda  # noqa: F401  (provenance asks CUDA only where it is imported)
    import pandas as pd

    from gpude.core import provenance
    from gpude.core.io import write_csv_atomic

    common = {**provenance.record()}
    rows = []
    for case in cases:
        for span in spans_for(case["implementation"], spans):
            for row in time_case(case, span, args.generations, args.repeats):
                rows.append({**row, **common})
                print(f"{row['implementation']:<13s} {row['function']} NP={row['popsize']} x{row['trials_per_launch']} "
                      f"span {span:>3d}: {row['us_per_generation']:9.1f} us/generation "
                      f"(captured: {row['graph_captured']})", flush=True)
    write_csv_atomic(pd.DataFrame(rows), Path(args.out))
    print("wrote", args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
