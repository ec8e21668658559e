"""The one ``Cell`` and the one ``grid`` of the campaign and of ``fill_reference``, and the workflow
rule's own ``gpude run`` command line for a cell's trials."""

from __future__ import annotations

import dataclasses
import fnmatch
from pathlib import Path

import yaml

from .. import commands
from ..errors import GpudeError
from ..provenance import REPO

#: the workflow's batch path (``BATCH`` in workflow/rules/common.smk; tests/test_fill_reference.py
#: checks that the two agree)
BATCH = ("results/{experiment}/batches/{algorithm}/{implementation}/{function}/d{dim}/np{popsize}/"
         "{dtype}/chunk{chunk}")
LOG = "logs/{experiment}/run_batch/{algorithm}/{implementation}/{function}/d{dim}/np{popsize}/{dtype}/chunk{chunk}.log"
#: the schema's defaults (workflow/schemas/experiment.schema.yaml)
DEFAULTS = {"trials": 30, "trials_per_job": 30, "trials_per_launch": 1, "seed": 20261121, "dtypes": ["float64"],
            "target": 1.0e-8, "timing": "exclusive"}
#: the workflow's folder: the default ``--root`` of both tools (the checkout whose src/ this is)
ROOT = REPO
CELL = ["algorithm", "implementation", "function", "dim", "popsize", "dtype"]
#: keys of an algorithm's entry in an experiment that are not its parameters
NOT_PARAMS = ("implementations", "popsizes")


@dataclasses.dataclass(frozen=True)
class Cell:
    """One (algorithm, implementation, function, D, NP, dtype) of an experiment and how its trials are
    made: by the workflow's batch jobs (``trials_per_job``, 0: all in one) or by a campaign's
    processes (``per_launch`` trials a launch, ``timing``, the first ``alone`` one per launch). The one
    cell of ``fill_reference`` and of the campaign."""
    algorithm: str
    implementation: str
    function: str
    dim: int
    popsize: int
    dtype: str
    trials: int
    trials_per_job: int = 0
    per_launch: int = 1
    timing: str = "exclusive"
    #: trials 0 .. alone - 1 one per launch (timed), the others ``per_launch`` per launch
    alone: int = 0

    def chunks(self) -> list[int]:
        per_job = self.trials_per_job or self.trials
        return list(range((self.trials + per_job - 1) // per_job))

    def launch_size(self, trial: int) -> int:
        """How many trials share the launch that makes ``trial``."""
        return 1 if trial < self.alone else self.per_launch

    def batch(self, experiment: str, chunk: int) -> str:
        return BATCH.format(experiment=experiment, chunk=chunk, **self.key_dict())

    def log(self, experiment: str, chunk: int) -> str:
        return LOG.format(experiment=experiment, chunk=chunk, **self.key_dict())

    def key_dict(self) -> dict:
        return {k: getattr(self, k) for k in CELL}

    def key(self) -> tuple:
        return tuple(getattr(self, k) for k in CELL)

    def __str__(self) -> str:
        return f"{self.algorithm}/{self.implementation} {self.function} D={self.dim} NP={self.popsize} {self.dtype}"


def row_key(row) -> tuple:
    """A trials row's (or a groupby key's, as a dict of :data:`CELL`) cell key, as :meth:`Cell.key`."""
    return tuple(row[k] if k not in ("dim", "popsize") else int(row[k]) for k in CELL)


def load_experiment(path, settings=()) -> dict:
    """The experiment file with the schema's defaults, and ``--set ALGORITHM.KEY=VALUE`` applied (a
    campaign that re-makes a reference under new parameters before the experiment file changes:
    run it into a folder the REPORT does not read, e.g. results/campaigns/<machine>/<experiment>)."""
    try:
        experiment = {**DEFAULTS, **yaml.safe_load(Path(path).read_text())}
    except (OSError, yaml.YAMLError, TypeError) as exc:  # (TypeError: a file that is no mapping)
        raise GpudeError(f"--experiment {path}: not an experiment file ({exc})") from None
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


def per_implementation(value, implementation: str, algorithm: str, kind=int):
    """An experiment's setting that may be given per implementation (``{ALGORITHM/IMPL or IMPL: v,
    default: v}``), as ``kind``."""
    if isinstance(value, dict):
        value = value.get(f"{algorithm}/{implementation}", value.get(implementation, value["default"]))
    return kind(value)


def budget(experiment: dict, dim: int):
    """The experiment's ``max_fes`` at D = ``dim`` (one value, or one per D), as the file gives it."""
    value = experiment["max_fes"]
    return {str(k): v for k, v in value.items()}[str(dim)] if isinstance(value, dict) else value


def grid(experiment: dict, implementations=None, dtypes=None, *, trials_by_function=(), alone: int = 0,
         per_launch: int | None = None, functions=None) -> list[Cell]:
    """The experiment's cells (of its dtypes, or ``dtypes``; of the given implementations, default all)
    with their number of trials: the experiment's, or more for the functions that match a pattern of
    ``trials_by_function`` ((pattern, n) pairs: the campaign's ``--trials``). ``alone`` and
    ``per_launch``: the campaign's ``--alone`` and ``--per-launch`` (default: the experiment's
    ``trials_per_launch`` for every trial); ``functions``: fnmatch patterns, the experiment's functions
    that match one."""
    from ..functions.function import canonical_id
    from ..problems import instance_dim, problem_set

    cells = []
    for algorithm, spec in experiment["algorithms"].items():
        popsizes = spec.get("popsizes", experiment.get("popsizes"))
        for implementation in spec["implementations"]:
            if implementations and implementation not in implementations:
                continue
            trials = per_implementation(experiment["trials"], implementation, algorithm)
            per_job = per_implementation(experiment["trials_per_job"], implementation, algorithm)
            size = per_launch or per_implementation(experiment["trials_per_launch"], implementation, algorithm)
            timing = per_implementation(experiment["timing"], implementation, algorithm, str)
            for function in map(canonical_id, experiment["functions"]):
                if functions and not any(fnmatch.fnmatchcase(function, f) for f in functions):
                    continue
                n = max([trials] + [k for pattern, k in trials_by_function if fnmatch.fnmatchcase(function, pattern)])
                dims = [instance_dim(function)] if problem_set(function) else experiment["dims"]
                for dim in dims:
                    for popsize in popsizes:
                        for dtype in dtypes or experiment["dtypes"]:
                            cells.append(Cell(algorithm, implementation, function, int(dim), int(popsize), dtype,
                                              n, trials_per_job=per_job, per_launch=size, timing=timing,
                                              alone=alone if size > 1 else 0))
    return cells


def run_id(cell: Cell, trial: int) -> str:
    """The row's run_id (:func:`gpude.results.run_id`)."""
    from ..results import run_id as row_id

    return row_id(*cell.key(), trial)


def launch_size(row: dict) -> int:
    """How many trials shared the row's launch (:func:`gpude.results.launch_size`)."""
    from ..results import launch_size as size

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
    spec = experiment["algorithms"][cell.algorithm]
    concurrency = concurrency or per_implementation(experiment["timing"], cell.implementation, cell.algorithm, str)
    if per_launch is None:
        per_launch = per_implementation(experiment["trials_per_launch"], cell.implementation, cell.algorithm)
    program = cell.implementation in experiment.get("programs", {})
    if program and not experiment_file:
        raise GpudeError(f"{cell.implementation} is an outside program of the experiment: its command names the "
                         "experiment's file (--programs), give it")
    configuration = commands.configuration_args(
        {k: v for k, v in spec.items() if k not in NOT_PARAMS}, max_fes=int(budget(experiment, cell.dim)),
        target=experiment["target"], per_launch=per_launch, plugins=experiment.get("plugins", []),
        max_time_s=experiment.get("max_time_s"), programs_file=experiment_file if program else None)
    args = commands.run_args(configuration, seed=experiment["seed"], first=first, count=count,
                             suite=experiment["name"], concurrency=concurrency, keep_failed=program)
    cell_args = commands.cell_args(cell.algorithm, cell.implementation, cell.function, cell.dim, cell.popsize,
                                   cell.dtype)
    return f"{commands.run_command(cell_args, args, out_stem)} > {log} 2>&1"
