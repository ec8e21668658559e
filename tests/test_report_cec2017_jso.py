"""The REPORT's section of cec2017_jso (jSO on CEC 2017, ours against Brest's C++): Holm over the
functions of a D, the competition's 1e-8 rule, missing cells, the verdict per D and the captions. Fast:
synthetic trial rows of two machines, built here."""

import re

import numpy as np
import pandas as pd
import pytest

from gpude.report.cec2017_jso import (
    FLOOR,
    Cec2017Jso,
    clamp,
    comparison_table,
    label,
    speed_ratio,
    speed_table,
    write_outputs,
)
from gpude.report.document import section_class, uncaptioned_tables
from gpude.stats.comparisons import holm

GPU_MACHINE = "NVIDIA H100 80GB HBM3 / Intel(R) Xeon(R) Processor x16"
CPU_MACHINE = "AMD EPYC x2"
FUNCTIONS = [f"CEC17_F{k:02d}" for k in (1, 3, 4, 5, 6)]


def _rows(impl, machine, function, dim, errors):
    return pd.DataFrame({"algorithm": "jso", "implementation": impl, "function": function, "dim": dim,
                         "trial": range(len(errors)), "best_error": errors, "status": "budget",
                         "machine": machine})


def _trials(cells):
    """``cells``: (function, dim) -> (Brest's errors or None, ours or None); each side on its machine."""
    frames = []
    for (function, dim), (brest, ours) in cells.items():
        if brest is not None:
            frames.append(_rows("brest", CPU_MACHINE, function, dim, brest))
        if ours is not None:
            frames.append(_rows("block", GPU_MACHINE, function, dim, ours))
    return pd.concat(frames, ignore_index=True)


def _spec(functions=FUNCTIONS, dims=(10,)):
    return {"name": "cec2017_jso", "description": "jSO", "trials": 51, "dims": list(dims), "popsizes": [182],
            "functions": list(functions), "max_fes": {10: 100000},
            "algorithms": {"jso": {"implementations": ["block", "brest"]}}}


def _section(tmp_path, trials, spec):
    out = tmp_path / "paper" / "cec2017_jso"
    write_outputs(trials, {}, out)
    return Cec2017Jso(spec, out, tmp_path / "paper")


def test_holm_by_hand_and_over_the_functions_of_one_d():
    # hand-made: sorted 0.01, 0.02, 0.03, 0.5 -> 4*0.01, max(3*0.02, .04), max(2*0.03, .06), max(.5, .06)
    assert np.allclose(holm([0.03, 0.01, 0.5, 0.02]), [0.06, 0.04, 0.5, 0.06])
    assert np.allclose(holm([0.4, 0.9]), [0.8, 0.9])  # capped by the running maximum, never above 1
    rng = np.random.default_rng(3)
    low, high = rng.uniform(1, 2, 51), rng.uniform(3, 4, 51)
    cells = {("CEC17_F01", 10): (low, high), ("CEC17_F03", 10): (high, low),
             ("CEC17_F04", 10): (low, rng.permutation(low)), ("CEC17_F01", 30): (low, high)}
    t = comparison_table(_trials(cells))
    d10 = t[t["dim"] == 10].set_index("function")
    assert np.allclose(d10["p_holm"], holm(d10["p"]))  # three functions at D 10
    d30 = t[t["dim"] == 30].set_index("function")
    assert d30.loc["CEC17_F01", "p_holm"] == d30.loc["CEC17_F01", "p"]  # alone at its D
    assert d10.loc["CEC17_F01", "verdict"] == "Brest lower"  # Brest's errors are the lower ones
    assert d10.loc["CEC17_F03", "verdict"] == "ours lower"
    assert d10.loc["CEC17_F04", "verdict"] == "not different" and d10.loc["CEC17_F04", "p"] == 1.0


def test_errors_below_1e_8_count_as_0_and_all_solved_is_not_different():
    assert list(clamp([5e-9, FLOOR, 2e-8, 0.0])) == [0.0, FLOOR, 2e-8, 0.0]
    rng = np.random.default_rng(5)
    # both sides below 1e-8 everywhere, ours far lower: no difference once clamped (p = 1)
    cells = {("CEC17_F01", 10): (rng.uniform(5e-9, 9.9e-9, 51), rng.uniform(1e-12, 1e-11, 51))}
    row = comparison_table(_trials(cells)).iloc[0]
    assert row["p"] == 1.0 and row["p_holm"] == 1.0 and row["verdict"] == "not different"
    assert row["brest_mean"] == row["ours_mean"] == 0.0 and row["brest_std"] == 0.0


def test_errors_are_compared_at_1e_8_resolution():
    # one local optimum reached by every run of both sides, its value differing in the last bits (F4 at
    # D 30: 58.5615573023851x): a tie, not a difference of quality
    optimum = 58.56155730238515
    brest = optimum + np.where(np.arange(51) < 3, 6e-15, 0.0)
    ours = optimum + np.where(np.arange(51) < 14, -7e-15, 0.0)
    row = comparison_table(_trials({("CEC17_F04", 30): (brest, ours)})).iloc[0]
    assert row["p"] == 1.0 and row["verdict"] == "not different"
    # a difference at the resolution still counts
    row = comparison_table(_trials({("CEC17_F04", 30): (np.full(51, 2.0), np.full(51, 1.0))})).iloc[0]
    assert row["p"] < 1e-10 and row["verdict"] == "ours lower"


def test_a_missing_cell_is_marked_never_dropped(tmp_path):
    full = np.linspace(1, 2, 51)
    cells = {("CEC17_F01", 10): (full, full), ("CEC17_F03", 10): (full[::8], full),  # Brest's short
             ("CEC17_F04", 10): (None, full)}  # Brest's none; F05, F06: neither side
    s = _section(tmp_path, _trials(cells), _spec())
    assert list(s.table["function"]) == FUNCTIONS
    text = s.render() + s.appendix()
    line = {label(f): next(x for x in text.splitlines() if x.startswith(f"| {label(f)} |")) for f in FUNCTIONS}
    assert "| n = 7 |" in line["F3"] and "not different" in line["F3"]
    assert "| missing |" in line["F4"] and line["F4"].endswith("| missing |")
    assert line["F5"].count("missing") == 3
    assert "D = 10: not different on 2 of 2 functions compared" in text
    assert "3 of 5 without both sides' runs" in text


def _verdict(tmp_path, cells, functions=FUNCTIONS):
    (v,) = _section(tmp_path, _trials(cells), _spec(functions)).verdicts()
    return v


def test_the_verdict_per_d_comes_from_the_count(tmp_path):
    rng = np.random.default_rng(7)
    same = lambda: rng.uniform(1, 2, 51)  # noqa: E731
    everywhere = {(f, 10): (same(), same()) for f in FUNCTIONS}
    v = _verdict(tmp_path / "a", everywhere)
    # Brest's program rerun beside ours: a comparison, which agrees but never reproduces a paper
    assert v.status == "agrees" and v.kind == "comparison"
    assert v.ours_n == "ours 51, Brest's 51" and v.paper_n == "51"
    assert "not different on 5 of 5 functions compared" in v.headline
    assert GPU_MACHINE in v.headline and CPU_MACHINE in v.headline
    # two differ: still reproduced (at most two of the grid may); three: partly
    two = {**everywhere, **{(f, 10): (rng.uniform(1, 2, 51), rng.uniform(5, 6, 51)) for f in FUNCTIONS[:2]}}
    assert _verdict(tmp_path / "b", two).status == "agrees"
    three = {**two, (FUNCTIONS[2], 10): (rng.uniform(1, 2, 51), rng.uniform(5, 6, 51))}
    v = _verdict(tmp_path / "c", three)
    assert v.status == "partly" and v.finding.value == "in part" and v.coverage.value == "complete"
    assert v.finding.detail == "not different on 2, fewer than the 3 agreement asks"
    assert v.finding.cause == "Brest lower on 3"
    assert "differs: F1 (ours 5." in _section(tmp_path / "c2", _trials(three), _spec()).render()
    # means that print alike: the medians' difference says how far apart they are (a difference at the
    # comparison's resolution, 1e-8; below it runs tie: test_errors_are_compared_at_1e_8_resolution)
    base = np.full(51, 58.56)
    apart = {**everywhere, ("CEC17_F01", 10): (base, base + 3e-8)}
    text = _section(tmp_path / "c3", _trials(apart), _spec()).render()
    assert re.search(r"differs: F1 \(ours 58\.6 vs Brest's 58\.6, medians ours - Brest's = (3e-08|3\.0e-08); "
                     r"Brest lower\)", text)
    # a missing cell, or one short of 51 runs: partly
    missing = {k: v for k, v in everywhere.items() if k[0] != "CEC17_F06"}
    v = _verdict(tmp_path / "d", missing)
    assert v.status == "partly" and v.coverage.detail == "both sides' runs on 4 of 5 functions"
    short = {**everywhere, ("CEC17_F05", 10): (same()[:10], same())}
    v = _verdict(tmp_path / "e", short)
    assert v.status == "partly" and v.coverage.detail == "fewer than 51 runs: F5 (Brest's 10, ours 51)"
    assert v.ours_n == "ours 51, Brest's 10-51"
    # no function with both sides: not
    only_ours = {(f, 10): (None, same()) for f in FUNCTIONS}
    v = _verdict(tmp_path / "f", only_ours)
    assert v.status == "not" and "no function with both sides' runs" in v.coverage.cause


def test_captions_name_the_machines_and_n(tmp_path):
    rng = np.random.default_rng(11)
    cells = {(f, d): (rng.uniform(1, 2, 51), rng.uniform(1, 2, 51)) for f in FUNCTIONS for d in (10, 30)}
    s = _section(tmp_path, _trials(cells), _spec(dims=(10, 30)))
    text = s.render() + s.appendix()
    assert uncaptioned_tables(text) == []
    for dim in (10, 30):
        caption = next(x for x in text.splitlines() if x.startswith(f"Final error at D = {dim}"))
        assert GPU_MACHINE in caption and CPU_MACHINE in caption and "n = runs of each side (51 expected)" in caption
    assert "do not and are not compared here" in text  # errors only: the machines differ
    assert section_class("cec2017_jso") is Cec2017Jso


def test_the_speed_table_names_its_host_and_pairs_the_same_functions():
    ours = pd.DataFrame({"function": ["F01", "F04"], "dim": [30, 30], "trials": [51, 51],
                         "per_run_s": [0.002, 0.003], "gpu": "none", "cpu": "Intel(R) Xeon(R) Processor",
                         "cpu_cores": 16, "host": "vm", "boot_id": "boot-1"})
    brest = pd.DataFrame({"function": ["cec17_f3", "cec17_f3", "cec17_f10"], "dim": [30, 30, 30],
                          "time_s": [0.8, 1.0, 1.2], "cpu": "Intel(R) Xeon(R) Processor", "host": "vm",
                          "compiler": "g++", "cxx_flags": "-O2"})
    t = speed_table(ours, brest)
    assert list(t["cec"]) == [3, 10]  # Janssen's F01 and F04 are CEC 2017 F3 and F10
    assert t["brest_s"].tolist() == pytest.approx([0.9, 1.2]) and t["ratio"].tolist() == pytest.approx([450, 400])
    assert not t["gpu_recorded"].any() and t["host"].iloc[0] == "vm"


def test_the_speed_ratio_is_the_median_on_both_sides_with_its_n(tmp_path):
    # our three launches: the fastest (0.051 s / 51) is not the median (0.102 s / 51)
    ours = pd.DataFrame({"function": ["F01"], "dim": [30], "trials": [51], "per_run_s": [0.001],
                         "launch_s_all": ["0.051 0.102 0.204"], "gpu": "none", "cpu": "x", "cpu_cores": 16,
                         "host": "vm", "boot_id": "boot-1"})
    brest = pd.DataFrame({"function": ["cec17_f3"] * 3, "dim": [30] * 3, "time_s": [0.5, 1.0, 4.0], "cpu": "x",
                          "host": "vm", "compiler": "g++", "cxx_flags": "-O2"})
    t = speed_table(ours, brest)
    assert t["ours_s"].iloc[0] == pytest.approx(0.002) and t["ours_launches"].iloc[0] == 3
    assert t["brest_s"].iloc[0] == pytest.approx(1.0) and t["ratio"].iloc[0] == pytest.approx(500)
    out = tmp_path / "paper" / "cec2017_jso"
    write_outputs(_trials({("CEC17_F03", 30): ([1.0] * 51, [1.0] * 51)}), {}, out)
    t.to_csv(out / "jso_speed.csv", index=False)
    text = Cec2017Jso(_spec(dims=(30,)), out, tmp_path / "paper").speed_block()
    row = next(x for x in text.splitlines() if x.startswith("| F3 | 30"))
    assert "| 3 | 1 | 3 | 500x [" in row  # ours' launches and Brest's n beside the interval
    assert "the median over the timed launches" in text and "fastest" not in text
    # two runs a side: the ratio without an interval, saying n
    two = speed_table(ours.assign(launch_s_all="0.051 0.102"), brest.iloc[:2])
    t2 = Cec2017Jso(_spec(dims=(30,)), out, tmp_path / "paper")
    t2.speed = two
    assert "(n = 2: no interval)" in t2.speed_block()


def test_the_speed_table_sets_the_gpu_beside_every_core_of_the_host(tmp_path):
    # ours at 51 and 132 a launch; Brest's 16 runs side by side on 16 cores in 2.4 s: 0.15 s a run of the host
    ours = pd.DataFrame({"function": ["F01", "F01"], "dim": [30, 30], "trials": [51, 132],
                         "per_run_s": [0.002, 0.0015], "gpu": "GPU X", "cpu": "x", "cpu_cores": 16, "host": "vm",
                         "boot_id": "boot-1"})
    brest = pd.DataFrame({"function": ["cec17_f3"] * 3, "dim": [30] * 3, "time_s": [0.8, 0.9, 1.0], "cpu": "x",
                          "host": "vm", "compiler": "g++", "cxx_flags": "-O2"})
    host = pd.DataFrame({"function": ["cec17_f03"] * 16, "dim": [30] * 16, "time_s": [2.0] * 16, "lanes": 16,
                         "batch_wall_s": 2.4, "cpu": "x"})
    t = speed_table(ours, brest, host)
    assert list(t["ours_per_launch"]) == [51, 132]
    assert t["host_s"].tolist() == pytest.approx([0.15, 0.15])
    assert t["host_ratio"].tolist() == pytest.approx([75.0, 100.0]) and t["ratio"].tolist() == pytest.approx([450, 600])
    out = tmp_path / "paper" / "cec2017_jso"
    write_outputs(_trials({("CEC17_F03", 30): ([1.0] * 51, [1.0] * 51)}), {}, out)
    t.to_csv(out / "jso_speed.csv", index=False)
    text = Cec2017Jso(_spec(dims=(30,)), out, tmp_path / "paper").speed_block()
    assert "every core of the host at once (16 runs side by side" in text
    assert "| F3 | 30 | 132 | 0.0015 |" in text and "| 0.15 | 1 | 100x (n = 1: no interval) |" in text
    # the body keeps a block an SM (132 a launch); the appendix every launch size
    assert "| F3 | 30 | 51 |" not in text and "51 too in the appendix" in text
    assert "| F3 | 30 | 51 |" in Cec2017Jso(_spec(dims=(30,)), out, tmp_path / "paper").speed_block(in_body=False)
    # three batches a cell: the median batch, and the host ratio's interval from both sides' values
    three = pd.concat([host.assign(batch=k, batch_wall_s=w) for k, w in enumerate((2.4, 2.0, 3.2))])
    ours3 = ours.assign(launch_s_all=["0.102 0.1 0.11", "0.198 0.2 0.21"])
    t3 = speed_table(ours3, brest, three)
    assert t3["host_batches"].tolist() == [3, 3] and t3["host_s"].tolist() == pytest.approx([0.15, 0.15])
    r = speed_ratio(t3.to_dict("records")[1], "host")
    assert r.point == pytest.approx(0.15 / (0.2 / 132), rel=1e-5) and r.lo < r.point < r.hi  # (values kept to 6 digits)
    # batches of another boot than the GPU's are marked, and the mark explained
    t3 = speed_table(ours3, brest, three.assign(boot_id=["boot-1"] * 16 + ["boot-2"] * 32))
    assert t3["host_boots"].tolist() == ["boot-1; boot-2"] * 2
    t3.to_csv(out / "jso_speed.csv", index=False)
    text = Cec2017Jso(_spec(dims=(30,)), out, tmp_path / "paper").speed_block()
    assert "| 3 * |" in text
    assert "Rows marked \\* take some of the host's batches from `boot-2`, another machine of the same kind" in text
    # batches from two other boots: both named, in the plural
    t3 = speed_table(ours3, brest, three.assign(boot_id=["boot-1"] * 16 + ["boot-2"] * 16 + ["boot-3"] * 16))
    t3.to_csv(out / "jso_speed.csv", index=False)
    text = Cec2017Jso(_spec(dims=(30,)), out, tmp_path / "paper").speed_block()
    assert "from `boot-2`, `boot-3`, other machines of the same kind" in text
    # without the host's runs: no host columns
    alone = speed_table(ours, brest)
    assert "host_s" not in alone
