"""Trial rows and trace files (their columns: docs/workflow.md, "Results").

One CSV row per trial with every descriptor, the outcome, and the hardware and
software that produced it; one ``.npz`` of traces per batch (all trials
concatenated, ``trial_start`` marking where each begins). Both are written
atomically.
"""

from __future__ import annotations

import dataclasses
import io
import json
import math
from typing import TYPE_CHECKING

import numpy as np

from ..core import provenance
from ..core.errors import GpudeError
from ..core.io import write_atomic, write_csv_atomic
from ..implementations.base import TrialResult

if TYPE_CHECKING:  # pandas is imported where a table is made: a `gpude run` reaches its first trial sooner
    import pandas as pd

COLUMNS = [
    "run_id", "suite", "function", "dim", "algorithm", "implementation", "popsize", "params",
    "dtype", "trial", "seed", "max_fes", "target_error", "max_time_s", "best_error", "fes_used", "generations",
    "hit_target", "fes_to_target", "time_to_target_s", "wall_time_s", "setup_time_s", "status",
    "concurrency", "trace_path", "trace_index", "distance_to_optimum", "solution",
]


def distance_to_optimum(result: TrialResult) -> float | None:
    """||best_x - x*||_2 (Lastra et al.'s second measure), or None where x* is not known.

    The squares are summed correctly rounded (``math.fsum``), not by BLAS, whose order of summation
    depends on the CPU it runs on: the same run gives the same distance on every machine."""
    from ..functions import get_function

    try:
        optimum = get_function(result.function, result.dim).optimum
    except Exception:  # a user's objective without a known optimum
        return None
    best = np.asarray(result.best_x, dtype=np.float64)
    if optimum is None or best.shape != optimum.shape:  # e.g. a LOP: many keys give the optimum
        return None
    diff = best - optimum
    return math.sqrt(math.fsum((diff * diff).tolist()))


def status_of(result: TrialResult) -> str:
    """``target``, ``budget`` (max_fes spent) or ``time`` (max_time_s spent)."""
    return result.stopped_by


def run_id(algorithm: str, implementation: str, function: str, dim: int, popsize: int, dtype: str,
           trial: int, setting: str = "") -> str:
    """A trial's id in every table: algorithm/implementation/function/dD/npNP/dtype/tT, with the
    parameter setting after the implementation in an experiment with a parameter grid
    (algorithm/implementation/F0.3_CR0.01/function/...: the trials of two settings share their seeds)."""
    middle = f"{setting}/" if setting else ""
    return f"{algorithm}/{implementation}/{middle}{function}/d{dim}/np{popsize}/{dtype}/t{trial}"


def trial_row(result: TrialResult, trial: int, setup_time_s: float, trace_path: str = "",
              concurrency: str = "unknown", suite: str = "", setting: str = "") -> dict:
    """The row of one finished trial (provenance columns are added by :func:`write_batch`)."""
    p = result.params
    # the algorithm's parameters (DE: F, CR, bounds; jDE adds tau1, tau2, ...) and the options
    params = {k: v for k, v in dataclasses.asdict(p).items()
              if k not in ("popsize", "max_fes", "target", "dtype", "max_time_s")}
    params.update(result.info.get("options", {}))
    return {
        "run_id": run_id(result.algorithm, result.implementation, result.function, result.dim, result.popsize,
                         p.dtype, trial, setting),
        "suite": suite, "function": result.function, "dim": result.dim,
        "algorithm": result.algorithm, "implementation": result.implementation,
        "popsize": result.popsize, "params": json.dumps(params, sort_keys=True), "dtype": p.dtype,
        "trial": trial, "seed": result.seed, "max_fes": p.max_fes, "target_error": p.target,
        "max_time_s": p.max_time_s,
        "best_error": result.best_error, "fes_used": result.fes_used,
        "generations": result.generations, "hit_target": result.hit_target,
        "fes_to_target": result.fes_to_target, "time_to_target_s": result.time_to_target_s,
        "wall_time_s": result.wall_time_s, "setup_time_s": setup_time_s,
        "status": status_of(result), "concurrency": concurrency, "trace_path": trace_path,
        "trace_index": trial,  # the trace's position is given by trial and the .npz's `trial` array
        "distance_to_optimum": distance_to_optimum(result),
        # a problem's own measures of the best solution (LOP: objective, error %; scheduling: fit,
        # makespan, flowtime), as JSON; empty for the benchmark functions
        "solution": json.dumps(result.info["solution"], sort_keys=True) if result.info.get("solution") else "",
    }


def timed_alone(concurrency: pd.Series) -> pd.Series:
    """Which rows were timed alone on their device: ``exclusive`` (a CPU batch alone on the host, a
    GPU batch alone on a one-GPU host), ``exclusive-gpu:N[+cpu]`` (a GPU batch alone on its GPU of a
    host of N, whose cores it shared with the other GPUs' batches and the CPU lanes'), ``exclusive-cpu:L``
    (a single-threaded CPU batch on a core of its own, at most L such lanes timed at once on a host
    with free cores) and ``host`` (alone on the host)."""
    text = concurrency.astype(str)
    return text.isin(["exclusive", "host"]) | text.str.startswith(("exclusive-gpu:", "exclusive-cpu:"))


def launch_size(params) -> int:
    """How many trials shared the launch that made a row: its ``params``' ``trials_per_launch`` (JSON
    text or a dict; 1 when it does not say). A batched trial's ``wall_time_s`` is its share of the
    launch's, not the time of a run alone."""
    if isinstance(params, str):
        params = json.loads(params) if params.strip() else {}
    return int(params.get("trials_per_launch", 1)) if isinstance(params, dict) else 1


def one_per_launch(rows: pd.DataFrame) -> pd.Series:
    """Which rows were made one trial per launch (every row, for a table without ``params``)."""
    if "params" not in rows:
        return rows.index.to_series().map(lambda _: True)
    return rows["params"].map(launch_size) == 1


def failed_row(base: dict, trial: int, seed: int, exc: BaseException, setting: str = "") -> dict:
    """A trial that raised: kept as a row with its status, never dropped."""
    row = {c: None for c in COLUMNS}
    row.update(base, trial=trial, seed=seed, status=f"error:{type(exc).__name__}: {exc}"[:300])
    if all(k in base for k in ("algorithm", "implementation", "function", "dim", "popsize", "dtype")):
        # its id as a finished trial's: a merge tells the trials of one cell apart by it
        row["run_id"] = run_id(base["algorithm"], base["implementation"], base["function"], base["dim"],
                               base["popsize"], base["dtype"], trial, setting)
    return row


# Traces keep a point whenever the best error has fallen by this many decades since the last kept
# point (plus the first and last points): a 10^7-FE run has 40,000 generations, but a
# best-so-far curve drawn on a log axis needs a few hundred.
TRACE_RESOLUTION_DECADES = 0.01


def thin_trace(trace: dict, decades: float = TRACE_RESOLUTION_DECADES) -> dict:
    """The points of a best-so-far trace at which the best error dropped by >= ``decades``.

    The best error of a trace never increases (replacement keeps the better vector), so the thinned
    trace, read as a step function, is within ``decades`` of the full one everywhere on a log axis.
    """
    best = np.asarray(trace["best_error"], dtype=np.float64)
    if best.size <= 2:
        return trace
    level = np.log10(np.maximum(best, 1e-300))
    keep = [0]
    for i in range(1, best.size - 1):
        if level[keep[-1]] - level[i] >= decades:
            keep.append(i)
    keep.append(best.size - 1)
    index = np.asarray(keep)
    return {k: np.asarray(v)[index] for k, v in trace.items()}


def write_batch(rows: list[dict], results: list[TrialResult | None], csv_path, trace_path,
                uses_gpu: bool | None = None) -> None:
    """Write the batch's CSV (with provenance columns: ``uses_gpu`` as :func:`gpude.core.provenance.record`
    takes it) and its thinned traces, each atomically."""
    prov = provenance.record(uses_gpu)
    import pandas as pd

    frame = pd.DataFrame(rows, columns=COLUMNS).assign(**prov)
    chunks = [thin_trace(r.trace) for r in results if r is not None]
    starts = np.cumsum([0] + [len(t["fes"]) for t in chunks])[:-1]
    buf = io.BytesIO()
    np.savez_compressed(
        buf,
        trial=np.array([row["trial"] for row, r in zip(rows, results) if r is not None], dtype=np.int64),
        trial_start=starts.astype(np.int64),
        generation=np.concatenate([t["generation"] for t in chunks]) if chunks else np.array([], int),
        fes=np.concatenate([t["fes"] for t in chunks]) if chunks else np.array([], int),
        best_error=np.concatenate([t["best_error"] for t in chunks]) if chunks else np.array([]),
        time_s=np.concatenate([t["time_s"] for t in chunks]) if chunks else np.array([]),
    )
    write_atomic(trace_path, buf.getvalue())
    write_csv_atomic(frame, csv_path)  # last: its presence means the batch is complete


TRACE_ARRAYS = ("generation", "fes", "best_error", "time_s")


def merge_traces(batches: list[tuple[pd.DataFrame, str]], out_path, decades: float | None = None) -> None:
    """One ``traces.npz`` for a merged trials table: each batch's traces tagged with their run_id.

    ``batches`` holds (the batch's rows, its ``.npz`` path); a batch may also be an earlier merged
    table with its ``traces.npz`` (to add cells to a reference run). The result has ``run_id`` (one
    per trace), ``trace_start`` offsets and the concatenated arrays, so a trials table and its traces
    travel together (e.g. into ``results/reference/``) without batch paths. ``decades`` thins the
    traces further (:func:`thin_trace`), e.g. 0.05 for runs that fall through many decades.
    """
    run_ids, parts = [], {k: [] for k in TRACE_ARRAYS}
    for rows, npz in batches:
        with np.load(npz) as z:  # z[k] decompresses the whole array on every access: read each once
            arrays = {k: z[k] for k in TRACE_ARRAYS}
            if "run_id" in z:  # a merged table's traces, keyed by run_id
                keys, starts = [str(r) for r in z["run_id"]], z["trace_start"]
                wanted = {rid: rid for rid in rows["run_id"]}
            else:  # a batch's traces, keyed by trial
                keys, starts = [int(t) for t in z["trial"]], z["trial_start"]
                wanted = dict(zip(rows["trial"].astype(int), rows["run_id"]))
        ends = list(starts[1:]) + [len(arrays["fes"])]
        for key, start, end in zip(keys, starts, ends):
            if key not in wanted:
                continue
            run_ids.append(wanted[key])
            trace = {k: arrays[k][start:end] for k in TRACE_ARRAYS}
            if decades is not None:
                trace = thin_trace(trace, decades)
            for k in TRACE_ARRAYS:
                parts[k].append(trace[k])
    lengths = [len(a) for a in parts["fes"]]
    buf = io.BytesIO()
    np.savez_compressed(
        buf, run_id=np.array(run_ids, dtype=str),
        trace_start=np.cumsum([0] + lengths)[:-1].astype(np.int64),
        **{k: (np.concatenate(v) if v else np.array([])) for k, v in parts.items()})
    write_atomic(out_path, buf.getvalue())


def load_traces(path) -> dict[str, dict[str, np.ndarray]]:
    """``run_id -> {fes, best_error, generation, time_s}`` from a merged ``traces.npz``."""
    with np.load(path) as z:
        # z[k] decompresses the whole array on every access: read each once
        arrays = {k: z[k] for k in TRACE_ARRAYS}
        run_ids, starts = z["run_id"], z["trace_start"]
    ends = list(starts[1:]) + [len(arrays["fes"])]
    return {str(rid): {k: arrays[k][start:end] for k in TRACE_ARRAYS}
            for rid, start, end in zip(run_ids, starts, ends)}


RERUN_CELL = ["algorithm", "implementation", "function", "dim", "popsize", "dtype"]


def rerun_check(reference: pd.DataFrame, rerun: pd.DataFrame) -> pd.DataFrame:
    """Trials run twice (same ``run_id``, hence the same seed), compared per cell.

    Per (algorithm, implementation, function, D, NP, dtype) present in both: ``n`` trials, the
    fraction with the same final error and the same FEs (a seed fixes the run, so anything below 1
    is a bug), and the rerun's wall time over the reference's (median, min, max): how much faster
    or slower the rerun's machine or session was. The commits of both sides are recorded.
    """
    for name, t in (("reference", reference), ("rerun", rerun)):
        missing = [c for c in ["run_id", "best_error", "fes_used", "wall_time_s", *RERUN_CELL] if c not in t]
        if missing:
            raise GpudeError(f"the {name} table lacks the columns {missing}: pass trials tables "
                             "written by `gpude run` or `gpude merge`")
    both = reference.merge(rerun, on="run_id", suffixes=("", "_rerun"))
    if not len(both):
        raise GpudeError("no trial is in both tables (no shared run_id): nothing to compare")
    both = both.assign(same_error=both["best_error"] == both["best_error_rerun"],
                       same_fes=both["fes_used"] == both["fes_used_rerun"],
                       time_ratio=both["wall_time_s_rerun"] / both["wall_time_s"])
    commits = {"git_commit": "reference_commit", "git_commit_rerun": "rerun_commit"}
    agg = {"n": ("run_id", "size"), "same_error": ("same_error", "mean"), "same_fes": ("same_fes", "mean"),
           "time_ratio_median": ("time_ratio", "median"), "time_ratio_min": ("time_ratio", "min"),
           "time_ratio_max": ("time_ratio", "max")}
    agg.update({v: (k, lambda c: ";".join(sorted(set(map(str, c))))) for k, v in commits.items() if k in both})
    return both.groupby(RERUN_CELL, observed=True).agg(**agg).reset_index()


def rerun_totals(check: pd.DataFrame) -> dict:
    """Over all cells of :func:`rerun_check`: trials, cells, the fraction of trials with the same
    final error, and the median over cells of the rerun's time over the reference's."""
    n = int(check["n"].sum())
    return {"n": n, "cells": len(check), "same_error": float((check["same_error"] * check["n"]).sum() / n),
            "time_ratio_median": float(check["time_ratio_median"].median())}
