"""jSO and L-SHADE: the operators on hand-made values (scipy's DE tests' style), the memory update,
the population size reduction and the archive, runs, parameters, and the operators compiled for CUDA
(numba's simulator) giving the CPU's values."""

import math

import numpy as np
import pytest
from numba import cuda  # (module level: the simulator swaps the module a kernel names in its globals)

from gpude import run_trial
from gpude.algorithms.jso import (
    F_ATTEMPTS,
    FIXED_SLOTS,
    JSOParams,
    LSHADEParams,
    build_jso_ops,
    c_round,
    jso_popsize,
    lehmer,
    lshade_popsize,
    slots_per_row,
)
from gpude.core.errors import InvalidInputError
from gpude.core.rng import seed_key
from gpude.implementations.jso_sequential import build_cpu_jso

OPS = build_jso_ops(np.float64, "cpu")
KEY = seed_key(7)


def test_counter_layout_and_initial_population():
    np_init, D = 10, 6
    S = slots_per_row(D, np_init)
    assert S == FIXED_SLOTS + 10 == 82 and slots_per_row(30, 10) == 102
    assert OPS.counter(3, 4, 5, np_init, D) == (3 * 11 + 4) * S + 5
    # x_ij = lower + (upper - lower) u at slot 72 + j of generation 0's row i
    u = OPS.uniform(KEY, OPS.counter(0, 2, FIXED_SLOTS + 3, np_init, D))
    assert OPS.init_value(KEY, 2, 3, np_init, D, -5.0, 5.0) == pytest.approx(-5.0 + 10.0 * u, rel=1e-15)


def test_default_population_sizes_and_c_rounding():
    assert jso_popsize(10) == round(25 * math.sqrt(10) * math.log(10)) == 182
    assert jso_popsize(30) == 466 and lshade_popsize(10) == 180 and lshade_popsize(30) == 540
    # C's round: half away from zero (Python's round goes to even)
    assert c_round(2.5) == 3 and c_round(1.5) == 2 and c_round(2.4999) == 2
    assert OPS.c_round(2.5) == 3 and OPS.p_count(0.25, 10) == 3


def test_memory_slot_means_and_the_fixed_last_slot():
    m_f, m_cr = np.array([0.1, 0.2, 0.3]), np.array([0.4, 0.5, 0.6])
    assert OPS.slot_means(1, 3, m_f, m_cr, True) == (0.2, 0.5)
    assert OPS.slot_means(2, 3, m_f, m_cr, True) == (0.9, 0.9)  # jSO: the last slot is 0.9 / 0.9
    assert OPS.slot_means(2, 3, m_f, m_cr, False) == (0.3, 0.6)
    slots = [OPS.draw_memory_slot(KEY, 2, i, 300, 5, 5) for i in range(300)]
    assert set(slots) == set(range(5))


def test_draw_CR_normal_clipped_and_its_schedule():
    def cr(i, mu, nfes, sched):
        return OPS.draw_CR(KEY, 4, i, 1000, 5, mu, nfes, 100, sched)

    free = np.array([cr(i, 0.5, 90, True) for i in range(1000)])
    assert free.min() >= 0 and free.max() <= 1 and abs(free.mean() - 0.5) < 0.01 and 0.09 < free.std() < 0.11
    # Box-Muller from slots 1 and 2
    u1, u2 = (OPS.uniform(KEY, OPS.counter(4, 3, s, 1000, 5)) for s in (1, 2))
    assert cr(3, 0.5, 90, False) == pytest.approx(
        min(1, max(0, 0.5 + 0.1 * math.sqrt(-2 * math.log(1 - u1)) * math.cos(2 * math.pi * u2))), rel=1e-14)
    assert cr(0, 1.2, 90, False) == 1.0  # clipped
    # jSO's schedule: >= 0.7 before 25% of the FEs, >= 0.6 before 50%
    assert min(cr(i, 0.2, 24, True) for i in range(100)) == 0.7
    assert min(cr(i, 0.2, 49, True) for i in range(100)) == 0.6
    assert max(cr(i, 0.2, 49, False) for i in range(100)) < 0.6
    # the terminal value (negative mu_CR): CR = 0, then the schedule
    assert cr(0, -1.0, 90, True) == 0.0 and cr(0, -0.1, 10, True) == 0.7


def test_draw_F_cauchy_positive_at_most_one_and_its_schedule():
    def f(i, mu, nfes, sched):
        return OPS.draw_F(KEY, 5, i, 2000, 5, mu, nfes, 100, sched)

    Fs = np.array([f(i, 0.5, 90, False) for i in range(2000)])
    assert Fs.min() > 0 and Fs.max() <= 1 and abs(np.median(Fs) - 0.5) < 0.02
    assert (Fs == 1.0).mean() > 0.05  # the right tail is cut at 1
    # the first positive attempt is kept
    i = next(i for i in range(2000)
             if 0.1 + 0.1 * math.tan(math.pi * (OPS.uniform(KEY, OPS.counter(5, i, 8, 2000, 5)) - 0.5)) <= 0)
    u = OPS.uniform(KEY, OPS.counter(5, i, 9, 2000, 5))
    want = 0.1 + 0.1 * math.tan(math.pi * (u - 0.5))
    if want > 0:
        assert f(i, 0.1, 90, False) == pytest.approx(min(want, 1.0), rel=1e-14)
    assert max(f(i, 0.9, 59, True) for i in range(200)) == 0.7  # jSO: F <= 0.7 before 60%
    assert max(f(i, 0.9, 60, True) for i in range(200)) == 1.0
    # no positive attempt in 64 (a mu far below 0): F = mu_F
    assert F_ATTEMPTS == 64 and f(0, -100.0, 90, False) == -100.0
    # weighted F of the pbest term
    assert [OPS.weighted(0.5, n, 100, True) for n in (19, 20, 39, 40)] == [0.35, 0.4, 0.4, 0.6]
    assert OPS.weighted(0.5, 0, 100, False) == 0.5


@pytest.mark.parametrize("NP,A", [(4, 0), (5, 3), (9, 9)])
def test_pick_distinctness_and_the_pbest_rule(NP, A):
    p_num, seen_self, seen_archive = 3, 0, 0
    for g in range(1, 60):
        for i in range(NP):
            rank_i = (i * 3) % NP
            for nfes in (10, 60):  # first half: pbest is never the target's own rank (jSO)
                pb, r1, r2, jrand = OPS.pick(KEY, g, i, 20, 6, NP, A, p_num, rank_i, nfes, 100, True)
                assert 0 <= pb < p_num and 0 <= jrand < 6
                assert r1 != i and 0 <= r1 < NP and r2 not in (i, r1) and 0 <= r2 < NP + A
                if nfes == 10:
                    assert pb != rank_i
                else:
                    seen_self += pb == rank_i
                seen_archive += r2 >= NP
    assert seen_self > 0 and (seen_archive > 0) == (A > 0)
    # L-SHADE: no rule
    assert any(OPS.pick(KEY, g, 0, 20, 6, NP, A, 2, 0, 10, 100, False)[0] == 0 for g in range(1, 40))


def test_trial_value_mutation_repair_and_crossover_by_hand():
    # v = x_i + Fw (x_pbest - x_i) + F (x_r1 - x_r2) = 1 + 0.35 * 2 + 0.5 * 1.5 = 2.45
    def tv(j, jrand, CR, xr1):
        return OPS.trial_value(KEY, 2, 1, j, 10, 4, jrand, 0.5, 0.35, CR, 1.0, 3.0, xr1, 0.5, -5.0, 5.0)

    assert tv(0, 3, 1.0, 2.0) == pytest.approx(2.45, rel=1e-15)
    assert tv(0, 3, 1.0, 20.5) == 3.0  # 1 + 0.7 + 10 = 11.7 > 5: (5 + 1) / 2
    assert tv(0, 3, 1.0, -19.5) == -2.0  # 1 + 0.7 - 10 = -8.3 < -5: (-5 + 1) / 2
    assert tv(0, 3, 0.0, 2.0) == 1.0  # CR = 0: the parent's value ...
    assert tv(3, 3, 0.0, 2.0) == pytest.approx(2.45, rel=1e-15)  # ... except at j_rand
    u = OPS.uniform(KEY, OPS.counter(2, 1, FIXED_SLOTS + 2, 10, 4))
    assert tv(2, 3, u + 1e-12, 2.0) != 1.0 and tv(2, 3, u, 2.0) == 1.0  # takes iff U(slot 72 + j) < CR


def test_memory_update_lehmer_averaged_for_jso_plain_for_lshade():
    s_f, s_cr, delta = np.array([0.5, 1.0]), np.array([0.2, 0.6]), np.array([1.0, 3.0])  # weights 1/4, 3/4
    lf, lcr = 0.8125 / 0.875, 0.28 / 0.5
    assert lehmer([0.25, 0.75], s_f) == pytest.approx(lf) and lehmer([0.25, 0.75], s_cr) == pytest.approx(lcr)
    for averaged, want_f, want_cr in [(True, (lf + 0.3) / 2, (lcr + 0.8) / 2), (False, lf, lcr)]:
        m_f, m_cr = np.array([0.3, 0.3]), np.array([0.8, 0.8])
        OPS.memory_update(m_f, m_cr, 1, s_f, s_cr, delta, 2, averaged)
        assert m_f[1] == pytest.approx(want_f, rel=1e-14) and m_cr[1] == pytest.approx(want_cr, rel=1e-14)
        assert (m_f[0], m_cr[0]) == (0.3, 0.8)
    # every successful CR 0: the terminal -1 (jSO: averaged, (-1 + 0.8) / 2 < 0, still terminal)
    m_f, m_cr = np.array([0.5]), np.array([0.8])
    OPS.memory_update(m_f, m_cr, 0, s_f, np.zeros(2), delta, 2, False)
    assert m_cr[0] == -1.0
    m_cr = np.array([0.8])
    OPS.memory_update(m_f, m_cr, 0, s_f, np.zeros(2), delta, 2, True)
    assert m_cr[0] == pytest.approx(-0.1) and OPS.draw_CR(KEY, 1, 0, 4, 2, m_cr[0], 90, 100, True) == 0.0
    # not sticky (Brest's and Tanabe's code test the accumulator, not the old value): -1 -> Lehmer
    m_cr = np.array([-1.0])
    OPS.memory_update(m_f, m_cr, 0, s_f, s_cr, delta, 2, False)
    assert m_cr[0] == pytest.approx(lcr)


def test_population_size_plan_and_p():
    def plan(nfes):
        return OPS.planned_popsize(nfes, 182, 4, 100_000)

    assert plan(0) == 182 and plan(100_000) == 4 and plan(50_000) == 93
    assert [plan(n) for n in range(0, 100_001, 1000)] == sorted((plan(n) for n in range(0, 100_001, 1000)),
                                                                reverse=True)
    assert OPS.next_popsize(182, 100_000, 182, 4, 100_000) == 4 and OPS.next_popsize(93, 40_000, 182, 4, 100_000) == 93
    assert OPS.p_at(0, 0.25, 0.125, 1000) == 0.25 and OPS.p_at(1000, 0.25, 0.125, 1000) == 0.125
    assert OPS.p_at(500, 0.11, 0.11, 1000) == 0.11
    assert OPS.p_count(0.25, 4) == 2 and OPS.p_count(0.11, 180) == 20 and OPS.p_count(0.01, 50) == 2
    assert OPS.archive_capacity(7, 2.6, True) == 18 and OPS.archive_capacity(7, 2.6, False) == 18
    assert OPS.archive_capacity(5, 2.7, True) == 14 and OPS.archive_capacity(5, 2.7, False) == 13


def test_ranking_and_removal_order_with_ties_and_the_error_floor():
    fit = np.array([3.0, 5.0, 5.0, 1.0, 5.0])
    assert [OPS.rank_of(fit, 5, i, 1e-8) for i in range(5)] == [1, 2, 3, 0, 4]
    # removed first: the worst, and among equal errors the lower index (Brest's strict > scan)
    assert [OPS.removal_rank(fit, 5, i, 1e-8) for i in range(5)] == [3, 0, 1, 4, 2]
    tiny = np.array([5e-9, 2e-9, 1.0])  # below the floor: both 0, ties by index
    assert [OPS.rank_of(tiny, 3, i, 1e-8) for i in range(3)] == [0, 1, 2]
    assert [OPS.rank_of(tiny, 3, i, -np.inf) for i in range(3)] == [1, 0, 2]


def _state(np_init, dim, H=2):
    return dict(Fs=np.full(np_init, 0.5), CRs=np.full(np_init, 0.9), s_f=np.zeros(np_init), s_cr=np.zeros(np_init),
                delta=np.zeros(np_init), m_f=np.full(H, 0.3), m_cr=np.full(H, 0.8), best_x=np.zeros(dim))


def test_selection_archive_append_then_replace_and_memory():
    _, _, select = build_cpu_jso(np.float64)
    pop = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
    trials = pop + 10.0
    fit = np.array([4.0, 3.0, 2.0, 1.0])
    tfit = np.array([1.5, 3.0, 0.5, 7.0])  # i0 better, i1 equal, i2 better, i3 worse
    archive = np.array([[-1.0, -1.0], [-9.0, -9.0]])
    s = _state(4, 2)
    s["Fs"][:] = [0.4, 0.5, 0.8, 0.6]
    s["CRs"][:] = [0.1, 0.2, 0.3, 0.4]
    state = np.array([4, 1, 2, 0])  # NP 4, archive 1 of 2
    pstate = np.array([0.25])
    best = select(pop, fit, archive, trials, tfit, s["Fs"], s["CRs"], s["s_f"], s["s_cr"], s["delta"], s["m_f"],
                  s["m_cr"], state, pstate, s["best_x"], KEY, 3, 4, 8, 1000, 1e-8, 4, 0.5, True, 0.25, 0.125, 1.0)
    assert best == 0.5 and s["best_x"].tolist() == [12.0, 12.0]
    np.testing.assert_array_equal(pop, [[10, 10], [11, 11], [12, 12], [3, 3]])  # equal replaces too
    np.testing.assert_array_equal(fit, [1.5, 3.0, 0.5, 1.0])
    # i0's parent appended (archive full), i2's parent at slot below(2) of row 2, slot 7
    assert state.tolist() == [4, 2, 2, 1]
    k = OPS.archive_slot(KEY, 3, 2, 4, 2, 2)
    want = [[-1.0, -1.0], [0.0, 0.0]]
    want[k] = [2.0, 2.0]
    np.testing.assert_array_equal(archive, want)
    # the successes (F 0.4, 0.8; CR 0.1, 0.3; delta 2.5, 1.5), averaged with M[0] = (0.3, 0.8)
    w = np.array([2.5, 1.5]) / 4.0
    assert s["m_f"][0] == pytest.approx((lehmer(w, [0.4, 0.8]) + 0.3) / 2, rel=1e-14)
    assert s["m_cr"][0] == pytest.approx((lehmer(w, [0.1, 0.3]) + 0.8) / 2, rel=1e-14)
    assert s["m_f"][1] == 0.3 and pstate[0] == 0.25  # no shrink at NP_min: p unchanged


def test_population_reduction_keeps_order_and_shrinks_the_archive():
    _, _, select = build_cpu_jso(np.float64)
    pop = np.arange(12.0).reshape(6, 2)
    fit = np.array([1.0, 9.0, 2.0, 9.0, 3.0, 4.0])
    trials, tfit = pop.copy(), np.full(6, 100.0)  # no success
    archive = np.ones((3, 2))
    s = _state(6, 2)
    state, pstate = np.array([6, 3, 3, 0]), np.array([0.25])
    # at max_fes the plan is NP_min = 4: the two 9's go; archive capacity int(4 * 0.5) = 2 (the first two kept)
    select(pop, fit, archive, trials, tfit, s["Fs"], s["CRs"], s["s_f"], s["s_cr"], s["delta"], s["m_f"], s["m_cr"],
           state, pstate, s["best_x"], KEY, 5, 6, 100, 100, 1e-8, 4, 0.5, True, 0.25, 0.125, 1.0)
    assert state.tolist() == [4, 2, 2, 0] and pstate[0] == 0.125
    np.testing.assert_array_equal(pop[:4], [[0, 1], [4, 5], [8, 9], [10, 11]])
    np.testing.assert_array_equal(fit[:4], [1.0, 2.0, 3.0, 4.0])
    assert s["m_f"].tolist() == [0.3, 0.3]  # no success: memory untouched


def test_runs_reach_a_small_error_and_follow_the_plan():
    kw = dict(function="Q01", dim=10, max_fes=60_000, seed=3)
    a = run_trial(algorithm="jso", implementation="sequential", popsize=jso_popsize(10), **kw)
    assert a.hit_target and a.best_error <= 1e-8 and a.fes_used < 60_000
    fes = a.trace["fes"]
    assert fes[0] == 182 and np.all(np.diff(fes) <= 182) and np.all(np.diff(a.trace["best_error"]) <= 0)
    # budget run: the population ends at NP_min, the archive within its capacity
    from gpude.run.trial import make_runner

    r = make_runner("lshade", "sequential", "Q01", 10, 40, 2000)
    res = r.run(3)
    pop, fit = r.population()
    m_f, m_cr, archive, state = r.memory()
    assert res.fes_used == 2000 and pop.shape == (4, 10) and state[0] == 4
    assert len(archive) <= state[2] == int(4 * 2.6) and len(m_f) == 6
    assert np.all(np.abs(pop) <= 100)


def test_same_seed_same_run_and_lshade_differs_from_jso():
    kw = dict(function="F05", dim=10, popsize=30, max_fes=1500, seed=4)
    a = run_trial(algorithm="jso", implementation="sequential", **kw)
    b = run_trial(algorithm="jso", implementation="sequential", **kw)
    c = run_trial(algorithm="lshade", implementation="sequential", **kw)
    np.testing.assert_array_equal(a.trace["best_error"], b.trace["best_error"])
    np.testing.assert_array_equal(a.best_x, b.best_x)
    assert not np.array_equal(a.trace["best_error"], c.trace["best_error"])
    assert c.params.arc_rate == 2.6 and not c.params.weighted_F and a.params.weighted_F


@pytest.mark.parametrize("change,msg", [
    ({"popsize": 3}, "popsize"), ({"np_min": 3}, "np_min must"), ({"np_min": 40}, r"np_min must .*popsize \(30\)"),
    ({"memory_size": 1}, "memory_size .* >= 2"), ({"memory_F": 0.0}, "memory_F must"),
    ({"memory_CR": 1.5}, "memory_CR must"), ({"arc_rate": -1.0}, "arc_rate must"),
    ({"p_min": 0.3}, "p_min and p_max"), ({"p_max": 1.5, "p_min": 0.5}, "p_min and p_max"),
    ({"weighted_F": "yes"}, "weighted_F must be true or false"), ({"bounds": "clip"}, "unknown bound mode"),
    ({"error_floor": -1.0}, "error_floor must"), ({"arc_rate": float("nan")}, "arc_rate must be a finite")])
def test_bad_parameters_are_refused(change, msg):
    with pytest.raises(InvalidInputError, match=msg):
        JSOParams(**{"popsize": 30, "max_fes": 1000, **change})
    LSHADEParams(popsize=30, max_fes=1000, memory_size=1)  # no fixed last slot: H = 1 is fine


@pytest.mark.cudasim
def test_operators_build_for_cuda_and_give_the_cpu_values():
    gpu = build_jso_ops(np.float64, "cuda")
    pick, draw_F, draw_CR, trial_value, init_value = gpu.pick, gpu.draw_F, gpu.draw_CR, gpu.trial_value, gpu.init_value
    memory_update, rank_of = gpu.memory_update, gpu.rank_of

    @cuda.jit
    def kernel(out, key, fit, m_f, m_cr, s_f, s_cr, delta):
        i = cuda.threadIdx.x
        if i < out.shape[0]:
            pb, r1, r2, jrand = pick(key, 3, i, 10, 5, 8, 3, 3, rank_of(fit, 8, i, 1e-8), 10, 100, True)
            out[i, 0], out[i, 1], out[i, 2], out[i, 3] = pb, r1, r2, jrand
            out[i, 4] = draw_F(key, 3, i, 10, 5, 0.5, 10, 100, True)
            out[i, 5] = draw_CR(key, 3, i, 10, 5, 0.5, 30, 100, True)
            out[i, 6] = trial_value(key, 3, i, 2, 10, 5, jrand, 0.5, 0.35, 0.5, 1.0, 3.0, 2.0 + i, 0.5, -5.0, 5.0)
            out[i, 7] = init_value(key, i, 1, 10, 5, -100.0, 100.0)
            if i == 0:
                memory_update(m_f, m_cr, 1, s_f, s_cr, delta, 2, True)

    fit = np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0])
    s_f, s_cr, delta = np.array([0.5, 1.0]), np.array([0.2, 0.6]), np.array([1.0, 3.0])
    out, m_f, m_cr = np.zeros((8, 8)), np.full(2, 0.3), np.full(2, 0.8)
    kernel[1, 8](out, KEY, fit, m_f, m_cr, s_f, s_cr, delta)
    want = np.zeros((8, 8))
    for i in range(8):
        pb, r1, r2, jrand = OPS.pick(KEY, 3, i, 10, 5, 8, 3, 3, OPS.rank_of(fit, 8, i, 1e-8), 10, 100, True)
        want[i, :4] = pb, r1, r2, jrand
        want[i, 4] = OPS.draw_F(KEY, 3, i, 10, 5, 0.5, 10, 100, True)
        want[i, 5] = OPS.draw_CR(KEY, 3, i, 10, 5, 0.5, 30, 100, True)
        want[i, 6] = OPS.trial_value(KEY, 3, i, 2, 10, 5, jrand, 0.5, 0.35, 0.5, 1.0, 3.0, 2.0 + i, 0.5, -5.0, 5.0)
        want[i, 7] = OPS.init_value(KEY, i, 1, 10, 5, -100.0, 100.0)
    # the picks, the trial and the initial value exactly; the draws go through tan and log, which are
    # libdevice's on a GPU and libm's on the CPU: within 2 ulp (the simulator: the same libm)
    exact = [0, 1, 2, 3, 6, 7]
    np.testing.assert_array_equal(out[:, exact], want[:, exact])
    np.testing.assert_array_max_ulp(out[:, 4:6], want[:, 4:6], maxulp=2)
    cf, ccr = np.full(2, 0.3), np.full(2, 0.8)
    OPS.memory_update(cf, ccr, 1, s_f, s_cr, delta, 2, True)
    np.testing.assert_array_equal(m_f, cf)
    np.testing.assert_array_equal(m_cr, ccr)
