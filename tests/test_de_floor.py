"""gpude.report.floor (``python -m gpude.report.floor``, once benchmarks/de_floor.py): the counting on
functions whose count is obvious, the bound, the CSV."""

import numpy as np
import pandas as pd
import pytest

from gpude.report import floor as floor_module


@pytest.fixture(scope="module")
def floor():
    return floor_module


@pytest.mark.parametrize("dim", [10, 100])
def test_sphere_is_d_multiplies_and_d_adds(floor, dim):
    # Q01: shifted sphere, unrotated, rate 1, offset 0: terms z*z and + per coordinate; the
    # transform is the code's x - o, * rate and + offset per coordinate
    ev = floor.evaluation_flops("Q01", dim)
    assert ev["terms"] == 2 * dim
    assert ev["transform"] == 3 * dim
    assert ev["total"] == 5 * dim


def test_rotation_dominates_and_compositions_rotate_per_component(floor):
    d = 100
    f01 = floor.evaluation_flops("F01", d)  # Zakharov: 5 per coordinate + final 4
    assert f01["transform"] == 3 * d + 2 * d * d
    assert f01["terms"] == 5 * d + 4
    f08 = floor.evaluation_flops("F08", d)  # 3 components, each with its own D x D rotation
    assert f08["transform"] > 3 * 2 * d * d > f08["terms"]
    assert floor.operator_flops(d) == 4 * floor.W_RNG + d * (floor.W_RNG + 6) + 1


def test_bytes_per_generation(floor):
    # F01 float32, B=1: population + fitness in and out, one shift vector and one D x D matrix
    assert floor.generation_bytes("F01", 100, 250, 1, 4) == 2 * 250 * 101 * 4 + 100 * 4 + 100 * 100 * 4
    # the function's data is shared by the batch
    b30 = floor.generation_bytes("F01", 100, 250, 30, 4)
    assert b30 == 30 * 2 * 250 * 101 * 4 + 100 * 4 + 100 * 100 * 4
    # a hybrid also reads its permutation
    assert floor.generation_bytes("F05", 100, 250, 1, 4) == floor.generation_bytes("F01", 100, 250, 1, 4) + 800


def test_floor_csv_schema_and_arithmetic(floor, tmp_path):
    out, summary = tmp_path / "de_floor.csv", tmp_path / "SUMMARY.md"
    summary.write_text("# title\n\nkeep\n")
    assert floor.main(["--out", str(out), "--summary", str(summary)]) == 0
    df = pd.read_csv(out)
    for col in ["device", "dtype", "function", "batch", "flop_eval", "flop_operators", "flop_gen",
                "bytes_gen", "peak_flops", "peak_bytes_s", "floor_s_gen", "bound", "floor_s_run",
                "weights", "peak_source"]:
        assert col in df.columns, col
    assert len(df) == 2 * 2 * 2 * 10  # devices x dtypes x batches x functions
    # (read back from the CSV: equal to the last bits pandas' float parsing keeps)
    np.testing.assert_allclose(df["floor_s_gen"], df[["flop_bound_s_gen", "byte_bound_s_gen"]].max(axis=1), rtol=1e-12)
    np.testing.assert_allclose(df["floor_s_run"], df["floor_s_gen"] * df["generations"] / df["batch"], rtol=1e-12)
    assert set(df["bound"]) <= {"flops", "bytes"}
    row = df[(df.device == "NVIDIA H100 SXM") & (df.dtype == "float32") & (df.batch == 1)
             & (df.function == "F01")].iloc[0]
    assert row["peak_flops"] == 67e12 and row["peak_bytes_s"] == 3.35e12 and row["generations"] == 40_000
    assert row["flop_gen"] == 250 * (row["flop_eval"] + row["flop_operators"])
    text = summary.read_text()
    assert text.startswith("# title\n\nkeep\n") and text.count(floor.BEGIN) == 1
    floor.main(["--out", str(out), "--summary", str(summary)])  # a second run replaces, not appends
    assert summary.read_text().count(floor.BEGIN) == 1
