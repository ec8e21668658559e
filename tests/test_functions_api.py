"""The public API of gpude.functions: shapes, options, bad input, the CLI."""

import math
import os
import subprocess
import sys

import numpy as np
import pytest

from gpude.cecdata import CECDataError
from gpude.core.errors import InvalidInputError, UnknownFunctionError, UnsupportedDimensionError
from gpude.functions import basic, get_function, list_functions
from gpude.functions.program import hybrid_group_sizes
from gpude.functions.suites import FUNCTIONS


def test_list_functions():
    cec = [f"F{i:02d}" for i in range(1, 11)] + ["Q01", "Q02", "Q03", "Q04"]
    nashed = [f"N{i:02d}" for i in range(20)]
    assert list_functions() == cec  # the default: the functions with official reference values
    assert list_functions("nashed") == nashed
    cec2017 = ["CEC17_F01"] + [f"CEC17_F{i:02d}" for i in range(3, 31)]
    assert list_functions("cec2017") == cec2017
    assert list_functions("all") == (cec + nashed + cec2017 + list_functions("lastra")
                                     + list_functions("cec2010"))
    assert list(FUNCTIONS) == cec + nashed + cec2017
    assert list_functions("qin_cec2005") == cec[10:]
    with pytest.raises(InvalidInputError, match="unknown suite 'cec'"):
        list_functions("cec")


def test_unknown_function_lists_available():
    with pytest.raises(UnknownFunctionError, match=r"unknown function 'F11'.*F01, F02.*Q04"):
        get_function("F11", 10)


@pytest.mark.parametrize("dim", [2, 20, 31, 0, -10, 10.0, "10", True])
def test_unsupported_dimension_lists_supported(dim):
    with pytest.raises(UnsupportedDimensionError, match=r"supported dimensions: 10, 30, 50, 100"):
        get_function("F03", dim)


def test_ids_are_case_insensitive_and_cached():
    assert get_function("f03", 10) is get_function("F03", 10)


def test_single_point_and_batch_agree():
    f = get_function("F06", 10)
    X = np.random.default_rng(0).uniform(-100, 100, (4, 10))
    batch = f.evaluate(X)
    assert batch.shape == (4,) and batch.dtype == np.float64
    assert f.evaluate(X[2]) == batch[2]
    assert isinstance(f.evaluate(X[2]), float)


def test_integer_points_are_accepted():
    f = get_function("Q01", 10)
    X = np.arange(20).reshape(2, 10)
    np.testing.assert_array_equal(f.evaluate(X), f.evaluate(X.astype(float)))


@pytest.mark.parametrize("bad", [np.zeros((3, 9)), np.zeros((3, 10, 1)), np.zeros(11), np.zeros(())])
def test_wrong_shape_is_rejected(bad):
    with pytest.raises(InvalidInputError, match=r"shape \(n, 10\) or \(10,\)"):
        get_function("F01", 10).evaluate(bad)


@pytest.mark.parametrize("bad", [np.zeros((2, 10), dtype=complex), np.array([["a"] * 10]),
                                 np.zeros((2, 10), dtype=bool)])
def test_wrong_dtype_is_rejected(bad):
    with pytest.raises(InvalidInputError, match="must be real numbers"):
        get_function("F01", 10).evaluate(bad)


@pytest.mark.parametrize("kw,msg", [({"device": "tpu"}, "device 'tpu'"),
                                    ({"dtype": "float16"}, "dtype 'float16'"),
                                    ({"threads": 0}, "threads must be a positive integer")])
def test_bad_options_are_rejected(kw, msg):
    with pytest.raises(InvalidInputError, match=msg):
        get_function("F01", 10).evaluate(np.zeros((1, 10)), **kw)


@pytest.mark.parametrize("fid", ["F01", "F07", "F10", "Q02"])
def test_non_finite_rows_give_nan_and_leave_others_alone(fid):
    f = get_function(fid, 10)
    X = np.random.default_rng(1).uniform(-100, 100, (5, 10))
    want = f.evaluate(X)
    X[1, 3], X[3, 0], X[4, 9] = np.nan, np.inf, -np.inf
    got = f.evaluate(X)
    assert np.isnan(got[[1, 3, 4]]).all()
    np.testing.assert_array_equal(got[[0, 2]], want[[0, 2]])


def test_threads_give_identical_results():
    f = get_function("F09", 30)
    X = np.random.default_rng(2).uniform(-100, 100, (37, 30))
    np.testing.assert_array_equal(f.evaluate(X, threads=4), f.evaluate(X))


def test_float32_cpu_is_close_to_float64():
    f = get_function("F03", 30)
    X = np.random.default_rng(3).uniform(-100, 100, (8, 30))
    np.testing.assert_allclose(f.evaluate(X, dtype="float32"), f.evaluate(X), rtol=1e-5)


def test_bias_and_optimum_are_the_official_ones():
    f = get_function("Q02", 10)
    assert f.bias == 390.0
    # CEC 2005 F6: the optimum is the file's o even though the code shifts by o - 1
    assert abs(f.evaluate(f.optimum)) < 1e-12
    assert f.evaluate(f.optimum - 1.0) > 1.0
    assert not f.optimum.flags.writeable


@pytest.mark.parametrize("fid,sizes", [
    ("F05", {10: [3, 3, 4], 30: [9, 9, 12], 50: [15, 15, 20], 100: [30, 30, 40]}),
    ("F06", {10: [2, 2, 3, 3], 30: [6, 6, 9, 9], 50: [10, 10, 15, 15], 100: [20, 20, 30, 30]}),
    ("F07", {10: [1, 2, 2, 2, 3], 30: [3, 6, 6, 6, 9], 50: [5, 10, 10, 10, 15],
             100: [10, 20, 20, 20, 30]}),
])
def test_hybrid_group_sizes_match_official_code(fid, sizes):
    # the sizes listed in tests/reference/cec/README.md (quirk 3)
    fractions = [c.fraction for c in FUNCTIONS[fid].components]
    for dim, want in sizes.items():
        assert hybrid_group_sizes(fractions, dim) == want
        assert list(get_function(fid, dim).program.lengths) == want


def test_code_not_paper_for_the_two_conflicts():
    f07 = FUNCTIONS["F07"].components
    assert [c.fraction for c in f07] == [0.1, 0.2, 0.2, 0.2, 0.3]
    f10 = FUNCTIONS["F10"].components
    assert [c.lam_num / c.lam_den for c in f10] == [5e-4, 1.0, 10.0, 1.0, 10.0]


def test_every_data_file_a_function_reads_is_in_the_data_manifest():
    from gpude.cecdata import REQUIRED_FILES

    used = {p for f in FUNCTIONS.values() for d in (f.dims or (2, 100)) for p in f.data_files(d)}
    assert used == set(REQUIRED_FILES)


def test_corrupted_data_surfaces_through_get_function(tmp_path, monkeypatch):
    import shutil

    from gpude import cecdata
    from gpude.functions import function

    data = tmp_path / "cec"
    shutil.copytree(cecdata.data_dir(), data)
    target = data / "cec2017" / "M_5_D10.txt.gz"
    target.write_bytes(cecdata.compress(cecdata.read_bytes("cec2017/M_5_D10.txt").replace(b"1", b"2", 1)))
    monkeypatch.setenv("GPUDE_DATA_DIR", str(data))
    monkeypatch.setattr(function, "_CACHE", {})
    with pytest.raises(CECDataError, match=r"M_5_D10\.txt.*gpude fetch-data"):
        get_function("F03", 10)


# --- the basic functions on hand-computed inputs ---------------------------------------

B = basic.build_basic(np.float64, "cpu")


def basic_value(code, z):
    n = len(z)
    s1 = s2 = m = 0.0
    p = 1.0
    for i in range(n):
        a, b_, c, d = B.term(code, z[i], z[(i + 1) % n], i, n)
        s1, s2, p, m = s1 + a, s2 + b_, p * c, max(m, d)
    return B.final(code, s1, s2, p, m, n)


def test_basic_functions_on_hand_computed_points():
    # Zakharov at (1, 2): 1 + 4 + (0.5*1 + 1*2)^2 + (2.5)^4 = 5 + 6.25 + 39.0625
    assert basic_value(basic.ZAKHAROV, [1.0, 2.0]) == 50.3125
    # Rosenbrock at (0, 0): (0 - 1)^2 = 1 (one pair, no wrap-around)
    assert basic_value(basic.ROSENBROCK, [0.0, 0.0]) == 1.0
    # Rastrigin at integers: z^2 only
    assert basic_value(basic.RASTRIGIN, [1.0, -2.0, 0.0]) == pytest.approx(5.0, abs=1e-12)
    # Bent Cigar: first coordinate weight 1, the others 1e6
    assert basic_value(basic.BENT_CIGAR, [2.0, 1.0, 1.0]) == 4.0 + 2e6
    # Elliptic at e_last: 10^6
    assert basic_value(basic.ELLIPTIC, [0.0, 0.0, 1.0]) == pytest.approx(1e6)
    # Griewank at 0: 1 + 0 - 1
    assert basic_value(basic.GRIEWANK, [0.0, 0.0]) == 0.0
    # Ackley at 0 is 0 up to rounding of e
    assert abs(basic_value(basic.ACKLEY, [0.0] * 4)) < 1e-14
    # Katsuura at 0 (every 2^j z is an integer): prod 1 -> 0
    assert basic_value(basic.KATSUURA, [0.0] * 5) == 0.0
    # HGBat at z = -1 (its optimum after the -1 offset): |r2^2 - s^2|^0.5 + (0.5 r2 + s)/n + 0.5
    n = 4
    r2, s = float(n), -float(n)
    assert basic_value(basic.HGBAT, [-1.0] * n) == pytest.approx(
        math.sqrt(abs(r2**2 - s**2)) + (0.5 * r2 + s) / n + 0.5)
    # Expanded Schaffer F6 at 0: 0.5 + (0 - 0.5)/1 = 0 per pair
    assert basic_value(basic.ESCAFFER6, [0.0, 0.0, 0.0]) == 0.0


def test_nashed_basic_functions_on_hand_computed_points():
    z = [1.0, -2.0, 3.0]
    assert basic_value(basic.SUM_SQUARES, z) == 1 + 2 * 4 + 3 * 9
    assert basic_value(basic.HYPERELLIPSOID, z) == 1 + 4 * 4 + 9 * 9
    assert basic_value(basic.SCHWEFEL_222, z) == 6 + 6
    assert basic_value(basic.MAX_ABS, z) == 3.0
    assert basic_value(basic.MAX_ABS, [-5.0, 1.0]) == 5.0
    # Dixon-Price as printed at (1, 1): 0 + 1 (2 - 1)^2; at (2, 1, 1): 1 + 1 (2 - 2)^2 + 2 (2 - 1)^2
    assert basic_value(basic.DIXON_PRICE, [1.0, 1.0]) == 1.0
    assert basic_value(basic.DIXON_PRICE, [2.0, 1.0, 1.0]) == 3.0
    assert basic_value(basic.SALOMON, [3.0, 4.0]) == pytest.approx(0.5, abs=1e-12)  # r = 5
    # Katsuura factor of 0.25: sum_k |2^k/4 - round| 2^-k = |0.5 - r(0.5)|/2 = 0.25 (k = 1 only)
    assert basic_value(basic.KATSUURA_PROD, [0.25, 0.0]) == 0.25
    assert basic_value(basic.SCHAFFER_PRINTED, [0.0, 0.0]) == 0.0
    assert basic_value(basic.LEVY, [1.0, 1.0]) == pytest.approx(0.0, abs=1e-30)
    assert basic_value(basic.SCHWEFEL_226, [basic.SCHWEFEL_SHIFT] * 2) == pytest.approx(0.0, abs=1e-12)


def test_schwefel_branches_and_optimum():
    # at z = 0 (+420.968...) each coordinate contributes the minimum -418.98...
    assert abs(basic_value(basic.SCHWEFEL, [basic.SCHWEFEL_SHIFT] * 3)) < 1e-9
    # beyond +-500 the value folds back with fmod and adds a quadratic penalty
    hi = basic_value(basic.SCHWEFEL, [600.0])
    r = 500.0 - math.fmod(600.0, 500.0)
    assert hi == pytest.approx(-r * math.sin(math.sqrt(r)) + 1.0 + basic.SCHWEFEL_VALUE)
    lo = basic_value(basic.SCHWEFEL, [-600.0])
    r = math.fmod(600.0, 500.0)
    assert lo == pytest.approx(-(-500.0 + r) * math.sin(math.sqrt(500.0 - r)) + 1.0 + basic.SCHWEFEL_VALUE)


# --- command line ------------------------------------------------------------------------

def run_cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "gpude", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=300)


def test_cli_eval_prints_one_error_per_line(tmp_path, reference):
    X, rows = reference[("F08", 30)]
    np.save(tmp_path / "x.npy", X)
    res = run_cli("eval", "F08", "--dim", "30", "--points", str(tmp_path / "x.npy"))
    assert res.returncode == 0, res.stderr
    got = np.array([float(v) for v in res.stdout.split()])
    assert got.shape == (len(X),)
    np.testing.assert_array_equal(got, get_function("F08", 30).evaluate(X))


def test_cli_reports_bad_input_clearly(tmp_path):
    np.save(tmp_path / "x.npy", np.zeros((2, 10)))
    res = run_cli("eval", "F42", "--dim", "10", "--points", str(tmp_path / "x.npy"))
    assert res.returncode == 2 and "unknown function 'F42'" in res.stderr
    res = run_cli("eval", "F01", "--dim", "10", "--points", str(tmp_path / "missing.npy"))
    assert res.returncode == 2 and "cannot read points" in res.stderr
    assert "Traceback" not in res.stderr


def test_gpu_without_a_gpu_explains_the_simulator(tmp_path):
    np.save(tmp_path / "x.npy", np.zeros((2, 10)))
    res = run_cli("eval", "F01", "--dim", "10", "--points", str(tmp_path / "x.npy"), "--device", "gpu",
                  env={"NUMBA_ENABLE_CUDASIM": "0"})
    has_gpu = subprocess.run([sys.executable, "-c", "from numba import cuda; print(cuda.is_available())"],
                             capture_output=True, text=True,
                             env={**os.environ, "NUMBA_ENABLE_CUDASIM": "0"}).stdout.strip() == "True"
    if has_gpu:  # on a GPU machine the same command must simply work
        assert res.returncode == 0, res.stderr
    else:
        assert res.returncode == 2
        assert "no usable CUDA GPU" in res.stderr and "NUMBA_ENABLE_CUDASIM=1" in res.stderr


@pytest.mark.cudasim
def test_gpu_float32_on_the_simulator_is_close():
    f = get_function("F05", 10)
    X = np.random.default_rng(4).uniform(-100, 100, (3, 10))
    np.testing.assert_allclose(f.evaluate(X, device="gpu", dtype="float32"), f.evaluate(X), rtol=1e-4)


@pytest.mark.cudasim
def test_gpu_non_power_of_two_threads_rejected_and_strided_blocks_work():
    from gpude.functions import gpu

    f = get_function("F07", 30)
    X = np.random.default_rng(5).uniform(-100, 100, (2, 30))
    with pytest.raises(InvalidInputError, match="power of two"):
        gpu.evaluate(f.program, X, threads=24)
    # 8 threads stride over 30 coordinates: same values as the default 32
    np.testing.assert_allclose(gpu.evaluate(f.program, X, threads=8), f.evaluate(X), rtol=1e-12)


@pytest.mark.parametrize("fid", [f"F{k:02d}" for k in range(1, 11)] + ["Q01", "Q02", "Q03", "Q04"])
def test_the_optimum_lies_inside_the_search_box(fid):
    # a box that excludes the optimum cannot be solved (Q03's data lies in [-600, 0] per coordinate)
    for dim in (10, 100):
        f = get_function(fid, dim)
        assert f.lower < f.upper and np.all((f.optimum >= f.lower) & (f.optimum <= f.upper)), (fid, dim)
    assert (get_function("Q03", 10).lower, get_function("Q04", 10).upper) == (-600.0, 5.0)


@pytest.mark.parametrize("module", ["numba.core.errors", "numba.cuda.core.errors"])
def test_one_filter_silences_numbas_and_numba_cudas_performance_warning(module):
    # numba-cuda warns about a small grid with its own NumbaPerformanceWarning, no subclass of numba's
    # (numba_cuda/numba/cuda/dispatcher.py); gpu.no_performance_warnings() silences both classes
    import importlib
    import warnings

    from gpude.functions import gpu

    category = importlib.import_module(module).NumbaPerformanceWarning
    message = "Grid size 1 will likely result in GPU under-utilization due to low occupancy."
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with gpu.no_performance_warnings():
            warnings.warn(category(message), stacklevel=2)
        assert seen == []
        warnings.warn(category(message), stacklevel=2)  # outside the block the warning is seen again
        assert [w.category for w in seen] == [category]
