"""The side by side as an experiment (config/experiments/side_by_side.yaml) without a GPU or nvcc: its
program specs, the authors' adapter (gpude.implementations.janssen: data folder, build with a stand-in nvcc,
their line with FEs from their log), the REPORT section, and the workflow's dry run."""

import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from _helpers import one_gpu_two_cores

from gpude import cecdata
from gpude.implementations.external import read_points, register_programs, source_digest, split_trials
from gpude.report import side_by_side as section

ROOT = Path(__file__).resolve().parents[1]
EXPERIMENT = ROOT / "config" / "experiments" / "side_by_side.yaml"


@pytest.fixture(autouse=True)
def registry_as_it_was():
    """What a test registers (the programs, the plugin's second names) leaves with it: the plugin is
    imported inside the tests only, never at collection, where other modules list the registry."""
    from gpude.implementations import registry

    registry._ensure_loaded()
    saved = dict(registry._REGISTRY)
    yield
    registry._REGISTRY.clear()
    registry._REGISTRY.update(saved)


@pytest.fixture()
def janssen():
    from gpude.implementations import janssen as module

    module._register_aliases()
    return module


def test_the_experiment_registers_both_programs_and_the_second_names(janssen):
    from gpude.implementations import registry

    spec = yaml.safe_load(EXPERIMENT.read_text())
    assert register_programs(spec["programs"], ROOT) == ["authors_ide", "authors_de"]
    for name, program in (("authors_ide", "all_gpu_ide"), ("authors_de", "all_gpu_de")):
        entry = registry.get("de", name)
        p = entry.load(check_device=False).spec
        assert entry.needs_gpu and p.runs_per_call == "all" and p.sha256 == spec["programs"][name]["sha256"]
        assert f"--program {program} {{function_number}} {{dim}} {{popsize}} {{trials}}" in p.command
        assert janssen.NVCC_FLAGS in p.build and p.output == janssen.RUN_LINE
        assert p.source == str(ROOT / ".authors" / "GPU-Accelerated-Evolutionary-Optimisation")
    listed = spec["algorithms"]["de"]["implementations"]
    assert {"ide_x30", "resident_x30", "all_gpu_x30"} <= set(listed)
    for alias in ("ide_x30", "resident_x30", "all_gpu_x30"):
        assert spec["trials_per_launch"][alias] == 30 and registry.get("de", alias).needs_gpu
    assert (spec["max_fes"], spec["target"], spec["dims"], spec["popsizes"]) == (10_000_000, 1e-7, [100], [250])


def test_their_line_and_the_fes_from_their_log(tmp_path, janssen):
    printed = ("Running all-gpu ide with popsize=250\nFunction: 3 Best fitness: 862.5 Time: 0.656\n"
               "Function: 3 Best fitness: 1.2e+03 Time: 0.7\n3, 862.5, 1200, 1031, 1, 0.678, 0.02, 1e+07, 0\n")
    log = tmp_path / "F03_D100_P250.txt"
    log.write_text("all_gpu_ide/F03_D100_P250\nFitness 862.5 1200 \nevaluations 10000000 9000000 \n")
    assert janssen.log_fes(log) == [10_000_000, 9_000_000] and janssen.log_fes(tmp_path / "none") == []
    points = read_points(janssen.with_fes(printed, janssen.log_fes(log)), janssen.RUN_LINE)
    assert points == [{"best_error": "862.5", "time_s": "0.656", "fes": "10000000"},
                      {"best_error": "1.2e+03", "time_s": "0.7", "fes": "9000000"}]
    # their own line (no log): no fes, the row then says the budget
    assert read_points(printed, janssen.RUN_LINE)[1] == {"best_error": "1.2e+03", "time_s": "0.7"}
    assert [len(t) for t in split_trials(points, 3, janssen.RUN_LINE)] == [1, 1, 0]


def test_run_passes_their_output_through_with_fes(tmp_path, capsys, janssen):
    build = tmp_path / "build"
    (build / "output_data" / "all_gpu_de").mkdir(parents=True)
    fake = build / "all_gpu_de"  # writes its log where theirs does (relative to its working directory)
    fake.write_text("#!/bin/sh\necho \"Function: $1 Best fitness: 5.5 Time: 0.25\"\n"
                    "printf 'evaluations 250 \\n' > output_data/all_gpu_de/F0$1_D$2_P$3.txt\nexit 0\n")
    fake.chmod(0o755)
    assert janssen.main(["run", "--build", str(build), "--program", "all_gpu_de", "4", "100", "250", "1"]) == 0
    assert capsys.readouterr().out == "Function: 4 Best fitness: 5.5 Time: 0.25 FEs: 250\n"


def _their_tree(root: Path, functions=range(5, 9), dims=(50, 100)) -> Path:
    from gpude.implementations import janssen

    data = root / "numerical_benchmark" / "benchmark_data"
    data.mkdir(parents=True)
    for k in functions:
        for d in dims:
            (data / f"shuffle_data_{k}_D{d}.txt").write_text("1 2 3\n")
    for f in janssen.PROGRAMS.values():
        (root / f).parent.mkdir(parents=True, exist_ok=True)
        (root / f).write_text("int main() { return 0; }\n")
    return root


def test_the_data_folder_is_filled_from_ours_sha_checked(tmp_path, janssen):
    src = _their_tree(tmp_path / "src")
    run = janssen.fill_data(src, tmp_path / "run", functions=[1, 5], dims=(100,))
    data = run / "numerical_benchmark" / "benchmark_data"
    assert sorted(p.name for p in data.iterdir()) == ["M_1_D100.txt", "M_5_D100.txt", "shift_data_1.txt",
                                                      "shift_data_5.txt", "shuffle_data_5_D100.txt"]
    assert janssen._sha256(data / "M_1_D100.txt") == janssen.AUTHORS_DATA_SHA256["M_1_D100.txt"]
    assert all((run / "output_data" / p).is_dir() for p in janssen.PROGRAMS)
    # a shuffle file their tree lacks (not among ours)
    with pytest.raises(janssen.AuthorsDataError, match="shuffle_data_6_D100.txt is missing"):
        janssen.fill_data(_their_tree(tmp_path / "bare", functions=[]), tmp_path / "r2", functions=[6], dims=(100,))
    # a file of ours that is not the authors' bytes, and one that is absent
    cec = tmp_path / "cec"
    (cec / "cec2017").mkdir(parents=True)
    (cec / "cec2017" / "M_3_D100.txt").write_text("0 0 0\n")
    with pytest.raises(janssen.AuthorsDataError, match="differs from the authors' M_1_D100.txt"):
        janssen.fill_data(src, tmp_path / "r3", functions=[1], dims=(100,), cec=cec)
    with pytest.raises(janssen.AuthorsDataError, match="shift_data_1.txt is in neither"):
        # ours as stored (gzip; it wins over the plain file beside it), written uncompressed below
        (cec / "cec2017" / "M_3_D100.txt.gz").write_bytes(cecdata.compress(cecdata.read_bytes("cec2017/M_3_D100.txt")))
        janssen.fill_data(src, tmp_path / "r4", functions=[1], dims=(100,), cec=cec)


def test_build_runs_nvcc_with_the_flags_and_names_a_missing_one(tmp_path, monkeypatch, janssen):
    calls = tmp_path / "calls"
    nvcc = tmp_path / "nvcc"
    nvcc.write_text(f'#!/bin/sh\necho "$@" >> {calls}\nwhile [ "$1" != "-o" ]; do shift; done\ntouch "$2"\n')
    nvcc.chmod(0o755)
    src = _their_tree(tmp_path / "src")
    exe = janssen.build(src, tmp_path / "build", "all_gpu_ide", nvcc=str(nvcc))
    assert exe.is_file() and (tmp_path / "build" / "numerical_benchmark" / "benchmark_data" / "M_10_D50.txt").is_file()
    assert calls.read_text().strip() == (f"{janssen.NVCC_FLAGS} -o {tmp_path / 'build' / 'all_gpu_ide'} "
                                         f"{src / 'differential_evolution' / 'all_gpu_ide.cu'}")
    monkeypatch.setattr(janssen.shutil, "which", lambda name: None)
    with pytest.raises(janssen.GpudeError, match="nvcc not found"):
        janssen.build(src, tmp_path / "build", "all_gpu_ide")


def test_pack_keeps_their_code_and_drops_the_files_we_carry(tmp_path, janssen):
    src = _their_tree(tmp_path / "tree", functions=[5], dims=(100,))
    data = src / "numerical_benchmark" / "benchmark_data"
    (data / "M_1_D100.txt").write_text("1")
    (data / "shift_data_1.txt").write_text("1")
    (src / "COMMIT").write_text(janssen.AUTHORS_COMMIT + "\n")
    out = janssen.pack(tmp_path / "slim", src=src)
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()) == [
        "COMMIT", "differential_evolution/all_gpu_de.cu", "differential_evolution/all_gpu_ide.cu",
        "numerical_benchmark/benchmark_data/shuffle_data_5_D100.txt"]
    assert source_digest(out) == source_digest(janssen.pack(tmp_path / "again", src=src))


def _trials(rows):
    base = dict(dim=100, popsize=250, algorithm="de", status="budget", best_error=1.0, params="{}")
    return pd.DataFrame([{**base, **r} for r in rows])


FAKE = _trials(
    [dict(gpu="NVIDIA H100", function=f, implementation="authors_ide", wall_time_s=1.0) for f in ("F01", "F02")]
    + [dict(gpu="NVIDIA H100", function="F01", implementation="authors_de", wall_time_s=2.0)]
    + [dict(gpu="NVIDIA H100", function=f, implementation="ide", wall_time_s=0.5) for f in ("F01", "F01", "F02")]
    + [dict(gpu="NVIDIA H100", function="F01", implementation="ide_x30", wall_time_s=0.05,
            params='{"trials_per_launch": 30}')]
    + [dict(gpu="NVIDIA H100", function="F01", implementation="all_gpu", wall_time_s=3.0),
       dict(gpu="NVIDIA H100", function="F01", implementation="all_gpu", wall_time_s=None,
            status="error:ProgramError: boom")]
    + [dict(gpu="numba-cuda-simulator", function="F01", implementation="ide", wall_time_s=9.0)])


def test_the_table_divides_ours_by_the_authors_per_device_and_function():
    t = section.side_by_side_table(FAKE).set_index(["function", "implementation", "trials_per_launch"])
    assert len(t) == 4  # (the simulator's row is no GPU's)
    assert t.loc[("F01", "ide", 1), ["n", "mean_s", "authors_mean_s", "ratio"]].tolist() == [2, 0.5, 1.0, 0.5]
    assert t.loc[("F01", "ide_x30", 30), "ratio"] == pytest.approx(0.05)
    assert t.loc[("F01", "all_gpu", 1), ["baseline", "n", "failed", "ratio"]].tolist() == ["authors_de", 1, 1, 1.5]
    assert section.baseline_of("all_gpu_x30:graph_generations=32") == "authors_de"
    text = section.render_table(section.side_by_side_table(FAKE))
    assert "#### NVIDIA H100" in text and ("| F01 | 1 (1) | 0.5 (2), 0.50x (n = 1: no interval) | "
                                           "0.05 (1), 0.05x (n = 1: no interval) |") in text
    assert "ide, share of 30/launch: s/run (n), ratio" in text and "3 (1, 1 failed), 1.50x (n = 1: no" in text
    # any second name _x<n> (de/block's at a full H100: 132 a launch) is its implementation's
    assert section.baseline_of("block_x132") == "authors_ide" and section.baseline_of("all_gpu_x264") == "authors_de"
    assert section._label("block_x132", 132) == "block, share of 132/launch"


def test_each_ratio_carries_the_bootstrap_interval_of_both_sides_runs(tmp_path):
    rows = _trials([dict(gpu="NVIDIA H100", function="F01", implementation="authors_ide", wall_time_s=w)
                    for w in (0.9, 1.0, 1.1)]
                   + [dict(gpu="NVIDIA H100", function="F01", implementation="ide", wall_time_s=w)
                      for w in (0.45, 0.5, 0.55)])
    t = section.side_by_side_table(rows).iloc[0]
    assert t["ratio"] == pytest.approx(0.5) and 0.45 / 1.1 <= t["ratio_lo"] < 0.5 < t["ratio_hi"] <= 0.55 / 0.9
    text = section.render_table(section.side_by_side_table(rows))
    assert f"| F01 | 1 (3) | 0.5 (3), 0.50x [{t['ratio_lo']:.2f}x, {t['ratio_hi']:.2f}x] |" in text
    # and the verdict's headline: the range of the ratios with the interval of its extremes
    paper = tmp_path / "paper" / "side_by_side"
    section.write_outputs(rows, {}, paper)
    verdict = section.SideBySide(yaml.safe_load(EXPERIMENT.read_text()), paper, tmp_path).verdicts()[0]
    assert (f"ide 0.5x (95% CI of the extremes {t['ratio_lo']:.2g}-{t['ratio_hi']:.2g}x) (NVIDIA H100)"
            in verdict.headline), verdict.headline
    # a comparison of its own kind, short of the paper's 30 by its design (3 runs a cell), said so
    assert verdict.kind == "comparison"
    assert (verdict.coverage.value, verdict.coverage.cause) == ("short", "3 runs a cell by design")


def test_the_section_says_what_to_run_without_gpu_rows(tmp_path):
    paper = tmp_path / "paper" / "side_by_side"
    paper.mkdir(parents=True)
    section.write_outputs(FAKE[FAKE.gpu == "numba-cuda-simulator"], {}, paper)
    spec = yaml.safe_load(EXPERIMENT.read_text())
    both = lambda s: s.render() + s.render_appendix()  # noqa: E731  (the per-function tables: the appendix's)
    text = both(section.SideBySide(spec, paper, tmp_path))
    # (what to run is the docs' business, not the report's: no script names in it)
    assert "No side-by-side rows from a GPU yet" in text and "benchmarks/" not in text
    section.write_outputs(FAKE, {}, paper)
    text = both(section.SideBySide(spec, paper, tmp_path))
    assert "| F02 | 1 (1) | 0.5 (1), 0.50x (n = 1: no interval) | - |" in text and "No side-by-side rows" not in text


def test_the_body_has_a_row_per_implementation_and_the_appendix_the_per_function_tables(tmp_path):
    paper = tmp_path / "paper" / "side_by_side"
    section.write_outputs(FAKE, {}, paper)
    s = section.SideBySide(yaml.safe_load(EXPERIMENT.read_text()), paper, tmp_path)
    body, appendix = s.render(), s.render_appendix()
    # a column per function; theirs in seconds, ours as ratios ('-' where a function has no run of it)
    assert "| device | | F01 | F02 |" in body
    assert "| authors' All-GPU iDE, s a run (n = 1) | 1 | 1 |" in body
    assert "| | ide (n = 1-2): ours / theirs | 0.50x | 0.50x |" in body  # n a function: 2 on F01, 1 on F02
    assert "| | ide, share of 30/launch (n = 1): ours / theirs | 0.05x | - |" in body
    assert "| authors' All-GPU DE, s a run (n = 1) | 2 |" in body
    assert "| | all_gpu (n = 1): ours / theirs | 1.50x |" in body
    assert "s/run (n), ratio" not in body  # n and the intervals: the appendix's per-function tables
    assert "| F01 | 2 (1) | 3 (1, 1 failed), 1.50x (n = 1: no interval) |" in appendix
    assert "| F01 | 1 (1) | 0.5 (2), 0.50x (n = 1: no interval) |" in appendix


def test_the_workflow_lists_the_programs_jobs(tmp_path, janssen, monkeypatch):
    """(It also checks the experiment against the schema, and that `report: section: side_by_side` exists.)"""
    one_gpu_two_cores(monkeypatch)
    for name in ("Snakefile", "workflow", "config", "profiles"):
        if (ROOT / name).exists():
            (shutil.copytree if (ROOT / name).is_dir() else shutil.copy)(ROOT / name, tmp_path / name)
    res = subprocess.run([sys.executable, "-m", "snakemake", "-n", "-p", "--cores", "2", "--configfile",
                          "config/experiments/side_by_side.yaml", "--config", "gpu=yes", "functions=[F01]",
                          "--", "results/side_by_side/trials.csv"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=300)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-3000:]
    runs = [line for line in out.splitlines() if "gpude run " in line]
    # per function: 3 one-run jobs of each program and of ide, resident, all_gpu; 2 of 30 of each _x30
    assert len(runs) == 2 * 3 + 3 * 3 + 3 * 2
    theirs = [line for line in runs if "--implementation authors_" in line]
    assert len(theirs) == 6 and all("--programs" in line and "--keep-failed" in line and "--trials 1 " in line
                                    for line in theirs)
    assert all("--trials-per-launch 30" in line and "--trials 30 " in line for line in runs if "_x30 " in line)
    assert all("--plugin gpude.implementations.janssen" in line and "--target 1e-07" in line for line in runs)
    # the host without Snakemake runs the rule's very command lines (the experiment file's path aside)
    from gpude.campaign.cells import load_experiment
    from gpude.campaign.interleave import interleaved_jobs

    spec = {**load_experiment(EXPERIMENT), "functions": ["F01"]}
    ours = [job["run"] for job in interleaved_jobs(spec, "config/experiments/side_by_side.yaml")]
    rule = sorted(line.split("Shell command: ", 1)[-1].split(" > logs/")[0].strip().replace(
        str(tmp_path) + "/", "") for line in runs)
    assert sorted(ours) == rule


def test_the_interleaved_order_alternates_theirs_and_ours(janssen):
    from gpude.campaign.cells import load_experiment
    from gpude.campaign.interleave import interleaved_jobs

    spec = {**load_experiment(EXPERIMENT), "functions": ["F01", "F02"]}
    jobs = interleaved_jobs(spec, "x.yaml")
    order = [(j["chunk"], j["function"], j["implementation"]) for j in jobs]
    listed = spec["algorithms"]["de"]["implementations"]
    assert order[:8] == [(0, "F01", i) for i in listed] and order[8:16] == [(0, "F02", i) for i in listed]
    assert order[-1] == (2, "F02", "all_gpu")  # the x30 cells have 2 chunks, the rest 3
    assert len(jobs) == 2 * (5 * 3 + 3 * 2) and len({j["stem"] for j in jobs}) == len(jobs)


def test_each_of_ours_is_set_against_its_gpu_s_floor(tmp_path):
    from gpude.report.floor import floor_point

    other = _trials([dict(gpu="NVIDIA A100-SXM4-80GB", function="F01", implementation="ide", wall_time_s=0.5)])
    floors = section.floor_table(section.side_by_side_table(pd.concat([FAKE, other])), 100, 250, 10_000_000)
    # ours on the H100 only (the A100's peaks are not listed; the authors' programs are not ours to count)
    assert set(floors["device"].str.split(" / ").str[0]) == {"NVIDIA H100"}
    assert not floors["implementation"].str.startswith("authors").any()
    row = floors.set_index(["function", "implementation"]).loc[("F01", "ide_x30")]
    want = floor_point("F01", 100, 250, 10_000_000, "NVIDIA H100 SXM", "float32", 30)["floor_s_run"]
    assert row["floor_s"] == pytest.approx(want) and row["x_floor"] == pytest.approx(0.05 / want)
    assert 2.9e-3 < want < 3.5e-3  # F01's 1e11 multiply-adds of its rotation alone: 2.99 ms at 67 TFLOPS
    paper = tmp_path / "paper" / "side_by_side"
    section.write_outputs(FAKE, {}, paper)
    s = section.SideBySide(yaml.safe_load(EXPERIMENT.read_text()), paper, tmp_path)
    assert (f"ide, share of 30/launch on F01, 0.05 s a run, **{0.05 / want:.1f}x** the floor of an NVIDIA H100 SXM"
            in s.render())
    line = f"| F01 | {want * 1e3:.3g} | 0.5 (2), {0.5 / want:.1f}x | 0.05 (1), {0.05 / want:.1f}x |"
    assert line in s.render_appendix()
