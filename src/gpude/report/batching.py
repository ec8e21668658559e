"""Trials advanced several per launch (``trials_per_launch`` > 1) beside the same trials (same
seeds) run one at a time: whether they end on the same result, and what a lone trial costs
against its fair share of a batch."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .intervals import ratio as ratio_of
from .timing import _ordered
from .trial_params import trials_per_launch  # noqa: F401  (imported from here too)

# what makes two rows the same trial
KEYS = ["algorithm", "implementation", "function", "dim", "popsize", "dtype", "trial", "seed"]
COLUMNS = ["competitor", "function", "paired", "same_final_error", "max_rel_diff", "batched_median_s",
           "alone_median_s", "ratio_min", "ratio_median", "ratio_median_lo", "ratio_median_hi", "ratio_max",
           "batched_median_fes", "alone_median_fes", "fes_ratio_median"]


def alone_vs_batched(batched: pd.DataFrame, alone: pd.DataFrame) -> pd.DataFrame:
    """Per competitor and function, the trials found in both tables: how many end on exactly the
    same final error, the largest relative difference, and the wall time of a lone trial over its
    batched share (ratio > 1: the lone trial took longer), and the FEs each bought (under a time
    budget the FEs differ, not the time: ``fes_ratio_median`` > 1, a lone trial evaluated more).
    ``batched`` carries ``competitor``."""
    missing = [k for k in KEYS if k not in alone]
    if missing:
        from ..core.errors import InvalidInputError

        raise InvalidInputError(f"the one-at-a-time trials lack the columns {missing}; pass a trials CSV "
                                "written by `gpude run`")
    ok = alone[alone["best_error"].notna() & alone["wall_time_s"].notna()]
    if batched["function"].astype(str).str.contains("/d").any():  # with_competitors named the problem f/dD
        ok = ok.assign(function=ok["function"].astype(str) + "/d" + ok["dim"].astype(str))
    cols = ["best_error", "wall_time_s"] + (["fes_used"] if "fes_used" in ok and "fes_used" in batched else [])
    m = batched.merge(ok[KEYS + cols].astype({"function": str}),
                      on=KEYS, suffixes=("", "_alone"))
    rows = []
    for (competitor, function), part in m.groupby(["competitor", "function"], sort=True):
        ratio = part["wall_time_s_alone"] / part["wall_time_s"]
        median = ratio_of(ratio.to_numpy(dtype=float), 1.0, statistic=np.median)
        scale = np.maximum(np.abs(part["best_error"]), np.abs(part["best_error_alone"])).clip(lower=1e-300)
        rows.append({"competitor": competitor, "function": function, "paired": len(part),
                     "same_final_error": int((part["best_error"] == part["best_error_alone"]).sum()),
                     "max_rel_diff": float((np.abs(part["best_error"] - part["best_error_alone"]) / scale).max()),
                     "batched_median_s": float(part["wall_time_s"].median()),
                     "alone_median_s": float(part["wall_time_s_alone"].median()),
                     "ratio_min": float(ratio.min()), "ratio_median": float(ratio.median()),
                     # the median paired ratio's 95 % bootstrap interval (the pairs resampled; < 3 pairs: NaN)
                     "ratio_median_lo": median.lo, "ratio_median_hi": median.hi,
                     "ratio_max": float(ratio.max()),
                     **({"batched_median_fes": float(part["fes_used"].median()),
                         "alone_median_fes": float(part["fes_used_alone"].median()),
                         "fes_ratio_median": float((part["fes_used_alone"] / part["fes_used"]).median())}
                        if "fes_used" in cols else {})})
    table = pd.DataFrame(rows, columns=COLUMNS)
    order = {c: k for k, c in enumerate(_ordered(table["competitor"].unique()))}
    return table.sort_values(["competitor", "function"], key=lambda col: col.map(order) if col.name == "competitor"
                             else col, kind="stable").reset_index(drop=True)
