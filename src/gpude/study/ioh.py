"""Export trials and traces in IOHprofiler's format, for IOHanalyzer (``gpude export-ioh``).

The layout is IOHexperimenter's (version 0.3 JSON meta files, which IOHanalyzer reads): one folder
per competitor (algorithm/implementation, plus NP and dtype when an experiment varies them), holding
per function ``IOHprofiler_f<i>_<name>.json`` and ``data_f<i>_<name>/IOHprofiler_f<i>_DIM<d>.dat``.
A ``.dat`` file has, per run, the header line ``evaluations raw_y`` and one line per trace point.

What our traces hold: the best-so-far error at the generations where it fell by 0.01 decades (and
the first and last), so ``raw_y`` is the best-so-far error at those evaluation counts (IOHanalyzer's
fixed-target and fixed-budget views read best-so-far values, which is what they get). Errors are
``f(x) - f(x*)`` (``maximization: false``); a LOP's is optimum - f, a schedule's its fit.
Function ids are numbered 1, 2, ... in the order of the experiment's functions (IOHanalyzer wants
integers); the names keep ours. Instances are the trial numbers + 1 (a trial's seed fixes its run).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from ..core.errors import GpudeError
from ..core.io import read_csv

IOH_VERSION = "0.3.3"


def _competitors(trials: pd.DataFrame) -> pd.Series:
    """A folder name per row: algorithm_implementation, plus _np<N> and _<dtype> where those vary."""
    name = trials["algorithm"].astype(str) + "_" + trials["implementation"].astype(str)
    if trials["popsize"].nunique() > 1:
        name += "_np" + trials["popsize"].astype(str)
    if "dtype" in trials and trials["dtype"].nunique() > 1:
        name += "_" + trials["dtype"].astype(str)
    return name


def export(trials: pd.DataFrame, traces: dict, out_dir, suite: str = "gpude") -> list[Path]:
    """Write the IOHprofiler folders of ``trials`` (with ``traces``: run_id -> fes, best_error) into
    ``out_dir``, replacing it whole (written in a staging folder first, then moved)."""
    missing = [c for c in ("run_id", "algorithm", "implementation", "function", "dim", "popsize", "trial")
               if c not in trials]
    if missing:
        raise GpudeError(f"the trials table lacks {', '.join(missing)}: pass a table written by `gpude run`/`merge`")
    ok = trials[~trials["status"].astype(str).str.startswith("error")] if "status" in trials else trials
    ok = ok[ok["run_id"].isin(list(traces))]
    if not len(ok):
        raise GpudeError("no trial of the table has a trace: nothing to export")
    out_dir = Path(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.staging-", dir=out_dir.parent))
    function_ids = {f: i for i, f in enumerate(dict.fromkeys(trials["function"]), start=1)}
    try:
        ok = ok.assign(competitor=_competitors(ok))
        for (competitor, function), g in ok.groupby(["competitor", "function"], sort=False):
            i = function_ids[function]
            folder = staging / competitor
            scenarios = []
            for dim, runs in g.groupby("dim"):
                rel = f"data_f{i}_{function}/IOHprofiler_f{i}_DIM{int(dim)}.dat"
                (folder / rel).parent.mkdir(parents=True, exist_ok=True)
                lines, meta = [], []
                for r in runs.sort_values("trial").to_dict("records"):
                    t = traces[r["run_id"]]
                    fes, best = np.asarray(t["fes"], dtype=np.int64), np.asarray(t["best_error"], dtype=float)
                    lines.append("evaluations raw_y")
                    lines += [f"{e} {y:.17g}" for e, y in zip(fes, best)]
                    k = int(np.argmin(best))
                    meta.append({"instance": int(r["trial"]) + 1, "evals": int(fes[-1]),
                                 "best": {"evals": int(fes[k]), "y": float(best[k])}})
                (folder / rel).write_text("\n".join(lines) + "\n")
                scenarios.append({"dimension": int(dim), "path": rel, "runs": meta})
            first = g.iloc[0]
            info = {"version": IOH_VERSION, "suite": suite, "function_id": i, "function_name": str(function),
                    "maximization": False,
                    "algorithm": {"name": competitor,
                                  "info": f"gpude {first['algorithm']}/{first['implementation']}, NP {first['popsize']}"
                                          + (f", {first['dtype']}" if "dtype" in g else "")
                                          + (f", params {first['params']}" if "params" in g else "")},
                    "attributes": ["evaluations", "raw_y"], "scenarios": scenarios}
            (folder / f"IOHprofiler_f{i}_{function}.json").write_text(json.dumps(info, indent=1))
        if out_dir.exists():
            shutil.rmtree(out_dir)
        staging.rename(out_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return sorted(out_dir.rglob("*.json"))


def export_experiment(results_dir, out_dir=None) -> list[Path]:
    """``results/<experiment>/`` (its ``trials.csv`` and ``traces.npz``) -> ``<out_dir>`` (default
    ``results/<experiment>/ioh``)."""
    from ..run.rows import load_traces

    results_dir = Path(results_dir)
    trials_path, traces_path = results_dir / "trials.csv", results_dir / "traces.npz"
    for p in (trials_path, traces_path):
        if not p.is_file():
            raise GpudeError(f"{p} is missing: export-ioh reads a merged experiment folder (results/<experiment>/, "
                             "made by the workflow's merge_trials rule, or results/reference/<machine>/<experiment>/)")
    trials = read_csv(trials_path, comment="#")
    return export(trials, load_traces(traces_path), out_dir or results_dir / "ioh",
                  suite=str(trials["suite"].dropna().iloc[0]) if "suite" in trials and trials["suite"].notna().any()
                  else "gpude")


def read_dat(path) -> list[np.ndarray]:
    """The runs of a ``.dat`` file: one (evaluations, raw_y) array each (for tests and checks)."""
    runs, current = [], None
    for line in Path(path).read_text().splitlines():
        if line.startswith("evaluations"):
            current = []
            runs.append(current)
        elif line.strip():
            e, y = line.split()
            current.append((float(e), float(y)))
    return [np.array(r) for r in runs]
