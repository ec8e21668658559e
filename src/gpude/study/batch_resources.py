"""What a batch job asks of the workflow's scheduler: its threads, whether it runs on a GPU, and, on
one host, the limits of the ``gpu``, ``timing_slot`` and ``cpu_lane`` resources that the batches share
(:mod:`gpude.study.host_shape` decides each batch's share of them).
"""

from __future__ import annotations

from collections.abc import Callable

from ..implementations import registry
from .host_shape import TIMING_SLOTS, HostShape


def local_host(workflow) -> HostShape:
    """The host a workflow run schedules its batches on, with its resource limits registered.

    A cluster executor (profiles/slurm: ``executor: slurm``, ``jobs: N``) leaves Snakemake's
    ``nodes`` set; a local run turns --jobs into --cores and leaves it unset (the executor itself is
    chosen only after the Snakefile is read, so ``workflow.local_exec`` cannot tell yet).

    On one host the GPUs are listed once, for every batch the run starts (``nvidia-smi`` takes a
    moment per call), and the resources get limits (Snakemake ignores a resource without one): as
    many GPU batches at once as :attr:`HostShape.gpu_jobs`, :data:`TIMING_SLOTS`, and as many CPU lanes as
    :attr:`HostShape.lane_jobs`. A
    ``--resources`` on the command line replaces the profile's whole ``resources:`` key, so the
    limits are set here, where one missing from --resources keeps its default. A cluster run gets
    none: a global ``gpu`` limit would allow that many GPU jobs cluster-wide.
    """
    on_cluster = workflow.nodes is not None
    if not on_cluster:
        from ..core.gpu_lease import export_devices

        export_devices()
    host = HostShape.from_environment(on_cluster=on_cluster)
    if not on_cluster:
        for name, limit in (("gpu", host.gpu_jobs), ("timing_slot", TIMING_SLOTS), ("cpu_lane", host.lane_jobs)):
            if name not in workflow.global_resources:
                workflow.register_resource(name, limit)
    return host


def threads(algorithm: str, implementation: str, *, on_cluster: bool, cores: Callable[[], int],
            node_threads: Callable[[], int]) -> int:
    """A batch's threads: 1, or for an implementation registered with ``threads="all"`` (master_slave's
    worker pool) every core: the run's ``cores()`` on one host, ``node_threads()`` on a cluster. Both
    are asked only where needed: a cluster run has no total of cores (Snakemake raises on
    ``workflow.cores`` there)."""
    if registry.get(algorithm, implementation).threads != "all":
        return 1
    return node_threads() if on_cluster else cores()


def on_gpu(algorithm: str, implementation: str) -> bool:
    """Whether the implementation runs on a GPU."""
    return registry.get(algorithm, implementation).needs_gpu


def implementations_on(device: str) -> str:
    """Regex alternatives of the registered implementations on ``device`` (``cpu``, ``gpu``)."""
    return "|".join(sorted({e.implementation for e in registry.entries() if e.device == device}))
