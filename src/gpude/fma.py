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
