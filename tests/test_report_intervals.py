"""Ratios with their bootstrap intervals (gpude.report.intervals), the rows' labels a section prints
beside them (Section.rows_label) and the error bars of the time figure (timing.bar_chart). Hand-made
tables, built here."""

import numpy as np
import pandas as pd
import pytest

from gpude.report.intervals import Samples, extremes_text, of_means, ratio
from gpude.report.section import Section
from gpude.report.timing import bar_chart, timing_table

MACHINE = "NVIDIA H200 / Intel(R) Xeon(R) Processor x16"


def _trial_times():
    rng = np.random.default_rng(5)
    rows = [("sequential", "F01", t, 60.0 + rng.normal(0, 1), "shared:up_to_16_jobs") for t in range(4)]
    rows += [("ide", "F01", t, 0.5 + rng.normal(0, 0.02), "alone") for t in range(30)]
    rows += [("ide", "F02", t, 0.6, "alone") for t in range(2)]
    return pd.DataFrame(rows, columns=["implementation", "function", "trial", "wall_time_s", "timed"]).assign(
        machine=MACHINE)


def test_a_ratio_of_two_samples_and_to_a_fixed_number_holds_its_point():
    t = _trial_times()
    samples = Samples(t)
    seq, ide = samples("sequential", "F01"), samples("ide", "F01")
    speedup = ratio(seq, ide)
    assert speedup.point == pytest.approx(seq.mean() / ide.mean())
    assert speedup.lo < speedup.point < speedup.hi and (speedup.n_ours, speedup.n_theirs) == (4, 30)
    text = speedup.text()
    assert text.startswith(f"{speedup.point:.3g}x [") and text.endswith("x]")
    paper = ratio(ide, 0.63)  # the paper's number is fixed: only ours is resampled
    assert paper.n_theirs is None and paper.lo < ide.mean() / 0.63 < paper.hi
    assert ratio(ide, 0.63, np.median).point == pytest.approx(np.median(ide) / 0.63)
    assert ratio(ide, 0.63) == paper  # a fixed seed: the same interval every time


def test_a_short_side_prints_its_n_and_no_interval():
    t = _trial_times()
    samples = Samples(t)
    short = ratio(samples("ide", "F02"), samples("ide", "F01"))
    assert short.short == 2 and np.isnan(short.lo)
    assert short.text("{:.2f}") == f"{short.point:.2f}x (n = 2: no interval)"
    assert of_means(120.0, 1, 30).text() == "120x (n = 1: no interval)"
    assert of_means(1.2, 30).text() == "1.2x"  # a table's means without their trials: the point alone
    assert ratio([], [1.0]).text() == "-"


def test_the_extremes_carry_the_bounds_of_the_smallest_and_the_largest():
    t = _trial_times()
    ide = Samples(t)("ide", "F01")
    low, high = ratio(ide, 1.0), ratio(ide, 0.25)
    text = extremes_text([high, low])
    assert text == f"{low.point:.3g}-{high.point:.3g}x (95% CI of the extremes {low.lo:.3g}-{high.hi:.3g}x)"
    assert extremes_text([low, of_means(3.0, 1, 30)]).endswith("(n = 1: no interval)")
    assert extremes_text([]) == "-"


def _section(tmp_path, provenance, trial_times=None, spec=None):
    d = tmp_path / "paper" / "x"
    d.mkdir(parents=True)
    provenance.to_csv(d / "provenance.csv", index=False)
    if trial_times is not None:
        trial_times.to_csv(d / "trial_times.csv", index=False)
    return Section(spec or {"name": "x"}, d, tmp_path / "paper")


def test_the_rows_label_names_batched_and_shared_rows_only_where_used(tmp_path):
    p = pd.DataFrame({"machine": MACHINE, "implementation": ["sequential", "many_threaded/64", "ide"],
                      "concurrency": ["shared", "exclusive", "exclusive"], "trials_per_launch": [1, 10, 1]})
    s = _section(tmp_path, p, spec={"name": "x", "max_time_s": 27.0})
    label = s.rows_label()
    assert "many_threaded (10 a launch)" in label and "wall-clock budget of 27 s" in label
    assert "sequential (`shared`)" in label
    assert s.rows_label(["many_threaded"]).count("sequential") == 0
    assert s.rows_label(["ide"]) == ""  # one a launch, timed alone: nothing to say


def test_the_rows_label_reads_how_the_timed_rows_were_timed(tmp_path):
    p = pd.DataFrame({"machine": MACHINE, "implementation": ["sequential", "ide"],
                      "concurrency": ["shared:48; shared:up_to_16_jobs", "exclusive"], "trials_per_launch": [1, 1]})
    s = _section(tmp_path, p, _trial_times())
    assert s.rows_label(["sequential"]) == ("Rows used here: rows timed side by side with other batches, not alone: "
                                            "sequential (`shared:up_to_16_jobs`).")
    assert s.rows_label(["ide"]) == ""


def test_the_time_figure_has_error_bars(tmp_path):
    t = _trial_times().assign(dim=100, popsize=250)
    table = timing_table(t)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    captured = []
    real = plt.close
    try:
        plt.close = lambda fig=None: captured.append(fig)
        bar_chart(table, tmp_path / "figure_time")
    finally:
        plt.close = real
    fig = captured[0]
    bars = [c for c in fig.axes[0].containers if getattr(c, "errorbar", None) is not None]
    assert len(bars) == 2  # one error bar container per implementation
    ide = next(c for c in bars if c.get_label() == "ide").errorbar.lines[2][0].get_segments()[0]
    cell = table[(table.implementation == "ide") & (table.function == "F01")].iloc[0]
    assert ide[1][1] - ide[0][1] == pytest.approx(2 * cell.std_s)  # +-1 std about the mean
    plt.close(fig)
    for c in bars:
        segments = [seg for seg in c.errorbar.lines[2][0].get_segments() if len(seg)]  # none where no cell
        assert len(segments) == len(table[table.implementation == c.get_label()])
    assert (tmp_path / "figure_time.png").is_file()


def test_the_time_tables_speed_ups_carry_the_interval_of_both_sides():
    from gpude.report.timing import markdown

    rows = [dict(implementation=impl, function="F01", trial=k, wall_time_s=w, machine="M", best_error=1.0,
                 hit_target=False, concurrency="exclusive", run_id=f"{impl}/{k}")
            for impl, times in (("sequential", [1.0, 1.1, 0.9, 1.0]), ("master_slave", [0.5, 0.55, 0.45]),
                                ("naive_gpu", [0.2])) for k, w in enumerate(times)]
    t = timing_table(pd.DataFrame(rows)).set_index("implementation")
    ms = t.loc["master_slave"]
    # both sides resampled: the bounds lie between the extreme runs' ratios, the point inside
    assert ms["speedup"] == pytest.approx(2.0) and 0.9 / 0.55 <= ms["speedup_lo"] < 2.0 < ms["speedup_hi"] <= 1.1 / 0.45
    assert ms["baseline_n"] == 4 and np.isnan(t.loc["sequential", "speedup_lo"])
    text = markdown(t.reset_index())
    assert f"| master_slave | 0.5 (3); 2.0x [{ms['speedup_lo']:.1f}x, {ms['speedup_hi']:.1f}x] |" in text
    assert "| sequential | 1 (4) |" in text and "| naive_gpu | 0.2 (1); 5.0x (n = 1: no interval) |" in text


def test_a_mean_error_over_a_papers_carries_the_interval_of_our_runs(tmp_path):
    from gpude.report.timing import trial_errors

    rows = pd.DataFrame([dict(implementation="ide", function="Q01", trial=k, best_error=e, machine=MACHINE,
                              wall_time_s=1.0) for k, e in enumerate([1.0, 2.0, 3.0])]
                        + [dict(implementation="ide", function="Q02", trial=0, best_error=5.0, machine=MACHINE,
                                wall_time_s=1.0),
                           dict(implementation="ide", function="Q02", trial=1, best_error=None, machine=MACHINE,
                                wall_time_s=None)])
    errors = trial_errors(rows)
    assert len(errors) == 4 and list(errors.columns) == ["machine", "implementation", "function", "trial", "best_error"]
    s = _section(tmp_path, pd.DataFrame({"machine": [MACHINE], "implementation": ["ide"]}))
    errors.to_csv(s.dir / "trial_errors.csv", index=False)
    s = Section({"name": "x"}, s.dir, tmp_path / "paper")
    r = s.error_ratio("ide", "Q01", 4.0, MACHINE)  # our mean 2 over the paper's 4, ours resampled
    assert r.point == 0.5 and 0.25 <= r.lo < 0.5 < r.hi <= 0.75 and r.n_theirs is None
    assert s.error_ratio("ide", "Q02", 4.0).text() == "1.25x (n = 1: no interval)"
    assert np.isnan(s.error_ratio("ide", "Q03", 4.0).point)
