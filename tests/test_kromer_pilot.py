"""benchmarks/kromer_pilot.py and kromer_pilot_summary.py: the stage plans fit a 16-core host's 9
minutes; a tiny pilot writes complete runs only, survives a kill and resumes without repeating a run;
readouts at CPU times and at the GPU's FEs; the summary's choices on hand-made rows whose answer is
known."""

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))  # also for the pilot's spawned workers (they inherit sys.path)

import kromer_pilot as pilot  # noqa: E402
import kromer_pilot_summary as summary  # noqa: E402

WAVE2 = ROOT.parent / "shared" / "wave2"
needs_wave2 = pytest.mark.skipif(not WAVE2.is_dir(), reason="needs ../shared/wave2 (the offline instance copy)")
HOST_SECONDS = 540  # a stage must end within 9 minutes of a 10-minute command on the 16-core GPU host


# --- plans ------------------------------------------------------------------------------------------

def test_every_stage_fits_the_host_and_matches_the_docstring(capsys):
    """The sizes the docstring's table gives, and each stage's estimated wall time on 16 cores within
    the host's 9 minutes (dependent stages sized with placeholder picks, as --dry-run does)."""
    ctx = pilot.Context(pd.DataFrame(), placeholders=True)
    expected = {"etc-cr": 216, "etc-f": 192, "etc-np": 48, "lop-cr": 648, "lop-f": 576, "rastrigin": 216}
    seen = set()
    for name, (plan, _) in pilot.STAGES.items():
        specs = plan(ctx)
        assert len(specs) == expected[name], name
        assert len({s.key() for s in specs}) == len(specs), f"{name} plans a run twice"
        new = pilot.pending(specs, set(), seen)
        _, wall = pilot.estimate(new, 16)
        assert wall <= HOST_SECONDS, f"{name}: {wall:.0f} s on 16 cores"
    # the F stages reuse the CR stages' F = 0.5 runs (144 and 432 new runs, as the docstring says)
    assert pilot.main(["--stage", "all", "--dry-run", "--out", "/nonexistent"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"etc-f +192 runs, +48 done or in an earlier stage, +144 to run", out)
    assert re.search(r"lop-f +576 runs, +144 done or in an earlier stage, +432 to run", out)


def test_a_dependent_stage_needs_its_earlier_stage_or_an_override():
    with pytest.raises(pilot.PlanError, match="run --stage etc-cr first, or give --CR"):
        pilot.plan_etc_f(pilot.Context(pd.DataFrame()))
    with pytest.raises(pilot.PlanError, match="give --F and --CR"):
        pilot.plan_etc_np(pilot.Context(pd.DataFrame()))
    specs = pilot.plan_lop_f(pilot.Context(pd.DataFrame(), CR=(0.02,), F=(0.7,), seeds=(4,)))
    assert {(s.F, s.CR, s.seed) for s in specs} == {(0.7, 0.02, 4)} and len(specs) == len(pilot.LOP_MATRICES)
    # etc-np runs until the FEs the H200's GPU makes in 30 s, read from the committed reference
    np_specs = pilot.plan_etc_np(pilot.Context(pd.DataFrame(), F=(0.5,), CR=(0.01,), seeds=(1,)))
    for s in np_specs:
        rate = pilot.gpu_fes_per_s("etc", s.instance, s.dim, s.popsize)
        assert s.max_fes == int(np.ceil(rate * 30)) + s.popsize and s.max_time_s == 180


# --- readouts -----------------------------------------------------------------------------------------

class FakeResult:
    """What readout_rows reads of a TrialResult."""

    def __init__(self, times, fes, best, stopped_by, gens=None):
        self.trace = {"time_s": np.array(times, float), "fes": np.array(fes), "best_error": np.array(best, float),
                      "generation": np.array(gens if gens is not None else range(len(times)))}
        self.best_error, self.fes_used, self.generations = float(best[-1]), int(fes[-1]), len(times) - 1
        self.wall_time_s, self.stopped_by = float(times[-1]), stopped_by


def spec(**kw):
    base = dict(stage="s", problem="rastrigin", instance="N09", dim=8, popsize=10, F=0.5, CR=0.1, seed=1,
                max_time_s=3.0, max_fes=10**9, readout_s=(1.0, 3.0), gpu_fes_per_s=20.0)
    return pilot.RunSpec(**{**base, **kw})


def test_readouts_at_cpu_times_and_at_the_gpus_fes():
    r = FakeResult([0.0, 0.9, 1.5, 2.5, 3.01], [10, 20, 30, 40, 50], [9, 7, 5, 4, 3], "time")
    rows = {(x["readout"], x["at_s"]): x for x in pilot.readout_rows(spec(), r, 0.1, 2)}
    assert rows[("cpu_time", 1.0)]["best_error"] == 7 and rows[("cpu_time", 1.0)]["at_fes"] == 20
    # at the budget: the final best (the last generation ends just past it), as the REPORT reads it
    assert rows[("cpu_time", 3.0)]["best_error"] == 3 and rows[("cpu_time", 3.0)]["at_generation"] == 4
    # the GPU makes 20 FEs per s: 20 FEs at 1 s, 60 at 3 s, which this run never made
    assert rows[("gpu_fes", 1.0)]["best_error"] == 7 and rows[("gpu_fes", 1.0)]["at_time_s"] == 0.9
    assert not rows[("gpu_fes", 3.0)]["reached"] and np.isnan(rows[("gpu_fes", 3.0)]["best_error"])
    # a run stopped on its FE cap before t never had t seconds; one at the optimum keeps 0
    capped = FakeResult([0.0, 0.9, 1.5], [10, 20, 30], [9, 7, 5], "budget")
    rows = {(x["readout"], x["at_s"]): x for x in pilot.readout_rows(spec(max_fes=30), capped, 0.1, 1)}
    assert rows[("cpu_time", 1.0)]["reached"] and not rows[("cpu_time", 3.0)]["reached"]
    solved = FakeResult([0.0, 0.5], [10, 20], [4, 0], "target")
    rows = {(x["readout"], x["at_s"]): x for x in pilot.readout_rows(spec(), solved, 0.1, 1)}
    assert all(x["reached"] and x["best_error"] == 0 for k, x in rows.items() if k[1] == 3.0)
    assert pilot.readout_rows(spec(gpu_fes_per_s=None), r, 0.1, 1)[-1]["readout"] == "cpu_time"


@needs_wave2
def test_lop_and_etc_runs_report_the_reports_measures(monkeypatch, tmp_path):
    """A real LOP and ETC run (0.2 s, in this process): LOP's error %, ETC's fit; and the instance
    files the stages need can be copied into a carried folder and used from there."""
    assert pilot.main(["--stage", "etc-np,lop-cr", "--copy-instances", str(tmp_path / "carry"),
                       "--instance-data", str(WAVE2)]) == 0
    assert len([p for p in (tmp_path / "carry").rglob("*") if p.is_file()]) == 6 + 24
    # or one archive, which --instance-data unpacks
    assert pilot.main(["--stage", "etc-np", "--copy-instances", str(tmp_path / "i.tgz"), "--instance-data", str(WAVE2)]) == 0
    with pilot.instance_folder(tmp_path / "i.tgz") as folder:
        assert sorted(p.name for p in Path(folder, "etc").iterdir()) == sorted(
            pilot.instance_file_of("etc", m)[1] for m in pilot.ETC_NP_MATRICES)
    assert not Path(folder).exists()
    monkeypatch.setenv("GPUDE_INSTANCE_DATA", str(tmp_path / "carry"))
    ctx = pilot.Context(pd.DataFrame(), F=(0.5,), CR=(0.1,), seeds=(1,), time_scale=0.02)
    lop = next(s for s in pilot.plan_lop_cr(ctx) if s.instance == "N-t65f11xx")
    etc = next(s for s in pilot.plan_etc_np(ctx) if s.instance == "TlMlCi" and s.popsize == 512)
    pilot.check_instances([lop, etc])
    from gpude.problems.lop import optima

    for s in (lop, etc):
        rows = pilot.execute(s, 1)
        cpu = [r for r in rows if r["readout"] == "cpu_time" and r["reached"]]
        values = [r["best_error"] for r in cpu]
        assert values and values == sorted(values, reverse=True) and values[-1] >= cpu[-1]["run_best_error"] > 0
        # (etc-np's FE cap may end a run before its last CPU time: not reached, then)
        assert len(cpu) == len(s.readout_s) or s is etc
        gpu = [r for r in rows if r["readout"] == "gpu_fes"]
        assert gpu and all(r["at_fes"] == round(s.gpu_fes_per_s * r["at_s"]) for r in gpu)
    # LOP: the REPORT's error % (of an integer gap to the proven optimum), at the budget the run's own
    final = [r for r in pilot.execute(lop, 1) if r["readout"] == "cpu_time"][-1]
    gap = final["run_best_error"] * optima()["optimum"]["N-t65f11xx"] / 100
    assert final["best_error"] == final["run_best_error"] and gap == pytest.approx(round(gap), abs=1e-6)
    # ETC (etc-np: an FE cap at the FEs the H200 GPU makes in 30 s): the fit, and the GPU's readout
    assert etc.max_fes < 10**9 and gpu[-1]["at_fes"] <= etc.max_fes


# --- the pilot: complete runs only, a kill, a resume ------------------------------------------------

def read_runs(path):
    t = pd.read_csv(path)
    return t.groupby(["dim", "F", "CR", "seed"]).size()


def test_a_killed_pilot_leaves_complete_runs_and_the_next_call_finishes_without_repeats(tmp_path):
    out = tmp_path / "pilot"
    args = ["--stage", "rastrigin", "--F", "0.5", "--CR", "0.05,0.9", "--seeds", "1", "--time-scale", "0.02",
            "--jobs", "2", "--out", str(out)]
    csv = out / "rastrigin.csv.gz"
    proc = subprocess.Popen([sys.executable, str(ROOT / "benchmarks" / "kromer_pilot.py"), *args],
                            start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not csv.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the pilot and the workers it spawned, mid-stage
        proc.wait()
    # every run written has its 4 readouts: CPU 0.0128 s and 0.54 s, the GPU's FEs in those times
    runs = read_runs(csv)
    assert len(runs) >= 1 and (runs == 4).all()
    assert pilot.main(args) == 0
    runs = read_runs(csv)
    assert len(runs) == 6 and (runs == 4).all()  # 3 D x 2 CR, each once
    t = pd.read_csv(csv)
    assert set(zip(t["readout"], t["at_s"])) == {(r, s) for r in ("cpu_time", "gpu_fes") for s in (0.0128, 0.54)}
    # at the budget every run has its value (at 0.0128 s a loaded machine may not have finished the
    # first population: not reached then)
    assert t.loc[(t["readout"] == "cpu_time") & (t["at_s"] == 0.54), "reached"].all()
    assert {"host", "cpu", "cpu_cores", "boot_id", "git_commit", "numba", "timestamp_utc"} <= set(t.columns)
    assert (t["jobs"] <= 2).all() and t["concurrency"].str.contains("runs at once on").all()
    before = csv.read_bytes()
    assert pilot.main(args) == 0 and csv.read_bytes() == before  # nothing new to run


def test_a_failed_write_keeps_the_previous_file(tmp_path, monkeypatch):
    writer = pilot.StageWriter(tmp_path, {})
    row = {"problem": "rastrigin", "instance": "N09", "dim": 8, "popsize": 8, "F": 0.5, "CR": 0.1, "seed": 1,
           "max_time_s": 1.0, "max_fes": 100, "readout": "cpu_time", "at_s": 1.0, "runs_in_flight": 1}
    writer.add("s", [dict(row)], 1)
    writer.flush()
    before = (tmp_path / "s.csv.gz").read_bytes()

    def fail(*_):
        raise OSError("killed while writing")
    monkeypatch.setattr(os, "replace", fail)
    writer.add("s", [dict(row, seed=2)], 1)
    with pytest.raises(OSError):
        writer.flush()
    assert (tmp_path / "s.csv.gz").read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["s.csv.gz"]
    assert pilot.done_keys(pilot.read_stage_files(tmp_path)) == {pilot.run_key("rastrigin", "N09", 8, 8, 0.5, 0.1, 1, 1.0, 100)}


# --- the summary --------------------------------------------------------------------------------------

def hand_made_rows():
    """ETC at NP 64 and LOP at NP 256, CPU time at the budget, with known answers:

    * ETC: (0.5, 0.01) is best on consistent and semi-consistent matrices, (0.5, 0.005) on
      inconsistent ones, by 2x; (0.7, 0.01) ran on the inconsistent ones only (not a common
      candidate); (0.9, 0.001) is best on consistent ones but misses a seed there (incomplete);
    * LOP: (0.5, 0.01) and (0.9, 0.01) have the same median (0) and mean on LOLIB: the tie goes to
      F 0.5; on N-LOLIB (0.5, 0.01) has median 0 and mean 0.2, (0.5, 0.05) median 0 and mean 0.1: the
      lower mean wins there; the common choice, (0.5, 0.01), still serves N-LOLIB (equal medians)."""
    paper = summary.paper_gpu_fit_np64()
    consistency = summary.etc_consistency()
    rows = []

    def add(problem, instance, popsize, F, CR, seed, value, at_s):
        best = value * paper[instance] if problem == "etc" else value
        rows.append({"problem": problem, "instance": instance, "dim": 512 if problem == "etc" else 50,
                     "popsize": popsize, "F": F, "CR": CR, "seed": seed, "max_time_s": at_s, "max_fes": 10**9,
                     "readout": "cpu_time", "at_s": at_s, "reached": True, "best_error": best, "jobs": 16,
                     "cpu": "test cpu", "cpu_cores": 16, "boot_id": "boot-1", "git_commit": "abc"})

    etc_value = {"consistent": {(0.5, 0.1): 2.0, (0.5, 0.01): 1.0, (0.5, 0.005): 1.2, (0.9, 0.001): 0.5},
                 "inconsistent": {(0.5, 0.1): 5.0, (0.5, 0.01): 2.0, (0.5, 0.005): 1.0, (0.7, 0.01): 3.0},
                 "semi-consistent": {(0.5, 0.1): 3.0, (0.5, 0.01): 1.0, (0.5, 0.005): 1.5}}
    for m, cls in consistency.items():
        for (F, CR), v in etc_value[cls].items():
            for seed in (1, 2):
                if (F, CR) == (0.9, 0.001) and seed == 2 and m == "ThMhCc":
                    continue
                add("etc", m, 64, F, CR, seed, v * (1 + 0.01 * seed), 30.0)
    for m in ("be75eec", "be75np"):
        for (F, CR), values in {(0.5, 0.1): (0.3, 0.3), (0.5, 0.01): (0.0, 0.02), (0.9, 0.01): (0.0, 0.02),
                                (0.5, 0.05): (0.0, 0.5)}.items():
            for seed, v in zip((1, 2, 3), (*values, 0.0)):
                add("lop", m, 256, F, CR, seed, v, 10.0)
    for m in ("N-be75eec", "N-be75np"):
        for (F, CR), values in {(0.5, 0.1): (0.3, 0.3), (0.5, 0.01): (0.0, 0.6), (0.9, 0.01): (0.0, 0.9),
                                (0.5, 0.05): (0.0, 0.3)}.items():
            for seed, v in zip((1, 2, 3), (*values, 0.0)):
                add("lop", m, 256, F, CR, seed, v, 10.0)
    return pd.DataFrame(rows)


def test_summary_choices_on_hand_made_rows(tmp_path):
    hand_made_rows().to_csv(tmp_path / "hand.csv", index=False)
    marked, verdict = summary.summarise(tmp_path)
    v = verdict.set_index(["problem", "class"])
    choice = {k: (r["choice_F"], r["choice_CR"]) for k, r in v.iterrows()}
    assert choice[("etc", "ETC consistent")] == (0.5, 0.01)  # (0.9, 0.001) is better but incomplete
    assert choice[("etc", "ETC inconsistent")] == (0.5, 0.005)
    assert choice[("etc", "ETC semi-consistent")] == (0.5, 0.01)
    assert choice[("lop", "LOLIB")] == (0.5, 0.01)  # same median and mean as (0.9, 0.01): F nearer 0.5
    assert choice[("lop", "N-LOLIB")] == (0.5, 0.05)  # median 0 for three: the lowest mean
    etc = v.loc["etc"]
    assert set(zip(etc["common_F"], etc["common_CR"])) == {(0.5, 0.01)}
    assert not etc.loc["ETC inconsistent", "served"] and etc.loc["ETC consistent", "served"]
    # the inconsistent class's own choice beats the common one by 2x (medians 2.0 x 1.015 vs 1.0 x 1.015)
    assert etc.loc["ETC inconsistent", "class_gain"] == pytest.approx(2.0)
    assert etc.loc["ETC inconsistent", "protocol_median"] == pytest.approx(5.0 * 1.015)
    # and on every one of its 4 matrices x 2 seeds
    assert etc.loc["ETC inconsistent", ["wins_vs_common", "wins_vs_protocol"]].tolist() == ["8/8", "8/8"]
    assert etc.loc["ETC consistent", "wins_vs_common"] == "-"
    lop = v.loc["lop"]
    # LOP: mean ranks by (median, mean): (0.5, 0.01) (1.5 + 2) / 2 beats (0.5, 0.05) (3 + 1) / 2
    assert set(zip(lop["common_F"], lop["common_CR"])) == {(0.5, 0.01)} and lop["served"].all()
    assert marked.loc[marked["class_choice"], "class"].nunique() == 5 and marked["complete"].sum() == len(marked) - 1
    md = (tmp_path / "SUMMARY.md").read_text()
    assert "ETC inconsistent" in md and "does not serve ETC inconsistent" in md and "2x" in md
    first = md, (tmp_path / "SUMMARY.csv").read_bytes()
    summary.summarise(tmp_path)
    assert ((tmp_path / "SUMMARY.md").read_text(), (tmp_path / "SUMMARY.csv").read_bytes()) == first  # deterministic


def test_later_stages_plan_from_the_summarys_picks():
    rows = summary.add_measure(hand_made_rows())
    assert summary.best_crs(rows, "etc", 64, "cpu_time", 30.0, F=0.5) == {
        "ETC consistent": [0.01, 0.005], "ETC inconsistent": [0.005, 0.01], "ETC semi-consistent": [0.01, 0.005]}
    specs = pilot.plan_etc_f(pilot.Context(rows))
    picked = {(s.instance, s.CR) for s in specs}
    assert ("ThMhCi", 0.005) in picked and ("ThMhCc", 0.1) not in picked
    assert {s.F for s in specs} == set(pilot.F_GRID) and len(specs) == 12 * 2 * 4 * 2
    assert {(s.F, s.CR) for s in pilot.plan_etc_np(pilot.Context(rows))} == {(0.5, 0.1), (0.5, 0.01)}
