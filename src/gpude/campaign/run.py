"""A campaign's call on the GPU host: the host's machine checked against the reference's, the planned
processes run while they fit in the call's time, the instance files carried in and the folder packed."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pandas as pd

from ..core.errors import GpudeError
from ..core.io import write_atomic
from ..core.machines import machine_label
from .cells import ROOT, Cell, gpude_command
from .plan import Group


def host_gpu() -> str:
    from ..core.provenance import record

    return str(record().get("gpu", "none"))


def host_machine() -> str:
    from ..core.provenance import record

    return machine_label(record())


def host_gpus() -> int:
    from ..core.gpu_lease import list_devices

    return max(1, len(list_devices()))


def runs_on_gpu(cell: Cell) -> bool:
    from ..implementations.registry import get

    return get(cell.algorithm, cell.implementation).load(check_device=False).device == "gpu"


def check_machine(reference: pd.DataFrame, cells: list[Cell]) -> None:
    """A reference holds one machine kind: the host's GPU must be the one its GPU rows name."""
    if not len(reference) or not any(runs_on_gpu(c) for c in cells):
        return
    gpus = {g for g in reference["gpu"].dropna().astype(str) if g not in ("none", "")}
    here = host_gpu()
    if gpus and here not in gpus:
        raise GpudeError(f"the reference's rows name {', '.join(sorted(gpus))}, this host has {here}: a reference "
                         f"holds one machine kind; give --reference results/reference/<this machine>/<experiment>")


#: a campaign run's phases, in the order they run (:func:`run`)
PHASES = ("lanes", "shared", "gpu", "cpu")


def run(experiment: dict, plan: list[Group], out: Path, max_seconds: float, jobs: int, setup_s: float,
        dry_run: bool = False, root: Path = ROOT, gpus: int = 1, experiment_file: str | None = None,
        phases=PHASES) -> dict:
    """Run the groups while they fit: a shared cell's timed trials (``--alone-lanes``) first, that many
    at a time with nothing beside them; the shared-timed ones ``jobs`` at a time; then the exclusive GPU
    ones ``gpus`` at a time (each ``gpude run`` leases a GPU of its own; rows say ``exclusive-gpu:N``
    where N > 1); then the exclusive CPU ones, one at a time. Nothing of one phase runs beside the next.
    Interrupted (Ctrl-C, or the host script's ``timeout -s INT`` backstop), it stops the processes
    still running (their files are written whole at their end, so none is half-kept) and returns
    what ran, with ``interrupted``: how many it stopped. ``phases``: only these of :data:`PHASES` (e.g. a
    host of many cores makes a cell's shared trials, whose times do not count, while the reference's
    machine makes its timed ones)."""
    t0 = time.monotonic()
    left = lambda: max_seconds - (time.monotonic() - t0)  # noqa: E731
    stats = {"ran": 0, "failed": 0, "skipped_time": 0, "interrupted": 0}
    pending = list(plan)  # (the plan leaves out the trials whose files in ``out`` count)
    on_gpu = {g.cell.key(): runs_on_gpu(g.cell) for g in pending}
    lanes = [g for g in pending if g.cell.in_lane(g.first)]
    shared = [g for g in pending if g.cell.timing != "exclusive" and not g.cell.in_lane(g.first)]
    exclusive_gpu = [g for g in pending if g.cell.timing == "exclusive" and on_gpu[g.cell.key()]]
    exclusive_cpu = [g for g in pending if g.cell.timing == "exclusive" and not on_gpu[g.cell.key()]]
    by_phase = zip(PHASES, (lanes, shared, exclusive_gpu, exclusive_cpu))
    lanes, shared, exclusive_gpu, exclusive_cpu = (groups if phase in phases else [] for phase, groups in by_phase)

    def start(g, concurrency):
        stem = out / g.stem()
        stem.parent.mkdir(parents=True, exist_ok=True)
        for suffix in (".csv", ".npz", ".log"):  # a file of an earlier campaign: it does not count
            Path(f"{stem}{suffix}").unlink(missing_ok=True)
        cmd = gpude_command(experiment, g.cell, g.first, g.count, str(stem), f"{stem}.log", concurrency,
                            g.per_launch, experiment_file)
        launch = f", {g.per_launch} per launch" if g.per_launch > 1 else ""
        print(f"campaign: [{time.monotonic() - t0:6.0f} s] {g.cell} trials {g.first}..{g.first + g.count - 1} "
              f"(expected {g.expected_s:.0f} s{launch})", flush=True)
        if dry_run:
            print(f"campaign:   {cmd}")
            return None
        # a session of its own: an interrupt stops the shell and the run it started
        return subprocess.Popen(cmd, shell=True, cwd=root, start_new_session=True)

    def finished(g, proc):
        code = proc.wait()
        if code:
            stats["failed"] += 1
            print(f"campaign: {g.cell} trials {g.first}..: exit {code}; its log: {out / g.stem()}.log", file=sys.stderr)
        else:
            stats["ran"] += 1

    def pool(groups, width, concurrency=None):
        queue, running = list(groups), []
        try:
            fill(queue, running, width, concurrency)
        except KeyboardInterrupt:
            for g, proc in running:
                if proc.poll() is None:
                    try:
                        os.killpg(proc.pid, signal.SIGTERM)
                    except ProcessLookupError:  # (ended in between)
                        pass
                    proc.wait()
                    stats["interrupted"] += 1
                    print(f"campaign: interrupted: {g.cell} trials {g.first}..{g.first + g.count - 1} stopped "
                          "(none of its trials kept)", file=sys.stderr, flush=True)
                else:
                    finished(g, proc)
            raise

    def fill(queue, running, width, concurrency):
        while queue or running:
            while queue and len(running) < width:
                g = queue.pop(0)
                if g.expected_s + setup_s > left():
                    stats["skipped_time"] += 1
                    continue
                proc = start(g, concurrency)
                if proc is None:
                    stats["ran"] += 1
                else:
                    running.append((g, proc))
            done = [item for item in running if item[1].poll() is not None]
            for item in done:
                running.remove(item)
                finished(*item)
            if running and not done:
                time.sleep(0.2)

    try:
        if lanes:  # a shared cell's timed trials, in lanes of their own with nothing else beside them
            width = lanes[0].cell.alone_lanes
            pool(lanes, width, f"exclusive-cpu:{width}")
        pool(shared, jobs, f"shared:{jobs}")  # the rows say how many ran side by side (at most)
        # longest first: under a deadline the long launches start while there is time for them, and
        # the short ones fill the GPUs' ends
        exclusive_gpu.sort(key=lambda g: -g.expected_s)
        pool(exclusive_gpu, gpus, f"exclusive-gpu:{gpus}" if gpus > 1 else None)
        pool(exclusive_cpu, 1)
    except KeyboardInterrupt:
        pass
    return stats


# --- what travels to and from the host ------------------------------------------------------------------

def write_tar(path: Path, members) -> None:
    """One .tar.gz of ``(file or folder, name in the archive)`` pairs, written atomically."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for source, name in members:
            tar.add(source, arcname=name)
    write_atomic(path, buf.getvalue())


def instance_files(cells: list[Cell]) -> list[tuple[str, str]]:
    """(instance set, file) of every LOP or ETC instance among the cells (verified on access)."""
    import csv

    from ..problems.instances import find_instance, table_dir

    tables = {"etc": ("etc", "instances.csv"), "lop": ("lolib", "optima.csv")}
    files = set()
    for function in sorted({c.function for c in cells}):
        found = find_instance(function)
        if found is None:
            continue
        kind, table = tables[found[0]]
        with open(table_dir(kind) / table, newline="") as fh:
            files.add((kind, next(r["file"] for r in csv.DictReader(fh) if r["paper_name"] == found[1])))
    return sorted(files)


def pack_instances(cells: list[Cell], path: Path) -> list[str]:
    """The cells' instance files in one .tgz of ``<set>/<file>`` (``run --instance-data`` takes it):
    the GPU host is offline, and its transfers are capped."""
    from ..problems.instances import instance_file

    files = instance_files(cells)
    if not files:
        raise GpudeError("the experiment has no LOP or ETC instance: nothing to pack")
    write_tar(path, [(instance_file(kind, name), f"{kind}/{name}") for kind, name in files])
    return [f"{kind}/{name}" for kind, name in files]


def unpack_instances(path: Path, into: Path) -> None:
    """``--instance-data FILE.tgz``: unpacked for the runs (GPUDE_INSTANCE_DATA), or a folder as it is."""
    with tarfile.open(path) as tar:
        tar.extractall(into, filter="data")


def archive(path: Path, out: Path, root: Path) -> None:
    """``--archive``: the campaign's folder in one .tar.gz, its path from the root."""
    write_tar(path, [(out, str(out.resolve().relative_to(root.resolve())))] if out.is_dir() else [])
    print(f"campaign: packed {out} into {path}")
