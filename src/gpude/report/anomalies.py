"""Anomalies found by rule over the paper folders' tables, never by hand: each with its rule, its cell,
its numbers and its explanation (the check behind it where a section gives one, else "unexplained").

The rules (:data:`RULES`):

* **paper 2x** (:func:`against_paper`): ours / the paper's outside :data:`~gpude.report.verdict.SAME_MAGNITUDE`
  either way, per cell, from the very ratios the verdict counts ("outside 2x in k of m cells": each
  section's :func:`~gpude.report.verdict.numbers_of` keeps its cells in :attr:`Judgement.ratios`); the
  explanation is the verdict's cause, or the section's own check of that cell
  (:meth:`gpude.report.section.Section.cell_checks`) where it has one.
* **cost order** (:func:`cost_order`): a time out of the order of its function's cost in the other
  implementations (its definition and thresholds there).
* **figure vs table** (:func:`figure_vs_table`): a figure's point off its table's value. The figures of
  wall time against NP and the cell table plot ``table_cells.csv`` (every row of a cell), the tables and
  bar charts ``table_time.csv`` (the rows timed alone); the convergence figures' traces are not in the
  paper folders, so their end points are not checked here.
* **sections disagree** (:func:`sections_disagree`): one cell (machine, algorithm, implementation,
  function, D, NP, floating type, FE budget) in two sections' ``table_cells.csv`` with a different n, or
  means more than :data:`TOLERANCE` apart.
* **mixed rows** (:func:`mixed_rows`): one cell of ``table_cells.csv`` made by more than one commit or
  boot (session) of its machine.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .verdict import outside

#: each rule's name and what it finds, in the order the lists give them
RULES = {
    "paper 2x": "ours / the paper's outside 2x either way in a cell the verdict compares",
    "cost order": "a time out of the order of its function's cost seen in the other implementations",
    "figure vs table": "a figure's point (from table_cells.csv) off its table's value (table_time.csv)",
    "sections disagree": "the same cell with a different n or mean in two sections",
    "mixed rows": "rows of more than one commit or boot in one cell",
}
UNEXPLAINED = "unexplained"

#: cost order: a cell is out of order where its time is this factor off what its implementation's level
#: and its function's cost predict (median polish of the log times) ...
COST_FACTOR = 2.0
#: ... and its function's rank within its implementation is at least this far from the function's median
#: rank in the other implementations
RANK_SHIFT = 2
#: two means of one cell (two sections, a figure and its table, two commits) agree within this factor
TOLERANCE = 1.1
#: the columns that make a cell of ``table_cells.csv``
CELL_KEYS = ["machine", "algorithm", "implementation", "function", "dim", "popsize", "dtype"]


@dataclass(frozen=True)
class Anomaly:
    """One anomaly a rule found.

    Parameters
    ----------
    study : str
        The experiment (its paper folder's name).
    rule : str
        A key of :data:`RULES`.
    cell : str
        Where: the table or figure and its cell.
    numbers : str
        What the rule compared, with the numbers.
    explanation : str
        Its cause and the check behind it, as the data or a section say it, or :data:`UNEXPLAINED`.
    """

    study: str
    rule: str
    cell: str
    numbers: str
    explanation: str = UNEXPLAINED

    def __post_init__(self):
        if self.rule not in RULES:
            raise ValueError(f"an anomaly's rule is one of {', '.join(RULES)}, got {self.rule!r}")
        if not self.cell or not self.explanation:
            raise ValueError("an anomaly needs its cell and an explanation (or 'unexplained')")


def _g(v) -> str:
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.3g}"


def against_paper(study: str, verdicts, checks: dict | None = None) -> list[Anomaly]:
    """Rule "paper 2x": the cells of each verdict's numbers judgement outside the factor, with the
    verdict's cause, or the section's check of the cell (``checks``: label -> text) where it has one."""
    checks = checks or {}
    found = []
    for v in verdicts:
        j = v.numbers
        for label, ratio in j.ratios:
            if outside(ratio):
                found.append(Anomaly(study, "paper 2x", f"{v.item}: {label}", f"ours / paper's {_g(ratio)}",
                                     checks.get(label) or (f"{j.cause} (the verdict's cause)" if j.cause
                                                           else UNEXPLAINED)))
    return found


def median_polish(table: pd.DataFrame, sweeps: int = 10) -> pd.DataFrame:
    """The residuals of Tukey's median polish of ``table`` (rows + columns + residual; NaN ignored)."""
    r = table.to_numpy(dtype=float).copy()
    for _ in range(sweeps):
        r -= np.nanmedian(r, axis=1, keepdims=True)
        r -= np.nanmedian(r, axis=0, keepdims=True)
    return pd.DataFrame(r, index=table.index, columns=table.columns)


def _fes_per_cell(trial_times: pd.DataFrame | None) -> pd.Series | None:
    """Mean FEs a run per (machine, implementation, function) of ``trial_times.csv``; None without them."""
    if trial_times is None or not len(trial_times) or "fes_used" not in trial_times:
        return None
    return trial_times.groupby(["machine", "implementation", "function"])["fes_used"].mean()


@functools.cache
def _devices_by_name() -> dict[str, frozenset]:
    """Each registered implementation name's devices (``gpu`` is pso's and ss's name, for one)."""
    from ..implementations.registry import entries

    devices: dict[str, set] = {}
    for e in entries():
        devices.setdefault(e.implementation, set()).add(e.device)
    return {name: frozenset(d) for name, d in devices.items()}


def device_of(label: str) -> str | None:
    """"cpu" or "gpu" for a time table's implementation label (``sequential/1000/float64``, ``pso/gpu``,
    ``all_gpu``): the device of the first part that names registered implementations of one device only;
    None where none does."""
    devices = _devices_by_name()
    for part in str(label).split("/"):
        if len(devices.get(part, ())) == 1:
            return next(iter(devices[part]))
    return None


def _by_fes(time_residual: float, per_fe_residual: float, fe_residual: float) -> bool:
    """A time off its fit explained by its runs' FEs: per FE within :data:`COST_FACTOR` of the fit, and the
    FEs off their own fit in the same direction by at least half the time's deviation (log scale)."""
    if any(pd.isna(v) for v in (time_residual, per_fe_residual, fe_residual)):
        return False
    return (abs(per_fe_residual) <= math.log(COST_FACTOR) and fe_residual * time_residual > 0
            and abs(fe_residual) >= abs(time_residual) / 2)


def _same_device_rank(ranks: pd.DataFrame, impl: str, function: str):
    """(device, median rank) where ``impl``'s rank of ``function`` is within :data:`RANK_SHIFT` of the
    median rank in the other implementations of its device (at least one); else None."""
    device = device_of(impl)
    if device is None:
        return None
    peers = [i for i in ranks.index if i != impl and device_of(i) == device]
    others = ranks.loc[peers, function].dropna() if peers else pd.Series(dtype=float)
    if not len(others) or abs(ranks.loc[impl, function] - float(others.median())) >= RANK_SHIFT:
        return None
    return device, float(others.median())


def cost_order(study: str, times: pd.DataFrame, trial_times: pd.DataFrame | None = None) -> list[Anomaly]:
    """Rule "cost order", per machine of ``times`` (``table_time.csv``) with at least 3 implementations
    and 3 functions: the log mean times, implementation x function, are fitted as an implementation's
    level plus a function's cost by median polish; a cell is out of order where its time is more than
    :data:`COST_FACTOR` off that fit **and** its function's rank among the functions of its implementation
    (by time) lies :data:`RANK_SHIFT` or more places from the function's median rank in the other
    implementations. Both are asked: near-equal times (launch-bound GPU runs) swap ranks without meaning,
    and a level shared by a whole implementation moves no rank. Explained where the cell was timed
    otherwise than the rest of its implementation (its ``timed`` column), has one trial, lies in the order
    the other implementations of its device give (:func:`device_of`: a function's cost on a CPU is not its
    cost on a GPU), or, given the trials' FEs (``trial_times``' ``fes_used``), where its time *per FE* is
    in order by the same fit and its runs' FEs are off their own fit (runs that stop at the target), or where
    its implementation's times span less than :data:`COST_FACTOR` over all its functions (launch-bound: no
    function's cost shows in them, so a cell can be off the fit only by the others' function costs)."""
    found = []
    if not len(times) or not {"machine", "implementation", "function", "mean_s"} <= set(times):
        return found
    fes = _fes_per_cell(trial_times)
    for machine, part in times.groupby("machine", sort=True):
        wide = part.pivot_table(index="implementation", columns="function", values="mean_s", observed=True)
        wide = wide[wide > 0]
        if wide.shape[0] < 3 or wide.shape[1] < 3:
            continue
        residual = median_polish(np.log(wide))
        per_fe = fe_fit = None
        if fes is not None and machine in fes.index.get_level_values(0):
            runs = fes.loc[machine].unstack("function").reindex(index=wide.index, columns=wide.columns)
            runs = runs.where(runs > 0)
            per_fe, fe_fit = median_polish(np.log(wide / runs)), median_polish(np.log(runs))
        ranks = wide.rank(axis=1)
        for impl in wide.index:
            for function in wide.columns:
                e, rank = residual.loc[impl, function], ranks.loc[impl, function]
                others = ranks.drop(index=impl)[function].dropna()
                if pd.isna(e) or pd.isna(rank) or not len(others):
                    continue
                expected = float(others.median())
                if abs(e) <= math.log(COST_FACTOR) or abs(rank - expected) < RANK_SHIFT:
                    continue
                row = part[(part["implementation"] == impl) & (part["function"] == function)].iloc[0]
                rest = part[(part["implementation"] == impl) & (part["function"] != function)]
                timed, n = str(row.get("timed", "")), row.get("n")
                explanation = UNEXPLAINED
                if "timed" in part and timed and (rest["timed"].astype(str) != timed).all():
                    explanation = (f"timed '{timed}', the rest of {impl}: "
                                   f"'{'; '.join(sorted(set(rest['timed'].astype(str))))}' (its timed column)")
                elif n == 1:
                    explanation = "one trial (n = 1)"
                elif (same := _same_device_rank(ranks, impl, function)) is not None:
                    explanation = (f"in the order of its function's cost on the {same[0].upper()}: rank {rank:g}, "
                                   f"median {same[1]:g} in the other {same[0].upper()} implementations (a function's "
                                   "cost is not the same on a CPU and a GPU)")
                elif per_fe is not None and _by_fes(e, per_fe.loc[impl, function], fe_fit.loc[impl, function]):
                    explanation = (f"its runs' FEs: {_g(fes.loc[(machine, impl, function)])} a run, "
                                   f"{math.exp(fe_fit.loc[impl, function]):.2g}x what the FEs of its implementation "
                                   f"and function predict (runs stop at the target); per FE its time is "
                                   f"{math.exp(per_fe.loc[impl, function]):.2g}x the fit")
                elif (span := float(wide.loc[impl].max() / wide.loc[impl].min())) < COST_FACTOR:
                    explanation = (f"{impl}'s times span only {span:.2g}x over its {int(wide.loc[impl].notna().sum())} "
                                   f"functions (launch-bound: a function's cost barely shows in them), so the cost "
                                   f"of {function} the others set in the fit does not apply to it")
                found.append(Anomaly(
                    study, "cost order", f"table_time: {impl} {function} ({machine})",
                    f"{_g(row['mean_s'])} s, {math.exp(e):.2g}x the fit; rank {rank:g} of {wide.shape[1]} in "
                    f"{impl}, median {expected:g} elsewhere", explanation))
    return found


def _weighted(cells: pd.DataFrame, value: str) -> float:
    """The mean of ``value`` over ``cells``' rows, weighted by their ``n`` (rows missing either left out)."""
    v, n = cells[value].to_numpy(dtype=float), cells["n"].to_numpy(dtype=float)
    ok = ~(np.isnan(v) | np.isnan(n))
    total = n[ok].sum()
    return float((v[ok] * n[ok]).sum() / total) if total else float("nan")


def _weighted_by(cells: pd.DataFrame, value: str) -> pd.Series:
    """:func:`_weighted` of every cell (:data:`CELL_KEYS`) of ``cells`` at once, indexed by the cells."""
    ok = cells[value].notna() & cells["n"].notna()
    parts = pd.DataFrame({"sum": (cells[value] * cells["n"]).where(ok, 0.0), "n": cells["n"].where(ok, 0.0)})
    totals = parts.groupby([cells[k] for k in CELL_KEYS], sort=True, dropna=False).sum()
    return (totals["sum"] / totals["n"]).where(totals["n"] != 0)


def _labels(row) -> list[str]:
    """The labels a table may give a cell's implementation (the paper tables add what varies)."""
    a, i, p, d = str(row["algorithm"]), str(row["implementation"]), str(row["popsize"]), str(row["dtype"])
    return [i, f"{a}/{i}", f"{i}/{p}", f"{a}/{i}/{p}", f"{i}/{p}/{d}", f"{a}/{i}/{p}/{d}"]


def figure_vs_table(study: str, cells: pd.DataFrame, times: pd.DataFrame) -> list[Anomaly]:
    """Rule "figure vs table": per cell of ``cells`` (``table_cells.csv``, what the figures of time
    against NP plot) whose (machine, implementation label, function) is one row of ``times``
    (``table_time.csv``), the mean time over the cell's rows against the table's, flagged where more
    than :data:`TOLERANCE` apart. Explained where the two average different rows (n differs: the table
    keeps the rows timed alone, the figure every row)."""
    found = []
    if not len(cells) or not len(times) or "mean_time_s" not in cells:
        return found
    table = times.assign(implementation=times["implementation"].astype(str)).set_index(
        ["machine", "implementation", "function"])
    matched = {}
    for key, cell in cells.groupby(CELL_KEYS, sort=True, dropna=False):
        row = dict(zip(CELL_KEYS, key))
        names = {(row["machine"], label, f) for label in _labels(row)
                 for f in (str(row["function"]), f"{row['function']}/d{row['dim']}")}
        hits = [k for k in names if k in table.index]
        if len(hits) == 1:
            matched.setdefault(hits[0], []).append((row, cell))
    for hit, pairs in matched.items():
        t = table.loc[hit]
        # a table row that several cells share (several NPs or D under one label) is no single point's
        if len(pairs) != 1 or isinstance(t, pd.DataFrame):
            continue
        row, cell = pairs[0]
        figure_s, table_s = _weighted(cell, "mean_time_s"), float(t["mean_s"])
        if not (figure_s > 0 and table_s > 0) or max(figure_s, table_s) / min(figure_s, table_s) <= TOLERANCE:
            continue
        n_figure, n_table = int(cell["n"].sum()), int(t["n"])
        explanation = (f"different rows: the figure averages all {n_figure} trials of the cell, the table the "
                       f"{n_table} timed '{t.get('timed', '')}'" if n_figure != n_table else UNEXPLAINED)
        found.append(Anomaly(study, "figure vs table",
                             f"{hit[1]} {hit[2]} D={row['dim']} NP={row['popsize']} ({row['machine']})",
                             f"figure {_g(figure_s)} s (n = {n_figure}) vs table {_g(table_s)} s (n = {n_table})",
                             explanation))
    return found


def _cell_name(row: dict) -> str:
    return (f"{row['algorithm']}/{row['implementation']} {row['function']} D={row['dim']} NP={row['popsize']} "
            f"{row['dtype']} ({row['machine']})")


def _apart(a: float, b: float) -> bool:
    if pd.isna(a) or pd.isna(b):
        return False
    if a == b:
        return False
    if min(a, b) <= 0:
        return True
    return max(a, b) / min(a, b) > TOLERANCE


def sections_disagree(tables: dict[str, tuple[pd.DataFrame, dict]],
                      provenance: dict[str, pd.DataFrame] | None = None) -> list[Anomaly]:
    """Rule "sections disagree": ``tables`` maps a study to its ``table_cells.csv`` and experiment spec;
    a cell (:data:`CELL_KEYS` and the spec's ``max_fes``) in two studies with another n, or a mean time
    or mean error more than :data:`TOLERANCE` apart. Explained where the experiments ask for other
    trials (another seed or trial count) or time them otherwise (another count of trials per launch,
    from ``provenance``: study -> its ``provenance.csv``)."""
    found = []
    summary = {}
    launches = {}  # (study, machine, implementation) -> its trials per launch, as provenance.csv says them
    for study, p in (provenance or {}).items():
        if len(p) and {"machine", "implementation", "trials_per_launch"} <= set(p):
            for r in p.itertuples():
                launches[(study, r.machine, str(r.implementation))] = str(r.trials_per_launch)
    for study, (cells, spec) in tables.items():
        if not len(cells) or not set(CELL_KEYS) <= set(cells):
            continue
        n = cells.groupby(CELL_KEYS, sort=True, dropna=False)["n"].sum()
        time_s, error = (_weighted_by(cells, value) for value in ("mean_time_s", "mean_error"))
        # the three share the grouping's order (a lookup by a key that holds NaN would not find it)
        for key, n_cell, t, e in zip(n.index, n.to_numpy(), time_s.to_numpy(), error.to_numpy()):
            summary.setdefault((*key, repr(spec.get("max_fes"))), []).append(
                (study, spec, int(n_cell), float(t), float(e)))
    for key, seen in summary.items():
        for k, (a, spec_a, n_a, t_a, e_a) in enumerate(seen):
            for b, spec_b, n_b, t_b, e_b in seen[k + 1:]:
                if n_a == n_b and not _apart(t_a, t_b) and not _apart(e_a, e_b):
                    continue
                why = []
                if spec_a.get("seed") != spec_b.get("seed"):
                    why.append(f"other trials: seed {spec_a.get('seed')} vs {spec_b.get('seed')} "
                               "(the experiment files)")
                if n_a != n_b and spec_a.get("trials") != spec_b.get("trials"):
                    why.append("the experiment files ask for other trial counts")
                cell = dict(zip(CELL_KEYS, key))
                launch_a, launch_b = (next((launches[(s, cell["machine"], label)] for label in _labels(cell)
                                            if (s, cell["machine"], label) in launches), "?") for s in (a, b))
                if _apart(t_a, t_b) and launch_a != launch_b:
                    why.append(f"times of {launch_a} vs {launch_b} trials per launch (provenance.csv): a batched "
                               "trial's time is its share of the launch")
                elif why and _apart(t_a, t_b):
                    why.append("the times' gap unexplained")
                found.append(Anomaly(
                    f"{a} / {b}", "sections disagree", _cell_name(dict(zip(CELL_KEYS, key))),
                    f"n {n_a} vs {n_b}; mean time {_g(t_a)} vs {_g(t_b)} s; mean error {_g(e_a)} vs {_g(e_b)}",
                    "; ".join(why) if why else UNEXPLAINED))
    return found


def _sessions(row) -> list[tuple[str, int, float, str]]:
    """(session, n, mean time, sharing) of each session of a ``table_cells.csv`` row's like rows (its
    ``session_timed``, else ``session``, ``session_n``, ``session_mean_time_s`` and
    ``session_concurrency``, ';'-separated in one order; sharing '' where the table has none); [] for a
    table written without them."""
    names = "session_timed" if isinstance(getattr(row, "session_timed", None), str) else "session"
    try:
        names, ns, times = (str(getattr(row, c)).split(";") for c in (names, "session_n", "session_mean_time_s"))
        sharing = getattr(row, "session_concurrency", None)
        sharing = str(sharing).split(";") if isinstance(sharing, str) else [""] * len(names)
        return [(s.strip(), int(n), float(t), c.strip())
                for s, n, t, c in zip(names, ns, times, sharing, strict=True)]
    except (AttributeError, TypeError, ValueError):
        return []


def _sharing_level(concurrency: str) -> int | None:
    """How much of the host a session's rows shared while timed (their ``concurrency`` values, '+'-joined):
    0 the whole host, 1 alone on a GPU or core beside other batches on the host's other GPUs or cores,
    2 side by side; None for a value not known here."""
    levels = []
    for c in filter(None, concurrency.split("+")):
        if c in ("exclusive", "host"):
            levels.append(0)
        elif c.startswith(("exclusive-gpu:", "exclusive-cpu:", "cpu")):
            levels.append(1)
        elif c.startswith("shared"):
            levels.append(2)
        else:
            return None
    return max(levels) if levels else None


def _slower_shared_more(split: list[tuple[str, int, float, str]]) -> bool:
    """Whether every session more than :data:`TOLERANCE` slower than the fastest shared more of its host
    (:func:`_sharing_level`) than the fastest did."""
    fastest = min(split, key=lambda p: p[2])
    base = _sharing_level(fastest[3])
    slower = [p for p in split if _apart(fastest[2], p[2])]
    return base is not None and bool(slower) and all(
        (lvl := _sharing_level(p[3])) is not None and lvl > base for p in slower)


def mixed_rows(study: str, cells: pd.DataFrame) -> list[Anomaly]:
    """Rule "mixed rows": a cell of ``cells`` (``table_cells.csv``) with rows of more than one commit or
    session (boot) of its machine: each part's n and mean time, over the runs timed alone and one a launch
    where the cell has any (``session_rows``: :func:`gpude.report.scaling.cell_table`). Explained where the
    parts' mean times agree within :data:`TOLERANCE` (the mix moves no time), where the runs timed alone
    are all of one session (the others' times are shares of a launch or of the host, never compared), where
    every slower session shared more of its host than the fastest (its rows' ``concurrency``), where an
    outside program's rows of one source are all of one session (the commits are gpude's driver only), or a
    part has no time (rows of a guest host joined without their times); else unexplained."""
    found = []
    if not len(cells) or not {*CELL_KEYS, "git_commit"} <= set(cells):  # (no commits: nothing to tell apart)
        return found
    for key, cell in cells.groupby(CELL_KEYS, sort=True, dropna=False):
        commits = {c.strip() for v in cell["git_commit"].astype(str) for c in v.split(";")}
        sessions = {c.strip() for v in cell.get("session", pd.Series(dtype=str)).astype(str) for c in v.split(";")}
        if len(commits) < 2 and len(sessions) < 2:
            continue
        def short(v):  # commit hashes as git abbreviates them; '+dirty' kept
            return "; ".join(c.strip()[:7] + ("+dirty" if c.strip().endswith("+dirty") else "")
                             if len(c.strip()) >= 40 else c.strip() for c in str(v).split(";"))
        parts = [f"commits {short(r.git_commit)}, sessions {short(getattr(r, 'session', ''))}: n = {int(r.n)}, "
                 f"{_g(r.mean_time_s)} s" for r in cell.itertuples()]
        timed = cell["mean_time_s"].dropna()
        split = _sessions(cell.iloc[0]) if len(cell) == 1 else []
        alone_only = len(cell) == 1 and str(getattr(cell.iloc[0], "session_rows", "")) == "alone"
        if len(split) == 1 and alone_only and int(cell.iloc[0].n) > split[0][1]:
            s, n, t, _ = split[0]
            parts.append(f"timed alone, one a launch: {s}: n = {n}, {_g(t)} s")
            explanation = (f"the runs timed alone, one a launch (the ones the time tables use), are all of {s}; "
                           f"the other {int(cell.iloc[0].n) - n} were made several to a launch or side by side "
                           "(their times are shares, not compared)")
        elif len(split) > 1:  # the cell's one row, told apart by session (boot, or commit where none)
            times = [t for _, _, t, _ in split]
            parts = [f"commits {short(cell.iloc[0].git_commit)}"] + [
                f"{s}{f' ({c})' if c else ''}: n = {n}, {_g(t)} s" for s, n, t, c in split]
            if _apart(min(times), max(times)):
                parts.append(f"slowest / fastest session {max(times) / min(times):.3g}x")
                explanation = UNEXPLAINED
                if _slower_shared_more(split):
                    fastest = min(split, key=lambda p: p[2])
                    explanation = (f"the slower session(s) shared more of the host while timed than the fastest "
                                   f"({fastest[0]}, {fastest[3]}): alone on a GPU beside the host's other GPUs' "
                                   "batches, or side by side; each session's sharing is its rows' `concurrency`")
            else:
                explanation = (f"the sessions' mean times agree within {TOLERANCE:g}x "
                               f"({max(times) / min(times):.3g}x)")
        elif len(cell) == 1:
            parts.append("one row of table_cells.csv: no time per commit")
            explanation = UNEXPLAINED
            source = str(getattr(cell.iloc[0], "program_source", "") or "")
            if len(sessions) == 1 and source and ";" not in source and source != "nan":
                explanation = (f"one session ({next(iter(sessions))}: one instance) and one program source "
                               f"(sha256 {source}...): the commits differ only in gpude's driver around the "
                               "outside program, whose runs these are")
        elif len(timed) < len(cell):
            explanation = "rows without a time (guest rows: their times are not counted in the cell)"
        elif len(timed) and not _apart(float(timed.min()), float(timed.max())):
            explanation = (f"the parts' mean times agree within {TOLERANCE:g}x "
                           f"({float(timed.max() / timed.min()):.3g}x)")
        else:
            explanation = UNEXPLAINED
        found.append(Anomaly(study, "mixed rows", _cell_name(dict(zip(CELL_KEYS, key))), "; ".join(parts),
                             explanation))
    return found


def find(sections, verdicts: dict | None = None) -> list[Anomaly]:
    """Every rule over the report's sections (:class:`gpude.report.section.Section`): rows of one
    section's tables and the verdicts it says (``verdicts``: each section's, where already made), then
    the rule across sections."""
    found = []
    tables = {}
    for s in sections:
        study = str(s.spec.get("name", s.dir.name))
        cells = s.cells_table()
        found += against_paper(study, verdicts[s] if verdicts else s.verdicts(), s.cell_checks())
        found += cost_order(study, s.times, s.trial_times)
        found += figure_vs_table(study, cells, s.times)
        found += mixed_rows(study, cells)
        tables[study] = (cells, s.spec)
    found += sections_disagree(tables, {str(s.spec.get("name", s.dir.name)): s.provenance for s in sections})
    return found


def _escape(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def counts(anomalies: list[Anomaly]) -> dict[str, dict[str, int]]:
    """Anomalies per rule and study."""
    out: dict[str, dict[str, int]] = {}
    for a in anomalies:
        out.setdefault(a.rule, {}).setdefault(a.study, 0)
        out[a.rule][a.study] += 1
    return out


def summary_markdown(anomalies: list[Anomaly], appendix: str) -> str:
    """The body's short summary: the rules, and per rule the count per study and how many are unexplained."""
    lines = ["## Anomalies", "",
             f"Found by rule over the tables (`gpude.report.anomalies`), each listed with its numbers and its check "
             f"or as unexplained in the [appendix]({appendix}#anomalies): {len(anomalies)} in all, "
             f"{sum(a.explanation == UNEXPLAINED for a in anomalies)} unexplained.", ""]
    by_rule = counts(anomalies)
    for rule, what in RULES.items():
        per = by_rule.get(rule, {})
        left = sum(a.explanation == UNEXPLAINED for a in anomalies if a.rule == rule)
        said = ", ".join(f"{study} {k}" for study, k in per.items()) or "none"
        lines.append(f"* **{rule}** ({what}): {sum(per.values())}" + (f" ({said}; {left} unexplained)"
                                                                       if per else "") + ".")
    return "\n".join(lines) + "\n"


def appendix_markdown(anomalies: list[Anomaly]) -> str:
    """The full list, one row per anomaly, under the anchor the body links to."""
    lines = ['<a id="anomalies"></a>', "", "## Anomalies", "",
             "Every anomaly the rules of `gpude.report.anomalies` find, on the machine its cell names (n in its "
             "numbers where the rule compares trials): "
             + "; ".join(f"*{rule}*: {what}" for rule, what in RULES.items()) + ".", "",
             "| study | rule | cell | numbers | explanation or check |", "|---" * 5 + "|"]
    for a in anomalies:
        lines.append(f"| {_escape(a.study)} | {a.rule} | {_escape(a.cell)} | {_escape(a.numbers)} | "
                     f"{_escape(a.explanation)} |")
    return "\n".join(lines) + "\n"
