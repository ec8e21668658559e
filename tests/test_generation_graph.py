"""all_gpu's and many_threaded's generations replayed as CUDA graphs (``graph_generations``): the same kernels on the
same generations, so every run is the run of generations launched one by one; a batch's trials stop
at their own targets inside a replay; a time budget's growing trace re-captures the graph. On the
simulator a replay enqueues the graph's launches one by one (the same arguments, the same advance
of the base generation); on a GPU the graph is captured, which the last test checks there."""

import itertools
import os
from types import SimpleNamespace

import numpy as np
import pytest

from gpude.core.errors import InvalidInputError
from gpude.run.trial import make_runner

FUNCTION, DIM, NP = "Q04", 10, 6
SEEDS = [3, 11, 12]


GRAPHED = ["all_gpu", "many_threaded"]


def runner(max_fes, span=1, implementation="all_gpu", **kw):
    return make_runner("de", implementation, FUNCTION, DIM, NP, max_fes, graph_generations=span, **kw)


def assert_same_run(a, b):
    assert (a.best_error, a.fes_used, a.generations, a.hit_target, a.fes_to_target, a.stopped_by) == \
        (b.best_error, b.fes_used, b.generations, b.hit_target, b.fes_to_target, b.stopped_by)
    np.testing.assert_array_equal(a.best_x, b.best_x)
    np.testing.assert_array_equal(a.trace["best_error"], b.trace["best_error"])


def test_replayed_generations_make_the_runs_of_single_launches():
    # (many_threaded's replays: test_problem_runs.py, on a LOP and an ETC instance)
    # 6 full generations and a partial one: three replays of 2 cover generations 1-6, then the
    # partial 7th is launched on its own (with its offset from the advanced base)
    max_fes = NP * 7 + 4
    one = runner(max_fes).run_batch(SEEDS[:2])
    graphed_runner = runner(max_fes, span=2)
    graphed = graphed_runner.run_batch(SEEDS[:2])
    for a, b in zip(graphed, one):
        assert_same_run(a, b)
    assert graphed[0].generations == 7 and graphed[0].fes_used == max_fes
    assert graphed_runner.graph.base == 6  # three replays
    assert graphed[0].info["options"]["graph_generations"] == 2
    # the simulator replays one by one; a GPU captures the graph
    assert graphed[0].info["options"]["graph_captured"] is (os.environ.get("NUMBA_ENABLE_CUDASIM") != "1")
    # a second batch on the same runner starts again from base 0
    again = graphed_runner.run_batch(SEEDS[:2])
    for a, b in zip(again, one):
        assert_same_run(a, b)


@pytest.mark.parametrize("implementation", GRAPHED)
def test_each_trial_stops_at_its_own_target_inside_a_replay(implementation):
    max_fes = NP * 6  # one replay of 4 generations, then the 5th on its own
    full = runner(max_fes, implementation=implementation).run_batch(SEEDS)
    finals = sorted(r.best_error for r in full)
    target = (finals[1] + finals[2]) / 2
    graphed = runner(max_fes, span=4, implementation=implementation, target=target).run_batch(SEEDS)
    single = runner(max_fes, implementation=implementation, target=target).run_batch(SEEDS)
    assert sorted(r.hit_target for r in graphed) == [False, True, True]
    for a, b in zip(graphed, single):
        assert_same_run(a, b)


def test_a_time_budget_with_a_growing_trace_recaptures_and_keeps_the_trajectory(monkeypatch):
    from gpude.implementations import device_loop, generation_graph

    monkeypatch.setattr(device_loop, "TRACE_CHUNK", 1)
    invalidated = []
    original = generation_graph.GenerationGraph.invalidate
    monkeypatch.setattr(generation_graph.GenerationGraph, "invalidate",
                        lambda self: invalidated.append(self.base) or original(self))
    r = runner(10**12, span=2, target=0.0, max_time_s=0.1)
    clock = itertools.count()  # 10 ms per reading of the loop's clock: a few generations
    monkeypatch.setattr(device_loop, "time", SimpleNamespace(perf_counter=lambda: next(clock) * 0.01))
    timed = r.run(5)
    monkeypatch.undo()
    assert timed.stopped_by == "time" and timed.generations >= 4 and timed.generations % 2 == 0
    assert invalidated  # the trace grew under the graph: captured again
    fixed = runner(timed.fes_used, target=0.0).run(5)
    assert fixed.generations == timed.generations
    np.testing.assert_array_equal(timed.trace["best_error"], fixed.trace["best_error"])


@pytest.mark.parametrize("bad", [0, -2, 1.5, "4"])
def test_graph_generations_is_checked(bad):
    with pytest.raises(InvalidInputError, match="graph_generations must be a positive integer"):
        runner(NP * 3, span=bad)


@pytest.mark.parametrize("implementation", GRAPHED)
def test_graphs_of_32_generations_are_the_default(implementation):
    # (timed on an H100: docs/implementations.md; a replay makes the run of single launches: above)
    r = make_runner("de", implementation, FUNCTION, DIM, NP, NP * 3)
    assert r.graph_generations == 32
    assert r.run(SEEDS[0]).info["options"]["graph_generations"] == 32


def test_only_the_implementations_with_graphs_take_graph_generations():
    with pytest.raises(InvalidInputError, match="fpde takes no option graph_generations"):
        make_runner("de", "fpde", FUNCTION, DIM, NP, NP * 3, graph_generations=4)


@pytest.mark.skipif(os.environ.get("NUMBA_ENABLE_CUDASIM") == "1", reason="a real GPU captures the graph")
@pytest.mark.parametrize("implementation", GRAPHED)
def test_on_a_gpu_the_generations_are_captured_as_a_graph(implementation):
    r = runner(NP * 40, span=8, implementation=implementation)
    graphed = r.run_batch(SEEDS[:2])
    assert r.graph.captured, r.graph.fallback_reason
    assert graphed[0].info["options"]["graph_captured"] is True
    for a, b in zip(graphed, runner(NP * 40, implementation=implementation).run_batch(SEEDS[:2])):
        assert_same_run(a, b)
