# Helpers of the gpude workflow: the experiment and its grid of batch jobs (gpude.study.experiment), the
# rules' inputs, params and resources.
import functools
import shlex
import sys
from pathlib import Path

import yaml

from gpude.implementations import registry
from gpude.study import experiment as experiment_model
from gpude.core.errors import GpudeError
from gpude.study.host_shape import TIMING_SLOTS, HostShape
from gpude.study.projection import PAPER_EXPERIMENTS


def check_report_section(experiment):
    """A misspelt report section would fail only in the report rule, after every batch ran."""
    from gpude.report.document import section_class

    try:
        section_class(experiment.get("report", {}).get("section"))
    except GpudeError as exc:
        raise ValueError(f"experiment {experiment['name']}: report: {exc}") from None


#: the experiment's schema, beside this file's folder
EXPERIMENT_SCHEMA = "../schemas/experiment.schema.yaml"


def _instance_root():
    from gpude.problems.instances import data_dir

    return str(data_dir("lolib").parent)  # data/, or GPUDE_INSTANCE_DATA


INSTANCE_ROOT = _instance_root()


def instance_data(wildcards):
    """The marker of verified instance files a LOP or ETC job needs (nothing for a function)."""
    from gpude.problems.instances import data_dir
    from gpude.problems import instance_data_set

    kind = instance_data_set(wildcards.function)
    return [str(data_dir(kind) / ".verified")] if kind else []


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
# The host's GPUs listed once, for every batch this run starts (nvidia-smi takes a moment per call)
if not ON_CLUSTER:
    from gpude.core.gpu_lease import export_devices

    export_devices()
# The host's cores and GPUs, and what follows for the timed batches: the timing slots each takes, the
# label its rows record, the CPU lane (gpude.study.host_shape, where the tests check every shape).
HOST = HostShape.from_environment(on_cluster=ON_CLUSTER)
# On one host, the resources the jobs take need limits (Snakemake ignores a resource without one):
# as many GPU batches at once as GPUs (each leases its own in `gpude run`), or twice as many where a
# second one per GPU starts up while the first runs (HOST.prefetch), and the timing slots.
# A --resources on the command line replaces the profile's whole `resources:` key, so the limits are
# set here, where one missing from --resources keeps its default. A cluster run (ON_CLUSTER) gets
# none: a global `gpu` limit would allow that many GPU jobs cluster-wide.
if not ON_CLUSTER:
    for name, limit in (("gpu", HOST.gpu_jobs), ("timing_slot", TIMING_SLOTS)):
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


# An experiment name never holds a '/': otherwise results/{experiment}/trials.csv would also match
# (and a merge job overwrite) the committed results/reference/<machine>/<experiment>/trials.csv.
wildcard_constraints:
    experiment="[A-Za-z0-9_-]+",
    chunk="[0-9]+",
    setting="[^/]+",


# A scaling set (`--config scaling=config/scaling/<name>.yaml`, gpude.study.gpu_scaling): GPU batches of
# several experiments in one run, each batch with its own experiment's settings; the run's target is
# their merged table, results/gpu_scaling/<name>/trials.csv (docs/scaling.md)
SCALING_FILE = config.get("scaling")
EXPERIMENT = experiment_model.load_experiment({k: v for k, v in config.items() if k != "scaling"},
                                             schema_path=workflow.source_path(EXPERIMENT_SCHEMA),
                                             after_schema=check_report_section)
EXP = EXPERIMENT["name"]
GRID = experiment_model.grid(EXPERIMENT, gpu_available(EXPERIMENT), notice=True)
# an experiment with a parameter grid: a folder per parameter setting (param_settings) after the
# implementation's; without one, the batches stay where they were
PARAM_GRID = experiment_model.has_param_grid(EXPERIMENT)
if SCALING_FILE:
    from gpude.study import gpu_scaling

    SCALING_SET = gpu_scaling.load_set(SCALING_FILE)
    SCALING_BATCHES = gpu_scaling.set_batches(SCALING_SET)
    SCALING_TARGET = gpu_scaling.target(SCALING_FILE)
    PARAM_GRID = False  # a set's experiments have none (load_set refuses them)
BATCH = experiment_model.batch_path(PARAM_GRID)


def experiment_of(wildcards):
    """The experiment a job belongs to: the configured one, or one a scaling set picks from."""
    if wildcards.experiment == EXP:
        return EXPERIMENT
    from gpude.study import gpu_scaling

    return gpu_scaling.experiment_named(wildcards.experiment)


def batch_log(step):
    """The log of a batch's job of this step (run_batch, warmup): the batch's path under logs/."""
    return f"logs/{{experiment}}/{step}/{BATCH.split('/batches/', 1)[1]}.log"


def batch_of(wildcards):
    """The batch job of a rule's wildcards (its chunk aside)."""
    return experiment_model.Batch(wildcards.algorithm, wildcards.implementation, wildcards.function,
                                  wildcards.dim, wildcards.popsize, wildcards.dtype, None,
                                  getattr(wildcards, "setting", None))


def batch_files(ext):
    return [job.path(EXP) + ext for job in GRID]


def timing_mode(wildcards):
    return experiment_model.per_implementation(experiment_of(wildcards), "timing", wildcards.implementation,
                                               wildcards.algorithm)


def run_params(wildcards):
    """Everything that should force a re-run when it changes, as one command-line fragment."""
    experiment = experiment_of(wildcards)
    first, count = experiment_model.chunk_trials(experiment, wildcards.algorithm, wildcards.implementation,
                                                 wildcards.chunk)
    # what the row records about the machine's other load while it was timed (from the host, not
    # --cores: a params change would re-run finished batches)
    concurrency = HOST.concurrency(timing_mode(wildcards), runs_on_gpu(wildcards), batch_threads(wildcards))
    return run_spec(wildcards, first, count, concurrency).run_args()


def configuration_args(wildcards):
    """What a batch builds and compiles (the algorithm's parameters, budget, target, plugins): the
    arguments its `gpude run` shares with its `gpude warmup` (its RunSpec's)."""
    return run_spec(wildcards).configuration_args()


def run_spec(wildcards, first=0, count=1, concurrency=None):
    """The batch's gpude.run.spec.RunSpec, from the experiment model."""
    experiment = experiment_of(wildcards)
    name = experiment["name"]
    return experiment_model.run_spec(
        experiment, batch_of(wildcards), first, count, concurrency,
        experiment_file=(_experiment_file(EXP) if name == EXP else EXPERIMENT_FILES[name])
        if wildcards.implementation in experiment.get("programs", {}) else None)


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
    """A batch's share of the timing slots (gpude.study.host_shape: by its timing mode and the host)."""
    return HOST.timing_slot(timing_mode(wildcards), runs_on_gpu(wildcards), batch_threads(wildcards))


def gpus_taken(wildcards):
    """GPUs a batch holds in the scheduler (gpude.study.host_shape: its own on a GPU; every GPU when timed
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


# The committed scaling runs (gpude.study.gpu_scaling writes a folder's rows.csv and batches.csv) and the
# experiments whose GPU references `gpude paper-gpu-scaling` projects (the five papers', where committed)
GPU_SCALING_DIR = "results/benchmarks/gpu_scaling"
GPU_SCALING_RUNS = sorted(str(p.parent) for p in Path(GPU_SCALING_DIR).glob("*/rows.csv")
                          if (p.parent / "batches.csv").is_file())
PROJECTED_EXPERIMENTS = [e for e in PAPER_EXPERIMENTS if e in EXPERIMENT_FILES and reference_tables(e)]
