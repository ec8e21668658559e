"""The simulator scheduler of tests/_fast_simulator.py keeps the stock simulator's rules: a block is
released from syncthreads when every live thread waits there (threads that returned early do not
count), a thread's exception reaches the caller naming the thread, and shared arrays are told
apart by the line that allocates them."""

import os

import numpy as np
import pytest
from _fast_simulator import install
from numba import cuda

# the same tests pass on the stock simulator (GPUDE_TEST_STOCK_SIMULATOR=1): the rules are its own,
# except its shared-array allocation race, fixed here
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


@cuda.jit
def broadcast(out):
    # thread 0 writes a shared value; after syncthreads every thread must read it
    value = cuda.shared.array(1, dtype=np.int64)
    if cuda.threadIdx.x == 0:
        value[0] = 42 + cuda.blockIdx.x
    cuda.syncthreads()
    out[cuda.blockIdx.x, cuda.threadIdx.x] = value[0]


@pytest.mark.skipif(os.environ.get("GPUDE_TEST_STOCK_SIMULATOR") == "1",
                    reason="the stock simulator has this race (check-then-set)")
def test_threads_allocating_a_shared_array_together_get_one_array(monkeypatch):
    # the threads of a block reach the allocation together; a check-then-set gave two of them two
    # arrays now and then (a CI run saw a thread read memory thread 0 never wrote). A lookup that
    # yields to the other threads makes that interleaving certain when it is possible.
    import time

    from numba.cuda.simulator import kernelapi

    class YieldingDict(dict):
        def get(self, *args):
            found = super().get(*args)
            time.sleep(0.001)  # let the other threads of the block look before this one goes on
            return found

    init = kernelapi.FakeCUDAShared.__init__

    def yielding_init(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self._allocations = YieldingDict(self._allocations)

    monkeypatch.setattr(kernelapi.FakeCUDAShared, "__init__", yielding_init)
    out = np.zeros((2, 8), dtype=np.int64)
    broadcast[2, 8](out)
    np.testing.assert_array_equal(out, np.array([[42] * 8, [43] * 8]))


@cuda.jit
def where_am_i(out):
    x, y = cuda.threadIdx.x, cuda.threadIdx.y
    b = cuda.blockIdx.x
    out[b, y, x, 0] = b
    out[b, y, x, 1] = y
    out[b, y, x, 2] = x
    out[b, y, x, 3] = cuda.laneid


@pytest.mark.skipif(os.environ.get("GPUDE_TEST_STOCK_SIMULATOR") == "1", reason="the stock simulator is asked for")
def test_threads_serve_launch_after_launch_each_knowing_its_place():
    import threading

    def launch(blocks, shape):
        out = np.full((blocks, shape[1], shape[0], 4), -1, np.int64)
        where_am_i[blocks, shape](out)
        b, y, x = np.meshgrid(np.arange(blocks), np.arange(shape[1]), np.arange(shape[0]), indexing="ij")
        np.testing.assert_array_equal(out[..., 0], b)
        np.testing.assert_array_equal(out[..., 1], y)
        np.testing.assert_array_equal(out[..., 2], x)
        np.testing.assert_array_equal(out[..., 3], (x + shape[0] * y) % 32)

    launch(2, (8, 5))  # 40 threads a block: lanes wrap at 32
    before = threading.active_count()
    for shape in [(3, 1), (8, 5), (16, 2), (1, 1)] * 5:
        launch(3, shape)
    # the pool grew to the largest block at most, not by a thread per CUDA thread and launch
    assert threading.active_count() <= before + 40
