"""Start-up of a `gpude run`: how long from process start to its first trial, cold and warm cache.

For each (implementation, function) pair: a cold run (an empty numba cache folder), then
``--repeats`` warm runs (the same folder). Each is a fresh ``python -m gpude run`` of one trial
(D=30, NP=50, a small budget); the time to its first trial is the wall time from spawning the
process to the epoch time its `setup` line prints (``first trial at ...``: after imports, JIT or
cache loading, CUDA context and the implementation's warm-up). Also per pair: ``setup_s`` (what
the batch logs call setup: building and warming the runner, after the imports) and ``import_s`` (a
process that only imports the command line and the implementation's module), that import's time per
top-level package (``python -X importtime``, the modules' own times summed: ``<out>_imports.csv``)
and, on a GPU, the CUDA context's creation in a fresh process (``context_s``). No Snakemake needed.

    python benchmarks/startup.py --device cpu --note "2-core VM, CPU only"
    NUMBA_ENABLE_CUDASIM=0 python benchmarks/startup.py --device gpu   # on a GPU host

Writes ``results/benchmarks/startup_<device>.csv`` (atomically; ``--out`` to change), one row per
process, with the host, CPU, GPU, versions and commit.
"""

from __future__ import annotations

import argparse
import functools
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

PAIRS = {"cpu": ["sequential:F01", "master_slave:F05"],
         "gpu": ["naive_gpu:F01", "all_gpu:F01", "ide:F05", "resident:F01"]}


def first_trial(implementation: str, function: str, cache: Path, work: Path, dim: int, popsize: int,
                max_fes: int, profile: Path | None = None) -> dict:
    """One process's first trial; ``profile``: run it under cProfile, its statistics to that file."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    python = [sys.executable] + (["-m", "cProfile", "-o", str(profile)] if profile else [])
    cmd = python + ["-m", "gpude", "run", "--implementation", implementation, "--function", function,
           "--dim", str(dim), "--popsize", str(popsize), "--max-fes", str(max_fes), "--trials", "1",
           "--gpu", "shared", "--out-csv", str(work / "b.csv"), "--out-traces", str(work / "b.npz")]
    start = time.time()
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=REPO, timeout=900)
    wall = time.time() - start
    m = re.search(r"setup ([0-9.]+)s \(first trial at ([0-9.]+)\)", res.stderr)
    if res.returncode != 0 or m is None:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{res.stderr[-3000:]}")
    return {"first_trial_s": round(float(m.group(2)) - start, 3), "setup_s": float(m.group(1)),
            "process_s": round(wall, 3)}


def import_code(implementation: str) -> str:
    """What a run imports before its setup: the command line and the implementation's module."""
    return ("import gpude.cli, gpude.run.trial, gpude.implementations.registry as r; "
            f"r.get('de', {implementation!r}).load(check_device=False)")


def import_time(implementation: str, cache: Path) -> float:
    start = time.time()
    subprocess.run([sys.executable, "-c", import_code(implementation)], check=True, cwd=REPO, timeout=300,
                   env={**os.environ, "NUMBA_CACHE_DIR": str(cache)})
    return round(time.time() - start, 3)


def import_split(stderr: str) -> dict:
    """``python -X importtime``'s report -> seconds per top-level package (the modules' own times
    summed by the first part of their names: an exact split of the import time)."""
    split: dict = {}
    for line in stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+\d+ \|\s*(\S+)", line)
        if m:
            root = m.group(2).split(".")[0]
            split[root] = split.get(root, 0.0) + int(m.group(1)) / 1e6
    return dict(sorted(split.items(), key=lambda kv: -kv[1]))


def import_profile(implementation: str, cache: Path) -> dict:
    """Where the imports of :func:`import_time` go: seconds per top-level package."""
    res = subprocess.run([sys.executable, "-X", "importtime", "-c", import_code(implementation)], check=True, cwd=REPO,
                         timeout=300, capture_output=True, text=True, env={**os.environ, "NUMBA_CACHE_DIR": str(cache)})
    return import_split(res.stderr)


def write_profiles(profiles: list, out: Path) -> None:
    """cProfile's statistics of each pair's warm run: the 40 largest cumulative times."""
    import io
    import pstats

    text = io.StringIO()
    for implementation, function, data in profiles:
        with tempfile.NamedTemporaryFile(suffix=".pstats") as f:
            f.write(data)
            f.flush()
            text.write(f"## {implementation} {function}: a warm run's first trial under cProfile\n")
            pstats.Stats(f.name, stream=text).sort_stats("cumulative").print_stats(40)
    out.write_text(text.getvalue())
    print("wrote", out)


def context_time() -> float:
    """Seconds to create the CUDA context in a fresh process, after numba.cuda is imported."""
    code = ("import time; from numba import cuda; t = time.perf_counter(); cuda.current_context(); "
            "print(time.perf_counter() - t)")
    res = subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO, timeout=300, capture_output=True,
                         text=True)
    return round(float(res.stdout.strip().splitlines()[-1]), 3)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--device", choices=("cpu", "gpu"), required=True,
                   help="which pairs (cpu: sequential, master_slave; gpu: naive_gpu, all_gpu, ide)")
    p.add_argument("--pairs", help="comma-separated IMPLEMENTATION:FUNCTION (default: the device's)")
    p.add_argument("--repeats", type=int, default=3, help="warm-cache runs per pair")
    p.add_argument("--dim", type=int, default=30)
    p.add_argument("--popsize", type=int, default=50)
    p.add_argument("--max-fes", type=int, default=3000)
    p.add_argument("--profile", action="store_true",
                   help="one more warm run per pair under cProfile: where its setup goes, the 40 largest "
                        "cumulative times in <out>_profile.txt (not a row: cProfile slows it)")
    p.add_argument("--note", default="", help="recorded in every row, e.g. '2-core VM, CPU only'")
    p.add_argument("--out", help="default: results/benchmarks/startup_<device>.csv")
    args = p.parse_args(argv)

    import pandas as pd

    from gpude.core import provenance
    from gpude.core.io import write_csv_atomic

    pairs = [tuple(s.split(":")) for s in (args.pairs.split(",") if args.pairs else PAIRS[args.device])]
    gpu = {}
    if args.device == "gpu":
        import numba.cuda  # noqa: F401  (provenance asks CUDA only where it is imported)

        gpu = provenance.gpu()
    common = {"device": args.device, **provenance.cpu(), **gpu,
              "commit": provenance.git_commit(), "python": platform.python_version(),
              "numba_enable_cudasim": os.environ.get("NUMBA_ENABLE_CUDASIM", ""), "note": args.note}
    common.update({k: v for k, v in provenance.software().items() if k in ("numba", "numba_cuda", "numpy")})
    rows, split_rows, profiles = [], [], []
    context_s = context_time() if args.device == "gpu" else None
    if context_s is not None:
        print(f"CUDA context in a fresh process: {context_s:.2f}s", flush=True)
    for implementation, function in pairs:
        with tempfile.TemporaryDirectory() as tmp:
            cache, work = Path(tmp) / "cache", Path(tmp)

            # the first run fills the empty cache: cold; the others find it: warm
            trial = functools.partial(first_trial, implementation, function, cache, work, args.dim, args.popsize,
                                      args.max_fes)
            runs = [("cold", trial())] + [("warm", trial()) for _ in range(args.repeats)]
            if args.profile:
                stats = work / "profile.pstats"
                trial(stats)
                profiles.append((implementation, function, stats.read_bytes()))
            imports = import_time(implementation, cache)
            split = import_profile(implementation, cache)
        split_rows += [{**common, "implementation": implementation, "package": package, "self_s": round(t, 4)}
                       for package, t in split.items()]
        print(f"{implementation:<13s} imports by package: " +
              ", ".join(f"{k} {v:.2f}s" for k, v in list(split.items())[:6]), flush=True)
        for k, (cache_state, r) in enumerate(runs):
            rows.append({**common, "algorithm": "de", "implementation": implementation, "function": function,
                         "dim": args.dim, "popsize": args.popsize, "cache": cache_state, "run": k,
                         **r, "import_s": imports, "context_s": context_s})
            print(f"{implementation:<13s} {function} {cache_state}: first trial {r['first_trial_s']:.2f}s "
                  f"(setup {r['setup_s']:.2f}s, imports alone {imports:.2f}s)", flush=True)
    out = Path(args.out or REPO / f"results/benchmarks/startup_{args.device}.csv")
    write_csv_atomic(pd.DataFrame(rows), out)
    split_out = out.with_name(out.stem + "_imports.csv")
    write_csv_atomic(pd.DataFrame(split_rows), split_out)
    print("wrote", out, "and", split_out)
    if profiles:
        write_profiles(profiles, out.with_name(out.stem + "_profile.txt"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
