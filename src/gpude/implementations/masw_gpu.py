"""``masw/gpu``: Lastra, Molina & Benítez's GPU MA-SW-Chains (2015), for any D that fits the device.

As their Fig. 3: every loop over D runs on the GPU (initialisation, the NAM distances, BLX
crossover of ``offspring`` (20) children at once into a padding area after the population, their
evaluation, the Solis-Wets candidates and bias updates, the evaluations), with the function's
evaluator streaming over D (:mod:`gpude.functions.streaming_gpu`). The host keeps the scalars and
makes the scalar decisions with the same code as ``masw/sequential``: mothers, NAM candidates and
mutations (counter draws), fathers (from the distances), (mu + 20) replacement (children's rows
copied into the leaving slots) and the choice of the individual to improve.

Solis-Wets steps need no host round trip. On the large-scale functions (``ls_mode="fused"``, the
default there up to D = 1e6 or 5e5, where it was measured faster) a whole application is one
cooperative launch
(:mod:`gpude.implementations.masw_gpu_ls`): each candidate is generated inside its evaluation and
never stored, every block makes the step's decision from the blocks' sums after a grid barrier,
and a failed step writes nothing. Elsewhere (any problem's evaluator, ``ls_mode="steps"``) a
step's decisions (accept the '+' candidate, try the '-' one, the counts and rho) are made by
one-thread kernels on the device, and kernels whose work a decision cancels exit at once (a gate
flag); the host queues ``ceil(remaining / 2)`` steps, reads how many evaluations they used, and
repeats until the application's 500 are spent (about nine reads per application). Either way the
random numbers, the decisions and the results are those of ``masw/sequential`` for the same seed
(tested); the evaluations' last bits may differ (sums in another order).

The GA kernels' grids put the rows (pairs, children) in blockIdx.x, the fastest-varying index, so
the blocks that run together read the same stretch of the parents and of o: a row read by several
pairs or children comes from memory once and from the L2 cache after that.

Device memory per trial: ``(popsize + offspring + popsize + 4) D`` values (population and padding,
a Solis-Wets bias per individual, the step's vectors) plus the function's data; :meth:`setup` says
how much before the run and fails with the largest D that fits when it does not.
"""

from __future__ import annotations

import math
import sys
import threading
import time
import warnings
from functools import lru_cache

import numpy as np
from numba import cuda, float64

from ..algorithms.masw import build_masw_ops, first_unit, ls_choice, width
from ..algorithms.solis_wets import build_sw_ops
from ..errors import InvalidInputError
from .base import HostLoopImplementation
from .masw_gpu_ls import ACCEPTED as LS_ACCEPTED, STEPS as LS_STEPS
from .masw_sequential import HEADER, build_cpu_masw

THREADS = 256
BUCKET = 4
MAX_BLOCKS = 4096
# device state vector
F_LS, RHO, SUCC, FAIL, USED, BUDGET, OUTCOME = range(7)

_KERNELS: dict = {}
_LOCK = threading.Lock()


def _blocks(dim, threads):
    return max(1, min(MAX_BLOCKS, math.ceil(dim / (threads * BUCKET))))


def build_gpu_masw(dtype, popsize: int, threads: int):
    """The kernels for one (dtype, popsize, threads per block)."""
    key = (np.dtype(dtype).name, popsize, threads)
    with _LOCK:
        if key in _KERNELS:
            return _KERNELS[key]
    ops, sw = build_masw_ops(dtype, "cuda"), build_sw_ops(dtype, "cuda")
    init_column, blx, clip, ctr = ops.init_column, ops.blx, ops.clip, ops.ctr
    dif, plus, minus = sw.dif, sw.plus, sw.minus
    bias_plus, bias_minus, bias_fail, counts = sw.bias_plus, sw.bias_minus, sw.bias_fail, sw.counts
    T, P, NT = np.dtype(dtype).type, int(popsize), int(threads)
    int64 = np.int64

    @cuda.jit
    def init_population(pop, key, strata, W, lower, upper):
        perm = cuda.local.array(P, int64)
        col = cuda.local.array(P, T)
        j = cuda.grid(1)
        while j < pop.shape[1]:
            init_column(key, j, P, strata, W, lower, upper, perm, col)
            for i in range(P):
                pop[i, j] = col[i]
            j += cuda.gridsize(1)

    @cuda.jit(device=True)
    def block_sum(red, s, tid):
        """Every thread's s summed into red[0] (a shared-memory tree over the NT threads)."""
        red[tid] = s
        cuda.syncthreads()
        h = NT // 2
        while h > 0:
            if tid < h:
                red[tid] += red[tid + h]
            cuda.syncthreads()
            h //= 2

    @cuda.jit
    def dist_partial(pop, pairs, partials):
        red = cuda.shared.array(NT, float64)
        tid, q, b = cuda.threadIdx.x, cuda.blockIdx.x, cuda.blockIdx.y
        x, y = pop[pairs[q, 0]], pop[pairs[q, 1]]
        s = 0.0
        j = b * NT + tid
        while j < pop.shape[1]:
            d = float64(x[j]) - float64(y[j])
            s += d * d
            j += cuda.gridDim.y * NT
        block_sum(red, s, tid)
        if tid == 0:
            partials[q, b] = red[0]

    @cuda.jit
    def dist_final(partials, nb, out):
        red = cuda.shared.array(NT, float64)
        tid, q = cuda.threadIdx.x, cuda.blockIdx.x
        s = 0.0
        j = tid
        while j < nb:
            s += partials[q, j]
            j += NT
        block_sum(red, s, tid)
        if tid == 0:
            out[q] = red[0]

    @cuda.jit
    def crossover(pop, row0, plan, delta, key, unit0, W, alpha, lower, upper):
        """Child c (row row0 + c) of parents plan[c, 0], plan[c, 1]; plan[c, 2] the mutated gene."""
        c = cuda.blockIdx.x
        mother, father, gene = plan[c, 0], plan[c, 1], plan[c, 2]
        child = pop[row0 + c]
        j = cuda.blockIdx.y * NT + cuda.threadIdx.x
        while j < pop.shape[1]:
            v = blx(key, unit0 + c, W, j, pop[mother, j], pop[father, j], alpha, lower, upper)
            if j == gene:
                v = clip(v + delta[c], lower, upper)
            child[j] = v
            j += cuda.gridDim.y * NT

    @cuda.jit
    def copy_rows(pop, moves):
        """pop[moves[r, 0]] <- pop[moves[r, 1]]."""
        r = cuda.blockIdx.x
        dst, src = pop[moves[r, 0]], pop[moves[r, 1]]
        j = cuda.blockIdx.y * NT + cuda.threadIdx.x
        while j < pop.shape[1]:
            dst[j] = src[j]
            j += cuda.gridDim.y * NT

    @cuda.jit
    def choose_fathers(cands, dists, plan, k, nam):
        """Child c's plan (mother, father, gene) from cands[c] = (mother, nam candidates, gene): the
        candidate farthest from the mother (the first on ties), as masw/sequential chooses."""
        c = cuda.grid(1)
        if c < k:
            father, far = cands[c, 1], -1.0
            for q in range(nam):
                d = dists[c * nam + q]
                if d > far:
                    far, father = d, cands[c, 1 + q]
            plan[c, 0], plan[c, 1], plan[c, 2] = cands[c, 0], father, cands[c, nam + 1]

    @cuda.jit(device=True)
    def before(fit, a, b):
        """Whether entry a ranks before entry b: (error, NaN last; population first; index)."""
        fa, fb = fit[a], fit[b]
        fa = math.inf if fa != fa else fa
        fb = math.inf if fb != fb else fb
        return fa < fb or (fa == fb and a < b)

    @cuda.jit
    def replace_children(fit, P, k, plan, moves, nmoves, replaced, tally):
        """(mu + k) replacement (algorithms.masw.replacement) by one thread: moves[r] = (slot, row of
        the entering child), the slots' errors updated and marked in ``replaced``; tally[0] += the
        moves, tally[1] += the distinct parents of the step (for the traffic count)."""
        if cuda.grid(1) != 0:
            return
        n = P + k
        nl = 0
        for i in range(P):  # leaving: ranked P or later, ascending slots
            rank = 0
            for e in range(n):
                if before(fit, e, i):
                    rank += 1
            if rank >= P:
                moves[nl, 0] = i
                nl += 1
        ne = 0
        for c in range(k):  # entering: ranked before P, in child order
            rank = 0
            for e in range(n):
                if before(fit, e, P + c):
                    rank += 1
            if rank < P:
                moves[ne, 1] = P + c
                ne += 1
        for r in range(nl):
            fit[moves[r, 0]] = fit[moves[r, 1]]
            replaced[moves[r, 0]] = 1
        nmoves[0] = nl
        tally[0] += nl
        distinct = 0
        for q in range(2 * k):
            row = plan[q // 2, q % 2]
            seen = False
            for e in range(q):
                if plan[e // 2, e % 2] == row:
                    seen = True
            if not seen:
                distinct += 1
        tally[1] += distinct

    @cuda.jit
    def copy_moves(pop, moves, nmoves):
        """pop[moves[r, 0]] <- pop[moves[r, 1]] for r < nmoves[0] (a block row per possible move)."""
        r = cuda.blockIdx.x
        if r >= nmoves[0]:
            return
        dst, src = pop[moves[r, 0]], pop[moves[r, 1]]
        j = cuda.blockIdx.y * NT + cuda.threadIdx.x
        while j < pop.shape[1]:
            dst[j] = src[j]
            j += cuda.gridDim.y * NT

    @cuda.jit
    def set_value(a, i, v):
        if cuda.grid(1) == 0:
            a[i] = v

    @cuda.jit
    def zero_row(a, row):
        j = cuda.grid(1)
        while j < a.shape[1]:
            a[row, j] = 0
            j += cuda.gridsize(1)

    @cuda.jit
    def sw_plus(ls, bias, row, d, st, gate, key, unit, W, lower, upper):
        """Step's '+' candidate into ls[1]; its perturbation into d."""
        if gate[0] == 0:
            return
        rho = st[RHO]
        b = bias[row]
        j = cuda.grid(1)
        while j < ls.shape[1]:
            dj = dif(key, ctr(unit, HEADER + 2 * j, W), rho)
            d[j] = dj
            ls[1, j] = plus(ls[0, j], b[j], dj, lower, upper)
            j += cuda.gridsize(1)

    @cuda.jit
    def sw_after_plus(st, out, gate, gate_minus):
        if gate[0] == 0:
            return
        st[USED] += 1.0
        if out[1] < st[F_LS]:
            st[F_LS] = out[1]
            st[OUTCOME] = 1.0
            gate_minus[0] = 0
        else:
            st[OUTCOME] = 0.0
            gate_minus[0] = 1 if st[USED] < st[BUDGET] else 0

    @cuda.jit
    def sw_minus(ls, bias, row, d, gate_minus, lower, upper):
        if gate_minus[0] == 0:
            return
        b = bias[row]
        j = cuda.grid(1)
        while j < ls.shape[1]:
            ls[2, j] = minus(ls[0, j], b[j], d[j], lower, upper)
            j += cuda.gridsize(1)

    @cuda.jit
    def sw_after_minus(st, out, gate_minus):
        if gate_minus[0] == 0:
            return
        st[USED] += 1.0
        if out[2] < st[F_LS]:
            st[F_LS] = out[2]
            st[OUTCOME] = -1.0

    @cuda.jit
    def sw_finish(ls, bias, row, d, st, gate):
        if gate[0] == 0:
            return
        outcome = st[OUTCOME]
        b = bias[row]
        j = cuda.grid(1)
        while j < ls.shape[1]:
            if outcome > 0:
                b[j] = bias_plus(b[j], d[j])
                ls[0, j] = ls[1, j]
            elif outcome < 0:
                b[j] = bias_minus(b[j], d[j])
                ls[0, j] = ls[2, j]
            else:
                b[j] = bias_fail(b[j])
            j += cuda.gridsize(1)

    @cuda.jit
    def sw_end(st, gate, gate_minus):
        """The step's counts and rho; whether a next step has budget."""
        gate_minus[0] = 0  # a step queued after the budget must not try a '-' candidate
        if gate[0] == 0:
            return
        succ, fail, rho = counts(st[OUTCOME] != 0.0, int64(st[SUCC]), int64(st[FAIL]), st[RHO])
        st[SUCC], st[FAIL], st[RHO] = float64(succ), float64(fail), rho
        gate[0] = 1 if st[USED] < st[BUDGET] else 0

    kernels = dict(init_population=init_population, dist_partial=dist_partial, dist_final=dist_final,
                   crossover=crossover, copy_rows=copy_rows, zero_row=zero_row, sw_plus=sw_plus,
                   choose_fathers=choose_fathers, replace_children=replace_children, copy_moves=copy_moves,
                   set_value=set_value,
                   sw_after_plus=sw_after_plus, sw_minus=sw_minus, sw_after_minus=sw_after_minus,
                   sw_finish=sw_finish, sw_end=sw_end)
    with _LOCK:
        _KERNELS[key] = kernels
    return kernels


@lru_cache(maxsize=None)
def build_step_planner(dtype):
    """``plan(key, unit, W, P, nam, k, dim, prob, lower, upper, cands, pairs, delta) -> distinct``:
    one GA step's counter draws (mothers, NAM candidates, mutations) into the pinned buffers in one
    compiled call (a Python loop over the children cost ~0.2 ms per step); returns the number of
    distinct rows among the distance pairs (for the traffic count)."""
    import numba

    ops = build_masw_ops(dtype, "cpu")
    pick, mutation = ops.pick, ops.mutation

    @numba.njit(cache=True, nogil=True)
    def plan(key, unit, W, P, nam, k, dim, prob, lower, upper, cands, pairs, delta):
        picks = np.empty(nam + 1, np.int64)
        used = np.zeros(P, np.bool_)
        distinct = 0
        for c in range(k):
            pick(key, unit + c, W, P, nam, picks)
            gene, dl = mutation(key, unit + c, W, dim, prob, lower, upper)
            for q in range(nam + 1):
                cands[c, q] = picks[q]
                if not used[picks[q]]:
                    used[picks[q]] = True
                    distinct += 1
            cands[c, nam + 1] = gene
            delta[c] = dl
            for q in range(nam):
                pairs[c * nam + q, 0] = picks[0]
                pairs[c * nam + q, 1] = picks[1 + q]
        return distinct

    return plan


def bytes_per_trial(popsize: int, offspring: int, dim: int, itemsize: int) -> int:
    """Device bytes of one trial's arrays (without the function's data)."""
    vectors = popsize + offspring + popsize + 4  # population + padding, biases, ls (3), d
    return vectors * dim * itemsize


class MASWGPU(HostLoopImplementation):
    """MA-SW-Chains on the GPU (Lastra et al. 2015).

    Options
    -------
    threads : int
        Threads per block of the kernels over D (default: 256, or the next power of two >= D when
        D is smaller).
    ls_mode : {"fused", "steps"}
        How a Solis-Wets application runs: one cooperative launch that generates each candidate
        inside its evaluation (``"fused"``: the large-scale functions only), or kernels queued step
        by step with the decisions on the device (``"steps"``: any problem). Default: ``"fused"`` on
        the large-scale functions up to the D where it was measured faster
        (:data:`gpude.implementations.masw_gpu_ls.FUSED_MAX_DIM`), ``"steps"`` otherwise.
    quiet : bool
        Do not print the memory line before the run.
    """

    needs_program = False  # the problem's evaluators (large-scale functions have no program)
    algorithm = "masw"
    name = "gpu"
    device = "gpu"

    def __init__(self, function, params, threads: int | None = None, ls_mode: str | None = None,
                 quiet: bool = False, **options):
        super().__init__(function, params, **options)
        fusable = getattr(function, "streaming", False) and hasattr(function, "code")
        if ls_mode is None:
            from .masw_gpu_ls import default_ls_mode

            ls_mode = default_ls_mode(function.code, function.dim) if fusable else "steps"
        if ls_mode not in ("fused", "steps"):
            raise InvalidInputError(f"ls_mode must be 'fused' or 'steps', got {ls_mode!r}")
        if ls_mode == "fused" and not fusable:
            raise InvalidInputError(
                f"ls_mode='fused' needs a large-scale function (its terms are compiled into the local "
                f"search's kernel); {function.fid} is evaluated through its own evaluator: use ls_mode='steps'")
        self.ls_mode = ls_mode
        if threads is None:
            threads = min(THREADS, 1 << max(0, (function.dim - 1).bit_length()))
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1 or threads & (threads - 1) \
                or threads > 1024:
            raise InvalidInputError(f"threads must be a power of two in [1, 1024], got {threads!r}")
        self.threads, self.quiet = threads, quiet
        self.cpu = build_cpu_masw(self.dtype)
        self.host_ops = build_masw_ops(self.dtype, "cpu")
        self.plan_step = build_step_planner(self.dtype)
        self.kernels = build_gpu_masw(self.dtype, params.popsize, threads)
        self.W = width(self.dim)
        self.blocks = _blocks(self.dim, threads)
        self._allocated = None

    def evaluations_per_generation(self) -> int:
        return self.params.cycle_evals

    def warmup_evaluations(self) -> int:
        """Into the first local search (its '+' and '-' candidates), so every kernel is compiled."""
        p = self.params
        return p.popsize + p.ssga_evals + min(p.ls_intensity, 4)

    # -- memory ------------------------------------------------------------------------------
    def check_memory(self):
        """Print the trial's device memory; fail clearly if it does not fit."""
        p, D = self.params, self.dim
        item = np.dtype(self.dtype).itemsize
        need = bytes_per_trial(p.popsize, p.offspring, D, item) + 3 * D * 8
        try:
            free, total = cuda.current_context().get_memory_info()
        except Exception:  # the simulator has no memory info
            free = total = None
        if not self.quiet:
            have = f" of {free / 1e9:.2f} GB free ({total / 1e9:.1f} GB total)" if free else ""
            print(f"masw/gpu: {self.function.fid} D={D:,} popsize={p.popsize} offspring={p.offspring} "
                  f"{np.dtype(self.dtype).name}: {need / 1e9:.3f} GB of device memory per trial{have}",
                  file=sys.stderr)
        if free is not None and need > 0.95 * free:
            per_dim = need / D
            fit = int(0.95 * free / per_dim)
            raise InvalidInputError(
                f"masw/gpu needs {need / 1e9:.2f} GB of device memory for D={D:,} (popsize "
                f"{p.popsize}, offspring {p.offspring}, {np.dtype(self.dtype).name}) but the GPU has "
                f"{free / 1e9:.2f} GB free; the largest D that fits is about {fit:,} (or use float32, "
                f"or a smaller popsize)")
        return need

    # -- set-up --------------------------------------------------------------------------------
    def setup(self):
        p, T, D, P = self.params, self.dtype, self.dim, self.params.popsize
        shape = (P, p.offspring, D)
        if self._allocated != shape:
            self.check_memory()
            self.stream = cuda.stream()
            self.pop = cuda.device_array((P + p.offspring, D), T)
            self.fit_all = cuda.device_array(P + p.offspring, np.float64)
            self.bias = cuda.device_array((P, D), T)
            self.ls = cuda.device_array((3, D), T)
            self.d = cuda.device_array(D, T)
            self.st = cuda.device_array(8, np.float64)
            self.out = cuda.device_array(3, np.float64)
            self.gate = cuda.device_array(1, np.int32)
            self.gate_minus = cuda.device_array(1, np.int32)
            max_pairs = max(p.offspring * p.nam, P - 1)
            self.partials = cuda.device_array((max_pairs, self.blocks), np.float64)
            self.dists = cuda.device_array(max_pairs, np.float64)
            options = {"threads": self.threads} if getattr(self.function, "streaming", False) else {}
            self.ev = self.function.gpu_evaluator(T, max_rows=max(p.offspring, min(P, 64)), **options)
            # small per-step inputs: pinned host arrays copied to fixed device arrays
            self.h_pairs = cuda.pinned_array((max_pairs, 2), np.int64)
            self.h_fit = cuda.pinned_array(P + p.offspring, np.float64)
            self.h_dists = cuda.pinned_array(max_pairs, np.float64)
            self.d_pairs = cuda.device_array((max_pairs, 2), np.int64)
            self.d_plan = cuda.device_array((p.offspring, 3), np.int64)
            self.d_delta = cuda.device_array(p.offspring, np.float64)
            self.d_moves = cuda.device_array((p.offspring, 2), np.int64)
            # the GA steps of a cycle are queued without a host read: each has its own pinned inputs
            steps = -(-p.ssga_evals // p.offspring)
            self.h_cands = cuda.pinned_array((steps, p.offspring, p.nam + 2), np.int64)
            self.h_step_pairs = cuda.pinned_array((steps, p.offspring * p.nam, 2), np.int64)
            self.h_step_delta = cuda.pinned_array((steps, p.offspring), np.float64)
            self.d_cands = cuda.device_array((p.offspring, p.nam + 2), np.int64)
            self.d_nmoves = cuda.device_array(1, np.int64)
            self.d_replaced = cuda.device_array(P, np.int32)
            self.h_replaced = cuda.pinned_array(P, np.int32)
            self.h_no_replaced = cuda.pinned_array(P, np.int32)
            self.h_no_replaced[:] = 0
            self.d_tally = cuda.device_array(2, np.int64)
            self.h_tally = cuda.pinned_array(2, np.int64)
            if self.ls_mode == "fused":
                self._bind_fused_ls()
            self._prebind()
            self._allocated = shape
        self.fit = np.empty(P)
        self.rho = np.zeros(P)
        self.succ, self.fail = np.zeros(P, np.int64), np.zeros(P, np.int64)
        self.has_chain, self.non_improved = np.zeros(P, np.bool_), np.zeros(P, np.bool_)
        self.d_replaced.copy_to_device(self.h_no_replaced, stream=self.stream)
        self.d_tally.copy_to_device(np.zeros(2, np.int64), stream=self.stream)
        self.h_st = cuda.pinned_array(8, np.float64)
        self.one, self.zero = np.ones(1, np.int32), np.zeros(1, np.int32)
        self.ls_applications = self.ls_improved = 0
        self.phase_s = {"ga": 0.0, "ls": 0.0}
        # what the kernels did, for the traffic model of benchmarks/masw_perf.py (rows of D values)
        self.counts = dict(ga_steps=0, children=0, dist_pairs=0, dist_rows=0, parent_rows=0, moves=0,
                           ls_evaluations=0, ls_steps=0, ls_accepted=0, new_chains=0)

    def _bind_fused_ls(self):
        """The cooperative Solis-Wets kernel, its grid and its pre-marshalled launch."""
        from .masw_gpu_ls import build_sw_application, cooperative_blocks
        from ..prebound import PreboundLaunch

        f, T, D = self.function, self.dtype, self.dim
        _, _, has_perm, _, m = f.evaluator_args(T)
        kernel = build_sw_application(f.code, D, m, has_perm, self.threads, T)
        o, perm, M = self.ev.data
        self.x_ls = cuda.device_array(D, T)
        args = [self.x_ls, self.bias, np.int64(0), self.d, self.st, np.uint64(0), np.int64(0), np.int64(self.W), o,
                perm, M, cuda.device_array((2, 2, 2), np.float64), float(self.lower), float(self.upper)]
        grid = cooperative_blocks(kernel, args, self.threads, D)
        self.ls_partials = cuda.device_array((2, grid + 1, 2), np.float64)
        args[11] = self.ls_partials
        self.ls_grid = grid
        self.sw_application = PreboundLaunch(kernel, tuple(args), grid, self.threads, self.stream,
                                             variable={"row": 2, "key": 5, "unit": 6})

    def _prebind(self):
        """Pre-marshalled launches of one Solis-Wets step (the hot loop)."""
        from ..prebound import PreboundLaunch

        k, s, nb, nt = self.kernels, self.stream, self.blocks, self.threads
        lo, hi = self.lower, self.upper
        self._key0 = np.uint64(0)
        row = np.int64(0)
        self.step_launches = {
            "plus": PreboundLaunch(k["sw_plus"], (self.ls, self.bias, row, self.d, self.st, self.gate,
                                                  self._key0, np.int64(0), np.int64(self.W), lo, hi),
                                   nb, nt, s, variable={"row": 2, "key": 6, "unit": 7}),
            "after_plus": PreboundLaunch(k["sw_after_plus"], (self.st, self.out, self.gate, self.gate_minus),
                                         1, 1, s),
            "minus": PreboundLaunch(k["sw_minus"], (self.ls, self.bias, row, self.d, self.gate_minus, lo, hi),
                                    nb, nt, s, variable={"row": 2}),
            "after_minus": PreboundLaunch(k["sw_after_minus"], (self.st, self.out, self.gate_minus), 1, 1, s),
            "finish": PreboundLaunch(k["sw_finish"], (self.ls, self.bias, row, self.d, self.st, self.gate),
                                     nb, nt, s, variable={"row": 2}),
            "end": PreboundLaunch(k["sw_end"], (self.st, self.gate, self.gate_minus), 1, 1, s),
        }
        self.eval_plus = self.ev.prebound(self.ls, self.out, 1, 1, s, self.gate)
        self.eval_minus = self.ev.prebound(self.ls, self.out, 2, 1, s, self.gate_minus)
        # a full GA step: off * nam distances, off children, their evaluation
        p, P = self.params, self.params.popsize
        npairs = p.offspring * p.nam
        self.full_step = {
            "dist_partial": PreboundLaunch(k["dist_partial"], (self.pop, self.d_pairs, self.partials),
                                           (npairs, nb), nt, s),
            "dist_final": PreboundLaunch(k["dist_final"], (self.partials, np.int64(nb), self.dists),
                                         npairs, nt, s),
            "crossover": PreboundLaunch(k["crossover"], (self.pop, np.int64(P), self.d_plan, self.d_delta,
                                                         self._key0, np.int64(0), np.int64(self.W),
                                                         float(p.alpha), float(lo), float(hi)),
                                        (p.offspring, nb), nt, s, variable={"key": 4, "unit": 5}),
        }
        off = p.offspring
        self.full_step.update(
            choose_fathers=PreboundLaunch(k["choose_fathers"], (self.d_cands, self.dists, self.d_plan, np.int64(off),
                                                                np.int64(p.nam)), 1, 32, s),
            replace_children=PreboundLaunch(k["replace_children"], (self.fit_all, np.int64(P), np.int64(off),
                                                                    self.d_plan, self.d_moves, self.d_nmoves,
                                                                    self.d_replaced, self.d_tally), 1, 1, s),
            copy_moves=PreboundLaunch(k["copy_moves"], (self.pop, self.d_moves, self.d_nmoves), (off, nb), nt, s))
        self.eval_children = self.ev.prebound(self.pop, self.fit_all, P, p.offspring, s)

    def _launch(self, name, grid, block, *args):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.kernels[name][grid, block, self.stream](*args)

    def _evaluate_rows(self, row0, n):
        for r in range(row0, row0 + n, self.ev.max_rows):
            self.ev.launch(self.pop, self.fit_all, r, min(self.ev.max_rows, row0 + n - r), self.stream)

    def _distances(self, pairs):
        """Squared Euclidean distances of the row pairs, on the host."""
        n = len(pairs)
        self.h_pairs[:n] = pairs
        self.d_pairs.copy_to_device(self.h_pairs, stream=self.stream)
        if n == self.params.offspring * self.params.nam:
            self.full_step["dist_partial"].launch()
            self.full_step["dist_final"].launch()
        else:
            self._launch("dist_partial", (n, self.blocks), self.threads, self.pop, self.d_pairs, self.partials)
            self._launch("dist_final", n, self.threads, self.partials, self.blocks, self.dists)
        self.dists.copy_to_host(self.h_dists, stream=self.stream)
        self.stream.synchronize()
        return self.h_dists[:n]

    def initialize(self, key):
        p = self.params
        self._launch("init_population", self.blocks, self.threads, self.pop, key, p.strata, self.W,
                     self.lower, self.upper)
        self._evaluate_rows(0, p.popsize)
        fit = self.fit_all[:p.popsize].copy_to_host(stream=self.stream)
        self.stream.synchronize()
        self.fit[:] = fit
        self.unit = first_unit(p.popsize)
        return float(self.fit.min())

    # -- the GA phase ------------------------------------------------------------------------
    def ga_step(self, key, k, step):
        """One GA step of k children, queued without a host round trip: the host draws the mothers,
        NAM candidates and mutations (counter draws: no device data needed) into its pinned buffers
        for this step of the cycle; the device computes the distances, picks the fathers, makes and
        evaluates the children and replaces (``replace_children``). The host reads the population's
        errors once, after the GA phase (:meth:`_read_ga_phase`)."""
        p, P, nam = self.params, self.params.popsize, self.params.nam
        cands, pairs, delta = self.h_cands[step], self.h_step_pairs[step], self.h_step_delta[step]
        distinct = self.plan_step(key, np.int64(self.unit), np.int64(self.W), P, nam, k, self.dim, p.mutation_prob,
                                  float(self.lower), float(self.upper), cands, pairs, delta)
        npairs = k * nam
        counts = self.counts
        counts["ga_steps"] += 1
        counts["children"] += k
        counts["dist_pairs"] += npairs
        counts["dist_rows"] += distinct
        s = self.stream
        self.d_pairs.copy_to_device(pairs, stream=s)
        self.d_cands.copy_to_device(cands, stream=s)
        self.d_delta.copy_to_device(delta, stream=s)
        if k == p.offspring:
            g = self.full_step
            g["dist_partial"].launch()
            g["dist_final"].launch()
            g["choose_fathers"].launch()
            g["crossover"].launch(key=key, unit=np.int64(self.unit))
            self.eval_children()
            g["replace_children"].launch()
            g["copy_moves"].launch()
        else:
            self._launch("dist_partial", (npairs, self.blocks), self.threads, self.pop, self.d_pairs, self.partials)
            self._launch("dist_final", npairs, self.threads, self.partials, self.blocks, self.dists)
            self._launch("choose_fathers", 1, 32, self.d_cands, self.dists, self.d_plan, k, nam)
            self._launch("crossover", (k, self.blocks), self.threads, self.pop, P, self.d_plan, self.d_delta,
                         key, self.unit, self.W, p.alpha, self.lower, self.upper)
            self._evaluate_rows(P, k)
            self._launch("replace_children", 1, 1, self.fit_all, P, k, self.d_plan, self.d_moves, self.d_nmoves,
                         self.d_replaced, self.d_tally)
            self._launch("copy_moves", (k, self.blocks), self.threads, self.pop, self.d_moves, self.d_nmoves)
        self.unit += k

    def _read_ga_phase(self):
        """The population's errors after the GA phase, and the slots it replaced (their chains end)."""
        P, s = self.params.popsize, self.stream
        self.fit_all.copy_to_host(self.h_fit, stream=s)
        self.d_replaced.copy_to_host(self.h_replaced, stream=s)
        self.d_tally.copy_to_host(self.h_tally, stream=s)
        self.d_replaced.copy_to_device(self.h_no_replaced, stream=s)
        s.synchronize()
        self.fit[:] = self.h_fit[:P]
        gone = self.h_replaced.astype(bool)
        self.has_chain[gone] = False
        self.non_improved[gone] = False
        self.counts["moves"], self.counts["parent_rows"] = int(self.h_tally[0]), int(self.h_tally[1])

    # -- the local search phase ----------------------------------------------------------------
    def local_search(self, key, budget):
        p, P = self.params, self.params.popsize
        unit = self.unit
        self.unit += 1 + p.ls_intensity
        i = ls_choice(self.fit, self.non_improved)
        if i < 0:
            i = int(self.cpu["below"](key, self.cpu["ctr"](unit, 0, self.W), P))
        if not self.has_chain[i]:
            self.counts["new_chains"] += 1
            d = math.sqrt(self._distances([(i, q) for q in range(P) if q != i]).min()) / self.dim
            self.rho[i] = min(p.rho_max, d / 2.0)
            self.succ[i] = self.fail[i] = 0
            self._launch("zero_row", self.blocks, self.threads, self.bias, i)
        x = self.x_ls if self.ls_mode == "fused" else self.ls[0]
        x.copy_to_device(self.pop[i], stream=self.stream)
        h = self.h_st
        h[:] = 0.0
        h[F_LS], h[RHO], h[SUCC], h[FAIL], h[BUDGET] = self.fit[i], self.rho[i], self.succ[i], self.fail[i], budget
        self.st.copy_to_device(h, stream=self.stream)
        if self.ls_mode == "fused":
            self.sw_application.launch(row=np.int64(i), key=key, unit=np.int64(unit + 1))
            self.st.copy_to_host(h, stream=self.stream)
            self.stream.synchronize()
            self.counts["ls_evaluations"] += int(h[USED])
            self.counts["ls_steps"] += int(h[LS_STEPS])
            self.counts["ls_accepted"] += int(h[LS_ACCEPTED])
            self.keep(i, float(h[F_LS]), float(h[RHO]), int(h[SUCC]), int(h[FAIL]))
            return int(h[USED])
        self.gate.copy_to_device(self.one, stream=self.stream)
        self.gate_minus.copy_to_device(self.zero, stream=self.stream)
        L = self.step_launches
        t, used = 0, 0
        while used < budget:
            for _ in range(max(1, (budget - used + 1) // 2)):
                L["plus"].launch(row=np.int64(i), key=key, unit=np.int64(unit + 1 + t))
                self.eval_plus()
                L["after_plus"].launch()
                L["minus"].launch(row=np.int64(i))
                self.eval_minus()
                L["after_minus"].launch()
                L["finish"].launch(row=np.int64(i))
                L["end"].launch()
                t += 1
            self.st.copy_to_host(h, stream=self.stream)
            self.stream.synchronize()
            used = int(h[USED])
        self.counts["ls_evaluations"] += used
        self.keep(i, float(h[F_LS]), float(h[RHO]), int(h[SUCC]), int(h[FAIL]))
        return used

    def keep(self, i, f, rho, succ, fail):
        self.ls_applications += 1
        if f < self.fit[i] and self.fit[i] - f >= self.params.improvement:
            self._launch("set_value", 1, 1, self.fit_all, i, f)  # the device's copy of the errors too
            self.pop[i].copy_to_device(self.x_ls if self.ls_mode == "fused" else self.ls[0], stream=self.stream)
            self.fit[i] = f
            self.rho[i], self.succ[i], self.fail[i] = rho, succ, fail
            self.has_chain[i], self.non_improved[i] = True, False
            self.ls_improved += 1
        else:
            self.has_chain[i], self.non_improved[i] = False, True

    def generation(self, key, g, n):
        p = self.params
        ga = min(p.ssga_evals, n)
        used = 0
        t0 = time.perf_counter()
        step = 0
        while used < ga:
            k = min(p.offspring, ga - used)
            self.ga_step(key, k, step)
            used += k
            step += 1
        if step:
            self._read_ga_phase()
        t1 = time.perf_counter()
        if n - used > 0:
            used += self.local_search(key, min(p.ls_intensity, n - used))
        # each phase ends with a host read of its results, so these are the phases' GPU times too
        self.phase_s["ga"] += t1 - t0
        self.phase_s["ls"] += time.perf_counter() - t1
        return float(self.fit.min()), used

    def population(self):
        """Copies of the final population and its errors (float64)."""
        P = self.params.popsize
        return self.pop[:P].copy_to_host(), self.fit.copy()

    def best_vector(self):
        i = int(np.argmin(self.fit))
        return self.pop[i].copy_to_host()
