"""A prototype of jSO with one trial per thread block, timed before ``jso/block`` was built out.

The kernel is ``gpude.implementations.jso_block_kernel``'s (a block a trial, a warp a child, the
ranking by counting, the selection's bookkeeping on thread 0, the reduction through an index list),
with the operators of the specification written here (``proto_ops``) until the algorithm module's
land. It runs jSO's protocol (10,000 D FEs, NP_init = round(25 sqrt(D) ln D), 51 trials a launch) on a
CEC 2017 function of the suite and times

* ``jso``: the whole run, the function's warp evaluator;
* ``jso_noeval``: the same kernel with a sphere in place of the function (what the algorithm costs);
* for W in ``--warps``: warps a block.

    python benchmarks/jso_prototype.py --out OUT.csv [--dims 30,100] [--trials 51] [--warps 8,16]
    NUMBA_ENABLE_CUDASIM=1 python benchmarks/jso_prototype.py --check
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

from numba import cuda  # noqa: E402

from gpude import provenance  # noqa: E402
from gpude.fma import fma_for  # noqa: E402
from gpude.functions import get_function  # noqa: E402
from gpude.functions import gpu  # noqa: E402
from gpude.gpu_runtime import simulator_enabled  # noqa: E402
from gpude.implementations.jso_block_kernel import (FLOAT_STATE, INT_STATE,  # noqa: E402
                                                    build_jso_block_kernel, c_round, dynamic_shared_bytes)
from gpude.io import write_csv_atomic  # noqa: E402
from gpude.rng import build_rng, seed_key  # noqa: E402

SHARED_BYTES = 48 * 1024


def jso_settings(dim: int, npi: int | None = None):
    npi = int(c_round(25 * math.sqrt(dim) * math.log(dim))) if npi is None else npi
    arc_rate = 1.0
    return (npi, 4, 5, int(c_round(npi * arc_rate)), arc_rate, 0.25, 0.125, 0.3, 0.8, True, True, True, True)


def proto_ops(dtype, dim, settings):
    T = np.dtype(dtype).type
    (NPI, NPMIN, H, ACAP, ARC_RATE, P_MAX, P_MIN, MF0, MCR0, LAST_FIXED, WEIGHTED_F, SCHEDULES,
     AVERAGED) = settings
    D = int(dim)
    S = 72 + max(D, NPI)
    ROW = NPI + 1
    rng = build_rng("cuda")
    uniform, below = rng.uniform, rng.below
    fma = fma_for("cuda")
    dev = cuda.jit(device=True)
    PI = math.pi

    @dev
    def counter(g, row, slot):
        return (np.int64(g) * ROW + row) * S + slot

    @dev
    def init_value(key, i, j, lower, upper):
        u = uniform(key, counter(0, i, 72 + j))
        return T(fma(u, upper - lower, lower))

    @dev
    def draw_child(key, g, i, NP, A, p_num, MF, MCR, nfes, max_fes):
        r = below(key, counter(g, i, 0), H)
        mu_f, mu_cr = MF[r], MCR[r]
        if LAST_FIXED and r == H - 1:
            mu_f, mu_cr = 0.9, 0.9
        if mu_cr < 0.0:
            CR = 0.0
        else:
            u1 = uniform(key, counter(g, i, 1))
            u2 = uniform(key, counter(g, i, 2))
            CR = mu_cr + 0.1 * (math.sqrt(-2.0 * math.log(1.0 - u1)) * math.cos(2.0 * PI * u2))
            CR = min(max(CR, 0.0), 1.0)
        if SCHEDULES:
            if nfes < 0.25 * max_fes:
                CR = max(CR, 0.7)
            elif nfes < 0.5 * max_fes:
                CR = max(CR, 0.6)
        F = mu_f
        for k in range(64):
            c = mu_f + 0.1 * math.tan(PI * (uniform(key, counter(g, i, 8 + k)) - 0.5))
            if c > 0.0:
                F = c
                break
        F = min(F, 1.0)
        if SCHEDULES and nfes < 0.6 * max_fes and F > 0.7:
            F = 0.7
        Fw = F
        if WEIGHTED_F:
            if nfes < 0.2 * max_fes:
                Fw = 0.7 * F
            elif nfes < 0.4 * max_fes:
                Fw = 0.8 * F
            else:
                Fw = 1.2 * F
        pb = below(key, counter(g, i, 3), p_num)
        r1 = below(key, counter(g, i, 4), NP - 1)
        if r1 >= i:
            r1 += 1
        lo, hi = min(i, r1), max(i, r1)
        r2 = below(key, counter(g, i, 5), NP + A - 2)
        if r2 >= lo:
            r2 += 1
        if r2 >= hi:
            r2 += 1
        jr = below(key, counter(g, i, 6), D)
        return F, Fw, CR, pb, r1, r2, jr

    @dev
    def child_value(key, g, i, j, jr, F, Fw, CR, xi, xp, x1, x2, lower, upper):
        v = fma(F, np.float64(x1) - x2, fma(Fw, np.float64(xp) - xi, np.float64(xi)))
        if v < lower:
            v = (lower + xi) / 2.0
        elif v > upper:
            v = (upper + xi) / 2.0
        if j == jr or uniform(key, counter(g, i, 72 + j)) < CR:
            return T(v)
        return xi

    @dev
    def archive_slot(key, g, i, cap):
        return below(key, counter(g, i, 7), cap)

    @dev
    def archive_removal(key, g, r, A):
        return below(key, counter(g, NPI, r), A)

    @dev
    def planned_popsize(nfes, max_fes):
        return np.int64(math.floor((NPMIN - NPI) / max_fes * nfes + NPI + 0.5))

    @dev
    def lehmer_add(s2, s1, wk, v):
        return fma(wk * v, v, s2), fma(wk, v, s1)

    @dev
    def p_at(nfes, max_fes):
        return P_MAX - (P_MAX - P_MIN) * nfes / max_fes

    from types import SimpleNamespace
    return SimpleNamespace(draw_child=draw_child, child_value=child_value, archive_slot=archive_slot,
                           archive_removal=archive_removal, init_value=init_value,
                           planned_popsize=planned_popsize, lehmer_add=lehmer_add, p_at=p_at)


def generations(settings, max_fes: int) -> int:
    npi, npmin = settings[0], settings[1]
    nfes, NP, g = npi, npi, 0
    while nfes < max_fes:
        nfes += min(NP, max_fes - nfes)
        g += 1
        NP = max(min(NP, int(math.floor((npmin - npi) / max_fes * nfes + npi + 0.5))), npmin)
    return g


def sphere_warp(dim):
    D = int(dim)

    @cuda.jit(device=True)
    def evaluate(xs, a, z, red, shift, rot_t, perm, lane):
        s = 0.0
        j = lane
        while j < D:
            s += xs[j] * xs[j]
            j += 32
        for off in (16, 8, 4, 2, 1):
            s += cuda.shfl_down_sync(0xFFFFFFFF, s, off)
        return cuda.shfl_sync(0xFFFFFFFF, s, 0)

    return evaluate


def run(fid: str, dim: int, trials: int, warps: int, max_fes: int, noeval: bool, npi: int | None = None,
        seed0: int = 1, repeats: int = 2, skip: int = 0):
    T = np.float64
    settings = jso_settings(dim, npi)
    NPI, ACAP = settings[0], settings[3]
    prog = get_function(fid, dim).program
    fn = gpu.compile_function(prog, T, threads=32, warp=True)
    per_warp = (dim + 2 * fn.buffer_size + 4 * 32) * 8
    fits = (SHARED_BYTES - 256) // per_warp
    W = int(min(warps, fits))
    evaluate = sphere_warp(dim) if noeval else fn.block_evaluate
    ops = proto_ops(T, dim, settings)
    kernel = build_jso_block_kernel(evaluate, ops, T, W, fn.buffer_size, dim, settings, skip=skip)
    G = generations(settings, max_fes)
    B = trials
    d = {
        "pop": cuda.device_array((B, NPI, dim), T), "tb": cuda.device_array((B, NPI, dim), T),
        "arch": cuda.device_array((B, ACAP, dim), T), "order": cuda.device_array((B, NPI), np.int32),
        "ax": cuda.device_array((B, ACAP), np.int32), "mem": cuda.device_array((B, 2, settings[2]), np.float64),
        "st": cuda.device_array((B, INT_STATE), np.int64), "fst": cuda.device_array((B, FLOAT_STATE), np.float64),
        "fit": cuda.device_array((B, NPI), np.float64),
        "keys": cuda.to_device(np.array([seed_key(seed0 + b) for b in range(B)], dtype=np.uint64)),
        "trace": cuda.device_array((B, G + 1), np.float64), "hit": cuda.device_array(B + 1, np.int64),
        "gs": cuda.to_device(np.zeros(1, np.int64)),
    }
    args = (d["pop"], d["tb"], d["arch"], d["order"], d["ax"], d["mem"], d["st"], d["fst"],
            d["fit"], d["keys"], -100.0, 100.0, *fn.data, d["trace"], d["hit"], d["gs"], -1.0, int(max_fes), 1, G)
    dyn = dynamic_shared_bytes(NPI, ACAP)
    if not simulator_enabled():  # static + dynamic may pass 48 KB
        allow_shared(kernel, args, dyn)
    times = []
    for _ in range(repeats):
        cuda.synchronize()
        t0 = time.perf_counter()
        kernel[B, 32 * W, 0, dyn](*args)
        cuda.synchronize()
        times.append(time.perf_counter() - t0)
    st = d["st"].copy_to_host()
    trace = d["trace"].copy_to_host()
    return {"function": fid, "dim": dim, "trials": B, "warps": W, "variant": ("jso_noeval" if noeval else "jso") + (f"_skip{skip}" if skip else ""),
            "np_init": NPI, "dynamic_shared_bytes": dyn, "max_fes": max_fes, "generations": G, "first_s": times[0], "launch_s": min(times[1:] or times),
            "per_run_s": min(times[1:] or times) / B, "fes_end": int(st[0, 2]), "np_end": int(st[0, 0]),
            "median_final_error": float(np.median(trace[:, G])), "trace_monotone": bool(np.all(np.diff(trace, axis=1) <= 0))}


def allow_shared(kernel, args, nbytes: int) -> None:
    """The opt-in above 48 KB of dynamic shared memory (as benchmarks/block_prototype.py)."""
    from numba.cuda.cudadrv.driver import binding, driver

    sig = tuple(kernel.typeof_pyval(a) for a in args)
    cufunc = kernel.compile(sig)._codelibrary.get_cufunc()
    attr = binding.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
    try:
        driver.cuKernelSetAttribute(attr, nbytes, cufunc.handle, cufunc.device.id)
    except Exception:
        driver.cuFuncSetAttribute(cufunc.handle, attr, nbytes)


def check() -> int:
    """On the simulator: a tiny run, FEs and the NP schedule as planned, the trace never rising."""
    r = run("F03", 10, trials=2, warps=2, max_fes=120, noeval=False, npi=12, repeats=1)
    print(r)
    ok = r["fes_end"] == 120 and r["np_end"] >= 4 and r["trace_monotone"]
    print("check", "passed" if ok else "FAILED")
    return 0 if ok else 1


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out")
    ap.add_argument("--dims", default="30,100")
    ap.add_argument("--functions", default="F03")
    ap.add_argument("--trials", type=int, default=51)
    ap.add_argument("--warps", default="8,16")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--skips", default="0", help="comma-separated masks of SKIP_* steps to time without")
    a = ap.parse_args(argv)
    if a.check or simulator_enabled():
        return check()
    rows = []
    for fid in a.functions.split(","):
        for dim in (int(x) for x in a.dims.split(",")):
            for warps in (int(x) for x in a.warps.split(",")):
                for noeval, skip in [(False, int(m)) for m in a.skips.split(",")] + [(True, 0)]:
                    r = run(fid, dim, a.trials, warps, 10_000 * dim, noeval, skip=skip)
                    r.update(provenance.record(uses_gpu=True))
                    print(r, flush=True)
                    rows.append(r)
                    if a.out:
                        import pandas as pd
                        write_csv_atomic(pd.DataFrame(rows), a.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
