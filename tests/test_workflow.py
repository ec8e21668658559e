"""The Snakemake workflow: dry-run job counts, config validation, lint, and the smoke experiment
end to end (CPU implementations; GPU ones are dropped on a machine without a GPU)."""

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from _helpers import once_per_run

ROOT = Path(__file__).resolve().parents[1]


def copy_workflow(dest):
    for name in ("Snakefile", "workflow", "config", "profiles", "paper/published", "results/reference",
                 "results/benchmarks", "results/validation"):
        src = ROOT / name
        if src.exists():
            (shutil.copytree if src.is_dir() else shutil.copy)(src, dest / name)
    return dest


@pytest.fixture()
def workdir(tmp_path):
    """A copy of the workflow, so runs never write into the repository."""
    return copy_workflow(tmp_path)


SMOKE = ("--configfile", "config/experiments/smoke.yaml")
REFERENCE_STUDIES = sorted({p.parent.name for p in ROOT.glob("results/reference/*/*/trials.csv*")})
#: studies whose runs have a time budget: their report sections want no wall-time tables
TIME_BUDGET_STUDIES = ["kromer_etc", "kromer_lop", "kromer_rastrigin", "nashed"]


def snakemake(workdir, *args, timeout=600, env=None):
    """(exit status, output) of `snakemake *args` in ``workdir``, in this environment changed by ``env``
    (a variable set to None is removed)."""
    changed = {**os.environ, **(env or {})}
    res = subprocess.run([sys.executable, "-m", "snakemake", *args], cwd=workdir, capture_output=True,
                         text=True, timeout=timeout, env={k: v for k, v in changed.items() if v is not None})
    return res.returncode, res.stdout + res.stderr


def job_counts(text):
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)$", text, re.M)}


#: the host a dry run schedules for, whatever machine makes it: 2 cores (CI's), and every fake GPU
#: of GPUDE_FAKE_GPUS (CUDA_VISIBLE_DEVICES would hide some of them: gpude.core.gpu_lease.list_devices)
DRY_RUN_HOST = {"GPUDE_HOST_CORES": "2", "CUDA_VISIBLE_DEVICES": None, "GPUDE_GPU_PREFETCH": None,
                "GPUDE_GPU_DEVICES": None}


@pytest.fixture(scope="session")
def smoke_dry_run(tmp_path_factory):
    """``smoke_dry_run(*config, env=...)``: (exit status, output) of `snakemake -n -p --cores 2` of the
    smoke experiment with these --config values, on DRY_RUN_HOST changed by ``env`` (None removes a
    variable), each made once per test run (_helpers.once_per_run): several tests below read the same
    dry run."""
    def dry_run(*config, env=None):
        env = {**DRY_RUN_HOST, **(env or {})}

        def make(folder):
            return snakemake(copy_workflow(folder), "-n", "-p", "--cores", "2", *SMOKE, "--config", *config, env=env)

        key = hashlib.sha1(repr((config, sorted(env.items()))).encode()).hexdigest()[:12]
        return tuple(once_per_run(tmp_path_factory, f"smoke_dry_run_{key}", make))

    return dry_run


@pytest.mark.parametrize("gpu,cpu_jobs,gpu_jobs", [("no", 8, 0), ("yes", 8, 12)])
def test_dry_run_builds_one_job_per_cell_and_chunk(smoke_dry_run, gpu, cpu_jobs, gpu_jobs):
    # smoke: 2 functions x 1 dim x 1 popsize x 1 dtype x 2 chunks (3 trials, 2 per job)
    code, out = smoke_dry_run(f"gpu={gpu}")
    assert code == 0, out
    counts = job_counts(out)
    assert counts.get("run_batch", 0) == cpu_jobs and counts.get("run_batch_gpu", 0) == gpu_jobs
    assert counts["merge_trials"] == 1 and counts["statistics"] == 1 and counts["report"] == 1
    # paper tables of this experiment and of every study with committed reference results (those
    # with a time budget by the rule that leaves the wall-time tables out)
    assert counts["paper_tables"] + counts.get("paper_tables_time_budget", 0) == 1 + len(REFERENCE_STUDIES)
    assert counts.get("paper_tables_time_budget", 0) == len(set(REFERENCE_STUDIES) & set(TIME_BUDGET_STUDIES))
    if gpu == "no":
        assert "dropped de/all_gpu, de/ide, de/naive_gpu" in out


def test_the_workflow_s_own_keys_are_not_taken_for_the_experiment_s(smoke_dry_run):
    # `--config batch_server=false` (README: every GPU batch its own process) is the workflow's switch:
    # the experiment's schema, which refuses keys it does not know, never sees it
    code, out = smoke_dry_run("gpu=yes", "batch_server=false")
    assert code == 0, out[-3000:]
    assert job_counts(out).get("run_batch_gpu", 0) == 12


def test_wall_time_tables_only_for_experiments_whose_report_wants_them(smoke_dry_run):
    # a study with a time budget (its report section's generic_outputs) gets no wall-time tables or
    # figure; a fixed-FE study (and an experiment with the generic section) still does
    from gpude.report.document import section_class

    for study in TIME_BUDGET_STUDIES:
        spec = yaml.safe_load((ROOT / f"config/experiments/{study}.yaml").read_text())
        assert "max_time_s" in spec and "time" not in section_class(spec["report"]["section"]).generic_outputs
    code, out = smoke_dry_run("gpu=no")
    assert code == 0, out[-3000:]
    jobs = {re.search(r"wildcards: experiment=(\w+)", j).group(1): j for j in out.split("\nrule ")
            if j.startswith("paper_tables")}
    assert set(jobs) == {"smoke", *REFERENCE_STUDIES}
    for experiment, job in jobs.items():
        timed = experiment in TIME_BUDGET_STUDIES
        assert job.startswith("paper_tables_time_budget:" if timed else "paper_tables:"), job
        assert ("table_time.md" in job and "figure_time.png" in job) != timed, job
        assert "table_error.csv" in job and "convergence_time.png" not in job  # paper_figures draws it


def test_figures_of_every_trial_only_for_experiments_whose_report_shows_them(smoke_dry_run):
    # the figures of every trial cost most of a paper job: drawn (before the report, which shows them)
    # for the experiments whose section shows them; any other's on request
    from gpude.report.document import section_class

    code, out = smoke_dry_run("gpu=no")
    assert code == 0, out[-3000:]
    def section(study):
        return yaml.safe_load((ROOT / f"config/experiments/{study}.yaml").read_text()).get("report", {}).get("section")

    shows = {"smoke"} | {s for s in REFERENCE_STUDIES if "figures" in section_class(section(s)).generic_outputs}
    assert {"janssen_cs1", "lastra_cpu"} <= shows and "nashed" not in shows and "qin" not in shows
    jobs = {re.search(r"wildcards: experiment=(\w+)", j).group(1): j for j in out.split("\nrule ")
            if j.startswith("paper_figures")}
    assert set(jobs) == shows
    for job in jobs.values():
        assert "convergence.png" in job and "ecdf.png" in job and "table_error.csv" not in job.split("output:")[1]
        assert "--figures only" in job, job
    report = next(j for j in out.split("\nrule ") if j.startswith("report:"))
    assert all(f"paper/{e}/error_vs_time.png" in report.split("output:")[0] for e in shows), report[:3000]


def job_resources(text):
    """{rule: set of the resource strings its jobs ask for} from a dry run's job list."""
    found = {}
    for rule, resources in re.findall(r"^rule (\w+):\n(?:    .*\n)*?    resources: (.*)$", text, re.M):
        found.setdefault(rule, set()).add(re.sub(r"tmpdir=[^,]*(, )?", "", resources))
    return found


@pytest.mark.parametrize("timing,gpu_batch,cpu_batch", [
    # (no CPU lane on 2 cores: a CPU batch takes none)
    ("exclusive", "gpu=1, timing_slot=500", "gpu=0, timing_slot=1000, cpu_lane=0"),  # alone on its GPU: two at once
    ("shared", "gpu=1, timing_slot=1", "gpu=0, timing_slot=1, cpu_lane=0"),
    ("host", "gpu=2, timing_slot=1000", "gpu=2, timing_slot=1000, cpu_lane=0"),      # alone on the host
])
def test_a_host_with_two_gpus_runs_two_gpu_batches_at_once(smoke_dry_run, timing, gpu_batch, cpu_batch):
    # the limits come from the host (2 fake GPUs, and 2 cores: too few for a CPU lane, GPUDE_CPU_LANE
    # unset); what each batch takes, from its timing mode
    code, out = smoke_dry_run("gpu=yes", f"timing={timing}", env={"GPUDE_FAKE_GPUS": "2", "GPUDE_CPU_LANE": None})
    assert code == 0, out
    resources = job_resources(out)
    assert resources["run_batch_gpu"] == {gpu_batch} and resources["run_batch"] == {cpu_batch}


def test_a_single_threaded_cpu_batch_runs_beside_the_gpu_batches_where_cores_are_free(smoke_dry_run):
    # 32 cores and 4 GPUs (GPUDE_CPU_LANE unset: a lane, the cores being at least the GPUs + 2; not
    # --cores, still 2; no second batch per GPU, whose shares tests/test_host_shape.py checks): 12 CPU
    # lanes (half the cores less the 4 GPU batches), so the GPU batches and sequential's take 1/16 of the
    # slots each (16 lanes timed at once, each on a core of its own) and say so in their rows;
    # master_slave's pool still runs alone. Fewer cores (or
    # GPUDE_CPU_LANE=0) time CPU batches alone: the two-GPU test above, on 2; every other shape:
    # tests/test_host_shape.py
    code, out = smoke_dry_run("gpu=yes", "timing=exclusive",
                              env={"GPUDE_HOST_CORES": "32", "GPUDE_FAKE_GPUS": "4", "GPUDE_CPU_LANE": None,
                                   "GPUDE_GPU_PREFETCH": "0"})
    assert code == 0, out
    jobs, lanes = {}, {}
    for job in out.split("\nrule "):
        if job.startswith(("run_batch:", "run_batch_gpu:")):
            impl = re.search(r"implementation=(\w+)", job).group(1)
            slot = re.search(r"timing_slot=(\d+)", job).group(1)
            label = re.search(r"--concurrency (\S+)", job).group(1)
            jobs.setdefault(impl, set()).add((slot, label))
            lane = re.search(r"cpu_lane=(\d+)", job)  # (the GPU rule asks for none)
            lanes.setdefault(impl, set()).add(lane.group(1) if lane else None)
    assert jobs["sequential"] == {("62", "exclusive-cpu:16")}
    # each takes a lane (a resource of its own, HostShape.lane_jobs of it: 12 here, tests/test_host_shape.py)
    assert lanes["sequential"] == {"1"} and lanes["master_slave"] == {"0"} and lanes["ide"] == {None}
    assert jobs["naive_gpu"] == jobs["ide"] == {("62", "exclusive-gpu:4+cpu")}
    assert jobs["master_slave"] == {("1000", "exclusive")}
    from gpude.run.rows import timed_alone

    labels = pd.Series(["exclusive-cpu:3", "exclusive-gpu:2+cpu", "exclusive", "shared", "exclusive-gpu:2"])
    assert timed_alone(labels).tolist() == [True, True, True, False, True]


@pytest.mark.parametrize("gpus", ["1", "2"])
def test_each_timed_batch_depends_on_its_warm_up_which_takes_no_exclusive_resource(smoke_dry_run, gpus):
    # (with 2 GPUs, the two-GPU test's exclusive case's dry run)
    code, out = smoke_dry_run("gpu=yes", "timing=exclusive", env={"GPUDE_FAKE_GPUS": gpus, "GPUDE_CPU_LANE": None})
    assert code == 0, out
    jobs = out.split("\nrule ")
    warmups = {re.search(r"output: (\S+)", j).group(1): j for j in jobs if j.startswith("warmup:")}
    batches = [j for j in jobs if j.startswith(("run_batch:", "run_batch_gpu:"))]
    # a GPU batch has a warm-up of its own (kernels built per function); the CPU batches of an
    # implementation share the first one's (its compiled code serves every function, D and chunk)
    assert len(batches) == 20 and len(warmups) == 12 + 2
    shared = {}
    for batch in batches:
        csv = re.search(r"output: (\S+)\.csv,", batch).group(1)
        marker = re.search(r"input: .*?(\S+\.warmup\.json)", batch).group(1)  # runs after that warm-up
        assert marker in warmups
        if batch.startswith("run_batch_gpu:"):
            assert marker == f"{csv}.warmup.json"
        else:
            implementation = csv.split("/batches/de/")[1].split("/")[0]
            assert f"/batches/de/{implementation}/" in marker
            shared.setdefault(implementation, set()).add(marker)
    assert sorted(len(m) for m in shared.values()) == [1, 1] and len(shared) == 2
    resources = job_resources(out)
    assert resources["warmup"] == {"gpu=0, timing_slot=1"}  # never the exclusive slot, never a GPU lease
    assert resources["run_batch"] == {"gpu=0, timing_slot=1000, cpu_lane=0"}
    assert resources["run_batch_gpu"] == {f"gpu=1, timing_slot={1000 // int(gpus)}"}


# (the Krömer pilot's ten stage files parse in one process: tests/test_kromer_pilot.py; the two
# scaling-curve files in one process too: tests/test_scaling_curves.py)
EXPERIMENTS = sorted(p.name for p in (ROOT / "config/experiments").glob("*.yaml")
                     if not p.name.startswith(("kromer_pilot_", "scaling_curves")))


def test_the_experiments_are_there():
    assert {"default.yaml", "smoke.yaml", "janssen_cs1.yaml", "qin.yaml", "nashed.yaml", "lastra.yaml",
            "kromer_lop.yaml"} <= set(EXPERIMENTS)


def test_a_machine_without_gpu_parses_every_experiment(tmp_path):
    # no simulator and no visible GPU, as on a laptop: the GPU implementations' classes are looked at
    # (their options) but never asked for a device, and their jobs are dropped with a notice. Every
    # experiment's dry run (`snakemake -n -p`'s) through Snakemake's API, all in one process
    # (tests/_parse_experiments.py): a `snakemake -n` process each spent ~3 s starting up.
    from test_experiment_model import campaign_batches, dry_run_batches

    copy_workflow(tmp_path)
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "0", "CUDA_VISIBLE_DEVICES": ""}
    dry_runs = [arg for name in EXPERIMENTS for arg in ("--dry-run", f"config/experiments/{name}")]
    res = subprocess.run([sys.executable, str(ROOT / "tests/_parse_experiments.py"), "dry_runs.json", *dry_runs],
                         cwd=tmp_path, capture_output=True, text=True, timeout=600, env=env)
    assert res.returncode == 0, res.stderr[-2000:]
    runs = {Path(path).name: run for path, run in json.loads((tmp_path / "dry_runs.json").read_text()).items()}
    assert sorted(runs) == EXPERIMENTS
    for name, run in runs.items():
        assert run["error"] is None, (name, run["error"], run["stderr"][-2000:])
        assert "Job stats:" in run["stderr"], (name, run["stderr"][-2000:])  # the DAG built, its jobs listed
        assert "dropped" in run["stderr"] or "ide" not in (ROOT / "config/experiments" / name).read_text(), name
        # the dry run's batches are the campaign's plan (the experiment model's grid), without a GPU alike
        planned = campaign_batches(ROOT / "config/experiments" / name, has_gpu=False)
        assert dry_run_batches(run["stderr"]) == planned, name


def test_default_experiment_grid(workdir):
    # the default of `snakemake --cores all`: 10 functions, one batch each, CPU models without a GPU
    code, out = snakemake(workdir, "-n", "--quiet", "rules", "--cores", "2", "--config", "gpu=no")
    assert code == 0, out
    counts = job_counts(out)
    assert counts["run_batch"] == 2 * 10 and counts.get("run_batch_gpu", 0) == 0
    code, out = snakemake(workdir, "-n", "--quiet", "rules", "--cores", "2", "--config", "gpu=yes")
    assert job_counts(out)["run_batch_gpu"] == 3 * 10


def test_slurm_profile_dry_run(workdir):
    # no cluster here: the dry run checks that the profile loads with the executor plugin and that
    # GPU batches carry gpu=1 (sbatch --gpus=1) and the GPU partition
    # (the project installs the plugin, CI too; a GPU host's wheelhouse may lack it)
    pytest.importorskip("snakemake_executor_plugin_slurm", reason="the SLURM executor plugin is not installed here")
    code, out = snakemake(workdir, "-n", "--workflow-profile", "profiles/slurm", *SMOKE, "--config", "gpu=yes")
    assert code == 0, out
    jobs = out.split("rule ")
    gpu_jobs = [j for j in jobs if j.startswith("run_batch_gpu:")]
    cpu_jobs = [j for j in jobs if j.startswith("run_batch:")]
    assert len(gpu_jobs) == 12 and len(cpu_jobs) == 8
    assert all("gpu=1" in j and "slurm_partition=gpu" in j and "cpus_per_gpu=4" in j for j in gpu_jobs)
    assert all("gpu=0" in j and "slurm_partition" not in j for j in cpu_jobs)
    # a warm-up would compile on another node: on a cluster the batches compile in their own jobs
    assert not [j for j in jobs if j.startswith("warmup:")]


def test_paper_experiment_grid(workdir):
    code, out = snakemake(workdir, "-n", "--quiet", "rules", "--cores", "2", "--configfile",
                          "config/experiments/janssen_cs1.yaml", "--config", "gpu=yes")
    assert code == 0, out
    counts = job_counts(out)
    # 10 functions x 30 one-trial chunks for the CPU and naive models, 3 chunks of 10 for the others
    assert counts["run_batch"] == 2 * 10 * 30 and counts["run_batch_gpu"] == 10 * 30 + 2 * 10 * 3


def test_case_study_2_grid(workdir, smoke_dry_run):
    # iDE and cujDE, 10 functions x 4 population sizes, a cell's 30 trials in one job, on the GPU (one
    # dry run with the shell commands: its job counts, and F01's command lines below)
    code, out = snakemake(workdir, "-n", "-p", "--cores", "2", "--configfile", "config/experiments/janssen_cs2.yaml",
                          "--config", "gpu=yes")
    assert code == 0, out
    counts = job_counts(out)
    assert counts["run_batch_gpu"] == 2 * 10 * 4 and counts.get("run_batch", 0) == 0
    # jDE gets its own defaults (no F, CR or bounds passed: each algorithm checks its own bound modes,
    # so the schema gives none); iDE its experiment values
    runs = [line for line in out.splitlines() if "gpude run " in line]  # (not their warm-ups)
    assert len(runs) == 2 * 10 * 4
    runs = [line for line in runs if "--function F01 " in line]
    cujde = [line for line in runs if "--algorithm jde --implementation cujde" in line]
    ide = [line for line in runs if "--algorithm de --implementation ide" in line]
    assert len(cujde) == len(ide) == 4
    assert all("--F" not in line and "--bounds" not in line for line in cujde)
    assert all("--F 0.5 --CR 0.3" in line for line in ide)
    assert all("--trials-per-launch 30" in line and "--trials 30" in line for line in cujde + ide)
    # an experiment without the key launches one trial at a time, with no flag (finished jobs stay done)
    code, out = smoke_dry_run("gpu=yes")
    assert code == 0 and "--trials-per-launch" not in out, out[-2000:]


def test_qin_grid(workdir):
    # 4 functions x 3 dims x 4 popsizes, one job of 25 trials per cell: sDE on the CPU, three GPU models
    args = ("-n", "--quiet", "rules", "--cores", "2", "--configfile", "config/experiments/qin.yaml")
    code, out = snakemake(workdir, *args, "--config", "gpu=yes")
    assert code == 0, out
    counts = job_counts(out)
    assert counts["run_batch"] == 4 * 3 * 4 and counts["run_batch_gpu"] == 3 * 4 * 3 * 4
    # a subset from the command line: snakemake hands list items over as strings
    code, out = snakemake(workdir, *args, "--config", "gpu=yes", "dims=[10,50]", "popsizes=[50]")
    assert code == 0, out
    assert job_counts(out)["run_batch_gpu"] == 3 * 4 * 2


def test_nashed_grid(workdir):
    # 20 functions x 2 dims x 3 algorithms, each with its own population size; one job of 100 trials
    # per cell, all in one launch, 1 s each
    args = ("-n", "-p", "--cores", "2", "--configfile", "config/experiments/nashed.yaml")
    code, out = snakemake(workdir, *args, "--config", "gpu=yes")
    assert code == 0, out[-3000:]
    jobs = [j for j in out.split("rule ") if j.startswith("run_batch_gpu:")]
    assert len(jobs) == 20 * 2 * 3
    # pso/gpu and ss/gpu share an implementation name: "<algorithm>/<implementation>" keys tell them apart
    for algorithm, impl, popsize, per_launch in (("de", "two_kernel", 48, 100), ("pso", "gpu", 125, 100),
                                                 ("ss", "gpu", 140, 10)):
        mine = [j for j in jobs if f"--algorithm {algorithm} --implementation {impl} " in j]
        assert len(mine) == 40 and all(f"--popsize {popsize} " in j for j in mine)
        assert all("--max-time-s 1.0 " in j and f"--trials-per-launch {per_launch} " in j and "--target 0 " in j
                   for j in mine)
    de = [j for j in jobs if "--algorithm de " in j][0]
    assert "--F 0.52 --CR 0.879" in de and "--param crossover=exp" in de and "--param mutation=rand1" in de


def test_kromer_grids_run_instances_at_their_own_size_after_fetching_their_data(workdir, tmp_path):
    # a fresh data root: the instance files are fetched first (from an offline copy here), once per set
    env = {"GPUDE_INSTANCE_DATA": str(tmp_path / "instances")}
    args = ("-n", "-p", "--cores", "2", "--config", "gpu=yes", "instance_data_from=/offline")
    code, out = snakemake(workdir, *args, "--configfile", "config/experiments/kromer_lop.yaml", env=env)
    assert code == 0, out[-3000:]
    jobs = out.split("rule ")
    gpu = [j for j in jobs if j.startswith("run_batch_gpu:")]
    cpu = [j for j in jobs if j.startswith("run_batch:")]
    fetch = [j for j in jobs if j.startswith("fetch_instance_data:")]
    assert len(gpu) == len(cpu) == 49 + 50 and len(fetch) == 1
    assert "gpude fetch-data lolib --from /offline/lolib" in fetch[0]
    be75 = [j for j in gpu if "--function be75eec " in j][0]
    assert "--dim 50 " in be75 and "--max-time-s 10.0 " in be75 and "--trials-per-launch 10 " in be75
    assert "--popsize 256 " in be75 and "--F 0.5 --CR 0.005" in be75
    assert all("--dim 79 " in j for j in gpu if "--function N-usa79 " in j)
    code, out = snakemake(workdir, "-n", "--quiet", "rules", "--cores", "2", "--config", "gpu=yes",
                          "--configfile", "config/experiments/kromer_etc.yaml", env=env)
    assert code == 0, out[-3000:]
    counts = job_counts(out)
    assert counts["run_batch_gpu"] == 12 * 3 and counts["run_batch"] == 12 * 3 * 2
    assert counts["fetch_instance_data"] == 1


def test_trials_per_implementation_reduce_the_grid(workdir):
    # a first pass of the paper experiment: fewer trials of the slow models; the others keep 30
    code, out = snakemake(workdir, "-n", "--quiet", "rules", "--cores", "2", "--configfile",
                          "config/experiments/janssen_cs1.yaml", "--config", "gpu=yes",
                          "trials={default: 30, sequential: 1, master_slave: 2, naive_gpu: 2}")
    assert code == 0, out
    counts = job_counts(out)
    assert counts["run_batch"] == 10 * (1 + 2) and counts["run_batch_gpu"] == 10 * 2 + 2 * 10 * 3


BAD_EXPERIMENTS = [  # (change to the smoke experiment, words of the error); None: the key left out
    ({"colour": "red"}, "Additional properties are not allowed ('colour' was unexpected); an experiment's keys: "
                        "name, description, seed, trials,"),
    ({"functions": ["F11"]}, "unknown function(s) F11; `gpude functions` lists the functions"),
    ({"dims": ["instance"]}, "dims: instance is the size of a LOP or ETC instance; F01 is a benchmark function"),
    ({"functions": ["be75eec"], "dims": [10]}, "be75eec has dimension 50 (its instance's size), not 10"),
    ({"dims": [1]}, "dims[0]: 1 is less than the minimum of 2; the schema says of dims: dimensions;"),
    ({"algorithms": {"de": {"implementations": ["turbo"]}}},
     "unknown implementation 'turbo' of 'de'; registered: sequential, high_level, master_slave"),
    ({"algorithms": {"ga": {"implementations": ["sequential"]}}}, "unknown algorithm 'ga'"),
    ({"algorithms": {"pso": {"implementations": ["gpu"], "popsizes": [2]}}}, "popsize (NP) must be an integer >= 3"),
    ({"algorithms": {"de": {"implementations": ["sequential"], "CR": 1.5}}},
     "algorithms.de.CR: 1.5 is greater than the maximum of 1; the schema says of algorithms: algorithm -> its"),
    ({"algorithms": {"de": {"implementations": ["sequential"], "tau1": 0.1}}}, "algorithm de has no parameter tau1"),
    ({"algorithms": {"jde": {"implementations": ["sequential"], "tau1": 1.5}}}, "tau1 must lie in [0, 1]"),
    ({"trials_per_launch": 3}, "trials_per_launch 3 for de/sequential, which runs one trial at a time"),
    ({"name": "my run!"}, "'my run!' does not match '^[A-Za-z0-9_-]+$'"),
    ({"description": 3}, "3 is not of type 'string'"),
    ({"seed": -1}, "-1 is less than the minimum of 0"),
    ({"trials": 0}, "trials: 0 is less than the minimum of 1; the schema says of trials: trials per cell: an "
                    "integer, or a mapping {default: n, <implementation>: n, <algorithm>/<implementation>: n}"),
    ({"trials": {"ide": 3}}, "trials = {'ide': 3}: 'default' is a required property; the schema says of trials: "
                             "trials per cell: an integer, or a mapping {default: n,"),
    # a per-implementation key must name an implementation of the experiment
    ({"trials": {"default": 3, "idee": 1}}, "trials names idee, which is no implementation of de"),
    ({"trials": "many"}, "trials: 'many' is none of the forms trials takes ('many' is not of type 'integer'; "
                         "'many' is not of type 'object'); the schema says of trials: trials per cell: an integer"),
    ({"trials_per_job": {"default": 0}}, "trials_per_job.default: 0 is less than the minimum of 1; the schema says "
                                         "of trials_per_job: a cell with more trials is split into chunks"),
    ({"popsizes": [0]}, "0 is less than the minimum of 1"),
    ({"subgrids": [{"dims": [20]}]}, "subgrids[0].dims: 20 not among the experiment's dims (10)"),
    ({"dtypes": ["float16"]}, "'float16' is not one of ['float64', 'float32']"),
    ({"max_fes": 2}, "max_fes: 2 is less than the minimum of 4; the schema says of max_fes: budget per trial: "
                     "an integer >= 4, or a mapping dim -> integer >= 4"),
    ({"max_fes": {10: 2}}, "max_fes[10]: 2 is less than the minimum of 4; the schema says of max_fes: budget per"),
    ({"target": -1.0}, "-1.0 is less than the minimum of 0"),
    ({"max_time_s": 0}, "0 is less than or equal to the minimum of 0"),
    ({"timing": "fast"}, "timing: 'fast' is none of the forms timing takes ('fast' is not one of ['exclusive', "
                         "'shared', 'host']; 'fast' is not of type 'object'); the schema says of timing: exclusive:"),
    ({"timing": {"default": "shared", "ide": "fast"}}, "timing.ide: 'fast' is not one of ['exclusive', 'shared', "
                                                       "'host']; the schema says of timing: exclusive:"),
    ({"cluster_threads": 0}, "0 is less than the minimum of 1"),
    ({"report": {"section": "nope"}}, "report: unknown report section 'nope'; known: janssen_cs1"),
    ({"plugins": ["no_such_plugin"]}, "plugin 'no_such_plugin' cannot be imported (No module named 'no_such_plugin')"),
    ({"instance_data_from": 5}, "5 is not of type 'string'"),
    ({"programs": {"toy": {"output": "jsonl"}}}, "'command' is a required property"),
    ({"gpu": "maybe"}, "'maybe' is not one of ['auto', 'yes', 'no']"),
    ({"functions": None}, "'functions' is a required property; the schema says of functions: benchmark function ids"),
    # a value of the wrong type for the keys whose cases above are the workflow's own checks (issue 39)
    ({"report": 5}, "; the schema says of report: "),
    ({"plugins": "no_such_plugin"}, "; the schema says of plugins: "),
    ({"subgrids": 3}, "; the schema says of subgrids: "),
    ({"trials_per_launch": 0}, "; the schema says of trials_per_launch: "),
    ({"figure_formats": ["pdf"]}, "; the schema says of figure_formats: "),
]


def write_bad(workdir, change, name="bad.yaml"):
    experiment = yaml.safe_load((workdir / "config/experiments/smoke.yaml").read_text())
    experiment = {k: v for k, v in {**experiment, **change}.items() if v is not None}
    (workdir / name).write_text(yaml.safe_dump(experiment))
    return name


GOOD = "config/experiments/smoke.yaml"


@pytest.fixture(scope="session")
def parsed_experiments(tmp_path_factory):
    """{file: what parsing the workflow with it raised (None: it parsed)}, of the good smoke experiment
    (first) and of each bad experiment (bad<k>.yaml: BAD_EXPERIMENTS[k]), all parsed in one process,
    once per test run (_helpers.once_per_run: a few seconds, against ~2.5 s for each case in a
    process of its own)."""
    def parse(work):
        copy_workflow(work)
        files = [write_bad(work, change, f"bad{k}.yaml") for k, (change, _) in enumerate(BAD_EXPERIMENTS)]
        res = subprocess.run([sys.executable, str(ROOT / "tests/_parse_experiments.py"), "errors.json", GOOD, *files],
                             cwd=work, capture_output=True, text=True, timeout=600)
        assert res.returncode == 0, res.stderr[-2000:]
        return {f: parsed["error"] for f, parsed in json.loads((work / "errors.json").read_text()).items()}

    return once_per_run(tmp_path_factory, "parsed_experiments", parse)


@pytest.fixture(scope="session")
def bad_experiment_errors(parsed_experiments):
    """What parsing the workflow with each bad experiment raised, in the order of BAD_EXPERIMENTS."""
    return [parsed_experiments[f"bad{k}.yaml"] for k in range(len(BAD_EXPERIMENTS))]


@pytest.mark.parametrize("case", range(len(BAD_EXPERIMENTS)), ids=[str(c) for c, _ in BAD_EXPERIMENTS])
def test_bad_experiments_fail_before_any_job_runs(bad_experiment_errors, case):
    message = BAD_EXPERIMENTS[case][1]
    error = bad_experiment_errors[case]
    assert error is not None, "the workflow parsed"
    assert message in error, error[-2000:]


# the schema's errors: the failing key's path, the bad value there, and the key's description from
# the schema (the fix), around jsonschema's own message; (case of BAD_EXPERIMENTS, path, bad value)
SCHEMA_CASES = [({"trials": 0}, "trials", "0"), ({"trials": {"ide": 3}}, "trials", "{'ide': 3}"),
                ({"trials": "many"}, "trials", "'many'"),
                ({"trials_per_job": {"default": 0}}, "trials_per_job.default", "0"),
                ({"max_fes": 2}, "max_fes", "2"), ({"max_fes": {10: 2}}, "max_fes[10]", "2"),
                ({"timing": "fast"}, "timing", "'fast'"),
                ({"timing": {"default": "shared", "ide": "fast"}}, "timing.ide", "'fast'"),
                ({"dims": [1]}, "dims[0]", "1"),
                ({"algorithms": {"de": {"implementations": ["sequential"], "CR": 1.5}}}, "algorithms.de.CR", "1.5")]


@pytest.mark.parametrize("change,path,value", SCHEMA_CASES, ids=[p for _, p, _ in SCHEMA_CASES])
def test_schema_errors_name_the_key_the_bad_value_and_what_it_takes(bad_experiment_errors, change, path, value):
    schema = yaml.safe_load((ROOT / "workflow/schemas/experiment.schema.yaml").read_text())
    error = bad_experiment_errors[[c for c, _ in BAD_EXPERIMENTS].index(change)]
    key = next(iter(change))
    assert f"experiment smoke: {path}" in error, error
    rest = error.split(f"experiment smoke: {path}", 1)[1]
    assert rest.startswith((f" = {value}: ", f": {value} ")), error  # the bad value: beside the path or in the message
    assert f"; the schema says of {key}: {' '.join(schema['properties'][key]['description'].split())}" in rest, error


# the first case of an unknown key, of functions and of trials, through `snakemake -n` itself
COMMAND_LINE_CASES = [next(case for case in BAD_EXPERIMENTS if key in case[0])
                      for key in ("colour", "functions", "trials")]


@pytest.mark.parametrize("change,message", COMMAND_LINE_CASES, ids=[str(c) for c, _ in COMMAND_LINE_CASES])
def test_bad_experiments_say_so_on_the_command_line(workdir, change, message):
    code, out = snakemake(workdir, "-n", "--cores", "1", "--configfile", write_bad(workdir, change))
    assert code != 0
    assert message in out, out[-2000:]


def test_the_good_experiment_parses_in_one_process(parsed_experiments):
    # the parse of tests/_parse_experiments.py raises nothing for a good experiment (in the bad ones' process)
    assert parsed_experiments[GOOD] is None


def test_every_experiment_key_has_a_bad_value_case():
    schema = yaml.safe_load((ROOT / "workflow/schemas/experiment.schema.yaml").read_text())
    tried = {key for change, _ in BAD_EXPERIMENTS for key in change}
    assert set(schema["properties"]) - tried == set()


@pytest.mark.parametrize("key", sorted(yaml.safe_load((ROOT / "workflow/schemas/experiment.schema.yaml")
                                                   .read_text())["properties"]))
def test_every_key_with_a_wrong_value_gets_the_schemas_message(bad_experiment_errors, key):
    # every key of the schema has a case whose error is the schema's readable one: where the bad
    # value is, and what the schema says of the key (an unknown key: the 'colour' case names it)
    errors = [error for (change, _), error in zip(BAD_EXPERIMENTS, bad_experiment_errors) if key in change]
    assert any(error and f"; the schema says of {key}: " in error for error in errors), errors


def test_lint_is_clean(workdir):
    code, out = snakemake(workdir, "--lint")
    assert code == 0 and "good condition" in out, out


@pytest.fixture(scope="session")
def smoke_run(tmp_path_factory):
    """{"code", "out", "folder"}: the smoke experiment run here (`snakemake --cores 2`, gpu=no, every
    output) in a copy of the workflow, made once per test run (_helpers.once_per_run): the end-to-end
    test below checks it, and tests/test_slurm.py compares the trials of its cluster run with it."""
    def make(folder):
        code, out = snakemake(copy_workflow(folder), "--cores", "2", *SMOKE, "--config", "gpu=no")
        return {"code": code, "out": out, "folder": str(folder)}

    return once_per_run(tmp_path_factory, "smoke_run", make)


@pytest.mark.slow
def test_smoke_experiment_end_to_end(smoke_run):
    workdir = Path(smoke_run["folder"])
    code, out = smoke_run["code"], smoke_run["out"]
    assert code == 0, out
    trials = pd.read_csv(workdir / "results/smoke/trials.csv")
    assert len(trials) == 2 * 2 * 3 and set(trials.status) == {"budget"}
    assert (trials.fes_used == 200).all()
    # seeds depend on (function, trial), not on the implementation: paired trials, same runs
    by = trials.pivot_table(index=["function", "trial"], columns="implementation", values="seed")
    assert (by["sequential"] == by["master_slave"]).all()
    res = trials.pivot_table(index=["function", "trial"], columns="implementation", values="best_error")
    assert (res["sequential"] == res["master_slave"]).all()
    scores = pd.read_csv(workdir / "results/smoke/stats/rank_sum_time.csv", index_col="function")
    assert scores.loc["total", "sequential"] == scores.loc["total", "master_slave"] == 2 * 4.5
    table = pd.read_csv(workdir / "paper/smoke/table_time.csv")
    assert set(table.implementation) == {"sequential", "master_slave"} and (table.n == 3).all()
    assert (table[table.implementation == "sequential"].speedup == 1.0).all()
    for name in ("figure_time", "convergence", "convergence_time", "ecdf"):
        assert (workdir / f"paper/smoke/{name}.png").stat().st_size > 1000
    assert "speed-up" in (workdir / "paper/smoke/table_time.md").read_text()
    agreement = pd.read_csv(workdir / "paper/smoke/table_agreement.csv")
    assert (agreement.max_rel_diff == 0).all() and (agreement.paired_trials == 3).all()
    # the traces travel with the merged table: one per trial
    traces = np.load(workdir / "results/smoke/traces.npz")
    assert sorted(traces["run_id"]) == sorted(trials.run_id)
    report = (workdir / "paper/REPORT.md").read_text()
    assert "## CI smoke test" in report and "machine: " in report
    # every committed reference's study and the smoke run: still a paper's length, the rest in the appendix
    assert len(report.splitlines()) <= 600 and "(REPORT_appendix.md#" in report, len(report.splitlines())
    assert (workdir / "paper/REPORT_appendix.md").stat().st_size > len(report) // 2
    for study in REFERENCE_STUDIES:  # the committed reference results are in the report too
        assert (workdir / f"paper/{study}/table_error.csv").is_file()
        # wall-time tables only for fixed-FE studies; under a time budget every run takes the budget
        assert (workdir / f"paper/{study}/table_time.md").is_file() == (study not in TIME_BUDGET_STUDIES)
    if "janssen_cs1" in REFERENCE_STUDIES:
        assert "Table 3: mean wall time (s) beside the paper and the authors' code" in report
        assert "| | ours / paper |" in report and "What differs and why" in report
    # the HTML report of the same run
    code, out = snakemake(workdir, "--cores", "1", *SMOKE, "--config", "gpu=no", "--report", "report.html")
    assert code == 0, out
    assert (workdir / "report.html").stat().st_size > 100_000
    # a second run has nothing to do: outputs are complete and up to date
    code, out = snakemake(workdir, "--cores", "2", *SMOKE, "--config", "gpu=no")
    assert code == 0 and "Nothing to be done" in out, out
    # every batch was compiled by its implementation's warm-up (one for its functions and chunks),
    # before it and outside its timed window
    batches = workdir / "results/smoke/batches"
    markers = sorted(batches.rglob("*.warmup.json"))
    csvs = sorted(batches.rglob("chunk*.csv"))
    assert len(csvs) == 8 and len(markers) == 2
    for csv in csvs:
        implementation = csv.relative_to(batches).parts[1]
        (marker,) = [m for m in markers if m.relative_to(batches).parts[1] == implementation]
        assert marker.stat().st_mtime <= csv.stat().st_mtime
        log = (workdir / "logs/smoke/run_batch" / csv.relative_to(batches).with_suffix(".log")).read_text()
        assert "trials, setup" in log


def gpu_lease_intervals(logs):
    """(uuid, leased at, released at) of every batch log under ``logs`` that leased a GPU."""
    found = []
    for log in sorted(logs.rglob("*.log")):
        text = log.read_text()
        leased = re.search(r"GPU \d+ \((\S+), .*\) leased at ([\d.]+)", text)
        if leased:
            released = re.search(rf"GPU \d+ \({re.escape(leased.group(1))}\) released at ([\d.]+)", text)
            assert released, f"{log} leased a GPU and never released it:\n{text}"
            found.append((leased.group(1), float(leased.group(2)), float(released.group(1))))
    return found


@pytest.mark.slow
@pytest.mark.cudasim
def test_smoke_experiment_with_the_gpu_implementations_on_the_simulator(workdir):
    # conftest sets NUMBA_ENABLE_CUDASIM=1, which the batch processes inherit. The simulator runs
    # every CUDA thread in Python (about a second per generation), so: one function, one trial per
    # implementation (still three GPU batches to keep apart), the initial population and two generations.
    # only this experiment's outputs: the committed references' tables are the CPU smoke test's
    # A host with two (fake) GPUs: the GPU batches may run two at a time, each on a GPU it leases
    # (on a real GPU, with NUMBA_ENABLE_CUDASIM=0, the host's own GPUs: CUDA cannot open a fake one).
    simulated = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
    fake = ({"GPUDE_FAKE_GPUS": "2", "GPUDE_GPU_LOCK_DIR": str(workdir / "locks"), "GPUDE_CPU_LANE": "0"}
            if simulated else {})
    servers = Path(tempfile.mkdtemp(prefix="gbs"))  # the GPU batches' warm processes (gpude.run.batch_server)
    code, out = snakemake(workdir, "--cores", "2", *SMOKE, "--config", "gpu=yes", "functions=[Q01]",
                          "trials=1", "max_fes=24", "--",
                          "results/smoke/trials.csv", "paper/smoke/table_agreement.csv",
                          env={**fake, "GPUDE_BATCH_SERVER_DIR": str(servers)})
    assert code == 0, out
    # the GPU batches ran on a batch server per leased GPU, master_slave's (a thread pool) on the CPU's,
    # every server stopped when the workflow ended
    assert 2 <= len(list(servers.glob("*.lock"))) <= 3 and not list(servers.glob("*.sock")), list(servers.iterdir())
    pool_log = next((workdir / "logs/smoke/run_batch/de/master_slave").rglob("*.log")).read_text()
    assert "1/1 trials" in pool_log and "runs in this process" not in pool_log, pool_log
    # the GPU warm-ups started the GPU servers (their job's environment is the batches'): no batch did
    warmups = "".join(p.read_text() for p in (workdir / "logs/smoke/warmup").rglob("*.log"))
    assert re.search(r"started [1-9]\d* batch servers?\b", warmups), warmups  # (one a GPU, fake or real)
    for implementation in ("naive_gpu", "all_gpu", "ide"):
        log = next((workdir / f"logs/smoke/run_batch/de/{implementation}").rglob("*.log")).read_text()
        assert "1/1 trials" in log and "started the batch server" not in log, log
    shutil.rmtree(servers, ignore_errors=True)
    trials = pd.read_csv(workdir / "results/smoke/trials.csv")
    assert len(trials) == 5 and set(trials.status) == {"budget"} and (trials.fes_used == 24).all()
    gpu_rows = trials.implementation.isin(["naive_gpu", "all_gpu", "ide"])
    if simulated:
        assert set(trials[gpu_rows].gpu) == {"numba-cuda-simulator"}
        assert set(trials[gpu_rows].gpu_uuid) <= {"GPU-fake-0000", "GPU-fake-0001"}
    # every GPU row names the GPU it leased; no GPU was leased by two batches at once
    assert trials[gpu_rows].gpu_uuid.str.startswith("GPU-").all()
    assert (trials[gpu_rows].gpu_lease == "exclusive").all() and trials[~gpu_rows].gpu_uuid.isna().all()
    leases = gpu_lease_intervals(workdir / "logs/smoke/run_batch")
    assert len(leases) == 3 and {u for u, _, _ in leases} == set(trials[gpu_rows].gpu_uuid)
    for i, (uuid, start, end) in enumerate(leases):
        assert start < end
        assert not [other for other in leases[i + 1:] if other[0] == uuid and other[1] < end and start < other[2]]
    # one seed, one run: every implementation ends on the same error for the same trial
    agreement = pd.read_csv(workdir / "paper/smoke/table_agreement.csv")
    assert (agreement.implementations == 5).all() and (agreement.max_rel_diff < 1e-9).all()
    # GPU batches ran one at a time and were recorded as sharing the machine (timing: shared)
    assert trials.concurrency.str.startswith("shared").all()
