"""PSO (Nashed et al. PPSN 2012, libCudaOptimize): the operators, the CPU reference and the GPU
implementation making the same run for a seed."""

import numpy as np
import pytest

from gpude.algorithms.pso import PSOParams, build_pso_ops
from gpude.core.errors import InvalidInputError
from gpude.core.rng import seed_key
from gpude.functions import get_function
from gpude.implementations.pso_gpu import PSOGPU
from gpude.implementations.pso_sequential import PSOSequential

OPS = build_pso_ops(np.float64, "cpu")
FN = get_function("Q04", 10)
NP, D = 6, 10
LO, HI = FN.lower, FN.upper
GFN = get_function("N09", 4)  # Rastrigin, D = 4: small enough for the CUDA simulator


def seq(**kw):
    return PSOSequential(FN, PSOParams(popsize=kw.pop("popsize", NP), **kw))


def test_defaults_are_nashed_table_1():
    p = PSOParams(popsize=125)
    assert (p.w, p.c1, p.c2, p.topology, p.vmax, p.bounds) == (0.494, 1.862, 1.881, "ring", 0.5, "clip")


def test_one_generation_by_hand():
    """Generation 1 of a 6-particle ring swarm recomputed in numpy from the drawn numbers."""
    seed, key = 11, seed_key(11)
    a = seq(max_fes=NP)  # initialisation only
    a.run(seed)
    x0, v0, px, pfit = a.x.copy(), a.v.copy(), a.px.copy(), a.pfit.copy()
    # the initial swarm from its slots: position slot j, velocity slot D + j of generation 0
    u = np.array([[OPS.uniform(key, OPS.counter(0, i, j, NP, D)) for j in range(2 * D)] for i in range(NP)])
    np.testing.assert_allclose(x0, LO + u[:, :D] * (HI - LO), rtol=1e-15, atol=1e-14)
    span = 0.5 * (HI - LO)
    np.testing.assert_allclose(v0, -span + u[:, D:] * 2 * span, rtol=1e-14, atol=1e-14)
    np.testing.assert_array_equal(px, x0)

    b = seq(max_fes=2 * NP)
    b.run(seed)
    p = b.params
    vmax = 0.5 * (HI - LO)
    for i in range(NP):
        nb = [(i - 1) % NP, i, (i + 1) % NP]
        lb = min(nb, key=lambda k: (pfit[k], k))
        for j in range(D):
            r1 = OPS.uniform(key, OPS.counter(1, i, j, NP, D))
            r2 = OPS.uniform(key, OPS.counter(1, i, D + j, NP, D))
            v = p.w * v0[i, j] + p.c1 * r1 * (px[i, j] - x0[i, j]) + p.c2 * r2 * (px[lb, j] - x0[i, j])
            v = min(max(v, -vmax), vmax)
            x = x0[i, j] + v
            if x < LO or x > HI:
                x, v = (LO if x < LO else HI), 0.0
            assert b.x[i, j] == pytest.approx(x, rel=1e-12, abs=1e-12)
            assert b.v[i, j] == pytest.approx(v, rel=1e-12, abs=1e-12)
    f = FN.evaluate(b.x)
    better = f <= pfit
    np.testing.assert_allclose(b.pfit, np.where(better, f, pfit), rtol=1e-12)
    np.testing.assert_array_equal(b.px[better], b.x[better])
    np.testing.assert_array_equal(b.px[~better], px[~better])


def test_ring_and_global_neighbourhoods_break_ties_by_lowest_index():
    fit = np.array([3.0, 1.0, 2.0, 1.0, 5.0, 0.5])
    ring = [OPS.neighbour_best(fit, i, 6, 0) for i in range(6)]
    assert ring == [5, 1, 1, 3, 5, 5]
    assert OPS.neighbour_best(fit, 2, 6, 1) == 5
    ties = np.array([1.0, 1.0, 1.0, 1.0])
    assert [OPS.neighbour_best(ties, i, 4, 0) for i in range(4)] == [0, 0, 1, 0]
    assert [OPS.neighbour_best(ties, i, 4, 1) for i in range(4)] == [0, 0, 0, 0]
    assert OPS.neighbour_best(np.array([2.0, 0.0, 0.0]), 0, 3, 1) == 1


def test_bound_modes_and_clamp_of_one_coordinate():
    key = seed_key(1)
    # w = 1, c = 0: v' = v; clamp to 2, then x + v' = 9.5 + 2 > 10
    x, v = OPS.move(key, 1, 0, 0, 4, 2, 9.5, 5.0, 0.0, 0.0, 1.0, 0.0, 0.0, 2.0, -10.0, 10.0, 0)
    assert (x, v) == (10.0, 0.0)  # clip: on the bound, velocity 0
    x, v = OPS.move(key, 1, 0, 0, 4, 2, 9.5, 5.0, 0.0, 0.0, 1.0, 0.0, 0.0, 2.0, -10.0, 10.0, 1)
    assert (x, v) == (8.5, -2.0)  # reflect: mirrored at the bound, velocity negated
    x, v = OPS.move(key, 1, 0, 0, 4, 2, -9.0, -3.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, -10.0, 10.0, 1)
    assert (x, v) == (-8.0, 3.0)  # no clamp (vmax = 0)
    x, v = OPS.move(key, 1, 0, 0, 4, 2, -9.0, -50.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, -10.0, 10.0, 1)
    assert (x, v) == (10.0, 50.0)  # mirror image beyond the other bound: clipped


@pytest.mark.parametrize("bounds,vmax", [("clip", 0.5), ("clip", 0.0), ("reflect", 0.1), ("reflect", 0.0)])
def test_particles_stay_in_the_box(bounds, vmax):
    a = seq(max_fes=20 * NP, bounds=bounds, vmax=vmax, w=0.9)
    a.run(2)
    for arr in (a.x, a.px):
        assert arr.min() >= LO and arr.max() <= HI
    if vmax > 0:
        assert np.abs(a.v).max() <= vmax * (HI - LO)


@pytest.mark.parametrize("topology,bounds,dtype", [("ring", "clip", "float64"), ("global", "reflect", "float64"),
                                                    ("ring", "reflect", "float32")])
def test_gpu_makes_the_run_of_the_cpu_reference(topology, bounds, dtype):
    p = PSOParams(popsize=NP, max_fes=NP * 4 + 3, topology=topology, bounds=bounds, dtype=dtype)
    cpu, dev = PSOSequential(GFN, p), PSOGPU(GFN, p)
    r, s = cpu.run(4), dev.run(4)
    np.testing.assert_array_equal(r.trace["fes"], s.trace["fes"])
    np.testing.assert_allclose(s.trace["best_error"], r.trace["best_error"], rtol=1e-9 if dtype == "float64" else 1e-5)
    (cx, cf), (gx, gf) = cpu.population(), dev.population()
    np.testing.assert_allclose(gx, cx, rtol=1e-12 if dtype == "float64" else 1e-6)
    np.testing.assert_allclose(gf, cf, rtol=1e-12 if dtype == "float64" else 1e-5)
    assert r.fes_used == s.fes_used == p.max_fes and r.generations == s.generations == 4
    np.testing.assert_array_equal(r.best_x, s.best_x)


def test_batch_of_two_trials_equals_lone_runs():
    p = PSOParams(popsize=NP, max_fes=4 * NP, topology="global")
    dev = PSOGPU(GFN, p)
    batch = dev.run_batch([5, 9])
    pops = [dev.population(b) for b in range(2)]
    cpu = PSOSequential(GFN, p)
    for b, seed in enumerate([5, 9]):
        r = cpu.run(seed)
        np.testing.assert_allclose(batch[b].trace["best_error"], r.trace["best_error"], rtol=1e-9)
        np.testing.assert_allclose(pops[b][0], cpu.population()[0], rtol=1e-12)
    lone = PSOGPU(GFN, p)
    lone.run(9)  # the second trial of the batch, alone: bit for bit the same
    np.testing.assert_array_equal(lone.population()[0], pops[1][0])
    np.testing.assert_array_equal(lone.population()[1], pops[1][1])
    assert batch[0].best_error != batch[1].best_error


def test_last_partial_generation_moves_only_the_first_particles():
    full, partial = seq(max_fes=3 * NP), seq(max_fes=3 * NP + 2)
    full.run(7)
    r = partial.run(7)
    assert r.fes_used == 3 * NP + 2 and r.generations == 3
    assert list(r.trace["fes"]) == [6, 12, 18, 20]
    np.testing.assert_array_equal(partial.x[2:], full.x[2:])
    np.testing.assert_array_equal(partial.pfit[2:], full.pfit[2:])
    assert all((partial.x[i] != full.x[i]).any() for i in range(2))


def test_target_stops_both_implementations_at_the_same_generation():
    p0 = PSOParams(popsize=NP, max_fes=60)
    ref = PSOSequential(FN, p0).run(3).trace["best_error"]
    k = int(np.argmax(ref < ref[0]))  # first improving generation
    assert k > 0
    # between the best errors of generations k - 1 and k (the GPU's may differ in the last bits)
    p = PSOParams(popsize=NP, max_fes=60, target=float(ref[k] + 1e-6 * (ref[k - 1] - ref[k])))
    r, s = PSOSequential(FN, p).run(3), PSOGPU(FN, p).run(3)
    for res in (r, s):
        assert res.stopped_by == "target" and res.hit_target and res.generations == k
        assert res.fes_used == res.fes_to_target == NP * (k + 1)


def test_time_budget_stops_the_run():
    r = seq(max_fes=10**9, max_time_s=1e-9).run(1)
    assert r.stopped_by == "time" and r.fes_used < 10**9


@pytest.mark.parametrize("change,msg", [
    ({"topology": "star"}, "unknown topology 'star'; use one of ring, global"),
    ({"bounds": "wrap"}, "unknown bound mode 'wrap'; use one of clip, reflect"),
    ({"vmax": -0.1}, "vmax must be"), ({"vmax": float("nan")}, "vmax must be"),
    ({"c1": -1.0}, "c1 must be"), ({"c2": "x"}, "c2 must be"), ({"w": float("inf")}, "w \\(inertia"),
    ({"popsize": 2}, "popsize \\(NP\\) must be an integer >= 3 for the ring"),
    ({"popsize": 0, "topology": "global"}, "popsize \\(NP\\) must be an integer >= 1"),
])
def test_bad_parameters_are_rejected(change, msg):
    kw = {"popsize": 6, "max_fes": 100, **change}
    with pytest.raises(InvalidInputError, match=msg):
        PSOParams(**kw)


def test_global_topology_runs_a_swarm_of_two():
    r = seq(popsize=2, max_fes=10, topology="global").run(0)
    assert r.fes_used == 10
