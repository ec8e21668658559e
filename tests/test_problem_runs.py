"""Algorithms on problems that are not benchmark functions (Kromer et al.): the DE implementations
that call a problem's evaluators run a LOP and a scheduling instance with one trajectory per seed;
those that fuse a function's formula into their kernels refuse with a message naming the others.
Small instances built from matrices, so nothing here needs the instance files."""

import json

import numpy as np
import pytest

from gpude.core.errors import InvalidInputError
from gpude.implementations import registry
from gpude.problems import LinearOrdering, TaskScheduling
from gpude.run.rows import trial_row
from gpude.run.trial import make_runner

RNG = np.random.default_rng(7)
LOP = LinearOrdering.from_matrix(RNG.integers(0, 50, (9, 9)), name="lop9")
ETC = TaskScheduling.from_matrix(RNG.uniform(1, 100, (20, 4)), name="etc20x4")
NP, SEED, MAX_FES = 6, 3, 6 * 5
DE = [e.implementation for e in registry.entries() if e.algorithm == "de"]
GENERIC = [i for i in DE if not registry.get("de", i).load(check_device=False).needs_program]
FUSED = [i for i in DE if i not in GENERIC]


def run(impl, problem, **kw):
    runner = make_runner("de", impl, problem, problem.dim, NP, kw.pop("max_fes", MAX_FES), **kw)
    return runner, runner.run(SEED)


def test_the_generic_implementations_are_the_cpu_ones_and_many_threaded():
    assert GENERIC == ["sequential", "high_level", "master_slave", "many_threaded"]


@pytest.mark.parametrize("problem", [LOP, ETC], ids=["lop", "etc"])
@pytest.mark.parametrize("impl", GENERIC[1:])
def test_same_trajectory_as_sequential(impl, problem):
    _, ref = run("sequential", problem)
    _, r = run(impl, problem, **({"workers": 2} if impl == "master_slave" else {}))
    np.testing.assert_array_equal(r.trace["best_error"], ref.trace["best_error"])
    np.testing.assert_array_equal(r.best_x, ref.best_x)
    assert r.fes_used == MAX_FES and r.generations == 4


def test_lop_error_is_the_optimum_minus_the_ordering_value_and_rows_carry_the_solution():
    _, r = run("sequential", LOP)
    f = LOP.value(LOP.decode(r.best_x))
    assert r.best_error == LOP.optimum_value - f >= 0
    row = trial_row(r, 0, 0.0)
    solution = json.loads(row["solution"])
    assert solution["objective"] == f and solution["error_percent"] == pytest.approx(
        100 * (LOP.optimum_value - f) / LOP.optimum_value)
    assert row["distance_to_optimum"] is None  # many key vectors give the same ordering


def test_scheduling_rows_report_makespan_and_flowtime_beside_fit():
    _, r = run("sequential", ETC)
    solution = json.loads(trial_row(r, 0, 0.0)["solution"])
    fit, span, flow = (float(v[0]) for v in ETC.parts(r.best_x))
    assert solution == pytest.approx({"fit": fit, "makespan": span, "flowtime": flow})
    assert r.best_error == pytest.approx(fit) and fit == pytest.approx(0.75 * span + 0.25 * flow / 4)
    assert span >= ETC.etc.min(axis=1).sum() / 4  # no schedule beats a perfect split of the fastest times


@pytest.mark.cudasim
def test_many_threaded_batches_trials_as_it_runs_them_alone():
    runner = make_runner("de", "many_threaded", ETC, ETC.dim, NP, MAX_FES, trials_per_launch=2)
    a, b = runner.run_batch([SEED, SEED + 1])
    alone = make_runner("de", "many_threaded", ETC, ETC.dim, NP, MAX_FES)
    for r, seed in ((a, SEED), (b, SEED + 1)):
        np.testing.assert_array_equal(r.trace["best_error"], alone.run(seed).trace["best_error"])


@pytest.mark.cudasim
@pytest.mark.parametrize("problem", [LOP, ETC], ids=["lop", "etc"])
def test_many_threaded_replayed_as_a_graph_follows_sequential(problem):
    # the problem's own evaluation kernel inside the replayed generations (simulator: one by one)
    _, ref = run("sequential", problem)
    _, r = run("many_threaded", problem, graph_generations=2)
    np.testing.assert_array_equal(r.trace["best_error"], ref.trace["best_error"])
    assert r.info["options"]["graph_generations"] == 2


@pytest.mark.cudasim
def test_many_threaded_strides_when_d_exceeds_a_block():
    from gpude.implementations import many_threaded

    saved = many_threaded.MAX_THREADS
    many_threaded.MAX_THREADS = 32  # 40 tasks: a block of 32 threads covers D = 40 in two strides
    try:
        problem = TaskScheduling.from_matrix(RNG.uniform(1, 9, (40, 3)), name="etc40x3")
        _, r = run("many_threaded", problem)
    finally:
        many_threaded.MAX_THREADS = saved
    _, ref = run("sequential", problem)
    np.testing.assert_array_equal(r.trace["best_error"], ref.trace["best_error"])


@pytest.mark.parametrize("impl", FUSED)
def test_fused_implementations_refuse_a_problem_and_name_the_others(impl):
    with pytest.raises(InvalidInputError,
                       match="cannot run lop9.*de/sequential, de/high_level, de/master_slave, de/many_threaded"):
        make_runner("de", impl, LOP, LOP.dim, NP, MAX_FES)


def test_bad_matrices_are_refused():
    with pytest.raises(InvalidInputError, match="square integer matrix"):
        LinearOrdering.from_matrix(np.ones((3, 4), int))
    with pytest.raises(InvalidInputError, match="positive tasks x machines"):
        TaskScheduling.from_matrix(-np.ones((3, 2)))
    with pytest.raises(InvalidInputError, match="has dimension 9, not 10"):
        make_runner("de", "sequential", LOP, 10, NP, MAX_FES)


@pytest.mark.parametrize("algorithm,impl", [(e.algorithm, e.implementation) for e in registry.entries()
                                            if not e.load(check_device=False).needs_program and e.device == "cpu"])
def test_every_evaluator_implementation_on_the_cpu_runs_a_large_scale_function(algorithm, impl):
    # L01 has no program: those that call evaluators must run it (masw for Lastra et al., DE, PSO, SS)
    params = {"masw": {"ls_intensity": 2, "offspring": 2}, "ss": {"ref_best": 3, "ref_diverse": 1, "ls_steps": 2}}
    r = make_runner(algorithm, impl, "L01", 20, 6, 60, **params.get(algorithm, {}),
                    **({"workers": 1} if impl == "master_slave" else {})).run(SEED)
    assert r.fes_used == 60 and np.isfinite(r.best_error)


@pytest.mark.cudasim
def test_many_threaded_on_a_streaming_function_follows_sequential():
    _, ref = run("sequential", __import__("gpude").functions.get_function("L01", 20), max_fes=4 * NP)
    _, r = run("many_threaded", __import__("gpude").functions.get_function("L01", 20), max_fes=4 * NP)
    # the streaming evaluator sums in another order than the CPU's: equal to rounding
    np.testing.assert_allclose(r.trace["best_error"], ref.trace["best_error"], rtol=1e-12)


@pytest.mark.cudasim
def test_masw_on_the_gpu_runs_a_lop_as_on_the_cpu():
    # masw/gpu asks its evaluator for max_rows (a sizing hint of the streaming evaluators)
    kw = dict(ls_intensity=2, offspring=2)
    a = make_runner("masw", "sequential", LOP, LOP.dim, NP, 30, **kw).run(SEED)
    b = make_runner("masw", "gpu", LOP, LOP.dim, NP, 30, **kw).run(SEED)
    assert a.fes_used == b.fes_used == 30
    np.testing.assert_array_equal(a.trace["best_error"], b.trace["best_error"])
