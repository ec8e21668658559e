"""The wall-clock budget (``max_time_s``): a first-class stop beside ``max_fes`` and the target,
in the host's loop (CPU implementations) and in the GPU device loop (run here on the simulator)."""

import numpy as np
import pytest

from gpude.algorithms.de import DEParams
from gpude.core.errors import InvalidInputError
from gpude.run.trial import make_runner

FUNCTION, DIM, NP = "N09", 6, 6  # Nashed f9 (Rastrigin): any D
HUGE = 10**9  # an FE budget that never ends a run here
#: single launches for the implementations with graphs: a replay of 32 generations (their default)
#: sees the clock once per replay, and 32 generations are long on the simulator (graphs under a time
#: budget: tests/test_generation_graph.py)
PLAIN = {"all_gpu": {"graph_generations": 1}}


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf"), True, "1"])
def test_bad_time_budget_is_rejected(bad):
    with pytest.raises(InvalidInputError, match="max_time_s must be a number of seconds > 0"):
        DEParams(popsize=NP, max_fes=100, max_time_s=bad)


@pytest.mark.parametrize("implementation,max_fes", [("sequential", HUGE), ("all_gpu", HUGE)])
def test_time_budget_ends_the_run_and_records_what_it_bought(implementation, max_fes):
    budget = 0.3
    runner = make_runner("de", implementation, FUNCTION, DIM, NP, max_fes, target=0.0, max_time_s=budget,
                         **PLAIN.get(implementation, {}))
    r = runner.run(5)
    assert r.stopped_by == "time" and not r.hit_target
    assert r.wall_time_s >= budget
    assert r.fes_used == NP * (r.generations + 1) < max_fes  # the FEs the budget bought
    times = r.trace["time_s"]
    assert np.all(np.isfinite(times)) and np.all(np.diff(times) >= 0)
    assert times[-1] <= r.wall_time_s + 1e-9
    # the trajectory is the seed's: a run with the FE budget it reached ends on the same error
    fixed = make_runner("de", implementation, FUNCTION, DIM, NP, r.fes_used, target=0.0,
                        **PLAIN.get(implementation, {})).run(5)
    assert fixed.stopped_by == "budget" and fixed.best_error == r.best_error


def test_the_fe_budget_still_wins_when_it_comes_first():
    r = make_runner("de", "sequential", FUNCTION, DIM, NP, 5 * NP, max_time_s=60.0).run(5)
    assert r.stopped_by == "budget" and r.fes_used == 5 * NP


def test_a_batch_under_a_time_budget_charges_every_trial_the_time_it_ran():
    runner = make_runner("de", "all_gpu", FUNCTION, DIM, NP, HUGE, target=0.0, max_time_s=0.2,
                         trials_per_launch=2, **PLAIN["all_gpu"])
    a, b = runner.run_batch([5, 6])
    assert a.stopped_by == b.stopped_by == "time"
    assert a.wall_time_s == b.wall_time_s == a.info["batch_wall_time_s"]  # not a 1/2 share
    assert a.generations == b.generations


@pytest.mark.parametrize("algorithm,implementation", [("de", "all_gpu"), ("de", "ide"), ("pso", "gpu")])
def test_a_time_budgeted_device_run_allocates_the_trace_it_uses(monkeypatch, algorithm, implementation):
    # max_fes 10^12 only caps the run: the device trace starts at TRACE_CHUNK generations (1 here, so
    # that it grows on the simulator's few generations) and doubles on demand; 10^12 / NP generations
    # of trace (a terabyte) would not fit
    import itertools
    from types import SimpleNamespace

    from gpude.implementations import device_loop

    monkeypatch.setattr(device_loop, "TRACE_CHUNK", 1)
    runner = make_runner(algorithm, implementation, FUNCTION, DIM, NP, 10**12, target=0.0, max_time_s=0.1,
                         trials_per_launch=2, **PLAIN.get(implementation, {}))
    # the loop's clock advances 10 ms whenever it is read (about twice a generation), so the budget
    # buys the same few generations however busy the machine is
    clock = itertools.count()
    monkeypatch.setattr(device_loop, "time", SimpleNamespace(perf_counter=lambda: next(clock) * 0.01))
    timed = runner.run_batch([5, 6])
    monkeypatch.undo()
    generations = timed[0].generations
    assert timed[0].stopped_by == "time" and generations >= 3  # the trace grew: 1 -> 2 -> 4 (...)
    assert generations < runner.d_trace.shape[1] <= 2 * generations  # what it used, at most doubled
    # the same trace values as a fixed-budget run of the same seeds to the same generation
    fixed = make_runner(algorithm, implementation, FUNCTION, DIM, NP, timed[0].fes_used, target=0.0,
                        trials_per_launch=2, **PLAIN.get(implementation, {})).run_batch([5, 6])
    for t, f in zip(timed, fixed):
        assert f.stopped_by == "budget" and f.generations == t.generations
        np.testing.assert_array_equal(t.trace["best_error"], f.trace["best_error"])
        assert t.best_error == f.best_error
