"""Nsight Compute (``ncu``, the CUDA toolkit's) reading the DRAM bytes and GPU time of a run's kernels.

The profiled process brackets what is to be counted with ``cuda.profile_start``/``profile_stop``;
:func:`command` starts ncu so that it counts only from there, :func:`kernel_bytes` reads its log.
ncu serialises the kernels and adds milliseconds per launch: its runs count bytes, they are no timings.
"""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import numpy as np

METRICS = ("dram__bytes_read.sum", "dram__bytes_write.sum", "gpu__time_duration.sum")


def find(purpose: str = "--count-bytes") -> str:
    """The ncu command line (PATH, then the CUDA toolkit's), or a RuntimeError saying that ``purpose``
    needs it."""
    for candidate in (shutil.which("ncu"), "/usr/local/cuda/bin/ncu"):
        if candidate and Path(candidate).is_file():
            return candidate
    raise RuntimeError(f"{purpose} needs Nsight Compute's `ncu` (the CUDA toolkit's bin/ncu): not on PATH "
                       f"nor in /usr/local/cuda/bin; install the toolkit or leave {purpose} out")


def command(ncu: str, log: Path) -> list[str]:
    """ncu reading :data:`METRICS` of every kernel between cuda.profile_start and profile_stop into ``log``
    (CSV); the profiled command follows."""
    return [ncu, "--profile-from-start", "off", "--metrics", ",".join(METRICS), "--csv",
            "--print-units", "base", "--log-file", str(log)]


def kernel_bytes(path: Path):
    """ncu's --csv log -> one row per kernel (its name up to the first '(' or '['), most bytes read
    first: launches, DRAM bytes read and written, and the launches' GPU time (s; ncu runs the kernels
    one at a time, so each one's own duration, not the run's: bytes / time is the kernel's achieved
    bandwidth; NaN in a log without the metric). A log without metrics (e.g. ncu's ERR_NVGPUCTRPERM:
    the counters closed to the user) is a RuntimeError with the log's end."""
    import pandas as pd

    from .io import read_csv

    text = Path(path).read_text()
    start = text.find('"ID"')
    if start < 0:
        raise RuntimeError(f"no metrics in ncu's log {path}: {text[-2000:]}")
    t = read_csv(io.StringIO(text[start:]), thousands=",")
    t = t[t["Metric Name"].isin(METRICS)]
    t = t.assign(kernel=t["Kernel Name"].astype(str).str.split(r"[\[(]", regex=True).str[0].str.strip(),
                 value=pd.to_numeric(t["Metric Value"]))
    wide = t.pivot_table(index=["ID", "kernel"], columns="Metric Name", values="value", aggfunc="sum").reset_index()
    if METRICS[2] not in wide:
        wide[METRICS[2]] = np.nan
    out = wide.groupby("kernel").agg(launches=("ID", "nunique"), dram_read_bytes=(METRICS[0], "sum"),
                                     dram_write_bytes=(METRICS[1], "sum"),
                                     gpu_time_s=(METRICS[2], lambda v: v.sum(min_count=1) / 1e9)).reset_index()
    return out.sort_values("dram_read_bytes", ascending=False, ignore_index=True)
