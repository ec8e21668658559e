"""GPU evaluation of the large-scale functions, streaming over D (Lastra et al. sec. 5.1).

One kernel per evaluation of ``n`` rows of a device array X (n, D):
``partial[(n, blocks), threads]``: block b of row i (``blockIdx = (i, b)``: the rows vary fastest,
so the blocks that run together read the same stretch of o, once from memory) sums the terms of positions
``k = k0 + b * threads + t + s * blocks * threads`` (s = 0, 1, ...): each thread a strided bucket,
consecutive threads on consecutive coordinates (coalesced), then a shared-memory tree per block;
the block's sums go to ``partials[i, b]``. The row's last block to finish (an atomic ticket after a
memory fence, CUDA's "threadFenceReduction") sums the partials, adds the head group (the m rotated
or Rosenbrock coordinates of CEC 2010 F4, F6, F8, from one thread) and applies the closing formula
(Salomon's square root, Ackley's exponentials, Griewank's product). No block needs D in shared
memory, so any D works; the grid is sized to the GPU (8 resident blocks per multiprocessor).

Schwefel 1.2 (a sum of squared prefix sums) needs contiguous segments instead: ``partial`` sums each
block's segment of z; ``scan`` gives every block the sum of the segments before it, scans its own
segment tile by tile in shared memory, sums the squared prefixes, and its last block adds them up.

With a permutation (CEC 2010's grouped functions) position k's value is x[perm[k]]: read in k's
order, every load is a gather from anywhere in the row (a 32-byte sector for 8 bytes). Where a
term reads its own position only (not Rosenbrock's next one), the kernels stream the row in memory
order instead and look each coordinate's position up in the inverse permutation, kept on the device
after the permutation (:func:`device_permutation`): the same terms, summed in another order.
Rosenbrock's next coordinate (CEC 2010 F13, F18, F20) reads position k + 1 beside k, so its kernels
go in position order and gather x; its shift o is kept in position order (:func:`device_shift`,
o[perm[k]] at k), so that half of each coordinate's reads streams. An algorithm may also keep its
rows in position order (``layout="position"``: position k's value at index k, as masw/gpu does for
these functions): then nothing is gathered, and the kernels are those of the function without a
permutation, with o in position order.

Every kernel first reads ``gate[0]`` and does nothing when it is 0, so an algorithm can queue an
evaluation that a decision still on the device may cancel (the memetic algorithm's second
Solis-Wets candidate) without waiting for the host.
"""

from __future__ import annotations

import math
import threading
import warnings
from types import SimpleNamespace

import numpy as np
from numba import cuda, float64, int32

from ..core.gpu_runtime import require_gpu
from ..core.prebound import PreboundLaunch
from .largescale_terms import GRIEWANK, HEAD_CODES, NEXT_CODES, ROSEN_HEAD, SCHWEFEL12, build_terms

THREADS = 256
BUCKET = 4              # coordinates per thread (at least) when the grid is sized automatically
RESIDENT_THREADS = 2048  # per multiprocessor on every GPU since sm_30 but sm_75/sm_86+ consumer parts


def blocks_for(dim: int, threads: int) -> int:
    """Blocks per row: enough for every coordinate's bucket, at most one resident wave."""
    try:
        sms = cuda.get_current_device().MULTIPROCESSOR_COUNT
    except Exception:  # the simulator
        sms = 1
    return max(1, min(math.ceil(dim / (threads * BUCKET)), sms * (RESIDENT_THREADS // threads)))


_KERNELS: dict = {}
_LOCK = threading.Lock()


def memory_order(code: int, has_perm: bool) -> bool:
    """Whether the kernels stream a permuted function's row in memory order (a term reading its own
    position only: not Rosenbrock's next one, not Schwefel 1.2's scan, which has no permutation)."""
    return bool(has_perm) and code not in NEXT_CODES and code != SCHWEFEL12


def device_permutation(perm: np.ndarray, has_perm: bool, code: int) -> np.ndarray:
    """The permutation as the kernels take it: ``perm`` itself, or ``perm`` followed by its inverse
    (``inv[perm[k]] = k`` at ``[D + p]``) where they stream in memory order."""
    perm = np.ascontiguousarray(perm, dtype=np.int32)
    if not memory_order(code, has_perm):
        return perm
    inv = np.empty_like(perm)
    inv[perm] = np.arange(perm.size, dtype=np.int32)
    return np.concatenate([perm, inv])


def shift_in_position_order(code: int, has_perm: bool) -> bool:
    """Whether the kernels take a permuted function's shift in position order (Rosenbrock's next
    coordinate: its loops go in position order, so o[perm[k]] at k streams where o[perm[k]] gathers)."""
    return bool(has_perm) and code in NEXT_CODES


def device_shift(o: np.ndarray, perm: np.ndarray, has_perm: bool, code: int) -> np.ndarray:
    """The shift as the kernels take it: ``o`` itself, or ``o[perm]`` (position order) where
    :func:`shift_in_position_order`."""
    if not shift_in_position_order(code, has_perm):
        return o
    return np.ascontiguousarray(o[np.asarray(perm, dtype=np.int64)])


LAYOUTS = ("natural", "position")


def position_layout(code: int, has_perm: bool) -> bool:
    """Whether rows in position order (``layout="position"``) are the default for an algorithm that
    can keep them: a permuted function whose terms read a neighbour's position (Rosenbrock's next
    coordinate), where the natural order gathers."""
    return shift_in_position_order(code, has_perm)


def device_functions(code: int, dim: int, m: int, has_perm: bool, threads: int):
    """The device functions the evaluation kernels are made of, for one (function code, D, layout,
    threads per block): ``value(x, o, perm, k)`` (coordinate k's shifted value, float64),
    ``add_term(s0, s1, k, y, y_next)`` (the running sums with coordinate k's term),
    ``block_reduce(s0, s1, red0, red1, tid, nthreads)`` and ``close_row(x, row, i, partials, counters,
    out, o, perm, M, red0, red1, tid)`` (the last block of grid row i writes ``out[row]``, x the row's values),
    with the layout's constants; a kernel that makes its rows itself (masw/gpu's children) evaluates
    them with these as ``partial`` does."""
    key = ("device", code, dim, m, has_perm, threads)
    with _LOCK:
        if key in _KERNELS:
            return _KERNELS[key]
    term, close, head_from, rotated = build_terms("cuda")
    T, D, M_ = int(threads), int(dim), int(m)
    CODE, PERM = int(code), bool(has_perm)
    HEAD = code in HEAD_CODES
    HM = max(1, M_)  # shared arrays need a size > 0
    K0 = M_ if HEAD else 0
    PROD = code == GRIEWANK
    NEXT = code in NEXT_CODES
    ONE1 = 1.0 if PROD else 0.0
    INV = memory_order(code, has_perm)
    OPOS = shift_in_position_order(code, has_perm)
    J0 = 0 if INV else K0  # the first index a streaming loop visits

    @cuda.jit(device=True)
    def shift(o, k, p):
        """Position k's shift, whose value is at index p of the row (:func:`device_shift`)."""
        return float64(o[k]) if OPOS else float64(o[p])

    @cuda.jit(device=True)
    def value(x, o, perm, k):
        p = perm[k] if PERM else k
        return float64(x[p]) - shift(o, k, p)

    @cuda.jit(device=True)
    def position(perm, j):
        """(k, p) of a streaming loop's index j: the position k whose term it adds and the index p of
        its value in the row (memory order: p = j, k from the inverse permutation; a head position,
        k < K0, is the closing block's)."""
        if INV:
            return perm[D + j], j
        return j, (perm[j] if PERM else j)

    @cuda.jit(device=True)
    def add_term(s0, s1, q, y, y_next):
        """The running sums with coordinate q's term added (Griewank's second is a product)."""
        a, c = term(CODE, q, y, y_next, D, M_)
        return s0 + a, (s1 * c if PROD else s1 + c)

    @cuda.jit(device=True)
    def rotate_head(yh, rh, M, tid):
        """rh <- the head group yh rotated (a block's threads, a coordinate each; after the barrier that
        completes yh, before the one that completes rh). Rosenbrock's head is not rotated."""
        cuda.syncthreads()
        if CODE != ROSEN_HEAD:
            t = tid
            while t < M_:
                rh[t] = rotated(yh, M, t, M_)
                t += T
        cuda.syncthreads()

    @cuda.jit(device=True)
    def block_reduce(s0, s1, red0, red1, tid, nthreads):
        red0[tid] = s0
        red1[tid] = s1
        cuda.syncthreads()
        h = nthreads // 2
        while h > 0:
            if tid < h:
                red0[tid] += red0[tid + h]
                if PROD:
                    red1[tid] *= red1[tid + h]
                else:
                    red1[tid] += red1[tid + h]
            cuda.syncthreads()
            h //= 2
        return red0[0], red1[0]

    @cuda.jit(device=True)
    def close_row(x, row, i, partials, counters, out, o, perm, M, red0, red1, tid):
        """The row's last block to finish (a ticket from an atomic counter, after a memory fence)
        sums the blocks' partials and writes the value into out[row] (x: the row's values, for the
        head group): no second kernel, no host round trip."""
        last = cuda.shared.array(1, int32)
        nb = cuda.gridDim.y
        if tid == 0:
            cuda.threadfence()
            last[0] = 1 if cuda.atomic.add(counters, i, 1) == nb - 1 else 0
        cuda.syncthreads()
        if last[0] == 0:
            return
        cuda.threadfence()
        col = 1 if CODE == SCHWEFEL12 else 0
        s0, s1 = 0.0, ONE1
        j = tid
        while j < nb:
            s0 += partials[i, j, col]
            if PROD:
                s1 *= partials[i, j, 1]
            elif CODE != SCHWEFEL12:
                s1 += partials[i, j, 1]
            j += T
        cuda.syncthreads()
        s0, s1 = block_reduce(s0, s1, red0, red1, tid, T)
        head = 0.0
        if HEAD:  # the m head coordinates in shared memory, a thread per rotated coordinate
            yh = cuda.shared.array(HM, float64)
            rh = cuda.shared.array(HM, float64)
            t = tid
            while t < M_:
                yh[t] = value(x, o, perm, t)
                t += T
            rotate_head(yh, rh, M, tid)
            if tid == 0:
                head = head_from(CODE, yh, rh, M_)
        if tid == 0:
            counters[i] = 0  # ready for the next launch
            out[row] = s0 if CODE == SCHWEFEL12 else close(CODE, s0, s1, head, D, M_)

    fns = SimpleNamespace(value=value, shift=shift, position=position, add_term=add_term, block_reduce=block_reduce,
                          rotate_head=rotate_head, close_row=close_row, K0=K0, J0=J0, ONE1=ONE1, NEXT=NEXT, HEAD=HEAD,
                          INV=INV, OPOS=OPOS)
    with _LOCK:
        _KERNELS[key] = fns
    return fns


def build_kernels(code: int, dim: int, m: int, has_perm: bool, threads: int, dtype):
    """The (partial, scan or None) kernels for one (function code, D, layout, dtype)."""
    key = (code, dim, m, has_perm, threads, np.dtype(dtype).name)
    with _LOCK:
        if key in _KERNELS:
            return _KERNELS[key]
    fns = device_functions(code, dim, m, has_perm, threads)
    value, add_term, block_reduce, close_row = fns.value, fns.add_term, fns.block_reduce, fns.close_row
    position, shift = fns.position, fns.shift
    T, D, CODE = int(threads), int(dim), int(code)
    K0, J0, ONE1, NEXT = fns.K0, fns.J0, fns.ONE1, fns.NEXT

    @cuda.jit(device=True)
    def stored(rows, r):
        """Where row r's values are in X: rows[r] with a row map, r itself without one (empty rows)."""
        return rows[r] if rows.shape[0] > 0 else r

    @cuda.jit(cache=True)
    def partial(X, rows, row0, gate, partials, counters, out, o, perm, M):
        if gate[0] == 0:
            return
        red0 = cuda.shared.array(T, float64)
        red1 = cuda.shared.array(T, float64)
        tid, i, b = cuda.threadIdx.x, cuda.blockIdx.x, cuda.blockIdx.y
        nb = cuda.gridDim.y
        x = X[stored(rows, row0 + i)]
        s0, s1 = 0.0, ONE1
        if CODE == SCHWEFEL12:  # this block's contiguous segment: its sum of z
            seg = (D + nb - 1) // nb
            k, end = b * seg + tid, min(D, (b + 1) * seg)
            while k < end:
                s0 += float64(x[k]) - float64(o[k])
                k += T
        else:
            j = J0 + b * T + tid
            while j < D:
                k, p = position(perm, j)
                if k >= K0:
                    y = float64(x[p]) - shift(o, k, p)
                    y_next = value(x, o, perm, k + 1) if NEXT and k + 1 < D else 0.0
                    s0, s1 = add_term(s0, s1, k, y, y_next)
                j += nb * T
        s0, s1 = block_reduce(s0, s1, red0, red1, tid, T)
        if tid == 0:
            partials[i, b, 0] = s0
            partials[i, b, 1] = s1
        if CODE != SCHWEFEL12:
            close_row(x, row0 + i, i, partials, counters, out, o, perm, M, red0, red1, tid)

    scan = None
    if CODE == SCHWEFEL12:
        @cuda.jit(cache=True)
        def scan(X, rows, row0, gate, partials, counters, out, o, perm, M):
            if gate[0] == 0:
                return
            red0 = cuda.shared.array(T, float64)
            red1 = cuda.shared.array(T, float64)
            buf = cuda.shared.array(T, float64)
            tid, i, b = cuda.threadIdx.x, cuda.blockIdx.x, cuda.blockIdx.y
            nb = cuda.gridDim.y
            x = X[stored(rows, row0 + i)]
            # the sum of z over the segments before this one
            s = 0.0
            j = tid
            while j < b:
                s += partials[i, j, 0]
                j += T
            offset, _ = block_reduce(s, 0.0, red0, red1, tid, T)
            cuda.syncthreads()
            seg = (D + nb - 1) // nb
            start, end = b * seg, min(D, (b + 1) * seg)
            acc = 0.0
            base = start
            while base < end:  # tiles of T coordinates: inclusive scan (Hillis-Steele)
                k = base + tid
                buf[tid] = float64(x[k]) - float64(o[k]) if k < end else 0.0
                cuda.syncthreads()
                h = 1
                while h < T:
                    v = buf[tid - h] if tid >= h else 0.0
                    cuda.syncthreads()
                    buf[tid] += v
                    cuda.syncthreads()
                    h *= 2
                if k < end:
                    p = offset + buf[tid]
                    acc += p * p
                offset += buf[T - 1]
                cuda.syncthreads()
                base += T
            total, _ = block_reduce(acc, 0.0, red0, red1, tid, T)
            if tid == 0:
                partials[i, b, 1] = total
            close_row(x, row0 + i, i, partials, counters, out, o, perm, M, red0, red1, tid)

    kernels = (partial, scan)
    with _LOCK:
        _KERNELS[key] = kernels
    return kernels


class StreamingEvaluator:
    """Evaluates rows of a device array with a large-scale function's kernels.

    Parameters
    ----------
    function : LargeScaleFunction
    dtype : numpy floating type of the rows (the sums are float64)
    threads : int
        Threads per block of the partial kernels (a power of two, >= 32 on a GPU).
    blocks : int, optional
        Blocks per row (default: about D / (threads * 4), at most one resident wave of the GPU).
    max_rows : int
        The most rows one launch evaluates (sizes the partials buffer).
    layout : {"natural", "position"}
        How the rows hold a permuted function's coordinates: x itself ("natural"), or in position
        order, ``x[perm[k]]`` at k ("position": the kernels read no permutation, o is taken in
        position order). The same as "natural" for a function without a permutation.

    Notes
    -----
    ``launch`` and ``prebound`` take an optional row map ``rows`` (``row_map`` is True): row r's
    values are then ``X[rows[r]]`` while its error still goes to ``out[r]``, so a caller that keeps
    its rows by reference (masw/gpu: a child entering the population changes a map entry instead
    of being copied) needs no copy to have them evaluated.
    """

    #: launch/prebound accept ``rows`` (a device int64 row map)
    row_map = True

    def __init__(self, function, dtype, threads: int = THREADS, blocks: int | None = None,
                 max_rows: int = 64, layout: str = "natural"):
        require_gpu()
        if threads < 1 or threads & (threads - 1) or threads > 1024:
            raise ValueError(f"threads must be a power of two <= 1024, got {threads}")
        self.function, self.dtype, self.threads = function, np.dtype(dtype).type, int(threads)
        D = function.dim
        self.blocks = int(blocks) if blocks else blocks_for(D, self.threads)
        if layout not in LAYOUTS:
            raise ValueError(f"layout must be one of {', '.join(LAYOUTS)}, got {layout!r}")
        o, perm, has_perm, M, m = function.evaluator_args(self.dtype)
        self.layout = layout if has_perm else "natural"
        if self.layout == "position":  # the rows are in position order: the function without its permutation
            o = np.ascontiguousarray(o[np.asarray(perm, dtype=np.int64)])
            perm, has_perm = np.zeros(1, np.int32), False
        self.partial, self.scan = build_kernels(function.code, D, m, has_perm, self.threads, self.dtype)
        self.data = (cuda.to_device(device_shift(o, perm, has_perm, function.code)),
                     cuda.to_device(device_permutation(perm, has_perm, function.code)),
                     cuda.to_device(M))
        self.max_rows = int(max_rows)
        self.counters = cuda.to_device(np.zeros(self.max_rows, np.int32))
        self.partials = cuda.device_array((self.max_rows, self.blocks, 2), np.float64)
        self.always = cuda.to_device(np.ones(1, np.int32))
        self.no_map = cuda.to_device(np.zeros(0, np.int64))  # rows r at X[r]

    @property
    def device_bytes(self) -> int:
        """Bytes this evaluator holds on the device (data and partials)."""
        return sum(a.nbytes for a in self.data) + self.partials.nbytes + self.counters.nbytes

    def _check(self, n):
        if n > self.max_rows:
            raise ValueError(f"{n} rows in one launch; this evaluator was made for at most {self.max_rows}")

    def launch(self, X, out, row0: int, n: int, stream=0, gate=None, rows=None):
        """Errors of rows ``row0 .. row0 + n - 1`` of X into ``out[row0 ..]`` (float64), queued on
        ``stream``; nothing happens if ``gate[0] == 0``. With ``rows`` (a device int64 array) row r's
        values are ``X[rows[r]]``."""
        self._check(n)
        gate = self.always if gate is None else gate
        rows = self.no_map if rows is None else rows
        o, perm, M = self.data
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # small grids (tests, one row) are intended
            args = (X, rows, row0, gate, self.partials, self.counters, out, o, perm, M)
            self.partial[(n, self.blocks), self.threads, stream](*args)
            if self.scan is not None:
                self.scan[(n, self.blocks), self.threads, stream](*args)

    def prebound(self, X, out, row0: int, n: int, stream, gate=None, rows=None):
        """A callable that queues :meth:`launch` (same arguments) through pre-marshalled launches
        (:class:`gpude.core.prebound.PreboundLaunch`): microseconds per call."""
        self._check(n)
        gate = self.always if gate is None else gate
        rows = self.no_map if rows is None else rows
        o, perm, M = self.data
        args = (X, rows, row0, gate, self.partials, self.counters, out, o, perm, M)
        launches = [PreboundLaunch(k, args, (n, self.blocks), self.threads, stream)
                    for k in (self.partial, self.scan) if k is not None]

        def run():
            for launch in launches:
                launch.launch()
        return run

