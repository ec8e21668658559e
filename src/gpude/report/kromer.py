"""Krömer, Platoš, Snášel & Abraham, "Many-threaded differential evolution on the GPU": Rastrigin
(Table 1), the linear ordering problem (Tables 2-3, Fig. 6), independent task scheduling (Table 4,
Figs. 8-9) and evaluation speed (Figs. 5 and 7).

One section serves the three experiments (``kromer_rastrigin``, ``kromer_lop``, ``kromer_etc``); what
it writes follows from the study inputs the experiment names (``report: study_inputs:``):

* ``table1`` -> ``table_rastrigin.csv``: per D, the best value after 0.64 s and 27 s (mean, best over
  runs; N09 is unshifted, so its error is f), beside the paper's and de Veronese & Krohling's;
* ``table2`` / ``table3`` -> ``table_lop.csv``: per instance and implementation, the best and mean
  error % = 100 (optimum - f) / optimum after 5 s and 10 s, beside the paper's; ``lop_summary.csv``:
  the mean over instances and the instances solved in every run, beside the paper's claims;
  ``figure_lop_progress.png``: error % vs time on be75eec, GPU and CPU (Fig. 6);
* ``table4`` -> ``table_etc.csv``: per (ETC matrix, NP, implementation) the mean fit after 30 s and
  its makespan and flowtime (from the trial rows' ``solution``), beside the paper's Table 4 and the
  Min-Min makespan; ``figure_etc_progress_Th.png`` / ``_Tl.png``: fit vs time at NP = 64 (Figs. 8-9);
* ``eval_speed`` (``benchmarks/kromer_eval_speed.py``'s CSV) -> ``eval_speed.csv`` and
  ``figure_eval_speed.png`` (Figs. 5 and 7) with the CPU/GPU ratios the paper quotes;
* ``fe_rate`` (``benchmarks/kromer_fe_rate.py``'s CSV) -> ``fe_rate.csv``: per case, the FEs per second
  of each column's implementation run alone, and the GPU / CPU and GPU / CPU opt. ratios (the paper's
  25.2-216.5x and 2.2-12.5x);
* ``contention`` (a CSV of trial rows with a column ``at_once``: the same cell run alone and k at
  once) -> ``contention.csv``: the FEs of a 30 s run against the number of runs beside it, with the
  reference's own rows of that cell (how many ran at once read from their time stamps);
* ``claims`` (``paper/published/kromer_claims.csv``): the paper's numeric claims, put beside ours;
  those with a ``check`` key are checked on our tables (``claims_check.csv``).

**The paper's columns** (sec. 5.3): "The GPU implementation was compared to a simple CPU implementation
(high level object oriented C++ code) and optimized CPU implementation (low level C code to achieve
maximum performance) ... Optimized CPU and GPU implementations ... were identical with the exception
of CUDA-C language constructions". Ours: CPU = ``de/high_level`` (plain Python and numpy, no JIT),
CPU opt. = ``de/sequential`` (one thread, compiled by numba), GPU = ``de/many_threaded``; the three
make the same run for a seed and differ in speed only.

The tables are built in :mod:`gpude.report.kromer_tables` (values at a time t read from the runs'
traces: there), the figures drawn in :mod:`gpude.report.kromer_figures`; this module writes them
(:func:`write_outputs`) and the REPORT's section (:class:`Kromer`).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from ..core.io import write_csv_atomic
from .intervals import Ratio, column_extremes, stored
from .kromer_figures import figure_etc_progress, figure_eval_speed, figure_lop_progress
from .kromer_tables import (
    COLUMN_NAMES,
    COLUMNS,
    IMPLEMENTATION_OF,
    PAPER_COLUMN,
    PAPER_COLUMNS_QUOTE,
    best_columns,
    claims_check,
    contention_table,
    etc_table,
    eval_speed_table,
    fe_rate_table,
    lop_percent,
    lop_summary,
    lop_table,
    rastrigin_table,
)
from .section import Deviation, Section, _read, fmt
from .verdict import Judgement, Verdict, cell_labels, coverage_verdict, n_by, numbers_of, paper_n, span

STUDY_INPUTS = ("table1", "table2", "table3", "table4", "eval_speed", "fe_rate", "contention", "claims")


def write_outputs(trials: pd.DataFrame, traces: dict, out_dir, **inputs) -> list[Path]:
    """The study's tables and figures that its inputs (``STUDY_INPUTS``, module docstring) make, into
    ``out_dir``; an unknown input is refused before anything is written."""
    unknown = set(inputs) - set(STUDY_INPUTS)
    if unknown:
        from ..core.errors import InvalidInputError

        raise InvalidInputError(f"the kromer section reads no study input {', '.join(sorted(unknown))}; "
                                f"its inputs (report: study_inputs:): {', '.join(STUDY_INPUTS)}")
    out_dir = Path(out_dir)
    read = {k: _read(v) for k, v in inputs.items() if v}
    files = []
    if "claims" in read:
        files.append(write_csv_atomic(read["claims"], out_dir / "claims.csv"))
    etc = speed = rate = None
    if "table1" in read:
        files.append(write_csv_atomic(rastrigin_table(trials, traces, read["table1"]), out_dir / "table_rastrigin.csv"))
    lop_published = {n: read[f"table{n}"] for n in (2, 3) if f"table{n}" in read}
    if lop_published:
        table = lop_table(trials, traces, lop_published)
        files += [write_csv_atomic(table, out_dir / "table_lop.csv"),
                  write_csv_atomic(lop_summary(table, lop_published, lop_percent(trials, traces)),
                                   out_dir / "lop_summary.csv")]
        files += figure_lop_progress(trials, traces, out_dir)
    if "table4" in read:
        etc = etc_table(trials, read["table4"])
        if len(etc):
            etc = etc.merge(best_columns(etc, "fit_mean"), on=["etc", "popsize"], how="left")
        files.append(write_csv_atomic(etc, out_dir / "table_etc.csv"))
        files += figure_etc_progress(trials, traces, out_dir)
    if "eval_speed" in read and len(read["eval_speed"]):
        speed = eval_speed_table(read["eval_speed"])
        files += [write_csv_atomic(speed, out_dir / "eval_speed.csv"), *figure_eval_speed(speed, out_dir)]
    if "fe_rate" in read and len(read["fe_rate"]):
        rate = fe_rate_table(read["fe_rate"], trials)
        files.append(write_csv_atomic(rate, out_dir / "fe_rate.csv"))
    if "contention" in read and len(read["contention"]):
        files.append(write_csv_atomic(contention_table(read["contention"], trials), out_dir / "contention.csv"))
    if "claims" in read and etc is not None:  # the checked claims are sec. 5.3's (task scheduling)
        checked = claims_check(read["claims"], etc, read.get("table4"), rate, speed)
        if len(checked):
            files.append(write_csv_atomic(checked, out_dir / "claims_check.csv"))
    return files


def _ratio_of(row) -> Ratio:
    """A Table 4 cell's ours / the paper's and its interval (NaN bounds in a table written without them)."""
    return stored(row.get("ours_over_paper"), row.get("ours_over_paper_lo"), row.get("ours_over_paper_hi"),
                  row.get("n"))


def _with_interval(row) -> str:
    return _ratio_of(row).text("{:.2f}", unit="")


def _pct(v) -> str:
    return fmt(v, "{:.2e}")


#: a claim's word in the claims table -> the cause the verdict gives for it
CLAIM_CAUSES = {"overlaps": "speed-up ranges overlap the paper's", "mostly": "most cells, not all",
                "undecided: two machines": "a claim's cells on two machines", "no": "cells against it",
                "above": "speed-ups above the paper's range", "below": "speed-ups below the paper's range"}


def claim_state(holds: str) -> tuple[str, list[str]]:
    """A claim's 'holds' text (``kromer_tables.claims_check``: 'yes', 'mostly', 'no', or per range of
    ours 'within', 'overlaps', 'above', 'below', joined by '; '; 'undecided: ...') -> ('holds' | 'not' |
    'undecided' | 'in part', the words that are not a plain hold)."""
    words = [w for w in holds.split("; ") if w]
    if words and all(w.startswith("undecided") for w in words):
        return "undecided", words
    if words and all(w in ("yes", "within") for w in words):
        return "holds", []
    if words and all(w in ("no", "above", "below") for w in words):
        return "not", words
    return "in part", [w for w in words if w not in ("yes", "within")]


class Kromer(Section):
    """The REPORT's section of the three Krömer experiments: the protocol, each table this experiment
    made (a ``*_markdown`` method each), the figures, and the verdicts (:meth:`verdicts`)."""

    write_outputs = staticmethod(write_outputs)
    study = "Krömer et al."
    generic_outputs = ()  # a time budget per run: every run's wall time is the budget

    def __init__(self, spec, paper_dir, report_dir):
        super().__init__(spec, paper_dir, report_dir)
        self.rastrigin = _read(self.dir / "table_rastrigin.csv")
        self.lop = _read(self.dir / "table_lop.csv")
        self.lop_summary = _read(self.dir / "lop_summary.csv")
        self.etc = _read(self.dir / "table_etc.csv")
        self.speed = _read(self.dir / "eval_speed.csv")
        self.fe_rate = _read(self.dir / "fe_rate.csv")
        self.contention = _read(self.dir / "contention.csv")
        self.claims = _read(self.dir / "claims.csv")
        self.claims_check = _read(self.dir / "claims_check.csv")

    def title(self) -> str:
        return f"Krömer, Platoš, Snášel & Abraham: many-threaded DE on the GPU — {self.spec.get('description', '')}"

    def verdicts(self) -> list[Verdict]:
        """Table 1 (Rastrigin), Tables 2-3 (LOP) and Table 4 (ETC), whichever this experiment makes: our
        n against the paper's, our errors against the paper's (within a factor of 2 either way: the same
        magnitude), and for Table 4 the paper's claims checked (``claims_check.csv``); Tables 1-3 state no
        claim beyond their numbers."""
        wanted, machines = paper_n(self.spec), "; ".join(self.machines)
        # the paper gives no F and CR (ours come from a pilot: docs/kromer.md) and ran on another GPU
        tuned = "F and CR ours; another GPU"
        rows = []
        if len(self.rastrigin):
            t = self.rastrigin
            gpu = t[t["implementation"] == "many_threaded"]
            early = gpu["mean_0.64s"] / gpu["paper_0.64s"]
            late = gpu["mean_27s"] / gpu["paper_27s"]
            rows.append(coverage_verdict(
                "Table 1", n_by(t), wanted,
                f"many-threaded DE's mean error at 0.64 s {column_extremes(gpu, early, 'ours_over_paper_0.64s')} "
                "the paper's, at 27 s "
                f"{', '.join(fmt(v, '{:.3g}') for v in gpu['mean_27s'])} (paper "
                f"{', '.join(fmt(v, '{:.3g}') for v in gpu['paper_27s'])}; D = {', '.join(map(str, gpu['dim']))}; "
                f"{machines})", numbers_of(list(early) + list(late), tuned, labels=[
                    f"D={d} at {t}" for t in ("0.64 s", "27 s") for d in gpu["dim"]])))
        if len(self.lop_summary):
            t = self.lop_summary
            ours = t[t["implementation"] == "many_threaded"]
            above = int(ours[["above_paper_5s", "above_paper_10s"]].sum().sum())
            ratios = list(ours["over_paper_5s"]) + list(ours["over_paper_10s"])
            both = pd.concat([ours.assign(point=ours[f"over_paper_{t}"],
                                          over_paper_lo=ours.get(f"over_paper_{t}_lo", np.nan),
                                          over_paper_hi=ours.get(f"over_paper_{t}_hi", np.nan))
                              for t in ("5s", "10s")])
            runs = self.lop.groupby(["implementation", "instance"])["n"].min().reset_index() \
                if len(self.lop) and "instance" in self.lop and "n" in self.lop else pd.DataFrame()
            rows.append(coverage_verdict(
                "Tables 2-3, Fig. 6", n_by(runs) if len(runs) else {"many_threaded": (wanted, wanted)}, wanted,
                f"many-threaded DE's mean error % {column_extremes(both, both['point'], 'over_paper', n='runs')} "
                "the paper's (5 s and 10 s); above the "
                f"paper's on {above} instances ({machines})", numbers_of(ratios, tuned, "instance-times", labels=[
                    f"Table {tab} mean at {t}" for t in ("5 s", "10 s") for tab in ours["table"]])))
        if len(self.claims_check):
            c = self.claims_check
            states = [claim_state(h) for h in c["holds"].astype(str)]
            yes, no, undecided = (sum(s == k for s, _ in states) for k in ("holds", "not", "undecided"))
            # the causes of the claims that do not plainly hold: ranges that overlap, most cells, two machines
            partial = sorted({w for s, words in states if s != "holds" for w in words})
            finding = Judgement("holds") if yes == len(c) else Judgement(
                "not" if no == len(c) else "in part", f"{yes} of {len(c)} claims",
                ", ".join(CLAIM_CAUSES.get(w, w) for w in partial) if partial else "claims not met")
            rows.append(coverage_verdict(
                "Table 4, Figs. 7-9", n_by(self.etc) if len(self.etc) else {}, wanted,
                f"of the paper's {len(c)} claims on Table 4 and Figs. 7-9: {yes} hold, "
                f"{len(c) - yes - no - undecided} in part (mostly, or ranges that overlap), "
                + (f"{undecided} undecided (their cells ran on two machines), " if undecided else "")
                + f"{no} not ({machines})",
                numbers_of(self.etc["ours_over_paper"], tuned, labels=cell_labels(
                    self.etc, ["etc", "popsize", "implementation", "column"]))
                if "ours_over_paper" in self.etc else None, finding))
        if not rows:  # no results: the items the experiment's description names
            named = re.search(r"\((Tables? [^)]*)\)", str(self.spec.get("description", "")))
            rows.append(coverage_verdict(named.group(1) if named else self.spec["name"], {}, wanted, ""))
        return rows

    def protocol(self) -> str:
        s = self.spec
        de = s["algorithms"]["de"]
        budget = s.get("max_time_s")
        return (f"Protocol (`config/experiments/{s['name']}.yaml`, whose comments give the reasons): DE/rand/1/bin, "
                f"F = {de.get('F')}, CR = {de.get('CR')}, NP = {', '.join(map(str, de['popsizes']))} (none of the "
                f"three is given in the paper; the choice and its pilot: `docs/kromer.md`); implementations "
                f"{', '.join(de['implementations'])} ({self.mapping(de['implementations'])}); {budget:g} s of wall "
                f"time per run; seeds from {s['seed']}. The paper's hardware: a Tesla C2050 beside two dual-core "
                "AMD Opterons at 2.6 GHz; ours is named in every table.")

    def mapping(self, implementations) -> str:
        """Which implementation stands for which of the paper's programs, in this experiment's terms."""
        inputs = self.spec.get("report", {}).get("study_inputs", {})
        gpu = IMPLEMENTATION_OF["gpu"]
        if "table4" in inputs:
            return ("the paper's CPU = " + ", CPU opt. = ".join(IMPLEMENTATION_OF[c] for c in ("cpu", "cpu_optimized"))
                    + f", GPU = {gpu}; sec. 5.3: {PAPER_COLUMNS_QUOTE}. `high_level` is the DE in "
                    "plain Python and numpy (no JIT), `sequential` the same DE compiled by numba on one thread; "
                    "the three make the same run for a seed and differ in speed only")
        kinds = "; ".join(f"{i} is of sec. 5.3's {COLUMN_NAMES[PAPER_COLUMN[i]]} kind"
                          + (" (one thread, compiled)" if i == "sequential" else " (plain Python and numpy)"
                             if i == "high_level" else "")
                          for i in implementations if i != gpu and i in PAPER_COLUMN)
        if "table2" in inputs or "table3" in inputs:
            return (f"the paper's GPU DE = {gpu}; sec. 5.2 compares it with \"a sequential DE implementation\" "
                    "(Fig. 6: \"CPU\") without saying which of sec. 5.3's two CPU programs (the high-level C++ one "
                    "or the optimised C one) that was" + (f"; {kinds}" if kinds else ""))
        return (f"the paper's many-threaded DE = {gpu}; sec. 5.1's Table 1 has no CPU column (it sets the GPU DE "
                "beside de Veronese & Krohling's GPU DE)" + (f"; ours for reference: {kinds}" if kinds else ""))

    def rastrigin_markdown(self) -> str:
        t = self.rastrigin
        if not len(t):
            return ""
        lines = ["**Table 1** (Rastrigin f2, unshifted, [-5.12, 5.12]^D; value of the best solution; ours: mean and "
                 "best over n runs, read at 0.64 s and 27 s of one 27 s run; paper: the many-threaded DE's value at "
                 "0.66 s and 27.0 s; de Veronese & Krohling ran 100 variables: 278.18 after 0.64 s, 98.53 after "
                 "27.47 s). " + self.rows_label(t["implementation"].unique()), "",
                 "| implementation | D | machine | n | ours 0.64 s mean (best) | paper 0.66 s "
                 "| ours 27 s mean (best) | paper 27 s |",
                 "|---|---|---|---|---|---|---|---|"]
        for r in t.to_dict("records"):
            lines.append(f"| {r['implementation']} | {r['dim']} | {r['machine']} | {r['n']} | "
                         f"{fmt(r['mean_0.64s'])} ({fmt(r['best_0.64s'])}) | {fmt(r.get('paper_0.64s'))} | "
                         f"{fmt(r['mean_27s'])} ({fmt(r['best_27s'])}) | {fmt(r.get('paper_27s'))} |")
        return "\n".join(lines) + "\n"

    def lop_markdown(self) -> str:
        t, s = self.lop, self.lop_summary
        if not len(t):
            return ""
        lines = ["**Tables 2 and 3** (error % = 100 (optimum - f) / optimum with the proven optima of "
                 "`data/lolib/optima.csv`: Table 2 the LOLIB matrices, Table 3 the normalised N-LOLIB ones). "
                 f"Ours: {'; '.join(self.machines)}, n runs per instance as the per-instance table gives. "
                 "Summary: the mean over instances of the mean error %, and the instances where every run reached "
                 "the optimum after 5 s and after 10 s. 'paper (GPU)' is computed from the transcribed tables; "
                 "the paper's text says 0.043 / 0.031 % and 15 of 49 for LOLIB (as its table gives) and 0.034 / "
                 "0.037 % and 18 of 50 for N-LOLIB (its table gives 0.0375 / 0.0367 % and 15; "
                 "`tests/test_kromer_published.py`). Per instance: the appendix. "
                 + self.rows_label(s["implementation"].unique()), "",
                 "| table | implementation | instances (runs) | mean avg error % 5 s | mean avg error % 10 s | "
                 "ours / paper 5 s; 10 s [95 % CI] | instances below / equal / above the paper's mean, 5 s; 10 s | "
                 "solved in every run |",
                 "|---|---|---|---|---|---|---|---|"]

        def count(r, t):
            cells = [r.get(f"{k}_paper_{t}s") for k in ("below", "equal", "above")]
            return "-" if any(pd.isna(c) for c in cells) else " / ".join(str(int(c)) for c in cells)

        for r in s.to_dict("records"):
            runs = f" ({int(r['runs'])})" if pd.notna(r.get("runs")) else ""
            ratio = ("-" if pd.isna(r.get("over_paper_5s")) else "; ".join(
                stored(r[f"over_paper_{t}"], r.get(f"over_paper_{t}_lo"), r.get(f"over_paper_{t}_hi"),
                       r.get("runs")).text("{:.2g}") for t in ("5s", "10s")))
            lines.append(f"| {r['table']} | {r['implementation']} | {r['instances']}{runs} | "
                         f"{fmt(r['mean_avg_5s'], '{:.2g}')} | {fmt(r['mean_avg_10s'], '{:.2g}')} | {ratio} | "
                         f"{count(r, 5)}; {count(r, 10)} | {r['solved_every_run']} |")
        lines += ["", "Ours / paper: our mean over the table's instances of the per-instance mean error over the "
                  "paper's (from its table; 0 where every run of every instance reached the optimum), with its "
                  "95 % bootstrap interval (each instance's runs resampled, the paper's mean fixed). Below / "
                  "equal / above: per instance, our mean error over the runs against the paper's mean over its "
                  "10 runs (equal: mostly both 0)."]
        return "\n".join(lines) + "\n"

    def lop_instances_markdown(self) -> str:
        """Tables 2 and 3 per instance, ours beside the paper's (the appendix)."""
        t = self.lop
        if not len(t):
            return ""
        lines = []
        gpu = t[t["implementation"] == "many_threaded"]
        cpu = t[t["implementation"] == "sequential"].set_index("instance")
        if len(gpu):
            lines += ["", f"Per instance (GPU = many_threaded on {', '.join(sorted(set(gpu['machine'])))}; "
                      "mean error % "
                      "over its runs, best in parentheses; CPU = sequential, the compiled one-thread DE: the "
                      "paper's \"sequential DE implementation\", of unstated kind; in sec. 5.3's terms ours is "
                      "the CPU opt. kind):", "",
                      "| instance | n | paper 5 s | GPU 5 s | paper 10 s | GPU 10 s | CPU 10 s |",
                      "|---|---|---|---|---|---|---|"]
            for r in gpu.sort_values(["table", "instance"]).to_dict("records"):
                c = cpu["avg_10s"].get(r["instance"], np.nan) if len(cpu) else np.nan
                lines.append(f"| {r['instance']} | {r['n']} | {_pct(r.get('paper_avg_5s'))} | {_pct(r['avg_5s'])} "
                             f"({_pct(r['best_5s'])}) | {_pct(r.get('paper_avg_10s'))} | {_pct(r['avg_10s'])} "
                             f"({_pct(r['best_10s'])}) | {_pct(c)} |")
        return "\n".join(lines) + "\n"

    def etc_markdown(self) -> str:
        """Table 4 in brief: ours / the paper's per column and the best columns (the table: the appendix)."""
        t = self.etc
        if not len(t) or "ours_over_paper" not in t:
            return ""
        spans = []
        for c in COLUMNS:
            part = t[(t["column"] == c) & t["ours_over_paper"].notna()]
            if len(part):
                r = part["ours_over_paper"]
                spread = column_extremes(part, r, "ours_over_paper", spec="{:.2f}", unit="")
                spans.append(f"{COLUMN_NAMES[c]} {spread} (median {r.median():.2f})")
        same = int((t.drop_duplicates(["etc", "popsize"]).pipe(
            lambda d: d["best_by_fit_mean"] == d["paper_best"])).sum()) if "paper_best" in t else 0
        n = span(int(t["n"].min()), int(t["n"].max()))
        machines = "; ".join(sorted(set(t["machine"])))
        rows = t.drop_duplicates(["etc", "popsize"]).shape[0]
        return (f"**Table 4** (the fit of the best schedule after 30 s, mean over n = {n} runs a cell on "
                f"{machines}; the table: the appendix). Ours / paper over the cells: {'; '.join(spans)}. The best "
                f"column is the paper's in {same} of {rows} rows. {self.rows_label()}{self._cpu_caveat()}\n")

    def etc_table_markdown(self) -> str:
        t = self.etc
        if not len(t):
            return ""
        machines = []
        for c in COLUMNS:
            part = t[t["column"] == c]
            if len(part):
                per = part.groupby("machine").size()
                machines.append(f"{COLUMN_NAMES[c]} ({IMPLEMENTATION_OF.get(c, c)}): " + "; ".join(
                    f"{m}" + (f" ({k} cells)" if len(per) > 1 else "") for m, k in per.items()))
        lines = ["**Table 4** (fit = 0.75 makespan + 0.25 flowtime / 16 of the best schedule after 30 s, mean over "
                 "n runs; lower is better; the paper's lambda is not stated, so its values compare in magnitude, not "
                 "digit for digit). Per column: ours (n), the paper's value and ours / paper; best = the column "
                 "with the lowest mean in the row (the paper's bold), ours and the paper's. Machines: "
                 + "; ".join(machines) + ".", "",
                 "| ETC | NP | " + " | ".join(f"{COLUMN_NAMES[c]} ours (n) | paper | ours / paper" for c in COLUMNS)
                 + " | best, ours | best, paper |", "|---" * (4 + 3 * len(COLUMNS)) + "|"]
        for (etc, popsize), g in t.groupby(["etc", "popsize"]):
            cells = []
            for c in COLUMNS:
                part = g[g["column"] == c].to_dict("records")  # one row per machine the cell ran on
                if part:
                    cells += ["; ".join(f"{fmt(r['fit_mean'])} ({r['n']})" for r in part),
                              fmt(part[0].get("paper_fit")),
                              "; ".join(_with_interval(r) for r in part)]
                else:
                    cells += ["-", "-", "-"]
            ours_best = g["best_by_fit_mean"].iloc[0] if "best_by_fit_mean" in g else np.nan
            paper_best = g["paper_best"].iloc[0] if "paper_best" in g else np.nan
            lines.append(f"| {etc} | {popsize} | " + " | ".join(cells) + f" | {COLUMN_NAMES.get(ours_best, '-')} | "
                         f"{COLUMN_NAMES.get(paper_best, '-')} |")
        return "\n".join(lines) + "\n"

    def _cpu_caveat(self) -> str:
        """What the contention check says about the CPU columns' FEs (where it ran)."""
        c = self.contention
        if not len(c):
            return ""
        ref = c[c["source"] == "reference"]
        if not len(ref):
            return ""
        parts = [f"{r['implementation']} {r['at_once']} processes at once ({r['processes']}), "
                 f"{r['probe_over_alone']:.2f}x its FEs alone" for r in ref.to_dict("records")]
        return (" The CPU columns ran side by side on the host (`shared`), and the contention check below shows "
                "what that cost a run on one cell: " + "; ".join(parts) + ". The CPU columns therefore stand for fewer "
                "FEs than one such run alone would make; the GPU column ran " + self._per_launch()
                + ", one launch per GPU, each run a share of it (the FE table below).")

    def _per_launch(self) -> str:
        k = self.spec.get("trials_per_launch", {})
        k = k.get(IMPLEMENTATION_OF["gpu"], k.get("default", 1)) if isinstance(k, dict) else k
        return f"{k} per launch"

    def fe_rate_markdown(self) -> str:
        t = self.fe_rate
        if not len(t):
            return ""
        impl = [IMPLEMENTATION_OF[c] for c in COLUMNS]
        runs = int(t["runs"].min()) if "runs" in t else 1
        lines = ["**FEs per second** of the three columns (`benchmarks/kromer_fe_rate.py`: "
                 + (f"the median of {runs} runs" if runs > 1 else "one run") + " of 3 s of "
                 "each implementation, alone on the machine, after a warm-up; F = 0.5, the experiments' CR; "
                 "each ratio with its 95 % bootstrap interval over the runs where it has 3 or more). "
                 "The paper: \"The GPU implementation was 25.2 - 216.5 times faster than CPU implementation and "
                 "2.2 - 12.5 times faster than optimized CPU implementation\" (sec. 5.3, of the evaluation of a "
                 "population, Fig. 7, Tesla C2050 against a 2.6 GHz Opteron); ours are whole DE runs (`high_level`: "
                 "the DE's operators in Python and numpy, the evaluation compiled as `sequential`'s). Machine: "
                 + "; ".join(sorted(set(t["machine"]))) + ".", "",
                 "| case | D | NP | CR | " + " | ".join(f"{COLUMN_NAMES[PAPER_COLUMN[i]]} ({i}) FEs/s" for i in impl)
                 + " | GPU / CPU | GPU / CPU opt. | CPU opt. / CPU |", "|---" * (7 + len(impl)) + "|"]
        for r in t.to_dict("records"):
            early = r.get("stopped_early")
            note = f" (reached the optimum before the budget: {early})" if isinstance(early, str) and early else ""
            lines.append(f"| {r['problem']}{note} | {r['dim']} | {r['popsize']} | {r['CR']:g} | "
                         + " | ".join(fmt(r.get(i), "{:.3g}") for i in impl)
                         + "".join(f" | {_rate_ratio(r, c)}" for c in ("gpu_over_cpu", "gpu_over_cpu_optimized",
                                                                            "cpu_optimized_over_cpu")) + " |")
        share = [c for c in (f"reference_over_alone_{i}" for i in impl) if c in t]
        held = t.dropna(subset=share, how="all") if share else t.iloc[:0]
        if len(held):
            lines += ["", "The same cases in this experiment's reference: the median FEs of a run there over what "
                      "one run alone makes in the same time (above). Below 1: the CPU runs ran side by side on "
                      "the host's cores (contention, below), the GPU runs " + self._per_launch() + ", each a share "
                      "of the GPU (the paper does not say it ran several at once).", "",
                      "| case | NP | " + " | ".join(f"{COLUMN_NAMES[PAPER_COLUMN[i]]} ({i})" for i in impl) + " |",
                      "|---" * (2 + len(impl)) + "|"]
            for r in held.to_dict("records"):
                lines.append(f"| {r['problem']} | {r['popsize']} | "
                             + " | ".join(fmt(r.get(f"reference_over_alone_{i}"), "{:.2f}") for i in impl) + " |")
        return "\n".join(lines) + "\n"

    def contention_markdown(self) -> str:
        c = self.contention
        if not len(c):
            return ""
        lines = ["**Contention**: the FEs of a 30 s run of one cell against how many runs shared the host "
                 "(`results/benchmarks/kromer_contention_*.csv`: the same seeds as the reference's rows, alone "
                 "and k at once; 'reference' = the reference's own rows of that cell, with the processes that ran "
                 "during its probe trial, counted from the rows' time stamps: CPU runs one per process, a GPU "
                 "launch as one).", "",
                 "| implementation | cell | rows | at once | instance | runs | probe trial's FEs | x alone "
                 "| FEs min / median / max |",
                 "|---|---|---|---|---|---|---|---|---|"]
        for r in c.to_dict("records"):
            at_once = f"{r['at_once']}" + (f" ({r['processes']})" if r["source"] == "reference" else "")
            lines.append(f"| {r['implementation']} | {r['function']} NP {r['popsize']} | {r['source']} | {at_once} | "
                         f"{r['boot_id']} | {r['runs']} | {r['probe_fes']:,.0f} (t{r['probe_trial']}) | "
                         f"{fmt(r['probe_over_alone'], '{:.3f}')} | {r['fes_min']:,.0f} / {r['fes_median']:,.0f} / "
                         f"{r['fes_max']:,.0f} |")
        return "\n".join(lines) + "\n"

    def claims_markdown(self) -> str:
        c = self.claims_check
        if not len(c):
            return ""
        lines = ["**The paper's claims on our data** (`paper/published/kromer_claims.csv`, rows with a `check`; "
                 "'paper's table' = what the paper's own Table 4 gives for the claim; ours from the tables above, "
                 "each of which names its machine and n):", "",
                 "| claim | where | paper's text | paper's table | ours | holds |", "|---|---|---|---|---|---|"]
        for r in c.to_dict("records"):
            lines.append(f"| {r['claim']} | {r['figure_or_table']} | {r['paper_text']} | "
                         f"{'' if pd.isna(r['paper_table']) else r['paper_table']} | {r['ours']} | {r['holds']} |")
        return "\n".join(lines) + "\n"

    def speed_markdown(self) -> str:
        t = self.speed
        if not len(t):
            return ""
        gpu = t["gpu_device"].iloc[0] if "gpu_device" in t else "gpu"
        launch = ("the pre-bound launch the many-threaded DE makes (`gpu_prebound`)" if gpu == "gpu_prebound" else
                  "a launch through the evaluator's function object (`gpu`)")
        machine = f" Machine: {t['machine'].iloc[0]}." if "machine" in t else ""
        lines = ["**Evaluation speed** (Figs. 5 and 7; `benchmarks/kromer_eval_speed.py`): seconds per evaluation of "
                 "a population (median of 20), GPU with the data on the device, launched by " + launch + "; "
                 "cpu = one compiled thread (numba: the paper's optimised CPU kind), cpu_parallel = every core."
                 + machine + " The paper: for LOP the Tesla equalled the Opteron at "
                 "16 candidates and was 1.4-9.7x faster above; for schedules the GPU was 25.2-216.5x faster than the "
                 "(high-level) CPU and 2.2-12.5x faster than the optimised CPU. No high-level evaluator is timed "
                 "here: the FEs per second above have the CPU column.", "",
                 "| problem | NP | cpu s | cpu_parallel s | gpu s | cpu / gpu | cpu_parallel / gpu |",
                 "|---|---|---|---|---|---|---|"]
        for r in t.to_dict("records"):
            lines.append(f"| {r['problem']} | {r['popsize']} | {fmt(r.get('cpu'), '{:.3g}')} | "
                         f"{fmt(r.get('cpu_parallel'), '{:.3g}')} | {fmt(r.get(gpu), '{:.3g}')} | "
                         f"{fmt(r.get('cpu_over_gpu'), '{:.2g}')} | {fmt(r.get('cpu_parallel_over_gpu'), '{:.2g}')} |")
        lop = t[t["problem"] == "lop"] if "cpu_over_gpu" in t else t.iloc[:0]
        if len(lop):
            faster = lop[lop["cpu_over_gpu"] >= 1]
            lines += ["", "LOP against the paper's Fig. 5: " + (
                f"the GPU is at least as fast as one CPU thread from NP {int(faster['popsize'].min())} on (the paper: "
                f"from 16), {fmt(faster['cpu_over_gpu'].min(), '{:.2g}')}-"
                f"{fmt(faster['cpu_over_gpu'].max(), '{:.3g}')}x"
                f" faster at NP {int(faster['popsize'].min())}-{int(faster['popsize'].max())} (the paper: 1.4-9.7x"
                " above 16); below, a launch and its wait cost more than the CPU's whole evaluation"
                if len(faster) else "one CPU thread is faster at every NP measured")
                + "."]
        return "\n".join(lines) + "\n"

    def body(self) -> str:
        return "\n".join(part for part in [
            "### Setup", "", self.protocol(), "", "### Results beside the paper", "",
            self.rastrigin_markdown(), self.lop_markdown(),
            self.figure("figure_lop_progress", "Error % vs time on be75eec, GPU and CPU (the paper's Fig. 6)"),
            self.etc_markdown(),
            self.figure("figure_etc_progress_Th", "Fit vs time for the ThM*C* matrices, NP = 64 (the paper's Fig. 8; "
                        "a reference's traces may be thinned to a point per 0.1 decade, so a step is up to 26 %)"),
            self.figure("figure_etc_progress_Tl", "Fit vs time for the TlM*C* matrices, NP = 64 (the paper's Fig. 9; "
                        "the same)"),
            self.claims_markdown()] if part is not None)

    def deviations(self) -> list[Deviation]:
        s = self.spec
        de = s["algorithms"]["de"]
        found = [Deviation("hardware", "The paper: a Tesla C2050 beside two dual-core AMD Opterons at 2.6 GHz; ours: "
                                       + ("; ".join(self.machines) or "-") + "."),
                 Deviation("parameters chosen by us", f"F = {de.get('F')}, CR = {de.get('CR')}, NP = "
                           f"{', '.join(map(str, de['popsizes']))}: none of the three is given in the paper; ours "
                           "come from a pilot (`docs/kromer.md`)."),
                 Deviation("timing", f"The GPU runs ran {self._per_launch()}, each a share of the GPU (the paper "
                           "does not say it ran several at once); CPU runs ran side by side on the host where the "
                           "provenance says `shared`.")]
        inputs = s.get("report", {}).get("study_inputs", {})
        if "table2" in inputs or "table3" in inputs:
            found.append(Deviation("left unstated by the paper", "Which of sec. 5.3's two CPU programs the "
                                   "\"sequential DE implementation\" of sec. 5.2 was; ours is the compiled one."))
        if "table4" in inputs:
            found.append(Deviation("left unstated by the paper", "The fitness's lambda: its values compare in "
                                   "magnitude, not digit for digit."))
        return found

    def appendix(self) -> str:
        return "\n".join(part for part in [
            self.lop_instances_markdown(), self.etc_table_markdown(),
            self.fe_rate_markdown(), self.contention_markdown(), self.speed_markdown(),
            self.figure("figure_eval_speed", "Seconds per population evaluation (the paper's Figs. 5 and 7)"),
            self.statistics_block(), self.sources()] if part)


def _rate_ratio(row: dict, column: str) -> str:
    """A ratio of the FE-rate table, '45.8 [41.0, 50.2]' where its interval is known."""
    lo, hi = row.get(f"{column}_lo"), row.get(f"{column}_hi")
    text = fmt(row.get(column), "{:.1f}")
    return text + (f" [{lo:.3g}, {hi:.3g}]" if lo is not None and hi is not None and pd.notna(lo) and pd.notna(hi)
                   else "")
