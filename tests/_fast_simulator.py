"""A faster scheduler for numba-cuda's CUDA simulator (tests only; the kernels and their semantics
are untouched).

The simulator runs each CUDA thread of a block as a Python thread, and its BlockManager finds out
that all threads of a block wait in ``syncthreads`` by polling every thread in a loop: that loop
competes for the GIL with the threads doing the work, and it was a third of the CPU time of the
simulator tests. Here each thread tells its block's manager when it waits or ends, and the manager
sleeps on a condition until then: the same rule (release the block when every live thread waits in
``syncthreads``; re-raise a thread's exception after telling the others to abort) without the busy
loop. The stock manager also starts an OS thread for every CUDA thread of every block of every launch;
here a pool of threads serves launch after launch (half the time of kernels of many short launches,
such as masw/gpu's). ``cuda.shared.array`` also identified its allocation site with
``traceback.extract_stack`` (reading source lines from disk at every call); the caller's file and line
come from its frame, and the first allocation at a site is made atomically (the stock check-then-set
could give two threads of a block two different arrays).

Installed by tests/conftest.py when NUMBA_ENABLE_CUDASIM=1; ``GPUDE_TEST_STOCK_SIMULATOR=1`` keeps
the stock simulator (to compare the two).
"""

from __future__ import annotations

import sys
import threading

import numpy as np


def install() -> None:
    from numba.cuda.simulator import kernel, kernelapi

    if getattr(kernel.BlockManager, "_gpude_fast", False):
        return

    class PooledThread(kernel.BlockThread):
        """A simulated CUDA thread that serves launch after launch: starting an OS thread for every
        CUDA thread of every block was half the simulator's time in kernels of many short launches."""

        def __init__(self):
            threading.Thread.__init__(self, daemon=True)
            self.go = threading.Event()
            self.syncthreads_event = threading.Event()
            self.task = None
            self.start()

        def assign(self, task, manager, blockIdx, threadIdx):
            # the attributes numba's kernelapi reads from threading.current_thread()
            self.task, self._manager, self.debug = task, manager, False
            self.blockIdx, self.threadIdx = kernel.Dim3(*blockIdx), kernel.Dim3(*threadIdx)
            block = kernel.Dim3(*manager._block_dim)
            self.thread_id = self.threadIdx.x + block.x * (self.threadIdx.y + block.y * self.threadIdx.z)
            self.exception, self.abort, self.syncthreads_blocked = None, False, False
            self.syncthreads_event.clear()
            self.go.set()

        def run(self):
            while True:
                self.go.wait()
                self.go.clear()
                try:
                    self.task()
                except Exception as e:  # as the stock BlockThread: the message names the thread
                    where = f"tid={list(self.threadIdx)} ctaid={list(self.blockIdx)}"
                    msg = where if str(e) == "" else f"{where}: {e}"
                    self.exception = (type(e)(msg), sys.exc_info()[2])
                manager, self.task = self._manager, None
                with manager.changed:
                    manager.live -= 1
                    IDLE.append(self)  # before the manager hears of it: it may be taken at once
                    manager.changed.notify()

        def syncthreads(self):
            if self.abort:
                raise RuntimeError("abort flag set on syncthreads call")
            manager = self._manager
            with manager.changed:
                self.syncthreads_blocked = True
                manager.blocked += 1
                manager.changed.notify()
            self.syncthreads_event.wait()
            self.syncthreads_event.clear()
            if self.abort:
                raise RuntimeError("abort flag set on syncthreads clear")

    IDLE: list = []  # list.pop and list.append are atomic under the GIL

    def take():
        try:
            return IDLE.pop()
        except IndexError:
            return PooledThread()

    class BlockManager(kernel.BlockManager):
        _gpude_fast = True

        def run(self, grid_point, *args):
            if self._debug:  # numba's debug wrapper (np.seterr per thread): the stock manager
                return stock_manager.run(self, grid_point, *args)
            self.changed = threading.Condition()
            self.live = self.blocked = 0
            threads = []

            def target():
                self._f(*args)

            with self.changed:  # no thread reports before all are counted
                for block_point in np.ndindex(*self._block_dim):
                    t = take()
                    threads.append(t)
                    self.live += 1
                    t.assign(target, self, grid_point, block_point)
                while self.live:
                    self.changed.wait()
                    failed = next((t for t in threads if t.exception), None)
                    if failed is not None:
                        for other in threads:  # as the stock manager: abort the others, no join
                            other.abort = True
                            other.syncthreads_blocked = False
                            other.syncthreads_event.set()
                        raise failed.exception[0].with_traceback(failed.exception[1])
                    if self.live and self.blocked == self.live:
                        self.blocked = 0
                        for t in threads:
                            if t.syncthreads_blocked:
                                t.syncthreads_blocked = False
                                t.syncthreads_event.set()
            for t in threads:
                if t.exception:
                    raise t.exception[0].with_traceback(t.exception[1])

    def shared_array(self, shape, dtype, alignment=None):
        if alignment is not None or shape == 0:
            return stock_shared_array(self, shape, dtype, alignment)
        if isinstance(dtype, kernelapi.types.Type):
            dtype = kernelapi.numpy_support.as_dtype(dtype)
        frame = sys._getframe(1)
        caller = (frame.f_code.co_filename, frame.f_lineno)  # what extract_stack()[-2][0:2] gave
        res = self._allocations.get(caller)
        if res is None:
            # setdefault is atomic: threads of a block arriving here together get one array (a
            # get-then-set let two threads each make their own, and one read memory never written)
            res = self._allocations.setdefault(caller, np.empty(shape, dtype))
        return res

    stock_shared_array = kernelapi.FakeCUDAShared.array
    stock_manager = kernel.BlockManager
    kernel.BlockManager = BlockManager
    kernelapi.FakeCUDAShared.array = shared_array
