"""What a report reads from a trial row's recorded ``params`` (a JSON object per row): the trials
advanced per launch, and the source an outside program was built from. Its own module so that the
timing tables, the batching comparison and the cell table, which need them, do not import each other."""

from __future__ import annotations

import json

import pandas as pd


def _params(text) -> dict:
    """A row's ``params`` as a dict ({} where unrecorded or unreadable)."""
    if isinstance(text, dict):
        return text
    try:
        params = json.loads(text)
    except (TypeError, ValueError):
        return {}
    return params if isinstance(params, dict) else {}


def trials_per_launch(trials: pd.DataFrame) -> pd.Series:
    """Each row's trials per launch, read from its ``params`` (1 where not recorded)."""
    def one(text):
        try:
            return int(_params(text).get("trials_per_launch", 1))
        except (TypeError, ValueError):
            return 1
    if "params" not in trials:
        return pd.Series(1, index=trials.index, dtype=int)
    return trials["params"].map(one).astype(int)


def program_sources(trials: pd.DataFrame) -> pd.Series | None:
    """Each row's outside program source (the first 12 hex digits of its ``params``' ``source_sha256``,
    '' for our own implementations), or None where no row ran one."""
    if "params" not in trials or not trials["params"].astype(str).str.contains("source_sha256", regex=False).any():
        return None
    return trials["params"].map(lambda text: str(_params(text).get("source_sha256", ""))[:12])
