"""``ide``: Qin et al.'s improved CUDA DE (GECCO 2012, sec. 4).

Three fused kernels:

* **IE**: initialise and evaluate the population;
* **P**: the mutation indices (r1, r2, r3, j_rand); they depend on nothing but the
  seed, so P runs on a second stream concurrently with MCER, into one of two
  index banks (Qin's double buffering). One P launch fills a bank with the
  indices of ``P_BATCH`` generations, so the host enqueues about one kernel per
  generation (see ``docs/implementations.md``);
* **MCER**: mutate, cross over, evaluate and replace: each member builds its trial
  vector in shared memory, evaluates it with the fused device function of
  :mod:`gpude.functions.gpu` and writes the survivor into the next population
  buffer (generational replacement needs two population buffers).

Launch configuration (Qin sec. 4): each member gets ``threads_per_member`` threads
(the next power of two >= D, so the reductions halve evenly) and a block holds
``members_per_block`` members, the number that maximises SM occupancy given the
compiled kernel's registers, the shared memory per member and the device's limits
(:func:`gpude.implementations.launch.choose_launch`). The choice is printed once.
"""

from __future__ import annotations

import sys
from functools import lru_cache

import numpy as np
from numba import cuda

from ..algorithms.de import build_de_ops
from ..functions import gpu
from . import launch
from .device_loop import DeviceLoopImplementation
from .prebound import PreboundLaunch

P_THREADS = 128
P_BATCH = 8  # generations of indices per P launch (one bank)
DEFAULT_REGISTERS = 64  # assumed where the compiler cannot be asked (the simulator)


@lru_cache(maxsize=None)
def build_kernels(fid, dim, dtype, threads_per_member, members_per_block):
    """IE, P and MCER for one (function, D, dtype, launch shape)."""
    from ..functions import get_function

    T = np.dtype(dtype).type
    prog = get_function(fid, dim).program
    block_evaluate = gpu.compile_function(prog, T, threads_per_member).block_evaluate
    ops = build_de_ops(T, "cuda")
    init_value, pick, trial_value = ops.init_value, ops.pick, ops.trial_value
    K, P, D = int(members_per_block), int(threads_per_member), int(dim)

    @cuda.jit
    def ie_kernel(pop, fit, key, lower, upper, shift, rot_t, perm, trace, hit_gen, target):
        xs = cuda.shared.array((K, D), T)
        buf_a = cuda.shared.array((K, D), T)
        buf_z = cuda.shared.array((K, D), T)
        red = cuda.shared.array((K, 4, P), T)
        m, tid = cuda.threadIdx.x // P, cuda.threadIdx.x % P
        popsize = pop.shape[0]
        i = cuda.blockIdx.x * K + m
        ii = min(i, popsize - 1)  # members past the end compute a copy and write nothing
        j = tid
        while j < D:
            v = init_value(key, ii, j, popsize, D, lower, upper)
            xs[m, j] = v
            if i < popsize:
                pop[i, j] = v
            j += P
        cuda.syncthreads()
        f = block_evaluate(xs[m], buf_a[m], buf_z[m], red[m], shift, rot_t, perm, tid)
        if tid == 0 and i < popsize:
            fit[i] = f
            cuda.atomic.min(trace, 0, np.float64(f))
            if f <= target:
                cuda.atomic.min(hit_gen, 0, 0)

    @cuda.jit
    def p_kernel(idx, key, g0, dim):
        # idx: (P_BATCH, NP, 4), the indices of generations g0 .. g0 + P_BATCH - 1
        t = cuda.grid(1)
        popsize = idx.shape[1]
        if t < idx.shape[0] * popsize:
            r, i = t // popsize, t % popsize
            r1, r2, r3, jrand = pick(key, g0 + r, i, popsize, dim)
            idx[r, i, 0], idx[r, i, 1], idx[r, i, 2], idx[r, i, 3] = r1, r2, r3, jrand

    @cuda.jit
    def mcer_kernel(pop, fit, pop_next, fit_next, idx, key, g, n, F, CR, lower, upper, mode,
                    shift, rot_t, perm, trace, hit_gen, target):
        if hit_gen[0] < g:
            return  # an earlier generation reached the target: its buffers hold the result
        xs = cuda.shared.array((K, D), T)
        buf_a = cuda.shared.array((K, D), T)
        buf_z = cuda.shared.array((K, D), T)
        red = cuda.shared.array((K, 4, P), T)
        m, tid = cuda.threadIdx.x // P, cuda.threadIdx.x % P
        popsize = pop.shape[0]
        i = cuda.blockIdx.x * K + m
        ii = min(i, popsize - 1)
        r = (g - 1) % idx.shape[0]
        r1, r2, r3, jrand = idx[r, ii, 0], idx[r, ii, 1], idx[r, ii, 2], idx[r, ii, 3]
        j = tid
        while j < D:
            xs[m, j] = trial_value(key, g, ii, j, popsize, D, jrand, F, CR, pop[ii, j], pop[r1, j],
                                   pop[r2, j], pop[r3, j], lower, upper, mode)
            j += P
        cuda.syncthreads()
        # every member evaluates (the block synchronises inside); only i < n count as FEs
        f = block_evaluate(xs[m], buf_a[m], buf_z[m], red[m], shift, rot_t, perm, tid)
        if i < popsize:
            take = i < n and f <= fit[i]
            j = tid
            while j < D:
                pop_next[i, j] = xs[m, j] if take else pop[i, j]
                j += P
            if tid == 0:
                fi = f if take else fit[i]
                fit_next[i] = fi
                cuda.atomic.min(trace, g, np.float64(fi))
                if fi <= target:
                    cuda.atomic.min(hit_gen, 0, g)

    return ie_kernel, p_kernel, mcer_kernel


def _registers(kernel, args) -> int:
    """Registers per thread of ``kernel`` compiled for ``args`` (a fixed guess on the simulator)."""
    if gpu.simulator_enabled():
        return DEFAULT_REGISTERS
    sig = tuple(kernel.typeof_pyval(a) for a in args)
    return int(kernel.compile(sig).regs_per_thread)


def _device_limits():
    if gpu.simulator_enabled():
        return launch.LIMITS["sm_90"]
    return launch.limits_from_device(cuda.get_current_device())


class IDE(DeviceLoopImplementation):
    name = "ide"

    def __init__(self, function, params, members_per_block: int | None = None, quiet: bool = False,
                 poll_every: int = P_BATCH):
        super().__init__(function, params, poll_every=poll_every)
        self.forced_members = members_per_block
        self.quiet = quiet
        self.launch_config = None

    def allocate(self):
        T, NP, D = self.dtype, self.popsize, self.dim
        fn = gpu.compile_function(self.function.program, T)
        self.fn_data = fn.data
        self.d_pop = [cuda.device_array((NP, D), dtype=T) for _ in range(2)]
        self.d_fit = [cuda.device_array(NP, dtype=T) for _ in range(2)]
        self.d_idx = [cuda.device_array((P_BATCH, NP, 4), dtype=np.int64) for _ in range(2)]
        self.p_done = [cuda.event(), cuda.event()]
        self.mcer_done = [cuda.event(), cuda.event()]
        if self.launch_config is None:
            self.launch_config = self._choose_launch(fn.threads)
            if not self.quiet:
                print(self.launch_config.describe(f"iDE launch ({self.function.fid}, D={D}, "
                                                  f"NP={NP}, {np.dtype(T).name})"), file=sys.stderr)
        cfg = self.launch_config
        self.k_ie, self.k_p, self.k_mcer = build_kernels(
            self.function.fid, D, T, cfg.threads_per_member, cfg.members_per_block)
        # the per-generation launches, bound once per (population parity, index bank);
        # key and g are set per launch
        self.mcer = {(parity, bank): PreboundLaunch(
                         self.k_mcer, self._mcer_args(self.d_pop, self.d_fit, self.d_idx[bank],
                                                      np.uint64(0), parity, NP),
                         cfg.blocks, cfg.threads_per_block, self.compute, {"key": 5, "g": 6, "n": 7})
                     for parity in range(2) for bank in range(2)}
        self.p = [PreboundLaunch(self.k_p, (self.d_idx[bank], np.uint64(0), 1, D),
                                 (P_BATCH * NP + P_THREADS - 1) // P_THREADS, P_THREADS, self.side,
                                 {"key": 1, "g0": 2}) for bank in range(2)]
        self.prebound = all(x.fast for x in [*self.mcer.values(), *self.p])

    def _choose_launch(self, threads_per_member):
        T, D = self.dtype, self.dim
        per_member = (3 * D + 4 * threads_per_member) * np.dtype(T).itemsize
        limits = _device_limits()
        if self.forced_members is not None:
            k = int(self.forced_members)
            _, occ, why = launch.occupancy(limits, k * threads_per_member, DEFAULT_REGISTERS, k * per_member)
            return launch.LaunchConfig(k, threads_per_member, k * threads_per_member,
                                       -(-self.popsize // k), 0, occ, why, k * per_member, 0)
        # Registers of MCER as compiled for k members; the count can grow with k, so choose,
        # compile the choice, and choose again with its registers until the choice is stable.
        regs, k, cfg = 0, 1, None
        for _ in range(4):
            _, _, mcer = build_kernels(self.function.fid, D, T, threads_per_member, k)
            regs = max(regs, _registers(mcer, self._mcer_args(self.d_pop, self.d_fit, self.d_idx[0],
                                                              np.uint64(0), 1, self.popsize)))
            cfg = launch.choose_launch(self.popsize, D, threads_per_member, regs, per_member, 0, limits,
                                       sm_count=limits.sm_count)
            if cfg.members_per_block == k:
                break
            k = cfg.members_per_block
        return cfg

    def _mcer_args(self, pop, fit, idx, key, g, n):
        p, cur, nxt = self.params, g % 2, (g + 1) % 2
        return (pop[nxt], fit[nxt], pop[cur], fit[cur], idx, key, g, n, p.F, p.CR, self.lower,
                self.upper, p.bound_mode, *self.fn_data, self.d_trace, self.d_hit, p.target)

    def launch_init(self, key):
        cfg, s = self.launch_config, self.compute
        self.k_ie[cfg.blocks, cfg.threads_per_block, s](
            self.d_pop[0], self.d_fit[0], key, self.lower, self.upper, *self.fn_data,
            self.d_trace, self.d_hit, self.params.target)
        self._launch_p(key, 0)

    def _launch_p(self, key, batch):
        """P for generations 1 + batch * P_BATCH ... into bank batch % 2 (side stream)."""
        bank = batch % 2
        if batch >= 2:  # the bank was last read by the MCERs of batch - 2
            self.mcer_done[bank].wait(self.side)
        self.p[bank].launch(key=key, g0=1 + batch * P_BATCH)
        self.p_done[bank].record(self.side)

    def launch_generation(self, key, g, n):
        batch, slot = divmod(g - 1, P_BATCH)
        bank = batch % 2
        if slot == 0:
            self.p_done[bank].wait(self.compute)
            if self.popsize * (g + P_BATCH) < self.params.max_fes:  # generation g + P_BATCH will run
                self._launch_p(key, batch + 1)  # the next bank, concurrent with these MCERs
        self.mcer[(g % 2, bank)].launch(key=key, g=g, n=n)
        if slot == P_BATCH - 1:
            self.mcer_done[bank].record(self.compute)

    def final_population(self, last_generation):
        b = last_generation % 2
        return self.d_pop[b], self.d_fit[b]
