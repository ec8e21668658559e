"""The CEC 2017 suite (CEC17_F01, CEC17_F03..CEC17_F30 at D = 10, 30, 50, 100) against the official code.

The oracle is tests/reference/cec2017/ (README.md there): the organisers' C++ code
(cec17_test_fast_pow.cpp of P-N-Suganthan/CEC2017-BoundContrained) evaluated by make_points.cpp at
five points per (function, D): the shift o, two random points, and two points near o. The points are
stored as small integers (points.npz) and rebuilt exactly by make_reference.points.

Tolerances as tests/test_functions_reference.py: CPU 1e-10 relative, CUDA (simulator) 1e-9 relative,
relative error |got - want| / max(|want|, 1) (so values near 0 are compared absolutely).
"""

from __future__ import annotations

import csv
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from numba import cuda, float64  # the simulator (conftest) replaces `cuda` in kernels' globals

from gpude import cecdata, problems
from gpude.core.errors import UnknownFunctionError, UnsupportedDimensionError
from gpude.functions import get_function, list_functions
from gpude.functions.suites import FUNCTIONS

REF = Path(__file__).parent / "reference" / "cec2017"
sys.path.insert(0, str(REF))
import make_reference  # noqa: E402  (the points' layout, shared with the script that made them)

FNS = (1, *range(3, 31))
DIMS = (10, 30, 50, 100)
CASES = [(f, d) for f in FNS for d in DIMS]
# The organisers' code and data (git-ignored; tests/reference/cec2017/README.md says how to get them).
OFFICIAL = Path(__file__).resolve().parents[1] / ".authors" / "cec2017" / "CEC17_fast_pow"


def relative_error(got, want):
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    return np.abs(got - want) / np.maximum(np.abs(want), 1.0)


def fid(f: int) -> str:
    return f"CEC17_F{f:02d}"


def _load():
    codes = np.load(REF / "points.npz")
    values = defaultdict(list)
    with open(REF / "values.csv", newline="") as fh:
        for row in csv.DictReader(fh):
            values[(int(row["function"]), int(row["dim"]))].append(
                (int(row["point"]), row["kind"], float(row["raw_value"]), float(row["error_value"])))
    out = {}
    for (f, d), rows in values.items():
        o = cecdata.load_array(f"cec2017/shift_data_{f}.txt").ravel()[:d]  # row 1's first D numbers
        X = make_reference.points(codes[f"F{f}_D{d}"], o)
        rows.sort()
        out[(f, d)] = (X, [r[1] for r in rows], np.array([r[2] for r in rows]), np.array([r[3] for r in rows]))
    return out


REFERENCE = _load()


def test_reference_covers_every_function_and_dimension():
    assert set(REFERENCE) == set(CASES) and len(CASES) == 116
    assert all(kinds == list(make_reference.KINDS) for _, kinds, _, _ in REFERENCE.values())


def test_the_suite_is_registered_and_listed():
    names = [fid(f) for f in FNS]
    assert list_functions("cec2017") == names == problems.list_problems("cec2017")
    assert set(names) <= set(list_functions("all")) and not set(names) & set(list_functions())
    assert "cec2017" in problems.suites()
    f = get_function("cec17_f05", 30)
    assert f is problems.get_problem("CEC17_F05", 30) and f.fid == "CEC17_F05"
    assert problems.canonical_name("cec17_f05") == "CEC17_F05"
    assert problems.describe("cec17_f29")[0] == "functions"
    for n in FNS:
        d = FUNCTIONS[fid(n)]
        assert (d.suite, d.cec_year, d.cec_fn, d.bias, d.lower, d.upper, d.dims) == \
            ("cec2017", 2017, n, 100.0 * n, -100.0, 100.0, DIMS)


def test_f2_and_other_dimensions_are_refused_with_what_exists():
    for name in ("cec17_f02", "CEC17_F02"):
        with pytest.raises(UnknownFunctionError, match="excluded CEC 2017 F2.*CEC17_F01 and CEC17_F03..CEC17_F30"):
            get_function(name, 10)
        with pytest.raises(UnknownFunctionError, match="excluded"):
            problems.get_problem(name, 10)
    for dim in (2, 20, 31, 0):
        with pytest.raises(UnsupportedDimensionError,
                           match=r"supported dimensions: 10, 30, 50, 100 \(the dimensions with official"):
            get_function("cec17_f11", dim)


@pytest.mark.parametrize("f,dim", CASES)
def test_cpu_matches_official_code(f, dim):
    X, kinds, raw, want = REFERENCE[(f, dim)]
    fn = get_function(fid(f), dim)
    got = fn.evaluate(X)
    err = relative_error(got, want)
    assert err.max() <= 1e-10, (kinds, got, want, err)
    assert np.all(relative_error(got + fn.bias, raw) <= 1e-10)  # raw = error + 100 f
    assert fn.bias == 100.0 * f


@pytest.mark.parametrize("f,dim", CASES)
def test_error_at_the_optimum(f, dim):
    """F(o) = 100 f, error 0 (the compositions: 1e-99 and less, the code's weight 1e99 at d = 0);
    F9's minimum is not at o (the official error there is positive), but at x* = o + M^-1 1."""
    X, kinds, raw, want = REFERENCE[(f, dim)]
    fn = get_function(fid(f), dim)
    at_shift = fn.evaluate(X[0])
    if f == 9:
        assert want[0] > 1.0 and abs(at_shift - want[0]) <= 1e-12 * want[0]
        assert not np.array_equal(fn.optimum, X[0])
        assert fn.lower <= fn.optimum.min() and fn.optimum.max() <= fn.upper
    else:
        np.testing.assert_array_equal(fn.optimum, X[0])
        assert abs(want[0]) <= 2e-10 and abs(at_shift) <= 2e-10  # F10 (Schwefel): 1e-10 at D = 100
        assert raw[0] == pytest.approx(100.0 * f, abs=2e-10)
    assert abs(fn.evaluate(fn.optimum)) <= 2e-10


def test_f9_at_the_shift_is_the_official_levy_value():
    # the code's w = 1 + (z - 1)/4 at z = 0: sin^2(0.75 pi) + (n-1) 0.0625 (1 + 10 sin^2(0.75 pi + 1)) + 0.125
    for dim in DIMS:
        _, _, _, want = REFERENCE[(9, dim)]
        expected = 0.5 + (dim - 1) * 0.0625 * (1 + 10 * np.sin(0.75 * np.pi + 1) ** 2) + 0.125
        assert want[0] == pytest.approx(expected, rel=1e-13)


def test_functions_shared_with_janssen_give_the_same_values():
    """Janssen et al.'s F01..F04, F06, F08..F10 are CEC 2017 F3, F4, F5, F10, F16, F22, F24, F26 (the
    same code and data); F05 and F07 are CEC 2014's F18 and F22, not CEC 2017's."""
    same = {"F01": 3, "F02": 4, "F03": 5, "F04": 10, "F06": 16, "F08": 22, "F09": 24, "F10": 26}
    rng = np.random.default_rng(17)
    for dim in (10, 30):
        X = rng.uniform(-100, 100, (4, dim))
        for janssen, n in same.items():
            assert np.array_equal(get_function(janssen, dim).evaluate(X), get_function(fid(n), dim).evaluate(X))


def test_data_files_equal_the_official_ones():
    """All 193 CEC 2017 files (F1, F3..F30) against the organisers' input_data, where present."""
    if not (OFFICIAL / "input_data").is_dir():
        pytest.skip(f"{OFFICIAL}/input_data not present (tests/reference/cec2017/README.md: how to fetch it)")
    files = [r for r in cecdata.REQUIRED_FILES if r.startswith("cec2017/")]
    assert len(files) == 193
    for rel in files:
        ours = cecdata.read_bytes(rel)  # the stored .gz, decompressed
        theirs = (OFFICIAL / "input_data" / rel.split("/")[1]).read_bytes()
        assert ours.replace(b"\r\n", b"\n") == theirs.replace(b"\r\n", b"\n"), rel


# --- CUDA, on the simulator (a real GPU with NUMBA_ENABLE_CUDASIM=0) ----------------------------------

GPU_CASES = [(f, 10) for f in FNS] + [(f, 30) for f in (6, 7, 9, 13, 14, 20, 29, 30)]


@pytest.mark.cudasim
@pytest.mark.parametrize("f,dim", GPU_CASES)
def test_gpu_block_evaluator_matches_official_code(f, dim):
    X, kinds, _, want = REFERENCE[(f, dim)]
    got = get_function(fid(f), dim).evaluate(X, device="gpu")  # one population launch, 5 rows
    assert relative_error(got, want).max() <= 1e-9, (kinds, got, want)


def _warp_kernel(prog, warps):
    from gpude.functions import gpu

    evaluate = gpu.make_block_evaluator(prog, 32, np.float64, warp=True)
    BUF, W = gpu.buffer_size(prog), warps

    @cuda.jit
    def kernel(X, out, shift, rot_t, perm):
        # each warp evaluates its own row with its own buffers; every warp calls the evaluator
        # (the simulator's barriers are the block's)
        bufs = cuda.shared.array((W, 2, BUF), float64)
        reds = cuda.shared.array((W, 4, 32), float64)
        w = cuda.threadIdx.x // 32
        lane = cuda.threadIdx.x % 32
        r = cuda.blockIdx.x * W + w
        rr = min(r, X.shape[0] - 1)
        v = evaluate(X[rr], bufs[w, 0], bufs[w, 1], reds[w], shift, rot_t, perm, lane)
        if lane == 0 and r < X.shape[0]:
            out[r] = v

    return kernel


@pytest.mark.cudasim
@pytest.mark.parametrize("f", FNS)
def test_gpu_warp_evaluator_matches_official_code(f):
    from gpude.functions import gpu

    X, kinds, _, want = REFERENCE[(f, 10)]
    prog = get_function(fid(f), 10).program
    data = gpu.compile_function(prog, np.float64, threads=32, warp=True).data
    warps = 3  # rows 0..4 in two blocks of three warps (the last warp of the second block idles)
    out = cuda.to_device(np.full(len(X), np.nan))
    with gpu.no_performance_warnings():
        _warp_kernel(prog, warps)[2, 32 * warps](cuda.to_device(X), out, *data)
    got = out.copy_to_host()
    assert relative_error(got, want).max() <= 1e-9, (kinds, got, want)
