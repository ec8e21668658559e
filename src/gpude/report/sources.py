"""The trial tables a paper output is made from: committed reference results of one or more
machines (``results/reference/<machine>/<experiment>/``) and whatever ran locally
(``results/<experiment>/``), each a ``trials.csv`` with its ``traces.npz`` beside it."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..core.io import read_csv
from ..core.machines import machine_labels
from ..run.rows import load_traces
from .verdict import n_per_cell


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


def made_by(trials: pd.DataFrame) -> str:
    """'machine(s); n = lo-hi trials per cell': what a figure drawn from ``trials`` says of its numbers
    (a cell: implementation, function, D, NP, dtype, as far as the trials have them)."""
    machines = sorted(trials["machine"].dropna().unique()) if "machine" in trials else []
    if len(machines) > 1 and "implementation" in trials:  # which rows came from which machine
        ran = trials.groupby("machine")["implementation"].agg(lambda v: ", ".join(sorted(set(map(str, v)))))
        machines = [f"{ran[m]} on {m}" for m in machines]
    keys = [c for c in ("machine", "implementation", "function", "dim", "popsize", "dtype") if c in trials]
    sizes = trials.groupby(keys, observed=True, dropna=False).size() if keys and len(trials) else pd.Series(dtype=int)
    n = n_per_cell(int(sizes.min()), int(sizes.max())) if len(sizes) else ""
    return "; ".join(filter(None, ["; ".join(machines), n]))
