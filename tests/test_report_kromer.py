"""The Kromer section: values read from traces at the paper's times, error % against the proven
optima, Table 4 beside the paper, and the section rendered from what `gpude paper` wrote."""

import json

import numpy as np
import pandas as pd
import pytest
import yaml

from gpude.report import kromer
from gpude.report.document import build

ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]
GPU, CPU = "GPU X / CPU y", "GPU X / CPU y"


def row(impl, function, trial, best, budget, dim=50, popsize=256, solution=""):
    return {"run_id": f"de/{impl}/{function}/t{trial}", "source": "ref", "function": function, "dim": dim,
            "algorithm": "de", "implementation": impl, "popsize": popsize, "trial": trial, "machine": GPU,
            "status": "time", "best_error": best, "max_time_s": budget, "fes_used": 1000, "wall_time_s": budget,
            "solution": solution, "concurrency": "exclusive", "dtype": "float64"}


def test_best_at_reads_the_step_function_and_the_final_value_at_the_budget():
    trace = {"time_s": np.array([0.1, 1.0, 4.0, 7.0]), "best_error": np.array([90.0, 50.0, 10.0, 3.0])}
    assert kromer.best_at(trace, 5.0, 1.0, 10.0) == 10.0      # the last generation that ended by 5 s
    assert kromer.best_at(trace, 10.0, 1.0, 10.0) == 1.0      # the row's final best at the budget
    assert np.isnan(kromer.best_at(trace, 0.05, 1.0, 10.0))   # nothing evaluated yet
    assert np.isnan(kromer.best_at(None, 5.0, 1.0, 10.0))
    assert np.isnan(kromer.best_at(trace, 10.0, 1.0, 5.0))     # a 5 s run says nothing about 10 s


def test_lop_error_percent_uses_the_table_s_own_optimum_and_counts_solved_instances():
    # be75eec (Table 2, optimum 264940) and N-be75eec (Table 3, 236464)
    trials = pd.DataFrame([row("many_threaded", "be75eec", 0, 0.0, 10.0), row("many_threaded", "be75eec", 1, 0.0, 10.0),
                           row("many_threaded", "N-be75eec", 0, 236.464, 10.0), row("many_threaded", "be75np", 0, 0.0, 10.0)])
    traces = {("ref", "de/many_threaded/be75eec/t0"): {"time_s": np.array([1.0, 6.0]), "best_error": np.array([2649.4, 0.0])},
              ("ref", "de/many_threaded/be75eec/t1"): {"time_s": np.array([1.0, 4.0]), "best_error": np.array([2649.4, 0.0])},
              ("ref", "de/many_threaded/N-be75eec/t0"): {"time_s": np.array([1.0]), "best_error": np.array([236.464])},
              ("ref", "de/many_threaded/be75np/t0"): {"time_s": np.array([0.5, 2.0]), "best_error": np.array([9.0, 0.0])}}
    paper = {2: pd.DataFrame({"instance": ["be75eec"], "best_5s": [1.13e-3], "avg_5s": [2e-3], "best_10s": [0.0],
                              "avg_10s": [8.83e-3]})}
    t = kromer.lop_table(trials, traces, paper).set_index("instance")
    assert t.loc["be75eec", "avg_5s"] == pytest.approx(0.5)          # 1% and 0% at 5 s
    assert t.loc["be75eec", "best_5s"] == 0.0 and t.loc["be75eec", "avg_10s"] == 0.0
    # solved in every run = at the optimum after 5 s and after 10 s (be75eec's first run: only at 6 s)
    assert t.loc["be75np", "solved_every_run"] and not t.loc["be75eec", "solved_every_run"]
    assert not t.loc["N-be75eec", "solved_every_run"]
    assert t.loc["N-be75eec", "avg_10s"] == pytest.approx(0.1) and t.loc["N-be75eec", "table"] == 3
    assert t.loc["be75eec", "paper_avg_10s"] == 8.83e-3 and np.isnan(t.loc["N-be75eec", "paper_avg_10s"])
    s = kromer.lop_summary(t.reset_index(), paper).set_index(["table", "implementation"])
    assert s.loc[(2, "many_threaded"), "solved_every_run"] == 1
    assert s.loc[(2, "paper (GPU)"), "mean_avg_10s"] == 8.83e-3


def test_etc_table_maps_implementations_to_the_paper_s_columns_and_marks_the_best():
    sol = lambda fit, span: json.dumps({"fit": fit, "makespan": span, "flowtime": 16 * fit})  # noqa: E731
    trials = pd.DataFrame([row("many_threaded", "ThMhCc", 0, 9.0e6, 30.0, 512, 64, sol(9.0e6, 8.8e6)),
                           row("master_slave", "ThMhCc", 0, 8.0e6, 30.0, 512, 64, sol(8.0e6, 7.9e6)),
                           row("sequential", "ThMhCc", 0, 1.2e7, 30.0, 512, 64, sol(1.2e7, 1.1e7))])
    paper = pd.DataFrame({"etc": ["ThMhCc"] * 3, "popsize": [64] * 3, "implementation": ["cpu", "cpu_optimized", "gpu"],
                          "fitness": [1.07e7, 9.03e6, 9.57e6]})
    t = kromer.etc_table(trials, paper)
    t = t.merge(kromer.best_columns(t, "fit_mean"), on=["etc", "popsize"]).set_index("column")
    assert t.loc["gpu", "ours_over_paper"] == pytest.approx(9.0e6 / 9.57e6)
    assert t.loc["cpu_optimized", "makespan_mean"] == 7.9e6
    assert set(t["best_by_fit_mean"]) == {"cpu_optimized"}
    assert t.loc["cpu", "min_min_makespan"] == 8460675.0  # Braun's u_c_hihi, data/etc/instances.csv


def test_rastrigin_table_reads_both_times_and_puts_the_paper_beside():
    trials = pd.DataFrame([row("many_threaded", "N09", 0, 30.0, 27.0, dim=128)])
    traces = {("ref", "de/many_threaded/N09/t0"): {"time_s": np.array([0.1, 0.5, 3.0]),
                                                   "best_error": np.array([900.0, 250.0, 60.0])}}
    paper = pd.read_csv(ROOT / "paper/published/kromer_table1.csv", comment="#") if (
        ROOT / "paper/published/kromer_table1.csv").is_file() else pd.DataFrame(
        {"variables": [128, 128], "source": ["kromer"] * 2, "value": [232.8668, 32.98331], "time_s": [0.6604656, 27.00045]})
    t = kromer.rastrigin_table(trials, traces, paper).iloc[0]
    assert t["mean_0.64s"] == 250.0 and t["mean_27s"] == 30.0
    assert t["paper_0.64s"] == pytest.approx(232.8668) and t["paper_27s"] == pytest.approx(32.98331)


def test_section_renders_from_what_write_outputs_wrote(tmp_path):
    sol = json.dumps({"fit": 5.0e6, "makespan": 5.5e6, "flowtime": 3.0e7})
    trials = pd.DataFrame([row("many_threaded", "ThMhCi", t, 5.0e6 + t, 30.0, 512, 64, sol) for t in range(2)])
    traces = {("ref", f"de/many_threaded/ThMhCi/t{t}"): {"time_s": np.array([0.01, 1.0, 20.0]),
                                                         "best_error": np.array([3e7, 9e6, 5e6])} for t in range(2)}
    published = tmp_path / "table4.csv"
    pd.DataFrame({"etc": ["ThMhCi"], "popsize": [64], "implementation": ["gpu"], "fitness": [3.18e6]}).to_csv(published, index=False)
    out = tmp_path / "paper" / "kromer_etc"
    files = kromer.write_outputs(trials, traces, out, table4=str(published))
    assert {f.name for f in files} >= {"table_etc.csv", "figure_etc_progress_Th.png"}
    spec = yaml.safe_load((ROOT / "config/experiments/kromer_etc.yaml").read_text())
    (tmp_path / "kromer_etc.yaml").write_text(yaml.safe_dump(spec))
    text = build([(str(tmp_path / "kromer_etc.yaml"), str(out))], tmp_path / "paper" / "REPORT.md").read_text()
    assert "## Krömer, Platoš" in text and "**Table 4**" in text
    assert "| ThMhCi | 64 | GPU **best** | GPU X / CPU y | 2 | 5e+06 | 3.18e+06 | 1.57 |" in text
    assert "figure_etc_progress_Th.png" in text


def test_an_unknown_study_input_is_refused(tmp_path):
    from gpude.errors import InvalidInputError

    with pytest.raises(InvalidInputError, match="kromer section reads no study input table9"):
        kromer.write_outputs(pd.DataFrame(), {}, tmp_path, table9="x.csv")
