"""A prototype of DE with one trial per thread block, timed before the implementation
(``de/block``) was built out.

DE/rand/1/bin on F01 (shifted, rotated Zakharov; case study 1: D 100, NP 250, F 0.5, CR 0.3, float32,
1e7 FEs: 39,999 generations), the operators and random stream of every DE implementation
(``gpude.algorithms.de.build_de_ops``: the same picks and trial vectors as ``de/resident``; only the
evaluation's summation order differs). A block of 1,024 threads is one trial: its 32 warps each own
the individuals i = w, w + 32, ... (8 at NP 250). Per generation a warp makes its individuals' trial
vectors (lanes over coordinates), evaluates them ``--groups`` at a time (each lane a few rows of
z = M (x - o); every element of M, read from global memory (L1/L2), used for the group's individuals:
8 reads M once a generation, 4 twice with half the accumulators a thread),
keeps the better of trial and parent, and the block meets at one barrier. Two variants:

``shared``
    both populations (2 NP D floats: 200 KB at case study 1) in dynamic shared memory, above the
    48 KB a kernel gets without asking (``CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES``, numba-cuda
    issue #94's driver-level opt-in);
``global``
    the same kernel with the populations in global memory (served by L1/L2).

No target test and no trace (no run of the side by side reaches 1e-7 on F01): the prototype times the
generations. ``de/resident`` (one trial, and ``--resident-batch`` per launch) is timed in the same
process as the anchor, so that its committed ratio to the authors' iDE on the same GPU model
(``results/reference/nvidia-h100/side_by_side``) carries the prototype's over.

    python benchmarks/block_prototype.py --out OUT.csv [--trials 1,132,264] [--max-fes 1e7]
    NUMBA_ENABLE_CUDASIM=1 python benchmarks/block_prototype.py --check   # the simulator: tiny sizes,
                                                                          # checked against de/sequential
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

from numba import cuda, float32  # noqa: E402

from gpude.core import provenance  # noqa: E402
from gpude.algorithms.de import build_de_ops  # noqa: E402
from gpude.functions import get_function  # noqa: E402
from gpude.core.gpu_runtime import simulator_enabled  # noqa: E402
from gpude.core.io import write_csv_atomic  # noqa: E402
from gpude.core.prebound import allow_dynamic_shared  # noqa: E402
from gpude.core.rng import seed_key  # noqa: E402

THREADS = 1024
THREAD_REGISTERS = 65536 // THREADS  # an SM's register file over a block of 1,024 (the H100 refused more)
WARPS = THREADS // 32
MODE_RESAMPLE = 0  # DEParams.bound_mode of bounds="resample"


def build_kernel(dim: int, popsize: int, shared: bool, group: int = 8):
    """The prototype's kernel for one (D, NP), where the populations live, and how many of a warp's
    individuals it evaluates together (``group``: fewer accumulators a thread, more passes over M)."""
    D, NP = int(dim), int(popsize)
    ROWS = (D + 31) // 32      # rows of z per lane
    KMAX = (NP + WARPS - 1) // WARPS  # individuals per warp
    NPD, FIT = NP * D, 2 * NP  # (array shapes must be compile-time constants, not expressions)
    ops = build_de_ops(np.float32, "cuda")
    init_value, pick, trial_value = ops.init_value, ops.pick, ops.trial_value
    SHARED, GROUP = bool(shared), int(group)
    SIM = simulator_enabled()  # numba's simulator has no warp shuffles nor syncwarp: block barriers there

    @cuda.jit(fastmath=False, **({} if SIM else {"max_registers": THREAD_REGISTERS}))
    def kernel(pop_g, keys, shift, rot_t, F, CR, lower, upper, generations, best):
        b = cuda.blockIdx.x
        tid = cuda.threadIdx.x
        lane = tid % 32
        w = tid // 32
        if SHARED:
            P = cuda.shared.array(0, float32)  # 2 NP D: generation parity p at p NP D
        else:
            P = pop_g[b]
        fit = cuda.shared.array(FIT, float32)
        o = cuda.shared.array(D, float32)
        key = keys[b]
        j = tid
        while j < D:
            o[j] = shift[j]
            j += THREADS
        idx = tid
        while idx < NPD:
            i = idx // D
            P[idx] = init_value(key, i, idx - i * D, NP, D, lower, upper)
            idx += THREADS
        cuda.syncthreads()
        acc = cuda.local.array((GROUP, ROWS), float32)
        mreg = cuda.local.array(ROWS, float32)
        red = cuda.shared.array((WARPS, 32, 2), float32)  # (the simulator's warp sums)
        for g in range(0, generations + 1):
            cur = ((g - 1) % 2) * NPD if g > 0 else 0
            nxt = (g % 2) * NPD
            # trial vectors of this warp's individuals into the next buffer (generation 0: none)
            if g > 0:
                for k in range(KMAX):
                    i = w + k * WARPS
                    if i < NP:
                        r1, r2, r3, jrand = pick(key, g, i, NP, D)
                        j = lane
                        while j < D:
                            P[nxt + i * D + j] = trial_value(
                                key, g, i, j, NP, D, jrand, F, CR, P[cur + i * D + j], P[cur + r1 * D + j],
                                P[cur + r2 * D + j], P[cur + r3 * D + j], lower, upper, MODE_RESAMPLE)
                            j += 32
                if SIM:
                    cuda.syncthreads()
                else:
                    cuda.syncwarp()
            # z = M (x - o) for GROUP of the warp's individuals at once: per coordinate j, a lane's
            # ROWS elements of M's column j into registers, then the GROUP x ROWS products (M read
            # once per pass; x_i[j] a broadcast read of shared memory). rot_t is padded to 32 ROWS
            # columns and i clamped, so the inner loops have no branches.
            for base in range(0, KMAX, GROUP):
                for k in range(GROUP):
                    for s in range(ROWS):
                        acc[k, s] = float32(0.0)
                for j in range(D):
                    oj = o[j]
                    for s in range(ROWS):
                        mreg[s] = rot_t[j, lane + 32 * s]
                    for k in range(GROUP):
                        i = min(w + (base + k) * WARPS, NP - 1)
                        xv = P[nxt + i * D + j] - oj
                        for s in range(ROWS):
                            acc[k, s] += mreg[s] * xv
                # Zakharov: sum z^2 + s^2 + s^4, s = sum 0.5 (r + 1) z_r; the warp's sums by shuffles
                for k in range(GROUP):
                    i = w + (base + k) * WARPS
                    s1 = float32(0.0)
                    s2 = float32(0.0)
                    for s in range(ROWS):
                        r = lane + 32 * s
                        if r < D:
                            z = acc[k, s]
                            s1 += z * z
                            s2 += float32(0.5) * float32(r + 1) * z
                    if SIM:
                        red[w, lane, 0] = s1
                        red[w, lane, 1] = s2
                        cuda.syncthreads()
                        s1 = float32(0.0)
                        s2 = float32(0.0)
                        for q in range(32):
                            s1 += red[w, q, 0]
                            s2 += red[w, q, 1]
                        cuda.syncthreads()
                    else:
                        off = 16
                        while off > 0:
                            s1 += cuda.shfl_down_sync(0xFFFFFFFF, s1, off)
                            s2 += cuda.shfl_down_sync(0xFFFFFFFF, s2, off)
                            off //= 2
                        s1 = cuda.shfl_sync(0xFFFFFFFF, s1, 0)
                        s2 = cuda.shfl_sync(0xFFFFFFFF, s2, 0)
                    f = s1 + s2 * s2 + s2 * s2 * s2 * s2
                    if base + k < KMAX and i < NP:
                        if g == 0:
                            if lane == 0:
                                fit[i] = f
                        else:
                            parent = fit[(g - 1) % 2 * NP + i]
                            keep_trial = f <= parent
                            if lane == 0:
                                fit[(g % 2) * NP + i] = f if keep_trial else parent
                            if not keep_trial:
                                j = lane
                                while j < D:
                                    P[nxt + i * D + j] = P[cur + i * D + j]
                                    j += 32
            cuda.syncthreads()
        if tid == 0:
            last = (generations % 2) * NP
            m = fit[last]
            for i in range(1, NP):
                m = min(m, fit[last + i])
            best[b] = m

    return kernel


REGISTER_KERNEL = """
def kernel(pop_g, keys, shift, rot_t, F, CR, lower, upper, generations, best):
    b = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    lane = tid % 32
    w = tid // 32
    if SHARED:
        P = cuda.shared.array(0, float32)
    else:
        P = pop_g[b]
    fit = cuda.shared.array(FIT, float32)
    o = cuda.shared.array(D, float32)
    key = keys[b]
    j = tid
    while j < D:
        o[j] = shift[j]
        j += THREADS
    idx = tid
    while idx < NPD:
        i = idx // D
        P[idx] = init_value(key, i, idx - i * D, NP, D, lower, upper)
        idx += THREADS
    cuda.syncthreads()
    for g in range(0, generations + 1):
        cur = ((g - 1) % 2) * NPD if g > 0 else 0
        nxt = (g % 2) * NPD
        if g > 0:
            for k in range(KMAX):
                i = w + k * WARPS
                if i < NP:
                    r1, r2, r3, jrand = pick(key, g, i, NP, D)
                    j = lane
                    while j < D:
                        P[nxt + i * D + j] = trial_value(
                            key, g, i, j, NP, D, jrand, F, CR, P[cur + i * D + j], P[cur + r1 * D + j],
                            P[cur + r2 * D + j], P[cur + r3 * D + j], lower, upper, MODE_RESAMPLE)
                        j += 32
            cuda.syncwarp()
        for base in range(0, KMAX, GROUP):
@ROWS_INIT@
            for j in range(D):
                oj = o[j]
@LOADS@
@FMAS@
@FINISH@
        cuda.syncthreads()
    if tid == 0:
        last = (generations % 2) * NP
        m = fit[last]
        for i in range(1, NP):
            m = min(m, fit[last + i])
        best[b] = m
"""

FINISH_ONE = """
            i = w + (base + @K@) * WARPS
            s1 = float32(0.0)
            s2 = float32(0.0)
@SUMS@
            off = 16
            while off > 0:
                s1 += cuda.shfl_down_sync(0xFFFFFFFF, s1, off)
                s2 += cuda.shfl_down_sync(0xFFFFFFFF, s2, off)
                off //= 2
            s1 = cuda.shfl_sync(0xFFFFFFFF, s1, 0)
            s2 = cuda.shfl_sync(0xFFFFFFFF, s2, 0)
            f = s1 + s2 * s2 + s2 * s2 * s2 * s2
            if base + @K@ < KMAX and i < NP:
                if g == 0:
                    if lane == 0:
                        fit[i] = f
                else:
                    parent = fit[(g - 1) % 2 * NP + i]
                    keep_trial = f <= parent
                    if lane == 0:
                        fit[(g % 2) * NP + i] = f if keep_trial else parent
                    if not keep_trial:
                        j = lane
                        while j < D:
                            P[nxt + i * D + j] = P[cur + i * D + j]
                            j += 32
"""


def build_register_kernel(dim: int, popsize: int, shared: bool, group: int, threads: int):
    """The tiled kernel with its GROUP x ROWS accumulators as named scalars (generated source), so
    that they live in registers: numba keeps a ``cuda.local.array`` indexed in loops in local
    memory. ``threads`` a block (its register cap: 65,536 / threads). GPU only (warp shuffles)."""
    D, NP, K, T = int(dim), int(popsize), int(group), int(threads)
    R = (D + 31) // 32
    W = T // 32
    ops = build_de_ops(np.float32, "cuda")
    ind = " " * 12
    rows_init = "\n".join(f"{ind}a{k}_{s} = float32(0.0)" for k in range(K) for s in range(R))
    rows_init += "\n" + "\n".join(f"{ind}i{k} = min(w + (base + {k}) * WARPS, NP - 1) * D + nxt" for k in range(K))
    ind2 = " " * 16
    loads = "\n".join(f"{ind2}m{s} = rot_t[j, lane + {32 * s}]" for s in range(R))
    loads += "\n" + "\n".join(f"{ind2}x{k} = P[i{k} + j] - oj" for k in range(K))
    fmas = "\n".join(f"{ind2}a{k}_{s} += m{s} * x{k}" for k in range(K) for s in range(R))
    finish = ""
    for k in range(K):
        sums = "\n".join(f"{ind}z = a{k}_{s}\n{ind}s1 += z * z\n{ind}s2 += float32({0.5}) * float32(lane + {32 * s + 1}) * z"
                         for s in range(R))
        finish += FINISH_ONE.replace("@K@", str(k)).replace("@SUMS@", sums)
    src = (REGISTER_KERNEL.replace("@ROWS_INIT@", rows_init).replace("@LOADS@", loads).replace("@FMAS@", fmas)
           .replace("@FINISH@", finish))
    env = {"cuda": cuda, "float32": float32, "init_value": ops.init_value, "pick": ops.pick,
           "trial_value": ops.trial_value, "MODE_RESAMPLE": MODE_RESAMPLE, "SHARED": bool(shared), "D": D, "NP": NP,
           "NPD": NP * D, "FIT": 2 * NP, "THREADS": T, "WARPS": W, "KMAX": (NP + W - 1) // W, "GROUP": K}
    exec(compile(src, f"<register_kernel K{K} T{T}>", "exec"), env)
    return cuda.jit(fastmath=False, max_registers=65536 // T)(env["kernel"])


def run_register_variant(shared: bool, group: int, threads: int, trials: int, max_fes: int, dim: int = 100,
                         popsize: int = 250, seed0: int = 1):
    """:func:`time_launch` of the register-tiled kernel on F01."""
    fn = get_function("F01", dim)
    kernel = build_register_kernel(dim, popsize, shared, group, threads)
    keys, pop, best = launch_buffers(trials, shared, popsize, dim, seed0)
    args = (pop, keys, cuda.to_device(np.ascontiguousarray(fn.program.shift[0], dtype=np.float32)),
            cuda.to_device(padded_rotation(fn.program, dim)), np.float32(0.5), np.float32(0.3),
            np.float32(fn.lower), np.float32(fn.upper), np.int32(max_fes // popsize - 1), best)
    return time_launch(kernel, args, trials, threads, shared)


def padded_rotation(prog, dim: int) -> np.ndarray:
    """``rot_t[j, r] = M[r, j]`` in float32, zero for r >= D up to the next multiple of 32 (the tiled
    kernels' lanes read their rows without a bounds test)."""
    padded = np.zeros((dim, 32 * ((dim + 31) // 32)), dtype=np.float32)
    padded[:, :dim] = np.asarray(prog.rot[0]).T
    return padded


def launch_buffers(trials: int, shared: bool, popsize: int, dim: int, seed0: int):
    """(keys, populations, best errors) on the device for ``trials`` trials of seeds ``seed0, ...``;
    with ``shared`` the populations live in shared memory and the global array is a placeholder."""
    keys = cuda.to_device(np.array([seed_key(seed0 + t) for t in range(trials)], dtype=np.uint64))
    pop = cuda.device_array((1 if shared else trials, 2 * popsize * dim), dtype=np.float32)
    return keys, pop, cuda.device_array(trials, dtype=np.float32)


def time_launch(kernel, args, trials: int, threads: int, shared: bool):
    """(seconds, best errors, registers a thread, local bytes a thread) of one launch of ``trials``
    blocks with ``args`` (generations second to last, the best errors last), after a launch of 0
    generations that compiles and loads it; both populations (2 NP D floats, read from the
    population array's shape) in dynamic shared memory if ``shared``."""
    pop, best = args[0], args[-1]
    nbytes = pop.shape[1] * 4 if shared else 0
    if shared and nbytes > 48 * 1024 and not simulator_enabled():
        allow_dynamic_shared(kernel, args, nbytes)
    kernel[trials, threads, 0, nbytes](*args[:-2], np.int32(0), best)
    cuda.synchronize()
    t0 = time.perf_counter()
    kernel[trials, threads, 0, nbytes](*args)
    cuda.synchronize()
    seconds = time.perf_counter() - t0
    return (seconds, best.copy_to_host(), *kernel_resources(kernel, args))


def kernel_resources(kernel, args):
    """(registers a thread, local memory bytes a thread) of ``kernel``'s build for ``args``; NaN on the
    simulator."""
    if simulator_enabled():
        return math.nan, math.nan
    try:
        compiled = kernel.overloads[tuple(kernel.typeof_pyval(a) for a in args)]
        return compiled.regs_per_thread, compiled.local_mem_per_thread
    except Exception:  # (the timing matters more than this)
        return math.nan, math.nan


def build_warp_kernel(prog, popsize: int, shared: bool, warps: int):
    """The generic variant: a warp per individual, with the function's own evaluator at 32 threads
    (``gpude.functions.gpu.make_block_evaluator(..., warp=True)``: any function of the suite), ``warps``
    warps a block; the populations in dynamic shared memory or in global memory."""
    from gpude.functions.gpu import buffer_size, make_block_evaluator

    D, NP, WARPS_ = int(prog.dim), int(popsize), int(warps)
    NPD, FIT, BUF = NP * D, 2 * NP, buffer_size(prog)
    KMAX = (NP + WARPS_ - 1) // WARPS_
    THREADS_ = 32 * WARPS_
    evaluate = make_block_evaluator(prog, 32, np.float32, warp=True)
    ops = build_de_ops(np.float32, "cuda")
    init_value, pick, trial_value = ops.init_value, ops.pick, ops.trial_value
    SHARED = bool(shared)
    SIM = simulator_enabled()  # (barriers are the block's there: every warp evaluates every round)

    @cuda.jit(fastmath=False)
    def kernel(pop_g, keys, shift, rot_t, perm, F, CR, lower, upper, generations, best):
        b = cuda.blockIdx.x
        tid = cuda.threadIdx.x
        lane = tid % 32
        w = tid // 32
        if SHARED:
            P = cuda.shared.array(0, float32)
        else:
            P = pop_g[b]
        fit = cuda.shared.array(FIT, float32)
        bufs = cuda.shared.array((WARPS_, 2, BUF), float32)
        reds = cuda.shared.array((WARPS_, 4, 32), float32)
        a = bufs[w, 0]
        z = bufs[w, 1]
        red = reds[w]
        key = keys[b]
        idx = tid
        while idx < NPD:
            i = idx // D
            P[idx] = init_value(key, i, idx - i * D, NP, D, lower, upper)
            idx += THREADS_
        cuda.syncthreads()
        for k in range(KMAX):
            i = w + k * WARPS_
            if i < NP or SIM:
                ii = min(i, NP - 1)
                f = evaluate(P[ii * D:(ii + 1) * D], a, z, red, shift, rot_t, perm, lane)
                if i < NP and lane == 0:
                    fit[i] = f
        cuda.syncthreads()
        for g in range(1, generations + 1):
            cur = ((g - 1) % 2) * NPD
            nxt = (g % 2) * NPD
            for k in range(KMAX):
                i = w + k * WARPS_
                if i < NP or SIM:
                    ii = min(i, NP - 1)
                    if i < NP:
                        r1, r2, r3, jrand = pick(key, g, i, NP, D)
                        j = lane
                        while j < D:
                            P[nxt + i * D + j] = trial_value(
                                key, g, i, j, NP, D, jrand, F, CR, P[cur + i * D + j], P[cur + r1 * D + j],
                                P[cur + r2 * D + j], P[cur + r3 * D + j], lower, upper, MODE_RESAMPLE)
                            j += 32
                    if SIM:
                        cuda.syncthreads()
                    else:
                        cuda.syncwarp()
                    f = evaluate(P[nxt + ii * D:nxt + (ii + 1) * D], a, z, red, shift, rot_t, perm, lane)
                    if i < NP:
                        parent = fit[(g - 1) % 2 * NP + i]
                        keep_trial = f <= parent
                        if lane == 0:
                            fit[(g % 2) * NP + i] = f if keep_trial else parent
                        if not keep_trial:
                            j = lane
                            while j < D:
                                P[nxt + i * D + j] = P[cur + i * D + j]
                                j += 32
            cuda.syncthreads()
        if tid == 0:
            last = (generations % 2) * NP
            m = fit[last]
            for i in range(1, NP):
                m = min(m, fit[last + i])
            best[b] = m

    return kernel, THREADS_


def run_warp_variant(shared: bool, warps: int, trials: int, max_fes: int, dim: int = 100, popsize: int = 250,
                     seed0: int = 1, fid: str = "F01"):
    """:func:`time_launch` of the generic variant, ``trials`` trials in one launch."""
    fn = get_function(fid, dim)
    prog = fn.program
    kernel, threads = build_warp_kernel(prog, popsize, shared, warps)
    rot_t = np.ascontiguousarray(np.transpose(prog.rot, (0, 2, 1)), dtype=np.float32)
    if not prog.rotated:
        rot_t = np.zeros((1, 1, 1), dtype=np.float32)
    keys, pop, best = launch_buffers(trials, shared, popsize, dim, seed0)
    args = (pop, keys, cuda.to_device(np.ascontiguousarray(prog.shift, dtype=np.float32)), cuda.to_device(rot_t),
            cuda.to_device(np.ascontiguousarray(prog.perm, dtype=np.int64)), np.float32(0.5), np.float32(0.3),
            np.float32(fn.lower), np.float32(fn.upper), np.int32(max_fes // popsize - 1), best)
    return time_launch(kernel, args, trials, threads, shared)


def run_prototype(variant: str, trials: int, max_fes: int, dim: int = 100, popsize: int = 250, seed0: int = 1,
                  group: int = 8):
    """:func:`time_launch` of the tiled kernel, ``trials`` trials in one launch."""
    fn = get_function("F01", dim)
    shared = variant == "shared"
    kernel = build_kernel(dim, popsize, shared, group)
    keys, pop, best = launch_buffers(trials, shared, popsize, dim, seed0)
    args = (pop, keys, cuda.to_device(np.ascontiguousarray(fn.program.shift[0], dtype=np.float32)),
            cuda.to_device(padded_rotation(fn.program, dim)), np.float32(0.5), np.float32(0.3),
            np.float32(fn.lower), np.float32(fn.upper), np.int32(max_fes // popsize - 1), best)
    return time_launch(kernel, args, trials, THREADS, shared)


def check_on_simulator() -> int:
    """Tiny sizes against de/sequential: the same picks and trial vectors, so the same run to the
    rounding of the evaluation's sums."""
    from gpude import run_trial

    dim, popsize = 10, 40  # (some warps own two individuals: group 1 makes two passes)
    max_fes = popsize * 3
    failed = 0
    for variant, group in (("shared", 8), ("global", 1)):
        best = run_prototype(variant, 2, max_fes, dim, popsize, seed0=5, group=group)[1]
        for t in range(2):
            want = run_trial(implementation="sequential", function="F01", dim=dim, popsize=popsize,
                             max_fes=max_fes, seed=5 + t, F=0.5, CR=0.3, dtype="float32").best_error
            ok = math.isclose(float(best[t]), want, rel_tol=1e-4)
            failed += not ok
            print(f"{variant}, group {group}, trial {t}: prototype {best[t]:.7g}, de/sequential {want:.7g}: {'ok' if ok else 'DIFFERS'}")
    # the generic variant on a simple, a hybrid and a composition function (some warps own two)
    for fid, shared, warps in (("F01", True, 4), ("F06", False, 4), ("F09", True, 3)):
        best = run_warp_variant(shared, warps, 2, max_fes, dim, popsize, seed0=5, fid=fid)[1]
        for t in range(2):
            want = run_trial(implementation="sequential", function=fid, dim=dim, popsize=popsize,
                             max_fes=max_fes, seed=5 + t, F=0.5, CR=0.3, dtype="float32").best_error
            ok = math.isclose(float(best[t]), want, rel_tol=1e-4)
            failed += not ok
            print(f"warp {fid}, shared {shared}, warps {warps}, trial {t}: prototype {best[t]:.7g}, "
                  f"de/sequential {want:.7g}: {'ok' if ok else 'DIFFERS'}")
    return 1 if failed else 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", help="CSV of the timings (one row per variant and trials per launch)")
    p.add_argument("--trials", default="1,132,264", help="trials per launch")
    p.add_argument("--max-fes", type=float, default=1e7)
    p.add_argument("--variants", default="shared,global")
    p.add_argument("--groups", default="8,4", help="a warp's individuals evaluated together (one kernel each)")
    p.add_argument("--warp-variants", default="shared:16,global:32",
                   help="the generic variant (a warp per individual): population:warps, comma-separated")
    p.add_argument("--warp-functions", default="F01,F10", help="functions of the generic variant")
    p.add_argument("--register-variants", default="",
                   help="the register-tiled kernel: population:group:threads, comma-separated (GPU only)")
    p.add_argument("--resident-batch", type=int, default=30, help="the anchor's trials per launch (besides 1)")
    p.add_argument("--no-anchor", action="store_true", help="leave out de/resident's timing")
    p.add_argument("--check", action="store_true", help="the simulator check at tiny sizes")
    args = p.parse_args(argv)
    if args.check:
        return check_on_simulator()
    max_fes = int(args.max_fes)
    rows = []

    def save():  # after every row: a call cut short keeps what it measured
        if args.out:
            import pandas as pd

            frame = pd.DataFrame(rows).assign(dim=100, popsize=250, max_fes=max_fes, dtype="float32", **prov)
            write_csv_atomic(frame, args.out)

    prov = {**provenance.gpu(), **provenance.cpu(), **provenance.software(), "git_commit": provenance.git_commit()}
    from gpude.run.trial import make_runner

    anchor_functions = dict.fromkeys(["F01", *args.warp_functions.split(",")])
    for fid in () if args.no_anchor else anchor_functions:
        for trials in (1, args.resident_batch):
            runner = make_runner("de", "resident", fid, 100, 250, max_fes, F=0.5, CR=0.3, dtype="float32",
                                 target=1e-7, trials_per_launch=trials)
            runner.run_batch(list(range(1, trials + 1)))  # (compiles and loads; timed below)
            t0 = time.perf_counter()
            results = runner.run_batch(list(range(1, trials + 1)))
            seconds = time.perf_counter() - t0
            rows.append({"implementation": "resident", "function": fid, "trials_per_launch": trials,
                         "launch_s": seconds, "s_per_run": seconds / trials,
                         "best_error_median": float(np.median([r.best_error for r in results])), "error": ""})
            print(rows[-1], flush=True)
            save()
    def measure(name: str, fid: str, threads: int, trials: int, run) -> None:
        """A row of ``run()`` (:func:`time_launch`'s tuple); a failure is a row too, the others go on."""
        row = {"implementation": name, "function": fid, "threads": threads, "trials_per_launch": trials}
        try:
            seconds, best, regs, local = run()
            row.update(launch_s=seconds, s_per_run=seconds / trials, best_error_median=float(np.median(best)),
                       registers=regs, local_bytes=local, error="")
        except Exception as exc:
            row.update(launch_s=math.nan, s_per_run=math.nan, best_error_median=math.nan,
                       error=f"{type(exc).__name__}: {' '.join(str(exc).split())}"[:300])
        rows.append(row)
        print(row, flush=True)
        save()

    trial_counts = [int(t) for t in args.trials.split(",")]
    for spec in (v for v in args.register_variants.split(",") if v):
        where, group, threads = spec.split(":")
        for trials in trial_counts:
            measure(f"registers_{where}_group{group}_{threads}threads", "F01", int(threads), trials,
                    lambda: run_register_variant(where == "shared", int(group), int(threads), trials, max_fes))
    warp_cases = [(v.split(":")[0], int(v.split(":")[1])) for v in args.warp_variants.split(",") if v]
    for fid in args.warp_functions.split(","):
        for where, warps in warp_cases:
            for trials in trial_counts:
                measure(f"warp_{where}_{warps}warps", fid, 32 * warps, trials,
                        lambda: run_warp_variant(where == "shared", warps, trials, max_fes, fid=fid))
    for variant in args.variants.split(","):
        for group in (int(g) for g in args.groups.split(",")):
            for trials in trial_counts:
                measure(f"prototype_{variant}_group{group}", "F01", THREADS, trials,
                        lambda: run_prototype(variant, trials, max_fes, group=group))
    return 0


if __name__ == "__main__":
    sys.exit(main())
