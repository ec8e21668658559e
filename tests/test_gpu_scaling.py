"""Scaling sets (config/scaling/*.yaml, gpude.study.gpu_scaling): what a set picks from its experiments,
what it refuses, a workflow run of one (each batch with its own experiment's settings), and the rows
written from a scaling run's folder (the committed h100x4 baseline)."""

import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pandas as pd
import pytest
import yaml

from gpude.implementations import registry
from gpude.study import experiment as experiment_model
from gpude.study import gpu_scaling

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / "results/benchmarks/gpu_scaling/h100x4_scaling_886691b"


@pytest.fixture()
def in_root(monkeypatch):
    monkeypatch.chdir(ROOT)


def write_set(folder, parts, name="tiny"):
    path = folder / "config" / "scaling" / f"{name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump({"name": name, "description": "test set", "parts": parts}))
    return path


def test_the_committed_set_picks_gpu_batches_of_every_study(in_root):
    spec = gpu_scaling.load_set("config/scaling/all_studies.yaml")
    batches = gpu_scaling.set_batches(spec)
    assert {b.experiment for b in batches} == {"janssen_cs1", "janssen_cs2", "qin", "kromer_lop", "nashed", "lastra"}
    assert all(registry.get(b.batch.algorithm, b.batch.implementation).needs_gpu for b in batches)
    assert len(batches) == len(set(batches)) == 34
    # chunks: 1 keeps a cell's first batch only (Lastra's C01 at D 100,000 has two)
    lastra = [b.batch for b in batches if b.experiment == "lastra"]
    assert [(b.function, b.dim, b.chunk) for b in lastra] == [("C01", 100000, 0)]
    assert {b.batch.algorithm for b in batches if b.experiment == "nashed"} == {"de", "ss"}


@pytest.mark.parametrize("part,message", [
    ({"experiment": "qin", "dims": [20]}, r"dims \[20\] not in experiment qin"),
    ({"experiment": "qin", "implementations": ["resident"]}, r"implementations \['resident'\] not in experiment qin"),
    ({"experiment": "kromer_pilot_lop_cr"}, "has a parameter grid"),
    ({"experiment": "no_such"}, "no experiment 'no_such'"),
    ({"experiment": "qin", "chunks": 0}, "parts/0/chunks"),
    ({"experiment": "qin", "implementations": ["sequential"]}, "picks no GPU batch"),
])
def test_a_set_that_picks_what_its_experiment_lacks_is_refused(in_root, tmp_path, part, message):
    path = write_set(tmp_path, [part])
    with pytest.raises(gpu_scaling.ScalingError, match=message):
        gpu_scaling.set_batches(gpu_scaling.load_set(path))


def test_clean_removes_the_batches_and_keeps_their_warm_ups(tmp_path, monkeypatch):
    shutil.copytree(ROOT / "config", tmp_path / "config")
    monkeypatch.chdir(tmp_path)
    path = write_set(tmp_path, [{"experiment": "qin", "implementations": ["ide"], "dims": [10], "popsizes": [50]}])
    batches = gpu_scaling.batches_of(path)
    assert len(batches) == 4
    for b in batches:
        for end in (".csv", ".npz", ".warmup.json"):
            Path(b.path + end).parent.mkdir(parents=True, exist_ok=True)
            Path(b.path + end).write_text("x")
        Path(b.log).parent.mkdir(parents=True, exist_ok=True)
        Path(b.log).write_text("GPU 0 (GPU-x, fake) leased at 1.0\nGPU 0 (GPU-x) released at 2.0\n")
    gpu_scaling.pack_logs(path, tmp_path / "logs.tar.gz")
    with tarfile.open(tmp_path / "logs.tar.gz") as tar:
        assert sorted(tar.getnames()) == sorted(b.log for b in batches)
    assert gpu_scaling.clean(path) == 12
    assert all(Path(b.path + ".warmup.json").is_file() and not Path(b.path + ".csv").exists() for b in batches)


def test_a_workflow_run_of_a_set_gives_each_batch_its_own_experiments_settings(tmp_path):
    for name in ("Snakefile", "workflow", "config"):
        (shutil.copytree if (ROOT / name).is_dir() else shutil.copy)(ROOT / name, tmp_path / name)
    write_set(tmp_path, [{"experiment": "janssen_cs2", "functions": ["F01"], "popsizes": [50]},
                         {"experiment": "qin", "implementations": ["ide"], "functions": ["Q01"], "dims": [10, 50],
                          "popsizes": [100]}])
    env = {k: v for k, v in __import__("os").environ.items() if k not in ("CUDA_VISIBLE_DEVICES", "GPUDE_GPU_DEVICES")}
    env.update(NUMBA_ENABLE_CUDASIM="1", GPUDE_FAKE_GPUS="2", GPUDE_HOST_CORES="2")
    res = subprocess.run([sys.executable, "-m", "snakemake", "-n", "-p", "--cores", "2", "--config", "gpu=yes",
                          "scaling=config/scaling/tiny.yaml"], cwd=tmp_path, capture_output=True, text=True,
                         env=env, timeout=300)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-3000:]
    commands = re.findall(r"python3 -m gpude run (.*)$", out, re.M)
    assert len(commands) == 4  # cs2: ide and cujde; qin: D 10 and 50
    for command in commands:
        suite = re.search(r"--suite (\w+)", command).group(1)
        spec = experiment_model.load_experiment(str(ROOT / f"config/experiments/{suite}.yaml"))
        dim = int(re.search(r"--dim (\d+)", command).group(1))
        assert f"--seed {spec['seed']} " in command
        assert f"--max-fes {experiment_model.max_fes(spec, dim)} " in command
        assert f"--out-csv results/{suite}/batches/" in command
    assert "results/gpu_scaling/tiny/trials.csv" in out and "rule merge_scaling_set" in out
    assert "rule merge_trials" not in out and "REPORT.md" not in out  # the set's table only


def test_rows_of_the_committed_baseline(tmp_path):
    table = gpu_scaling.rows(BASELINE / "raw")
    assert list(table.run) == ["priming", "gpus1", "gpus2", "gpus4"]
    assert list(table.gpus) == [4, 1, 2, 4] and set(table.runs) == {80} and set(table.batches) == {16}
    one, four = table.set_index("run").loc["gpus1"], table.set_index("run").loc["gpus4"]
    assert four.speedup == pytest.approx(four.runs_per_hour / one.runs_per_hour, abs=1e-3)
    assert one.most_leases_at_once == 1 and four.most_leases_at_once == 4
    batches = gpu_scaling.batch_rows(BASELINE / "raw" / "gpus1")
    held = (batches.released_s - batches.leased_s).sum()
    assert one.leased_fraction == f"0:{held / one.wall_s:.3f}"
    assert (batches.runs == 5).all() and (batches.trial_s > 0).all()
    assert (batches.trial_s < batches.released_s - batches.leased_s).all()
    committed = pd.read_csv(BASELINE / "rows.csv")
    assert committed.runs_per_hour.tolist() == pytest.approx(table.runs_per_hour.tolist())
