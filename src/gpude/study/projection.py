"""How long regenerating the committed references would take on N GPUs of one host, projected from
measured per-batch times.

Every GPU batch of an experiment's grid (:func:`gpude.study.experiment.grid`) gets the summed
``wall_time_s`` of its trials in the experiment's committed reference
(``results/reference/<machine>/<experiment>/trials.csv[.gz]``), estimated where the reference holds
only some of them or none (:func:`reference_batches`). The batches are then spread over N GPUs by
longest-processing-time-first list scheduling (:func:`lpt_makespan`), each batch charged a fixed
overhead (its set-up, and the gap before the next batch on its GPU) and the run a fixed start and end
(:func:`overheads_from_scaling`, from a committed scaling run of ``gpude.study.gpu_scaling``).

A projection, not a measurement: the CPU batches, the warm-ups (compilation into numba's cache,
outside the timed batches) and the merge of the tables are left out.
"""

from __future__ import annotations

import heapq
import math
from pathlib import Path

import pandas as pd

from ..core.errors import GpudeError
from ..implementations import registry
from . import experiment as experiment_model
from .gpu_scaling import lease_measures

#: the five papers' experiments (Janssen et al.'s two case studies and the side by side with their
#: CUDA programs, Qin et al., Kromer et al.'s three, Nashed et al., Lastra et al.)
PAPER_EXPERIMENTS = ("janssen_cs1", "janssen_cs2", "qin", "kromer_lop", "kromer_etc", "kromer_rastrigin",
                     "nashed", "lastra", "side_by_side")
EXPERIMENTS_DIR = Path("config/experiments")
REFERENCE_ROOT = Path("results/reference")
DEFAULT_GPUS = (1, 2, 4, 8)
#: how a batch's trial time was found, most to least direct
BASES = ("measured", "scaled", "same D", "same implementation", "none")
BATCH_COLUMNS = ["experiment", "machine", "gpu", "algorithm", "implementation", "setting", "function", "dim",
                 "popsize", "dtype", "chunk", "runs", "measured_runs", "trial_s", "estimated", "basis"]
CELL = ["algorithm", "implementation", "setting", "function", "dim", "popsize", "dtype"]


class ProjectionError(GpudeError, ValueError):
    """Inputs a projection cannot use: the message names the file and the fix."""


# --- the batches and their measured times ----------------------------------------------------------

def reference_tables(experiment: str, root=REFERENCE_ROOT) -> dict[str, Path]:
    """The committed trial tables of an experiment, machine folder -> trials.csv or trials.csv.gz."""
    found = {}
    for folder in sorted(Path(root).glob(f"*/{experiment}")):
        tables = [folder / name for name in ("trials.csv", "trials.csv.gz") if (folder / name).is_file()]
        if tables:
            found[folder.parent.name] = tables[0]
    return found


def missing_references(experiments=PAPER_EXPERIMENTS, root=REFERENCE_ROOT) -> list[str]:
    """The experiments with no committed reference under ``root``."""
    return [e for e in experiments if not reference_tables(e, root)]


def gpu_batches(experiment: dict) -> list[experiment_model.Batch]:
    """The experiment's batches that run on a GPU (an outside program's by its ``device:``, which
    :func:`gpude.study.experiment.load_experiment` registered)."""
    return [b for b in experiment_model.grid(experiment, has_gpu=True)
            if registry.get(b.algorithm, b.implementation).needs_gpu]


def _setting_of(run_id: str) -> str | None:
    """A run id's parameter setting (:func:`gpude.run.rows.run_id`: after the implementation), if any."""
    parts = str(run_id).split("/")
    return parts[2] if len(parts) == 8 else None


def _trials(path: Path, experiment: dict) -> pd.DataFrame:
    """A reference's rows that finished (a failed trial's time says nothing of a run's), the GPU
    implementations' only, each trial once (the last row of a repeated one), with the batch chunk
    each falls in."""
    from ..core.io import read_csv

    t = read_csv(path)
    gpu = {(b.algorithm, b.implementation) for b in gpu_batches(experiment)}
    t = t[[(a, i) in gpu for a, i in zip(t["algorithm"], t["implementation"])]]
    t = t[~t["status"].astype(str).str.startswith("error") & t["wall_time_s"].notna()]
    # "" for no setting: a key of None would not find itself among the groups
    setting = t["run_id"].map(lambda r: _setting_of(r) or "") if experiment_model.has_param_grid(experiment) \
        and "run_id" in t else ""
    t = t.assign(setting=setting, dim=t["dim"].astype(int), popsize=t["popsize"].astype(int),
                 trial=t["trial"].astype(int))
    t = t.drop_duplicates(CELL + ["trial"], keep="last")
    per_job = [experiment_model.per_implementation(experiment, "trials_per_job", i, a)
               for a, i in zip(t["algorithm"], t["implementation"])]
    trials = [experiment_model.per_implementation(experiment, "trials", i, a)
              for a, i in zip(t["algorithm"], t["implementation"])]
    t = t.assign(chunk=[k // n for k, n in zip(t["trial"], per_job)], planned=trials)
    return t[t["trial"] < t["planned"]]  # a trial beyond the experiment's count is no batch's


def _pick_machine(experiment: dict, tables: dict[str, Path]) -> tuple[str, pd.DataFrame]:
    """The reference with the most GPU rows (the first machine folder by name on a tie)."""
    loaded = {machine: _trials(path, experiment) for machine, path in tables.items()}
    machine = max(loaded, key=lambda m: (len(loaded[m]), -sorted(loaded).index(m)))
    return machine, loaded[machine]


def _estimate(trials: pd.DataFrame, batch, runs: int) -> tuple[float, str]:
    """A batch with no measured trial: ``runs`` x the mean trial time of its implementation at its D,
    else at any D of the experiment; NaN where the reference has neither."""
    same = trials[(trials["algorithm"] == batch.algorithm) & (trials["implementation"] == batch.implementation)]
    for rows, basis in ((same[same["dim"] == int(batch.dim)], "same D"), (same, "same implementation")):
        if len(rows):
            return runs * float(rows["wall_time_s"].mean()), basis
    return math.nan, "none"


def experiment_batches(name: str, root=REFERENCE_ROOT, experiments_dir=EXPERIMENTS_DIR) -> pd.DataFrame:
    """:func:`reference_batches` of one experiment (empty when it has no reference)."""
    tables = reference_tables(name, root)
    if not tables:
        return pd.DataFrame(columns=BATCH_COLUMNS)
    experiment = experiment_model.load_experiment(str(Path(experiments_dir) / f"{name}.yaml"))
    machine, trials = _pick_machine(experiment, tables)
    gpu = trials["gpu"].astype(str).mode().iloc[0] if "gpu" in trials and len(trials) else ""
    sums = trials.groupby(CELL + ["chunk"])["wall_time_s"].agg(["sum", "size"])
    rows = []
    for batch in gpu_batches(experiment):
        _, runs = experiment_model.chunk_trials(experiment, batch.algorithm, batch.implementation, batch.chunk)
        key = (batch.algorithm, batch.implementation, batch.setting or "", batch.function, int(batch.dim),
               int(batch.popsize), batch.dtype, int(batch.chunk))
        measured, measured_runs = (float(sums.loc[key, "sum"]), int(sums.loc[key, "size"])) if key in sums.index \
            else (0.0, 0)
        if measured_runs >= runs:
            trial_s, basis = measured, "measured"
        elif measured_runs:
            trial_s, basis = measured * runs / measured_runs, "scaled"
        else:
            trial_s, basis = _estimate(trials, batch, runs)
        rows.append(dict(experiment=name, machine=machine, gpu=gpu, algorithm=batch.algorithm,
                         implementation=batch.implementation, setting=batch.setting, function=batch.function,
                         dim=int(batch.dim), popsize=int(batch.popsize), dtype=batch.dtype, chunk=int(batch.chunk),
                         runs=runs, measured_runs=measured_runs, trial_s=trial_s, estimated=basis != "measured",
                         basis=basis))
    return pd.DataFrame(rows, columns=BATCH_COLUMNS)


def reference_batches(experiments=PAPER_EXPERIMENTS, root=REFERENCE_ROOT,
                      experiments_dir=EXPERIMENTS_DIR) -> pd.DataFrame:
    """One row per GPU batch of each experiment's grid, with its trials' time in the reference.

    Parameters
    ----------
    experiments : iterable of str
        Experiment names (``<experiments_dir>/<name>.yaml``); one without a committed reference is
        left out (:func:`missing_references` names them).
    root : str or Path
        The references' folder, ``<root>/<machine>/<experiment>/trials.csv[.gz]``.
    experiments_dir : str or Path
        Where the experiment files are.

    Returns
    -------
    DataFrame
        :data:`BATCH_COLUMNS`: the batch (``setting`` None without a parameter grid), the reference's
        machine folder (the one with more GPU rows where two machines ran the experiment) and the GPU
        its rows name, ``runs`` (the trials the batch should have), ``measured_runs`` (those in the
        reference), ``trial_s`` (their summed ``wall_time_s``, scaled up to ``runs`` where some are
        missing; for a batch with none, ``runs`` x the mean trial time of its implementation at its D,
        else at any D; NaN without either), ``estimated`` and ``basis`` (one of :data:`BASES`).
    """
    frames = [experiment_batches(name, root, experiments_dir) for name in experiments]
    frames = [f for f in frames if len(f)]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=BATCH_COLUMNS)


# --- scheduling ------------------------------------------------------------------------------------

def lpt_makespan(durations, gpus: int) -> float:
    """The makespan of longest-processing-time-first list scheduling: the batches, longest first,
    each to the GPU that frees first (Graham's LPT, at most 4/3 - 1/(3 gpus) of the optimum).

    Parameters
    ----------
    durations : iterable of float
        Each batch's time on a GPU (finite, >= 0).
    gpus : int
        The GPUs, >= 1.

    Returns
    -------
    float
        When the last GPU frees (0 for no batches).
    """
    if gpus < 1:
        raise ProjectionError(f"gpus must be >= 1, got {gpus}")
    durations = sorted((float(d) for d in durations), reverse=True)
    if any(not math.isfinite(d) or d < 0 for d in durations):
        raise ProjectionError("every batch duration must be a finite number >= 0")
    free = [0.0] * gpus
    for d in durations:
        heapq.heappush(free, heapq.heappop(free) + d)
    return max(free)


def lower_bound(durations, gpus: int) -> float:
    """No schedule ends before the work divided evenly, nor before its longest batch."""
    durations = [float(d) for d in durations]
    return max(sum(durations) / gpus, max(durations, default=0.0))


def project(batches: pd.DataFrame, gpus=DEFAULT_GPUS, overhead_s: float = 0.0, fixed_s: float = 0.0) -> pd.DataFrame:
    """Projected hours to run the batches on each number of GPUs, per experiment and all together.

    Parameters
    ----------
    batches : DataFrame
        :func:`reference_batches`' rows.
    gpus : iterable of int
        The GPU counts to project.
    overhead_s : float
        Added to every batch's ``trial_s``: its set-up and the gap before the next batch on its GPU.
    fixed_s : float
        Added once per workflow run: before the first batch and after the last.

    Returns
    -------
    DataFrame
        A row per experiment and a last row ``total`` (every batch in one workflow run, as a scaling
        set runs several experiments' batches): ``machine``, ``batches``, ``runs``, ``batches_unknown``
        (no time to project: left out), ``gpu_hours`` (the trials' time), ``estimated_share`` (of it,
        estimated), and per N ``hours_<N>`` (LPT makespan of trial_s + overhead_s, plus fixed_s) and
        ``lower_<N>`` (:func:`lower_bound` of the same, plus fixed_s); ``overhead_s`` and ``fixed_s``.
    """
    def row(name, part):
        known = part[part["trial_s"].notna()]
        durations = (known["trial_s"] + overhead_s).tolist()
        total = float(known["trial_s"].sum())
        out = dict(experiment=name, machine=", ".join(dict.fromkeys(part["machine"].astype(str))),
                   batches=len(part), runs=int(part["runs"].sum()), batches_unknown=int(len(part) - len(known)),
                   gpu_hours=total / 3600,
                   estimated_share=float(known.loc[known["estimated"].astype(bool), "trial_s"].sum()) / total
                   if total > 0 else math.nan)
        for n in gpus:
            out[f"hours_{n}"] = (lpt_makespan(durations, n) + fixed_s) / 3600 if durations else math.nan
            out[f"lower_{n}"] = (lower_bound(durations, n) + fixed_s) / 3600 if durations else math.nan
        return out

    rows = [row(name, part) for name, part in batches.groupby("experiment", sort=False)]
    rows.append(row("total", batches))
    return pd.DataFrame(rows).assign(overhead_s=overhead_s, fixed_s=fixed_s)


# --- overheads from a scaling run ------------------------------------------------------------------

def overheads_from_scaling(batches: pd.DataFrame, rows: pd.DataFrame, run: str | None = None) -> dict:
    """The per-batch overhead and the fixed start and end of one run of a scaling folder
    (:mod:`gpude.study.gpu_scaling`'s ``batches.csv`` and ``rows.csv``).

    Parameters
    ----------
    batches, rows : DataFrame
        The folder's ``batches.csv`` and ``rows.csv``.
    run : str, optional
        The run (``gpus1``, ...); default the one-GPU run (not the priming one).

    Returns
    -------
    dict
        ``run``, ``overhead_s`` (per batch: the mean of leased time less its trials' time, plus the
        mean gap between consecutive leases of one GPU), ``setup_s`` and ``gap_s`` (its two parts),
        ``fixed_s`` (the first lease's start plus the time after the last release) and ``wall_s``.
    """
    if run is None:
        one = rows[(rows["gpus"] == 1) & (rows["run"] != "priming")]
        if not len(one):
            raise ProjectionError("the scaling folder has no one-GPU run (rows.csv: gpus 1); name a run")
        run = str(one["run"].iloc[0])
    b = batches[batches["run"] == run]
    wall = rows.loc[rows["run"] == run, "wall_s"]
    if not len(b) or not len(wall):
        raise ProjectionError(f"run {run!r} is not in the scaling folder's batches.csv and rows.csv")
    measured = lease_measures(b, float(wall.iloc[0]))
    setup = measured["beyond_trials_s"]
    gap = 0.0 if math.isnan(measured["gap_s"]) else measured["gap_s"]
    return dict(run=run, overhead_s=setup + gap, setup_s=setup, gap_s=gap, fixed_s=measured["fixed_s"],
                wall_s=float(wall.iloc[0]))


def scaling_folders(scaling_dir) -> list[Path]:
    """The committed scaling folders (each with rows.csv and batches.csv), oldest first by the
    ``started_utc`` of their runs."""
    from ..core.io import read_csv

    found = [d for d in sorted(Path(scaling_dir).glob("*")) if (d / "rows.csv").is_file()
             and (d / "batches.csv").is_file()]
    return sorted(found, key=lambda d: (str(read_csv(d / "rows.csv")["started_utc"].min()), d.name))


def overheads_from_folder(folder, run: str | None = None) -> dict:
    """:func:`overheads_from_scaling` of a scaling folder, with the folder's name as ``folder``."""
    from ..core.io import read_csv

    folder = Path(folder)
    return dict(overheads_from_scaling(read_csv(folder / "batches.csv"), read_csv(folder / "rows.csv"), run),
                folder=folder.name)

