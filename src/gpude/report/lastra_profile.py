"""Lastra et al.'s profile (Tables 13-14) beside ours: the share of a MA-SW-Chains run's time per module.

The paper's shares are ``paper/published/lastra_profile.csv``; ours are the committed CSVs of
``benchmarks/lastra_profile.py`` (``results/benchmarks/lastra_profile/<device>_<machine>.csv``: a row
per run and module, :mod:`gpude.implementations.masw_profile` says what each module holds), the
lastra experiment's study input ``profile`` (that folder), which ``gpude paper`` copies into the
paper folder as ``profile.csv`` (:func:`measured`) and the section reads from there. Per
device, D and variant (``default``, or e.g. ``ls_mode=steps``) the table uses one run, the one of the
most FEs, as the paper profiled one run per D; the verdict reads the default variant.

:func:`markdown` writes the two tables (CPU: Table 13, GPU: Table 14), each of the paper's modules
beside ours, then ours that the paper does not list, and the rest; :func:`verdict` the verdict row.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..core.io import read_csv
from .section import fmt
from .verdict import Judgement, Verdict, numbers_of

REPO = Path(__file__).resolve().parents[3]
PUBLISHED = REPO / "paper" / "published" / "lastra_profile.csv"
GPU_COMMAND = "benchmarks/gpu_checks.sh lastra_profile"
CPU_COMMAND = "python benchmarks/lastra_profile.py --device cpu --out results/benchmarks/lastra_profile"
TABLES = {"cpu": 13, "gpu": 14}
#: the paper's machines (sec. 6.4)
PAPER_MACHINE = {"cpu": "one core of an i7-930, n = 1", "gpu": "GTX Titan, n not stated"}

#: the paper's module -> its printed label, and our modules that hold the same work (summed)
PAPER_MODULES = {
    "fitness_evaluation": ("Fitness evaluation", ("fitness_evaluation",)),
    "random_number_generation": ("Random number generation", ("random_numbers",)),
    "crossover": ("Crossover operation", ("crossover",)),
    "distance": ("Distance computation", ("distance",)),
    "crossover_and_random_generation": ("Crossover + rand. gen.", ("crossover_and_random_numbers",
                                                                    "crossover_with_evaluation")),
    "gpu_to_ram_transfers": ("GPU to RAM transfers", ("transfers_to_host",)),
    "solis_wets_individual_change": ("Solis Wets indiv. change", ("solis_wets", "solis_wets_with_evaluation")),
    "random_number_init": ("Random number init.", ()),
}
#: Table 14's own labels where they differ from Table 13's
GPU_LABELS = {"distance": "Distance", "fitness_evaluation": "Fitness eval."}
#: our modules the paper's rows do not hold, as the table names them
OUR_LABELS = {
    "initial_population": "initial population",
    "replacement": "replacement",
    "solis_wets": "Solis-Wets individual change",
    "fitness_evaluation": "fitness evaluation",
    "random_numbers": "random numbers",
    "crossover": "crossover",
    "distance": "distance",
    "crossover_and_random_numbers": "crossover + random numbers",
    "transfers_to_host": "transfers to the host",
    "other": "other (host decisions, the run loop)",
}
#: why a paper row has no counterpart, or what ours holds besides
NOTES = {
    "random_number_init": "none: our generator is counter-based (no state to initialise)",
    "solis_wets_with_evaluation": "ours: the fused local search, its candidates' evaluations included",
    "crossover_with_evaluation": "ours: the fused GA kernel, its children's evaluations included",
}


def published(path=PUBLISHED) -> pd.DataFrame:
    """The paper's shares (percent) per device, D and module, in the printed order."""
    return read_csv(path, comment="#")


def measured(source) -> pd.DataFrame:
    """The profile rows of ``source``: a CSV of ``benchmarks/lastra_profile.py``, or a folder of them
    (all its ``*.csv``); empty where there are none."""
    source = Path(source)
    files = sorted(source.glob("*.csv")) if source.is_dir() else ([source] if source.is_file() else [])
    if not files:
        return pd.DataFrame()
    return pd.concat([read_csv(f) for f in files], ignore_index=True)


def chosen_runs(rows: pd.DataFrame) -> pd.DataFrame:
    """Per (device, D, variant): the rows of one run, the one of the most FEs."""
    if not len(rows):
        return rows
    key = ["device", "dim", "max_fes", "variant"]
    runs = rows.drop_duplicates(key).sort_values("fes_used", ascending=False, kind="stable")
    return rows.merge(runs.drop_duplicates(["device", "dim", "variant"])[key], on=key)


def columns(paper: pd.DataFrame, ours: pd.DataFrame, device: str) -> list[tuple[int, str | None]]:
    """The table's columns of ours: per D of the paper's table, ``(D, variant)`` for each variant
    measured (``default`` first), or ``(D, None)`` where none is."""
    out = []
    for d in sorted(paper.loc[paper["device"] == device, "dim"].unique()):
        have = ours[(ours["device"] == device) & (ours["dim"] == d)] if len(ours) else ours
        variants = sorted(set(have["variant"]) if len(have) else set(), key=lambda v: (v != "default", v))
        out += [(int(d), v) for v in variants] or [(int(d), None)]
    return out


def _shares(ours: pd.DataFrame, device: str, dim: int, variant) -> pd.Series:
    """Percent per module of one run (empty where not measured)."""
    if variant is None or not len(ours):
        return pd.Series(dtype=float)
    run = ours[(ours["device"] == device) & (ours["dim"] == dim) & (ours["variant"] == variant)]
    return run.set_index("module")["share"] * 100


def comparison(paper: pd.DataFrame, ours: pd.DataFrame, device: str) -> pd.DataFrame:
    """A row per module: the paper's modules in their printed order (``label``, ``paper_<D>``, and
    ``ours_<D>_<variant>`` per column of :func:`columns`: NaN where not measured), then our modules the
    paper's rows do not hold, and ``rest`` (100 % less the paper's rows, against the sum of our modules
    it does not list)."""
    paper = paper[paper["device"] == device]
    cols = columns(paper, ours, device)
    share = {c: _shares(ours, device, *c) for c in cols}
    order = list(dict.fromkeys(paper["module"]))
    rows, matched = [], set()
    for module in order:
        label, mine = PAPER_MODULES[module]
        label = GPU_LABELS.get(module, label) if device == "gpu" else label
        row = {"module": module, "label": label, "note": ""}
        for d in dict.fromkeys(d for d, _ in cols):
            p = paper[(paper["dim"] == d) & (paper["module"] == module)]["share_percent"]
            row[f"paper_{d}"] = float(p.iloc[0]) if len(p) else float("nan")
        for c in cols:
            present = [m for m in mine if m in share[c].index]
            if not len(share[c]):
                row[_key(c)] = float("nan")
            elif not mine:
                row[_key(c)], row["note"] = 0.0, NOTES.get(module, "")
            else:
                row[_key(c)] = float(share[c][present].sum()) if present else float("nan")
                fused = [m for m in present if m in NOTES]
                row["note"] = NOTES[fused[0]] if fused else row["note"]
        matched.update(mine)
        rows.append(row)
    extra = sorted({m for c in cols for m in share[c].index} - matched,
                   key=lambda m: (m == "other", list(OUR_LABELS).index(m) if m in OUR_LABELS else 99, m))
    for module in extra:
        row = {"module": module, "label": OUR_LABELS.get(module, module.replace("_", " ")),
               "note": "not listed by the paper"}
        row.update({f"paper_{d}": float("nan") for d, _ in cols})
        row.update({_key(c): float(share[c].get(module, float("nan"))) if len(share[c]) else float("nan")
                    for c in cols})
        rows.append(row)
    rest = {"module": "rest", "label": "not in the paper's rows", "note": "the paper: 100 % less its rows; "
            "ours: the modules it does not list"}
    listed = pd.DataFrame(rows[:len(order)])
    for d in dict.fromkeys(d for d, _ in cols):
        rest[f"paper_{d}"] = 100.0 - listed[f"paper_{d}"].fillna(0).sum()
    for c in cols:
        rest[_key(c)] = float(share[c][[m for m in share[c].index if m in extra]].sum()) if len(share[c]) \
            else float("nan")
    rows.append(rest)
    return pd.DataFrame(rows)


def _key(column) -> str:
    d, variant = column
    return f"ours_{d}_{variant or 'none'}"


def _machine(run: pd.DataFrame) -> str:
    r = run.iloc[0]
    return r["gpu"] if r["device"] == "gpu" else f"{r['cpu']}, {int(r['cpu_cores'])} cores"


def _run(ours: pd.DataFrame, device: str, column) -> pd.DataFrame:
    """The rows of our run of one column (none where nothing is measured)."""
    d, variant = column
    if not len(ours):
        return ours
    return ours[(ours["device"] == device) & (ours["dim"] == d) & (ours["variant"] == variant)]


def _column_note(run: pd.DataFrame) -> str:
    r = run.iloc[0]
    sample = "" if int(r["fes_used"]) >= 500_000 else " (a sample of the run: the paper's runs have 500,000)"
    load = ""
    if "load_1min_before" in run and pd.notna(r.get("load_1min_before")):
        load = f"; load average {r['load_1min_before']:.1f} before, {r['load_1min_after']:.1f} after"
    variant = "" if r["variant"] == "default" else f" {r['variant']}"
    return (f"D = {int(r['dim']):,}{variant}: {_machine(run)}, n = 1 run of {int(r['fes_used']):,} FEs{sample}, "
            f"{r['wall_time_s']:,.0f} s, {r['implementation']} at {str(r['git_commit'])[:7]}{load}")


def table_markdown(paper: pd.DataFrame, ours: pd.DataFrame, device: str) -> str:
    """The paper's Table 13 or 14 with our share beside each of its modules (percent of the run's time)."""
    t = comparison(paper, ours, device)
    cols = columns(paper, ours, device)
    head, order = ["module"], []
    for d in dict.fromkeys(d for d, _ in cols):
        head.append(f"D = {d:,}: paper ({PAPER_MACHINE[device]})")
        order.append(f"paper_{d}")
        for c in (c for c in cols if c[0] == d):
            if c[1] is None:
                head.append("ours (no run)")
            else:
                run = _run(ours, device, c)
                variant = "" if c[1] == "default" else f", {c[1]}"
                fes = int(run["fes_used"].iloc[0])
                sample = f", {fes:,} FEs" if fes < 500_000 else ""
                head.append(f"ours ({_machine(run)}{variant}, n = 1{sample})")
            order.append(_key(c))
    lines = [f"**Table {TABLES[device]} ({device.upper()}) beside ours**: share of a run's time per module, %.", "",
             "| " + " | ".join(head + ["note"]) + " |", "|---" * (len(head) + 1) + "|"]
    for r in t.to_dict("records"):
        cells = [r["label"]] + [fmt(r[k], "{:.0f}" if k.startswith("paper") else "{:.1f}") for k in order]
        lines.append("| " + " | ".join(cells + [r["note"]]) + " |")
    text = "\n".join(lines) + "\n"
    notes = [_column_note(_run(ours, device, c)) for c in cols if c[1] is not None]
    if notes:
        text += "\nOurs: " + "; ".join(notes) + ".\n"
    missing = [f"{d:,}" for d, v in cols if v is None]
    if missing:
        command = GPU_COMMAND if device == "gpu" else CPU_COMMAND
        text += (f"\nOurs at D = {', '.join(missing)}: no profiled run committed; `{command}`"
                 + (" on a GPU host makes them (results/benchmarks/lastra_profile/README.md says where its CSV goes)"
                    if device == "gpu" else " makes them") + ".\n")
    return text


def markdown(rows: pd.DataFrame, published_path=PUBLISHED) -> str:
    """The section's profile part from our profile ``rows`` (:func:`measured`; empty: not measured): how
    ours is measured, then Table 13 and Table 14 each beside ours."""
    paper, ours = published(published_path), chosen_runs(rows)
    intro = ("The paper profiled one run per D (sec. 6.6) and lists its largest modules only; the function is not "
             "stated. Ours: one run of L01 (shifted Rastrigin) per D with the experiment's settings, each module "
             "timed (`benchmarks/lastra_profile.py`; what each module holds: "
             "`src/gpude/implementations/masw_profile.py`). On the CPU the BLX uniforms and the Solis-Wets normals "
             "are drawn into arrays apart from their use, so that 'random numbers' is timed alone (the same run bit "
             "for bit); on the GPU the stream waits after each module, so the shares are of a slower run than an "
             "unprofiled one. The modules are ours, matched to the paper's by what they compute: both codes do "
             "the same work, in other programs on other machines, so the shares compare where the time goes, "
             "not digits.\n")
    return "\n".join([intro, table_markdown(paper, ours, "cpu"), table_markdown(paper, ours, "gpu")])


def verdict(rows: pd.DataFrame, published_path=PUBLISHED) -> Verdict:
    """Tables 13-14: coverage, the paper's columns (device, D) we measured; numbers, each of the paper's
    modules that has a counterpart against ours (the default variant's), within a factor of 2; no
    finding beyond the shares. Without a profiled run, coverage "none" with the commands that make one."""
    paper, ours = published(published_path), chosen_runs(rows)
    if len(ours):
        ours = ours[ours["variant"] == "default"]
    wanted = [(dev, int(d)) for dev, d in paper[["device", "dim"]].drop_duplicates().itertuples(index=False)]
    have = [(dev, d) for dev, d in wanted if len(_run(ours, dev, (d, "default")))]
    if not have:
        return Verdict("Tables 13-14 (profile)", "-", "1", "-", Judgement(
            "none", cause=f"no profiled run committed (`{CPU_COMMAND}`; GPU: `{GPU_COMMAND}`)"))
    ratios, parts = [], []
    for dev, d in have:
        t = comparison(paper, ours, dev)
        # (a paper module with no counterpart in our code is not a difference of shares)
        rows = t[t["module"].map(lambda m: bool(PAPER_MODULES.get(m, ("", ()))[1])) & t[f"paper_{d}"].notna()]
        mine = rows[_key((d, "default"))]
        ratios += list(mine / rows[f"paper_{d}"])
        top = rows.loc[mine.idxmax()]
        parts.append(f"{dev.upper()} D = {d:,}: {top['label'].lower()} {mine.max():.0f} % "
                     f"(paper {top[f'paper_{d}']:.0f} %)")
    machines = "; ".join(sorted({f"{dev.upper()}: {_machine(_run(ours, dev, (d, 'default')))}" for dev, d in have}))
    missing = [f"{dev.upper()} {d:,}" for dev, d in wanted if (dev, d) not in have]
    coverage = Judgement("short", ", ".join(missing), "not measured") if missing else Judgement("complete")
    # our modules are other code on other machines than the paper's
    return Verdict("Tables 13-14 (profile)", f"1 per D ({len(have)} of {len(wanted)} columns)", "1",
                   f"largest module: {'; '.join(parts)} ({machines})", coverage,
                   numbers_of(ratios, "other code", "module shares"))
