"""One battery of checks over every registered (algorithm, implementation) (scikit-learn's common
tests), and the equivalence of an algorithm's implementations: one trajectory per seed, the same
as the algorithm's ``sequential``.

GPU implementations run on numba's CUDA simulator here (tiny sizes); the same checks
run on a real GPU with NUMBA_ENABLE_CUDASIM=0.
"""

import os
import subprocess
import sys

import numpy as np
import pytest

from gpude import run_trial
from gpude.algorithms.de import build_de_ops
from gpude.core.errors import InvalidInputError
from gpude.core.rng import seed_key
from gpude.implementations import registry
from gpude.run.trial import make_runner

IMPLEMENTATIONS = [e.implementation for e in registry.entries() if e.algorithm == "de"]
ENTRIES = [(e.algorithm, e.implementation) for e in registry.entries()]
FUNCTION, DIM, NP, SEED = "Q04", 10, 6, 11
MAX_FES = 27  # initial 6 + 3 generations of 6 + a last generation of only 3 (budget not a multiple of NP)


# cudaDE's 240 blocks of 64 threads are 15,360 Python threads per launch on the simulator; its
# blocks stride over the individuals, so 3 blocks make the same run (tested below)
SIMULATOR_OPTIONS = {"ide": {"quiet": True}, "cudade": {"blocks": 3}}

#: What the battery needs to know of each algorithm: parameters that make a tiny run (scatter
#: search: a reference set of 4, 2 Solis-Wets steps), whether a generation costs NP evaluations,
#: bound modes besides the default with parameters that push solutions outside the box, and bad
#: parameters with the words of their error.
ALGORITHMS = {
    "de": dict(params={}, np_per_generation=True,
               other_bounds={"clip": {"F": 2.0}, "midpoint": {"F": 2.0}},
               bad=[({"F": 0.0}, "F must"), ({"CR": 1.01}, "CR must")]),
    "pso": dict(params={}, np_per_generation=True,
                other_bounds={"reflect": {"vmax": 0.0, "w": 1.2}},
                bad=[({"c1": -1.0}, "c1 must"), ({"topology": "star"}, "unknown topology")]),
    "ss": dict(params={"ref_best": 3, "ref_diverse": 1, "ls_steps": 2}, np_per_generation=False,
               other_bounds={}, bad=[({"lam": 0.6}, "lam must"), ({"ls_steps": -1}, "ls_steps must")]),
    "masw": dict(params={"ls_intensity": 2, "offspring": 2}, np_per_generation=False, other_bounds={},
                 bad=[({"ls_share": 1.0}, "ls_share"), ({"nam": 0}, "nam must")]),
}
ALGORITHMS["jde"] = ALGORITHMS["de"]
# jSO and L-SHADE: NP_init 6 shrinks towards 4, so a generation's FEs vary; midpoint repair only
ALGORITHMS["jso"] = dict(params={}, np_per_generation=False, other_bounds={},
                         bad=[({"np_min": 3}, "np_min must"), ({"p_min": 0.5}, "p_min and p_max")])
ALGORITHMS["lshade"] = ALGORITHMS["jso"]
OTHER_BOUNDS = [(a, i, mode) for a, i in ENTRIES for mode in ALGORITHMS[a]["other_bounds"]]
BAD_PARAMETERS = [(a, i, kw, msg) for a, i in ENTRIES
                  for kw, msg in [({"popsize": 2}, "popsize"), ({"bounds": "bounce"}, "bound mode"),
                                  *ALGORITHMS[a]["bad"]]]


def runner_for(impl, algorithm="de", **kw):
    kw = {"max_fes": MAX_FES, **ALGORITHMS[algorithm]["params"], **kw}
    options = dict(SIMULATOR_OPTIONS.get(impl, {}))
    return make_runner(algorithm, impl, FUNCTION, DIM, NP, kw.pop("max_fes"), **kw, **options)


_REFERENCES = {}


def reference_of(algorithm):
    """The algorithm's ``sequential`` run: what every implementation of it must reproduce."""
    if algorithm not in _REFERENCES:
        runner = runner_for("sequential", algorithm)
        _REFERENCES[algorithm] = (runner.run(SEED), runner.population())
    return _REFERENCES[algorithm]


@pytest.fixture(scope="module")
def reference():
    return reference_of("de")


@pytest.fixture(scope="module", params=[pytest.param(e, id=f"{e[0]}/{e[1]}", marks=pytest.mark.xdist_group(
    f"implementations-{e[0]}-{e[1]}")) for e in ENTRIES])
def runs(request):
    # (the tests of one entry on one worker (--dist loadgroup): its compile and runs made once, not on each)
    algorithm, impl = request.param
    runner = runner_for(impl, algorithm)
    first = runner.run(SEED)
    population = runner.population()
    second = runner.run(SEED)
    return request.param, runner, first, population, second


def test_registry_lists_the_models_of_the_studies():
    # the papers' models, each on its device (a new implementation joins without a change here)
    devices = {e.implementation: e.device for e in registry.entries() if e.algorithm == "de"}
    studies = {"sequential": "cpu", "high_level": "cpu", "master_slave": "cpu", "naive_gpu": "gpu", "all_gpu": "gpu",
               "ide": "gpu", "cudade": "gpu", "fpde": "gpu", "two_kernel": "gpu", "many_threaded": "gpu"}
    assert {i: devices.get(i) for i in studies} == studies
    assert set(devices.values()) <= {"cpu", "gpu"} and len(IMPLEMENTATIONS) == len(set(IMPLEMENTATIONS))
    # every algorithm has its CPU reference, and the battery knows every algorithm
    for algorithm in {a for a, _ in ENTRIES}:
        assert registry.get(algorithm, "sequential").device == "cpu"
        assert algorithm in ALGORITHMS


def test_budget_is_respected_exactly(runs):
    (algorithm, _), _, r, _, _ = runs
    fes = r.trace["fes"]
    assert r.fes_used == MAX_FES and fes[-1] == MAX_FES and fes[0] == NP and np.all(np.diff(fes) > 0)
    assert r.stopped_by == "budget" and r.generations == len(fes) - 1
    if ALGORITHMS[algorithm]["np_per_generation"]:
        assert r.generations == 4 and list(fes) == [6, 12, 18, 24, 27]
    assert not r.hit_target and r.fes_to_target is None and r.time_to_target_s is None


def test_same_seed_same_run(runs):
    _, _, a, _, b = runs
    assert a.best_error == b.best_error
    np.testing.assert_array_equal(a.best_x, b.best_x)
    np.testing.assert_array_equal(a.trace["best_error"], b.trace["best_error"])


def test_other_seed_other_run(runs):
    impl, runner, a, _, _ = runs
    assert runner.run(SEED + 1).best_error != a.best_error


def test_trace_is_monotone_and_ends_at_the_best(runs):
    _, _, r, population, _ = runs
    best = r.trace["best_error"]
    assert np.all(np.diff(best) <= 0)
    assert best[-1] == r.best_error == population[1].min()


def test_population_stays_in_bounds(runs):
    _, _, r, population, _ = runs
    pop = population[0]
    assert pop.min() >= -100.0 and pop.max() <= 100.0
    assert np.all(np.abs(r.best_x) <= 100.0)


def test_error_of_best_x_is_the_reported_best(runs):
    from gpude.functions import get_function

    _, _, r, _, _ = runs
    assert get_function(FUNCTION, DIM).evaluate(r.best_x) == pytest.approx(r.best_error, rel=1e-9, abs=1e-9)


def test_same_trajectory_as_sequential(runs):
    (algorithm, impl), _, r, population, _ = runs
    ref, ref_population = reference_of(algorithm)
    want = ref.trace["best_error"]
    rel = np.abs(r.trace["best_error"] - want) / np.maximum(np.abs(want), 1.0)
    assert rel.max() <= 1e-9, (impl, r.trace["best_error"], want)
    if impl == "master_slave":  # same evaluator code on another thread: bit for bit
        np.testing.assert_array_equal(population[0], ref_population[0])
    else:
        np.testing.assert_allclose(population[0], ref_population[0], rtol=1e-12, atol=0)


def test_stops_at_the_target(runs):
    (algorithm, impl), _, _, _, _ = runs
    full = runner_for("sequential", algorithm, max_fes=40 * NP).run(SEED)
    best, reference_fes = full.trace["best_error"], full.trace["fes"]
    g = int(np.flatnonzero(np.diff(best) < 0)[0]) + 1  # the first generation that improves the best
    # reached exactly there; the margin absorbs CPU/GPU rounding of the evaluation (last bits)
    target = float(best[g]) * (1 + 1e-12)
    assert target < best[g - 1]
    r = runner_for(impl, algorithm, target=target, max_fes=40 * NP).run(SEED)
    assert r.hit_target and r.generations == g and r.stopped_by == "target"
    assert r.fes_used == r.fes_to_target == reference_fes[g]
    assert 0 <= r.time_to_target_s <= r.wall_time_s
    assert r.best_error <= target


@pytest.mark.parametrize("algorithm,impl,bounds", OTHER_BOUNDS, ids=[f"{a}/{i}/{m}" for a, i, m in OTHER_BOUNDS])
def test_other_bound_modes_stay_in_bounds(algorithm, impl, bounds):
    push = ALGORITHMS[algorithm]["other_bounds"][bounds]  # e.g. DE's F = 2 pushes mutants outside
    runner = runner_for(impl, algorithm, bounds=bounds, max_fes=3 * NP, **push)
    r = runner.run(SEED)
    pop = runner.population()[0]
    assert pop.min() >= -100.0 and pop.max() <= 100.0 and np.all(np.abs(r.best_x) <= 100.0)


@pytest.mark.parametrize("algorithm,impl,kwargs,msg", BAD_PARAMETERS,
                         ids=[f"{a}/{i}/{next(iter(kw))}" for a, i, kw, _ in BAD_PARAMETERS])
def test_bad_parameters_are_rejected_before_running(algorithm, impl, kwargs, msg):
    args = {"algorithm": algorithm, "implementation": impl, "function": FUNCTION, "dim": DIM,
            "popsize": NP, "max_fes": MAX_FES, **ALGORITHMS[algorithm]["params"], **kwargs}
    with pytest.raises(InvalidInputError, match=msg):
        make_runner(**args)


@pytest.mark.parametrize("impl", ["all_gpu", "ide"])
def test_gpu_initial_population_and_indices_bit_for_bit(impl, reference):
    runner = runner_for(impl, max_fes=2 * NP)  # initialisation and one generation
    runner.run(SEED)
    ops = build_de_ops(np.float64, "cpu")
    key = seed_key(SEED)
    # all_gpu: the matrix of the last generation; ide: bank 0, slot 0 holds generation 1
    # (trial 0 of a batch of one)
    idx = runner.d_idx.copy_to_host()[0] if impl == "all_gpu" else runner.d_idx[0].copy_to_host()[0, 0]
    want = np.array([ops.pick(key, 1, i, NP, DIM) for i in range(NP)])
    np.testing.assert_array_equal(idx, want)
    init = runner_for(impl, max_fes=NP)
    init.run(SEED)
    seq = runner_for("sequential", max_fes=NP)
    seq.run(SEED)
    np.testing.assert_array_equal(init.population()[0], seq.population()[0])


def test_ide_index_batches_cover_long_runs():
    # more generations than two banks of P_BATCH: indices keep coming from the right bank
    from gpude.implementations.ide import P_BATCH

    kw = dict(function=FUNCTION, dim=DIM, popsize=NP, max_fes=NP * (2 * P_BATCH + 3), seed=SEED)
    ide = run_trial(implementation="ide", quiet=True, **kw)
    seq = run_trial(implementation="sequential", **kw)
    assert ide.generations == seq.generations == 2 * P_BATCH + 2
    np.testing.assert_allclose(ide.trace["best_error"], seq.trace["best_error"], rtol=1e-9)


def test_cudade_results_do_not_depend_on_its_grid():
    # 2 blocks striding over 6 individuals, or 7 blocks (one idle): the same run
    base = dict(algorithm="de", implementation="cudade", function=FUNCTION, dim=DIM, popsize=NP,
                max_fes=3 * NP, seed=SEED)
    a, b = run_trial(blocks=2, **base), run_trial(blocks=7, **base)
    assert a.best_error == b.best_error
    np.testing.assert_array_equal(a.trace["best_error"], b.trace["best_error"])
    with pytest.raises(InvalidInputError, match="blocks must be a positive integer"):
        run_trial(blocks=0, **base)


def test_ide_results_do_not_depend_on_members_per_block():
    base = dict(algorithm="de", implementation="ide", function=FUNCTION, dim=DIM, popsize=NP,
                max_fes=4 * NP, seed=SEED, quiet=True)
    one = run_trial(members_per_block=1, **base)
    auto = run_trial(**base)
    assert one.best_error == auto.best_error
    np.testing.assert_array_equal(one.trace["best_error"], auto.trace["best_error"])


def test_sequential_and_master_slave_agree_bit_for_bit_on_a_longer_run():
    kw = dict(function="F10", dim=10, popsize=20, max_fes=3000, seed=5)
    a = run_trial(implementation="sequential", **kw)
    b = run_trial(implementation="master_slave", workers=2, **kw)
    np.testing.assert_array_equal(a.trace["best_error"], b.trace["best_error"])
    np.testing.assert_array_equal(a.best_x, b.best_x)


def test_master_slave_rejects_bad_worker_counts():
    import numba

    kw = dict(implementation="master_slave", function="Q01", dim=10, popsize=8, max_fes=16)
    with pytest.raises(InvalidInputError, match="workers must be a positive integer"):
        run_trial(workers=0, **kw)
    with pytest.raises(InvalidInputError, match="exceeds numba's thread pool"):
        run_trial(workers=numba.config.NUMBA_NUM_THREADS + 1, **kw)


def test_options_an_implementation_does_not_take_are_rejected():
    with pytest.raises(InvalidInputError, match="sequential takes no option workers"):
        run_trial(implementation="sequential", function="Q01", dim=10, popsize=8, max_fes=16, workers=2)


def test_unknown_names_list_what_exists():
    with pytest.raises(registry.UnknownImplementationError, match="registered: sequential, high_level, master_slave"):
        registry.get("de", "turbo")
    with pytest.raises(registry.UnknownImplementationError, match="unknown algorithm 'ga'"):
        registry.get("ga", "sequential")


def test_gpu_implementation_without_gpu_says_so():
    code = ("from gpude import run_trial; run_trial(implementation='ide', function='Q01', dim=10, "
            "popsize=8, max_fes=16)")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "NUMBA_ENABLE_CUDASIM": "0"})
    has_gpu = subprocess.run([sys.executable, "-c", "from numba import cuda; print(cuda.is_available())"],
                             capture_output=True, text=True,
                             env={**os.environ, "NUMBA_ENABLE_CUDASIM": "0"}).stdout.strip() == "True"
    if has_gpu:
        assert res.returncode == 0, res.stderr
    else:
        assert res.returncode != 0 and "GPUUnavailableError" in res.stderr
        assert "NUMBA_ENABLE_CUDASIM=1" in res.stderr


@pytest.mark.parametrize("chunks_per_worker", [1, 3, 64])
@pytest.mark.parametrize("variant", [{}, dict(mutation="current_to_best1", crossover="exp", bounds="midpoint")],
                         ids=["rand1-bin", "current_to_best1-exp"])
def test_master_slave_pipeline_matches_sequential_for_any_chunking(monkeypatch, chunks_per_worker, variant):
    from gpude.implementations import master_slave

    monkeypatch.setattr(master_slave, "CHUNKS_PER_WORKER", chunks_per_worker)
    kw = dict(function="F05", dim=10, popsize=13, max_fes=13 * 6 + 5, seed=2, **variant)  # a last partial generation
    a = run_trial(implementation="sequential", **kw)
    runner = make_runner("de", "master_slave", kw.pop("function"), kw.pop("dim"), kw.pop("popsize"),
                         kw.pop("max_fes"), workers=2, **{k: v for k, v in kw.items() if k != "seed"})
    assert runner.pipelined
    b = runner.run(kw["seed"])
    assert b.fes_used == a.fes_used == 83
    np.testing.assert_array_equal(a.trace["best_error"], b.trace["best_error"])
    np.testing.assert_array_equal(a.best_x, b.best_x)


def test_master_slave_without_a_row_kernel_builds_then_evaluates():
    from gpude.problems.objective import UserObjective

    sphere = UserObjective(lambda x: (x * x).sum(), [(-2.0, 2.0)] * 4, name="sphere4")
    kw = dict(dim=4, popsize=8, max_fes=80)
    runner = make_runner("de", "master_slave", sphere, workers=2, **kw)
    assert not runner.pipelined
    b = runner.run(1)
    a = run_trial(implementation="sequential", function=sphere, seed=1, **kw)
    np.testing.assert_array_equal(a.trace["best_error"], b.trace["best_error"])
