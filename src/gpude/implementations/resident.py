"""``resident``: the whole DE run resident on the device, one cooperative kernel launch.

The other device loops (:mod:`gpude.implementations.device_loop`) enqueue one to five kernels per
generation from the host. Here the generation loop itself runs on the GPU: one cooperative kernel
(every block resident at once) initialises the population, then loops over the generations with
a grid-wide barrier (``cuda.cg.this_grid().sync()``) between two of them; the stop tests (target
reached, ``max_fes``) and the best-error trace are made and written on the device. The host
launches once and reads the results once.

**Launch shape.** A 1-D grid of ``G`` blocks of ``threads`` threads (the function's evaluation
block, :func:`gpude.functions.gpu.compile_function`: the next power of two >= D). The work units
are the (trial, individual) pairs of the batch, ``B * NP`` of them; block ``k`` handles units
``k, k + G, k + 2 G, ...`` (grid-stride), so the trials of a batch share the blocks and ``G`` can
be anything from 1 to ``B * NP``. A cooperative launch needs every block resident, so ``G`` is at
most what the occupancy allows (``max_cooperative_grid_blocks``), and at most ``B * NP``; numba's
simulator runs cooperative grids of one block only, so ``G = 1`` there.

**A generation** (g >= 1) of unit (b, i), by its block: draw r1, r2, r3, j_rand and build the trial
vector in shared memory (:func:`gpude.algorithms.de.build_de_ops`' ``pick`` and ``trial_value``,
the operators of every DE implementation), evaluate it with the function's ``block_evaluate`` and
write the survivor into the other population buffer (generation g reads buffer (g - 1) % 2 and
writes g % 2: generational replacement without a second barrier, as ide's MCER). Thread 0 records
a survivor at or below the target as a hit (``atomic.min`` on ``hit_gen[b]``,
:func:`~gpude.implementations.device_loop.mark_hit`). The trace's ``trace[b, g]`` is written while
generation g + 1 runs (and after the loop for the last): block ``b % G`` reduces trial b's errors of
generation g, which stay unwritten until g + 2; one atomic per survivor on the one address cost a
single run ~1 us a generation (``benchmarks/resident_variants.py``).

**The function's data** (its shift and rotation) is copied by each block into shared memory once a
launch where it fits in a block's static 48 KB beside the kernel's buffers (one rotation at D 100:
CEC 2005's F01-F07 of case study 1), and evaluated from there: read from global memory, the matrix did
not stay in the SMs' L1 caches across the grid barriers (most likely the barrier's fence invalidates
them) and cost F01 a third more a generation (``benchmarks/resident_variants.py``). Larger data
(several rotations) is read from global memory.

**Sync points and the stop.** One grid barrier after the reset of the trace and the hit flags, one
after initialisation, one after each generation. After the barrier that ends generation g, every
thread of every block reads the hit flags and stops when every trial has ``hit_gen[b] <= g``: the
flags of generation g are all written before the barrier, and what the next generation may write
(``g + 1``) cannot change that test, so all blocks take the same decision and none is left
waiting at a barrier. A trial whose hit came at an earlier generation (``hit_gen[b] < g``) is
skipped, its buffers keep its final state. The FE budget: generation g evaluates
``n = min(NP, max_fes - NP g)`` trial vectors (units i >= n keep their parent), and the kernel runs
generations up to ``g_last`` (the budget's last one, ``ceil((max_fes - NP) / NP)``). The kernel
writes the last generation it ran into ``state[0]``.

**Wall-clock budget** (``max_time_s``): the simulator has no device clock (numba cannot read
``%globaltimer`` there), so a time-budgeted run is launched in **chunks** of ``chunk_generations``
generations (default :data:`CHUNK_GENERATIONS`): the same kernel with ``g_first``/``g_last``; the
first chunk also resets and initialises. The generation loop stays on the device; between two
chunks the host reads the flags and its clock. A run overruns its budget by at most one chunk
(the first chunk always runs). The trace of a time-budgeted run grows on demand, as the device
loops' (:data:`gpude.implementations.device_loop.TRACE_CHUNK`, doubled before a chunk that would
write past its end). Per-generation times are interpolated between the chunks' ends (generation
-1 at time 0: initialisation costs about a generation); a run with a fixed budget has NaN times.

**Time of a trial in a batch.** The host sees the hits only at the end (fixed budget), so a trial
that hit at generation h of a batch that ran G generations is taken to have stopped after the
fraction (h + 1) / (G + 1) of the batch's wall time, and charged its fair share up to there
(:func:`~gpude.implementations.batched.fair_shares`): an estimate, generations being
roughly equal in cost. Under a time budget, as in the other device loops, every trial is charged
the time it ran (until the end of the chunk in which its hit was seen).
"""

from __future__ import annotations

import math
import time
from functools import cache

import numpy as np
from numba import cuda

from ..algorithms.de import build_de_ops, require_variant_support
from ..core.errors import InvalidInputError, require_positive_int
from ..core.prebound import PreboundLaunch
from ..functions import gpu
from .device_loop import NO_HIT, DeviceLoopImplementation, mark_hit

#: generations per launch of a time-budgeted run (the host checks its clock between two)
CHUNK_GENERATIONS = 64


@cache
def build_unit_steps(block_evaluate, dtype, threads, buf, dim):
    """The two steps of a work unit (trial b, individual i), by one block, shared by the resident
    kernel (units spread over a grid) and the block-per-trial one (:mod:`gpude.implementations.block`):

    * ``init_unit(pop, fit, keys, lower, upper, shift, rot_t, perm, trace, hit_gen, target, b, i,
      xs, buf_a, buf_z, red)``: individual i of generation 0, evaluated, into buffer 0; its error into
      the trace (``atomic.min`` on ``trace[b, 0]``) and a hit at generation 0;
    * ``generation_unit(pop, fit, keys, lower, upper, F, CR, mode, shift, rot_t, perm, trace, hit_gen,
      target, b, i, g, n, xs, buf_a, buf_z, red)``: unit (b, i) of generation g (a trial vector if
      i < n, else the parent kept) from buffer (g - 1) % 2 into g % 2, and a hit at g (the trace of
      generation g is the kernel's, once the generation is complete).

    Each ends with a block barrier (``xs`` is the block's next unit's)."""
    T = np.dtype(dtype).type
    P, D = int(threads), int(dim)
    ops = build_de_ops(T, "cuda")
    init_value, pick, trial_value = ops.init_value, ops.pick, ops.trial_value

    @cuda.jit(device=True)
    def init_unit(pop, fit, keys, lower, upper, shift, rot_t, perm, trace, hit_gen, target, b, i,
                  xs, buf_a, buf_z, red):
        tid = cuda.threadIdx.x
        popsize = fit.shape[2]
        j = tid
        while j < D:
            v = init_value(keys[b], i, j, popsize, D, lower, upper)
            xs[j] = v
            pop[0, b, i, j] = v
            j += P
        cuda.syncthreads()
        f = block_evaluate(xs, buf_a, buf_z, red, shift, rot_t, perm, tid)
        if tid == 0:
            fit[0, b, i] = f
            cuda.atomic.min(trace, (b, 0), np.float64(f))
            if f <= target:
                mark_hit(hit_gen, b, 0)
        cuda.syncthreads()  # xs is rewritten by the block's next unit

    @cuda.jit(device=True)
    def generation_unit(pop, fit, keys, lower, upper, F, CR, mode, shift, rot_t, perm, trace, hit_gen,
                        target, b, i, g, n, xs, buf_a, buf_z, red):
        tid = cuda.threadIdx.x
        popsize = fit.shape[2]
        cur, nxt = (g - 1) % 2, g % 2
        take = False
        f = T(0)
        if i < n:
            key = keys[b]
            r1, r2, r3, jrand = pick(key, g, i, popsize, D)
            j = tid
            while j < D:
                xs[j] = trial_value(key, g, i, j, popsize, D, jrand, F, CR, pop[cur, b, i, j],
                                    pop[cur, b, r1, j], pop[cur, b, r2, j], pop[cur, b, r3, j],
                                    lower, upper, mode)
                j += P
            cuda.syncthreads()
            f = block_evaluate(xs, buf_a, buf_z, red, shift, rot_t, perm, tid)
            take = f <= fit[cur, b, i]
        j = tid
        while j < D:
            pop[nxt, b, i, j] = xs[j] if take else pop[cur, b, i, j]
            j += P
        if tid == 0:
            fi = f if take else fit[cur, b, i]
            fit[nxt, b, i] = fi
            if fi <= target:
                mark_hit(hit_gen, b, g)
        cuda.syncthreads()  # xs is rewritten by the block's next unit

    return init_unit, generation_unit


#: static shared memory a block may have (the function's data is staged there only within it)
STATIC_SHARED_BYTES = 48 * 1024


def staged_shapes(fn, threads: int, dim: int):
    """The shapes of the function's shift and rotation arrays (``fn.data``' first two) where they fit in a
    block's static shared memory beside the resident kernel's own buffers, else ``None`` (read from global)."""
    shift, rot_t = fn.data[0], fn.data[1]
    item = np.dtype(fn.dtype).itemsize
    own = (int(dim) + 2 * int(fn.buffer_size) + 4 * int(threads)) * item
    if own + (shift.size + rot_t.size) * item > STATIC_SHARED_BYTES:
        return None
    return tuple(int(n) for n in shift.shape), tuple(int(n) for n in rot_t.shape)


@cache
def build_resident_kernel(block_evaluate, dtype, threads, buf, dim, staged=None):
    """The cooperative kernel for one evaluation build (function, D, threads, dtype).

    ``resident_kernel[G, threads](pop, fit, keys, lower, upper, F, CR, mode, shift, rot_t, perm,
    trace, hit_gen, state, target, max_fes, g_first, g_last)`` with ``pop`` (2, B, NP, D), ``fit``
    (2, B, NP), ``trace`` (B, length), ``hit_gen`` (B + 1,) and ``state`` (1,) int64: runs
    generations ``g_first .. g_last`` (``g_first == 1``: after resetting the trace and the flags and
    initialising the population), stopping when every trial has hit its target. ``staged``: the shapes
    of ``shift`` and ``rot_t`` (:func:`staged_shapes`), which each block then copies into shared memory
    once and evaluates from there; ``None``: read from global memory.
    """
    T = np.dtype(dtype).type
    P, BUF, D = int(threads), int(buf), int(dim)
    init_unit, generation_unit = build_unit_steps(block_evaluate, dtype, threads, buf, dim)
    STAGED = staged is not None
    SHIFT_SHAPE, ROT_SHAPE = staged if STAGED else ((1, 1), (1, 1, 1))
    SHIFT_N, SHIFT_ROW = SHIFT_SHAPE[0] * SHIFT_SHAPE[1], SHIFT_SHAPE[1]
    ROT_N, ROT_PLANE, ROT_ROW = ROT_SHAPE[0] * ROT_SHAPE[1] * ROT_SHAPE[2], ROT_SHAPE[1] * ROT_SHAPE[2], ROT_SHAPE[2]

    @cuda.jit(device=True)
    def all_hit(hit_gen, trials, g):
        """Whether every trial reached its target at generation g or before."""
        for b in range(trials):
            if hit_gen[b] > g:
                return False
        return True

    @cuda.jit(device=True)
    def trace_generation(fit, trace, hit_gen, g, red):
        """``trace[b, g]``, the least error of generation g, for the trials of this block (b = block,
        block + G, ...) that ran it, reduced by the block's threads through ``red[0]``; called while generation
        g + 1 runs: the errors of generation g (buffer g % 2) are next written by generation g + 2."""
        tid = cuda.threadIdx.x
        trials, popsize = fit.shape[1], fit.shape[2]
        b = cuda.blockIdx.x
        while b < trials:
            if hit_gen[b] >= g:  # trial b ran generation g (its hit, if any, lowered the flag to g at most)
                m = T(math.inf)
                i = tid
                while i < popsize:
                    m = min(m, fit[g % 2, b, i])
                    i += P
                red[0, tid] = m
                cuda.syncthreads()
                s = P // 2
                while s > 0:
                    if tid < s:
                        red[0, tid] = min(red[0, tid], red[0, tid + s])
                    cuda.syncthreads()
                    s //= 2
                if tid == 0:
                    trace[b, g] = np.float64(red[0, 0])
                cuda.syncthreads()
            b += cuda.gridDim.x

    @cuda.jit(device=True)
    def run(pop, fit, keys, lower, upper, F, CR, mode, shift, rot_t, perm, trace, hit_gen, state, target,
            max_fes, g_first, g_last, xs, buf_a, buf_z, red):
        grid = cuda.cg.this_grid()
        tid = cuda.threadIdx.x
        trials, popsize = fit.shape[1], fit.shape[2]
        units = trials * popsize
        if g_first == 1:
            # reset: the trace to +inf, the flags to "no hit" (the last slot counts the hits)
            t = cuda.grid(1)
            stride = cuda.gridDim.x * cuda.blockDim.x
            length = trace.shape[1]
            while t < trials * length:
                trace[t // length, t % length] = math.inf
                t += stride
            t = cuda.grid(1)
            while t < trials + 1:
                hit_gen[t] = NO_HIT if t < trials else 0
                t += stride
            grid.sync()
            # generation 0: initialise and evaluate, into buffer 0
            u = cuda.blockIdx.x
            while u < units:
                init_unit(pop, fit, keys, lower, upper, shift, rot_t, perm, trace, hit_gen, target,
                          u // popsize, u % popsize, xs, buf_a, buf_z, red)
                u += cuda.gridDim.x
            grid.sync()
        g = g_first
        done = all_hit(hit_gen, trials, g - 1)
        while not done and g <= g_last:
            if g > g_first:  # the trace of the generation before, while this one runs
                trace_generation(fit, trace, hit_gen, g - 1, red)
            n = min(popsize, max_fes - popsize * g)  # the FE budget's last generation may be partial
            u = cuda.blockIdx.x
            while u < units:
                b = u // popsize
                # hit_gen[b] < g: an earlier generation of trial b reached the target (block-uniform:
                # this generation can only lower a flag to g)
                if hit_gen[b] >= g:
                    generation_unit(pop, fit, keys, lower, upper, F, CR, mode, shift, rot_t, perm, trace,
                                    hit_gen, target, b, u % popsize, g, n, xs, buf_a, buf_z, red)
                u += cuda.gridDim.x
            grid.sync()  # generation g complete in every block: its flags are all written
            done = all_hit(hit_gen, trials, g)
            g += 1
        if g - 1 >= g_first:
            trace_generation(fit, trace, hit_gen, g - 1, red)
        if cuda.blockIdx.x == 0 and tid == 0:
            state[0] = g - 1  # the last generation run

    @cuda.jit(cache=True)
    def resident_kernel(pop, fit, keys, lower, upper, F, CR, mode, shift, rot_t, perm, trace, hit_gen,
                        state, target, max_fes, g_first, g_last):
        xs = cuda.shared.array(D, T)
        buf_a = cuda.shared.array(BUF, T)
        buf_z = cuda.shared.array(BUF, T)
        red = cuda.shared.array((4, P), T)
        if STAGED:
            # the function's data read once: from global memory it did not stay in L1 across the grid
            # barriers
            shift_s = cuda.shared.array(SHIFT_SHAPE, T)
            rot_s = cuda.shared.array(ROT_SHAPE, T)
            t = cuda.threadIdx.x
            while t < SHIFT_N:
                shift_s[t // SHIFT_ROW, t % SHIFT_ROW] = shift[t // SHIFT_ROW, t % SHIFT_ROW]
                t += P
            t = cuda.threadIdx.x
            while t < ROT_N:
                k, r = t // ROT_PLANE, t % ROT_PLANE
                rot_s[k, r // ROT_ROW, r % ROT_ROW] = rot_t[k, r // ROT_ROW, r % ROT_ROW]
                t += P
            cuda.syncthreads()
            run(pop, fit, keys, lower, upper, F, CR, mode, shift_s, rot_s, perm, trace, hit_gen, state, target,
                max_fes, g_first, g_last, xs, buf_a, buf_z, red)
        else:
            run(pop, fit, keys, lower, upper, F, CR, mode, shift, rot_t, perm, trace, hit_gen, state, target,
                max_fes, g_first, g_last, xs, buf_a, buf_z, red)

    return resident_kernel


def resident_blocks(kernel, args, threads: int, units: int) -> int:
    """The most blocks of a cooperative grid of ``kernel`` the device keeps resident at once (at
    most ``units``, one work unit per block); 1 on numba's simulator (cooperative grids of one
    block only)."""
    from ..core.gpu_runtime import simulator_enabled

    if simulator_enabled():
        return 1
    sig = tuple(kernel.typeof_pyval(a) for a in args)
    compiled = kernel.compile(sig)
    return max(1, min(units, int(compiled.max_cooperative_grid_blocks(threads))))


class ResidentDE(DeviceLoopImplementation):
    """DE/rand/1/bin with the whole run in one cooperative kernel launch (see the module docstring).

    Options: ``trials_per_launch`` (as the device loops), ``blocks`` (the cooperative grid; default
    as many as the device keeps resident, at most B NP; 1 on the simulator) and
    ``chunk_generations`` (generations per launch of a time-budgeted run).
    """

    name = "resident"

    def __init__(self, function, params, trials_per_launch: int = 1, blocks: int | None = None,
                 chunk_generations: int = CHUNK_GENERATIONS, **options):
        if options:  # the base class names the options it does not take (e.g. the device loops' poll_every)
            super(DeviceLoopImplementation, self).__init__(function, params, **options)
        super().__init__(function, params, trials_per_launch=trials_per_launch)
        require_variant_support(self, params)  # DE/rand/1/bin only
        if blocks is not None:
            require_positive_int("blocks", blocks)
            from ..core.gpu_runtime import simulator_enabled

            if simulator_enabled() and blocks != 1:
                raise InvalidInputError(
                    f"de/resident: blocks={blocks}, but numba's CUDA simulator runs cooperative grids of "
                    f"one block only; use blocks=1 (or leave it out)")
        require_positive_int("chunk_generations", chunk_generations)
        self.forced_blocks = blocks
        self.chunk_generations = chunk_generations
        self.blocks = None

    #: the kernel's builder (same arguments and launch interface for every subclass: de/block's)
    build_kernel = staticmethod(build_resident_kernel)

    def grid(self, args) -> int:
        """Blocks of the launch: as many as the device keeps resident for a cooperative launch (at
        most B NP units), or ``blocks`` if given and possible."""
        units = self.batch * self.popsize
        most = resident_blocks(self.kernel, args, self.threads, units)
        if self.forced_blocks is not None and self.forced_blocks > most:
            raise InvalidInputError(
                f"de/resident: blocks={self.forced_blocks}, but a cooperative launch needs every block "
                f"resident and this GPU keeps at most {most} blocks of {self.threads} threads of this "
                f"kernel resident (or B NP = {units} units); use blocks <= {most}")
        return most if self.forced_blocks is None else self.forced_blocks

    def compile_evaluator(self):
        """The function's CUDA build the kernel evaluates with (a block an individual)."""
        return gpu.compile_function(self.function.program, self.dtype)

    def block_threads(self) -> int:
        """Threads a block of the launch."""
        return self.fn.threads

    def allocate(self):
        T, B, NP, D = self.dtype, self.batch, self.popsize, self.dim
        self.fn = self.compile_evaluator()
        self.threads = self.block_threads()
        self.kernel = self.build_kernel(self.fn.block_evaluate, T, self.threads, self.fn.buffer_size, D,
                                        **self.kernel_options())
        self.d_pop = cuda.device_array((2, B, NP, D), dtype=T)
        self.d_fit = cuda.device_array((2, B, NP), dtype=T)
        self.d_state = cuda.device_array(1, dtype=np.int64)
        self.h_state = cuda.pinned_array(1, dtype=np.int64)
        p = self.params
        args = (*self.population_arrays(), self.d_keys, self.lower, self.upper, p.F, p.CR, p.bound_mode,
                *self.fn.data, self.d_trace, self.d_hit, self.d_state, float(p.target), int(p.max_fes), 1, 0)
        self.blocks = self.grid(args)
        # the run's budget and target are set per launch (warmup() runs the same arrays with another max_fes)
        k = len(args)
        self.launch = PreboundLaunch(self.kernel, args, self.blocks, self.threads, self.compute,
                                     {"target": k - 4, "max_fes": k - 3, "g_first": k - 2, "g_last": k - 1})
        self.prebound = self.launch.fast

    def kernel_options(self) -> dict:
        """The kernel builder's options beyond the evaluation build: the function's data staged in shared
        memory where it fits (:func:`staged_shapes`)."""
        return {"staged": staged_shapes(self.fn, self.threads, self.dim)}

    def population_arrays(self):
        """The kernel's first arguments: the two population buffers and their errors."""
        return self.d_pop, self.d_fit

    def run_trials(self, keys):
        """Run a trial per key, all in the same launch(es) (see the module docstring)."""
        p, B = self.params, len(keys)
        self._allocate_common(B)
        self.h_keys[:] = keys
        self.d_keys.copy_to_device(self.h_keys, stream=self.compute)
        self.compute.synchronize()
        timed = p.max_time_s is not None
        G = self.max_generations
        marks = [(-1, 0.0)]  # (generation, host seconds) at the end of each chunk
        seen_at = [None] * B
        out_of_time = False
        t0 = time.perf_counter()
        if not timed:  # the whole run: one launch
            self.launch.launch(target=float(p.target), max_fes=int(p.max_fes), g_first=1, g_last=G)
            self._read_flags()
        else:  # chunks of K generations, the host's clock checked between two
            g_first = 1
            while True:
                g_last = min(G, g_first + self.chunk_generations - 1)
                if g_last >= self.d_trace.shape[1]:
                    self._grow_trace(g_last)
                self.launch.launch(target=float(p.target), max_fes=int(p.max_fes), g_first=g_first,
                                   g_last=g_last)
                self._read_flags()
                now = time.perf_counter() - t0
                g_run = int(self.h_state[0])
                marks.append((g_run, now))
                for b in range(B):
                    if seen_at[b] is None and self.h_hit[b] != NO_HIT:
                        seen_at[b] = now
                if g_run < g_last or g_run >= G or all(s is not None for s in seen_at):
                    break  # every trial hit its target, or the FE budget is spent
                if now >= p.max_time_s:
                    out_of_time = True
                    break
                g_first = g_run + 1
        g_run = int(self.h_state[0])
        hit_gens = [int(h) for h in self.h_hit[:B]]
        last = [min(g_run, h) for h in hit_gens]
        fit, best_x, wall, trace_best = self._final_trials(t0, last)
        if timed:  # every trial had the whole budget, concurrently: charged the time it ran
            ends = seen_at
            mark_gens = np.array([g for g, _ in marks] + [g_run + 1], dtype=np.float64)
            mark_times = np.maximum.accumulate(np.array([t for _, t in marks] + [wall]))
            times = (mark_gens, mark_times)
        else:  # hits seen at the end only: each trial's end estimated in proportion to its generations
            ends = [wall * (last[b] + 1) / (g_run + 1) if hit_gens[b] != NO_HIT else None for b in range(B)]
            times = None
        return self._trial_ends(fit, best_x, trace_best, last, hit_gens, ends, out_of_time, times), wall

    def batch_info(self, batch: int) -> dict:
        options = {"trials_per_launch": batch, "blocks": self.blocks}
        if self.params.max_time_s is not None:
            options["chunk_generations"] = self.chunk_generations
        return {"options": options, "prebound": self.prebound}

    def _read_flags(self):
        """Wait for the launch and copy the hit flags and the last generation run to the host."""
        self.d_hit.copy_to_host(self.h_hit, stream=self.compute)
        self.d_state.copy_to_host(self.h_state, stream=self.compute)
        self.compute.synchronize()

    def launch_init(self):  # the kernel initialises (run_trials is its own)
        raise NotImplementedError("de/resident initialises inside its kernel")

    def launch_generation(self, g, n):
        raise NotImplementedError("de/resident runs its generations inside its kernel")

    def final_population(self, b, last_generation):
        buffer = last_generation % 2
        return self.d_pop[buffer, b], self.d_fit[buffer, b]
