"""The anomaly rules (gpude.report.anomalies) on tiny hand-made tables, and the list on the real paper folders."""

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from gpude.report import anomalies as A
from gpude.report.verdict import Judgement, Verdict, numbers_of

ROOT = Path(__file__).resolve().parents[1]
M = "GPU X / CPU Y x4"


def _verdict(ratios, labels):
    return Verdict("Table 1", "3", "3", "-", Judgement("complete"), numbers_of(ratios, "another GPU", labels=labels))


def test_paper_2x_flags_3x_not_1_5x_with_the_verdicts_cause_or_the_sections_check():
    v = _verdict([3.0, 1.5, 0.5, 0.3], ["F1", "F2", "F3", "F4"])
    assert v.numbers.detail == "2 of 4 cells"
    found = A.against_paper("s", [v], {"F4": "a shift of ours (checked)"})
    assert [a.cell for a in found] == ["Table 1: F1", "Table 1: F4"]  # 0.5 is the edge, inside
    assert found[0].explanation.startswith("another GPU") and found[1].explanation == "a shift of ours (checked)"
    assert A.against_paper("s", [_verdict([1.5, 0.9], ["F1", "F2"])]) == []


def _times(wide, timed=None):
    rows = [{"machine": M, "implementation": i, "function": f, "n": 5, "mean_s": wide[i][k],
             "timed": (timed or {}).get((i, f), "alone")}
            for i in wide for k, f in enumerate(["F1", "F2", "F3", "F4", "F5"])]
    return pd.DataFrame(rows)


def test_cost_order_flags_a_cell_out_of_its_functions_order():
    cost = np.array([1.0, 2.0, 4.0, 8.0, 16.0])  # F1 cheapest ... F5 dearest, in every implementation
    wide = {"a": cost, "b": 3 * cost, "c": 10 * cost, "d": 0.5 * cost}
    assert A.cost_order("s", _times(wide)) == []
    wide["c"] = wide["c"].copy()
    wide["c"][0] = 10 * 20.0  # F1 in c dearer than F5
    found = A.cost_order("s", _times(wide))
    assert [(a.rule, a.cell) for a in found] == [("cost order", f"table_time: c F1 ({M})")]
    assert found[0].explanation == A.UNEXPLAINED
    found = A.cost_order("s", _times(wide, {("c", "F1"): "shared:8"}))
    assert "shared:8" in found[0].explanation


def test_cost_order_explains_a_cell_by_its_runs_fes_only_where_its_time_per_fe_is_in_order():
    # c's F1 took 20x its cost: its runs made 20x the FEs of c's other functions (the others stopped at
    # the target) -> per FE in order, explained; the same time with the same FEs stays unexplained
    cost = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    wide = {"a": cost, "b": 3 * cost, "c": 10 * cost, "d": 0.5 * cost}
    wide["c"] = wide["c"].copy()
    wide["c"][0] = 10 * 20.0
    fes = {(i, f): 1000.0 for i in wide for f in ["F1", "F2", "F3", "F4", "F5"]}

    def trial_times(fes):
        return pd.DataFrame([{"machine": M, "implementation": i, "function": f, "trial": t, "wall_time_s": 1.0,
                              "fes_used": fes[(i, f)] + t, "timed": "alone"} for (i, f) in fes for t in (-1, 1)])

    assert A.cost_order("s", _times(wide), trial_times(fes))[0].explanation == A.UNEXPLAINED
    fes[("c", "F1")] = 20_000.0
    found = A.cost_order("s", _times(wide), trial_times(fes))
    assert [a.cell for a in found] == [f"table_time: c F1 ({M})"]
    assert found[0].explanation.startswith("its runs' FEs: 2e+04 a run, 20x what the FEs of its implementation")


def test_cost_order_explains_a_cell_in_the_order_its_device_gives():
    # F1 is the dearest function on both CPU implementations and the cheapest on the three GPU ones: each
    # CPU cell is out of the order of the others' median, but in its own device's order
    cost = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    cpu = np.array([40.0, 2.0, 4.0, 8.0, 16.0])
    wide = {"sequential/50/float64": cpu * 10, "sequential/100/float64": cpu * 20, "ide/50/float32": cost,
            "all_gpu": cost * 2, "naive_gpu": cost * 3}
    found = {a.cell: a.explanation for a in A.cost_order("s", _times(wide))}
    assert set(found) == {f"table_time: sequential/50/float64 F1 ({M})", f"table_time: sequential/100/float64 F1 ({M})"}
    assert all(e.startswith("in the order of its function's cost on the CPU: rank 5, median 5") for e in found.values())
    assert A.device_of("sequential/1000/float64") == "cpu" and A.device_of("pso/gpu") == "gpu"
    assert A.device_of("nonsense") is None


def test_cost_order_explains_a_cell_of_a_launch_bound_implementation():
    # e's times are flat (1.3x over all functions, launch-bound): its F5 is 10x below what the others'
    # F5 cost predicts, but no cost shows in e at all -> explained; a spread implementation's cell is not
    cost = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    wide = {"a": cost, "b": 3 * cost, "c": 10 * cost, "e": np.array([1.0, 1.3, 1.1, 1.2, 1.05])}
    found = [a for a in A.cost_order("s", _times(wide)) if a.cell == f"table_time: e F5 ({M})"]
    assert len(found) == 1 and found[0].explanation.startswith("e's times span only 1.3x over its 5 functions")
    wide["e"] = np.array([1.0, 6.0, 1.1, 1.2, 1.05])  # spread 6x: the same F5 cell stays unexplained
    found = [a for a in A.cost_order("s", _times(wide)) if a.cell == f"table_time: e F5 ({M})"]
    assert len(found) == 1 and found[0].explanation == A.UNEXPLAINED


def _cells(**over):
    row = {"machine": M, "algorithm": "de", "implementation": "gpu", "function": "F1", "dim": 10, "popsize": 50,
           "dtype": "float64", "n": 5, "mean_error": 1.0, "std_error": 0.1, "mean_time_s": 2.0, "std_time_s": 0.1,
           "success_rate": 0, "hit_rate": 0, "git_commit": "aaaaaaa", "session": "boot-1"}
    row.update(over)
    return row


def test_figure_point_off_its_table_is_flagged():
    cells = pd.DataFrame([_cells(), _cells(function="F2", mean_time_s=1.0)])
    times = pd.DataFrame([{"machine": M, "implementation": "gpu", "function": "F1", "n": 5, "mean_s": 2.05,
                           "timed": "alone"},
                          {"machine": M, "implementation": "gpu", "function": "F2", "n": 3, "mean_s": 5.0,
                           "timed": "alone"}])
    found = A.figure_vs_table("s", cells, times)
    assert len(found) == 1 and "F2" in found[0].cell and "figure 1 s" in found[0].numbers
    assert found[0].explanation.startswith("different rows")


def test_two_commits_or_machines_in_one_cell_are_flagged():
    one = pd.DataFrame([_cells()])
    assert A.mixed_rows("s", one) == []
    two = pd.DataFrame([_cells(), _cells(git_commit="bbbbbbb", session="boot-2", mean_time_s=3.0)])
    found = A.mixed_rows("s", two)
    assert len(found) == 1 and found[0].explanation == A.UNEXPLAINED and "bbbbbbb" in found[0].numbers
    agree = pd.DataFrame([_cells(), _cells(git_commit="bbbbbbb", mean_time_s=2.05)])
    assert A.mixed_rows("s", agree)[0].explanation.startswith("the parts' mean times agree")
    joined = pd.DataFrame([_cells(git_commit="aaaaaaa;bbbbbbb", session="boot-1;boot-2")])
    assert len(A.mixed_rows("s", joined)) == 1


def test_a_cell_of_several_sessions_gives_each_sessions_time_from_table_cells():
    from gpude.report.scaling import cell_table

    def trial(k, wall, boot, commit="aaaaaaa"):
        return {"machine": M, "algorithm": "de", "implementation": "gpu", "function": "F1", "dim": 10,
                "popsize": 20, "dtype": "float32", "best_error": 1.0, "wall_time_s": wall, "git_commit": commit,
                "boot_id": boot, "trial": k}

    rows = [trial(k, 9.0, "boot-2") for k in range(3)] + [trial(3, 7.5, None, "bbbbbbb")]
    cells = cell_table(pd.DataFrame(rows))
    assert cells.loc[0, "session"] == "boot-2;commit bbbbbbb"
    assert (cells.loc[0, "session_n"], cells.loc[0, "session_mean_time_s"]) == ("3;1", "9;7.5")
    found = A.mixed_rows("s", cells)
    assert len(found) == 1 and found[0].explanation == A.UNEXPLAINED
    assert "boot-2: n = 3, 9 s; commit bbbbbbb: n = 1, 7.5 s; slowest / fastest session 1.2x" in found[0].numbers
    close = cell_table(pd.DataFrame(rows[:3] + [trial(3, 8.8, "boot-3")]))
    assert A.mixed_rows("s", close)[0].explanation.startswith("the sessions' mean times agree within 1.1x")


def test_sessions_are_compared_on_the_runs_timed_alone_one_a_launch():
    # Lastra's protocol: 3 runs a cell alone, one a launch (boot-1, 12 s), the rest ten a launch on another
    # boot (each a share of its launch, 5 s): the runs the time tables use are of one session -> explained;
    # two sessions of runs alone 1.5x apart stay unexplained
    from gpude.report.scaling import cell_table

    def trial(k, wall, boot, per_launch=1, concurrency="exclusive"):
        params = json.dumps({"trials_per_launch": per_launch} if per_launch > 1 else {})
        return {"machine": M, "algorithm": "masw", "implementation": "gpu", "function": "C01", "dim": 10,
                "popsize": 60, "dtype": "float64", "best_error": 1.0, "wall_time_s": wall, "git_commit": "a" * 40,
                "boot_id": boot, "trial": k, "params": params, "concurrency": concurrency}

    rows = [trial(k, 12.0, "boot-1") for k in range(3)] + [trial(k, 5.0, "boot-2", 10) for k in range(3, 20)]
    cells = cell_table(pd.DataFrame(rows))
    assert (cells.loc[0, "session_n"], cells.loc[0, "session_rows"]) == ("3", "alone")
    found = A.mixed_rows("s", cells)
    assert len(found) == 1 and found[0].explanation.startswith(
        "the runs timed alone, one a launch (the ones the time tables use), are all of boot-1; the other 17")
    apart = cell_table(pd.DataFrame(rows[:2] + [trial(2, 18.0, "boot-3")] + rows[3:]))
    assert apart.loc[0, "session_n"] == "2;1" and A.mixed_rows("s", apart)[0].explanation == A.UNEXPLAINED
    shared = cell_table(pd.DataFrame([trial(k, 9.0, f"boot-{k % 2}", concurrency="shared:4") for k in range(4)]))
    assert shared.loc[0, "session_rows"] == "all"  # no run alone: every row compared


def test_a_slower_session_that_shared_more_of_its_host_is_explained_by_its_sharing():
    # Lastra's runs alone: two on a boot of a two-GPU host beside the other GPU's batches (exclusive-gpu:2,
    # 9 s), one on a boot alone on the host (exclusive, 6 s): explained; the other way round it is not
    from gpude.report.scaling import cell_table

    def trial(k, wall, boot, concurrency):
        return {"machine": M, "algorithm": "masw", "implementation": "gpu", "function": "L01", "dim": 10,
                "popsize": 60, "dtype": "float64", "best_error": 1.0, "wall_time_s": wall, "git_commit": "a" * 40,
                "boot_id": boot, "trial": k, "params": "{}", "concurrency": concurrency}

    rows = [trial(0, 9.0, "boot-1", "exclusive-gpu:2"), trial(1, 9.2, "boot-1", "exclusive-gpu:2"),
            trial(2, 6.0, "boot-2", "exclusive")]
    cells = cell_table(pd.DataFrame(rows))
    assert cells.loc[0, "session_concurrency"] == "exclusive-gpu:2;exclusive"
    found = A.mixed_rows("s", cells)
    assert len(found) == 1 and found[0].explanation.startswith("the slower session(s) shared more of the host")
    assert "boot-1 (exclusive-gpu:2): n = 2, 9.1 s" in found[0].numbers
    reverse = [trial(0, 6.0, "boot-1", "exclusive-gpu:2"), trial(1, 9.0, "boot-2", "exclusive")]
    assert A.mixed_rows("s", cell_table(pd.DataFrame(reverse)))[0].explanation == A.UNEXPLAINED
    same = [trial(0, 9.0, "boot-1", "exclusive-gpu:2"), trial(1, 6.0, "boot-2", "exclusive-gpu:2")]
    assert A.mixed_rows("s", cell_table(pd.DataFrame(same)))[0].explanation == A.UNEXPLAINED


def test_an_outside_program_of_one_source_in_one_session_is_explained_across_commits():
    from gpude.report.scaling import cell_table

    def trial(k, commit, source="b1ed90b4d7bc6608", boot="boot-1"):
        return {"machine": M, "algorithm": "jso", "implementation": "brest", "function": "F3", "dim": 10,
                "popsize": 182, "dtype": "float64", "best_error": 1.0, "wall_time_s": 0.5, "git_commit": commit,
                "boot_id": boot, "trial": k, "concurrency": "shared:2",
                "params": json.dumps({"program": "brest", "source_sha256": source})}

    cells = cell_table(pd.DataFrame([trial(0, "a" * 40), trial(1, "b" * 40)]))
    assert cells.loc[0, "program_source"] == "b1ed90b4d7bc"
    found = A.mixed_rows("s", cells)
    assert len(found) == 1 and found[0].explanation.startswith("one session (boot-1: one instance) and one program")
    two_sources = cell_table(pd.DataFrame([trial(0, "a" * 40), trial(1, "b" * 40, source="ffff")]))
    assert A.mixed_rows("s", two_sources)[0].explanation == A.UNEXPLAINED
    slower = {**trial(1, "b" * 40, boot="boot-2"), "wall_time_s": 0.8}
    two_boots = cell_table(pd.DataFrame([trial(0, "a" * 40), slower]))
    assert A.mixed_rows("s", two_boots)[0].explanation == A.UNEXPLAINED
    ours = cell_table(pd.DataFrame([{**trial(0, "a" * 40), "params": "{}"}]))
    assert "program_source" not in ours  # no outside program: no column


def test_two_sections_disagreeing_on_a_cell_are_flagged_and_explained_by_their_specs():
    a = pd.DataFrame([_cells()])
    same = {"max_fes": 100, "seed": 1, "trials": 5}
    assert A.sections_disagree({"x": (a, same), "y": (a, same)}) == []
    b = pd.DataFrame([_cells(n=3, mean_time_s=4.0)])
    found = A.sections_disagree({"x": (a, same), "y": (b, same)})
    assert len(found) == 1 and found[0].study == "x / y" and "n 5 vs 3" in found[0].numbers
    assert found[0].explanation == A.UNEXPLAINED
    found = A.sections_disagree({"x": (a, same), "y": (b, {"max_fes": 100, "seed": 2, "trials": 3})})
    assert "seed 1 vs 2" in found[0].explanation
    assert A.sections_disagree({"x": (a, same), "y": (b, {**same, "max_fes": 200})}) == []  # another budget


def test_an_anomaly_needs_a_known_rule_and_a_cell():
    with pytest.raises(ValueError, match="rule is one of"):
        A.Anomaly("s", "by hand", "F1", "-")
    with pytest.raises(ValueError, match="cell"):
        A.Anomaly("s", "paper 2x", "", "-")


EXPERIMENTS = ("default", "cec2017_jso", "janssen_cs1", "janssen_cs2", "kromer_etc", "kromer_lop", "kromer_rastrigin",
               "lastra", "lastra_cpu", "nashed", "qin", "side_by_side")


def test_the_real_paper_folders_anomalies_each_have_a_rule_a_cell_and_an_explanation():
    present = [e for e in EXPERIMENTS if (ROOT / "paper" / e / "table_error.csv").is_file()]
    if len(present) < len(EXPERIMENTS) - 1:
        pytest.skip("the paper folders are not written (snakemake paper/REPORT.md writes them)")
    from gpude.report.document import section_class

    here = os.getcwd()
    os.chdir(ROOT)  # the section writers read paper/published/ from the workflow's root
    try:
        sections = []
        for e in present:
            spec = yaml.safe_load((ROOT / f"config/experiments/{e}.yaml").read_text())
            sections.append(section_class(spec.get("report", {}).get("section"))(spec, ROOT / "paper" / e,
                                                                                 ROOT / "paper"))
        found = A.find(sections)
    finally:
        os.chdir(here)
    assert found
    for a in found:
        assert a.rule in A.RULES and a.cell and a.numbers and a.explanation
    # the verdict's "outside 2x in k of m cells" and the list agree, study by study
    for s in sections:
        k = sum(int(v.numbers.detail.split(" of ")[0]) for v in s.verdicts() if v.numbers.value == "outside")
        assert k == sum(a.rule == "paper 2x" and a.study == s.spec["name"] for a in found)
    text = A.appendix_markdown(found)
    assert text.count("\n| ") == len(found) + 1


def test_the_weighted_means_of_all_cells_at_once_are_each_cells_own():
    # sections_disagree weighs every cell's rows by their n in one pass: the same numbers as cell by cell,
    # rows without a value or an n left out, and no number for a cell without one
    import numpy as np
    import pandas as pd

    from gpude.report.anomalies import CELL_KEYS, _weighted, _weighted_by

    base = {k: "x" for k in CELL_KEYS}
    rows = [dict(base, function="F01", mean_time_s=1.0, n=3), dict(base, function="F01", mean_time_s=2.0, n=1),
            dict(base, function="F01", mean_time_s=np.nan, n=5), dict(base, function="F02", mean_time_s=np.nan, n=2),
            dict(base, function="F03", mean_time_s=4.0, n=0)]
    cells = pd.DataFrame(rows)
    found = _weighted_by(cells, "mean_time_s")
    assert len(found) == 3
    for (key, value), (_, cell) in zip(found.items(), cells.groupby(CELL_KEYS, sort=True, dropna=False)):
        own = _weighted(cell, "mean_time_s")
        assert (np.isnan(value) and np.isnan(own)) or value == own, key
    assert found.iloc[0] == 1.25 and np.isnan(found.iloc[1]) and np.isnan(found.iloc[2])
