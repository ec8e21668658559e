"""What a report reads from a trial row's recorded ``params`` (a JSON object per row): the trials
advanced per launch, and the source an outside program was built from. Its own module so that the
timing tables, the batching comparison and the cell table, which need them, do not import each other."""

from __future__ import annotations

import json

import pandas as pd


def trials_per_launch(trials: pd.DataFrame) -> pd.Series:
    """Each row's trials per launch, read from its ``params`` (1 where not recorded)."""
    def one(text):
        try:
            return int(json.loads(text).get("trials_per_launch", 1))
        except (TypeError, ValueError, AttributeError):
            return 1
    if "params" not in trials:
        return pd.Series(1, index=trials.index, dtype=int)
    return trials["params"].map(one).astype(int)


def program_sources(trials: pd.DataFrame) -> pd.Series | None:
    """Each row's outside program source (the first 12 hex digits of its ``params``' ``source_sha256``,
    '' for our own implementations), or None where no row ran one."""
    if "params" not in trials or not trials["params"].astype(str).str.contains("source_sha256", regex=False).any():
        return None

    def one(text) -> str:
        try:
            params = text if isinstance(text, dict) else json.loads(text)
            return str(params.get("source_sha256", ""))[:12]
        except (TypeError, ValueError, AttributeError):
            return ""
    return trials["params"].map(one)
