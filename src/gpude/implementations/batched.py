"""The run loop shared by the implementations that advance several trials together.

``run_batch(seeds)`` runs one trial per seed, each with its own key, in the same launches
(``trials_per_launch`` is how many a driver hands over at once); each trial makes the run it makes
alone and stops at its own target or budget; ``run(seed)`` is a batch of one. What is shared here:
the keys, the charge of each trial's time and its result row (:class:`BatchedImplementation`), and
the loop of the batches whose host sees every trial's best after every step
(:class:`HostSteppedBatch`: ``masw/gpu``, ``ss/gpu``). The device loops
(:mod:`gpude.implementations.device_loop`, :mod:`gpude.implementations.resident`) see their trials
through flags on the device and keep their own loops.

**Time.** Without a wall-clock budget a trial is charged its fair share of the batch's wall time:
while k trials run, each is charged 1/k of the elapsed time, and a trial stops being charged when
the host sees its stop (:func:`fair_shares`); the shares add up to the batch's wall time, and a
batch of one is charged all of it. Under ``max_time_s`` every trial has the whole budget
concurrently (not a 1/B share) and is charged the time it ran (:func:`times_run`).
``time_to_target_s`` is the trial's charge.
"""

from __future__ import annotations

import contextlib
import math
import time
from dataclasses import dataclass

import numpy as np

from ..core.rng import seed_key
from .base import Implementation, points_trace


def times_run(ends, wall):
    """Each trial's seconds under a time budget, where every trial of a batch has the whole budget
    concurrently: until ``ends[b]`` (its stop), or the batch's ``wall`` (None: it ran to the end)."""
    return np.array([wall if e is None else min(e, wall) for e in ends], dtype=np.float64)


def fair_shares(ends, wall):
    """Each trial's share of a batch's ``wall`` seconds: while k trials run, each is charged 1/k.

    ``ends[b]`` is when trial b stopped being charged (None: it ran to the end). Whatever follows
    the last end (the final synchronisation and copies) is shared equally. The shares add up to
    ``wall``.
    """
    ends = times_run(ends, wall)
    shares = np.empty_like(ends)
    charged, previous = 0.0, 0.0
    for rank, b in enumerate(np.argsort(ends, kind="stable")):
        charged += (ends[b] - previous) / (len(ends) - rank)
        previous = ends[b]
        shares[b] = charged
    return shares + (wall - previous) / len(ends)


@dataclass
class TrialEnd:
    """One trial of a batch once it has run, before its time is charged."""

    best: float
    best_x: np.ndarray
    fes: int
    generations: int
    trace: dict
    stopped_by: str
    hit_fes: int | None
    #: seconds (on the batch's clock) when the trial stopped being charged; None: it ran to the end
    end: float | None


class BatchedImplementation(Implementation):
    """Subclasses provide :meth:`run_trials` and, for their result rows, :meth:`batch_info`."""

    #: a trial's ``time_to_target_s`` leaves out its share of what follows the batch's last stop (the
    #: final copies), as a host loop's lone trial records its time at the hit; else its whole charge
    hit_time_before_final_copies = False

    def run(self, seed: int):
        return self.run_batch([seed])[0]

    def run_batch(self, seeds):
        """One trial per seed, all advanced together (see the module docstring)."""
        seeds = list(seeds)
        if not seeds:
            return []
        trials, wall = self.run_trials([seed_key(s) for s in seeds])
        return self.batch_results(seeds, trials, wall)

    def run_trials(self, keys) -> tuple[list[TrialEnd], float]:
        """Run a trial per key together: each trial's :class:`TrialEnd` and the batch's wall seconds."""
        raise NotImplementedError

    def batch_info(self, batch: int) -> dict:
        """What a result row records beside the batch's wall time (``options``: how it was made)."""
        return {"options": {"trials_per_launch": batch}}

    def batch_results(self, seeds, trials, wall):
        """The trials' result rows, each charged its time (see the module docstring)."""
        ends = [t.end for t in trials]
        if self.params.max_time_s is not None:
            shares = hit_times = times_run(ends, wall)
        else:
            shares = hit_times = fair_shares(ends, wall)
            if self.hit_time_before_final_copies:
                last_end = max(wall if e is None else min(e, wall) for e in ends)
                hit_times = shares - (wall - last_end) / len(seeds)
        info = self.batch_info(len(seeds))
        return [self._result(seed, t.best, t.best_x, t.fes, t.generations, shares[b], t.hit_fes,
                             float(hit_times[b]) if t.hit_fes is not None else None, t.trace, t.stopped_by,
                             **info, batch_wall_time_s=wall)
                for b, (seed, t) in enumerate(zip(seeds, trials))]


class HostSteppedBatch(BatchedImplementation):
    """A batch whose host sees every trial's best after every step of the batch (a generation, an
    iteration): it stops a trial there at its target or its FE budget, and every trial still running
    once ``max_time_s`` is spent (checked before each step).

    Subclasses provide ``start_trials(keys)`` (arrays and keys, before the clock starts),
    ``initialize_trials() -> bests``, ``advance_trials(budgets) -> {b: (used, best)}`` (one step of
    the trials in ``budgets``, each using at most ``budgets[b]`` evaluations), ``final_vectors(B)``
    (each trial's best vector, on the clock) and, optionally, ``batch_context()`` (around the clocked
    part) and ``teardown()`` (after it). A trial's trace holds the host's clock at each step.
    """

    def evaluations_per_generation(self) -> int:
        """Evaluations of a full step (the population size, unless the algorithm says otherwise)."""
        return self.params.popsize

    def batch_context(self):
        return contextlib.nullcontext()

    def teardown(self) -> None:
        """After a batch's clock has stopped."""

    def run_trials(self, keys):
        p, B = self.params, len(keys)
        self.start_trials(keys)
        per_step = self.evaluations_per_generation()
        deadline = math.inf if p.max_time_s is None else p.max_time_s
        traces = [[] for _ in range(B)]
        fes, gens, best = [min(p.popsize, p.max_fes)] * B, [0] * B, [math.inf] * B
        hit_fes, ends, stopped = [None] * B, [None] * B, [None] * B

        def record(b, now):
            traces[b].append((gens[b], fes[b], best[b], now))
            if best[b] <= p.target:
                hit_fes[b], ends[b], stopped[b] = fes[b], now, "target"
            elif fes[b] >= p.max_fes:
                ends[b], stopped[b] = now, "budget"

        with self.batch_context():
            t0 = time.perf_counter()
            initial = self.initialize_trials()
            now = time.perf_counter() - t0
            for b in range(B):
                best[b] = float(initial[b])
                record(b, now)
            while True:
                active = [b for b in range(B) if stopped[b] is None]
                if not active:
                    break
                if time.perf_counter() - t0 >= deadline:
                    for b in active:
                        stopped[b] = "time"
                    break
                out = self.advance_trials({b: min(per_step, p.max_fes - fes[b]) for b in active})
                now = time.perf_counter() - t0
                for b in active:
                    used, value = out[b]
                    gens[b] += 1
                    fes[b] += int(used)
                    best[b] = float(value)
                    record(b, now)
            best_x = self.final_vectors(B)
            wall = time.perf_counter() - t0
        self.teardown()
        return [TrialEnd(best[b], best_x[b], fes[b], gens[b], points_trace(traces[b]), stopped[b], hit_fes[b],
                         ends[b]) for b in range(B)], wall
