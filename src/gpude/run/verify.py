"""``gpude verify``: re-make committed trial rows on this machine and say whether they hold.

A row of a trials table names everything that fixes its run: the algorithm, implementation, problem,
D, NP, dtype, budget, target, the parameters and options (``params``) and the seed. Re-made from them,
a run is the same bits on the same kind of device with code that makes the same runs. Each sampled
row gets one outcome:

``same``
    every result column (:data:`RESULT_COLUMNS`) bit for bit;
``differs``
    which columns, and by how much (relative difference and units in the last place for floats);
``cannot``
    why it cannot be re-made here: a failed trial, a wall-clock budget that ran out (where such a run
    stops depends on the machine's speed), another GPU model (GPU results are bit-reproducible on one
    model; ``any_gpu`` compares anyway), no GPU, an implementation not registered here (an
    experiment's plugin or outside program), a problem whose data is missing.

A row that had a wall-clock budget but stopped at its target is re-made without the clock: its run up
to the target does not depend on the machine.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import math
import time

import numpy as np

from ..core.errors import GpudeError, InvalidInputError

#: the columns of a row that a seed fixes (times and provenance are the machine's)
RESULT_COLUMNS = ("best_error", "fes_used", "generations", "hit_target", "fes_to_target", "status",
                  "distance_to_optimum", "solution")
#: result columns added after the first rows were made: empty in those rows, which are compared without them
UNRECORDED_BEFORE = ("distance_to_optimum", "solution")
#: the columns a row needs to be re-made
NEEDED = ("run_id", "algorithm", "implementation", "function", "dim", "popsize", "dtype", "seed", "max_fes",
          "trial", "status")
FINISHED = ("target", "budget", "time")
OUTCOME_COLUMNS = ("run_id", "outcome", "detail", "made_on", "made_at", "remade_on", "remade_at",
                   "wall_time_s", "remade_wall_time_s", "options_not_given")


@dataclasses.dataclass
class Outcome:
    """What :func:`verify_rows` found for one row."""

    run_id: str
    outcome: str  # same | differs | cannot
    detail: str = ""
    made_on: str = ""
    made_at: str = ""
    remade_on: str = ""
    remade_at: str = ""
    wall_time_s: float = math.nan
    remade_wall_time_s: float = math.nan
    options_not_given: str = ""  # recorded params that are no input (e.g. a graph's captured flag)


def _missing(value) -> bool:
    if value is None:
        return True
    if isinstance(value, str):
        return value.strip() == ""
    try:
        return bool(np.isnan(value))
    except TypeError:
        return False


def select_rows(table, rows: int = 5, run_ids=None, implementations=None, max_row_seconds=None,
                sample_seed: int = 0, statuses=None):
    """The rows to re-make: ``run_ids`` in that order (each must be in the table), else ``rows`` rows
    drawn without replacement with ``sample_seed`` from those of ``implementations`` and ``statuses``
    (all when None) whose recorded ``wall_time_s`` is at most ``max_row_seconds`` (all when None)."""
    missing = [c for c in NEEDED if c not in table]
    if missing:
        raise InvalidInputError(f"the table lacks the columns {', '.join(missing)}: verify re-makes rows of a "
                                "trials table written by `gpude run` or `gpude merge`")
    if run_ids:
        unknown = [r for r in run_ids if r not in set(table["run_id"])]
        if unknown:
            raise InvalidInputError(f"no row has run_id {', '.join(map(repr, unknown))}; the table's run_ids look "
                                    f"like {table['run_id'].iloc[0]!r}")
        by_id = table.drop_duplicates("run_id").set_index("run_id", drop=False)
        return by_id.loc[list(run_ids)].reset_index(drop=True)
    pool = table
    if implementations:
        pool = pool[pool["implementation"].isin(implementations)]
        if not len(pool):
            raise InvalidInputError(f"no row of implementation {', '.join(implementations)}; the table has "
                                    f"{', '.join(sorted(map(str, table['implementation'].unique())))}")
    if statuses:
        pool = pool[pool["status"].astype(str).isin(statuses)]
        if not len(pool):
            raise InvalidInputError(f"no row of status {', '.join(statuses)} (of those sampled from)")
    if max_row_seconds is not None and "wall_time_s" in pool:
        pool = pool[pool["wall_time_s"].fillna(np.inf) <= max_row_seconds]
        if not len(pool):
            raise InvalidInputError(f"no row took at most {max_row_seconds:g} s; raise --max-row-seconds")
    if rows < 1:
        raise InvalidInputError(f"--rows must be at least 1, got {rows}")
    pick = np.random.default_rng(sample_seed).choice(len(pool), size=min(rows, len(pool)), replace=False)
    return pool.iloc[np.sort(pick)].reset_index(drop=True)


def this_gpu() -> str:
    """This machine's GPU model as rows record it (``numba-cuda-simulator`` under the simulator), or ''
    where there is none."""
    from ..core.gpu_runtime import require_gpu

    try:
        require_gpu()
    except GpudeError:
        return ""
    from numba import cuda  # noqa: F401  (provenance asks CUDA only once numba.cuda is imported)

    from ..core.provenance import gpu

    name = gpu()["gpu"]
    return "" if name.startswith("unavailable") else name


def _params(row) -> dict:
    text = row.get("params")
    if _missing(text):
        return {}
    try:
        params = json.loads(text)
    except ValueError as exc:
        raise InvalidInputError(f"{row['run_id']}: params is not JSON ({exc})") from exc
    return params if isinstance(params, dict) else {}


def runner_arguments(row) -> tuple[dict, list[str]]:
    """``make_runner``'s keyword arguments for a row (its parameters, and the options its
    implementation takes), and the recorded ``params`` keys that are neither: what a run records
    about itself (e.g. ``graph_captured``, a launch's ``blocks`` where the batch sets them)."""
    from ..algorithms import params_class
    from ..implementations.registry import get

    cls = get(row["algorithm"], row["implementation"]).load(check_device=False)
    fields = {f.name for f in dataclasses.fields(params_class(row["algorithm"]))}
    accepted = {name for name, p in inspect.signature(cls.__init__).parameters.items()
                if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)} - {"self", "function", "params"}
    options, dropped = {}, []
    for key, value in _params(row).items():
        if key in fields or key in accepted:
            options[key] = value
        else:
            dropped.append(key)
    return options, sorted(dropped)


def why_not(row, gpu_here: str, any_gpu: bool = False) -> str | None:
    """Why ``row`` cannot be re-made on this machine, or None where it can."""
    from ..implementations.registry import get

    status = str(row.get("status", ""))
    if status not in FINISHED:
        return f"the row records a failed trial (status {status!r}): there is no result to re-make"
    max_time_s = row.get("max_time_s")
    if status == "time":
        return (f"it ran out of a wall-clock budget (max_time_s={max_time_s}): where such a run stops depends on the "
                "machine's speed, so its result is not bit-reproducible")
    try:
        entry = get(row["algorithm"], row["implementation"])
    except GpudeError as exc:
        return (f"{exc}: an experiment's plugin or outside program? give its --plugin MODULE or --programs FILE "
                "(as the experiment file lists them)")
    if entry.needs_gpu:
        made_on = str(row.get("gpu", ""))
        if not gpu_here:
            return f"it ran on a GPU ({made_on or 'not recorded'}); this machine has none (nor the simulator)"
        if made_on != gpu_here and not any_gpu:
            return (f"made on {made_on or 'an unrecorded GPU'}, this machine's GPU is {gpu_here}: GPU results are "
                    "bit-reproducible on one GPU model (--any-gpu re-makes and compares anyway)")
    return None


def remade_row(row, result) -> dict:
    """The result columns of a re-made run, as :func:`gpude.run.rows.trial_row` writes them."""
    from .rows import trial_row

    return trial_row(result, int(row["trial"]), 0.0)


def _ulps(a: float, b: float) -> int:
    """Units in the last place between two float64 values of one sign."""
    ia, ib = (np.array([x], dtype=np.float64).view(np.int64)[0] for x in (a, b))
    return abs(int(ia) - int(ib))


def _same_value(column: str, recorded, remade) -> tuple[bool, str]:
    if _missing(recorded) and _missing(remade):
        return True, ""
    if _missing(recorded) or _missing(remade):
        return False, f"{column} {recorded!r} -> {remade!r}"
    if column == "solution":
        a, b = json.loads(recorded), json.loads(remade)
        return a == b, "" if a == b else f"solution {recorded} -> {remade}"
    if column == "status":
        return str(recorded) == str(remade), f"status {recorded} -> {remade}"
    if column == "hit_target":
        a = str(recorded).strip().lower() in ("true", "1", "1.0")
        return a == bool(remade), f"hit_target {a} -> {bool(remade)}"
    a, b = float(recorded), float(remade)
    if a == b or (math.isnan(a) and math.isnan(b)):
        return True, ""
    text = f"{column} {a!r} -> {b!r}"
    if math.isfinite(a) and math.isfinite(b) and a != 0:
        text += f" (relative {abs(b - a) / abs(a):.3g}"
        text += f", {_ulps(a, b)} ulp)" if (a > 0) == (b > 0) else ")"
    return False, text


def distance_rounding(recorded, remade, dim) -> bool:
    """Whether two distances to the optimum of a D-dimensional run differ by no more than the rounding
    of a sum of D squares in some order. :func:`gpude.run.rows.distance_to_optimum` sums correctly
    rounded, the same bits on every machine; a committed row whose distance was summed by BLAS, in an
    order of its CPU's (its best_x is not stored, so the column cannot be recomputed), differs from a
    re-made row of the same run in its last bits only."""
    if _missing(recorded) or _missing(remade):
        return False
    a, b = float(recorded), float(remade)
    if not (math.isfinite(a) and math.isfinite(b)):
        return False
    # each of the D - 1 additions rounds by at most half an ulp of the partial sum (<= the whole
    # sum), so the sum is within (D - 1) * 2**-53 relative, its square root within half of that
    return abs(a - b) <= max(int(dim) - 1, 1) * 2.0 ** -53 * max(abs(a), abs(b))


def compare(row, remade: dict) -> list[str]:
    """The differences between a recorded row and its re-made one, one text per column; [] if the
    same. A distance to the optimum within :func:`distance_rounding` of the recorded one is the same."""
    found = []
    for column in RESULT_COLUMNS:
        if column not in row.index:  # an older table without the column
            continue
        if column in UNRECORDED_BEFORE and _missing(row[column]):  # a row made before the column was written
            continue
        same, text = _same_value(column, row[column], remade.get(column))
        if not same and column == "distance_to_optimum" and distance_rounding(
                row[column], remade.get(column), row.get("dim", 1)):
            continue
        if not same:
            found.append(text)
    return found


def distance_notes(row, remade: dict) -> str:
    """What the outcome's detail says of a distance that is the same only to its summation's rounding."""
    recorded, new = row.get("distance_to_optimum"), remade.get("distance_to_optimum")
    if _missing(recorded) or _missing(new) or float(recorded) == float(new):
        return ""
    return (f"distance_to_optimum {float(recorded)!r} -> {float(new)!r}: within the rounding of a sum of "
            f"{int(row.get('dim', 1))} squares (the row's distance was summed by BLAS, not correctly rounded)")


def _configuration(row) -> tuple:
    """What a batch of rows shares (those re-made in one runner)."""
    return tuple(str(row.get(c)) for c in ("algorithm", "implementation", "function", "dim", "popsize", "dtype",
                                           "max_fes", "target_error", "max_time_s", "params"))


def _target(row) -> dict:
    target = row.get("target_error")
    return {} if _missing(target) else {"target": float(target)}


def _device_of(row, on_gpu: bool) -> str:
    """The device a row ran on: its GPU, or for a CPU implementation its CPU."""
    return str(row.get("gpu", "")) if on_gpu else str(row.get("cpu", ""))


def verify_rows(rows, any_gpu: bool = False, log=None) -> list[Outcome]:
    """Re-make ``rows`` (a DataFrame of trial rows) on this machine; an :class:`Outcome` per row, in
    order. Rows of one configuration share one runner and are run together, as many per launch as
    their ``trials_per_launch`` (each seed's run does not depend on the others in its launch)."""
    from ..core.provenance import cpu, git_commit
    from .rows import launch_size
    from .trial import make_runner

    gpu_here = this_gpu() if any(needs_gpu(r) for _, r in rows.iterrows()) else ""
    commit = git_commit()
    outcomes: dict[int, Outcome] = {}
    groups: dict[tuple, list[int]] = {}
    for i, row in rows.iterrows():
        base = Outcome(str(row["run_id"]), "cannot", made_on=_device_of(row, needs_gpu(row)),
                       made_at=str(row.get("git_commit", "")),
                       wall_time_s=float(row.get("wall_time_s", math.nan)))
        outcomes[i] = base
        reason = why_not(row, gpu_here, any_gpu)
        if reason:
            base.detail = reason
        else:
            groups.setdefault(_configuration(row), []).append(i)
    for indices in groups.values():
        first = rows.loc[indices[0]]
        remade_on = gpu_here if needs_gpu(first) else cpu()["cpu"]
        try:
            options, dropped = runner_arguments(first)
            # a wall-clock budget is left out: such rows stopped at the target
            runner = make_runner(first["algorithm"], first["implementation"], str(first["function"]),
                                 int(first["dim"]), int(first["popsize"]), int(first["max_fes"]),
                                 dtype=str(first["dtype"]), **_target(first), **options)
        except GpudeError as exc:
            for i in indices:
                outcomes[i].detail = f"cannot be built here: {exc}"
            continue
        per_launch = max(1, launch_size(first.get("params", "")))
        for start in range(0, len(indices), per_launch):
            group = indices[start:start + per_launch]
            t0 = time.perf_counter()
            results = runner.run_batch([int(rows.loc[i, "seed"]) for i in group])
            wall = time.perf_counter() - t0
            for i, result in zip(group, results):
                row, out = rows.loc[i], outcomes[i]
                remade = remade_row(row, result)
                differences = compare(row, remade)
                out.outcome = "differs" if differences else "same"
                out.detail = "; ".join(differences) if differences else distance_notes(row, remade)
                out.remade_on, out.remade_at = remade_on, commit
                out.remade_wall_time_s = result.wall_time_s if len(group) == 1 else wall / len(group)
                out.options_not_given = ",".join(dropped)
                if log:
                    log(format_outcome(out))
    for out in outcomes.values():
        if out.outcome == "cannot" and log:
            log(format_outcome(out))
    return [outcomes[i] for i in rows.index]


def registered_device(algorithm: str, implementation: str) -> str | None:
    """``cpu`` or ``gpu`` for a registered implementation; None for one not registered here (an
    experiment's plugin or outside program not loaded)."""
    from ..implementations.registry import get

    try:
        return get(algorithm, implementation).device
    except GpudeError:
        return None


def needs_gpu(row) -> bool:
    """Whether a row's implementation runs on a GPU (False where it is not registered here)."""
    return registered_device(row["algorithm"], row["implementation"]) == "gpu"


def format_outcome(out: Outcome) -> str:
    where = f" (made on {out.made_on} at {out.made_at or '?'}; re-made on {out.remade_on})" if out.remade_on else ""
    return f"{out.outcome:8s} {out.run_id}{where}{': ' + out.detail if out.detail else ''}"


def outcome_table(outcomes: list[Outcome]):
    import pandas as pd

    return pd.DataFrame([dataclasses.asdict(o) for o in outcomes], columns=list(OUTCOME_COLUMNS))
