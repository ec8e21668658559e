"""jDE: the self-adaptive parameters, cujDE's displacement index scheme, and the GPU cujDE making
the same decisions as the CPU reference."""

import numpy as np
import pytest

from gpude import run_trial
from gpude.algorithms.jde import JDE_SLOTS, JDEParams, build_jde_ops
from gpude.core.errors import InvalidInputError
from gpude.core.rng import seed_key
from gpude.run.trial import make_runner

OPS = build_jde_ops(np.float64, "cpu")
KEY = seed_key(5)


def test_parameters_are_kept_or_redrawn_as_brest_et_al():
    NP, D, g, i = 10, 7, 3, 4
    base = 4 + 2 * D
    assert OPS.counter(g, i, 0, NP, D) == (g * NP + i) * (base + JDE_SLOTS)
    # tau = 0: never redrawn; tau = 1: always F = 0.1 + 0.9 U, CR = U, from jDE's own slots
    assert OPS.new_params(KEY, g, i, NP, D, 0.5, 0.9, 0.0, 0.0, 0.1, 0.9) == (0.5, 0.9)
    F, CR = OPS.new_params(KEY, g, i, NP, D, 0.5, 0.9, 1.0, 1.0, 0.1, 0.9)
    u = OPS.uniform(KEY, OPS.counter(g, i, base + 1, NP, D))
    assert F == pytest.approx(0.1 + 0.9 * u, rel=1e-15, abs=0)  # one rounding (an FMA)
    assert CR == OPS.uniform(KEY, OPS.counter(g, i, base + 3, NP, D))
    # with tau = 0.1 about one individual in ten redraws F
    redrawn = np.mean([OPS.new_params(KEY, g, k, 1000, D, 0.5, 0.9, 0.1, 0.1, 0.1, 0.9)[0] != 0.5
                       for k in range(1000)])
    assert 0.07 < redrawn < 0.13


@pytest.mark.parametrize("NP", [4, 5, 10, 50])
def test_displacement_indices_are_distinct_and_in_range(NP):
    D = 6
    for g in range(1, 20):
        for i in range(NP):
            r1, r2, r3, jrand = OPS.pick_displacement(KEY, g, i, NP, D)
            assert len({i, r1, r2, r3}) == 4 and max(r1, r2, r3) < NP and 0 <= jrand < D
    if NP == 4:  # one displacement of 1 each: the next three individuals
        assert OPS.pick_displacement(KEY, 1, 2, 4, D)[:3] == (3, 0, 1)


@pytest.mark.parametrize("change,msg", [({"tau1": 1.5}, "tau1 must"), ({"tau2": -0.1}, "tau2 must"),
                                        ({"index_scheme": "lottery"}, "unknown index_scheme"),
                                        ({"F_lower": 0.0}, "F_lower must")])
def test_bad_jde_parameters_are_rejected(change, msg):
    with pytest.raises(InvalidInputError, match=msg):
        JDEParams(popsize=10, **change)


def test_winners_keep_their_parameters_and_they_adapt():
    runner = make_runner("jde", "sequential", "F05", 10, 20, 4000)
    runner.run(3)
    pop, fit, Fs, CRs = runner.population()
    assert Fs.min() >= 0.1 and Fs.max() <= 1.0 and CRs.min() >= 0.0 and CRs.max() <= 1.0
    assert (Fs != 0.5).any() and (CRs != 0.9).any()  # 199 generations: some redraws won
    assert runner.params.CR == 0.9 and runner.params.F == 0.5  # jDE's initial values by default


def test_algorithm_parameters_reach_the_algorithm_and_the_result_row():
    from gpude.run.rows import trial_row

    r = run_trial(algorithm="jde", implementation="sequential", function="Q01", dim=10, popsize=8,
                  max_fes=80, seed=1, tau1=0.3, index_scheme="displacement")
    assert r.params.tau1 == 0.3 and r.params.index_scheme == "displacement"
    row = trial_row(r, 0, 0.0)
    assert '"tau1": 0.3' in row["params"] and '"index_scheme": "displacement"' in row["params"]


@pytest.mark.cudasim
@pytest.mark.parametrize("scheme", ["uniform", "displacement"])
def test_cujde_makes_the_decisions_of_the_cpu_reference(scheme):
    kw = dict(function="Q03", dim=10, popsize=8, max_fes=8 * 6, index_scheme=scheme, tau1=0.5, tau2=0.5)
    cpu = make_runner("jde", "sequential", **kw)
    gpu = make_runner("jde", "cujde", **kw)
    a, b = cpu.run(9), gpu.run(9)
    np.testing.assert_allclose(b.trace["best_error"], a.trace["best_error"], rtol=1e-9)
    pa, pb = cpu.population(), gpu.population()
    np.testing.assert_allclose(pb[0], pa[0], rtol=1e-12)
    np.testing.assert_array_equal(pb[2], pa[2])  # per-individual F
    np.testing.assert_array_equal(pb[3], pa[3])  # per-individual CR
