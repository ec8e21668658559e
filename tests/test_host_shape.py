"""How the workflow shares a host among its timed batches (gpude.study.host_shape), for hosts of 2, 16 and
32 cores and 1, 2 and 4 GPUs, whatever machine runs the tests (the Snakefile's use of it:
tests/test_workflow.py's dry runs)."""

import itertools

import pytest

from gpude.core.errors import GpudeError
from gpude.study.host_shape import TIMING_SLOTS, HostShape, host_cores

CORES = (2, 16, 32)
GPUS = (1, 2, 4)
SHAPES = list(itertools.product(CORES, GPUS))
#: a batch as the workflow describes it: (on a GPU, threads)
GPU_BATCH, SEQUENTIAL_BATCH, POOL_BATCH = (True, 1), (False, 1), (False, 16)


def expected_lane(cores, gpus, setting):
    """The CPU lane as docs/workflow.md states it: forced by GPUDE_CPU_LANE, else where the cores
    are at least the GPUs + 2."""
    return {"0": False, "1": True, "auto": cores >= gpus + 2}[setting]


def expected_lanes(cores, gpus, setting):
    """How many: none without the lane, else half the cores less the GPU batches, one at least."""
    return max(1, cores // 2 - gpus) if expected_lane(cores, gpus, setting) else 0


@pytest.mark.parametrize("setting", ["auto", "0", "1"])
@pytest.mark.parametrize("cores,gpus", SHAPES)
def test_the_cpu_lane_wants_a_core_for_each_gpu_batch_the_lane_and_the_rest(cores, gpus, setting):
    host = HostShape(cores=cores, gpus=gpus, lane_setting=setting, prefetch_setting="0")
    assert host.cpu_lane == expected_lane(cores, gpus, setting)
    assert host.cpu_lanes == expected_lanes(cores, gpus, setting)
    assert host.gpu_limit == gpus and host.timed_lanes == gpus + host.cpu_lanes


@pytest.mark.parametrize("cores,gpus,lanes", [(16, 1, 7), (16, 2, 6), (32, 4, 12), (16, 8, 1), (3, 1, 1), (2, 1, 0)])
def test_the_cpu_lanes_leave_half_the_cores_free(cores, gpus, lanes):
    # 7 lanes + 1 GPU batch on 16 cores: the 8 busy cores of results/benchmarks/host_sharing's K = 7
    host = HostShape(cores=cores, gpus=gpus, prefetch_setting="0")
    assert host.cpu_lanes == lanes
    # the lanes are a resource of their own: a sequential batch takes one, so that the lanes' batches cannot
    # take the GPU batches' shares of the slots as well; nothing else takes one
    assert host.lane_jobs == max(lanes, 1)
    assert host.lane_taken("exclusive", *SEQUENTIAL_BATCH) == (1 if lanes else 0)
    assert host.lane_taken("exclusive", *GPU_BATCH) == host.lane_taken("exclusive", *POOL_BATCH) == 0
    assert host.lane_taken("shared", *SEQUENTIAL_BATCH) == host.lane_taken("host", *SEQUENTIAL_BATCH) == 0
    if lanes:
        assert host.concurrency("exclusive", *SEQUENTIAL_BATCH) == f"exclusive-cpu:{gpus + lanes}"
        assert (gpus + lanes) * host.timing_slot("exclusive", *SEQUENTIAL_BATCH) <= TIMING_SLOTS


@pytest.mark.parametrize("setting", ["auto", "0", "1"])
@pytest.mark.parametrize("cores,gpus", SHAPES)
def test_exclusive_batches_share_the_timing_slots_and_say_so(cores, gpus, setting):
    host = HostShape(cores=cores, gpus=gpus, lane_setting=setting, prefetch_setting="0")
    lane = expected_lane(cores, gpus, setting)
    lanes_share = TIMING_SLOTS // (gpus + expected_lanes(cores, gpus, setting))
    assert host.timing_slot("exclusive", *GPU_BATCH) == lanes_share
    assert host.timing_slot("exclusive", *SEQUENTIAL_BATCH) == (lanes_share if lane else TIMING_SLOTS)
    assert host.timing_slot("exclusive", *POOL_BATCH) == TIMING_SLOTS  # a thread pool always alone
    if lane:
        gpu_label = f"exclusive-gpu:{gpus}+cpu"
    else:
        gpu_label = f"exclusive-gpu:{gpus}" if gpus > 1 else "exclusive"  # alone on a one-GPU host
    assert host.concurrency("exclusive", *GPU_BATCH) == gpu_label
    lane_label = f"exclusive-cpu:{gpus + expected_lanes(cores, gpus, setting)}"
    assert host.concurrency("exclusive", *SEQUENTIAL_BATCH) == (lane_label if lane else "exclusive")
    assert host.concurrency("exclusive", *POOL_BATCH) == "exclusive"


@pytest.mark.parametrize("cores,gpus", SHAPES)
def test_shared_and_host_batches_ignore_the_lane(cores, gpus):
    host = HostShape(cores=cores, gpus=gpus, lane_setting="1", prefetch_setting="0")
    for batch in (GPU_BATCH, SEQUENTIAL_BATCH, POOL_BATCH):
        assert host.timing_slot("shared", *batch) == 1 and host.concurrency("shared", *batch) == "shared"
        assert host.timing_slot("host", *batch) == TIMING_SLOTS and host.concurrency("host", *batch) == "host"
        assert host.gpus_taken("host", batch[0]) == gpus  # alone on the machine: every GPU too
    for timing in ("shared", "exclusive"):
        assert host.gpus_taken(timing, True) == 1 and host.gpus_taken(timing, False) == 0


@pytest.mark.parametrize("setting", ["auto", "0", "1"])
@pytest.mark.parametrize("cores,gpus", SHAPES)
def test_a_second_gpu_batch_per_gpu_waits_at_the_lease_where_the_cores_allow(cores, gpus, setting):
    host = HostShape(cores=cores, gpus=gpus, prefetch_setting=setting)
    prefetch = {"0": False, "1": True, "auto": cores >= 2 * gpus + 2}[setting]
    assert host.prefetch == prefetch
    assert host.gpu_jobs == gpus * (2 if prefetch else 1) and host.gpu_limit == gpus
    # a waiting batch is one more share of the slots; at most one batch a GPU holds it, so the label stays
    shares = host.timed_lanes + (gpus if prefetch else 0)
    assert host.timing_slot("exclusive", *GPU_BATCH) == TIMING_SLOTS // shares
    assert shares * host.timing_slot("exclusive", *GPU_BATCH) <= TIMING_SLOTS
    assert host.concurrency("exclusive", *GPU_BATCH) == HostShape(cores, gpus, prefetch_setting="0").concurrency(
        "exclusive", *GPU_BATCH)
    assert host.gpus_taken("host", True) == host.gpu_jobs  # alone on the machine: every GPU job too


def test_no_second_gpu_batch_on_a_cluster_or_without_gpus():
    assert not HostShape(cores=64, gpus=2, on_cluster=True, prefetch_setting="1").prefetch
    assert not HostShape(cores=64, gpus=0, prefetch_setting="1").prefetch
    with pytest.raises(GpudeError, match="GPUDE_GPU_PREFETCH must be one of auto, 0, 1"):
        HostShape(cores=4, gpus=1, prefetch_setting="yes")


@pytest.mark.parametrize("setting", ["auto", "1"])
@pytest.mark.parametrize("cores", CORES)
def test_without_listed_gpus_single_threaded_batches_run_a_core_each(cores, setting):
    # one simulated device, no lane beside GPU batches; the CPU's single-threaded batches a core each
    host = HostShape(cores=cores, gpus=0, lane_setting=setting)
    assert not host.cpu_lane and host.gpu_limit == 1 and host.cpu_only_lanes == cores
    assert host.timing_slot("exclusive", *GPU_BATCH) == TIMING_SLOTS
    assert host.concurrency("exclusive", *GPU_BATCH) == "exclusive"
    assert host.timing_slot("exclusive", *SEQUENTIAL_BATCH) == TIMING_SLOTS // cores
    assert cores * host.timing_slot("exclusive", *SEQUENTIAL_BATCH) <= TIMING_SLOTS
    assert host.concurrency("exclusive", *SEQUENTIAL_BATCH) == f"exclusive-cpu:{cores}"
    assert host.lane_jobs == cores and host.lane_taken("exclusive", *SEQUENTIAL_BATCH) == 1
    # a thread pool, and a shared or host batch, as before
    assert host.timing_slot("exclusive", *POOL_BATCH) == TIMING_SLOTS and host.concurrency(
        "exclusive", *POOL_BATCH) == "exclusive"
    assert host.timing_slot("shared", *SEQUENTIAL_BATCH) == 1 and host.concurrency("host", *SEQUENTIAL_BATCH) == "host"


def test_without_listed_gpus_one_core_or_lanes_off_times_every_batch_alone():
    for host in (HostShape(cores=16, gpus=0, lane_setting="0"), HostShape(cores=1, gpus=0),
                 HostShape(cores=16, gpus=0, on_cluster=True)):
        assert host.cpu_only_lanes == 0
        for batch in (GPU_BATCH, SEQUENTIAL_BATCH, POOL_BATCH):
            assert host.timing_slot("exclusive", *batch) == TIMING_SLOTS
            assert host.concurrency("exclusive", *batch) == "exclusive"


def test_a_cluster_run_has_no_lane_and_leaves_host_batches_to_exclusive_nodes():
    host = HostShape(cores=32, gpus=2, on_cluster=True, lane_setting="1")
    assert not host.cpu_lane
    assert host.timing_slot("exclusive", *SEQUENTIAL_BATCH) == TIMING_SLOTS
    assert host.gpus_taken("host", True) == 1 and host.gpus_taken("host", False) == 0


@pytest.mark.parametrize("env,expected", [
    ({"GPUDE_HOST_CORES": "32", "GPUDE_FAKE_GPUS": "4"}, HostShape(32, 4, False, "auto")),
    ({"GPUDE_HOST_CORES": "2", "GPUDE_FAKE_GPUS": "4", "GPUDE_CPU_LANE": "1"}, HostShape(2, 4, False, "1")),
    ({"GPUDE_HOST_CORES": "16", "GPUDE_FAKE_GPUS": "2", "GPUDE_CPU_LANE": ""}, HostShape(16, 2, False, "auto")),
    # CUDA_VISIBLE_DEVICES hides fake GPUs too (gpude.core.gpu_lease.list_devices)
    ({"GPUDE_HOST_CORES": "16", "GPUDE_FAKE_GPUS": "2", "CUDA_VISIBLE_DEVICES": "1"}, HostShape(16, 1, False, "auto")),
    ({"GPUDE_HOST_CORES": "16", "GPUDE_FAKE_GPUS": "2", "GPUDE_GPU_PREFETCH": "0"},
     HostShape(16, 2, False, "auto", "0")),
])
def test_the_workflow_reads_its_host_from_the_environment(monkeypatch, env, expected):
    for var in ("GPUDE_HOST_CORES", "GPUDE_FAKE_GPUS", "GPUDE_CPU_LANE", "CUDA_VISIBLE_DEVICES", "GPUDE_GPU_PREFETCH"):
        monkeypatch.delenv(var, raising=False)
    for var, value in env.items():
        monkeypatch.setenv(var, value)
    assert HostShape.from_environment() == expected
    assert HostShape.from_environment(on_cluster=True) == HostShape(expected.cores, expected.gpus, True,
                                                                    expected.lane_setting, expected.prefetch_setting)


def test_without_an_override_the_cores_are_those_the_process_may_run_on(monkeypatch):
    import os

    monkeypatch.delenv("GPUDE_HOST_CORES", raising=False)
    assert host_cores() == (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count())


@pytest.mark.parametrize("var,value,message", [
    ("GPUDE_HOST_CORES", "0", "GPUDE_HOST_CORES must be a positive number of cores, got '0'"),
    ("GPUDE_HOST_CORES", "all", "GPUDE_HOST_CORES must be a positive number of cores, got 'all'"),
    ("GPUDE_CPU_LANE", "yes", "GPUDE_CPU_LANE must be one of auto, 0, 1, got 'yes'"),
])
def test_a_misspelt_setting_is_an_error_not_a_silent_default(monkeypatch, var, value, message):
    monkeypatch.setenv("GPUDE_FAKE_GPUS", "2")
    monkeypatch.setenv(var, value)
    with pytest.raises(GpudeError, match=message):
        HostShape.from_environment()
