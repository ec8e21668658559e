"""What one generation's synchronisation costs a single run on the GPU (issue 67, step 3), timed before
anything is built.

``de/resident`` runs one trial over every SM with a grid barrier after each generation: F01's run is
40,000 generations in 0.36-0.41 s on an H100, ~9 us a generation, while the generation's arithmetic is
~0.08 us at the FP32 FMA rate (``results/benchmarks/de_floor.csv``). So the barrier may be most of it.
Three ways to separate generations, each over ``--generations`` empty generations (a generation: every
block writes one word, meets the others, and reads a word another block wrote, which checks the barrier:
``errors`` counts reads that did not see the generation's write):

``grid_sync``
    a cooperative launch and ``cuda.cg.this_grid().sync()`` (``de/resident``'s barrier);
``flags``
    a normal launch of at most one block an SM (all resident) and a barrier of our own: a monotonic
    counter in global memory (a fence, an atomic increment, a spin on atomic reads until every block
    of the generation has arrived);
``launches``
    one kernel launch a generation from the host (the launch boundary as the barrier).

Rows: seconds, microseconds a generation, errors, blocks and threads, device and versions.

    python benchmarks/sync_prototype.py --out OUT.csv [--generations 40000] [--blocks-per-sm 1]
    NUMBA_ENABLE_CUDASIM=1 python benchmarks/sync_prototype.py --check   # one block (the simulator's
                                                                         # cooperative grids), no errors
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from numba import cuda, int64  # noqa: E402

from gpude.core import provenance  # noqa: E402
from gpude.core.gpu_runtime import simulator_enabled  # noqa: E402
from gpude.core.io import write_csv_atomic  # noqa: E402


@cuda.jit(device=True, inline=True)
def write_then_check(buf, errors, g, b, nblocks, before):
    """Thread 0's part of a generation: after the barrier (``before`` False: before it) read the word
    the next block wrote in generation g, or write this block's."""
    if cuda.threadIdx.x == 0:
        if before:
            buf[g % 2, b] = g * nblocks + b
        else:
            other = (b + 1) % nblocks
            if buf[g % 2, other] != g * nblocks + other:
                cuda.atomic.add(errors, 0, 1)


@cuda.jit
def grid_sync_kernel(buf, errors, generations):
    grid = cuda.cg.this_grid()
    b, nblocks = cuda.blockIdx.x, cuda.gridDim.x
    for g in range(generations):
        write_then_check(buf, errors, g, b, nblocks, True)
        grid.sync()
        write_then_check(buf, errors, g, b, nblocks, False)


@cuda.jit
def flags_kernel(buf, errors, counter, generations):
    b, nblocks = cuda.blockIdx.x, cuda.gridDim.x
    for g in range(generations):
        write_then_check(buf, errors, g, b, nblocks, True)
        cuda.syncthreads()
        if cuda.threadIdx.x == 0:
            cuda.threadfence()  # this block's writes before its arrival
            cuda.atomic.add(counter, 0, int64(1))
            goal = int64(g + 1) * nblocks
            while cuda.atomic.add(counter, 0, int64(0)) < goal:  # an atomic read: never cached
                pass
            cuda.threadfence()
        cuda.syncthreads()
        write_then_check(buf, errors, g, b, nblocks, False)


@cuda.jit
def launch_kernel(buf, errors, g):
    # generation g's check of generation g - 1 (the launch before), then its own write
    b, nblocks = cuda.blockIdx.x, cuda.gridDim.x
    if g > 0:
        write_then_check(buf, errors, g - 1, b, nblocks, False)
    write_then_check(buf, errors, g, b, nblocks, True)


def run(kind: str, blocks: int, threads: int, generations: int) -> tuple[float, int]:
    """(seconds of the warm run, errors)."""
    buf = cuda.to_device(np.full((2, blocks), -1, np.int64))
    errors = cuda.to_device(np.zeros(1, np.int64))

    def once(n):
        counter = cuda.to_device(np.zeros(1, np.int64))
        cuda.synchronize()
        t0 = time.perf_counter()
        if kind == "grid_sync":
            grid_sync_kernel[blocks, threads](buf, errors, n)
        elif kind == "flags":
            flags_kernel[blocks, threads](buf, errors, counter, n)
        else:
            for g in range(n):
                launch_kernel[blocks, threads](buf, errors, g)
        cuda.synchronize()
        return time.perf_counter() - t0

    once(2)  # compiles and loads
    errors.copy_to_device(np.zeros(1, np.int64))
    seconds = once(generations)
    return seconds, int(errors.copy_to_host()[0])


def check() -> int:
    failed = 0
    for kind, blocks in (("grid_sync", 1), ("flags", 1), ("launches", 3)):
        seconds, errors = run(kind, blocks, 32, 5)
        failed += errors != 0
        print(f"{kind}, {blocks} block(s): {errors} errors")
    return 1 if failed else 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", help="CSV of the timings (written after every row)")
    p.add_argument("--generations", type=int, default=40_000)
    p.add_argument("--launch-generations", type=int, default=5_000, help="generations of 'launches'")
    p.add_argument("--blocks-per-sm", default="1", help="comma-separated (grid_sync and flags)")
    p.add_argument("--threads", default="256,1024", help="threads a block, comma-separated")
    p.add_argument("--check", action="store_true", help="the simulator check (one block)")
    args = p.parse_args(argv)
    if args.check:
        return check()
    if simulator_enabled():
        sys.exit("sync_prototype: times a GPU; on the simulator run --check")
    sms = cuda.get_current_device().MULTIPROCESSOR_COUNT
    prov = {**provenance.gpu(), **provenance.cpu(), **provenance.software(), "git_commit": provenance.git_commit()}
    rows = []
    for threads in (int(t) for t in args.threads.split(",")):
        for per_sm in (int(k) for k in args.blocks_per_sm.split(",")):
            for kind in ("grid_sync", "flags", "launches"):
                if kind != "grid_sync" and per_sm > 1:
                    continue  # flags need every block resident: one an SM; launches: one row is enough
                n = args.launch_generations if kind == "launches" else args.generations
                row = {"kind": kind, "blocks": sms * per_sm, "threads": threads, "generations": n}
                try:
                    seconds, errors = run(kind, sms * per_sm, threads, n)
                    row.update(seconds=seconds, us_per_generation=seconds / n * 1e6, errors=errors, error="")
                except Exception as exc:  # a kernel that does not launch is a row too
                    row.update(seconds=math.nan, us_per_generation=math.nan, errors=math.nan,
                               error=f"{type(exc).__name__}: {exc}"[:300])
                rows.append({**row, **prov})
                print({k: row[k] for k in ("kind", "blocks", "threads", "us_per_generation", "errors")}, flush=True)
                if args.out:
                    import pandas as pd

                    write_csv_atomic(pd.DataFrame(rows), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
