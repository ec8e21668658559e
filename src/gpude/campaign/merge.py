"""A campaign's rows into the reference (here, after the host's archive is unpacked): the stale rows
they re-make replaced and nothing else, checked before anything is replaced; and the reference's
``CAMPAIGNS.md``. :func:`replace_checked` is the staged write both this merge and
``fill_reference``'s use."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from ..core.errors import GpudeError
from ..core.io import read_csv, write_atomic, write_csv_atomic
from ..core.machines import machine_label
from ..study.experiment import concat_trials, refuse_failed
from .cells import CELL, Cell, launch_size, row_key
from .plan import real_gpu, stale_reason


def replace_checked(reference_dir: Path, staging_name: str, found, kept: list, new: pd.DataFrame,
                    merged: pd.DataFrame, trace_decades, check) -> None:
    """Write the merged table and traces in ``reference_dir/staging_name``: the traces of ``found``
    ((rows, .npz) pairs) thinned per ``trace_decades`` and keyed by ``new``'s rows after those of
    ``kept`` ((rows, the reference's traces) pairs, copied as they are); ``check(trials.csv,
    traces.npz)`` raises if they are wrong. Only then do they replace the reference's (the table
    last: it names the traces). The staging folder goes either way."""
    from ..run.rows import merge_traces

    trials_path, traces_path = reference_dir / "trials.csv", reference_dir / "traces.npz"
    reference_dir.mkdir(parents=True, exist_ok=True)
    staging = reference_dir / staging_name
    staging.mkdir(exist_ok=True)
    try:
        thinned = staging / "new_traces.npz"
        merge_traces([(rows, str(npz)) for rows, npz in found], thinned, decades=trace_decades)
        merge_traces(list(kept) + [(new, str(thinned))], staging / "traces.npz")
        write_csv_atomic(merged, staging / "trials.csv")
        check(staging / "trials.csv", staging / "traces.npz")
        os.replace(staging / "traces.npz", traces_path)
        os.replace(staging / "trials.csv", trials_path)  # last: the table names the traces
    finally:
        for p in staging.glob("*"):
            p.unlink()
        staging.rmdir()


def _not_merged_yet(found, old: pd.DataFrame):
    """The campaign's rows less those the reference holds already as the same runs (run_id, machine
    instance and time stamp): a warm GPU host keeps its campaign folder, so a later call's archive
    brings back the rows an earlier merge took."""
    same = ["run_id", "boot_id", "timestamp_utc"]
    if not len(old) or any(k not in old for k in same):
        return found
    merged = set(map(tuple, old[same].astype(str).to_numpy()))
    out = []
    for rows, npz in found:
        fresh = rows[[tuple(r) not in merged for r in rows[same].astype(str).to_numpy()]]
        if len(fresh):
            out.append((fresh.reset_index(drop=True), npz))
    return out


def merge(reference_dir: Path, experiment: dict, cells: list[Cell], found, trace_decades=None) -> pd.DataFrame:
    """Add the campaign's rows to the reference, replacing the stale rows they re-make (see the
    package's docstring). Nothing is written unless every check passes."""
    from ..run.rows import load_traces

    trials_path, traces_path = reference_dir / "trials.csv", reference_dir / "traces.npz"
    old = read_csv(trials_path) if trials_path.is_file() else pd.DataFrame(columns=["run_id"])
    found = _not_merged_yet(found, old)
    if not found:
        raise GpudeError("nothing to merge: every finished campaign row is in the reference already")
    new = concat_trials([rows for rows, _ in found], "the campaign's folder")
    refuse_failed(new, " (re-run them: delete their files)")
    by_key = {c.key(): c for c in cells}
    machines = {machine_label(r) for r in new.to_dict("records") if real_gpu(r.get("gpu"))}
    machine = machines.pop() if len(machines) == 1 else None  # the machine the campaign ran on
    # the reference's rows the campaign re-made: only stale ones may be replaced
    replaced = []
    old_by_id = {r["run_id"]: r for r in old.to_dict("records")}
    for rid in new["run_id"]:
        r = old_by_id.get(rid)
        if r is None:
            continue
        cell = by_key.get(row_key(r))
        if cell is None or stale_reason(r, experiment, cell, machine) is None:
            raise GpudeError(f"{rid} is in the reference and counts as it is: the campaign must not replace it "
                             "(nothing was merged; if the campaign ran with --alone K, --alone-lanes L or "
                             "--per-launch B, give the merge the same options)")
        replaced.append(rid)
    keep = old[~old["run_id"].isin(replaced)]
    new_ids = set(new["run_id"])
    merged = pd.concat([keep, new], ignore_index=True) if len(keep) else new
    if len(old):
        merged = merged[list(old.columns) + [c for c in merged.columns if c not in old.columns]]

    def check(merged_csv, merged_traces):
        """The kept rows and traces unchanged, the new ones there once each."""
        again = read_csv(merged_csv)
        if len(keep):
            pd.testing.assert_frame_equal(again.iloc[:len(keep)][list(old.columns)].reset_index(drop=True),
                                          keep.reset_index(drop=True), check_dtype=False)
        traces = load_traces(merged_traces)
        if len(keep):
            before = load_traces(traces_path)
            for rid in keep["run_id"]:
                if rid in before and any(not np.array_equal(before[rid][k], traces[rid][k], equal_nan=True)
                                         for k in before[rid]):
                    raise GpudeError(f"the merged traces change {rid}'s")
        lacking = [r for r in new_ids if r not in traces]
        if lacking:
            raise GpudeError(f"the merged traces lack {lacking[:3]}")

    where = campaigns_markdown(merged, experiment)  # (made first: an error in it leaves the reference as it was)
    replace_checked(reference_dir, ".campaign", found, [(keep, str(traces_path))] if len(keep) else [], new,
                    merged, trace_decades, check)
    write_atomic(reference_dir / "CAMPAIGNS.md", where.encode())
    print(f"campaign: {len(new)} trial(s) merged into {trials_path} ({len(replaced)} stale row(s) replaced; "
          f"{len(old)} rows before, {len(merged)} now)")
    return merged


def _listed(values: pd.Series) -> str:
    """A column's distinct values, sorted; a value an older row lacks (a column added since) as "unrecorded"."""
    return ", ".join(sorted({"unrecorded" if pd.isna(v) else str(v) for v in values}))


def campaigns_markdown(table: pd.DataFrame, experiment: dict) -> str:
    """Which cells ran where: per cell the runs, GPU, machine instances, commits and dates."""
    lines = [f"# {experiment['name']}: which cells ran where", "",
             "Written by `python -m gpude.campaign merge` from `trials.csv` (every row names its GPU, instance "
             "(`boot_id`), commit and time). Instances: the boot ids of the machines the cell's runs were made on.",
             "Per launch: how many runs shared a launch, with the count of such runs (a run of several per launch "
             "records a fair share of the launch's time; the REPORT times the runs made one per launch).",
             "", "| algorithm/implementation | function | D | NP | dtype | runs | per launch | timing | GPU | CPU | "
                 "instances | commits | UTC |",
             "|---|---|---:|---:|---|---:|---|---|---|---|---|---|---|"]
    for key, g in table.groupby(CELL, sort=True):
        a, i, f, d, p, t = key
        stamp = g["timestamp_utc"].astype(str)
        sizes = pd.Series([launch_size(r) for r in g.to_dict("records")]).value_counts().sort_index()
        cpus = sorted({f"{r.get('cpu')} x{r.get('cpu_cores')}" for r in g.to_dict("records")})
        lines.append(f"| {a}/{i} | {f} | {int(d):g} | {int(p)} | {t} | {len(g)} | "
                     f"{', '.join(f'{k}: {v}' for k, v in sizes.items())} | "
                     f"{_listed(g['concurrency'])} | "
                     f"{_listed(g['gpu'])} | {', '.join(cpus)} | "
                     f"{_listed(g['boot_id'])} | "
                     f"{_listed(g['git_commit'])} | "
                     f"{stamp.min()[:16]} .. {stamp.max()[:16]} |")
    return "\n".join(lines) + "\n"
