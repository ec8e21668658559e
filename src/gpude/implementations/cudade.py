"""``cudade``: cudaDE of Veronese & Krohling (2010), as Qin et al. (GECCO 2012, sec. 3.2) describe it.

* The **host** draws the matrix of mutation indices (r1, r2, r3, j_rand) of every generation and
  copies it to the GPU (a synchronous copy: the host waits for the GPU every generation, as a
  plain ``cudaMemcpy`` does; it draws the next matrix while the GPU runs the generation's kernels).
* Three kernels, combined as cudaDE combines them: **I+E** (initialise and evaluate), **M+C**
  (mutate and cross over) and **E+R** (evaluate the trial vectors and replace).
* A fixed launch configuration: a grid of 240 blocks of 64 threads. A block handles individuals
  ``blockIdx.x, blockIdx.x + 240, ...`` and its threads loop over the coordinates, so any D and NP
  fit at the cost of parallelism (Qin's explanation of observations (4) and (5)).

Every random decision comes from the counter-based generator (:mod:`gpude.algorithms.de`), the
host's indices too, so cudade makes the run of ``sequential`` for the same seed. The trials of a
batch (``run_batch``) are the grid's y dimension, as in the other device loops.
"""

from __future__ import annotations

from functools import cache

import numba
import numpy as np
from numba import cuda

from ..algorithms.de import build_de_ops, require_variant_support
from ..core.errors import require_positive_int
from ..core.prebound import PreboundLaunch
from ..functions import gpu
from .device_loop import DeviceLoopImplementation, mark_hit

BLOCKS, THREADS = 240, 64  # cudaDE's fixed configuration


@cache
def host_indices(dtype):
    """A numba CPU function filling ``idx`` (B, NP, 4) with generation g's indices of every trial."""
    pick = build_de_ops(dtype, "cpu").pick

    @numba.njit(cache=False)
    def fill(idx, keys, g, dim, n):
        for b in range(idx.shape[0]):
            for i in range(n):
                r1, r2, r3, jrand = pick(keys[b], g, i, idx.shape[1], dim)
                idx[b, i, 0], idx[b, i, 1], idx[b, i, 2], idx[b, i, 3] = r1, r2, r3, jrand

    return fill


@cache
def build_kernels(fid, dim, dtype):
    """I+E, M+C and E+R for one (function, D, dtype); arrays carry the trials of a batch first
    (pop (B, NP, D), idx (B, NP, 4), keys (B,)), the block's trial is ``blockIdx.y``."""
    from ..functions import get_function

    T = np.dtype(dtype).type
    fn = gpu.compile_function(get_function(fid, dim).program, T, THREADS)
    block_evaluate = fn.block_evaluate
    ops = build_de_ops(T, "cuda")
    init_value, trial_value = ops.init_value, ops.trial_value
    D, BUF = int(dim), int(fn.buffer_size)  # a function's first buffer may be wider than D

    @cuda.jit(cache=True)
    def ie_kernel(pop, fit, keys, lower, upper, shift, rot_t, perm, trace, hit_gen, target):
        a = cuda.shared.array(BUF, T)
        z = cuda.shared.array(D, T)
        red = cuda.shared.array((4, THREADS), T)
        b, tid = cuda.blockIdx.y, cuda.threadIdx.x
        popsize = pop.shape[1]
        i = cuda.blockIdx.x
        while i < popsize:  # the block's individuals, one after another
            j = tid
            while j < D:
                pop[b, i, j] = init_value(keys[b], i, j, popsize, D, lower, upper)
                j += THREADS
            cuda.syncthreads()
            f = block_evaluate(pop[b, i], a, z, red, shift, rot_t, perm, tid)
            if tid == 0:
                fit[b, i] = f
                cuda.atomic.min(trace, (b, 0), np.float64(f))
                if f <= target:
                    mark_hit(hit_gen, b, 0)
            i += cuda.gridDim.x

    @cuda.jit(cache=True)
    def mc_kernel(pop, trials, idx, keys, g, n, F, CR, lower, upper, mode, hit_gen):
        b = cuda.blockIdx.y
        if hit_gen[b] < g:
            return  # an earlier generation of this trial reached the target
        popsize = pop.shape[1]
        i = cuda.blockIdx.x
        while i < n:
            r1, r2, r3, jrand = idx[b, i, 0], idx[b, i, 1], idx[b, i, 2], idx[b, i, 3]
            j = cuda.threadIdx.x
            while j < D:
                trials[b, i, j] = trial_value(keys[b], g, i, j, popsize, D, jrand, F, CR, pop[b, i, j],
                                              pop[b, r1, j], pop[b, r2, j], pop[b, r3, j], lower, upper, mode)
                j += THREADS
            i += cuda.gridDim.x

    @cuda.jit(cache=True)
    def er_kernel(pop, fit, trials, g, n, shift, rot_t, perm, trace, hit_gen, target):
        b, tid = cuda.blockIdx.y, cuda.threadIdx.x
        if hit_gen[b] < g:
            return
        a = cuda.shared.array(BUF, T)
        z = cuda.shared.array(D, T)
        red = cuda.shared.array((4, THREADS), T)
        take = cuda.shared.array(1, np.int32)
        popsize = pop.shape[1]
        i = cuda.blockIdx.x
        while i < popsize:
            if i < n:  # the last generation of a budget may hold fewer trial vectors
                f = block_evaluate(trials[b, i], a, z, red, shift, rot_t, perm, tid)
                if tid == 0:
                    take[0] = 1 if f <= fit[b, i] else 0
                    if take[0] == 1:
                        fit[b, i] = f
                cuda.syncthreads()
                if take[0] == 1:
                    j = tid
                    while j < D:
                        pop[b, i, j] = trials[b, i, j]
                        j += THREADS
            if tid == 0:
                cuda.atomic.min(trace, (b, g), np.float64(fit[b, i]))
                if fit[b, i] <= target:
                    mark_hit(hit_gen, b, g)
            cuda.syncthreads()  # take[0] is reused for the block's next individual
            i += cuda.gridDim.x

    return ie_kernel, mc_kernel, er_kernel


class CudaDE(DeviceLoopImplementation):
    name = "cudade"

    def __init__(self, function, params, blocks: int = BLOCKS, poll_every: int = 1, trials_per_launch: int = 1):
        super().__init__(function, params, poll_every=poll_every, trials_per_launch=trials_per_launch)
        require_variant_support(self, params)  # DE/rand/1/bin only
        require_positive_int("blocks", blocks, hint=" (cudaDE: 240)")
        self.blocks = blocks  # cudaDE's 240; fewer only to keep tests on numba's simulator short

    def allocate(self):
        T, B, NP, D = self.dtype, self.batch, self.popsize, self.dim
        self.fn_data = gpu.compile_function(self.function.program, T, THREADS).data
        self.k_ie, self.k_mc, self.k_er = build_kernels(self.function.fid, D, T)
        self.fill_indices = host_indices(T)
        self.d_pop = cuda.device_array((B, NP, D), dtype=T)
        self.d_fit = cuda.device_array((B, NP), dtype=T)
        self.d_trials = cuda.device_array((B, NP, D), dtype=T)
        self.d_idx = cuda.device_array((B, NP, 4), dtype=np.int64)
        self.h_idx = cuda.pinned_array((B, NP, 4), dtype=np.int64)
        p, s = self.params, self.compute
        self.mc = PreboundLaunch(self.k_mc, (self.d_pop, self.d_trials, self.d_idx, self.d_keys, 1, NP, p.F,
                                             p.CR, self.lower, self.upper, p.bound_mode, self.d_hit),
                                 (self.blocks, B), THREADS, s, {"g": 4, "n": 5})
        self.er = PreboundLaunch(self.k_er, (self.d_pop, self.d_fit, self.d_trials, 1, NP, *self.fn_data,
                                             self.d_trace, self.d_hit, p.target),
                                 (self.blocks, B), THREADS, s, {"g": 3, "n": 4})
        self.prebound = self.mc.fast and self.er.fast

    def launch_init(self):
        p, B = self.params, self.batch
        self.k_ie[(self.blocks, B), THREADS, self.compute](self.d_pop, self.d_fit, self.d_keys, self.lower, self.upper,
                                                      *self.fn_data, self.d_trace, self.d_hit, p.target)

    def launch_generation(self, g, n):
        # the host draws this generation's indices (while the GPU finishes the previous
        # generation), copies them, and waits: cudaDE's synchronous cudaMemcpy
        self.fill_indices(self.h_idx, self.h_keys, g, self.dim, n)
        self.d_idx.copy_to_device(self.h_idx, stream=self.compute)
        self.compute.synchronize()
        self.mc.launch(g=g, n=n)
        self.er.launch(g=g, n=n)

    def final_population(self, b, last_generation):
        return self.d_pop[b], self.d_fit[b]
