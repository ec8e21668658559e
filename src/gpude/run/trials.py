"""``gpude run``'s batch: every trial of one configuration, its progress lines, its rows and traces.

The runner is built and warmed once (its ``setup_time_s``, outside every trial's time), then the trials
run in groups of the runner's ``trials_per_launch`` (a GPU device loop advances a group together). A
trial that fails is a row with its status, never dropped. Progress goes to stderr, a line per trial and
a summary; the rows and traces are written atomically at the end (:func:`gpude.run.rows.write_batch`).
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ..implementations.base import TrialResult
    from .spec import RunSpec


def run_trials(spec: RunSpec, out_csv: str | None = None, out_traces: str | None = None) -> list[TrialResult | None]:
    """Run the trials of one batch (a :class:`~gpude.run.spec.RunSpec`) and write their rows and traces.

    Parameters
    ----------
    spec
        The batch: its cell, configuration, trials (their seeds derive from ``spec.seed`` and
        (function, dim, popsize, trial), so that a chunk of a longer cell keeps its trials' seeds) and
        what its rows record (suite, setting, concurrency).
    out_csv, out_traces
        The batch's rows and traces; None: print the trials and write nothing.

    Returns
    -------
    list
        Each trial's :class:`~gpude.implementations.base.TrialResult`, None where it failed.
    """
    from .rows import failed_row, trial_row, write_batch

    function = spec.function
    jobs = spec.trial_seeds()
    t0 = time.perf_counter()
    runner = spec.make_runner()
    setup = time.perf_counter() - t0
    rows, results = [], []
    base = {"function": function, "dim": spec.dim, "algorithm": spec.algorithm, "implementation": spec.implementation,
            "popsize": spec.popsize, "dtype": spec.dtype, "max_fes": int(spec.max_fes), "target_error": spec.target,
            "max_time_s": spec.max_time_s}
    name = f"{spec.implementation} {function} D={spec.dim} NP={spec.popsize}"
    print(f"{name}: {len(jobs)} trials, setup {setup:.1f}s (first trial at {time.time():.3f})",
          file=sys.stderr, flush=True)
    per_launch = runner.trials_per_launch
    for start in range(0, len(jobs), per_launch):  # a GPU device loop advances a group together
        group = jobs[start:start + per_launch]
        try:
            outcomes = runner.run_batch([s for _, s in group])
        except Exception as exc:  # a failed trial is a row with its status, never dropped
            outcomes = [exc] * len(group)
        for k, ((t, s), r) in enumerate(zip(group, outcomes), start + 1):
            progress = f"[{k}/{len(jobs)}] trial {t} seed {s}"
            if isinstance(r, Exception):
                rows.append(failed_row(base, t, s, r, spec.setting))
                results.append(None)
                print(f"{progress}: FAILED {type(r).__name__}: {r}", file=sys.stderr)
                continue
            rows.append(trial_row(r, t, setup, str(out_traces), spec.concurrency, suite=spec.suite,
                                  setting=spec.setting))
            results.append(r)
            print(f"{progress}: best {r.best_error:.6g} fes {r.fes_used} time {r.wall_time_s:.3f}s"
                  f" (stopped by {r.stopped_by})", file=sys.stderr, flush=True)
    done = [r for r in results if r is not None]
    print(f"{name}: {len(done)}/{len(results)} trials"
          + (f", best error {min(r.best_error for r in done):.6g} (median "
             f"{float(np.median([r.best_error for r in done])):.6g}), FEs {min(r.fes_used for r in done)}-"
             f"{max(r.fes_used for r in done)}, time {sum(r.wall_time_s for r in done):.3f}s in all"
             if done else "")
          + (f" -> {out_csv}" if out_csv else " (nothing written: --out-csv and --out-traces keep "
             "the rows and traces)"), file=sys.stderr, flush=True)
    if out_csv:
        write_batch(rows, results, out_csv, out_traces, uses_gpu=spec.needs_gpu)
    return results
