"""Table 3 / Fig. 6 of Janssen et al. from a trials table, and the comparison with the paper."""

import numpy as np
import pandas as pd
import pytest

from gpude.report.timing import markdown, published_comparison, timing_table, trial_times, write_all

ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]


def trials(machine="NVIDIA H200 / Xeon x16"):
    rows = []
    for impl, base in (("ide", 0.5), ("sequential", 50.0)):
        for f, k in (("F01", 1.0), ("F10", 4.0)):
            for t in range(3):
                rows.append({"implementation": impl, "function": f, "trial": t, "machine": machine,
                             "wall_time_s": base * k + t, "best_error": 10.0 * k + t, "hit_target": False})
    rows.append({"implementation": "ide", "function": "F01", "trial": 3, "wall_time_s": np.nan,
                 "machine": machine, "best_error": np.nan, "hit_target": False})  # failed: not averaged
    return pd.DataFrame(rows)


def test_timing_table_means_counts_and_speedups():
    t = timing_table(trials()).set_index(["implementation", "function"])
    assert t.loc[("ide", "F01"), "n"] == 3 and t.loc[("ide", "F01"), "mean_s"] == 1.5
    assert t.loc[("sequential", "F10"), "mean_s"] == 201.0
    assert t.loc[("ide", "F10"), "speedup"] == 201.0 / 3.0
    assert t.loc[("sequential", "F01"), "speedup"] == 1.0
    # sequential first, as in the paper
    assert list(timing_table(trials()).implementation.unique()) == ["sequential", "ide"]


def test_trial_times_are_the_rows_behind_the_time_table():
    """The per-trial times a ratio's interval needs: the rows the time table averages, no failed trial."""
    rows = trial_times(trials())
    table = timing_table(trials()).set_index(["implementation", "function"])
    assert len(rows) == 12 and rows["wall_time_s"].notna().all() and set(rows["timed"]) == {"alone"}
    for (impl, f), part in rows.groupby(["implementation", "function"]):
        assert part["wall_time_s"].mean() == table.loc[(impl, f), "mean_s"] and len(part) == table.loc[(impl, f), "n"]


def test_machines_are_never_averaged_together():
    both = pd.concat([trials("A"), trials("B").assign(wall_time_s=lambda d: d.wall_time_s * 2)])
    t = timing_table(both).set_index(["machine", "implementation", "function"])
    assert t.loc[("A", "ide", "F01"), "mean_s"] == 1.5 and t.loc[("B", "ide", "F01"), "mean_s"] == 3.0
    # speed-ups are taken against the sequential model of the same machine
    assert t.loc[("B", "ide", "F10"), "speedup"] == t.loc[("A", "ide", "F10"), "speedup"]
    md = markdown(timing_table(both))
    assert "machine: A." in md and "machine: B." in md


def test_agreement_table_measures_paired_trials():
    from gpude.report.timing import agreement_table

    t = trials()
    t.loc[(t.implementation == "ide") & (t.function == "F10"), "best_error"] = 40.0  # sequential: 40, 41, 42
    a = agreement_table(t).set_index("function")
    assert a.loc["F01", "paired_trials"] == 3 and a.loc["F01", "max_rel_diff"] == 0.0
    assert a.loc["F10", "max_rel_diff"] == 2.0 / 42.0


def test_agreement_table_tells_cpu_and_gpu_groups_apart():
    """Two CPU implementations identical, two GPU ones identical, the groups apart on one trial."""
    from gpude.report.timing import agreement_table

    rows = [{"implementation": impl, "function": "F01", "trial": t, "machine": "M", "gpu": gpu,
             "best_error": 10.0 + t + (0.5 if gpu != "none" and t == 2 else 0.0)}
            for impl, gpu in (("sequential", "none"), ("master_slave", "none"), ("ide", "H200"), ("all_gpu", "H200"))
            for t in range(4)]
    a = agreement_table(pd.DataFrame(rows)).iloc[0]
    assert a.cpu_max_rel_diff == 0.0 and a.gpu_max_rel_diff == 0.0
    assert a.max_rel_diff == pytest.approx(0.5 / 12.5) and a.same_share == 0.75


@pytest.mark.io
def test_outputs_name_the_device_and_compare_with_the_paper(tmp_path):
    published = pd.read_csv(ROOT / "paper/published/janssen_cs1_table3.csv", comment="#")
    assert list(published.implementation) == ["sequential", "master_slave", "naive_gpu", "all_gpu", "ide"]
    assert published.loc[published.implementation == "ide", "F10"].item() == 1.85
    files = write_all(trials(), tmp_path, published)
    md = (tmp_path / "table_time.md").read_text()
    assert "NVIDIA H200" in md and "| sequential | " in md and "speed-up against `sequential`" in md
    cmp = (tmp_path / "table_time_vs_published.md").read_text()
    # ours 1.5 s on F01 against the paper's 0.63 s: ratio 2.38
    assert "| | ours / paper | 2.38 |" in cmp
    errors = pd.read_csv(tmp_path / "table_error.csv").set_index(["implementation", "function"])
    assert errors.loc[("ide", "F01"), "n"] == 3 and errors.loc[("ide", "F10"), "mean_error"] == 41.0
    assert all(p.exists() for p in files["figure"])
    assert "\\begin{tabular}" in (tmp_path / "table_time.tex").read_text()


def test_missing_cells_are_marked():
    t = timing_table(trials()[lambda d: ~((d.implementation == "ide") & (d.function == "F10"))])
    assert "| ide | 1.5 (3); " in markdown(t) and " | - (0); - |" in markdown(t)
    theirs = pd.DataFrame({"implementation": ["ide"], "F01": [3.0], "F10": [np.nan]})
    cmp = published_comparison(t, pd.DataFrame({"implementation": ["ide"], "F01": [0.75], "F10": [1.0]}),
                               {"authors' code": theirs})
    assert "| | ours / paper | 2.00 | - |" in cmp
    assert "| | authors' code (s) | 3 | - |" in cmp and "| | ours / authors' code | 0.50 | - |" in cmp


@pytest.mark.io
def test_traces_thin_merge_and_step_between_generations(tmp_path):
    import subprocess
    import sys

    from gpude.report.convergence import _best_at, figures
    from gpude.report.sources import load_sources

    batches = []
    for first in (0, 2):
        csv = tmp_path / f"b{first}.csv"
        res = subprocess.run([sys.executable, "-m", "gpude", "run", "--implementation", "sequential",
                              "--function", "Q01", "--dim", "10", "--popsize", "8", "--max-fes", "60",
                              "--trials", "2", "--first-trial", str(first), "--out-csv", str(csv),
                              "--out-traces", str(csv.with_suffix(".npz"))],
                             capture_output=True, text=True, timeout=300)
        assert res.returncode == 0, res.stderr
        batches.append(str(csv))
    merged = tmp_path / "merged" / "trials.csv"
    res = subprocess.run([sys.executable, "-m", "gpude", "merge", "--out", str(merged), "--traces-out",
                          str(merged.with_name("traces.npz")), *batches], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    trials, traces = load_sources([merged])
    assert len(traces) == 4 and set(trials.trial) == {0, 1, 2, 3}
    for row in trials.to_dict("records"):
        tr = traces[(str(merged), row["run_id"])]
        # thinned: the first point, every drop of >= 0.01 decades, the last point (60 FEs)
        assert tr["fes"][0] == 8 and tr["fes"][-1] == 60 and tr["best_error"][-1] == row["best_error"]
        assert np.all(np.diff(tr["best_error"]) <= 0)
        # between records the best error is the last recorded one
        np.testing.assert_array_equal(_best_at(tr, np.array([8.0, 1000.0])), tr["best_error"][[0, -1]])
    # every trace is a view of one decompressed array per quantity (np.load's z[k] decompresses the
    # whole array on each access: case study 2's 2400 traces once took 15 GB that way)
    assert len({id(t["fes"].base) for t in traces.values()}) == 1
    paths = figures(trials, traces, tmp_path / "fig")
    assert {p.name for p in paths} == {f"{k}.png" for k in ("convergence", "convergence_time", "ecdf")}

    # a merged table takes more cells later: merge it with new batches, each trace stays its own
    extra = tmp_path / "b_q02.csv"
    res = subprocess.run([sys.executable, "-m", "gpude", "run", "--implementation", "sequential",
                          "--function", "Q02", "--dim", "10", "--popsize", "8", "--max-fes", "40",
                          "--trials", "2", "--out-csv", str(extra), "--out-traces", str(extra.with_suffix(".npz"))],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    grown = tmp_path / "grown" / "trials.csv"
    res = subprocess.run([sys.executable, "-m", "gpude", "merge", "--out", str(grown), "--traces-out",
                          str(grown.with_name("traces.npz")), str(merged), str(extra)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    trials2, traces2 = load_sources([grown])
    assert len(trials2) == len(traces2) == 6 and set(trials2.function) == {"Q01", "Q02"}
    for row in trials2.to_dict("records"):
        tr = traces2[(str(grown), row["run_id"])]
        assert tr["best_error"][-1] == row["best_error"] and tr["fes"][-1] == row["fes_used"]
        if row["function"] == "Q01":
            np.testing.assert_array_equal(tr["best_error"], traces[(str(merged), row["run_id"])]["best_error"])
    # an input without traces beside it is named
    lone = tmp_path / "lone" / "trials.csv"
    lone.parent.mkdir()
    lone.write_text(extra.read_text())
    res = subprocess.run([sys.executable, "-m", "gpude", "merge", "--out", str(tmp_path / "x.csv"),
                          "--traces-out", str(tmp_path / "x.npz"), str(lone)], capture_output=True, text=True)
    assert res.returncode != 0 and "no traces for" in res.stderr and str(lone) in res.stderr
    assert not (tmp_path / "x.csv").exists()


def test_thin_trace_keeps_every_drop_of_a_hundredth_decade():
    from gpude.run.rows import thin_trace

    best = np.array([100.0, 99.0, 97.0, 97.0, 50.0, 49.9, 10.0, 10.0, 10.0])
    t = thin_trace({"fes": np.arange(9) * 10, "best_error": best})
    # 99 is 0.0044 decades below 100 (dropped); 97 is 0.013 below (kept); 49.9 is 0.0009 below 50
    assert list(t["best_error"]) == [100.0, 97.0, 50.0, 10.0, 10.0]
    assert list(t["fes"]) == [0, 20, 40, 60, 80]


def test_atomic_writes_leave_no_temporary_file_and_a_normal_mode(tmp_path):
    import os

    from gpude.core.io import write_atomic

    old = os.umask(0o022)
    try:
        path = write_atomic(tmp_path / "sub" / "a.txt", "x")
    finally:
        os.umask(old)
    assert path.read_text() == "x" and (path.stat().st_mode & 0o777) == 0o644
    assert [p.name for p in path.parent.iterdir()] == ["a.txt"]


def shared_names(popsizes=(125,)):
    """pso/gpu and ss/gpu (one implementation name, two algorithms) beside de/two_kernel, with traces."""
    rows, traces = [], {}
    for algorithm, impl in (("de", "two_kernel"), ("pso", "gpu"), ("ss", "gpu")):
        for popsize in popsizes:
            for t in range(2):
                run_id = f"{algorithm}/{impl}/{popsize}/{t}"
                rows.append({"run_id": run_id, "source": "x", "algorithm": algorithm, "implementation": impl,
                             "function": "N09", "dim": 10, "popsize": popsize, "dtype": "float64", "trial": t,
                             "machine": "m", "wall_time_s": 1.0 + t, "best_error": 2.0 + t, "hit_target": False,
                             "fes_used": 100, "target_error": 0.0})
                traces[("x", run_id)] = {"fes": np.array([10, 100]), "time_s": np.array([0.1, 1.0]),
                                         "best_error": np.array([5.0, 2.0 + t])}
    return pd.DataFrame(rows), traces


def test_two_algorithms_sharing_an_implementation_name_get_distinct_labels(tmp_path, monkeypatch):
    # Nashed et al.: pso/gpu and ss/gpu are "gpu" both; every figure and table labels them apart
    from gpude.report import convergence, scaling, scatter
    from gpude.report.scaling import cell_table, time_vs_popsize
    from gpude.report.timing import agreement_table, error_table, provenance_table

    legends = []

    def save_figure(fig, stem, **kwargs):
        legends.append({t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()})
        return []

    for module in (convergence, scaling, scatter):
        monkeypatch.setattr(module, "save_figure", save_figure)
    t, traces = shared_names()  # de's two_kernel is the only one of its name: it keeps no prefix
    assert {x["implementation"] for x in convergence.trial_traces(t, traces)} == {"two_kernel", "pso/gpu", "ss/gpu"}
    convergence.figures(t, traces, tmp_path)
    scatter.error_vs_time(t, tmp_path)
    assert legends == [{"two_kernel", "pso/gpu", "ss/gpu"}] * 4  # convergence (FEs, time), ECDF, scatter
    legends.clear()
    t2, _ = shared_names(popsizes=(50, 100))  # two NP each: the time-vs-NP figure is drawn
    time_vs_popsize(cell_table(t2), tmp_path)
    assert legends == [{"two_kernel", "pso/gpu", "ss/gpu"}]
    for table in (timing_table(t), error_table(t), provenance_table(t)):
        assert set(table["implementation"].astype(str)) == {"two_kernel", "pso/gpu", "ss/gpu"}
        assert (table.groupby("implementation", observed=True).size() == 1).all()  # none merged
    assert agreement_table(t)["implementations"].tolist() == [3]
    wide = timing_table(t).pivot(index="function", columns="implementation", values="mean_s")
    assert set(wide.columns.astype(str)) == {"two_kernel", "pso/gpu", "ss/gpu"}  # the table's columns
    # one algorithm, or labels that already name it (gpude paper's competitors): unchanged
    one = t[t["algorithm"] != "ss"]
    assert set(timing_table(one)["implementation"].astype(str)) == {"two_kernel", "gpu"}
    from gpude.stats.tables import with_competitors

    labelled = with_competitors(t).assign(implementation=lambda d: d["competitor"])
    assert set(timing_table(labelled)["implementation"].astype(str)) == {"de/two_kernel", "pso/gpu", "ss/gpu"}


def test_a_cells_times_are_those_of_its_runs_timed_alone_where_it_has_any():
    t = trials().assign(concurrency="exclusive")
    seq = t.implementation == "sequential"
    t.loc[seq, "concurrency"] = "shared:15"
    t.loc[seq & (t.function == "F01") & (t.trial == 2), "concurrency"] = "exclusive-cpu:4"
    table = timing_table(t).set_index(["implementation", "function"])
    assert table.loc[("sequential", "F01"), "n"] == 1 and table.loc[("sequential", "F01"), "mean_s"] == 52.0
    assert table.loc[("sequential", "F01"), "timed"] == "alone"
    assert table.loc[("sequential", "F10"), "n"] == 3 and table.loc[("sequential", "F10"), "timed"] == "shared:15"
    assert table.loc[("ide", "F01"), "speedup"] == 52.0 / 1.5
    md = markdown(timing_table(t))
    assert "Not timed alone" in md and "sequential on F10 (shared:15)" in md
    assert "Not timed alone" not in markdown(timing_table(trials()))


def test_a_references_guest_rows_join_its_machine_without_their_times(tmp_path):
    """Rows made on another host of the reference's GPU (a CPU run's: any host) whose times did not count
    there either (several per launch, or side by side) join the reference machine's cells with no time;
    a row of another machine timed alone stays that machine's."""
    from gpude.report.sources import load_sources

    base = dict(algorithm="de", function="F01", dim=10, popsize=20, dtype="float32", best_error=1.0,
                hit_target=False, host="vm", cpu="Xeon", status="budget", params="{}")
    rows = [dict(base, implementation="ide", trial=0, gpu="H200", cpu_cores=16, concurrency="exclusive",
                 wall_time_s=2.0),
            dict(base, implementation="ide", trial=1, gpu="H200", cpu_cores=64, concurrency="exclusive-gpu:4",
                 wall_time_s=9.0, params='{"trials_per_launch": 10}'),  # a batched share: a guest
            dict(base, implementation="sequential", trial=0, gpu="none", cpu_cores=16, concurrency="exclusive",
                 wall_time_s=50.0),
            dict(base, implementation="sequential", trial=1, gpu="none", cpu_cores=64, concurrency="shared:60",
                 wall_time_s=120.0),  # side by side on another host of the CPU model: a guest
            dict(base, implementation="sequential", trial=2, gpu="none", cpu="EPYC", cpu_cores=64,
                 concurrency="shared:60", wall_time_s=80.0),  # another CPU model, side by side: a guest
            dict(base, implementation="ide", trial=2, gpu="H100", cpu_cores=32, concurrency="exclusive",
                 wall_time_s=3.0)]  # another machine timed alone: its own
    path = tmp_path / "trials.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    trials, _ = load_sources([path])
    home = "H200 / Xeon x16"
    assert list(trials["machine"]) == [home, home, home, home, home, "H100 / Xeon x32"]
    assert list(trials["made_on"].fillna("")) == ["", "H200 / Xeon x64", "", "H200 / Xeon x64", "EPYC x64", ""]
    assert trials["wall_time_s"].isna().tolist() == [False, True, False, True, True, False]
    table = timing_table(trials)
    ide = table[(table.machine == home) & (table.implementation == "ide")].iloc[0]
    assert (ide.n, ide.mean_s) == (1, 2.0)


def test_a_study_that_compares_each_host_as_measured_keeps_its_guest_rows_times(tmp_path):
    """The side by side reports a batched share (n runs a launch) as its own column, per host: a launch of
    132 runs made on another host of the reference's GPU keeps its times there, and counts as run, not
    as failed (``join_guests = False``); every other study joins such rows to its machine untimed."""
    from gpude.report.document import section_class
    from gpude.report.side_by_side import side_by_side_table
    from gpude.report.sources import load_sources

    base = dict(algorithm="de", function="F01", dim=100, popsize=250, dtype="float32", best_error=1.0,
                hit_target=False, host="vm", cpu="Xeon", gpu="H100", status="budget")
    rows = [dict(base, implementation=impl, trial=k, cpu_cores=32, concurrency="exclusive", wall_time_s=w,
                 params="{}") for k in range(3) for impl, w in (("authors_ide", 0.8), ("ide", 0.7))]
    rows += [dict(base, implementation="block_x132", trial=k, cpu_cores=16, concurrency="exclusive",
                  wall_time_s=0.05, params='{"trials_per_launch": 132}') for k in range(132)]
    path = tmp_path / "trials.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    assert section_class("side_by_side").join_guests is False and section_class("janssen_cs1").join_guests
    joined, _ = load_sources([path])
    assert joined.loc[joined.implementation == "block_x132", "wall_time_s"].isna().all()  # a guest, untimed
    trials, _ = load_sources([path], join_guests=False)
    table = side_by_side_table(trials)
    block = table[table.implementation == "block_x132"].iloc[0]
    assert (block.n, block.failed, block.mean_s) == (132, 0, pytest.approx(0.05))
    assert block.device == "H100 / Xeon x16" and set(table.device) == {"H100 / Xeon x16", "H100 / Xeon x32"}


def test_figures_are_png_unless_more_formats_are_asked_for(tmp_path, monkeypatch):
    """PNG by default (what the REPORT shows); ``--figure-formats png,pdf`` adds the PDF of every
    figure; a list without PNG, or an unknown format, is refused with the formats it takes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from gpude.core import io
    from gpude.core.errors import InvalidInputError

    monkeypatch.setattr(io, "FIGURE_FORMATS", ["png"])
    fig, _ = plt.subplots(figsize=(1, 1))
    assert [p.name for p in io.save_figure(fig, tmp_path / "a")] == ["a.png"]
    io.set_figure_formats(["png", " PDF", "png"])
    assert [p.name for p in io.save_figure(fig, tmp_path / "b")] == ["b.png", "b.pdf"]
    for bad in (["pdf"], ["png", "jpeg"], []):
        with pytest.raises(InvalidInputError, match="give png and any of pdf, svg"):
            io.set_figure_formats(bad)
    assert io.FIGURE_FORMATS == ["png", "pdf"]  # a refused list changes nothing
    plt.close(fig)
