"""``block``: DE/rand/1/bin with each trial's whole run inside one thread block, a warp an individual.

For batches of trials (how references and users run many seeds): block b of the launch *is* trial b.
It initialises trial b's population, then loops over its generations. The block's warps share the
generation's units: warp w makes individuals i = w, w + W, w + 2 W, ... (W warps a block), each one
as a unit of ``de/resident`` is made by a whole block: draw r1, r2, r3, j_rand, build the trial
vector (lanes over coordinates) in the warp's own shared buffer, evaluate it with the function's
evaluator at 32 threads (:func:`gpude.functions.gpu.make_block_evaluator` with ``warp=True``: it
waits only for its own warp) and keep the survivor. Four lanes make pick's four draws at once, each its
own hash, where every lane would make all four one after the other. A trial vector that wins is written
into the population buffer its individual does not occupy, and ``homes`` (2 x B x NP, one row a
generation's parity) says which buffer holds each individual: a loser is not copied. A warp
folds its units' survivor errors into one minimum, written once into the trace (``atomic.min`` on
``trace[b, g]``) and, if it is <= target, reported as the hit. A generation ends with one block
barrier, not a grid one: no cooperative launch, so a launch holds as many trials as the batch has
(more than the GPU keeps resident run in waves), and no block ever waits for another.

Each block stops at its own trial's target (its flag, read after the barrier) or at the budget's
last generation; it writes the last generation it ran into ``state[0]`` with ``atomic.max`` (the
host zeroes it before a batch), so the host's reading of the launch is ``de/resident``'s
(:class:`~gpude.implementations.resident.ResidentDE`'s ``run_trials``: the fixed budget in one
launch, a time budget in chunks of generations, the hits and fair shares).

Same operators and random stream as every DE implementation: a seed makes ``de/sequential``'s run
to the rounding of the evaluation's sums, and ``de/resident``'s bit for bit where D <= 32 (one
element a lane: the same sums in the same order; above, a lane sums its elements first).

**Why this design** (timed before it was built: docs/implementations.md, ``results/benchmarks/block_prototype/``):
the function's own evaluator makes every function of the suite run, about a quarter slower than a
rotation hand-tiled for one function; the populations in shared memory would leave the L1 cache too
small for the rotation matrix. One trial a launch uses one SM: this is the implementation for many trials a
launch; single runs belong to ``de/resident`` (every SM).

Four lanes' draws and the selection by index took a launch 0.90x the time on F01, 0.87x on N00 (the
sphere) and 0.98x on F10, the same runs bit for bit (one H200, ``benchmarks/block_variants.py``,
``results/benchmarks/block_variants/``); loading the parents only where the crossover takes them bought
nothing and is not done.

The populations live in global memory (2 x NP x D per trial, served from L2/L1); the shared
memory holds a warp's trial vector and evaluation buffers: ``W = min(16, NP, what fits in 48 KB)``.
"""

from __future__ import annotations

import math
import os
from functools import cache

import numpy as np
from numba import cuda

from ..algorithms.de import build_de_ops
from ..core.errors import InvalidInputError
from ..core.gpu_runtime import simulator_enabled
from ..core.gpu_runtime import warp_barrier as make_warp_barrier
from ..functions import gpu
from .device_loop import NO_HIT, mark_hit
from .resident import CHUNK_GENERATIONS, ResidentDE

#: warps a block at most (16: the fastest of the prototype's generic kernels, docs/implementations.md)
MAX_WARPS = 16
#: on numba's simulator, which runs every thread as a Python thread: two warps keep its runs short and
#: still make a block take its individuals in several rounds
SIMULATOR_WARPS = 2
#: static shared memory a block may take without the opt-in
SHARED_BYTES = 48 * 1024


def block_warps(popsize: int, dim: int, buf: int, dtype, most: int = MAX_WARPS) -> int:
    """Warps a block: at most ``most``, one an individual, within :data:`SHARED_BYTES` of per-warp
    buffers (the trial vector, two evaluation buffers, the reduction rows)."""
    per_warp = (int(dim) + 2 * int(buf) + 4 * 32) * np.dtype(dtype).itemsize
    fits = SHARED_BYTES // per_warp
    if fits < 1:
        raise InvalidInputError(
            f"de/block: one warp's buffers at D {dim} in {np.dtype(dtype).name} take {per_warp} bytes, more "
            f"than the {SHARED_BYTES} bytes of shared memory a block has; use de/resident for this size")
    return int(min(int(most), int(popsize), fits))


@cache
def build_block_kernel(warp_evaluate, dtype, threads, buf, dim):
    """The kernel for one warp-evaluator build (function, D, dtype) and ``threads`` (32 W) a block,
    with ``de/resident``'s arguments and ``homes`` (:meth:`BlockDE.population_arrays`): ``block_kernel[B,
    threads](pop, fit, homes, keys, lower, upper, F, CR, mode, shift, rot_t, perm, trace, hit_gen, state,
    target, max_fes, g_first, g_last)``, block b
    running trial b's generations ``g_first .. g_last`` (``g_first == 1``: after resetting its trace
    row and flag and initialising its population) until its own target."""
    T = np.dtype(dtype).type
    P, BUF, D = int(threads), int(buf), int(dim)
    WARPS = P // 32
    ops = build_de_ops(T, "cuda")
    init_value, pick_draw, pick_from, trial_value = ops.init_value, ops.pick_draw, ops.pick_from, ops.trial_value
    # numba's simulator has no syncwarp: the evaluator's barriers are the block's there, so every
    # warp evaluates in every round (a spare one evaluates a copy and drops it)
    SIM = simulator_enabled()
    INF = math.inf

    warp_barrier = make_warp_barrier()

    @cuda.jit(device=True, inline=True)
    def record(trace, hit_gen, target, b, g, best, lane):
        # a warp's units: one trace entry and at most one hit report
        if lane == 0 and best < INF:
            cuda.atomic.min(trace, (b, g), np.float64(best))
            if best <= target:
                mark_hit(hit_gen, b, g)

    # a block's threads share an SM's 65,536 registers (float64 needs more than 128 a thread at 512)
    options = {} if SIM else {"max_registers": 65536 // P}
    if not SIM and os.environ.get("GPUDE_CUDA_LINEINFO"):
        # source lines for Nsight Compute's source counters (benchmarks/gpu_checks.sh block_profile):
        # line tables only, the same machine code
        options["lineinfo"] = True

    @cuda.jit(cache=True, **options)
    def block_kernel(pop, fit, homes, keys, lower, upper, F, CR, mode, shift, rot_t, perm, trace, hit_gen,
                     state, target, max_fes, g_first, g_last):
        xs_all = cuda.shared.array((WARPS, D), T)
        bufs = cuda.shared.array((WARPS, 2, BUF), T)
        reds = cuda.shared.array((WARPS, 4, 32), T)
        draws = cuda.shared.array((WARPS, 4), np.int64)
        tid, b = cuda.threadIdx.x, cuda.blockIdx.x
        lane, w = tid % 32, tid // 32
        xs, buf_a, buf_z, red = xs_all[w], bufs[w, 0], bufs[w, 1], reds[w]
        popsize = fit.shape[2]
        rounds = (popsize + WARPS - 1) // WARPS
        if b >= fit.shape[1]:
            return
        key = keys[b]
        if g_first == 1:
            # this trial's trace row to +inf and its flag to "no hit" (the hit count, hit_gen's last
            # slot, is not read for this kernel: the host reads every trial's flag)
            t = tid
            while t < trace.shape[1]:
                trace[b, t] = INF
                t += P
            if tid == 0:
                hit_gen[b] = NO_HIT
            cuda.syncthreads()
            best = INF
            for k in range(rounds):
                i = w + k * WARPS
                if i < popsize or SIM:
                    ii = min(i, popsize - 1)
                    j = lane
                    while j < D:
                        xs[j] = init_value(key, ii, j, popsize, D, lower, upper)
                        j += 32
                    warp_barrier()
                    f = warp_evaluate(xs, buf_a, buf_z, red, shift, rot_t, perm, lane)
                    if i < popsize:
                        j = lane
                        while j < D:
                            pop[0, b, i, j] = xs[j]
                            j += 32
                        if lane == 0:
                            fit[0, b, i] = f
                            homes[0, b, i] = 0
                        best = min(best, f)
                    warp_barrier()  # xs is rewritten by the warp's next unit
            record(trace, hit_gen, target, b, 0, best, lane)
            cuda.syncthreads()
        g = g_first
        done = hit_gen[b] <= g - 1  # (written before a barrier)
        while not done and g <= g_last:
            n = min(popsize, max_fes - popsize * g)  # the FE budget's last generation may be partial
            cur, nxt = (g - 1) % 2, g % 2
            best = INF
            for k in range(rounds):
                i = w + k * WARPS
                if i < popsize or SIM:
                    ii = min(i, popsize - 1)
                    evaluated = i < n
                    f = T(0)
                    home = homes[cur, b, ii]
                    if evaluated or SIM:
                        # pick's four draws by four lanes at once (each its own hash), shared
                        if lane < 4:
                            draws[w, lane] = pick_draw(key, g, ii, lane, popsize, D)
                        warp_barrier()
                        r1, r2, r3 = pick_from(ii, draws[w, 0], draws[w, 1], draws[w, 2])
                        jrand = draws[w, 3]
                        h1, h2, h3 = homes[cur, b, r1], homes[cur, b, r2], homes[cur, b, r3]
                        j = lane
                        while j < D:
                            xs[j] = trial_value(key, g, ii, j, popsize, D, jrand, F, CR, pop[home, b, ii, j],
                                                pop[h1, b, r1, j], pop[h2, b, r2, j], pop[h3, b, r3, j],
                                                lower, upper, mode)
                            j += 32
                        warp_barrier()
                        f = warp_evaluate(xs, buf_a, buf_z, red, shift, rot_t, perm, lane)
                    if i < popsize:
                        take = evaluated and f <= fit[cur, b, i]
                        if take:  # into the buffer no one reads this generation; a loser is not copied
                            j = lane
                            while j < D:
                                pop[1 - home, b, i, j] = xs[j]
                                j += 32
                        if lane == 0:
                            homes[nxt, b, i] = 1 - home if take else home
                        fi = f if take else fit[cur, b, i]
                        if lane == 0:
                            fit[nxt, b, i] = fi
                        best = min(best, fi)
                    warp_barrier()  # xs is rewritten by the warp's next unit
            record(trace, hit_gen, target, b, g, best, lane)
            cuda.syncthreads()  # generation g complete: its flag is the block's
            done = hit_gen[b] <= g
            g += 1
        if tid == 0 and g - 1 >= g_first:
            cuda.atomic.max(state, 0, np.int64(g - 1))  # the last generation any trial ran

    return block_kernel


class BlockDE(ResidentDE):
    """DE/rand/1/bin, each trial's run in one thread block, a warp an individual (see the module
    docstring).

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

    def compile_evaluator(self):
        return gpu.compile_function(self.function.program, self.dtype, threads=32, warp=True)

    def block_threads(self) -> int:
        most = min(MAX_WARPS, SIMULATOR_WARPS) if simulator_enabled() else MAX_WARPS
        return 32 * block_warps(self.popsize, self.dim, self.fn.buffer_size, self.dtype, most)

    def grid(self, args) -> int:
        return self.batch  # a block per trial: no cooperative launch, no residency limit

    def kernel_options(self) -> dict:
        return {}  # data not staged: 16 warps' buffers leave no room for a matrix in 48 KB, and no grid barrier

    def allocate(self):
        self.d_homes = cuda.device_array((2, self.batch, self.popsize), dtype=np.int32)
        super().allocate()

    def population_arrays(self):
        """The population buffers, their errors and which buffer holds each individual (the kernel's)."""
        return self.d_pop, self.d_fit, self.d_homes

    def final_population(self, b, last_generation):
        buffer = last_generation % 2
        return _Gathered(self.d_pop, b, self.d_homes[buffer, b].copy_to_host()), self.d_fit[buffer, b]

    def run_trials(self, keys):
        """``de/resident``'s, after zeroing the last-generation counter the blocks raise."""
        self._allocate_common(len(keys))
        self.d_state.copy_to_device(np.zeros(1, dtype=np.int64), stream=self.compute)
        return super().run_trials(keys)


class _Gathered:
    """Trial ``b``'s population where each individual lies in the buffer ``homes`` names: ``[i]`` a device
    view of individual i, ``copy_to_host()`` all of them (what :meth:`BlockDE.final_population` hands out in
    place of one buffer's array)."""

    def __init__(self, d_pop, b, homes):
        self.d_pop, self.b, self.homes = d_pop, b, homes

    def __getitem__(self, i):
        return self.d_pop[int(self.homes[i]), self.b, i]

    def copy_to_host(self):
        both = self.d_pop[:, self.b].copy_to_host()
        return both[self.homes, np.arange(len(self.homes))]
