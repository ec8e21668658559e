"""The command line's argument types: each parses one value or says, in one line, what it takes."""

from __future__ import annotations

import argparse
import math


def int_at_least(low: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"takes an integer >= {low}, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"takes an integer >= {low}, got {text!r}")
        return value

    parse.__name__ = f"integer >= {low}"
    return parse


def float_above(low: float):
    def parse(text: str) -> float:
        value = float_or_nan(text)
        if not value > low or not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"takes a finite number > {low:g}, got {text!r}")
        return value

    parse.__name__ = "number"
    return parse


def float_or_nan(text: str) -> float:
    """``float(text)``, NaN for text that is no number (which every check below refuses)."""
    try:
        return float(text)
    except ValueError:
        return math.nan


def number(text: str) -> float:
    """A finite float; its range is the algorithm's to check."""
    value = float_or_nan(text)
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"takes a finite number, got {text!r}")
    return value


def target(text: str) -> float:
    """A target error: a finite number, or -inf for none (its sign is the algorithm's to check)."""
    value = float_or_nan(text)
    if not (math.isfinite(value) or value == -math.inf):
        raise argparse.ArgumentTypeError(f"takes a number (-inf: no target), got {text!r}")
    return value


def seed_list(text: str) -> list[int]:
    try:
        seeds = [int(s) for s in text.split(",")]
    except ValueError:
        seeds = []
    if not seeds or any(s < 0 for s in seeds):
        raise argparse.ArgumentTypeError(f"takes comma-separated integers >= 0 (e.g. 1,2,3), got {text!r}")
    return seeds


def gpu_choice(text: str) -> str:
    if text in ("any", "shared") or text.isdigit() or text.startswith(("GPU-", "MIG-")):
        return text
    raise argparse.ArgumentTypeError(f"takes any, shared, a GPU index or a GPU UUID (GPU-...), got {text!r}")
