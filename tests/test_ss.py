"""Scatter search: operators, reference set, budgets, reproducibility (and gpu == sequential)."""

import dataclasses
import os

import numpy as np
import pytest

from gpude.algorithms.ss import SSParams, layout, pair_arrays
from gpude.core.errors import InvalidInputError
from gpude.core.rng import seed_key
from gpude.functions import get_function
from gpude.implementations.ss_sequential import SSSequential, build_cpu_ss

SMALL = dict(popsize=12, ref_best=4, ref_diverse=1, ls_steps=3)


def small(max_fes=2000, **kw):
    return SSParams(max_fes=max_fes, **{**SMALL, **kw})


def test_params_defaults_and_validation():
    p = SSParams(popsize=140)
    assert (p.ref_best, p.ref_diverse, p.lam, p.ls_steps) == (9, 1, 0.220, 85)
    assert p.n_pairs == 45 and p.n_children == 90
    assert p.evaluations_per_iteration() == 90 * (1 + 2 * 85) + 139
    for bad in (dict(ref_best=0), dict(ref_diverse=-1), dict(ref_best=1, ref_diverse=0),
                dict(lam=0.6), dict(ls_steps=-1), dict(rho_max=0.0), dict(bounds="resample"),
                dict(popsize=8, ref_best=9)):
        with pytest.raises(InvalidInputError):
            SSParams(**{"popsize": 140, **bad})


def test_blx_children_lie_in_their_ranges():
    k = build_cpu_ss(np.float64)
    p = SSParams(popsize=12, ref_best=2, ref_diverse=1, lam=0.22)
    U, W = layout(p, 3)
    refX = np.array([[0.0, 1.0, 2.0], [1.0, 1.0, -2.0], [4.0, -4.5, 0.0]])
    pa, pb = pair_arrays(3)
    assert list(zip(pa, pb)) == [(0, 1), (0, 2), (1, 2)]
    lo_b, hi_b = -5.0, 5.0
    seen = np.zeros((6, 3, 2))
    for g in range(1, 200):
        ch = np.empty((6, 3))
        k["make_children"](refX, ch, pa, pb, seed_key(3), g, p.lam, U, W, lo_b, hi_b)
        for c in range(6):
            alpha = 0.72 if c % 2 == 0 else 0.28
            a, b = refX[pa[c // 2]], refX[pb[c // 2]]
            lo, hi = np.minimum(a, b), np.maximum(a, b)
            span = hi - lo
            low = np.maximum(lo - alpha * span, lo_b) - 1e-12
            high = np.minimum(hi + alpha * span, hi_b) + 1e-12
            assert np.all(ch[c] >= low) and np.all(ch[c] <= high)
            seen[c, :, 0] = np.minimum(seen[c, :, 0], (ch[c] - lo) / np.where(span > 0, span, 1))
            seen[c, :, 1] = np.maximum(seen[c, :, 1], (ch[c] - hi) / np.where(span > 0, span, 1))
    # the children do leave [lo, hi] (alpha > 0) on the unclipped coordinates
    assert seen[0, 0, 0] < -0.5 and seen[0, 0, 1] > 0.5
    # equal parents' genes: the child copies them
    ch = np.empty((6, 3))
    k["make_children"](refX, ch, pa, pb, seed_key(3), 1, p.lam, U, W, lo_b, hi_b)
    assert ch[0, 1] == 1.0 and ch[1, 1] == 1.0
    # a clipped coordinate sits on the bound
    assert np.all(ch >= lo_b) and np.all(ch <= hi_b)


def test_reference_set_is_the_best_plus_the_farthest():
    k = build_cpu_ss(np.float64)
    pop = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [3.0, 3.0], [-4.0, 0.0], [0.5, 0.5],
                    [2.0, 2.0]])
    fit = np.array([5.0, 1.0, 2.0, 9.0, 8.0, 1.0, 7.0])  # ties 1 and 5: index 1 first
    refX, refF = np.empty((4, 2)), np.empty(4)
    k["build_reference"](pop, fit, 3, 1, refX, refF, np.empty(7, np.bool_), np.empty(7))
    # R1 = rows 1, 5, 2 (rank order); min distances to R1: row0 0.5, row3 12.5, row4 16, row6 4.5
    np.testing.assert_array_equal(refX, pop[[1, 5, 2, 4]])
    np.testing.assert_array_equal(refF, [1.0, 1.0, 2.0, 8.0])
    refX, refF = np.empty((5, 2)), np.empty(5)
    k["build_reference"](pop, fit, 3, 2, refX, refF, np.empty(7, np.bool_), np.empty(7))
    # after row 4 the farthest from {1, 5, 2, 4} is row 3 (min 12.5 vs row 6's 4.5)
    np.testing.assert_array_equal(refX, pop[[1, 5, 2, 4, 3]])


def test_reference_update_keeps_the_best_and_old_members_on_ties():
    k = build_cpu_ss(np.float64)
    refX = np.array([[0.0], [1.0], [2.0]])
    refF = np.array([1.0, 3.0, 5.0])
    children = np.array([[10.0], [11.0], [12.0], [13.0]])
    cfit = np.array([3.0, 0.5, np.inf, 9.0])
    entered = k["update_reference"](refX, refF, children, cfit, np.empty(7), np.empty((3, 1)))
    assert entered
    np.testing.assert_array_equal(refX[:, 0], [11.0, 0.0, 1.0])  # old 3.0 beats the child's 3.0
    np.testing.assert_array_equal(refF, [0.5, 1.0, 3.0])
    entered = k["update_reference"](refX, refF, children, np.full(4, 3.0), np.empty(7),
                                    np.empty((3, 1)))
    assert not entered


def run(params, fid="N00", dim=4, seed=1):
    impl = SSSequential(get_function(fid, dim), params)
    return impl, impl.run(seed)


@pytest.mark.parametrize("max_fes", [12, 13, 20, 41, 45, 100, 357, 1000])
def test_exact_fe_budget(max_fes):
    # P = 12, 10 children, one iteration <= 10 + 60 + 11: the budget ends in every part
    impl, r = run(small(max_fes=max_fes, target=0.0), fid="N02")
    assert r.fes_used == max_fes and r.stopped_by == "budget"
    fes = r.trace["fes"]
    assert fes[0] == 12 and np.all(np.diff(fes) > 0) and fes[-1] == max_fes
    assert np.all(np.diff(r.trace["best_error"]) <= 0)  # R keeps its best
    X, F = impl.population()
    assert F.min() == r.best_error
    assert impl.function.evaluate(r.best_x[None, :])[0] == pytest.approx(r.best_error, rel=1e-12,
                                                                          abs=1e-300)


def test_same_seed_same_run_and_seeds_differ():
    p = small(max_fes=1500, target=0.0)
    _, a = run(p, "N02", seed=5)
    _, b = run(p, "N02", seed=5)
    _, c = run(p, "N02", seed=6)
    assert a.best_error == b.best_error and np.array_equal(a.best_x, b.best_x)
    np.testing.assert_array_equal(a.trace["best_error"], b.trace["best_error"])
    assert not np.array_equal(a.best_x, c.best_x)


def test_target_stop_and_convergence():
    _, r = run(small(max_fes=20000))
    assert r.stopped_by == "target" and r.best_error <= 1e-8 and r.fes_to_target == r.fes_used
    _, r = run(small(max_fes=20000, target=1e3))
    assert r.stopped_by == "target" and r.generations <= 1


def test_time_budget_stops():
    _, r = run(dataclasses.replace(small(max_fes=10**9, target=0.0), max_time_s=0.2), "N02")
    assert r.stopped_by == "time" and r.fes_used < 10**9


def test_restart_on_a_stalled_reference_set():
    # no improvement method and a 2-member set: the children soon fail to enter R
    p = SSParams(popsize=6, ref_best=1, ref_diverse=1, ls_steps=0, max_fes=400, target=0.0)
    impl, r = run(p, "N02")
    assert impl.restarts > 0 and r.fes_used == 400
    assert np.all(np.diff(r.trace["best_error"]) <= 0)


def test_float32_runs():
    _, r = run(small(max_fes=600, dtype="float32", target=0.0), "N02")
    assert r.fes_used == 600 and np.isfinite(r.best_error)


@pytest.mark.parametrize("max_fes,fid", [(150, "N02"), (257, "N00")])
def test_gpu_matches_sequential(max_fes, fid):
    from gpude.implementations.ss_gpu import SSGPU

    p = SSParams(popsize=8, ref_best=2, ref_diverse=1, ls_steps=3, max_fes=max_fes, target=0.0)
    f = get_function(fid, 3)
    cpu, gpu_ = SSSequential(f, p), SSGPU(f, p)
    a, b = cpu.run(3), gpu_.run(3)
    assert a.fes_used == b.fes_used == max_fes
    np.testing.assert_array_equal(a.trace["fes"], b.trace["fes"])
    # the CPU and GPU evaluators sum in different orders (last-ulp differences); decisions agree
    np.testing.assert_allclose(a.trace["best_error"], b.trace["best_error"], rtol=1e-12)
    # the simulator runs the CPU's math: the same vectors; a GPU's log/cos may differ in the last ulp
    # (Solis-Wets steps are Box-Muller draws), so its vectors agree to rounding
    rtol = 0 if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1" else 1e-9
    np.testing.assert_allclose(a.best_x, b.best_x, rtol=rtol, atol=0)
    np.testing.assert_allclose(cpu.population()[0], gpu_.population()[0], rtol=rtol, atol=0)
    assert cpu.restarts == gpu_.restarts


# ss/gpu advances B trials together (trials_per_launch). P = 6, R = 1 + 1 (2 children), one
# Solis-Wets step, N02 at D = 2, 30 FEs. Seed 3 restarts in iteration 3 (seeds 16 and 22 never) and
# its budget ends within the step (after the "+" tries), seed 16's within the combination; seed 22
# reaches the target below in iteration 2
BATCH = dict(popsize=6, ref_best=1, ref_diverse=1, ls_steps=1)
BATCH_SEEDS, BATCH_FES = [3, 16, 22], 30


def test_gpu_batch_trials_make_the_runs_they_make_alone():
    from gpude.implementations.ss_gpu import SSGPU

    f = get_function("N02", 2)
    full = [SSSequential(f, SSParams(max_fes=BATCH_FES, target=0.0, **BATCH)).run(s)
            for s in BATCH_SEEDS]
    longer = SSSequential(f, SSParams(max_fes=10 * BATCH_FES, target=0.0, **BATCH)).run(3)
    assert BATCH_FES not in longer.trace["fes"]  # seed 3's budget ends mid-iteration
    finals = sorted(r.best_error for r in full)
    target = (finals[0] + finals[1]) / 2  # one trial stops at it, two run to the budget
    gpu_ = SSGPU(f, SSParams(max_fes=BATCH_FES, target=target, **BATCH), trials_per_launch=3)
    assert gpu_.trials_per_launch == 3
    batch = gpu_.run_batch(BATCH_SEEDS)
    batch_population, batch_restarts = gpu_.population(1), list(gpu_.trial_restarts)
    alone = []
    for s in BATCH_SEEDS:
        r = gpu_.run(s)
        alone.append((r, gpu_.population(), gpu_.restarts))
    assert [b.hit_target for b in batch] == [False, False, True]
    assert [b.stopped_by for b in batch] == ["budget", "budget", "target"]
    assert batch[2].generations < min(batch[0].generations, batch[1].generations)  # mid-batch
    for b, (a, _, _), ref in zip(batch, alone, full):
        assert b.seed == a.seed
        for name in ("generation", "fes", "best_error"):
            np.testing.assert_array_equal(b.trace[name], a.trace[name])
        np.testing.assert_array_equal(b.best_x, a.best_x)
        assert (b.best_error, b.fes_used, b.generations, b.fes_to_target, b.stopped_by) == \
            (a.best_error, a.fes_used, a.generations, a.fes_to_target, a.stopped_by)
        # and the CPU reference's run, up to the target (evaluators differ in the last ulp)
        n = b.generations + 1
        np.testing.assert_array_equal(b.trace["fes"], ref.trace["fes"][:n])
        np.testing.assert_allclose(b.trace["best_error"], ref.trace["best_error"][:n], rtol=1e-12)
        assert b.info["options"]["trials_per_launch"] == 3
        assert a.info["options"]["trials_per_launch"] == 1
    assert batch[0].fes_used == batch[1].fes_used == BATCH_FES
    assert batch[2].fes_to_target == batch[2].fes_used
    np.testing.assert_array_equal(batch_population[0], alone[1][1][0])
    np.testing.assert_array_equal(batch_population[1], alone[1][1][1])
    assert batch_restarts == [a[2] for a in alone] == [1, 0, 0]  # a restart stays in its trial
    # untimed: fair shares of the batch's wall time; a trial is charged until it stops
    wall = batch[0].info["batch_wall_time_s"]
    assert sum(b.wall_time_s for b in batch) == pytest.approx(wall)
    assert batch[2].time_to_target_s == batch[2].wall_time_s
    assert alone[0][0].wall_time_s == alone[0][0].info["batch_wall_time_s"]


def test_gpu_timed_batch_stops_every_trial_by_time():
    from gpude.implementations.ss_gpu import SSGPU

    p = SSParams(max_fes=10**6, target=0.0, max_time_s=0.3, **BATCH)
    batch = SSGPU(get_function("N02", 2), p, trials_per_launch=2).run_batch([3, 4])
    wall = batch[0].info["batch_wall_time_s"]
    for r in batch:
        assert r.stopped_by == "time" and not r.hit_target and r.time_to_target_s is None
        assert r.fes_used < 10**6 and r.fes_used == r.trace["fes"][-1]
        assert r.wall_time_s == wall  # each trial had the whole budget, concurrently
        assert np.all(r.trace["time_s"][:-1] < 0.3)  # checked before each iteration
        assert len(r.trace["fes"]) == r.generations + 1
    assert batch[0].generations == batch[1].generations


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_gpu_rejects_bad_trials_per_launch(bad):
    import inspect

    from gpude.implementations.ss_gpu import SSGPU

    assert "trials_per_launch" in inspect.signature(SSGPU.__init__).parameters
    with pytest.raises(InvalidInputError, match="trials_per_launch must be a positive integer"):
        SSGPU(get_function("N02", 2), small(), trials_per_launch=bad)
