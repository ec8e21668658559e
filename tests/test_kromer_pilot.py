"""The Krömer parameter pilot as experiments (issue 38): the parameter grid of the workflow (a list of
values for an algorithm's parameter is a grid axis), the pilot's stages as experiment files with the
same runs as the pilot's committed stage files, and its summary (gpude.report.kromer_pilot) from
readout rows and from a tiny workflow table with traces."""

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from gpude.report import kromer_pilot as pilot

ROOT = Path(__file__).resolve().parents[1]
PILOT_DIR = ROOT / "results" / "benchmarks" / "kromer_pilot"
#: pilot stage -> its experiment files
STAGES = {"etc-cr": ["etc_cr"], "etc-f": ["etc_f_consistent", "etc_f_inconsistent", "etc_f_semiconsistent"],
          "etc-np": ["etc_np512", "etc_np1024"], "lop-cr": ["lop_cr"], "lop-f": ["lop_f_lolib", "lop_f_nlolib"],
          "rastrigin": ["rastrigin"]}


def settings(spec):
    """(F, CR) of every setting of an experiment's DE (the grid axes' product)."""
    de = spec["algorithms"]["de"]
    Fs = de["F"] if isinstance(de["F"], list) else [de["F"]]
    CRs = de["CR"] if isinstance(de["CR"], list) else [de["CR"]]
    return [(F, CR) for F in Fs for CR in CRs]


def test_the_experiments_name_the_pilots_runs():
    """Each stage's experiment files make the runs of the pilot's committed stage file: the same
    (instance, NP, F, CR) cells, the same number of runs per cell, budget and FE cap."""
    from gpude.problems.instances import catalog

    for stage, names in STAGES.items():
        legacy = pd.read_csv(PILOT_DIR / f"{stage}.csv.gz", usecols=["instance", "dim", "popsize", "F", "CR", "seed",
                                                                     "max_time_s", "max_fes"])
        legacy = legacy.drop_duplicates()
        ran = {(i, int(d), int(p), round(F, 9), round(CR, 9), float(t), int(m)): 0
               for i, d, p, F, CR, t, m in zip(legacy["instance"], legacy["dim"], legacy["popsize"], legacy["F"],
                                               legacy["CR"], legacy["max_time_s"], legacy["max_fes"])}
        for key in zip(legacy["instance"], legacy["dim"], legacy["popsize"], legacy["F"].round(9),
                       legacy["CR"].round(9), legacy["max_time_s"].astype(float), legacy["max_fes"]):
            ran[key] += 1
        planned = {}
        for name in names:
            spec = yaml.safe_load((ROOT / f"config/experiments/kromer_pilot_{name}.yaml").read_text())
            assert spec["name"] == f"kromer_pilot_{name}" and spec["report"]["section"] == "kromer_pilot"
            assert spec["algorithms"]["de"]["implementations"] == ["sequential"] and spec["target"] == 0
            for function in spec["functions"]:
                dims = [catalog("etc").get(function) or catalog("lop")[function]] if spec["dims"] == ["instance"] \
                    else spec["dims"]
                for dim in dims:
                    for popsize in spec["algorithms"]["de"]["popsizes"]:
                        for F, CR in settings(spec):
                            key = (function, int(dim), popsize, F, CR, float(spec["max_time_s"]), spec["max_fes"])
                            planned[key] = planned.get(key, 0) + spec["trials"]
        assert planned == ran, stage


def test_the_schema_takes_a_list_of_values_as_a_grid_axis():
    from jsonschema import Draft202012Validator

    schema = yaml.safe_load((ROOT / "workflow/schemas/experiment.schema.yaml").read_text())
    check = Draft202012Validator(schema)
    base = {"name": "g", "functions": ["F01"], "dims": [10], "max_fes": 100}

    def errors(de):
        return list(check.iter_errors({**base, "algorithms": {"de": {"implementations": ["sequential"], **de}}}))

    assert not errors({"F": [0.3, 0.5], "CR": [0.01, 0.1]}) and not errors({"F": 0.5, "CR": 0.1})
    assert not errors({"CR": [0.1], "tau1": [0.1, 0.2]})
    assert errors({"F": [0.5, -1.0]}) and errors({"CR": [0.5, 2.0]}) and errors({"CR": []})
    assert errors({"F": [0.5, 0.5]}) and errors({"CR": [[0.1]]})  # a value twice; a list of lists


#: the ten stage files, as the workflow's folder names them
PILOT_FILES = sorted(f"config/experiments/kromer_pilot_{n}.yaml" for files in STAGES.values() for n in files)
ETC_F_CONSISTENT = "config/experiments/kromer_pilot_etc_f_consistent.yaml"


def test_the_pilot_experiments_parse_without_gpu_and_dry_run_one_batch_per_setting(tmp_path):
    """The ten stage files through Snakemake's parse, with no GPU (no simulator, no visible GPU), as on a
    laptop, all in one process (tests/_parse_experiments.py; one `snakemake -n` each would cost ~3 s
    apiece). The etc-f one of the consistent matrices on to its dry run (`snakemake -n -p`'s): 4 matrices
    x 3 F x 2 CR, one batch of 2 trials each; each batch's setting in its path and run_ids (--setting),
    its F and CR on the command line."""
    import os

    from test_workflow import copy_workflow

    work = copy_workflow(tmp_path)
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "0", "CUDA_VISIBLE_DEVICES": ""}
    others = [name for name in PILOT_FILES if name != ETC_F_CONSISTENT]
    res = subprocess.run([sys.executable, str(ROOT / "tests/_parse_experiments.py"), "parsed.json", *others,
                          "--dry-run", ETC_F_CONSISTENT], cwd=work, capture_output=True, text=True, timeout=600,
                         env=env)
    assert res.returncode == 0, res.stderr[-2000:]
    parsed = json.loads((work / "parsed.json").read_text())
    assert {name: run["error"] for name, run in parsed.items()} == {name: None for name in PILOT_FILES}
    assert sorted(p.name for p in (ROOT / "config/experiments").glob("kromer_pilot_*.yaml")) == \
        sorted(Path(n).name for n in PILOT_FILES)

    from test_experiment_model import campaign_batches, dry_run_batches

    # the dry run's batches, a setting's folder each, are the campaign's plan
    assert dry_run_batches(parsed[ETC_F_CONSISTENT]["stderr"]) == campaign_batches(ROOT / ETC_F_CONSISTENT, False)
    runs = [line for line in parsed[ETC_F_CONSISTENT]["stderr"].splitlines() if "gpude run " in line]
    assert len(runs) == 4 * 3 * 2
    seen = set()
    for line in runs:
        F, CR = re.search(r"--F (\S+) --CR (\S+)", line).groups()
        setting = re.search(r"--setting (\S+)", line).group(1)
        assert setting == f"F{F}_CR{CR}" and f"/de/sequential/{setting}/" in line and "--trials 2 " in line
        seen.add((re.search(r"--function (\S+)", line).group(1), float(F), float(CR)))
    assert len(seen) == 24 and {cr for _, _, cr in seen} == {0.005, 0.01}


def test_a_run_id_names_its_setting_and_the_generic_tables_tell_settings_apart():
    from gpude.run.rows import run_id
    from gpude.stats.tables import with_competitors

    assert run_id("de", "sequential", "N09", 128, 256, "float64", 0) == "de/sequential/N09/d128/np256/float64/t0"
    assert run_id("de", "sequential", "N09", 128, 256, "float64", 0, "F0.3_CR0.01") == \
        "de/sequential/F0.3_CR0.01/N09/d128/np256/float64/t0"
    trials, _ = tiny_workflow_table()
    trials = trials.assign(algorithm="de", implementation="sequential", dtype="float64")
    assert sorted(with_competitors(trials)["competitor"].unique()) == ["F0.5_CR0.001", "F0.5_CR0.1"]
    # without a grid (a run_id of 7 parts) the competitors stay as they were
    plain = trials.assign(run_id=[f"de/sequential/N09/d128/np256/float64/t{t}" for t in trials["trial"]])
    assert set(with_competitors(plain)["competitor"]) == {"sequential"}


def hand_made_rows():
    """ETC at NP 64 and LOP at NP 256, CPU time at the budget, with known answers:

    * ETC: (0.5, 0.01) is best on consistent and semi-consistent matrices, (0.5, 0.005) on
      inconsistent ones, by 2x; (0.7, 0.01) ran on the inconsistent ones only (not a common
      candidate); (0.9, 0.001) is best on consistent ones but misses a seed there (incomplete);
    * LOP: (0.5, 0.01) and (0.9, 0.01) have the same median (0) and mean on LOLIB: the tie goes to
      F 0.5; on N-LOLIB (0.5, 0.01) has median 0 and mean 0.2, (0.5, 0.05) median 0 and mean 0.1: the
      lower mean wins there; the common choice, (0.5, 0.01), still serves N-LOLIB (equal medians)."""
    paper = pilot.paper_gpu_fit_np64()
    consistency = pilot.etc_consistency()
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
    rows = hand_made_rows()
    marked, verdict = pilot.summarise(rows, ["hand.csv"], tmp_path / "SUMMARY.md", tmp_path / "SUMMARY.csv")
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
    assert etc.loc["ETC inconsistent", ["wins_vs_common", "wins_vs_protocol"]].tolist() == ["8/8", "8/8"]
    lop = v.loc["lop"]
    assert set(zip(lop["common_F"], lop["common_CR"])) == {(0.5, 0.01)} and lop["served"].all()
    assert marked.loc[marked["class_choice"], "class"].nunique() == 5 and marked["complete"].sum() == len(marked) - 1
    md = (tmp_path / "SUMMARY.md").read_text()
    assert "does not serve ETC inconsistent" in md and "2x" in md
    first = md, (tmp_path / "SUMMARY.csv").read_bytes()
    pilot.summarise(rows, ["hand.csv"], tmp_path / "SUMMARY.md", tmp_path / "SUMMARY.csv")
    assert ((tmp_path / "SUMMARY.md").read_text(), (tmp_path / "SUMMARY.csv").read_bytes()) == first  # deterministic


def tiny_workflow_table():
    """Trials and traces as a pilot experiment's workflow outputs have them: N09 at D 128, NP 256, two
    settings x two seeds, 27 s; (0.5, 0.001) ends lower than (0.5, 0.1) on both seeds."""
    rows, traces = [], {}
    for CR, final in ((0.001, 1.0), (0.1, 100.0)):
        for trial in (0, 1):
            rid = f"de/sequential/F0.5_CR{CR}/N09/d128/np256/float64/t{trial}"
            rows.append({"run_id": rid, "function": "N09", "dim": 128, "popsize": 256, "trial": trial,
                         "seed": 7 + trial, "params": json.dumps({"F": 0.5, "CR": CR}), "max_time_s": 27.0,
                         "max_fes": 200_000_000,
                         "best_error": final + trial, "fes_used": 50_000_000, "status": "time", "source": "t.csv"})
            traces[("t.csv", rid)] = {"time_s": np.array([0.1, 0.6, 10.0, 26.9]),
                                      "fes": np.array([256, 1_000_000, 20_000_000, 50_000_000]),
                                      "best_error": np.array([5000.0, 10 * final, 2 * final, final + trial])}
    return pd.DataFrame(rows), traces


def test_the_report_reads_a_pilot_experiments_trials_and_traces(tmp_path):
    trials, traces = tiny_workflow_table()
    rates = pd.DataFrame({"experiment": ["kromer_rastrigin"] * 2, "implementation": ["many_threaded"] * 2,
                          "popsize": [256, 256], "dim": [128, 128], "function": ["N09"] * 2,
                          "fes_used": [10_000_000, 10_000_000], "wall_time_s": [10.0, 10.0]})  # 1 M FEs per s
    rows = pilot.readouts(trials, traces, rates)
    cpu = rows[rows["readout"] == "cpu_time"].set_index(["CR", "trial", "at_s"])["best_error"]
    assert cpu[(0.001, 0, 0.64)] == 10.0 and cpu[(0.001, 1, 27.0)] == 2.0  # the trace at 0.64 s; the final best
    gpu = rows[rows["readout"] == "gpu_fes"].set_index(["CR", "trial", "at_s"])
    assert gpu.loc[(0.1, 0, 0.64), "at_fes"] == 640_000 and gpu.loc[(0.1, 0, 0.64), "best_error"] == 5000.0
    # 27 M FEs: within the run's 50 M, read at the trace's last point within them (20 M FEs)
    assert gpu.loc[(0.1, 0, 27.0), "reached"] and gpu.loc[(0.1, 0, 27.0), "best_error"] == 200.0


def test_the_section_renders_the_summary_from_a_tiny_table(tmp_path):
    from gpude.report.document import section_class

    trials, traces = tiny_workflow_table()
    paper = tmp_path / "paper" / "kromer_pilot_rastrigin"
    files = pilot.write_outputs(trials, traces, paper)
    assert all(Path(f).is_file() for f in files)
    spec = yaml.safe_load((ROOT / "config/experiments/kromer_pilot_rastrigin.yaml").read_text())
    section = section_class("kromer_pilot")(spec, paper, tmp_path / "paper")
    text = section.render()
    assert text.startswith("## Kromer pilot, rastrigin") and "### Rastrigin (N09), NP 256" in text
    # the choice at every readout: (0.5, 0.001), better than the protocol's (0.5, 0.1) on both seeds
    line = next(x for x in text.splitlines() if x.startswith("| CPU 27 s | Rastrigin D=128 |"))
    assert "| 0.5, 0.001 | 1.5 | 2 |" in line and line.endswith("| 100.5 | 2/2 |")


def test_the_committed_summary_comes_from_the_pilots_rows(tmp_path):
    """The legacy input, read as it is: the Rastrigin stage's rows give the committed SUMMARY.csv's
    Rastrigin rows (the summary's units are per problem, so one stage stands for the whole)."""
    rows = pilot.read_stage(PILOT_DIR / "rastrigin.csv.gz")
    marked, _ = pilot.summarise(rows, ["rastrigin.csv.gz"], tmp_path / "S.md", tmp_path / "S.csv")
    committed = pd.read_csv(PILOT_DIR / "SUMMARY.csv")
    committed = committed[committed["problem"] == "rastrigin"].reset_index(drop=True)
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "S.csv"), committed)
    assert "Made by `python -m gpude.report.kromer_pilot`" in (PILOT_DIR / "SUMMARY.md").read_text()
