"""The trial tables a paper output is made from: committed reference results of one or more
machines (``results/reference/<machine>/<experiment>/``) and whatever ran locally
(``results/<experiment>/``), each a ``trials.csv`` with its ``traces.npz`` beside it."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..io import read_csv
from ..results import load_traces

_NO_GPU = ("none", "numba-cuda-simulator", "nan", "")


def _real_gpu(name) -> bool:
    name = str(name)
    return name not in _NO_GPU and not name.startswith("unavailable")


def machine_label(row, gpu: str | None = None) -> str:
    """'<GPU> / <CPU> x<cores>' (the GPU left out on a machine without one)."""
    cpu = f"{row.get('cpu', 'unknown CPU')} x{row.get('cpu_cores', '?')}"
    gpu = str(row.get("gpu", "")) if gpu is None else gpu
    return f"{gpu} / {cpu}" if _real_gpu(gpu) else cpu


def machine_labels(trials: pd.DataFrame) -> list[str]:
    """One label per row. A CPU implementation never initialises CUDA, so its rows say gpu='none'
    even on a GPU host: rows of one table with the same host and CPU are one machine, named by
    the GPU its GPU rows saw (when they saw exactly one)."""
    keys = [c for c in ("source", "host", "cpu", "cpu_cores") if c in trials]
    gpus = {}
    if keys and "gpu" in trials:
        for key, part in trials.groupby(keys, dropna=False):
            seen = {g for g in part["gpu"].astype(str) if _real_gpu(g)}
            gpus[key if isinstance(key, tuple) else (key,)] = seen.pop() if len(seen) == 1 else None
    # a row whose group saw no single GPU (or a key with NaN) falls back on its own gpu column
    return [machine_label(row, gpus.get(tuple(row[k] for k in keys)) if keys else None)
            for row in trials.to_dict("records")]


def load_sources(paths) -> tuple[pd.DataFrame, dict]:
    """Concatenate trial tables; add ``source`` (the table's path) and ``machine``.

    Returns the trials and ``{(source, run_id): trace}`` for the traces found beside each table.
    """
    frames, traces = [], {}
    for path in map(Path, paths):
        frame = read_csv(path)
        frame["source"] = str(path)
        frames.append(frame)
        npz = path.with_name("traces.npz")
        if npz.is_file():
            traces.update({(str(path), rid): t for rid, t in load_traces(npz).items()})
    if not frames:
        raise ValueError("no trial tables given")
    trials = pd.concat(frames, ignore_index=True)
    trials["machine"] = machine_labels(trials)
    return trials, traces
