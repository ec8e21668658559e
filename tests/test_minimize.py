"""gpude.minimize: your own objective with the registered algorithms and implementations, on the CPU
and (simulator) the GPU, with scipy's calling convention and clear errors."""

import numpy as np
import pytest

import gpude
from gpude.core.errors import InvalidInputError
from gpude.problems.objective import ObjectiveError, UserObjective


def shifted(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += (x[i] - i) ** 2
    return s


BOUNDS = [(-1, 1), (0, 2), (1, 5)]


def test_minimum_is_found_in_the_bounds_and_the_seed_fixes_the_run():
    r = gpude.minimize(shifted, BOUNDS, max_fes=3000, seed=2, F=0.7, CR=0.9)
    assert r.fun < 1e-8 and np.allclose(r.x, [0, 1, 2], atol=1e-3)
    assert r.nfev == 3000 and r.success and r.message == "the FE budget is spent"
    assert all(lo <= v <= hi for v, (lo, hi) in zip(r.x, BOUNDS))
    again = gpude.minimize(shifted, BOUNDS, max_fes=3000, seed=2, F=0.7, CR=0.9)
    assert again.fun == r.fun and np.array_equal(again.x, r.x)
    assert gpude.minimize(shifted, BOUNDS, max_fes=3000, seed=3, F=0.7, CR=0.9).fun != r.fun


def test_unequal_bounds_search_the_unit_cube_and_equal_bounds_the_box_itself():
    p = UserObjective(shifted, BOUNDS)
    assert p.scaled and (p.lower, p.upper) == (0.0, 1.0)
    assert np.allclose(p.to_x([0.5, 0.5, 0.5]), [0, 1, 3])
    assert p.evaluate(np.array([0.5, 0.5, 0.5])) == pytest.approx(0 + 0 + 1)
    q = UserObjective(shifted, [(-5, 5)] * 3)
    assert not q.scaled and (q.lower, q.upper) == (-5.0, 5.0)


@pytest.mark.parametrize("algorithm,implementation,options", [
    ("de", "master_slave", {"workers": 2}), ("jde", "sequential", {}), ("pso", "sequential", {}),
    ("ss", "sequential", {"ref_best": 3, "ref_diverse": 1, "ls_steps": 2}),
    ("masw", "sequential", {"ls_intensity": 2, "offspring": 2})])
def test_other_algorithms_and_implementations_run_it(algorithm, implementation, options):
    r = gpude.minimize(shifted, BOUNDS, algorithm=algorithm, implementation=implementation, popsize=12,
                       max_fes=600, seed=1, **options)
    assert np.isfinite(r.fun) and r.nfev <= 600 and r.fun <= shifted(np.array([0.0, 0.0, 0.0]))


def test_target_stops_the_run():
    r = gpude.minimize(shifted, BOUNDS, max_fes=20_000, seed=2, F=0.7, CR=0.9, target=1e-4)
    assert r.message == "the target was reached" and r.fun <= 1e-4 and r.nfev < 20_000


@pytest.mark.cudasim
def test_many_threaded_on_the_gpu_makes_the_cpu_run():
    a = gpude.minimize(shifted, BOUNDS, max_fes=60, popsize=6, seed=2)
    b = gpude.minimize(shifted, BOUNDS, implementation="many_threaded", max_fes=60, popsize=6, seed=2)
    np.testing.assert_array_equal(a.trial.trace["best_error"], b.trial.trace["best_error"])
    np.testing.assert_array_equal(a.x, b.x)


def nan_above_half(x):
    return np.nan if x[0] > 0.5 else 1.0


def test_nan_from_the_objective_names_the_point():
    with pytest.raises(ObjectiveError, match=r"nan_above_half returned nan at x = \[0\.\d+"):
        gpude.minimize(nan_above_half, [(0, 1)] * 2)


def minus_inf_above_half(x):
    return -np.inf if x[0] > 0.5 else x[0] * x[0]


def rejects_above_half(x):  # +inf: a point to reject (a penalty), not an error
    return np.inf if x[0] > 0.5 else (x[0] - 0.4) ** 2 + x[1] * x[1]


def test_minus_inf_from_the_objective_names_the_point_and_plus_inf_rejects_it():
    with pytest.raises(ObjectiveError, match=r"minus_inf_above_half returned -inf at x = \[0\.\d+.*return a finite "
                                             r"number \(or \+inf for a point to reject\)"):
        gpude.minimize(minus_inf_above_half, [(0, 1)] * 2)
    r = gpude.minimize(rejects_above_half, [(0, 1)] * 2, max_fes=3000, seed=2)
    assert np.isfinite(r.fun) and r.x[0] <= 0.5 and r.fun < 1e-3


@pytest.mark.cudasim
def test_nan_from_the_objective_on_the_gpu_is_counted_and_reported():
    with pytest.raises(ObjectiveError, match="returned NaN or -inf at .* point.* on the GPU"):
        gpude.minimize(nan_above_half, [(0, 1)] * 2, implementation="many_threaded", popsize=4, max_fes=40)


def uses_a_dict(x):
    d = {}
    return d["a"]


def test_an_objective_numba_cannot_compile_says_why():
    with pytest.raises(ObjectiveError, match="numba cannot compile uses_a_dict for the CPU: .*nopython"):
        gpude.minimize(uses_a_dict, [(0, 1)] * 2)


def test_fused_implementations_and_bad_input_are_refused_clearly():
    with pytest.raises(InvalidInputError, match="bounds must be a sequence of .low, high. pairs"):
        gpude.minimize(shifted, [1, 2, 3])
    with pytest.raises(InvalidInputError, match=r"bounds\[1\] = \(2, 2\): each pair must be finite with low < high"):
        gpude.minimize(shifted, [(0, 1), (2, 2)])
    with pytest.raises(InvalidInputError, match="the objective must be callable"):
        gpude.minimize(3.0, BOUNDS)
    with pytest.raises(InvalidInputError, match="target must be a finite number >= 0"):
        gpude.minimize(shifted, BOUNDS, target=-1.0)
    with pytest.raises(InvalidInputError, match="de/two_kernel fuses a benchmark function's formula"):
        gpude.minimize(shifted, BOUNDS, implementation="two_kernel", max_fes=100)
