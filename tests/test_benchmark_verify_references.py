"""benchmarks/verify_references.py (issue 47 item 4): `gpude verify` over every reference of a folder,
an outcome CSV per reference and device, and the Markdown table made from them."""

import pytest
from _benchmarks import load_benchmark

from gpude import cli
from gpude.core.io import read_csv

bench = load_benchmark("verify_references")

pytestmark = pytest.mark.io


def test_a_folder_of_references_verified_and_summarised(tmp_path):
    table = tmp_path / "refs" / "cpu-box" / "tiny" / "trials.csv"
    assert cli.main(["run", "--implementation", "sequential", "--function", "Q01", "--dim", "10", "--popsize", "8",
                     "--max-fes", "80", "--seed", "3", "--trials", "3", "--out-csv", str(table),
                     "--out-traces", str(table.with_name("traces.npz"))]) == 0
    out = tmp_path / "verify"
    assert bench.main(["run", "--device", "cpu", "--out", str(out), "--rows", "2", "--references",
                       str(tmp_path / "refs")]) == 0
    assert bench.main(["run", "--device", "gpu", "--out", str(out), "--references", str(tmp_path / "refs")]) == 0
    outcomes = read_csv(out / "cpu-box__tiny__cpu.csv")  # (no GPU rows: no GPU file)
    assert sorted(p.name for p in out.iterdir()) == ["cpu-box__tiny__cpu.csv"]
    assert list(outcomes["outcome"]) == ["same", "same"] and set(outcomes["sampled_from"]) == {3}
    md = tmp_path / "verify.md"
    assert bench.main(["summary", str(out), "--out", str(md), "--title", "# Verified"]) == 0
    text = md.read_text()
    assert text.startswith("# Verified\n") and "| cpu-box/tiny | cpu | 2 / 2 (of 3) | 2 | 0 | 0 |" in text
