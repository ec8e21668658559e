"""Nashed et al.'s section: Table 2's best and highlighted methods (Kruskal-Wallis, Holm-corrected
Mann-Whitney at 0.01), the FE-matched view from traces, agreement with the published table, Fig. 2.
Synthetic trials whose answer is known by construction."""

import numpy as np
import pandas as pd
import pytest

from gpude.report import nashed
from gpude.report.document import build, section_class

MACHINE = "Test GPU / Test CPU x2"



def _both(out):
    """The report's body and its appendix, as one text."""
    return out.read_text() + "\n" + out.with_name("REPORT_appendix.md").read_text()

def synthetic(n=20, seed=3):
    """N00: every PSO and SS run ends at 0, every DE run at 1e-120 (a tie at float32's resolution);
    N09 D=10: DE far better; N09 D=30: PSO and SS
    alike and better than DE after 1 s, but DE ran 3x fewer FEs and was better at equal FEs."""
    rng = np.random.default_rng(seed)
    rows, traces = [], {}
    fes = {"de": 1000, "pso": 3000, "ss": 2000}
    for f in ("N00", "N09"):
        for dim in (10, 30):
            for algorithm in ("de", "pso", "ss"):
                for t in range(n):
                    if f == "N00":
                        final, start = (1e-120 if algorithm == "de" else 0.0), 50.0
                    elif dim == 10:
                        final, start = (1e-3 if algorithm == "de" else 1.0) * (1 + rng.random()), 50.0
                    else:
                        final = (10.0 if algorithm == "de" else 1.0) * (1 + rng.random())
                        start = 5.0 * (1 + rng.random()) if algorithm == "de" else 100.0
                    run_id = f"{f}-{dim}-{algorithm}-{t}"
                    rows.append({"run_id": run_id, "source": "ref", "machine": MACHINE, "function": f,
                                 "dim": dim, "algorithm": algorithm, "implementation": "gpu", "popsize": 48,
                                 "dtype": "float64", "trial": t, "best_error": final, "fes_used": fes[algorithm],
                                 "wall_time_s": 1.0, "max_time_s": 1.0, "max_fes": 30000000, "status": "time"})
                    # the trace: the start value at the first FEs, the final one at the last
                    traces[("ref", run_id)] = {"fes": np.array([48, fes[algorithm] - 1]),
                                               "best_error": np.array([max(start, final), final]),
                                               "generation": np.array([0, 1]),
                                               "time_s": np.array([0.01, 0.99])}
    return pd.DataFrame(rows), traces


def test_best_and_highlight_follow_the_tests():
    trials, _ = synthetic()
    table, pairs = nashed.table2(trials)
    t = table.set_index(["function", "dim", "algorithm"])
    # DE's 1e-120 against exact zeros: significant in float64; a three-way tie at float32's resolution
    assert t.loc[("N00", 10), "best"].tolist() == [False, True, True] and t.loc[("N00", 10, "de"), "kw_p"] < 0.01
    assert t.loc[("N00", 10), "best_f32"].all() and not t.loc[("N00", 10), "highlight_f32"].any()
    # DE alone significantly better: the only best, highlighted
    assert t.loc[("N09", 10, "de"), "highlight"] and t.loc[("N09", 10), "best"].tolist() == [True, False, False]
    # PSO and SS from one distribution: both best (Holm p against the leader >= 0.01), none highlighted
    assert t.loc[("N09", 30), "best"].tolist() == [False, True, True]
    assert not t.loc[("N09", 30), "highlight"].any()
    assert t.loc[("N09", 30, "de"), "kw_p"] < 0.01
    # three pairs per cell, Holm-adjusted
    assert len(pairs) == 4 * 3 and (pairs["p_holm"] >= pairs["p"]).all()
    assert (t["fes_per_s"] == t["mean_fes"] / t["mean_time_s"]).all()


def test_fe_matched_view_reads_errors_at_the_slowest_method_s_fes():
    trials, traces = synthetic()
    m = nashed.fe_matched(trials, traces).set_index(["function", "dim", "algorithm"])
    assert (m["matched_fes"] == 1000).all()  # DE's median FEs, the smallest
    # at 1000 FEs PSO and SS are still at their start (100), DE at its final error (10-20)
    assert m.loc[("N09", 30, "pso"), "median_error"] == 100.0
    assert m.loc[("N09", 30, "de"), "highlight"]


@pytest.mark.io
def test_section_compares_with_the_published_table(tmp_path):
    trials, traces = synthetic()
    paper_dir = tmp_path / "paper" / "nashed"
    files = section_class("nashed").write_outputs(trials, traces, paper_dir)
    assert {p.name for p in files} >= {"table2.csv", "table2_pairwise.csv", "table2_fe_matched.csv",
                                       "figure2.png"}
    spec = {"name": "nashed", "algorithms": {"de": {"implementations": ["two_kernel"], "popsizes": [48]},
                                             "pso": {"implementations": ["gpu"], "popsizes": [125]},
                                             "ss": {"implementations": ["gpu"], "popsizes": [140]}},
            "functions": ["N00", "N09"], "dims": [10, 30], "trials": 20, "max_fes": 30000000,
            "max_time_s": 1.0, "target": 0, "report": {"section": "nashed"}}
    experiment = tmp_path / "nashed.yaml"
    import yaml

    experiment.write_text(yaml.safe_dump(spec))
    text = _both(build([(str(experiment), str(paper_dir))], tmp_path / "paper" / "REPORT.md"))
    # the paper: f0 all 0.0 (tie), f9 D=10 and D=30 DE alone lowest; ours agree on 3 of 4 cells
    assert "over the 4 cells (function x D) in both tables" in text
    assert "as 0, as the paper's single-precision runs stored them" in text
    # lowest means against lowest means (the paper's rule on both tables)
    assert "the same set of lowest-mean methods in 3; at least one in common in 3" in text
    low = trials[(trials["function"] == "N09") & (trials["dim"] == 30)].groupby("algorithm")["best_error"].mean()
    assert f"* N09 D=30: ours {nashed.NAMES[low.idxmin()]}, paper DE" in text
    # our test of the medians is counted apart, beside the paper's count by its own test
    assert "among the best by our test (Kruskal-Wallis, Holm-corrected Mann-Whitney U at 0.01, same " \
           "flooring): DE 3, PSO 3, SS 3 of 4" in text  # N00 a three-way tie twice, N09 DE and PSO+SS
    de = trials[(trials["function"] == "N09") & (trials["dim"] == 10) & (trials["algorithm"] == "de")]["best_error"]
    assert f"**{de.mean():.1e} ({de.std():.1e})**" in text  # DE's highlighted cell at N09 D=10
    assert "| | paper | 0.0e+00 (0.0e+00) †" in text  # the published row beside ours, the paper's mark
    assert "figure2.png" in text and "Runs ended by the time budget: 240" in text
    assert "(FE cap 30,000,000, which no run reached" in text
    # the cap lifted in the experiment (traces grow on demand) after the runs were made: both are said
    experiment.write_text(yaml.safe_dump({**spec, "max_fes": 10**12}))
    text = _both(build([(str(experiment), str(paper_dir))], tmp_path / "paper" / "REPORT.md"))
    assert "(FE cap 1,000,000,000,000; the runs below had 30,000,000, which no run reached" in text


def test_unknown_section_names_the_known_ones():
    from gpude.core.errors import InvalidInputError

    with pytest.raises(InvalidInputError, match="unknown report section 'nashd'; known: .*nashed"):
        section_class("nashd")


def _paper(tmp_path, monkeypatch, study, *flags) -> set[str]:
    """The files `gpude paper` writes for synthetic trials of Nashed et al.'s methods under ``study``
    (its own outputs left out: tested above)."""
    from gpude import cli
    from gpude.report import sources

    trials, traces = synthetic(n=4)
    hit = trials["best_error"] <= 0  # PSO and SS on N00
    trials = trials.assign(popsize=48 + 48 * (trials["trial"] % 2), hit_target=hit, target_error=0.0,
                           time_to_target_s=trials["wall_time_s"].where(hit),
                           fes_to_target=trials["fes_used"].where(hit))
    monkeypatch.setattr(sources, "load_sources", lambda paths, join_guests=True: (trials, traces))
    if study:
        monkeypatch.setattr(section_class(study), "write_outputs", staticmethod(lambda *a, **k: []))
    out = tmp_path / "paper"
    (tmp_path / "trials.csv").write_text("run_id\n")  # read by the patched load_sources; the CLI checks it is there
    assert cli.main(["paper", "--trials", str(tmp_path / "trials.csv"), "--out-dir", str(out)]
                    + (["--study", study] if study else []) + list(flags)) == 0
    return {p.name for p in out.iterdir()}


FIGURE_FILES = {"convergence.png", "convergence_time.png", "ecdf.png", "error_vs_time.png"}


@pytest.mark.parametrize("study", ["nashed", "kromer", None])
def test_gpude_paper_writes_the_wall_time_outputs_only_for_a_study_that_wants_them(tmp_path, monkeypatch, study):
    # Nashed's and Kromer's runs have a time budget: wall-time tables and time against NP say nothing
    # there and are not written; a fixed-FE experiment (the generic section) still gets them. The
    # figures of every trial: only where the section shows them (the generic one does, these two not)
    written = _paper(tmp_path, monkeypatch, study)
    assert {"table_error.csv", "table_cells.csv", "provenance.csv"} <= written
    assert (FIGURE_FILES <= written) if study is None else not (FIGURE_FILES & written), sorted(written)
    wall_time = {"table_time.csv", "table_time.md", "table_time.tex", "figure_time.png", "time_vs_popsize_N09.png"}
    assert (wall_time <= written) if study is None else not (wall_time & written), sorted(written)


@pytest.mark.parametrize("study, figures, expected", [
    ("nashed", "all", "tables and figures"), (None, "none", "tables"), ("nashed", "only", "figures"),
    (None, "only", "figures")])
def test_gpude_paper_draws_the_figures_of_every_trial_on_request(tmp_path, monkeypatch, study, figures, expected):
    written = _paper(tmp_path, monkeypatch, study, "--figures", figures)
    assert ("table_error.csv" in written) == ("tables" in expected), sorted(written)
    if "figures" in expected:
        assert FIGURE_FILES <= written, sorted(written)
    else:
        assert not FIGURE_FILES & written, sorted(written)
    if figures == "only":
        assert written == FIGURE_FILES, sorted(written)


def test_write_paper_refuses_an_unknown_figures_choice(tmp_path):
    from gpude.core.errors import InvalidInputError
    from gpude.report.paper import write_paper

    with pytest.raises(InvalidInputError, match="figures='some'.*study, all, none, only"):
        write_paper([str(tmp_path / "trials.csv")], tmp_path / "out", figures="some")
    assert not (tmp_path / "out").exists()


def test_ours_and_the_paper_s_marks_are_two_rules_side_by_side(tmp_path):
    """A cell where the lowest mean and the significantly better median fall on different methods:
    each mark follows its own rule, and the caption defines both."""
    rng = np.random.default_rng(7)
    rows = []
    for algorithm in ("de", "pso", "ss"):
        for t in range(20):
            if algorithm == "de":  # DE: the lowest median by far, but one wild run drags its mean up
                error = 1e6 if t == 0 else 1e-3 * (1 + rng.random())
            else:
                error = 1.0 + rng.random()
            rows.append({"run_id": f"{algorithm}-{t}", "source": "ref", "machine": MACHINE, "function": "N09",
                         "dim": 10, "algorithm": algorithm, "implementation": "gpu", "popsize": 48,
                         "dtype": "float64", "trial": t, "best_error": error, "fes_used": 1000,
                         "wall_time_s": 1.0, "max_time_s": 1.0, "max_fes": 30000000, "status": "time"})
    trials = pd.DataFrame(rows)
    table, _ = nashed.table2(trials)
    t = table.set_index("algorithm")
    assert t.loc["de", "highlight"]  # our test: DE's median significantly better
    assert not t.loc["de", "lowest_mean"]  # the paper's rule: DE's mean is not the lowest
    assert t["lowest_mean"].sum() == 1 and t.loc[t["mean_error"].idxmin(), "lowest_mean"]
    assert (t["lowest_mean_f32"] == t["lowest_mean"]).all()  # nothing here underflows float32
    paper_dir = tmp_path / "paper" / "nashed"
    paper_dir.mkdir(parents=True)
    table.to_csv(paper_dir / "table2.csv", index=False)
    spec = {"name": "nashed", "algorithms": {"de": {"implementations": ["two_kernel"], "popsizes": [48]}},
            "functions": ["N09"], "dims": [10], "trials": 20, "max_fes": 30000000, "max_time_s": 1.0}
    section = section_class("nashed")(spec, paper_dir, tmp_path / "paper")
    text = section.table_markdown()
    de = t.loc["de"]
    assert f"**{de.mean_error:.1e} ({de.std_error:.1e})** |" in text  # bold (our test), no dagger
    lowest = t.loc[t["mean_error"].idxmin()]
    assert f"{lowest.mean_error:.1e} ({lowest.std_error:.1e}) †" in text
    assert "Two marks by two different rules" in text and "`†`: the lowest mean of the cell" in text
