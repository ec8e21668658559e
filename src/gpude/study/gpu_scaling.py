"""Runs per hour against the number of GPUs: a scaling set's batches, the files a scaling run makes,
and one row per GPU count from what ``benchmarks/gpu_scaling.sh`` leaves behind (docs/scaling.md).

A *scaling set* (``config/scaling/<name>.yaml``, ``workflow/schemas/scaling.schema.yaml``) picks GPU
batches from several experiments, each run with its own experiment's settings (seed, budget,
parameters), so that one workflow run holds batches of every study. A plain experiment file serves
as a set of all its batches.

Command line (``python -m gpude.study.gpu_scaling``): ``target CONFIG`` (the workflow target of a run),
``gpu-counts CONFIG``, ``batches CONFIG``, ``warmups CONFIG`` (their files), ``clean CONFIG`` (delete
the batches' outputs and logs, keep their warm-up markers), ``pack-logs CONFIG TAR``, ``rows DIR
--config CONFIG --out CSV`` (and ``batches.csv`` beside it).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import sys
import tarfile
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from ..core.errors import GpudeError
from ..core.gpu_lease import LEASED_LINE, RELEASED_LINE
from ..core.io import read_csv, write_csv_atomic
from . import experiment as experiment_model

if TYPE_CHECKING:
    import pandas as pd

SCHEMA = experiment_model.SCHEMA.with_name("scaling.schema.yaml")
EXPERIMENTS = Path("config/experiments")
DEFAULT_GPU_COUNTS = (1, 2, 4, 8)


class ScalingError(GpudeError, ValueError):
    """A scaling set that does not load: the message names the key and the fix."""


@dataclasses.dataclass(frozen=True)
class SetBatch:
    """One batch of a scaling set: the experiment it belongs to and its batch job."""

    experiment: str
    batch: experiment_model.Batch

    @property
    def path(self) -> str:
        return self.batch.path(self.experiment)

    @property
    def log(self) -> str:
        return f"logs/{self.experiment}/run_batch/{self.path.split('/batches/', 1)[1]}.log"


def is_scaling_set(path) -> bool:
    return Path(path).parent.name == "scaling"


@functools.cache
def experiment_named(name: str) -> dict:
    """``config/experiments/<name>.yaml``, loaded and checked (once per process)."""
    path = EXPERIMENTS / f"{name}.yaml"
    if not path.is_file():
        raise ScalingError(f"no experiment {name!r} (expected {path}); a part names an experiment of "
                           f"config/experiments/: {', '.join(sorted(p.stem for p in EXPERIMENTS.glob('*.yaml')))}")
    return experiment_model.load_experiment(str(path))


def experiment(name: str) -> experiment_model.Experiment:
    """:func:`experiment_named` as an :class:`~gpude.study.experiment.Experiment` with its file."""
    return experiment_model.Experiment(experiment_named(name), str(EXPERIMENTS / f"{name}.yaml"))


def load_set(path) -> dict:
    """A scaling set, checked against its schema and against its experiments (every value a part
    picks is one its experiment lists; no experiment with a parameter grid)."""
    import jsonschema

    try:
        spec = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise ScalingError(f"cannot read the scaling set {path}: {exc}") from None
    schema = yaml.safe_load(SCHEMA.read_text())
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(spec), key=lambda e: list(e.path))
    if errors:
        e = errors[0]
        where = "/".join(map(str, e.path)) or "(top level)"
        raise ScalingError(f"{path}: {where}: {e.message} (workflow/schemas/scaling.schema.yaml)")
    spec.setdefault("gpu_counts", list(DEFAULT_GPU_COUNTS))
    for k, part in enumerate(spec["parts"]):
        experiment = experiment_named(part["experiment"])
        if experiment_model.has_param_grid(experiment):
            raise ScalingError(f"{path}: parts/{k}: experiment {part['experiment']} has a parameter grid, "
                               "which a scaling set cannot pick from; pick one without")
        listed = {"algorithms": set(experiment["algorithms"]),
                  "implementations": {i for s in experiment["algorithms"].values() for i in s["implementations"]},
                  "functions": set(experiment["functions"]),
                  "dims": {c.dim for c in experiment_model.cells(experiment)},
                  "popsizes": {c.popsize for c in experiment_model.cells(experiment)}}
        for key, allowed in listed.items():
            unknown = [v for v in part.get(key, []) if v not in allowed]
            if unknown:
                raise ScalingError(f"{path}: parts/{k}: {key} {unknown} not in experiment {part['experiment']} "
                                   f"(it has {sorted(allowed, key=str)})")
    return spec


def set_batches(spec: dict) -> list[SetBatch]:
    """Every batch a scaling set picks, in its parts' order (each experiment's GPU batches only; a batch
    two parts pick, once)."""
    from ..implementations import registry

    out = {}
    for part in spec["parts"]:
        experiment = experiment_named(part["experiment"])
        picked = {}
        for batch in experiment_model.grid(experiment, has_gpu=True):
            if not registry.get(batch.algorithm, batch.implementation).needs_gpu:
                continue
            if any(key in part and value not in part[key] for key, value in
                   (("algorithms", batch.algorithm), ("implementations", batch.implementation),
                    ("functions", batch.function),
                    ("dims", batch.dim), ("popsizes", batch.popsize))):
                continue
            if batch.chunk < part.get("chunks", sys.maxsize):
                picked[batch] = None
        if not picked:
            raise ScalingError(f"part {part['experiment']} picks no GPU batch: widen its selection")
        out.update((SetBatch(part["experiment"], b), None) for b in picked)
    return list(out)


def batches_of(config) -> list[SetBatch]:
    """A scaling set's batches, or all batches of an experiment file."""
    if is_scaling_set(config):
        return set_batches(load_set(config))
    experiment = experiment_model.load_experiment(str(config))
    return [SetBatch(experiment["name"], b) for b in experiment_model.grid(experiment, has_gpu=True)]


def target(config) -> str:
    """The workflow's target of a run of ``config``: the merged trial table."""
    if is_scaling_set(config):
        return f"results/gpu_scaling/{load_set(config)['name']}/trials.csv"
    return f"results/{experiment_model.load_experiment(str(config))['name']}/trials.csv"


def gpu_counts(config) -> list[int]:
    return load_set(config)["gpu_counts"] if is_scaling_set(config) else list(DEFAULT_GPU_COUNTS)


def clean(config) -> int:
    """Delete the batches' trial files, traces and logs and the merged table (warm-up markers stay:
    the cache they stand for is the host's). Returns how many files went."""
    files = [Path(f) for b in batches_of(config) for f in (b.path + ".csv", b.path + ".npz", b.log)]
    merged = Path(target(config))
    files += [merged, merged.with_name("traces.npz")]
    gone = 0
    for f in files:
        if f.is_file():
            f.unlink()
            gone += 1
    return gone


def pack_logs(config, tar_path) -> None:
    with tarfile.open(tar_path, "w:gz") as tar:
        for b in batches_of(config):
            if Path(b.log).is_file():
                tar.add(b.log)


# --- one row per GPU count --------------------------------------------------------------------------

def leases(logs: dict[str, str]) -> list[dict]:
    """The GPU leases of batch logs (name -> text): GPU index and UUID, leased and released at."""
    rows = []
    for name, text in logs.items():
        held = LEASED_LINE.search(text)
        gone = RELEASED_LINE.search(text)
        if held and gone:
            rows.append(dict(batch=name, gpu_index=int(held.group(1)), gpu_uuid=held.group(2), gpu=held.group(3),
                             leased=float(held.group(4)), released=float(gone.group(3))))
    return rows


def most_at_once(intervals) -> int:
    events = sorted([(a, 1) for a, _ in intervals] + [(b, -1) for _, b in intervals])
    held = most = 0
    for _, step in events:
        held += step
        most = max(most, held)
    return most


def cpu_busy(samples, start: float, end: float) -> tuple[float, float]:
    """Mean and highest busy cores over [start, end] from ``/proc/stat`` samples (t, busy, total
    jiffies), given the host's cores through total/busy ratios (jiffies count every core)."""
    import numpy as np

    s = samples[(samples.t >= start) & (samples.t <= end)]
    if len(s) < 2:
        return float("nan"), float("nan")
    busy = np.diff(s.busy_jiffies.to_numpy(float))
    total = np.diff(s.total_jiffies.to_numpy(float))
    return float(busy.sum() / total.sum()), float(np.max(busy / np.where(total > 0, total, np.nan)))


def run_folders(out_dir) -> list[Path]:
    """The run folders of a scaling run's output (``priming``, ``gpus<N>``: those with a wall.txt)."""
    return [d for d in sorted(Path(out_dir).iterdir()) if d.is_dir() and (d / "wall.txt").is_file()]


def _run_files(run_dir: Path) -> tuple[dict, dict, pd.DataFrame]:
    """A run folder's wall.txt (key -> value), its batch logs (name -> text) and its merged trials
    (trials.csv, or trials.csv.gz as committed; empty where it made none)."""
    import pandas as pd

    wall = dict(line.split(" ", 1) for line in (run_dir / "wall.txt").read_text().splitlines())
    texts = {}
    if (run_dir / "logs.tar.gz").is_file():
        with tarfile.open(run_dir / "logs.tar.gz") as tar:
            texts = {m.name: tar.extractfile(m).read().decode(errors="replace") for m in tar.getmembers() if m.isfile()}
    trials = next((read_csv(run_dir / name) for name in ("trials.csv", "trials.csv.gz")
                   if (run_dir / name).is_file()), pd.DataFrame())
    return wall, texts, trials


def lease_measures(batches: pd.DataFrame, wall_s: float) -> dict:
    """What one run's rows of batches.csv (:func:`batch_rows`) say of its GPUs' time.

    Returns
    -------
    dict
        ``gap_s``: the mean time from one batch's release of a GPU to the next one's lease of it (NaN
        where no GPU ran two); ``fixed_s``: the run's time before its first lease and after its last
        release; ``beyond_trials_s``: the mean of a batch's lease less its trials' time; ``longest_s``
        and ``held_s``: the longest lease and their sum.
    """
    b = batches.sort_values("leased_s")
    held = b["released_s"] - b["leased_s"]
    gaps = [g for _, lane in b.groupby("gpu_index")
            for g in (lane["leased_s"].to_numpy()[1:] - lane["released_s"].to_numpy()[:-1])]
    return dict(gap_s=float(sum(gaps) / len(gaps)) if gaps else float("nan"),
                fixed_s=float(b["leased_s"].min() + (wall_s - b["released_s"].max())),
                beyond_trials_s=float((held - b["trial_s"]).mean()), longest_s=float(held.max()),
                held_s=float(held.sum()))


def summarise(run_dir, host_cores: int | None = None) -> dict:
    """One row of a scaling run's folder (``benchmarks/gpu_scaling.sh``): runs, wall time, runs per
    hour, per GPU the fraction of the wall time it was leased (and nvidia-smi's busy fraction), the
    CPU's mean busy cores, and where the rows say they ran."""
    import pandas as pd

    run_dir = Path(run_dir)
    wall, texts, trials = _run_files(run_dir)
    start, end = float(wall["start"]), float(wall["end"])
    held = leases(texts)
    wall_s = end - start
    by_gpu = {}
    for row in held:
        by_gpu.setdefault(row["gpu_index"], []).append(row["released"] - row["leased"])
    lease_fraction = {g: sum(v) / wall_s for g, v in sorted(by_gpu.items())}
    gpu_util = {}
    if (run_dir / "gpu.csv").is_file() and (run_dir / "gpu.csv").stat().st_size:
        g = read_csv(run_dir / "gpu.csv", header=None, names=["timestamp", "index", "util", "mem_mib"],
                        skipinitialspace=True)
        gpu_util = {int(i): float(v) / 100 for i, v in g.groupby("index")["util"].mean().items()}
    cores = host_cores or (int(trials["cpu_cores"].iloc[0]) if "cpu_cores" in trials and len(trials) else None)
    mean_cpu, peak_cpu = (float("nan"), float("nan"))
    if (run_dir / "cpu.csv").is_file():
        mean_cpu, peak_cpu = cpu_busy(read_csv(run_dir / "cpu.csv"), start, end)
    first = trials.iloc[0] if len(trials) else {}
    runs = int(len(trials))
    return dict(
        gpus=(int(wall.get("visible", "").count(",") + 1) if wall.get("visible", "all") != "all"
              else int(wall["host_gpus"])),
        host_gpus=int(wall["host_gpus"]), prefetch=wall.get("prefetch", ""), exit=int(wall["exit"]), runs=runs,
        batches=len(held),
        wall_s=round(wall_s, 3), runs_per_hour=round(runs / wall_s * 3600, 1) if runs else float("nan"),
        batch_s_mean=round(sum(r["released"] - r["leased"] for r in held) / len(held), 3) if held else float("nan"),
        leased_fraction=";".join(f"{g}:{f:.3f}" for g, f in lease_fraction.items()),
        leased_fraction_mean=(round(sum(lease_fraction.values()) / len(lease_fraction), 3) if lease_fraction
                              else float("nan")),
        gpu_util=";".join(f"{g}:{u:.3f}" for g, u in sorted(gpu_util.items())),
        most_leases_at_once=most_at_once([(r["leased"], r["released"]) for r in held]),
        cpu_busy_cores_mean=round(mean_cpu * cores, 2) if cores else float("nan"),
        cpu_busy_cores_peak=round(peak_cpu * cores, 2) if cores else float("nan"),
        cpu_cores=cores, gpu=first.get("gpu", held[0]["gpu"] if held else ""), host=first.get("host", ""),
        boot_id=first.get("boot_id", ""), git_commit=first.get("git_commit", ""),
        numba=first.get("numba", ""), numba_cuda=first.get("numba_cuda", ""),
        started_utc=pd.Timestamp(start, unit="s", tz="UTC").isoformat(timespec="seconds"))


def batch_rows(run_dir) -> pd.DataFrame:
    """One row per batch of a scaling run's folder: its experiment and path, the GPU it leased, when
    (seconds from the run's start) it leased and released it, its runs, their summed ``wall_time_s``
    and the largest ``setup_time_s`` (the batch's trial rows, by its trace file)."""
    import pandas as pd

    run_dir = Path(run_dir)
    wall, texts, trials = _run_files(run_dir)
    start = float(wall["start"])
    out = []
    for row in leases(texts):
        experiment, rest = row["batch"].removeprefix("logs/").split("/run_batch/", 1)
        path = f"results/{experiment}/batches/{rest.removesuffix('.log')}"
        mine = trials[trials["trace_path"] == path + ".npz"] if "trace_path" in trials else trials.iloc[:0]
        out.append(dict(run=run_dir.name, experiment=experiment, batch=path, gpu_index=row["gpu_index"],
                        leased_s=round(row["leased"] - start, 3), released_s=round(row["released"] - start, 3),
                        runs=len(mine), trial_s=round(float(mine["wall_time_s"].sum()), 4),
                        setup_s=round(float(mine["setup_time_s"].max()), 4) if len(mine) else float("nan")))
    return pd.DataFrame(out).sort_values("leased_s").reset_index(drop=True) if out else pd.DataFrame()


def rows(out_dir, config=None) -> pd.DataFrame:
    """:func:`summarise` of every ``gpus<N>`` folder (and ``priming``) of a scaling run, by GPU count."""
    import pandas as pd

    out_dir = Path(out_dir)
    found = []
    for run_dir in run_folders(out_dir):
        row = summarise(run_dir)
        row["run"] = run_dir.name
        if config is not None:
            row["config"] = str(config)
        found.append(row)
    if not found:
        raise ScalingError(f"no scaling runs in {out_dir} "
                           "(folders with wall.txt: benchmarks/gpu_scaling.sh writes them)")
    table = pd.DataFrame(found)
    timed = table[table.run != "priming"]
    one = timed[timed.gpus == 1]
    if len(one):
        table["speedup"] = (table.runs_per_hour / float(one.runs_per_hour.iloc[0])).round(3)
    return table.sort_values(["run"], key=lambda c: c.map(lambda r: (r != "priming", r))).reset_index(drop=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpude.study.gpu_scaling", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("target", "gpu-counts", "clean", "batches", "warmups"):
        sub.add_parser(name).add_argument("config")
    p = sub.add_parser("pack-logs")
    p.add_argument("config")
    p.add_argument("tar")
    p = sub.add_parser("rows")
    p.add_argument("dir")
    p.add_argument("--config")
    p.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    import pandas as pd

    try:
        if args.command == "target":
            print(target(args.config))
        elif args.command == "gpu-counts":
            print(" ".join(map(str, gpu_counts(args.config))))
        elif args.command == "batches":
            print("\n".join(f"{b.path}.csv" for b in batches_of(args.config)))
        elif args.command == "warmups":  # the batches' warm-up markers (the workflow's WARMUP)
            print("\n".join(f"{b.path}.warmup.json" for b in batches_of(args.config)))
        elif args.command == "clean":
            clean(args.config)
        elif args.command == "pack-logs":
            pack_logs(args.config, args.tar)
        else:
            table = rows(args.dir, args.config)
            write_csv_atomic(table, args.out)
            runs = [batch_rows(d) for d in run_folders(args.dir)]
            write_csv_atomic(pd.concat(runs, ignore_index=True), Path(args.out).with_name("batches.csv"))
            print(table.to_string(index=False))
    except GpudeError as exc:
        print(f"gpude.study.gpu_scaling: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
