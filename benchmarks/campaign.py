"""Resumable reference campaigns: complete (or re-make) a committed reference run over several
time-limited commands on a GPU host without Snakemake, then merge what came back.

A reference (``results/reference/<machine>/<experiment>/trials.csv`` and ``traces.npz``) may need far
more device time than one command, or one session, has: Lastra et al.'s protocol is 1,250 runs of
10-100 s each (the paper has 10 runs per cell, 20 for Schwefel 1.2 and the CEC 2010 functions:
``--trials L06=20,C*=20``), Krömer et al.'s Table 4 1,080 runs of 30 s (three columns, 36 cells, 10 runs
each). This tool works in (cell, trial) units, so a campaign can stop anywhere and go on later, on
another instance of the same machine kind:

* ``plan``: the trials the reference lacks for the experiment's grid, and the *stale* ones it holds: a
  row whose algorithm parameters, budget or target differ from the experiment's, or that was timed
  ``shared`` where the experiment says ``exclusive`` (its wall time measured time-slicing); each with
  the seconds it is expected to take (a FE-budgeted run: the median of the same cell's exclusive rows
  in the reference or the campaign's folder, else the same function's nearest D scaled linearly, else
  any function at that D, else ``--default-run-s``; a time-budgeted run: its budget), and the total;
* ``run`` (on the GPU host): runs them with the workflow rule's own ``python3 -m gpude run`` command
  line (the same arguments and seeds; :func:`fill_reference.gpude_command`), contiguous trials of a
  cell in one process (``--group``, or the experiment's ``trials_per_launch``), into ``--out``.
  ``--alone K --per-launch B`` (a batched implementation, e.g. ``masw/gpu``): each cell's trials
  0..K-1 one per launch, the run times the REPORT compares, and the others B per launch (a fair
  share of a launch's time each: their errors count, their times do not; the rows' ``params`` say
  ``trials_per_launch``); the one-per-launch processes of every cell go before any batch, so a call
  that ends early leaves every cell it reached with its timed runs. A reference row of a trial below
  K made several per launch is stale.
  Runs the experiment times ``shared`` go first, ``--jobs`` at a time (their rows say ``shared:JOBS``: on
  a host of 32 vCPUs one ETC run alone made 2.0x the FEs of one of 29 side by side, one of 8 within
  1.2 %, results/benchmarks/kromer_contention_nvidia-h100.csv); then the ``exclusive`` GPU
  ones, one per GPU of the host at a time (``--gpus``; each ``gpude run`` leases its own GPU, and the
  rows say ``exclusive-gpu:N`` on a host of N > 1, as the workflow's do); then the ``exclusive`` CPU
  ones, one at a time with nothing beside them. A process starts only if its projection (plus
  ``--setup-s``) ends before ``--max-seconds``, so the command ends cleanly before the host's limit;
  a trial whose file in ``--out`` counts is not run again (one made under other parameters is). ``--archive`` packs ``--out`` into one
  .tar.gz (a GPU host's command returns a few files);
* ``merge`` (here, after unpacking the archive): adds the new rows and traces to the reference (a new
  folder if it has none yet), replacing the stale rows they re-make and nothing else; the old rows and
  traces are otherwise kept as they are; and writes the reference's ``CAMPAIGNS.md``: per cell the
  runs, the GPU, the machine instances (boot ids), commits and dates, so the README can say which cells
  ran where.

* ``pack``: the experiment's LOP and ETC instance files in one .tgz (``--archive``), for ``run
  --instance-data`` on the offline GPU host.

Every row names its instance (``boot_id``) and GPU; ``run`` refuses a host whose GPU is not the one
the reference's rows name (a reference holds one machine kind).

    python benchmarks/campaign.py plan --experiment config/experiments/lastra.yaml \\
        --reference results/reference/nvidia-h100/lastra --trials 'L06=20,C*=20'
    # on the GPU host (source .whl-slim/activate.sh .whl-slim; export GPUDE_GIT_COMMIT=<commit>):
    python3 benchmarks/campaign.py run --experiment config/experiments/lastra.yaml \\
        --reference results/reference/nvidia-h100/lastra --trials 'L06=20,C*=20' \\
        --out .campaign/lastra --max-seconds 540 --archive $OUT/campaign.tar.gz
    # here: tar xzf <files_at>/campaign.tar.gz; then
    python benchmarks/campaign.py merge --experiment config/experiments/lastra.yaml \\
        --reference results/reference/nvidia-h100/lastra --out .campaign/lastra --trace-decades 0.1
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import json
import math
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from fill_reference import (CELL, DEFAULTS, Cell, _per_implementation, _per_implementation_text,  # noqa: E402
                            gpude_command, grid as reference_grid)
from gpude.errors import GpudeError  # noqa: E402
from gpude.io import read_csv, write_atomic, write_csv_atomic  # noqa: E402
from gpude.report.sources import _real_gpu as _names_a_gpu, machine_label  # noqa: E402

#: a campaign's file for trials ``first .. first + count - 1`` of a cell, under ``--out``
RUN = "{algorithm}/{implementation}/{function}/d{dim}/np{popsize}/{dtype}/t{first}-{last}"
#: keys of an algorithm's entry in an experiment that are not its parameters
NOT_PARAMS = ("implementations", "popsizes")


@dataclasses.dataclass
class Group:
    """Contiguous trials of one cell, run by one process."""
    cell: Cell
    first: int
    count: int
    expected_s: float
    per_launch: int = 1

    def stem(self) -> str:
        return RUN.format(first=self.first, last=self.first + self.count - 1, **{k: getattr(self.cell, k) for k in CELL})


def load_experiment(path, settings=()) -> dict:
    """The experiment file with the schema's defaults, and ``--set ALGORITHM.KEY=VALUE`` applied (a
    campaign that re-makes a reference under new parameters before the experiment file changes:
    run it into a folder the REPORT does not read, e.g. results/campaigns/<machine>/<experiment>)."""
    experiment = {**DEFAULTS, **yaml.safe_load(Path(path).read_text())}
    for item in settings:
        target, _, value = item.partition("=")
        algorithm, _, key = target.partition(".")
        if not value or not key or algorithm not in experiment["algorithms"] or key in NOT_PARAMS:
            raise GpudeError(f"--set {item!r}: give ALGORITHM.KEY=VALUE with an algorithm of the experiment "
                             f"({', '.join(experiment['algorithms'])}) and one of its parameters, e.g. de.CR=0.01")
        experiment["algorithms"][algorithm][key] = yaml.safe_load(value)
    return experiment


def parse_trials(text: str | None) -> list[tuple[str, int]]:
    """``--trials 'L06=20,C*=20'``: at least this many trials for the functions matching each pattern."""
    out = []
    for item in filter(None, (text or "").split(",")):
        pattern, _, n = item.partition("=")
        if not n.strip().isdigit() or int(n) < 1:
            raise GpudeError(f"--trials: {item!r} is not PATTERN=N with N a positive integer (e.g. 'L06=20,C*=20')")
        out.append((pattern.strip(), int(n)))
    return out


def grid(experiment: dict, trials_by_function=(), implementations=None, dtypes=None, alone: int = 0,
         per_launch: int | None = None, functions=None) -> list[Cell]:
    """The experiment's cells for a campaign (fill_reference.grid, the one grid of both tools)."""
    return reference_grid(experiment, implementations, dtypes, trials_by_function=trials_by_function, alone=alone,
                          per_launch=per_launch, functions=functions)


# --- what a row must say to count -------------------------------------------------------------------

def _same(a, b) -> bool:
    try:
        return math.isclose(float(a), float(b), rel_tol=1e-12, abs_tol=0.0)
    except (TypeError, ValueError):
        return str(a) == str(b)


def stale_reason(row: dict, experiment: dict, cell: Cell, machine: str | None = None) -> str | None:
    """Why a reference row does not count for the experiment as it stands (None: it counts);
    ``machine``: the reference's machine (:func:`reference_machine`): a GPU row made on another (the
    same GPU in a host of other CPUs or cores) is stale, as the REPORT times one machine."""
    if str(row.get("status", "")).startswith("error"):
        return "failed"
    if machine and _real_gpu(row.get("gpu")) and machine_label(row) != machine:
        return f"made on {machine_label(row)} (the reference's machine: {machine})"
    params = json.loads(row["params"]) if isinstance(row.get("params"), str) else {}
    spec = experiment["algorithms"][cell.algorithm]
    for key, value in spec.items():
        if key in NOT_PARAMS:
            continue
        if key not in params or not _same(params[key], value):
            return f"{key} {params.get(key)} (experiment: {value})"
    budget = experiment["max_fes"]
    if isinstance(budget, dict):
        budget = {str(k): v for k, v in budget.items()}[str(cell.dim)]
    if not _same(row["max_fes"], budget):
        return f"max_fes {row['max_fes']} (experiment: {budget})"
    time_budget = experiment.get("max_time_s")
    if time_budget is not None and not _same(row.get("max_time_s"), time_budget):
        return f"max_time_s {row.get('max_time_s')} (experiment: {time_budget})"
    if cell.timing == "exclusive" and not str(row.get("concurrency", "")).startswith("exclusive"):
        return f"timed {row.get('concurrency')} (experiment: exclusive)"
    made = launch_size(row)
    if cell.alone and "trial" in row and int(row["trial"]) < cell.alone and made > 1:
        # (without --alone a trial may have been made in any batch: its error counts)
        return f"made {made} per launch (trials below {cell.alone}: one per launch, timed)"
    return None


def launch_size(row: dict) -> int:
    """How many trials shared the row's launch (:func:`gpude.results.launch_size`)."""
    from gpude.results import launch_size as size

    return size(row.get("params") if isinstance(row.get("params"), str) else {})


def todo(cells: list[Cell], experiment: dict, reference: pd.DataFrame, done: set = frozenset(),
         machine: str | None = None):
    """Per cell the trials to run: ``(cell, [trial, ...], {trial: stale reason})``; ``done`` holds the
    run_ids a campaign's folder has already made; ``machine`` as in :func:`stale_reason`."""
    rows = {}
    for r in reference.to_dict("records"):
        rows[(tuple(r[k] if k not in ("dim", "popsize") else int(r[k]) for k in CELL), int(r["trial"]))] = r
    out = []
    for c in cells:
        need, stale = [], {}
        for t in range(c.trials):
            r = rows.get((c.key(), t))
            reason = None if r is None else stale_reason(r, experiment, c, machine)
            if r is not None and reason is None:
                continue
            if run_id(c, t) in done:
                continue
            need.append(t)
            if reason is not None:
                stale[t] = reason
        if need:
            out.append((c, need, stale))
    return out


def run_id(cell: Cell, trial: int) -> str:
    """The row's run_id (:func:`gpude.results.run_id`)."""
    from gpude.results import run_id as row_id

    return row_id(*cell.key(), trial)


# --- how long a run takes -----------------------------------------------------------------------------

def projections(experiment: dict, cells: list[Cell], tables: list[pd.DataFrame], default_s: float) -> dict:
    """Expected seconds of one trial per cell (see the module docstring)."""
    if experiment.get("max_time_s"):
        return {c.key(): float(experiment["max_time_s"]) / (c.per_launch if c.per_launch > 1 else 1) + 0.5
                for c in cells}
    rows = pd.concat([t for t in tables if len(t)], ignore_index=True) if any(len(t) for t in tables) else None
    med = {}
    if rows is not None:
        ok = rows[rows["concurrency"].astype(str).str.startswith("exclusive")
                  & ~rows["status"].astype(str).str.startswith("error")]
        for key, g in ok.groupby(CELL):
            if "params" in g:  # a batched row's time is a share of its launch's: the runs alone if any
                one = g[[launch_size(r) == 1 for r in g.to_dict("records")]]
                g = one if len(one) else g
            med[tuple(int(v) if k in ("dim", "popsize") else v for k, v in zip(CELL, key))] = float(g["wall_time_s"].median())
    out = {}
    for c in cells:
        if c.key() in med:
            out[c.key()] = med[c.key()]
            continue
        same_function = sorted((k[3], v) for k, v in med.items() if k[:3] == c.key()[:3] and k[4:] == c.key()[4:])
        same_dim = [v for k, v in med.items() if k[3] == c.dim and k[:2] == c.key()[:2]]
        if same_function:
            d, v = min(same_function, key=lambda kv: abs(math.log(kv[0] / c.dim)))
            out[c.key()] = v * c.dim / d
        elif same_dim:
            out[c.key()] = float(np.median(same_dim))
        else:
            out[c.key()] = default_s
    return out


def batch_share(tables: list[pd.DataFrame]) -> dict:
    """Per D, the median over cells of (a batched trial's time) / (a trial's alone): what a trial
    costs in a batch, measured where a cell has both (``1.0`` where none has: a batch then is
    expected to take its trials' time alone, an upper bound). Key ``None``: every D's median."""
    rows = pd.concat([t for t in tables if len(t)], ignore_index=True) if any(len(t) for t in tables) else None
    if rows is None or "params" not in rows:
        return {None: 1.0}
    rows = rows[~rows["status"].astype(str).str.startswith("error")
                & rows["concurrency"].astype(str).str.startswith("exclusive")]
    rows = rows.assign(_size=[launch_size(r) for r in rows.to_dict("records")])
    ratios = []
    for key, g in rows.groupby(CELL):
        alone, batched = g[g["_size"] == 1]["wall_time_s"], g[g["_size"] > 1]["wall_time_s"]
        if len(alone) and len(batched):
            ratios.append((int(key[3]), float(batched.median() / alone.median())))
    out = {None: float(np.median([r for _, r in ratios])) if ratios else 1.0}
    for dim in {d for d, _ in ratios}:
        out[dim] = float(np.median([r for d, r in ratios if d == dim]))
    return out


def groups(work, expected: dict, group: int, share: dict | None = None) -> list[Group]:
    """Contiguous missing trials of a cell in groups: a launch's worth for batched trials, else at
    most ``group`` trials per process; with ``--alone``, every cell's one-per-launch groups first.
    ``share``: :func:`batch_share` (a batched trial's expected time is its time alone times it)."""
    share = share or {None: 1.0}
    alone, batched = [], []
    for cell, trials, _ in work:
        run = [trials[0]]
        for t in trials[1:] + [None]:
            size = cell.launch_size(run[0])
            if (t is not None and t == run[-1] + 1 and cell.launch_size(t) == size
                    and len(run) < (size if size > 1 else group)):
                run.append(t)
                continue
            per = expected[cell.key()]
            if size > 1 and cell.alone:  # ``per``: a trial alone
                seconds = len(run) * per * share.get(cell.dim, share[None])
            elif size > 1:  # ``per``: the cell's batched trials' share (a whole launch's worth, at most)
                seconds = math.ceil(len(run) / size) * size * per
            else:
                seconds = len(run) * per
            (batched if size > 1 and cell.alone else alone).append(Group(cell, run[0], len(run), seconds, size))
            if t is not None:
                run = [t]
    return alone + batched


# --- run (on the host) ----------------------------------------------------------------------------------

def host_gpu() -> str:
    from gpude.provenance import record

    return str(record().get("gpu", "none"))


def _real_gpu(name) -> bool:
    """A GPU's name (a CPU row's, or a row read back without one, names none)."""
    return _names_a_gpu(name) and str(name) != "nan"


def reference_machine(reference: pd.DataFrame) -> str | None:
    """The machine of the reference's newest GPU row: the one a campaign completes it on (the rows of
    other machines are stale, :func:`stale_reason`); None for a reference without GPU rows."""
    if not len(reference) or "gpu" not in reference or "timestamp_utc" not in reference:
        return None
    gpu_rows = reference[[_real_gpu(g) for g in reference["gpu"]]]
    if not len(gpu_rows):
        return None
    return machine_label(gpu_rows.sort_values("timestamp_utc").iloc[-1].to_dict())


def host_machine() -> str:
    from gpude.provenance import record

    return machine_label(record())


def check_machine(reference: pd.DataFrame, cells: list[Cell]) -> None:
    """A reference holds one machine kind: the host's GPU must be the one its GPU rows name."""
    if not len(reference) or not any(_runs_on_gpu(c) for c in cells):
        return
    gpus = {g for g in reference["gpu"].dropna().astype(str) if g not in ("none", "")}
    here = host_gpu()
    if gpus and here not in gpus:
        raise GpudeError(f"the reference's rows name {', '.join(sorted(gpus))}, this host has {here}: a reference "
                         f"holds one machine kind; give --reference results/reference/<this machine>/<experiment>")


def run(experiment: dict, plan: list[Group], out: Path, max_seconds: float, jobs: int, setup_s: float,
        dry_run: bool = False, root: Path = ROOT, gpus: int = 1) -> dict:
    """Run the groups while they fit: the shared-timed ones ``jobs`` at a time; then the exclusive GPU
    ones ``gpus`` at a time (each ``gpude run`` leases a GPU of its own; rows say ``exclusive-gpu:N``
    where N > 1); then the exclusive CPU ones, one at a time. Nothing of one phase runs beside the next."""
    t0 = time.monotonic()
    left = lambda: max_seconds - (time.monotonic() - t0)  # noqa: E731
    stats = {"ran": 0, "failed": 0, "skipped_time": 0}
    pending = list(plan)  # (the plan leaves out the trials whose files in ``out`` count)
    on_gpu = {g.cell.key(): _runs_on_gpu(g.cell) for g in pending}
    shared = [g for g in pending if g.cell.timing != "exclusive"]
    exclusive_gpu = [g for g in pending if g.cell.timing == "exclusive" and on_gpu[g.cell.key()]]
    exclusive_cpu = [g for g in pending if g.cell.timing == "exclusive" and not on_gpu[g.cell.key()]]

    def start(g, concurrency):
        stem = out / g.stem()
        stem.parent.mkdir(parents=True, exist_ok=True)
        for suffix in (".csv", ".npz", ".log"):  # an earlier campaign's file that no longer counts
            Path(f"{stem}{suffix}").unlink(missing_ok=True)
        cmd = gpude_command(experiment, g.cell, g.first, g.count, str(stem), f"{stem}.log", concurrency,
                            g.per_launch)
        launch = f", {g.per_launch} per launch" if g.per_launch > 1 else ""
        print(f"campaign: [{time.monotonic() - t0:6.0f} s] {g.cell} trials {g.first}..{g.first + g.count - 1} "
              f"(expected {g.expected_s:.0f} s{launch})", flush=True)
        if dry_run:
            print(f"campaign:   {cmd}")
            return None
        return subprocess.Popen(cmd, shell=True, cwd=root)

    def finished(g, proc):
        code = proc.wait()
        if code:
            stats["failed"] += 1
            print(f"campaign: {g.cell} trials {g.first}..: exit {code}; its log: {out / g.stem()}.log", file=sys.stderr)
        else:
            stats["ran"] += 1

    def pool(groups, width, concurrency=None):
        queue, running = list(groups), []
        while queue or running:
            while queue and len(running) < width:
                g = queue.pop(0)
                if g.expected_s + setup_s > left():
                    stats["skipped_time"] += 1
                    continue
                proc = start(g, concurrency)
                if proc is None:
                    stats["ran"] += 1
                else:
                    running.append((g, proc))
            done = [item for item in running if item[1].poll() is not None]
            for item in done:
                running.remove(item)
                finished(*item)
            if running and not done:
                time.sleep(0.2)

    pool(shared, jobs, f"shared:{jobs}")  # the rows say how many ran side by side (at most)
    pool(exclusive_gpu, gpus, f"exclusive-gpu:{gpus}" if gpus > 1 else None)
    pool(exclusive_cpu, 1)
    return stats


def _runs_on_gpu(cell: Cell) -> bool:
    from gpude.registry import get

    return get(cell.algorithm, cell.implementation).load(check_device=False).device == "gpu"


def campaign_rows(out: Path, experiment: dict, cells: list[Cell]) -> list[tuple[pd.DataFrame, Path]]:
    """The campaign folder's finished files whose rows count for the experiment as it stands:
    (rows, their .npz). A file made under other parameters (an earlier campaign) is left out."""
    by_key = {c.key(): c for c in cells}
    found = []
    for csv in sorted(out.rglob("t*-*.csv")):
        npz = csv.with_suffix(".npz")
        if not npz.is_file():
            continue
        rows = read_csv(csv)
        cells_of = [by_key.get(tuple(r[k] if k not in ("dim", "popsize") else int(r[k]) for k in CELL))
                    for r in rows.to_dict("records")]
        if all(c is not None and stale_reason(r, experiment, c) is None
               for r, c in zip(rows.to_dict("records"), cells_of)):
            found.append((rows, npz))
    return found


def instance_files(cells: list[Cell]) -> list[tuple[str, str]]:
    """(instance set, file) of every LOP or ETC instance among the cells (verified on access)."""
    import csv

    from gpude.instances import find_instance, table_dir

    tables = {"etc": ("etc", "instances.csv"), "lop": ("lolib", "optima.csv")}
    files = set()
    for function in sorted({c.function for c in cells}):
        found = find_instance(function)
        if found is None:
            continue
        kind, table = tables[found[0]]
        with open(table_dir(kind) / table, newline="") as fh:
            files.add((kind, next(r["file"] for r in csv.DictReader(fh) if r["paper_name"] == found[1])))
    return sorted(files)


def pack_instances(cells: list[Cell], path: Path) -> list[str]:
    """The cells' instance files in one .tgz of ``<set>/<file>`` (``run --instance-data`` takes it):
    the GPU host is offline, and its transfers are capped."""
    from gpude.instances import instance_file

    files = instance_files(cells)
    if not files:
        raise GpudeError("the experiment has no LOP or ETC instance: nothing to pack")
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for kind, name in files:
            tar.add(instance_file(kind, name), arcname=f"{kind}/{name}")
    write_atomic(path, buf.getvalue())
    return [f"{kind}/{name}" for kind, name in files]


def unpack_instances(path: Path, into: Path) -> None:
    """``--instance-data FILE.tgz``: unpacked for the runs (GPUDE_INSTANCE_DATA), or a folder as it is."""
    with tarfile.open(path) as tar:
        tar.extractall(into, filter="data")


def archive(path: Path, out: Path, root: Path) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        if out.is_dir():
            tar.add(out, arcname=str(out.resolve().relative_to(root.resolve())))
    write_atomic(path, buf.getvalue())
    print(f"campaign: packed {out} into {path}")


# --- merge (here) ---------------------------------------------------------------------------------------

def _not_merged_yet(found, old: pd.DataFrame):
    """The campaign's rows less those the reference holds already as the same runs (run_id, machine
    instance and time stamp): a warm GPU host keeps its campaign folder, so a later call's archive
    brings back the rows an earlier merge took."""
    same = ["run_id", "boot_id", "timestamp_utc"]
    if not len(old) or any(k not in old for k in same):
        return found
    merged = set(map(tuple, old[same].astype(str).to_numpy()))
    out = []
    for rows, npz in found:
        fresh = rows[[tuple(r) not in merged for r in rows[same].astype(str).to_numpy()]]
        if len(fresh):
            out.append((fresh.reset_index(drop=True), npz))
    return out


def merge(reference_dir: Path, experiment: dict, cells: list[Cell], found, trace_decades=None) -> pd.DataFrame:
    """Add the campaign's rows to the reference, replacing the stale rows they re-make (see the module
    docstring). Nothing is written unless every check passes."""
    from gpude.results import load_traces, merge_traces

    trials_path, traces_path = reference_dir / "trials.csv", reference_dir / "traces.npz"
    old = read_csv(trials_path) if trials_path.is_file() else pd.DataFrame(columns=["run_id"])
    found = _not_merged_yet(found, old)
    if not found:
        raise GpudeError("nothing to merge: every finished campaign row is in the reference already")
    new = pd.concat([rows for rows, _ in found], ignore_index=True)
    if new["run_id"].duplicated().any():
        raise GpudeError(f"a trial twice in the campaign's folder: {new.loc[new['run_id'].duplicated(), 'run_id'].iloc[0]}")
    failed = new[new["status"].astype(str).str.startswith("error")] if len(new) else new
    if len(failed):
        raise GpudeError(f"{len(failed)} campaign trial(s) failed, e.g. {failed['run_id'].iloc[0]}: "
                         f"{failed['status'].iloc[0]}; nothing was merged (re-run them: delete their files)")
    by_key = {c.key(): c for c in cells}
    machines = {machine_label(r) for r in new.to_dict("records") if _real_gpu(r.get("gpu"))}
    machine = machines.pop() if len(machines) == 1 else None  # the machine the campaign ran on
    # the reference's rows the campaign re-made: only stale ones may be replaced
    replaced = []
    old_by_id = {r["run_id"]: r for r in old.to_dict("records")}
    for rid in new["run_id"]:
        r = old_by_id.get(rid)
        if r is None:
            continue
        cell = by_key.get(tuple(r[k] if k not in ("dim", "popsize") else int(r[k]) for k in CELL))
        if cell is None or stale_reason(r, experiment, cell, machine) is None:
            raise GpudeError(f"{rid} is in the reference and counts as it is: the campaign must not replace it "
                             "(nothing was merged)")
        replaced.append(rid)
    keep = old[~old["run_id"].isin(replaced)]
    new_ids = set(new["run_id"])
    reference_dir.mkdir(parents=True, exist_ok=True)
    staging = reference_dir / ".campaign"
    staging.mkdir(exist_ok=True)
    try:
        thinned = staging / "new_traces.npz"
        merge_traces([(rows, str(npz)) for rows, npz in found], thinned, decades=trace_decades)
        parts = ([(keep, str(traces_path))] if len(keep) else []) + [(new, str(thinned))]
        merge_traces(parts, staging / "traces.npz")
        merged = pd.concat([keep, new], ignore_index=True) if len(keep) else new
        if len(old):
            merged = merged[list(old.columns) + [c for c in merged.columns if c not in old.columns]]
        write_csv_atomic(merged, staging / "trials.csv")
        # checks: the kept rows and traces unchanged, the new ones there once each
        again = read_csv(staging / "trials.csv")
        if len(keep):
            pd.testing.assert_frame_equal(again.iloc[:len(keep)][list(old.columns)].reset_index(drop=True),
                                          keep.reset_index(drop=True), check_dtype=False)
        traces = load_traces(staging / "traces.npz")
        if len(keep):
            before = load_traces(traces_path)
            for rid in keep["run_id"]:
                if rid in before and any(not np.array_equal(before[rid][k], traces[rid][k], equal_nan=True)
                                         for k in before[rid]):
                    raise GpudeError(f"the merged traces change {rid}'s")
        lacking = [r for r in new_ids if r not in traces]
        if lacking:
            raise GpudeError(f"the merged traces lack {lacking[:3]}")
        os.replace(staging / "traces.npz", traces_path)
        os.replace(staging / "trials.csv", trials_path)  # last: the table names the traces
    finally:
        for p in staging.glob("*"):
            p.unlink()
        staging.rmdir()
    write_atomic(reference_dir / "CAMPAIGNS.md", campaigns_markdown(merged, experiment).encode())
    print(f"campaign: {len(new)} trial(s) merged into {trials_path} ({len(replaced)} stale row(s) replaced; "
          f"{len(old)} rows before, {len(merged)} now)")
    return merged


def campaigns_markdown(table: pd.DataFrame, experiment: dict) -> str:
    """Which cells ran where: per cell the runs, GPU, machine instances, commits and dates."""
    lines = [f"# {experiment['name']}: which cells ran where", "",
             "Written by `benchmarks/campaign.py merge` from `trials.csv` (every row names its GPU, instance "
             "(`boot_id`), commit and time). Instances: the boot ids of the machines the cell's runs were made on.",
             "Per launch: how many runs shared a launch, with the count of such runs (a run of several per launch "
             "records a fair share of the launch's time; the REPORT times the runs made one per launch).",
             "", "| algorithm/implementation | function | D | NP | dtype | runs | per launch | timing | GPU | CPU | "
                 "instances | commits | UTC |",
             "|---|---|---:|---:|---|---:|---|---|---|---|---|---|---|"]
    for key, g in table.groupby(CELL, sort=True):
        a, i, f, d, p, t = key
        stamp = g["timestamp_utc"].astype(str)
        sizes = pd.Series([launch_size(r) for r in g.to_dict("records")]).value_counts().sort_index()
        cpus = sorted({f"{r.get('cpu')} x{r.get('cpu_cores')}" for r in g.to_dict("records")})
        lines.append(f"| {a}/{i} | {f} | {int(d):g} | {int(p)} | {t} | {len(g)} | "
                     f"{', '.join(f'{k}: {v}' for k, v in sizes.items())} | "
                     f"{', '.join(sorted(set(g['concurrency'].astype(str))))} | "
                     f"{', '.join(sorted(set(g['gpu'].astype(str))))} | {', '.join(cpus)} | "
                     f"{', '.join(sorted(set(g['boot_id'].astype(str))))} | "
                     f"{', '.join(sorted(set(g['git_commit'].astype(str))))} | {stamp.min()[:16]} .. {stamp.max()[:16]} |")
    return "\n".join(lines) + "\n"


# --- the command line -------------------------------------------------------------------------------------

def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("action", choices=("plan", "run", "merge", "pack"))
    p.add_argument("--experiment", type=Path, required=True, help="config/experiments/<name>.yaml")
    p.add_argument("--reference", type=Path, required=True, help="results/reference/<machine>/<name>")
    p.add_argument("--set", action="append", default=[], metavar="ALGORITHM.KEY=VALUE",
                   help="a parameter other than the experiment file's (repeatable), e.g. de.CR=0.01")
    p.add_argument("--trials", help="more trials for some functions: 'PATTERN=N,...' (fnmatch patterns, e.g. "
                                     "'L06=20,C*=20'); never fewer than the experiment's")
    p.add_argument("--implementations", help="only these implementations' cells (comma-separated)")
    p.add_argument("--functions", help="only these functions' cells (comma-separated fnmatch patterns, e.g. 'L0*')")
    p.add_argument("--dtypes", help="the cells of these floating types (comma-separated; default the experiment's)")
    p.add_argument("--out", type=Path, default=Path(".campaign"), help="the campaign's folder (default .campaign/)")
    p.add_argument("--max-seconds", type=float, default=540.0, help="run: start nothing that would end later")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="run: shared-timed processes at once")
    p.add_argument("--gpus", type=int, help="run: exclusive GPU processes at once, one per GPU (default: the "
                                            "host's GPUs, as gpude.gpu_lease lists them)")
    p.add_argument("--new-machine", action="store_true",
                   help="run: make this host the reference's machine (every GPU row of another is re-made)")
    p.add_argument("--alone", type=int, default=0,
                   help="with --per-launch: each cell's first ALONE trials one per launch (timed), the rest batched")
    p.add_argument("--per-launch", type=int,
                   help="trials per launch of a batched implementation (default: the experiment's trials_per_launch)")
    p.add_argument("--group", type=int, default=5, help="run: at most this many trials per process "
                                                        "(batched implementations: a launch's worth)")
    p.add_argument("--setup-s", type=float, default=12.0, help="a process's start-up before its first trial")
    p.add_argument("--default-run-s", type=float, default=120.0,
                   help="a FE-budgeted trial's expected seconds when no row tells")
    p.add_argument("--trace-decades", type=float, help="merge: thin the new traces (as the reference's, e.g. 0.1)")
    p.add_argument("--archive", type=Path, help="run: pack --out into this .tar.gz; pack: the instance files' .tgz")
    p.add_argument("--instance-data", type=Path, help="run: the instance files (a folder, or a .tgz of `pack`) "
                                                      "for LOP and ETC cells, as GPUDE_INSTANCE_DATA")
    p.add_argument("--dry-run", action="store_true", help="run: print the commands only")
    p.add_argument("--root", type=Path, default=ROOT)
    args = p.parse_args(argv)
    root = args.root.resolve()
    resolve = lambda path: path if path.is_absolute() else root / path  # noqa: E731
    reference_dir, out = resolve(args.reference), resolve(args.out)
    try:
        experiment = load_experiment(resolve(args.experiment), args.set)
        implementations = args.implementations.split(",") if args.implementations else None
        if args.alone < 0 or (args.per_launch is not None and args.per_launch < 1):
            raise GpudeError("--alone takes a count >= 0 and --per-launch one >= 1 (e.g. --alone 3 --per-launch 10)")
        if args.alone and not (args.per_launch and args.per_launch > 1):
            raise GpudeError("--alone K needs --per-launch B > 1: the trials from K on go B per launch")
        cells = grid(experiment, parse_trials(args.trials), implementations,
                     args.dtypes.split(",") if args.dtypes else None, args.alone, args.per_launch,
                     args.functions.split(",") if args.functions else None)
        if not cells:
            raise GpudeError(f"no cell of the experiment matches --functions {args.functions} / --implementations "
                             f"{args.implementations}: its functions are {', '.join(experiment['functions'])}")
        trials_path = reference_dir / "trials.csv"
        reference = read_csv(trials_path) if trials_path.is_file() else pd.DataFrame(columns=["run_id", *CELL, "trial"])
        found = campaign_rows(out, experiment, cells) if out.is_dir() else []
        if args.action == "pack":
            if not args.archive:
                raise GpudeError("pack needs --archive FILE.tgz")
            packed = pack_instances(cells, resolve(args.archive))
            print(f"campaign: {len(packed)} instance file(s) packed into {args.archive} (give it to run as --instance-data)")
            return 0
        if args.action == "merge":
            if not found:
                raise GpudeError(f"nothing to merge: no finished campaign files under {out}")
            merge(reference_dir, experiment, cells, found, args.trace_decades)
            merged = read_csv(trials_path)
            work = todo(cells, experiment, merged, machine=reference_machine(merged))
            print(f"campaign: {sum(len(t) for _, t, _ in work)} trial(s) still to run")
            return 0
        done = set().union(*(set(rows["run_id"]) for rows, _ in found)) if found else set()
        machine = reference_machine(reference)
        if args.action == "run" and not args.dry_run and machine and any(_runs_on_gpu(c) for c in cells):
            here = host_machine()
            if here != machine and not args.new_machine:
                raise GpudeError(f"the reference's newest runs were made on {machine}, this host is {here}: its "
                                 "times would not compare; run on that machine, or give --new-machine to make "
                                 "this one the reference's (every row of another is then re-made here)")
            machine = here
        if machine:
            print(f"campaign: the reference's machine: {machine} (rows of another are re-made)")
        work = todo(cells, experiment, reference, done, machine)
        expected = projections(experiment, cells, [reference] + [rows for rows, _ in found], args.default_run_s)
        tables = [reference] + [rows for rows, _ in found]
        plan = groups(work, expected, args.group, batch_share(tables))
        total = sum(g.expected_s for g in plan) + args.setup_s * len(plan)
        need = sum(len(t) for _, t, _ in work)
        stale = sum(len(s) for _, _, s in work)
        print(f"campaign: {experiment['name']}: {len(cells)} cell(s), {sum(c.trials for c in cells)} trial(s) wanted; "
              f"{need} to run ({stale} of them stale in the reference, {len(done)} done in {out}) in {len(plan)} "
              f"process(es): about {total / 3600:.2f} h of machine time (exclusive and shared alike)")
        if args.action == "plan":
            for cell, trials, reasons in work:
                why = f"; stale: {next(iter(reasons.values()))}" if reasons else ""
                print(f"  {cell}: trials {_ranges(trials)} x {expected[cell.key()]:.1f} s{why}")
            return 0
        if not args.dry_run:
            check_machine(reference, cells)
        with tempfile.TemporaryDirectory(prefix="campaign_instances_") as folder:
            if args.instance_data:
                data = resolve(args.instance_data)
                if data.is_dir():
                    folder = str(data)
                else:
                    unpack_instances(data, Path(folder))
                os.environ["GPUDE_INSTANCE_DATA"] = folder  # the runs' processes inherit it
            gpus = args.gpus if args.gpus else _host_gpus()
            stats = run(experiment, plan, out, args.max_seconds, max(1, args.jobs), args.setup_s, args.dry_run, root,
                        max(1, gpus))
        print(f"campaign: {stats['ran']} process(es) ran, {stats['failed']} failed, "
              f"{stats['skipped_time']} left for the next call")
        if args.archive:
            archive(resolve(args.archive), out, root)
        return 1 if stats["failed"] else 0
    except GpudeError as exc:
        print(f"campaign: {exc}", file=sys.stderr)
        return 1


def _host_gpus() -> int:
    from gpude.gpu_lease import list_devices

    return max(1, len(list_devices()))


def _ranges(values: list[int]) -> str:
    parts, start = [], values[0]
    for a, b in zip(values, values[1:] + [None]):
        if b != a + 1:
            parts.append(f"{start}" if start == a else f"{start}-{a}")
            start = b
    return ",".join(parts)


if __name__ == "__main__":
    sys.exit(main())
