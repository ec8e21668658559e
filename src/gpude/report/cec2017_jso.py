"""REPORT.md section of ``config/experiments/cec2017_jso.yaml``: jSO on the CEC 2017 suite (F1, F3..F30,
D = 10 and 30, 51 runs a cell, 10,000 D FEs), ours batched on the GPU (``jso/block``) against Brest's own
C++ (``jso/brest``), compared on the final error only.

``gpude paper --study cec2017_jso`` writes, beside the generic error tables (:func:`write_outputs`):

* ``cec2017_jso.csv`` (:func:`comparison_table`): per (D, function) that either side ran: each side's n,
  mean, std and median of the final error, the two-sided Mann-Whitney U (Wilcoxon rank-sum) p-value,
  Holm's correction over the functions of that D with both sides' runs, the verdict ("not different",
  "ours lower", "Brest lower", "missing") and the machines of each side;
* ``jso_speed.csv`` (:func:`speed_table`, from the study inputs ``speed_ours`` and ``speed_brest``,
  ``results/benchmarks/jso_speed/``): the seconds a run of each, measured on one host.

**Errors only.** The two sides' rows come from different machines (ours a GPU host, Brest's a CPU
host): the final error of a run does not depend on the machine that made it (the same algorithm, budget
and function), so the errors compare across machines; the times do not, and the section compares none
of them except in the speed table, whose two sides ran on one host.

**The competition's rule.** Errors below :data:`FLOOR` (1e-8) count as 0 before any statistic (means,
medians and tests alike): two sides whose runs all reach 1e-8 are "not different" (p = 1); and errors are
compared at that resolution (rounded to a multiple of 1e-8), so that two runs ending in the same local
optimum, whose values differ in their last bits, tie.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from ..core.io import read_csv, write_csv_atomic
from .intervals import MIN_N, Ratio, of_means, ratio
from .section import Deviation, Section, _read, fmt
from .verdict import Judgement, Verdict, span

#: the competition's rule: an error below this counts as 0
FLOOR = 1e-8
#: Holm-corrected p below this: the two sides differ on the function
ALPHA = 0.05
OURS, BREST = "block", "brest"
SIDES = {BREST: "brest", OURS: "ours"}  # implementation -> the table's column prefix
#: the protocol's runs per cell (the experiment's ``trials`` where it says another)
RUNS = 51
#: functions of a D on which the two may differ for the comparison still to count as reproduced
#: (at least 27 of the 29)
MAY_DIFFER = 2
STUDY_INPUTS = ("speed_ours", "speed_brest")
#: the runs a launch of the body's speed rows: a block an SM of an H100 or H200 (132 SMs)
BODY_RUNS_A_LAUNCH = 132
#: optional: Brest's runs on every core of the host at once (benchmarks/jso_brest_runs.py host)
OPTIONAL_INPUTS = ("speed_brest_host",)
COLUMNS = ["dim", "function", "brest_n", "brest_mean", "brest_std", "brest_median", "ours_n", "ours_mean",
           "ours_std", "ours_median", "U", "p", "p_holm", "verdict", "brest_machines", "ours_machines"]
#: the GPU of the speed rows when they do not name it: benchmarks/jso_speed.py at 0665a78 read the
#: machine before its CUDA context existed (gpu "none"); results/benchmarks/jso_speed/README.md names it
SPEED_GPU_UNRECORDED = "NVIDIA H100 80GB HBM3"


def clamp(errors) -> np.ndarray:
    """The competition's rule: errors below :data:`FLOOR` as 0, and every error at the competition's
    resolution, a multiple of :data:`FLOOR` (runs that end in the same local optimum differ in the last
    bits of its value: 58.5615573023851x at F4, D 30; below the resolution a rank-sum test would count
    those bits as a difference of quality)."""
    e = np.asarray(errors, dtype=float)
    return np.where(e < FLOOR, 0.0, np.round(e / FLOOR) * FLOOR)


def label(function: str) -> str:
    """``CEC17_F01`` -> ``F1`` (other names as they are)."""
    m = re.fullmatch(r"CEC17_F(\d+)", str(function))
    return f"F{int(m.group(1))}" if m else str(function)


def rank_sum(x, y) -> tuple[float, float]:
    """Two-sided Mann-Whitney U of two samples (scipy, ``method="auto"``: exact for small samples without
    ties, else the normal approximation); every value equal on both sides: U = n m / 2, p = 1."""
    from scipy import stats

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if np.unique(np.concatenate([x, y])).size == 1:
        return x.size * y.size / 2.0, 1.0
    res = stats.mannwhitneyu(x, y, alternative="two-sided", method="auto")
    return float(res.statistic), float(res.pvalue)


def _runs(trials: pd.DataFrame) -> pd.DataFrame:
    """The two sides' finished runs, errors clamped, one row per (implementation, D, function, trial): a
    trial made on two machines (a re-made reference) counts once, the first machine's in name order."""
    if not len(trials):
        return pd.DataFrame(columns=["implementation", "dim", "function", "trial", "best_error", "machine"])
    t = trials[trials["implementation"].astype(str).isin(list(SIDES))].copy()
    if "status" in t:
        t = t[t["status"].astype(str) != "failed"]
    t = t[pd.to_numeric(t["best_error"], errors="coerce").notna()]
    if "machine" not in t:
        from ..core.machines import machine_column

        t["machine"] = machine_column(t)
    t["best_error"] = clamp(t["best_error"])
    keys = ["implementation", "dim", "function"] + (["trial"] if "trial" in t else [])
    if "trial" in t:
        t = t.sort_values("machine", kind="stable").drop_duplicates(keys)
    return t


def comparison_table(trials: pd.DataFrame) -> pd.DataFrame:
    """One row per (D, function) that either side ran (:data:`COLUMNS`); the rank-sum test where both
    did, Holm's correction over those functions of the D."""
    t = _runs(trials)
    rows = []
    for (dim, function), cell in t.groupby(["dim", "function"], sort=True):
        row = {"dim": int(dim), "function": function}
        samples = {}
        for impl, prefix in SIDES.items():
            e = cell.loc[cell["implementation"] == impl, "best_error"].to_numpy(dtype=float)
            samples[prefix] = e
            row[f"{prefix}_n"] = e.size
            row[f"{prefix}_mean"] = e.mean() if e.size else np.nan
            row[f"{prefix}_std"] = e.std(ddof=1) if e.size > 1 else np.nan
            row[f"{prefix}_median"] = np.median(e) if e.size else np.nan
            row[f"{prefix}_machines"] = "; ".join(sorted(cell.loc[cell["implementation"] == impl, "machine"]
                                                         .astype(str).unique()))
        if samples["ours"].size and samples["brest"].size:
            row["U"], row["p"] = rank_sum(samples["ours"], samples["brest"])
        rows.append(row)
    table = pd.DataFrame(rows, columns=COLUMNS)
    from ..stats.comparisons import holm  # (scipy: loaded only where a table is made)

    for _, part in table.groupby("dim"):
        both = part[part["p"].notna()]
        if len(both):
            table.loc[both.index, "p_holm"] = holm(both["p"].to_numpy(dtype=float))
    table["verdict"] = [verdict(r) for r in table.to_dict("records")]
    return table


def verdict(row: dict) -> str:
    """"not different" (Holm p >= :data:`ALPHA`), else the side with the lower median (the lower mean
    where the medians are equal): "ours lower" or "Brest lower"; "missing" without both sides' runs."""
    if pd.isna(row.get("p_holm")):
        return "missing"
    if row["p_holm"] >= ALPHA:
        return "not different"
    ours, brest = row["ours_median"], row["brest_median"]
    if ours == brest:
        ours, brest = row["ours_mean"], row["brest_mean"]
    return "ours lower" if ours < brest else "Brest lower"


def _cec17_number(function: str) -> int | None:
    """The CEC 2017 number of a function of ours (``CEC17_F10`` -> 10; Janssen et al.'s ``F01``, the
    same code as CEC 2017 F3 -> 3; None for one of another suite)."""
    m = re.fullmatch(r"CEC17_F(\d+)", str(function).upper())
    if m:
        return int(m.group(1))
    from ..functions.suites import FUNCTIONS

    f = FUNCTIONS.get(str(function).upper())
    return int(f.cec_fn) if f is not None and f.cec_year == 2017 else None


def _launch_shares(row) -> list[float]:
    """One of our speed rows' seconds a run, one per timed launch (``launch_s_all``: the launches' seconds,
    space-separated, each over the launch's ``trials``); the row's ``per_run_s`` alone where it lists none."""
    listed = [float(v) for v in str(row.get("launch_s_all", "")).split() if v.replace(".", "", 1).isdigit()]
    return [v / float(row["trials"]) for v in listed] if listed else [float(row["per_run_s"])]


def speed_table(ours: pd.DataFrame, brest: pd.DataFrame, brest_host: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per (CEC 2017 function, D) of both CSVs, and per runs a launch of ours, the same statistic on both
    sides: our seconds a run, the median over the timed launches of a launch's share (a launch of
    ``trials`` runs / trials), and Brest's, the median of his runs (one process on one core); each side's n
    and values (``ours_s_all``, ``brest_s_all``: space-separated, for the ratio's interval), the ratio
    Brest's / ours, and the host. With ``brest_host`` (his runs on every core at once: a batch's
    ``batch_wall_s`` over its ``lanes``, one value a batch, ``batch`` telling the batches of a cell apart), the
    host's seconds a run (``host_s``: the median over the cell's batches; ``host_batches``, ``host_s_all``,
    ``host_lanes``) and the host against the GPU, ``host_ratio`` = host_s / ours_s (runs a second of the GPU
    over the whole CPU's)."""
    o = ours.assign(cec=[_cec17_number(f) for f in ours["function"]])
    shares = [_launch_shares(r) for r in o.to_dict("records")]
    o["ours_s_all"] = [" ".join(f"{v:.6g}" for v in share) for share in shares]
    o["ours_s"] = [float(np.median(share)) for share in shares]
    o["ours_launches"] = [len(share) for share in shares]
    b = brest.assign(cec=[_cec17_number(f) for f in brest["function"]])
    theirs = b.groupby(["cec", "dim"])["time_s"].agg(
        brest_s="median", brest_runs="size", brest_s_all=lambda v: " ".join(f"{x:.6g}" for x in v)).reset_index()
    table = o[["cec", "dim", "function", "trials", "ours_s", "ours_launches", "ours_s_all"]].rename(
        columns={"function": "ours_function", "trials": "ours_per_launch"})
    table = table.merge(theirs, on=["cec", "dim"], how="inner")
    table["ratio"] = table["brest_s"] / table["ours_s"]
    if brest_host is not None and len(brest_host):
        h = brest_host.assign(cec=[_cec17_number(f) for f in brest_host["function"]])
        if "batch" not in h:
            h["batch"] = 0  # (rows written before batches were repeated: one a cell)
        if "boot_id" not in h:
            h["boot_id"] = ""
        h["boot_id"] = h["boot_id"].fillna("").astype(str)
        batches = h.groupby(["cec", "dim", "boot_id", "batch"]).agg(
            wall=("batch_wall_s", "max"), lanes=("lanes", "max"), cpu=("cpu", "first")).reset_index()
        batches["per_run"] = batches["wall"] / batches["lanes"]
        host = batches.groupby(["cec", "dim"]).agg(
            host_s=("per_run", "median"), host_batches=("per_run", "size"), host_lanes=("lanes", "max"),
            host_cpu=("cpu", "first"), host_s_all=("per_run", lambda v: " ".join(f"{x:.6g}" for x in v)),
            host_boots=("boot_id", lambda v: "; ".join(sorted(set(v) - {""})))).reset_index()
        table = table.merge(host, on=["cec", "dim"], how="left")
        table["host_ratio"] = table["host_s"] / table["ours_s"]

    def one(frame, column):
        v = frame[column].dropna().astype(str).unique() if column in frame else []
        return "; ".join(sorted(v))
    gpu = one(o[o["gpu"].astype(str) != "none"], "gpu") if "gpu" in o else ""
    table["gpu"] = gpu or SPEED_GPU_UNRECORDED
    table["gpu_recorded"] = bool(gpu)
    table["cpu"] = one(o, "cpu")
    table["cpu_cores"] = one(o, "cpu_cores")
    table["host"] = one(o, "host")
    table["boot_id"] = one(o, "boot_id")
    table["brest_cpu"] = one(b, "cpu")
    table["brest_host"] = one(b, "host")
    table["brest_compiler"] = one(b, "compiler")
    table["brest_flags"] = one(b, "cxx_flags")
    return table.sort_values(["dim", "cec", "ours_per_launch"], ignore_index=True)


def write_outputs(trials: pd.DataFrame, traces: dict, out_dir, **inputs) -> list[Path]:
    unknown = set(inputs) - set(STUDY_INPUTS) - set(OPTIONAL_INPUTS)
    if unknown:
        from ..core.errors import InvalidInputError

        raise InvalidInputError(f"the cec2017_jso section reads no study input {', '.join(sorted(unknown))}; "
                                f"its inputs (report: study_inputs:): {', '.join(STUDY_INPUTS + OPTIONAL_INPUTS)}")
    out_dir = Path(out_dir)
    files = [write_csv_atomic(comparison_table(trials), out_dir / "cec2017_jso.csv")]
    if all(inputs.get(k) for k in STUDY_INPUTS):
        host = read_csv(inputs["speed_brest_host"]) if inputs.get("speed_brest_host") else None
        speed = speed_table(read_csv(inputs["speed_ours"]), read_csv(inputs["speed_brest"]), host)
        files.append(write_csv_atomic(speed, out_dir / "jso_speed.csv"))
    return files


class Cec2017Jso(Section):
    """Ours against Brest's jSO on CEC 2017: final errors per function, rank-sum tests, Holm."""

    write_outputs = staticmethod(write_outputs)
    # the wall-time outputs stay (gpude paper's wall-time tables are per machine, each of one side alone);
    # the section shows none of them: the two sides ran on different machines; no figures of every trial
    generic_outputs = ("time", "time_vs_popsize")
    study = "jSO (Brest et al.), his C++ beside ours"

    def __init__(self, spec, paper_dir, report_dir):
        super().__init__(spec, paper_dir, report_dir)
        self.table = self.complete(_read(self.dir / "cec2017_jso.csv"))
        self.speed = _read(self.dir / "jso_speed.csv")

    @property
    def runs(self) -> int:
        trials = self.spec.get("trials", RUNS)
        return int(trials.get("default", RUNS) if isinstance(trials, dict) else trials)

    def complete(self, table: pd.DataFrame) -> pd.DataFrame:
        """The table over the experiment's whole grid (every function at every D): a cell neither side
        ran is a row of n = 0, "missing"."""
        grid = pd.DataFrame([(int(d), f) for d in self.spec.get("dims", []) for f in self.spec.get("functions", [])],
                            columns=["dim", "function"])
        if not len(table):
            table = pd.DataFrame(columns=COLUMNS)
        table = grid.merge(table, on=["dim", "function"], how="outer") if len(grid) else table
        for prefix in SIDES.values():
            table[f"{prefix}_n"] = pd.to_numeric(table[f"{prefix}_n"]).fillna(0).astype(int)
            table[f"{prefix}_machines"] = table[f"{prefix}_machines"].astype(object).fillna("").astype(str)
        table["verdict"] = table["verdict"].fillna("missing")
        order = {f: k for k, f in enumerate(self.spec.get("functions", []))}
        table["_order"] = table["function"].map(order).fillna(len(order))
        return table.sort_values(["dim", "_order", "function"], ignore_index=True).drop(columns="_order")

    def machines_of(self, prefix: str, part: pd.DataFrame | None = None) -> str:
        part = self.table if part is None else part
        found = sorted({m for v in part[f"{prefix}_machines"] for m in str(v).split("; ") if m})
        return "; ".join(found) or "no machine yet"

    def counts(self, dim: int) -> dict:
        """At one D: the functions of the grid, those compared (both sides' runs), those not different,
        the differing rows, the cells short of the protocol's runs."""
        part = self.table[self.table["dim"] == dim]
        compared = part[part["verdict"] != "missing"]
        short = part[(part["brest_n"] < self.runs) | (part["ours_n"] < self.runs)]
        return {"part": part, "total": len(part), "compared": len(compared),
                "same": int((compared["verdict"] == "not different").sum()),
                "differ": compared[compared["verdict"] != "not different"], "short": short}

    def _n(self, part: pd.DataFrame) -> dict[str, tuple[int, int]]:
        present = {}
        for prefix, name in (("ours", "ours"), ("brest", "Brest's")):
            n = part.loc[part[f"{prefix}_n"] > 0, f"{prefix}_n"]
            if len(n):
                present[name] = (int(n.min()), int(n.max()))
        return present

    def verdicts(self) -> list[Verdict]:
        """One comparison row per D (Brest's program rerun, not a table of the paper): coverage, every
        function with both sides' runs at the protocol's n; no magnitude compared (the test below
        compares the runs); finding, the two not different on all but at most :data:`MAY_DIFFER`
        functions, else in part (not where none), with the direction of the differences as cause."""
        rows = []
        for dim in self.spec.get("dims", []):
            c = self.counts(int(dim))
            item = f"CEC 2017 F1, F3-F30, D = {dim}"
            machines = (f"ours on {self.machines_of('ours', c['part'])}; "
                        f"Brest's on {self.machines_of('brest', c['part'])}")
            ours_n = ", ".join(f"{k} {span(lo, hi)}" for k, (lo, hi) in self._n(c["part"]).items()) or "0"
            if not c["compared"]:
                rows.append(Verdict(item, ours_n, str(self.runs), f"- ({machines})", Judgement(
                    "none", cause=f"no function with both sides' runs at D = {dim}"), kind="comparison"))
                continue
            target = c["total"] - MAY_DIFFER
            headline = (f"final error not different on {c['same']} of {c['compared']} functions compared "
                        f"(Holm p >= {ALPHA:g}; agreement asks {target} of {c['total']}) ({machines})")
            gaps = []
            if c["compared"] < c["total"]:
                gaps.append(f"both sides' runs on {c['compared']} of {c['total']} functions")
            short = c["short"][(c["short"]["brest_n"] > 0) & (c["short"]["ours_n"] > 0)]
            if len(short):
                gaps.append(f"fewer than {self.runs} runs: " + ", ".join(
                    f"{label(r.function)} ({_sides_n(r)})" for r in short.itertuples()))
            coverage = Judgement("short", "; ".join(gaps), "runs not yet made") if gaps else Judgement("complete")
            finding = Judgement("holds")
            if c["same"] < target:
                sides = c["differ"]["verdict"].value_counts()
                finding = Judgement("not" if not c["same"] else "in part",
                                    f"not different on {c['same']}, fewer than the {target} agreement asks",
                                    ", ".join(f"{k} on {v}" for k, v in sides.items()))
            rows.append(Verdict(item, ours_n, str(self.runs), headline, coverage, Judgement("n.a."), finding,
                                kind="comparison"))
        return rows

    def title(self) -> str:
        return "jSO on CEC 2017: ours batched on the GPU against Brest's C++ (final errors, 51 runs)"

    def intro(self) -> str:
        s = self.spec
        budget = s.get("max_fes", {})
        budget = ", ".join(f"{v:,} at D = {d}" for d, v in budget.items()) if isinstance(budget, dict) else budget
        return (f"Experiment `{s['name']}` (`config/experiments/{s['name']}.yaml`): jSO on the CEC 2017 "
                f"bound-constrained suite (F1, F3-F30), D = {', '.join(map(str, s.get('dims', [])))}, NP = "
                f"{', '.join(map(str, s.get('popsizes', [])))} (jSO's own), budget 10,000 D FEs ({budget}), "
                f"{self.runs} runs a cell. Ours: `jso/block` ({RUNS} runs in one launch, a thread block each) on "
                f"{self.machines_of('ours')}. Brest's: `jso/brest`, his C++ as released (one run a process, one "
                f"core) on {self.machines_of('brest')}. "
                "**Errors only**: the two sides' runs were made on different machines; the final error of a run "
                "does not depend on the machine that made it (the same algorithm, function and budget), so the "
                "errors compare, while times do not and are not compared here (their speed, measured on one "
                "host, is the last table). Errors below 1e-8 count as 0 and errors are compared at 1e-8 resolution "
                "before any statistic (the "
                "competition's rule). Per function: the two-sided Wilcoxon rank-sum test (Mann-Whitney U, "
                "scipy's `mannwhitneyu`, `method=\"auto\"`; every value equal on both sides: p = 1), Holm's "
                f"correction over the functions of a D with both sides' runs; \"not different\" where the "
                f"Holm p >= {ALPHA:g}, otherwise the side with the lower median. A cell short of {self.runs} "
                "runs says its n; one with no runs on a side is \"missing\", never left out.")

    def dim_summary(self, dim: int) -> str:
        """One line per D: on how many functions the two sides' final errors do not differ."""
        c = self.counts(dim)
        text = (f"* **D = {dim}: not different on {c['same']} of {c['compared']} functions compared** (Holm p >= "
                f"{ALPHA:g}; {c['total'] - c['compared']} of {c['total']} without both sides' runs)")
        if len(c["differ"]):
            text += "; differs: " + ", ".join(_difference(r) for r in c["differ"].itertuples()) + " (unexplained)"
        return text + "."

    def dim_block(self, dim: int) -> str:
        c = self.counts(dim)
        part = c["part"]
        lines = [f"### D = {dim}", "",
                 f"Final error at D = {dim}, mean and std over the runs (errors below 1e-8 as 0): Brest's C++ "
                 f"(`jso/brest`) on {self.machines_of('brest', part)}, ours (`jso/block`) on "
                 f"{self.machines_of('ours', part)}; n = runs of each side ({self.runs} expected).", "",
                 "| function | Brest's mean | Brest's std | Brest's n | ours mean | ours std | ours n | rank-sum p "
                 "| Holm p | verdict |", "|---" * 10 + "|"]
        for r in part.to_dict("records"):
            def n(prefix, r=r):
                k = int(r[f"{prefix}_n"])
                return "missing" if k == 0 else (str(k) if k >= self.runs else f"n = {k}")
            lines.append("| " + " | ".join([
                label(r["function"]), fmt(r.get("brest_mean")), fmt(r.get("brest_std")), n("brest"),
                fmt(r.get("ours_mean")), fmt(r.get("ours_std")), n("ours"), fmt(r.get("p"), "{:.2g}"),
                fmt(r.get("p_holm"), "{:.2g}"), r["verdict"]]) + " |")
        return "\n".join(lines) + "\n"

    def speed_block(self, in_body: bool = True) -> str:
        """The speed table: in the body, only the rows of :data:`BODY_RUNS_A_LAUNCH` runs a launch where the
        table has others too (those in the appendix, with every row)."""
        s = self.speed
        left_out = []
        if in_body and len(s) and BODY_RUNS_A_LAUNCH in set(s["ours_per_launch"]):
            left_out = sorted(int(k) for k in set(s["ours_per_launch"]) - {BODY_RUNS_A_LAUNCH})
            s = s[s["ours_per_launch"] == BODY_RUNS_A_LAUNCH]
        if not len(s):
            return ("### Time per run (one host)\n\nNo speed table: the experiment's `report: study_inputs:` "
                    "(`speed_ours`, `speed_brest`, `results/benchmarks/jso_speed/`) were not given to `gpude paper`.\n")
        first = s.iloc[0]
        gpu = str(first["gpu"]) + ("" if bool(first.get("gpu_recorded", True)) else
                                   " (the rows' gpu column says none: the script read the machine before its "
                                   "CUDA context existed; `results/benchmarks/jso_speed/README.md` names the GPU)")
        host = f"host `{first['host']}`" + (f", boot `{first['boot_id']}`" if pd.notna(first.get("boot_id")) else "")
        # a table written before both sides' values were kept holds our fastest launch, not the median
        median = "ours_s_all" in s
        ours_stat = "the median over the timed launches" if median else "the fastest of the timed launches"
        per_launch = ", ".join(str(int(k)) for k in sorted(s["ours_per_launch"].unique()))
        with_host = "host_s" in s and s["host_s"].notna().any()
        ours_boot = str(first.get("boot_id", "")) if pd.notna(first.get("boot_id")) else ""

        def other_boots(r) -> list[str]:
            return [b for b in str(r.get("host_boots", "") or "").split("; ") if b and b != ours_boot and b != "nan"]
        boots = sorted({b for r in s.to_dict("records") for b in other_boots(r)}) if with_host else []
        title = "### Time per run (one host)" if in_body else "### Time per run, every launch size (one host)"
        lines = [title, "",
                 f"Seconds a run on one machine: {gpu}, host CPU {first['cpu']} x{first['cpu_cores']} ({host}); ours "
                 f"`jso/block`, {per_launch} runs in one launch (a run's share of the launch: "
                 f"throughput), {ours_stat}; Brest's C++ (`jso/brest`, "
                 f"{first['brest_compiler']} `{first['brest_flags']}`) one process on one pinned core of the "
                 f"same host ({first['brest_cpu']}, host `{first['brest_host']}`), the median of n runs; ratio "
                 "= Brest's / ours" + (", the median on both sides, with its 95 % bootstrap interval where each "
                                       f"side has {MIN_N} or more values" if median else "")
                 + (f". Host against host: Brest's C++ on every core of the host at once ({int(s['host_lanes'].max())} "
                    "runs side by side, one a core: a batch's wall time over its runs, the median over the cell's "
                    "n batches), against ours; ratio = the host's seconds a run / ours, with its interval where "
                    f"each side has {MIN_N} or more values" if with_host else "")
                 + " (`results/benchmarks/jso_speed/`, its README says how they were made)."
                 + (f" Here {BODY_RUNS_A_LAUNCH} runs a launch (a block an SM); "
                    f"{' and '.join(map(str, left_out))} too in the appendix." if left_out else "")
                 + (" Rows marked \\* take some of the host's batches from "
                    f"{', '.join(f'`{b}`' for b in boots)}, "
                    f"{'another machine' if len(boots) == 1 else 'other machines'} of the same kind (CPU model and "
                    f"cores) as the GPU's boot `{ours_boot}`: their ratio's interval spans the machines."
                    if boots else ""),
                 "",
                 "| function | D | ours: runs a launch | ours, s a run | ours: launches | Brest's, s a run "
                 "(one core) | Brest's n | ratio (a core) |"
                 + (" Brest's on all cores, s a run | host batches | ratio (host) |" if with_host else ""),
                 "|---" * (11 if with_host else 8) + "|"]
        for r in s.to_dict("records"):
            launches = int(r["ours_launches"]) if median else "-"
            row = (f"| F{int(r['cec'])} | {int(r['dim'])} | {int(r['ours_per_launch'])} | {fmt(r['ours_s'])} | "
                   f"{launches} | {fmt(r['brest_s'])} | {int(r['brest_runs'])} | {speed_ratio(r).text('{:.0f}')} |")
            if with_host:
                mark = " *" if other_boots(r) else ""
                row += (f" {fmt(r['host_s'])} | {int(r['host_batches'])}{mark} | "
                        f"{speed_ratio(r, 'host').text('{:.0f}')} |" if pd.notna(r.get("host_s")) else " - | - | - |")
            lines.append(row)
        return "\n".join(lines) + "\n"

    def body(self) -> str:
        parts = ["### Setup", "", self.intro(), "", "### Final errors beside Brest's (per function: the appendix)", ""]
        parts += [self.dim_summary(int(d)) for d in self.spec.get("dims", [])]
        parts += ["", self.speed_block()]
        return "\n".join(parts)

    def deviations(self) -> list[Deviation]:
        return [Deviation("hardware", f"Ours on {self.machines_of('ours')}, Brest's on {self.machines_of('brest')}: "
                                      "errors compare across machines, times only on the one host of the last "
                                      "table."),
                Deviation("implementation", f"Ours runs {RUNS} runs in one launch, a thread block each; Brest's C++ "
                                            "one run a process on one core, as released.")]

    def appendix(self) -> str:
        speed = [self.speed_block(in_body=False)] if len(self.speed) else []
        return "\n".join([self.dim_block(int(d)) for d in self.spec.get("dims", [])] + speed + [self.sources()])


def speed_ratio(row: dict, side: str = "brest") -> Ratio:
    """A speed row's ratio Brest's / ours (``side`` "brest": his one-core runs; "host": his batches on every
    core), the median over each side's values (``brest_s_all`` or ``host_s_all``, ``ours_s_all``) with its
    interval; the table's own ratio, without one, where it keeps no values."""
    def values(column):
        return [float(v) for v in str(row.get(column, "")).split()] if pd.notna(row.get(column)) else []
    theirs, ours = values(f"{side}_s_all"), values("ours_s_all")
    if theirs and ours:
        return ratio(theirs, ours, np.median)
    n_theirs = row.get("brest_runs" if side == "brest" else "host_batches", 0)
    return of_means(row["ratio" if side == "brest" else "host_ratio"], int(n_theirs if pd.notna(n_theirs) else 0), 1)


def _sides_n(row) -> str:
    return f"Brest's {int(row.brest_n)}, ours {int(row.ours_n)}"


def _difference(row) -> str:
    """'F11 (ours 6.5 vs Brest's 3.04; Brest lower)': a differing function's means, and the difference of
    the medians where the means print alike (e.g. both at the same local optimum, apart in the last bits)."""
    text = f"{label(row.function)} (ours {fmt(row.ours_mean)} vs Brest's {fmt(row.brest_mean)}"
    if fmt(row.ours_mean) == fmt(row.brest_mean):
        text += f", medians ours - Brest's = {row.ours_median - row.brest_median:.2g}"
    return text + f"; {row.verdict})"
