"""Every benchmark function against values computed by the official CEC C code.

The oracle is tests/reference/cec/ (values of the official CEC 2005/2014/2017 C code at
fixed points). Tolerances are the ones the reference's README derives from the official code:
CPU 1e-10 relative; CUDA 1e-9 relative with an absolute floor of 1e-9, relative error being
|got - want| / max(|want|, 1).
"""

import os
from pathlib import Path

import numpy as np
import pytest
from conftest import REFERENCE, load_reference, relative_error

from gpude.functions import DIMS, get_function, list_functions

CASES = [(fid, dim) for fid in list_functions() for dim in DIMS]
SIM_DIMS = (10, 30)  # the simulator runs every thread in Python: keep it to small D


def test_reference_covers_every_function_and_dimension():
    assert set(load_reference()) == set(CASES)
    assert len(CASES) == 56


@pytest.mark.parametrize("fid,dim", CASES)
def test_cpu_matches_official_code(reference, fid, dim):
    X, rows = reference[(fid, dim)]
    f = get_function(fid, dim)
    got = f.evaluate(X)[rows.row.to_numpy()]
    err = relative_error(got, rows.error_value)
    assert err.max() <= 1e-10, rows.assign(got=got, err=err)[err > 1e-10]
    assert f.bias == rows.bias.iloc[0]
    # raw_value = error + bias is what the official entry point returns
    assert np.all(relative_error(got + f.bias, rows.raw_value) <= 1e-10)


@pytest.mark.parametrize("fid,dim", CASES)
def test_optimum_has_zero_error(reference, fid, dim):
    f = get_function(fid, dim)
    X, rows = reference[(fid, dim)]
    opt_row = rows[rows.point_kind == "optimum"].row.iloc[0]
    np.testing.assert_array_equal(f.optimum, X[opt_row])  # x* is the reference's optimum point
    assert abs(f.evaluate(f.optimum)) <= 1e-9


@pytest.mark.cudasim
@pytest.mark.parametrize("fid,dim", [c for c in CASES if c[1] in SIM_DIMS])
def test_gpu_matches_official_code(reference, fid, dim):
    X, rows = reference[(fid, dim)]
    got = get_function(fid, dim).evaluate(X, device="gpu")[rows.row.to_numpy()]
    want = rows.error_value.to_numpy()
    ok = (relative_error(got, want) <= 1e-9) | (np.abs(got - want) <= 1e-9)
    assert ok.all(), rows.assign(got=got)[~ok]


def test_reference_copy_equals_its_original():
    """tests/reference/cec's values and points are a verbatim copy of the folder the official code's
    values were written to, where GPUDE_CEC_REFERENCE names it (the repository keeps only the copy)."""
    if not os.environ.get("GPUDE_CEC_REFERENCE"):
        pytest.skip("GPUDE_CEC_REFERENCE names no folder of the official code's values")
    original = Path(os.environ["GPUDE_CEC_REFERENCE"])
    for path in [original / "values.csv", *sorted((original / "points").iterdir())]:
        mine = REFERENCE / path.relative_to(original)
        assert mine.read_bytes() == path.read_bytes(), mine
