"""Large-scale functions (L01..L06, C01..C20): against the official CEC 2010 values, hand-computed
values, each other (CPU = GPU), and the evaluator's streaming layout (grids smaller than D)."""

import math

import numpy as np
import pytest

from gpude.core.errors import UnknownFunctionError, UnsupportedDimensionError
from gpude.functions import cec2010, get_function, list_functions

# F(0) by the official C++ code (qzcwx/CEC2010SS-LSGO-Benchmarks-CPP @ cbcb14f): D = 1,000 and D = 100,000
OFFICIAL = {
    "C01": (2.07125897729136597e11, 2.11138514182130898e13),
    "C02": (1.72759215611532818e04, 1.73010226172597241e06),
    "C03": (2.11339607697580227e01, 2.10842274756082624e01),
    "C04": (9.99743783363079000e15, 3.41274392189446850e15),
    "C06": (2.10094891721970700e07, 2.07523892823095992e07),
    "C08": (6.99278408479692720e16, 5.51775529220423120e16),
    "C13": (8.40630760158848145e11, 7.86468503953872344e13),
    "C18": (1.62566570780771387e12, 1.57576148859582719e14),
    "C20": (1.66560096999270923e12, 1.60872275573356875e14),
}
LARGE = list_functions("lastra") + list_functions("cec2010")


@pytest.mark.parametrize("fid", list(OFFICIAL))
def test_official_values_at_zero_d1000(fid):
    f = get_function(fid, 1000)
    assert f.evaluate(np.zeros(1000)) == pytest.approx(OFFICIAL[fid][0], rel=1e-12)


@pytest.mark.parametrize("fid", ["C01", "C04", "C06", "C13", "C18", "C20"])
def test_official_values_at_zero_d100000(fid):
    f = get_function(fid, 100_000)
    assert f.evaluate(np.zeros(100_000)) == pytest.approx(OFFICIAL[fid][1], rel=1e-12)


@pytest.mark.parametrize("fid", list_functions("cec2010"))
def test_cec2010_matches_the_numpy_reference_at_random_points(fid):
    f = get_function(fid, 500)
    X = np.random.default_rng(5).uniform(f.lower, f.upper, (3, 500))
    want = cec2010.reference_value(f.definition.cec_id, X)
    np.testing.assert_allclose(f.evaluate(X), want, rtol=1e-12)


def _lastra_by_hand(code, z):
    i = np.arange(1, z.size + 1)
    g = float(np.sum(z * z))
    return {
        "L01": float(np.sum(z * z - 10 * np.cos(2 * np.pi * z) + 10)),
        "L02": g / 4000 - float(np.prod(np.cos(z / np.sqrt(i)))) + 1,
        "L03": 1 - math.cos(2 * math.pi * math.sqrt(g)) + 0.1 * math.sqrt(g),
        "L04": 1e6 * z[0] ** 2 + float(np.sum(z[1:] ** 2)),
        "L05": float(np.sum(i * z * z)),
        "L06": float(np.sum(np.cumsum(z) ** 2)),
    }[code]


@pytest.mark.parametrize("fid", list_functions("lastra"))
def test_lastra_functions_by_their_formulas(fid):
    f = get_function(fid, 37)
    x = np.random.default_rng(2).uniform(-1, 1, 37)
    z = x - f.optimum
    assert f.evaluate(x) == pytest.approx(_lastra_by_hand(fid, z), rel=1e-12)
    assert f.evaluate(f.optimum) == 0.0
    assert (f.lower, f.upper, f.bias) == (-1.0, 1.0, -330.0)


def test_lastra_shift_is_a_prefix_and_inside_the_box():
    a, b = get_function("L01", 10).optimum, get_function("L01", 1000).optimum
    np.testing.assert_array_equal(a, b[:10])
    assert -1 <= b.min() < -0.9 and 0.9 < b.max() <= 1 and abs(b.mean()) < 0.1


@pytest.mark.parametrize("fid", list_functions("cec2010"))
def test_cec2010_optimum_is_zero(fid):
    f = get_function(fid, 200)
    assert abs(f.evaluate(f.optimum)) < 1e-9
    assert np.all(f.optimum >= f.lower) and np.all(f.optimum <= f.upper)


@pytest.mark.parametrize("fid", LARGE)
def test_gpu_equals_cpu_with_grids_smaller_than_d(fid):
    # 2 blocks of 8 threads stride over 200 coordinates; Schwefel 1.2 scans 2 segments of 13 tiles
    from numba import cuda

    f = get_function(fid, 200)
    X = np.random.default_rng(3).uniform(f.lower, f.upper, (3, 200))
    ev = f.gpu_evaluator(np.float64, threads=8, blocks=2)
    d_X, out = cuda.to_device(X), cuda.to_device(np.full(4, -1.0))
    ev.launch(d_X, out, 1, 2)  # rows 1 and 2 only
    got = out.copy_to_host()
    assert got[0] == -1.0 and got[3] == -1.0
    np.testing.assert_allclose(got[1:3], f.evaluate(X[1:]), rtol=1e-12)


def test_a_closed_gate_evaluates_nothing():
    from numba import cuda

    f = get_function("L06", 100)
    ev = f.gpu_evaluator(np.float64, threads=8, blocks=2)
    out = cuda.to_device(np.full(1, -1.0))
    ev.launch(cuda.to_device(np.zeros((1, 100))), out, 0, 1, gate=cuda.to_device(np.zeros(1, np.int32)))
    assert out.copy_to_host()[0] == -1.0


def test_float32_rows_are_summed_in_float64():
    f = get_function("L05", 3000)
    x = np.random.default_rng(4).uniform(-1, 1, 3000)
    x32 = x.astype(np.float32)
    want = f.evaluate(x32.astype(np.float64))
    assert f.evaluate(x32, dtype="float32") == pytest.approx(want, rel=1e-7)


def test_bad_dimensions_and_names_are_explained():
    with pytest.raises(UnsupportedDimensionError, match="multiple of 100"):
        get_function("C02", 150)
    with pytest.raises(UnsupportedDimensionError, match="integer >= 2"):
        get_function("L01", 1)
    with pytest.raises(UnknownFunctionError, match="L01"):
        get_function("L07", 10)


def test_suites_list_the_large_scale_functions():
    assert list_functions("lastra") == ["L01", "L02", "L03", "L04", "L05", "L06"]
    assert list_functions("cec2010") == ["C01", "C02", "C03", "C04", "C06", "C08", "C13", "C18", "C20"]
    assert set(LARGE) <= set(list_functions("all"))


def test_permuted_rows_are_streamed_in_memory_order_where_a_term_reads_its_own_position():
    # the GPU kernels take the permutation followed by its inverse for the rotated-head kinds
    # (C04, C06, C08: gathers become coalesced reads), the permutation alone for Rosenbrock's next
    # coordinate (C13, C18) and nothing more without one (L01)
    from gpude.functions.streaming_gpu import device_permutation, memory_order

    for fid, expected in (("C04", True), ("C06", True), ("C08", True), ("C13", False), ("C18", False),
                          ("L01", False), ("C01", False)):
        f = get_function(fid, 1000)
        _, perm, has_perm, _, _ = f.evaluator_args(np.float64)
        assert memory_order(f.code, has_perm) is expected, fid
        dev = device_permutation(perm, has_perm, f.code)
        assert dev.dtype == np.int32
        if expected:
            np.testing.assert_array_equal(dev[:1000], perm)
            np.testing.assert_array_equal(dev[1000 + perm], np.arange(1000))  # inv[perm[k]] = k
        else:
            np.testing.assert_array_equal(dev, perm)


def test_rosenbrocks_next_coordinate_takes_its_shift_in_position_order():
    # C13, C18 (Rosenbrock's next coordinate, permuted): the kernels go in position order, so o is
    # handed to them as o[perm] (position k's shift at k: read in order, not gathered); C20 has no
    # permutation, the other kinds keep o as it is
    from gpude.functions.streaming_gpu import device_shift, shift_in_position_order

    for fid, expected in (("C13", True), ("C18", True), ("C20", False), ("C04", False), ("C01", False),
                          ("L01", False)):
        f = get_function(fid, 1000)
        o, perm, has_perm, _, _ = f.evaluator_args(np.float64)
        assert shift_in_position_order(f.code, has_perm) is expected, fid
        dev = device_shift(o, perm, has_perm, f.code)
        np.testing.assert_array_equal(dev, o[perm] if expected else o)
        if expected:
            assert dev.flags.c_contiguous and not np.array_equal(dev, o)
