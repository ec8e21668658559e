"""The simulator scheduler of tests/_fast_simulator.py keeps the stock simulator's rules: a block is
released from syncthreads when every live thread waits there (threads that returned early do not
count), a thread's exception reaches the caller naming the thread, and shared arrays are told
apart by the line that allocates them."""

import os

import numpy as np
import pytest
from numba import cuda

from _fast_simulator import install

# the same tests pass on the stock simulator (GPUDE_TEST_STOCK_SIMULATOR=1): the rules are its own
pytestmark = pytest.mark.skipif(os.environ.get("NUMBA_ENABLE_CUDASIM") != "1",
                                reason="tests the scheduler of numba's CUDA simulator")


@pytest.mark.skipif(os.environ.get("GPUDE_TEST_STOCK_SIMULATOR") == "1", reason="the stock simulator is asked for")
def test_it_is_installed():
    from numba.cuda.simulator import kernel

    assert getattr(kernel.BlockManager, "_gpude_fast", False)
    install()  # twice is harmless
    assert getattr(kernel.BlockManager, "_gpude_fast", False)


@cuda.jit
def block_sums(x, out, active):
    # a tree reduction in shared memory; threads >= active leave before the first syncthreads
    buf = cuda.shared.array(16, dtype=np.float64)
    other = cuda.shared.array(16, dtype=np.float64)  # another line: another array
    t = cuda.threadIdx.x
    if t >= active:
        return
    buf[t] = x[cuda.blockIdx.x, t]
    other[t] = -1.0
    cuda.syncthreads()
    step = 1
    while step < active:
        if t % (2 * step) == 0 and t + step < active:
            buf[t] += buf[t + step]
        cuda.syncthreads()
        step *= 2
    if t == 0:
        out[cuda.blockIdx.x] = buf[0] + 0.0 * other[0]


def test_syncthreads_releases_the_live_threads_of_each_block():
    x = np.arange(3 * 16, dtype=np.float64).reshape(3, 16)
    out = np.zeros(3)
    block_sums[3, 16](x, out, 16)
    np.testing.assert_array_equal(out, x.sum(axis=1))
    block_sums[3, 16](x, out, 11)  # 5 threads per block return first: the others still go on
    np.testing.assert_array_equal(out, x[:, :11].sum(axis=1))


@cuda.jit
def fails_in_one_thread(out):
    t = cuda.threadIdx.x
    cuda.syncthreads()
    if t == 3:
        out[100] = 1.0  # out of bounds
    cuda.syncthreads()
    out[t] = t


def test_an_exception_in_a_thread_reaches_the_caller_naming_the_thread():
    with pytest.raises(IndexError, match=r"tid=\[3, 0, 0\] ctaid=\[0, 0, 0\]: index 100 is out of bounds"):
        fails_in_one_thread[2, 8](np.zeros(8))
    out = np.zeros(8)  # and the simulator runs the next kernel as usual
    block_sums[1, 16](np.ones((1, 16)), out, 16)
    assert out[0] == 16.0
