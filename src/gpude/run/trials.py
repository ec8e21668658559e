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


def run_trials(algorithm: str, implementation: str, function: str, dim: int, popsize: int, max_fes: int, *,
               trials: int = 1, first_trial: int = 0, seed: int = 0, seeds: list[int] | None = None,
               F: float | None = None, CR: float | None = None, bounds: str | None = None,
               dtype: str = "float64", target: float = 1e-8, max_time_s: float | None = None,
               suite: str = "", setting: str = "", concurrency: str = "unknown",
               out_csv: str | None = None, out_traces: str | None = None,
               options: dict | None = None) -> list[TrialResult | None]:
    """Run the trials of one configuration and write their rows and traces.

    Parameters
    ----------
    algorithm, implementation, function, dim, popsize, max_fes
        The configuration (``function``: any name :func:`gpude.problems.get_problem` resolves).
    trials, first_trial
        Trials ``first_trial .. first_trial + trials - 1``; their seeds derive from ``seed`` and
        (function, dim, popsize, trial) (:func:`gpude.core.rng.trial_seed`), so that a chunk of a longer
        cell keeps its trials' seeds.
    seeds
        Explicit seeds, one trial each, instead of ``seed`` and ``trials``.
    F, CR, bounds, dtype, target, max_time_s
        As :func:`gpude.run.trial.make_runner` takes them.
    options
        The other keywords of :func:`gpude.run.trial.make_runner`: the algorithm's parameters beyond F and
        CR (e.g. jDE's ``tau1``) and the implementation's (e.g. ``workers``, ``trials_per_launch``).
    suite, setting, concurrency
        Recorded in each row (``setting`` is part of its ``run_id``).
    out_csv, out_traces
        The batch's rows and traces; None: print the trials and write nothing.

    Returns
    -------
    list
        Each trial's :class:`~gpude.implementations.base.TrialResult`, None where it failed.
    """
    from ..implementations import registry
    from ..functions.function import canonical_id
    from .rows import failed_row, trial_row, write_batch
    from ..core.rng import trial_seed
    from .trial import make_runner

    max_fes = int(max_fes)
    function = canonical_id(function)  # F01 for f01; an instance's name as in the paper
    numbers = range(first_trial, first_trial + trials)
    seeds = list(seeds) if seeds else [trial_seed(seed, function, dim, popsize, t) for t in numbers]
    numbers = range(first_trial, first_trial + len(seeds))
    t0 = time.perf_counter()
    runner = make_runner(algorithm, implementation, function, dim, popsize, max_fes, F=F, CR=CR, bounds=bounds,
                         dtype=dtype, target=target, max_time_s=max_time_s, **(options or {}))
    setup = time.perf_counter() - t0
    rows, results = [], []
    base = {"function": function, "dim": dim, "algorithm": algorithm, "implementation": implementation,
            "popsize": popsize, "dtype": dtype, "max_fes": max_fes, "target_error": target, "max_time_s": max_time_s}
    name = f"{implementation} {function} D={dim} NP={popsize}"
    print(f"{name}: {len(seeds)} trials, setup {setup:.1f}s (first trial at {time.time():.3f})",
          file=sys.stderr, flush=True)
    jobs, per_launch = list(zip(numbers, seeds)), runner.trials_per_launch
    for start in range(0, len(jobs), per_launch):  # a GPU device loop advances a group together
        group = jobs[start:start + per_launch]
        try:
            outcomes = runner.run_batch([s for _, s in group])
        except Exception as exc:  # a failed trial is a row with its status, never dropped
            outcomes = [exc] * len(group)
        for k, ((t, s), r) in enumerate(zip(group, outcomes), start + 1):
            progress = f"[{k}/{len(seeds)}] trial {t} seed {s}"
            if isinstance(r, Exception):
                rows.append(failed_row(base, t, s, r, setting))
                results.append(None)
                print(f"{progress}: FAILED {type(r).__name__}: {r}", file=sys.stderr)
                continue
            rows.append(trial_row(r, t, setup, str(out_traces), concurrency, suite=suite, setting=setting))
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
        write_batch(rows, results, out_csv, out_traces,
                    uses_gpu=registry.get(algorithm, implementation).needs_gpu)
    return results
