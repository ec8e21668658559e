# Helpers of the gpude workflow: load and validate the experiment, build the grid of batch jobs.
import functools
import inspect
import shlex
import sys
from pathlib import Path

import yaml
from snakemake.utils import validate

from gpude import commands, registry
from gpude.errors import GpudeError
from gpude.host_shape import TIMING_SLOTS, HostShape


def load_experiment(config):
    """The experiment: the file named by config['experiment'], or a config given whole with
    --configfile; keys given with --config override either."""
    overrides = {k: v for k, v in config.items() if k != "experiment"}
    base = {}
    if "name" not in overrides:
        path = Path(config.get("experiment", "config/experiments/default.yaml"))
        if not path.is_file():
            raise ValueError(f"experiment file {path} not found; pass --configfile config/experiments/<name>.yaml")
        base = yaml.safe_load(path.read_text())
    experiment = {**base, **overrides}
    for key in ("trials", "trials_per_job", "trials_per_launch"):  # --config 'trials={default: 30, ide: 5}' gives strings
        if isinstance(experiment.get(key), dict):
            experiment[key] = {k: int(v) if str(v).isdigit() else v for k, v in experiment[key].items()}
    for key in ("dims", "popsizes"):  # --config 'dims=[10,50]' gives strings too
        if isinstance(experiment.get(key), list):
            experiment[key] = [int(v) if str(v).isdigit() else v for v in experiment[key]]
    validate_experiment(experiment)
    from gpude.algorithms import load_plugins
    from gpude.report.document import section_class

    try:  # a misspelt section would fail only in the report rule, after every batch ran
        section_class(experiment.get("report", {}).get("section"))
    except GpudeError as exc:
        raise ValueError(f"experiment {experiment['name']}: report: {exc}") from None

    load_plugins(experiment.get("plugins"))  # competitors registered outside the package
    try:  # outside programs (their spec in the experiment file) as implementations
        from gpude.implementations.external import register_programs

        register_programs(experiment.get("programs"))
    except GpudeError as exc:
        raise ValueError(f"experiment {experiment['name']}: {exc}") from None
    experiment["functions"] = check_functions(experiment)
    for function in experiment["functions"]:
        dims_of(experiment, function)  # an instance with a dimension not its own fails here
    check_subgrids(experiment)
    for algorithm, spec in experiment["algorithms"].items():
        for implementation in spec["implementations"]:
            try:
                registry.get(algorithm, implementation)
            except GpudeError as exc:
                raise ValueError(f"experiment {experiment['name']}: {exc}") from None
        check_algorithm_params(experiment, algorithm, spec)
    # names of registered implementations are allowed even when not run (--config may run a subset)
    known = {name for e in registry.entries() if e.algorithm in experiment["algorithms"]
             for name in (e.implementation, f"{e.algorithm}/{e.implementation}")}
    for key in PER_IMPLEMENTATION:
        if isinstance(experiment[key], dict):
            unknown = set(experiment[key]) - known - {"default"}
            if unknown:
                raise ValueError(f"experiment {experiment['name']}: {key} names {', '.join(sorted(unknown))}, "
                                 f"which is no implementation of {', '.join(experiment['algorithms'])}; "
                                 f"allowed keys: default, {', '.join(sorted(known))}")
    for algorithm, spec in experiment["algorithms"].items():
        for implementation in spec["implementations"]:
            per_launch = per_implementation(experiment, "trials_per_launch", implementation, algorithm)
            cls = registry.get(algorithm, implementation).load(check_device=False)
            if per_launch > 1 and "trials_per_launch" not in inspect.signature(cls.__init__).parameters:
                raise ValueError(f"experiment {experiment['name']}: trials_per_launch {per_launch} for "
                                 f"{algorithm}/{implementation}, which runs one trial at a time; give "
                                 f"trials_per_launch as a mapping {{default: 1, <GPU implementation>: n}}")
    return experiment


#: the experiment's schema, beside this file's folder
EXPERIMENT_SCHEMA = "../schemas/experiment.schema.yaml"


def validate_experiment(experiment):
    """Check the experiment against its schema and fill in the schema's defaults. A bad value fails
    with jsonschema's own words for its most relevant error, made readable: the failing key's path
    and value, and what the schema's description says the key takes."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match

    schema = yaml.safe_load(Path(workflow.source_path(EXPERIMENT_SCHEMA)).read_text())
    error = best_match(Draft202012Validator(schema).iter_errors(experiment))
    if error is not None:
        raise ValueError(f"experiment {experiment.get('name')}: {schema_error_message(error, schema)}")
    validate(experiment, EXPERIMENT_SCHEMA)  # the same schema: fills its defaults into the experiment


def schema_error_message(error, schema):
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


def check_functions(experiment):
    """The experiment's function ids as trial rows record them (F01 for f01; an instance's name as
    in the paper), or an error naming the unknown ones."""
    from gpude.functions import list_functions
    from gpude.functions.function import canonical_id

    from gpude.problems import registered_names

    known = {*list_functions("all"), *list_functions("lop"), *list_functions("etc"), *registered_names()}
    ids = [canonical_id(f) for f in experiment["functions"]]
    unknown = [f for f, i in zip(experiment["functions"], ids) if i not in known]
    if unknown:
        raise ValueError(f"experiment {experiment['name']}: unknown function(s) {', '.join(map(str, unknown))}; "
                         "`gpude functions` lists the functions, `gpude functions --suite lop|etc` the LOP and "
                         "ETC instances; an objective of your own is registered by a plugin (docs/tutorial.md)")
    return ids


def check_subgrids(experiment):
    """A subgrid's values must be the experiment's own (so that every check above covers them); its
    function ids as the rows record them."""
    from gpude.functions.function import canonical_id

    own = {"functions": experiment["functions"], "dims": experiment["dims"],
           "popsizes": {p for spec in experiment["algorithms"].values()
                        for p in spec.get("popsizes", experiment.get("popsizes") or [])}}
    for k, part in enumerate(experiment.get("subgrids", [])):
        if "functions" in part:
            part["functions"] = [canonical_id(f) for f in part["functions"]]
        for key, values in part.items():
            wrong = [v for v in values if v not in own[key]]
            if wrong:
                raise ValueError(f"experiment {experiment['name']}: subgrids[{k}].{key}: "
                                 f"{', '.join(map(str, wrong))} not among the experiment's {key} "
                                 f"({', '.join(map(str, sorted(own[key], key=str)))})")


def in_subgrids(experiment, function, dim, popsize):
    """Whether a cell runs: every cell without `subgrids`, else one that lies in any of them."""
    cell = dict(functions=function, dims=dim, popsizes=popsize)
    return "subgrids" not in experiment or any(
        all(cell[key] in values for key, values in part.items()) for part in experiment["subgrids"])


def dims_of(experiment, function):
    """The dimensions a function runs at: the experiment's dims, or an instance's own size."""
    from gpude.problems import instance_dim, problem_set

    dims = experiment["dims"]
    if problem_set(function):
        own = instance_dim(function)
        wrong = [d for d in dims if d != "instance" and int(d) != own]
        if wrong:
            raise ValueError(f"experiment {experiment['name']}: {function} has dimension {own} (its instance's "
                             f"size), not {', '.join(map(str, wrong))}; give dims: [instance]")
        return [own]
    if "instance" in dims:
        raise ValueError(f"experiment {experiment['name']}: dims: instance is the size of a LOP or ETC instance; "
                         f"{function} is a benchmark function and needs numeric dims")
    return dims


def _instance_root():
    from gpude.instances import data_dir

    return str(data_dir("lolib").parent)  # data/, or GPUDE_INSTANCE_DATA


INSTANCE_ROOT = _instance_root()


def instance_data(wildcards):
    """The marker of verified instance files a LOP or ETC job needs (nothing for a function)."""
    from gpude.instances import data_dir
    from gpude.problems import instance_data_set

    kind = instance_data_set(wildcards.function)
    return [str(data_dir(kind) / ".verified")] if kind else []


def algorithm_params(spec):
    """The algorithm's parameters given in the experiment (everything but its implementations and
    its own population sizes)."""
    return {k: v for k, v in spec.items() if k not in ("implementations", "popsizes")}


def param_settings(spec):
    """The algorithm's parameter settings as (label, parameters): one, labelled "", where every
    parameter has one value; where some list several (grid axes, the schema's lists), one per
    combination of their values, in the order the experiment gives the axes, labelled by the axes'
    values (F0.3_CR0.01: a folder of the batches and a part of the trials' run_ids)."""
    import itertools

    params = algorithm_params(spec)
    axes = [k for k, v in params.items() if isinstance(v, list)]
    if not axes:
        return [("", params)]
    return [("_".join(f"{k}{v}" for k, v in zip(axes, values)), {**params, **dict(zip(axes, values))})
            for values in itertools.product(*(params[k] for k in axes))]


def has_param_grid(experiment):
    """Whether any algorithm of the experiment lists several values for a parameter (a grid axis)."""
    return any(isinstance(v, list) for spec in experiment["algorithms"].values() for v in algorithm_params(spec).values())


def popsizes_of(experiment, algorithm):
    """The algorithm's population sizes: its own, or the experiment's."""
    return experiment["algorithms"][algorithm].get("popsizes", experiment.get("popsizes"))


def check_algorithm_params(experiment, algorithm, spec):
    """Build the algorithm's parameter object once, so a bad value fails before any job runs."""
    import dataclasses

    from gpude.algorithms import params_class

    Params = params_class(algorithm)
    fields = {f.name for f in dataclasses.fields(Params)} - {"popsize", "max_fes", "target", "dtype", "max_time_s"}
    unknown = set(algorithm_params(spec)) - fields
    if unknown:
        raise ValueError(f"experiment {experiment['name']}: algorithm {algorithm} has no parameter "
                         f"{', '.join(sorted(unknown))}; its parameters: {', '.join(sorted(fields))}")
    popsizes = popsizes_of(experiment, algorithm)
    if not popsizes:
        raise ValueError(f"experiment {experiment['name']}: no population sizes for algorithm {algorithm}; "
                         f"give popsizes for the experiment or under the algorithm")
    try:
        for popsize in popsizes:
            first_dim = dims_of(experiment, experiment["functions"][0])[0]
            for _, params in param_settings(spec):
                Params(popsize=popsize, max_fes=max(popsize, max_fes(experiment, first_dim)),
                       max_time_s=experiment.get("max_time_s"), **params)
    except GpudeError as exc:
        raise ValueError(f"experiment {experiment['name']}, algorithm {algorithm}: {exc}") from None


# keys that take one value, or a mapping {default: value, <implementation>: value}
PER_IMPLEMENTATION = ("trials", "trials_per_job", "trials_per_launch", "timing")


def per_implementation(experiment, key, implementation, algorithm=None):
    """The key's value for an implementation: a mapping's "<algorithm>/<implementation>" entry (when
    two algorithms have implementations of one name, e.g. pso/gpu and ss/gpu), else its
    "<implementation>" entry, else its default."""
    value = experiment[key]
    if isinstance(value, dict):
        if algorithm is not None and f"{algorithm}/{implementation}" in value:
            return value[f"{algorithm}/{implementation}"]
        return value.get(implementation, value["default"])
    return value


# Ctrl-C or SIGTERM on a cluster. Snakemake's own SIGTERM handler waits for every submitted job to
# end (hours), cancelling none, and so was killed with its jobs running (`kill`, the time limit of a
# job that runs Snakemake); the SLURM executor cancels its jobs only on Ctrl-C (KeyboardInterrupt).
# Here SIGTERM takes Ctrl-C's path: `scancel` of the jobs in flight, then exit after at most one
# status-check interval. `onstart` runs after the scheduler has set its own handler; the jobs' own
# Snakemake runs no hooks; a local run keeps Snakemake's handler (its jobs are its children).
onstart:
    if not workflow.local_exec:
        import signal

        def _cancel_on_sigterm(signum, frame):
            signal.signal(signal.SIGTERM, signal.SIG_IGN)  # once: a second one would break off scancel
            print("SIGTERM: cancelling the submitted jobs, then exiting", file=sys.stderr, flush=True)
            raise KeyboardInterrupt

        signal.signal(signal.SIGTERM, _cancel_on_sigterm)


# The executor cancels only the jobs in its list at that moment (those whose sbatch had returned,
# less any a status check in progress has taken out of it), while its two submission threads go on
# submitting the rest of the ready jobs (seen: 7 of 12 left queued after an early SIGTERM, and once
# one submitted before it). A run that ends in error has waited for its jobs, unless
# interrupted: whatever of it is still queued then (its jobs are named by its SLURM run ID) is left
# behind, and cancelled here (tests/test_slurm.py).
onerror:
    run_id = getattr(getattr(workflow.scheduler, "_executor", None), "run_uuid", None)
    if not workflow.local_exec and run_id:
        import subprocess

        subprocess.run(["scancel", "--name", run_id], check=False, timeout=60)


# A cluster executor (profiles/slurm: `executor: slurm`, `jobs: N`) leaves Snakemake's `nodes` set;
# a local run turns --jobs into --cores and leaves it unset. (The executor itself is chosen only
# after this file is read, so workflow.local_exec cannot tell here.)
ON_CLUSTER = workflow.nodes is not None
# The host's cores and GPUs, and what follows for the timed batches: the timing slots each takes, the
# label its rows record, the CPU lane (gpude.host_shape, where the tests check every shape).
HOST = HostShape.from_environment(on_cluster=ON_CLUSTER)
# On one host, the resources the jobs take need limits (Snakemake ignores a resource without one):
# as many GPU batches at once as GPUs (each leases its own in `gpude run`), and the timing slots.
# A --resources on the command line replaces the profile's whole `resources:` key, so the limits are
# set here, where one missing from --resources keeps its default. A cluster run (ON_CLUSTER) gets
# none: a global `gpu` limit would allow that many GPU jobs cluster-wide.
if not ON_CLUSTER:
    for name, limit in (("gpu", HOST.gpu_limit), ("timing_slot", TIMING_SLOTS)):
        if name not in workflow.global_resources:
            workflow.register_resource(name, limit)


def gpu_available(experiment):
    if experiment["gpu"] != "auto":
        return experiment["gpu"] == "yes"
    try:
        from gpude.functions.gpu import require_gpu

        require_gpu()
        return True
    except GpudeError:
        return False


def max_fes(experiment, dim):
    budget = experiment["max_fes"]
    if isinstance(budget, dict):
        if str(dim) not in {str(k) for k in budget}:
            raise ValueError(f"max_fes has no budget for dim {dim}; give one per dim in {experiment['dims']}")
        return int({str(k): v for k, v in budget.items()}[str(dim)])
    return int(budget)


def build_grid(experiment):
    """One entry per batch job: (algorithm, implementation, function, dim, popsize, dtype, chunk)."""
    has_gpu = gpu_available(experiment)
    dropped = set()
    jobs = []
    for algorithm, spec in experiment["algorithms"].items():
        for implementation in spec["implementations"]:
            if registry.get(algorithm, implementation).needs_gpu and not has_gpu:
                dropped.add(f"{algorithm}/{implementation}")
                continue
            n = per_implementation(experiment, "trials", implementation, algorithm)
            per_job = per_implementation(experiment, "trials_per_job", implementation, algorithm)
            # a parameter grid: every setting its own batches (a folder `setting`: "default" for an
            # algorithm without grid axes beside one with them)
            settings = [label or "default" for label, _ in param_settings(spec)] if has_param_grid(experiment) else [None]
            for setting in settings:
                for function in experiment["functions"]:
                    for dim in dims_of(experiment, function):
                        for popsize in popsizes_of(experiment, algorithm):
                            if not in_subgrids(experiment, function, dim, popsize):
                                continue
                            for dtype in experiment["dtypes"]:
                                for chunk in range((n + per_job - 1) // per_job):
                                    jobs.append(dict(algorithm=algorithm, implementation=implementation,
                                                     function=function, dim=dim, popsize=popsize,
                                                     dtype=dtype, chunk=chunk,
                                                     **({"setting": setting} if setting else {})))
    if dropped:
        print(f"gpude: no GPU on this machine: dropped {', '.join(sorted(dropped))} from experiment "
              f"{experiment['name']} (set gpu: yes to keep them, e.g. for a cluster)", file=sys.stderr)
    return jobs


# An experiment name never holds a '/': otherwise results/{experiment}/trials.csv would also match
# (and a merge job overwrite) the committed results/reference/<machine>/<experiment>/trials.csv.
wildcard_constraints:
    experiment="[A-Za-z0-9_-]+",
    chunk="[0-9]+",
    setting="[^/]+",


EXPERIMENT = load_experiment(config)
EXP = EXPERIMENT["name"]
GRID = build_grid(EXPERIMENT)
BATCH = ("results/{experiment}/batches/{algorithm}/{implementation}/{function}/d{dim}/np{popsize}/"
         "{dtype}/chunk{chunk}")
# an experiment with a parameter grid: a folder per parameter setting (param_settings) after the
# implementation's; without one, the batches stay where they were
PARAM_GRID = has_param_grid(EXPERIMENT)
if PARAM_GRID:
    BATCH = BATCH.replace("{implementation}/", "{implementation}/{setting}/")


def batch_log(step):
    """The log of a batch's job of this step (run_batch, warmup): the batch's path under logs/."""
    return f"logs/{{experiment}}/{step}/{BATCH.split('/batches/', 1)[1]}.log"


def setting_params(wildcards):
    """The algorithm's parameters of the batch's setting (the experiment's, without a grid)."""
    spec = EXPERIMENT["algorithms"][wildcards.algorithm]
    if not PARAM_GRID:
        return algorithm_params(spec)
    return {label or "default": params for label, params in param_settings(spec)}[wildcards.setting]


def batch_files(ext):
    return [BATCH.format(experiment=EXP, **job) + ext for job in GRID]


def chunk_trials(wildcards):
    n = per_implementation(EXPERIMENT, "trials", wildcards.implementation, wildcards.algorithm)
    per_job = per_implementation(EXPERIMENT, "trials_per_job", wildcards.implementation, wildcards.algorithm)
    first = int(wildcards.chunk) * per_job
    return {"first": first, "count": min(per_job, n - first)}


def timing_mode(wildcards):
    return per_implementation(EXPERIMENT, "timing", wildcards.implementation, wildcards.algorithm)


def run_params(wildcards):
    """Everything that should force a re-run when it changes, as one command-line fragment."""
    trials = chunk_trials(wildcards)
    # what the row records about the machine's other load while it was timed (from the host, not
    # --cores: a params change would re-run finished batches)
    concurrency = HOST.concurrency(timing_mode(wildcards), runs_on_gpu(wildcards), batch_threads(wildcards))
    return commands.run_args(configuration_args(wildcards), seed=EXPERIMENT["seed"], first=trials["first"],
                             count=trials["count"], suite=EXP, concurrency=concurrency,
                             keep_failed=wildcards.implementation in EXPERIMENT.get("programs", {}),
                             setting=wildcards.setting if PARAM_GRID else None)  # a grid: in the run_ids


def configuration_args(wildcards):
    """What a batch builds and compiles (the algorithm's parameters, budget, target, plugins): the
    arguments its `gpude run` shares with its `gpude warmup` (gpude.commands writes them)."""
    programs = EXPERIMENT.get("programs") and wildcards.implementation in EXPERIMENT["programs"]
    return commands.configuration_args(
        setting_params(wildcards), max_fes=max_fes(EXPERIMENT, int(wildcards.dim)), target=EXPERIMENT["target"],
        per_launch=per_implementation(EXPERIMENT, "trials_per_launch", wildcards.implementation, wildcards.algorithm),
        plugins=EXPERIMENT.get("plugins", []), max_time_s=EXPERIMENT.get("max_time_s"),
        programs_file=_experiment_file(EXP) if programs else None)


# Compilation outside the timed window: a batch's `gpude warmup` job compiles what its `gpude run`
# needs into numba's on-disk cache (docs/startup.md), in parallel on the host's cores and without
# the exclusive timing slot; the batch, run alone, then only loads it. Its marker (beside the
# batch's outputs, one per batch: the chunks of a cell share the compiled code, and `gpude warmup`
# compiles a configuration once while the others wait and load it) is an input of the batch,
# `ancient` (a warm-up re-run never re-runs a finished batch), and only where it exists or the batch
# is still to make: a batch finished before warm-ups existed keeps its recorded set of inputs and
# stays up to date (Snakemake re-runs a job whose set of inputs changed; a marker deleted alone
# re-runs its batch). On a cluster a warm-up would compile on another node (maybe for another GPU),
# so there the batches compile in their own jobs, as before.
WARMUP = f"{BATCH}.warmup.json"


def warmup_marker(wildcards):
    """The batch's warm-up marker, as an input of the batch (see above), or nothing."""
    batch = BATCH.format(**dict(wildcards.items()))
    marker = f"{batch}.warmup.json"
    to_make = not (Path(f"{batch}.csv").is_file() and Path(f"{batch}.npz").is_file())
    # (a cluster job's own Snakemake, on the node, runs in remote mode with `nodes` unset: it must not
    # ask for the marker the submitting process left out)
    if Path(marker).is_file() or (to_make and not ON_CLUSTER and not workflow.remote_exec):
        return [ancient(marker)]
    return []


def batch_threads(wildcards):
    # an implementation registered with threads="all" (master_slave's worker pool) gets every core:
    # of this machine, or on a cluster a node's (cluster_threads, or what sinfo says)
    entry = registry.get(wildcards.algorithm, wildcards.implementation)
    if entry.threads != "all":
        return 1
    return cluster_threads() if ON_CLUSTER else workflow.cores


@functools.cache
def cluster_threads():
    """Threads of a job that wants a whole node on the cluster: the experiment's `cluster_threads`,
    else the fewest CPUs of a node in the default partition (`sinfo`), so that it fits on any node."""
    if EXPERIMENT.get("cluster_threads"):
        return int(EXPERIMENT["cluster_threads"])
    import subprocess

    try:
        out = subprocess.run(["sinfo", "-h", "-o", "%c"], capture_output=True, text=True, timeout=60).stdout
        return min(int(v.rstrip("+")) for v in out.split())
    except (OSError, subprocess.SubprocessError, ValueError):
        return 1


def runs_on_gpu(wildcards):
    return registry.get(wildcards.algorithm, wildcards.implementation).needs_gpu


def timing_slot(wildcards):
    """A batch's share of the timing slots (gpude.host_shape: by its timing mode and the host)."""
    return HOST.timing_slot(timing_mode(wildcards), runs_on_gpu(wildcards), batch_threads(wildcards))


def gpus_taken(wildcards):
    """GPUs a batch holds in the scheduler (gpude.host_shape: its own on a GPU; every GPU when timed
    `host`)."""
    return HOST.gpus_taken(timing_mode(wildcards), runs_on_gpu(wildcards))


def implementations_on(device):
    """Regex alternatives for a rule's implementation wildcard, from the registry."""
    return "|".join(sorted({e.implementation for e in registry.entries() if e.device == device}))


def _experiment_file(name):
    """The YAML file the configured experiment came from (--configfile, or config['experiment'])."""
    for path in reversed([str(p) for p in workflow.configfiles]):
        if (yaml.safe_load(Path(path).read_text()) or {}).get("name") == name:
            return path
    return config.get("experiment", f"config/experiments/{name}.yaml")


EXPERIMENT_FILES = {p.stem: str(p) for p in sorted(Path("config/experiments").glob("*.yaml"))}
EXPERIMENT_FILES[EXP] = _experiment_file(EXP)


def reference_tables(experiment):
    """Committed trial tables of an experiment, one per machine that ran it: trials.csv, or
    trials.csv.gz for a large one that no campaign completes any more (the GPU host's calls carry
    the whole tree, 64 MiB with the wheels; pandas reads either)."""
    tables = []
    for folder in sorted(Path("results/reference").glob(f"*/{experiment}")):
        found = [folder / name for name in ("trials.csv", "trials.csv.gz") if (folder / name).is_file()]
        if len(found) > 1:
            raise ValueError(f"{folder} holds both trials.csv and trials.csv.gz: keep one")
        tables += [str(p) for p in found]
    return tables


def beside(table, name):
    """The file ``name`` (traces.npz, rerun_check.csv) in the folder of a trials table."""
    return str(Path(table).with_name(name))


def paper_sources(wildcards):
    """The trial tables a paper output is made from: the committed reference results of the
    experiment, plus this run's when it is the configured experiment."""
    local = [f"results/{EXP}/trials.csv"] if wildcards.experiment == EXP and GRID else []
    sources = reference_tables(wildcards.experiment) + local
    if not sources:
        raise ValueError(f"no results for experiment {wildcards.experiment}: run it, or commit "
                         f"results/reference/<machine>/{wildcards.experiment}/trials.csv")
    return sources


# The report covers the configured experiment and every experiment with committed reference results.
REPORTED = ([EXP] if GRID or reference_tables(EXP) else []) + \
    [e for e in EXPERIMENT_FILES if e != EXP and reference_tables(e)]
# Nothing to run here (e.g. a GPU-only experiment on a machine without a GPU): the paper outputs come
# from the committed reference results alone.
LOCAL_TARGETS = [f"results/{EXP}/trials.csv", f"results/{EXP}/stats/rank_sum_time.csv"] if GRID else []
if not GRID:
    print(f"gpude: experiment {EXP} has nothing to run on this machine; " +
          (f"its tables come from results/reference/*/{EXP}/ only" if EXP in REPORTED else
           "nor reference results: the report covers the other experiments"), file=sys.stderr)


def _presentation(wildcards):
    path = EXPERIMENT_FILES.get(wildcards.experiment)
    spec = (EXPERIMENT if wildcards.experiment == EXP else yaml.safe_load(Path(path).read_text()))
    return spec.get("report", {})  # (`report` is a Snakemake keyword)


def presentation_files(wildcards):
    """The CSVs the experiment's `report:` names (inputs of its paper tables, so a change re-runs them)."""
    presentation = _presentation(wildcards)
    # a reference's rerun check (`gpude rerun-check`) beside its trials.csv goes into the report too
    reruns = [beside(p, "rerun_check.csv") for p in reference_tables(wildcards.experiment)]
    return [presentation[k] for k in ("published", "alone", "crosscheck") if presentation.get(k)] + \
        list(presentation.get("compare", {}).values()) + list(presentation.get("study_inputs", {}).values()) + \
        [p for p in reruns if Path(p).is_file()]


def generic_outputs(experiment):
    """The optional generic outputs of `gpude paper` (gpude.report.document.GENERIC_OUTPUTS) the
    experiment's report section wants."""
    from gpude.report.document import section_class

    spec = EXPERIMENT if experiment == EXP else yaml.safe_load(Path(EXPERIMENT_FILES[experiment]).read_text())
    try:
        return section_class(spec.get("report", {}).get("section")).generic_outputs
    except GpudeError:  # a misspelt section of another experiment fails in its own paper job
        return section_class(None).generic_outputs


#: the experiments whose paper outputs include the wall-time tables and figure
WALL_TIME_EXPERIMENTS = sorted(e for e in EXPERIMENT_FILES if "time" in generic_outputs(e))


def one_of(names):
    """A wildcard constraint matching exactly these names (nothing, for none)."""
    return "|".join(sorted(names)) or "(?!)"


def published_args(wildcards):
    """The paper's own numbers (and other measured tables) to put beside ours, where the
    experiment names them."""
    presentation = _presentation(wildcards)
    args = [f"--published {presentation['published']}"] if presentation.get("published") else []
    args += [f"--compare {shlex.quote(f'{label}={csv}')}" for label, csv in presentation.get("compare", {}).items()]
    args += [f"--alone {presentation['alone']}"] if presentation.get("alone") else []
    args += [f"--study {presentation['section']}"] if presentation.get("section") else []
    args += [f"--study-input {shlex.quote(f'{name}={path}')}" for name, path in presentation.get("study_inputs", {}).items()]
    return " ".join(args)
