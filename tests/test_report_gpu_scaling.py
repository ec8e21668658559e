"""The REPORT's scaling curves (gpude.report.gpu_scaling) from a CSV in benchmarks/scaling.py's
layout. The rows are SYNTHETIC (made up here to test the table and figure code), not measurements."""

from pathlib import Path

import pandas as pd

from gpude.report import gpu_scaling

DEVICE = "NVIDIA H100 80GB HBM3"
LINES = [("ide", 1), ("resident", 1), ("ide", 30), ("all_gpu", 1)]


def synthetic_rows(functions=("F01", "N05")) -> pd.DataFrame:
    """benchmarks/scaling.py's columns with made-up times: 1e-5 s x NP-independent generations
    (1e7 / NP) per line, the floor 1000 times less."""
    rows = []
    for fid in functions:
        dims = (10, 30, 100) if fid.startswith("F") else (10, 30, 100, 300, 1000)
        sizes = dict.fromkeys([(100, p) for p in (50, 100, 250, 500, 1000)] + [(d, 250) for d in dims])
        for dim, popsize in sizes:
            for k, (impl, b) in enumerate(LINES):
                wall = (k + 1) * 1e-5 * 1e7 / popsize * (1 + dim / 1000) / b
                rows.append(dict(function=fid, implementation=impl, trials_per_launch=b, dim=dim, popsize=popsize,
                                 max_fes=10_000_000, F=0.5, CR=0.3, dtype="float32", target=float("-inf"),
                                 repeats=3, base_dim=100, base_popsize=250, runs=3 * b, wall_s_per_run=wall,
                                 wall_s_per_run_std=0.01 * wall, call_s_per_run=wall, setup_s=2.0,
                                 best_error_mean=1.0, fes_mean=1e7, floor_s_run=wall / 1000 / (k + 1),
                                 floor_bound="flops", floor_device="NVIDIA H100 SXM", status="ok", timing="t",
                                 device=DEVICE, gpu=DEVICE, host="gpuhost", git_commit="abc1234def567",
                                 timestamp_utc="2026-11-25T00:00:00Z"))
    rows.append({**rows[0], "dim": 100, "popsize": 2000, "status": "error: GPUOutOfMemoryError: x",
                 "wall_s_per_run": float("nan")})  # a failed point: not drawn, not tabled
    return pd.DataFrame(rows)


def test_table_and_figure_name_the_device_and_draw_every_line(tmp_path):
    folder = tmp_path / "scaling"
    folder.mkdir()
    synthetic_rows().to_csv(folder / "nvidia-h100-80gb-hbm3.csv", index=False)
    out = tmp_path / "paper"
    files = gpu_scaling.write_outputs(folder, out)
    assert {f.name for f in files} == {"scaling.csv", "figure_scaling_nvidia-h100-80gb-hbm3.png",
                                       "figure_scaling_nvidia-h100-80gb-hbm3.pdf"}
    assert (out / "figure_scaling_nvidia-h100-80gb-hbm3.png").stat().st_size > 10_000
    t = pd.read_csv(out / "scaling.csv")
    assert t[t.popsize == 2000].status.tolist() == ["error: GPUOutOfMemoryError: x"]  # kept, but drawn nowhere
    assert set(t.line) == {"ide", "resident", "ide, 30/launch", "all_gpu"}
    linked = []
    text = gpu_scaling.markdown(t, lambda stem, caption: linked.append(stem) or f"![{caption}]({stem}.png)")
    assert linked == ["figure_scaling_nvidia-h100-80gb-hbm3"]
    assert f"#### {DEVICE}" in text and f"Seconds per run against NP on {DEVICE}:" in text
    assert f"Seconds per run against D on {DEVICE}:" in text and "commit abc1234def56" in text
    assert "`results/benchmarks/scaling/nvidia-h100-80gb-hbm3.csv`" in text and "10,000,000 FEs per run" in text
    # NP sweep at D=100: the header and F01's batched line (1e-5 x 3 x 1e7/NP x 1.1 / 30)
    assert "| function | NP (D=100) | 50 | 100 | 250 | 500 | 1000 |" in text
    assert "| F01 | ide, 30/launch | 0.22 | 0.11 | 0.044 | 0.022 | 0.011 |" in text
    assert "| F01 | *floor* | 0.0022 |" in text and "| F01 | *floor, 30/launch* |" in text
    # the D sweep: F01 stops at 100 (official data), N05 goes on to 1000
    assert "| function | D (NP=250) | 10 | 30 | 100 | 300 | 1000 |" in text
    assert "| F01 | ide | 0.404 | 0.412 | 0.44 | - | - |" in text
    assert "| N05 | ide | 0.404 | 0.412 | 0.44 | 0.52 | 0.8 |" in text
    assert "F01: defined at D = 10, 30, 50, 100 only" in text
    assert "Not yet measured" not in text and "| 2000 |" not in text
    assert "Failed points (no time): F01 ide D=100 NP=2000 (error: GPUOutOfMemoryError: x)." in text


def test_without_a_csv_the_section_says_what_to_run(tmp_path):
    folder = tmp_path / "scaling"
    folder.mkdir()
    (folder / "README.md").write_text("no CSV yet\n")
    files = gpu_scaling.write_outputs(folder, tmp_path / "paper")
    assert [f.name for f in files] == ["scaling.csv"]
    t = pd.read_csv(tmp_path / "paper" / "scaling.csv")
    text = gpu_scaling.markdown(t)
    assert "Not yet measured: no CSV in `results/benchmarks/scaling/`" in text
    assert "python benchmarks/scaling.py" in text and "|" not in text  # no table, no invented numbers


def test_load_takes_a_file_or_a_folder(tmp_path):
    path = tmp_path / "one.csv"
    synthetic_rows(("F10",)).to_csv(path, index=False)
    assert len(gpu_scaling.load(path)) == len(gpu_scaling.load(tmp_path)) == 7 * 4 + 1  # (1 failed)
    assert gpu_scaling.load(Path(tmp_path / "missing")).empty
