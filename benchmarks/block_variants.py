"""Issue 67's prototype, timed before it was built into de/block: de/block's generation without the work that is
not its rotation's, each cut alone and all together, the same run bit for bit.

Nsight Compute's source page of de/block on N00 (the sphere: its generation without a rotation, 6.2x the FP32 FMA
bound by itself, docs/implementations.md) put 15 % of the warp-stall samples in ``pick`` (r1, r2, r3 and j_rand),
26 % in the trial vector and 13 % in the selection's copy of the survivors. Kernels over de/block's arguments,
built from the same operators and evaluator (``gpude.algorithms.de``, ``gpude.functions.gpu``):

``block``
    de/block as it is (``gpude.implementations.block``, which took ``pick4`` and ``index`` from here);
``before``
    de/block's kernel before them: every lane of a warp makes pick's four draws, one after the other, and the
    selection copies every survivor into the next buffer;
``pick4``
    pick's four draws made by four lanes at once (each draw's range is known before the others: NP - 1, NP - 2,
    NP - 3, D) and shared through shared memory; every lane then steps over the excluded indices as ``pick``;
``lazy``
    a coordinate loads r1's, r2's and r3's values only where the crossover takes it (a fraction CR of them);
``index``
    the selection by index: a survivor that is the old vector is not copied into the next buffer; ``homes``
    (2 x B x NP) says which of the two buffers holds each individual, and parents are read through it;
``all``
    the three together.

Every kernel's batch is checked against ``block``'s (best error, best vector and the trace of every trial, bit
for bit) before it is timed. Timed: one launch of G generations from the initial population (the kernel alone,
``cuda.synchronize`` around it), warm, ``--repeats`` times, the kernels interleaved; rows per function, kernel
and repeat, with the per-generation time, the ratio to ``before``'s median and the device, versions and commit.

    python benchmarks/block_variants.py --out OUT.csv [--functions N00,F01,F10] [--trials 264] [--generations 512]
    NUMBA_ENABLE_CUDASIM=1 python benchmarks/block_variants.py --check
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from numba import cuda  # noqa: E402

from gpude.algorithms.de import build_de_ops  # noqa: E402
from gpude.core import provenance  # noqa: E402
from gpude.core.gpu_runtime import simulator_enabled  # noqa: E402
from gpude.core.gpu_runtime import warp_barrier as make_warp_barrier  # noqa: E402
from gpude.core.io import write_csv_atomic  # noqa: E402
from gpude.implementations.block import BlockDE, build_block_kernel  # noqa: E402
from gpude.implementations.device_loop import NO_HIT, mark_hit  # noqa: E402
from gpude.implementations.resident import ResidentDE  # noqa: E402

#: variant -> (pick4, lazy, index); None: de/block's own kernel
VARIANTS = {"block": None, "before": (False, False, False), "pick4": (True, False, False),
            "lazy": (False, True, False), "index": (False, False, True), "all": (True, True, True)}


def build_variant_kernel(warp_evaluate, dtype, threads, buf, dim, pick4: bool, lazy: bool, index: bool):
    """de/block's kernel before the cuts (kept here as their anchor), with those asked for; de/block's arguments
    (``homes``, 2 x B x NP int32: the buffer that holds each individual at the generation's parity, written where
    ``index``)."""
    T = np.dtype(dtype).type
    P, BUF, D = int(threads), int(buf), int(dim)
    WARPS = P // 32
    ops = build_de_ops(T, "cuda")
    init_value, pick, trial_value = ops.init_value, ops.pick, ops.trial_value
    pick_draw, pick_from = ops.pick_draw, ops.pick_from
    crossover_takes, repair, mutant = ops.crossover_takes, ops.repair, ops.mutant
    SIM = simulator_enabled()
    INF = math.inf
    PICK4, LAZY, INDEX = bool(pick4), bool(lazy), bool(index)
    warp_barrier = make_warp_barrier()

    @cuda.jit(device=True, inline=True)
    def record(trace, hit_gen, target, b, g, best, lane):
        if lane == 0 and best < INF:
            cuda.atomic.min(trace, (b, g), np.float64(best))
            if best <= target:
                mark_hit(hit_gen, b, g)

    options = {} if SIM else {"max_registers": 65536 // P}

    @cuda.jit(**options)
    def kernel(pop, fit, homes, keys, lower, upper, F, CR, mode, shift, rot_t, perm, trace, hit_gen,
               state, target, max_fes, g_first, g_last):
        xs_all = cuda.shared.array((WARPS, D), T)
        bufs = cuda.shared.array((WARPS, 2, BUF), T)
        reds = cuda.shared.array((WARPS, 4, 32), T)
        draws = cuda.shared.array((WARPS, 4), np.int64)
        tid, b = cuda.threadIdx.x, cuda.blockIdx.x
        lane, w = tid % 32, tid // 32
        xs, buf_a, buf_z, red = xs_all[w], bufs[w, 0], bufs[w, 1], reds[w]
        popsize = fit.shape[2]
        rounds = (popsize + WARPS - 1) // WARPS
        if b >= fit.shape[1]:
            return
        key = keys[b]
        if g_first == 1:
            t = tid
            while t < trace.shape[1]:
                trace[b, t] = INF
                t += P
            if tid == 0:
                hit_gen[b] = NO_HIT
            cuda.syncthreads()
            best = INF
            for k in range(rounds):
                i = w + k * WARPS
                if i < popsize or SIM:
                    ii = min(i, popsize - 1)
                    j = lane
                    while j < D:
                        xs[j] = init_value(key, ii, j, popsize, D, lower, upper)
                        j += 32
                    warp_barrier()
                    f = warp_evaluate(xs, buf_a, buf_z, red, shift, rot_t, perm, lane)
                    if i < popsize:
                        j = lane
                        while j < D:
                            pop[0, b, i, j] = xs[j]
                            j += 32
                        if lane == 0:
                            fit[0, b, i] = f
                            homes[0, b, i] = 0
                        best = min(best, f)
                    warp_barrier()
            record(trace, hit_gen, target, b, 0, best, lane)
            cuda.syncthreads()
        g = g_first
        done = hit_gen[b] <= g - 1
        while not done and g <= g_last:
            n = min(popsize, max_fes - popsize * g)
            cur, nxt = (g - 1) % 2, g % 2
            best = INF
            for k in range(rounds):
                i = w + k * WARPS
                if i < popsize or SIM:
                    ii = min(i, popsize - 1)
                    evaluated = i < n
                    f = T(0)
                    hi = homes[cur, b, ii] if INDEX else cur
                    if evaluated or SIM:
                        if PICK4:
                            if lane < 4:
                                draws[w, lane] = pick_draw(key, g, ii, lane, popsize, D)
                            warp_barrier()
                            r1, r2, r3 = pick_from(ii, draws[w, 0], draws[w, 1], draws[w, 2])
                            jrand = draws[w, 3]
                        else:
                            r1, r2, r3, jrand = pick(key, g, ii, popsize, D)
                        h1 = homes[cur, b, r1] if INDEX else cur
                        h2 = homes[cur, b, r2] if INDEX else cur
                        h3 = homes[cur, b, r3] if INDEX else cur
                        j = lane
                        while j < D:
                            if LAZY:
                                xi = pop[hi, b, ii, j]
                                v = xi
                                if crossover_takes(key, g, ii, j, popsize, D, jrand, CR):
                                    v = repair(key, g, ii, j, popsize, D,
                                               mutant(F, pop[h1, b, r1, j], pop[h2, b, r2, j], pop[h3, b, r3, j]),
                                               xi, lower, upper, mode)
                                xs[j] = v
                            else:
                                xs[j] = trial_value(key, g, ii, j, popsize, D, jrand, F, CR, pop[hi, b, ii, j],
                                                    pop[h1, b, r1, j], pop[h2, b, r2, j], pop[h3, b, r3, j],
                                                    lower, upper, mode)
                            j += 32
                        warp_barrier()
                        f = warp_evaluate(xs, buf_a, buf_z, red, shift, rot_t, perm, lane)
                    if i < popsize:
                        take = evaluated and f <= fit[cur, b, i]
                        if INDEX:
                            if take:  # into the buffer no one reads this generation
                                j = lane
                                while j < D:
                                    pop[1 - hi, b, i, j] = xs[j]
                                    j += 32
                            if lane == 0:
                                homes[nxt, b, i] = 1 - hi if take else hi
                        else:
                            j = lane
                            while j < D:
                                pop[nxt, b, i, j] = xs[j] if take else pop[cur, b, i, j]
                                j += 32
                        fi = f if take else fit[cur, b, i]
                        if lane == 0:
                            fit[nxt, b, i] = fi
                        best = min(best, fi)
                    warp_barrier()
            record(trace, hit_gen, target, b, g, best, lane)
            cuda.syncthreads()
            done = hit_gen[b] <= g
            g += 1
        if tid == 0 and g - 1 >= g_first:
            cuda.atomic.max(state, 0, np.int64(g - 1))

    return kernel


class VariantBlock(BlockDE):
    """de/block with :func:`build_variant_kernel`'s kernel (``variant``: a key of :data:`VARIANTS`)."""

    def __init__(self, function, params, variant: str = "block", **options):
        self.variant = variant
        super().__init__(function, params, **options)

    def build_kernel(self, warp_evaluate, dtype, threads, buf, dim, **options):
        """de/block's kernel for ``block``, else :func:`build_variant_kernel`'s with the variant's cuts (the launch
        and its arguments are de/block's)."""
        cuts = VARIANTS[self.variant]
        if cuts is None:
            return build_block_kernel(warp_evaluate, dtype, threads, buf, dim, **options)
        return build_variant_kernel(warp_evaluate, dtype, threads, buf, dim, *cuts)

    def final_population(self, b, last_generation):
        cuts = VARIANTS[self.variant]
        if cuts is not None and not cuts[2]:  # one buffer a generation, as de/resident's
            return ResidentDE.final_population(self, b, last_generation)
        return super().final_population(b, last_generation)


def make(variant: str, function: str, dim: int, popsize: int, generations: int, trials: int):
    from gpude.run.trial import make_runner

    class Entry:  # make_runner's registry entry, our class
        @staticmethod
        def load():
            return VariantBlock

    return make_runner("de", "block", function, dim, popsize, popsize * (generations + 1), F=0.5, CR=0.3,
                       dtype="float32", target=-math.inf, trials_per_launch=trials, variant=variant, entry=Entry)


def same_run(a, b) -> str:
    """'' where two batches' results are the same bit for bit, else what differs."""
    for ra, rb in zip(a, b):
        if ra.best_error != rb.best_error:
            return f"seed {ra.seed}: best error {ra.best_error!r} against {rb.best_error!r}"
        if not np.array_equal(ra.best_x, rb.best_x):
            return f"seed {ra.seed}: best vector"
        if not np.array_equal(ra.trace["best_error"], rb.trace["best_error"]):
            return f"seed {ra.seed}: trace"
    return "" if len(a) == len(b) else "a different number of trials"


def launch_seconds(runner, generations: int) -> float:
    """One warm launch of ``generations`` generations from the initial population, the kernel alone."""
    cuda.synchronize()
    t0 = time.perf_counter()
    runner.launch.launch(target=-math.inf, max_fes=runner.popsize * (generations + 1), g_first=1,
                         g_last=generations)
    cuda.synchronize()
    return time.perf_counter() - t0


def check(functions=("N00", "F01"), dim=10, popsize=8, generations=3, trials=2, variants=tuple(VARIANTS)) -> int:
    """Every variant's batch against de/block's, bit for bit: 0 when all agree."""
    failed = 0
    for function in functions:
        seeds = list(range(1, trials + 1))
        want = make("block", function, dim, popsize, generations, trials).run_batch(seeds)
        for variant in variants:
            why = same_run(make(variant, function, dim, popsize, generations, trials).run_batch(seeds), want)
            failed += bool(why)
            print(f"{function} D {dim} NP {popsize}, {variant}: {'the same run' if not why else 'DIFFERS: ' + why}")
    return 1 if failed else 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", help="CSV of the timings (written after every row)")
    p.add_argument("--functions", default="N00,F01")
    p.add_argument("--variants", default=",".join(VARIANTS))
    p.add_argument("--trials", type=int, default=264, help="trials (blocks) a launch")
    p.add_argument("--generations", type=int, default=512)
    p.add_argument("--dim", type=int, default=100)
    p.add_argument("--popsize", type=int, default=250)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--check", action="store_true", help="every variant against de/block at tiny sizes, and stop")
    args = p.parse_args(argv)
    variants = [v for v in args.variants.split(",") if v]
    unknown = sorted(set(variants) - set(VARIANTS))
    if unknown:
        p.error(f"unknown variant(s) {', '.join(unknown)}; the variants: {', '.join(VARIANTS)}")
    functions = [f for f in args.functions.split(",") if f]
    if args.check:
        return check(functions, variants=variants)
    B, G, D, NP = args.trials, args.generations, args.dim, args.popsize
    prov = {**provenance.gpu(), **provenance.cpu(), **provenance.software(), "git_commit": provenance.git_commit()}
    rows = []
    for function in functions:
        seeds = list(range(1, B + 1))
        runners, want = {}, None
        for variant in ["block", *[v for v in variants if v != "block"]]:
            runner = make(variant, function, D, NP, G, B)
            got = runner.run_batch(seeds)  # compiles, loads, and is the run checked
            if want is None:
                want = got
            why = same_run(got, want)
            runners[variant] = (runner, why)
        for repeat in range(args.repeats):  # the variants interleaved: a drift of the clock falls on all
            for variant, (runner, why) in runners.items():
                seconds = launch_seconds(runner, G)
                rows.append({"function": function, "variant": variant, "repeat": repeat, "launch_s": seconds,
                             "per_generation_us": seconds / G * 1e6, "same_run_as_block": not why,
                             "differs": why, "trials": B, "generations": G, "dim": D, "popsize": NP, **prov})
                print({k: rows[-1][k] for k in ("function", "variant", "repeat", "launch_s", "same_run_as_block")},
                      flush=True)
        before = [r["launch_s"] for r in rows if r["function"] == function and r["variant"] == "before"]
        for r in rows:
            if r["function"] == function:
                r["x_before_median"] = r["launch_s"] / statistics.median(before) if before else math.nan
        if args.out:
            import pandas as pd

            write_csv_atomic(pd.DataFrame(rows), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
