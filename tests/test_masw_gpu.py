"""masw/gpu's Solis-Wets applications in one cooperative launch (``ls_mode="fused"``): the same run
as masw/sequential and as the step-by-step launches, on each kind of large-scale function (pointwise
terms, Griewank's product, Ackley's two sums, the rotated head group, Rosenbrock's next coordinate
through a permutation, Schwefel 1.2's scan). On numba's simulator a cooperative grid has one block;
the GPU test log covers many."""

import os

import numpy as np
import pytest

from gpude.errors import InvalidInputError
from gpude.trial import make_runner

pytestmark = pytest.mark.cudasim

# I_str = 16: applications of several steps, with successes and failures; 2 cycles
PARAMS = dict(ls_intensity=16, offspring=2)
NP, SEED = 5, 7
MAX_FES = NP + 2 * 32
# tiny on the simulator (a cooperative grid of one block); on a GPU (NUMBA_ENABLE_CUDASIM=0) 100x
# larger, so that the grid has tens to hundreds of blocks
SCALE = 1 if os.environ.get("NUMBA_ENABLE_CUDASIM", "1") == "1" else 100
CASES = [("L02", 24 * SCALE), ("L06", 24 * SCALE), ("C03", 100 * SCALE), ("C04", 100 * SCALE), ("C13", 100 * SCALE)]


def run(impl, fid, dim, dtype="float64", **options):
    r = make_runner("masw", impl, fid, dim, NP, MAX_FES, dtype=dtype, **PARAMS, **options)
    return r, r.run(SEED)


def assert_same_run(a, b, rtol):
    assert a.fes_used == b.fes_used == MAX_FES
    np.testing.assert_allclose(b.trace["best_error"], a.trace["best_error"], rtol=rtol)
    np.testing.assert_allclose(b.best_x, a.best_x, rtol=rtol)


@pytest.mark.parametrize("fid,dim", CASES, ids=[c[0] for c in CASES])
def test_fused_local_search_follows_sequential(fid, dim):
    _, ref = run("sequential", fid, dim)
    runner, fused = run("gpu", fid, dim, threads=16)
    assert runner.ls_mode == "fused"
    assert runner.ls_applications == 2 and 0 < runner.ls_improved
    # the GPU sums in another order: equal to rounding, and every decision the same
    assert_same_run(ref, fused, rtol=1e-10)


def test_pending_halvings_folded_into_the_bias_change_nothing(monkeypatch):
    # b * 2^-2 every two failed steps instead of b / 2 each step: the same bias, the same run
    from gpude.implementations import masw_gpu_ls

    dim = 24 * SCALE
    _, ref = run("sequential", "L01", dim, dtype="float32")
    monkeypatch.setattr(masw_gpu_ls, "MAX_PENDING_HALVINGS", 2)
    _, fused = run("gpu", "L01", dim, dtype="float32", threads=8)
    assert_same_run(ref, fused, rtol=1e-5)
    _, steps = run("gpu", "L01", dim, dtype="float32", threads=8, ls_mode="steps")
    assert_same_run(steps, fused, rtol=1e-5)


def test_ls_mode_is_checked():
    with pytest.raises(InvalidInputError, match="ls_mode must be"):
        make_runner("masw", "gpu", "L01", 24, NP, MAX_FES, ls_mode="one")
    with pytest.raises(InvalidInputError, match="needs a large-scale function"):
        make_runner("masw", "gpu", "Q04", 10, NP, MAX_FES, ls_mode="fused")


def test_replacement_on_the_device_is_the_host_rule():
    # ties (between population and children, and among children), NaN and inf, several sizes
    from numba import cuda

    from gpude.algorithms.masw import replacement
    from gpude.implementations.masw_gpu import build_gpu_masw

    kernel = build_gpu_masw(np.float64, 6, 8)["replace_children"]
    rng = np.random.default_rng(5)
    for trial in range(12):
        P, k = 6, int(rng.integers(1, 5))
        values = rng.choice([0.5, 1.0, 2.0, 3.0, np.inf, np.nan], size=P + k)
        plan = np.zeros((k, 3), np.int64)
        plan[:, :2] = rng.integers(0, P, (k, 2))
        fit, moves, nmoves = cuda.to_device(values), cuda.to_device(np.full((k, 2), -1)), cuda.to_device(np.zeros(1, np.int64))
        replaced, tally = cuda.to_device(np.zeros(P, np.int32)), cuda.to_device(np.zeros(2, np.int64))
        kernel[1, 1](fit, P, k, cuda.to_device(plan), moves, nmoves, replaced, tally)
        expect = replacement(values[:P], values[P:])
        n = int(nmoves.copy_to_host()[0])
        got = [(int(a), int(b) - P) for a, b in moves.copy_to_host()[:n]]
        assert got == expect, (values, got, expect)
        after = values[:P].copy()
        for slot, c in expect:
            after[slot] = values[P + c]
        np.testing.assert_array_equal(fit.copy_to_host()[:P], after)
        assert sorted(np.flatnonzero(replaced.copy_to_host())) == sorted(s for s, _ in expect)
        assert tally.copy_to_host().tolist() == [len(expect), len(set(plan[:, :2].ravel().tolist()))]


def test_the_default_ls_mode_follows_the_measurements():
    from gpude.functions.largescale import LARGE_SCALE
    from gpude.implementations.masw_gpu_ls import default_ls_mode

    codes = {fid: d.code for fid, d in LARGE_SCALE.items()}
    assert default_ls_mode(codes["L01"], 1_000_000) == "fused" and default_ls_mode(codes["L01"], 1_500_000) == "steps"
    assert default_ls_mode(codes["C13"], 500_000) == "fused" and default_ls_mode(codes["C13"], 1_000_000) == "steps"
    assert default_ls_mode(codes["L06"], 100_000) == "fused" and default_ls_mode(codes["C04"], 3_000_000) == "steps"
