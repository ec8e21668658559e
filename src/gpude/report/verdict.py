"""The verdict table at the top of paper/REPORT.md: for every study and every table or figure of its
paper that the suite reproduces (or every program of its authors that it runs beside ours), three
judgements, each with its cause where it is not clean, and one overall status derived from them.

* **coverage**: our n against the paper's: "complete", "short" (who, with which n) or "none";
* **numbers**: our numbers against the paper's, within a factor of :data:`SAME_MAGNITUDE` either way:
  "within", "outside" (in k of m cells), "no paper numbers" or "n.a." (nothing to compare);
* **finding**: the paper's claim checked on our data: "holds", "in part", "not" or "n.a." (no claim
  beyond its numbers).

Each section writer says its own verdicts (:meth:`gpude.report.section.Section.verdicts`) from the
same data its section shows; this module holds the record, the shared rules and the rendering.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

#: ours / the paper's within this factor either way: the same magnitude
SAME_MAGNITUDE = 2.0

COVERAGE = ("complete", "short", "none")
NUMBERS = ("within", "outside", "no paper numbers", "n.a.")
FINDINGS = ("holds", "in part", "not", "n.a.")
#: the values of each judgement that need no cause
CLEAN = {"coverage": {"complete"}, "numbers": {"within", "no paper numbers", "n.a."}, "finding": {"holds", "n.a."}}

#: a row's kind and its statuses, best first: a paper's table or figure, or a program rerun beside
#: ours (the authors' code), which agrees or not but never reproduces a paper
KINDS = {"paper": ("reproduced", "partly", "not"), "comparison": ("agrees", "partly", "not")}
STATUSES = KINDS["paper"]

LEGEND = (f"**coverage**: our n against the paper's (*complete*, or *short*: who, with which n); **numbers**: ours "
          f"against the paper's, the same where within a factor of {SAME_MAGNITUDE:g} either way (*within "
          f"{SAME_MAGNITUDE:g}x*, *outside {SAME_MAGNITUDE:g}x in k of m cells*, *no paper numbers*); **finding**: "
          "the paper's claim checked on our data (*holds*, *in part*, *not*; *n.a.* where it claims nothing beyond "
          "its numbers). After a dash, the cause, from the data. **status**, derived: *reproduced* where coverage is "
          f"complete, the numbers within {SAME_MAGNITUDE:g}x or none printed, the finding holds or there is none, "
          "and at least one of the two was checked; *not* without results or where the finding does not hold; "
          "else *partly*. A *comparison* row sets the authors' program rerun beside ours (no table of the paper): "
          "its best status is *agrees*, never *reproduced*. Ratios are ours / the paper's (below 1: ours smaller).")


@dataclass(frozen=True)
class Judgement:
    """One of a verdict's three judgements.

    Parameters
    ----------
    value : str
        One of :data:`COVERAGE`, :data:`NUMBERS` or :data:`FINDINGS`, by the judgement.
    detail : str
        What the value counts: who is short with which n ("sequential 1, master_slave 3"), the cells
        outside ("3 of 48 cells"). Required with "short" and "outside".
    cause : str
        Why, in a word or two from the data ("another GPU", "F and CR ours"); required where the value
        is not in :data:`CLEAN`.
    ratios : tuple of (str, float)
        The numbers judgement's cells, (label, ours / the paper's) each, as :func:`numbers_of` counted
        them (the anomaly rules list the cells outside from here); empty for the other judgements.
    """

    value: str
    detail: str = ""
    cause: str = ""
    ratios: tuple = field(default=(), compare=False, repr=False)

    def text(self) -> str:
        """The table cell: 'within 2x', 'short: sequential 1 — slow runs', 'in part — another machine'."""
        label = {"within": f"within {SAME_MAGNITUDE:g}x", "outside": f"outside {SAME_MAGNITUDE:g}x in"
                 }.get(self.value, self.value)
        if self.value == "outside":
            label += f" {self.detail}"
        elif self.detail:
            label += f": {self.detail}"
        return label + (f" — {self.cause}" if self.cause else "")


def _check(what: str, allowed: tuple, j: Judgement, item: str):
    if not isinstance(j, Judgement) or j.value not in allowed:
        raise ValueError(f"the {what} of {item} is one of {', '.join(allowed)}, got {j!r}")
    if j.value not in CLEAN[what] and not j.cause:
        raise ValueError(f"a {what} of {j.value!r} on {item} needs its cause")
    if j.value in ("short", "outside") and not j.detail:
        raise ValueError(f"a {what} of {j.value!r} on {item} needs its detail (who or how many)")


@dataclass(frozen=True)
class Verdict:
    """One row of the verdict table.

    Parameters
    ----------
    item : str
        The paper's table or figure (e.g. ``"Table 3, Fig. 6"``), or the programs compared.
    ours_n, paper_n : str
        Trials behind our numbers (per implementation where they differ) and behind the paper's.
    headline : str
        The comparison a reader looks for first, with the machine that made our side.
    coverage, numbers, finding : Judgement
        The three judgements; a value outside :data:`CLEAN` without a cause raises ValueError.
    kind : str
        A key of :data:`KINDS`: "paper" or "comparison".

    The overall :attr:`status` is derived from the three (:data:`LEGEND` states the rule).
    """

    item: str
    ours_n: str
    paper_n: str
    headline: str
    coverage: Judgement
    numbers: Judgement = field(default_factory=lambda: Judgement("n.a."))
    finding: Judgement = field(default_factory=lambda: Judgement("n.a."))
    kind: str = "paper"

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"a verdict's kind is one of {', '.join(KINDS)}, got {self.kind!r}")
        _check("coverage", COVERAGE, self.coverage, self.item)
        _check("numbers", NUMBERS, self.numbers, self.item)
        _check("finding", FINDINGS, self.finding, self.item)

    @property
    def status(self) -> str:
        """The kind's best status (reproduced, agrees) where coverage is complete, the numbers within
        or none printed, the finding holds or none, and one of the two checked; "not" without results
        or where the finding does not hold; "partly" else."""
        best, partly, not_ = KINDS[self.kind]
        if self.coverage.value == "none" or self.finding.value == "not":
            return not_
        checked = self.numbers.value == "within" or self.finding.value == "holds"
        if (self.coverage.value == "complete" and self.numbers.value in CLEAN["numbers"]
                and self.finding.value in CLEAN["finding"] and checked):
            return best
        return partly

    @property
    def reason(self) -> str:
        """The judgements that are not clean, as their cells ('' for a clean row)."""
        return "; ".join(f"{what} {j.text()}" for what, j in
                         (("coverage", self.coverage), ("numbers", self.numbers), ("finding", self.finding))
                         if j.value not in CLEAN[what])


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


def coverage_of(counts: dict[str, tuple[int, int]], wanted: int, cause: str = "",
                timed: dict[str, tuple[int, int]] | None = None, timed_cause: str = "") -> Judgement:
    """"none" without counts; "short" (the keys below ``wanted``, with ``cause``) where a cell has fewer
    trials than ``wanted``; else "complete", saying (with ``timed_cause``) whose times come from fewer
    runs (``timed``: the runs timed alone per key, where a protocol times a subset of a cell's runs)."""
    if not counts:
        return Judgement("none", cause="no results")
    short = short_of(counts, wanted)
    if short:
        return Judgement("short", ", ".join(short), cause or "fewer runs made")
    fewer = [f"{k} {span(lo, hi)}" for k, (lo, hi) in (timed or {}).items() if k in counts and lo < counts[k][0]]
    if fewer:
        return Judgement("complete", f"times from {', '.join(fewer)} runs a cell", timed_cause)
    return Judgement("complete")


def outside(ratio: float) -> bool:
    """Whether ours / the paper's lies outside :data:`SAME_MAGNITUDE` either way (0 and inf do)."""
    return bool(ratio > SAME_MAGNITUDE or ratio < 1 / SAME_MAGNITUDE)


def cell_labels(table: pd.DataFrame, columns) -> list[str]:
    """A label per row of ``table`` from its ``columns`` that it has ('F01 D=10 NP=50'): dim as D, popsize
    as NP, the rest by value."""
    names = {"dim": "D=", "popsize": "NP="}
    present = [c for c in columns if c in table]
    return [" ".join(f"{names.get(c, '')}{v}" for c, v in zip(present, row))
            for row in table[present].itertuples(index=False)]


def numbers_of(ratios, cause: str, unit: str = "cells", labels=None) -> Judgement:
    """Ours / the paper's per cell: "within" where every ratio lies within :data:`SAME_MAGNITUDE` either
    way, "outside" ('k of m cells', with ``cause``) where k do not (a zero, ours 0 against a paper's
    number, or an infinity, the reverse, is outside), "n.a." without a ratio (NaN: not compared).
    ``labels`` name the cells, one per ratio (default: 'cell 1', ...); the judgement keeps each compared
    cell's label and ratio (:attr:`Judgement.ratios`)."""
    given = list(ratios)
    names = list(labels) if labels is not None else [f"cell {k + 1}" for k in range(len(given))]
    if len(names) != len(given):
        raise ValueError(f"{len(names)} labels for {len(given)} ratios")
    kept = tuple((str(name), float(r)) for name, r in zip(names, given) if not pd.isna(r))
    if not kept:
        return Judgement("n.a.")
    out = sum(outside(r) for _, r in kept)
    return Judgement("outside", f"{out} of {len(kept)} {unit}", cause, kept) if out else \
        Judgement("within", ratios=kept)


def finding_of(holds: int, of: int, cause: str, unit: str = "") -> Judgement:
    """The paper's claim, met in ``holds`` of ``of`` checks: "holds" in all, "not" in none, "in part"
    else (both with ``cause``, and 'holds of of unit' as detail where ``unit`` is given); "n.a." without
    checks."""
    if not of:
        return Judgement("n.a.")
    if holds == of:
        return Judgement("holds")
    return Judgement("not" if not holds else "in part", f"{holds} of {of} {unit}" if unit else "", cause)


def coverage_verdict(item: str, counts: dict[str, tuple[int, int]], wanted: int, headline: str,
                     numbers: Judgement | None = None, finding: Judgement | None = None,
                     short_cause: str = "", kind: str = "paper", timed: dict[str, tuple[int, int]] | None = None,
                     timed_cause: str = "") -> Verdict:
    """The usual row: coverage from ``counts`` against ``wanted`` (:func:`coverage_of`, with ``timed``
    and ``timed_cause`` where the times come from a subset of the runs), with the section's ``numbers``
    and ``finding`` (both "n.a." where not given or without results)."""
    if not counts:
        return Verdict(item, "0", str(wanted), headline or "-", coverage_of({}, wanted), kind=kind)
    return Verdict(item, n_text(counts), str(wanted), headline,
                   coverage_of(counts, wanted, short_cause, timed, timed_cause),
                   numbers or Judgement("n.a."), finding or Judgement("n.a."), kind)


def render(rows: list[tuple[str, Verdict]]) -> str:
    """The verdict table, one row per (study, verdict), in the report's order, after its legend."""
    if not rows:
        return ""
    lines = ["## Verdict", "",
             "What each study's reproduction gives, per table or figure of its paper, from the same data as "
             "the sections below. " + LEGEND, "",
             "| study | paper's table or figure | status | coverage | numbers | finding | our n | paper's n | "
             "headline (ours; the machine) |", "|---" * 9 + "|"]
    for study, v in rows:
        item = v.item + (" (comparison)" if v.kind == "comparison" else "")
        lines.append(f"| {study} | {item} | **{v.status}** | {v.coverage.text()} | {v.numbers.text()} | "
                     f"{v.finding.text()} | {v.ours_n} | {v.paper_n} | {v.headline} |")
    return "\n".join(lines) + "\n"
