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
from functools import cache

import numpy as np
from numba import cuda

from ..algorithms.de import build_de_ops, require_variant_support
from ..core.prebound import PreboundLaunch
from ..functions import gpu
from . import launch
from .device_loop import DeviceLoopImplementation, mark_hit

P_THREADS = 128
P_BATCH = 8  # generations of indices per P launch (one bank)
DEFAULT_REGISTERS = 64  # assumed where the compiler cannot be asked (the simulator)


@cache
def build_kernels(fid, dim, dtype, threads_per_member, members_per_block):
    """IE, P and MCER for one (function, D, dtype, launch shape)."""
    from ..functions import get_function

    T = np.dtype(dtype).type
    prog = get_function(fid, dim).program
    fn = gpu.compile_function(prog, T, threads_per_member)
    block_evaluate = fn.block_evaluate
    BUF = int(fn.buffer_size)  # a function's first buffer may be wider than D
    ops = build_de_ops(T, "cuda")
    init_value, pick, trial_value = ops.init_value, ops.pick, ops.trial_value
    K, P, D = int(members_per_block), int(threads_per_member), int(dim)

    # Arrays carry the trials of a batch first (pop (B, NP, D), keys (B,)); a block's trial is
    # blockIdx.y.
    @cuda.jit(cache=True)
    def ie_kernel(pop, fit, keys, lower, upper, shift, rot_t, perm, trace, hit_gen, target):
        xs = cuda.shared.array((K, D), T)
        buf_a = cuda.shared.array((K, BUF), T)
        buf_z = cuda.shared.array((K, D), T)
        red = cuda.shared.array((K, 4, P), T)
        m, tid = cuda.threadIdx.x // P, cuda.threadIdx.x % P
        popsize, b = pop.shape[1], cuda.blockIdx.y
        i = cuda.blockIdx.x * K + m
        ii = min(i, popsize - 1)  # members past the end compute a copy and write nothing
        j = tid
        while j < D:
            v = init_value(keys[b], ii, j, popsize, D, lower, upper)
            xs[m, j] = v
            if i < popsize:
                pop[b, i, j] = v
            j += P
        cuda.syncthreads()
        f = block_evaluate(xs[m], buf_a[m], buf_z[m], red[m], shift, rot_t, perm, tid)
        if tid == 0 and i < popsize:
            fit[b, i] = f
            cuda.atomic.min(trace, (b, 0), np.float64(f))
            if f <= target:
                mark_hit(hit_gen, b, 0)

    @cuda.jit(cache=True)
    def p_kernel(idx, keys, g0, dim):
        # idx: (B, P_BATCH, NP, 4), the indices of generations g0 .. g0 + P_BATCH - 1
        t = cuda.grid(1)
        trials, gens, popsize = idx.shape[0], idx.shape[1], idx.shape[2]
        if t < trials * gens * popsize:
            b, r, i = t // (gens * popsize), (t // popsize) % gens, t % popsize
            r1, r2, r3, jrand = pick(keys[b], g0 + r, i, popsize, dim)
            idx[b, r, i, 0], idx[b, r, i, 1], idx[b, r, i, 2], idx[b, r, i, 3] = r1, r2, r3, jrand

    @cuda.jit(cache=True)
    def mcer_kernel(pop, fit, pop_next, fit_next, idx, keys, g, n, F, CR, lower, upper, mode,
                    shift, rot_t, perm, trace, hit_gen, target):
        b = cuda.blockIdx.y
        if hit_gen[b] < g:
            return  # an earlier generation of this trial reached the target: its buffers hold the result
        xs = cuda.shared.array((K, D), T)
        buf_a = cuda.shared.array((K, BUF), T)
        buf_z = cuda.shared.array((K, D), T)
        red = cuda.shared.array((K, 4, P), T)
        m, tid = cuda.threadIdx.x // P, cuda.threadIdx.x % P
        popsize = pop.shape[1]
        i = cuda.blockIdx.x * K + m
        ii = min(i, popsize - 1)
        r = (g - 1) % idx.shape[1]
        r1, r2, r3, jrand = idx[b, r, ii, 0], idx[b, r, ii, 1], idx[b, r, ii, 2], idx[b, r, ii, 3]
        j = tid
        while j < D:
            xs[m, j] = trial_value(keys[b], g, ii, j, popsize, D, jrand, F, CR, pop[b, ii, j],
                                   pop[b, r1, j], pop[b, r2, j], pop[b, r3, j], lower, upper, mode)
            j += P
        cuda.syncthreads()
        # every member evaluates (the block synchronises inside); only i < n count as FEs
        f = block_evaluate(xs[m], buf_a[m], buf_z[m], red[m], shift, rot_t, perm, tid)
        if i < popsize:
            take = i < n and f <= fit[b, i]
            j = tid
            while j < D:
                pop_next[b, i, j] = xs[m, j] if take else pop[b, i, j]
                j += P
            if tid == 0:
                fi = f if take else fit[b, i]
                fit_next[b, i] = fi
                cuda.atomic.min(trace, (b, g), np.float64(fi))
                if fi <= target:
                    mark_hit(hit_gen, b, g)

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
                 poll_every: int = P_BATCH, trials_per_launch: int = 1):
        super().__init__(function, params, poll_every=poll_every, trials_per_launch=trials_per_launch)
        require_variant_support(self, params)  # DE/rand/1/bin only
        self.forced_members = members_per_block
        self.quiet = quiet
        self.launch_config = None

    def allocate(self):
        T, B, NP, D = self.dtype, self.batch, self.popsize, self.dim
        fn = gpu.compile_function(self.function.program, T)
        self.fn_data = fn.data
        self.d_pop = [cuda.device_array((B, NP, D), dtype=T) for _ in range(2)]
        self.d_fit = [cuda.device_array((B, NP), dtype=T) for _ in range(2)]
        self.d_idx = [cuda.device_array((B, P_BATCH, NP, 4), dtype=np.int64) for _ in range(2)]
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
        # g and n are set per launch
        self.mcer = {(parity, bank): PreboundLaunch(
                         self.k_mcer, self._mcer_args(self.d_pop, self.d_fit, self.d_idx[bank], parity, NP),
                         (cfg.blocks, B), cfg.threads_per_block, self.compute, {"g": 6, "n": 7})
                     for parity in range(2) for bank in range(2)}
        self.p = [PreboundLaunch(self.k_p, (self.d_idx[bank], self.d_keys, 1, D),
                                 (B * P_BATCH * NP + P_THREADS - 1) // P_THREADS, P_THREADS, self.side,
                                 {"g0": 2}) for bank in range(2)]
        self.prebound = all(x.fast for x in [*self.mcer.values(), *self.p])

    def _choose_launch(self, threads_per_member):
        T, D = self.dtype, self.dim
        buf = gpu.compile_function(self.function.program, T, threads_per_member).buffer_size
        per_member = (2 * D + buf + 4 * threads_per_member) * np.dtype(T).itemsize
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
                                                              1, self.popsize)))
            cfg = launch.choose_launch(self.popsize, D, threads_per_member, regs, per_member, 0, limits,
                                       sm_count=limits.sm_count)
            if cfg.members_per_block == k:
                break
            k = cfg.members_per_block
        return cfg

    def _mcer_args(self, pop, fit, idx, g, n):
        p, cur, nxt = self.params, g % 2, (g + 1) % 2
        return (pop[nxt], fit[nxt], pop[cur], fit[cur], idx, self.d_keys, g, n, p.F, p.CR, self.lower,
                self.upper, p.bound_mode, *self.fn_data, self.d_trace, self.d_hit, p.target)

    def launch_init(self):
        cfg, s = self.launch_config, self.compute
        self.k_ie[(cfg.blocks, self.batch), cfg.threads_per_block, s](
            self.d_pop[0], self.d_fit[0], self.d_keys, self.lower, self.upper, *self.fn_data,
            self.d_trace, self.d_hit, self.params.target)
        self._launch_p(0)

    def _launch_p(self, fill):
        """P for generations 1 + fill * P_BATCH ... into bank fill % 2 (side stream)."""
        bank = fill % 2
        if fill >= 2:  # the bank was last read by the MCERs of fill - 2
            self.mcer_done[bank].wait(self.side)
        self.p[bank].launch(g0=1 + fill * P_BATCH)
        self.p_done[bank].record(self.side)

    def launch_generation(self, g, n):
        fill, slot = divmod(g - 1, P_BATCH)
        bank = fill % 2
        if slot == 0:
            self.p_done[bank].wait(self.compute)
            if self.popsize * (g + P_BATCH) < self.params.max_fes:  # generation g + P_BATCH will run
                self._launch_p(fill + 1)  # the next bank, concurrent with these MCERs
        self.mcer[(g % 2, bank)].launch(g=g, n=n)
        if slot == P_BATCH - 1:
            self.mcer_done[bank].record(self.compute)

    def final_population(self, b, last_generation):
        buffer = last_generation % 2
        return self.d_pop[buffer][b], self.d_fit[buffer][b]
