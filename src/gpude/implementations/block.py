"""``block``: DE/rand/1/bin with each trial's whole run inside one thread block.

For batches of trials (how references and users run many seeds): block b of the launch *is* trial b.
It initialises trial b's population, then loops over its generations; every unit (b, i) of a
generation (trial vector, evaluation, selection) is made by the block one after the other
(:func:`gpude.implementations.resident.build_unit_steps`, the steps of ``de/resident``), and the
generation ends with a block barrier, not a grid one: no cooperative launch, so a launch holds as
many trials as the batch has (more than the GPU keeps resident run in waves), and no block ever
waits for another. Each block stops at its own trial's target (its flag, written by its own thread
0, read after the barrier) or at the budget's last generation; it writes the last generation it ran
into ``state[0]`` with ``atomic.max`` (the host zeroes it before a batch), so the host's reading of
the launch is ``de/resident``'s (:class:`~gpude.implementations.resident.ResidentDE`'s
``run_batch``: the fixed budget in one launch, a time budget in chunks of generations, the hits and
fair shares).

Same operators and random stream as every DE implementation: a seed makes ``de/resident``'s run
(bit for bit: the same evaluation code, the same threads) and ``de/sequential``'s (to the rounding
of the evaluation's sums).

The population lives in global memory (2 x NP x D per trial; at case study 1's 250 x 100 in float32
that is 200 KB per trial, served from L2 for a block that reuses it every generation). Keeping it
in shared memory (100 KB of an H100 block's 227 KB) needs the opt-in to more than 48 KB of dynamic
shared memory per block, not taken here; nor are thread-block clusters for a single run.
Timed on an H100 (f5f681d, the committed side by side): 25-205 s a run at one trial per launch,
0.85-3.8 s at 30 per launch (1.04-2.29x the authors' iDE): NP units one after the other per
generation leave each block waiting on memory and barriers. Issue 48 replaces the design
(``benchmarks/block_prototype.py``, docs/implementations.md).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from numba import cuda

from ..errors import InvalidInputError
from .device_loop import NO_HIT
from .resident import CHUNK_GENERATIONS, ResidentDE, build_unit_steps


@lru_cache(maxsize=None)
def build_block_kernel(block_evaluate, dtype, threads, buf, dim):
    """The kernel for one evaluation build (function, D, threads, dtype), with ``de/resident``'s
    arguments: ``block_kernel[B, threads](pop, fit, keys, lower, upper, F, CR, mode, shift, rot_t,
    perm, trace, hit_gen, state, target, max_fes, g_first, g_last)``, block b running trial b's
    generations ``g_first .. g_last`` (``g_first == 1``: after resetting its trace row and flag and
    initialising its population) until its own target."""
    T = np.dtype(dtype).type
    P, BUF, D = int(threads), int(buf), int(dim)
    init_unit, generation_unit = build_unit_steps(block_evaluate, dtype, threads, buf, dim)

    @cuda.jit(cache=True)
    def block_kernel(pop, fit, keys, lower, upper, F, CR, mode, shift, rot_t, perm, trace, hit_gen,
                     state, target, max_fes, g_first, g_last):
        xs = cuda.shared.array(D, T)
        buf_a = cuda.shared.array(BUF, T)
        buf_z = cuda.shared.array(BUF, T)
        red = cuda.shared.array((4, P), T)
        tid, b = cuda.threadIdx.x, cuda.blockIdx.x
        popsize = fit.shape[2]
        if b >= fit.shape[1]:
            return
        if g_first == 1:
            # this trial's trace row to +inf and its flag to "no hit" (the hit count, hit_gen's last
            # slot, is not read for this kernel: the host reads every trial's flag)
            t = tid
            while t < trace.shape[1]:
                trace[b, t] = math.inf
                t += P
            if tid == 0:
                hit_gen[b] = NO_HIT
            cuda.syncthreads()
            for i in range(popsize):
                init_unit(pop, fit, keys, lower, upper, shift, rot_t, perm, trace, hit_gen, target, b, i,
                          xs, buf_a, buf_z, red)
        g = g_first
        done = hit_gen[b] <= g - 1  # (written by this block's thread 0 before a barrier)
        while not done and g <= g_last:
            n = min(popsize, max_fes - popsize * g)  # the FE budget's last generation may be partial
            for i in range(popsize):
                generation_unit(pop, fit, keys, lower, upper, F, CR, mode, shift, rot_t, perm, trace, hit_gen,
                                target, b, i, g, n, xs, buf_a, buf_z, red)
            done = hit_gen[b] <= g  # every unit ended with a barrier: the flag is the block's
            g += 1
        if tid == 0 and g - 1 >= g_first:
            cuda.atomic.max(state, 0, np.int64(g - 1))  # the last generation any trial ran

    return block_kernel


class BlockDE(ResidentDE):
    """DE/rand/1/bin, each trial's run in one thread block (see the module docstring).

    Options: ``trials_per_launch`` (the blocks of a launch) and ``chunk_generations`` (generations
    per launch of a time-budgeted run), as ``de/resident``.
    """

    name = "block"

    build_kernel = staticmethod(build_block_kernel)

    def __init__(self, function, params, trials_per_launch: int = 1,
                 chunk_generations: int = CHUNK_GENERATIONS, **options):
        if "blocks" in options:  # (de/resident's grid option: here the grid is the batch)
            raise InvalidInputError("de/block takes no option blocks: its launch has a block per trial "
                                    "(trials_per_launch)")
        super().__init__(function, params, trials_per_launch=trials_per_launch,
                         chunk_generations=chunk_generations, **options)

    def grid(self, args) -> int:
        return self.batch  # a block per trial: no cooperative launch, no residency limit

    def run_batch(self, seeds):
        """``de/resident``'s, after zeroing the last-generation counter the blocks raise."""
        self._allocate_common(len(seeds))
        self.d_state.copy_to_device(np.zeros(1, dtype=np.int64), stream=self.compute)
        return super().run_batch(seeds)
