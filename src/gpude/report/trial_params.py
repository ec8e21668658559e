"""What a report reads from a trial row's recorded ``params`` (a JSON object per row): the trials
advanced per launch. Its own module so that the timing tables and the batching comparison, which
both need it, do not import each other."""

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
