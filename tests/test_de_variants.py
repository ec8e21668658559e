"""DE's mutations (rand1, best1, current_to_best1) x crossovers (bin, exp), Nashed et al. 2012:
the operators on hand-made cases, the CPU DE, and the two-kernel GPU DE against it."""

import numpy as np
import pytest

from gpude.algorithms.de import BEST1, BIN, CLIP, CURRENT_TO_BEST1, EXP, RAND1, DEParams, build_de_ops
from gpude.core.errors import InvalidInputError
from gpude.core.rng import build_rng, seed_key
from gpude.functions import get_function
from gpude.implementations.cpu_de import build_cpu_de
from gpude.run.trial import make_runner

OPS = build_de_ops(np.float64, "cpu")
RNG = build_rng("cpu")
KEY = seed_key(7)
FUNCTION, DIM, NP, SEED = "Q04", 10, 6, 11
COMBOS = [(m, c) for m in ("rand1", "best1", "current_to_best1") for c in ("bin", "exp")]


def draws(g, i, popsize, dim):
    """The crossover draws of (g, i): slots 4 .. 4 + D - 1."""
    return [RNG.uniform(KEY, OPS.counter(g, i, 4 + k, popsize, dim)) for k in range(dim)]


# --- exponential crossover -------------------------------------------------------------------

def test_exp_crossover_copies_a_cyclic_run_from_jrand():
    popsize, dim, i = 10, 5, 2
    # a generation whose first two draws lie below the third: with CR between them, L = 3
    for g in range(1, 1000):
        u = draws(g, i, popsize, dim)
        if max(u[0], u[1]) < u[2]:
            break
    CR = (max(u[0], u[1]) + u[2]) / 2  # draws 0 and 1 succeed, draw 2 fails: L = 1 + 2
    assert OPS.exp_length(KEY, g, i, popsize, dim, CR) == 3
    # from jrand = 3: coordinates 3, 4 and (wrapping around) 0
    assert [OPS.exp_takes(KEY, g, i, j, popsize, dim, 3, CR) for j in range(dim)] == [
        True, False, False, True, True]
    # from jrand = 0: 0, 1, 2
    assert [OPS.exp_takes(KEY, g, i, j, popsize, dim, 0, CR) for j in range(dim)] == [
        True, True, True, False, False]
    # the dispatcher picks exp for EXP and the binomial test for BIN
    assert [OPS.takes_of(EXP, KEY, g, i, j, popsize, dim, 3, CR) for j in range(dim)] == [
        True, False, False, True, True]
    assert [OPS.takes_of(BIN, KEY, g, i, j, popsize, dim, 3, CR) for j in range(dim)] == [
        OPS.crossover_takes(KEY, g, i, j, popsize, dim, 3, CR) for j in range(dim)]


def test_exp_crossover_first_failure_stops_the_run():
    popsize, dim, i = 10, 5, 1
    for g in range(1, 1000):  # draw 0 fails, draw 1 would succeed
        u = draws(g, i, popsize, dim)
        if u[1] < u[0]:
            break
    CR = (u[0] + u[1]) / 2
    assert OPS.exp_length(KEY, g, i, popsize, dim, CR) == 1
    assert [OPS.exp_takes(KEY, g, i, j, popsize, dim, 4, CR) for j in range(dim)] == [
        j == 4 for j in range(dim)]


def test_exp_crossover_extremes():
    popsize, dim = 10, 5
    # CR = 1: L = D (capped; the D - 1 draws all succeed), every coordinate
    assert OPS.exp_length(KEY, 3, 2, popsize, dim, 1.0) == dim
    assert all(OPS.exp_takes(KEY, 3, 2, j, popsize, dim, 2, 1.0) for j in range(dim))
    # CR = 0: L = 1, only jrand
    assert OPS.exp_length(KEY, 3, 2, popsize, dim, 0.0) == 1
    assert [OPS.exp_takes(KEY, 3, 2, j, popsize, dim, 2, 0.0) for j in range(dim)] == [
        j == 2 for j in range(dim)]


def test_exp_length_matches_the_copied_coordinates():
    popsize, dim = 10, 7
    for g in range(1, 200):
        L = OPS.exp_length(KEY, g, 0, popsize, dim, 0.6)
        jrand = g % dim
        copied = {j for j in range(dim) if OPS.exp_takes(KEY, g, 0, j, popsize, dim, jrand, 0.6)}
        assert 1 <= L <= dim and copied == {(jrand + k) % dim for k in range(L)}


# --- mutations -------------------------------------------------------------------------------

def test_mutation_formulas():
    # mutant_of(mutation, F, xi, xb, x1, x2, x3)
    assert OPS.mutant_of(RAND1, 0.5, 100.0, 200.0, 1.0, 3.0, 5.0) == 0.0  # x1 + F (x2 - x3)
    assert OPS.mutant_of(BEST1, 0.5, 100.0, 2.0, 3.0, 7.0, 999.0) == 0.0  # xb + F (x1 - x2)
    # xi + F (xb - xi) + F (x1 - x2) = 4 + 2 + 1
    assert OPS.mutant_of(CURRENT_TO_BEST1, 0.5, 4.0, 8.0, 3.0, 1.0, 999.0) == 7.0
    assert OPS.mutant_of(RAND1, 0.7, 0.0, 0.0, 0.1, 12.3, -45.6) == OPS.mutant(0.7, 0.1, 12.3, -45.6)


@pytest.mark.parametrize("mutation", [RAND1, BEST1, CURRENT_TO_BEST1])
def test_cpu_trials_follow_each_mutation_on_a_hand_made_population(mutation):
    _, make_trials, _ = build_cpu_de(np.float64)
    popsize, dim, g, F = 6, 4, 5, 0.5
    pop = np.arange(popsize * dim, dtype=np.float64).reshape(popsize, dim) - 10.0  # small integers
    fit = np.array([5.0, 1.0, 3.0, 1.0, 7.0, 9.0])  # best: index 1 (tie with 3 -> the lowest)
    trials = np.full_like(pop, np.nan)
    # CR = 1 with bin: every coordinate is the mutant's; all values are exact (dyadic, small)
    make_trials(pop, fit, trials, KEY, g, F, 1.0, -100.0, 100.0, CLIP, 0, popsize, mutation, BIN)
    for i in range(popsize):
        r1, r2, r3, _ = OPS.pick(KEY, g, i, popsize, dim)
        xi, xb, x1, x2, x3 = pop[i], pop[1], pop[r1], pop[r2], pop[r3]
        want = {RAND1: x1 + F * (x2 - x3), BEST1: xb + F * (x1 - x2),
                CURRENT_TO_BEST1: xi + F * (xb - xi) + F * (x1 - x2)}[mutation]
        np.testing.assert_array_equal(trials[i], want)


def test_exp_trials_mix_mutant_and_target():
    _, make_trials, _ = build_cpu_de(np.float64)
    popsize, dim, g, F, CR = 6, 5, 3, 0.5, 0.5
    pop = np.arange(popsize * dim, dtype=np.float64).reshape(popsize, dim)
    fit = np.arange(popsize, dtype=np.float64)[::-1].copy()  # best: the last
    trials = np.full_like(pop, np.nan)
    make_trials(pop, fit, trials, KEY, g, F, CR, -100.0, 100.0, CLIP, 0, popsize, BEST1, EXP)
    for i in range(popsize):
        r1, r2, _, jrand = OPS.pick(KEY, g, i, popsize, dim)
        L = OPS.exp_length(KEY, g, i, popsize, dim, CR)
        copied = {(jrand + k) % dim for k in range(L)}
        mutant = pop[popsize - 1] + F * (pop[r1] - pop[r2])
        want = [mutant[j] if j in copied else pop[i, j] for j in range(dim)]
        np.testing.assert_array_equal(trials[i], want)


@pytest.mark.parametrize("mutation", ["best1", "current_to_best1"])
def test_best_is_the_previous_generations_best(mutation):
    runner = make_runner("de", "sequential", FUNCTION, DIM, NP, NP * 5, CR=1.0, bounds="clip",
                         mutation=mutation, crossover="bin")
    assert runner.params.mutation == mutation and runner.params.crossover == "bin"
    key, F = seed_key(SEED), runner.params.F
    runner.setup()
    runner.initialize(key)
    for g in range(1, 5):
        pop, fit = runner.pop.copy(), runner.fit.copy()
        best = int(np.argmin(fit))
        runner.generation(key, g, NP)
        for i in range(NP):
            r1, r2, _, _ = OPS.pick(key, g, i, NP, DIM)
            xi, xb, x1, x2 = pop[i], pop[best], pop[r1], pop[r2]
            v = xb + F * (x1 - x2) if mutation == "best1" else xi + F * (xb - xi) + F * (x1 - x2)
            np.testing.assert_allclose(runner.trials[i], np.clip(v, runner.lower, runner.upper),
                                       rtol=1e-14, atol=1e-12)


# --- parameters and refusals -----------------------------------------------------------------

@pytest.mark.parametrize("kwargs,msg", [
    ({"mutation": "rand2"}, "unknown mutation 'rand2'; use one of rand1, best1, current_to_best1"),
    ({"crossover": "arith"}, "unknown crossover 'arith'; use one of bin, exp"),
])
def test_bad_variants_are_rejected(kwargs, msg):
    with pytest.raises(InvalidInputError, match=msg):
        DEParams(popsize=10, **kwargs)


def test_jde_params_run_rand1_bin_only():
    from gpude.algorithms.jde import JDEParams

    JDEParams(popsize=10)
    with pytest.raises(InvalidInputError, match="rand1"):
        JDEParams(popsize=10, mutation="best1")


def _de_device_loops():
    from gpude.implementations import registry
    from gpude.implementations.device_loop import DeviceLoopImplementation

    return [e.implementation for e in registry.entries() if e.algorithm == "de"
            and issubclass(e.load(check_device=False), DeviceLoopImplementation)
            and getattr(e.load(check_device=False), "variants", "rand1/bin") != "all"]


@pytest.mark.parametrize("implementation", _de_device_loops())
def test_rand1_bin_only_implementations_refuse_other_variants(implementation):
    with pytest.raises(InvalidInputError, match=rf"'{implementation}' runs DE/rand/1/bin only.*"
                                                r"sequential, high_level, master_slave, naive_gpu, two_kernel"):
        make_runner("de", implementation, FUNCTION, DIM, NP, NP * 3, mutation="best1", crossover="exp")


@pytest.mark.parametrize("algorithm,implementation,runs_check", [
    ("de", "all_gpu", True), ("de", "ide", True), ("pso", "gpu", False), ("ss", "gpu", False)])
def test_only_des_implementations_run_des_variant_check(monkeypatch, algorithm, implementation, runs_check):
    # require_variant_support is DE's: the DE device loops run it, the shared device loop
    # (DeviceLoopImplementation.__init__, PSO's too) and scatter search's loop do not
    import gpude.algorithms.de as de
    from gpude.algorithms import params_class
    from gpude.implementations import registry

    calls = []
    monkeypatch.setattr(de, "is_default_variant", lambda params: calls.append(params) or True)
    cls = registry.get(algorithm, implementation).load(check_device=False)
    cls(get_function(FUNCTION, DIM), params_class(algorithm)(popsize=NP * 2, max_fes=NP * 20))
    assert bool(calls) == runs_check


# --- the two-kernel GPU DE -------------------------------------------------------------------

def _two_kernel(mutation, crossover, max_fes=NP * 3):
    from gpude.implementations.two_kernel import TwoKernelDE

    params = DEParams(popsize=NP, max_fes=max_fes, CR=0.5, mutation=mutation, crossover=crossover)
    return TwoKernelDE(get_function(FUNCTION, DIM), params)


@pytest.mark.cudasim
@pytest.mark.parametrize("mutation,crossover", COMBOS)
def test_two_kernel_matches_sequential(mutation, crossover):
    seq = make_runner("de", "sequential", FUNCTION, DIM, NP, NP * 3, CR=0.5, mutation=mutation,
                      crossover=crossover)
    want = seq.run(SEED)
    want_pop, want_fit = seq.population()
    gpu = _two_kernel(mutation, crossover)
    got = gpu.run(SEED)
    got_pop, got_fit = gpu.population()
    assert got.generations == want.generations == 2 and got.fes_used == want.fes_used
    np.testing.assert_allclose(got.trace["best_error"], want.trace["best_error"], rtol=1e-9)
    np.testing.assert_allclose(got_pop, want_pop, rtol=1e-12)
    np.testing.assert_allclose(got_fit, want_fit, rtol=1e-9)


@pytest.mark.cudasim
def test_two_kernel_batch_equals_lone_trials():
    gpu = _two_kernel("current_to_best1", "exp", max_fes=NP * 2 + 2)  # a last partial generation
    batch = gpu.run_batch([SEED, SEED + 1])
    batch_pops = [gpu.population(b)[0] for b in range(2)]
    for b, seed in enumerate([SEED, SEED + 1]):
        lone = gpu.run(seed)
        np.testing.assert_array_equal(batch[b].trace["best_error"], lone.trace["best_error"])
        np.testing.assert_array_equal(batch_pops[b], gpu.population(0)[0])
        assert batch[b].fes_used == lone.fes_used == NP * 2 + 2
