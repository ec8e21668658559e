"""The floor: the least time a DE generation (and a run) can take on a GPU, from its arithmetic.

For each function F01-F10 at case study 1's settings (DE/rand/1/bin, D=100,
NP=250, 1e7 FEs, float32; float64 too) and for a batch of B trials advanced together, it counts

* the flops of one evaluation, from the function definitions in ``src/gpude/functions/``
  (``suites.FUNCTIONS``: kind, components, rates, offsets; the transforms of ``cpu.py``/``gpu.py``:
  shift, shrink, rotation, offsets, hybrid groups, composition weights; the per-coordinate terms
  and finals of ``basic.py``, operation by operation, with the weights below);
* the flops of the DE operators per trial vector (index draws, mutation, crossover, bounds,
  selection), random draws counted with a stated weight;
* the bytes a generation moves through device memory (the population and fitness read once and
  written once per generation, and the function's data read once per generation, shared by the
  batch; random-generator states kept on chip);

and divides by the device's vendor peaks (``PEAKS``): floor = max(flops / peak FP, bytes / HBM
bandwidth) per generation, times the generations of a run, divided by B. It writes
``results/benchmarks/de_floor.csv`` (the arithmetic's inputs as columns) and a marked section of
``results/benchmarks/SUMMARY.md`` that explains it.

What the floor is, and what it is not: a roofline bound of the work, with every unit busy all
the time and no latency anywhere. A design that keeps a generation's state on chip between
generations (a persistent kernel) avoids the bytes; no design avoids the flops. It ignores
launch and synchronisation latency, which is what sets the time of the implementations measured
so far, so the gap between a measured time and this floor is the room that latency leaves.

    python benchmarks/de_floor.py [--batch 1,30] [--dtypes float32,float64]
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "src") not in sys.path:
    sys.path.insert(0, str(ROOT / "src"))

# the arithmetic itself lives in the package (the REPORT's scaling curves use it too)
from gpude.report.floor import (PEAKS, SIZES, W_DIV, W_POW, W_RNG, W_SQRT, W_TRANS, WEIGHTS,  # noqa: E402,F401
                         evaluation_flops, floor_point, generation_bytes, operator_flops, peak_device)
from gpude.core.io import write_atomic, write_csv_atomic  # noqa: E402

OUT_CSV = ROOT / "results" / "benchmarks" / "de_floor.csv"
SUMMARY = ROOT / "results" / "benchmarks" / "SUMMARY.md"
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
             "Written by `benchmarks/de_floor.py` into `results/benchmarks/de_floor.csv`. Per generation: "
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
            f"| {_s(target_30_s(fid))} | {p30['floor_s_run'] / target_30_s(fid) if p30 is not None else float('nan'):.0%} |")
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
