"""The floor: the least time a DE generation (and a run) can take on a GPU, from its arithmetic.

The pure arithmetic of ``benchmarks/de_floor.py``, here so that the REPORT's
scaling curves (:mod:`gpude.report.scaling_curves`) put the floor of every measured point beside it:
the flops of one evaluation (counted from the function definitions), of the DE operators per trial
vector, the bytes a generation moves through device memory, and the devices' vendor peaks. floor =
max(flops / peak FP, bytes / HBM bandwidth) per generation, times the generations of a run, divided
by the trials advanced together. A roofline bound with no latency anywhere: see de_floor.py.
"""

from __future__ import annotations

from ..functions import basic as b
from ..functions.program import hybrid_group_sizes
from ..functions.suites import COMPOSITION, FUNCTIONS, HYBRID, SIMPLE

# ------------------------------------------------------------------------ weights (flop units)
# An add, subtract, multiply, compare, fabs or floor is 1; a fused multiply-add is 2 (as the peaks
# count it). The rest are the instruction counts of CUDA's accurate (non-fast-math) versions, rounded:
W_DIV = 4     # IEEE division: reciprocal approximation + Newton refinement (~4 FMA-pipe ops)
W_SQRT = 4    # IEEE square root: rsqrt approximation + refinement
W_TRANS = 16  # sin, cos, exp, log: range reduction + polynomial (libdevice), about 16 ops each
W_POW = 2 * W_TRANS + 1  # pow(x, y) = exp(y log x)
W_RNG = 8     # one uniform draw of xoroshiro128+ (numba.cuda.random): ~8 integer ops + convert
WEIGHTS = dict(div=W_DIV, sqrt=W_SQRT, trans=W_TRANS, pow=W_POW, rng=W_RNG)

# Per coordinate: the flops of basic.term() for one coordinate plus its share of the reduction
# (one add per sum it feeds, one multiply per product), on the common branch.
TERM = {
    b.SPHERE: 2,                                   # z*z, +
    b.ZAKHAROV: 5,                                 # z*z; 0.5*(i+1)*z; two +
    b.ROSENBROCK: 8,                               # z*z-zn, z-1, 100*t1*t1 + t2*t2, +
    b.RASTRIGIN: 6 + W_TRANS,                      # z*z - 10 cos(2 pi z) + 10, +
    b.SCHWEFEL: 5 + W_SQRT + W_TRANS,              # 2 branch compares, fabs, -z sin(sqrt|z|), +
    b.BENT_CIGAR: 3,                               # 1e6*z*z, +
    b.HGBAT: 3,                                    # z*z, z into two sums
    b.HAPPYCAT: 3,
    b.ESCAFFER6: 10 + W_SQRT + W_TRANS + W_DIV,    # s=z^2+zn^2, sin(sqrt s)^2, 1+0.001s, ^2, /, +
    b.KATSUURA: 32 * (7 + W_DIV) + 4 + W_POW + W_POW,  # 32 x (2^j z, floor(+.5), |-|, /2^j, +); pow(., 10/pow(n,1.2)), *
    b.GRIEROSEN: 11 + W_DIV + W_TRANS,             # Rosenbrock pair, t*t/4000 - cos t + 1, +
    b.ACKLEY: 4 + W_TRANS,                         # z*z, +; cos(2 pi z), +
    b.ELLIPTIC: 5 + W_DIV + W_POW,                 # pow(10, 6 i/(n-1)) z z, +
    b.GRIEWANK: 4 + W_SQRT + W_DIV + W_TRANS,      # z*z, +; cos(z/sqrt(1+i)), *
}
# basic.final(): once per component evaluation.
FINAL = {
    b.ZAKHAROV: 4,
    b.SCHWEFEL: 2,
    b.HGBAT: 6 + W_POW + W_DIV,
    b.HAPPYCAT: 6 + W_POW + W_DIV,
    b.KATSUURA: 2 + 2 * W_DIV,
    b.ACKLEY: 5 + 2 * W_DIV + W_SQRT + 2 * W_TRANS,
    b.GRIEWANK: 2 + W_DIV,
}
COMP_WEIGHT = 4 + 4 * W_DIV + W_POW + W_TRANS  # pow(1/d2, .5) exp(-d2/2/D/sigma^2), per component
COMP_COMBINE = 4 + W_DIV                       # max, sum, w/sum*fit + (per component)


def evaluation_flops(fid: str, dim: int) -> dict:
    """Flops of one evaluation of ``fid`` at ``dim``, split into transform and terms."""
    f = FUNCTIONS[fid]
    d = dim
    rot = 2 * d * d if f.rotated else 0  # z = M a: D x D multiply-adds
    if f.kind == SIMPLE:
        (c,) = f.components
        transform = d + d + rot + d  # x - o, * rate, M a, + offset
        terms = d * TERM[c.code] + FINAL.get(c.code, 0)
    elif f.kind == HYBRID:
        sizes = hybrid_group_sizes([c.fraction for c in f.components], d)
        transform = d + rot + d + 2 * d  # x - o, M a (+ 0), then a * rate + offset per coordinate
        terms = sum(n * TERM[c.code] + FINAL.get(c.code, 0) for c, n in zip(f.components, sizes))
    elif f.kind == COMPOSITION:
        n = len(f.components)
        # per component: diff, d2 += diff^2, diff * rate (4 D), M a + offset, lambda and bias, weight
        transform = n * (4 * d + rot + d + 2 + W_DIV + COMP_WEIGHT) + n * COMP_COMBINE
        terms = sum(d * TERM[c.code] + FINAL.get(c.code, 0) for c in f.components)
    else:  # pragma: no cover
        raise ValueError(fid)
    return dict(transform=transform, terms=terms, total=transform + terms)


def operator_flops(dim: int) -> int:
    """Flops of the DE operators per trial vector (DE/rand/1/bin): 3 distinct indices and j_rand
    (4 draws), per coordinate a crossover draw and compare, a + F (b - c) (3), the bounds check
    (2 compares), and one selection compare. Out-of-bounds resampling is rare and not counted."""
    return 4 * W_RNG + dim * (W_RNG + 1 + 3 + 2) + 1


def generation_bytes(fid: str, dim: int, popsize: int, batch: int, size: int) -> int:
    """Device-memory bytes of one generation of ``batch`` trials: population and fitness read once
    and written once (B NP (D + 1) elements each way), the function's data (shift, matrices, a
    hybrid's permutation as int64) read once, shared by the batch."""
    f = FUNCTIONS[fid]
    n_data = len(f.components) if f.kind == COMPOSITION else 1
    state = 2 * batch * popsize * (dim + 1) * size
    data = n_data * dim * size + (n_data * dim * dim * size if f.rotated else 0)
    data += dim * 8 if f.kind == HYBRID else 0
    return state + data


# ------------------------------------------------------------------------ the devices' peaks
# Vendor spec sheets (SXM boards; non-tensor FP32/FP64 vector peaks, HBM bandwidth):
# * NVIDIA H100 Tensor Core GPU datasheet (nvidia.com/en-us/data-center/h100/), column "H100 SXM":
#   FP64 34 TFLOPS, FP32 67 TFLOPS, GPU memory bandwidth 3.35 TB/s (80 GB HBM3).
# * NVIDIA H200 Tensor Core GPU datasheet (nvidia.com/en-us/data-center/h200/), column "H200 SXM":
#   FP64 34 TFLOPS, FP32 67 TFLOPS, GPU memory bandwidth 4.8 TB/s (141 GB HBM3e).
# (Both: 132 SMs x 128 FP32 lanes x 2 flops x 1.98 GHz = 66.9 TFLOPS; FP64 half of that.)
PEAKS = {
    "NVIDIA H100 SXM": dict(fp32=67e12, fp64=34e12, hbm=3.35e12,
                            source="NVIDIA H100 Tensor Core GPU datasheet, H100 SXM column"),
    "NVIDIA H200 SXM": dict(fp32=67e12, fp64=34e12, hbm=4.8e12,
                            source="NVIDIA H200 Tensor Core GPU datasheet, H200 SXM column"),
}
SIZES = {"float32": 4, "float64": 8}


def hbm_bandwidth(name: str) -> float:
    """The datasheet memory bandwidth (bytes/s) of :data:`PEAKS` for a device as CUDA names it, by its
    model alone, whatever the board ('NVIDIA H100 80GB HBM3' -> 3.35e12); NaN for another model."""
    return next((p["hbm"] for key, p in PEAKS.items() if key.split()[1] in str(name)), float("nan"))


def peak_device(name: str) -> str | None:
    """The key of :data:`PEAKS` for a device as CUDA names it ('NVIDIA H100 80GB HBM3' -> 'NVIDIA
    H100 SXM'), or None for a device whose peaks are not listed (a PCIe or NVL board has others)."""
    text = str(name).upper()
    if any(other in text for other in ("PCIE", "NVL")):
        return None
    return next((key for key in PEAKS if key.split()[1] in text.split()), None)


def floor_point(fid: str, dim: int, popsize: int, max_fes: int, device: str = "NVIDIA H100 SXM",
                dtype: str = "float32", batch: int = 1) -> dict:
    """The floor of one (function, D, NP, FE budget) on one device of :data:`PEAKS`, for ``batch``
    trials advanced together: the arithmetic's inputs, the two bounds and ``floor_s_run`` (per run)."""
    peak = PEAKS[device]
    peak_flops = peak["fp32" if dtype == "float32" else "fp64"]
    generations = max_fes // popsize  # evaluation rounds of a run (the first one initialises)
    ev = evaluation_flops(fid, dim)
    op = operator_flops(dim)
    flop_gen = batch * popsize * (ev["total"] + op)
    bytes_gen = generation_bytes(fid, dim, popsize, batch, SIZES[dtype])
    t_flop, t_byte = flop_gen / peak_flops, bytes_gen / peak["hbm"]
    floor_gen = max(t_flop, t_byte)
    return dict(
        device=device, dtype=dtype, function=fid, dim=dim, popsize=popsize,
        max_fes=max_fes, batch=batch, generations=generations,
        flop_eval_transform=ev["transform"], flop_eval_terms=ev["terms"],
        flop_eval=ev["total"], flop_operators=op, flop_gen=flop_gen, bytes_gen=bytes_gen,
        peak_flops=peak_flops, peak_bytes_s=peak["hbm"],
        flop_bound_s_gen=t_flop, byte_bound_s_gen=t_byte, floor_s_gen=floor_gen,
        bound="flops" if t_flop >= t_byte else "bytes",
        floor_s_run=floor_gen * generations / batch,
        weights=" ".join(f"{k}={v}" for k, v in WEIGHTS.items()),
        peak_source=peak["source"])
