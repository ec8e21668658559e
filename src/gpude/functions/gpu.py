"""CUDA evaluator (numba-cuda), in the layout of Janssen et al. and Qin et al.

A thread block evaluates one individual; its threads (a power of two, by
default the next one >= D) share the coordinates. Two shared buffers hold the
shifted/shrunk vector and the rotated one; reductions run in shared memory.
Rotation matrices are stored transposed (``rot_t[k, j, i] = M_k[i, j]``) so that
the threads of a warp, each computing one z_i, read consecutive addresses. A
matrix is D x W: W = D, except N17 (Schwefel 2.13), whose matrix acts on the
2 D trigonometric features [sin y, 1 - cos y]; the first buffer is then 2 D long
(``CudaFunction.buffer_size``).

Everything that identifies the function (kind, basic functions, constants, D,
threads per block, floating type) is a compile-time constant of the generated
code, so each (function, D, threads, dtype) gets its own specialised machine
code. The math comes from :func:`gpude.functions.basic.build_basic`, the same
source as the CPU evaluator.

Two ways to use it:

* :func:`evaluate` evaluates a population (the standalone population kernel);
* :func:`compile_function` returns a :class:`CudaFunction` whose
  ``block_evaluate`` device function DE kernels call inside their own fused
  kernels: every thread of the block calls
  ``block_evaluate(x, buf_a, buf_z, red, shift, rot_t, perm, tid)`` with ``x`` the
  individual (shared or global memory), ``buf_a``/``buf_z`` shared arrays of
  ``buffer_size`` (at least; ``buf_a`` must hold W values: a shorter one gives NaN)
  and ``red`` a shared ``(4, threads)`` array, and gets the
  error back in every thread. It synchronises the block internally, so all
  threads of the block must call it.
"""

from __future__ import annotations

import contextlib
import math
import threading
import warnings
from dataclasses import dataclass

import numpy as np
from numba import cuda
from numba.core.errors import NumbaPerformanceWarning

from ..core.errors import InvalidInputError

# require_gpu: below the problems layer (also imported from here by older code)
from ..core.gpu_runtime import require_gpu, simulator_enabled, warp_barrier
from ..core.prebound import PreboundLaunch
from . import basic
from .program import FEATURES_TRIG, Program
from .suites import COMPOSITION, HYBRID, HYBRID_COMPOSITION, SIMPLE

try:  # numba-cuda warns with its own class, no subclass of numba's
    from numba.cuda.core.errors import NumbaPerformanceWarning as _CudaPerformanceWarning
except ImportError:  # pragma: no cover - older numba-cuda
    _CudaPerformanceWarning = NumbaPerformanceWarning

#: numba's and numba-cuda's performance warnings (e.g. a grid too small for the GPU)
PERFORMANCE_WARNINGS = tuple(dict.fromkeys((NumbaPerformanceWarning, _CudaPerformanceWarning)))


@contextlib.contextmanager
def no_performance_warnings():
    """Ignore numba's and numba-cuda's performance warnings inside the block: small grids (small
    populations) are legitimate here."""
    with warnings.catch_warnings():
        for category in PERFORMANCE_WARNINGS:
            warnings.simplefilter("ignore", category)
        yield


MAX_THREADS = 1024


def next_pow2(n: int) -> int:
    return 1 << max(0, int(n - 1).bit_length())


def default_threads(dim: int) -> int:
    """Threads per block of the papers' layout: the next power of two >= D."""
    return min(MAX_THREADS, next_pow2(dim))


@dataclass(frozen=True, eq=False)
class CudaFunction:
    """A benchmark function compiled for CUDA at one (D, threads, dtype).

    Attributes
    ----------
    block_evaluate : numba.cuda device function
        ``block_evaluate(x, buf_a, buf_z, red, shift, rot_t, perm, tid) -> error``.
    population_kernel : numba.cuda kernel
        ``population_kernel[blocks, threads](X, out, shift, rot_t, perm)``.
    threads : int
        Threads per block (a power of two).
    buffer_size : int
        Length of each of the two shared buffers: max(D, W), W the width of the
        matrix (D, or 2 D for N17's trigonometric features).
    data : tuple of device arrays
        ``(shift, rot_t, perm)`` to pass to the above.
    dtype : numpy floating type
    """

    fid: str
    dim: int
    threads: int
    buffer_size: int
    dtype: type
    block_evaluate: object
    population_kernel: object
    data: tuple

    @property
    def shared_bytes(self) -> int:
        """Static shared memory per block of the population kernel."""
        return (2 * self.buffer_size + 4 * self.threads) * np.dtype(self.dtype).itemsize


def make_block_evaluator(prog: Program, threads: int, dtype, warp: bool = False):
    """Generate the ``block_evaluate`` device function for ``prog`` (see module doc).

    ``warp=True`` (``threads`` must be 32): the evaluator of one warp of a larger block, which waits
    only for its own warp (``syncwarp``), so that a block's warps evaluate different individuals
    independently; the caller gives each warp its own ``buf_a``, ``buf_z`` and ``red``. The
    simulator has no ``syncwarp``: there every warp of the block must call it the same number of
    times (its barriers are the block's)."""
    if warp and threads != 32:
        raise InvalidInputError(f"a warp's evaluator has 32 threads, got {threads}")
    B = basic.build_basic(dtype, "cuda")
    term, final, T = B.term, B.final, B.dtype
    comp_weight, comp_combine = B.comp_weight, B.comp_combine
    P, D, KIND, ROTATED = int(threads), prog.dim, prog.kind, prog.rotated
    HCOMP = KIND == HYBRID_COMPOSITION
    C = prog.n_parts  # composition components of F29/F30 (the rows of shift)
    SOURCES, GCOMP = prog.sources.astype(np.int64), prog.group_comp.astype(np.int64)
    # each composition component's first group (its lambda, sigma and bias; F29/F30)
    FIRST = np.array([int(np.argmax(GCOMP == k)) for k in range(C)], dtype=np.int64)
    ROW3_SUM = basic.ROW3_SUM_CODES[0]        # bi-Rastrigin: the fourth quantity is a sum
    UNROTATED = basic.UNROTATED_PAIR_CODES[0]  # bi-Rastrigin: zn is u[i], the unrotated coordinate
    SIGNED = basic.SHIFT_SIGN_CODES[0]        # bi-Rastrigin: negated where the shift is negative
    SIGNED0 = bool(prog.codes[0] == SIGNED)
    W = prog.width if prog.rotated else D  # the matrix is D x W
    TRIG = prog.features == FEATURES_TRIG
    IS_COMP = KIND == COMPOSITION
    nan = T(np.nan)
    G = len(prog.codes)
    CODES = prog.codes.astype(np.int64)
    STARTS, LENGTHS = prog.starts.astype(np.int64), prog.lengths.astype(np.int64)
    RATES, OFFSETS = prog.rates.astype(T), prog.offsets.astype(T)
    LAM_NUM, LAM_DEN = prog.lam_num.astype(T), prog.lam_den.astype(T)
    SIGMAS, CBIAS = prog.sigmas.astype(T), prog.comp_bias.astype(T)
    zero, one = T(0.0), T(1.0)

    # Whole warps per individual (P >= 32) finish the reduction with warp shuffles; the
    # simulator has no shuffles, so it keeps the shared-memory tree to the end.
    SHUFFLE = P >= 32 and not simulator_enabled()
    TREE_STOP = 16 if SHUFFLE else 0
    FULL_MASK = 0xFFFFFFFF
    barrier = warp_barrier(warp)

    @cuda.jit(device=True)
    def reduce4(red, tid, row3_sum):
        # Reduction of the four rows: s1, s2 (sums), p (product) and, in row 3, the composition's
        # d2 or bi-Rastrigin's cosines (a sum: row3_sum) or, for simple and hybrid functions, the
        # terms' maximum m; result in red[:, 0].
        s = P // 2
        while s > TREE_STOP:
            if tid < s:
                red[0, tid] += red[0, tid + s]
                red[1, tid] += red[1, tid + s]
                red[2, tid] *= red[2, tid + s]
                if IS_COMP or row3_sum:
                    red[3, tid] += red[3, tid + s]
                else:
                    red[3, tid] = max(red[3, tid], red[3, tid + s])
            barrier()
            s //= 2
        if SHUFFLE:
            if tid < 32:  # the first warp of this individual combines its 32 partial results
                v0, v1, v2, v3 = red[0, tid], red[1, tid], red[2, tid], red[3, tid]
                off = 16
                while off > 0:
                    v0 += cuda.shfl_down_sync(FULL_MASK, v0, off)
                    v1 += cuda.shfl_down_sync(FULL_MASK, v1, off)
                    v2 *= cuda.shfl_down_sync(FULL_MASK, v2, off)
                    if IS_COMP or row3_sum:
                        v3 += cuda.shfl_down_sync(FULL_MASK, v3, off)
                    else:
                        v3 = max(v3, cuda.shfl_down_sync(FULL_MASK, v3, off))
                    off //= 2
                if tid == 0:
                    red[0, 0], red[1, 0], red[2, 0], red[3, 0] = v0, v1, v2, v3
            barrier()

    @cuda.jit(device=True)
    def component(z, start, length, code, red, tid, d2_part, u):
        # Returns (g, d2): d2 is the reduced d2_part for compositions (row 3 holds m otherwise).
        # u: the vector before the rotation (bi-Rastrigin's term reads u[i] as zn).
        row3_sum = code == ROW3_SUM
        s1, s2, p, m = zero, zero, one, zero
        i = tid
        while i < length:
            nxt = i + 1
            if nxt == length:
                nxt = 0
            if code == UNROTATED:
                zn = u[start + i]
            else:
                zn = z[start + nxt]
            t1, t2, t3, t4 = term(code, z[start + i], zn, i, length)
            s1 += t1
            s2 += t2
            p *= t3
            if row3_sum:
                m += t4
            elif t4 > m:
                m = t4
            i += P
        red[0, tid] = s1
        red[1, tid] = s2
        red[2, tid] = p
        if IS_COMP:
            red[3, tid] = d2_part
        else:
            red[3, tid] = m
        barrier()
        reduce4(red, tid, row3_sum)
        if IS_COMP:
            val = final(code, red[0, 0], red[1, 0], red[2, 0], zero, length)
        else:
            val = final(code, red[0, 0], red[1, 0], red[2, 0], red[3, 0], length)
        d2 = red[3, 0]
        barrier()  # every thread has read red before anyone reuses it
        return val, d2

    W8 = W - W % 8

    @cuda.jit(device=True)
    def rotate(rot_t, k, a, z, offset, tid):
        # z_i = sum_j M[i, j] a_j, i < D, j < W. Reads rot_t[k, j, i]: consecutive i (threads),
        # consecutive addresses. Eight independent accumulators keep eight loads in flight: one
        # running sum would wait for every load in turn (the loop is latency-bound, not
        # bandwidth-bound).
        i = tid
        while i < D:
            acc0, acc1, acc2, acc3 = zero, zero, zero, zero
            acc4, acc5, acc6, acc7 = zero, zero, zero, zero
            for j in range(0, W8, 8):
                acc0 += rot_t[k, j, i] * a[j]
                acc1 += rot_t[k, j + 1, i] * a[j + 1]
                acc2 += rot_t[k, j + 2, i] * a[j + 2]
                acc3 += rot_t[k, j + 3, i] * a[j + 3]
                acc4 += rot_t[k, j + 4, i] * a[j + 4]
                acc5 += rot_t[k, j + 5, i] * a[j + 5]
                acc6 += rot_t[k, j + 6, i] * a[j + 6]
                acc7 += rot_t[k, j + 7, i] * a[j + 7]
            for j in range(W8, W):
                acc0 += rot_t[k, j, i] * a[j]
            z[i] = (((acc0 + acc1) + (acc2 + acc3)) + ((acc4 + acc5) + (acc6 + acc7))) + offset
            i += P

    @cuda.jit(device=True)
    def hybrid_groups(z, a, red, shift, perm, k, tid):
        # The groups of composition component k (every group of a hybrid): a[start + j] =
        # z[perm[k D + source + j]] at the group's own rate and offset (bi-Rastrigin negated where
        # o_k[j] < 0), then the sum of the groups' basic functions.
        i = tid
        while i < D:
            rate, off, src, sg = one, zero, i, False
            for g in range(G):
                if GCOMP[g] == k and i >= STARTS[g] and i < STARTS[g] + LENGTHS[g]:
                    rate, off = RATES[g], OFFSETS[g]
                    src = SOURCES[g] + (i - STARTS[g])
                    sg = CODES[g] == SIGNED and shift[k, i - STARTS[g]] < zero
            v = z[perm[k * D + src]] * rate + off
            if sg:
                v = -v
            a[i] = v
            i += P
        barrier()
        total = zero
        for g in range(G):
            if GCOMP[g] == k:
                val, _ = component(a, STARTS[g], LENGTHS[g], CODES[g], red, tid, zero, a)
                total += val
        return total

    @cuda.jit(device=True)
    def block_evaluate(x, a, z, red, shift, rot_t, perm, tid):
        if KIND == SIMPLE:
            if TRIG:
                if a.shape[0] < W:  # a caller's buffer too short for the 2 D features
                    return nan
            i = tid
            while i < D:
                t = (x[i] - shift[0, i]) * RATES[0]
                if SIGNED0:
                    if shift[0, i] < zero:
                        t = -t
                if TRIG:  # phi(y) = [sin y, 1 - cos y]
                    a[i] = math.sin(t)
                    a[D + i] = one - math.cos(t)
                else:
                    a[i] = t
                i += P
            barrier()
            if ROTATED:
                rotate(rot_t, 0, a, z, OFFSETS[0], tid)
            else:
                i = tid
                while i < D:
                    z[i] = a[i] + OFFSETS[0]
                    i += P
            barrier()
            val, _ = component(z, 0, D, CODES[0], red, tid, zero, a)
            return val

        if KIND == HYBRID:
            i = tid
            while i < D:
                a[i] = x[i] - shift[0, i]
                i += P
            barrier()
            rotate(rot_t, 0, a, z, zero, tid)
            barrier()
            return hybrid_groups(z, a, red, shift, perm, 0, tid)

        if HCOMP:  # component k: the hybrid of its groups on o_k, M_k and perm_k (F29, F30)
            hfit = cuda.local.array(C, T)
            hw = cuda.local.array(C, T)
            for k in range(C):
                d2_part = zero
                i = tid
                while i < D:
                    diff = x[i] - shift[k, i]
                    d2_part += diff * diff
                    a[i] = diff
                    i += P
                barrier()
                rotate(rot_t, k, a, z, zero, tid)
                barrier()
                h = hybrid_groups(z, a, red, shift, perm, k, tid)
                # |x - o_k|^2: a sum over the threads' parts (rows 0..2 neutral)
                red[0, tid] = zero
                red[1, tid] = zero
                red[2, tid] = one
                red[3, tid] = d2_part
                barrier()
                reduce4(red, tid, True)
                d2 = red[3, 0]
                barrier()
                g0 = FIRST[k]
                hfit[k] = LAM_NUM[g0] * h / LAM_DEN[g0] + CBIAS[g0]
                hw[k] = comp_weight(d2, SIGMAS[g0], D)
            return comp_combine(hfit, hw, C)

        # COMPOSITION: every thread keeps the component values and weights.
        fit = cuda.local.array(G, T)
        w = cuda.local.array(G, T)
        for k in range(G):
            d2_part = zero
            i = tid
            while i < D:
                diff = x[i] - shift[k, i]
                d2_part += diff * diff
                a[i] = diff * RATES[k]
                i += P
            barrier()
            rotate(rot_t, k, a, z, OFFSETS[k], tid)
            barrier()
            g, d2 = component(z, 0, D, CODES[k], red, tid, d2_part, a)
            fit[k] = LAM_NUM[k] * g / LAM_DEN[k] + CBIAS[k]
            w[k] = comp_weight(d2, SIGMAS[k], D)
        return comp_combine(fit, w, G)

    return block_evaluate


def buffer_size(prog: Program) -> int:
    """Length of the shared buffers ``block_evaluate`` needs: max(D, W)."""
    return max(prog.dim, prog.width if prog.rotated else prog.dim)


def make_population_kernel(block_evaluate, dim: int, threads: int, dtype, buf: int | None = None):
    """The standalone kernel: block ``b`` evaluates rows ``b, b + gridDim, ...`` of ``X``.

    ``buf`` is the shared buffers' length (default ``dim``; see :func:`buffer_size`).
    """
    T = np.dtype(dtype).type
    P, BUF = int(threads), int(dim if buf is None else buf)

    @cuda.jit(cache=True)
    def population_kernel(X, out, shift, rot_t, perm):
        a = cuda.shared.array(BUF, T)
        z = cuda.shared.array(BUF, T)
        red = cuda.shared.array((4, P), T)
        tid = cuda.threadIdx.x
        r = cuda.blockIdx.x
        while r < X.shape[0]:
            v = block_evaluate(X[r], a, z, red, shift, rot_t, perm, tid)
            if tid == 0:
                out[r] = v
            r += cuda.gridDim.x

    return population_kernel


_COMPILED: dict[tuple, CudaFunction] = {}
_LOCK = threading.Lock()


def compile_function(prog: Program, dtype=np.float64, threads: int | None = None, warp: bool = False) -> CudaFunction:
    """The CUDA build of ``prog`` (cached per process), with its data on the device; ``warp=True``:
    the evaluator of one warp of a larger block (32 threads, see :func:`make_block_evaluator`)."""
    require_gpu()
    T = np.dtype(dtype).type
    threads = default_threads(prog.dim) if threads is None else int(threads)
    if threads < 1 or threads > MAX_THREADS or threads & (threads - 1):
        raise InvalidInputError(
            f"threads per block must be a power of two between 1 and {MAX_THREADS}, got {threads}"
        )
    key = (prog.fid, prog.dim, threads, np.dtype(T).name, bool(warp))
    with _LOCK:
        if key not in _COMPILED:
            block = make_block_evaluator(prog, threads, T, warp=warp)
            buf = buffer_size(prog)
            kernel = make_population_kernel(block, prog.dim, threads, T, buf)
            rot_t = np.ascontiguousarray(np.transpose(prog.rot, (0, 2, 1)), dtype=T)
            if not prog.rotated:
                rot_t = np.zeros((1, 1, 1), dtype=T)  # never read; keeps one signature
            data = (
                cuda.to_device(np.ascontiguousarray(prog.shift, dtype=T)),
                cuda.to_device(rot_t),
                cuda.to_device(np.ascontiguousarray(prog.perm, dtype=np.int64)),
            )
            _COMPILED[key] = CudaFunction(prog.fid, prog.dim, threads, buf, T, block,
                                          kernel, data)
        return _COMPILED[key]


def evaluate(prog: Program, X: np.ndarray, dtype=np.float64, threads: int | None = None) -> np.ndarray:
    """Errors of the rows of ``X`` computed on the GPU, returned as float64."""
    fn = compile_function(prog, dtype, threads)
    T = fn.dtype
    X = np.ascontiguousarray(X, dtype=T)
    n = X.shape[0]
    d_X = cuda.to_device(X)
    d_out = cuda.device_array(n, dtype=T)
    blocks = min(n, 1 << 20)  # the kernel strides over rows beyond the grid
    with no_performance_warnings():  # numba warns about grids smaller than the GPU
        fn.population_kernel[blocks, fn.threads](d_X, d_out, *fn.data)
    return d_out.copy_to_host().astype(np.float64)


_GATED: dict[tuple, object] = {}


class ProgramEvaluator:
    """Rows of a device array evaluated by a block each (the interface of
    :class:`gpude.functions.streaming_gpu.StreamingEvaluator`, for the program-based functions):
    ``launch(X, out, row0, n, stream, gate)`` writes the errors of rows ``row0 .. row0 + n - 1`` to
    ``out[row0 ..]`` (float64) and does nothing when ``gate[0] == 0``."""

    def __init__(self, function, dtype, threads: int | None = None, max_rows: int = 64):
        T = np.dtype(dtype).type
        self.fn = fn = compile_function(function.program, T, threads)
        key = (fn.fid, fn.dim, fn.threads, np.dtype(T).name)
        with _LOCK:
            if key not in _GATED:
                block_evaluate, P, BUF = fn.block_evaluate, fn.threads, fn.buffer_size

                @cuda.jit(cache=True)
                def gated(X, row0, gate, out, shift, rot_t, perm):
                    if gate[0] == 0:
                        return
                    a = cuda.shared.array(BUF, T)
                    z = cuda.shared.array(BUF, T)
                    red = cuda.shared.array((4, P), T)
                    tid = cuda.threadIdx.x
                    r = row0 + cuda.blockIdx.x
                    v = block_evaluate(X[r], a, z, red, shift, rot_t, perm, tid)
                    if tid == 0:
                        out[r] = v

                _GATED[key] = gated
            self.kernel = _GATED[key]
        self.dtype, self.max_rows = T, int(max_rows)
        self.always = cuda.to_device(np.ones(1, np.int32))

    @property
    def device_bytes(self) -> int:
        return sum(a.nbytes for a in self.fn.data)

    def launch(self, X, out, row0: int, n: int, stream=0, gate=None):
        gate = self.always if gate is None else gate
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.kernel[n, self.fn.threads, stream](X, row0, gate, out, *self.fn.data)

    def prebound(self, X, out, row0: int, n: int, stream, gate=None):
        gate = self.always if gate is None else gate
        launch = PreboundLaunch(self.kernel, (X, row0, gate, out, *self.fn.data), n, self.fn.threads, stream)
        return launch.launch
