"""MA-SW-Chains on the GPU (``masw/gpu``) before and after a change: time per run and bytes per FE
at several D, against the device's memory bandwidth, and the Lastra protocol's total GPU time.

Each measurement is one process (``--child``) that compiles (warm-up, untimed), then runs
``--cycles`` cycles of 1,000 FEs (500 GA + one Solis-Wets application of 500) after the initial
population, float64, popsize 60, seed 1, alone on the GPU. Its trace gives the initialisation's
time and each cycle's; a full run (500,000 FEs: the initial 60 and 499.94 cycles) is projected as
``init + 499.94 x mean cycle`` (cycles cost alike: the same kernels on the same sizes). "before" is
another source tree (``--before-src``: e.g. ``git archive <commit> src | tar -x -C DIR``), run with
``PYTHONPATH=DIR/src`` on the same device in the same call, right after "after" at each D.

Bytes per FE: a **model of the DRAM traffic** (:mod:`gpude.implementations.masw_gpu.traffic`; "before" the
old code's) from the 'after' run's counters (every version makes the same run for a seed); the bound: those
bytes / the device's bandwidth (specified, and a device-to-device copy's here). The protocol's total: per
function kind (pointwise: L01-L05, C01-C03; Schwefel 1.2's scan: L06; a rotated or Rosenbrock head: C04, C06,
C08; Rosenbrock's next coordinate: C13, C18, C20) the measured function's run time at each D (linear in D
between measured D, extrapolated at the ends) times the runs (10 a cell, 20 for L06 and CEC 2010).

    python benchmarks/masw_perf.py --out results/benchmarks/masw_perf --dims 100000,1000000,3000000 \\
        --functions L01,L06,C04,C13 [--before-src .carry/before --before-functions L01] [--cycles 6]

**Counted bytes** (``--count-bytes``): the model checked against the device's own counters. Each
(function, D) of ``--count-dims`` runs once more (``--count-cycles`` cycles, this tree, one trial and,
with ``--trials-per-launch``, each batch) under Nsight Compute (``ncu``, the CUDA toolkit's), which reads
``dram__bytes_read.sum``, ``dram__bytes_write.sum`` and ``gpu__time_duration.sum`` of every kernel of the run
(not of the warm-up: the run is bracketed by ``cuda.profile_start``/``profile_stop`` and ncu profiles from there
only). A row ``version = counted[-bB]`` holds the run's counted bytes and the model's for the same run (its own
counters, the initial population as ``3 NP + 1`` rows), both per FE, and ``counted_over_model``;
``<out>/<device>_kernels.csv`` has the bytes per kernel (merged with earlier calls' other runs).
``--count-ls-mode fused`` counts a D where the local search would run as steps (thousands of slow launches
under ncu) in its one-launch form. ncu serialises the kernels and adds milliseconds a launch: counted runs'
times are left empty. Counters closed to the user (ncu's ERR_NVGPUCTRPERM) fail the call with ncu's message.

    python3 benchmarks/masw_perf.py --out results/benchmarks/masw_perf --dims 100000 --functions L01,L06,C04,C13 \
        --count-bytes --count-dims 100000,1000000 --count-cycles 1

Rows go to ``<out>/<device>.csv`` (one per version x function x D; written atomically, merged
with earlier rows of other (version, function, D) keys) and ``<out>/<device>_protocol.csv``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

POPSIZE, SEED, CYCLE_FES, RUN_FES = 60, 1, 1000, 500_000
ITEM = 8  # bytes of a float64 value
KINDS = {"pointwise": ("L01", "L02", "L03", "L04", "L05", "C01", "C02", "C03"), "scan": ("L06",),
         "head": ("C04", "C06", "C08"), "next": ("C13", "C18", "C20")}
PROTOCOL_DIMS = (100_000, 500_000, 1_000_000, 1_500_000, 3_000_000)


def runs_per_cell(fid: str) -> int:
    """The paper's runs: 10 per cell, 20 for Schwefel 1.2 and the CEC 2010 tables."""
    return 20 if fid == "L06" or fid.startswith("C") else 10


def kind_of(fid: str) -> str:
    return next(k for k, fids in KINDS.items() if fid in fids)


def child(fid: str, dim: int, cycles: int, ls_mode: str = "", batch: int = 1, ga_mode: str = "",
          extra: dict | None = None) -> dict:
    """One measurement in this process: compile, then the timed run (JSON on stdout). With ``batch``
    > 1, that many trials in one run_batch (trials_per_launch): the times are per run (the batch's
    divided by ``batch``)."""
    from numba import cuda

    from gpude.run.trial import make_runner

    options = {"ls_mode": ls_mode} if ls_mode else {}
    if ga_mode:
        options["ga_mode"] = ga_mode
    if batch > 1:
        options["trials_per_launch"] = batch
    options.update(extra or {})  # a --variant's options
    runner = make_runner("masw", "gpu", fid, dim, POPSIZE, POPSIZE + cycles * CYCLE_FES, quiet=True, **options)
    t0 = time.perf_counter()
    runner.warmup()
    compile_s = time.perf_counter() - t0
    # under ncu: only the run, not the warm-up (numba's simulator has no profiler API, nor ncu)
    profiled = os.environ.get("GPUDE_PROFILE_RUN") == "1" and hasattr(cuda, "profile_start")
    if profiled:
        cuda.synchronize()
        cuda.profile_start()
    r = runner.run(SEED) if batch == 1 else runner.run_batch([SEED + k for k in range(batch)])[0]
    if profiled:
        cuda.synchronize()
        cuda.profile_stop()
    times = np.asarray(r.trace["time_s"]) / batch  # (a batch's trace runs on the batch's clock)
    return dict(fid=fid, dim=dim, cycles=cycles, compile_s=compile_s, init_s=float(times[0]), batch=batch,
                cycle_s=[float(v) for v in np.diff(times)], best_error=r.best_error, fes=r.fes_used,
                phase_s=getattr(runner, "phase_s", {}), counts=getattr(runner, "counts", None),
                ls_mode=getattr(runner, "ls_mode", "steps"), ls_dual=getattr(runner, "ls_dual", False),
                device=_device_name(cuda), **_ls_kernel(runner))


def _ls_kernel(runner) -> dict:
    """The fused local search's grid (blocks) and registers per thread, where the runner has one."""
    kernel, grid = getattr(runner, "sw_kernel", None), getattr(runner, "ls_grid", None)
    out = {"ls_blocks": grid}
    try:
        out["ls_regs_per_thread"] = int(next(iter(kernel.get_regs_per_thread().values())))
    except Exception:  # noqa: BLE001 (the simulator, or no fused local search: no register count)
        out["ls_regs_per_thread"] = None
    return out


def _device_name(cuda) -> str:
    name = getattr(cuda.get_current_device(), "name", "numba CUDA simulator")  # (the simulator's has none)
    return name.decode() if isinstance(name, bytes) else str(name)


def measure(fid, dim, cycles, src=None, ls_mode="", batch=1, ncu_log: Path | None = None, ga_mode="",
            extra: dict | None = None) -> dict:
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = str(Path(src) / "src") + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [sys.executable, __file__, "--child", fid, str(dim), str(cycles), ls_mode, str(batch), ga_mode,
           json.dumps(extra or {})]
    if ncu_log is not None:
        from gpude.core import ncu

        env["GPUDE_PROFILE_RUN"] = "1"
        cmd = ncu.command(ncu.find(), ncu_log) + cmd
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
    if res.returncode != 0:
        raise RuntimeError(f"{fid} D={dim} ({src or 'this tree'}) failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def counted_run(fid: str, dim: int, cycles: int, batch: int, ls_mode: str = ""):
    """One run (``batch`` trials in one run_batch) under ncu: its row (counted and modelled bytes per FE
    of the whole run, the initial population included) and its bytes per kernel."""
    import tempfile

    from gpude.core import ncu
    from gpude.implementations.masw_gpu.traffic import reads_permutation, traffic_rows

    with tempfile.TemporaryDirectory(prefix="masw_ncu_") as tmp:
        log = Path(tmp) / "ncu.csv"
        m = measure(fid, dim, cycles, ls_mode=ls_mode, batch=batch, ncu_log=log)
        kernels = ncu.kernel_bytes(log)
    t = traffic_rows(m["counts"], "after", reads_permutation(fid, dim), m["ls_mode"])  # the batch's (every trial's)
    fes = m["fes"] * batch
    model = ((3 * POPSIZE + 1) * batch + t["ga"] + t["ls"]) * dim * ITEM
    counted = float(kernels["dram_read_bytes"].sum() + kernels["dram_write_bytes"].sum())
    row = dict(version="counted" if batch == 1 else f"counted-b{batch}", function=fid, kind=kind_of(fid), dim=dim,
               dtype="float64", popsize=POPSIZE, cycles=cycles, trials_per_launch=batch, ls_mode=m["ls_mode"],
               bytes_per_fe_model=model / fes, bytes_per_fe_counted=counted / fes, counted_over_model=counted / model,
               dram_read_bytes=float(kernels["dram_read_bytes"].sum()),
               dram_write_bytes=float(kernels["dram_write_bytes"].sum()),
               kernel_launches=int(kernels["launches"].sum()),
               best_error=m["best_error"], device=m["device"], source="this tree (under ncu: no timing)")
    return row, kernels


def protocol_lines(frame, prov: dict) -> tuple[list, float]:
    """The Lastra protocol's cost projected from the rows (``<device>.csv``): the 'after' rows (the
    implementation's defaults, one run per launch, as the campaign runs them) of the newest commit
    that has any; each function from its own rows where that commit measured it, else from its
    kind's (the mean over the kind's measured functions at each D), linear in D between the measured
    D (proportional to D beyond one). Returns (one line per function and D, total seconds)."""
    after = frame[frame.version == "after"].sort_values("timestamp_utc")
    if after.empty:
        return [], 0.0
    after = after[after.git_commit.astype(str) == str(after.git_commit.iloc[-1])]
    after = after.drop_duplicates(["function", "dim"], keep="last")
    total, lines = 0.0, []
    for kind, fids in KINDS.items():
        of_kind = after[after.kind == kind]
        if of_kind.empty:
            continue
        for fid in fids:
            measured = of_kind[of_kind.function == fid]
            if measured.empty:
                measured = of_kind
            by_dim = measured.groupby("dim").projected_run_s.mean().sort_index()
            xs, ys = by_dim.index.to_numpy(float), by_dim.to_numpy(float)
            for dim in PROTOCOL_DIMS:
                if len(xs) == 1:
                    t = ys[0] * dim / xs[0]
                else:
                    i = int(np.clip(np.searchsorted(xs, dim) - 1, 0, len(xs) - 2))
                    t = ys[i] + (ys[i + 1] - ys[i]) * (dim - xs[i]) / (xs[i + 1] - xs[i])
                n = runs_per_cell(fid)
                total += n * t
                lines.append(dict(function=fid, kind=kind, dim=dim, runs=n, run_s=t, cell_s=n * t,
                                  from_function=",".join(sorted(measured.function.unique())),
                                  from_commit=str(after.git_commit.iloc[-1]),
                                  device=frame.device.iloc[0], **prov))
    return lines, total


def parse_variant(text: str) -> tuple[str, dict]:
    """``NAME:KEY=VALUE,...`` -> (NAME, options), each value as ``gpude run --param`` reads it
    (:func:`gpude.run.spec.param_value`: an int, a float, true/false, else the text)."""
    from gpude.run.spec import param_value

    name, _, spec = text.partition(":")
    if not name or not spec or "=" not in spec:
        raise SystemExit(f"masw_perf: --variant {text!r}: expected NAME:KEY=VALUE[,KEY=VALUE], e.g. "
                         "u4:ls_mode=fused,ls_unroll=4")
    pairs = (item.partition("=") for item in spec.split(","))
    return name, {key.strip(): param_value(value.strip()) for key, _, value in pairs}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--child", nargs=7, metavar=("FID", "DIM", "CYCLES", "LS_MODE", "BATCH", "GA_MODE", "OPTIONS"),
                   help=argparse.SUPPRESS)
    p.add_argument("--trials-per-launch", default="",
                   help="also this tree with several trials per run_batch (e.g. 10,30: versions after-b10, "
                        "after-b30; times per run; a B that does not fit the GPU is left out with a note)")
    p.add_argument("--out", type=Path, default=Path("results/benchmarks/masw_perf"))
    p.add_argument("--dims", default="100000,1000000,3000000")
    p.add_argument("--functions", default="L01,L06,C04,C13")
    p.add_argument("--before-src", type=Path, help="source tree of the 'before' version (its src/ is imported)")
    p.add_argument("--before-functions", default="L01", help="functions measured before (default L01)")
    p.add_argument("--cycles", type=int, default=6)
    p.add_argument("--count-bytes", action="store_true",
                   help="also count the DRAM bytes of a run of each function at --count-dims under ncu (see the "
                        "module docstring): rows 'counted[-bB]' and <device>_kernels.csv")
    p.add_argument("--count-dims", default="100000,1000000", help="the D of the counted runs")
    p.add_argument("--count-cycles", type=int, default=1, help="cycles of a counted run")
    p.add_argument("--count-ls-mode", default="", choices=("", "fused", "steps"),
                   help="the counted runs' local search (default: the implementation's for the D; 'fused' is one "
                        "launch per application, where 'steps' makes ~5,000 launches a cycle, each slow under ncu)")
    p.add_argument("--variant", action="append", default=[], metavar="NAME:KEY=VALUE[,KEY=VALUE]",
                   help="also measure this tree with these masw/gpu options (version 'after-NAME'), e.g. "
                        "'u4:ls_mode=fused,ls_unroll=4', 'steps:ls_mode=steps' or 'ga-fused:ga_mode=fused' "
                        "(repeatable)")
    p.add_argument("--protocol-from", type=Path, metavar="DEVICE_CSV",
                   help="only recompute <device>_protocol.csv beside this <device>.csv from its rows (no GPU)")
    args = p.parse_args(argv)
    if args.child:
        fid, dim, cycles, ls_mode, batch, ga_mode, extra = args.child
        print(json.dumps(child(fid, int(dim), int(cycles), ls_mode, int(batch), ga_mode, json.loads(extra))))
        return 0

    import pandas as pd

    from gpude.core import provenance
    from gpude.core.gpu_runtime import copy_bandwidth
    from gpude.core.io import replace_rows, write_csv_atomic
    from gpude.implementations.masw_gpu.traffic import reads_permutation, traffic_rows
    from gpude.report.floor import hbm_bandwidth

    if args.protocol_from:
        frame = pd.read_csv(args.protocol_from)
        lines, total = protocol_lines(frame, {})
        if not lines:
            raise SystemExit(f"masw_perf: {args.protocol_from} has no 'after' rows to project the protocol from")
        write_csv_atomic(pd.DataFrame(lines), args.protocol_from.with_name(args.protocol_from.stem + "_protocol.csv"))
        print(f"protocol: {total / 3600:.2f} GPU-hours ({len(lines)} cells)", file=sys.stderr)
        return 0
    variants = dict(parse_variant(v) for v in args.variant)
    clash = [name for name in variants if f"after-{name}" in (f"after-b{b}" for b in args.trials_per_launch.split(","))]
    if clash:
        raise SystemExit(f"masw_perf: --variant {clash[0]} has the name of a --trials-per-launch version; rename it")
    dims = [int(float(d)) for d in args.dims.split(",") if d]  # (--dims "": counted runs only)
    functions = args.functions.split(",")
    before = args.before_functions.split(",") if args.before_src else []
    bw_copy = copy_bandwidth()
    rows = []
    for dim in dims:
        for fid in functions:
            versions = [("before", args.before_src)] if fid in before else []
            batches = {f"after-b{b}": int(b) for b in filter(None, args.trials_per_launch.split(","))}
            versions += [(version, None) for version in batches]
            versions += [(f"after-{name}", None) for name in variants]
            counts = None
            for version, src in [("after", None), *versions]:
                batch = batches.get(version, 1)  # (by the version's key: a variant's name may start with b)
                options = variants.get(version[len("after-"):])
                try:
                    m = measure(fid, dim, args.cycles, src, batch=batch, extra=options)
                except RuntimeError as exc:
                    if batch == 1:
                        raise
                    print(f"{version} {fid} D={dim:,}: left out ({str(exc).splitlines()[-1][:200]})",
                          file=sys.stderr, flush=True)
                    continue
                # the counters come from the 'after' run (the fused kernel counts its steps): every
                # version makes the same run for the seed
                if version == "after":
                    counts = m["counts"]
                cycle = float(np.mean(m["cycle_s"]))
                run_s = m["init_s"] + (RUN_FES - POPSIZE) / CYCLE_FES * cycle
                # one trial's rows (a batch's shared reads of o are not in it: it keeps the lone trial's bytes
                # per FE), from the 'after' run's counters (its children evaluated apart: ga_mode's default)
                t = traffic_rows(counts, version, reads_permutation(fid, dim), m["ls_mode"],
                                 dual=m.get("ls_dual", False), fused_ga=(options or {}).get("ga_mode") == "fused")
                bytes_per_fe = (t["ga"] + t["ls"]) * dim * ITEM / (m["fes"] - POPSIZE)
                run_bytes = (3 * POPSIZE + 1) * dim * ITEM + bytes_per_fe * (RUN_FES - POPSIZE)  # init: 3 NP + 1 rows
                spec = hbm_bandwidth(m["device"])
                bound_spec, bound_copy = run_bytes / spec, run_bytes / bw_copy
                ga_s = m["phase_s"].get("ga", float("nan")) / args.cycles
                ls_s = m["phase_s"].get("ls", float("nan")) / args.cycles
                row = dict(version=version, function=fid, kind=kind_of(fid), dim=dim, dtype="float64",
                           popsize=POPSIZE, cycles=args.cycles, trials_per_launch=batch, ls_mode=m["ls_mode"],
                           compile_s=m["compile_s"],
                           init_s=m["init_s"], cycle_s=cycle, cycle_s_min=min(m["cycle_s"]),
                           cycle_s_max=max(m["cycle_s"]), ga_s_per_cycle=ga_s, ls_s_per_cycle=ls_s,
                           projected_run_s=run_s, us_per_fe=cycle / CYCLE_FES * 1e6,
                           bytes_per_fe_model=bytes_per_fe,
                           ga_bytes_per_fe=t["ga"] * dim * ITEM / counts["children"],
                           ls_bytes_per_fe=t["ls"] * dim * ITEM / max(1, counts["ls_evaluations"]),
                           bound_run_s_spec=bound_spec, bound_run_s_copy=bound_copy,
                           ratio_to_spec_bound=run_s / bound_spec, spec_bandwidth=spec, copy_bandwidth=bw_copy,
                           best_error=m["best_error"], device=m["device"],
                           source="this tree" if src is None else str(src),
                           options=json.dumps(options or {}, sort_keys=True),
                           ls_blocks=m.get("ls_blocks"), ls_regs_per_thread=m.get("ls_regs_per_thread"),
                           # each cycle's seconds and the phases' totals: the row's means are read from these
                           cycles_s=json.dumps([round(c, 6) for c in m["cycle_s"]]),
                           phase_s=json.dumps({k: round(v, 6) for k, v in m["phase_s"].items()}))
                rows.append(row)
                print(f"{version:6s} {fid} D={dim:>9,}: cycle {cycle * 1e3:8.2f} ms (GA {ga_s * 1e3:.2f}, LS "
                      f"{ls_s * 1e3:.2f}), run {run_s:7.2f} s projected, {bytes_per_fe / 1e6:.2f} MB/FE, "
                      f"{run_s / bound_spec:.2f}x the spec bound", file=sys.stderr, flush=True)
    kernel_rows = []
    if args.count_bytes:
        batches = [1] + [int(b) for b in filter(None, args.trials_per_launch.split(","))]
        for dim in (int(float(d)) for d in args.count_dims.split(",")):
            for fid in functions:
                for batch in batches:
                    row, kernels = counted_run(fid, dim, args.count_cycles, batch, args.count_ls_mode)
                    rows.append(row)
                    kernel_rows += [{"function": fid, "dim": dim, "trials_per_launch": batch, **k}
                                    for k in kernels.to_dict("records")]
                    print(f"counted {fid} D={dim:>9,} x{batch}: {row['bytes_per_fe_counted'] / dim:.1f} B per "
                          f"dimension per FE counted, {row['bytes_per_fe_model'] / dim:.1f} modelled "
                          f"({row['counted_over_model']:.2f}x)", file=sys.stderr, flush=True)
    prov = provenance.record()
    frame = pd.DataFrame(rows)
    for k, v in prov.items():
        frame[k] = v
    args.out.mkdir(parents=True, exist_ok=True)
    name = frame.device.iloc[0].replace(" ", "_")
    frame = replace_rows(args.out / f"{name}.csv", frame, ["version", "function", "dim"])
    write_csv_atomic(frame, args.out / f"{name}.csv")
    if kernel_rows:  # earlier calls' runs of other (function, D, trials per launch) are kept
        kernels = pd.DataFrame(kernel_rows).assign(device=frame.device.iloc[0], **prov)
        kpath = args.out / f"{name}_kernels.csv"
        write_csv_atomic(replace_rows(kpath, kernels, ["function", "dim", "trials_per_launch"]), kpath)
    if not any(r["version"].startswith("after") for r in rows):
        return 0  # counted runs only: the protocol's total (from timed rows) stays as it was
    lines, total = protocol_lines(frame, prov)
    if lines:
        write_csv_atomic(pd.DataFrame(lines), args.out / f"{name}_protocol.csv")
        covered = {ln["function"] for ln in lines}
        print(f"protocol: {total / 3600:.2f} GPU-hours for the {len(covered)} functions of the measured kinds",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
