"""The files a batch job needs besides its code: the verified instance data of a LOP or ETC
problem, and the marker of its warm-up.

A batch's ``gpude warmup`` job compiles what its ``gpude run`` needs into numba's on-disk cache
(docs/startup.md), in parallel on the host's cores and outside the timed window; the batch, run
alone, then only loads it. The marker (one per batch, beside its outputs) is an input of the batch
only where it exists or the batch is still to make: a batch finished before warm-ups existed keeps
its recorded set of inputs and stays up to date (Snakemake re-runs a job whose set of inputs
changed; a marker deleted alone re-runs its batch). The workflow marks it ``ancient``, so that a
warm-up re-run never re-runs a finished batch.
"""

from __future__ import annotations

import shlex
from pathlib import Path


def instance_root() -> str:
    """The folder of the instance sets: data/, or ``GPUDE_INSTANCE_DATA``."""
    from ..problems.instances import data_dir

    return str(data_dir("lolib").parent)


def instance_markers(function: str) -> list[str]:
    """The marker of verified instance files a LOP or ETC function needs (none for a benchmark function)."""
    from ..problems import instance_data_set
    from ..problems.instances import data_dir

    kind = instance_data_set(function)
    return [str(data_dir(kind) / ".verified")] if kind else []


def fetch_source_args(instance_data_from: str | None, dataset: str) -> str:
    """``gpude fetch-data``'s ``--from`` for a set copied from the experiment's ``instance_data_from``
    (nothing: downloaded)."""
    return f"--from {shlex.quote(str(Path(instance_data_from) / dataset))}" if instance_data_from else ""


def warmup_marker(batch: str, *, can_make: bool, shared: str | None = None) -> str | None:
    """The warm-up marker to ask for as an input of a batch (its files without their ending), or None.

    ``can_make``: whether this run may warm the batch up: not on a cluster, where a warm-up would
    compile on another node (maybe for another GPU) and the batches compile in their own jobs, nor
    in a cluster job's own Snakemake (it must not ask for a marker the submitting process left out).
    ``shared``: the batch whose warm-up compiles this one's code too (:func:`shared_warmups`); a batch
    warmed up alone before keeps its own marker.
    """
    own = f"{batch}.warmup.json"
    if Path(own).is_file():
        return own
    marker = f"{shared or batch}.warmup.json"
    to_make = not (Path(f"{batch}.csv").is_file() and Path(f"{batch}.npz").is_file())
    return marker if Path(marker).is_file() or (to_make and can_make) else None


def problem_kind(function: str) -> str:
    """What a CPU evaluator is built for: an instance set (lolib, etc), the large-scale functions, or the
    benchmark functions (one evaluator for all, the function given as data)."""
    from ..functions.largescale import LARGE_SCALE
    from ..problems import instance_data_set

    return instance_data_set(function) or ("large-scale" if function in LARGE_SCALE else "benchmark")


def shared_warmups(grid, experiment: str, on_gpu) -> dict[str, str]:
    """Batch path -> the batch whose warm-up compiles its code, for the CPU batches of ``grid``
    (:class:`gpude.study.experiment.Batch` jobs; ``on_gpu(algorithm, implementation)``).

    numba's CPU code of an implementation depends on neither the function (of one :func:`problem_kind`),
    D, NP nor the chunk: the first batch of each (algorithm, implementation, floating type, setting, kind)
    compiles it into the cache for all of them, instead of a process per batch that only loads it. A GPU
    batch, whose kernels are built per function and shape, keeps a warm-up of its own (not in the map).
    """
    first, shared = {}, {}
    for batch in grid:
        if on_gpu(batch.algorithm, batch.implementation):
            continue
        key = (batch.algorithm, batch.implementation, batch.dtype, batch.setting, problem_kind(batch.function))
        path = batch.path(experiment)
        shared[path] = first.setdefault(key, path)
    return shared
