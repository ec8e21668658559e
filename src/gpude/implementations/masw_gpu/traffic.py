"""A model of ``masw/gpu``'s DRAM traffic, from the runner's counters (``MASWGPU.counts``).

The model counts **rows**: D values of the population's type moved between the device's memory and
its chips (a read or a write of one row is one row; multiply by D and the value's bytes for bytes).
o, the function's shift, is a row too, and where the function also permutes its coordinates the
int32 permutation read with o adds half a float64 row. It is what ``benchmarks/masw_perf.py``
reports as bytes per FE and sets beside the device's bandwidth and the bytes ncu counts.

What each kernel moves in this tree (the counters in ``code font``):

* **distances** (``dist_partial``): each distinct row of the GA step's NAM pairs once
  (``dist_rows``): the pairs vary fastest in the grid, so the blocks running together share rows
  through L2;
* **crossover** (``crossover``, or :mod:`.ga`'s crossover that evaluates): reads each distinct parent
  once (``parent_rows``) and writes the children (``children``);
* **the children's evaluation** (the function's streaming evaluator): reads each child, and o once
  per GA step (``ga_steps``; the children of a step read o together). A child evaluated as it was
  made (``ga_mode="fused"``: ``fused_children``) is not read back;
* **replacement** (``copy_moves``): an entering child is read and written into its slot where it is
  a copy (``copies``: an evaluator without a row map; rows of runs from before that counter have
  ``moves`` only, every move a copy); nothing moves where the child and the slot swap their stored
  rows (``replace_batch``, two integers);
* **a fused Solis-Wets application** (:mod:`.ls`, the default on the large-scale functions): the
  candidate is never stored, so each evaluation is one pass that reads x, b and o and writes ('+')
  or reads ('-') the perturbation d: 3 + o rows per evaluation (``ls_evaluations``), or per step
  (``ls_steps``) where both candidates are summed in one pass (``ls_dual``); an accepted step
  (``ls_accepted``) reads x, b and d and writes x and b: 5 rows;
* **Solis-Wets steps** (``ls_mode="steps"``: ``sw_plus``, the evaluation, ``sw_minus``,
  ``sw_finish``): the '+' candidate reads x and b and writes d and the candidate (4 rows), its
  evaluation reads the candidate and o (1 + o); the '-' candidate, tried after a failed '+'
  (``ls_evaluations - ls_steps`` of them), the same again (reading d instead of writing it); every
  step reads b and d and writes b (3); an accepted step reads the candidate and writes x (2).

The **"before"** model is the older code's (``benchmarks/masw_perf.py --before-src``): every pair
read its two rows, every child its two parents and was written, then read back with o by its own
evaluation, every move was a copy, and its local search ran as steps (above). Both versions make
the same run for a seed, so both models use the same counts.

The initial population is not in these rows (``benchmarks/masw_perf.py`` adds it as 3 NP + 1).
"""

from __future__ import annotations

import numpy as np


def reads_permutation(fid: str, dim: int) -> bool:
    """Whether the function's float64 evaluator reads a permutation with o (``has_perm`` below)."""
    from ...functions import get_function

    return get_function(fid, dim).evaluator_args(np.float64)[2]


def traffic_rows(c: dict, version: str, has_perm: bool, ls_mode: str = "", dual: bool = False,
                 fused_ga: bool = False) -> dict:
    """Rows of D values moved by a run, split into its GA and its local search.

    Parameters
    ----------
    c : dict
        The run's counters (``MASWGPU.counts``: ``ga_steps``, ``children``, ``dist_pairs``,
        ``dist_rows``, ``parent_rows``, ``moves``, ``ls_evaluations``, ``ls_steps``,
        ``ls_accepted``; ``copies`` and ``fused_children`` where the run has them).
    version : str
        ``"before"``: the old code's model. Any other (``after``, ``after-b10``, ``after-ga-fused``,
        a variant's name) is this tree's.
    has_perm : bool
        The function reads a permutation with o (half a row more per read of o).
    ls_mode : str
        ``"steps"`` (or the version ``"after-steps"``): this tree's local search as steps; else
        the fused application's.
    dual : bool
        The fused application made one pass per step, not per evaluation (``ls_dual``).
    fused_ga : bool
        Model every child as evaluated as it was made (``ga_mode="fused"``), whatever ``c`` says:
        for counters of a run whose children were evaluated apart (the same run otherwise).

    Returns
    -------
    dict
        ``ga`` and ``ls``: rows (floats: o may be 1.5 rows), the module docstring's model.
    """
    o = 1.0 + (0.5 if has_perm else 0.0)  # o, and the int32 permutation read with it (float64 rows)
    minus = c["ls_evaluations"] - c["ls_steps"]
    steps_ls = (4 + 1 + o) * c["ls_steps"] + (4 + 1 + o) * minus + 3 * c["ls_steps"] + 2 * c["ls_accepted"]
    if version == "before":
        ga = 2 * c["dist_pairs"] + 3 * c["children"] + (1 + o) * c["children"] + 2 * c["moves"]
        return dict(ga=ga, ls=steps_ls)
    # a child is written, and read back by the evaluator unless it was evaluated as it was made
    read_back = 0 if fused_ga else c["children"] - c.get("fused_children", 0)
    # a replacement copies a child (a read and a write) unless the rows are swapped by reference
    # (counter ``copies``; rows of runs before it had no such counter: every move was a copy)
    ga = c["dist_rows"] + c["parent_rows"] + c["children"] + read_back + o * c["ga_steps"] + \
        2 * c.get("copies", c["moves"])
    passes = c["ls_steps"] if dual else c["ls_evaluations"]
    ls = (3 + o) * passes + 5 * c["ls_accepted"]
    if ls_mode == "steps" or version == "after-steps":
        ls = steps_ls
    return dict(ga=ga, ls=ls)
