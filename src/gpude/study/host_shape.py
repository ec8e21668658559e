"""How a local workflow run shares the host among its timed batches.

The Snakemake workflow (``workflow/rules/common.smk``) schedules its batches with three resources:
``gpu`` (as many as the host's GPUs), ``timing_slot`` (:data:`TIMING_SLOTS` units) and ``cpu_lane``
(:attr:`HostShape.lane_jobs`: the CPU lanes). What a batch
takes of them, and the ``concurrency`` label its rows record, follow from the host's shape: its
cores, its GPUs, whether the run submits to a cluster, and the ``GPUDE_CPU_LANE`` setting.
:class:`HostShape` holds those and decides; the workflow builds one from the environment
(:meth:`HostShape.from_environment`), and the tests build any shape they want to check.

Timing modes (an experiment's ``timing``)
-----------------------------------------
shared
    one timing slot: shared batches run side by side, never beside an exclusive one.
exclusive
    every slot: alone on the machine; except a GPU batch on a host of N GPUs, which takes 1/N of
    them (alone on its GPU, the host's cores shared with the other GPUs' batches), and, where the
    host has CPU lanes (L of them: :attr:`HostShape.cpu_lanes`), 1/(N + L) for a GPU batch and for a
    single-threaded CPU batch, each on a core of its own. On a host without GPUs of C >= 2 cores, a
    single-threaded CPU batch takes 1/C: up to C of them at once, each on a core of its own
    (:attr:`HostShape.cpu_only_lanes`); a multi-threaded one runs alone.
host
    every slot and every GPU: alone on the machine.

Starting a GPU batch while another holds its GPU
------------------------------------------------
A GPU batch spends a second or more before its GPU does anything (the process starts, imports,
lists the GPUs) and after (it exits, the scheduler starts the next): between two short batches the
GPU idled 0.9-1.8 s (results/benchmarks/gpu_scaling). Where the host has the cores, the scheduler
runs a second GPU batch per GPU (:attr:`HostShape.prefetch`): it does its start-up and then waits
at the GPU lease (:mod:`gpude.core.gpu_lease`), so that one batch at a time runs on each GPU and the
next one is ready when it is released. A waiting batch counts as a timed lane for the timing slots.

Environment
-----------
GPUDE_HOST_CORES
    ``N``: count the host's cores as N (default: the cores this process may run on), so that a
    dry run's labels do not depend on the machine that makes it.
GPUDE_CPU_LANE
    ``0``: no CPU lane; ``1``: a CPU lane wherever GPUs are listed; unset or ``auto``: a lane where
    the cores are at least the GPUs + 2. On a host without GPUs: ``0`` times every CPU batch alone,
    else single-threaded ones run a core each (two standard-DE batches at once on the 2 cores of a
    VM: the same trial times as alone, ratio 0.99; results/benchmarks/cpu_lanes_cpu-2core.csv).
GPUDE_GPU_PREFETCH
    ``0``: no second batch per GPU; ``1``: one wherever GPUs are listed; unset or ``auto``: where the
    cores are at least twice the GPUs + 2.
GPUDE_FAKE_GPUS
    ``N``: N fake GPUs (:func:`gpude.core.gpu_lease.list_devices`, which also applies
    ``CUDA_VISIBLE_DEVICES`` to them).
"""

from __future__ import annotations

import dataclasses
import os

from ..core.errors import GpudeError

#: capacity of the workflow's ``timing_slot`` resource (a batch timed alone takes all of it)
TIMING_SLOTS = 1000

#: values of ``GPUDE_CPU_LANE``
LANE_SETTINGS = ("auto", "0", "1")


def host_cores() -> int:
    """The host's cores as the workflow counts them: ``GPUDE_HOST_CORES`` if set, else the cores
    this process may run on (its affinity mask: a container's or a ``taskset``'s share)."""
    forced = os.environ.get("GPUDE_HOST_CORES")
    if forced:
        if not forced.isdigit() or int(forced) < 1:
            raise GpudeError(f"GPUDE_HOST_CORES must be a positive number of cores, got {forced!r}")
        return int(forced)
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1  # (macOS has no affinity mask)


@dataclasses.dataclass(frozen=True)
class HostShape:
    """The host a local workflow run times its batches on.

    Parameters
    ----------
    cores
        The machine's cores (not ``--cores``: a row's label is part of its batch's params, and
        must not change with ``--cores``).
    gpus
        The GPUs listed for leasing (0 where none is: no driver, or the CUDA simulator).
    on_cluster
        Whether the run submits its jobs to a cluster (SLURM), where the host's shape says nothing
        about the nodes the jobs run on.
    lane_setting
        ``GPUDE_CPU_LANE``: ``"auto"``, ``"0"`` or ``"1"`` (see :attr:`cpu_lane`).
    """

    cores: int
    gpus: int
    on_cluster: bool = False
    lane_setting: str = "auto"
    prefetch_setting: str = "auto"

    def __post_init__(self):
        if self.cores < 1 or self.gpus < 0:
            raise GpudeError(f"a host needs a core or more and no negative GPUs, got {self}")
        if self.lane_setting not in LANE_SETTINGS:
            raise GpudeError(f"GPUDE_CPU_LANE must be one of {', '.join(LANE_SETTINGS)}, got {self.lane_setting!r}")
        if self.prefetch_setting not in LANE_SETTINGS:
            raise GpudeError(f"GPUDE_GPU_PREFETCH must be one of {', '.join(LANE_SETTINGS)}, "
                             f"got {self.prefetch_setting!r}")

    @classmethod
    def from_environment(cls, on_cluster: bool = False) -> HostShape:
        """This host: :func:`host_cores`, the GPUs :func:`gpude.core.gpu_lease.list_devices` lists, and
        ``GPUDE_CPU_LANE`` (unset or empty: ``auto``)."""
        from ..core.gpu_lease import list_devices

        return cls(cores=host_cores(), gpus=len(list_devices()), on_cluster=on_cluster,
                   lane_setting=os.environ.get("GPUDE_CPU_LANE") or "auto",
                   prefetch_setting=os.environ.get("GPUDE_GPU_PREFETCH") or "auto")

    @property
    def gpu_limit(self) -> int:
        """GPU batches at once: one per GPU; one where none is listed (the simulator's one device)."""
        return max(1, self.gpus)

    @property
    def prefetch(self) -> bool:
        """Whether the scheduler runs a second GPU batch per GPU, which starts up and waits at the
        lease (module docstring). Only where GPUs are listed, never on a cluster; ``auto`` wants a
        core for each GPU's two batches and two more."""
        if self.on_cluster or self.prefetch_setting == "0" or not self.gpus:
            return False
        return self.prefetch_setting == "1" or self.cores >= 2 * self.gpus + 2

    @property
    def gpu_jobs(self) -> int:
        """The scheduler's ``gpu`` resource: GPU batches at once, those waiting at the lease included."""
        return self.gpu_limit * (2 if self.prefetch else 1)

    @property
    def cpu_lane(self) -> bool:
        """Whether a single-threaded CPU batch timed ``exclusive`` runs beside the GPU batches, on
        a core of its own, instead of alone.

        Only where GPUs are listed, and never on a cluster. ``auto`` wants a free core for each GPU
        batch's host thread, one for the lane and one for the rest (cores >= GPUs + 2): a process
        beside others that each keep a core busy is not measurably slower while cores are free
        (results/benchmarks/host_sharing, on an H100 host). A multi-threaded CPU batch
        (master_slave's pool) still runs alone.
        """
        if self.on_cluster or self.lane_setting == "0" or not self.gpus:
            return False
        return self.lane_setting == "1" or self.cores >= self.gpus + 2

    @property
    def cpu_only_lanes(self) -> int:
        """On a host without listed GPUs: how many single-threaded CPU batches timed ``exclusive`` run
        at once, each on a core of its own (every core where there are two or more; 0: one batch alone).
        Not on a cluster, nor with ``GPUDE_CPU_LANE=0``; 0 wherever GPUs are listed (:attr:`cpu_lane`)."""
        if self.on_cluster or self.lane_setting == "0" or self.gpus or self.cores < 2:
            return 0
        return self.cores

    @property
    def cpu_lanes(self) -> int:
        """How many single-threaded CPU batches timed ``exclusive`` run beside the GPU batches, each on a
        core of its own: 0 without a :attr:`cpu_lane`; else as many as keep half the cores free, the GPU
        batches' spinning host threads counted (cores // 2 - GPUs), and one at least. Half: on a 16-core
        H100 host a GPU batch beside 7 processes that keep a core each busy took the time it took alone
        (ratio 0.98-1.02), beside 15 1.35x longer (results/benchmarks/host_sharing)."""
        if not self.cpu_lane:
            return 0
        return max(1, self.cores // 2 - self.gpu_limit)

    @property
    def lane_jobs(self) -> int:
        """The scheduler's ``cpu_lane`` resource: single-threaded CPU batches timed ``exclusive`` at once (the
        lanes; where the host lists no GPUs, its cores). Without it the slots alone would let a lane's
        batches take the shares of the GPU batches (and of the one waiting at each lease) too."""
        return self.cpu_lanes or self.cpu_only_lanes or 1

    def lane_taken(self, timing: str, on_gpu: bool, threads: int) -> int:
        """A batch's ``cpu_lane``: 1 for a single-threaded CPU batch timed ``exclusive`` in a lane, else 0."""
        in_lane = self.in_cpu_lane(on_gpu, threads) or self.in_cpu_only_lane(on_gpu, threads)
        return 1 if timing == "exclusive" and in_lane else 0

    @property
    def timed_lanes(self) -> int:
        """Batches timed ``exclusive`` at once beside each other: one per GPU, and the CPU lanes."""
        return self.gpu_limit + self.cpu_lanes

    @property
    def slot_shares(self) -> int:
        """Into how many shares the timing slots divide: the timed lanes, and a GPU batch waiting at
        each GPU's lease where :attr:`prefetch`."""
        return self.timed_lanes + (self.gpu_limit if self.prefetch else 0)

    def in_cpu_lane(self, on_gpu: bool, threads: int) -> bool:
        """Whether a batch (on a GPU or not, with this many threads) is one the CPU lanes run."""
        return self.cpu_lane and not on_gpu and threads == 1

    def in_cpu_only_lane(self, on_gpu: bool, threads: int) -> bool:
        """Whether a batch is one a host without GPUs runs a core each (:attr:`cpu_only_lanes`)."""
        return self.cpu_only_lanes > 0 and not on_gpu and threads == 1

    def timing_slot(self, timing: str, on_gpu: bool, threads: int) -> int:
        """A batch's share of the :data:`TIMING_SLOTS` under its timing mode (module docstring)."""
        if timing == "shared":
            return 1
        if timing == "exclusive" and self.in_cpu_only_lane(on_gpu, threads):
            return TIMING_SLOTS // self.cpu_only_lanes
        if timing == "exclusive" and (on_gpu or self.in_cpu_lane(on_gpu, threads)):
            return TIMING_SLOTS // self.slot_shares
        return TIMING_SLOTS

    def concurrency(self, timing: str, on_gpu: bool, threads: int) -> str:
        """What a batch's rows record about the machine's other load while it was timed.

        ``exclusive-gpu:N`` for a GPU batch timed ``exclusive`` beside the batches on the other
        GPUs of N, ``exclusive-gpu:N+cpu`` with the CPU lanes' batches beside them too,
        ``exclusive-cpu:N+L`` for a CPU lane's batch (at most N + L batches timed at once, each on a core),
        ``exclusive-cpu:C`` for a single-threaded batch on a host without GPUs of C cores (at most C at
        once, a core each); else the timing mode itself (``exclusive`` alone on a one-GPU host without a
        lane).
        """
        if timing != "exclusive":
            return timing
        if self.in_cpu_only_lane(on_gpu, threads):
            return f"exclusive-cpu:{self.cpu_only_lanes}"
        if on_gpu and (self.gpu_limit > 1 or self.cpu_lane):
            return f"exclusive-gpu:{self.gpu_limit}" + ("+cpu" if self.cpu_lane else "")
        if self.in_cpu_lane(on_gpu, threads):
            return f"exclusive-cpu:{self.timed_lanes}"
        return timing

    def gpus_taken(self, timing: str, on_gpu: bool) -> int:
        """GPUs a batch holds in the scheduler: its own on a GPU; every GPU when timed ``host``, so
        that nothing runs on any GPU beside it (on a cluster, ``--exclusive`` nodes do that)."""
        if timing == "host" and not self.on_cluster:
            return self.gpu_jobs
        return 1 if on_gpu else 0
