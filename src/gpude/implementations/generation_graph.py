"""Generations replayed as a CUDA graph: the host launches ``span`` generations with one call.

A generation of ``all_gpu`` is five kernel launches that each run for microseconds at small NP;
from Python each launch costs the host microseconds too (and the run loop's own bookkeeping more),
so the host, not the GPU, sets the pace. A CUDA graph captures ``span`` consecutive generations'
launches once (stream capture of the pre-bound launches, :mod:`gpude.core.prebound`) and replays them
with one ``cuGraphLaunch``: the GPU runs the same kernels, one per operator, in the same order,
and the host pays one call per ``span`` generations.

A graph's kernel arguments are fixed when it is captured, so the kernels cannot take the
generation number as a plain argument. They take ``base`` (a one-element device array) and an
offset ``k`` and work on generation ``base[0] + k``; the graph holds the launches of offsets
``1 .. span`` followed by a kernel that adds ``span`` to ``base``, so each replay runs the next
``span`` generations. Generations launched one at a time (the last, partial one; a graph that
could not be made) pass ``k = g - base`` with the host's copy of ``base``
(:meth:`GenerationGraph.offset`).

On numba's CUDA simulator, or where capture fails (the reason is kept in ``fallback_reason``), a
replay enqueues the same launches one by one, with the same arguments, and the same advance of
``base``: the trajectory is the graph's, only the host's cost differs. ``captured`` says which.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from ..core.prebound import PreboundLaunch


@cuda.jit(cache=True)
def _add_to_base(base, step):
    """``base[0] += step`` (one thread): the last node of a graph."""
    if cuda.grid(1) == 0:
        base[0] += step


@cuda.jit(cache=True)
def _set_base(base, value):
    if cuda.grid(1) == 0:
        base[0] = value


class GenerationGraph:
    """``span`` generations' launches, captured once and replayed.

    Parameters
    ----------
    stream : numba.cuda stream
        The stream the generations run on.
    span : int
        Generations per replay (1: every generation launched on its own, nothing captured).
    record : callable
        ``record(k)`` enqueues the launches of the generation at offset ``k`` from ``base`` (a
        full generation), through :class:`~gpude.core.prebound.PreboundLaunch` objects, which stream
        capture can record; :meth:`set_capturable` says whether they are.
    """

    def __init__(self, stream, span: int, record):
        self.stream, self.span, self.record = stream, int(span), record
        self.d_base = cuda.device_array(1, dtype=np.int64)
        self.base = 0  # the host's copy of d_base, as the enqueued work leaves it
        self._advance = PreboundLaunch(_add_to_base, (self.d_base, self.span), 1, 1, stream)
        self._exec = self._graph = None
        self.captured = False
        self.fallback_reason = None if self._advance.fast else self._advance.fallback_reason

    def set_capturable(self, prebound: bool):
        """Whether ``record``'s launches are all pre-bound driver launches (``PreboundLaunch.fast``):
        numba's own launch path is not captured, so without them every replay launches one by one."""
        if not prebound and self.fallback_reason is None:
            self.fallback_reason = "the generation's launches are not pre-bound"

    def reset(self):
        """Enqueue ``base := 0`` (before a run's first generation)."""
        _set_base[1, 1, self.stream](self.d_base, 0)
        self.base = 0

    def offset(self, g: int) -> int:
        """The ``k`` that makes a kernel work on generation ``g``."""
        return g - self.base

    def replay(self):
        """Enqueue the next ``span`` generations (``base + 1 .. base + span``)."""
        if self._exec is None and self.fallback_reason is None:
            self._capture()
        if self._exec is not None:
            (err,) = self._cu.cuGraphLaunch(self._exec, self._hstream)
            if err != self._cu.CUresult.CUDA_SUCCESS:
                raise RuntimeError(f"cuGraphLaunch failed: {err}")
        else:
            self._enqueue()
        self.base += self.span

    def invalidate(self):
        """Forget the captured graph (the launches were re-bound, e.g. to a longer trace); the
        next replay captures again."""
        if self._exec is not None:
            self._cu.cuGraphExecDestroy(self._exec)
            self._cu.cuGraphDestroy(self._graph)
        self._exec = self._graph = None

    def __del__(self):  # a runner re-allocated for another batch size drops its old graph
        try:
            self.invalidate()
        except Exception:  # interpreter shutdown, or the context already gone
            pass

    def _enqueue(self):
        for k in range(1, self.span + 1):
            self.record(k)
        self._advance.launch()

    def _capture(self):
        """Record :meth:`_enqueue` on the stream into a graph; on failure, keep launching one by one."""
        from cuda.bindings import driver as cu

        self._cu, self._hstream = cu, cu.CUstream(int(self.stream.handle))
        (err,) = cu.cuStreamBeginCapture(self._hstream, cu.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_RELAXED)
        if err != cu.CUresult.CUDA_SUCCESS:
            self.fallback_reason = f"cuStreamBeginCapture: {err}"
            return
        try:
            self._enqueue()
        except Exception as exc:  # a launch refused during capture: end it, launch one by one
            cu.cuStreamEndCapture(self._hstream)
            self.fallback_reason = f"{type(exc).__name__} during capture: {exc}"
            return
        err, graph = cu.cuStreamEndCapture(self._hstream)
        if err != cu.CUresult.CUDA_SUCCESS:
            self.fallback_reason = f"cuStreamEndCapture: {err}"
            return
        err, graph_exec = cu.cuGraphInstantiate(graph, 0)
        if err != cu.CUresult.CUDA_SUCCESS:
            cu.cuGraphDestroy(graph)
            self.fallback_reason = f"cuGraphInstantiate: {err}"
            return
        self._graph, self._exec, self.captured = graph, graph_exec, True
