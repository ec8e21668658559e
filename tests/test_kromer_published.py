"""The transcription of Kromer et al.'s Tables 1-4 (paper/published/kromer_*.csv) against the paper's
own statements and the committed instance tables."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
PUB = ROOT / "paper" / "published"
OPTIMA = pd.read_csv(ROOT / "data" / "lolib" / "optima.csv").set_index("paper_name")


def table(name):
    return pd.read_csv(PUB / f"kromer_{name}.csv", comment="#")


@pytest.mark.parametrize("number,count", [(2, 49), (3, 50)])
def test_lop_tables_name_exactly_the_instances_of_the_optima_table(number, count):
    t = table(f"table{number}")
    names = OPTIMA.index[OPTIMA["table"].str.contains(f"Table {number}")]
    assert len(t) == count and sorted(t["instance"]) == sorted(names)
    values = t[["best_5s", "avg_5s", "best_10s", "avg_10s"]]
    assert values.dtypes.map(lambda d: d.kind == "f").all()  # every cell parsed as a number
    assert ((values.fillna(0) >= 0) & (values.fillna(0) < 1)).all().all()
    # a best is never above the mean of the same runs
    for when in ("5s", "10s"):
        ok = t[f"best_{when}"].isna() | (t[f"best_{when}"] <= t[f"avg_{when}"] * (1 + 5e-3))
        assert ok.all(), t[~ok]
    assert t.isna().sum().sum() == (3 if number == 2 else 0)  # tiw56n72's lost cells only


# small printed errors are integer deficits with the table's own optimum (data/lolib/optima.csv)
DEFICITS = [("be75eec", "best_5s", 2.99), ("be75np", "best_5s", 2.00), ("tiw56n54", "best_5s", 8.00),
            ("tiw56n58", "best_5s", 3.00), ("tiw56r54", "best_5s", 6.99), ("t75d11xx", "best_5s", 49.99),
            ("stabu1", "best_5s", 24.02), ("N-be75np", "best_5s", 25.02), ("N-stabu70", "best_5s", 3.00),
            ("N-t59i11xx", "best_5s", 5.00), ("N-tiw56n72", "best_5s", 1.00), ("N-tiw56n54", "best_5s", 10.99)]


@pytest.mark.parametrize("instance,column,deficit", DEFICITS)
def test_small_errors_are_integer_deficits_of_the_proven_optimum(instance, column, deficit):
    t = pd.concat([table("table2"), table("table3")]).set_index("instance")
    got = t.loc[instance, column] / 100 * OPTIMA.loc[instance, "optimum"]
    assert got == pytest.approx(deficit, abs=0.01)
    # three printed digits: the nearest integer is within the rounding of the printed value
    assert abs(got - round(got)) <= 0.005 * got + 0.01


def test_table2_averages_and_solved_count_are_the_paper_s_text():
    t = table("table2")
    assert round(t["avg_5s"].mean(), 3) == 0.043 and round(t["avg_10s"].mean(), 3) == 0.031
    assert t["avg_5s"].max() == t.set_index("instance").loc["t69r11xx", "avg_5s"] == 0.232
    solved = ((t["avg_5s"] == 0) & (t["avg_10s"] == 0)).sum()
    assert solved == 15  # "found global optimum in all test runs for 15 out of 49 LOP matrices"


def test_table3_text_differs_from_its_table_and_the_difference_is_recorded():
    # the text says 0.034 after 5 s and 0.037 after 10 s; the table's means are 0.0375 and 0.0367 (no
    # reading of N-usa79's '0.2.66E-01' changes the 5 s mean by more than 0.006): the REPORT compares
    # with both, and says so
    t = table("table3")
    assert round(t["avg_10s"].mean(), 3) == 0.037
    assert round(t["avg_5s"].mean(), 4) == 0.0375
    claims = table("claims").set_index("claim")
    assert claims.loc["avg error over all N-LOLIB matrices after 5 s", "value_low"] == 0.034


def test_table4_covers_every_cell_and_its_bold_claims_hold():
    t = table("table4")
    names = pd.read_csv(ROOT / "data" / "etc" / "instances.csv")["paper_name"]
    assert sorted(set(t["etc"])) == sorted(names) and len(t) == 12 * 3 * 3
    assert set(t["popsize"]) == {64, 512, 1024} and set(t["implementation"]) == {"cpu", "cpu_optimized", "gpu"}
    best = t.loc[t.groupby(["etc", "popsize"])["fitness"].idxmin()].set_index(["etc", "popsize"])["implementation"]
    consistent = {"ThMhCc", "ThMlCc", "TlMhCc", "TlMlCc"}
    for etc in names:  # NP 64: CPU opt. best on the consistent matrices, the GPU elsewhere
        assert best[(etc, 64)] == ("cpu_optimized" if etc in consistent else "gpu")
        assert best[(etc, 512)] == best[(etc, 1024)] == "gpu"
    # the most successful population size was 64: per matrix, the best of all cells is at NP = 64
    overall = t.loc[t.groupby("etc")["fitness"].idxmin()]
    assert (overall["popsize"] == 64).sum() >= 10
    # magnitudes follow Braun et al.'s ETC ranges (data/etc/PROVENANCE.md): ThMh ~1e7 .. TlMl ~1e4
    assert t[t["etc"] == "ThMhCc"]["fitness"].between(1e6, 1e8).all()
    assert t[t["etc"] == "TlMlCc"]["fitness"].between(1e3, 1e5).all()


def test_table1_ratios_are_the_paper_s():
    t = table("table1")
    v = t.set_index(["source", "variables", "time_s"])["value"]
    assert v[("veronese2010", 100, 0.64)] / v[("kromer", 128, 0.6604656)] == pytest.approx(1.19, abs=0.01)
    assert v[("veronese2010", 100, 27.47)] / v[("kromer", 128, 27.00045)] == pytest.approx(3.0, rel=0.01)
    assert np.all(t["time_s"] > 0)
