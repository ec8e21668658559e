"""Solis-Wets (Realea's rules) on hand-checkable cases."""

import numpy as np
import pytest

from gpude.algorithms.solis_wets import build_sw_ops, initial_rho, sw_step


def sphere(x):
    return float(np.sum(np.asarray(x, dtype=float) ** 2))


def test_plus_success_updates_bias_and_counts():
    x, fx, b, rho, s, f, used = sw_step(sphere, [1.0], 1.0, [0.0], 0.3, 0, 2, [-0.5], -5, 5)
    assert x[0] == 0.5 and fx == 0.25 and used == 1
    assert b[0] == pytest.approx(0.4 * -0.5)  # 0.2 * 0 + 0.4 (dif + 0)
    assert (s, f, rho) == (1, 0, 0.3)  # a success resets the failures
    # second success from there: bias 0.2 b + 0.4 (dif + b)
    x, fx, b, rho, s, f, used = sw_step(sphere, x, fx, b, rho, s, f, [0.1], -5, 5)
    assert x[0] == pytest.approx(0.4) and fx == pytest.approx(0.16)
    assert b[0] == pytest.approx(0.2 * -0.2 + 0.4 * (0.1 - 0.2))
    assert s == 2


def test_minus_success_and_double_failure():
    # x + dif worse, x - dif better: accepted, bias <- bias - 0.4 (dif + bias)
    x, fx, b, rho, s, f, used = sw_step(sphere, [1.0], 1.0, [0.1], 0.3, 0, 0, [0.4], -5, 5)
    assert used == 2 and x[0] == pytest.approx(0.5) and fx == pytest.approx(0.25)
    assert b[0] == pytest.approx(0.1 - 0.4 * 0.5)
    assert (s, f) == (1, 0)
    # at the optimum both directions are worse: bias halves, failures count, successes reset
    x, fx, b, rho, s, f, used = sw_step(sphere, [0.0], 0.0, [0.2], 0.3, 4, 1, [0.3], -5, 5)
    assert used == 2 and x[0] == 0.0 and fx == 0.0
    assert b[0] == pytest.approx(0.1) and (s, f, rho) == (0, 2, 0.3)


def test_equal_is_not_better_and_budget_one_skips_the_opposite_try():
    # 1-D: |x + dif| == |x| is not strictly better -> the opposite try, which is the same point
    x, fx, b, rho, s, f, used = sw_step(sphere, [0.5], 0.25, [0.0], 1.0, 0, 0, [-1.0], -5, 5)
    assert used == 2 and fx == 0.25 and x[0] == 0.5 and f == 1
    x, fx, b, rho, s, f, used = sw_step(sphere, [0.0], 0.0, [0.0], 1.0, 0, 0, [1.0], -5, 5,
                                        budget=1)
    assert used == 1 and f == 1 and fx == 0.0


def test_rho_doubles_after_five_successes_and_halves_after_three_failures():
    x, fx, b, rho, s, f = np.array([4.0, -4.0]), 32.0, np.zeros(2), 0.5, 0, 0
    for _ in range(5):  # steps towards the optimum, all successes (bias 0 kept small)
        b = np.zeros(2)
        x, fx, b, rho, s, f, used = sw_step(sphere, x, fx, b, rho, s, f, -0.1 * np.sign(x), -5, 5)
        assert used == 1
    assert rho == 1.0 and s == 0  # doubled at the fifth success, count reset
    x, fx = np.zeros(2), 0.0
    for _ in range(3):
        x, fx, b, rho, s, f, used = sw_step(sphere, x, fx, b, rho, s, f, [0.1, 0.1], -5, 5)
    assert rho == 0.5 and f == 0  # halved at the third failure, count reset
    ops = build_sw_ops(np.float64, "cpu")
    assert ops.counts(True, 4, 0, 2.0) == (0, 0, 4.0)
    assert ops.counts(False, 3, 2, 2.0) == (0, 0, 1.0)
    assert ops.counts(False, 0, 1, 2.0) == (0, 2, 2.0)


def test_candidates_are_clipped_to_the_box():
    ops = build_sw_ops(np.float64, "cpu")
    assert ops.plus(4.0, 0.5, 1.0, -5.0, 5.0) == 5.0
    assert ops.minus(-4.0, 0.5, 1.0, -5.0, 5.0) == -5.0
    assert ops.plus(1.0, 0.5, 1.0, -5.0, 5.0) == 2.5


def test_gaussian_draws_are_standard_normal_and_reproducible():
    from gpude.core.rng import seed_key

    ops = build_sw_ops(np.float64, "cpu")
    key = seed_key(7)
    z = np.array([ops.gaussian(key, 2 * c) for c in range(20000)])
    assert abs(z.mean()) < 0.03 and abs(z.std() - 1.0) < 0.03
    assert ops.gaussian(key, 10) == ops.gaussian(key, 10)
    assert ops.dif(key, 10, 0.25) == 0.25 * ops.gaussian(key, 10)


def test_initial_rho_is_realeas_rule():
    assert initial_rho(8.0, 4, 10.0, 0.2) == 1.0  # d / D / 2
    assert initial_rho(800.0, 4, 10.0, 0.2) == 2.0  # capped at 0.2 of the width
