"""Pre-bound kernel launches: marshal a numba kernel's arguments once, launch many times.

A numba-cuda launch re-types and re-marshals every argument on each call (tens
of microseconds for a kernel with twenty arguments), which dominates a DE
generation that runs for a few microseconds on the GPU. :class:`PreboundLaunch`
compiles the kernel for the given arguments, marshals them once into a
``void**`` parameter array exactly as numba would, and launches through
``cuLaunchKernel``; scalar arguments that change between launches (the
generation number) are updated in place.

On numba's simulator, or if the binding is not usable, it falls back to the
ordinary numba launch (``PreboundLaunch.fast`` tells which path is in use).
Kernels that synchronise the whole grid (``cuda.cg.this_grid().sync()``) are launched
cooperatively (``cuLaunchCooperativeKernel``), as numba launches them.
"""

from __future__ import annotations

import ctypes


class PreboundLaunch:
    """``launch(**updates)`` launches ``dispatcher[grid, block, stream](*args)``.

    Parameters
    ----------
    dispatcher : numba.cuda kernel
    args : tuple
        All kernel arguments (device arrays and scalars).
    grid : int or (int, int)
        Blocks in x, or in (x, y) (y: the trials of a batch).
    block : int
    stream : numba.cuda stream
    variable : dict of str to int
        Names for the positions (in ``args``) of scalar arguments that ``launch`` may update.
    sharedmem : int
        Bytes of dynamic shared memory a block (above 48 KB, the kernel is opted in first).
    """

    def __init__(self, dispatcher, args, grid, block, stream, variable=None, sharedmem: int = 0):
        self.dispatcher, self.args = dispatcher, list(args)
        gx, gy = grid if isinstance(grid, tuple) else (grid, 1)
        self.grid, self.block, self.stream = (int(gx), int(gy)), int(block), stream
        self.variable = dict(variable or {})
        self.sharedmem = int(sharedmem)
        self.fast = False
        if self.sharedmem > 0:
            allow_dynamic_shared(dispatcher, self.args, self.sharedmem)
        try:
            self._bind()
            self.fast = True
        except Exception as exc:  # simulator, or a numba/cuda-python without these internals
            self.fallback_reason = f"{type(exc).__name__}: {exc}"

    def _bind(self):
        from cuda.bindings import driver as cu

        from .gpu_runtime import simulator_enabled

        if simulator_enabled():
            raise RuntimeError("numba CUDA simulator")
        sig = tuple(self.dispatcher.typeof_pyval(a) for a in self.args)
        kernel = self.dispatcher.compile(sig)
        kernelargs, retr, first = [], [], []
        for ty, val in zip(kernel.argument_types, self.args):
            first.append(len(kernelargs))
            kernel._prepare_args(ty, val, self.stream, retr, kernelargs)
        if retr:
            raise RuntimeError("host arrays need copy-back; pass device arrays")
        # every marshalled value needs its own storage: ctypes scalars as they are, Python ints
        # (pointers, sizes, shapes, strides) as 64-bit integers (numba passes them as intptr_t)
        self._store = [a if isinstance(a, ctypes._SimpleCData) else ctypes.c_int64(int(a))
                       for a in kernelargs]
        self._params = (ctypes.c_void_p * len(self._store))(
            *[ctypes.addressof(c) for c in self._store])
        self._slot = {name: first[pos] for name, pos in self.variable.items()}
        self._cu = cu
        self._func = cu.CUfunction(int(kernel._codelibrary.get_cufunc().handle))
        self._hstream = cu.CUstream(int(self.stream.handle))
        self.cooperative = bool(getattr(kernel, "cooperative", False))

    def replace(self, old, new):
        """Pass the array ``new`` wherever ``old`` was passed (e.g. a buffer that grew); the
        arguments are marshalled again. Nothing happens if ``old`` is not an argument."""
        if not any(a is old for a in self.args):
            return
        self.args = [new if a is old else a for a in self.args]
        if self.fast:
            values = {name: self._store[slot].value for name, slot in self._slot.items()}
            self._bind()
            for name, value in values.items():  # the variable scalars as last set
                self._store[self._slot[name]].value = value

    def launch(self, **updates):
        if not self.fast:
            for name, value in updates.items():
                self.args[self.variable[name]] = value
            self.dispatcher[self.grid, self.block, self.stream, self.sharedmem](*self.args)
            return
        for name, value in updates.items():
            self._store[self._slot[name]].value = value
        try:
            if self.cooperative:
                (err,) = self._cu.cuLaunchCooperativeKernel(self._func, *self.grid, 1, self.block, 1, 1, self.sharedmem,
                                                            self._hstream, ctypes.addressof(self._params))
            else:
                (err,) = self._cu.cuLaunchKernel(self._func, *self.grid, 1, self.block, 1, 1, self.sharedmem,
                                                 self._hstream, ctypes.addressof(self._params), 0)
        except TypeError as exc:  # the binding refused the arguments: nothing was launched
            self.fast, self.fallback_reason = False, f"TypeError: {exc}"
            self.launch(**updates)
            return
        if err != self._cu.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"cuLaunchKernel failed: {err}")


def allow_dynamic_shared(dispatcher, args, nbytes: int) -> None:
    """Let ``dispatcher`` (compiled for ``args``) take ``nbytes`` of dynamic shared memory a block: a kernel
    whose static and dynamic shared memory pass 48 KB needs the opt-in
    (``CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES``), set on the library kernel numba-cuda loads
    (``cuKernelSetAttribute``) or, on an older loader, the function. Nothing to do on numba's simulator."""
    from .gpu_runtime import simulator_enabled

    if nbytes <= 0 or simulator_enabled():
        return
    from numba.cuda.cudadrv.driver import binding, driver

    sig = tuple(dispatcher.typeof_pyval(a) for a in args)
    cufunc = dispatcher.compile(sig)._codelibrary.get_cufunc()
    attr = binding.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
    try:
        driver.cuKernelSetAttribute(attr, nbytes, cufunc.handle, cufunc.device.id)
    except Exception:
        driver.cuFuncSetAttribute(cufunc.handle, attr, nbytes)


class PreboundCopy:
    """``copy(rows)`` copies the first ``rows`` rows (axis 0) of ``host`` to ``device``
    (``to_device=True``) or back, asynchronously on ``stream``, through ``cuMemcpyHtoDAsync`` /
    ``cuMemcpyDtoHAsync`` on pointers taken once (numba's ``copy_to_device`` re-checks and re-wraps
    both arrays on every call: tens of microseconds where the copy itself takes a few). ``host``
    should be pinned (``cuda.pinned_array``) for the copy to be asynchronous. On numba's simulator,
    or if the binding is not usable, numba's copies (``fast`` tells which)."""

    def __init__(self, device, host, stream, to_device: bool):
        if device.shape != host.shape or device.dtype != host.dtype:
            raise ValueError(f"device {device.shape} {device.dtype} and host {host.shape} {host.dtype} differ")
        self.device, self.host, self.stream, self.to_device = device, host, stream, bool(to_device)
        self.row_bytes = host.nbytes // max(1, host.shape[0]) if host.ndim else host.nbytes
        self.fast = False
        try:
            from cuda.bindings import driver as cu

            from .gpu_runtime import simulator_enabled

            if simulator_enabled():
                raise RuntimeError("numba CUDA simulator")
            if not (host.flags.c_contiguous and device.is_c_contiguous()):
                raise RuntimeError("not contiguous")
            self._cu = cu
            self._dptr = cu.CUdeviceptr(int(device.device_ctypes_pointer.value))
            self._hptr = int(host.ctypes.data)
            self._hstream = cu.CUstream(int(stream.handle))
            self.fast = True
        except Exception as exc:
            self.fallback_reason = f"{type(exc).__name__}: {exc}"

    def copy(self, rows: int | None = None):
        rows = self.host.shape[0] if rows is None else int(rows)
        if not self.fast:
            if self.to_device:
                self.device[:rows].copy_to_device(self.host[:rows], stream=self.stream)
            else:
                self.device[:rows].copy_to_host(self.host[:rows], stream=self.stream)
            return
        nbytes = rows * self.row_bytes
        try:
            if self.to_device:
                (err,) = self._cu.cuMemcpyHtoDAsync(self._dptr, self._hptr, nbytes, self._hstream)
            else:
                (err,) = self._cu.cuMemcpyDtoHAsync(self._hptr, self._dptr, nbytes, self._hstream)
        except TypeError as exc:  # the binding refused the arguments: nothing was copied
            self.fast, self.fallback_reason = False, f"TypeError: {exc}"
            self.copy(rows)
            return
        if err != self._cu.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"cuMemcpy{'HtoD' if self.to_device else 'DtoH'}Async failed: {err}")
