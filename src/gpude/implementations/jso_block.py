"""``jso/block`` and ``lshade/block``: jSO and L-SHADE with each trial's whole run in one thread block.

For batches of trials (the CEC protocol's 51 runs of a function in one launch): block b is trial b, and
the generation's steps (ranking, draws, children, selection, population size reduction) run inside the
block between barriers (:mod:`gpude.implementations.jso_block_kernel`). The host side is
``de/resident``'s (one launch for a fixed budget, chunks of generations for a time budget, the hit
flags and fair shares), with jSO's own generation count: the population shrinks, so generation g's FEs
come from the reduction's schedule (:func:`fes_schedule`), the same on the host and in the kernel.

Same operators and random stream as ``jso/sequential`` (:mod:`gpude.algorithms.jso`): a seed makes its
run to the rounding of the function evaluation (the warp evaluator sums in another order).

**Why this design** (timed before it was built: ``benchmarks/jso_prototype.py``,
``results/benchmarks/jso_prototype/``, one H100): a block a trial and a warp a child, as ``de/block``;
a launch of one trial took as long as one of 51, and the evaluation replaced by a sphere changed
nothing: a generation's time is its chain of dependent steps (draws in every lane of a warp,
bookkeeping on one thread), so the draws run a thread a child and the selection's bookkeeping is
spread over the block (prefix counts, an argmin, atomic last writers); one thread keeps only the
memory update, the CPU's own loop over the successes.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from ..algorithms.jso import JSOParams, build_jso_ops
from ..core.errors import InvalidInputError, require_positive_int
from ..core.gpu_runtime import simulator_enabled
from ..core.prebound import PreboundLaunch
from ..functions import gpu
from .jso_block_kernel import FLOAT_STATE, FS_BEST, INT_STATE, ST_NP, build_jso_block_kernel, dynamic_shared_bytes
from .resident import CHUNK_GENERATIONS, ResidentDE

#: warps a block at most (the prototype: 16 a little faster than 8 at D 30)
MAX_WARPS = 16
#: on numba's simulator (Python threads): two warps make a block take its children in rounds
SIMULATOR_WARPS = 2
#: static shared memory a block may take without the opt-in (the warps' buffers and the argmin's)
STATIC_BYTES = 48 * 1024
#: the opt-in limit of shared memory a block (H100: 227 KB), where the device does not say
DEFAULT_OPTIN_BYTES = 227 * 1024


def fes_schedule(params) -> np.ndarray:
    """The FEs used once each generation is complete (entry 0: the initial population), as the kernel
    and ``jso/sequential`` count them: generation g evaluates min(NP, max_fes - nfes) children and the
    population shrinks by the linear plan."""
    next_popsize = build_jso_ops(np.float64, "cpu").next_popsize
    npi, npmin, max_fes = int(params.popsize), int(params.np_min), int(params.max_fes)
    fes, NP = [min(npi, max_fes)], npi
    while fes[-1] < max_fes:
        n = min(NP, max_fes - fes[-1])
        fes.append(fes[-1] + n)
        NP = int(next_popsize(NP, fes[-1], npi, npmin, max_fes))
    return np.array(fes, dtype=np.int64)


def block_warps(params, dim: int, buf: int, dtype, most: int) -> int:
    """Warps a block: at most ``most``, within the static shared memory (a warp's trial vector, two
    evaluation buffers, its reduction rows and the argmin's entries)."""
    per_warp = (int(dim) + 2 * int(buf) + 4 * 32) * np.dtype(dtype).itemsize + 32 * 12
    fits = (STATIC_BYTES - 1024 - 16 * int(params.memory_size)) // per_warp
    if fits < 1:
        raise InvalidInputError(
            f"jso/block: one warp's buffers at D {dim} in {np.dtype(dtype).name} take {per_warp} bytes, more than "
            f"the {STATIC_BYTES} bytes of static shared memory a block has; use jso/sequential for this size")
    return int(min(most, fits))


def optin_bytes() -> int:
    """The shared memory a block may opt in to on this device."""
    try:
        return int(cuda.get_current_device().MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
    except Exception:
        return DEFAULT_OPTIN_BYTES


class JSOBlock(ResidentDE):
    """jSO, each trial's run in one thread block (see the module docstring).

    Options: ``trials_per_launch`` (the blocks of a launch), ``chunk_generations`` (generations per
    launch of a time-budgeted run) and ``warps`` (warps a block: default the most that fit, at most 16).
    """

    algorithm = "jso"
    name = "block"

    def __init__(self, function, params, trials_per_launch: int = 1, chunk_generations: int = CHUNK_GENERATIONS,
                 warps: int | None = None, **options):
        if "blocks" in options:
            raise InvalidInputError(f"{self.algorithm}/block takes no option blocks: its launch has a block per "
                                    f"trial (trials_per_launch)")
        if not isinstance(params, JSOParams):
            raise InvalidInputError(f"{self.algorithm}/block runs jSO and L-SHADE parameters, got "
                                    f"{type(params).__name__}")
        if warps is not None:
            require_positive_int("warps", warps)
        super().__init__(function, params, trials_per_launch=trials_per_launch,
                         chunk_generations=chunk_generations, **options)
        self.forced_warps = warps

    # the generation count and FEs of jSO's shrinking population
    def generation_count(self) -> int:
        self.fes_at = fes_schedule(self.params)
        return len(self.fes_at) - 1

    def fes_after_generation(self, generation: int) -> int:
        return int(self.fes_at[generation])

    def final_best_error(self, trial: int, fit) -> float:
        """The best error so far (the kernel's; the best may have left a shrinking population)."""
        return float(self._fst[trial, FS_BEST])

    def compile_evaluator(self):
        return gpu.compile_function(self.function.program, self.dtype, threads=32, warp=True)

    def block_threads(self) -> int:
        most = SIMULATOR_WARPS if simulator_enabled() else MAX_WARPS
        fits = block_warps(self.params, self.dim, self.fn.buffer_size, self.dtype, most)
        if self.forced_warps is not None:
            if self.forced_warps > fits and not simulator_enabled():
                raise InvalidInputError(f"{self.algorithm}/block: warps={self.forced_warps}, but at most {fits} "
                                        f"fit a block's static shared memory at D {self.dim}")
            fits = self.forced_warps
        return 32 * fits

    def grid(self, args) -> int:
        return self.batch

    def settings(self) -> tuple:
        p = self.params
        return (int(p.popsize), int(p.np_min), int(p.memory_size), max(p.archive_capacity0(), 1), float(p.arc_rate),
                float(p.p_max), float(p.p_min), float(p.memory_F), float(p.memory_CR), bool(p.fixed_last_slot),
                bool(p.weighted_F), bool(p.cr_schedule), bool(p.f_schedule), bool(p.averaged_memory),
                bool(p.pbest_not_self), float(p.floor))

    def allocate(self):
        T, B, NPI, D, p = self.dtype, self.batch, self.popsize, self.dim, self.params
        self.fn = self.compile_evaluator()
        self.threads = self.block_threads()
        settings = self.settings()
        self.kernel = build_jso_block_kernel(self.fn.block_evaluate, T, self.threads // 32, self.fn.buffer_size, D,
                                             settings)
        self.shared_bytes = dynamic_shared_bytes(NPI)
        if not simulator_enabled() and self.shared_bytes + STATIC_BYTES > optin_bytes():
            raise InvalidInputError(
                f"{self.algorithm}/block: NP_init {NPI} needs {self.shared_bytes} bytes of shared memory for a trial's "
                f"state beside the warps' buffers, more than this GPU's {optin_bytes()}; "
                f"use {self.algorithm}/sequential")
        acap = settings[3]
        self.d_pop = cuda.device_array((B, NPI, D), dtype=T)
        self.d_tb = cuda.device_array((B, NPI, D), dtype=T)
        self.d_arch = cuda.device_array((B, acap, D), dtype=T)
        self.d_best_x = cuda.device_array((B, D), dtype=T)
        self.d_order = cuda.device_array((B, NPI), dtype=np.int32)
        self.d_last = cuda.device_array((B, acap), dtype=np.int64)
        self.d_mem = cuda.device_array((B, 2, int(p.memory_size)), dtype=np.float64)
        self.d_st = cuda.device_array((B, INT_STATE), dtype=np.int64)
        self.d_fst = cuda.device_array((B, FLOAT_STATE), dtype=np.float64)
        self.d_fit = cuda.device_array((B, NPI), dtype=np.float64)
        self.d_state = cuda.device_array(1, dtype=np.int64)
        self.h_state = cuda.pinned_array(1, dtype=np.int64)
        args = (self.d_pop, self.d_tb, self.d_arch, self.d_best_x, self.d_order, self.d_last, self.d_mem, self.d_st,
                self.d_fst, self.d_fit, self.d_keys, self.lower, self.upper, *self.fn.data, self.d_trace, self.d_hit,
                self.d_state, float(p.target), int(p.max_fes), 1, 0)
        self.blocks = self.grid(args)
        k = len(args)
        self.launch = PreboundLaunch(self.kernel, args, self.blocks, self.threads, self.compute,
                                     {"target": k - 4, "max_fes": k - 3, "g_first": k - 2, "g_last": k - 1},
                                     sharedmem=self.shared_bytes)
        self.prebound = self.launch.fast

    def run_trials(self, keys):
        """``de/resident``'s, after zeroing the last-generation counter the blocks raise."""
        self._allocate_common(len(keys))
        self.d_state.copy_to_device(np.zeros(1, dtype=np.int64), stream=self.compute)
        return super().run_trials(keys)

    def batch_info(self, batch: int) -> dict:
        info = super().batch_info(batch)
        info["options"].pop("blocks", None)
        info["options"]["warps"] = self.threads // 32
        return info

    def _final_states(self, last):
        self._st = self.d_st.copy_to_host()
        self._fst = self.d_fst.copy_to_host()
        fit_all, order = self.d_fit.copy_to_host(), self.d_order.copy_to_host()
        best_x = self.d_best_x.copy_to_host()
        self._order = order
        fit = [fit_all[b, : int(self._st[b, ST_NP])] for b in range(len(last))]
        return fit, [best_x[b] for b in range(len(last))]

    def population(self, trial: int = 0):
        """Host copies of the final population (its NP live individuals, in order) and errors of trial
        ``trial`` of the last batch."""
        NP = int(self._st[trial, ST_NP])
        rows = self._order[trial, :NP]
        return self.d_pop[trial].copy_to_host()[rows], self.d_fit[trial].copy_to_host()[:NP].astype(np.float64)

    def final_population(self, b, last_generation):
        raise NotImplementedError("jso/block reads its final state in _final_states")


class LSHADEBlock(JSOBlock):
    algorithm = "lshade"


__all__ = ["JSOBlock", "LSHADEBlock", "fes_schedule"]
