"""CEC 2010 large-scale data from the official C++ generator rule (Lastra et al.'s functions): the
official values at x = 0 (from the official C++ code, qzcwx/CEC2010SS-LSGO-Benchmarks-CPP @ cbcb14f,
built and run at D = 1,000 and 100,000) to 1e-12 relative, the shape of o, P and M, and the checksummed cache."""

import numpy as np
import pytest

from gpude.core.errors import InvalidInputError, UnknownFunctionError
from gpude.functions import cec2010

# F(0) of the official C++ code at D = 1000, and rebuilt with dimension 100,000
OFFICIAL = {
    1000: {"F1": 2.07125897729136597e11, "F2": 1.72759215611532818e04, "F3": 2.11339607697580227e01,
           "F4": 9.99743783363079000e15, "F6": 2.10094891721970700e07, "F8": 6.99278408479692720e16,
           "F13": 8.40630760158848145e11, "F18": 1.62566570780771387e12, "F20": 1.66560096999270923e12},
    100_000: {"F1": 2.11138514182130898e13, "F2": 1.73010226172597241e06, "F3": 2.10842274756082624e01,
              "F4": 3.41274392189446850e15, "F6": 2.07523892823095992e07, "F8": 5.51775529220423120e16,
              "F13": 7.86468503953872344e13, "F18": 1.57576148859582719e14,
              "F20": 1.60872275573356875e14}}
CASES = [(dim, fid) for dim in OFFICIAL for fid in OFFICIAL[dim]]


@pytest.mark.parametrize("dim,fid", CASES, ids=[f"{f}-D{d}" for d, f in CASES])
def test_official_values_at_zero(dim, fid, tmp_path):
    got = cec2010.reference_value(fid, np.zeros(dim), cec2010.data(fid, dim, tmp_path))
    assert got == pytest.approx(OFFICIAL[dim][fid], rel=1e-12)


def test_generated_arrays_have_their_shapes_and_ranges():
    a = cec2010.generate("F4", 1000)
    assert a["o"].shape == (1000,) and a["o"].min() >= -100 and a["o"].max() <= 100
    assert np.array_equal(np.sort(a["P"]), np.arange(1000))
    np.testing.assert_allclose(a["M"] @ a["M"].T, np.eye(50), atol=1e-12)
    r = cec2010.generate("F18", 1000)
    assert r["o"].max() <= 99 and set(r) == {"o", "P"}  # Rosenbrock: o + 1 in the box, no rotation
    # o is filled backwards: D = 1000's o is not the start of D = 1100's
    assert not np.array_equal(cec2010.generate("F1", 1100)["o"][:1000], cec2010.generate("F1", 1000)["o"])


def test_optimum_is_zero():
    a = cec2010.generate("F13", 200)
    x = a["o"].copy()
    x[a["P"][:100]] += 1.0  # Rosenbrock groups reach 0 at z = 1, the sphere part at z = 0
    assert cec2010.reference_value("F13", x, a) == pytest.approx(0.0, abs=1e-20)
    for fid in ("F1", "F2", "F3", "F4", "F6"):
        b = cec2010.generate(fid, 200)
        # Ackley's 20 + e - 20 - e leaves ~4e-16, times F6's 1e6 weight
        assert cec2010.reference_value(fid, b["o"], b) == pytest.approx(0.0, abs=1e-9)


def test_cache_is_made_once_and_checked(tmp_path):
    first = cec2010.data("F6", 200, tmp_path)
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["F6_D200.npz", "F6_D200.npz.sha256"]
    again = cec2010.data("F6", 200, tmp_path)
    assert all(np.array_equal(first[k], again[k]) for k in first)
    blob = bytearray((tmp_path / "F6_D200.npz").read_bytes())
    blob[-40] ^= 0xFF
    (tmp_path / "F6_D200.npz").write_bytes(bytes(blob))
    with pytest.raises(InvalidInputError, match="does not match its checksum .*delete both"):
        cec2010.data("F6", 200, tmp_path)


def test_bad_names_and_dimensions_say_what_works():
    with pytest.raises(UnknownFunctionError, match="unknown CEC 2010 function 'F5'; generated here: F1"):
        cec2010.generate("F5", 1000)
    for bad in (150, 0, 1000.0, True):
        with pytest.raises(InvalidInputError, match="positive multiple of 100"):
            cec2010.generate("F1", bad)
