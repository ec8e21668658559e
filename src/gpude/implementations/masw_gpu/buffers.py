"""The device arrays and pinned host arrays of a batch of B ``masw/gpu`` trials, from one table.

Rows of the population array: ``[0, B P)`` the populations (trial b's individual i at ``b P + i``),
``[B P, B (P + off))`` the children (trial b's child c at ``B P + b off + c``), so every trial's
children are one range of rows for the function's evaluator. A ``d_``/``h_`` pair is a device array
and the pinned host array it is copied from or to; the steps of a cycle's GA phase each have their
own pinned inputs (they are queued without a host read between them).
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from .state import SLOTS

DEVICE, PINNED = "device", "pinned"


def table(B: int, P: int, off: int, nam: int, D: int, dtype, blocks: int, ga_steps: int, ls_mode: str) -> list:
    """``(name, DEVICE or PINNED, shape, dtype)`` of every array of a batch."""
    T, f64, i64, i32, u64 = dtype, np.float64, np.int64, np.int32, np.uint64
    rows = B * (P + off)
    pairs = max(B * off * nam, B * (P - 1))  # a GA step's distance pairs, or a new chain's to the others
    return [
        # the populations and the children, their errors, where each row is stored (an entering
        # child swaps stored rows with the slot it takes), the replacement's ranks (scratch)
        ("pop", DEVICE, (rows, D), T), ("fit_all", DEVICE, rows, f64), ("h_fit", PINNED, rows, f64),
        ("d_where", DEVICE, rows, i64), ("h_where", PINNED, rows, i64), ("d_rank", DEVICE, rows, i32),
        # Solis-Wets: a bias per individual; the trials' x (steps mode: then their '+' candidates, then
        # their '-' ones); the perturbations; the states; the candidates' errors; the gates per trial,
        # then whether any trial's '+' and '-' evaluation is open (the evaluator's gates)
        ("bias", DEVICE, (B * P, D), T), ("ls", DEVICE, (3 * B if ls_mode == "steps" else B, D), T),
        ("d", DEVICE, (B, D), T), ("st", DEVICE, (B, SLOTS), f64), ("h_st", PINNED, (B, SLOTS), f64),
        ("out", DEVICE, 3 * B, f64), ("gates", DEVICE, 2 * B + 2, i32), ("h_gates", PINNED, 2 * B + 2, i32),
        # the distances' pairs, partial sums and results
        ("d_pairs", DEVICE, (pairs, 2), i64), ("h_pairs", PINNED, (pairs, 2), i64),
        ("partials", DEVICE, (pairs, blocks), f64), ("dists", DEVICE, pairs, f64), ("h_dists", PINNED, pairs, f64),
        # a GA step: the host's draws (mothers and NAM candidates, mutations), the fathers' plan, the
        # moves of the replacement and the slots it replaced, and the counts for the traffic model
        ("h_cands", PINNED, (ga_steps, B * off, nam + 2), i64), ("d_cands", DEVICE, (B * off, nam + 2), i64),
        ("h_step_pairs", PINNED, (ga_steps, B * off * nam, 2), i64),
        ("h_step_delta", PINNED, (ga_steps, B * off), f64), ("d_delta", DEVICE, B * off, f64),
        ("d_plan", DEVICE, (B * off, 3), i64), ("d_moves", DEVICE, (B * off, 2), i64), ("d_nmoves", DEVICE, B, i64),
        ("d_replaced", DEVICE, B * P, i32), ("h_replaced", PINNED, B * P, i32), ("h_no_replaced", PINNED, B * P, i32),
        ("d_tally", DEVICE, 2 * B, i64), ("h_tally", PINNED, 2 * B, i64),
        # per trial: its key, whether it is advanced, all of them (a new chain's distances), the row
        # its application improves, whether that row's chain is new, whether its result is kept
        ("d_keys", DEVICE, B, u64), ("h_keys", PINNED, B, u64), ("d_active", DEVICE, B, i32),
        ("h_active", PINNED, B, i32), ("d_all", DEVICE, B, i32), ("d_rows", DEVICE, B, i64),
        ("h_rows", PINNED, B, i64), ("d_fresh", DEVICE, B, i32), ("h_fresh", PINNED, B, i32),
        ("d_keep", DEVICE, B, i32), ("h_keep", PINNED, B, i32),
    ]


class Buffers:
    """The arrays of :func:`table` as attributes (pinned ones zeroed: the rows a GA step does not
    fill, of a short step or a stopped trial, stay valid rows), and their views: ``x_ls`` (the
    trials' x), ``gate``, ``gate_minus``, ``gate_any``, ``gate_minus_any`` and ``d_step_pairs``."""

    def __init__(self, B: int, P: int, off: int, nam: int, D: int, dtype, blocks: int, ga_steps: int,
                 ls_mode: str):
        for name, place, shape, dt in table(B, P, off, nam, D, dtype, blocks, ga_steps, ls_mode):
            if place == DEVICE:
                setattr(self, name, cuda.device_array(shape, dt))
            else:
                setattr(self, name, cuda.pinned_array(shape, dt))
                getattr(self, name)[:] = 0
        self.identity = np.arange(B * (P + off), dtype=np.int64)  # every row stored at its own index
        self.d_all.copy_to_device(np.ones(B, np.int32))
        self.x_ls = self.ls[:B]
        self.gate, self.gate_minus = self.gates[:B], self.gates[B:2 * B]
        self.gate_any, self.gate_minus_any = self.gates[2 * B:2 * B + 1], self.gates[2 * B + 1:]
        self.d_step_pairs = self.d_pairs[:B * off * nam]


def bytes_per_trial(popsize: int, offspring: int, dim: int, itemsize: int) -> int:
    """Device bytes of one trial's rows of D values (without the function's data, once per batch)."""
    vectors = popsize + offspring + popsize + 4  # population + padding, biases, ls (3), d
    return vectors * dim * itemsize
