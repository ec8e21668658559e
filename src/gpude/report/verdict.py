"""The verdict table at the top of paper/REPORT.md: for every study and every table or figure of its
paper that the suite reproduces, whether our runs reproduce it, our n beside the paper's, the
headline comparison with the machine that made it, and why where the answer is not a plain yes.

Each section writer says its own verdicts (:meth:`gpude.report.section.Section.verdicts`) from the
same data its section shows; this module holds the record, the shared rules and the rendering.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

#: reproduced: every cell at the paper's n and the paper's finding holds on our data; partly: some
#: cells short of the paper's n, or the finding holds in part; not: no comparable results, or the
#: finding does not hold
STATUSES = ("reproduced", "partly", "not")

DEFINITIONS = ("**reproduced**: every cell at the paper's n and the paper's finding holds on our data; "
               "**partly**: cells short of the paper's n, or the finding holds in part; **not**: no comparable "
               "results, or the finding does not hold. Ratios are ours / the paper's (below 1: ours smaller).")


@dataclass(frozen=True)
class Verdict:
    """One row of the verdict table.

    Parameters
    ----------
    item : str
        The paper's table or figure (e.g. ``"Table 3, Fig. 6"``).
    status : str
        One of :data:`STATUSES`.
    ours_n, paper_n : str
        Trials behind our numbers (per implementation where they differ) and behind the paper's.
    headline : str
        The comparison a reader looks for first, with the machine that made our side.
    reason : str
        Why, where ``status`` is not "reproduced" (required there).
    """

    item: str
    status: str
    ours_n: str
    paper_n: str
    headline: str
    reason: str = ""

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"a verdict's status is one of {', '.join(STATUSES)}, got {self.status!r}")
        if self.status != "reproduced" and not self.reason:
            raise ValueError(f"a verdict of {self.status!r} on {self.item} needs its reason")


def paper_n(spec: dict) -> int:
    """The paper's trials per cell: the experiment's ``trials`` (its default where given per
    implementation), which every study's experiment file sets to the paper's count."""
    trials = spec.get("trials", 0)
    return int(trials.get("default", 0) if isinstance(trials, dict) else trials)


def n_by(table: pd.DataFrame, key: str = "implementation", n: str = "n") -> dict[str, tuple[int, int]]:
    """(fewest, most) trials per ``key`` value over a table's cells."""
    if not len(table):
        return {}
    agg = table.groupby(key, observed=True, sort=False)[n].agg(["min", "max"])
    return {str(k): (int(r["min"]), int(r["max"])) for k, r in agg.iterrows()}


def span(lo, hi) -> str:
    """'lo' where the two are equal, else 'lo-hi'."""
    return f"{lo}" if hi == lo else f"{lo}-{hi}"


def n_per_cell(lo: int, hi: int) -> str:
    """'n = lo-hi trials per cell' (one trial: 'trial')."""
    return f"n = {span(lo, hi)} {'trial' if hi == 1 else 'trials'} per cell"


def n_text(counts: dict[str, tuple[int, int]]) -> str:
    """'30' where every cell has the same n, else 'ide 30, naive_gpu 1-3, ...'."""
    if not counts:
        return "0"
    spans = {span(lo, hi) for lo, hi in counts.values()}
    if len(spans) == 1:
        return spans.pop()
    return ", ".join(f"{k} {span(lo, hi)}" for k, (lo, hi) in counts.items())


def short_of(counts: dict[str, tuple[int, int]], wanted: int) -> list[str]:
    """The keys with a cell below ``wanted`` trials, as 'name lo' (or 'name lo-hi')."""
    return [f"{k} {span(lo, hi)}" for k, (lo, hi) in counts.items() if lo < wanted]


def coverage_verdict(item: str, counts: dict[str, tuple[int, int]], wanted: int, headline: str,
                     finding: str | None = None, finding_reason: str = "") -> Verdict:
    """The usual rule: "not" without results; "partly" where a cell is short of the paper's n or the
    paper's finding holds in part (``finding``: "holds", "holds in part", "does not hold", or None where
    the item has no finding to check beyond its numbers); else "reproduced"."""
    if not counts:
        return Verdict(item, "not", "0", str(wanted), headline or "-", "no results")
    reasons, status = [], "reproduced"
    short = short_of(counts, wanted)
    if short:
        status = "partly"
        reasons.append(f"fewer trials than the paper's {wanted}: {', '.join(short)}")
    if finding == "does not hold":
        status = "not"
        reasons.insert(0, finding_reason or "the paper's finding does not hold on our data")
    elif finding == "holds in part":
        status = "partly"
        reasons.insert(0, finding_reason or "the paper's finding holds in part")
    return Verdict(item, status, n_text(counts), str(wanted), headline, "; ".join(reasons))


#: ours / the paper's within this factor either way: the same magnitude (an error or a time far from it
#: is an outlier the section explains)
SAME_MAGNITUDE = 2.0


def magnitude_finding(ratios) -> str | None:
    """"holds" where every finite ratio ours / paper lies within :data:`SAME_MAGNITUDE` either way, "holds
    in part" otherwise (None without ratios)."""
    v = pd.Series(ratios, dtype=float)
    v = v[v.notna() & (v > 0) & (v < float("inf"))]
    if not len(v):
        return None
    inside = (v <= SAME_MAGNITUDE) & (v >= 1 / SAME_MAGNITUDE)
    return "holds" if inside.all() else "holds in part"


def ratio_span(values) -> str:
    """'0.59-1.39x' over the finite values ('-' without any)."""
    v = pd.Series(values, dtype=float)
    v = v[v.notna() & (v > 0) & (v < float("inf"))]
    if not len(v):
        return "-"
    return f"{v.min():.2g}x" if v.min() == v.max() else f"{v.min():.2g}-{v.max():.2g}x"


def render(rows: list[tuple[str, Verdict]]) -> str:
    """The verdict table, one row per (study, verdict), in the report's order."""
    if not rows:
        return ""
    lines = ["## Verdict", "",
             "What each study's reproduction gives, per table or figure of its paper, from the same data as "
             "the sections below. " + DEFINITIONS, "",
             "| study | paper's table or figure | verdict | our n | paper's n | headline (ours; the machine) | why not "
             "reproduced |", "|---|---|---|---|---|---|---|"]
    for study, v in rows:
        lines.append(f"| {study} | {v.item} | **{v.status}** | {v.ours_n} | {v.paper_n} | {v.headline} | "
                     f"{v.reason or ''} |")
    return "\n".join(lines) + "\n"
