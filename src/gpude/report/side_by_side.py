"""REPORT.md section of the side by side (``config/experiments/side_by_side.yaml``): the authors' CUDA
programs (All-GPU iDE, All-GPU DE; :mod:`gpude.implementations.janssen`) and ours on the same GPU, per
function: the authors' time per run, ours, the ratio ours / theirs, n, and the device.

``gpude paper --study side_by_side`` writes ``side_by_side.csv`` (:func:`side_by_side_table`) from the
experiment's trials (the committed reference and this machine's run); the section reads it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from ..core.io import write_csv_atomic
from ..core.machines import machine_labels
from .intervals import extremes_text, ratio, stored
from .section import Deviation, Section, _read, fmt
from .trial_params import trials_per_launch
from .verdict import Judgement, Verdict, cell_labels, n_by, n_text, numbers_of, paper_n

#: case study 1's trials per cell (Janssen et al., Table 3), the n a comparison in its setting stands beside
PAPER_TRIALS = 30

#: the authors' programs (their implementation names in the experiment) -> their model's name
AUTHORS = {"authors_ide": "All-GPU iDE", "authors_de": "All-GPU DE"}
#: ours measured against the All-GPU DE; every other of ours against the All-GPU iDE
AGAINST_DE = ("all_gpu",)
COLUMNS = ["device", "function", "implementation", "trials_per_launch", "baseline", "n", "failed", "mean_s",
           "authors_mean_s", "authors_n", "ratio", "ratio_lo", "ratio_hi", "mean_error"]
WHAT_TO_RUN = ("on a GPU host with nvcc, the authors' slim tree in `.authors/` "
               "(`python -m gpude.implementations.janssen pack`), run `bash benchmarks/gpu_checks.sh side_by_side` "
               "(or `snakemake --cores all --configfile config/experiments/side_by_side.yaml`)")


#: the side by side's second names of ours: ``ide_x30``, ``block_x132`` (n trials per launch)
_SECOND_NAME = re.compile(r"_x\d+(?=$|:)")


def baseline_of(implementation: str) -> str:
    """The authors' program an implementation of ours is measured against (``all_gpu``, its
    ``_x30`` name and ``all_gpu:options``: the All-GPU DE; the rest: the All-GPU iDE)."""
    base = _SECOND_NAME.sub("", str(implementation).split(":")[0])
    return "authors_de" if base in AGAINST_DE else "authors_ide"


def _label(implementation: str, per_launch: int) -> str:
    """``ide_x30`` at 30 per launch -> ``ide, share of 30/launch`` (options kept:
    ``all_gpu:graph_generations=32``): a batched run's time is its share of the launch, not a latency."""
    base = _SECOND_NAME.sub("", str(implementation), count=1)
    return base if int(per_launch) == 1 else f"{base}, share of {int(per_launch)}/launch"


def side_by_side_table(trials: pd.DataFrame) -> pd.DataFrame:
    """One row per device, function and implementation of ours: n, mean wall time per run, the
    authors' (same device and function) and the ratio ours / theirs. A failed trial counts in
    ``failed``, never in a mean. Rows of a machine without a real GPU (the simulator's) are left out."""
    if not len(trials):
        return pd.DataFrame(columns=COLUMNS)
    # the device: the machine as every table names it (GPU / CPU; a row that saw no GPU, e.g. a process
    # that never initialised CUDA, named by its host's GPU rows), a machine without a real GPU left out
    labels = trials["machine"] if "machine" in trials else pd.Series(machine_labels(trials), index=trials.index)
    t = trials.assign(device=labels.astype(str), trials_per_launch=trials_per_launch(trials))
    t = t[t["device"].str.contains(" / ", regex=False)]
    ok = t[t["wall_time_s"].notna() & t["status"].astype(str).isin(["budget", "target", "time"])] \
        if "status" in t else t[t["wall_time_s"].notna()]
    keys = ["device", "function", "implementation", "trials_per_launch"]
    agg = ok.groupby(keys).agg(n=("wall_time_s", "size"), mean_s=("wall_time_s", "mean"),
                               mean_error=("best_error", "mean"))
    failed = t.groupby(keys).size().sub(agg["n"], fill_value=0).rename("failed")
    agg = agg.join(failed, how="outer").reset_index()
    agg["n"] = agg["n"].fillna(0).astype(int)
    agg["failed"] = agg["failed"].fillna(0).astype(int)
    theirs = agg[agg["implementation"].isin(list(AUTHORS))].set_index(["device", "function", "implementation"])
    ours = agg[~agg["implementation"].isin(list(AUTHORS))].copy()
    ours["baseline"] = ours["implementation"].map(baseline_of)
    idx = list(zip(ours["device"], ours["function"], ours["baseline"]))
    ours["authors_mean_s"] = [theirs["mean_s"].get(k) for k in idx]
    ours["authors_n"] = [theirs["n"].get(k) for k in idx]
    ours["ratio"] = ours["mean_s"] / pd.to_numeric(ours["authors_mean_s"])
    # its 95 % bootstrap interval: our runs and theirs resampled (a side of fewer than 3 runs: none)
    times = ok.groupby(["device", "function", "implementation", "trials_per_launch"])["wall_time_s"]
    theirs_times = ok.groupby(["device", "function", "implementation"])["wall_time_s"]

    def interval(row):
        mine = (row["device"], row["function"], row["implementation"], row["trials_per_launch"])
        other = (row["device"], row["function"], row["baseline"])
        if mine not in times.groups or other not in theirs_times.groups:
            return float("nan"), float("nan")
        found = ratio(times.get_group(mine).to_numpy(dtype=float), theirs_times.get_group(other).to_numpy(dtype=float))
        return found.lo, found.hi

    bounds = [interval(r) for r in ours.to_dict("records")]
    ours["ratio_lo"] = [lo for lo, _ in bounds]
    ours["ratio_hi"] = [hi for _, hi in bounds]
    return ours[COLUMNS].sort_values(["device", "baseline", "implementation", "trials_per_launch", "function"],
                                     ascending=[True, False, True, True, True]).reset_index(drop=True)


def write_outputs(trials: pd.DataFrame, traces: dict, out_dir, **inputs) -> list[Path]:
    if inputs:
        from ..core.errors import InvalidInputError

        raise InvalidInputError(f"the side_by_side section reads no study inputs; got {', '.join(inputs)}")
    return [write_csv_atomic(side_by_side_table(trials), Path(out_dir) / "side_by_side.csv")]


def _ratio_text(row, theirs) -> str:
    """Ours / theirs with its interval ('-x' without a ratio; the point alone in a table written without
    the interval)."""
    if pd.isna(row["ratio"]):
        return "-x"
    return stored(row["ratio"], row.get("ratio_lo"), row.get("ratio_hi"), row["n"], theirs["authors_n"]).text("{:.2f}")


def _per_function(d: pd.DataFrame, head: list[str], what: str, first_cells, cell) -> list[str]:
    """The lines of a table of ``d``: a row per function (its first cells ``first_cells(rows of the function)``),
    a column per implementation of ours and trials a launch, in the order they come (``cell(row, rows of the
    function)``, '-' where the function has none), headed ``<label>: <what>``."""
    cols = list(dict.fromkeys(zip(d["implementation"], d["trials_per_launch"])))
    head = [*head, *(f"{_label(i, k)}: {what}" for i, k in cols)]
    lines = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    for function, f in d.groupby("function", sort=True):
        by = f.set_index(["implementation", "trials_per_launch"])
        cells = [str(function), *first_cells(f), *(cell(by.loc[key], f) if key in by.index else "-" for key in cols)]
        lines.append("| " + " | ".join(cells) + " |")
    return [*lines, ""]


def render_table(table: pd.DataFrame) -> str:
    """Per device and authors' program, a table: function | theirs (n) | each of ours: s (n), ratio."""
    if not len(table):
        return f"No side-by-side rows from a GPU yet: {WHAT_TO_RUN}.\n"
    lines = []
    for device, d in table.groupby("device", sort=True):
        lines += [f"#### {device}", ""]
        for base in AUTHORS:
            b = d[d["baseline"] == base]
            if len(b):
                lines += _per_function(b, ["function", f"authors' {AUTHORS[base]}: s/run (n)"], "s/run (n), ratio",
                                       _theirs_cells, _ours_against_theirs)
    return "\n".join(lines)


def render_compact(table: pd.DataFrame, base: str = "authors_ide") -> str:
    """One table for every device against the authors' ``base``: a row for theirs (s a run) and one per
    implementation of ours (the ratio ours / theirs), a column per function; n and the intervals are
    :func:`render_table`'s."""
    t = table[table["baseline"] == base]
    if not len(t):
        return ""
    functions = sorted(t["function"].unique())
    lines = ["| device | | " + " | ".join(functions) + " |", "|---" * (len(functions) + 2) + "|"]
    for device, d in t.groupby("device", sort=True):
        first = d.drop_duplicates("function").set_index("function")
        theirs = first["authors_mean_s"]
        lines.append(f"| {device} | authors' {AUTHORS[base]}, s a run ({_runs(first['authors_n'])}) | "
                     + " | ".join(fmt(theirs[f]) if f in theirs.index else "-" for f in functions) + " |")
        for (implementation, k), g in d.groupby(["implementation", "trials_per_launch"], sort=False):
            ratios = g.set_index("function")["ratio"]
            lines.append(f"| | {_label(implementation, k)} ({_runs(g['n'])}): ours / theirs | "
                         + " | ".join(f"{ratios[f]:.2f}x" if f in ratios.index and pd.notna(ratios[f]) else "-"
                                      for f in functions) + " |")
    return "\n".join([*lines, ""])


def _runs(n: pd.Series) -> str:
    """The runs a function, as a range where the functions differ: 'n = 3', 'n = 1-2'."""
    n = pd.to_numeric(n).dropna().astype(int)
    return f"n = {n.min()}" if n.min() == n.max() else f"n = {n.min()}-{n.max()}"


def _theirs_cells(f: pd.DataFrame) -> list[str]:
    first = f.iloc[0]
    return [f"{fmt(first['authors_mean_s'])} ({fmt(first['authors_n'], '{:.0f}')})"]


def _ours_against_theirs(r, f: pd.DataFrame) -> str:
    failed = f", {int(r['failed'])} failed" if r["failed"] else ""
    return f"{fmt(r['mean_s'])} ({int(r['n'])}{failed}), {_ratio_text(r, f.iloc[0])}"


def floor_table(table: pd.DataFrame, dim: int, popsize: int, max_fes: int, dtype: str = "float32") -> pd.DataFrame:
    """Per device with datasheet peaks (:data:`gpude.report.floor.PEAKS`), function and implementation of ours:
    its mean seconds a run, the floor of a run on that device (:func:`gpude.report.floor.floor_point`: all of a
    run's flops at the ``dtype``'s peak or its bytes at the memory bandwidth, whichever is longer, at the run's
    trials a launch) and the multiple of it. Ours only (the authors' programs' flops are theirs to count)."""
    from .floor import floor_point, peak_device

    rows = []
    for r in table.to_dict("records") if len(table) else []:
        peak = peak_device(str(r["device"]).split(" / ")[0])
        if peak is None or not r["n"] or pd.isna(r["mean_s"]):
            continue
        point = floor_point(str(r["function"]), int(dim), int(popsize), int(max_fes), peak, dtype,
                            int(r["trials_per_launch"]))
        rows.append({**{k: r[k] for k in ("device", "function", "implementation", "trials_per_launch", "n", "mean_s")},
                     "peak": peak, "dtype": dtype, "floor_s": point["floor_s_run"], "bound": point["bound"],
                     "x_floor": r["mean_s"] / point["floor_s_run"]})
    return pd.DataFrame(rows)


def render_floor(floors: pd.DataFrame) -> str:
    """Per device, a table: function | the floor (ms a run) | each of ours: s/run (n), multiple of the floor."""
    from .floor import PEAKS

    lines = []
    for device, d in floors.groupby("device", sort=True):
        peak, dtype = d["peak"].iloc[0], d["dtype"].iloc[0]
        unit = "fp32" if dtype == "float32" else "fp64"
        lines += [f"#### {device}", "",
                  f"The floor of a run on an {peak} ({unit.upper()} {PEAKS[peak][unit] / 1e12:.0f} TFLOPS, memory "
                  f"{PEAKS[peak]['hbm'] / 1e12:.2f} TB/s: {PEAKS[peak]['source']}): a run's flops (the rotation's "
                  "multiply-adds, the rest of each evaluation and DE's operators) at the peak, or its bytes at the "
                  "bandwidth, whichever is longer, every unit busy and no latency anywhere.", ""]
        lines += _per_function(d, ["function", "floor (ms/run)"], "s/run (n), x floor",
                               lambda f: [fmt(f["floor_s"].iloc[0] * 1e3)],
                               lambda r, f: f"{fmt(r['mean_s'])} ({int(r['n'])}), {r['x_floor']:.1f}x")
    return "\n".join(lines)


class SideBySide(Section):
    """The side by side: ratios to the authors' own programs on the same GPU."""

    write_outputs = staticmethod(write_outputs)
    generic_outputs = ("time",)
    study = "Janssen et al., the authors' code"
    # each device's rows as measured there: a share of n runs a launch is what its column reports
    join_guests = False

    def __init__(self, spec, paper_dir, report_dir):
        super().__init__(spec, paper_dir, report_dir)
        self.table = _read(self.dir / "side_by_side.csv")
        # (the floor of the experiment's one shape; another shape's would need its D and NP in the table)
        one_shape = all(len(spec.get(k, [])) == 1 for k in ("dims", "popsizes", "dtypes")) and "max_fes" in spec
        self.floors = floor_table(self.table, spec["dims"][0], spec["popsizes"][0], spec["max_fes"],
                                  spec["dtypes"][0]) if one_shape else pd.DataFrame()

    def verdicts(self) -> list[Verdict]:
        """One comparison row (the authors' programs rerun beside ours, no table of the paper): coverage,
        both sides' single-run times on every function at case study 1's :data:`PAPER_TRIALS` per cell;
        numbers, one run's time ours / theirs within a factor of 2 per (implementation, function); no
        finding of the paper to check."""
        t = self.table
        item = "their All-GPU DE and iDE beside ours"
        single = t[(t["trials_per_launch"] == 1) & t["ratio"].notna()] if len(t) else t
        if not len(single):
            return [Verdict(item, "0", str(PAPER_TRIALS), "-", Judgement(
                "none", cause="no function with both the authors' runs and ours"), kind="comparison")]
        def extremes(g):  # each ratio with both sides' runs resampled (none where a side has < 3 runs)
            return extremes_text([stored(r["ratio"], r.get("ratio_lo"), r.get("ratio_hi"), r["n"], r["authors_n"])
                                  for r in g.to_dict("records")], "{:.2g}")

        parts = [f"{impl} {extremes(g)} ({device.split(' / ')[0]})"
                 for (device, impl), g in single.groupby(["device", "implementation"], sort=False)]
        theirs = {k: (int(r["min"]), int(r["max"]))
                  for k, r in single.groupby("baseline")["authors_n"].agg(["min", "max"]).iterrows()}
        ours = n_by(single)
        functions, ran = t["function"].nunique(), single["function"].nunique()
        gaps = [f"ours {n_text(ours)}, theirs {n_text(theirs)}"] if min(
            lo for lo, _ in [*ours.values(), *theirs.values()]) < PAPER_TRIALS else []
        if ran < functions:
            gaps.append(f"both sides' runs on {ran} of {functions} functions")
        # the experiment asks few runs a cell: it times programs, it does not repeat the paper's statistics
        coverage = Judgement("short", "; ".join(gaps), f"{paper_n(self.spec)} runs a cell by design") if gaps \
            else Judgement("complete")
        return [Verdict(item, n_text(ours) + "; theirs " + n_text(theirs), str(PAPER_TRIALS),
                        "one run's time ours / theirs: " + "; ".join(parts), coverage,
                        # our kernels are ours, not theirs: the same GPU, other code
                        numbers_of(single["ratio"], "other code", "implementation-functions",
                                   labels=cell_labels(single, ["implementation", "function", "device"])),
                        kind="comparison")]

    def title(self) -> str:
        return "Side by side: the authors' CUDA programs and ours on one GPU (Janssen et al., case study 1)"

    def body(self) -> str:
        s = self.spec
        intro = (f"Experiment `{s['name']}` (`config/experiments/{s['name']}.yaml`): the authors' All-GPU iDE and "
                 "All-GPU DE (DylanJanssen/GPU-Accelerated-Evolutionary-Optimisation at c2b3ef8, built with nvcc "
                 "-O3 -arch=sm_90 by `gpude.implementations.janssen`, unpatched: their seed 0, F, CR, budget and "
                 "float32 "
                 "are fixed in their code) as program specs, and ours, in case study 1's setting: D = "
                 f"{', '.join(map(str, s['dims']))}, NP = {', '.join(map(str, s['popsizes']))}, F = 0.5, CR = 0.3, "
                 f"{s['max_fes']} FEs, float32, stop at {s.get('target', 1e-7):g} (theirs: below 10e-8). Ratio = our "
                 "mean wall seconds per run / the authors' on the same device and function (below 1 we are faster); "
                 "theirs is timed by CUDA events inside their program (no process start, CUDA context or data "
                 "loading), ours is the trial's `wall_time_s` after a warm-up; with n per launch ours is a run's "
                 "fair share of the launch (its label says `share of n/launch`): throughput, not the latency of one "
                 "run, so its ratio to the authors' single-run time says how many more runs the same GPU makes in "
                 "the same time, not how much sooner one run ends. `ide`, `resident`, `block`: against the All-GPU "
                 "iDE; `all_gpu`: against the All-GPU DE. `block` runs a trial in one thread block (one SM): "
                 "slow alone, made for a full GPU of trials (`block, share of 132/launch`: an H100's 132 SMs). "
                 "Every job is timed alone on its GPU, and a cell's runs are spread over several jobs.")
        compared = self._compared()
        compact = "\n".join(part for part in (render_compact(self.table[compared], base) for base in AUTHORS)
                            if part) if len(self.table) else ""
        parts = [intro, "", "### Time per run, ours / the authors'", "",
                 (compact + "\nEach cell of ours: its mean time a run over the authors' on the same device and "
                  "function; every time, n and the 95 % interval of each ratio: the appendix.\n") if compact
                 else "No side-by-side rows from a GPU yet: nothing to compare.\n"]
        if len(self.floors):
            best = self.floors.loc[self.floors["x_floor"].idxmin()]
            parts += [f"**Against the GPU's floor** (every function and implementation: the appendix): the closest of "
                      f"ours is {_label(best['implementation'], best['trials_per_launch'])} on {best['function']}, "
                      f"{fmt(best['mean_s'])} s a run, **{best['x_floor']:.1f}x** the floor of an {best['peak']} "
                      f"({fmt(best['floor_s'] * 1e3)} ms a run; {best['device']}, n = {int(best['n'])}).", ""]
        return "\n".join(parts)

    def _compared(self) -> pd.Series:
        """The rows of a device where the authors' programs ran (the others have no ratio: appendix)."""
        t = self.table
        if not len(t):
            return pd.Series(dtype=bool)
        with_theirs = set(t[t["ratio"].notna()]["device"])
        return t["device"].isin(with_theirs)

    def deviations(self) -> list[Deviation]:
        found = [Deviation("timing", "The authors' programs are timed by CUDA events inside their program (no "
                                     "process start, CUDA context or data loading); ours by the trial's "
                                     "`wall_time_s` after a warm-up, a run's share of its launch where several "
                                     "ran in one.")]
        if len(self.table):
            n = n_by(self.table[self.table["trials_per_launch"] == 1])
            found.append(Deviation("trials", f"Single-run times from {n_text(n)} runs a cell (the paper's case "
                                             f"study 1: {PAPER_TRIALS}); the authors' programs, seed 0 every run."))
        return found

    def appendix(self) -> str:
        compared = self._compared()
        others = self.table[~compared] if len(self.table) else self.table
        return "\n".join(part for part in [
            "### Time per run, ours / the authors', per device\n\n" + render_table(self.table[compared])
            if compared.any() else "",
            "### Time per run on the devices without the authors' runs\n\n" + render_table(others)
            if len(others) else "",
            "### A run's time against the GPU's floor\n\n" + render_floor(self.floors) if len(self.floors) else "",
            "### Final error", "", self.error_markdown(), self.sources()] if part)
