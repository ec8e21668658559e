"""``de/high_level``, the plain-Python DE: its numpy FMA against the hardware's, its draws against
gpude.core.rng's, and its trials and runs against ``de/sequential``'s, bit for bit, on a scheduling
instance, a LOP instance and benchmark functions (the common battery of test_implementations.py
runs it too: budget, seeds, bounds, bad parameters)."""

import itertools
from fractions import Fraction

import numba
import numpy as np
import pytest

from gpude.core.errors import GpudeError
from gpude.core.fma import fma_cpu, fma_numpy
from gpude.core.rng import build_rng, seed_key, uniforms
from gpude.implementations.cpu_de import build_cpu_de
from gpude.problems import LinearOrdering, TaskScheduling
from gpude.run.trial import make_runner

RNG = np.random.default_rng(3)
LOP = LinearOrdering.from_matrix(RNG.integers(0, 50, (9, 9)), name="lop9")
ETC = TaskScheduling.from_matrix(RNG.uniform(1, 100, (24, 4)), name="etc24x4")


@numba.njit
def _fma_rows(a, b, c, out):
    for k in range(a.size):
        out[k] = fma_cpu(a[k], b[k], c[k])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_numpy_fma_rounds_once_as_the_hardware_fma(dtype):
    n = 200_000
    a = (RNG.standard_normal(n) * 10.0 ** RNG.integers(-3, 4, n)).astype(dtype)
    b = RNG.standard_normal(n).astype(dtype)
    # c near -a*b: the cancellations where two roundings and one differ most
    near = (-(a.astype(np.float64) * b) * (1 + RNG.standard_normal(n) * 1e-7)).astype(dtype)
    for c in (near, RNG.standard_normal(n).astype(dtype)):
        want = np.empty(n, dtype)
        _fma_rows(a, b, c, want)
        got = fma_numpy(a, b, c, dtype)
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, want)
    assert np.count_nonzero((a * b + near).astype(dtype) != want) > n // 2  # the test can tell them apart


def test_numpy_fma_against_exact_rational_arithmetic():
    eps = np.finfo(np.float64).eps
    # (1 + eps)(1 - eps) - 1 = -eps**2: two roundings give 0; ties (1 + 2.5 eps) go to even once
    cases = [(1 + eps, 1 - eps, -1.0), (3.0, 7.0, 0.5), (1.0, 1.0 + 2 * eps, 2.0 ** -53),
             (1.0, 1.0 + eps, 2.0 ** -53), (0.1, 10.0, -1.0), (1e290, 1e-290, -1.0)]
    cases += [tuple(RNG.standard_normal(3) * 10.0 ** RNG.integers(-5, 6, 3)) for _ in range(2000)]
    a, b, c = (np.array(v) for v in zip(*cases))
    exact = [float(Fraction(x) * Fraction(y) + Fraction(z)) for x, y, z in cases]  # rounded once
    np.testing.assert_array_equal(fma_numpy(a, b, c), exact)
    assert fma_numpy(1 + eps, 1 - eps, -1.0) == -eps * eps and (1 + eps) * (1 - eps) - 1.0 == 0.0
    a32, b32, c32 = (v.astype(np.float32) for v in (a[6:], b[6:], c[6:]))
    exact32 = [_nearest_float32(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)))
               for x, y, z in zip(a32, b32, c32)]
    np.testing.assert_array_equal(fma_numpy(a32, b32, c32, np.float32), np.array(exact32, np.float32))


def _nearest_float32(r: Fraction) -> np.float32:
    """r rounded once to float32 (nearest, ties to even), by looking at the float32s around it."""
    x = np.float32(float(r))
    around = [np.nextafter(x, np.float32(-np.inf)), x, np.nextafter(x, np.float32(np.inf))]
    return min(around, key=lambda v: (abs(Fraction(float(v)) - r), int(np.array(v).view(np.int32)) & 1))


def test_numpy_draws_are_the_generators():
    rng = build_rng("cpu")
    key = seed_key(2026)
    counters = np.array([0, 1, 2, 3, 10 ** 6, 2 ** 40 + 17, 2 ** 62])
    assert list(uniforms(key, counters)) == [rng.uniform(key, int(c)) for c in counters]


def _runs(problem, dim, popsize=8, max_fes=8 * 30, seed=5, **kw):
    out = []
    for impl in ("sequential", "high_level"):
        runner = make_runner("de", impl, problem, dim, popsize, max_fes, **kw)
        out.append((runner.run(seed), runner.population()))
    return out


@pytest.mark.parametrize("problem,dim,kw", [
    (ETC, 24, {"CR": 0.1}), (LOP, 9, {}), ("F05", 10, {"CR": 0.9}), ("N09", 20, {"F": 1.5}),
    ("Q03", 10, {"dtype": "float32", "F": 0.9}),
], ids=["etc", "lop", "F05", "rastrigin", "Q03-float32"])
def test_same_run_as_sequential_bit_for_bit(problem, dim, kw):
    (a, pa), (b, pb) = _runs(problem, dim, **kw)
    assert b.implementation == "high_level"
    np.testing.assert_array_equal(b.trace["best_error"], a.trace["best_error"])
    np.testing.assert_array_equal(pb[0], pa[0])
    np.testing.assert_array_equal(pb[1], pa[1])
    assert b.fes_used == a.fes_used and b.generations == a.generations
    assert not np.array_equal(pa[0], _runs(problem, dim, seed=6, **kw)[0][1][0])  # the seed matters


@pytest.mark.parametrize("mutation,crossover,bounds",
                         list(itertools.product(["rand1", "best1", "current_to_best1"], ["bin", "exp"],
                                                ["resample", "clip", "midpoint"])))
def test_every_variant_makes_the_trials_of_sequential(mutation, crossover, bounds):
    # one generation's trials from a hand-set population, row by row against the numba operators;
    # F = 1.5 sends many mutants out of the box, so every repair mode is exercised
    popsize, dim, g = 7, 10, 3
    runner = make_runner("de", "high_level", "F01", dim, popsize, 10 * popsize, F=1.5, CR=0.6,
                         mutation=mutation, crossover=crossover, bounds=bounds)
    key = seed_key(9)
    impl = runner
    impl.setup()
    impl.initialize(key)
    impl.pop[:] = RNG.uniform(-100, 100, (popsize, dim))
    impl.fit[:] = RNG.permutation(popsize).astype(float)  # a known best for best1
    _, make_trials, _ = build_cpu_de(np.float64)
    want = np.empty_like(impl.pop)
    p = impl.params
    make_trials(impl.pop, impl.fit, want, key, g, p.F, p.CR, impl.lower, impl.upper, p.bound_mode, 0, popsize,
                p.mutation_code, p.crossover_code)
    best = impl.best_index() if mutation != "rand1" else 0
    got = np.array([impl.trial(g, i, best) for i in range(popsize)])
    np.testing.assert_array_equal(got, want)
    assert np.all(np.abs(got) <= 100.0)
    if bounds == "clip":
        assert np.any(np.abs(got) == 100.0)  # some mutants were repaired


def test_a_time_budget_ends_the_run():
    r = make_runner("de", "high_level", ETC, 24, 16, 10 ** 9, max_time_s=0.2).run(1)
    assert r.stopped_by == "time" and 0.2 <= r.wall_time_s < 1.0 and r.fes_used > 16


@pytest.mark.parametrize("kw,words", [
    ({"CR": 1.5}, "CR must lie in"), ({"F": 0.0}, "F must be"), ({"popsize": 3}, "popsize"),
    ({"bounds": "bounce"}, "unknown bound mode"), ({"function": "F99"}, "F99"), ({"dim": 7, "function": LOP},
                                                                                  "has dimension 9, not 7"),
])
def test_bad_input_gets_the_errors_of_the_other_cpu_implementations(kw, words):
    args = {"function": "F01", "dim": 10, "popsize": 8, **kw}
    function, dim, popsize = args.pop("function"), args.pop("dim"), args.pop("popsize")
    for impl in ("sequential", "high_level"):
        with pytest.raises(GpudeError, match=words):
            make_runner("de", impl, function, dim, popsize, 100, **args)
