"""benchmarks/de_performance_summary.py on small synthetic CSVs (no GPU)."""

import pandas as pd
import pytest
from _benchmarks import load_benchmark


@pytest.fixture(scope="module")
def summary():
    return load_benchmark("de_performance_summary")


PROV = dict(gpu="NVIDIA H200", compute_capability="9.0", gpu_sms=132, cuda_driver="13.0",
            cuda_runtime="13.0", cpu="Intel(R) Xeon(R) Processor", cpu_cores=16, host="vm",
            python="3.12.3", numpy="2.4.6", numba="0.68.0", gpude="0.1.0", numba_cuda="0.30.4",
            git_commit="abcdef1234567890", timestamp_utc="2026-11-21T06:00:00Z")


def row(impl, fid, dtype, trial, wall, err=100.0, options="{'poll_every': 1}", **kw):
    r = dict(implementation=impl, function=fid, dtype=dtype, trial=trial, seed=trial, dim=100,
             popsize=250, max_fes=10_000_000, F=0.5, CR=0.3, wall_time_s=wall, best_error=err,
             fes_used=10_000_000, hit_target=False, setup_time_s=2.0, prebound=True,
             options=options, launch="", status="budget")
    r.update(kw)
    return r


def write(path, rows, **prov):
    pd.DataFrame(rows).assign(**{**PROV, **prov}).to_csv(path, index=False)


@pytest.fixture
def results(tmp_path):
    """2 implementations x 2 functions x 2 trials, one failed row, one poll variant file."""
    rows = [
        row("ide", "F01", "float32", 0, 0.5, err=1000.0),
        row("ide", "F01", "float32", 1, 0.7, err=3000.0),
        row("ide", "F02", "float32", 0, 0.6), row("ide", "F02", "float32", 1, 0.8),
        row("master_slave", "F01", "float32", 0, 30.0),
        row("master_slave", "F01", "float32", 1, 36.0),
        row("master_slave", "F02", "float32", 0, 40.0),
        row("master_slave", "F02", "float32", 1, 44.0),
        dict(implementation="master_slave", function="F01", dtype="float64",
             status="error:CudaSupportError: boom"),
    ]
    write(tmp_path / "de_nvidia-h200_gpu.csv", rows)
    write(tmp_path / "de_nvidia-h200_gpu_poll8.csv",
          [row("ide", "F01", "float32", t, w, options="{'poll_every': 8}")
           for t, w in enumerate([0.4, 0.5])])
    return tmp_path


def run(summary, results, out=None):
    out = out or results / "SUMMARY.md"
    assert summary.main(["--results", str(results), "--out", str(out)]) == 0
    return out.read_text()


def section(text, title):
    """The text of the '## title...' section up to the next '## '."""
    start = text.index("\n## " + title)
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else None]


def main_table(text):
    """The main wall-time table(s), without the per-trial spread tables."""
    return section(text, "Wall time").split("#### Per-trial spread")[0]


def table_row(text, *first_cells):
    prefix = "| " + " | ".join(first_cells) + " |"
    hits = [ln for ln in text.splitlines() if ln.startswith(prefix)]
    assert len(hits) == 1, (prefix, hits)
    return [c.strip() for c in hits[0].strip("|").split("|")]


def test_ratios_hand_computed(summary, results):
    text = run(summary, results)
    main = main_table(text)
    ide = table_row(main, "ide", "float32")
    # columns: implementation, dtype, options, source, F01..F10
    assert ide[4] == "0.600 (n=2) / 0.665 = 0.90x"        # (0.5 + 0.7) / 2 / 0.665 = 0.902
    assert ide[5] == "0.700 (n=2) / 0.659 = 1.06x"        # 0.7 / 0.659 = 1.062
    assert ide[6] == "not measured"
    ms = table_row(main, "master_slave", "float32")
    assert ms[4] == "33.0 (n=2) / 33.2 = 0.99x"           # 33 / 33.2 = 0.994
    assert ms[2] == "{'poll_every': 1}" and ms[3].startswith("gpu @")
    # per-trial spread
    spread = section(text, "Wall time").split("#### Per-trial spread")[1]
    assert table_row(spread, "ide", "float32")[2:4] == ["0.500-0.700", "0.600-0.800"]


def test_missing_anchor_shows_ours_only(summary, results):
    text = run(summary, results)
    ms = table_row(main_table(text), "master_slave", "float32")
    assert ms[5] == "42.0 (n=2)"                           # the authors have no master-slave F02
    target = table_row(section(text, "Target check"), "master-slave <= 1.0x where anchored")
    # columns: target, dtype, F01..F10, verdict
    assert target[2] == "met 0.99x" and target[3] == "no anchor"
    assert target[6] == "not measured" and target[11] == "not measured"   # F05, F10 anchored
    assert target[-1] == "met on 1 of 3, 2 not measured"


def test_target_check(summary, results):
    target = section(run(summary, results), "Target check")
    assert "float32 rows" in target
    ide = table_row(target, "iDE <= 1.0x on every function")
    assert ide[2:4] == ["met 0.90x", "**missed** 1.06x"]
    assert ide[4] == "not measured"
    assert ide[-1] == "met on 1 of 10, missed on 1, 8 not measured"
    assert table_row(target, "standard DE (sequential) <= 1.0x")[-1] == "not measured"
    assert table_row(target, "All-GPU DE <= 1.0x")[-1] == "not measured"


def test_failed_rows_listed(summary, results):
    text = run(summary, results)
    failed = section(text, "Failed configurations")
    r = table_row(failed, "`de_nvidia-h200_gpu.csv`", "NVIDIA H200", "master_slave", "float64")
    assert r[4] == "F01" and r[6] == "error:CudaSupportError: boom"
    assert "master_slave | float64" not in section(text, "Wall time")
    assert "8 ok, 1 failed" in section(text, "Sources")


def test_poll_file_goes_to_variants(summary, results):
    text = run(summary, results)
    assert "poll_every': 8" not in section(text, "Wall time")
    r = table_row(section(text, "Variants"), "`de_nvidia-h200_gpu_poll8.csv`")
    assert r[2:5] == ["ide", "float32", "{'poll_every': 8}"]
    assert "poll" in r[6]
    assert r[7] == "F01: 0.450 (n=2) = 0.68x"              # 0.45 / 0.665 = 0.677


def test_device_versions_and_commit_named(summary, results):
    text = run(summary, results)
    assert "Devices in the data: **NVIDIA H200**" in text
    assert "### NVIDIA H200" in section(text, "Wall time")
    assert "### NVIDIA H200" in section(text, "Target check")
    src = section(text, "Sources")
    for s in ("Intel(R) Xeon(R) Processor x16", "numba 0.68.0", "numba-cuda 0.30.4",
              "driver 13.0", "132 SMs", "`abcdef1`"):
        assert s in src


def test_final_errors_beside_authors(summary, results):
    errors = section(run(summary, results), "Final error")
    assert table_row(errors, "authors' iDE (H200)")[3] == "2.1e5"
    ours = table_row(errors, "ours: ide (NVIDIA H200)", "float32")
    assert ours[2:5] == ["2", "2.0e3", "100"]             # mean(1000, 3000) = 2000
    assert "not measured" in ours[5]


def test_newer_main_file_supersedes_older(summary, results):
    write(results / "de_nvidia-h200_gpu_ide.csv",
          [row("ide", "F01", "float32", t, w, options="{'poll_every': 4}")
           for t, w in enumerate([0.3, 0.35])],
          timestamp_utc="2026-11-22T00:00:00Z", git_commit="fedcba9876")
    text = run(summary, results)
    ide = table_row(main_table(text), "ide", "float32")
    assert ide[2] == "{'poll_every': 4}" and ide[3] == "gpu_ide @`fedcba9`"
    # F01 comes from the newer file; F02, which only the older file measured, stays
    assert ide[4] == "0.325 (n=2) / 0.665 = 0.49x" and ide[5] == "0.700 (n=2) / 0.659 = 1.06x"
    r = table_row(section(text, "Variants"), "`de_nvidia-h200_gpu.csv`", "NVIDIA H200", "ide")
    assert r[6] == "superseded by newer de_nvidia-h200_gpu_ide.csv"


def test_other_setting_and_other_device(summary, tmp_path):
    write(tmp_path / "de_nvidia-a100_gpu.csv",
          [row("ide", "F01", "float32", t, 1.0 + t) for t in range(2)], gpu="NVIDIA A100")
    write(tmp_path / "de_nvidia-h200_quick.csv",
          [row("ide", "F01", "float32", 0, 0.1, max_fes=100_000)])
    text = run(summary, tmp_path)
    main = main_table(text)
    assert "### NVIDIA A100 (no anchor for this device: ours only)" in main
    assert table_row(main, "ide", "float32")[4] == "1.50 (n=2)"      # no ratio on an A100
    assert "### NVIDIA H200" not in main
    r = table_row(section(text, "Variants"), "`de_nvidia-h200_quick.csv`")
    assert "max_fes=100000" in r[6]
    assert "Not measured: no main run on an H200" in section(text, "Target check")


def test_old_file_without_status_column(summary, tmp_path):
    df = pd.DataFrame([row("ide", "F01", "float32", 0, 0.5)]).assign(**PROV).drop(
        columns=["status", "compute_capability"])
    df.to_csv(tmp_path / "de_nvidia-h200_gpu.csv", index=False)
    text = run(summary, tmp_path)
    assert table_row(main_table(text), "ide", "float32")[4] == \
        "0.500 (n=1) / 0.665 = 0.75x"
    assert section(text, "Failed configurations").strip().endswith("None.")


def test_no_files(summary, tmp_path):
    out = tmp_path / "sub" / "SUMMARY.md"
    text = run(summary, tmp_path, out)
    assert "nothing measured yet" in text
    assert "Not measured" in section(text, "Wall time")
    assert "Not measured" in section(text, "Target check")
    assert "Ours: not measured." in section(text, "Final error")
    assert list(out.parent.iterdir()) == [out]           # atomic write left no temp file


def test_ratio_format(summary):
    assert summary.fmt_ratio(2.39 / 2.383) == "1.003x"   # never '1.00x' for a missed target
    assert summary.fmt_ratio(1.0) == "1.00x"
    assert summary.fmt_ratio(0.5 / 0.665) == "0.75x"


def test_a_rewrite_keeps_the_sections_other_scripts_wrote(summary, results):
    out = results / "SUMMARY.md"
    pd.DataFrame([dict(device="NVIDIA H100 SXM", function="F01", floor_s_run=0.003)]).to_csv(
        results / "de_floor.csv", index=False)  # gpude.report.floor's arithmetic: not a result file
    assert "CPU only" not in run(summary, results, out)
    marked = ("<!-- side-by-side:begin -->\n## Side by side\n\nratios\n<!-- side-by-side:end -->\n\n"
              "<!-- de-floor:begin -->\n## The floor\n<!-- de-floor:end -->\n")
    out.write_text(out.read_text() + "\n" + marked)
    text = run(summary, results, out)
    assert text.count("<!-- side-by-side:begin -->") == 1 and text.count("<!-- de-floor:end -->") == 1
    assert "## Side by side\n\nratios\n" in text and text.index("side-by-side:begin") < text.index("de-floor:begin")
    assert run(summary, results, out) == text  # stable: nothing piles up
