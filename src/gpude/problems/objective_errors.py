"""The error of a user's objective (:mod:`gpude.problems.objective`), shared by its CPU and GPU
evaluators (its own module, so that neither evaluator imports the other)."""

from __future__ import annotations

from ..core.errors import GpudeError


class ObjectiveError(GpudeError):
    """The user's objective returned NaN or -inf, or could not be compiled."""


def first_lines(exc: BaseException) -> str:
    """The gist of a compiler's error: its first lines, at most 600 characters on one line."""
    text = str(exc).strip().splitlines()
    return " ".join(text[:6])[:600]
