"""The one ``Cell`` and the one ``grid`` of the campaign and of ``fill_reference`` (the experiment
model's cells, :mod:`gpude.study.experiment`), and the workflow rule's own ``gpude run`` command line for a
cell's trials."""

from __future__ import annotations

import dataclasses
import fnmatch

import yaml

from ..core.errors import GpudeError
from ..core.provenance import REPO
from ..study import experiment as model

#: the workflow's batch path (an experiment with a parameter grid: :func:`gpude.study.experiment.batch_path`)
BATCH = model.BATCH
LOG = "logs/{experiment}/run_batch/" + BATCH.split("/batches/", 1)[1] + ".log"
#: the schema's defaults (workflow/schemas/experiment.schema.yaml)
DEFAULTS = model.defaults()
#: the workflow's folder: the default ``--root`` of both tools (the checkout whose src/ this is)
ROOT = REPO
CELL = ["algorithm", "implementation", "function", "dim", "popsize", "dtype"]
NOT_PARAMS = model.NOT_PARAMS


@dataclasses.dataclass(frozen=True)
class Cell(model.CellKey):
    """One (algorithm, implementation, function, D, NP, dtype) of an experiment and how its trials are
    made: by the workflow's batch jobs (``trials_per_job``, 0: all in one) or by a campaign's
    processes (``per_launch`` trials a launch, ``timing``, the first ``alone`` one per launch); its
    parameter setting in an experiment with a parameter grid. The one cell of ``fill_reference`` and
    of the campaign."""
    trials: int
    trials_per_job: int = 0
    per_launch: int = 1
    timing: str = "exclusive"
    #: trials 0 .. alone - 1 timed alone: one per launch (a batched implementation), or in a lane of
    #: their own (a ``shared`` one: :attr:`alone_lanes`); the others ``per_launch`` per launch, or shared
    alone: int = 0
    #: a shared cell's timed trials: at most this many processes at once with nothing else beside them
    #: (rows say ``exclusive-cpu:LANES``); 0: none of its trials is timed alone
    alone_lanes: int = 0
    setting: str | None = None

    def chunks(self) -> list[int]:
        per_job = self.trials_per_job or self.trials
        return list(range((self.trials + per_job - 1) // per_job))

    def launch_size(self, trial: int) -> int:
        """How many trials share the launch that makes ``trial``."""
        return 1 if trial < self.alone else self.per_launch

    def in_lane(self, trial: int) -> bool:
        """Whether ``trial`` of a shared cell is one of its timed ones, made in a lane of its own."""
        return bool(self.alone_lanes) and self.timing != "exclusive" and trial < self.alone

    def batch(self, experiment: str, chunk: int) -> str:
        return self._job(chunk).path(experiment)

    def log(self, experiment: str, chunk: int) -> str:
        return f"logs/{experiment}/run_batch/" + self.batch(experiment, chunk).split("/batches/", 1)[1] + ".log"

    def _job(self, chunk: int) -> model.Batch:
        return model.Batch(**self.key_dict(), chunk=chunk, setting=self.setting)

    def key_dict(self) -> dict:
        return {k: getattr(self, k) for k in CELL}

    def key(self) -> tuple:
        """The cell's key: its :data:`CELL` values, and its setting where it has one."""
        return tuple(getattr(self, k) for k in CELL) + ((self.setting,) if self.setting else ())

    def __str__(self) -> str:
        return (f"{self.algorithm}/{self.implementation}{f' {self.setting}' if self.setting else ''} {self.function} "
                f"D={self.dim} NP={self.popsize} {self.dtype}")


def row_key(row) -> tuple:
    """A trials row's (or a groupby key's, as a dict of :data:`CELL`) cell key, as :meth:`Cell.key`
    (the setting read from the row's run_id)."""
    key = tuple(row[k] if k not in ("dim", "popsize") else int(row[k]) for k in CELL)
    parts = str(row.get("run_id", "")).split("/")
    return key + ((parts[2],) if len(parts) == 8 else ())


def load_experiment(path, settings=()) -> dict:
    """The experiment file, checked and with the schema's defaults (:func:`gpude.study.experiment.load_experiment`),
    and ``--set ALGORITHM.KEY=VALUE`` applied (a campaign that re-makes a reference under new
    parameters before the experiment file changes: run it into a folder the REPORT does not read, e.g.
    results/campaigns/<machine>/<experiment>)."""
    experiment = model.read_experiment(path)
    for item in settings:
        target, _, value = item.partition("=")
        algorithm, _, key = target.partition(".")
        if not value or not key or algorithm not in experiment["algorithms"] or key in NOT_PARAMS:
            raise GpudeError(f"--set {item!r}: give ALGORITHM.KEY=VALUE with an algorithm of the experiment "
                             f"({', '.join(experiment['algorithms'])}) and one of its parameters, e.g. de.CR=0.01")
        experiment["algorithms"][algorithm][key] = yaml.safe_load(value)
    return model.load_experiment(experiment)


def parse_trials(text: str | None) -> list[tuple[str, int]]:
    """``--trials 'L06=20,C*=20'``: at least this many trials for the functions matching each pattern."""
    out = []
    for item in filter(None, (text or "").split(",")):
        pattern, _, n = item.partition("=")
        if not n.strip().isdigit() or int(n) < 1:
            raise GpudeError(f"--trials: {item!r} is not PATTERN=N with N a positive integer (e.g. 'L06=20,C*=20')")
        out.append((pattern.strip(), int(n)))
    return out


def per_implementation(value, implementation: str, algorithm: str, kind=int):
    """An experiment's setting that may be given per implementation (``{ALGORITHM/IMPL or IMPL: v,
    default: v}``), as ``kind``."""
    return kind(model.per_implementation({"value": value}, "value", implementation, algorithm))


def budget(experiment: dict, dim: int) -> int:
    """The experiment's ``max_fes`` at D = ``dim``."""
    return model.max_fes(experiment, dim)


def grid(experiment: dict, implementations=None, dtypes=None, *, trials_by_function=(), alone: int = 0,
         per_launch: int | None = None, functions=None, has_gpu: bool = True, alone_lanes: int = 0) -> list[Cell]:
    """The experiment's cells (:func:`gpude.study.experiment.cells`, of its dtypes, or ``dtypes``; of the given
    implementations, default all) with their number of trials: the experiment's, or more for the
    functions that match a pattern of ``trials_by_function`` ((pattern, n) pairs: the campaign's
    ``--trials``). ``alone`` and ``per_launch``: the campaign's ``--alone`` and ``--per-launch``
    (default: the experiment's ``trials_per_launch`` for every trial); ``alone_lanes``: the campaign's
    ``--alone-lanes`` (a shared cell's first ``alone`` trials timed in lanes); ``functions``: fnmatch patterns,
    the experiment's functions that match one; ``has_gpu`` False: without the implementations that need
    a GPU."""
    out = []
    for c in model.cells({**experiment, "dtypes": dtypes or experiment["dtypes"]}, has_gpu):
        if implementations and c.implementation not in implementations:
            continue
        if functions and not any(fnmatch.fnmatchcase(c.function, f) for f in functions):
            continue
        trials = model.per_implementation(experiment, "trials", c.implementation, c.algorithm)
        n = max([trials] + [k for pattern, k in trials_by_function if fnmatch.fnmatchcase(c.function, pattern)])
        size = per_launch or model.per_implementation(experiment, "trials_per_launch", c.implementation, c.algorithm)
        timing = model.per_implementation(experiment, "timing", c.implementation, c.algorithm)
        lanes = alone_lanes if timing != "exclusive" and size == 1 else 0
        out.append(Cell(c.algorithm, c.implementation, c.function, int(c.dim), int(c.popsize), c.dtype, n,
                        trials_per_job=model.per_implementation(experiment, "trials_per_job", c.implementation,
                                                                c.algorithm),
                        per_launch=size, alone=alone if size > 1 or lanes else 0, alone_lanes=lanes,
                        setting=c.setting, timing=timing))
    return out


def run_id(cell: Cell, trial: int) -> str:
    """The row's run_id (:func:`gpude.run.rows.run_id`)."""
    from ..run.rows import run_id as row_id

    return row_id(*cell.key_dict().values(), trial, cell.setting or "")


def launch_size(row: dict) -> int:
    """How many trials shared the row's launch (:func:`gpude.run.rows.launch_size`)."""
    from ..run.rows import launch_size as size

    return size(row.get("params") if isinstance(row.get("params"), str) else {})


# --- the workflow rule's command line ---------------------------------------------------------------

def rule_command(experiment: dict, cell: Cell, chunk: int, experiment_file: str | None = None) -> str:
    """The shell command rule run_batch runs for one batch: ``run_params`` of workflow/rules/common.smk
    and the rule's shell line, rebuilt here for a host without Snakemake (tests/test_fill_reference.py
    checks it against ``snakemake -n -p``)."""
    first = chunk * cell.trials_per_job
    count = min(cell.trials_per_job, cell.trials - first)
    batch = cell.batch(experiment["name"], chunk)
    return gpude_command(experiment, cell, first, count, batch, cell.log(experiment["name"], chunk),
                         experiment_file=experiment_file)


def gpude_command(experiment: dict, cell: Cell, first: int, count: int, out_stem: str, log: str,
                  concurrency: str | None = None, per_launch: int | None = None,
                  experiment_file: str | None = None) -> str:
    """The rule's command for trials ``first .. first + count - 1`` of a cell (anything with the
    fields of :data:`CELL`), written to ``<out_stem>.csv``/``.npz`` with its output in ``log`` (the
    campaign's runs use it too); ``concurrency`` replaces the experiment's timing in the rows
    (``exclusive-gpu:N``: alone on one of N GPUs, as the workflow records it on a host of several);
    ``per_launch`` replaces the experiment's ``trials_per_launch`` (a campaign's runs timed one per
    launch, or batched); ``experiment_file``: the experiment's file, which an outside program's batch
    names (``--programs``; its experiment has ``programs:``)."""
    program = cell.implementation in experiment.get("programs", {})
    if program and not experiment_file:
        raise GpudeError(f"{cell.implementation} is an outside program of the experiment: its command names the "
                         "experiment's file (--programs), give it")
    spec = model.run_spec(experiment, cell, first, count, concurrency, per_launch=per_launch,
                          experiment_file=experiment_file)
    return f"{spec.run_command(out_stem)} > {log} 2>&1"
