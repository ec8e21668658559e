"""The experiment model: an experiment file loaded with its schema's defaults and checked, its grid of
batch jobs (subgrids and parameter grids included), its per-implementation values, budgets, batch
paths and command lines, and the merge of batch tables.

The workflow's rules (workflow/rules/common.smk), a campaign (:mod:`gpude.campaign`) and an
interleaved run (:mod:`gpude.campaign.interleave`) all plan from :func:`grid`, so they list the same
batches. The workflow reads its experiment once into an :class:`Experiment`, the checked mapping
with these functions bound to it; the campaign and the report take the mapping.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import inspect
import itertools
import sys
from pathlib import Path

import yaml

from ..core.errors import GpudeError
from ..core.provenance import REPO
from ..run.spec import RunSpec

#: the experiment's schema (the workflow's)
SCHEMA = REPO / "workflow" / "schemas" / "experiment.schema.yaml"
#: a batch job's files, without their ending; a parameter grid adds ``{setting}/`` after the implementation
BATCH = ("results/{experiment}/batches/{algorithm}/{implementation}/{function}/d{dim}/np{popsize}/"
         "{dtype}/chunk{chunk}")
#: keys that take one value, or a mapping {default: value, <implementation>: value}
PER_IMPLEMENTATION = ("trials", "trials_per_job", "trials_per_launch", "timing")
#: keys of an algorithm's entry that are not its parameters
NOT_PARAMS = ("implementations", "popsizes")


class ExperimentError(GpudeError, ValueError):
    """An experiment that does not load: the message names the key and the fix."""


@dataclasses.dataclass(frozen=True)
class CellKey:
    """What names a cell of the grid."""
    algorithm: str
    implementation: str
    function: str
    dim: int
    popsize: int
    dtype: str


@dataclasses.dataclass(frozen=True)
class Batch(CellKey):
    """One batch job: a chunk of a cell's trials, with its parameter setting in an experiment with a
    parameter grid (None otherwise)."""
    chunk: int
    setting: str | None = None

    def wildcards(self) -> dict:
        """The batch's fields as the workflow's wildcards (``setting`` only where there is one)."""
        out = dataclasses.asdict(self)
        if self.setting is None:
            del out["setting"]
        return out

    def path(self, experiment: str) -> str:
        """The batch's files, without their ending (:func:`batch_path`)."""
        return batch_path(self.setting is not None).format(experiment=experiment, **self.wildcards())


def batch_path(param_grid: bool) -> str:
    """The batch pattern of an experiment with (``True``) or without a parameter grid."""
    return BATCH.replace("{implementation}/", "{implementation}/{setting}/") if param_grid else BATCH


# --- loading -----------------------------------------------------------------------------------------

@functools.cache
def _schema(path: str) -> dict:
    return yaml.safe_load(Path(path).read_text())


def defaults(schema_path=SCHEMA) -> dict:
    """The schema's ``default:`` values of the experiment's keys."""
    return {k: copy.deepcopy(v["default"]) for k, v in _schema(str(schema_path))["properties"].items()
            if "default" in v}


def read_experiment(source) -> dict:
    """The experiment as given, unchecked: a file's mapping, or a Snakemake config (the file named by
    its ``experiment``, or a config given whole with --configfile; keys given with --config override
    either)."""
    if not isinstance(source, dict):
        try:
            experiment = yaml.safe_load(Path(source).read_text())
        except (OSError, yaml.YAMLError) as exc:
            raise ExperimentError(f"--experiment {source}: not an experiment file ({exc})") from None
        if not isinstance(experiment, dict):
            raise ExperimentError(f"--experiment {source}: not an experiment file (no mapping)")
        return experiment
    overrides = {k: v for k, v in source.items() if k != "experiment"}
    base = {}
    if "name" not in overrides:
        path = Path(source.get("experiment", "config/experiments/default.yaml"))
        if not path.is_file():
            raise ExperimentError(f"experiment file {path} not found; pass --configfile config/experiments/<name>.yaml")
        base = yaml.safe_load(path.read_text())
    experiment = {**base, **overrides}
    # --config 'trials={default: 30, ide: 5}' gives strings
    for key in ("trials", "trials_per_job", "trials_per_launch"):
        if isinstance(experiment.get(key), dict):
            experiment[key] = {k: int(v) if str(v).isdigit() else v for k, v in experiment[key].items()}
    for key in ("dims", "popsizes"):  # --config 'dims=[10,50]' gives strings too
        if isinstance(experiment.get(key), list):
            experiment[key] = [int(v) if str(v).isdigit() else v for v in experiment[key]]
    return experiment


def load_experiment(source, *, schema_path=SCHEMA, after_schema=None) -> dict:
    """The experiment, checked and with the schema's defaults.

    Parameters
    ----------
    source : str, Path or dict
        An experiment file, or a Snakemake config (:func:`read_experiment`).
    schema_path : str or Path
        The schema to check it against.
    after_schema : callable, optional
        Called with the experiment once the schema's check passed (the workflow's own checks).

    Returns
    -------
    dict
        The experiment, its function ids as trial rows record them.

    Raises
    ------
    ExperimentError
        The first problem found, with its fix.
    """
    experiment = read_experiment(source)
    validate_experiment(experiment, schema_path)
    if after_schema is not None:
        after_schema(experiment)
    from ..algorithms import load_plugins
    from ..implementations import registry

    load_plugins(experiment.get("plugins"))  # competitors registered outside the package
    try:  # outside programs (their spec in the experiment file) as implementations
        from ..implementations.external import register_programs

        register_programs(experiment.get("programs"))
    except GpudeError as exc:
        raise ExperimentError(f"experiment {experiment['name']}: {exc}") from None
    experiment["functions"] = check_functions(experiment)
    for function in experiment["functions"]:
        dims_of(experiment, function)  # an instance with a dimension not its own fails here
    check_subgrids(experiment)
    for algorithm, spec in experiment["algorithms"].items():
        for implementation in spec["implementations"]:
            try:
                registry.get(algorithm, implementation)
            except GpudeError as exc:
                raise ExperimentError(f"experiment {experiment['name']}: {exc}") from None
        check_algorithm_params(experiment, algorithm, spec)
    # names of registered implementations are allowed even when not run (--config may run a subset)
    known = {name for e in registry.entries() if e.algorithm in experiment["algorithms"]
             for name in (e.implementation, f"{e.algorithm}/{e.implementation}")}
    for key in PER_IMPLEMENTATION:
        if isinstance(experiment[key], dict):
            unknown = set(experiment[key]) - known - {"default"}
            if unknown:
                raise ExperimentError(f"experiment {experiment['name']}: {key} names {', '.join(sorted(unknown))}, "
                                      f"which is no implementation of {', '.join(experiment['algorithms'])}; "
                                      f"allowed keys: default, {', '.join(sorted(known))}")
    for algorithm, spec in experiment["algorithms"].items():
        for implementation in spec["implementations"]:
            per_launch = per_implementation(experiment, "trials_per_launch", implementation, algorithm)
            if per_launch == 1:
                continue  # (no class to import: its module may load numba, a third of a second)
            cls = registry.get(algorithm, implementation).load(check_device=False)
            if "trials_per_launch" not in inspect.signature(cls.__init__).parameters:
                raise ExperimentError(f"experiment {experiment['name']}: trials_per_launch {per_launch} for "
                                      f"{algorithm}/{implementation}, which runs one trial at a time; give "
                                      f"trials_per_launch as a mapping {{default: 1, <GPU implementation>: n}}")
    return experiment


def validate_experiment(experiment: dict, schema_path=SCHEMA) -> None:
    """Check the experiment against its schema and fill in the schema's defaults. A bad value fails
    with jsonschema's own words for its most relevant error, made readable: the failing key's path
    and value, and what the schema's description says the key takes."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match

    schema = _schema(str(schema_path))
    error = best_match(Draft202012Validator(schema).iter_errors(experiment))
    if error is not None:
        raise ExperimentError(f"experiment {experiment.get('name')}: {schema_error_message(error, schema)}")
    for key, value in defaults(schema_path).items():
        experiment.setdefault(key, value)


def schema_error_message(error, schema) -> str:
    """``key.sub[0] = value: jsonschema's message; the schema says of key: its description``."""
    where = ""
    for part in error.absolute_path:
        where += f"[{part}]" if isinstance(part, int) else (f".{part}" if where else str(part))
    if error.validator in ("oneOf", "anyOf") and error.context:
        # no alternative fits better than another (e.g. a string where an integer or a mapping goes)
        message = (f"{error.instance!r} is none of the forms {where} takes ("
                   + "; ".join(dict.fromkeys(e.message for e in error.context)) + ")")
    else:
        message = error.message
    if where and repr(error.instance) not in message:
        where += f" = {error.instance!r}"
    text = f"{where}: {message}" if where else message
    # the fix: the description of the deepest schema node on the error's way that has one, or of
    # the missing key; an unknown key gets the list of keys
    described, node = None, schema
    for part in list(error.absolute_schema_path)[:-1]:
        node = node[part]  # a schema, or a mapping of them ("properties", which has a "description" key)
        if isinstance(node, dict) and isinstance(node.get("description"), str):
            described = node["description"]
    key = str(error.absolute_path[0]) if error.absolute_path else None
    if error.validator == "required" and not error.absolute_path:  # "'functions' is a required property"
        key = next((k for k in error.validator_value if error.message.startswith(repr(k))), None)
        described = schema["properties"].get(key, {}).get("description") if key else None
    if error.validator == "additionalProperties" and not error.absolute_path:
        return f"{text}; an experiment's keys: {', '.join(schema['properties'])}"
    if described:
        text += f"; the schema says of {key}: {' '.join(described.split())}"
    return text


def check_functions(experiment: dict) -> list[str]:
    """The experiment's function ids as trial rows record them (F01 for f01; an instance's name as
    in the paper), or an error naming the unknown ones."""
    from ..functions import list_functions
    from ..functions.function import canonical_id
    from ..problems import registered_names

    known = {*list_functions("all"), *list_functions("lop"), *list_functions("etc"), *registered_names()}
    ids = [canonical_id(f) for f in experiment["functions"]]
    unknown = [f for f, i in zip(experiment["functions"], ids) if i not in known]
    if unknown:
        raise ExperimentError(f"experiment {experiment['name']}: unknown function(s) {', '.join(map(str, unknown))}; "
                              "`gpude functions` lists the functions, `gpude functions --suite lop|etc` the LOP and "
                              "ETC instances; an objective of your own is registered by a plugin (docs/tutorial.md)")
    return ids


def check_subgrids(experiment: dict) -> None:
    """A subgrid's values must be the experiment's own (so that every check above covers them); its
    function ids as the rows record them."""
    from ..functions.function import canonical_id

    own = {"functions": experiment["functions"], "dims": experiment["dims"],
           "popsizes": {p for spec in experiment["algorithms"].values()
                        for p in spec.get("popsizes", experiment.get("popsizes") or [])}}
    for k, part in enumerate(experiment.get("subgrids", [])):
        if "functions" in part:
            part["functions"] = [canonical_id(f) for f in part["functions"]]
        for key, values in part.items():
            wrong = [v for v in values if v not in own[key]]
            if wrong:
                raise ExperimentError(f"experiment {experiment['name']}: subgrids[{k}].{key}: "
                                      f"{', '.join(map(str, wrong))} not among the experiment's {key} "
                                      f"({', '.join(map(str, sorted(own[key], key=str)))})")


def check_algorithm_params(experiment: dict, algorithm: str, spec: dict) -> None:
    """Build the algorithm's parameter object once, so a bad value fails before any job runs."""
    from ..algorithms import params_class

    Params = params_class(algorithm)
    fields = {f.name for f in dataclasses.fields(Params)} - {"popsize", "max_fes", "target", "dtype", "max_time_s"}
    unknown = set(algorithm_params(spec)) - fields
    if unknown:
        raise ExperimentError(f"experiment {experiment['name']}: algorithm {algorithm} has no parameter "
                              f"{', '.join(sorted(unknown))}; its parameters: {', '.join(sorted(fields))}")
    popsizes = popsizes_of(experiment, algorithm)
    if not popsizes:
        raise ExperimentError(f"experiment {experiment['name']}: no population sizes for algorithm {algorithm}; "
                              f"give popsizes for the experiment or under the algorithm")
    try:
        for popsize in popsizes:
            first_dim = dims_of(experiment, experiment["functions"][0])[0]
            for _, params in param_settings(spec):
                Params(popsize=popsize, max_fes=max(popsize, max_fes(experiment, first_dim)),
                       max_time_s=experiment.get("max_time_s"), **params)
    except GpudeError as exc:
        raise ExperimentError(f"experiment {experiment['name']}, algorithm {algorithm}: {exc}") from None


# --- the grid --------------------------------------------------------------------------------------

def in_subgrids(experiment: dict, function: str, dim, popsize) -> bool:
    """Whether a cell runs: every cell without `subgrids`, else one that lies in any of them."""
    cell = dict(functions=function, dims=dim, popsizes=popsize)
    return "subgrids" not in experiment or any(
        all(cell[key] in values for key, values in part.items()) for part in experiment["subgrids"])


def dims_of(experiment: dict, function: str) -> list:
    """The dimensions a function runs at: the experiment's dims, or an instance's own size."""
    from ..problems import instance_dim, problem_set

    dims = experiment["dims"]
    if problem_set(function):
        own = instance_dim(function)
        wrong = [d for d in dims if d != "instance" and int(d) != own]
        if wrong:
            raise ExperimentError(f"experiment {experiment['name']}: {function} has dimension {own} (its instance's "
                                  f"size), not {', '.join(map(str, wrong))}; give dims: [instance]")
        return [own]
    if "instance" in dims:
        raise ExperimentError(f"experiment {experiment['name']}: dims: instance is the size of a LOP or ETC "
                              f"instance; {function} is a benchmark function and needs numeric dims")
    return dims


def popsizes_of(experiment: dict, algorithm: str):
    """The algorithm's population sizes: its own, or the experiment's."""
    return experiment["algorithms"][algorithm].get("popsizes", experiment.get("popsizes"))


def algorithm_params(spec: dict) -> dict:
    """The algorithm's parameters given in the experiment (everything but its implementations and
    its own population sizes)."""
    return {k: v for k, v in spec.items() if k not in NOT_PARAMS}


def param_settings(spec: dict) -> list[tuple[str, dict]]:
    """The algorithm's parameter settings as (label, parameters): one, labelled "", where every
    parameter has one value; where some list several (grid axes, the schema's lists), one per
    combination of their values, in the order the experiment gives the axes, labelled by the axes'
    values (F0.3_CR0.01: a folder of the batches and a part of the trials' run_ids)."""
    params = algorithm_params(spec)
    axes = [k for k, v in params.items() if isinstance(v, list)]
    if not axes:
        return [("", params)]
    return [("_".join(f"{k}{v}" for k, v in zip(axes, values)), {**params, **dict(zip(axes, values))})
            for values in itertools.product(*(params[k] for k in axes))]


def has_param_grid(experiment: dict) -> bool:
    """Whether any algorithm of the experiment lists several values for a parameter (a grid axis)."""
    return any(isinstance(v, list) for spec in experiment["algorithms"].values()
               for v in algorithm_params(spec).values())


def settings_of(experiment: dict, algorithm: str) -> dict:
    """The algorithm's settings, label -> parameters; labelled None in an experiment without a
    parameter grid, "default" for an algorithm without grid axes beside one with them."""
    spec = experiment["algorithms"][algorithm]
    if not has_param_grid(experiment):
        return {None: algorithm_params(spec)}
    return {label or "default": params for label, params in param_settings(spec)}


def per_implementation(experiment: dict, key: str, implementation: str, algorithm: str | None = None):
    """The key's value for an implementation: a mapping's "<algorithm>/<implementation>" entry (when
    two algorithms have implementations of one name, e.g. pso/gpu and ss/gpu), else its
    "<implementation>" entry, else its "default"; or the one value."""
    value = experiment[key]
    if isinstance(value, dict):
        return value.get(f"{algorithm}/{implementation}", value.get(implementation, value["default"]))
    return value


def max_fes(experiment: dict, dim) -> int:
    """The budget of a trial at D = ``dim``."""
    budget = experiment["max_fes"]
    if isinstance(budget, dict):
        if str(dim) not in {str(k) for k in budget}:
            raise ExperimentError(f"max_fes has no budget for dim {dim}; give one per dim in {experiment['dims']}")
        return int({str(k): v for k, v in budget.items()}[str(dim)])
    return int(budget)


def chunks(experiment: dict, algorithm: str, implementation: str) -> int:
    """How many batch jobs a cell's trials take."""
    n = per_implementation(experiment, "trials", implementation, algorithm)
    per_job = per_implementation(experiment, "trials_per_job", implementation, algorithm)
    return (n + per_job - 1) // per_job


def chunk_trials(experiment: dict, algorithm: str, implementation: str, chunk: int) -> tuple[int, int]:
    """A batch's first trial and its number of trials."""
    n = per_implementation(experiment, "trials", implementation, algorithm)
    per_job = per_implementation(experiment, "trials_per_job", implementation, algorithm)
    first = int(chunk) * per_job
    return first, min(per_job, n - first)


def cells(experiment: dict, has_gpu: bool = True, *, notice: bool = False) -> list[Batch]:
    """Every cell of the experiment (a :class:`Batch` without its chunk: ``chunk`` None), in the
    workflow's order.

    Parameters
    ----------
    experiment : dict
        As :func:`load_experiment` returns it.
    has_gpu : bool
        False drops the implementations that need a GPU.
    notice : bool
        Say on stderr which implementations were dropped.

    Returns
    -------
    list of Batch
        By algorithm, implementation, setting, function, D, NP, dtype.
    """
    from ..implementations import registry

    dropped = set()
    out = []
    for algorithm, spec in experiment["algorithms"].items():
        for implementation in spec["implementations"]:
            if not has_gpu and registry.get(algorithm, implementation).needs_gpu:
                dropped.add(f"{algorithm}/{implementation}")
                continue
            for setting in settings_of(experiment, algorithm):
                for function in experiment["functions"]:
                    for dim in dims_of(experiment, function):
                        for popsize in popsizes_of(experiment, algorithm):
                            if in_subgrids(experiment, function, dim, popsize):
                                out += [Batch(algorithm, implementation, function, dim, popsize, dtype, None, setting)
                                        for dtype in experiment["dtypes"]]
    if dropped and notice:
        print(f"gpude: no GPU on this machine: dropped {', '.join(sorted(dropped))} from experiment "
              f"{experiment['name']} (set gpu: yes to keep them, e.g. for a cluster)", file=sys.stderr)
    return out


def grid(experiment: dict, has_gpu: bool = True, *, notice: bool = False) -> list[Batch]:
    """Every batch job of the experiment: its :func:`cells`' chunks, in the workflow's order (the
    parameters as :func:`cells`')."""
    return [dataclasses.replace(cell, chunk=chunk) for cell in cells(experiment, has_gpu, notice=notice)
            for chunk in range(chunks(experiment, cell.algorithm, cell.implementation))]


# --- command lines ---------------------------------------------------------------------------------

def run_spec(experiment: dict, batch, first: int = 0, count: int = 1, concurrency: str | None = None, *,
             per_launch: int | None = None, experiment_file: str | None = None) -> RunSpec:
    """The :class:`~gpude.run.spec.RunSpec` of trials ``first .. first + count - 1`` of a batch (anything
    with the fields of :class:`Batch` but ``chunk``; ``setting`` optional): the setting's parameters,
    the budget at its D, the target, trials per launch (the experiment's, or ``per_launch``), plugins,
    the seed and suite; ``concurrency``: what the rows record of the batch's timing (default the
    experiment's ``timing``); an outside program's batch names ``experiment_file`` and keeps its failed
    runs as rows."""
    algorithm, implementation = batch.algorithm, batch.implementation
    program = implementation in experiment.get("programs", {})
    setting = getattr(batch, "setting", None)
    if per_launch is None:
        per_launch = per_implementation(experiment, "trials_per_launch", implementation, algorithm)
    if concurrency is None:
        concurrency = per_implementation(experiment, "timing", implementation, algorithm)
    return RunSpec.of(algorithm, implementation, batch.function, batch.dim, batch.popsize, batch.dtype,
                      max_fes=max_fes(experiment, int(batch.dim)),
                      parameters=settings_of(experiment, algorithm)[setting],
                      target=experiment["target"], max_time_s=experiment.get("max_time_s"),
                      trials_per_launch=per_launch if per_launch > 1 else None,
                      plugins=tuple(experiment.get("plugins", [])),
                      programs=experiment_file if program else None, trials=count, first_trial=first,
                      seed=experiment["seed"], suite=experiment["name"], setting=setting or "",
                      concurrency=concurrency, keep_failed=program)


# --- the experiment as one object ---------------------------------------------------------------------

#: keys of a Snakemake config that are the workflow's, not the experiment's
WORKFLOW_KEYS = ("scaling", "batch_server")


def configured_file(name: str, configfiles, config: dict) -> str:
    """The file a workflow's experiment came from: the last of ``configfiles`` (--configfile) that
    names it, else the config's ``experiment``, else ``config/experiments/<name>.yaml``."""
    for path in reversed([str(p) for p in configfiles]):
        if (yaml.safe_load(Path(path).read_text()) or {}).get("name") == name:
            return path
    return config.get("experiment", f"config/experiments/{name}.yaml")


@dataclasses.dataclass(frozen=True, eq=False)
class Experiment:
    """An experiment loaded and checked once (:func:`load_experiment`), and the file it came from.

    ``spec`` is the checked mapping that this module's functions (and the campaign's and report's)
    take; the methods are those functions bound to it. Made by :meth:`load` or :meth:`from_config`.
    """

    spec: dict
    file: str | None = None

    @classmethod
    def load(cls, source, *, file: str | None = None, **checks) -> Experiment:
        """The experiment of ``source`` (a file or a config: :func:`load_experiment`, which takes
        ``checks``); ``file`` defaults to ``source`` where that is a file."""
        return cls(load_experiment(source, **checks), file if file is not None or isinstance(source, dict)
                   else str(source))

    @classmethod
    def from_config(cls, config: dict, configfiles, *, section_class=None, **checks) -> Experiment:
        """The experiment of a Snakemake config (its :data:`WORKFLOW_KEYS` aside), and its file
        (:func:`configured_file`). ``section_class``: the report's section lookup
        (:func:`gpude.report.document.section_class`), so that a misspelt ``report: section:`` fails
        before any batch runs rather than in the report rule."""
        def check_section(spec):
            try:
                section_class(spec.get("report", {}).get("section"))
            except GpudeError as exc:
                raise ValueError(f"experiment {spec['name']}: report: {exc}") from None

        if section_class is not None:
            checks["after_schema"] = check_section
        spec = load_experiment({k: v for k, v in config.items() if k not in WORKFLOW_KEYS}, **checks)
        return cls(spec, configured_file(spec["name"], configfiles, config))

    @property
    def name(self) -> str:
        return self.spec["name"]

    @property
    def report(self) -> dict:
        """The experiment's ``report:`` settings (empty where it gives none)."""
        return self.spec.get("report", {})

    def get(self, key: str, default=None):
        """A key of the checked experiment."""
        return self.spec.get(key, default)

    def gpu_available(self) -> bool:
        """Whether its GPU implementations run: ``gpu: yes|no``, or for ``auto`` whether a GPU is usable here."""
        if self.spec["gpu"] != "auto":
            return self.spec["gpu"] == "yes"
        try:
            from ..functions.gpu import require_gpu

            require_gpu()
            return True
        except GpudeError:
            return False

    def grid(self, has_gpu: bool = True, *, notice: bool = False) -> list[Batch]:
        """Its batch jobs (:func:`grid`)."""
        return grid(self.spec, has_gpu, notice=notice)

    @property
    def param_grid(self) -> bool:
        """Whether it has a parameter grid (:func:`has_param_grid`)."""
        return has_param_grid(self.spec)

    def per_implementation(self, key: str, implementation: str, algorithm: str | None = None):
        """The key's value for an implementation (:func:`per_implementation`)."""
        return per_implementation(self.spec, key, implementation, algorithm)

    def chunk_trials(self, algorithm: str, implementation: str, chunk) -> tuple[int, int]:
        """A batch's first trial and number of trials (:func:`chunk_trials`)."""
        return chunk_trials(self.spec, algorithm, implementation, chunk)

    def run_spec(self, batch, first: int = 0, count: int = 1, concurrency: str | None = None) -> RunSpec:
        """A batch's :class:`~gpude.run.spec.RunSpec` (:func:`run_spec`; an outside program's names
        this experiment's file)."""
        return run_spec(self.spec, batch, first, count, concurrency, experiment_file=self.file)


# --- merging -----------------------------------------------------------------------------------------

def concat_trials(frames, where: str = "the inputs"):
    """Trial tables as one, refusing a trial that two of them hold (``where``: the tables, as the
    message names them)."""
    import pandas as pd

    merged = pd.concat(frames, ignore_index=True) if len(frames) else pd.DataFrame()
    # a run_id names a trial within its experiment (suite): a scaling set merges several
    key = [c for c in ("suite", "run_id") if c in merged]
    if "run_id" in merged and merged.duplicated(key).any():
        dup = merged["run_id"][merged.duplicated(key)].iloc[0]
        raise GpudeError(f"trial {dup} appears twice among {where}; nothing was merged")
    return merged


def refuse_failed(table, fix: str = "") -> None:
    """Refuse to merge a table with failed trials (``fix``: what to do, appended to the message)."""
    failed = table[table["status"].astype(str).str.startswith("error")] if len(table) else table
    if len(failed):
        raise GpudeError(f"{len(failed)} new trial(s) failed, e.g. {failed['run_id'].iloc[0]}: "
                         f"{failed['status'].iloc[0]}; nothing was merged{fix}")
