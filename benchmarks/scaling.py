"""Scaling curves: time per run of DE on the GPU against NP and D, beside the floor.

Issue 25, item 7. DE/rand/1/bin as in case study 1 (F=0.5, CR=0.3, float32) on a few functions
(default F01, F10), a fixed FE budget (default 1e7; the time per run scales with it), and two sweeps:
NP in {50, 100, 250, 500, 1000} at D=100, and D in {10, 30, 100, 300, 1000} at NP=250. Each point is
measured for every line of ``--implementations``: ``ide``, ``resident`` (the whole run in one
cooperative launch), ``ide:30`` (30 trials per launch, batched) and ``all_gpu`` by default.

What is timed: :func:`gpude.trial.make_runner` builds and compiles the implementation (``setup_s``,
not in the times), then ``--repeats`` calls run one trial (``.run(seed)``) or, for a batched line,
one batch of B trials (``.run_batch(seeds)``). The time per run is each trial's own ``wall_time_s``
(initialisation to the best value on the host; in a batch, the trial's fair share of the batch's
wall time: while k trials run, each is charged 1/k), averaged over the trials; ``call_s_per_run`` is
the calls' wall time / trials (adds the host's bookkeeping). The runs have no target by default
(``--target=-inf``): every run spends the whole budget, so the times compare equal work.

The floor of every point is :func:`de_floor.floor_point` (the same arithmetic as
``results/benchmarks/de_floor.csv``, at this point's D, NP, budget and trials per launch) on the
measured device's peaks, or ``--floor-device``'s where the device's are not listed (the
``floor_device`` column says which).

Points a function is not defined at are left out, with a note: F01-F10 have official CEC data at
D = 10, 30, 50, 100 only; the Nashed functions (e.g. N05, Zakharov without shift or rotation) are
defined at any D, for the D axis up to 1000.

Output: ``<out>/<device>.csv``, one row per (function, implementation, trials_per_launch, dim,
popsize, max_fes), written atomically after every point with the device, host, software versions and
commit (:func:`gpude.provenance.record`). A second call skips the points already measured with the
same commit, device and settings (``--force`` measures them again; a new row replaces the old), and
``--max-seconds`` starts no point that the longest point so far would carry past it, so a 9-minute
device call ends cleanly and the next call goes on.

    python benchmarks/scaling.py [--functions F01,F10] [--max-fes 1e7] [--repeats 3] \\
        [--implementations ide,resident,ide:30,all_gpu] [--out results/benchmarks/scaling] \\
        [--max-seconds 500] [--archive $OUT/scaling.tar.gz]
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
for folder in (ROOT / "src", ROOT / "benchmarks"):  # the package, and the sibling scripts
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

import de_floor  # noqa: E402
from gpude.errors import GpudeError, InvalidInputError  # noqa: E402
from gpude.functions.suites import FUNCTIONS  # noqa: E402
from gpude.io import read_csv, write_csv_atomic  # noqa: E402

RESULTS = ROOT / "results" / "benchmarks" / "scaling"
CASE1 = dict(F=0.5, CR=0.3, dtype="float32", dim=100, popsize=250, max_fes=10_000_000)
POPSIZES = (50, 100, 250, 500, 1000)
DIMS = (10, 30, 100, 300, 1000)
LINES = "ide,resident,ide:30,all_gpu"
#: a point's identity: a row with these values (and the same SETTINGS) is the same measurement
KEY = ["function", "implementation", "trials_per_launch", "dim", "popsize", "max_fes"]
SETTINGS = ["F", "CR", "dtype", "target"]
TIMING = ("mean of the trials' wall_time_s (initialisation to the best value on the host; batched: "
          "the trial's fair share of the batch) after make_runner's compilation")


@dataclasses.dataclass(frozen=True)
class Point:
    """One measurement: a line (implementation, trials per launch) at one (function, D, NP)."""

    function: str
    implementation: str
    trials_per_launch: int
    dim: int
    popsize: int

    def key(self, max_fes: int) -> tuple:
        return (self.function, self.implementation, self.trials_per_launch, self.dim, self.popsize, max_fes)


# ------------------------------------------------------------------------------------- the plan
def parse_ints(text: str, name: str) -> list[int]:
    """'50,100' -> [50, 100]; anything but positive integers is refused by name."""
    try:
        values = [int(float(v)) for v in str(text).split(",") if v.strip()]
    except ValueError:
        raise InvalidInputError(f"--{name} must be comma-separated positive integers, got {text!r}") from None
    if not values or min(values) < 1:
        raise InvalidInputError(f"--{name} must be comma-separated positive integers, got {text!r}")
    return values


def parse_lines(text: str) -> list[tuple[str, int]]:
    """'ide,ide:30' -> [('ide', 1), ('ide', 30)]: DE implementations, each with its trials per launch."""
    from gpude.registry import get

    lines = []
    for item in filter(None, (s.strip() for s in text.split(","))):
        name, _, batch = item.partition(":")
        get("de", name)  # an unknown implementation fails here, naming the known ones
        b = parse_ints(batch or "1", "implementations (trials per launch after ':')")[0]
        lines.append((name, b))
    if not lines:
        raise InvalidInputError("--implementations names no implementation")
    return lines


def plan(functions, lines, popsizes=POPSIZES, dims=DIMS, base_dim=CASE1["dim"],
         base_popsize=CASE1["popsize"]) -> tuple[list[Point], list[tuple[str, int]]]:
    """The points in order, and the (function, D) pairs left out (the function is not defined there).

    Per function: the NP sweep at ``base_dim``, then the D sweep at ``base_popsize`` (their shared
    point once); at each (D, NP) every line in turn, so that drift hits the lines alike."""
    sizes = list(dict.fromkeys([(base_dim, p) for p in popsizes] + [(d, base_popsize) for d in dims]))
    points, undefined = [], []
    for fid in functions:
        spec = FUNCTIONS[fid]
        for dim, popsize in sizes:
            if not spec.supports(dim):
                if (fid, dim) not in undefined:
                    undefined.append((fid, dim))
                continue
            points += [Point(fid, impl, b, dim, popsize) for impl, b in lines]
    return points, undefined


def check(functions, lines, popsizes, dims, base_dim, base_popsize, max_fes, repeats) -> None:
    """Refuse what cannot run, before any GPU work: unknown functions, DE's least NP (4: three
    distinct partners), a budget smaller than one population, no repeats."""
    unknown = [f for f in functions if f not in FUNCTIONS]
    if unknown:
        raise InvalidInputError(f"unknown function(s) {', '.join(unknown)}; known: {', '.join(FUNCTIONS)}")
    if min([*popsizes, base_popsize]) < 4:
        raise InvalidInputError("every NP must be >= 4 (DE/rand/1 draws three partners besides the target)")
    if max_fes < max([*popsizes, base_popsize]):
        raise InvalidInputError(f"--max-fes {max_fes} is smaller than a population ({max([*popsizes, base_popsize])})")
    if repeats < 1:
        raise InvalidInputError(f"--repeats must be >= 1, got {repeats}")


def require_device(lines) -> None:
    """The GPU implementations need a CUDA GPU or numba's simulator: the project's own error if not."""
    from gpude import gpu_runtime
    from gpude.registry import get

    if any(get("de", impl).needs_gpu for impl, _ in lines):
        gpu_runtime.require_gpu()


# ------------------------------------------------------------------------------------- measuring
def measure_point(point: Point, max_fes: int, repeats: int, settings: dict) -> dict:
    """Build (compile) the runner, then ``repeats`` timed calls: the row's measured columns."""
    from gpude.trial import make_runner

    b = point.trials_per_launch
    options = {"trials_per_launch": b} if b > 1 else {}
    t0 = time.perf_counter()
    runner = make_runner("de", point.implementation, point.function, point.dim, point.popsize, max_fes,
                         **settings, **options)
    setup_s = time.perf_counter() - t0
    results, calls_s = [], 0.0
    for r in range(repeats):
        seeds = list(range(r * b, (r + 1) * b))
        t0 = time.perf_counter()
        results += runner.run_batch(seeds) if b > 1 else [runner.run(seeds[0])]
        calls_s += time.perf_counter() - t0
    wall = np.array([x.wall_time_s for x in results])
    return dict(runs=len(results), wall_s_per_run=wall.mean(),
                wall_s_per_run_std=wall.std(ddof=1) if len(wall) > 1 else float("nan"),
                call_s_per_run=calls_s / len(results), setup_s=setup_s,
                best_error_mean=float(np.mean([x.best_error for x in results])),
                fes_mean=float(np.mean([x.fes_used for x in results])))


def floor_of(point: Point, max_fes: int, dtype: str, device: str, fallback: str) -> dict:
    """The point's floor per run on the measured device's peaks (else ``fallback``'s); NaN where
    de_floor has no flop count for the function's terms."""
    peaks = de_floor.peak_device(device) or fallback
    try:
        f = de_floor.floor_point(point.function, point.dim, point.popsize, max_fes, peaks, dtype,
                                 point.trials_per_launch)
    except KeyError:
        return dict(floor_s_run=float("nan"), floor_bound="", floor_device=peaks)
    return dict(floor_s_run=f["floor_s_run"], floor_bound=f["bound"], floor_device=peaks)


def previous_rows(path: Path) -> pd.DataFrame:
    return read_csv(path) if path.is_file() else pd.DataFrame(columns=[*KEY, *SETTINGS])


def done_rows(old: pd.DataFrame, device: str, commit: str, settings: dict) -> pd.DataFrame:
    """The rows measured already with this commit, device and settings (a failed point too: the same
    code fails again; ``--force`` tries it anew)."""
    if not len(old):
        return old
    same = (old["device"] == device) & (old["git_commit"].astype(str) == commit)
    for k, v in settings.items():
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            # a float read back from the CSV may differ in its last bit (pandas' parsers differ: it did
            # on the H100 host, and every point was measured again)
            same &= np.isclose(pd.to_numeric(old[k], errors="coerce"), float(v), rtol=1e-12, atol=0.0)
        else:
            same &= old[k].astype(str) == str(v)
    return old[same]


def merged(old: pd.DataFrame, rows: list[dict]) -> pd.DataFrame:
    """The old rows with the new ones in place of any of the same key, settings and device."""
    new = pd.DataFrame(rows)
    if not len(old):
        return new
    ident = [*KEY, *SETTINGS, "device"]
    stale = old.set_index(ident).index.isin(new.set_index(ident).index)
    return pd.concat([old[~stale], new], ignore_index=True)


def run(args, measure=measure_point, prov: dict | None = None) -> int:
    """Measure the plan's points not yet done, writing the CSV after each; ``measure`` and
    ``prov`` can be injected (tests)."""
    functions = [f.strip() for f in args.functions.split(",") if f.strip()]
    lines = parse_lines(args.implementations)
    popsizes, dims = parse_ints(args.popsizes, "popsizes"), parse_ints(args.dims, "dims")
    max_fes = parse_ints(args.max_fes, "max-fes")[0]
    check(functions, lines, popsizes, dims, args.base_dim, args.base_popsize, max_fes, args.repeats)
    if args.archive and not Path(args.out).resolve().is_relative_to(ROOT.resolve()):
        # (the archive keeps --out's path in the repository, so that unpacking at its root puts it back)
        raise InvalidInputError(f"--archive packs --out by its path in the repository; {args.out} is outside it")
    if args.floor_device not in de_floor.PEAKS:
        raise InvalidInputError(f"--floor-device must be one of {', '.join(de_floor.PEAKS)}")
    points, undefined = plan(functions, lines, popsizes, dims, args.base_dim, args.base_popsize)
    for fid in dict.fromkeys(f for f, _ in undefined):
        print(f"scaling: {fid} is not defined at D = {', '.join(str(d) for f, d in undefined if f == fid)} "
              f"(its dimensions: {FUNCTIONS[fid].dims_text()}); those points are left out", flush=True)
    if prov is None:
        require_device(lines)
        from numba import cuda  # noqa: F401  (so that the provenance names the GPU)

        from gpude import provenance

        prov = provenance.record()
    device = prov.get("gpu", "none")
    from gpude.provenance import slug

    path = Path(args.out) / f"{slug(device)}.csv"
    settings = dict(F=args.F, CR=args.CR, dtype=args.dtype, target=args.target)
    old = previous_rows(path)
    done = old.iloc[:0] if args.force else done_rows(old, device, str(prov.get("git_commit")), settings)
    keys = {tuple(r) for r in done[KEY].itertuples(index=False)}
    todo = [p for p in points if p.key(max_fes) not in keys]
    failed = int((done["status"] != "ok").sum()) if len(done) else 0
    print(f"scaling: {len(points)} point(s), {len(points) - len(todo)} measured already "
          f"({path}{f'; {failed} of them failed, --force tries again' if failed else ''}), "
          f"{len(todo)} to measure", flush=True)
    start, longest, rows = time.monotonic(), 0.0, []
    for i, point in enumerate(todo):
        elapsed = time.monotonic() - start
        if args.max_seconds and elapsed + longest > args.max_seconds:
            print(f"scaling: out of time after {elapsed:.0f} s: {len(todo) - i} point(s) left for the next call",
                  flush=True)
            break
        t0 = time.monotonic()
        try:
            measured, status = measure(point, max_fes, args.repeats, settings), "ok"
        except Exception as exc:  # (a CUDA driver error too) a failed point is a row, not the sweep's end
            measured, status = dict(runs=0), f"error: {type(exc).__name__}: {exc}"[:400]
        longest = max(longest, time.monotonic() - t0)
        rows.append(dict(dataclasses.asdict(point), max_fes=max_fes, **settings, repeats=args.repeats,
                         base_dim=args.base_dim, base_popsize=args.base_popsize,  # the sweeps' axes
                         **measured, **floor_of(point, max_fes, args.dtype, device, args.floor_device),
                         status=status, timing=TIMING, device=device, **prov))
        write_csv_atomic(merged(old, rows), path)
        shown = (f"{measured['wall_s_per_run']:.4g} s/run (floor {rows[-1]['floor_s_run']:.3g} s)"
                 if status == "ok" else status)
        print(f"[{i + 1}/{len(todo)}] {point.function} {point.implementation}:{point.trials_per_launch} "
              f"D={point.dim} NP={point.popsize}: {shown}", flush=True)
    if args.archive:
        from campaign import archive

        archive(Path(args.archive), Path(args.out), ROOT)
    return 0


# ------------------------------------------------------------------------------------- CLI
def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--functions", default="F01,F10", help="comma-separated (F01-F10: D 10, 30, 50, 100 only)")
    p.add_argument("--implementations", default=LINES,
                   help="DE implementations, comma-separated; 'name:B' runs B trials per launch (batched)")
    p.add_argument("--popsizes", default=",".join(map(str, POPSIZES)), help="the NP sweep (at --base-dim)")
    p.add_argument("--dims", default=",".join(map(str, DIMS)), help="the D sweep (at --base-popsize)")
    p.add_argument("--base-dim", type=int, default=CASE1["dim"])
    p.add_argument("--base-popsize", type=int, default=CASE1["popsize"])
    p.add_argument("--max-fes", default=str(CASE1["max_fes"]), help="FE budget per run (e.g. 1e7)")
    p.add_argument("--repeats", type=int, default=3, help="timed calls per point (a batched call runs B trials)")
    p.add_argument("--F", type=float, default=CASE1["F"])
    p.add_argument("--CR", type=float, default=CASE1["CR"])
    p.add_argument("--dtype", default=CASE1["dtype"])
    p.add_argument("--target", type=float, default=-math.inf,
                   help="stop a run at this error (default: never, so that every run spends the budget; "
                        "write --target=1e-8)")
    p.add_argument("--floor-device", default="NVIDIA H100 SXM",
                   help="the peaks for the floor where the measured device's are not listed")
    p.add_argument("--out", default=str(RESULTS))
    p.add_argument("--force", action="store_true", help="measure again the points the CSV has")
    p.add_argument("--max-seconds", type=float, default=None,
                   help="start no point the longest point so far would carry past this")
    p.add_argument("--archive", help="pack --out into this .tar.gz at the end (a device call returns few files)")
    return p


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    try:
        return run(args)
    except (GpudeError, KeyError) as exc:  # an unknown implementation is a KeyError of the registry
        raise SystemExit(f"scaling: {exc}") from None


if __name__ == "__main__":
    sys.exit(main())
