"""Fused multiply-add, the same on every target.

CUDA compilers contract ``a * b + c`` into one FMA (one rounding), CPU code
built by numba does not (two roundings), so the same expression can differ in
the last bit between the CPU and the GPU. The DE operators therefore write their
multiply-adds as explicit FMAs: ``cuda.fma`` on the GPU, LLVM's ``llvm.fma``
intrinsic on the CPU (correctly rounded; exact hardware FMA on x86-64 with FMA3
and AArch64), and the CPU version again on numba's CUDA simulator (whose own
``fma`` rounds twice). Initial populations, mutants and repairs are then bit for
bit identical on every implementation.
"""

from __future__ import annotations

import numba
import numpy as np
from llvmlite import ir
from numba.core import cgutils
from numba.core.extending import intrinsic


@intrinsic
def _llvm_fma(typingctx, a, b, c):
    sig = a(a, a, a)

    def codegen(context, builder, signature, args):
        t = args[0].type
        name = "llvm.fma.f64" if t == ir.DoubleType() else "llvm.fma.f32"
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(t, [t, t, t]), name)
        return builder.call(fn, args)

    return sig, codegen


@numba.njit(cache=True, nogil=True)
def fma_cpu(a, b, c):
    """``a * b + c`` with a single rounding (all three of one floating type)."""
    return _llvm_fma(a, b, c)


def fma_for(target: str):
    """The FMA to call from code compiled for ``target`` ("cpu" or "cuda")."""
    if target == "cpu":
        return fma_cpu
    from .gpu_runtime import simulator_enabled

    return fma_cpu if simulator_enabled() else _fma_cuda()


def _fma_cuda():
    from numba import cuda

    @cuda.jit(device=True)
    def fma_gpu(a, b, c):
        return cuda.fma(a, b, c)  # must be called through the module: a bare name cannot be typed

    return fma_gpu


# --- the same FMA in plain numpy (no JIT), for the high-level implementation ---------------------------

def _two_sum(a, b):
    """s + t == a + b exactly, s = fl(a + b) (Knuth's TwoSum)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _two_product(a, b):
    """p + e == a * b exactly, p = fl(a * b) (Dekker's product with Veltkamp's split, float64)."""
    def split(x):
        c = 134217729.0 * x  # 2**27 + 1
        hi = c - (c - x)
        return hi, x - hi

    p = a * b
    ah, al = split(a)
    bh, bl = split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _add_round_to_odd(a, b):
    """a + b rounded to odd: exact sums as they are, else the neighbour of the exact sum whose last
    significand bit is 1 (consecutive float64s alternate that bit)."""
    s, t = _two_sum(a, b)
    inexact_even = (t != 0) & ((s.view(np.int64) & 1) == 0)
    toward = np.where(t > 0, np.inf, -np.inf)
    return np.where(inexact_even, np.nextafter(s, toward), s)


def fma_numpy(a, b, c, dtype=np.float64):
    """``a * b + c`` with one rounding to ``dtype`` (float64 or float32), elementwise, in plain numpy:
    the same bits as :func:`fma_cpu` and ``cuda.fma``.

    float64: Boldo & Melquiond's emulation (IEEE Trans. Computers 57(4), 2008, Algorithm 5.4): the
    exact product and sum as pairs of floats, the low parts added with rounding to odd, one final
    rounding to nearest. float32: the product is exact in float64 and the sum rounded to odd there, so
    the one rounding to float32 is correct (53 >= 2 * 24 + 2). Valid away from overflow and the
    subnormal range (|a|, |b|, |a * b|, |c| < 2**995; |a * b| > 2**-960 or 0: Veltkamp's split
    multiplies by 2**27 + 1), as the operators' values are.
    """
    a, b, c = (np.asarray(v, dtype=np.float64) for v in (a, b, c))
    if np.dtype(dtype) == np.float32:
        return _add_round_to_odd(a * b, c).astype(np.float32)
    uh, ul = _two_product(a, b)
    th, tl = _two_sum(c, uh)
    return th + _add_round_to_odd(tl, ul)
