"""DE/rand/1/bin operators and the counter-based RNG, on tiny hand-computed cases."""

from fractions import Fraction

import numpy as np
import pytest
from numba import cuda
from scipy import stats

from gpude.algorithms.de import CLIP, MIDPOINT, RESAMPLE, DEParams, build_de_ops
from gpude.core.errors import InvalidInputError
from gpude.core.rng import build_rng, seed_key, trial_seed

OPS = build_de_ops(np.float64, "cpu")
RNG = build_rng("cpu")
KEY = seed_key(7)


def test_mutant_is_x1_plus_F_times_difference():
    assert OPS.mutant(0.5, 1.0, 3.0, 5.0) == 0.0
    assert OPS.mutant(0.8, -2.0, 10.0, 0.0) == 6.0


def test_mutant_rounds_once_like_a_gpu_fma():
    # x1 + F (x2 - x3): the difference is rounded, then F * d + x1 is rounded once (an FMA),
    # which is what a CUDA compiler emits, so CPU and GPU agree bit for bit
    F, x1, x2, x3 = 0.7, 0.1, 12.3, -45.6
    d = x2 - x3
    assert OPS.mutant(F, x1, x2, x3) == float(Fraction(F) * Fraction(d) + Fraction(x1))


def test_crossover_takes_everything_at_CR_1_and_only_jrand_at_CR_0():
    dim = 7
    assert all(OPS.crossover_takes(KEY, 3, 2, j, 10, dim, 4, 1.0) for j in range(dim))
    assert [OPS.crossover_takes(KEY, 3, 2, j, 10, dim, 4, 0.0) for j in range(dim)] == [
        j == 4 for j in range(dim)]


def test_crossover_rate_is_respected_statistically():
    dim, takes = 50, 0
    for g in range(1, 201):
        takes += sum(OPS.crossover_takes(KEY, g, 0, j, 10, dim, -1, 0.3) for j in range(dim))
    assert abs(takes / (200 * dim) - 0.3) < 0.02


def test_repair_modes():
    # inside the box nothing changes
    assert OPS.repair(KEY, 1, 0, 0, 10, 5, 42.0, 3.0, -100.0, 100.0, RESAMPLE) == 42.0
    assert OPS.repair(KEY, 1, 0, 0, 10, 5, 150.0, 20.0, -100.0, 100.0, CLIP) == 100.0
    assert OPS.repair(KEY, 1, 0, 0, 10, 5, -150.0, 20.0, -100.0, 100.0, CLIP) == -100.0
    assert OPS.repair(KEY, 1, 0, 0, 10, 5, -150.0, 20.0, -100.0, 100.0, MIDPOINT) == -40.0
    assert OPS.repair(KEY, 1, 0, 0, 10, 5, 150.0, 20.0, -100.0, 100.0, MIDPOINT) == 60.0
    # resample: uniform in the box from the coordinate's own repair slot 4 + D + j
    u = RNG.uniform(KEY, OPS.counter(1, 0, 4 + 5 + 0, 10, 5))
    want = float(Fraction(u) * 200 - 100)  # lower + u (upper - lower), rounded once (an FMA)
    assert OPS.repair(KEY, 1, 0, 0, 10, 5, 150.0, 20.0, -100.0, 100.0, RESAMPLE) == want


def test_trial_value_composes_crossover_mutation_and_repair():
    # j == jrand always takes the mutant, here out of bounds and clipped
    assert OPS.trial_value(KEY, 1, 0, 2, 10, 5, 2, 0.5, 0.0, 7.0, 90.0, 100.0, 0.0, -100.0, 100.0, CLIP) == 100.0
    # CR = 0 and j != jrand keeps the target's value
    assert OPS.trial_value(KEY, 1, 0, 1, 10, 5, 2, 0.5, 0.0, 7.0, 90.0, 100.0, 0.0, -100.0, 100.0, CLIP) == 7.0


@pytest.mark.parametrize("popsize", [4, 5, 9])
def test_pick_gives_distinct_partners_uniformly(popsize):
    counts = {}
    n = 6000
    for g in range(1, n + 1):
        r1, r2, r3, jrand = OPS.pick(KEY, g, 1, popsize, 3)
        assert len({1, r1, r2, r3}) == 4 and max(r1, r2, r3) < popsize and 0 <= jrand < 3
        counts[(r1, r2, r3)] = counts.get((r1, r2, r3), 0) + 1
    m = popsize - 1
    assert len(counts) == m * (m - 1) * (m - 2)  # every ordered triple occurs
    assert stats.chisquare(list(counts.values())).pvalue > 1e-4


def test_init_values_fill_the_box_uniformly():
    x = np.array([OPS.init_value(KEY, i, j, 50, 20, -100.0, 100.0) for i in range(50) for j in range(20)])
    assert x.min() >= -100.0 and x.max() < 100.0
    assert stats.kstest((x + 100.0) / 200.0, "uniform").pvalue > 1e-4


def test_seed_key_validates_and_separates_seeds():
    assert seed_key(0) != seed_key(1)
    for bad in (-1, 1.5, "3", True):
        with pytest.raises(ValueError, match="non-negative integer"):
            seed_key(bad)


def test_trial_seeds_depend_on_trial_coordinates_only():
    seeds = {trial_seed(7, "F01", 100, 250, t) for t in range(30)}
    assert len(seeds) == 30 and all(0 <= s < 2**63 for s in seeds)
    assert trial_seed(7, "F01", 100, 250, 0) == trial_seed(7, "F01", 100, 250, 0)
    assert trial_seed(7, "F01", 100, 250, 0) != trial_seed(8, "F01", 100, 250, 0)
    assert trial_seed(7, "F01", 100, 250, 0) != trial_seed(7, "F02", 100, 250, 0)


@pytest.mark.cudasim
def test_rng_is_identical_on_cpu_and_cuda():
    uniform = build_rng("cuda").uniform  # a device function (a namespace can't be typed in a kernel)

    @cuda.jit
    def draws(key, out):
        t = cuda.grid(1)
        if t < out.shape[0]:
            out[t] = uniform(key, t * 7919)

    out = np.zeros(64)
    draws[2, 32](KEY, out)
    want = np.array([RNG.uniform(KEY, t * 7919) for t in range(64)])
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("kwargs,msg", [
    ({"popsize": 3}, "popsize"), ({"popsize": 10, "F": 0.0}, "F must"), ({"popsize": 10, "F": -1}, "F must"),
    ({"popsize": 10, "CR": 1.5}, "CR must"), ({"popsize": 10, "CR": -0.1}, "CR must"),
    ({"popsize": 10, "bounds": "wrap"}, "unknown bound mode 'wrap'"),
    ({"popsize": 10, "max_fes": 5}, "max_fes"), ({"popsize": 10, "dtype": "float16"}, "dtype"),
])
def test_bad_parameters_are_rejected(kwargs, msg):
    with pytest.raises(InvalidInputError, match=msg):
        DEParams(**kwargs)
