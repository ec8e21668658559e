"""The 20 functions of Nashed et al. (PPSN 2012, Table 3) as N00..N19.

Each function is checked against a plain-numpy transcription of the formula that
docs/functions.md fixes (written here from the formulas, not from gpude's code), at its
documented minimizer, on the CUDA evaluator (simulator) against the CPU one, and N07/N17 against
the original CEC 2005 formulas on the official data files.
"""

import io
import math
import os
from pathlib import Path

import numpy as np
import pytest

from gpude import cecdata
from gpude.core.errors import UnknownFunctionError, UnsupportedDimensionError
from gpude.functions import get_function, list_functions
from gpude.functions.suites import FUNCTIONS

NASHED = [f"N{i:02d}" for i in range(20)]
S206, S213 = "schwefel_206_data.txt", "schwefel_213_data.txt"
# the organisers' CEC 2005 input data where GPUDE_CEC_OFFICIAL names a folder of it (tests/test_cecdata.py)
OFFICIAL_2005 = (Path(os.environ["GPUDE_CEC_OFFICIAL"]) / "cec2005" / "input_data"
                 if os.environ.get("GPUDE_CEC_OFFICIAL") else None)
HAVE_OFFICIAL = OFFICIAL_2005 is not None and all((OFFICIAL_2005 / name).is_file() for name in (S206, S213))
NO_OFFICIAL = "no official CEC 2005 Schwefel data (set GPUDE_CEC_OFFICIAL to a folder with them)"

BOXES = {
    "N00": 100, "N01": 100, "N02": 1, "N03": 1, "N04": 10, "N05": 10, "N06": 100, "N07": 100,
    "N08": 10, "N09": 5.12, "N10": 500, "N11": 1000, "N12": 600, "N13": 100, "N14": 32,
    "N15": 5.12, "N16": 100, "N17": math.pi, "N18": 10, "N19": 10,
}


def _data(name: str) -> np.ndarray:
    """An official CEC 2005 file where available, else the project's copy (parsed with numpy)."""
    if not HAVE_OFFICIAL:
        return np.loadtxt(io.BytesIO(cecdata.read_bytes(f"cec2005/{name}")), ndmin=2)
    return np.loadtxt(OFFICIAL_2005 / name, ndmin=2)


def schwefel_26(x):
    """CEC 2005 F5 as defined: max_i |A_i x - B_i|, B_i = A_i o, with o = 0."""
    n = len(x)
    A = _data(S206)[1:1 + n, :n]
    o = np.zeros(n)
    return np.max(np.abs(A @ x - A @ o))


def schwefel_213(x):
    """CEC 2005 F12 as defined: sum_i (A_i - B_i(x))^2 with alpha = 0."""
    n = len(x)
    data = _data(S213)
    a, b, alpha = data[:n, :n], data[100:100 + n, :n], np.zeros(n)
    A = a @ np.sin(alpha) + b @ np.cos(alpha)
    B = a @ np.sin(x) + b @ np.cos(x)
    return np.sum((A - B) ** 2)


def reference(fid: str, x) -> float:
    """Table 3 as docs/functions.md reads it, in plain numpy."""
    x = np.asarray(x, dtype=np.float64)
    n = len(x)
    i = np.arange(n)
    nxt = np.roll(x, -1)  # x_{i+1}, wrapping x_n = x_0
    if fid == "N00":
        return np.sum(x**2)
    if fid == "N01":
        return np.sum(1e6 ** (i / (n - 1)) * x**2)
    if fid == "N02":
        return np.sum((i + 1) * x**2)
    if fid == "N03":
        return np.sum((i + 1) ** 2 * x**2)
    if fid == "N04":
        return np.sum(np.abs(x)) + np.prod(np.abs(x))
    if fid == "N05":
        s = np.sum(0.5 * (i + 1) * x)
        return np.sum(x**2) + s**2 + s**4
    if fid == "N06":
        return sum(np.sum(x[: k + 1]) ** 2 for k in range(n))
    if fid == "N07":
        return schwefel_26(x)
    if fid == "N08":
        return (x[0] - 1) ** 2 + sum(k * (2 * x[k] ** 2 - x[k - 1]) ** 2 for k in range(1, n))
    if fid == "N09":
        return np.sum(x**2 - 10 * np.cos(2 * np.pi * x) + 10)
    if fid == "N10":
        return 418.9828872724338 * n - np.sum(x * np.sin(np.sqrt(np.abs(x))))
    if fid == "N11":
        k = np.arange(1, 33)[:, None]
        t = 2.0**k * x
        return np.prod(1 + (i + 1) * np.sum(np.abs(t - np.round(t)) * 2.0**-k, axis=0)) - 1
    if fid == "N12":
        return np.sum(x**2) / 4000 - np.prod(np.cos(x / np.sqrt(i + 1))) + 1
    if fid == "N13":
        z = x + 1
        return np.sum(100 * (z[:-1] ** 2 - z[1:]) ** 2 + (z[:-1] - 1) ** 2)
    if fid == "N14":
        return (-20 * np.exp(-0.2 * np.sqrt(np.mean(x**2))) - np.exp(np.mean(np.cos(2 * np.pi * x)))
                + 20 + np.e)
    if fid == "N15":
        z, zn = x + 1, nxt + 1
        r = 100 * (z**2 - zn) ** 2 + (z - 1) ** 2
        return np.sum(r**2 / 4000 - np.cos(r) + 1)
    if fid == "N16":
        s = x**2 + nxt**2
        return np.sum(0.5 + (np.sin(np.sqrt(s)) ** 2 - 0.5) / (1 + 0.0001 * s))
    if fid == "N17":
        return schwefel_213(x)
    if fid == "N18":
        r = np.sqrt(np.sum(x**2))
        return 1 - np.cos(2 * np.pi * r) + 0.1 * r
    if fid == "N19":
        y = 1 + x / 4
        return (np.sin(np.pi * y[0]) ** 2
                + np.sum((y[:-1] - 1) ** 2 * (1 + 10 * np.sin(np.pi * y[:-1] + 1) ** 2))
                + (y[-1] - 1) ** 2 * (1 + np.sin(2 * np.pi * y[-1]) ** 2))
    raise KeyError(fid)


def _points(fid, dim, n, seed):
    r = BOXES[fid]
    return np.random.default_rng(seed).uniform(-r, r, (n, dim))


def test_the_suite_and_its_boxes():
    assert list_functions("nashed") == NASHED
    for fid in NASHED:
        d = FUNCTIONS[fid]
        assert d.suite == "nashed" and d.bias == 0.0 and d.dims is None
        assert (d.lower, d.upper) == (-BOXES[fid], BOXES[fid]), fid
        f = get_function(fid, 3)
        assert not f.program.shift.any()  # unshifted: o = 0
        assert f.bias == 0.0


@pytest.mark.parametrize("fid", NASHED)
def test_hand_computed_value_at_small_dim(fid):
    x = {2: np.array([0.7, -0.45]), 3: np.array([0.3, -0.7, 0.55])}
    for dim in (2, 3):
        pt = x[dim] * (BOXES[fid] / 2.3 if BOXES[fid] > 1 else 1)
        got = get_function(fid, dim).evaluate(pt)
        assert got == pytest.approx(reference(fid, pt), rel=1e-13, abs=1e-13), (fid, dim)
        assert got > 1e-6  # a non-trivial point


def test_a_few_values_written_out_by_hand():
    assert get_function("N02", 2).evaluate([1.0, 1.0]) == 3.0  # 1*1 + 2*1
    assert get_function("N03", 3).evaluate([1.0, 1.0, 1.0]) == 14.0  # 1 + 4 + 9
    assert get_function("N04", 2).evaluate([-2.0, 3.0]) == 11.0  # 5 + 6
    assert get_function("N05", 2).evaluate([1.0, 2.0]) == 50.3125  # 5 + 2.5^2 + 2.5^4
    assert get_function("N06", 3).evaluate([1.0, 2.0, 3.0]) == 1 + 9 + 36
    assert get_function("N08", 2).evaluate([0.0, 0.0]) == 1.0  # (0 - 1)^2
    assert get_function("N08", 3).evaluate([2.0, 1.0, 1.0]) == 3.0  # 1 + 1*(2-2)^2 + 2*(2-1)^2
    assert get_function("N13", 2).evaluate([0.0, -1.0]) == 100.0  # z = (1, 0): 100 (1 - 0)^2 + 0
    assert get_function("N18", 2).evaluate([3.0, 4.0]) == pytest.approx(0.5, abs=1e-12)
    # N07 at e_1: max_i |A_i1|, the largest |entry| of the first column of A
    A = _data(S206)[1:3, :2]
    assert get_function("N07", 2).evaluate([1.0, 0.0]) == np.max(np.abs(A[:, 0]))


def minimizer(fid, dim):
    if fid == "N08":  # x_0 = 1, x_i = sqrt(x_{i-1} / 2): every term of the printed sum vanishes
        x = np.ones(dim)
        for k in range(1, dim):
            x[k] = math.sqrt(x[k - 1] / 2)
        return x
    if fid == "N10":
        return np.full(dim, 420.9687462275036)
    return np.zeros(dim)


@pytest.mark.parametrize("fid", NASHED)
def test_zero_at_the_documented_minimizer(fid):
    for dim in (2, 3, 10, 30):
        f = get_function(fid, dim)
        x = minimizer(fid, dim)
        np.testing.assert_allclose(f.optimum, x, rtol=1e-15, atol=0)
        assert reference(fid, x) == pytest.approx(0.0, abs=1e-12 * max(1.0, 420.0 * dim * (fid == "N10")))
        got = f.evaluate(x)
        tol = 2e-13 * dim if fid == "N10" else 1e-12  # 418.98 n - sum(...) cancels
        assert abs(got) <= tol, (fid, dim, got)
        assert f.evaluate(_points(fid, dim, 4, 0)).min() > 0.0


def test_dixon_price_printed_minimum_is_not_the_origin():
    f = get_function("N08", 10)
    assert f.evaluate(np.zeros(10)) == 1.0
    x = f.optimum
    assert x[0] == 1.0 and x[1] == pytest.approx(math.sqrt(0.5))
    # a local search from random points finds nothing below 0 near x*
    rng = np.random.default_rng(7)
    assert (f.evaluate(x + rng.normal(0, 1e-3, (200, 10))) > 0).all()


def test_schwefel_226_uses_the_exact_constant():
    # with the printed 418.9829 the minimum would be 1.27e-5 per dimension
    f = get_function("N10", 10)
    assert abs(f.evaluate(f.optimum)) < 1e-11
    assert 418.9829 * 10 - (418.9828872724338 * 10) == pytest.approx(1.27e-4, rel=1e-2)


@pytest.mark.parametrize("dim", [10, 30])
def test_cpu_matches_the_formulas_at_larger_dims(dim):
    for fid in NASHED:
        X = _points(fid, dim, 5, dim)
        got = get_function(fid, dim).evaluate(X)
        want = np.array([reference(fid, x) for x in X])
        np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-12, err_msg=fid)


@pytest.mark.parametrize("fid", ["N07", "N17"])
@pytest.mark.parametrize("dim", [2, 10, 50, 100])
def test_schwefel_26_213_against_the_official_formulas(fid, dim):
    if not HAVE_OFFICIAL:
        pytest.skip(NO_OFFICIAL)
    X = _points(fid, dim, 3, 11)
    got = get_function(fid, dim).evaluate(X)
    want = [schwefel_26(x) if fid == "N07" else schwefel_213(x) for x in X]
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_project_data_equal_official_schwefel_files():
    if not HAVE_OFFICIAL:
        pytest.skip(NO_OFFICIAL)
    for name in (S206, S213):
        np.testing.assert_array_equal(cecdata.load_array(f"cec2005/{name}"),
                                      np.loadtxt(OFFICIAL_2005 / name, ndmin=2))


def test_linear_stages():
    p6 = get_function("N06", 4).program
    np.testing.assert_array_equal(p6.rot[0], np.tril(np.ones((4, 4))))
    p17 = get_function("N17", 3).program
    assert p17.rot.shape == (1, 3, 6) and p17.width == 6
    data = cecdata.load_array("cec2005/schwefel_213_data.txt")
    np.testing.assert_array_equal(p17.rot[0], np.hstack([-data[:3, :3], data[100:103, :3]]))


@pytest.mark.cudasim
@pytest.mark.parametrize("dim", [10, 30])
def test_gpu_matches_cpu(dim):
    from gpude.functions import gpu

    # D = 10: the papers' layout (16 threads), a random point and x*; D = 30: 8 threads striding
    # over the coordinates (the simulator's cost grows with the threads), two random points.
    threads = None if dim == 10 else 8
    for fid in NASHED:
        f = get_function(fid, dim)
        X = _points(fid, dim, 2, 100 + dim)
        if dim == 10:
            X[1] = f.optimum
        got = gpu.evaluate(f.program, X, threads=threads)
        np.testing.assert_allclose(got, f.evaluate(X), rtol=1e-11, atol=1e-11, err_msg=fid)


@pytest.mark.cudasim
def test_gpu_block_layouts_and_buffers():
    from gpude.functions import gpu

    f17 = get_function("N17", 5)
    fn = gpu.compile_function(f17.program)
    assert fn.buffer_size == 10  # the 2 D trigonometric features
    assert fn.shared_bytes == (2 * 10 + 4 * 8) * 8
    assert gpu.compile_function(get_function("N07", 5).program).buffer_size == 5
    # fewer threads than coordinates (strided loops) and the max reduction across threads
    X = _points("N07", 5, 3, 3)
    for fid in ("N07", "N17", "N04", "N11"):
        f = get_function(fid, 5)
        np.testing.assert_allclose(gpu.evaluate(f.program, X % BOXES[fid], threads=2),
                                   f.evaluate(X % BOXES[fid]), rtol=1e-12, err_msg=fid)


def test_unsupported_dims_and_unknown_ids():
    for fid in ("N07", "N17"):
        assert get_function(fid, 100).dim == 100
        with pytest.raises(UnsupportedDimensionError,
                           match=rf"{fid} is not available at dim=101; supported dimensions: "
                                 r"any integer from 2 to 100 \(its data matrix.*100 wide"):
            get_function(fid, 101)
    assert get_function("N00", 1000).dim == 1000
    for bad in (1, 0, -3, 2.0, "10", True):
        with pytest.raises(UnsupportedDimensionError, match="supported dimensions: any integer"):
            get_function("N03", bad)
    with pytest.raises(UnknownFunctionError, match=r"unknown function 'N20'.*N00.*N19"):
        get_function("N20", 10)
    # the CEC functions keep their own message
    with pytest.raises(UnsupportedDimensionError, match=r"supported dimensions: 10, 30, 50, 100 "
                                                        r"\(the dimensions with official CEC data\)"):
        get_function("F01", 2)

