"""benchmarks/masw_perf.py's use of the traffic model (the model itself: tests/test_masw_traffic.py), its
protocol bookkeeping, and gpude.core.ncu's reading of its counted runs (no GPU: the measurements themselves
run on the GPU host)."""

from pathlib import Path

import pytest
import yaml
from _benchmarks import load_benchmark

from gpude.core import gpu_runtime, ncu
from gpude.implementations.masw_gpu.traffic import traffic_rows

ROOT = Path(__file__).resolve().parents[1]
masw_perf = load_benchmark("masw_perf")


def test_every_lastra_function_has_a_kind_and_its_runs():
    config = yaml.safe_load((ROOT / "config" / "experiments" / "lastra.yaml").read_text())
    assert sorted(f for fids in masw_perf.KINDS.values() for f in fids) == sorted(config["functions"])
    assert tuple(config["dims"]) == masw_perf.PROTOCOL_DIMS
    runs = [masw_perf.runs_per_cell(f) for f in config["functions"]]
    assert sum(runs) * len(config["dims"]) == 1250  # 5 x 5 x 10 + 10 x 5 x 20


def test_variants_are_parsed_into_options():
    import pytest

    assert masw_perf.parse_variant("u4:ls_mode=fused,ls_unroll=4") == ("u4", {"ls_mode": "fused", "ls_unroll": 4})
    assert masw_perf.parse_variant("regen:ls_regen=True") == ("regen", {"ls_regen": True})
    for bad in ("u4", "u4:", ":ls_unroll=4", "u4:ls_unroll"):
        with pytest.raises(SystemExit, match="expected NAME:KEY=VALUE"):
            masw_perf.parse_variant(bad)


def test_a_batched_measurement_reports_per_run_times(monkeypatch):
    """--trials-per-launch: the child runs a batch and divides the batch's clock by its size (on the
    simulator, tiny sizes: the bookkeeping, not the speed)."""
    import pytest

    from gpude.functions.gpu import simulator_enabled

    if not simulator_enabled():
        pytest.skip("the simulator's tiny sizes")
    monkeypatch.setattr(masw_perf, "CYCLE_FES", 30)
    monkeypatch.setattr(masw_perf, "POPSIZE", 8)
    batch = masw_perf.child("L01", 16, 1, "steps", 2)
    assert batch["batch"] == 2 and len(batch["cycle_s"]) == 1 and batch["fes"] == 38
    assert batch["cycle_s"][0] > 0 and batch["init_s"] >= 0
    # a variant's options reach the implementation; the fused local search's grid is reported
    one = masw_perf.child("L01", 16, 1, "", 1, "", {"ls_mode": "fused", "ls_unroll": 4})
    assert one["ls_mode"] == "fused" and one["ls_blocks"] == 1 and one["fes"] == 38


NCU_LOG = '''==PROF== Connected to process 526 (/usr/bin/python3.12)
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
"0","526","python3.12","127.0.0.1","blx_children[abi:v1,cw51c](Array<double, 2, C, mutable, aligned>)","1","7","(256, 1, 1)","(98, 3, 1)","0","9.0","Command line profiler metrics","dram__bytes_read.sum","byte","2,400,000"
"0","526","python3.12","127.0.0.1","blx_children[abi:v1,cw51c](Array<double, 2, C, mutable, aligned>)","1","7","(256, 1, 1)","(98, 3, 1)","0","9.0","Command line profiler metrics","dram__bytes_write.sum","byte","1,600,000"
"1","526","python3.12","127.0.0.1","sw_apply(Array<double, 1, C, mutable, aligned>)","1","7","(256, 1, 1)","(98, 1, 1)","0","9.0","Command line profiler metrics","dram__bytes_read.sum","byte","9,000,000"
"1","526","python3.12","127.0.0.1","sw_apply(Array<double, 1, C, mutable, aligned>)","1","7","(256, 1, 1)","(98, 1, 1)","0","9.0","Command line profiler metrics","dram__bytes_write.sum","byte","100"
"2","526","python3.12","127.0.0.1","blx_children[abi:v1,cw51c](Array<double, 2, C, mutable, aligned>)","1","7","(256, 1, 1)","(98, 3, 1)","0","9.0","Command line profiler metrics","dram__bytes_read.sum","byte","2,000,000"
"2","526","python3.12","127.0.0.1","blx_children[abi:v1,cw51c](Array<double, 2, C, mutable, aligned>)","1","7","(256, 1, 1)","(98, 3, 1)","0","9.0","Command line profiler metrics","dram__bytes_write.sum","byte","1,000,000"
"0","526","python3.12","127.0.0.1","blx_children[abi:v1,cw51c](Array<double, 2, C, mutable, aligned>)","1","7","(256, 1, 1)","(98, 3, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","nsecond","1,500"
"1","526","python3.12","127.0.0.1","sw_apply(Array<double, 1, C, mutable, aligned>)","1","7","(256, 1, 1)","(98, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","nsecond","40,000"
"2","526","python3.12","127.0.0.1","blx_children[abi:v1,cw51c](Array<double, 2, C, mutable, aligned>)","1","7","(256, 1, 1)","(98, 3, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","nsecond","2,500"
==PROF== Disconnected from process 526
'''  # noqa: E501  (ncu's CSV output verbatim)


def test_ncu_log_read_per_kernel(tmp_path):
    log = tmp_path / "ncu.csv"
    log.write_text(NCU_LOG)
    k = ncu.kernel_bytes(log).set_index("kernel")
    assert list(k.index) == ["sw_apply", "blx_children"]  # by bytes read
    cols = ["launches", "dram_read_bytes", "dram_write_bytes"]
    assert k.loc["blx_children", cols].tolist() == [2, 4_400_000, 2_600_000]
    assert k.loc["sw_apply", cols].tolist() == [1, 9_000_000, 100]
    # each kernel's own GPU time, summed over its launches (ns -> s)
    assert k.loc["blx_children", "gpu_time_s"] == pytest.approx(4e-6)
    assert k.loc["sw_apply", "gpu_time_s"] == pytest.approx(4e-5)
    # a log of the bytes only (older calls) has no time
    no_time = "\n".join(line for line in NCU_LOG.splitlines() if "gpu__time_duration" not in line)
    (tmp_path / "bytes.csv").write_text(no_time)
    assert ncu.kernel_bytes(tmp_path / "bytes.csv")["gpu_time_s"].isna().all()
    (tmp_path / "empty.csv").write_text("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission\n")

    with pytest.raises(RuntimeError, match="ERR_NVGPUCTRPERM"):
        ncu.kernel_bytes(tmp_path / "empty.csv")


def test_ncu_profiles_only_the_bracketed_run_and_a_missing_ncu_is_named(monkeypatch, tmp_path):
    import shutil

    import pytest

    cmd = ncu.command("/x/ncu", tmp_path / "log.csv")
    assert cmd[:3] == ["/x/ncu", "--profile-from-start", "off"]
    assert "dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum" in cmd and "--csv" in cmd
    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.setattr(ncu.Path, "is_file", lambda self: False)
    with pytest.raises(RuntimeError, match="--count-bytes needs Nsight Compute's `ncu`"):
        ncu.find()


def test_a_counted_run_puts_the_counters_beside_the_model(monkeypatch):
    """counted_run: the run's own counters through the traffic model (the initial population as 3 NP + 1
    rows per trial) against ncu's bytes, both per FE of the whole batch."""
    counts = dict(ga_steps=2, children=40, dist_pairs=100, dist_rows=50, parent_rows=30, moves=4,
                  ls_evaluations=40, ls_steps=25, ls_accepted=10, new_chains=1)

    def fake_measure(fid, dim, cycles, src=None, ls_mode="", batch=1, ncu_log=None):
        assert ls_mode == "fused" and batch == 2  # --count-ls-mode and the batch reach the child
        ncu_log.write_text(NCU_LOG)
        return dict(fes=140, counts=counts, ls_mode="fused", best_error=1.0, device="NVIDIA H100 80GB HBM3")

    monkeypatch.setattr(masw_perf, "measure", fake_measure)
    row, kernels = masw_perf.counted_run("L01", 1000, 1, 2, "fused")
    t = traffic_rows(counts, "after", has_perm=False)
    model = ((3 * masw_perf.POPSIZE + 1) * 2 + t["ga"] + t["ls"]) * 1000 * 8
    assert row["version"] == "counted-b2" and row["trials_per_launch"] == 2
    assert row["bytes_per_fe_model"] == model / 280
    assert row["bytes_per_fe_counted"] == (4_400_000 + 2_600_000 + 9_000_100) / 280
    assert row["counted_over_model"] == (4_400_000 + 2_600_000 + 9_000_100) / model
    assert row["kernel_launches"] == 3 and len(kernels) == 2


def test_a_variant_named_like_a_batch_runs_one_trial(monkeypatch, tmp_path):
    # '--variant b4:...' once ran as trials_per_launch=4 (its version 'after-b4' was read as a batch)
    calls = []
    counts = dict(ga_steps=1, children=2, dist_pairs=4, dist_rows=5, parent_rows=3, moves=1,
                  ls_evaluations=5, ls_steps=3, ls_accepted=1, new_chains=0)

    def fake_measure(fid, dim, cycles, src=None, ls_mode="", batch=1, ncu_log=None, ga_mode="", extra=None):
        calls.append((batch, extra))
        return dict(counts=counts, cycle_s=[0.1], init_s=0.01, fes=masw_perf.POPSIZE + masw_perf.CYCLE_FES,
                    device="GPU X", phase_s={"ga": 0.05, "ls": 0.05}, ls_mode="fused", compile_s=0.0,
                    best_error=1.0, ls_blocks=8, ls_regs_per_thread=64)

    monkeypatch.setattr(masw_perf, "measure", fake_measure)
    monkeypatch.setattr(gpu_runtime, "copy_bandwidth", lambda: 1e12)
    masw_perf.main(["--out", str(tmp_path), "--dims", "1000", "--functions", "L01", "--cycles", "1",
                    "--trials-per-launch", "2", "--variant", "b4:ls_mode=fused,ls_min_blocks=4"])
    assert calls == [(1, None), (2, None), (1, {"ls_mode": "fused", "ls_min_blocks": 4})]
    import pandas as pd

    rows = pd.read_csv(next(tmp_path.glob("*.csv")))
    assert list(rows["version"]) == ["after", "after-b2", "after-b4"]
    assert list(rows["trials_per_launch"]) == [1, 2, 1]


def test_the_protocol_is_projected_from_the_newest_defaults_of_each_function_or_its_kind():
    import pandas as pd
    import pytest

    def row(version, fid, kind, dim, run_s, commit="new", stamp="2026-11-26T01:00:00Z"):
        return dict(version=version, function=fid, kind=kind, dim=dim, projected_run_s=run_s, git_commit=commit,
                    timestamp_utc=stamp, device="GPU X")

    frame = pd.DataFrame([
        row("after", "L01", "pointwise", 100_000, 10.0), row("after", "L01", "pointwise", 1_000_000, 19.0),
        row("after", "C04", "head", 100_000, 12.0), row("after", "C06", "head", 100_000, 14.0),
        row("after-b10", "L01", "pointwise", 100_000, 1.0),   # a batch: not how the campaign runs
        row("after-u4", "C04", "head", 100_000, 1.0),         # a variant: not the defaults
        row("after", "L06", "scan", 100_000, 99.0, commit="old", stamp="2026-11-25T01:00:00Z"),  # stale
    ])
    lines, total = masw_perf.protocol_lines(frame, {})
    got = {(ln["function"], ln["dim"]): ln for ln in lines}
    assert got[("L02", 100_000)]["run_s"] == 10.0 and got[("L02", 500_000)]["run_s"] == pytest.approx(14.0)
    assert got[("L02", 3_000_000)]["run_s"] == pytest.approx(39.0)  # beyond the last D: the last segment's line
    assert got[("C04", 100_000)]["run_s"] == 12.0 and got[("C06", 100_000)]["run_s"] == 14.0  # their own rows
    assert got[("C08", 100_000)]["run_s"] == 13.0 and got[("C08", 100_000)]["from_function"] == "C04,C06"
    assert got[("C08", 3_000_000)]["run_s"] == pytest.approx(13.0 * 30)  # one D measured: proportional
    assert not any(ln["function"] == "L06" for ln in lines)  # its only row is of an older commit
    assert total == pytest.approx(sum(ln["cell_s"] for ln in lines))


def test_a_child_imports_only_what_an_older_tree_has():
    """``--child`` may run under an older source tree (``--before-src``): the script imports nothing of
    gpude at module level, and the traffic model (:mod:`gpude.implementations.masw_gpu.traffic`, newer
    than some measured trees) only in the functions the parent runs."""
    import ast

    tree = ast.parse((ROOT / "benchmarks" / "masw_perf.py").read_text())
    top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert not [n for n in top if "gpude" in ast.unparse(n)]
    users = {f.name for f in tree.body if isinstance(f, ast.FunctionDef)
             for n in ast.walk(f) if isinstance(n, ast.ImportFrom) and "traffic" in (n.module or "")}
    assert users == {"counted_run", "main"}
