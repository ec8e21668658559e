"""REPORT.md section of Qin, Raimondo, Forbes & Ong (GECCO 2012): Tables 1-3 (iDE's final error,
time and success rate per function and NP, a table per D) beside the published ones, Figs. 3-6
(mean time vs NP of sDE, iDE, cudaDE and FPDE), and the paper's observations (1)-(5) of sec. 5.3
checked one by one on our numbers."""

from __future__ import annotations

from functools import cached_property

import pandas as pd

from ..run.rows import rerun_totals
from ..stats.bootstrap import format_interval, median_of_ratios_interval
from .intervals import Ratio, extremes_text, of_means
from .janssen import PUBLISHED
from .scaling import _slug
from .section import Deviation, Section, _read, fmt
from .verdict import (
    Judgement,
    Verdict,
    cell_labels,
    coverage_of,
    coverage_verdict,
    finding_of,
    n_by,
    n_text,
    numbers_of,
    paper_n,
    span,
)

NAMES = {"sequential": "sDE", "ide": "iDE", "cudade": "cudaDE", "fpde": "FPDE"}
GPU = ("ide", "cudade", "fpde")


#: the verdict of an observation whose data are missing
NO_DATA = "cannot be checked"


def _verdict(hits: int, total: int) -> str:
    if total == 0:
        return "cannot be checked (no data)"
    return "holds" if hits == total else ("does not hold" if hits == 0 else "holds in part")


class Qin(Section):

    study = "Qin et al."
    # the figures of every trial are left out: the section shows the paper's own (time against NP)
    generic_outputs = ("time", "time_vs_popsize")

    def __init__(self, spec, paper_dir, report_dir):
        super().__init__(spec, paper_dir, report_dir)
        cells = _read(self.dir / "table_cells.csv")
        if len(cells):  # the machine that ran iDE (the GPU host; its CPU rows are that machine's)
            with_ide = cells[cells["implementation"] == "ide"]
            self.machine = (with_ide if len(with_ide) else cells)["machine"].value_counts().index[0]
            # cells that ran on another machine only (a session without this GPU kind) are reported
            # apart: their times are another GPU's
            elsewhere = cells[cells["machine"] != self.machine]
            keys = ["implementation", "function", "dim", "popsize", "dtype"]
            here = cells[cells["machine"] == self.machine]
            self.elsewhere = elsewhere.merge(here[keys], on=keys, how="left", indicator=True)
            self.elsewhere = self.elsewhere[self.elsewhere["_merge"] == "left_only"].drop(columns="_merge")
            cells = here
        else:
            self.machine, self.elsewhere = None, cells
        # the tables and observations use one floating type, the experiment's first that ran
        present = list(cells["dtype"].astype(str).unique()) if len(cells) else []
        self.dtype = next((d for d in spec.get("dtypes", []) if d in present), present[0] if present else None)
        main = cells["dtype"].astype(str) == self.dtype if len(cells) else []
        self.cells, self.other_dtypes = (cells[main], cells[~main]) if len(cells) else (cells, cells)
        self.published = _read(PUBLISHED / "qin_tables_1_3.csv")

    def title(self) -> str:
        return ("Qin, Raimondo, Forbes & Ong (GECCO 2012): iDE against sDE, cudaDE and FPDE "
                "(Tables 1-3, Figs. 3-6)")

    def verdicts(self) -> list[Verdict]:
        """Tables 1-3 (iDE's cells beside the paper's: every cell at n, and the success rate within 0.2
        of the paper's) and Figs. 3-6 (the paper gives no numbers: its five observations, checked)."""
        wanted = paper_n(self.spec)
        ide = self.cells[self.cells["implementation"] == "ide"] if len(self.cells) else self.cells
        keys = ["dim", "function", "popsize"]
        rows = []
        if len(ide) and len(self.published):
            both = ide.merge(self.published, on=keys, suffixes=("", "_paper"))
            sr = (both["success_rate"] - both["success_rate_paper"]).abs() <= 0.2
            missing = len(self.published) - len(both)
            # where ours succeeds less, the budget of 10^4 x D FEs leaves large populations few generations
            lower = both[~sr & (both["success_rate"] < both["success_rate_paper"])]
            cause = "ours succeeds more"
            if len(lower):  # the largest NPs that hold most of the cells where ours succeeds less
                per_np = lower["popsize"].value_counts().sort_index(ascending=False)
                big = per_np[per_np.cumsum().shift(fill_value=0) < len(lower) / 2]
                cause = (f"few generations at NP {', '.join(map(str, sorted(big.index)))} "
                         f"({int(big.sum())} of {int((~sr).sum())})")
            finding = finding_of(int(sr.sum()), len(both), cause, "cells' success rates within 0.2")
            counts = n_by(ide, "implementation")
            coverage = coverage_of(counts, wanted)
            if missing:  # a cell of the paper's without ours is short of all its runs
                coverage = Judgement("short", ", ".join(filter(None, [
                    f"{missing} of the paper's {len(self.published)} cells", coverage.detail])), "not run")
            rows.append(Verdict(
                "Tables 1-3", n_text(counts), str(wanted),
                f"iDE's mean time {extremes_text(self._time_ratios(both), '{:.2g}')} the paper's; "
                f"success rate within 0.2 of the paper's in {int(sr.sum())} of {len(both)} cells ({self.machine}, "
                f"{self.dtype}, against a GTX560)", coverage,
                numbers_of(both["mean_time_s"] / both["mean_time_s_paper"], "another GPU",
                           labels=cell_labels(both, ["function", "dim", "popsize"])), finding))
        else:
            rows.append(coverage_verdict("Tables 1-3", {}, wanted, ""))
        held = [NO_DATA if verdict.startswith(NO_DATA) else verdict for verdict, _ in self._observations]
        if not held:
            return rows + [coverage_verdict("Figs. 3-6", {}, wanted, "")]
        counts = {v: held.count(v) for v in ("holds", "holds in part", "does not hold", NO_DATA)}
        said = {"holds in part": "in part", "does not hold": "not"}
        finding = Judgement("holds") if counts["holds"] == len(held) else Judgement(
            "not" if counts["does not hold"] == len(held) else "in part",
            "observations " + ", ".join(f"({k}) {said.get(v, v)}"
                                        for k, v in enumerate(held, 1) if v != "holds"),
            # time against NP is the GPU's: a larger one keeps more of the population in flight at once
            "another GPU")
        headline = (f"the paper's {len(held)} observations on time against NP: {counts['holds']} hold(s), "
                    f"{counts['holds in part']} in part, {counts['does not hold']} not ({self.machine})")
        rows.append(coverage_verdict("Figs. 3-6", n_by(self.cells), wanted, headline, Judgement("no paper numbers"),
                                     finding))
        return rows

    def _time_ratios(self, both: pd.DataFrame) -> list[Ratio]:
        """iDE's mean time over the paper's per row of ``both`` (dim, function, popsize, the paper's
        ``mean_time_s_paper``), our trials of the cell (trial_times.csv, on :attr:`machine`) resampled."""
        return [self.time_ratio(self._competitor("ide", r["popsize"]), f"{r['function']}/d{int(r['dim'])}",
                                float(r["mean_time_s_paper"]), self.machine) if pd.notna(r["mean_time_s_paper"])
                else of_means(float("nan"), 0) for r in both.to_dict("records")]

    def _wide(self) -> pd.DataFrame:
        return self.cells.pivot_table(index=["function", "dim", "popsize"], columns="implementation",
                                      values="mean_time_s", observed=True)

    # ---- Tables 1-3 -------------------------------------------------------------------------
    def tables(self) -> str:
        ours = self.cells[self.cells["implementation"] == "ide"].set_index(["dim", "function", "popsize"])
        paper = (self.published.set_index(["dim", "function", "popsize"]) if len(self.published)
                 else pd.DataFrame())
        dims = sorted(set(ours.index.get_level_values(0)) | (set(paper.index.get_level_values(0))
                                                             if len(paper) else set()))
        if not dims:
            return "(no iDE results)\n"
        out = []
        for k, dim in enumerate(dims, 1):
            pops = sorted({p for d, _, p in list(ours.index) + list(paper.index) if d == dim})
            funcs = sorted({f for d, f, _ in list(ours.index) + list(paper.index) if d == dim})
            lines = [f"**Table {k}: D = {dim}.** iDE: mean (std) of the final error, mean (std) of the wall time "
                     "in seconds, success rate (final error below 1e-8); n trials per cell in the ours rows "
                     f"({self.machine}, {self.dtype}); paper: a GTX560, 25 runs.", "",
                     "| function | | " + " | ".join(f"P{p}" for p in pops) + " |", "|---" * (len(pops) + 2) + "|"]

            def cell(table, key, mean, std, spec="{:.3g}"):
                if key not in table.index:
                    return "-"
                row = table.loc[key]
                return f"{fmt(row[mean], spec)} ({fmt(row[std], spec)})"

            for f in funcs:
                keys = [(dim, f, p) for p in pops]
                n = [int(ours.loc[key, "n"]) if key in ours.index else 0 for key in keys]
                lines += [
                    f"| {f} | error, paper | "
                    + " | ".join(cell(paper, key, "mean_error", "std_error") for key in keys) + " |",
                    "| | error, ours | "
                    + " | ".join(cell(ours, key, "mean_error", "std_error") for key in keys) + " |",
                    "| | time, paper | "
                    + " | ".join(cell(paper, key, "mean_time_s", "std_time_s") for key in keys) + " |",
                    "| | time, ours | "
                    + " | ".join(cell(ours, key, "mean_time_s", "std_time_s") for key in keys) + " |",
                    "| | SR, paper | " + " | ".join(fmt(paper.loc[key, "success_rate"], "{:.2f}") if key in paper.index
                                                     else "-" for key in keys) + " |",
                    "| | SR, ours (n) | " + " | ".join(
                        f"{fmt(ours.loc[key, 'success_rate'], '{:.2f}')} ({m})" if key in ours.index else "-"
                        for key, m in zip(keys, n)) + " |"]
            out.append("\n".join(lines) + "\n")
        return "\n".join(out)

    def summary(self) -> str:
        """Tables 1-3 in brief: per (D, function) the success rates of the paper and ours at each NP and
        the ranges of ours / the paper's mean time and mean error (the full tables: :meth:`tables`)."""
        ours = self.cells[self.cells["implementation"] == "ide"].set_index(["dim", "function", "popsize"])
        if not len(ours) or not len(self.published):
            return ""
        both = ours.merge(self.published.set_index(["dim", "function", "popsize"]), left_index=True, right_index=True,
                          how="inner", suffixes=("", "_paper"))
        if not len(both):
            return ""
        pops = sorted(set(both.index.get_level_values(2)))
        lines = [f"iDE against the paper per D and function: success rate at NP = {', '.join(map(str, pops))} "
                 f"(paper / ours; ours from n = {span(int(both['n'].min()), int(both['n'].max()))} trials per cell "
                 f"on {self.machine}, {self.dtype}; the paper's on a GTX560, 25 runs), and ours / the paper's "
                 "mean time and mean error over the NPs (error: where both are above 0). "
                 + self.rows_label(["ide"]), "",
                 "| D | function | success rate, paper | success rate, ours | time ours / paper | "
                 "error ours / paper |", "|---" * 6 + "|"]
        for (dim, f), g in both.groupby(level=[0, 1]):
            g = g.droplevel([0, 1])
            rates = [(fmt(g.loc[p, "success_rate_paper"], "{:.2f}"), fmt(g.loc[p, "success_rate"], "{:.2f}"))
                     if p in g.index else ("-", "-") for p in pops]
            errors = g[(g["mean_error"] > 0) & (g["mean_error_paper"] > 0)]
            times = extremes_text(self._time_ratios(g.reset_index().assign(dim=dim, function=f)), "{:.2g}")
            # ours resampled against the paper's fixed mean (a folder without trial_errors.csv: the points)
            error_ratios = extremes_text([
                self.error_ratio(self._competitor("ide", p), f"{f}/d{int(dim)}", r["mean_error_paper"], self.machine)
                if len(self.trial_errors) else of_means(r["mean_error"] / r["mean_error_paper"], int(r["n"]))
                for p, r in errors.iterrows()], "{:.2g}")
            lines.append(f"| {dim} | {f} | {' / '.join(r[0] for r in rates)} | {' / '.join(r[1] for r in rates)} | "
                         f"{times} | {error_ratios} |")
        return "\n".join(lines) + "\n"

    # ---- Observations (1)-(5) of sec. 5.3 ---------------------------------------------------
    @cached_property
    def _observations(self) -> list[tuple[str, str]]:
        """(verdict, bullet) of each observation ('cannot be checked' without its data); none with fewer
        than two implementations."""
        w = self._wide() if len(self.cells) else pd.DataFrame()
        impls = [i for i in ("sequential", "ide", "cudade", "fpde") if i in w.columns]
        if len(impls) < 2:
            return []
        return [self._obs1(w, impls), self._obs2(w, impls), self._obs3(w), self._obs4(w), self._obs5(w)]

    def observations(self) -> str:
        if not self._observations:
            return "(too few implementations with results to check the observations)\n"
        return "\n".join(text for _, text in self._observations) + "\n"

    @staticmethod
    def _name(impl):
        return NAMES.get(impl, impl)

    def _obs1(self, w, impls):
        orders = w[impls].dropna().apply(lambda r: tuple(r.sort_values().index), axis=1)
        settings, same, differ = 0, 0, []
        for (dim, popsize), part in orders.groupby(level=["dim", "popsize"]):
            settings += 1
            if part.nunique() == 1:
                same += 1
            else:
                differ.append(f"(D={dim}, NP={popsize})")
        verdict = _verdict(same, settings)
        text = (f"* **(1) Similar comparisons on every problem: {verdict}.** The order of the "
                f"{len(impls)} implementations by mean time is the same on all functions in {same} of {settings} "
                "(D, NP) settings")
        return verdict, text + (f"; it differs at {', '.join(differ)}." if differ else ".")

    def _obs2(self, w, impls):
        data = w[impls].dropna()
        if "ide" not in data:
            return NO_DATA, "* **(2) iDE fastest everywhere:** no iDE results."
        fastest = data.idxmin(axis=1)
        wins = int((fastest == "ide").sum())
        losses = data[fastest != "ide"]
        verdict = _verdict(wins, len(data))
        text = (f"* **(2) iDE fastest at every NP and D: {verdict}.** iDE has the lowest mean "
                f"time in {wins} of {len(data)} (function, D, NP) cells")
        if len(losses):
            worst = (losses["ide"] / losses.min(axis=1)).sort_values(ascending=False)
            text += ("; elsewhere " + ", ".join(
                f"{self._name(fastest[k])} at {k[0]} D={k[1]} NP={k[2]} ({v:.2f}x faster)"
                for k, v in list(worst.items())[:6]) + (" ..." if len(worst) > 6 else ""))
        text += (". Mean time over iDE's, range over the cells (both sides' trials resampled): " + "; ".join(
            f"{self._name(i)} {extremes_text(self._pair_ratios(data.index, i), '{:.2g}')}"
            for i in impls if i != "ide") + ".")
        return verdict, text

    def _pair_ratios(self, cells, impl: str, base: str = "ide") -> list[Ratio]:
        """``impl``'s mean time over ``base``'s in each (function, D, NP) of ``cells``, with the interval of both
        sides' trials (:meth:`time_ratio`: trial_times.csv on :attr:`machine`, else the time table's means)."""
        return [self.time_ratio(self._competitor(impl, p), f"{f}/d{int(d)}", self._competitor(base, p), self.machine)
                for f, d, p in cells]

    def _competitor(self, impl: str, popsize) -> str:
        """The tables' label of ``impl`` at ``popsize``: with the floating type where the trials have several
        (``gpude.stats.tables.with_competitors``), else without it."""
        label = f"{impl}/{int(popsize)}"
        return label if label in self._trial_labels else f"{label}/{self.dtype}"

    @cached_property
    def _trial_labels(self) -> set[str]:
        """The competitors' labels in trial_times.csv."""
        return set(self.trial_times["implementation"].astype(str)) if len(self.trial_times) else set()

    def _obs3(self, w):
        gpu = [i for i in GPU if i in w.columns]
        if not gpu:
            return NO_DATA, "* **(3) Time falls as NP grows:** no GPU results."
        falling, total, drop, rising, text = 0, 0, {}, [], {}
        for impl in gpu:
            series = w[impl].dropna()
            drops, pairs = [], []
            for (function, dim), part in series.groupby(level=["function", "dim"]):
                part = part.droplevel([0, 1]).sort_index()
                if len(part) < 2:
                    continue
                total += 1
                falling += int(part.is_monotonic_decreasing)
                if not part.is_monotonic_decreasing:
                    rising.append((impl, function, dim))
                drops.append(part.iloc[0] / part.iloc[-1])
                pairs.append([self.time_samples(self._competitor(impl, p), f"{function}/d{int(dim)}", self.machine)
                              for p in (part.index[0], part.index[-1])])
            drop[impl] = pd.Series(drops).median() if drops else float("nan")
            # the interval resamples every series' trials at both ends (none where a cell lacks its trials)
            point, lo, hi = median_of_ratios_interval(pairs)
            text[impl] = (format_interval(point, lo, hi, "{:.1f}", "x") if pd.notna(point)
                          else f"{drop[impl]:.1f}x (no trials per cell: no interval)")
        order = [i for i in sorted(drop, key=lambda i: -drop[i]) if pd.notna(drop[i])]
        claimed = [i for i in ("fpde", "cudade", "ide") if i in order]
        verdict = ("holds" if falling == total and order == claimed
                   else ("holds in part" if falling else "does not hold"))
        return verdict, (f"* **(3) Time falls as NP grows, most for FPDE, then cudaDE, then iDE: {verdict}.** "
                f"Mean time falls monotonically from the smallest to the largest NP in {falling} of {total} "
                "(implementation, function, D) series; time at the smallest NP over time at the largest (median over "
                "functions and D; 95% bootstrap interval over the trials of both ends): "
                + ", ".join(f"{self._name(i)} {text[i]}" for i in order) + "."
                + self._rising_text(rising))

    def _rising_text(self, rising) -> str:
        """The series whose time does not fall all the way, and how many of them hold runs that stopped
        at the optimum (shorter times at the small NP where they did)."""
        if not rising:
            return ""
        stopped = set()
        if "hit_rate" in self.cells:
            hits = self.cells[self.cells["hit_rate"] > 0]
            stopped = {(str(i), f, d) for i, f, d in zip(hits["implementation"], hits["function"], hits["dim"])}
        early = sum((str(i), f, d) in stopped for i, f, d in rising)
        return (f" Not falling all the way: {', '.join(f'{self._name(i)} {f} D={d}' for i, f, d in rising)}; "
                f"{early} of these {len(rising)} series hold runs that stopped at exactly 0, which shortens "
                "their times at the NP where that happened.")

    def _obs4(self, w):
        if "sequential" not in w:
            return NO_DATA, "* **(4) Against sDE:** no sDE results."
        parts, checks = [], []

        def compare(impl, rows, faster):
            if impl not in w:
                return None
            d = w.loc[rows, ["sequential", impl]].dropna()
            ok = (d[impl] < d["sequential"]) if faster else (d[impl] > d["sequential"])
            return int(ok.sum()), len(d)

        idx = w.index.to_frame(index=False)
        small = w.index[(idx["dim"] == idx["dim"].min()).values & (idx["popsize"] <= 100).values]
        larger_d = w.index[(idx["dim"] > idx["dim"].min()).values]
        big_np = w.index[(idx["popsize"] >= 500).values]
        small_np = w.index[(idx["popsize"] <= 100).values]
        for impl, rows, faster, what in (
                ("cudade", small, False, f"cudaDE slower than sDE at D={idx['dim'].min()}, NP<=100"),
                ("fpde", small, False, f"FPDE slower than sDE at D={idx['dim'].min()}, NP<=100"),
                ("ide", small, True, f"iDE faster than sDE at D={idx['dim'].min()}, NP<=100"),
                ("cudade", larger_d, True, "cudaDE faster than sDE at larger D"),
                ("fpde", big_np, True, "FPDE faster than sDE at NP>=500"),
                ("fpde", small_np, False, "FPDE slower than sDE at NP<=100")):
            r = compare(impl, rows, faster)
            if r is not None:
                checks.append(r)
                parts.append(f"{what}: {r[0]} of {r[1]} cells")
        hits = sum(a == b for a, b in checks)
        verdict = _verdict(hits, len(checks))
        return verdict, (f"* **(4) Against sDE (at 10D and small NP cudaDE and FPDE slower, iDE faster; "
                f"cudaDE ahead at larger D; FPDE ahead only at NP 500 and 1000): {verdict}** ({hits} of "
                f"{len(checks)} parts hold everywhere). " + "; ".join(parts) + ".")

    def _obs5(self, w):
        if "cudade" not in w or "ide" not in w:
            return NO_DATA, "* **(5) cudaDE close to iDE at 100D, large NP:** no cudaDE or iDE results."
        ratio = (w["cudade"] / w["ide"]).dropna()
        idx = ratio.index.to_frame(index=False)
        there = ((idx["dim"] == idx["dim"].max()) & (idx["popsize"] >= 500)).values
        if not there.any() or there.all():
            return NO_DATA, "* **(5) cudaDE close to iDE at 100D, large NP:** no such cells to compare."
        near, rest = ratio[there], ratio[~there]
        verdict = "holds" if near.median() < rest.median() else "does not hold"
        return verdict, (f"* **(5) The gap between cudaDE and iDE narrows at D={idx['dim'].max()} "
                f"with NP 500 and 1000: {verdict}.** cudaDE's time over iDE's there: median "
                f"{near.median():.2f}x (range {extremes_text(self._pair_ratios(near.index, 'cudade'))}); in the "
                f"other cells: median {rest.median():.2f}x "
                f"(range {extremes_text(self._pair_ratios(rest.index, 'cudade'))}).")

    def missing(self) -> str:
        """The cells of the experiment's grid without results: whole functions, then per
        implementation and D."""
        spec = self.spec
        impls = [i for v in spec["algorithms"].values() for i in v["implementations"]]
        have = {(str(r.implementation), str(r.function), int(r.dim), int(r.popsize))
                for r in self.cells.itertuples()} if len(self.cells) else set()
        grid = [(i, f, d, n) for i in impls for f in spec["functions"] for d in spec["dims"]
                for n in spec["popsizes"]]
        gaps = [c for c in grid if c not in have]
        if not gaps:
            return "Every cell of the grid has results."
        absent = sorted({f for f in spec["functions"] if all((i, f, d, n) in gaps for i, ff, d, n in grid if ff == f)})
        rest = {}
        for i, f, d, n in gaps:
            if f not in absent:
                rest.setdefault((i, d), []).append(n)
        per_dim = (len(spec["functions"]) - len(absent)) * len(spec["popsizes"])
        parts = ([f"no results for {', '.join(absent)}"] if absent else []) + [
            f"{NAMES.get(i, i)} at D={d}: {len(v)} of its {per_dim} cells"
            for (i, d), v in sorted(rest.items(), key=lambda kv: (kv[0][1], kv[0][0]))]
        return "Without results (the observations use the cells that have them): " + "; ".join(parts) + "."

    def _budget_text(self) -> str:
        """Where the paper's success rates exceed what the stated budget gives DE here."""
        ours = self.cells[self.cells["implementation"] == "ide"]
        paper = self.published
        if not len(ours) or not len(paper):
            return ""
        m = ours.merge(paper, on=["dim", "function", "popsize"], suffixes=("", "_paper"))
        gap = m[(m["success_rate_paper"] >= 0.9) & (m["success_rate"] == 0)]
        if not len(gap):
            return ""
        worst = gap.sort_values("mean_error", ascending=False).iloc[0]
        return ("* **Success at large NP.** The paper's iDE solves " + ", ".join(
            f"{r.function} D={r.dim} NP={r.popsize}" for r in gap.itertuples())
            + f" (success rate >= 0.9) where ours never does. The budget of 10^4 x D FEs leaves NP = "
            f"{int(worst.popsize)} only {int(10_000 * worst.dim / worst.popsize) - 1} generations at D = "
            f"{int(worst.dim)}, and ours ends at a mean error of {worst.mean_error:.3g} there. All four of our "
            "implementations end on the same errors for the same seed (`table_agreement.csv`), so this is DE "
            "at that budget, not one implementation; the paper's budget or accounting may differ from "
            "its text.")

    def _crosscheck_text(self) -> str:
        """Our DE's final errors beside scipy's on the same settings (``report: crosscheck:``)."""
        path = self.spec.get("report", {}).get("crosscheck")
        check = _read(path) if path else pd.DataFrame()
        if not len(check):
            return ""
        from scipy.stats import mannwhitneyu

        paper = (self.published.set_index(["function", "dim", "popsize"]) if len(self.published)
                 else pd.DataFrame())
        parts, differ = [], 0
        for (function, dim, popsize), c in check.groupby(["function", "dim", "popsize"], sort=False):
            p = mannwhitneyu(c["gpude_error"], c["scipy_error"]).pvalue
            differ += p < 0.05
            published = (f", the paper's {fmt(paper.loc[(function, dim, popsize), 'mean_error'])}"
                         if (function, dim, popsize) in paper.index else "")
            parts.append(f"{function} D={dim} NP={popsize}: ours {fmt(c['gpude_error'].mean())}, scipy's "
                         f"{fmt(c['scipy_error'].mean())} (Mann-Whitney p = {p:.2g}{published})")
        version = check["scipy"].iloc[0] if "scipy" in check else "?"
        params = ", ".join(f"{k}={check[k].iloc[0]:g}" for k in ("F", "CR") if k in check)
        seeds = check.groupby(["function", "dim", "popsize"]).size().min()
        return (f"* **Our errors against scipy's.** scipy {version}'s `differential_evolution` with the same "
                f"settings (rand1bin, {params}, NP, 10^4 x D FEs, classic generational updating, "
                f"out-of-bounds components resampled, no polishing), {seeds} "
                "seeds a cell, on the cells where our errors differ most from the paper's; mean final error: "
                + "; ".join(parts) + f" (`{path}`). The two differ at p < 0.05 in {differ} of {len(parts)} cells; "
                "where they do not, the gap to the paper's errors is DE at these settings, not our code.")

    def _precision_text(self) -> str:
        """The tables' floating type, and how cells also run in another type compare with it."""
        text = (f"* **Precision.** The paper does not state its floating type; the tables and observations "
                f"use {self.dtype}, so that the 1e-8 success threshold of Tables 1-3 can be met.")
        keys = ["implementation", "function", "dim", "popsize"]
        for dtype, other in self.other_dtypes.groupby(self.other_dtypes["dtype"].astype(str)):
            m = other.merge(self.cells, on=keys, suffixes=("", "_main"))
            if not len(m):
                continue
            ratio = m["mean_time_s"] / m["mean_time_s_main"]
            impls = ", ".join(NAMES.get(str(i), str(i)) for i in sorted(m["implementation"].astype(str).unique()))
            worse = m[m["success_rate"] < m["success_rate_main"]]
            both = (m["mean_error"] > 0) & (m["mean_error_main"] > 0)
            error_ratio = (m["mean_error"] / m["mean_error_main"])[both].median()
            # each cell's ratio with the interval of both types' trials (the time table's means where
            # trial_times.csv lacks a cell)
            ratios = [self.time_ratio(f"{r.implementation}/{int(r.popsize)}/{dtype}", f"{r.function}/d{int(r.dim)}",
                                      f"{r.implementation}/{int(r.popsize)}/{self.dtype}", self.machine)
                      for r in m.itertuples()]
            spread = extremes_text(ratios, "{:.2f}") if any(pd.notna(r.point) for r in ratios) else (
                f"{ratio.min():.2f}-{ratio.max():.2f}x")
            text += (f" {impls} also ran in {dtype} ({len(m)} cells): its mean time over {self.dtype}'s is "
                     f"{ratio.median():.2f}x (median; {spread}; the time stamps of "
                     "each type's runs are in the provenance table, and runs of different sessions carry the "
                     f"instances' speed difference, see Sessions); its success rate is lower in {len(worse)} of "
                     f"{len(m)} cells" + (": " + ", ".join(
                         f"{r.function} D={r.dim} NP={r.popsize} ({r.success_rate:.2f} vs {r.success_rate_main:.2f})"
                         for r in worse.itertuples()) if len(worse) else "")
                     + f"; mean final error {dtype} over {self.dtype}, median over the cells where both are "
                     f"above 0: {fmt(error_ratio)}x.")
        for machine, other in self.elsewhere.groupby("machine"):
            text += (f" On {machine} (the cells this machine lacks): " + "; ".join(
                f"{NAMES.get(str(r.implementation), str(r.implementation))} {r.dtype} {r.function} D={r.dim} "
                f"NP={r.popsize}: error {fmt(r.mean_error)}, success {r.success_rate:.2f}, {fmt(r.mean_time_s)} s "
                f"(n = {int(r.n)})" for r in other.itertuples()) + ".")
        return text

    def _sessions_text(self) -> str:
        """Panels (function, D) whose implementations ran in different sessions (boots of the
        machine, or commits where boots were not recorded), and how the sessions compare where the
        same trials ran in both (``rerun_check.csv``)."""
        if "session" not in self.cells or not len(self.cells):
            return ""
        mixed = []
        for (function, dim), part in self.cells.groupby(["function", "dim"], observed=True):
            by_session = part.groupby("session", observed=True)["implementation"].agg(
                lambda v: ", ".join(sorted({NAMES.get(str(i), str(i)) for i in v})))
            if len(by_session) > 1:
                mixed.append(f"{function} D={dim} (" + "; ".join(
                    f"{impls} in {session}" for session, impls in by_session.items()) + ")")
        if not mixed:
            return ""
        text = ("* **Sessions.** The figures' panels " + ", ".join(mixed) + " hold cells measured in different "
                "sessions, on different instances of the machine.")
        reruns = _read(self.dir / "rerun_check.csv")
        if len(reruns):
            total = rerun_totals(reruns)
            text += (f" {total['n']} trials of {total['cells']} cells were run in both sessions "
                     f"({', '.join(sorted(set(reruns['reference_commit'].astype(str))))} then "
                     f"{', '.join(sorted(set(reruns['rerun_commit'].astype(str))))}; `rerun_check.csv`): "
                     f"{total['same_error']:.0%} end on the same final error, and the later session took "
                     f"{total['time_ratio_median']:.2f}x the earlier's time (median over cells; "
                     f"cell medians {reruns['time_ratio_median'].min():.2f}-{reruns['time_ratio_median'].max():.2f}x). "
                     "Comparisons across sessions within those panels carry that factor; the observations "
                     "above use the times as measured.")
        return text

    def _stops_text(self) -> str:
        cells = pd.concat([self.cells, self.other_dtypes])
        if "hit_rate" not in cells or not len(cells):
            return ""
        cells = cells.assign(label=[f"{NAMES.get(str(i), str(i))}" + ("" if str(d) == self.dtype else f" {d}")
                                    for i, d in zip(cells["implementation"], cells["dtype"])])
        key = ["function", "dim", "popsize"]
        ran = cells.groupby(key, observed=True)["label"].agg(set)
        hit = cells[cells["hit_rate"] > 0].groupby(key, observed=True)["label"].agg(set)
        if not len(hit):
            return "* **Stopping.** As in the paper every run spent its whole budget (10^4 x D FEs)."
        alike = [k for k, v in hit.items() if v == ran[k]]
        some = [k for k, v in hit.items() if v != ran[k]]
        def name(k):
            return f"{k[0]} D={k[1]} NP={k[2]}"

        return ("* **Stopping.** As in the paper runs spend the whole budget, except that a run whose error "
                "reaches exactly 0 (nothing left to improve) stops there. Some runs of every implementation "
                f"did in {len(alike)} cells: " + ", ".join(map(name, alike))
                + ("; some runs of only " + "; ".join(
                    f"{', '.join(sorted(hit[k], key=str.lower))} in {name(k)}" for k in some) if some else "")
                + ". The paper's runs went on, so its times there include generations after the optimum.")

    def body(self) -> str:
        functions = sorted(self.cells["function"].unique()) if len(self.cells) else []
        # one figure per function, and per machine where cells ran on several (scaling.time_vs_popsize)
        machine = f"_{_slug(self.machine)}" if self.machine else ""
        suffix = machine if machine and any(self.dir.glob(f"time_vs_popsize_*{machine}.png")) else ""
        figures = [self.figure(f"time_vs_popsize_{f}{suffix}", f"Fig. {3 + k}: {f}, mean wall time vs population size "
                               f"({self.machine})") for k, f in enumerate(functions)]
        return "\n".join([
            "### Setup", "", self.settings(), "",
            "### Tables 1-3: iDE's error, time and success rate beside the paper's", "",
            "Paper: Tables 1-3 of Qin et al. (GTX560 with CUDA 4.0, Xeon E5410; "
            "`paper/published/qin_tables_1_3.csv`; F1-F4 = Q01-Q04). Mean and std per cell: the appendix.", "",
            self.summary() or self.tables(),
            "### Figs. 3-6: mean wall time against the population size", "",
            "The paper does not give the figures' numbers, so each of its observations (sec. 5.3) is "
            f"checked on ours (machine: {self.machine}). {self.missing()}", "", self.observations(), *figures])

    #: which of the section's notes are deviations from the paper's setup, by topic (the rest: anomalies)
    DEVIATIONS = {"Hardware": "hardware", "The baselines": "implementation", "sDE": "timing",
                  "Success rate": "parameters chosen by us", "Precision": "left unstated by the paper",
                  "Stopping": "implementation"}

    def deviations(self) -> list[Deviation]:
        return self.sorted_notes[0]

    def appendix(self) -> str:
        return "\n".join(part for part in [
            "### Tables 1-3 in full", "", self.tables() if self.summary() else "",
            self.statistics_block(), self.sources()] if part)

    def notes(self) -> str:
        return "\n".join(["""* **Hardware.** The paper ran on an NVIDIA GTX560 (compute capability 2.1, 7 SMs) with an
  Intel Xeon E5410, CUDA 4.0; ours on """ + (self.machine or "-") + """. Launch latency and occupancy, which set
  the observations, differ by an order of magnitude between the two GPUs.
* **The baselines.** No code of cudaDE or FPDE is public; ours follow Qin's description (sec. 3.2):
  cudaDE's host-drawn index matrix copied every generation, its combined kernels and its fixed 240 x 64
  grid; FPDE's kernel per operator with ceil(N/16) x 16 and N x 16 launches. FPDE's texture-memory reads
  are not reproduced (numba-cuda has no texture objects), and both draw their random numbers from our
  counter-based generator instead of the host's rand() and CURAND, so all four implementations make
  the same run for a seed and differ only in time.
* **sDE.** Our sequential DE is numba-compiled on one core; its batches ran side by side, one core
  each, never beside a GPU batch (`concurrency` column).
* **Success rate.** It counts final errors below 1e-8, as the paper's.
""", self._precision_text(), self._stops_text(), self._budget_text(), self._crosscheck_text(),
            self._sessions_text()])
