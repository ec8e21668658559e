# The workflow's configuration and the rules' input functions: the experiment read and checked once
# (gpude.study.experiment.Experiment), the host it runs on, and one-line calls into gpude.study.
import sys

from gpude.report.document import section_class
from gpude.report.section import FIGURES
from gpude.run import batch_server
from gpude.study import batch_inputs, batch_resources, cluster, gpu_scaling
from gpude.study import experiment as experiment_model
from gpude.study.experiment import Experiment
from gpude.study.paper_targets import GPU_SCALING_DIR, PaperTargets, beside, gpu_scaling_runs, one_of, reference_tables

#: the experiment's schema, beside this file's folder
EXPERIMENT_SCHEMA = "../schemas/experiment.schema.yaml"
INSTANCE_ROOT = batch_inputs.instance_root()


# On a cluster: SIGTERM cancels the submitted jobs, and a run that ends in error cancels those still
# queued (gpude.study.cluster says why Snakemake's own handling leaves them running).
onstart:
    cluster.cancel_on_sigterm(workflow)


onerror:
    cluster.cancel_left_behind(workflow)
    batch_server.stop_servers()


onsuccess:
    batch_server.stop_servers()


# The host's cores and GPUs, and the limits of the resources the batches share on one host
# (gpude.study.batch_resources; gpude.study.host_shape decides each batch's share)
HOST = batch_resources.local_host(workflow)
ON_CLUSTER = HOST.on_cluster

# On a local run, each GPU batch (its own job, as every batch) runs in its GPU's warm batch server,
# which pays the imports, the CUDA context and the kernels' loading once per GPU instead of once per
# batch (gpude.run.batch_server); `--config batch_server=false`: every batch its own process.
batch_server.configure_workflow(config, ON_CLUSTER)


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
EXPERIMENT = Experiment.from_config(config, workflow.configfiles, section_class=section_class,
                                    schema_path=workflow.source_path(EXPERIMENT_SCHEMA))
EXP = EXPERIMENT.name
GRID = EXPERIMENT.grid(EXPERIMENT.gpu_available(), notice=True)
# a parameter grid puts a folder per setting after the implementation's; a scaling set's experiments
# have none (load_set refuses them)
PARAM_GRID = EXPERIMENT.param_grid and not SCALING_FILE
if SCALING_FILE:
    SCALING_SET = gpu_scaling.load_set(SCALING_FILE)
    SCALING_BATCHES = gpu_scaling.set_batches(SCALING_SET)
    SCALING_TARGET = gpu_scaling.target(SCALING_FILE)
BATCH = experiment_model.batch_path(PARAM_GRID)
# a CPU batch's warm-up: the first batch's of its implementation and kind of problem (gpude.study.batch_inputs)
SHARED_WARMUP = batch_inputs.shared_warmups(GRID, EXP, batch_resources.on_gpu)
# a batch's warm-up marker (gpude.study.batch_inputs)
WARMUP = f"{BATCH}.warmup.json"

# the paper's figures' formats: PNG, which the REPORT shows, and those the experiment's figure_formats add
FIGURE_FORMATS = EXPERIMENT.spec.get("figure_formats", ["png"])


def prints(name, stem):
    """A figure's files in the formats other than PNG (none by default), as a rule's named outputs."""
    return {f"{name}_{ext}": f"{stem}.{ext}" for ext in FIGURE_FORMATS if ext != "png"}


def experiment_of(wildcards):
    """The experiment a job belongs to: the configured one, or one a scaling set picks from."""
    return EXPERIMENT if wildcards.experiment == EXP else gpu_scaling.experiment(wildcards.experiment)


def batch_log(step):
    """The log of a batch's job of this step (run_batch, warmup): the batch's path under logs/."""
    return f"logs/{{experiment}}/{step}/{BATCH.split('/batches/', 1)[1]}.log"


def batch_of(wildcards):
    """The batch job of a rule's wildcards (its chunk aside)."""
    return experiment_model.Batch(wildcards.algorithm, wildcards.implementation, wildcards.function, wildcards.dim,
                                  wildcards.popsize, wildcards.dtype, None, getattr(wildcards, "setting", None))


def batch_files(ext):
    return [job.path(EXP) + ext for job in GRID]


def instance_data(wildcards):
    return batch_inputs.instance_markers(wildcards.function)


def warmup_marker(wildcards):
    """The batch's warm-up marker, `ancient` (a warm-up re-run never re-runs a finished batch), or nothing:
    a CPU batch's is the first of its kind's (SHARED_WARMUP)."""
    batch = BATCH.format(**dict(wildcards.items()))
    marker = batch_inputs.warmup_marker(batch, can_make=not ON_CLUSTER and not workflow.remote_exec,
                                        shared=SHARED_WARMUP.get(batch))
    return [ancient(marker)] if marker else []


def batch_threads(wildcards):
    return batch_resources.threads(wildcards.algorithm, wildcards.implementation, on_cluster=ON_CLUSTER,
                                   cores=lambda: workflow.cores,
                                   node_threads=lambda: cluster.node_threads(EXPERIMENT.get("cluster_threads")))


def batch_shape(wildcards):
    """What HOST decides a batch's share from: its timing mode, whether on a GPU, its threads."""
    timing = experiment_of(wildcards).per_implementation("timing", wildcards.implementation, wildcards.algorithm)
    return timing, batch_resources.on_gpu(wildcards.algorithm, wildcards.implementation), batch_threads(wildcards)


def timing_slot(wildcards):
    return HOST.timing_slot(*batch_shape(wildcards))


def lane_taken(wildcards):
    return HOST.lane_taken(*batch_shape(wildcards))


def gpus_taken(wildcards):
    return HOST.gpus_taken(*batch_shape(wildcards)[:2])


def run_params(wildcards):
    """The batch's `gpude run` arguments: everything that should force a re-run when it changes, the
    label of the machine's other load while it was timed included (from the host, not --cores)."""
    first, count = experiment_of(wildcards).chunk_trials(wildcards.algorithm, wildcards.implementation, wildcards.chunk)
    return experiment_of(wildcards).run_spec(batch_of(wildcards), first, count,
                                             HOST.concurrency(*batch_shape(wildcards))).run_args()


def configuration_args(wildcards):
    """What a batch builds and compiles: the arguments its `gpude run` shares with its `gpude warmup`."""
    return experiment_of(wildcards).run_spec(batch_of(wildcards)).configuration_args()


implementations_on = batch_resources.implementations_on


# The report covers the configured experiment and every experiment with committed reference results
# (gpude.study.paper_targets)
PAPER = PaperTargets(EXPERIMENT, bool(GRID), section_class)
EXPERIMENT_FILES = PAPER.files
REPORTED = PAPER.reported
LOCAL_TARGETS = PAPER.local_targets
if PAPER.notice():
    print(PAPER.notice(), file=sys.stderr)
WALL_TIME_EXPERIMENTS = PAPER.wall_time_experiments
FIGURE_EXPERIMENTS = PAPER.figure_experiments
GPU_SCALING_RUNS = gpu_scaling_runs()
PROJECTED_EXPERIMENTS = PAPER.projected_experiments


def paper_sources(wildcards):
    return PAPER.sources(wildcards.experiment)


def presentation_files(wildcards):
    return PAPER.presentation_files(wildcards.experiment)


def published_args(wildcards):
    return PAPER.published_args(wildcards.experiment)
