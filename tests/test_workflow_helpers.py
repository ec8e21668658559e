"""The workflow's helpers in gpude.study, called as workflow/rules/common.smk calls them, without
Snakemake: stopping a cluster run (cluster), what a batch asks of the scheduler (batch_resources),
the files it needs (batch_inputs), and the paper targets (paper_targets)."""

import signal
import subprocess
import types
from pathlib import Path

import pytest
import yaml

from gpude.core.errors import GpudeError
from gpude.study import batch_inputs, batch_resources, cluster, paper_targets
from gpude.study.experiment import Experiment
from gpude.study.host_shape import TIMING_SLOTS

# --- cluster ---------------------------------------------------------------------------------------

def test_sigterm_takes_ctrl_c_s_path_on_a_cluster_only():
    before = signal.getsignal(signal.SIGTERM)
    try:
        cluster.cancel_on_sigterm(types.SimpleNamespace(local_exec=True))
        assert signal.getsignal(signal.SIGTERM) is before  # a local run keeps Snakemake's handler
        cluster.cancel_on_sigterm(types.SimpleNamespace(local_exec=False))
        handler = signal.getsignal(signal.SIGTERM)
        with pytest.raises(KeyboardInterrupt):
            handler(signal.SIGTERM, None)
        assert signal.getsignal(signal.SIGTERM) == signal.SIG_IGN  # a second SIGTERM would break off scancel
    finally:
        signal.signal(signal.SIGTERM, before)


def test_a_failed_cluster_run_cancels_its_queued_jobs_by_run_id(monkeypatch):
    calls = []
    monkeypatch.setattr(subprocess, "run", lambda args, **kw: calls.append(args))
    scheduler = types.SimpleNamespace(_executor=types.SimpleNamespace(run_uuid="run-7"))
    cluster.cancel_left_behind(types.SimpleNamespace(local_exec=True, scheduler=scheduler))
    cluster.cancel_left_behind(types.SimpleNamespace(local_exec=False, scheduler=types.SimpleNamespace()))
    assert calls == []
    cluster.cancel_left_behind(types.SimpleNamespace(local_exec=False, scheduler=scheduler))
    assert calls == [["scancel", "--name", "run-7"]]


@pytest.mark.parametrize("sinfo,expected", [("64\n16+\n32\n", 16), ("", 1), (OSError("no sinfo"), 1)])
def test_node_threads_the_experiment_s_else_the_smallest_node(monkeypatch, sinfo, expected):
    def run(args, **kw):
        if isinstance(sinfo, Exception):
            raise sinfo
        return types.SimpleNamespace(stdout=sinfo)

    monkeypatch.setattr(subprocess, "run", run)
    cluster.node_threads.cache_clear()
    try:
        assert cluster.node_threads(8) == 8
        assert cluster.node_threads(None) == expected
    finally:
        cluster.node_threads.cache_clear()


# --- batch_resources --------------------------------------------------------------------------------

def test_threads_every_core_only_for_a_whole_machine_implementation():
    def node():
        return 48

    def cores():
        return 8

    def no_total():  # a cluster run's workflow.cores raises
        raise RuntimeError("Workflow requires a total number of cores to be defined")

    assert batch_resources.threads("de", "sequential", on_cluster=False, cores=cores, node_threads=node) == 1
    assert batch_resources.threads("de", "master_slave", on_cluster=False, cores=cores, node_threads=node) == 8
    assert batch_resources.threads("de", "master_slave", on_cluster=True, cores=no_total, node_threads=node) == 48
    assert batch_resources.threads("de", "sequential", on_cluster=True, cores=no_total, node_threads=node) == 1
    assert batch_resources.on_gpu("de", "ide") and not batch_resources.on_gpu("de", "sequential")
    gpu = batch_resources.implementations_on("gpu").split("|")
    assert "ide" in gpu and "sequential" not in gpu and gpu == sorted(gpu)


class FakeWorkflow:
    def __init__(self, nodes=None, given=()):
        self.nodes = nodes
        self.global_resources = {name: 1 for name in given}
        self.registered = {}

    def register_resource(self, name, limit):
        self.registered[name] = limit


def test_a_local_run_registers_its_limits_unless_given_and_a_cluster_run_none(monkeypatch):
    monkeypatch.setenv("GPUDE_FAKE_GPUS", "2")
    monkeypatch.setenv("GPUDE_HOST_CORES", "16")
    for name in ("CUDA_VISIBLE_DEVICES", "GPUDE_GPU_PREFETCH", "GPUDE_CPU_LANE"):
        monkeypatch.delenv(name, raising=False)
    local = FakeWorkflow()
    host = batch_resources.local_host(local)
    assert not host.on_cluster and host.gpus == 2 and host.prefetch  # 16 cores >= 2 * 2 + 2
    # 6 CPU lanes: half the 16 cores less the 2 GPU batches
    assert local.registered == {"gpu": 4, "timing_slot": TIMING_SLOTS, "cpu_lane": 6}
    given = FakeWorkflow(given=["gpu"])
    batch_resources.local_host(given)
    assert given.registered == {"timing_slot": TIMING_SLOTS, "cpu_lane": 6}
    remote = FakeWorkflow(nodes=10)
    assert batch_resources.local_host(remote).on_cluster and remote.registered == {}


# --- batch_inputs -----------------------------------------------------------------------------------

def test_the_warmup_marker_only_where_it_exists_or_the_batch_is_to_make_here(tmp_path):
    batch = str(tmp_path / "chunk0")
    assert batch_inputs.warmup_marker(batch, can_make=True) == f"{batch}.warmup.json"
    assert batch_inputs.warmup_marker(batch, can_make=False) is None
    Path(f"{batch}.csv").touch()
    Path(f"{batch}.npz").touch()  # finished: a batch made before warm-ups keeps its inputs
    assert batch_inputs.warmup_marker(batch, can_make=True) is None
    Path(f"{batch}.warmup.json").touch()
    assert batch_inputs.warmup_marker(batch, can_make=False) == f"{batch}.warmup.json"


def test_a_cpu_batch_asks_for_the_shared_warm_up_unless_it_has_its_own(tmp_path):
    first, other = str(tmp_path / "F01_chunk0"), str(tmp_path / "F02_chunk1")
    assert batch_inputs.warmup_marker(other, can_make=True, shared=first) == f"{first}.warmup.json"
    assert batch_inputs.warmup_marker(other, can_make=False, shared=first) is None
    Path(f"{other}.csv").touch()
    Path(f"{other}.npz").touch()  # finished after the shared warm-up: keeps asking for it while it is there
    Path(f"{first}.warmup.json").touch()
    assert batch_inputs.warmup_marker(other, can_make=False, shared=first) == f"{first}.warmup.json"
    Path(f"{other}.warmup.json").touch()  # warmed up alone before: its own marker stays its input
    assert batch_inputs.warmup_marker(other, can_make=True, shared=first) == f"{other}.warmup.json"


def test_the_cpu_batches_of_an_implementation_and_kind_share_the_first_ones_warm_up():
    from gpude.study.experiment import Batch

    def batch(implementation, function, chunk=0, dim="30", dtype="float64"):
        return Batch("de", implementation, function, dim, "50", dtype, chunk)

    grid = [batch("sequential", "F01"), batch("sequential", "F01", 1), batch("sequential", "F02", dim="50"),
            batch("sequential", "F03", dtype="float32"), batch("sequential", "be75eec", dim="instance"),
            batch("sequential", "L01", dim="1000"), batch("ide", "F01"), batch("ide", "F02")]
    shared = batch_inputs.shared_warmups(grid, "e", on_gpu=lambda algorithm, implementation: implementation == "ide")
    first = grid[0].path("e")
    assert [shared[b.path("e")] for b in grid[:3]] == [first, first, first]  # function, chunk, D alike
    # another floating type, an instance set, the large-scale functions: warm-ups of their own
    assert [shared[b.path("e")] for b in grid[3:6]] == [b.path("e") for b in grid[3:6]]
    assert not {b.path("e") for b in grid[6:]} & set(shared)  # GPU batches: each its own, not mapped
    assert batch_inputs.problem_kind("F07") == "benchmark" and batch_inputs.problem_kind("C13") == "large-scale"


def test_instance_data_for_a_lop_instance_and_none_for_a_function(monkeypatch, tmp_path):
    monkeypatch.setenv("GPUDE_INSTANCE_DATA", str(tmp_path))
    assert batch_inputs.instance_root() == str(tmp_path)
    assert batch_inputs.instance_markers("be75eec") == [str(tmp_path / "lolib" / ".verified")]
    assert batch_inputs.instance_markers("F01") == []
    assert batch_inputs.fetch_source_args(None, "lolib") == ""
    assert batch_inputs.fetch_source_args("/my data", "etc") == "--from '/my data/etc'"


# --- paper_targets ----------------------------------------------------------------------------------

class Section:
    generic_outputs = ("errors", "time")


class BudgetSection:
    generic_outputs = ("errors",)


def section_class(name):
    if name not in (None, "budget"):
        raise GpudeError(f"unknown report section {name!r}")
    return BudgetSection if name == "budget" else Section


@pytest.fixture()
def tree(tmp_path, monkeypatch):
    """A workflow folder: experiments a (configured), b (reference results, a budget section), c
    (a misspelt section), d (a reference only as trials.csv.gz, with a rerun check)."""
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "config/experiments"
    folder.mkdir(parents=True)
    reports = {"a": {}, "b": {"section": "budget", "published": "paper/published/b.csv",
                              "compare": {"scipy": "results/validation/b.csv"}, "study_inputs": {"x": "in x.csv"}},
               "c": {"section": "typo"}, "d": {}}
    for name, report in reports.items():
        (folder / f"{name}.yaml").write_text(yaml.safe_dump({"name": name, "report": report}))
    for machine, name, table in (("m1", "b", "trials.csv"), ("m2", "b", "trials.csv"), ("m1", "d", "trials.csv.gz")):
        (tmp_path / "results/reference" / machine / name).mkdir(parents=True, exist_ok=True)
        (tmp_path / "results/reference" / machine / name / table).touch()
    (tmp_path / "results/reference/m1/d/rerun_check.csv").touch()
    return tmp_path


def targets(runs_here=True, name="a"):
    return paper_targets.PaperTargets(Experiment({"name": name, "report": {}}, f"elsewhere/{name}.yaml"), runs_here,
                                      section_class)


def test_the_report_covers_the_run_and_the_experiments_with_references(tree):
    paper = targets()
    assert paper.files == {"a": "elsewhere/a.yaml", "b": "config/experiments/b.yaml", "c": "config/experiments/c.yaml",
                           "d": "config/experiments/d.yaml"}
    assert paper.reported == ["a", "b", "d"] and paper.notice() is None
    assert paper.local_targets == ["results/a/trials.csv", "results/a/stats/rank_sum_time.csv"]
    assert paper.sources("a") == ["results/a/trials.csv"]
    assert paper.sources("b") == ["results/reference/m1/b/trials.csv", "results/reference/m2/b/trials.csv"]
    idle = targets(runs_here=False)
    assert idle.reported == ["b", "d"] and idle.local_targets == []
    assert "nor reference results" in idle.notice()
    with pytest.raises(ValueError, match="no results for experiment a"):
        idle.sources("a")
    assert "its tables come from results/reference/*/b/ only" in targets(runs_here=False, name="b").notice()


def test_presentation_inputs_and_arguments_from_each_experiment_s_report(tree):
    paper = targets()
    assert paper.presentation_files("b") == ["paper/published/b.csv", "results/validation/b.csv", "in x.csv"]
    assert paper.presentation_files("d") == ["results/reference/m1/d/rerun_check.csv"]
    assert paper.published_args("b") == ("--published paper/published/b.csv --compare scipy=results/validation/b.csv "
                                         "--study budget --study-input 'x=in x.csv'")
    assert paper.published_args("a") == ""
    # a misspelt section of another experiment fails in its own paper job, not here
    assert paper.generic_outputs("c") == Section.generic_outputs
    assert paper.wall_time_experiments == ["a", "c", "d"]


def test_reference_tables_refuse_a_folder_with_both_forms(tree):
    assert paper_targets.reference_tables("d") == ["results/reference/m1/d/trials.csv.gz"]
    (tree / "results/reference/m1/d/trials.csv").touch()
    with pytest.raises(ValueError, match="holds both"):
        paper_targets.reference_tables("d")
    assert paper_targets.one_of([]) == "(?!)" and paper_targets.one_of(["b", "a"]) == "a|b"
    assert paper_targets.beside("x/trials.csv.gz", "traces.npz") == "x/traces.npz"


def test_gpu_scaling_runs_need_both_tables(tree):
    for run, files in (("r1", ("rows.csv", "batches.csv")), ("r2", ("rows.csv",))):
        folder = tree / paper_targets.GPU_SCALING_DIR / run
        folder.mkdir(parents=True)
        for name in files:
            (folder / name).touch()
    assert paper_targets.gpu_scaling_runs() == [f"{paper_targets.GPU_SCALING_DIR}/r1"]
