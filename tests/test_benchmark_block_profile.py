"""benchmarks/block_profile_summary.py (issue 67): the FMA bound and the instruction ratio it derives from
a report's details page, computed by hand on a made-up profile, and its refusal of incomplete input."""

import json
from pathlib import Path

import pandas as pd
import pytest
from _benchmarks import load_benchmark

from gpude.core.errors import GpudeError

bench = load_benchmark("block_profile_summary")


def _profile(folder: Path, function: str, k: int, drop: str | None = None) -> None:
    values = {metric: "1" for _, metric in bench.METRICS.values()}
    values.update({"Duration": "10", "Elapsed Cycles": "20,000,000", "Executed Instructions": "3,200,000"})
    rows = [{"Kernel Name": "block_kernel[v1](Array<float>)", "Section Name": section, "Metric Name": metric,
             "Metric Value": values[metric], "Rule Name": None, "Rule Description": None}
            for section, metric in bench.METRICS.values() if metric != drop]
    rows.append({"Kernel Name": "block_kernel", "Section Name": "WarpStateStats", "Metric Name": None,
                 "Metric Value": None, "Rule Name": "CPIStall", "Rule Description": "stalled on L1TEX"})
    pd.DataFrame(rows).to_csv(folder / f"ncu_{function}_{k}.csv", index=False)
    pd.DataFrame([{"function": function, "dim": 10, "popsize": 8, "dtype": "float32", "max_fes": 800,
                   "params": json.dumps({"trials_per_launch": k, "chunk_generations": 4}), "gpu": "Test GPU",
                   "gpu_sms": 2, "compute_capability": "9.0", "cuda_driver": "13.0", "cuda_runtime": "13.0",
                   "numba": "0.68.0", "numba_cuda": "0.30.4", "gpude": "0.1.0", "git_commit": "abc1234",
                   "host": "h", "boot_id": "boot-1", "timestamp_utc": "2026-11-29T00:00:00Z"}]
                 ).to_csv(folder / f"run_{function}_{k}.csv", index=False)


def test_the_bound_and_the_ratios_by_hand(tmp_path):
    _profile(tmp_path, "F01", 4)  # one rotation
    _profile(tmp_path, "F10", 4)  # a composition of five rotated components
    (tmp_path / "ncu_F01_4_raw.csv").write_text("not a details page\n")  # the other pages are not read
    out = tmp_path / "out"
    assert bench.main(["--profiles", str(tmp_path), "--out", str(out), "--max-fes", "1600"]) == 0
    s = pd.read_csv(out / "summary.csv").set_index("function")
    clock = 20e6 / 10e-3  # 2 GHz: elapsed cycles / duration
    assert s.loc["F01", "sm_clock_ghz"] == pytest.approx(2.0)
    # a run of 1600 FEs at NP 8: 200 generations; the launch: 4 trials x 4 generations in 10 ms
    assert s.loc["F01", "run_share_s"] == pytest.approx(10e-3 / 4 * 200 / 4)
    fma = 8 * 10 * 10 * 200  # NP D^2 a generation
    assert s.loc["F01", "fma_bound_s"] == pytest.approx(fma / (2 * 128 * clock))
    assert s.loc["F10", "fma_bound_s"] == pytest.approx(5 * fma / (2 * 128 * clock))
    assert s.loc["F01", "over_fma_bound"] == pytest.approx(s.loc["F01", "run_share_s"] / s.loc["F01", "fma_bound_s"])
    # 3.2e6 warp instructions over 16 trial-generations, against 800 / 32 full-warp FMAs a generation
    assert s.loc["F01", "warp_instr_per_fma"] == pytest.approx(3.2e6 / 16 / (800 / 32))
    assert s.loc["F01", "rule_CPIStall"] == "stalled on L1TEX" and s.loc["F01", "gpu"] == "Test GPU"
    assert "| F10 | 4 |" in (out / "README.md").read_text()


def test_incomplete_input_is_refused_by_name(tmp_path):
    with pytest.raises(GpudeError, match="no ncu_<F>_<k>.csv"):
        bench.main(["--profiles", str(tmp_path), "--out", str(tmp_path / "out")])
    _profile(tmp_path, "F01", 4, drop="Registers Per Thread")
    with pytest.raises(GpudeError, match="no 'Registers Per Thread' in section 'Launch Statistics'"):
        bench.main(["--profiles", str(tmp_path), "--out", str(tmp_path / "out")])
    (tmp_path / "run_F01_4.csv").unlink()
    with pytest.raises(GpudeError, match="no run_F01_4.csv"):
        bench.main(["--profiles", str(tmp_path), "--out", str(tmp_path / "out")])
    assert not (tmp_path / "out").exists()  # nothing half-written


def test_the_source_page_splits_the_kernel_by_line(tmp_path):
    _profile(tmp_path, "F01", 4)
    header = ('"Line No","Source","Address","Source","Warp Stall Sampling (All Samples)",'
              '"Warp Stall Sampling (Not-issued Samples)","# Samples","Instructions Executed"')
    (tmp_path / "ncu_F01_4_sass.csv").write_text("\n".join([
        '"File Path","block.py"', header,
        '"10","f = warp_evaluate(xs)","","","60","1","1","300"',
        '"11","xs[j] = trial_value(a | b)","","","30","1","1","100"',
        '"12","take = f <= fit","","","10","1","1","100"',
        '"13","# a comment","","","0","0","0","0"']) + "\n")
    out = tmp_path / "out"
    assert bench.main(["--profiles", str(tmp_path), "--out", str(out), "--max-fes", "1600"]) == 0
    split = pd.read_csv(out / "source_F01_4.csv")
    assert split["line"].tolist() == [10, 11, 12]  # the largest first; a line without samples left out
    assert split["samples_share"].tolist() == pytest.approx([0.6, 0.3, 0.1])
    assert split["instructions_share"].tolist() == pytest.approx([0.6, 0.2, 0.2])
    readme = (out / "README.md").read_text()
    assert "| 10 | 60.0 | 60.0 | `f = warp_evaluate(xs)` |" in readme and "trial_value(a \\| b)" in readme
    (tmp_path / "ncu_F01_4_sass.csv").write_text("not a source page\n")
    with pytest.raises(GpudeError, match="no 'Line No' header"):
        bench.main(["--profiles", str(tmp_path), "--out", str(out)])
