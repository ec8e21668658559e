"""The REPORT's scaling curves (gpude.report.scaling_curves) from trial tables in the workflow's schema,
as config/experiments/scaling_curves*.yaml write them. The rows are SYNTHETIC (made up here to test
the table and figure code), not measurements."""

import json
from pathlib import Path

import pandas as pd
import pytest

from gpude.report import floor
from gpude.report import scaling_curves as gpu_scaling

DEVICE = "NVIDIA H100 80GB HBM3"
LINES = [("ide", 1), ("resident", 1), ("ide", 30), ("all_gpu", 1)]


def synthetic_rows(functions=("F01", "N05")) -> pd.DataFrame:
    """Trial rows (the columns the section reads) with made-up times: 1e-5 s x NP-independent
    generations (1e7 / NP) per line, three trials at 0.99, 1 and 1.01 times that (six for the batched
    line), and one failed point (NP=2000)."""
    rows = []
    for fid in functions:
        dims = (10, 30, 100) if fid.startswith("F") else (10, 30, 100, 300, 1000)
        sizes = dict.fromkeys([(100, p) for p in (50, 100, 250, 500, 1000)] + [(d, 250) for d in dims])
        for dim, popsize in sizes:
            for k, (impl, b) in enumerate(LINES):
                wall = (k + 1) * 1e-5 * 1e7 / popsize * (1 + dim / 1000) / b
                params = json.dumps({"F": 0.5, "CR": 0.3, **({"trials_per_launch": b} if b > 1 else {})})
                for trial, f in enumerate((0.99, 1.0, 1.01) * (2 if b > 1 else 1)):
                    rows.append(dict(suite="scaling_curves" if b == 1 else "scaling_curves_batched", function=fid,
                                     dim=dim, algorithm="de", implementation=impl, popsize=popsize, params=params,
                                     dtype="float32", trial=trial, max_fes=10_000_000, target_error=float("-inf"),
                                     best_error=1.0, fes_used=10_000_000, wall_time_s=wall * f, status="budget",
                                     concurrency="exclusive", gpu=DEVICE, host="gpuhost",
                                     git_commit="abc1234def567", timestamp_utc="2026-11-25T00:00:00Z"))
    rows.append({**rows[0], "dim": 100, "popsize": 2000, "status": "error:GPUOutOfMemoryError: x",
                 "wall_time_s": float("nan")})  # a failed point: not drawn, not tabled
    return pd.DataFrame(rows)


def write_synthetic(folder: Path, machine: str = "nvidia-h100") -> Path:
    """The synthetic rows as two committed references would lie: ``<folder>/<machine>/<experiment>/``."""
    rows = synthetic_rows()
    for experiment, part in rows.groupby("suite"):
        path = folder / machine / experiment / "trials.csv"
        path.parent.mkdir(parents=True, exist_ok=True)
        part.to_csv(path, index=False)
    return folder


def test_points_are_the_trials_means_with_the_floor_of_each_point():
    p = gpu_scaling.points(synthetic_rows(("F01",)).assign(source="x.csv"))
    assert len(p) == 7 * 4 + 1
    ide30 = p[(p.implementation == "ide") & (p.trials_per_launch == 30) & (p.dim == 100) & (p.popsize == 50)].iloc[0]
    assert ide30.runs == 6 and ide30.wall_s_per_run == pytest.approx(3e-5 * 1e7 / 50 * 1.1 / 30)
    assert ide30.wall_s_per_run_std > 0 and (ide30.base_dim, ide30.base_popsize) == (100, 250)
    # the floor at the point, per run of a launch of 30, on the H100's peaks (SXM: the CUDA name's board)
    expected = floor.floor_point("F01", 100, 50, 10_000_000, "NVIDIA H100 SXM", "float32", 30)["floor_s_run"]
    assert ide30.floor_s_run == pytest.approx(expected) and ide30.floor_device == "NVIDIA H100 SXM"
    failed = p[p.popsize == 2000].iloc[0]
    assert failed.runs == 0 and failed.status == "error:GPUOutOfMemoryError: x"


def test_table_and_figure_name_the_device_and_draw_every_line(tmp_path):
    folder = write_synthetic(tmp_path / "reference")
    out = tmp_path / "paper"
    files = gpu_scaling.write_outputs(folder, out)
    assert {f.name for f in files} == {"scaling.csv", "figure_scaling_nvidia-h100-80gb-hbm3.png"}
    assert (out / "figure_scaling_nvidia-h100-80gb-hbm3.png").stat().st_size > 10_000
    t = pd.read_csv(out / "scaling.csv")
    assert t[t.popsize == 2000].status.tolist() == ["error:GPUOutOfMemoryError: x"]  # kept, but drawn nowhere
    assert set(t.line) == {"ide", "resident", "ide, 30/launch", "all_gpu"}
    linked = []
    text = gpu_scaling.markdown(t, lambda stem, caption: linked.append(stem) or f"![{caption}]({stem}.png)")
    assert linked == ["figure_scaling_nvidia-h100-80gb-hbm3"]
    assert f"#### {DEVICE}" in text and f"Seconds per run against NP on {DEVICE}:" in text
    assert f"Seconds per run against D on {DEVICE}:" in text and "commit abc1234def56" in text
    assert "reference/nvidia-h100/scaling_curves/trials.csv`" in text and "10,000,000 FEs per run" in text
    assert "runs per point 0-3; 6-6 at 30/launch" in text
    # NP sweep at D=100: the header and F01's batched line (1e-5 x 3 x 1e7/NP x 1.1 / 30)
    assert "| function | NP (D=100) | 50 | 100 | 250 | 500 | 1000 |" in text
    assert "| F01 | ide, 30/launch | 0.22 | 0.11 | 0.044 | 0.022 | 0.011 |" in text
    f01 = floor.floor_point("F01", 100, 50, 10_000_000, "NVIDIA H100 SXM", "float32")["floor_s_run"]
    assert f"| F01 | *floor* | {f01:.3g} |" in text and "| F01 | *floor, 30/launch* |" in text
    # the D sweep: F01 stops at 100 (official data), N05 goes on to 1000
    assert "| function | D (NP=250) | 10 | 30 | 100 | 300 | 1000 |" in text
    assert "| F01 | ide | 0.404 | 0.412 | 0.44 | - | - |" in text
    assert "| N05 | ide | 0.404 | 0.412 | 0.44 | 0.52 | 0.8 |" in text
    assert "F01: defined at D = 10, 30, 50, 100 only" in text
    assert "No measurements" not in text and "| 2000 |" not in text
    assert "Failed points (no time): F01 ide D=100 NP=2000 (error:GPUOutOfMemoryError: x)." in text


def test_without_trials_the_section_says_what_to_run(tmp_path):
    folder = tmp_path / "reference"
    (folder / "nvidia-h100" / "qin").mkdir(parents=True)  # another experiment's reference: not read
    synthetic_rows(("F10",)).to_csv(folder / "nvidia-h100" / "qin" / "trials.csv", index=False)
    files = gpu_scaling.write_outputs(folder, tmp_path / "paper")
    assert [f.name for f in files] == ["scaling.csv"]
    t = pd.read_csv(tmp_path / "paper" / "scaling.csv")
    text = gpu_scaling.markdown(t)
    assert "No measurements: no trials of `scaling_curves` or `scaling_curves_batched` under" in text
    assert "benchmarks/gpu_checks.sh scaling_curves" in text and "|" not in text  # no table, no invented numbers


@pytest.mark.io
def test_load_takes_a_file_a_reference_folder_or_a_results_folder(tmp_path):
    path = tmp_path / "one.csv"
    synthetic_rows(("F10",)).to_csv(path, index=False)
    assert len(gpu_scaling.load(path)) == 7 * 4 + 1  # (1 failed)
    local = tmp_path / "results" / "scaling_curves" / "trials.csv"  # a local run: results/<experiment>/
    local.parent.mkdir(parents=True)
    synthetic_rows(("F10",)).to_csv(local, index=False)
    assert len(gpu_scaling.load(tmp_path / "results")) == 7 * 4 + 1
    assert gpu_scaling.load(Path(tmp_path / "missing")).empty
