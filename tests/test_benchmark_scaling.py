"""benchmarks/scaling.py: the plan of the two sweeps, the refusals, the floor column against
de_floor.csv, and (on the simulator, tiny sizes) the CSV it writes and a resumed call."""

import importlib.util
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
PROV = dict(gpu="NVIDIA H100 80GB HBM3", host="gpuhost", git_commit="abc1234", timestamp_utc="2026-11-25T00:00:00Z")
TINY = ["--functions", "N00", "--popsizes", "6,8", "--dims", "4", "--base-dim", "4", "--base-popsize", "6",
        "--max-fes", "30", "--repeats", "1", "--implementations", "ide,resident,ide:2"]


@pytest.fixture(scope="module")
def scaling():
    spec = importlib.util.spec_from_file_location("scaling", ROOT / "benchmarks" / "scaling.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclass looks the module up
    spec.loader.exec_module(mod)
    return mod


def test_plan_shares_the_base_point_and_leaves_out_undefined_dimensions(scaling):
    points, undefined = scaling.plan(["F01", "N05"], [("ide", 1), ("ide", 30)])
    # F01: NP sweep 5 points at D=100, D sweep adds 10 and 30 (100 is shared; no data at 300, 1000)
    f01 = [(p.dim, p.popsize) for p in points if p.function == "F01" and p.trials_per_launch == 1]
    assert f01 == [(100, 50), (100, 100), (100, 250), (100, 500), (100, 1000), (10, 250), (30, 250)]
    assert len([p for p in points if p.function == "N05"]) == 2 * 9  # any D
    assert undefined == [("F01", 300), ("F01", 1000)]
    # at each point the lines follow each other
    assert [(p.implementation, p.trials_per_launch) for p in points[:4]] == [("ide", 1), ("ide", 30)] * 2
    assert scaling.parse_lines("ide,resident,ide:30,all_gpu") == [("ide", 1), ("resident", 1), ("ide", 30),
                                                                   ("all_gpu", 1)]


@pytest.mark.parametrize("extra, message", [
    (["--functions", "F99"], "unknown function"),
    (["--implementations", "ide,nope"], "nope"),
    (["--implementations", "ide:0"], "positive integers"),
    (["--popsizes", "3,8"], "NP must be >= 4"),
    (["--dims", "4,x"], "--dims must be comma-separated positive integers"),
    (["--max-fes", "7"], "smaller than a population"),
    (["--floor-device", "GTX 480"], "--floor-device must be one of"),
    (["--archive", "x.tar.gz"], "outside it"),
])
def test_bad_input_is_refused_by_name(scaling, tmp_path, extra, message):
    with pytest.raises(SystemExit, match=message):
        scaling.main([*TINY, *extra, "--out", str(tmp_path)])
    assert not list(tmp_path.iterdir())  # refused before anything ran or was written


def test_without_a_gpu_or_the_simulator_the_gpu_lines_fail_clearly(scaling, tmp_path, monkeypatch):
    from gpude import gpu_runtime

    monkeypatch.setattr(gpu_runtime, "simulator_enabled", lambda: False)
    monkeypatch.setattr(gpu_runtime.cuda, "is_available", lambda: False)
    with pytest.raises(SystemExit, match="scaling: a GPU code path was requested but no usable CUDA GPU"):
        scaling.main([*TINY, "--out", str(tmp_path)])


def test_floor_column_is_de_floor_s_at_case_study_1(scaling):
    """The refactor cannot drift: at D=100, NP=250, 1e7 FEs the floor is de_floor.csv's."""
    floor = pd.read_csv(ROOT / "results" / "benchmarks" / "de_floor.csv")
    floor = floor[floor.dtype == "float32"].set_index(["device", "batch", "function"])["floor_s_run"]
    for device, peaks in (("NVIDIA H100 80GB HBM3", "NVIDIA H100 SXM"), ("NVIDIA H200", "NVIDIA H200 SXM")):
        for fid in ("F01", "F10"):
            for b in (1, 30):
                got = scaling.floor_of(scaling.Point(fid, "ide", b, 100, 250), 10_000_000, "float32", device,
                                       "NVIDIA H100 SXM")
                # (the CSV's value read back: its last bit may differ with the pandas that reads it)
                assert got["floor_device"] == peaks
                assert got["floor_s_run"] == pytest.approx(floor[(peaks, b, fid)], rel=1e-12)
    # a device without listed peaks takes the fallback's, and says so
    assert scaling.floor_of(scaling.Point("F01", "ide", 1, 100, 250), 10_000_000, "float32", "NVIDIA H100 PCIe",
                            "NVIDIA H200 SXM")["floor_device"] == "NVIDIA H200 SXM"


def fake_measure(calls, seconds=0.0):
    def measure(point, max_fes, repeats, settings):
        calls.append(point)
        time.sleep(seconds)
        runs = repeats * point.trials_per_launch
        return dict(runs=runs, wall_s_per_run=0.1 * point.popsize / point.trials_per_launch, wall_s_per_run_std=0.0,
                    call_s_per_run=0.1, setup_s=1.0, best_error_mean=1.0, fes_mean=max_fes)
    return measure


def test_max_seconds_stops_between_points_and_the_next_call_goes_on(scaling, tmp_path):
    args = scaling.parser().parse_args([*TINY, "--out", str(tmp_path), "--max-seconds", "0.5"])
    calls = []
    scaling.run(args, fake_measure(calls, 0.2), PROV)
    csv = tmp_path / "nvidia-h100-80gb-hbm3.csv"
    assert len(calls) == 2 and len(pd.read_csv(csv)) == 2  # a third would end past 0.5 s (0.4 + the longest, 0.2)
    args = scaling.parser().parse_args([*TINY, "--out", str(tmp_path)])
    scaling.run(args, fake_measure(calls), PROV)
    df = pd.read_csv(csv)
    assert len(calls) == 6 and len(df) == 6 and (df.status == "ok").all()
    # another commit measures again, replacing the rows; --force too
    scaling.run(args, fake_measure(calls), {**PROV, "git_commit": "def5678"})
    assert len(calls) == 12 and len(pd.read_csv(csv)) == 6 and set(pd.read_csv(csv).git_commit) == {"def5678"}
    scaling.run(scaling.parser().parse_args([*TINY, "--out", str(tmp_path), "--force"]), fake_measure(calls),
                {**PROV, "git_commit": "def5678"})
    assert len(calls) == 18 and len(pd.read_csv(csv)) == 6


def test_on_the_simulator_it_writes_the_schema_and_a_second_call_skips(scaling, tmp_path):
    from gpude.gpu_runtime import simulator_enabled

    if not simulator_enabled():
        pytest.skip("tiny sizes for the simulator")
    calls = []

    def counted(point, *rest):
        calls.append(point)
        return scaling.measure_point(point, *rest)

    args = scaling.parser().parse_args([*TINY, "--out", str(tmp_path)])
    assert scaling.run(args, counted) == 0
    csv = tmp_path / "numba-cuda-simulator.csv"
    df = pd.read_csv(csv)
    for col in [*scaling.KEY, *scaling.SETTINGS, "runs", "wall_s_per_run", "wall_s_per_run_std", "call_s_per_run",
                "best_error_mean", "fes_mean", "floor_s_run", "floor_device", "status", "device", "host",
                "numba", "numba_cuda", "git_commit", "timestamp_utc", "base_dim", "base_popsize"]:
        assert col in df.columns, col
    assert len(df) == len(calls) == 2 * 3 and (df.status == "ok").all(), df.status.tolist()
    assert (df.device == "numba-cuda-simulator").all() and (df.fes_mean == 30).all()
    assert df.set_index(["implementation", "trials_per_launch"]).runs.groupby(level=[0, 1]).first().to_dict() == {
        ("ide", 1): 1, ("ide", 2): 2, ("resident", 1): 1}
    assert (df.wall_s_per_run > 0).all() and (df.floor_s_run > 0).all()
    assert scaling.run(args, counted) == 0
    assert len(calls) == 6 and len(pd.read_csv(csv)) == 6  # nothing measured again


def test_archive_keeps_the_folder_s_path_in_the_repository(scaling, tmp_path, monkeypatch):
    import tarfile

    monkeypatch.setattr(scaling, "ROOT", tmp_path)  # a stand-in repository
    out = tmp_path / "results" / "benchmarks" / "scaling"
    args = scaling.parser().parse_args([*TINY, "--out", str(out), "--archive", str(tmp_path / "o" / "s.tar.gz")])
    scaling.run(args, fake_measure([]), PROV)
    with tarfile.open(tmp_path / "o" / "s.tar.gz") as tar:
        assert "results/benchmarks/scaling/nvidia-h100-80gb-hbm3.csv" in tar.getnames()


def test_a_failed_point_is_a_row_and_is_tried_again_only_with_force(scaling, tmp_path):
    calls = []
    ok = fake_measure(calls)

    def measure(point, *rest):
        if point.implementation == "resident":
            calls.append(point)
            raise RuntimeError("cooperative launch too large")
        return ok(point, *rest)

    args = scaling.parser().parse_args([*TINY, "--out", str(tmp_path)])
    scaling.run(args, measure, PROV)
    df = pd.read_csv(tmp_path / "nvidia-h100-80gb-hbm3.csv")
    failed = df[df.implementation == "resident"]
    assert len(df) == 6 and len(failed) == 2 and (failed.runs == 0).all()
    assert failed.status.str.startswith("error: RuntimeError: cooperative launch too large").all()
    scaling.run(args, measure, PROV)
    assert len(calls) == 6  # the same code fails again: not retried
    scaling.run(scaling.parser().parse_args([*TINY, "--out", str(tmp_path), "--force"]), measure, PROV)
    assert len(calls) == 12


def test_a_setting_read_back_with_another_last_bit_still_counts_as_done(scaling):
    # on the H100 host the CSV's CR came back with another last bit and every point was measured again
    old = pd.DataFrame([dict(device="GPU X", git_commit="abc", F=0.5, CR=0.30000000000000004, dtype="float32",
                             target=1e-08 * (1 + 2e-16))])
    settings = dict(F=0.5, CR=0.3, dtype="float32", target=1e-08)
    assert len(scaling.done_rows(old, "GPU X", "abc", settings)) == 1
    assert len(scaling.done_rows(old, "GPU X", "abc", {**settings, "CR": 0.31})) == 0
    assert len(scaling.done_rows(old, "GPU X", "abc", {**settings, "dtype": "float64"})) == 0
