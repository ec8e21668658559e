"""Summarise Nsight Compute reports of de/block's kernel against the FP32 FMA bound (issue 67).

Reads what ``benchmarks/gpu_checks.sh block_profile`` made (``ncu_<F>_<k>.csv``: the report's details
page; ``run_<F>_<k>.csv`` or ``.csv.gz``: the profiled run's trial rows, which name the GPU, versions and
commit) and writes ``summary.csv`` and ``README.md`` into ``--out``. A run's time is given for ``--max-fes``
(default 1e7, case study 1's run): the profiled launch's time a generation times the run's generations.

The bound: a generation evaluates NP trial vectors, each through ``rotations`` products z = M (x - o)
of D x D multiply-adds (1 for a simple or hybrid CEC function, one a component for a composition). At
the profiled SM clock (elapsed cycles / duration) and 128 FP32 lanes an SM (Hopper), that many
multiply-adds take ``fma_bound`` seconds; everything else a generation does (random numbers, the trial
vector, the rest of the function, selection, trace) comes on top. ``warp_instr_per_fma`` is the
kernel's executed warp instructions over the rotation's multiply-adds counted as full-warp
instructions: how many instructions the kernel issues for each one the bound needs.

    python benchmarks/block_profile_summary.py --profiles DIR [--profiles DIR2 ...] \\
        --out results/benchmarks/block_profile
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import pandas as pd

from gpude.core.errors import GpudeError
from gpude.core.io import write_atomic
from gpude.functions.suites import COMPOSITION, FUNCTIONS

REPORT = re.compile(r"ncu_[A-Za-z0-9]+_[0-9]+\.csv")  # a details page (not _raw, _sass)
FP32_LANES_PER_SM = 128  # Hopper (sm_90): 128 FP32 cores an SM

METRICS = {  # summary column: (ncu section name, metric name)
    "duration_ms": ("GPU Speed Of Light Throughput", "Duration"),
    "elapsed_cycles": ("GPU Speed Of Light Throughput", "Elapsed Cycles"),
    "sm_throughput_pct": ("GPU Speed Of Light Throughput", "Compute (SM) Throughput"),
    "memory_throughput_pct": ("GPU Speed Of Light Throughput", "Memory Throughput"),
    "dram_throughput_pct": ("GPU Speed Of Light Throughput", "DRAM Throughput"),
    "issue_slots_busy_pct": ("Compute Workload Analysis", "Issue Slots Busy"),
    "ipc_active": ("Compute Workload Analysis", "Executed Ipc Active"),
    "warp_cycles_per_issue": ("Warp State Statistics", "Warp Cycles Per Issued Instruction"),
    "active_threads_per_warp": ("Warp State Statistics", "Avg. Active Threads Per Warp"),
    "eligible_warps_per_scheduler": ("Scheduler Statistics", "Eligible Warps Per Scheduler"),
    "active_warps_per_scheduler": ("Scheduler Statistics", "Active Warps Per Scheduler"),
    "warp_instructions": ("Instruction Statistics", "Executed Instructions"),
    "registers_per_thread": ("Launch Statistics", "Registers Per Thread"),
    "block_size": ("Launch Statistics", "Block Size"),
    "static_shared_kb": ("Launch Statistics", "Static Shared Memory Per Block"),
    "achieved_occupancy_pct": ("Occupancy", "Achieved Occupancy"),
    "block_limit_registers": ("Occupancy", "Block Limit Registers"),
    "block_limit_shared": ("Occupancy", "Block Limit Shared Mem"),
    "l1_hit_pct": ("Memory Workload Analysis", "L1/TEX Hit Rate"),
    "l2_hit_pct": ("Memory Workload Analysis", "L2 Hit Rate"),
    "branch_efficiency_pct": ("Source Counters", "Branch Efficiency"),
}
RULES = ("HighPipeUtilization", "CPIStall", "ThreadDivergence", "TheoreticalOccupancy", "UncoalescedGlobalAccess")


def _number(text) -> float:
    return float(str(text).replace(",", ""))


def rotations(fid: str) -> int:
    """Products z = M (x - o) an evaluation makes: one a component for a composition, else one."""
    f = FUNCTIONS[fid]
    if not f.rotated:
        return 0
    return len(f.components) if f.kind == COMPOSITION else 1


def summarise(details: Path, runs: Path, max_fes: int) -> dict:
    d = pd.read_csv(details)
    rows = pd.read_csv(runs)
    run = rows.iloc[0]
    params = json.loads(run["params"])
    out = {"function": run["function"], "dim": int(run["dim"]), "popsize": int(run["popsize"]),
           "dtype": run["dtype"], "trials_per_launch": int(params["trials_per_launch"]),
           "generations_in_launch": int(params["chunk_generations"]),
           "max_fes": int(max_fes), "generations_per_run": int(max_fes) // int(run["popsize"]),
           "kernel": d["Kernel Name"].iloc[0].split("[")[0]}
    for column, (section, metric) in METRICS.items():
        hit = d[(d["Section Name"] == section) & (d["Metric Name"] == metric)]
        if not len(hit):
            raise GpudeError(f"{details}: no '{metric}' in section '{section}': profile with the sections "
                             "benchmarks/gpu_checks.sh block_profile names")
        out[column] = _number(hit["Metric Value"].iloc[0])
    for rule in RULES:
        hit = d[d["Rule Name"] == rule]
        out[f"rule_{rule}"] = " | ".join(str(t) for t in hit["Rule Description"].dropna())
    sms = int(run["gpu_sms"])
    clock = out["elapsed_cycles"] / (out["duration_ms"] * 1e-3)
    k, gens = out["trials_per_launch"], out["generations_in_launch"]
    fma_per_generation = rotations(out["function"]) * out["popsize"] * out["dim"] ** 2
    out["sm_clock_ghz"] = clock / 1e9
    out["run_share_s"] = out["duration_ms"] * 1e-3 / gens * out["generations_per_run"] / k
    out["fma_bound_s"] = fma_per_generation * out["generations_per_run"] / (sms * FP32_LANES_PER_SM * clock)
    out["over_fma_bound"] = out["run_share_s"] / out["fma_bound_s"] if out["fma_bound_s"] else float("nan")
    out["warp_instr_per_trial_generation"] = out["warp_instructions"] / (k * gens)
    out["warp_instr_per_fma"] = out["warp_instr_per_trial_generation"] / (fma_per_generation / 32) \
        if fma_per_generation else float("nan")
    for column in ("gpu", "gpu_sms", "compute_capability", "cuda_driver", "cuda_runtime", "numba", "numba_cuda",
                   "gpude", "git_commit", "host", "boot_id", "timestamp_utc"):
        out[column] = run.get(column)
    return out


COLUMNS = (  # README table: header, cell
    ("function", lambda r: r["function"]),
    ("trials a launch", lambda r: r["trials_per_launch"]),
    ("kernel ms (generations)", lambda r: f"{r['duration_ms']:.1f} ({r['generations_in_launch']})"),
    ("s a run (share)", lambda r: f"{r['run_share_s']:.4f}"),
    ("FMA bound s", lambda r: f"{r['fma_bound_s']:.4f}"),
    ("x bound", lambda r: f"{r['over_fma_bound']:.1f}"),
    ("warp instr. per FMA", lambda r: f"{r['warp_instr_per_fma']:.1f}"),
    ("issue busy %", lambda r: f"{r['issue_slots_busy_pct']:.1f}"),
    ("warp cycles / issue", lambda r: f"{r['warp_cycles_per_issue']:.2f}"),
    ("threads active / warp", lambda r: f"{r['active_threads_per_warp']:.1f}"),
    ("occupancy % (regs, block)",
     lambda r: f"{r['achieved_occupancy_pct']:.0f} ({r['registers_per_thread']:.0f}, {r['block_size']:.0f})"),
    ("L1 hit %", lambda r: f"{r['l1_hit_pct']:.1f}"),
)


def readme(summary: pd.DataFrame) -> str:
    first = summary.iloc[0]
    made = (f"{first['gpu']} ({int(first['gpu_sms'])} SMs, CC {first['compute_capability']}, driver "
            f"{first['cuda_driver']}; numba {first['numba']}, numba-cuda {first['numba_cuda']}; commit "
            f"`{str(first['git_commit'])[:7]}`, {first['host']} {first['boot_id']}, "
            f"{str(first['timestamp_utc'])[:10]})")
    lines = [
        "# de/block under Nsight Compute (issue 67)",
        "",
        "Written by `benchmarks/block_profile_summary.py` from the reports `benchmarks/gpu_checks.sh block_profile` "
        f"made on {made}. Each profile is one launch of the kernel: a chunk of generations of every trial of the "
        "launch (a wall-clock budget makes the run chunks), the third launch of the process (after the warm-up's "
        "and the first chunk), with `--clock-control none` (the GPU's own clocks). `summary.csv` has every metric; "
        "the `ncu_*.csv` files are the reports' details pages, `run_*.csv.gz` the profiled runs' rows.",
        "",
        "| " + " | ".join(h for h, _ in COLUMNS) + " |",
        "|" + "---|" * len(COLUMNS),
    ]
    lines += ["| " + " | ".join(str(cell(r)) for _, cell in COLUMNS) + " |" for _, r in summary.iterrows()]
    lines += [
        "",
        f"Columns: s a run = the launch's time a generation x the generations of a run of {int(first['max_fes']):,} "
        "FEs / trials a launch; FMA bound = the rotation's multiply-adds of that run (NP D^2 a generation and "
        "rotation) at 128 FP32 lanes an SM and the profiled SM clock; warp instr. per FMA = executed warp "
        "instructions over the rotation's multiply-adds counted as full-warp instructions. Nsight Compute's rule "
        "texts (pipes, stalls, divergence) are in `summary.csv`.",
        "",
    ]
    return "\n".join(lines)


def source_split(page: Path) -> pd.DataFrame:
    """The source page's Python lines (``ncu_<F>_<k>_sass.csv[.gz]``: Nsight Compute's source view exported
    with SASS beside the lines of the kernel's one file), each line's share of the kernel's warp-stall samples
    (where its warps spent their cycles) and of its executed warp instructions, the largest first."""
    import csv
    import gzip

    opener = gzip.open if page.suffix == ".gz" else open
    with opener(page, "rt", newline="") as handle:
        rows = list(csv.reader(handle))
    header, lines = None, []
    for row in rows:
        if row and row[0] == "Line No":
            header = row
        elif header and row and row[0].isdigit():
            lines.append(row)
    if header is None:
        raise GpudeError(f"{page}: no 'Line No' header (not a source page exported by ncu --page source)")
    samples, executed = header.index("Warp Stall Sampling (All Samples)"), header.index("Instructions Executed")
    table = pd.DataFrame({"line": [int(r[0]) for r in lines], "source": [r[1].strip() for r in lines],
                          "samples": [float(r[samples] or 0) for r in lines],
                          "instructions": [float(r[executed] or 0) for r in lines]})
    table = table[(table["samples"] > 0) | (table["instructions"] > 0)]
    table["samples_share"] = table["samples"] / table["samples"].sum()
    table["instructions_share"] = table["instructions"] / table["instructions"].sum()
    return table.sort_values("samples", ascending=False, ignore_index=True)


def source_readme(splits: dict[str, pd.DataFrame], top: int = 6) -> str:
    """The README's section on the source pages: per profile, its ``top`` lines by warp-stall samples."""
    lines = ["## Where the kernel's cycles go (source pages)", "",
             "Per profile, the kernel's Python lines with the most warp-stall samples (a sample a warp every few "
             "cycles: where its warps spent them), their share of the samples and of the executed warp "
             "instructions (`source_<F>_<k>.csv`: every line).", ""]
    for name, table in splits.items():
        lines += [f"**{name}**", "", "| line | samples % | instructions % | source |", "|---|---|---|---|"]
        for r in table.head(top).to_dict("records"):
            code = r["source"].replace("|", "\\|")[:90]
            lines.append(f"| {r['line']} | {100 * r['samples_share']:.1f} | {100 * r['instructions_share']:.1f} | "
                         f"`{code}` |")
        lines.append("")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profiles", type=Path, action="append", required=True,
                        help="a folder of ncu_<F>_<k>.csv and run_<F>_<k>.csv (repeatable)")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--max-fes", type=int, default=10_000_000, help="the run whose time is given (FEs)")
    args = parser.parse_args(argv)
    found = []
    for folder in args.profiles:
        for details in sorted(p for p in folder.glob("ncu_*_*.csv") if REPORT.fullmatch(p.name)):
            runs = folder / details.name.replace("ncu_", "run_", 1)
            runs = runs if runs.exists() else runs.with_name(runs.name + ".gz")
            if not runs.exists():
                raise GpudeError(f"{details}: no {runs.name[:-3]} (or .gz) beside it (the profiled run's rows "
                                 "name the GPU)")
            found.append((details, runs))
    if not found:
        raise GpudeError(f"no ncu_<F>_<k>.csv in {', '.join(map(str, args.profiles))}: run "
                         "benchmarks/gpu_checks.sh block_profile and unpack its archive")
    summary = pd.DataFrame([summarise(details, runs, args.max_fes) for details, runs in found])
    summary = summary.sort_values(["function", "trials_per_launch"]).reset_index(drop=True)
    args.out.mkdir(parents=True, exist_ok=True)
    splits = {}
    for details, _ in found:
        page = details.with_name(details.stem + "_sass.csv")
        page = page if page.exists() else page.with_name(page.name + ".gz")
        if page.exists():
            splits[details.stem.removeprefix("ncu_")] = source_split(page)
    write_atomic(args.out / "summary.csv", summary.to_csv(index=False))
    for name, table in splits.items():
        write_atomic(args.out / f"source_{name}.csv", table.to_csv(index=False))
    write_atomic(args.out / "README.md", readme(summary) + ("\n" + source_readme(splits) if splits else ""))
    print(f"block_profile_summary: {len(summary)} profile(s) -> {args.out}/summary.csv, README.md")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except GpudeError as err:
        sys.exit(f"block_profile_summary: {err}")
