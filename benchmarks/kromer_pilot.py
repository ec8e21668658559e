"""Pilot for Krömer et al.'s unstated DE parameters (F, CR; NP for ETC): ``de/sequential`` over a grid
of F x CR x NP x seeds, at the paper's budgets, one run per core, resumable.

Why one CPU DE decides for the GPU too: a seed makes the same run on every DE implementation of this
suite (``de/sequential``, ``de/master_slave``, ``de/many_threaded``; docs/kromer.md), generation by
generation, so they differ in speed only. The same budget in *seconds* is, however, a different number
of generations on each: the H200's many-threaded DE made 0.5x the sequential CPU's FEs in 30 s on ETC
at NP 64 but 4-5x at NP 512-1024 and 2.6-14x on Rastrigin. So every run is read out twice: at CPU times
(the paper's budgets and earlier ones: Table 4's and Tables 2-3's CPU columns) and at the FEs the
GPU reaches in the same times (``gpu_fes``: FEs per second of ``many_threaded`` in the committed H200
references ``results/reference/nvidia-h200/kromer_*/trials.csv`` of CR = 0.1, frozen in
``results/benchmarks/kromer_pilot/inputs/gpu_rates.csv``). One 30 s (10 s, 27 s) run gives
every earlier readout from its trace (``gpude.report.kromer.best_at``, the REPORT's own helper).

Stages (seeds 1, 2[, 3]: the pilot's, not the experiments'; CR grid = 0.001, 0.002, 0.005, 0.01, 0.02,
0.05, 0.1, 0.3, 0.9; F grid = 0.3, 0.5, 0.7, 0.9). Estimates: core-seconds = runs x (budget + 0.5 s) + 16
workers x 4 s of start-up; wall = the runs packed on 16 cores, longest first, + 4 s + the parent's 10 s
of compilation (overheads measured on a 2-core VM with an empty numba cache: see docs/kromer.md):

==========  ========================================================================  =====  ======  =========
stage       what                                                                      runs   core-s  wall (16)
==========  ========================================================================  =====  ======  =========
etc-cr      12 ETC matrices, NP 64, F 0.5, CR grid, seeds 1-2, 30 s                     216    6652    7.3 min
etc-f       per consistency class its 2 best CRs of etc-cr (CPU 30 s) x F grid on the   144    4456    4.8 min
            class's 4 matrices, NP 64, seeds 1-2, 30 s (+48 runs of F 0.5: etc-cr's)
etc-np      NP 512 and 1024, (F, CR) = the protocol's (0.5, 0.1) and the common          48    6428    7.1 min
            choice of etc-cr + etc-f at NP 64, ThMh* and TlMl* (6 matrices), seeds
            1-2; each run until the FEs the H200 GPU makes in 30 s (33 M at NP 512,
            43 M at 1024; at the H200 host's reference CPU speed 115 s and 150 s),
            at most 180 s (then <= 9.3 min: --max-seconds leaves the last runs to a
            second call)
lop-cr      24 LOLIB / N-LOLIB matrices (below), NP 256, F 0.5, CR grid, seeds 1-3,      648    6868    7.4 min
            10 s (less where runs reach the optimum)
lop-f       per table its 2 best CRs of lop-cr (CPU 10 s) x F grid on its 12             432    4600    5.0 min
            matrices, NP 256, seeds 1-3, 10 s (+144 runs of F 0.5: lop-cr's)
rastrigin   N09 at D 128, 256, 512, NP 256, F grid x CR grid, seeds 1-2, 27 s           216    6004    6.7 min
==========  ========================================================================  =====  ======  =========

(``--dry-run`` prints the same from the code.) Run the stages in this order: etc-f and lop-f pick their
CRs from etc-cr's and lop-cr's results, etc-np its choice from etc-cr's and etc-f's (``--CR`` / ``--F``
override a pick); a later stage given in the same command is planned after the earlier one ran. The LOP
matrices are the ones the H200 reference (CR 0.1) did not solve in every run, plus two slow-solved
ones; the easy t59/t69 families, solved by every setting, would add no information: LOLIB be75eec, be75np, stabu1-3, t65b11xx,
t65d11xx, t65f11xx, t70d11xn, t75u11xx, tiw56n54, tiw56r54; N-LOLIB the same families with N-stabu70,
74, 75, N-t70d11xxb, N-usa79 and N-tiw56n67.

Rows: one per readout of a run, in ``<out>/<stage>.csv.gz`` (gzipped: the GPU host's transfers are
capped, and every row repeats its provenance): the run's key (problem, instance, dim,
popsize, F, CR, seed, max_time_s, max_fes), the readout (``cpu_time`` or ``gpu_fes``, its time
``at_s``, the FEs and generation it fell on, whether the run got there), ``best_error`` in the
REPORT's measure (ETC: fit; LOP: error % = 100 (optimum - f) / optimum; Rastrigin: f), the whole run's
FEs, generations and stop reason, the concurrency and the provenance (``gpude.provenance.record()``).

Resumable: as runs finish, the stage's file is rewritten whole through a temporary file and a rename,
so it holds complete runs only, whatever kills the command; a new call skips every run whose key is in
any stage file of ``--out`` (so a later stage reuses an earlier one's runs). ``--max-seconds`` launches no run that
could not end in time (at its longest), so a command ends cleanly before a host's limit and the next
call goes on. A re-run of a finished stage runs nothing (unless the earlier results it picks from have
changed since: its plan follows them).

    python benchmarks/kromer_pilot.py --stage etc-cr [--jobs N] [--max-seconds 540] [--out DIR]
        [--instance-data DIR|FILE.tgz] [--dry-run] [--F 0.5,0.9] [--CR 0.01] [--seeds 1,2]
    python benchmarks/kromer_pilot.py --stage all --copy-instances .carry/kromer_instances.tgz --instance-data ../shared/wave2

Then ``python benchmarks/kromer_pilot_summary.py`` writes ``<out>/SUMMARY.md``.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import fcntl
import math
import os
import shutil
import sys
import time
from collections import deque
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # kromer_pilot_summary, also in spawned workers

DEFAULT_OUT = ROOT / "results" / "benchmarks" / "kromer_pilot"
#: the FEs and wall times of the H200 references of CR = 0.1 (commit ce1b141) that the pilot's GPU
#: readouts use, frozen here when kromer_rastrigin was re-made with the pilot's choice (1a8de1b), so the
#: pilot plans and reads out the same whatever the references become
GPU_RATES = ROOT / "results" / "benchmarks" / "kromer_pilot" / "inputs" / "gpu_rates.csv"
CR_GRID = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.3, 0.9)
F_GRID = (0.3, 0.5, 0.7, 0.9)
PROTOCOL = (0.5, 0.1)  # F, CR of the committed kromer_* experiments
#: seconds a run takes beyond its budget: building the runner (instance file, warm-up of 3 NP FEs),
#: the last generation's overshoot, the parent's CSV write (measured: docs/kromer.md)
PER_RUN_OVERHEAD_S = 0.5
#: seconds a worker process needs before its first run: interpreter, imports, numba's disk cache, the
#: uncached LOP/ETC evaluators (measured: docs/kromer.md)
WORKER_STARTUP_S = 4.0
#: a run is launched only if it can end this long before --max-seconds (the final write and exit)
LAUNCH_MARGIN_S = 5.0
#: seconds the parent compiles each kind of run before starting the workers (measured: docs/kromer.md)
PARENT_WARMUP_S = 10.0

ETC_MATRICES = ("ThMhCc", "ThMlCc", "TlMhCc", "TlMlCc", "ThMhCi", "ThMlCi", "TlMhCi", "TlMlCi",
                "ThMhCs", "ThMlCs", "TlMhCs", "TlMlCs")
ETC_NP_MATRICES = ("ThMhCc", "TlMlCc", "ThMhCi", "TlMlCi", "ThMhCs", "TlMlCs")
LOP_MATRICES = ("be75eec", "be75np", "stabu1", "stabu2", "stabu3", "t65b11xx", "t65d11xx", "t65f11xx",
                "t70d11xn", "t75u11xx", "tiw56n54", "tiw56r54",
                "N-be75eec", "N-be75np", "N-stabu70", "N-stabu74", "N-stabu75", "N-t65b11xx", "N-t65d11xx",
                "N-t65f11xx", "N-t70d11xxb", "N-t75u11xx", "N-usa79", "N-tiw56n67")
RASTRIGIN_DIMS = (128, 256, 512)


@dataclasses.dataclass(frozen=True)
class Problem:
    """A problem of the paper with its budget, readout times and the experiment's FE cap."""

    name: str
    budget_s: float
    readout_s: tuple[float, ...]
    max_fes: int
    experiment: str


PROBLEMS = {
    "etc": Problem("etc", 30.0, (5.0, 10.0, 20.0, 30.0), 10**9, "kromer_etc"),
    "lop": Problem("lop", 10.0, (5.0, 10.0), 50_000_000, "kromer_lop"),
    "rastrigin": Problem("rastrigin", 27.0, (0.64, 27.0), 200_000_000, "kromer_rastrigin"),
}


def run_key(problem, instance, dim, popsize, F, CR, seed, max_time_s, max_fes) -> tuple:
    """What identifies a run (as written to and read back from a CSV)."""
    return (str(problem), str(instance), int(dim), int(popsize), round(float(F), 9), round(float(CR), 9),
            int(seed), round(float(max_time_s), 6), int(max_fes))


@dataclasses.dataclass(frozen=True)
class RunSpec:
    """One run of the pilot: everything a worker needs (it is sent to another process)."""

    stage: str
    problem: str
    instance: str          # ETC / LOP instance, or N09
    dim: int               # the instance's size, or Rastrigin's D
    popsize: int
    F: float
    CR: float
    seed: int
    max_time_s: float
    max_fes: int
    readout_s: tuple[float, ...]
    gpu_fes_per_s: float | None = None   # the H200 many-threaded DE's rate, for the gpu_fes readouts
    expected_run_s: float | None = None  # a run with an FE cap: its likely length (default: max_time_s)

    def key(self) -> tuple:
        return run_key(self.problem, self.instance, self.dim, self.popsize, self.F, self.CR, self.seed,
                       self.max_time_s, self.max_fes)

    @property
    def expected_s(self) -> float:
        """Seconds the run likely takes (the plan's estimates; the order of the runs)."""
        return (self.expected_run_s or self.max_time_s) + PER_RUN_OVERHEAD_S

    @property
    def worst_s(self) -> float:
        """Seconds the run may take (--max-seconds launches a run only if this fits)."""
        return self.max_time_s + PER_RUN_OVERHEAD_S


class PlanError(Exception):
    """A stage cannot be planned (e.g. it needs an earlier stage's results)."""


# --- the GPU's FEs per second (committed H200 references) ---------------------------------------

@lru_cache(maxsize=None)
def _reference_rates(problem: str, implementation: str):
    import pandas as pd

    if not GPU_RATES.is_file():
        return None
    t = pd.read_csv(GPU_RATES)
    t = t[(t["experiment"] == PROBLEMS[problem].experiment) & (t["implementation"] == implementation)
          & (t["wall_time_s"] > 0)]
    return t.assign(rate=t["fes_used"] / t["wall_time_s"]) if len(t) else None


def gpu_fes_per_s(problem: str, instance: str, dim: int, popsize: int, implementation: str = "many_threaded"):
    """Median FEs per second of the H200 reference's many-threaded DE (or another implementation) for
    this problem at this NP (ETC: over its 12 matrices, which differ in values only; LOP: this matrix;
    Rastrigin: this D); None without a reference."""
    rates = _reference_rates(problem, implementation)
    if rates is None:
        return None
    sel = rates[rates["popsize"] == popsize]
    if problem == "lop":
        sel = sel[sel["function"] == instance]
    elif problem == "rastrigin":
        sel = sel[sel["dim"].astype(str) == str(dim)]
    return float(sel["rate"].median()) if len(sel) else None


# --- stages -------------------------------------------------------------------------------------

def instance_dim(problem: str, instance: str) -> int:
    from gpude.instances import catalog

    return catalog(problem)[instance]


def make_spec(ctx: "Context", stage: str, problem: str, instance: str, popsize: int, F: float, CR: float,
              seed: int, dim: int | None = None, max_time_s: float | None = None,
              max_fes: int | None = None) -> RunSpec:
    """A run at the problem's budget and readouts (times multiplied by ``ctx.time_scale``, and an FE cap
    given here too: a smoke test's shorter runs)."""
    p = PROBLEMS[problem]
    dim = dim if dim is not None else instance_dim(problem, instance)
    scale = ctx.time_scale
    max_time_s = round(float(max_time_s if max_time_s is not None else p.budget_s) * scale, 6)
    expected = None
    if max_fes is not None:  # an FE cap: likely as long as the H200 host's sequential CPU DE needed
        max_fes = max(int(max_fes * scale), 4 * popsize)
        cpu_rate = gpu_fes_per_s(problem, instance, dim, popsize, "sequential")
        expected = min(max_time_s, max_fes / cpu_rate) if cpu_rate else None
    return RunSpec(stage, problem, instance, int(dim), int(popsize), float(F), float(CR), int(seed), max_time_s,
                   int(max_fes if max_fes is not None else p.max_fes), tuple(round(t * scale, 6) for t in p.readout_s),
                   gpu_fes_per_s(problem, instance, dim, popsize), expected)


@dataclasses.dataclass
class Context:
    """What a stage's plan may use: the pilot's rows so far, overrides, and whether placeholders are
    allowed where an earlier stage's results are missing (--dry-run, --copy-instances)."""

    rows: object            # DataFrame of kromer_pilot_summary.load_rows (measured readouts)
    F: tuple | None = None
    CR: tuple | None = None
    seeds: tuple | None = None
    placeholders: bool = False
    time_scale: float = 1.0
    notes: list = dataclasses.field(default_factory=list)

    def grid(self, name: str, default):
        value = getattr(self, name)
        return tuple(value) if value else tuple(default)


def _instances_by_class(problem: str, instances) -> dict[str, list[str]]:
    from kromer_pilot_summary import problem_class

    out: dict[str, list[str]] = {}
    for name in instances:
        out.setdefault(problem_class(problem, name, 0), []).append(name)
    return out


def _best_crs(ctx: Context, stage: str, problem: str, popsize: int, at_s: float, needs: str,
              classes) -> dict[str, tuple]:
    """Per class, the 2 best CRs at F 0.5 of an earlier stage (CPU time ``at_s``), or --CR."""
    if ctx.CR:
        return {c: tuple(ctx.CR) for c in classes}
    from kromer_pilot_summary import best_crs

    found = best_crs(ctx.rows, problem, popsize, "cpu_time", at_s, F=0.5) if len(ctx.rows) else {}
    missing = [c for c in classes if len(found.get(c, [])) < 2]
    if missing:
        if not ctx.placeholders:
            raise PlanError(f"stage {stage} picks each class's 2 best CRs from {needs}'s results, which lack "
                            f"{', '.join(missing)}: run --stage {needs} first, or give --CR")
        ctx.notes.append(f"{stage}: {needs} has no results for {', '.join(missing)} yet: sized with 2 placeholder "
                         f"CRs per class")
        found = {**found, **{c: (0.01, 0.1) for c in missing}}
    ctx.notes.append(f"{stage}: CRs per class " + "; ".join(f"{c}: {', '.join(f'{x:g}' for x in found[c])}"
                                                         for c in classes))
    return {c: tuple(found[c][:2]) for c in classes}


def plan_etc_cr(ctx: Context) -> list[RunSpec]:
    return [make_spec(ctx, "etc-cr", "etc", m, 64, F, CR, seed)
            for seed in ctx.grid("seeds", (1, 2)) for m in ETC_MATRICES
            for F in ctx.grid("F", (0.5,)) for CR in ctx.grid("CR", CR_GRID)]


def plan_etc_f(ctx: Context) -> list[RunSpec]:
    by_class = _instances_by_class("etc", ETC_MATRICES)
    crs = _best_crs(ctx, "etc-f", "etc", 64, PROBLEMS["etc"].budget_s * ctx.time_scale, "etc-cr", sorted(by_class))
    return [make_spec(ctx, "etc-f", "etc", m, 64, F, CR, seed)
            for seed in ctx.grid("seeds", (1, 2)) for cls in sorted(by_class) for m in by_class[cls]
            for CR in crs[cls] for F in ctx.grid("F", F_GRID)]


def plan_etc_np(ctx: Context) -> list[RunSpec]:
    if ctx.F or ctx.CR:
        configs = [(F, CR) for F in ctx.grid("F", (PROTOCOL[0],)) for CR in ctx.grid("CR", (PROTOCOL[1],))]
    else:
        from kromer_pilot_summary import common_choice

        at_s = PROBLEMS["etc"].budget_s * ctx.time_scale
        chosen = common_choice(ctx.rows, "etc", 64, "cpu_time", at_s) if len(ctx.rows) else None
        if chosen is None:
            if not ctx.placeholders:
                raise PlanError("stage etc-np runs the common choice of etc-cr and etc-f at NP 64, and there is "
                                "none yet: run those stages first, or give --F and --CR")
            ctx.notes.append("etc-np: no common choice at NP 64 yet: sized with a placeholder (0.5, 0.01)")
            chosen = (0.5, 0.01)
        configs = sorted({PROTOCOL, chosen})
        ctx.notes.append(f"etc-np: (F, CR) = {', '.join(f'({F:g}, {CR:g})' for F, CR in configs)}")
    specs = []
    for seed in ctx.grid("seeds", (1, 2)):
        for popsize in (512, 1024):
            rate = gpu_fes_per_s("etc", ETC_NP_MATRICES[0], 512, popsize)
            if rate is None:
                raise PlanError(f"no H200 rate for ETC at NP {popsize} ({GPU_RATES})")
            # until the FEs the GPU makes in 30 s (and a generation more), the run's 30 s read from its trace
            fes = int(math.ceil(rate * PROBLEMS["etc"].budget_s)) + popsize
            specs += [make_spec(ctx, "etc-np", "etc", m, popsize, F, CR, seed, max_time_s=180.0, max_fes=fes)
                      for m in ETC_NP_MATRICES for F, CR in configs]
    return specs


def plan_lop_cr(ctx: Context) -> list[RunSpec]:
    return [make_spec(ctx, "lop-cr", "lop", m, 256, F, CR, seed)
            for seed in ctx.grid("seeds", (1, 2, 3)) for m in LOP_MATRICES
            for F in ctx.grid("F", (0.5,)) for CR in ctx.grid("CR", CR_GRID)]


def plan_lop_f(ctx: Context) -> list[RunSpec]:
    by_class = _instances_by_class("lop", LOP_MATRICES)
    crs = _best_crs(ctx, "lop-f", "lop", 256, PROBLEMS["lop"].budget_s * ctx.time_scale, "lop-cr", sorted(by_class))
    return [make_spec(ctx, "lop-f", "lop", m, 256, F, CR, seed)
            for seed in ctx.grid("seeds", (1, 2, 3)) for cls in sorted(by_class) for m in by_class[cls]
            for CR in crs[cls] for F in ctx.grid("F", F_GRID)]


def plan_rastrigin(ctx: Context) -> list[RunSpec]:
    return [make_spec(ctx, "rastrigin", "rastrigin", "N09", 256, F, CR, seed, dim=dim)
            for seed in ctx.grid("seeds", (1, 2)) for dim in RASTRIGIN_DIMS
            for F in ctx.grid("F", F_GRID) for CR in ctx.grid("CR", CR_GRID)]


#: stage -> (plan, the instances it may use: what --copy-instances copies)
STAGES = {
    "etc-cr": (plan_etc_cr, ("etc", ETC_MATRICES)),
    "etc-f": (plan_etc_f, ("etc", ETC_MATRICES)),
    "etc-np": (plan_etc_np, ("etc", ETC_NP_MATRICES)),
    "lop-cr": (plan_lop_cr, ("lop", LOP_MATRICES)),
    "lop-f": (plan_lop_f, ("lop", LOP_MATRICES)),
    "rastrigin": (plan_rastrigin, ("rastrigin", ())),
}


# --- one run, in a worker process ---------------------------------------------------------------

_WORKER = {"import_s": None, "runs": 0}


def init_worker(env: dict) -> None:
    """Set the environment before numba is imported (one thread per process), then import and time
    gpude: a worker's start-up, recorded with its first run."""
    t0 = time.perf_counter()
    os.environ.update(env)
    import gpude.trial  # noqa: F401
    import gpude.report.kromer  # noqa: F401

    _WORKER["import_s"] = time.perf_counter() - t0


def execute(spec: RunSpec, runs_in_flight: int) -> list[dict]:
    """Run one spec and return its readout rows (without provenance: the parent adds it)."""
    from gpude.trial import make_runner

    t0 = time.perf_counter()
    dim = spec.dim if spec.problem == "rastrigin" else "instance"
    runner = make_runner("de", "sequential", spec.instance, dim, spec.popsize, spec.max_fes, F=spec.F, CR=spec.CR,
                         max_time_s=spec.max_time_s, target=0.0)
    setup_s = time.perf_counter() - t0
    result = runner.run(spec.seed)
    _WORKER["runs"] += 1
    first = _WORKER["runs"] == 1
    return readout_rows(spec, result, setup_s, runs_in_flight,
                        worker_import_s=_WORKER["import_s"] if first else None)


def _measure(problem: str, instance: str):
    """raw best error -> the REPORT's measure (LOP: error %)."""
    if problem != "lop":
        return float
    from gpude.problems.lop import optima

    optimum = float(optima()["optimum"][instance])
    return lambda raw: 100.0 * float(raw) / optimum


def readout_rows(spec: RunSpec, result, setup_s: float, runs_in_flight: int, worker_import_s=None) -> list[dict]:
    """One row per readout: at each CPU time, and at the FEs the GPU makes in each time."""
    import numpy as np

    from gpude.report.kromer import best_at

    trace = result.trace
    fes, best, times, gens = (np.asarray(trace[k]) for k in ("fes", "best_error", "time_s", "generation"))
    measure = _measure(spec.problem, spec.instance)
    base = {"stage": spec.stage, "problem": spec.problem, "instance": spec.instance, "dim": spec.dim,
            "implementation": "de/sequential", "popsize": spec.popsize, "F": spec.F, "CR": spec.CR, "seed": spec.seed,
            "max_time_s": spec.max_time_s, "max_fes": spec.max_fes,
            "run_best_error": measure(result.best_error), "run_fes_used": result.fes_used,
            "run_generations": result.generations, "run_wall_time_s": result.wall_time_s,
            "run_stopped_by": result.stopped_by, "setup_time_s": setup_s, "worker_import_s": worker_import_s,
            "gpu_fes_per_s": spec.gpu_fes_per_s, "runs_in_flight": runs_in_flight}
    rows = []
    for t in spec.readout_s:
        # the REPORT's helper: the trace's best after t s, the final best at the budget
        value = best_at(trace, t, result.best_error, spec.max_time_s)
        # a run that stopped on its FE cap before t never had t seconds
        reached = bool(np.isfinite(value)) and not (result.stopped_by == "budget" and times[-1] < t)
        # the generation the value comes from (at the budget: the last, which may end just past it)
        at_budget = t >= spec.max_time_s * (1 - 1e-9)
        i = len(times) - 1 if at_budget else max(int(np.searchsorted(times, t, side="right")) - 1, 0)
        rows.append({**base, "readout": "cpu_time", "at_s": t, "reached": reached,
                     "best_error": measure(value) if reached else np.nan,
                     "at_fes": int(fes[i]) if reached else None, "at_generation": int(gens[i]) if reached else None,
                     "at_time_s": float(min(times[i], t)) if reached else None})
        if spec.gpu_fes_per_s is None:
            continue
        target_fes = int(round(spec.gpu_fes_per_s * t))
        reached = result.fes_used >= target_fes or result.stopped_by == "target"
        j = max(int(np.searchsorted(fes, target_fes, side="right")) - 1, 0)
        rows.append({**base, "readout": "gpu_fes", "at_s": t, "reached": bool(reached),
                     "best_error": measure(best[j]) if reached else np.nan,
                     "at_fes": target_fes, "at_generation": int(gens[j]) if reached else None,
                     "at_time_s": float(times[j]) if reached else None})
    return rows


# --- the driver -----------------------------------------------------------------------------------

@contextlib.contextmanager
def _environ(**values):
    """Set environment variables for the block (the parent's, restored: tests call main())."""
    old = {k: os.environ.get(k) for k in values}
    os.environ.update({k: v for k, v in values.items() if v is not None})
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextlib.contextmanager
def locked(folder: Path):
    """One pilot writing into a folder at a time (an flock on it, released if the process dies)."""
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SystemExit(f"kromer_pilot: another pilot is writing into {folder}; wait for it") from None
        yield
    finally:
        os.close(fd)


def read_stage_files(out: Path) -> dict:
    """``stage name -> DataFrame`` of every stage file in ``out`` (``<stage>.csv.gz``, or a plain
    ``.csv``), not the SUMMARY files."""
    import pandas as pd

    from kromer_pilot_summary import read_stage, stage_files

    return {p.name.removesuffix(".gz").removesuffix(".csv"): read_stage(p) for p in stage_files(out)}


def done_keys(frames: dict) -> set:
    keys = set()
    for frame in frames.values():
        cols = ["problem", "instance", "dim", "popsize", "F", "CR", "seed", "max_time_s", "max_fes"]
        if len(frame) and set(cols) <= set(frame.columns):
            keys.update(run_key(*r) for r in frame[cols].itertuples(index=False))
    return keys


def estimate(specs, jobs: int) -> tuple[float, float]:
    """(core-seconds, wall seconds on ``jobs`` cores): the runs packed longest first onto the least
    loaded core, plus every worker's start-up."""
    loads = [0.0] * max(jobs, 1)
    for spec in sorted(specs, key=lambda s: -s.expected_s):
        k = loads.index(min(loads))
        loads[k] += spec.expected_s
    if not specs:
        return 0.0, 0.0
    startup = WORKER_STARTUP_S * min(jobs, len(specs))
    return sum(s.expected_s for s in specs) + startup, max(loads) + WORKER_STARTUP_S + PARENT_WARMUP_S


def check_instances(specs) -> None:
    """Every instance file the runs need is present and intact (fail before any run)."""
    from gpude.instances import instance_file

    for kind, name in sorted({instance_file_of(s.problem, s.instance) for s in specs if s.problem != "rastrigin"}):
        instance_file(kind, name)


def instance_file_of(problem: str, instance: str) -> tuple[str, str]:
    """(instance set, file) of an ETC or LOP instance, from the committed tables."""
    import pandas as pd

    from gpude.instances import table_dir

    if problem == "etc":
        t = pd.read_csv(table_dir("etc") / "instances.csv")
        return "etc", str(t.set_index("paper_name").loc[instance, "file"])
    t = pd.read_csv(table_dir("lolib") / "optima.csv")
    return "lolib", str(t.set_index("paper_name").loc[instance, "file"])


def _is_archive(path: Path) -> bool:
    return path.name.endswith((".tgz", ".tar.gz"))


def copy_instances(stages, dest: Path) -> list[str]:
    """Copy the instance files the stages use (verified) into ``dest/<set>/``, or into a .tgz of that
    layout (``dest`` ending in .tgz or .tar.gz: 0.7 MB instead of 1.7 for every stage's): a
    GPUDE_INSTANCE_DATA folder, or archive, to carry to an offline host (``--instance-data``)."""
    import tarfile
    import tempfile

    from gpude.instances import instance_file

    files = sorted({instance_file_of(problem, instance) for name in stages
                    for problem, instances in [STAGES[name][1]] for instance in instances})
    if _is_archive(dest):
        dest.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=dest.parent, prefix=f".{dest.name}.", suffix=".tmp", delete=False) as tmp:
            with tarfile.open(fileobj=tmp, mode="w:gz") as tar:
                for kind, file in files:
                    tar.add(instance_file(kind, file), arcname=f"{kind}/{file}")
        os.chmod(tmp.name, 0o644)
        os.replace(tmp.name, dest)
        return [f"{kind}/{file}" for kind, file in files]
    written = []
    for kind, file in files:
        target = dest / kind / file
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(instance_file(kind, file), target)
            written.append(f"{kind}/{file}")
    return written


@contextlib.contextmanager
def instance_folder(path: Path | None):
    """``--instance-data``: a folder as it is, or a .tgz unpacked into a temporary folder."""
    if path is None or not _is_archive(path):
        yield str(path.resolve()) if path else None
        return
    import tarfile
    import tempfile

    with tempfile.TemporaryDirectory(prefix="kromer_instances_") as folder:
        with tarfile.open(path) as tar:
            tar.extractall(folder, filter="data")
        yield folder


def warm_up(specs) -> float:
    """Compile every kind of run once here, into numba's disk cache, before the workers start: they
    then load it instead of all compiling the same code at once."""
    from gpude.trial import make_runner

    t0 = time.perf_counter()
    for problem in sorted({s.problem for s in specs}):
        s = next(x for x in specs if x.problem == problem)
        dim = s.dim if problem == "rastrigin" else "instance"
        make_runner("de", "sequential", s.instance, dim, 8, 40, F=s.F, CR=s.CR, target=0.0).run(1)
    return time.perf_counter() - t0


class StageWriter:
    """The rows of every stage run, each stage's CSV rewritten whole (through a temporary file and a
    rename) after each batch of finished runs: it never holds a part of a run."""

    def __init__(self, out: Path, frames: dict):
        self.out, self.frames, self.new, self.touched = out, frames, {}, set()
        from gpude import provenance

        self.provenance = provenance.record()

    def add(self, stage: str, rows: list[dict], jobs: int) -> None:
        """Buffer a finished run's rows (``flush`` writes them)."""
        import datetime as dt

        stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        cores = self.provenance.get("cpu_cores")
        for r in rows:
            r.update(jobs=jobs, concurrency=f"{r['runs_in_flight']} runs at once on {cores} cores, one process "
                     "each (NUMBA_NUM_THREADS=1)", **{**self.provenance, "timestamp_utc": stamp})
        self.new.setdefault(stage, []).extend(rows)
        self.touched.add(stage)

    def flush(self) -> None:
        """Rewrite the file of every stage with new rows: the earlier rows and every finished run's,
        gzipped (the rows repeat their provenance: 12x smaller, which the GPU host's 64 MiB transfer
        needs) with no time stamp in the header (the same rows, the same bytes)."""
        import gzip

        import pandas as pd

        from gpude.io import write_atomic

        for stage in sorted(self.touched):
            frame = pd.DataFrame(self.new[stage])
            old = self.frames.get(stage)
            if old is not None and len(old):
                frame = pd.concat([old, frame], ignore_index=True)
            text = frame.to_csv(index=False, float_format="%.17g")
            write_atomic(self.out / f"{stage}.csv.gz", gzip.compress(text.encode(), mtime=0))
        self.touched.clear()


def run_specs(specs: list[RunSpec], out: Path, frames: dict, jobs: int, max_seconds: float | None,
              started: float, env: dict, log=sys.stderr) -> dict:
    """Run the specs on ``jobs`` processes, longest first; returns counts."""
    import multiprocessing

    writer = StageWriter(out, frames)
    todo = deque(sorted(specs, key=lambda s: (-s.expected_s, s.seed)))  # stable: plan order within
    counts = {"done": 0, "failed": 0, "not_launched": 0}
    inflight = {}
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn"),
                               initializer=init_worker, initargs=(env,))

    def launch():
        """Fill the idle processes, longest runs first, with runs that can end before --max-seconds."""
        while todo and len(inflight) < jobs:
            left = (max_seconds - (time.perf_counter() - started) - LAUNCH_MARGIN_S) if max_seconds else math.inf
            spec = next((s for s in todo if s.worst_s <= left), None)
            if spec is None:
                counts["not_launched"] = len(todo)
                print(f"kromer_pilot: --max-seconds {max_seconds:g} near: {len(todo)} run(s) left for the next "
                      "call", file=log)
                todo.clear()
                return
            todo.remove(spec)
            inflight[pool.submit(execute, spec, len(inflight) + 1)] = spec

    try:
        launch()
        while inflight:
            finished, _ = wait(list(inflight), return_when=FIRST_COMPLETED)
            results = []
            for future in finished:
                spec = inflight.pop(future)
                try:
                    results.append((spec, future.result()))
                except Exception as exc:  # noqa: BLE001 - reported, not written: the next call retries it
                    counts["failed"] += 1
                    print(f"kromer_pilot: FAILED {spec}: {type(exc).__name__}: {exc}", file=log)
            launch()  # the idle cores first, then the writes
            for spec, rows in results:
                writer.add(spec.stage, rows, jobs)
                counts["done"] += 1
                final = rows[-1]
                print(f"[{counts['done']}/{len(specs)}] {spec.stage} {spec.instance} D={spec.dim} NP={spec.popsize} "
                      f"F={spec.F:g} CR={spec.CR:g} seed={spec.seed}: best {final['run_best_error']:.6g} "
                      f"({final['run_generations']} generations; {time.perf_counter() - started:.0f} s)", file=log,
                      flush=True)
            writer.flush()
    except BaseException:
        # interrupted: stop the workers we started; every finished run is already in its CSV
        for process in list(getattr(pool, "_processes", {}).values()):
            process.terminate()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return counts


def _floats(text: str) -> tuple[float, ...]:
    return tuple(float(x) for x in text.split(",") if x.strip())


def _ints(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split(",") if x.strip())


def main(argv=None) -> int:
    started = time.perf_counter()
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--stage", required=True,
                   help=f"stage(s), comma-separated, run in this order, or 'all': {', '.join(STAGES)}")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="folder of the stage files (default %(default)s)")
    p.add_argument("--jobs", type=int, default=os.cpu_count(), help="runs at once, one process each (default: "
                                                                    "every core, %(default)s here)")
    p.add_argument("--max-seconds", type=float, help="launch no run that could not end within this many seconds "
                                                     "of the start (the next call goes on)")
    p.add_argument("--instance-data", type=Path, help="folder with etc/ and lolib/ instance files, or a .tgz of "
                                                      "them (GPUDE_INSTANCE_DATA; default: data/ or that variable)")
    p.add_argument("--dry-run", action="store_true", help="print the plan and its core-seconds; run nothing")
    p.add_argument("--copy-instances", type=Path, metavar="DEST",
                   help="copy the instance files the stages use into DEST/<set>/ (or a DEST.tgz of them) and exit")
    p.add_argument("--F", type=_floats, help="F values instead of the stage's (comma-separated)")
    p.add_argument("--CR", type=_floats, help="CR values instead of the stage's (or of its pick from earlier stages)")
    p.add_argument("--seeds", type=_ints, help="seeds instead of the stage's")
    p.add_argument("--time-scale", type=float, default=1.0,
                   help="multiply every budget and readout time by this (a smoke test: e.g. 0.01 into a scratch --out)")
    args = p.parse_args(argv)
    stages = list(STAGES) if args.stage == "all" else [s.strip() for s in args.stage.split(",") if s.strip()]
    unknown = [s for s in stages if s not in STAGES]
    if unknown:
        p.error(f"unknown stage(s) {', '.join(unknown)}; known: {', '.join(STAGES)}, all")
    with instance_folder(args.instance_data) as instance_data, _environ(GPUDE_INSTANCE_DATA=instance_data):
        if args.copy_instances:
            written = copy_instances(stages, args.copy_instances)
            print(f"copied {len(written)} instance file(s) into {args.copy_instances} (use it as --instance-data)")
            return 0
        if args.dry_run:
            return dry_run(stages, args)
        env = {"NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
        if instance_data:
            env["GPUDE_INSTANCE_DATA"] = instance_data
        totals = {"done": 0, "failed": 0, "not_launched": 0}
        with locked(args.out):
            # one stage after the other: a later stage's plan may use an earlier one's results
            for name in stages:
                frames = read_stage_files(args.out)
                ctx = _context(frames, args)
                try:
                    specs = STAGES[name][0](ctx)
                except PlanError as exc:
                    print(f"kromer_pilot: {exc}", file=sys.stderr)
                    return 2
                for note in ctx.notes:
                    print(f"kromer_pilot: {note}", file=sys.stderr)
                todo = pending(specs, done_keys(frames))
                if not todo:
                    print(f"kromer_pilot: {name}: nothing to run, every run is in {args.out}", file=sys.stderr)
                    continue
                check_instances(todo)
                warm = warm_up(todo)
                jobs = max(1, min(args.jobs, len(todo)))
                print(f"kromer_pilot: {name}: {len(todo)} run(s) of {len(specs)} on {jobs} process(es); warm-up "
                      f"{warm:.1f} s", file=sys.stderr, flush=True)
                counts = run_specs(todo, args.out, frames, jobs, args.max_seconds, started, env)
                totals = {k: totals[k] + counts[k] for k in totals}
                if counts["not_launched"]:
                    left = stages[stages.index(name) + 1:]
                    if left:
                        print(f"kromer_pilot: out of time: {', '.join(left)} not started", file=sys.stderr)
                    break
    print(f"kromer_pilot: {totals['done']} run(s) done, {totals['failed']} failed, {totals['not_launched']} left for "
          f"the next call, in {time.perf_counter() - started:.0f} s; rows in {args.out}")
    return 1 if totals["failed"] else 0


def _context(frames: dict, args, placeholders: bool = False) -> Context:
    """The plans' context: the pilot's measured readouts so far and the command line's overrides."""
    import pandas as pd

    from kromer_pilot_summary import add_measure

    nonempty = [f for f in frames.values() if len(f)]
    rows = add_measure(pd.concat(nonempty, ignore_index=True)) if nonempty else pd.DataFrame()
    if len(rows):
        rows = rows[rows["reached"].astype(bool) & rows["best_error"].notna()]
    return Context(rows, args.F, args.CR, args.seeds, placeholders=placeholders, time_scale=args.time_scale)


def pending(specs, done: set, seen: set | None = None) -> list[RunSpec]:
    """The specs not run yet (and each run once, if two plans name it)."""
    seen = set() if seen is None else seen
    out = []
    for spec in specs:
        if spec.key() not in done and spec.key() not in seen:
            seen.add(spec.key())
            out.append(spec)
    return out


def dry_run(stages, args) -> int:
    """Print each stage's runs and estimated core-seconds and wall time (later stages planned on the data
    there is, with placeholders where an earlier stage's results are missing)."""
    frames = read_stage_files(args.out) if args.out.is_dir() else {}
    ctx = _context(frames, args, placeholders=True)
    done, seen = done_keys(frames), set()
    print(f"plan ({args.jobs} jobs here; estimates use {PER_RUN_OVERHEAD_S:g} s per run, {WORKER_STARTUP_S:g} s of "
          f"start-up per worker and {PARENT_WARMUP_S:g} s of warm-up):")
    for name in stages:
        try:
            specs = STAGES[name][0](ctx)
        except PlanError as exc:
            print(f"  {name:<10s} cannot be planned: {exc}")
            continue
        runs = pending(specs, done, seen)
        core_s, wall_here = estimate(runs, args.jobs)
        _, wall16 = estimate(runs, 16)
        print(f"  {name:<10s} {len(specs):4d} runs, {len(specs) - len(runs):4d} done or in an earlier stage, "
              f"{len(runs):4d} to run: {core_s:7.0f} core-s; wall {wall16 / 60:4.1f} min on 16 cores, "
              f"{wall_here / 60:5.1f} min on {args.jobs}")
    for note in ctx.notes:
        print(f"  note: {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
