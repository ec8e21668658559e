"""What a campaign has to run: the trials a reference lacks or holds stale, what a campaign's folder
has made already, each trial's expected seconds, and the processes (groups of trials) that make them."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from ..core.io import read_csv
from ..core.machines import machine_label
from ..core.machines import names_a_gpu as _names_a_gpu
from ..run.rows import timed_alone
from ..study.experiment import settings_of
from .cells import CELL, Cell, budget, launch_size, row_key, run_id

#: a campaign's file for trials ``first .. first + count - 1`` of a cell, under ``--out``
RUN = "{algorithm}/{implementation}/{function}/d{dim}/np{popsize}/{dtype}/t{first}-{last}"


@dataclasses.dataclass
class Group:
    """Contiguous trials of one cell, run by one process."""
    cell: Cell
    first: int
    count: int
    expected_s: float
    per_launch: int = 1

    def stem(self) -> str:
        return RUN.format(first=self.first, last=self.first + self.count - 1, **self.cell.key_dict())


# --- what a row must say to count -------------------------------------------------------------------

def _same(a, b) -> bool:
    try:
        return math.isclose(float(a), float(b), rel_tol=1e-12, abs_tol=0.0)
    except (TypeError, ValueError):
        return str(a) == str(b)


def real_gpu(name) -> bool:
    """A GPU's name (a CPU row's, or a row read back without one, names none)."""
    return _names_a_gpu(name) and str(name) != "nan"


def machine_gpu(machine: str) -> str:
    """The GPU of a machine label ('<GPU> / <CPU> x<cores>')."""
    return machine.split(" / ")[0]


def stale_reason(row: dict, experiment: dict, cell: Cell, machine: str | None = None) -> str | None:
    """Why a reference row does not count for the experiment as it stands (None: it counts);
    ``machine``: the reference's machine (:func:`reference_machine`): a GPU row made one per launch on
    another (another GPU, or the same GPU in a host of other CPUs or cores) is stale, as the REPORT
    times one machine; a row made several per launch counts from any host and GPU (its time is a share
    the REPORT does not use; its result is the same bits on any GPU: ``gpude verify --any-gpu``)."""
    if str(row.get("status", "")).startswith("error"):
        return "failed"
    if machine and real_gpu(row.get("gpu")) and machine_label(row) != machine and launch_size(row) == 1:
        return f"made on {machine_label(row)} (the reference's machine: {machine})"
    params = json.loads(row["params"]) if isinstance(row.get("params"), str) else {}
    for key, value in settings_of(experiment, cell.algorithm)[cell.setting].items():
        if key not in params or not _same(params[key], value):
            return f"{key} {params.get(key)} (experiment: {value})"
    fes = budget(experiment, cell.dim)
    if not _same(row["max_fes"], fes):
        return f"max_fes {row['max_fes']} (experiment: {fes})"
    time_budget = experiment.get("max_time_s")
    if time_budget is not None and not _same(row.get("max_time_s"), time_budget):
        return f"max_time_s {row.get('max_time_s')} (experiment: {time_budget})"
    if cell.timing == "exclusive" and not str(row.get("concurrency", "")).startswith("exclusive"):
        return f"timed {row.get('concurrency')} (experiment: exclusive)"
    if "trial" in row and cell.in_lane(int(row["trial"])) and not timed_alone(pd.Series([row.get("concurrency")]))[0]:
        return f"timed {row.get('concurrency')} (trials below {cell.alone}: timed alone, in lanes)"
    made = launch_size(row)
    if cell.alone and "trial" in row and int(row["trial"]) < cell.alone and made > 1:
        # (without --alone a trial may have been made in any batch: its error counts)
        return f"made {made} per launch (trials below {cell.alone}: one per launch, timed)"
    return None


def reference_machine(reference: pd.DataFrame) -> str | None:
    """The machine of the reference's newest GPU row made one per launch (a timed run; else of its
    newest GPU row): the one a campaign completes it on (the timed rows of other machines are stale,
    :func:`stale_reason`); None for a reference without GPU rows."""
    if not len(reference) or "gpu" not in reference or "timestamp_utc" not in reference:
        return None
    gpu_rows = reference[[real_gpu(g) for g in reference["gpu"]]]
    if not len(gpu_rows):
        return None
    if "params" in gpu_rows:
        timed = gpu_rows[[launch_size(r) == 1 for r in gpu_rows.to_dict("records")]]
        gpu_rows = timed if len(timed) else gpu_rows
    return machine_label(gpu_rows.sort_values("timestamp_utc").iloc[-1].to_dict())


def todo(cells: list[Cell], experiment: dict, reference: pd.DataFrame, done: set = frozenset(),
         machine: str | None = None):
    """Per cell the trials to run: ``(cell, [trial, ...], {trial: stale reason})``; ``done`` holds the
    run_ids a campaign's folder has already made; ``machine`` as in :func:`stale_reason`."""
    rows = {(row_key(r), int(r["trial"])): r for r in reference.to_dict("records")}
    out = []
    for c in cells:
        need, stale = [], {}
        for t in range(c.trials):
            r = rows.get((c.key(), t))
            reason = None if r is None else stale_reason(r, experiment, c, machine)
            if r is not None and reason is None:
                continue
            if run_id(c, t) in done:
                continue
            need.append(t)
            if reason is not None:
                stale[t] = reason
        if need:
            out.append((c, need, stale))
    return out


def campaign_rows(out: Path, experiment: dict, cells: list[Cell]) -> list[tuple[pd.DataFrame, Path]]:
    """The campaign folder's finished files whose rows count for the experiment as it stands:
    (rows, their .npz). A file made under other parameters (an earlier campaign) is left out."""
    by_key = {c.key(): c for c in cells}
    found = []
    for csv in sorted(out.rglob("t*-*.csv")):
        npz = csv.with_suffix(".npz")
        if not npz.is_file():
            continue
        rows = read_csv(csv)
        cells_of = [by_key.get(row_key(r)) for r in rows.to_dict("records")]
        if all(c is not None and stale_reason(r, experiment, c) is None
               for r, c in zip(rows.to_dict("records"), cells_of)):
            found.append((rows, npz))
    return found


# --- how long a run takes -----------------------------------------------------------------------------

def _ok(tables: list[pd.DataFrame], exclusive: bool = True) -> pd.DataFrame | None:
    """The tables' rows together, less the failed ones and those timed (``exclusive=False``: not timed)
    otherwise than exclusive (None: no rows)."""
    rows = pd.concat([t for t in tables if len(t)], ignore_index=True) if any(len(t) for t in tables) else None
    if rows is None:
        return None
    alone = rows["concurrency"].astype(str).str.startswith("exclusive")
    return rows[(alone if exclusive else ~alone) & ~rows["status"].astype(str).str.startswith("error")]


def _shared_medians(tables: list[pd.DataFrame]) -> dict:
    """``{(cell key, concurrency): median wall time}`` of the rows timed otherwise than exclusive."""
    rows = _ok(tables, exclusive=False)
    if rows is None:
        return {}
    return {(row_key(dict(zip(CELL, key[:-1]))), key[-1]): float(g["wall_time_s"].median())
            for key, g in rows.groupby(CELL + ["concurrency"])}


def _by_shared_rows(cell_key: tuple, med: dict, shared: dict) -> float | None:
    """A cell without exclusive rows, from its rows timed side by side (``shared:N``): their median
    times the ratio (exclusive / the same ``shared:N``) of its peers that have both, the other functions
    of the same algorithm, implementation, D, popsize and dtype (a standard DE run on F09 takes 4-5x
    one on F01: any function's median would start runs a call cannot finish). None: no such peers."""
    best = None
    for (key, tag), own in shared.items():
        if key != cell_key:
            continue
        peers = [k for (k, t) in shared if t == tag and k in med and k[2] != key[2]
                 and k[:2] == key[:2] and k[3:] == key[3:]]
        if peers and (best is None or len(peers) > best[0]):
            ratio = own / float(np.median([shared[(k, tag)] for k in peers]))
            best = (len(peers), float(np.median([med[k] for k in peers])) * ratio)
    return None if best is None else best[1]


def projections(experiment: dict, cells: list[Cell], tables: list[pd.DataFrame], default_s: float) -> dict:
    """Expected seconds of one trial per cell (see the package's docstring)."""
    if experiment.get("max_time_s"):
        return {c.key(): float(experiment["max_time_s"]) / (c.per_launch if c.per_launch > 1 else 1) + 0.5
                for c in cells}
    ok = _ok(tables)
    med = {}
    if ok is not None:
        for key, g in ok.groupby(CELL):
            if "params" in g:  # a batched row's time is a share of its launch's: the runs alone if any
                one = g[[launch_size(r) == 1 for r in g.to_dict("records")]]
                g = one if len(one) else g
            med[row_key(dict(zip(CELL, key)))] = float(g["wall_time_s"].median())
    side_by_side = _shared_medians(tables)
    out = {}
    for c in cells:
        if c.key() in med:
            out[c.key()] = med[c.key()]
            continue
        if (by_shared := _by_shared_rows(c.key(), med, side_by_side)) is not None:
            out[c.key()] = by_shared
            continue
        same_function = {k[3]: v for k, v in med.items() if k[:3] == c.key()[:3] and k[4:] == c.key()[4:]}
        same_dim = [v for k, v in med.items() if k[3] == c.dim and k[:2] == c.key()[:2]]
        # peers: the other functions of the same algorithm, implementation, popsize and dtype, per D
        peers: dict = {}
        for k, v in med.items():
            if k[:2] == c.key()[:2] and k[4:] == c.key()[4:] and k[2] != c.function:
                peers.setdefault(k[3], []).append(v)
        shared = [d for d in same_function if d in peers]
        nearest = lambda ds, dim=c.dim: min(ds, key=lambda x: abs(math.log(x / dim)))  # noqa: E731
        if c.dim in peers and shared:
            # time need not be linear in D (a fixed part may dominate): the peers' median at this D,
            # scaled by this function's measured ratio to its peers at the nearest D both have
            d = nearest(shared)
            out[c.key()] = float(np.median(peers[c.dim])) * same_function[d] / float(np.median(peers[d]))
        elif same_dim:
            out[c.key()] = float(np.median(same_dim))
        elif same_function:
            d = nearest(same_function)
            out[c.key()] = same_function[d] * c.dim / d
        else:
            out[c.key()] = default_s
    return out


def batch_share(tables: list[pd.DataFrame]) -> dict:
    """What a trial costs in a batch: (a batched trial's time) / (a trial's alone), the medians of a
    cell that has both. Keyed by the cell's key (:meth:`Cell.key`) where the cell has both (it
    depends on the function: e.g. 0.35 for Lastra's pointwise functions at D = 1e5 and 0.6 for the
    rotated ones, measured), by D the median over the cells of that D, and by ``None`` every D's
    median (``1.0`` where no cell has both: a batch then is expected to take its trials' time alone,
    an upper bound)."""
    rows = _ok(tables)
    if rows is None or "params" not in rows:
        return {None: 1.0}
    rows = rows.assign(_size=[launch_size(r) for r in rows.to_dict("records")])
    ratios, out = [], {}
    for key, g in rows.groupby(CELL):
        alone, batched = g[g["_size"] == 1]["wall_time_s"], g[g["_size"] > 1]["wall_time_s"]
        if len(alone) and len(batched):
            ratio = float(batched.median() / alone.median())
            ratios.append((int(key[3]), ratio))
            out[row_key(dict(zip(CELL, key)))] = ratio
    out[None] = float(np.median([r for _, r in ratios])) if ratios else 1.0
    for dim in {d for d, _ in ratios}:
        out[dim] = float(np.median([r for d, r in ratios if d == dim]))
    return out


def groups(work, expected: dict, group: int, share: dict | None = None) -> list[Group]:
    """Contiguous missing trials of a cell in groups: a launch's worth for batched trials, else at
    most ``group`` trials per process; with ``--alone``, every cell's one-per-launch groups first.
    ``share``: :func:`batch_share` (a batched trial's expected time is its time alone times it)."""
    share = share or {None: 1.0}
    alone, batched = [], []
    for cell, trials, _ in work:
        run = [trials[0]]
        for t in trials[1:] + [None]:
            size = cell.launch_size(run[0])
            if (t is not None and t == run[-1] + 1 and cell.launch_size(t) == size
                    and cell.in_lane(t) == cell.in_lane(run[0]) and len(run) < (size if size > 1 else group)):
                run.append(t)
                continue
            per = expected[cell.key()]
            if size > 1 and cell.alone:  # ``per``: a trial alone
                seconds = len(run) * per * share.get(cell.key(), share.get(cell.dim, share[None]))
            elif size > 1:  # ``per``: the cell's batched trials' share (a whole launch's worth, at most)
                seconds = math.ceil(len(run) / size) * size * per
            else:
                seconds = len(run) * per
            (batched if size > 1 and cell.alone else alone).append(Group(cell, run[0], len(run), seconds, size))
            if t is not None:
                run = [t]
    return alone + batched


def ranges(values: list[int]) -> str:
    """``[0, 1, 2, 5]`` as ``0-2,5``."""
    parts, start = [], values[0]
    for a, b in zip(values, values[1:] + [None]):
        if b != a + 1:
            parts.append(f"{start}" if start == a else f"{start}-{a}")
            start = b
    return ",".join(parts)
