"""paper/REPORT.md: sections assembled from what `gpude paper` wrote, and the statistics files."""

import re

import numpy as np
import pandas as pd
import pytest
import yaml

from gpude.report.convergence import figures
from gpude.report.document import build
from gpude.report.timing import write_all
from gpude.stats.tables import comparable, with_competitors, write_statistics

ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]
MACHINE = "NVIDIA H200 / Intel Xeon x16"
PUBLISHED = pd.read_csv(ROOT / "paper/published/janssen_cs1_table3.csv", comment="#")
AUTHORS = pd.read_csv(ROOT / "paper/published/janssen_cs1_authors_code_h200.csv", comment="#")
AUTHORS_ERRORS = pd.read_csv(ROOT / "paper/published/janssen_cs1_authors_code_h200_errors.csv",
                             comment="#").set_index("implementation").loc["ide"]



def _both(out):
    """The report's body and its appendix, as one text."""
    return out.read_text() + "\n" + out.with_name("REPORT_appendix.md").read_text()

def case_study_trials(n_gpu=3, n_cpu=1):
    """Reference-like trials: ours at half the authors' time; equal errors on the same trial."""
    rows = []
    for impl in ("sequential", "master_slave", "naive_gpu", "all_gpu", "ide"):
        n = n_gpu if impl in ("all_gpu", "ide") else n_cpu
        for f in ("F01", "F05", "F10"):
            theirs = AUTHORS.set_index("implementation").loc[impl, f]
            for t in range(n):
                rows.append({"run_id": f"de/{impl}/{f}/t{t}", "algorithm": "de", "implementation": impl,
                             "function": f, "dim": 100, "popsize": 250, "dtype": "float32", "trial": t,
                             "machine": MACHINE, "wall_time_s": 0.5 * float(theirs) if pd.notna(theirs) else 1.0,
                             "best_error": AUTHORS_ERRORS[f] * (100 if f == "F05" else 1) * (1 + 0.01 * t),
                             "hit_target": False,
                             "time_to_target_s": np.nan, "fes_to_target": np.nan, "status": "budget"})
    return pd.DataFrame(rows)


def test_rank_sum_needs_equal_counts_so_fewer_trials_are_left_out_and_named(tmp_path):
    trials = with_competitors(case_study_trials())
    kept, excluded = comparable(trials)
    assert set(kept.competitor) == {"all_gpu", "ide"}
    assert excluded == ["master_slave", "naive_gpu", "sequential"]
    files = write_statistics(case_study_trials(), tmp_path)
    scores = pd.read_csv(files["rank_sum_time"], index_col="function")
    # identical errors per trial: the two competitors tie on every function (n*m/2 each = 4.5)
    assert scores.loc["total", "ide"] == scores.loc["total", "all_gpu"] == 3 * 4.5
    assert list(pd.read_csv(files["excluded"]).competitor) == ["master_slave", "naive_gpu", "sequential"]


@pytest.fixture()
def paper_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)  # section writers read paper/published/ from the workflow's root
    out = tmp_path / "paper" / "janssen_cs1"
    trials = case_study_trials()
    write_all(trials, out, PUBLISHED, {"authors' code on an H200": AUTHORS})
    figures(trials, {}, out)
    write_statistics(trials, out / "stats")
    return out


def test_case_study_1_section_puts_paper_authors_and_ours_side_by_side(paper_dir):
    out = build([(str(ROOT / "config/experiments/janssen_cs1.yaml"), str(paper_dir))],
                paper_dir.parent / "REPORT.md")
    body, text = out.read_text(), _both(out)
    assert "## Janssen, Pullan & Liew, case study 1" in body
    # ours are half the authors' time on every measured cell
    assert "| | ours / authors' code on an H200 | 0.50 | - | - | - | 0.50 |" in text
    assert "| ide | paper (s) | 0.63 | 0.61 |" in text and "| | ours / paper |" in text
    assert MACHINE in text and "n per cell: sequential 1, master_slave 1, naive_gpu 1, all_gpu 3, ide 3" in text
    # equal errors per seed are measured, not assumed
    assert "end on the same final error in all" in text and "paired (function, trial) cells" in text
    # F05's error is 100x the authors' in this synthetic table: named as a difference
    assert "They differ on F05" in text and "within a factor of 2 on 2 of 3 functions" in text
    # ours / theirs per function with the interval of our runs (three ide trials a function: one interval)
    ratios = next(line for line in text.splitlines() if line.startswith("| ours / authors' (95 % CI"))
    assert ratios.count("[") == 3 and ratios.count("(n = ") == 0, ratios
    assert "Left out of the scores for having fewer trials" in text
    assert "(janssen_cs1/figure_time.png)" in text
    # the results and their anomalies in the body, the statistics and where the numbers come from in the appendix
    assert "#### What differs and why (anomalies and their causes)" in body and "They differ on F05" in body
    assert "### Where the numbers come from" not in body and "### Statistics" not in body
    assert "Trials per machine and implementation" in text
    # the paper's deviations after its sections: hardware, trials, float32, the authors' operators
    deviations = body[body.index("### Deviations from Janssen, Pullan & Liew"):]
    assert "* **Hardware**: The paper ran on an NVIDIA GeForce RTX 3080" in deviations
    assert "* **Trials**: n per cell: sequential 1" in deviations
    assert "* **Parameters chosen by us**: *float32.*" in deviations
    # no scaling CSV given: no section that says there are no measurements
    assert "### Time per run against NP and D" not in text and "No measurements" not in text


def test_case_study_1_section_draws_the_scaling_curves_of_its_study_input(paper_dir, tmp_path):
    from test_report_scaling_curves import DEVICE, write_synthetic  # (synthetic rows, not measurements)

    from gpude.report.document import section_class

    folder = write_synthetic(tmp_path / "reference")
    section_class("janssen_cs1").write_outputs(case_study_trials(), {}, paper_dir, scaling=str(folder))
    with pytest.raises(Exception, match="reads no study input nope"):
        section_class("janssen_cs1").write_outputs(case_study_trials(), {}, paper_dir, nope="x")
    text = build([(str(ROOT / "config/experiments/janssen_cs1.yaml"), str(paper_dir))],
                 paper_dir.parent / "REPORT.md").read_text()
    assert f"Seconds per run against NP on {DEVICE}:" in text and "No measurements" not in text
    assert "(janssen_cs1/figure_scaling_nvidia-h100-80gb-hbm3.png)" in text
    assert text.index("### Time per run against NP and D") < text.index("### Final error")


def test_generic_section_for_an_experiment_without_a_study(paper_dir, tmp_path):
    spec = yaml.safe_load((ROOT / "config/experiments/smoke.yaml").read_text())
    (tmp_path / "smoke.yaml").write_text(yaml.safe_dump(spec))
    out = build([(str(tmp_path / "smoke.yaml"), str(paper_dir)),
                 (str(ROOT / "config/experiments/janssen_cs1.yaml"), str(paper_dir))],
                paper_dir.parent / "REPORT.md")
    body, appendix = out.read_text(), out.with_name("REPORT_appendix.md").read_text()
    # studies first, then this machine's experiment, whose per-cell errors are in the appendix
    assert body.index("## Janssen, Pullan") < body.index("## CI smoke test") < body.index("## References")
    assert "## CI smoke test" in appendix and "Mean best error (n; success rate at the target)" in appendix


def test_generic_section_with_population_sizes_only_per_algorithm(paper_dir, tmp_path):
    # e.g. lastra_cpu: `popsizes` under the algorithm, none at the experiment's level
    spec = yaml.safe_load((ROOT / "config/experiments/smoke.yaml").read_text())
    popsizes = spec.pop("popsizes")
    for algo in spec["algorithms"].values():
        algo["popsizes"] = popsizes
    (tmp_path / "smoke.yaml").write_text(yaml.safe_dump(spec))
    text = _both(build([(str(tmp_path / "smoke.yaml"), str(paper_dir))], paper_dir.parent / "REPORT.md"))
    assert "NP per algorithm" in text and f"popsizes={popsizes}" in text


def test_friedman_is_written_for_three_or_more_competitors(tmp_path):
    trials = case_study_trials(n_gpu=3, n_cpu=3)  # all five competitors comparable
    trials.loc[trials.implementation == "ide", "best_error"] *= 0.5  # ide best everywhere
    trials.loc[trials.implementation == "sequential", "best_error"] *= 2.0  # sequential worst
    files = write_statistics(trials, tmp_path)
    fr = pd.read_csv(files["friedman"]).set_index("competitor")
    assert fr.loc["ide", "mean_rank"] == 1.0 and fr.loc["sequential", "mean_rank"] == 5.0
    assert (fr.functions == 3).all() and fr.p.iloc[0] < 0.05
    two = write_statistics(trials[trials.implementation.isin(["ide", "all_gpu"])], tmp_path / "two")
    assert pd.read_csv(two["friedman"]).empty


@pytest.mark.io
def test_cpu_rows_of_a_gpu_host_belong_to_that_machine(tmp_path):
    from gpude.report.sources import load_sources

    rows = [{"run_id": f"r{i}", "implementation": impl, "function": "F01", "trial": 0, "gpu": gpu,
             "host": host, "cpu": "Xeon", "cpu_cores": 16, "wall_time_s": 1.0}
            for i, (impl, gpu, host) in enumerate([("sequential", "none", "vm"), ("ide", "NVIDIA H200", "vm"),
                                                   ("sequential", "none", "laptop")])]
    path = tmp_path / "trials.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    trials, _ = load_sources([path])
    assert list(trials.machine) == ["NVIDIA H200 / Xeon x16", "NVIDIA H200 / Xeon x16", "Xeon x16"]


def test_table4_ranks_follow_the_scores_and_agree_with_the_paper_when_the_order_is_the_same(tmp_path, monkeypatch):
    from gpude.stats.tables import ranks_from_scores

    monkeypatch.chdir(ROOT)
    table4 = pd.read_csv(ROOT / "paper/published/janssen_cs2_table4.csv", comment="#").set_index("competitor")
    rows = []
    for comp in table4.index:
        algorithm, impl, popsize = comp.split("/")
        for f in ("F01", "F02"):
            for t in range(4):
                # on F01 the final errors order the competitors as the paper's ranks; on F02 reversed
                rank = table4.loc[comp, f] if f == "F01" else 9 - table4.loc[comp, "F01"]
                rows.append({"run_id": f"{comp}/{f}/t{t}", "algorithm": algorithm, "implementation": impl,
                             "popsize": int(popsize), "dtype": "float32", "dim": 100, "function": f, "trial": t,
                             "machine": MACHINE, "wall_time_s": 1.0, "best_error": rank * 10.0 + 0.1 * t,
                             "hit_target": False, "time_to_target_s": np.nan, "fes_to_target": np.nan,
                             "status": "budget"})
    trials = pd.DataFrame(rows)
    out = tmp_path / "paper" / "janssen_cs2"
    files = write_statistics(trials, out / "stats")
    ranks = pd.read_csv(files["ranks_time"], index_col="function")
    assert ranks.loc["F01", "jde/cujde/250"] == 1 and ranks.loc["F01", "de/ide/500"] == 8
    assert ranks.loc["F02", "jde/cujde/250"] == 8
    scores = pd.read_csv(files["rank_sum_time"], index_col="function")
    assert set(scores["machine"]) == {MACHINE}  # one machine: its scores, its ranks
    scores, ranks = scores.drop(columns="machine"), ranks.drop(columns="machine")
    assert (ranks_from_scores(scores).loc["rank"] == ranks.loc["rank"]).all()
    from gpude.stats.tables import with_competitors
    labelled = with_competitors(trials).assign(implementation=lambda d: d["competitor"])
    write_all(labelled, out)
    text = build([(str(ROOT / "config/experiments/janssen_cs2.yaml"), str(out))], out.parent / "REPORT.md").read_text()
    assert "## Janssen, Pullan & Liew, case study 2" in text
    assert "| jde/cujde/250 | paper | 1 | 2 |" in text and "| | ours | 1 | 8 |" in text
    # Kendall's tau: 1 on F01 (same order), negative on F02
    tau_row = next(line for line in text.splitlines() if line.startswith("| tau |"))
    assert tau_row.split("|")[2].strip() == "1.00" and tau_row.split("|")[3].strip().startswith("-")
    assert "id_d * id_p" in text
    assert "No results (yet)" not in text  # de/ide/50 ... are results of ide and cujde
    # the paper's findings checked on both tables: on F02 (paper) every cujDE is ahead of every iDE
    assert "ahead of every iDE configuration on 0 of 2 functions (the paper's Table 4: 1 of 2" in text
    # F02 (ours: F01 reversed) orders many pairs otherwise; with 4 trials each none is significant after Holm
    comps = list(table4.index)
    swapped = sum((table4.loc[a, "F02"] - table4.loc[b, "F02"]) * (table4.loc[b, "F01"] - table4.loc[a, "F01"]) < 0
                  for i, a in enumerate(comps) for b in comps[i + 1:])
    assert swapped > 10
    assert (f"  - F02: {swapped} of 28 pairs in the other order; {swapped} of them with final errors not "
            "significantly different") in text
    assert "  - F01:" not in text
    # the verdict's cause: where ours fail the claim, no iDE is ahead of a cujDE by a significant margin
    assert "ties: no iDE significantly ahead (F01, F02); the paper's table: 1 of 2" in text
    assert "Each trial ran alone on the GPU" in text  # no trials_per_launch recorded


def test_trials_run_alone_beside_the_same_trials_run_in_batches(tmp_path):
    import json

    from gpude.core.errors import InvalidInputError
    from gpude.report.batching import alone_vs_batched, trials_per_launch
    from gpude.report.timing import provenance_table

    keys = {"algorithm": "jde", "implementation": "cujde", "function": "F01", "dim": 100, "dtype": "float32"}
    batched = pd.DataFrame([{**keys, "popsize": np_, "trial": t, "seed": 100 + t, "best_error": 1.0 + t,
                             "wall_time_s": 0.1, "params": json.dumps({"trials_per_launch": 30}),
                             "run_id": f"{np_}/{t}", "machine": MACHINE, "fes_used": 1000}
                            for np_ in (50, 100) for t in range(3)])
    alone = batched[batched.trial < 2].drop(columns=["params"]).assign(wall_time_s=[1.0, 2.0, 0.5, 0.5],
                                                                       fes_used=[1000, 3000, 1000, 1000])
    alone.loc[alone.index[1], "best_error"] = 2.5  # one lone trial ended elsewhere
    table = alone_vs_batched(with_competitors(batched), alone).set_index("competitor")
    assert list(table.paired) == [2, 2] and list(table.same_final_error) == [1, 2]
    assert table.loc["50", "ratio_min"] == pytest.approx(10) and table.loc["50", "ratio_max"] == pytest.approx(20)
    assert table.loc["50", "max_rel_diff"] == pytest.approx(0.5 / 2.5)
    assert table.loc["100", "ratio_median"] == pytest.approx(5)
    # two pairs a cell: too few for the median's interval
    assert table[["ratio_median_lo", "ratio_median_hi"]].isna().all().all()
    # three pairs (lone 1, 2 and 4 s against 0.1 s): the median 20, its interval within the pairs' range
    three = batched[batched.popsize == 50].drop(columns=["params"]).assign(wall_time_s=[1.0, 2.0, 4.0])
    row = alone_vs_batched(with_competitors(batched), three).set_index("competitor").loc["50"]
    assert row["ratio_median"] == pytest.approx(20)
    assert 10 <= row["ratio_median_lo"] <= 20 <= row["ratio_median_hi"] <= 40
    # the FEs each bought (what differs under a time budget): median of 1 and 3
    assert table.loc["50", "fes_ratio_median"] == pytest.approx(2) and table.loc["100", "fes_ratio_median"] == 1
    with pytest.raises(InvalidInputError, match=r"lack the columns \['seed'\]"):
        alone_vs_batched(with_competitors(batched), alone.drop(columns=["seed"]))
    # the section says how far the trials that end elsewhere are: another search, or the error's last bits
    from gpude.report.janssen import _rest_differ

    assert _rest_differ(table) == ", the other 1 up to 2.0e-01 from it (relative)"
    last_bits = table.assign(max_rel_diff=[1.7e-16, 0.0])
    assert "the other 1 within 1.7e-16 of it" in _rest_differ(last_bits) and "same search" in _rest_differ(last_bits)
    assert _rest_differ(table.assign(same_final_error=table.paired)) == ""
    # the grouping is read from params (1 where not recorded) and shown per implementation
    assert trials_per_launch(batched).tolist() == [30] * 6
    assert trials_per_launch(alone).tolist() == [1] * 4
    assert provenance_table(batched).trials_per_launch.tolist() == ["30"]


def test_competitors_sort_numbers_as_numbers_and_no_baseline_means_no_speed_up_rows():
    from gpude.report.timing import _ordered, markdown, timing_table

    assert _ordered(["de/ide/500", "de/ide/50", "jde/cujde/100", "de/ide/100", "ide", "sequential"]) == \
        ["sequential", "ide", "de/ide/50", "de/ide/100", "de/ide/500", "jde/cujde/100"]
    rows = [{"implementation": c, "function": "F01", "machine": MACHINE, "wall_time_s": 1.0, "run_id": c}
            for c in ("de/ide/50", "de/ide/100")]
    text = markdown(timing_table(pd.DataFrame(rows)))
    assert "speed-up" not in text and text.index("de/ide/50") < text.index("de/ide/100")
    with_baseline = markdown(timing_table(pd.DataFrame(rows + [{**rows[0], "implementation": "sequential"}])))
    assert "speed-up against `sequential`" in with_baseline and "| de/ide/50 | 1 (1); 1.0x" in with_baseline


def test_log_ticks_stay_few_and_readable():
    from gpude.report.scatter import log_ticks

    assert log_ticks(0.04, 0.3) == pytest.approx([0.05, 0.1, 0.2])
    assert log_ticks(100, 1000) == pytest.approx([100, 200, 500, 1000])
    wide = log_ticks(1e-9, 1e6)  # 16 decades: every third decade
    assert len(wide) <= 6 and wide[0] == pytest.approx(1e-9) and wide[1] == pytest.approx(1e-6)
    assert log_ticks(0.28, 0.66) == pytest.approx([0.3, 0.4, 0.5, 0.6])  # less than a decade
    assert log_ticks(0, 1) == [] and log_ticks(2, 1) == []


def qin_trials(ide_speedup=4.0):
    """Qin-like trials: time = generations x a per-generation cost per implementation (sDE's grows
    with NP x D, the GPU ones' is flat), so the GPU models gain from a larger NP as the paper says."""
    per_gen = {"ide": 1e-5, "cudade": 4e-5, "fpde": 8e-5}
    rows = []
    for dim in (10, 100):
        for popsize in (50, 1000):
            generations = 1e4 * dim / popsize
            for impl in ("sequential", "ide", "cudade", "fpde"):
                cost = 3e-9 * popsize * dim if impl == "sequential" else per_gen[impl]
                for f in ("Q01", "Q04"):
                    for t in range(3):
                        rows.append({"run_id": f"{impl}/{f}/{dim}/{popsize}/{t}", "algorithm": "de",
                                     "implementation": impl, "function": f, "dim": dim, "popsize": popsize,
                                     "dtype": "float64", "trial": t, "machine": MACHINE,
                                     "wall_time_s": generations * cost * (1 + 0.01 * t),
                                     "best_error": 1e-9 if f == "Q01" else 10.0 + t, "target_error": 0.0,
                                     "hit_target": False,
                                     "time_to_target_s": np.nan, "fes_to_target": np.nan, "status": "budget"})
    return pd.DataFrame(rows)


def test_time_vs_popsize_needs_a_competitor_with_two_population_sizes(tmp_path):
    # Nashed-like: every implementation ran one NP (a different one each), so no line has two points
    from gpude.report.scaling import cell_table, time_vs_popsize

    trials = qin_trials()
    own = {"sequential": 50, "ide": 1000, "cudade": 50, "fpde": 1000}
    one_each = trials[trials["popsize"] == trials["implementation"].map(own)]
    assert time_vs_popsize(cell_table(one_each), tmp_path) == [] and not list(tmp_path.iterdir())
    assert len(time_vs_popsize(cell_table(trials), tmp_path)) == 2  # one PNG per function (PDF on request)


def test_qin_section_tables_and_observations(tmp_path, monkeypatch):
    from gpude.report.scaling import cell_table, time_vs_popsize

    monkeypatch.chdir(ROOT)
    trials = qin_trials()
    out = tmp_path / "paper" / "qin"
    labelled = with_competitors(trials).assign(implementation=lambda d: d["competitor"])
    write_all(labelled, out)
    write_statistics(trials, out / "stats")
    cells = cell_table(trials)
    cells.to_csv(out / "table_cells.csv", index=False)
    figures = time_vs_popsize(cells, out)
    assert sorted(p.name for p in figures) == ["time_vs_popsize_Q01.png", "time_vs_popsize_Q04.png"]
    row = cells[(cells.implementation == "ide") & (cells.function == "Q04") & (cells.dim == 10)
                & (cells.popsize == 50)].iloc[0]
    assert row.n == 3 and row.mean_error == pytest.approx(11) and row.std_error == pytest.approx(1)
    assert row.success_rate == 0 and cells[cells.function == "Q01"].success_rate.eq(1).all()
    report = build([(str(ROOT / "config/experiments/qin.yaml"), str(out))], out.parent / "REPORT.md")
    body, text = report.read_text(), _both(report)
    assert "## Qin, Raimondo, Forbes & Ong" in body
    # Tables 1-3 in brief in the body: the success rates at each NP, paper / ours
    # (the NPs both sides ran: 50 and 1000; success rate paper / ours at each, then time and error ratios)
    assert "| 10 | Q01 | 1.00 / 1.00 | 1.00 / 1.00 |" in body and "| 10 | Q04 | 1.00 / 1.00 | 0.00 / 0.00 |" in body
    # Table 1 (D=10) in full in the appendix: the paper's F1 row at P50 (0.000 (0.000), 1.159 s) beside ours
    assert "**Table 1: D = 10.**" in text and "| Q01 | error, paper | 0 (0) | 0 (0) | 0 (0) | 0 (0) |" in text
    assert "| | error, ours | 1e-09 (0) | - | - | 1e-09 (0) |" in text  # NP 100 and 500 did not run
    assert "| | time, paper | 1.16 (0.002) |" in text
    # the synthetic costs, by hand: sDE costs 1.5e-6 s a generation at D=10, NP=50, under iDE's 1e-5
    # (6.67x); every GPU model is 20x faster at NP=1000 than at NP=50 (20x fewer generations), so
    # the paper's order of the drops (FPDE > cudaDE > iDE) does not show; cudaDE is 4x iDE everywhere
    assert "**(1) Similar comparisons on every problem: holds.**" in text
    assert ("**(2) iDE fastest at every NP and D: holds in part.** iDE has the lowest mean time in 6 of 8 "
            "(function, D, NP) cells; elsewhere sDE at Q01 D=10 NP=50 (6.67x faster)") in text
    # (each ratio with the interval of both sides' trials: 4x and 8x within a few per cent)
    found = re.search(r"cudaDE 4x \(95% CI of the extremes ([\d.]+)-([\d.]+)x\); FPDE 8x \(95% CI of the extremes "
                      r"([\d.]+)-([\d.]+)x\)\.", text)
    assert found, text
    assert 3.5 < float(found[1]) <= 4 <= float(found[2]) < 4.5 and 7 < float(found[3]) <= 8 <= float(found[4]) < 9
    assert ("**(3) Time falls as NP grows, most for FPDE, then cudaDE, then iDE: holds in part.** Mean time "
            "falls monotonically from the smallest to the largest NP in 12 of 12") in text
    # (the median drop with the interval of both ends' trials, which holds it)
    drops = re.search(r"iDE 20\.0x \[([\d.]+)x, ([\d.]+)x\], cudaDE 20\.0x \[[\d.]+x, [\d.]+x\], FPDE 20\.0x "
                      r"\[[\d.]+x, [\d.]+x\]\.", text)
    assert drops and float(drops[1]) <= 20 <= float(drops[2]), text
    assert "holds in part** (3 of 6 parts hold everywhere)" in text
    assert "iDE faster than sDE at D=10, NP<=100: 0 of 2 cells" in text
    assert "**(5) The gap between cudaDE and iDE narrows at D=100 with NP 500 and 1000: does not hold.**" in text
    assert "![Fig. 3: Q01, mean wall time vs population size" in text


def test_qin_section_names_panels_measured_in_two_sessions(tmp_path):
    from gpude.core.errors import GpudeError
    from gpude.report.qin import Qin
    from gpude.report.scaling import cell_table
    from gpude.run.rows import rerun_check

    trials = qin_trials()
    late = (trials.implementation == "fpde") & (trials.dim == 100) & (trials.function == "Q01")
    trials["git_commit"] = np.where(late, "bbb", "aaa")
    out = tmp_path / "qin"
    out.mkdir()
    cells = cell_table(trials)
    assert set(cells.git_commit) == {"aaa", "bbb"} and set(cells.session) == {"commit aaa", "commit bbb"}
    # where boots are recorded they name the sessions (one commit, two instances of the machine)
    booted = cell_table(trials.assign(git_commit="aaa", boot_id=np.where(late, "b2", "b1")))
    assert set(booted.session) == {"b1", "b2"} and set(booted.git_commit) == {"aaa"}
    cells.to_csv(out / "table_cells.csv", index=False)
    spec = yaml.safe_load((ROOT / "config/experiments/qin.yaml").read_text())
    section = Qin(spec, out, tmp_path)
    text = section._sessions_text()
    assert "panels Q01 D=100 (cudaDE, iDE, sDE in commit aaa; FPDE in commit bbb) hold cells" in text
    assert "Q04" not in text and "rerun_check" not in text
    # the same trials run again, 1.5x slower and (one of them) on another final error
    again = trials[trials.implementation == "sequential"].assign(
        wall_time_s=lambda d: d.wall_time_s * 1.5, git_commit="bbb", fes_used=100)
    again.loc[again.index[0], "best_error"] = 99.0
    check = rerun_check(trials.assign(fes_used=100), again)
    assert len(check) == 8 and check["n"].eq(3).all()
    assert check["time_ratio_median"].to_numpy() == pytest.approx(1.5)
    assert sorted(check["same_error"].round(3)) == [0.667] + [1.0] * 7
    check.to_csv(out / "rerun_check.csv", index=False)
    text = Qin(spec, out, tmp_path)._sessions_text()
    assert "24 trials of 8 cells were run in both sessions (aaa then bbb" in text
    assert "96% end on the same final error" in text and "took 1.50x the earlier's time" in text
    with pytest.raises(GpudeError, match="no shared run_id"):
        rerun_check(trials.assign(fes_used=100), again.assign(run_id="other"))
    with pytest.raises(GpudeError, match=r"the reference table lacks the columns \['fes_used'\]"):
        rerun_check(trials, again)


def test_rerun_check_command_fails_when_a_rerun_ends_elsewhere(tmp_path):
    import subprocess
    import sys

    trials = qin_trials().assign(fes_used=100, git_commit="aaa")
    again = trials.assign(wall_time_s=lambda d: d.wall_time_s * 2, git_commit="bbb")
    trials.to_csv(tmp_path / "a.csv", index=False)
    again.to_csv(tmp_path / "b.csv", index=False)
    cmd = [sys.executable, "-m", "gpude", "rerun-check", "--reference", str(tmp_path / "a.csv"), "--out"]
    res = subprocess.run(cmd + [str(tmp_path / "same.csv"), "--rerun", str(tmp_path / "b.csv")],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert "96 trials in 32 cells run twice: 100% end on the same final error" in res.stdout
    assert pd.read_csv(tmp_path / "same.csv")["time_ratio_median"].to_numpy() == pytest.approx(2)
    again.loc[0, "best_error"] = 5.0
    again.to_csv(tmp_path / "b.csv", index=False)
    res = subprocess.run(cmd + [str(tmp_path / "diff.csv"), "--rerun", str(tmp_path / "b.csv")],
                         capture_output=True, text=True)
    assert res.returncode == 1 and "99% end on the same final error" in res.stdout


def test_qin_section_keeps_one_floating_type_and_compares_the_other(tmp_path):
    from gpude.report.qin import Qin
    from gpude.report.scaling import cell_table, time_vs_popsize

    trials = qin_trials()
    trials.loc[trials.function == "Q01", ["best_error", "hit_target"]] = [0.0, True]  # stopped at 0
    f32 = trials[trials.implementation == "ide"].assign(
        dtype="float32", wall_time_s=lambda d: d.wall_time_s * 0.5,
        run_id=lambda d: d.run_id + "/f32")
    f32.loc[(f32.function == "Q01") & (f32.dim == 100), ["best_error", "hit_target"]] = [1e-3, False]
    out = tmp_path / "qin"
    out.mkdir()
    cells = cell_table(pd.concat([trials, f32], ignore_index=True))
    cells.to_csv(out / "table_cells.csv", index=False)
    assert {p.name for p in time_vs_popsize(cells, out)} >= {"time_vs_popsize_Q01.png"}
    spec = yaml.safe_load((ROOT / "config/experiments/qin.yaml").read_text())
    section = Qin(spec, out, tmp_path)
    assert section.dtype == "float64" and set(section.cells.dtype) == {"float64"}
    assert "| | SR, ours (n) | 1.00 (3) |" in section.tables()  # one float64 cell, not two types mixed
    text = section._precision_text()
    assert "use float64" in text and "iDE also ran in float32 (8 cells)" in text
    assert "mean time over float64's is 0.50x (median; 0.50-0.50x" in text
    assert "success rate is lower in 2 of 8 cells: Q01 D=100 NP=50 (0.00 vs 1.00), Q01 D=100 NP=1000" in text
    stops = section._stops_text()
    assert "Some runs of every implementation did in 2 cells: Q01 D=10 NP=50, Q01 D=10 NP=1000" in stops
    assert "some runs of only cudaDE, FPDE, iDE, sDE in Q01 D=100 NP=50" in stops
    rising = section._rising_text([("ide", "Q01", 10), ("fpde", "Q04", 100)])
    assert "Not falling all the way: iDE Q01 D=10, FPDE Q04 D=100; 1 of these 2 series hold runs" in rising


def test_qin_section_names_cells_that_ran_only_on_another_machine(tmp_path):
    from gpude.report.qin import Qin
    from gpude.report.scaling import cell_table

    trials = qin_trials()
    here = trials[trials.implementation == "ide"].assign(dtype="float32", run_id=lambda d: d.run_id + "/f32")
    other = here[(here.function == "Q04") & (here.dim == 100)]
    here = here.drop(other.index)
    other = other.assign(machine="Other GPU / CPU x8", run_id=lambda d: d.run_id + "/other")
    # a cell both machines ran stays this machine's alone
    both = here[(here.function == "Q01") & (here.dim == 10)].assign(machine="Other GPU / CPU x8",
                                                                     run_id=lambda d: d.run_id + "/both")
    out = tmp_path / "qin"
    out.mkdir()
    cell_table(pd.concat([trials, here, other, both], ignore_index=True)).to_csv(out / "table_cells.csv", index=False)
    section = Qin(yaml.safe_load((ROOT / "config/experiments/qin.yaml").read_text()), out, tmp_path)
    assert section.machine == MACHINE and set(section.cells["machine"]) == {MACHINE}
    text = section._precision_text()
    assert "iDE also ran in float32 (6 cells)" in text
    tail = text[text.index("On Other GPU / CPU x8 (the cells this machine lacks): "):]
    assert tail.count("iDE float32 Q04 D=100") == 2 and "Q01" not in tail and "(n = 3)" in tail


def test_qin_section_sets_our_errors_beside_scipy_s(tmp_path):
    from gpude.report.qin import Qin

    rows = [{"function": "Q04", "dim": 50, "popsize": 50, "seed": s, "gpude_error": 140.0 + s,
             "scipy_error": 139.5 + s, "scipy": "1.17.1", "F": 0.5, "CR": 0.3} for s in range(5)]
    rows += [{"function": "Q02", "dim": 10, "popsize": 50, "seed": s, "gpude_error": 1.0 + s,
              "scipy_error": 10.0 + s, "scipy": "1.17.1"} for s in range(5)]
    pd.DataFrame(rows).to_csv(tmp_path / "check.csv", index=False)
    spec = yaml.safe_load((ROOT / "config/experiments/qin.yaml").read_text())
    spec["report"]["crosscheck"] = str(tmp_path / "check.csv")
    (tmp_path / "qin").mkdir()
    section = Qin(spec, tmp_path / "qin", tmp_path)
    section.published = pd.read_csv(ROOT / "paper/published/qin_tables_1_3.csv", comment="#")
    text = section._crosscheck_text()
    assert "scipy 1.17.1's `differential_evolution`" in text and "5 seeds a cell" in text
    assert "(rand1bin, F=0.5, CR=0.3, NP," in text
    # 140-144 against 139.5-143.5 overlap; 1-5 against 10-14 are apart (exact p = 2/252)
    assert "Q04 D=50 NP=50: ours 142, scipy's 142 (Mann-Whitney p = 0.69, the paper's 18.3)" in text
    assert "Q02 D=10 NP=50: ours 3, scipy's 12 (Mann-Whitney p = 0.0079, the paper's 0.388)" in text
    assert "differ at p < 0.05 in 1 of 2 cells" in text
    del spec["report"]["crosscheck"]
    assert Qin(spec, tmp_path / "qin", tmp_path)._crosscheck_text() == ""


@pytest.mark.io
def test_boot_id_reads_back_from_a_csv_as_the_same_text(tmp_path):
    from gpude.core import provenance

    boot = provenance.cpu()["boot_id"]
    assert boot == "" or (boot.startswith("boot-") and len(boot) == 13)
    # 8 hex digits alone may parse as numbers (1234e567 as a float, 00001234 as 1234)
    pd.DataFrame({"boot_id": ["boot-1234e567", "boot-00001234"]}).to_csv(tmp_path / "b.csv", index=False)
    assert pd.read_csv(tmp_path / "b.csv")["boot_id"].tolist() == ["boot-1234e567", "boot-00001234"]


NOTES = ["(issue 38)", "the issue brief says", "see ../shared/guides", "the device queue", "TODO: redo",
         "Not yet measured here", "configurations: not run yet"]


def test_a_report_with_a_working_note_is_refused_and_not_written(paper_dir, tmp_path):
    from gpude.core.errors import GpudeError
    from gpude.report.document import leftovers

    assert [len(leftovers(f"a result\nthen {note} and more")) for note in NOTES] == [1] * len(NOTES)
    spec = yaml.safe_load((ROOT / "config/experiments/smoke.yaml").read_text())
    spec["description"] = "a smoke run (issue 38)"
    (tmp_path / "smoke.yaml").write_text(yaml.safe_dump(spec))
    out = paper_dir.parent / "REPORT.md"
    with pytest.raises(GpudeError, match=r"working note.*line \d+: .*\(issue 38\).*the experiment file"):
        build([(str(tmp_path / "smoke.yaml"), str(paper_dir))], out)
    assert not out.exists()


def test_results_words_are_not_working_notes():
    from gpude.report.document import leftovers

    text = ("Each issue of the tissue: 12 runs; these sessions ran on two boots; issues with float32 are "
            "named; not measured; measured yet again; the runs of one session")
    assert leftovers(text) == []


def test_sections_follow_the_studies_order_and_each_papers_table_order(paper_dir, tmp_path):
    spec = yaml.safe_load((ROOT / "config/experiments/smoke.yaml").read_text())
    made = []
    # given in the wrong order: this machine's run, a study's CPU sample, a study's tables backwards
    for name, description in [("default", "This machine's run"), ("lastra_cpu", "Lastra CPU sample"),
                              ("lastra", "Lastra GPU (Tables 1-12)"), ("kromer_etc", "Kromer ETC (Table 4)"),
                              ("kromer_lop", "Kromer LOP (Tables 2-3)"),
                              ("kromer_rastrigin", "Kromer Rastrigin (Table 1)"), ("qin", "Qin (Tables 1-3)")]:
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump({**spec, "name": name, "description": description}))
        made.append((str(tmp_path / f"{name}.yaml"), str(paper_dir)))
    text = build(made, paper_dir.parent / "REPORT.md").read_text()
    papers = [line[3:] for line in text.splitlines() if line.startswith("## ")]
    order = [line[4:] for line in text.splitlines() if line.startswith("### ") and "(Table" in line
             or line.startswith("### L")]
    # no study's verdicts here (the experiments name no section writer): no verdict table, no conclusion
    assert papers[:2] == ["Abstract", "Methods"] and papers[-1] == "References"
    assert [p.split(":")[0] for p in papers[2:-1]] == ["Qin, Raimondo, Forbes & Ong",
                                                       "Krömer, Platoš, Snášel & Abraham", "Lastra, Molina & Benítez",
                                                       "This machine's run", "Anomalies"]
    assert "* **`concurrency`**: how a row's batch shared its host" in text
    assert "\n\n\n" not in text  # no blank gaps where a part had nothing to say
    assert order == ["Qin (Tables 1-3)", "Kromer Rastrigin (Table 1)", "Kromer LOP (Tables 2-3)",
                     "Kromer ETC (Table 4)", "Lastra GPU (Tables 1-12)", "Lastra CPU sample"], order
    # this machine's run, of no paper: after the papers, before the references
    assert text.index("## Lastra, Molina") < text.index("## This machine's run") < text.index("## References")


def test_a_kromer_benchmark_table_is_a_study_input_of_one_experiment_only():
    # the Kromer section draws each benchmark input it is given (the evaluation speed: a table and a
    # figure): given to two of its experiments, the report had both twice
    seen = {}
    for path in sorted((ROOT / "config/experiments").glob("*.yaml")):
        report = yaml.safe_load(path.read_text()).get("report") or {}
        if report.get("section") != "kromer":
            continue
        for value in report.get("study_inputs", {}).values():
            if str(value).startswith("results/benchmarks/"):
                assert value not in seen, f"{value}: a study input of {seen[value]} and {path.name}"
                seen[value] = path.name
    assert "results/benchmarks/kromer_eval_speed_nvidia-h200.csv" in seen
