"""A faster scheduler for numba-cuda's CUDA simulator (tests only; the kernels and their semantics
are untouched).

The simulator runs each CUDA thread of a block as a Python thread, and its BlockManager finds out
that all threads of a block wait in ``syncthreads`` by polling every thread in a loop: that loop
competes for the GIL with the threads doing the work, and it was a third of the CPU time of the
simulator tests. Here each thread tells its block's manager when it waits or ends, and the manager
sleeps on a condition until then: the same rule (release the block when every live thread waits in
``syncthreads``; re-raise a thread's exception after telling the others to abort) without the busy
loop. ``cuda.shared.array`` also identified its allocation site with ``traceback.extract_stack``
(reading source lines from disk at every call); the caller's file and line come from its frame, and
the first allocation at a site is made atomically (the stock check-then-set could give two threads
of a block two different arrays).

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

    class BlockThread(kernel.BlockThread):
        def run(self):
            try:
                super().run()  # records an exception in self.exception
            finally:
                manager = self._manager
                with manager.changed:
                    manager.live -= 1
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

    class BlockManager(kernel.BlockManager):
        _gpude_fast = True

        def run(self, grid_point, *args):
            self.changed = threading.Condition()
            self.live = self.blocked = 0
            threads = []

            def target():
                self._f(*args)

            with self.changed:  # no thread reports before all are counted
                for block_point in np.ndindex(*self._block_dim):
                    t = BlockThread(target, self, grid_point, block_point, self._debug)
                    threads.append(t)
                    self.live += 1
                    t.start()
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
                t.join()
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
    kernel.BlockThread = BlockThread
    kernel.BlockManager = BlockManager
    kernelapi.FakeCUDAShared.array = shared_array
