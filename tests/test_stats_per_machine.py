"""The statistics per machine (issue 50, item 4): no score or test pools the trials of two machines,
no time-based score where the budget is wall-clock time, and a note where two competitors made the
very same runs. Tiny hand-made trial tables whose answers are known by construction."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gpude.report.janssen import CaseStudy2
from gpude.report.section import Section
from gpude.stats import friedman, kruskal_by_function, pairwise_mannwhitney, rank_sum_scores
from gpude.stats.tables import TIME_BUDGET_REASON, ranks_from_scores, with_competitors, write_statistics

FAST, SLOW = "NVIDIA H200 / Xeon x16", "NVIDIA H100 / Xeon x16"


def trial(machine, implementation, function, t, time, error=0.0, fes=1000, **extra):
    """One trial row; ``time`` is its time to the target (every trial here reaches it unless
    ``error`` is above the target)."""
    hit = error <= 1e-8
    return {"machine": machine, "algorithm": "de", "implementation": implementation, "function": function,
            "dim": 10, "popsize": 50, "dtype": "float64", "trial": t,
            "run_id": f"{machine}/{implementation}/{function}/{t}",
            "best_error": error, "fes_used": fes, "fes_to_target": fes if hit else np.nan,
            "time_to_target_s": time if hit else np.nan, "wall_time_s": time, "hit_target": hit,
            "target_error": 1e-8, "status": "target" if hit else "budget", **extra}


def two_machines():
    """A faster than B on the fast machine, B faster than A on the slow one (every trial solved):
    each machine has a clear winner by time, while pooled the two tie (A's fast trials beat all of
    B's, A's slow ones none)."""
    rows = []
    for t in range(2):
        rows += [trial(FAST, "a", "F01", t, 0.1), trial(FAST, "b", "F01", t, 0.2),
                 trial(SLOW, "a", "F01", t, 10.0), trial(SLOW, "b", "F01", t, 5.0)]
    return pd.DataFrame(rows)


@pytest.fixture()
def stats_dir(tmp_path) -> Path:
    """Where a report section reads its statistics: ``<paper_dir>/stats``."""
    return tmp_path / "paper" / "test" / "stats"


def section(stats_dir: Path) -> Section:
    """The generic report section of the paper folder ``stats_dir`` is in."""
    spec = {"name": "test", "algorithms": {"de": {"implementations": ["a", "b"]}}}
    return Section(spec, stats_dir.parent, stats_dir.parent.parent)


def scores_of(path, machine):
    """One machine's rows of a score file, indexed by function, without the machine column."""
    frame = pd.read_csv(path)
    return frame[frame["machine"] == machine].drop(columns="machine").set_index("function")


def test_two_machines_trials_are_never_ranked_together(tmp_path):
    trials = two_machines()
    files = write_statistics(trials, tmp_path)
    fast, slow = scores_of(files["rank_sum_time"], FAST), scores_of(files["rank_sum_time"], SLOW)
    # within a machine: 2 trials each, U_a + U_b = 2 * 2; the winner takes every pair
    assert fast.loc["total", "a"] == 4 and fast.loc["total", "b"] == 0
    assert slow.loc["total", "a"] == 0 and slow.loc["total", "b"] == 4
    ranks = pd.read_csv(files["ranks_time"])
    final = ranks[ranks["function"] == "rank"].set_index("machine")
    assert final.loc[FAST, "a"] == 1 and final.loc[SLOW, "a"] == 2
    # pooled, the machines' opposite orders would cancel out: a tie the per-machine files must not show
    pooled = rank_sum_scores(with_competitors(trials), cost="time")
    assert pooled.loc["total", "a"] == pooled.loc["total", "b"] == 8
    # every file names its machine on every row, and no row pools them
    for name in ("rank_sum_time", "rank_sum_fes", "ranks_time", "ranks_fes", "kruskal", "pairwise", "machines"):
        frame = pd.read_csv(files[name])
        assert set(frame["machine"]) == {FAST, SLOW}, name
    machines = pd.read_csv(files["machines"]).set_index("machine")
    assert (machines["trials"] == 4).all() and (machines["trials_per_cell"] == 2).all()


def test_the_machine_is_read_from_gpu_cpu_and_cores_when_there_is_no_machine_column(tmp_path):
    trials = two_machines()
    trials = trials.assign(gpu=trials["machine"].str.split(" / ").str[0], cpu="Xeon", cpu_cores=16)
    files = write_statistics(trials.drop(columns="machine"), tmp_path)
    assert set(pd.read_csv(files["rank_sum_time"])["machine"]) == {FAST, SLOW}
    assert scores_of(files["rank_sum_time"], SLOW).loc["total", "b"] == 4


def test_one_machine_gives_the_scores_and_tests_computed_on_the_whole_table(tmp_path):
    """With one machine the numbers are those of the whole table, as before the files were per
    machine."""
    rng = np.random.default_rng(5)
    rows = []
    for implementation, scale in (("a", 1.0), ("b", 2.0), ("c", 3.0)):
        for function in ("F01", "F02"):
            for t in range(6):
                solved = rng.random() < 0.5
                rows.append(trial(FAST, implementation, function, t, float(rng.random() * scale),
                                  error=0.0 if solved else float(rng.random() * scale),
                                  fes=int(rng.integers(100, 1000))))
    trials = pd.DataFrame(rows)
    files = write_statistics(trials, tmp_path)
    whole = with_competitors(trials)
    for cost in ("time", "fes"):
        expected = rank_sum_scores(whole, cost=cost)
        pd.testing.assert_frame_equal(scores_of(files[f"rank_sum_{cost}"], FAST), expected, check_names=False,
                                      check_dtype=False)
        pd.testing.assert_frame_equal(scores_of(files[f"ranks_{cost}"], FAST), ranks_from_scores(expected),
                                      check_names=False, check_dtype=False)
    kruskal = pd.read_csv(files["kruskal"]).drop(columns="machine").set_index("function")
    pd.testing.assert_frame_equal(kruskal, kruskal_by_function(whole), check_names=False,
                                  check_dtype=False)
    pairwise = pd.read_csv(files["pairwise"]).drop(columns="machine")
    pd.testing.assert_frame_equal(pairwise, pairwise_mannwhitney(whole)[list(pairwise.columns)],
                                  check_dtype=False)
    fr = pd.read_csv(files["friedman"]).set_index("competitor")
    assert fr["mean_rank"].to_dict() == pytest.approx(friedman(whole)["mean_rank"])


@pytest.mark.parametrize("how", ["max_time_s", "flag"])
def test_no_time_score_where_the_budget_is_time(stats_dir, how):
    trials = two_machines()
    if how == "max_time_s":  # the experiment's budget, as the trials carry it
        files = write_statistics(trials.assign(max_time_s=1.0), stats_dir)
    else:  # the caller says so (gpude paper/stats --time-budget)
        files = write_statistics(trials, stats_dir, time_budget=True)
    assert pd.read_csv(files["rank_sum_time"]).empty and pd.read_csv(files["ranks_time"]).empty
    assert len(pd.read_csv(files["rank_sum_fes"])) == 4  # F01 and total on each machine
    omitted = pd.read_csv(files["omitted"])
    assert list(omitted["file"]) == ["rank_sum_time.csv", "ranks_time.csv"]
    assert (omitted["reason"] == TIME_BUDGET_REASON).all()
    # the report says why and shows no time column
    text = section(stats_dir).statistics()
    assert "No time-based score: the runs have a wall-clock budget" in text
    assert "score, time" not in text and "| competitor | score, FEs |" in text


def test_a_time_budget_is_read_from_the_runs_and_a_time_score_otherwise_kept(tmp_path):
    stopped = two_machines().assign(status="time")  # runs stopped by the time budget
    assert pd.read_csv(write_statistics(stopped, tmp_path / "t")["rank_sum_time"]).empty
    files = write_statistics(two_machines(), tmp_path / "n")
    assert len(pd.read_csv(files["rank_sum_time"])) == 4 and pd.read_csv(files["omitted"]).empty




def test_same_runs_are_named_and_the_report_says_only_time_separates_them(stats_dir):
    rows = []
    for t in range(3):
        error, fes = [1e-3, 2e-3, 5e-4][t], [900, 800, 1000][t]
        rows += [trial(FAST, "seq", "F01", t, 2.0, error=error, fes=fes),
                 trial(FAST, "gpu", "F01", t, 0.1, error=error, fes=fes),  # the same run, faster
                 trial(FAST, "other", "F01", t, 1.0, error=error, fes=fes + 1)]  # one FE more: not the same
    files = write_statistics(pd.DataFrame(rows), stats_dir)
    same = pd.read_csv(files["same_runs"])
    assert same[["machine", "a", "b", "trials"]].values.tolist() == [[FAST, "seq", "gpu", 3]]
    text = section(stats_dir).statistics()
    assert (f"**On {FAST}** (9 trials, 3 per competitor and function)" in text)
    assert "Same runs: seq and gpu made the very same runs here" in text
    assert "only the time score can separate them, and any difference there is one of speed" in text
    assert "other and" not in text and "and other" not in text


def test_same_runs_on_two_machines_are_not_pooled(tmp_path):
    """The same runs made on two machines: each machine's pair is named on its own."""
    rows = [trial(m, i, "F01", t, time, error=1e-3, fes=500)
            for m, time in ((FAST, 1.0), (SLOW, 2.0)) for i in ("seq", "gpu") for t in range(2)]
    same = pd.read_csv(write_statistics(pd.DataFrame(rows), tmp_path)["same_runs"])
    assert sorted(same["machine"]) == sorted([FAST, SLOW]) and (same["trials"] == 2).all()


def test_janssen_table4_ranks_come_from_one_machine(stats_dir):
    """Case study 2's Table 4: the ranks of the machine with the most trials, never a mix."""
    rows = []
    for t in range(3):  # the fast machine: three trials each, a ahead of b
        rows += [trial(FAST, "a", "F01", t, 0.1), trial(FAST, "b", "F01", t, 0.2)]
    for t in range(2):  # the slow machine: two trials each, b ahead of a
        rows += [trial(SLOW, "a", "F01", t, 10.0), trial(SLOW, "b", "F01", t, 5.0)]
    write_statistics(pd.DataFrame(rows), stats_dir)
    cs2 = CaseStudy2({"name": "janssen_cs2", "algorithms": {}}, stats_dir.parent, stats_dir.parent.parent)
    assert cs2.ranks_machine == FAST
    ours, _ = cs2._ranks
    assert ours.loc["F01", "a"] == 1 and ours.loc["rank", "b"] == 2 and "machine" not in ours


def test_bad_input_is_rejected_with_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="at least one trial"):
        write_statistics(two_machines().iloc[:0], tmp_path)
    with pytest.raises(ValueError, match=r"lack the column\(s\) \['best_error'\]"):
        write_statistics(two_machines().drop(columns="best_error"), tmp_path)
    scores = pd.read_csv(write_statistics(two_machines(), tmp_path)["rank_sum_time"], index_col="function")
    with pytest.raises(ValueError, match="one machine's"):
        ranks_from_scores(scores)  # two machines' rows with their machine column
