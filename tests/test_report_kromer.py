"""The Kromer section: values read from traces at the paper's times, error % against the proven
optima, Table 4 beside the paper, and the section rendered from what `gpude paper` wrote."""

import json

import numpy as np
import pandas as pd
import pytest
import yaml

from gpude.report import kromer, kromer_tables
from gpude.report.document import build
from gpude.report.intervals import column_extremes

ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]
GPU, CPU = "GPU X / CPU y", "GPU X / CPU y"



def _both(out):
    """The report's body and its appendix, as one text."""
    return out.read_text() + "\n" + out.with_name("REPORT_appendix.md").read_text()

def row(impl, function, trial, best, budget, dim=50, popsize=256, solution=""):
    return {"run_id": f"de/{impl}/{function}/t{trial}", "source": "ref", "function": function, "dim": dim,
            "algorithm": "de", "implementation": impl, "popsize": popsize, "trial": trial, "machine": GPU,
            "status": "time", "best_error": best, "max_time_s": budget, "fes_used": 1000, "wall_time_s": budget,
            "solution": solution, "concurrency": "exclusive", "dtype": "float64"}


def test_best_at_reads_the_step_function_and_the_final_value_at_the_budget():
    trace = {"time_s": np.array([0.1, 1.0, 4.0, 7.0]), "best_error": np.array([90.0, 50.0, 10.0, 3.0])}
    assert kromer_tables.best_at(trace, 5.0, 1.0, 10.0) == 10.0      # the last generation that ended by 5 s
    assert kromer_tables.best_at(trace, 10.0, 1.0, 10.0) == 1.0      # the row's final best at the budget
    assert np.isnan(kromer_tables.best_at(trace, 0.05, 1.0, 10.0))   # nothing evaluated yet
    assert np.isnan(kromer_tables.best_at(None, 5.0, 1.0, 10.0))
    assert np.isnan(kromer_tables.best_at(trace, 10.0, 1.0, 5.0))     # a 5 s run says nothing about 10 s


def test_lop_error_percent_uses_the_table_s_own_optimum_and_counts_solved_instances():
    # be75eec (Table 2, optimum 264940) and N-be75eec (Table 3, 236464)
    trials = pd.DataFrame([row("many_threaded", "be75eec", 0, 0.0, 10.0),
                           row("many_threaded", "be75eec", 1, 0.0, 10.0),
                           row("many_threaded", "N-be75eec", 0, 236.464, 10.0),
                           row("many_threaded", "be75np", 0, 0.0, 10.0)])
    traces = {("ref", "de/many_threaded/be75eec/t0"): {"time_s": np.array([1.0, 6.0]),
                                                       "best_error": np.array([2649.4, 0.0])},
              ("ref", "de/many_threaded/be75eec/t1"): {"time_s": np.array([1.0, 4.0]),
                                                       "best_error": np.array([2649.4, 0.0])},
              ("ref", "de/many_threaded/N-be75eec/t0"): {"time_s": np.array([1.0]), "best_error": np.array([236.464])},
              ("ref", "de/many_threaded/be75np/t0"): {"time_s": np.array([0.5, 2.0]),
                                                      "best_error": np.array([9.0, 0.0])}}
    paper = {2: pd.DataFrame({"instance": ["be75eec"], "best_5s": [1.13e-3], "avg_5s": [2e-3], "best_10s": [0.0],
                              "avg_10s": [8.83e-3]})}
    t = kromer_tables.lop_table(trials, traces, paper).set_index("instance")
    assert t.loc["be75eec", "avg_5s"] == pytest.approx(0.5)          # 1% and 0% at 5 s
    assert t.loc["be75eec", "best_5s"] == 0.0 and t.loc["be75eec", "avg_10s"] == 0.0
    # solved in every run = at the optimum after 5 s and after 10 s (be75eec's first run: only at 6 s)
    assert t.loc["be75np", "solved_every_run"] and not t.loc["be75eec", "solved_every_run"]
    assert not t.loc["N-be75eec", "solved_every_run"]
    assert t.loc["N-be75eec", "avg_10s"] == pytest.approx(0.1) and t.loc["N-be75eec", "table"] == 3
    assert t.loc["be75eec", "paper_avg_10s"] == 8.83e-3 and np.isnan(t.loc["N-be75eec", "paper_avg_10s"])
    s = kromer_tables.lop_summary(t.reset_index(), paper).set_index(["table", "implementation"])
    assert s.loc[(2, "many_threaded"), "solved_every_run"] == 1
    assert s.loc[(2, "paper (GPU)"), "mean_avg_10s"] == 8.83e-3
    # ours against the paper: be75eec is the only Table 2 instance the transcribed table has here
    ours = s.loc[(2, "many_threaded")]
    assert ours["runs"] == 3 and ours["mean_avg_5s"] == pytest.approx(0.25)  # (0.5 + 0) / 2 instances
    assert ours["over_paper_5s"] == pytest.approx(0.25 / 2e-3) and ours["over_paper_10s"] == 0.0
    assert (ours["below_paper_5s"], ours["equal_paper_5s"], ours["above_paper_5s"]) == (0, 0, 1)
    assert (ours["below_paper_10s"], ours["equal_paper_10s"], ours["above_paper_10s"]) == (1, 0, 0)
    # with the runs, each ratio's interval: each instance's runs resampled, the paper's mean fixed
    # (be75eec's two runs at 5 s: 1 % and 0 %, its mean 0.5 % or 0 % or 1 %; be75np's one run: 0 %)
    s = kromer_tables.lop_summary(t.reset_index(), paper, kromer_tables.lop_percent(trials, traces))
    ours = s.set_index(["table", "implementation"]).loc[(2, "many_threaded")]
    assert ours["over_paper_5s_lo"] == pytest.approx(0.0) and ours["over_paper_5s_hi"] == pytest.approx(0.5 / 2e-3)
    assert ours["over_paper_10s_lo"] == ours["over_paper_10s_hi"] == 0.0


def test_eval_speed_sets_the_cpus_against_the_pre_bound_launch_and_names_the_machine():
    def r(problem, popsize, device, seconds):
        return {"problem": problem, "instance": "be75eec", "popsize": popsize, "device": device,
                "seconds_median": seconds, "gpu": "GPU X", "cpu": "CPU y", "cpu_cores": 32}
    speed = pd.DataFrame([r("lop", 16, "cpu", 1e-5), r("lop", 16, "gpu", 8e-5), r("lop", 16, "gpu_prebound", 2e-5),
                          r("lop", 512, "cpu", 4e-4), r("lop", 512, "gpu", 8e-5), r("lop", 512, "gpu_prebound", 2e-5),
                          r("lop", 16, "cpu_parallel", 1e-5), r("lop", 512, "cpu_parallel", 3e-5)])
    t = kromer_tables.eval_speed_table(speed).set_index("popsize")
    assert set(t["gpu_device"]) == {"gpu_prebound"} and set(t["machine"]) == {"GPU X / CPU y x32"}
    assert t.loc[16, "cpu_over_gpu"] == pytest.approx(0.5) and t.loc[512, "cpu_over_gpu"] == pytest.approx(20.0)
    assert t.loc[512, "cpu_parallel_over_gpu"] == pytest.approx(1.5)
    # a CSV from before the pre-bound launch: the function object's launch is the GPU's
    old = kromer_tables.eval_speed_table(speed[speed["device"] != "gpu_prebound"]).set_index("popsize")
    assert set(old["gpu_device"]) == {"gpu"} and old.loc[512, "cpu_over_gpu"] == pytest.approx(5.0)
    assert "cpu_over_gpu_lo" not in t  # no repeats in the file: no interval


def test_eval_speed_ratios_carry_the_interval_of_both_sides_repeats():
    def r(device, seconds):
        return {"problem": "etc", "instance": "u_c_hihi", "popsize": 64, "device": device,
                "seconds_median": float(np.median(seconds)), "seconds_runs": ";".join(map(str, seconds))}
    speed = pd.DataFrame([r("cpu", [4.0, 4.2, 3.8, 4.1, 3.9]), r("gpu_prebound", [1.0, 1.1, 0.9, 1.0, 1.05])])
    t = kromer_tables.eval_speed_table(speed).iloc[0]
    assert t["cpu_over_gpu"] == pytest.approx(4.0)
    assert 3.8 / 1.1 <= t["cpu_over_gpu_lo"] < 4.0 < t["cpu_over_gpu_hi"] <= 4.2 / 0.9
    two = kromer_tables.eval_speed_table(pd.DataFrame([r("cpu", [4.0, 4.2]), r("gpu_prebound", [1.0, 1.1])]))
    assert two["cpu_over_gpu_lo"].isna().all()  # fewer than 3 repeats a side: no interval


def test_the_paper_s_columns_are_high_level_sequential_and_many_threaded():
    # sec. 5.3: a simple high-level CPU program, an optimised one identical to the GPU's but for CUDA
    assert kromer_tables.PAPER_COLUMN == {"high_level": "cpu", "sequential": "cpu_optimized", "many_threaded": "gpu"}
    assert "master_slave" not in kromer_tables.PAPER_COLUMN
    assert "high level object oriented C++ code" in kromer_tables.PAPER_COLUMNS_QUOTE
    assert "identical with the exception of CUDA-C language constructions" in kromer_tables.PAPER_COLUMNS_QUOTE


def test_etc_table_maps_implementations_to_the_paper_s_columns_and_marks_the_best():
    sol = lambda fit, span: json.dumps({"fit": fit, "makespan": span, "flowtime": 16 * fit})  # noqa: E731
    trials = pd.DataFrame([row("many_threaded", "ThMhCc", 0, 9.0e6, 30.0, 512, 64, sol(9.0e6, 8.8e6)),
                           row("sequential", "ThMhCc", 0, 8.0e6, 30.0, 512, 64, sol(8.0e6, 7.9e6)),
                           row("high_level", "ThMhCc", 0, 1.2e7, 30.0, 512, 64, sol(1.2e7, 1.1e7))])
    paper = pd.DataFrame({"etc": ["ThMhCc"] * 3, "popsize": [64] * 3, "implementation": ["cpu", "cpu_optimized", "gpu"],
                          "fitness": [1.07e7, 9.03e6, 9.57e6]})
    t = kromer_tables.etc_table(trials, paper)
    t = t.merge(kromer_tables.best_columns(t, "fit_mean"), on=["etc", "popsize"]).set_index("column")
    assert t.loc["gpu", "ours_over_paper"] == pytest.approx(9.0e6 / 9.57e6)
    assert t.loc["cpu_optimized", "implementation"] == "sequential" and t.loc["cpu", "implementation"] == "high_level"
    assert t.loc["cpu_optimized", "makespan_mean"] == 7.9e6
    assert set(t["best_by_fit_mean"]) == {"cpu_optimized"} and set(t["paper_best"]) == {"cpu_optimized"}
    assert t.loc["cpu", "min_min_makespan"] == 8460675.0  # Braun's u_c_hihi, data/etc/instances.csv


def test_etc_ratios_carry_the_bootstrap_interval_of_their_runs_and_the_summary_that_of_the_extremes():
    sol = json.dumps({"fit": 1.0, "makespan": 1.0, "flowtime": 16.0})
    fits = [8.0e6, 9.0e6, 1.0e7, 1.1e7, 1.2e7]
    trials = pd.DataFrame([row("many_threaded", "ThMhCc", t, f, 30.0, 512, 64, sol) for t, f in enumerate(fits)]
                          + [row("sequential", "ThMhCc", t, 9.0e6, 30.0, 512, 64, sol) for t in range(2)])
    paper = pd.DataFrame({"etc": ["ThMhCc"] * 2, "popsize": [64] * 2, "implementation": ["cpu_optimized", "gpu"],
                          "fitness": [9.0e6, 1.0e7]})
    t = kromer_tables.etc_table(trials, paper).set_index("column")
    gpu = t.loc["gpu"]
    assert gpu["ours_over_paper"] == pytest.approx(1.0)
    # our five runs resampled, the paper's mean fixed: inside the runs' range over it, around 1
    assert 0.8 <= gpu["ours_over_paper_lo"] < 1.0 < gpu["ours_over_paper_hi"] <= 1.2
    assert np.isnan(t.loc["cpu_optimized", "ours_over_paper_lo"])  # two runs: no interval
    assert kromer._with_interval(gpu.to_dict()) == (f"1.00 [{gpu['ours_over_paper_lo']:.2f}, "
                                                   f"{gpu['ours_over_paper_hi']:.2f}]")
    assert kromer._with_interval(t.loc["cpu_optimized"].to_dict()) == "1.00 (n = 2: no interval)"
    one = t.reset_index()
    gpu_part = one[one["column"] == "gpu"]
    assert column_extremes(gpu_part, gpu_part["ours_over_paper"], "ours_over_paper", spec="{:.2f}", unit="") == (
        f"1.00 (95% CI of the extremes {gpu['ours_over_paper_lo']:.2f}-{gpu['ours_over_paper_hi']:.2f})")


def test_rastrigin_table_reads_both_times_and_puts_the_paper_beside():
    trials = pd.DataFrame([row("many_threaded", "N09", 0, 30.0, 27.0, dim=128)])
    traces = {("ref", "de/many_threaded/N09/t0"): {"time_s": np.array([0.1, 0.5, 3.0]),
                                                   "best_error": np.array([900.0, 250.0, 60.0])}}
    paper = pd.read_csv(ROOT / "paper/published/kromer_table1.csv", comment="#") if (
        ROOT / "paper/published/kromer_table1.csv").is_file() else pd.DataFrame(
        {"variables": [128, 128], "source": ["kromer"] * 2, "value": [232.8668, 32.98331],
         "time_s": [0.6604656, 27.00045]})
    t = kromer_tables.rastrigin_table(trials, traces, paper).iloc[0]
    assert t["mean_0.64s"] == 250.0 and t["mean_27s"] == 30.0
    assert t["paper_0.64s"] == pytest.approx(232.8668) and t["paper_27s"] == pytest.approx(32.98331)
    # three runs: ours / the paper's with its interval (ours resampled, the paper's fixed)
    more = pd.DataFrame([row("many_threaded", "N09", k, 30.0 * k, 27.0, dim=128) for k in (1, 2)])
    t = kromer_tables.rastrigin_table(pd.concat([trials, more]), traces, paper).iloc[0]
    assert t["mean_27s"] == 40.0
    assert 30.0 / t["paper_27s"] <= t["ours_over_paper_27s_lo"] < 40.0 / t["paper_27s"] < t["ours_over_paper_27s_hi"]
    assert t["ours_over_paper_27s_hi"] <= 60.0 / t["paper_27s"]
    # only the first run has a trace: at 0.64 s the others are NaN, one value: no interval
    assert np.isnan(t["ours_over_paper_0.64s_lo"])


def test_section_renders_from_what_write_outputs_wrote(tmp_path):
    sol = json.dumps({"fit": 5.0e6, "makespan": 5.5e6, "flowtime": 3.0e7})
    trials = pd.DataFrame([row("many_threaded", "ThMhCi", t, 5.0e6 + t, 30.0, 512, 64, sol) for t in range(2)])
    traces = {("ref", f"de/many_threaded/ThMhCi/t{t}"): {"time_s": np.array([0.01, 1.0, 20.0]),
                                                         "best_error": np.array([3e7, 9e6, 5e6])} for t in range(2)}
    published = tmp_path / "table4.csv"
    pd.DataFrame({"etc": ["ThMhCi"], "popsize": [64], "implementation": ["gpu"],
                  "fitness": [3.18e6]}).to_csv(published, index=False)
    out = tmp_path / "paper" / "kromer_etc"
    files = kromer.write_outputs(trials, traces, out, table4=str(published))
    assert {f.name for f in files} >= {"table_etc.csv", "figure_etc_progress_Th.png"}
    spec = yaml.safe_load((ROOT / "config/experiments/kromer_etc.yaml").read_text())
    (tmp_path / "kromer_etc.yaml").write_text(yaml.safe_dump(spec))
    text = _both(build([(str(tmp_path / "kromer_etc.yaml"), str(out))], tmp_path / "paper" / "REPORT.md"))
    assert "## Krömer, Platoš" in text and "**Table 4**" in text
    # the row: CPU and CPU opt. did not run; GPU ours (n), paper, ours / paper; the best column, ours and the paper's
    assert ("| ThMhCi | 64 | - | - | - | - | - | - | 5e+06 (2) | 3.18e+06 | 1.57 (n = 2: no interval) | GPU | GPU |"
            in text)
    assert "GPU (many_threaded): GPU X / CPU y" in text
    assert "the paper's CPU = high_level, CPU opt. = sequential, GPU = many_threaded" in text
    assert "figure_etc_progress_Th.png" in text


def test_an_unknown_study_input_is_refused(tmp_path):
    from gpude.core.errors import InvalidInputError

    with pytest.raises(InvalidInputError, match="kromer section reads no study input table9"):
        kromer.write_outputs(pd.DataFrame(), {}, tmp_path, table9="x.csv")


def rate_row(problem, popsize, impl, fes_per_s, seconds=3.0, wall=3.0):
    return {"problem": problem, "dim": 512, "popsize": popsize, "implementation": impl, "F": 0.5, "CR": 0.01,
            "seconds": seconds, "fes": fes_per_s * wall, "wall_time_s": wall, "fes_per_s": fes_per_s,
            "gpu": "GPU X", "cpu": "CPU y", "cpu_cores": 32}


def test_fe_rate_table_puts_the_columns_side_by_side_with_the_paper_s_ratios():
    rate = pd.DataFrame([rate_row("ThMhCi", 64, "high_level", 1.0e4), rate_row("ThMhCi", 64, "sequential", 5.0e5),
                         rate_row("ThMhCi", 64, "many_threaded", 8.0e5),
                         rate_row("ThMhCi", 512, "high_level", 2.0e4), rate_row("ThMhCi", 512, "sequential", 4.0e5),
                         rate_row("ThMhCi", 512, "many_threaded", 6.0e6, wall=1.5)])
    t = kromer_tables.fe_rate_table(rate).set_index("popsize")
    assert t.loc[64, "gpu_over_cpu"] == pytest.approx(80.0)            # many_threaded / high_level
    assert t.loc[64, "gpu_over_cpu_optimized"] == pytest.approx(1.6)   # many_threaded / sequential
    assert t.loc[64, "cpu_optimized_over_cpu"] == pytest.approx(50.0)  # sequential / high_level
    assert t.loc[512, "gpu_over_cpu"] == pytest.approx(300.0)
    assert t.loc[512, "gpu_over_cpu_optimized"] == pytest.approx(15.0)
    assert t.loc[512, "stopped_early"] == "many_threaded" and t.loc[64, "stopped_early"] == ""
    assert set(t["machine"]) == {"GPU X / CPU y x32"}
    # beside the experiment's runs of the case: the median FEs of a 30 s run over 30 s at the rate alone
    trials = pd.DataFrame([{**row("sequential", "ThMhCi", k, 1.0, 30.0, 512, 64), "fes_used": f}
                           for k, f in enumerate((7.0e6, 7.5e6, 9.0e6))])
    t = kromer_tables.fe_rate_table(rate, trials).set_index("popsize")
    assert t.loc[64, "reference_over_alone_sequential"] == pytest.approx(7.5e6 / (30 * 5.0e5))
    assert np.isnan(t.loc[512, "reference_over_alone_sequential"])
    assert np.isnan(t.loc[64, "reference_over_alone_high_level"])


def test_fe_rate_table_takes_a_cells_median_and_gives_its_ratios_an_interval_from_three_runs():
    rows = [rate_row("ThMhCi", 64, impl, v) for impl, vs in
            (("high_level", (1.0e4, 1.1e4, 0.9e4)), ("sequential", (5.0e5, 5.5e5, 4.5e5)),
             ("many_threaded", (8.0e5, 7.0e5, 9.0e5))) for v in vs]
    t = kromer_tables.fe_rate_table(pd.DataFrame(rows)).iloc[0]
    assert t["runs"] == 3 and t["high_level"] == pytest.approx(1.0e4) and t["gpu_over_cpu"] == pytest.approx(80.0)
    assert t["gpu_over_cpu_lo"] < 80.0 < t["gpu_over_cpu_hi"]
    one = kromer_tables.fe_rate_table(pd.DataFrame(rows[::3])).iloc[0]  # a run a cell: no interval
    assert one["runs"] == 1 and np.isnan(one["gpu_over_cpu_lo"])
    # two of the GPU's three runs reached the optimum early: named once, with how many
    early = [dict(r, wall_time_s=1.0) if r["implementation"] == "many_threaded" and k < 8 else r
             for k, r in enumerate(rows)]
    assert kromer_tables.fe_rate_table(pd.DataFrame(early)).iloc[0]["stopped_early"] == "many_threaded (2 of 3 runs)"
    # the appendix's table gives each ratio its interval
    from gpude.report.kromer import _rate_ratio

    lo, hi = t["gpu_over_cpu_lo"], t["gpu_over_cpu_hi"]
    assert _rate_ratio(t.to_dict(), "gpu_over_cpu") == f"80.0 [{lo:.3g}, {hi:.3g}]"
    assert _rate_ratio(one.to_dict(), "gpu_over_cpu") == "80.0"
    claims = pd.read_csv(ROOT / "paper/published/kromer_claims.csv", comment="#")
    paper4 = pd.read_csv(ROOT / "paper/published/kromer_table4.csv", comment="#")
    ours = paper4.rename(columns={"fitness": "fit_mean", "implementation": "column"})
    c = kromer_tables.claims_check(claims, ours, paper4, kromer_tables.fe_rate_table(pd.DataFrame(rows)))
    text = c.set_index("check").loc["gpu_over_cpu_speed", "ours"]
    assert text.startswith("80-80x (whole DE, FE rate (ETC, NP 64; 3 runs a cell, 95% CI of the extremes")


def run_row(impl, trial, fes, end, boot="boot-a", at_once=None, concurrency="shared", function="ThMhCc", wall=30.0):
    r = {"run_id": f"de/{impl}/{function}/t{trial}", "implementation": impl, "function": function, "dim": 512,
         "popsize": 64, "dtype": "float64", "trial": trial, "fes_used": fes, "wall_time_s": wall, "status": "time",
         "boot_id": boot, "concurrency": concurrency, "timestamp_utc": end}
    return r if at_once is None else {"at_once": at_once, **r}


def test_contention_table_compares_with_the_run_alone_and_counts_the_reference_s_processes():
    check = pd.DataFrame([run_row("sequential", 0, 1000, "2026-01-01T00:10:00Z", "boot-b", 1, "exclusive"),
                          run_row("sequential", 0, 990, "2026-01-01T00:11:00Z", "boot-b", 4),
                          *[run_row("sequential", t, 900 + t, "2026-01-01T00:11:00Z", "boot-b", 4) for t in (1, 2, 3)]])
    # the reference: trials 0 and 1 side by side with one GPU launch of 2 trials; trial 2 after them (not counted)
    ref = pd.DataFrame([run_row("sequential", 0, 500, "2026-01-01T00:00:30Z"),
                        run_row("sequential", 1, 600, "2026-01-01T00:00:31Z"),
                        run_row("sequential", 2, 700, "2026-01-01T00:01:10Z"),
                        run_row("many_threaded", 0, 9000, "2026-01-01T00:00:32Z", concurrency="exclusive-gpu:2"),
                        run_row("many_threaded", 1, 9000, "2026-01-01T00:00:32Z", concurrency="exclusive-gpu:2"),
                        run_row("sequential", 0, 1, "2026-01-01T00:00:30Z", boot="boot-z", function="ThMhCi")])
    t = kromer_tables.contention_table(check, ref).set_index(["source", "at_once"])
    assert t.loc[("check", 1), "probe_over_alone"] == 1.0
    assert t.loc[("check", 4), "probe_over_alone"] == pytest.approx(0.99) and t.loc[("check", 4), "runs"] == 4
    assert t.loc[("check", 4), "min_over_alone"] == pytest.approx(0.901)
    # the reference's trial 0 ran beside trial 1 and one GPU launch: 3 processes, half its FEs alone
    assert ("reference", 3) in t.index
    r = t.loc[("reference", 3)]
    assert r["probe_fes"] == 500 and r["probe_over_alone"] == pytest.approx(0.5) and r["runs"] == 3
    assert r["processes"] == "2 sequential + 1 many_threaded launch" and r["boot_id"] == "boot-a"


@pytest.mark.io
def test_claims_are_checked_on_table_4_and_the_fe_rates():
    claims = pd.read_csv(ROOT / "paper/published/kromer_claims.csv", comment="#")
    paper4 = pd.read_csv(ROOT / "paper/published/kromer_table4.csv", comment="#")
    # ours = the paper's Table 4 itself, but the GPU loses ThMhCi at NP 1024 to the CPU opt. column
    ours = paper4.rename(columns={"fitness": "fit_mean", "implementation": "column"})
    ours.loc[(ours["etc"] == "ThMhCi") & (ours["popsize"] == 1024) & (ours["column"] == "cpu_optimized"),
             "fit_mean"] = 1.0
    rate = kromer_tables.fe_rate_table(pd.DataFrame([rate_row("ThMhCi", 64, "high_level", 1.0e4),
                                              rate_row("ThMhCi", 64, "sequential", 5.0e5),
                                              rate_row("ThMhCi", 64, "many_threaded", 8.0e5)]))
    c = kromer_tables.claims_check(claims, ours, paper4, rate).set_index("check")
    assert c.loc["gpu_best_np512_1024", "ours"] == "23 of 24" and c.loc["gpu_best_np512_1024", "holds"] == "mostly"
    assert c.loc["gpu_best_np512_1024", "paper_table"] == "24 of 24"
    assert c.loc["cpu_opt_best_np64_consistent", "ours"] == "4 of 4" and c.loc["gpu_best_np64_other", "holds"] == "yes"
    assert c.loc["np64_most_successful", "paper_table"] == "11 of 12"   # ThMhCs is best at NP 512 in the paper
    assert c.loc["cpu_opt_beats_cpu_np64", "holds"] == "yes"
    assert c.loc["gpu_over_cpu_speed", "ours"].startswith("80-80x") and c.loc["gpu_over_cpu_speed", "holds"] == "within"
    assert c.loc["gpu_over_cpu_opt_speed", "holds"] == "below"          # 1.6x against 2.2-12.5x


@pytest.mark.io
def test_section_renders_the_fe_rate_contention_and_claims(tmp_path):
    sol = json.dumps({"fit": 5.0e6, "makespan": 5.5e6, "flowtime": 3.0e7})
    trials = pd.DataFrame([{**row("sequential", "ThMhCc", 0, 5.0e6, 30.0, 512, 64, sol), "boot_id": "boot-a",
                            "fes_used": 5.0e6, "concurrency": "shared", "timestamp_utc": "2026-01-01T00:00:30Z"}])
    rate = tmp_path / "rate.csv"
    pd.DataFrame([rate_row("ThMhCi", 64, i, v) for i, v in
                  (("high_level", 1.0e4), ("sequential", 5.0e5), ("many_threaded", 8.0e5))]).to_csv(rate, index=False)
    contention = tmp_path / "contention.csv"
    pd.DataFrame([run_row("sequential", 0, 1.0e7, "2026-01-01T00:10:00Z", "boot-b", 1, "exclusive")]).to_csv(
        contention, index=False)
    out = tmp_path / "paper" / "kromer_etc"
    files = kromer.write_outputs(trials, {}, out, table4=str(ROOT / "paper/published/kromer_table4.csv"),
                                 claims=str(ROOT / "paper/published/kromer_claims.csv"), fe_rate=str(rate),
                                 contention=str(contention))
    assert {f.name for f in files} >= {"fe_rate.csv", "contention.csv", "claims_check.csv"}
    spec = yaml.safe_load((ROOT / "config/experiments/kromer_etc.yaml").read_text())
    assert {"fe_rate", "contention"} <= set(spec["report"]["study_inputs"])
    (tmp_path / "kromer_etc.yaml").write_text(yaml.safe_dump(spec))
    text = _both(build([(str(tmp_path / "kromer_etc.yaml"), str(out))], tmp_path / "paper" / "REPORT.md"))
    assert "| ThMhCi | 512 | 64 | 0.01 | 1e+04 | 5e+05 | 8e+05 | 80.0 | 1.6 | 50.0 |" in text
    assert "25.2 - 216.5 times faster than CPU implementation" in text
    # the reference row of the cell: alone made 1e7, the reference 5e6, with 1 process (itself) at once
    assert "| sequential | ThMhCc NP 64 | reference | 1 (1 sequential) | boot-a | 1 | 5,000,000 (t0) | 0.500 |" in text
    assert "sequential 1 processes at once (1 sequential), 0.50x its FEs alone" in text
    assert "**The paper's claims on our data**" in text
    # the verdict: a speed-up within the paper's range holds, one below it does not (1.6x against 2.2-12.5x)
    verdict = next(line for line in text.splitlines() if line.startswith("| Krömer et al. | Table 4"))
    assert "speed-ups below the paper's range" in verdict and "3 hold, 0 in part" in verdict, verdict
    assert "1 not" in verdict, verdict


def test_a_claim_s_state_from_its_words():
    assert kromer.claim_state("yes") == ("holds", []) and kromer.claim_state("within") == ("holds", [])
    assert kromer.claim_state("within; overlaps") == ("in part", ["overlaps"])
    assert kromer.claim_state("above; below") == ("not", ["above", "below"]) and kromer.claim_state("no")[0] == "not"
    assert kromer.claim_state("mostly") == ("in part", ["mostly"])
    assert kromer.claim_state("undecided: two machines") == ("undecided", ["undecided: two machines"])


@pytest.mark.io
def test_a_table_4_claim_counts_only_cells_made_on_one_machine():
    claims = pd.read_csv(ROOT / "paper/published/kromer_claims.csv", comment="#")
    paper4 = pd.read_csv(ROOT / "paper/published/kromer_table4.csv", comment="#")
    # ours = the paper's Table 4, the consistent matrices' GPU column made on another host than the rest
    ours = paper4.rename(columns={"fitness": "fit_mean", "implementation": "column"}).assign(machine="GPU / CPU x32")
    elsewhere = ours["etc"].str.endswith("Cc") & (ours["column"] == "gpu")
    ours.loc[elsewhere, "machine"] = "GPU / CPU x16"
    c = kromer_tables.claims_check(claims, ours, paper4).set_index("check")
    # CPU opt. against the GPU on the consistent matrices: every such cell spans two machines
    consistent = c.loc["cpu_opt_best_np64_consistent"]
    assert consistent["holds"] == "undecided: two machines"
    assert consistent["ours"].startswith("none on one machine; left out, 4 of two machines")
    assert "4 of 4, the best ahead by " in consistent["ours"]
    # the GPU at NP 512-1024: the 16 cells of one machine decide, the 8 of two are said apart
    big = c.loc["gpu_best_np512_1024"]
    assert big["ours"].startswith("16 of 16; left out, 8 of two machines") and big["holds"] == "yes"
    # a matrix whose cells span two machines leaves the best-NP count too
    assert c.loc["np64_most_successful", "ours"].startswith("7 of 8; left out, 4 of two machines")
    # the other matrices' GPU and CPU columns share a machine: decided as before
    assert c.loc["gpu_best_np64_other", "ours"] == "8 of 8" and c.loc["gpu_best_np64_other", "holds"] == "yes"
