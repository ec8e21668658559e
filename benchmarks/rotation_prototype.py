"""Issue 67's prototype, timed before anything is built: a generation's rotation as one register-tiled
matrix product instead of a matrix-vector product per individual.

de/block (one trial a block) spends 11.8 warp instructions for every full-warp multiply-add of F01's
rotation and runs 16.8x the FP32 FMA bound (``results/benchmarks/block_profile/``). Its evaluator
rotates each individual alone, z = M (x - o), a warp an individual, every element of M loaded once for
one multiply-add. Rotating a generation's NP trial vectors together is Z = (X - o) M^T, a product whose
register tiles feed each loaded value to several multiply-adds. Three kernels over the same B trials
(a block each) and G generations, the population in global memory, F01's D x D matrix:

``matvec``
    de/block's form: a warp an individual (16 warps a block), lanes over rows, eight accumulators, M^T
    read from global memory (L1) and x from shared memory (``gpude.functions.gpu``'s ``rotate``);
``gemm:TXxTY``
    TX x TY threads, each a tile of TM = ceil(NP / TX) individuals by TN = ceil(D / TY) rows in
    registers; K-chunks of X and M^T staged in shared memory (individuals fastest: a warp reads
    consecutive words of X and one broadcast word of M^T);
``gemm_chunked:TXxTY:CHUNK``
    the product a pass of CHUNK individuals at a time, as a generation with the function's own evaluator would
    run it (whose ``component`` reads z from shared memory, a warp an individual): each pass's Z into shared
    memory (CHUNK x D within the 48 KB a block has), then a warp an individual sums its z^2 there; fewer
    individuals a thread than ``gemm``'s, so fewer multiply-adds a load;
``block``
    the anchor: de/block's whole generation on F01 (``make_runner``; trial vectors, evaluation,
    selection), timed warm in the same process: a batch of G generations (its host work included) and
    a batch of 2G less it (the generations alone); the same on N00 (the sphere: no rotation), whose
    generation is the rest of de/block's, so that F01's less N00's is the rotation inside de/block.

Every kernel writes each individual's sum of z^2 over the rows and generations, which ``--check``
compares with numpy in float64 (the simulator at tiny sizes; on a GPU at the timed sizes too). Rows:
seconds a launch, per trial-generation, the FMA bound (B G NP D^2 multiply-adds at 128 FP32 lanes an
SM and the device's clock) and ratios, registers and local memory a thread, device and versions.

    python benchmarks/rotation_prototype.py --out OUT.csv [--trials 264] [--generations 512]
        [--layouts 32x16,64x8,32x8] [--chunked 16x32:64,32x16:64,16x16:32,8x32:32]
    NUMBA_ENABLE_CUDASIM=1 python benchmarks/rotation_prototype.py --check
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from numba import cuda, float32  # noqa: E402

from gpude.core import provenance  # noqa: E402
from gpude.core.gpu_runtime import simulator_enabled  # noqa: E402
from gpude.core.gpu_runtime import warp_barrier as make_warp_barrier  # noqa: E402
from gpude.core.io import write_csv_atomic  # noqa: E402

KC = 16  # a K-chunk: columns of X (rows of M^T) staged in shared memory at a time
FP32_LANES_PER_SM = 128  # Hopper


def build_matvec(dim: int, popsize: int, warps: int):
    """de/block's rotation: warp w rotates individuals w, w + warps, ..., lanes over the rows."""
    D, NP, W = dim, popsize, warps
    D8 = D - D % 8
    warp_barrier = make_warp_barrier()  # (the block's on the simulator: every warp makes equal rounds there)

    @cuda.jit
    def kernel(pop, shift, rot_t, generations, out):
        xs_all = cuda.shared.array((W, D), float32)
        reds = cuda.shared.array((W, 32), float32)
        tid, b = cuda.threadIdx.x, cuda.blockIdx.x
        lane, w = tid % 32, tid // 32
        xs, red = xs_all[w], reds[w]
        for g in range(generations):
            offset = float32(g) * float32(1e-3)
            i = w
            while i < NP:
                j = lane
                while j < D:
                    xs[j] = pop[b, i, j] - shift[j] + offset
                    j += 32
                warp_barrier()
                part = float32(0)
                r = lane
                while r < D:
                    a0, a1, a2, a3 = float32(0), float32(0), float32(0), float32(0)
                    a4, a5, a6, a7 = float32(0), float32(0), float32(0), float32(0)
                    for j in range(0, D8, 8):
                        a0 += rot_t[j, r] * xs[j]
                        a1 += rot_t[j + 1, r] * xs[j + 1]
                        a2 += rot_t[j + 2, r] * xs[j + 2]
                        a3 += rot_t[j + 3, r] * xs[j + 3]
                        a4 += rot_t[j + 4, r] * xs[j + 4]
                        a5 += rot_t[j + 5, r] * xs[j + 5]
                        a6 += rot_t[j + 6, r] * xs[j + 6]
                        a7 += rot_t[j + 7, r] * xs[j + 7]
                    for j in range(D8, D):
                        a0 += rot_t[j, r] * xs[j]
                    z = ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7))
                    part += z * z
                    r += 32
                red[lane] = part
                warp_barrier()
                s = 16
                while s > 0:  # the warp's sum, a tree in shared memory
                    if lane < s:
                        red[lane] += red[lane + s]
                    warp_barrier()
                    s //= 2
                if lane == 0:
                    out[b, i] += red[0]
                warp_barrier()  # xs and red are rewritten for the warp's next individual
                i += W

    return kernel, 32 * W


def build_gemm(dim: int, popsize: int, tx: int, ty: int):
    """Z = (X - o) M^T a generation: thread (x, y) holds individuals x + TX a (a < TM) by rows
    y + TY c (c < TN) in registers."""
    D, NP, TX, TY = dim, popsize, tx, ty
    TM, TN = -(-NP // TX), -(-D // TY)
    NPP, DP = TX * TM, TY * TN  # padded: the tile's spare individuals and rows compute zeros
    P = TX * TY

    @cuda.jit
    def kernel(pop, shift, rot_t, generations, out):
        xs = cuda.shared.array((KC, NPP), float32)  # xs[k, individual]
        ms = cuda.shared.array((KC, DP), float32)  # ms[k, row] = M[row, k0 + k]
        sums = cuda.shared.array(NPP, float32)
        tid, b = cuda.threadIdx.x, cuda.blockIdx.x
        x, y = tid % TX, tid // TX
        acc = cuda.local.array((TM, TN), float32)
        xv = cuda.local.array(TM, float32)
        mv = cuda.local.array(TN, float32)
        for g in range(generations):
            offset = float32(g) * float32(1e-3)
            t = tid
            while t < NPP:
                sums[t] = float32(0)
                t += P
            for a in range(TM):
                for c in range(TN):
                    acc[a, c] = float32(0)
            for k0 in range(0, D, KC):
                cuda.syncthreads()  # the chunk before is read by every thread
                t = tid
                while t < KC * NPP:  # k fastest: a warp reads runs of one individual's coordinates
                    k, i = t % KC, t // KC
                    v = float32(0)
                    if i < NP and k0 + k < D:
                        v = pop[b, i, k0 + k] - shift[k0 + k] + offset
                    xs[k, i] = v
                    t += P
                t = tid
                while t < KC * DP:  # rows fastest: consecutive addresses of rot_t
                    k, r = t // DP, t % DP
                    v = float32(0)
                    if r < D and k0 + k < D:
                        v = rot_t[k0 + k, r]
                    ms[k, r] = v
                    t += P
                cuda.syncthreads()
                for k in range(KC):
                    for a in range(TM):
                        xv[a] = xs[k, x + TX * a]
                    for c in range(TN):
                        mv[c] = ms[k, y + TY * c]
                    for a in range(TM):
                        for c in range(TN):
                            acc[a, c] += xv[a] * mv[c]
            for a in range(TM):
                part = float32(0)
                for c in range(TN):
                    part += acc[a, c] * acc[a, c]
                cuda.atomic.add(sums, x + TX * a, part)
            cuda.syncthreads()
            t = tid
            while t < NP:
                out[b, t] += sums[t]
                t += P
            cuda.syncthreads()

    return kernel, P


#: shared memory a chunked product's block may take (static, without the opt-in)
SHARED_BYTES = 48 * 1024


def build_gemm_chunked(dim: int, popsize: int, tx: int, ty: int, chunk: int):
    """The product a pass of ``chunk`` individuals at a time, as a generation with the function's own evaluator
    would run it: Z of the pass into shared memory (``chunk`` x D), then a warp an individual reads its z there,
    lanes over the rows (the evaluator's ``component`` reads z so), and sums z^2. Thread (x, y) holds individuals
    x + TX a (a < TM = chunk / TX) by rows y + TY c (c < TN) of the pass in registers."""
    D, NP, TX, TY, CH = dim, popsize, tx, ty, chunk
    if CH % TX:
        raise ValueError(f"a chunk of {CH} individuals is not a whole number of the layout's {TX} columns")
    TM, TN = CH // TX, -(-D // TY)
    DP = TY * TN
    P = TX * TY
    if P % 32:
        raise ValueError(f"{TX}x{TY} threads are not whole warps")
    WARPS = P // 32
    need = 4 * (KC * CH + KC * DP + CH * DP + 32 * WARPS)
    if need > SHARED_BYTES:
        raise ValueError(f"a chunk of {CH} at D {D} needs {need} bytes of shared memory, more than {SHARED_BYTES}")
    warp_barrier = make_warp_barrier()  # (the block's on the simulator: every warp makes equal rounds there)

    @cuda.jit
    def kernel(pop, shift, rot_t, generations, out):
        xs = cuda.shared.array((KC, CH), float32)  # xs[k, individual of the pass]
        ms = cuda.shared.array((KC, DP), float32)  # ms[k, row] = M[row, k0 + k]
        zs = cuda.shared.array((CH, DP), float32)  # the pass's z, a row an individual
        reds = cuda.shared.array((WARPS, 32), float32)
        tid, b = cuda.threadIdx.x, cuda.blockIdx.x
        x, y = tid % TX, tid // TX
        lane, w = tid % 32, tid // 32
        red = reds[w]
        acc = cuda.local.array((TM, TN), float32)
        xv = cuda.local.array(TM, float32)
        mv = cuda.local.array(TN, float32)
        for g in range(generations):
            offset = float32(g) * float32(1e-3)
            for c0 in range(0, NP, CH):
                for a in range(TM):
                    for c in range(TN):
                        acc[a, c] = float32(0)
                for k0 in range(0, D, KC):
                    cuda.syncthreads()  # the chunk before is read by every thread
                    t = tid
                    while t < KC * CH:  # k fastest: a warp reads runs of one individual's coordinates
                        k, i = t % KC, t // KC
                        v = float32(0)
                        if c0 + i < NP and k0 + k < D:
                            v = pop[b, c0 + i, k0 + k] - shift[k0 + k] + offset
                        xs[k, i] = v
                        t += P
                    t = tid
                    while t < KC * DP:  # rows fastest: consecutive addresses of rot_t
                        k, r = t // DP, t % DP
                        v = float32(0)
                        if r < D and k0 + k < D:
                            v = rot_t[k0 + k, r]
                        ms[k, r] = v
                        t += P
                    cuda.syncthreads()
                    for k in range(KC):
                        for a in range(TM):
                            xv[a] = xs[k, x + TX * a]
                        for c in range(TN):
                            mv[c] = ms[k, y + TY * c]
                        for a in range(TM):
                            for c in range(TN):
                                acc[a, c] += xv[a] * mv[c]
                for a in range(TM):
                    for c in range(TN):
                        zs[x + TX * a, y + TY * c] = acc[a, c]
                cuda.syncthreads()
                i = w
                while i < CH:  # a warp an individual of the pass (the same rounds for every warp)
                    part = float32(0)
                    r = lane
                    while r < D:
                        part += zs[i, r] * zs[i, r]
                        r += 32
                    red[lane] = part
                    warp_barrier()
                    s = 16
                    while s > 0:
                        if lane < s:
                            red[lane] += red[lane + s]
                        warp_barrier()
                        s //= 2
                    if lane == 0 and c0 + i < NP:
                        out[b, c0 + i] += red[0]
                    warp_barrier()
                    i += WARPS
                cuda.syncthreads()  # zs is rewritten by the next pass

    return kernel, P


def expected(pop, shift, rot_t, generations):
    """Each individual's sum over generations and rows of z^2, in float64."""
    m = rot_t.astype(np.float64).T  # M
    total = np.zeros(pop.shape[:2])
    for g in range(generations):
        xs = pop.astype(np.float64) - shift + np.float32(g) * np.float32(1e-3)
        total += ((xs @ m.T) ** 2).sum(axis=2)
    return total


def inputs(trials: int, popsize: int, dim: int, seed: int = 1):
    rng = np.random.default_rng(seed)
    pop = rng.uniform(-100, 100, (trials, popsize, dim)).astype(np.float32)
    shift = rng.uniform(-80, 80, dim).astype(np.float32)
    # not orthogonal: an orthogonal M keeps |z| = |x - o| and the check would not see a wrong product
    m = rng.standard_normal((dim, dim)) / np.sqrt(dim)
    return pop, shift, np.ascontiguousarray(m.T).astype(np.float32)


def resources(kernel):
    """(registers, local bytes) a thread of ``kernel``'s one build; NaN on the simulator."""
    if simulator_enabled():
        return math.nan, math.nan
    try:
        compiled = next(iter(kernel.overloads.values()))
        return compiled.regs_per_thread, compiled.local_mem_per_thread
    except Exception:  # (the timing matters more than this)
        return math.nan, math.nan


def time_kernel(kernel, threads, pop, shift, rot_t, generations):
    """(seconds of a warm launch, its output, registers, local bytes)."""
    d_pop, d_shift, d_rot = cuda.to_device(pop), cuda.to_device(shift), cuda.to_device(rot_t)
    out = cuda.to_device(np.zeros(pop.shape[:2], np.float32))
    kernel[pop.shape[0], threads](d_pop, d_shift, d_rot, 1, out)  # compiles and loads
    out = cuda.to_device(np.zeros(pop.shape[:2], np.float32))
    cuda.synchronize()
    t0 = time.perf_counter()
    kernel[pop.shape[0], threads](d_pop, d_shift, d_rot, generations, out)
    cuda.synchronize()
    return (time.perf_counter() - t0, out.copy_to_host(), *resources(kernel))


def time_block(trials: int, generations: int, dim: int, popsize: int, function: str = "F01") -> tuple[float, float]:
    """de/block's whole generations on ``function``: (a warm batch of ``trials`` runs of ``generations``, the
    same batch's ``generations`` alone). A batch also pays its host work once (seeds, initial
    population, rows and traces of every trial); a batch of twice the generations less one of
    ``generations`` leaves the kernel's generations only."""
    from gpude.run.trial import make_runner

    def batch_s(g: int) -> float:
        runner = make_runner("de", "block", function, dim, popsize, popsize * (g + 1), F=0.5, CR=0.3,
                             dtype="float32", target=-math.inf, trials_per_launch=trials)  # (no early stop)
        runner.run_batch(list(range(1, trials + 1)))  # compiles and loads
        t0 = time.perf_counter()
        runner.run_batch(list(range(1, trials + 1)))
        return time.perf_counter() - t0

    one, two = batch_s(generations), batch_s(2 * generations)
    return one, two - one


def kernels(popsize: int, dim: int, warps: int, layout_text: str, chunked_text: str = ""):
    """[(name, builder)]: matvec with ``warps`` warps a block, a gemm a layout ``TXxTY``, a chunked gemm a
    ``TXxTY:CHUNK``."""
    out = [("matvec", partial(build_matvec, dim, popsize, warps))]
    for spec in (s for s in layout_text.split(",") if s):
        tx, ty = (int(v) for v in spec.split("x"))
        out.append((f"gemm:{spec}", partial(build_gemm, dim, popsize, tx, ty)))
    for spec in (s for s in chunked_text.split(",") if s):
        layout, chunk = spec.split(":")
        tx, ty = (int(v) for v in layout.split("x"))
        out.append((f"gemm_chunked:{spec}", partial(build_gemm_chunked, dim, popsize, tx, ty, int(chunk))))
    return out


CHECKS = (  # (trials, NP, D, generations, matvec warps (rounds equal on the simulator), gemm layouts, chunked)
    (2, 8, 10, 2, 2, "4x4", ""),
    # a partial tile of individuals and rows, two K-chunks (the second padded); chunked: two passes, the last partial
    (2, 7, 21, 2, 1, "4x4,2x8", "4x8:4"),
)


def check() -> int:
    """Both kernels against numpy (float64) at tiny sizes: 0 when they agree to float32 rounding."""
    failed = 0
    for trials, popsize, dim, generations, warps, layout, chunked in CHECKS:
        pop, shift, rot_t = inputs(trials, popsize, dim)
        want = expected(pop, shift, rot_t, generations)
        for name, build in kernels(popsize, dim, warps, layout, chunked):
            kernel, threads = build()
            got = time_kernel(kernel, threads, pop, shift, rot_t, generations)[1]
            ok = np.allclose(got, want, rtol=1e-4)
            failed += not ok
            print(f"NP {popsize}, D {dim}, {name}: largest relative difference "
                  f"{np.max(np.abs(got / want - 1)):.2e}: {'ok' if ok else 'DIFFERS'}")
    return 1 if failed else 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", help="CSV of the timings (written after every row)")
    p.add_argument("--trials", type=int, default=264, help="trials (blocks) a launch")
    p.add_argument("--generations", type=int, default=512)
    p.add_argument("--dim", type=int, default=100)
    p.add_argument("--popsize", type=int, default=250)
    p.add_argument("--warps", type=int, default=16, help="matvec's warps a block (de/block's at NP 250: 16)")
    p.add_argument("--layouts", default="32x16,64x8,32x8", help="gemm thread layouts TXxTY, comma-separated")
    p.add_argument("--chunked", default="16x32:64,32x16:64,16x16:32,8x32:32",
                   help="chunked gemm layouts and passes TXxTY:CHUNK (individuals a pass), comma-separated")
    p.add_argument("--clock-ghz", type=float, help="the SM clock of the bound (default: the device's)")
    p.add_argument("--no-anchor", action="store_true", help="leave out de/block's whole generation")
    p.add_argument("--check", action="store_true", help="the kernels against numpy at tiny sizes")
    args = p.parse_args(argv)
    if args.check:
        return check()
    B, G, D, NP = args.trials, args.generations, args.dim, args.popsize
    pop, shift, rot_t = inputs(B, NP, D)
    want = expected(pop[:4], shift, rot_t, G)  # the first trials' sums: a check at the timed size
    dev = cuda.get_current_device()
    try:
        clock_hz = args.clock_ghz * 1e9 if args.clock_ghz else dev.CLOCK_RATE * 1e3  # (kHz)
    except Exception:  # an attribute this driver does not report
        clock_hz = math.nan
    sms = getattr(dev, "MULTIPROCESSOR_COUNT", math.nan)  # (the simulator's device has none)
    bound_s = B * G * NP * D * D / (sms * FP32_LANES_PER_SM * clock_hz)
    prov = {**provenance.gpu(), **provenance.cpu(), **provenance.software(), "git_commit": provenance.git_commit()}
    rows = []

    def add(row):
        row.update(trials=B, generations=G, dim=D, popsize=NP, clock_ghz=clock_hz / 1e9, fma_bound_s=bound_s,
                   x_bound=row["launch_s"] / bound_s, **prov)
        rows.append(row)
        print({k: row[k] for k in ("kernel", "launch_s", "x_bound", "registers", "local_bytes", "agrees")}, flush=True)
        if args.out:
            import pandas as pd

            write_csv_atomic(pd.DataFrame(rows), args.out)

    for name, build in kernels(NP, D, args.warps, args.layouts, args.chunked):
        try:
            kernel, threads = build()
            seconds, got, regs, local = time_kernel(kernel, threads, pop, shift, rot_t, G)
            agrees = bool(np.allclose(got[:4], want, rtol=1e-3))
            add({"kernel": name, "threads": threads, "launch_s": seconds, "registers": regs, "local_bytes": local,
                 "agrees": agrees, "error": ""})
        except Exception as exc:  # a kernel that does not build or launch is a row too
            add({"kernel": name, "threads": math.nan, "launch_s": math.nan, "registers": math.nan,
                 "local_bytes": math.nan, "agrees": False, "error": f"{type(exc).__name__}: {exc}"[:300]})
    if not args.no_anchor:
        # F01 (a rotation, D^2 multiply-adds an evaluation) and N00 (the sphere, none): their difference is
        # what de/block's rotation costs in its own generation, N00 the rest of the generation
        for function in ("F01", "N00"):
            batch, generations_only = time_block(B, G, D, NP, function)
            for name, seconds in ((f"block {function} (a batch of G generations, its host work included)", batch),
                                  (f"block {function} (whole generation: 2G less G generations)", generations_only)):
                add({"kernel": name, "threads": 512, "launch_s": seconds, "registers": math.nan,
                     "local_bytes": math.nan, "agrees": math.nan, "error": ""})
    return 0


if __name__ == "__main__":
    sys.exit(main())
