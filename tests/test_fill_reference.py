"""gpude.campaign.fill_reference on Qin et al.'s reference: the four float32 cells it lacks, the workflow's
batch files for them (a Snakemake dry run), and the merge of made-up batches into a copy of the
reference that keeps every old row and trace."""

import re
import shutil
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _helpers import one_gpu_two_cores

from gpude.campaign import fill_reference as fill
from gpude.core.errors import GpudeError
from gpude.core.io import write_csv_atomic
from gpude.run.rows import load_traces, merge_traces, thin_trace
from gpude.study import experiment as experiment_model

ROOT = Path(__file__).resolve().parents[1]

QIN = ROOT / "results" / "reference" / "nvidia-h200" / "qin"
EXPERIMENT = ROOT / "config" / "experiments" / "qin.yaml"
FLOAT32 = ["--experiment", str(EXPERIMENT), "--implementations", "ide", "--dtypes", "float32"]
MISSING = [("Q01", 50, 100), ("Q02", 10, 1000), ("Q04", 50, 100), ("Q04", 50, 1000)]


def test_batch_and_log_paths_are_the_workflows():
    common = (ROOT / "workflow" / "rules" / "common.smk").read_text()
    # the workflow's batch path is the experiment model's, as the tools' is
    assert "BATCH = experiment_model.batch_path(PARAM_GRID)" in common
    assert fill.BATCH == experiment_model.batch_path(False)
    run_smk = (ROOT / "workflow" / "rules" / "run.smk").read_text()
    if 'batch_log("run_batch")' in run_smk:  # the log made from BATCH by common.smk's batch_log
        scope = {"BATCH": fill.BATCH}
        exec(re.search(r"^def batch_log\(step\):\n(?:(?:    .*)?\n)*", common, re.M).group(0), scope)
        assert scope["batch_log"]("run_batch") == fill.LOG
    else:
        assert f'"{fill.LOG}"' in run_smk


@pytest.mark.io
def test_the_qin_reference_lacks_the_four_float32_cells_its_readme_names():
    experiment = fill.load_experiment(EXPERIMENT)
    cells = fill.grid(experiment, ["ide"], ["float32"])
    missing = fill.missing_cells(cells, pd.read_csv(QIN / "trials.csv"))
    assert [(c.function, c.dim, c.popsize) for c in missing] == MISSING
    assert {c.trials for c in missing} == {25} and all(c.chunks() == [0] for c in missing)
    assert missing[0].batch("qin", 0) == "results/qin/batches/de/ide/Q01/d50/np100/float32/chunk0"
    cmd = fill.snakemake_command(EXPERIMENT, experiment, missing, ["float32"], dry_run=False)
    assert cmd[cmd.index("--config"):] == ["--config", "gpu=yes", "dtypes=[float64,float32]"]
    assert cmd[cmd.index("-m") + 1:cmd.index("-m") + 6] == ["snakemake", *(f"{c.batch('qin', 0)}.csv" for c in missing)]


def test_snakemake_dry_run_of_the_missing_batches_and_the_rules_own_commands(tmp_path, monkeypatch):
    """`snakemake -n -p` on a copy of the workflow: the four batches, by rule run_batch_gpu, with the
    very commands that --via gpude runs on a host without Snakemake."""
    one_gpu_two_cores(monkeypatch)
    for name in ("Snakefile", "workflow", "config", "profiles", "paper/published"):
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, tmp_path / name)
    shutil.copytree(QIN, tmp_path / "results/reference/nvidia-h200/qin")
    import subprocess

    res = subprocess.run([sys.executable, "-m", "gpude.campaign.fill_reference", "run", "--dry-run",
                          *FLOAT32, "--reference", "results/reference/nvidia-h200/qin", "--root", str(tmp_path),
                          "--", "-p"], capture_output=True, text=True, timeout=300)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out
    # each batch after its warm-up job (which compiles outside the timed window: docs/startup.md)
    assert re.search(r"^run_batch_gpu\s+4$", out, re.M) and re.search(r"^warmup\s+4$", out, re.M)
    assert re.search(r"^total\s+8$", out, re.M)
    for function, dim, popsize in MISSING:
        assert f"function={function}, dim={dim}, popsize={popsize}, dtype=float32, chunk=0" in out
    shell = sorted(line.split("Shell command: ", 1)[1].strip() for line in out.splitlines()
                   if "Shell command: " in line and "gpude run " in line)
    experiment = fill.load_experiment(EXPERIMENT)
    missing = fill.missing_cells(fill.grid(experiment, ["ide"], ["float32"]), pd.read_csv(QIN / "trials.csv"))
    assert shell == sorted(fill.rule_command(experiment, c, 0) for c in missing)


def fake_batches(root: Path, reference: pd.DataFrame) -> list[Path]:
    """Batch files for the four cells as `gpude run` writes them: the float64 iDE rows of the same cells
    relabelled float32 (a column the reference lacks added), and a made-up trace per trial."""
    paths = []
    for function, dim, popsize in MISSING:
        rows = reference[(reference["implementation"] == "ide") & (reference["dtype"] == "float64") &
                         (reference["function"] == function) & (reference["dim"] == dim) &
                         (reference["popsize"] == popsize)].sort_values("trial").copy()
        stem = root / f"results/qin/batches/de/ide/{function}/d{dim}/np{popsize}/float32/chunk0"
        stem.parent.mkdir(parents=True, exist_ok=True)
        rows["dtype"] = "float32"
        rows["run_id"] = rows["run_id"].str.replace("/float64/", "/float32/")
        rows["trace_path"] = f"{stem}.npz"
        rows["boot_id"] = "boot-0123abcd"
        rows.to_csv(f"{stem}.csv", index=False)
        n = 50  # a trace falling by 0.03 decades per generation
        best = np.concatenate([10.0 ** (3 - 0.03 * np.arange(n)) for _ in range(len(rows))])
        np.savez_compressed(f"{stem}.npz", trial=rows["trial"].to_numpy(), trial_start=np.arange(len(rows)) * n,
                            generation=np.tile(np.arange(n), len(rows)), fes=np.tile(np.arange(n) * popsize, len(rows)),
                            best_error=best, time_s=np.tile(np.arange(n) * 0.01, len(rows)))
        paths.append(Path(f"{stem}.csv"))
    return paths


@pytest.mark.io
def test_merge_adds_the_cells_and_keeps_every_old_row_and_trace(tmp_path):
    # a smaller copy of the reference: its iDE rows and their traces, written as gpude merge writes them
    ref = tmp_path / "results/reference/nvidia-h200/qin"
    full = pd.read_csv(QIN / "trials.csv")
    old = full[full["implementation"] == "ide"].reset_index(drop=True)
    write_csv_atomic(old, ref / "trials.csv")
    merge_traces([(old, str(QIN / "traces.npz"))], ref / "traces.npz")
    old_text, old_traces = (ref / "trials.csv").read_text(), load_traces(ref / "traces.npz")
    old = pd.read_csv(ref / "trials.csv")
    args = [*FLOAT32, "--reference", str(ref), "--root", str(tmp_path), "--trace-decades", "0.1"]
    assert fill.main(["merge", *args]) == 1  # no batch file yet: said, nothing written
    assert (ref / "trials.csv").read_text() == old_text
    batches = fake_batches(tmp_path, old)
    clash = pd.read_csv(batches[0]).assign(run_id=old["run_id"].iloc[0])
    clash.to_csv(tmp_path / "clash.csv", index=False)
    shutil.copy(batches[0].with_suffix(".npz"), tmp_path / "clash.npz")
    with pytest.raises(GpudeError, match="already in the reference"):
        fill.merge(ref, [tmp_path / "clash.csv"])
    assert fill.main(["merge", *args]) == 0
    merged = pd.read_csv(ref / "trials.csv")
    assert len(merged) == len(old) + 100 and list(merged.columns) == [*old.columns, "boot_id"]
    pd.testing.assert_frame_equal(merged.iloc[:len(old)][list(old.columns)], old, check_dtype=False)
    assert merged.iloc[:len(old)]["boot_id"].isna().all()
    traces = load_traces(ref / "traces.npz")
    assert all(np.array_equal(traces[k]["best_error"], v["best_error"]) for k, v in old_traces.items())
    new = traces["de/ide/Q04/d50/np1000/float32/t24"]
    made = {"best_error": 10.0 ** (3 - 0.03 * np.arange(50)), "fes": np.arange(50) * 1000,
            "generation": np.arange(50), "time_s": np.arange(50) * 0.01}
    thinned = thin_trace(made, 0.1)  # thinned as the reference's traces are
    assert all(np.array_equal(new[k], thinned[k]) for k in made) and len(new["fes"]) < 50
    # the reference now has all 48 float32 cells, 25 trials each; a second call finds nothing to do
    assert fill.main(["verify", *args]) == 0
    assert fill.main(["merge", *args]) == 0 and len(pd.read_csv(ref / "trials.csv")) == len(merged)
    assert not (ref / ".fill_reference").exists()
