"""The floor: the least time a DE generation (and a run) can take on a GPU, from its arithmetic.

For a function of the suites at D, NP and a FE budget, and for a batch of B trials advanced together, it
counts

* the flops of one evaluation, from the function definitions in ``gpude.functions``
  (``suites.FUNCTIONS``: kind, components, rates, offsets; the transforms of ``cpu.py``/``gpu.py``:
  shift, shrink, rotation, offsets, hybrid groups, composition weights; the per-coordinate terms
  and finals of ``basic.py``, operation by operation, with the weights below);
* the flops of the DE operators per trial vector (index draws, mutation, crossover, bounds,
  selection), random draws counted with a stated weight;
* the bytes a generation moves through device memory (the population and fitness read once and
  written once per generation, and the function's data read once per generation, shared by the
  batch; random-generator states kept on chip);

and divides by the device's vendor peaks (``PEAKS``): floor = max(flops / peak FP, bytes / HBM
bandwidth) per generation, times the generations of a run, divided by B. The REPORT's scaling curves
(:mod:`gpude.report.scaling_curves`) put the floor of every measured point beside it;
``python -m gpude.report.floor`` writes it for case study 1 (F01-F10, D=100, NP=250, 1e7 FEs; float32
and float64; B = 1 and 30) into ``results/benchmarks/de_floor.csv`` (the arithmetic's inputs as
columns) and a marked section of ``results/benchmarks/SUMMARY.md`` that explains it (no GPU needed;
``benchmarks/de_floor.py`` until 4fe4601)::

    python -m gpude.report.floor [--batch 1,30] [--dtypes float32,float64]

What the floor is, and what it is not: a roofline bound of the work, with every unit busy all
the time and no latency anywhere. A design that keeps a generation's state on chip between
generations (a persistent kernel) avoids the bytes; no design avoids the flops. It ignores
launch and synchronisation latency, which is what sets the time of the implementations measured
so far, so the gap between a measured time and this floor is the room that latency leaves.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from ..core.io import write_atomic, write_csv_atomic
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
    # KATSUURA: 32 x (2^j z, floor(+.5), |-|, /2^j, +); pow(., 10/pow(n,1.2)), *
    b.KATSUURA: 32 * (7 + W_DIV) + 4 + W_POW + W_POW,
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


# ------------------------------------------------------------------------ case study 1's floor table
_ROOT = Path(__file__).resolve().parents[3]
OUT_CSV = _ROOT / "results" / "benchmarks" / "de_floor.csv"
SUMMARY = _ROOT / "results" / "benchmarks" / "SUMMARY.md"
CASE1 = dict(dim=100, popsize=250, max_fes=10_000_000)


def floor_rows(functions=None, dtypes=("float32", "float64"), batches=(1, 30), dim=CASE1["dim"],
               popsize=CASE1["popsize"], max_fes=CASE1["max_fes"]) -> pd.DataFrame:
    """One row per (device, dtype, batch, function): the inputs, the two bounds and the floor."""
    return pd.DataFrame([floor_point(fid, dim, popsize, max_fes, device, dtype, bsz)
                         for device in PEAKS for dtype in dtypes for bsz in batches
                         for fid in functions or [f"F{i:02d}" for i in range(1, 11)]])


# ------------------------------------------------------------------------ the summary section
BEGIN, END = "<!-- de-floor:begin -->", "<!-- de-floor:end -->"
# The authors' iDE on an H200, mean s per run (paper/published/janssen_cs1_authors_code_h200.csv; the
# same values as benchmarks/de_performance_summary.py's ANCHOR_WALL_S["ide"]), and the targets for 30
# trials per launch, per run: 0.02x on F01-F07, 0.05x on F08-F10.
AUTHORS_IDE_H200_S = dict(zip([f"F{i:02d}" for i in range(1, 11)],
                              [0.665, 0.659, 0.656, 0.689, 0.712, 0.787, 1.041, 1.511, 1.948, 2.383]))


def target_30_s(fid: str) -> float:
    return AUTHORS_IDE_H200_S[fid] * (0.02 if int(fid[1:]) <= 7 else 0.05)


def _s(v: float) -> str:
    for unit, k in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if v >= k:
            return f"{v / k:.3g} {unit}"
    return f"{v:.3g} s"


def render_section(df: pd.DataFrame) -> str:
    f32 = df[df["dtype"] == "float32"]
    lines = [BEGIN, "## The floor: what the arithmetic allows (no measurement)", "",
             "Written by `python -m gpude.report.floor` into `results/benchmarks/de_floor.csv`. Per generation: "
             "flops = B x NP x (one evaluation + the DE operators per trial vector), counted from the "
             "function definitions (`src/gpude/functions/`: shift, shrink, the D x D rotation = 2 D^2 "
             "flops per component, the basic functions' terms and finals, composition weights); "
             f"weights in flops: division {W_DIV}, sqrt {W_SQRT}, sin/cos/exp/log {W_TRANS}, pow {W_POW}, "
             f"one uniform random draw {W_RNG}; an FMA is 2. Bytes = the population and fitness read "
             "and written once per generation plus the function's data read once (shared by the batch). "
             "Floor per generation = max(flops / peak FP32 (FP64), bytes / HBM bandwidth); per run = "
             "that x generations (1e7 / 250 = 40,000) / B. Peaks from NVIDIA's datasheets (SXM): "
             "H100 67 TFLOPS FP32, 34 FP64, 3.35 TB/s; H200 the same flops, 4.8 TB/s. The floor "
             "ignores launch and synchronisation latency, which sets every time measured so far; a "
             "kernel that keeps a generation's state on chip avoids the bytes, nothing avoids the flops.",
             "", "Case study 1 (D=100, NP=250, 1e7 FEs), float32:", "",
             "| function | flop/eval (transform + terms) | flop/trial operators | flop/gen (B=1) | bytes/gen (B=1) "
             "| H100 floor/gen (B=1) | H100 floor/run B=1 | H100 floor/run B=30 | H200 floor/run B=1 "
             "| H200 floor/run B=30 | bound (H100, B=1 / 30) | 30/launch target (s/run) | H200 floor / target |",
             "|" + "---|" * 13]
    for fid in f32["function"].drop_duplicates():
        g = f32[f32["function"] == fid].set_index(["device", "batch"])
        h1, h30 = g.loc[("NVIDIA H100 SXM", 1)], g.loc[("NVIDIA H100 SXM", 30)] if (
            "NVIDIA H100 SXM", 30) in g.index else None
        p1 = g.loc[("NVIDIA H200 SXM", 1)]
        p30 = g.loc[("NVIDIA H200 SXM", 30)] if ("NVIDIA H200 SXM", 30) in g.index else None
        lines.append(
            f"| {fid} | {int(h1['flop_eval']):,} ({int(h1['flop_eval_transform']):,} + {int(h1['flop_eval_terms']):,}) "
            f"| {int(h1['flop_operators']):,} | {h1['flop_gen']:.3g} | {h1['bytes_gen']:.3g} | {_s(h1['floor_s_gen'])} "
            f"| {_s(h1['floor_s_run'])} | {_s(h30['floor_s_run']) if h30 is not None else '-'} "
            f"| {_s(p1['floor_s_run'])} | {_s(p30['floor_s_run']) if p30 is not None else '-'} "
            f"| {h1['bound']} / {h30['bound'] if h30 is not None else '-'} "
            f"| {_s(target_30_s(fid))} "
            f"| {p30['floor_s_run'] / target_30_s(fid) if p30 is not None else float('nan'):.0%} |")
    lines += ["", "The measured times above (0.43-1.8 s per run for `ide`, the authors' iDE 0.66-2.4 s on "
              "an H200) are roughly 80-200 times these floors: per-generation latency "
              "(a launch or a host synchronisation, 10-40 us, x 40,000 generations = 0.4-1.6 s), not "
              "arithmetic or memory, sets them. The last two columns: the target for 30 trials per "
              "launch (0.02x the authors' iDE per run on F01-F07, 0.05x on F08-F10) and the share of it "
              "the floor already takes (the rest is what latency, occupancy and imperfect overlap may use).",
              END]
    return "\n".join(lines) + "\n"


def replace_section(text: str, section: str) -> str:
    i, j = text.find(BEGIN), text.find(END)
    if i >= 0 and j > i:
        return text[:i] + section.rstrip("\n") + text[j + len(END):]
    return text.rstrip("\n") + "\n\n" + section


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--batch", default="1,30", help="trials per launch, comma-separated")
    p.add_argument("--dtypes", default="float32,float64")
    p.add_argument("--out", default=str(OUT_CSV))
    p.add_argument("--summary", default=str(SUMMARY), help="Markdown file to write the section into ('' = none)")
    args = p.parse_args(argv)
    df = floor_rows(dtypes=args.dtypes.split(","), batches=[int(x) for x in args.batch.split(",")])
    write_csv_atomic(df, args.out)
    print(f"wrote {args.out} ({len(df)} rows)")
    if args.summary:
        s = Path(args.summary)
        text = s.read_text() if s.exists() else "# DE wall time\n"
        write_atomic(s, replace_section(text, render_section(df)))
        print(f"wrote the floor section of {s}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
