"""benchmarks/side_by_side.py without a GPU or nvcc: the plan's interleaving, the build command,
the CSV schema and atomic write with injected runners, the summary's ratios and verdicts."""

import importlib.util
import sys
import tarfile
from pathlib import Path

import pandas as pd
import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "side_by_side.py"


@pytest.fixture(scope="module")
def sbs():
    spec = importlib.util.spec_from_file_location("side_by_side", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclass looks the module up
    spec.loader.exec_module(mod)
    return mod


def test_plan_interleaves_theirs_and_ours_per_function_and_repeat(sbs):
    steps = sbs.plan(["F01", "F02"], ["ide", "resident", "all_gpu"], (1, 30), repeats=2)
    first = [(s.function, s.source, s.implementation, s.trials_per_launch) for s in steps[:8]]
    assert first == [
        ("F01", "authors", "ide", 1), ("F01", "gpude", "ide", 1), ("F01", "gpude", "ide", 30),
        ("F01", "gpude", "resident", 1), ("F01", "gpude", "resident", 30),
        ("F01", "authors", "all_gpu", 1), ("F01", "gpude", "all_gpu", 1),
        ("F01", "gpude", "all_gpu", 30)]
    assert len(steps) == 2 * 2 * 8
    assert [s.repeat for s in steps] == [0] * 16 + [1] * 16
    assert [s.function for s in steps[:16]] == ["F01"] * 8 + ["F02"] * 8
    # our seeds differ between repeats; theirs is fixed at 0
    ours = {(s.repeat, s.trials_per_launch): s.seeds for s in steps
            if s.source == "gpude" and s.implementation == "ide" and s.function == "F01"}
    assert ours[(0, 1)] == (0,) and ours[(1, 1)] == (1,)
    assert ours[(0, 30)] == tuple(range(30)) and ours[(1, 30)] == tuple(range(30, 60))
    assert all(s.seeds == (0,) for s in steps if s.source == "authors")
    assert len({s.key for s in steps}) == len(steps)


def test_plan_without_their_baseline_puts_ours_last_and_rejects_unknown(sbs):
    steps = sbs.plan(["F03"], ["all_gpu", "resident"], (1,), authors=("all_gpu",))
    assert [(s.source, s.implementation) for s in steps] == [
        ("authors", "all_gpu"), ("gpude", "all_gpu"), ("gpude", "resident")]
    with pytest.raises(SystemExit, match="no authors' program"):
        sbs.plan(["F01"], ["ide"], authors=("naive_gpu",))


def test_an_implementation_with_options_is_measured_against_its_baseline(sbs):
    assert sbs.split_implementation("all_gpu:graph_generations=32+poll_every=4") == \
        ("all_gpu", {"graph_generations": 32, "poll_every": 4})
    assert sbs.split_implementation("ide") == ("ide", {})
    steps = sbs.plan(["F01"], ["all_gpu:graph_generations=32", "ide"], (1,))
    assert [(s.source, s.implementation) for s in steps] == [
        ("authors", "ide"), ("gpude", "ide"), ("authors", "all_gpu"), ("gpude", "all_gpu:graph_generations=32")]
    with pytest.raises(SystemExit, match="name:key=value"):
        sbs.split_implementation("all_gpu:32")


def test_our_runner_passes_an_implementations_options(sbs, monkeypatch):
    import gpude.trial

    made = []
    monkeypatch.setattr(gpude.trial, "make_runner", lambda *a, **kw: made.append((a, kw)) or object())
    runner = sbs.GpudeRunner(100, 250, 10**7, 0.5, 0.3, "float32", 1e-7)
    runner.runner("all_gpu:graph_generations=32", "F01", 30)
    (args, kw), = made
    assert args[:2] == ("de", "all_gpu") and kw["graph_generations"] == 32 and kw["trials_per_launch"] == 30


def test_build_command_has_the_anchors_flags(sbs, tmp_path):
    cmd = sbs.build_command(Path("/a/src"), tmp_path, "ide", "nvcc", "sm_90", ["-I/x"])
    assert cmd == ["nvcc", "-O3", "-arch=sm_90", "-Xcompiler", "-O3,-march=native", "-I/x", "-o",
                   str(tmp_path / "authors_ide"), "/a/src/differential_evolution/all_gpu_ide.cu"]
    assert sbs.build_command(Path("s"), tmp_path, "all_gpu")[-1].endswith("differential_evolution/all_gpu_de.cu")


def test_missing_nvcc_is_named(sbs, monkeypatch):
    monkeypatch.setattr(sbs.shutil, "which", lambda name: None)
    with pytest.raises(SystemExit, match="nvcc not found"):
        sbs.find_nvcc("nvcc")


def test_parse_their_output(sbs, tmp_path):
    out = ("Running all-gpu ide with popsize=250\nFunction: 3 Best fitness: 862.5 Time: 0.656\n"
           "Function: 3 Best fitness: 1.2e+03 Time: 0.7\n3, 862.5, 1200, 1031, 1, 0.678, 0.02, 1e+07, 0\n")
    assert sbs.parse_authors_output(out) == [dict(best_error=862.5, wall_s=0.656),
                                             dict(best_error=1200.0, wall_s=0.7)]
    log = tmp_path / "F03_D100_P250.txt"
    log.write_text("all_gpu_ide/F03_D100_P250\nFitness 862.5 1200 \nevaluations 10000000 10000000 \n"
                   "time (ms) 0.656 0.7 \n")
    assert sbs.parse_authors_log(log) == [10_000_000, 10_000_000]


def test_pack_keeps_code_and_drops_the_files_we_carry_anyway(sbs, tmp_path):
    src = tmp_path / "tree"
    data = src / "numerical_benchmark" / "benchmark_data"
    data.mkdir(parents=True)
    (src / "differential_evolution").mkdir()
    (src / "differential_evolution" / "all_gpu_ide.cu").write_text("int main(){}")
    for name in ["M_1_D100.txt", "shift_data_1.txt", "shuffle_data_5_D100.txt"]:
        (data / name).write_text("1 2 3")
    (src / "COMMIT").write_text("c2b3ef8\n")
    out = sbs.pack(tmp_path / "slim.tgz", src=src)
    with tarfile.open(out) as tar:
        names = sorted(tar.getnames())
    assert names == ["COMMIT", "differential_evolution/all_gpu_ide.cu",
                     "numerical_benchmark/benchmark_data/shuffle_data_5_D100.txt"]
    unpacked = sbs.unpack_source(out, tmp_path / "build")
    assert sbs.authors_commit(unpacked) == "c2b3ef8"


def test_rundir_fills_their_data_from_ours_checked(sbs, tmp_path):
    src = tmp_path / "tree"
    (src / "numerical_benchmark" / "benchmark_data").mkdir(parents=True)
    run = sbs.prepare_rundir(src, tmp_path / "run", [1], 100)
    got = run / "numerical_benchmark" / "benchmark_data" / "M_1_D100.txt"
    assert sbs._sha256(got) == sbs.AUTHORS_DATA_SHA256["M_1_D100.txt"]
    assert (run / "output_data" / "all_gpu_ide").is_dir() and (run / "output_data" / "all_gpu_de").is_dir()
    with pytest.raises(SystemExit, match="shuffle_data_5_D100"):
        sbs.prepare_rundir(src, tmp_path / "run2", [5], 100)


PROV = dict(gpu="NVIDIA H100 80GB HBM3", host="gpuhost", git_commit="abc1234def", cpu="Xeon",
            timestamp_utc="2026-11-25T00:00:00Z")
THEIRS = {"ide": 0.7, "all_gpu": 1.8}
OURS = {"ide": 0.5, "resident": 0.1, "all_gpu": 1.5}


def fake_runners(calls):
    def authors(step):
        calls.append(step.key)
        return [dict(best_error=100.0, wall_s=THEIRS[step.implementation], fes=10_000_000, seed=0,
                     call_wall_s_per_run=1.0)]

    def ours(step):
        calls.append(step.key)
        b = step.trials_per_launch
        if step.implementation == "resident" and step.function == "F02":
            raise RuntimeError("boom")
        return [dict(best_error=50.0 + s, wall_s=OURS[step.implementation] / b, fes=10_000_000,
                     seed=s, call_wall_s_per_run=OURS[step.implementation] / b) for s in step.seeds]
    return authors, ours


def run_args(sbs, tmp_path, *extra):
    return sbs.parser().parse_args(["run", "--functions", "F01,F02", "--repeats", "2",
                                    "--implementations", "ide,resident,all_gpu",
                                    "--trials-per-launch", "1,3", "--out", str(tmp_path), *extra])


def test_run_writes_the_schema_atomically_with_injected_runners(sbs, tmp_path, monkeypatch):
    calls, writes = [], []
    real = sbs.write_csv_atomic
    monkeypatch.setattr(sbs, "write_csv_atomic", lambda frame, path: writes.append(Path(path)) or real(frame, path))
    authors, ours = fake_runners(calls)
    assert sbs.cmd_run(run_args(sbs, tmp_path), authors, ours, PROV) == 0
    assert calls == [s.key for s in sbs.plan(["F01", "F02"], ["ide", "resident", "all_gpu"], (1, 3), 2)]
    csv = tmp_path / "nvidia-h100-80gb-hbm3.csv"
    assert set(writes) == {csv, tmp_path / "nvidia-h100-80gb-hbm3_runs.csv"}
    assert not list(tmp_path.glob(".*.tmp"))  # no temporary file left behind
    df = pd.read_csv(csv)
    for col in ["function", "source", "implementation", "trials_per_launch", "trials", "wall_s_per_run",
                "best_error_mean", "device", "host", "git_commit", "authors_commit", "timing", "notes"]:
        assert col in df.columns, col
    assert len(df) == 2 * (2 + 3 * 2)  # per function: 2 of theirs, 3 of ours x 2 batch sizes
    key = df.set_index(["function", "source", "implementation", "trials_per_launch"])
    assert key.loc[("F01", "authors", "ide", 1), "trials"] == 2
    assert key.loc[("F01", "gpude", "ide", 3), "trials"] == 6
    assert key.loc[("F01", "gpude", "ide", 3), "wall_s_per_run"] == pytest.approx(0.5 / 3)
    assert key.loc[("F01", "gpude", "ide", 1), "best_error_mean"] == pytest.approx(50.5)
    assert key.loc[("F02", "gpude", "resident", 1), "failed"] == 2
    assert key.loc[("F02", "gpude", "resident", 1), "trials"] == 0
    assert (df["device"] == PROV["gpu"]).all() and (df["host"] == "gpuhost").all()
    # --resume runs only what failed
    calls.clear()
    assert sbs.cmd_run(run_args(sbs, tmp_path, "--resume"), authors, ours, PROV) == 0
    assert {c[1:3] for c in calls} == {("F02", "gpude")} and {c[3] for c in calls} == {"resident"}


def test_summary_ratios_and_verdicts(sbs, tmp_path):
    authors, ours = fake_runners([])
    sbs.cmd_run(run_args(sbs, tmp_path), authors, ours, PROV)
    df, files = sbs.load_side_by_side(tmp_path)
    rat = sbs.ratios(df).set_index(["function", "implementation", "trials_per_launch"])
    assert rat.loc[("F01", "ide", 1), "ratio"] == pytest.approx(0.5 / 0.7)
    assert rat.loc[("F01", "all_gpu", 1), "ratio"] == pytest.approx(1.5 / 1.8)
    assert rat.loc[("F01", "resident", 3), "baseline"] == "ide"
    v = {x["label"]: x for x in sbs.verdicts(sbs.ratios(df), PROV["gpu"], "resident")}
    one = v["one trial <= 0.3x the authors' iDE"]
    assert one["cells"]["F01"] == pytest.approx(0.1 / 0.7) and one["cells"]["F02"] is None
    assert one["verdict"] == "met so far (1 of 10 measured)"
    assert v["all_gpu <= 1.0x the authors' All-GPU DE"]["verdict"] == "met so far (2 of 10 measured)"
    # 30 per launch was not measured here (3 was)
    assert v["30 trials per launch, per run, <= 0.02x the authors' iDE (F01-F07)"]["verdict"] == "not measured"


def test_verdicts_met_and_missed_on_a_full_synthetic_csv(sbs):
    rows = []
    for f in sbs.FUNCTIONS:
        rows += [dict(device="G", function=f, source="authors", implementation="ide", trials_per_launch=1,
                      wall_s_per_run=1.0),
                 dict(device="G", function=f, source="authors", implementation="all_gpu", trials_per_launch=1,
                      wall_s_per_run=2.0),
                 dict(device="G", function=f, source="gpude", implementation="resident", trials_per_launch=1,
                      wall_s_per_run=0.25 if f != "F10" else 0.4),
                 dict(device="G", function=f, source="gpude", implementation="resident", trials_per_launch=30,
                      wall_s_per_run=0.03 if f in sbs.FUNCTIONS[7:] else 0.01),
                 dict(device="G", function=f, source="gpude", implementation="all_gpu", trials_per_launch=1,
                      wall_s_per_run=1.9)]
    v = [x["verdict"] for x in sbs.verdicts(sbs.ratios(pd.DataFrame(rows)), "G")]
    assert v == ["missed on 1 of 10", "met", "met", "met"]


def test_summary_section_replaces_only_its_own_part(sbs, tmp_path):
    summary = tmp_path / "SUMMARY.md"
    summary.write_text("# DE wall time\n\nkeep me\n")
    args = sbs.parser().parse_args(["summarize", "--results", str(tmp_path / "none"), "--summary", str(summary)])
    sbs.cmd_summarize(args)
    text = summary.read_text()
    assert text.startswith("# DE wall time\n\nkeep me\n") and "No side-by-side CSV yet" in text
    authors, ours = fake_runners([])
    sbs.cmd_run(run_args(sbs, tmp_path / "sbs"), authors, ours, PROV)
    args = sbs.parser().parse_args(["summarize", "--results", str(tmp_path / "sbs"), "--summary", str(summary)])
    sbs.cmd_summarize(args)
    text = summary.read_text()
    assert text.count(sbs.BEGIN) == 1 and "keep me" in text and "No side-by-side CSV yet" not in text
    assert "### NVIDIA H100 80GB HBM3" in text and "0.71x" in text  # F01 ide: 0.5 / 0.7


def test_build_runs_nvcc_once_per_command_and_source(sbs, tmp_path):
    """A stand-in nvcc (a shell script) records its calls: a second build with the same command and
    sources reuses the executables; a failing compiler stops with its message."""
    log = tmp_path / "calls"
    nvcc = tmp_path / "nvcc"
    nvcc.write_text('#!/bin/sh\necho "$@" >> ' + str(log) + '\nwhile [ "$1" != "-o" ]; do shift; done\n'
                    'touch "$2"\n')
    nvcc.chmod(0o755)
    src = tmp_path / "src"
    (src / "differential_evolution").mkdir(parents=True)
    for f in sbs.AUTHORS_PROGRAMS.values():
        (src / f).write_text("int main() { return 0; }\n")
    exes = sbs.build(src, tmp_path / "build", ["ide", "all_gpu"], str(nvcc))
    assert sorted(exes) == ["all_gpu", "ide"] and all(p.exists() for p in exes.values())
    assert len(log.read_text().splitlines()) == 2
    assert "-O3 -arch=sm_90 -Xcompiler -O3,-march=native -o" in log.read_text()
    sbs.build(src, tmp_path / "build", ["ide", "all_gpu"], str(nvcc))
    assert len(log.read_text().splitlines()) == 2  # up to date
    (src / sbs.AUTHORS_PROGRAMS["ide"]).write_text("int main() { return 1; }\n")
    sbs.build(src, tmp_path / "build", ["ide"], str(nvcc))
    assert len(log.read_text().splitlines()) == 3  # a source changed
    bad = tmp_path / "badcc"
    bad.write_text("#!/bin/sh\necho 'error: curand.h: No such file' >&2\nexit 2\n")
    bad.chmod(0o755)
    with pytest.raises(SystemExit, match="curand.h"):
        sbs.build(src, tmp_path / "build2", ["ide"], str(bad))
