"""The Lastra et al. report section: its tables from hand-made trials and from the committed reference."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from gpude.report import lastra
from gpude.report.document import section_class
from gpude.report.intervals import column_extremes
from gpude.report.sources import load_sources

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = sorted(ROOT.glob("results/reference/*/lastra/trials.csv"))
CPU_SAMPLE = sorted(ROOT.glob("results/reference/*/lastra_cpu/trials.csv"))


def run(function, dim, wall, error, concurrency="exclusive", implementation="gpu", fes=500_000, distance=1.0,
        trial=0):
    return {"run_id": f"masw/{implementation}/{function}/d{dim}/t{trial}/{concurrency}", "algorithm": "masw",
            "implementation": implementation, "function": function, "dim": dim, "wall_time_s": wall,
            "best_error": error, "fes_used": fes, "status": "budget", "concurrency": concurrency,
            "distance_to_optimum": distance, "machine": "GPU X / CPU x1", "trial": trial}


@pytest.fixture
def trials():
    return pd.DataFrame([
        run("L01", 100_000, 10.0, 1000.0, distance=2.0),
        run("L01", 100_000, 30.0, 3000.0, distance=4.0, trial=1),
        run("L01", 100_000, 500.0, 2000.0, concurrency="shared", distance=3.0, trial=2),  # quality only
        run("L01", 3_000_000, 40.0, 5e5),
        run("C18", 3_000_000, 90.0, 1e16, distance=1e5),
    ])


def test_runtime_uses_exclusive_runs_and_extrapolates_the_cpu_linearly(trials):
    sample = pd.DataFrame([run("L01", 100_000, 80.0, 9e5, implementation="sequential", fes=20_000,
                               concurrency="shared")])
    t = lastra.runtime_table(trials, sample).set_index(["function", "dim"])
    assert t.loc[("L01", 100_000), "n"] == 2 and t.loc[("L01", 100_000), "gpu_s"] == pytest.approx(20.0)
    # 80 s for 20,000 FEs at D = 1e5 -> x 25 for 500,000 FEs, x 30 for D = 3e6
    assert t.loc[("L01", 100_000), "cpu_extrapolated_s"] == pytest.approx(2000.0)
    assert t.loc[("L01", 3_000_000), "cpu_extrapolated_s"] == pytest.approx(60_000.0)
    assert t.loc[("L01", 3_000_000), "speedup_extrapolated"] == pytest.approx(1500.0)
    # the paper's Table 1 beside ours, and per run if its cells are sums over its ten runs
    assert t.loc[("L01", 3_000_000), "paper_gpu_s"] == 8776.9
    assert t.loc[("L01", 3_000_000), "paper_gpu_per_run_s"] == pytest.approx(877.69)
    assert t.loc[("L01", 3_000_000), "paper_gpu_over_ours"] == pytest.approx(8776.9 / 40.0)
    assert "C18" not in t.index.get_level_values("function")  # the CEC functions have their own table


def test_the_gpu_time_ratio_carries_the_interval_of_the_timed_runs_against_the_papers_fixed_time(trials):
    timed = [run("L01", 3_000_000, w, 5e5, trial=k) for k, w in enumerate((36.0, 40.0, 44.0))]
    t = lastra.runtime_table(pd.concat([trials, pd.DataFrame(timed)], ignore_index=True))
    big = t.set_index(["function", "dim"]).loc[("L01", 3_000_000)].to_dict()
    # the four timed runs (40, 36, 40, 44 s) resampled, the paper's 8776.9 s fixed
    lo, hi = big["ours_over_paper_gpu_lo"], big["ours_over_paper_gpu_hi"]
    assert 36.0 / 8776.9 <= lo < 40.0 / 8776.9 < hi <= 44.0 / 8776.9
    r = lastra.gpu_time_ratio(big)
    assert r.point == pytest.approx(40.0 / 8776.9) and r.text("{:.2g}").count("x") == 3
    per_run = lastra.gpu_time_ratio(big, per_run=True)  # the paper's time per stated run: 10 x the ratio
    assert per_run.lo == pytest.approx(10 * r.lo) and per_run.hi == pytest.approx(10 * r.hi)
    small = t.set_index(["function", "dim"]).loc[("L01", 100_000)].to_dict()  # two timed runs: no interval
    assert lastra.gpu_time_ratio(small).text("{:.2g}").endswith("(n = 2: no interval)")


def test_the_times_are_of_the_machine_of_most_timed_runs_the_errors_of_every_host_of_its_gpu(trials):
    """Another host of the same GPU (more cores) made more runs, all several per launch: the tables
    still time the machine of the runs made one per launch; those runs' errors count."""
    other = pd.DataFrame([{**run("L01", 100_000, 3.0, 2500.0, trial=3 + k), "machine": "GPU X / CPU x4",
                           "gpu": "GPU X", "params": '{"trials_per_launch": 10}'} for k in range(10)])
    both = pd.concat([trials.assign(gpu="GPU X", params="{}"), other], ignore_index=True)
    assert lastra.main_machine(both) == "GPU X / CPU x1"
    t = lastra.runtime_table(both).set_index(["function", "dim"])
    assert t.loc[("L01", 100_000), "n"] == 2 and t.loc[("L01", 100_000), "gpu_s"] == pytest.approx(20.0)
    assert lastra.quality_table(both).set_index(["function", "dim"]).loc[("L01", 100_000), "n"] == 13


def test_quality_reports_objectives_with_the_bias_and_all_runs(trials):
    q = lastra.quality_table(trials).set_index(["function", "dim"])
    row = q.loc[("L01", 100_000)]
    assert row["n"] == 3  # the shared run counts for quality
    assert row["objective_mean"] == pytest.approx(2000.0 - 330.0)
    assert row["objective_median"] == pytest.approx(2000.0 - 330.0)
    assert row["distance_mean"] == pytest.approx(3.0)
    assert row["gpu_s"] == pytest.approx(20.0)  # time: exclusive runs only
    assert row["paper_gpu_objective_mean"] == 5.1e5 and row["paper_cpu_distance_mean"] == 3.3e2


def test_quality_and_cec_ratios_carry_the_interval_of_our_runs_against_the_papers_fixed_mean(trials):
    # L01 at D = 1e5: three runs (distances 2, 4, 3; errors 1000, 3000, 2000), the paper's means fixed
    q = lastra.quality_table(trials).set_index(["function", "dim"])
    row = q.loc[("L01", 100_000)]
    paper_distance, paper_error = row["paper_gpu_distance_mean"], row["paper_gpu_objective_mean"] + 330.0
    assert 2.0 / paper_distance <= row["distance_over_paper_lo"] < 3.0 / paper_distance
    assert 3.0 / paper_distance < row["distance_over_paper_hi"] <= 4.0 / paper_distance
    assert 1000.0 / paper_error <= row["error_over_paper_lo"] < 2000.0 / paper_error < row["error_over_paper_hi"]
    # one run: no interval, and the text says why
    assert np.isnan(q.loc[("L01", 3_000_000), "distance_over_paper_lo"])
    c = lastra.cec_table(trials).set_index(["function", "dim"])
    assert np.isnan(c.loc[("C18", 3_000_000), "objective_over_paper_lo"])
    more = [run("C18", 3_000_000, 90.0, e, trial=k) for k, e in enumerate((0.8e16, 1.2e16), start=1)]
    c = lastra.cec_table(pd.concat([trials, pd.DataFrame(more)], ignore_index=True)).set_index(["function", "dim"])
    row = c.loc[("C18", 3_000_000)]
    assert 0.8e16 / 1.3e16 <= row["objective_over_paper_lo"] < 1e16 / 1.3e16 < row["objective_over_paper_hi"]
    assert row["objective_over_paper_hi"] <= 1.2e16 / 1.3e16
    ours = c[c["n"].notna()]
    text = column_extremes(ours, ours["objective_mean"] / ours["paper_mean"], "objective_over_paper")
    assert text == (f"{1e16 / 1.3e16:.2g}x (95% CI of the extremes {row['objective_over_paper_lo']:.2g}-"
                    f"{row['objective_over_paper_hi']:.2g}x)")


def test_cec_table_maps_ids_to_the_paper_functions(trials):
    c = lastra.cec_table(trials).set_index(["function", "dim"])
    row = c.loc[("C18", 3_000_000)]
    assert row["objective_mean"] == 1e16  # optimum 0: objective = error
    assert row["paper_mean"] == 1.3e16 and row["paper_median"] == 1.37e16 and row["paper_distance"] == 6.4e4
    assert np.isnan(c.loc[("C18", 100_000), "n"])  # the paper's cell without ours stays, empty
    assert list(c.index.get_level_values("function").unique()) == sorted(lastra.CEC_NAMES, key=lambda f: int(f[1:]))


def test_performance_roles_and_verdicts():
    perf = pd.DataFrame({"metric": ["time_500k_fes_L01_d3e6", "eval_L01_d3e6_float64", "eval_C18_d3e6_float64"],
                         "ratio": [0.9, 2.1, 1.5]})
    p = lastra.performance_table(perf).set_index("metric")
    assert list(p["role"]) == ["target", "target", "diagnostic"]
    assert list(p["met"]) == [True, False, True]  # time against 1, evaluations against 2


@pytest.mark.io
@pytest.mark.skipif(not REFERENCE, reason="no committed Lastra reference run")
def test_section_from_the_committed_reference(tmp_path):
    trials, traces = load_sources([str(p) for p in REFERENCE])
    perf = REFERENCE[0].with_name("perf.csv")
    files = lastra.write_outputs(trials, traces, tmp_path, cpu_sample=str(CPU_SAMPLE[0]) if CPU_SAMPLE else None,
                                 perf=str(perf) if perf.is_file() else None)
    assert (tmp_path / "figure_time_vs_d.png").stat().st_size > 1000 and tmp_path / "table_runtime.csv" in files
    runtime = pd.read_csv(tmp_path / "table_runtime.csv")
    assert (runtime["machine"].dropna().str.contains("H200")).all()  # the table names its device
    spec = yaml.safe_load((ROOT / "config/experiments/lastra.yaml").read_text())
    section = section_class("lastra")(spec, tmp_path, tmp_path.parent)
    text = section.render() + section.appendix()
    for needle in ("Runs present in the committed reference", "Run time of 500,000 FEs", "CEC 2010 functions",
                   "ten runs per cell", "Evaluation speed against its bounds"):
        assert needle in text
    assert "Shifted" not in text and "| Rastrigin | 3,000,000 |" in text


def test_an_unknown_study_input_is_refused(tmp_path, trials):
    from gpude.core.errors import InvalidInputError
    from gpude.report.document import Section

    with pytest.raises(InvalidInputError, match="no study input cpu_sampel.*cpu_sample, perf, float32"):
        lastra.write_outputs(trials, {}, tmp_path, cpu_sampel="x.csv")

    with pytest.raises(InvalidInputError, match="reads no study inputs"):
        Section.write_outputs(trials, {}, tmp_path, perf="x.csv")
