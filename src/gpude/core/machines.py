"""Which machine a trial row was made on: '<GPU> / <CPU> x<cores>'.

A base module so that the statistics (:mod:`gpude.stats`) and the report (:mod:`gpude.report`) name
machines alike: statistics over time are only meaningful within one machine.
"""

from __future__ import annotations

import pandas as pd

_NO_GPU = ("none", "numba-cuda-simulator", "nan", "")


def names_a_gpu(name) -> bool:
    name = str(name)
    return name not in _NO_GPU and not name.startswith("unavailable")


def machine_label(row, gpu: str | None = None) -> str:
    """'<GPU> / <CPU> x<cores>' (the GPU left out on a machine without one)."""
    cpu = f"{row.get('cpu', 'unknown CPU')} x{row.get('cpu_cores', '?')}"
    gpu = str(row.get("gpu", "")) if gpu is None else gpu
    return f"{gpu} / {cpu}" if names_a_gpu(gpu) else cpu


def machine_labels(trials: pd.DataFrame) -> list[str]:
    """One label per row. A CPU implementation never initialises CUDA, so its rows say gpu='none'
    even on a GPU host: rows of one table with the same host and CPU are one machine, named by
    the GPU its GPU rows saw (when they saw exactly one)."""
    keys = [c for c in ("source", "host", "cpu", "cpu_cores") if c in trials]
    gpus = {}
    if keys and "gpu" in trials:
        for key, part in trials.groupby(keys, dropna=False):
            seen = {g for g in part["gpu"].astype(str) if names_a_gpu(g)}
            gpus[key if isinstance(key, tuple) else (key,)] = seen.pop() if len(seen) == 1 else None
    # a row whose group saw no single GPU (or a key with NaN) falls back on its own gpu column
    return [machine_label(row, gpus.get(tuple(row[k] for k in keys)) if keys else None)
            for row in trials.to_dict("records")]


def machine_column(trials: pd.DataFrame) -> pd.Series:
    """The trials' ``machine`` column where they have one (``gpude paper`` adds it), else
    :func:`machine_labels`."""
    if "machine" in trials and trials["machine"].notna().all():
        return trials["machine"].astype(str)
    return pd.Series(machine_labels(trials), index=trials.index, dtype=object)
