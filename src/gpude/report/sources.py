"""The trial tables a paper output is made from: committed reference results of one or more
machines (``results/reference/<machine>/<experiment>/``) and whatever ran locally
(``results/<experiment>/``), each a ``trials.csv`` with its ``traces.npz`` beside it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..core.io import read_csv
from ..core.machines import machine_labels, names_a_gpu
from ..run.rows import load_traces, one_per_launch, timed_alone
from .verdict import n_per_cell


def load_sources(paths, join_guests: bool = True) -> tuple[pd.DataFrame, dict]:
    """Concatenate trial tables; add ``source`` (the table's path) and ``machine``; with ``join_guests``,
    each table's guest rows join its machine (:func:`at_home`).

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
    if not join_guests:
        return trials, traces
    return pd.concat([at_home(part) for _, part in trials.groupby("source", sort=False)]).sort_index(), traces


def at_home(table: pd.DataFrame) -> pd.DataFrame:
    """One reference table's rows with its *guests* moved to its machine. A reference holds one machine's
    times: the machine with the most runs timed alone, one per launch. A guest is a row made on another
    host of the same GPU (a CPU run: any host) whose time did not count where it was made either
    (several per launch, or side by side with other runs): its error joins the home machine's cells (a
    run's result does not depend on the host: ``gpude verify --any-gpu`` re-makes GPU rows on another
    host of the GPU, and CPU rows made on an Intel Xeon were re-made on an AMD EPYC to the same bits,
    results/reference/nvidia-h200/janssen_cs1/README.md), its time is dropped
    (``wall_time_s`` empty) and ``made_on`` names its host. Rows of another machine timed alone stay
    that machine's."""
    if "concurrency" not in table or not len(table):
        return table
    counted = timed_alone(table["concurrency"]) & one_per_launch(table)
    if not counted.any():
        return table
    home = table.loc[counted, "machine"].value_counts().index[0]
    at = table[counted & (table["machine"] == home)].iloc[0]
    gpus = table["gpu"].astype(str) if "gpu" in table else pd.Series("none", index=table.index)
    # a GPU row of the home machine's GPU, or a CPU row of any host (its result is the same bits)
    may_join = [not names_a_gpu(g) or g == str(at.get("gpu")) for g in gpus]
    guest = (table["machine"] != home) & ~counted & pd.Series(may_join, index=table.index)
    if not guest.any():
        return table
    table = table.assign(made_on=table["machine"].where(guest))
    table.loc[guest, "machine"] = home
    table.loc[guest, "wall_time_s"] = np.nan
    return table


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
