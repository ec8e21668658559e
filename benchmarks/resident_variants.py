"""Issue 67, one run a launch: where de/resident's generation goes, timed before anything is built.

de/resident runs one trial over every SM, a block an individual, a grid barrier after each generation: F01 at
D 100, NP 250 takes ~8.6 us a generation on an H100 (0.44-0.48x the authors' iDE; the target is 0.3x). The
barrier alone is ~1.7 us (``sync_prototype.py``). Kernels over de/resident's arguments, each a copy of its
kernel with one change:

``resident``
    de/resident's own kernel (``gpude.implementations.resident``, which took ``deferred`` and ``shared`` from
    here), the anchor;
``copy``
    de/resident's kernel before them (the first timings: a copy of it, unchanged, timed as the original);
``pick4``
    pick's four draws made by threads 0-3 at once and shared through shared memory (every thread of the block
    makes all four one after the other in ``resident``);
``deferred``
    no ``atomic.min`` of every survivor's error on the generation's trace entry: a block per trial reduces the
    trial's errors of generation g - 1 while generation g runs (its buffer is not written until g + 1), and the
    last generation's after the loop; the hits stay as they are (an atomic only on a hit);
``all``
    ``pick4`` and ``deferred``;
``shared``
    the function's shift and rotation copied into shared memory once a launch and read there by the evaluator
    (the kernel before read them from global memory, where the matrix does not stay in L1 across the grid
    barriers, most likely invalidated by their fence): static shared memory, so only where they fit in a
    block's 48 KB beside the kernel's own buffers (F01 at D 100; not F10's five matrices);
``fast``
    ``shared`` and ``deferred``;
``noeval``
    timing only, not the same run: the trial vector is built but not evaluated (its error is its first
    coordinate): the generation without the function;
``barrier``
    timing only: the generation loop with its grid barrier and stop test, and nothing else.

The same-run kernels are checked against ``resident``'s batch (best error, best vector and trace, bit for bit)
before they are timed. Timed: one launch of G generations from the initial population (the kernel alone,
``cuda.synchronize`` around it), warm, ``--repeats`` times, the kernels interleaved; rows per function, kernel
and repeat, with the per-generation time, the ratio to ``resident``'s median and the device, versions and commit.

    python benchmarks/resident_variants.py --out OUT.csv [--functions N00,F01,F10] [--generations 4096]
    NUMBA_ENABLE_CUDASIM=1 python benchmarks/resident_variants.py --check
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from numba import cuda  # noqa: E402

from gpude.algorithms.de import build_de_ops  # noqa: E402
from gpude.core import provenance  # noqa: E402
from gpude.core.io import write_csv_atomic  # noqa: E402
from gpude.implementations.device_loop import NO_HIT, mark_hit  # noqa: E402
from gpude.implementations.resident import (  # noqa: E402
    STATIC_SHARED_BYTES,
    ResidentDE,
    build_resident_kernel,
    build_unit_steps,
)

sys.path.insert(0, str(ROOT / "benchmarks"))
from block_variants import launch_seconds, same_run  # noqa: E402  (de/block's prototype: the same check and clock)

#: variant -> (pick4, deferred, noeval, barrier only, shared); None: de/resident's own kernel
VARIANTS = {"resident": None, "copy": (False, False, False, False, False),
            "pick4": (True, False, False, False, False), "deferred": (False, True, False, False, False),
            "all": (True, True, False, False, False), "noeval": (False, False, True, False, False),
            "barrier": (False, False, False, True, False), "shared": (False, False, False, False, True),
            "fast": (False, True, False, False, True)}
#: the variants that change the run's arithmetic or skip it: timed, not checked
TIMING_ONLY = ("noeval", "barrier")


def build_variant_kernel(block_evaluate, dtype, threads, buf, dim, pick4: bool, deferred: bool, noeval: bool,
                         barrier_only: bool, shared: bool, rot_shape=(1, 1, 1), shift_shape=(1, 1)):
    """de/resident's kernel (``gpude.implementations.resident.build_resident_kernel``) with the changes asked
    for; the same arguments (``rot_shape``, ``shift_shape``: those of the function's arrays, for ``shared``)."""
    T = np.dtype(dtype).type
    P, BUF, D = int(threads), int(buf), int(dim)
    SHARED = bool(shared)
    ROT_SHAPE = tuple(int(n) for n in rot_shape) if SHARED else (1, 1, 1)
    SHIFT_SHAPE = tuple(int(n) for n in shift_shape) if SHARED else (1, 1)
    ROT_N, SHIFT_N = math.prod(ROT_SHAPE), math.prod(SHIFT_SHAPE)
    ROT_PLANE, ROT_ROW, SHIFT_ROW = ROT_SHAPE[1] * ROT_SHAPE[2], ROT_SHAPE[2], SHIFT_SHAPE[1]
    own = (D + 2 * BUF + 4 * P) * np.dtype(T).itemsize + 4 * 8
    need = own + (ROT_N + SHIFT_N) * np.dtype(T).itemsize
    if SHARED and need > STATIC_SHARED_BYTES:
        raise ValueError(f"shared: the function's data and the kernel's buffers need {need} bytes of shared memory, "
                         f"above the {STATIC_SHARED_BYTES} a block has statically")
    ops = build_de_ops(T, "cuda")
    pick, trial_value, pick_draw, pick_from = ops.pick, ops.trial_value, ops.pick_draw, ops.pick_from
    init_unit, _ = build_unit_steps(block_evaluate, dtype, threads, buf, dim)
    PICK4, DEFERRED, NOEVAL, BARRIER = bool(pick4), bool(deferred), bool(noeval), bool(barrier_only)
    INF = math.inf

    @cuda.jit(device=True)
    def all_hit(hit_gen, trials, g):
        for b in range(trials):
            if hit_gen[b] > g:
                return False
        return True

    @cuda.jit(device=True)
    def generation_unit(pop, fit, keys, lower, upper, F, CR, mode, shift, rot_t, perm, trace, hit_gen,
                        target, b, i, g, n, xs, buf_a, buf_z, red, draws):
        tid = cuda.threadIdx.x
        popsize = fit.shape[2]
        cur, nxt = (g - 1) % 2, g % 2
        take = False
        f = T(0)
        if i < n:
            key = keys[b]
            if PICK4:
                if tid < 4:
                    draws[tid] = pick_draw(key, g, i, tid, popsize, D)
                cuda.syncthreads()
                r1, r2, r3 = pick_from(i, draws[0], draws[1], draws[2])
                jrand = draws[3]
            else:
                r1, r2, r3, jrand = pick(key, g, i, popsize, D)
            j = tid
            while j < D:
                xs[j] = trial_value(key, g, i, j, popsize, D, jrand, F, CR, pop[cur, b, i, j],
                                    pop[cur, b, r1, j], pop[cur, b, r2, j], pop[cur, b, r3, j],
                                    lower, upper, mode)
                j += P
            cuda.syncthreads()
            if NOEVAL:
                f = xs[0]
            else:
                f = block_evaluate(xs, buf_a, buf_z, red, shift, rot_t, perm, tid)
            take = f <= fit[cur, b, i]
        j = tid
        while j < D:
            pop[nxt, b, i, j] = xs[j] if take else pop[cur, b, i, j]
            j += P
        if tid == 0:
            fi = f if take else fit[cur, b, i]
            fit[nxt, b, i] = fi
            if not DEFERRED:
                cuda.atomic.min(trace, (b, g), np.float64(fi))
            if fi <= target:
                mark_hit(hit_gen, b, g)
        cuda.syncthreads()

    @cuda.jit(device=True)
    def trace_generation(fit, trace, hit_gen, g, red):
        """trace[b, g] = the least error of trial b's generation g, for the trials of this block (b = block,
        block + G, ...) that ran it; the block's threads reduce through ``red[0]``."""
        tid = cuda.threadIdx.x
        trials, popsize = fit.shape[1], fit.shape[2]
        b = cuda.blockIdx.x
        while b < trials:
            if hit_gen[b] >= g:  # generation g ran for trial b (a hit lowers the flag to g at most)
                m = T(INF)
                i = tid
                while i < popsize:
                    m = min(m, fit[g % 2, b, i])
                    i += P
                red[0, tid] = m
                cuda.syncthreads()
                s = P // 2
                while s > 0:
                    if tid < s:
                        red[0, tid] = min(red[0, tid], red[0, tid + s])
                    cuda.syncthreads()
                    s //= 2
                if tid == 0:
                    trace[b, g] = np.float64(red[0, 0])
                cuda.syncthreads()
            b += cuda.gridDim.x

    @cuda.jit(device=True)
    def body(pop, fit, keys, lower, upper, F, CR, mode, shift, rot_t, perm, trace, hit_gen,
             state, target, max_fes, g_first, g_last, xs, buf_a, buf_z, red, draws):
        grid = cuda.cg.this_grid()
        tid = cuda.threadIdx.x
        trials, popsize = fit.shape[1], fit.shape[2]
        units = trials * popsize
        if g_first == 1:
            t = cuda.grid(1)
            stride = cuda.gridDim.x * cuda.blockDim.x
            length = trace.shape[1]
            while t < trials * length:
                trace[t // length, t % length] = INF
                t += stride
            t = cuda.grid(1)
            while t < trials + 1:
                hit_gen[t] = NO_HIT if t < trials else 0
                t += stride
            grid.sync()
            u = cuda.blockIdx.x
            while u < units:
                init_unit(pop, fit, keys, lower, upper, shift, rot_t, perm, trace, hit_gen, target,
                          u // popsize, u % popsize, xs, buf_a, buf_z, red)
                u += cuda.gridDim.x
            grid.sync()
        g = g_first
        done = all_hit(hit_gen, trials, g - 1)
        while not done and g <= g_last:
            n = min(popsize, max_fes - popsize * g)
            if DEFERRED and g > g_first:
                trace_generation(fit, trace, hit_gen, g - 1, red)
            if not BARRIER:
                u = cuda.blockIdx.x
                while u < units:
                    b = u // popsize
                    if hit_gen[b] >= g:
                        generation_unit(pop, fit, keys, lower, upper, F, CR, mode, shift, rot_t, perm, trace,
                                        hit_gen, target, b, u % popsize, g, n, xs, buf_a, buf_z, red, draws)
                    u += cuda.gridDim.x
            grid.sync()
            done = all_hit(hit_gen, trials, g)
            g += 1
        if DEFERRED and g - 1 >= g_first:
            trace_generation(fit, trace, hit_gen, g - 1, red)
        if cuda.blockIdx.x == 0 and tid == 0:
            state[0] = g - 1


    @cuda.jit(cache=False)
    def kernel(pop, fit, keys, lower, upper, F, CR, mode, shift, rot_t, perm, trace, hit_gen,
               state, target, max_fes, g_first, g_last):
        xs = cuda.shared.array(D, T)
        buf_a = cuda.shared.array(BUF, T)
        buf_z = cuda.shared.array(BUF, T)
        red = cuda.shared.array((4, P), T)
        draws = cuda.shared.array(4, np.int64)
        if SHARED:
            rot_s = cuda.shared.array(ROT_SHAPE, T)
            shift_s = cuda.shared.array(SHIFT_SHAPE, T)
            t = cuda.threadIdx.x
            while t < ROT_N:
                rot_s[t // ROT_PLANE, (t % ROT_PLANE) // ROT_ROW, t % ROT_ROW] = \
                    rot_t[t // ROT_PLANE, (t % ROT_PLANE) // ROT_ROW, t % ROT_ROW]
                t += P
            t = cuda.threadIdx.x
            while t < SHIFT_N:
                shift_s[t // SHIFT_ROW, t % SHIFT_ROW] = shift[t // SHIFT_ROW, t % SHIFT_ROW]
                t += P
            cuda.syncthreads()
            body(pop, fit, keys, lower, upper, F, CR, mode, shift_s, rot_s, perm, trace, hit_gen, state, target,
                 max_fes, g_first, g_last, xs, buf_a, buf_z, red, draws)
        else:
            body(pop, fit, keys, lower, upper, F, CR, mode, shift, rot_t, perm, trace, hit_gen, state, target,
                 max_fes, g_first, g_last, xs, buf_a, buf_z, red, draws)

    return kernel


class VariantResident(ResidentDE):
    """de/resident with :func:`build_variant_kernel`'s kernel (``variant``: a key of :data:`VARIANTS`)."""

    def __init__(self, function, params, variant: str = "resident", **options):
        self.variant = variant
        super().__init__(function, params, **options)

    def build_kernel(self, block_evaluate, dtype, threads, buf, dim, **options):
        """de/resident's kernel for ``resident``, else this module's with the variant's changes (the launch,
        its grid and arguments are de/resident's)."""
        changes = VARIANTS[self.variant]
        if changes is None:
            return build_resident_kernel(block_evaluate, dtype, threads, buf, dim, **options)
        shift, rot_t = self.fn.data[0], self.fn.data[1]
        return build_variant_kernel(block_evaluate, dtype, threads, buf, dim, *changes, rot_shape=rot_t.shape,
                                    shift_shape=shift.shape)


def make(variant: str, function: str, dim: int, popsize: int, generations: int, trials: int = 1):
    from gpude.run.trial import make_runner

    class Entry:  # make_runner's registry entry, our class
        @staticmethod
        def load():
            return VariantResident

    return make_runner("de", "resident", function, dim, popsize, popsize * (generations + 1), F=0.5, CR=0.3,
                       dtype="float32", target=-math.inf, trials_per_launch=trials, variant=variant, entry=Entry)


def check(functions=("N00", "F01"), dim=10, popsize=8, generations=3, trials=2, variants=tuple(VARIANTS)) -> int:
    """Every same-run variant's batch against de/resident's, bit for bit: 0 when all agree."""
    failed = 0
    for function in functions:
        seeds = list(range(1, trials + 1))
        want = make("resident", function, dim, popsize, generations, trials).run_batch(seeds)
        for variant in variants:
            if variant in TIMING_ONLY:
                continue
            try:  # the runner builds its kernel when it is made
                got = make(variant, function, dim, popsize, generations, trials).run_batch(seeds)
            except ValueError as e:  # shared memory too small for the function's data
                print(f"{function} D {dim} NP {popsize}, {variant}: not built ({e})")
                continue
            why = same_run(got, want)
            failed += bool(why)
            print(f"{function} D {dim} NP {popsize}, {variant}: {'the same run' if not why else 'DIFFERS: ' + why}")
    return 1 if failed else 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", help="CSV of the timings (written after every function)")
    p.add_argument("--functions", default="N00,F01,F10")
    p.add_argument("--variants", default=",".join(VARIANTS))
    p.add_argument("--trials", type=int, default=1, help="trials a launch")
    p.add_argument("--generations", type=int, default=4096)
    p.add_argument("--dim", type=int, default=100)
    p.add_argument("--popsize", type=int, default=250)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--check", action="store_true", help="every same-run variant against de/resident at tiny "
                   "sizes, and stop")
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
        for variant in ["resident", *[v for v in variants if v != "resident"]]:
            try:  # the runner builds its kernel when it is made
                runner = make(variant, function, D, NP, G, B)
                got = runner.run_batch(seeds)  # compiles, loads, and is the run checked
            except ValueError as e:  # shared memory too small for the function's data
                print(f"{function}, {variant}: not built ({e})", flush=True)
                continue
            if want is None:
                want = got
            why = "timing only" if variant in TIMING_ONLY else same_run(got, want)
            runners[variant] = (runner, why)
        for repeat in range(args.repeats):  # the variants interleaved: a drift of the clock falls on all
            for variant, (runner, why) in runners.items():
                seconds = launch_seconds(runner, G)
                rows.append({"function": function, "variant": variant, "repeat": repeat, "launch_s": seconds,
                             "per_generation_us": seconds / G * 1e6, "same_run_as_resident": not why,
                             "differs": why, "blocks": runner.blocks, "threads": runner.threads, "trials": B,
                             "generations": G, "dim": D, "popsize": NP, **prov})
                print({k: rows[-1][k] for k in ("function", "variant", "repeat", "per_generation_us",
                                                "same_run_as_resident")}, flush=True)
        anchor = [r["launch_s"] for r in rows if r["function"] == function and r["variant"] == "resident"]
        for r in rows:
            if r["function"] == function:
                r["x_resident_median"] = r["launch_s"] / statistics.median(anchor)
        if args.out:
            import pandas as pd

            write_csv_atomic(pd.DataFrame(rows), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
