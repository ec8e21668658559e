"""The trial tables a paper output is made from: committed reference results of one or more
machines (``results/reference/<machine>/<experiment>/``) and whatever ran locally
(``results/<experiment>/``), each a ``trials.csv`` with its ``traces.npz`` beside it."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..io import read_csv
# the machine labels live in the base layer (the statistics use them too); re-exported here for the
# modules that have always read them from the report
from ..machines import _NO_GPU, _real_gpu, machine_label, machine_labels  # noqa: F401
from ..results import load_traces


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
