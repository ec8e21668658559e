"""The trial tables a paper output is made from: committed reference results of one or more
machines (``results/reference/<machine>/<experiment>/``) and whatever ran locally
(``results/<experiment>/``), each a ``trials.csv`` with its ``traces.npz`` beside it."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..results import load_traces

_NO_GPU = ("none", "numba-cuda-simulator", "nan", "")


def machine_label(row) -> str:
    """'<GPU> / <CPU> x<cores>' (the GPU left out on a machine without one)."""
    cpu = f"{row.get('cpu', 'unknown CPU')} x{row.get('cpu_cores', '?')}"
    gpu = str(row.get("gpu", ""))
    if gpu in _NO_GPU or gpu.startswith("unavailable"):
        return cpu
    return f"{gpu} / {cpu}"


def load_sources(paths) -> tuple[pd.DataFrame, dict]:
    """Concatenate trial tables; add ``source`` (the table's path) and ``machine``.

    Returns the trials and ``{(source, run_id): trace}`` for the traces found beside each table.
    """
    frames, traces = [], {}
    for path in map(Path, paths):
        frame = pd.read_csv(path)
        frame["source"] = str(path)
        frames.append(frame)
        npz = path.with_name("traces.npz")
        if npz.is_file():
            traces.update({(str(path), rid): t for rid, t in load_traces(npz).items()})
    if not frames:
        raise ValueError("no trial tables given")
    trials = pd.concat(frames, ignore_index=True)
    trials["machine"] = [machine_label(r) for r in trials.to_dict("records")]
    return trials, traces
