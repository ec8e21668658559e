"""The distance to the optimum is correctly rounded: the same bits whatever order the terms come in
and whatever the CPU's BLAS does."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from gpude.functions import get_function
from gpude.implementations.base import TrialResult
from gpude.run.rows import distance_to_optimum


def _result(function: str, dim: int, best_x: np.ndarray) -> TrialResult:
    fields = {f: None for f in TrialResult.__dataclass_fields__}
    fields.update(algorithm="de", implementation="sequential", function=function, dim=dim, popsize=8,
                  best_x=best_x, best_error=0.0, fes_used=0, generations=0, wall_time_s=0.0, hit_target=False,
                  stopped_by="budget", info={}, trace={})
    return TrialResult(**fields)


def _exact(best_x: np.ndarray, optimum: np.ndarray) -> float:
    """sqrt of the exact sum of the rounded squares, rounded once (a square root of a float is correctly
    rounded, and the sum, rounded to the nearest float first, stays within the same rounding)."""
    diff = best_x - optimum
    return math.sqrt(float(sum(Fraction(float(d * d)) for d in diff)))


@pytest.mark.parametrize("dim", [10, 100])
def test_distance_is_the_correctly_rounded_sum(dim):
    optimum = get_function("F01", dim).optimum
    rng = np.random.default_rng(dim)
    # terms of very different sizes: where the order of summation matters most
    best = optimum + rng.standard_normal(dim) * 10.0 ** rng.integers(-12, 3, dim)
    d = distance_to_optimum(_result("F01", dim, best))
    assert d == _exact(best, optimum)
