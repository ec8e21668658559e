"""Lastra et al.'s profile (Tables 13-14): ``profile=True`` makes the same run and its modules cover the
run's time (masw/sequential; masw/gpu on the simulator), the split CPU kernels compute MA-SW-Chains'
numbers, benchmarks/lastra_profile.py's rows, and the REPORT's tables beside the paper's."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _benchmarks import load_benchmark

from gpude.implementations.masw_profile import MODULES, OTHER, ModuleClock, shares
from gpude.report import lastra_profile
from gpude.run.trial import make_runner

ROOT = Path(__file__).resolve().parents[1]
bench = load_benchmark("lastra_profile")

# two cycles of 32 FEs: GA steps of 4 children, Solis-Wets applications of 16 evaluations
PARAMS = dict(ls_intensity=16, offspring=4)
NP, SEED = 6, 7
MAX_FES = NP + 2 * 32


def same_run(a, b):
    assert a.best_error.hex() == b.best_error.hex() and a.fes_used == b.fes_used
    np.testing.assert_array_equal(a.best_x, b.best_x)
    np.testing.assert_array_equal(a.trace["best_error"], b.trace["best_error"])


def test_blx_from_a_drawn_uniform_is_the_operator_s_gene():
    from gpude.algorithms.masw import HEADER_SLOTS, build_masw_ops
    from gpude.core.rng import build_rng
    from gpude.implementations.masw_profile import blx_from_uniform

    for dtype in (np.float64, np.float32):
        ops, blx_from = build_masw_ops(dtype, "cpu"), blx_from_uniform(dtype)
        uniform = build_rng("cpu").uniform
        rng = np.random.default_rng(1)
        key, W = np.uint64(12345), 64 + 2 * 50
        for j, (a, b) in enumerate(rng.uniform(-1.2, 1.2, (50, 2)).astype(dtype)):  # some beyond the box
            u = uniform(key, ops.ctr(9, HEADER_SLOTS + j, W))
            assert blx_from(u, a, b, 0.5, -1.0, 1.0) == ops.blx(key, 9, W, j, a, b, 0.5, -1.0, 1.0)


def test_cpu_profile_makes_the_same_run_and_its_modules_cover_the_run():
    plain = make_runner("masw", "sequential", "L01", 4000, NP, MAX_FES, **PARAMS)
    runner = make_runner("masw", "sequential", "L01", 4000, NP, MAX_FES, profile=True, **PARAMS)
    a, b = plain.run(SEED), runner.run(SEED)
    same_run(a, b)
    assert "module_s" not in a.info and plain.module_s is None
    assert b.info["module_s"] == runner.module_s and b.info["options"] == {"profile": True}
    assert set(runner.module_s) == {"initial_population", "fitness_evaluation", "distance", "random_numbers",
                                    "crossover", "replacement", "solis_wets"}
    covered = sum(runner.module_s.values()) / b.wall_time_s
    assert 0.5 <= covered <= 1.05
    # a second run starts its own clock
    again = runner.run(SEED)
    same_run(b, again)
    assert sum(again.info["module_s"].values()) <= again.wall_time_s


@pytest.mark.cudasim
@pytest.mark.parametrize("ls_mode", ["fused", "steps"])
def test_gpu_profile_makes_the_same_run_and_its_modules_cover_the_run(ls_mode):
    # one cycle at D = 16 (the simulator is slow)
    kw = dict(ls_intensity=4, offspring=2, threads=8, ls_mode=ls_mode, quiet=True)
    plain = make_runner("masw", "gpu", "L01", 16, 5, 5 + 8, **kw)
    runner = make_runner("masw", "gpu", "L01", 16, 5, 5 + 8, profile=True, **kw)
    a, b = plain.run(SEED), runner.run(SEED)
    same_run(a, b)
    assert plain.module_s is None and "module_s" not in a.info and "profile" not in a.info["options"]
    assert b.info["module_s"] == runner.module_s and b.info["options"]["profile"] is True
    ls = "solis_wets_with_evaluation" if ls_mode == "fused" else "solis_wets"
    assert {"initial_population", "fitness_evaluation", "distance", "crossover_and_random_numbers", "replacement",
            ls, "transfers_to_host"} <= set(runner.module_s) <= set(MODULES)
    assert 0.5 <= sum(runner.module_s.values()) / b.wall_time_s <= 1.05
    assert runner.phase_s["ga"] > 0 and runner.phase_s["ls"] > 0  # the phases are still timed


def test_a_clock_charges_each_module_the_time_since_the_last_charge():
    waited = []
    clock = ModuleClock(wait=lambda: waited.append(1))
    clock.start()
    clock.charge("distance")
    clock.charge("distance")
    clock.charge("crossover")
    assert set(clock.seconds) == {"distance", "crossover"} and len(waited) == 4
    assert clock.timed("replacement", lambda x: x + 1)(1) == 2 and clock.seconds["replacement"] >= 0
    s = shares({"a": 1.0, "b": 2.0}, 4.0)
    assert s == {"a": 0.25, "b": 0.5, OTHER: 0.25}


def test_the_benchmark_takes_the_experiment_s_settings_and_writes_its_columns(tmp_path):
    from gpude.core.rng import trial_seed

    s = bench.settings(bench.EXPERIMENT, "L01", 100_000)
    assert (s["popsize"], s["max_fes"], s["dtype"]) == (60, 500_000, "float64")
    assert s["seed"] == trial_seed(20261122, "L01", 100_000, 60, 0)  # the cell's trial 0, as the experiment's
    assert bench.main(["--device", "cpu", "--dims", "300", "--max-fes", "120", "--out", str(tmp_path)]) == 0
    files = list(tmp_path.glob("cpu_*.csv"))
    assert len(files) == 1
    t = pd.read_csv(files[0])
    assert list(t.columns) == list(bench.COLUMNS)
    for column in ("device", "dim", "module", "seconds", "share", "gpu", "cpu", "cpu_cores", "host", "git_commit",
                   "numba", "timestamp_utc"):
        assert column in t
    assert set(t["module"]) - {OTHER} <= set(MODULES) and OTHER in set(t["module"])
    assert t["share"].sum() == pytest.approx(1.0) and (t["fes_used"] == 120).all() and (t["gpu"] == "none").all()
    # a later run of the same key replaces the rows; another D is added
    bench.main(["--device", "cpu", "--dims", "300,200", "--max-fes", "120", "--out", str(tmp_path)])
    t = pd.read_csv(files[0])
    assert sorted(t.drop_duplicates(["dim", "timestamp_utc", "wall_time_s"])["dim"]) == [200, 300]


def profile_rows(device, dim, percent, cpu="CPU X", gpu="none", fes=500_000, variant="default"):
    return [dict(device=device, dim=dim, function="L01", module=m, seconds=p, share=p / 100, wall_time_s=100.0,
                 fes_used=fes, max_fes=fes, popsize=60, dtype="float64", seed=1, best_error=1.0,
                 implementation=f"masw/{'gpu' if device == 'gpu' else 'sequential'}", variant=variant, options="{}",
                 load_1min_before=1.0, load_1min_after=1.5, gpu=gpu, cpu=cpu, cpu_cores=2, host="h",
                 git_commit="abcdef0123", timestamp_utc="2026-01-01T00:00:00Z") for m, p in percent.items()]


CPU_1E5 = {"fitness_evaluation": 60.0, "random_numbers": 25.0, "crossover": 2.0, "distance": 4.0, "replacement": 1.0,
           "solis_wets": 2.0, "initial_population": 0.5, "other": 5.5}


def test_the_report_puts_ours_beside_the_paper_s_tables(tmp_path):
    pd.DataFrame(profile_rows("cpu", 100_000, CPU_1E5)
                 + profile_rows("cpu", 100_000, {"fitness_evaluation": 10.0, "other": 90.0}, fes=2000)  # a sample
                 ).to_csv(tmp_path / "cpu_cpu-x.csv", index=False)
    rows = lastra_profile.measured(tmp_path)
    text = lastra_profile.markdown(rows)
    t = lastra_profile.comparison(lastra_profile.published(), lastra_profile.chosen_runs(rows),
                                  "cpu").set_index("module")
    # the paper's modules in its order, ours beside (the run of the most FEs), then ours it does not list
    assert list(t.index[:4]) == ["fitness_evaluation", "random_number_generation", "crossover", "distance"]
    assert t.loc["fitness_evaluation", "paper_100000"] == 37
    assert t.loc["fitness_evaluation", "ours_100000_default"] == 60
    assert t.loc["random_number_generation", "ours_100000_default"] == 25
    assert np.isnan(t.loc["distance", "ours_500000_none"])
    assert t.loc["rest", "paper_100000"] == 12 and t.loc["rest", "ours_100000_default"] == pytest.approx(9.0)
    assert "| Fitness evaluation | 37 | 60.0 | 38 | - |" in text
    # each column names its machine and n; the GPU's are not measured yet, with the command
    assert "ours (CPU X, 2 cores, n = 1)" in text and "paper (one core of an i7-930, n = 1)" in text
    assert "D = 100,000: CPU X, 2 cores, n = 1 run of 500,000 FEs" in text
    assert "ours (no run)" in text and lastra_profile.GPU_COMMAND in text
    assert "Random number init." in text and "| replacement |" in text
    v = lastra_profile.verdict(rows)
    assert v.status == "partly" and v.coverage.value == "short" and v.coverage.cause == "not measured"
    assert v.coverage.detail.startswith("CPU 500,000, GPU 100,000")
    assert "fitness evaluation 60 % (paper 37 %)" in v.headline and "CPU X" in v.headline


def test_the_gpu_table_matches_the_fused_local_search_and_has_no_generator_init(tmp_path):
    gpu = {"distance": 20.0, "crossover_and_random_numbers": 15.0, "transfers_to_host": 5.0,
           "solis_wets_with_evaluation": 40.0, "fitness_evaluation": 12.0, "initial_population": 1.0, "other": 7.0}
    steps = {**{k: v for k, v in gpu.items() if k != "solis_wets_with_evaluation"}, "solis_wets": 10.0,
             "fitness_evaluation": 42.0}
    pd.DataFrame(profile_rows("gpu", 1_000_000, gpu, gpu="GPU Y")
                 + profile_rows("gpu", 1_000_000, steps, gpu="GPU Y", variant="ls_mode=steps")
                 ).to_csv(tmp_path / "gpu_gpu-y.csv", index=False)
    text = lastra_profile.table_markdown(lastra_profile.published(),
                                         lastra_profile.chosen_runs(lastra_profile.measured(tmp_path)), "gpu")
    assert "ours (GPU Y, n = 1)" in text and "ours (GPU Y, ls_mode=steps, n = 1)" in text
    assert "| Solis Wets indiv. change | 15 | - | 17 | - | 17 | 40.0 | 10.0 | ours: the fused local search" in text
    assert "| Random number init. | - | - | 10 | - | 13 | 0.0 | 0.0 | none: our generator is counter-based" in text
    assert "Ours at D = 100,000, 500,000: no profiled run committed" in text


def test_with_no_profile_the_verdict_is_not_and_says_how(tmp_path):
    rows = lastra_profile.measured(tmp_path / "none")
    assert not len(rows)
    v = lastra_profile.verdict(rows)
    assert v.status == "not" and lastra_profile.GPU_COMMAND in v.reason
    assert lastra_profile.markdown(rows).count("ours (no run)") == 5


def test_the_lastra_section_reads_the_profile_through_its_paper_folder(tmp_path):
    import yaml

    from gpude.report import lastra
    from gpude.report.document import section_class

    measured = tmp_path / "profile"
    measured.mkdir()
    pd.DataFrame(profile_rows("cpu", 100_000, CPU_1E5)).to_csv(measured / "cpu_cpu-x.csv", index=False)
    trials = pd.DataFrame([{"run_id": "masw/gpu/L01/d100000/t0", "algorithm": "masw", "implementation": "gpu",
                            "function": "L01", "dim": 100_000, "wall_time_s": 5.0, "best_error": 1e5,
                            "fes_used": 500_000, "status": "budget", "concurrency": "exclusive",
                            "distance_to_optimum": 1.0, "machine": "GPU X / CPU x1", "trial": 0}])
    paper = tmp_path / "paper" / "lastra"
    paper.mkdir(parents=True)
    files = lastra.write_outputs(trials, {}, paper, profile=str(measured))
    assert paper / "profile.csv" in files
    spec = yaml.safe_load((ROOT / "config/experiments/lastra.yaml").read_text())
    assert spec["report"]["study_inputs"]["profile"] == "results/benchmarks/lastra_profile"
    section = section_class("lastra")(spec, paper, paper.parent)
    text = section.render() + section.render_appendix()  # (the module shares table: the appendix's)
    assert "### Profile (Tables 13-14)" in text and "| Fitness evaluation | 37 | 60.0 |" in text
    assert "not compared" not in text
    (verdict,) = [v for v in section.verdicts() if v.item == "Tables 13-14 (profile)"]
    assert verdict.status == "partly"
