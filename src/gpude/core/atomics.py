"""Atomic operations on int64 array elements for numba CPU code (LLVM atomics via intrinsics).

numba offers no atomics on the CPU; threads of one parallel region that hand work to each other
(``master_slave``'s pipeline: the master publishes each chunk of trials it has built, the
workers claim chunks to evaluate) need them, or the compiler may keep a flag in a register and
the hardware may reorder the rows' stores after the flag's.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.core.errors import TypingError
from numba.core.extending import intrinsic


def _element_pointer(context, builder, aryty, ary, index):
    array = context.make_array(aryty)(context, builder, ary)
    return cgutils.get_item_pointer(context, builder, aryty, array, [index], wraparound=False)


def _check(array, name):
    if not (isinstance(array, types.Array) and array.dtype == types.int64 and array.ndim == 1):
        raise TypingError(f"{name} takes a 1-d int64 array, got {array}")


@intrinsic
def load_acquire(typingctx, array, index):
    """``array[index]``, read with acquire ordering (later reads see what preceded the release)."""
    _check(array, "load_acquire")

    def codegen(context, builder, sig, args):
        ptr = _element_pointer(context, builder, sig.args[0], args[0], args[1])
        return builder.load_atomic(ptr, "acquire", 8)

    return types.int64(array, index), codegen


@intrinsic
def store_release(typingctx, array, index, value):
    """``array[index] = value`` with release ordering (every earlier write is visible first)."""
    _check(array, "store_release")

    def codegen(context, builder, sig, args):
        ptr = _element_pointer(context, builder, sig.args[0], args[0], args[1])
        value = context.cast(builder, args[2], sig.args[2], types.int64)
        builder.store_atomic(value, ptr, "release", 8)
        return context.get_dummy_value()

    return types.none(array, index, value), codegen


@intrinsic
def fetch_add(typingctx, array, index, value):
    """``array[index] += value`` atomically (sequentially consistent); returns the old value."""
    _check(array, "fetch_add")

    def codegen(context, builder, sig, args):
        ptr = _element_pointer(context, builder, sig.args[0], args[0], args[1])
        value = context.cast(builder, args[2], sig.args[2], types.int64)
        return builder.atomic_rmw("add", ptr, value, "seq_cst")

    return types.int64(array, index, value), codegen


@intrinsic
def yield_cpu(typingctx):
    """``sched_yield()``: give the core to another runnable thread. A thread that waits for
    another by spinning calls it after a while, so that on a machine with more runnable threads
    than cores (another job, a shared VM) the thread it waits for gets the core instead of the
    spinner burning its time slice."""

    def codegen(context, builder, sig, args):
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.IntType(32), []),
                                            "sched_yield")
        builder.call(fn, [])
        return context.get_dummy_value()

    return types.none(), codegen
