"""Run loop of the implementations whose population stays on the GPU (all_gpu, ide, cudade, fpde, cujde).

**Trials per launch.** The kernels carry a trial dimension (``blockIdx.y`` or a slice of the flat
index): ``run_batch(seeds)`` advances B trials together, one launch per operator per generation
for all of them, each trial with its own key, population, trace and hit flag, so each makes
exactly the decisions it makes alone. ``run(seed)`` is a batch of one. A generation of a small
population is launch-bound (tens of microseconds on the host, microseconds on the GPU), so a
batch of 30 costs little more than one trial.

**Stopping.** The "solution found" test runs on the GPU: the kernel that finishes generation g
does ``atomic.min(hit_gen[b], g)`` for every individual of trial b whose error is <= target (the
first such write also counts the trial in ``hit_gen[B]``), and records the generation's best in a
device-side trace with ``atomic.min``. After each generation, a second stream waits for the
generation's event and copies ``hit_gen`` into pinned host memory asynchronously; the host looks
at that copy before enqueuing the next generation, notes when it first sees each trial's hit,
and stops once every trial has hit (or the budget is spent). Kernels of a trial's generations
after its hit return at once, so its result is exactly its state at the end of generation
``hit_gen[b]``.

**Time.** ``wall_time_s`` of a trial in a batch is its fair share of the batch's wall time: while
k trials are still running, each is charged 1/k of the elapsed time; a trial stops being charged
when the host sees its hit. The shares of a batch add up to the batch's wall time, and a batch of
one is charged all of it. ``time_to_target_s`` is the same share, up to the moment the host saw
the hit (a few generations after it happened, at most the depth of the launch queue).

**Wall-clock budget** (``max_time_s``). The host compares its clock with the budget before it
enqueues each generation, without waiting for the GPU; so that the GPU never lags far behind the
host's clock, every poll records an event and the host waits for the event of the generation
:data:`MAX_AHEAD` generations back (it returns at once when the GPU keeps up). A run therefore
overruns its budget by at most the GPU time of ``MAX_AHEAD + 1`` generations, and the result
records the FEs the budget bought. In a batch every trial gets the same budget, concurrently
(not a 1/B share): a trial's ``wall_time_s`` is the wall time it ran, i.e. the batch's (or
until its hit was seen). Per-generation times in the trace come from those events (GPU time at
the polled generations, interpolated linearly in between).

**Graphs** (``graph_generations`` of ``all_gpu`` and ``many_threaded``). An implementation whose
``allocate`` sets ``self.graph`` (:mod:`gpude.implementations.generation_graph`) has its full
generations enqueued ``graph.span`` at a time, as one CUDA graph replay; a last partial generation, and any the budget
leaves fewer than a span of, are launched one by one. The host polls the hit flags after each
replay, checks its clock before each, and so stops (or sees a hit) at most a span later than it
would otherwise; the kernels of a trial's generations after its hit return at once, as without graphs.

FEs follow from the generation count (NP per generation, fewer in a last generation that would
overrun the budget), so they never exceed max_fes.

**Trace memory.** A run with a fixed budget allocates its device trace for every generation
``max_fes`` allows. A time-budgeted run does not know how many generations it will
make, and its ``max_fes`` is only a cap (possibly far out of reach), so its trace starts at
:data:`TRACE_CHUNK` generations per trial and doubles whenever the host is about to enqueue a
generation past its end: a kernel on the compute stream copies it into a buffer twice as long
(the rest +inf, as the reset leaves it) and the launches bound to the old buffer are re-bound to
the new one (:meth:`PreboundLaunch.replace`). The values written are the same; only where they
live changes.
"""

from __future__ import annotations

import math
import time

import numpy as np
from numba import cuda

from ..core.errors import require_positive_int
from .base import fes_after
from .batched import BatchedImplementation, TrialEnd

NO_HIT = np.iinfo(np.int64).max
#: under a wall-clock budget, the host runs at most this many generations ahead of the GPU
MAX_AHEAD = 4
#: generations of device trace per trial a time-budgeted run starts with (it doubles on demand)
TRACE_CHUNK = 4096

#: ``graph_generations``' default (all_gpu, many_threaded): the generations per replay that made both
#: faster than single launches where they were timed (results/benchmarks/SUMMARY.md names the device)
GRAPH_GENERATIONS = 32


@cuda.jit(device=True)
def mark_hit(hit_gen, b, g):
    """Trial b reached the target in generation g; the first report of its hit counts it."""
    if cuda.atomic.min(hit_gen, b, g) == NO_HIT:
        cuda.atomic.add(hit_gen, hit_gen.shape[0] - 1, 1)


@cuda.jit(cache=True)
def init_stats_kernel(fit, trace, hit_gen, target):
    """After initialisation: each trial's best error into its trace, and a hit at generation 0.
    ``fit`` is (B, NP); a thread per (trial, individual)."""
    t = cuda.grid(1)
    trials, popsize = fit.shape
    if t < trials * popsize:
        b, i = t // popsize, t % popsize
        cuda.atomic.min(trace, (b, 0), np.float64(fit[b, i]))
        if fit[b, i] <= target:
            mark_hit(hit_gen, b, 0)


@cuda.jit(device=True)
def select_block(pop, fit, trials, tfit, n, g, trace, hit_gen, target, take):
    """Generational replacement of individual ``blockIdx.x`` of trial ``blockIdx.y`` by its whole
    block: the trial vector replaces the parent when not worse; the result goes into the trace and
    the hit flag. ``pop``, ``trials`` are (B, NP, D), ``fit``, ``tfit`` (B, NP), ``trace``
    (B, generations + 1). ``take`` is a 1-element shared array; on return ``take[0]`` says whether
    the trial vector was taken."""
    i, b = cuda.blockIdx.x, cuda.blockIdx.y
    if cuda.threadIdx.x == 0:
        take[0] = 1 if (i < n and tfit[b, i] <= fit[b, i]) else 0
    cuda.syncthreads()
    if take[0] == 1:
        j = cuda.threadIdx.x
        while j < pop.shape[2]:
            pop[b, i, j] = trials[b, i, j]
            j += cuda.blockDim.x
    if cuda.threadIdx.x == 0:
        f = tfit[b, i] if take[0] == 1 else fit[b, i]
        fit[b, i] = f
        cuda.atomic.min(trace, (b, g), np.float64(f))
        if f <= target:
            mark_hit(hit_gen, b, g)


@cuda.jit(cache=True)
def _grow_kernel(old, new):
    """``new`` (B, longer) := ``old`` (B, shorter) followed by +inf."""
    t = cuda.grid(1)
    trials, length = new.shape
    if t < trials * length:
        b, g = t // length, t % length
        new[b, g] = old[b, g] if g < old.shape[1] else math.inf


@cuda.jit(cache=True)
def _reset_kernel(trace, hit_gen):
    t = cuda.grid(1)
    trials, length = trace.shape
    if t < trials * length:
        trace[t // length, t % length] = math.inf
    if t < hit_gen.shape[0]:
        hit_gen[t] = NO_HIT if t < hit_gen.shape[0] - 1 else 0  # the last slot counts the hits


class DeviceLoopImplementation(BatchedImplementation):
    """Subclasses provide ``allocate()`` (arrays for ``self.batch`` trials), ``launch_init()``,
    ``launch_generation(g, n)`` (on ``self.compute``, the trials' keys in ``self.d_keys``; or,
    with a graph made by :meth:`_make_graph`, ``launch_offset(k, n)``) and
    ``final_population(b, last_generation) -> (pop, fit)``, trial b's final device arrays
    of shape (NP, D) and (NP,).

    ``trials_per_launch`` is how many trials a driver (``gpude run``) should hand to
    :meth:`run_batch` at once; ``run_batch`` itself takes any number.
    """

    device = "gpu"
    #: a :class:`~gpude.implementations.generation_graph.GenerationGraph` (set by ``allocate``) when
    #: the implementation's generations can be replayed as a CUDA graph
    graph = None

    def __init__(self, function, params, poll_every: int = 1, trials_per_launch: int = 1):
        super().__init__(function, params)
        require_positive_int("poll_every", poll_every)
        require_positive_int("trials_per_launch", trials_per_launch)
        self.poll_every = poll_every  # generations between two asynchronous flag copies
        self.trials_per_launch = trials_per_launch
        self.prebound = False

    def generation_count(self) -> int:
        """Generations the FE budget allows after the initial population (a trace entry each)."""
        p = self.params
        return math.ceil((p.max_fes - p.popsize) / p.popsize)

    def fes_after_generation(self, generation: int) -> int:
        """FEs used once ``generation`` is complete (generation 0: the initial population)."""
        return fes_after(generation, self.params.popsize, self.params.max_fes)

    def final_best_error(self, trial: int, fit) -> float:
        """Trial ``trial``'s reported error, from its final errors ``fit`` (the population's best)."""
        return float(fit.min())

    def _allocate_common(self, batch):
        p = self.params
        self.max_generations = self.generation_count()
        shape_key = (self.max_generations, self.popsize, batch)
        if getattr(self, "_allocated_for", None) == shape_key:
            return
        # a fixed budget: a trace entry for every generation it allows; a time budget: a first chunk
        timed = p.max_time_s is not None
        length = min(self.max_generations + 1, TRACE_CHUNK) if timed else self.max_generations + 1
        try:
            self._allocate_buffers(batch, length)
        except Exception as exc:
            self._out_of_memory(exc, batch, length)
        self._allocated_for = shape_key

    def _out_of_memory(self, exc, batch, length):
        """Raise GPUOutOfMemoryError naming the sizes, if ``exc`` is the GPU running out of memory."""
        from ..core.errors import GPUOutOfMemoryError, is_out_of_memory

        if not is_out_of_memory(exc):
            raise exc
        B, NP, D, width = batch, self.popsize, self.dim, np.dtype(self.dtype).itemsize
        population = 3 * B * NP * D * width  # population, trial vectors and one more of each (mutants, ...)
        trace = B * length * 8
        what = ("grown to" if self.params.max_time_s is not None else "max_fes / NP =")
        raise GPUOutOfMemoryError(
            f"the GPU ran out of memory for {B} trial(s) of {self.algorithm}/{self.name} at NP = {NP}, D = {D}: "
            f"about {population / 1e9:.2f} GB of populations and {trace / 1e9:.2f} GB of traces (one float64 "
            f"per generation: {what} {length - 1:,} generations per trial); lower "
            f"trials_per_launch or max_fes (or max_time_s), or use float32") from exc

    def _allocate_buffers(self, batch, trace_length):
        self.batch = batch
        self.compute = cuda.stream()
        self.side = cuda.stream()  # kernel P (ide) and the asynchronous flag copies
        self.d_keys = cuda.device_array(batch, dtype=np.uint64)
        self.h_keys = cuda.pinned_array(batch, dtype=np.uint64)
        self.d_trace = cuda.device_array((batch, trace_length), dtype=np.float64)
        self.d_hit = cuda.device_array(batch + 1, dtype=np.int64)  # per trial, then the count
        self.h_hit = cuda.pinned_array(batch + 1, dtype=np.int64)
        self.generation_done = cuda.event()
        self.allocate()

    def allocate(self) -> None:
        raise NotImplementedError

    def run_trials(self, keys):
        """Run a trial per key, all advanced together (see the module docstring)."""
        p, B = self.params, len(keys)
        self._allocate_common(B)
        self.h_keys[:] = keys
        self.d_keys.copy_to_device(self.h_keys, stream=self.compute)
        n_reset = max(self.d_trace.size, B + 1)
        _reset_kernel[(n_reset + 255) // 256, 256, self.compute](self.d_trace, self.d_hit)
        self.h_hit[:B], self.h_hit[B] = NO_HIT, 0
        self.compute.synchronize()

        timed = p.max_time_s is not None
        deadline = p.max_time_s if timed else math.inf
        marks = []  # timed runs: (generation, event, host seconds) at every poll
        t0 = time.perf_counter()
        start = cuda.event()
        start.record(self.compute)
        seen_at, seen = [None] * B, 0
        out_of_time = False
        self.launch_init()
        if self.graph is not None:
            self.graph.reset()  # base 0, behind the initialisation
        self._poll()
        g, fes = 0, p.popsize
        if timed:
            self._mark(marks, g, t0)
        while fes < p.max_fes:
            if self.h_hit[B] != seen:  # the last copy counts new hits: note when they were seen
                now = time.perf_counter() - t0
                for b in range(B):
                    if seen_at[b] is None and self.h_hit[b] != NO_HIT:
                        seen_at[b], seen = now, seen + 1
                if seen == B:
                    break
            if time.perf_counter() - t0 >= deadline:
                out_of_time = True
                break
            span = self._replay_span(fes)
            if g + span >= self.d_trace.shape[1]:
                self._grow_trace(g + span)
            if span > 1:  # a CUDA graph's generations g+1 .. g+span
                self.graph.replay()
                g, fes = g + span, fes + span * p.popsize
            else:
                g += 1
                n = min(p.popsize, p.max_fes - fes)
                self.launch_generation(g, n)
                fes += n
            if span > 1 or g % self.poll_every == 0:
                self._poll()
                if timed:
                    self._mark(marks, g, t0)
        self.compute.synchronize()
        self.side.synchronize()
        self.d_hit.copy_to_host(self.h_hit)  # the last poll may predate the last generations
        hit_gens = [int(h) for h in self.h_hit[:B]]
        last = [min(g, h) for h in hit_gens]
        fit, best_x, wall, trace_best = self._final_trials(t0, last)
        marks = self._mark_times(marks, start, g, wall) if timed else None
        return self._trial_ends(fit, best_x, trace_best, last, hit_gens, seen_at, out_of_time, marks), wall

    def _final_trials(self, t0, last):
        """Each trial's final errors and best vector at its last generation ``last[b]`` (on the clock),
        the batch's wall seconds since ``t0``, and the device trace (copied after the clock stops:
        it is instrumentation, not the optimisation)."""
        self._last_generations = last
        fit, best_x = self._final_states(last)
        wall = time.perf_counter() - t0
        return fit, best_x, wall, self.d_trace.copy_to_host()

    def _trial_ends(self, fit, best_x, trace_best, last, hit_gens, ends, out_of_time, marks):
        """Each trial's :class:`~gpude.implementations.batched.TrialEnd` (``ends[b]``: when the host saw
        its stop; ``marks``: as :meth:`_trial_record`'s)."""
        trials = []
        for b in range(len(last)):
            trace, _, stopped_by, hit_fes = self._trial_record(trace_best[b], last[b], hit_gens[b], out_of_time,
                                                               marks)
            trials.append(TrialEnd(self.final_best_error(b, fit[b]), best_x[b], self.fes_after_generation(last[b]),
                                   last[b], trace, stopped_by, hit_fes, ends[b]))
        return trials

    def batch_info(self, batch: int) -> dict:
        return {"options": {**self.run_options(), "trials_per_launch": batch}, "prebound": self.prebound}

    def run_options(self) -> dict:
        """The options a result records (beside ``trials_per_launch``, the batch's size)."""
        options = {"poll_every": self.poll_every}
        if self.graph is not None:
            options["graph_generations"] = self.graph.span
            if self.graph.span > 1:  # replayed as a graph, or (simulator, failed capture) one by one
                options["graph_captured"] = self.graph.captured
        return options

    def _make_graph(self, span: int):
        """Set ``self.graph``: ``span`` generations per replay of the subclass's
        ``launch_offset(k, n)`` (the generation at offset ``k`` from the graph's base, ``n`` trial
        vectors; :mod:`gpude.implementations.generation_graph`). Returns the graph's ``base`` array,
        for the generation kernels' arguments; once they are bound, the caller says whether they
        are all pre-bound (``graph.set_capturable``)."""
        from .generation_graph import GenerationGraph

        self.graph = GenerationGraph(self.compute, span, lambda k: self.launch_offset(k, self.popsize))
        return self.graph.d_base

    def launch_generation(self, g, n):
        """Generation g, for an implementation with a graph (the others define their own)."""
        self.launch_offset(self.graph.offset(g), n)

    def _replay_span(self, fes):
        """Generations the next step of the run loop enqueues: a graph's span when the
        implementation has one and the budget holds that many full generations, else 1."""
        graph, p = self.graph, self.params
        if graph is not None and graph.span > 1 and fes + graph.span * p.popsize <= p.max_fes:
            return graph.span
        return 1

    def _grow_trace(self, g):
        """Make the device trace long enough for generation ``g`` (doubling it), on the compute
        stream, and re-bind the pre-bound launches that write it."""
        old = self.d_trace
        length = old.shape[1]
        while length <= g:
            length *= 2
        length = min(length, self.max_generations + 1)
        try:
            new = cuda.device_array((self.batch, length), dtype=np.float64)
        except Exception as exc:
            self._out_of_memory(exc, self.batch, length)
        n = new.size
        # after the generations enqueued so far (same stream), which write the old buffer
        _grow_kernel[(n + 255) // 256, 256, self.compute](old, new)
        self.compute.synchronize()  # the copy done before the old buffer can be freed (a few times a run)
        self.d_trace = new
        for launch in self._prebound_launches():
            launch.replace(old, new)
        if self.graph is not None:  # its kernels were captured with the old buffer
            self.graph.invalidate()

    def _trial_record(self, trace_best, last, hit_gen, out_of_time, marks=None):
        """A trial's trace up to its last generation ``last``, whether it hit its target (at
        ``hit_gen``), why it stopped and its FEs to the target; ``marks`` = (generations, seconds)
        of a time budget's clock marks, interpolated per generation (None: no times)."""
        gens = np.arange(last + 1)
        times = np.interp(gens, *marks) if marks is not None else np.full(last + 1, np.nan)
        trace = {"generation": gens, "fes": np.array([self.fes_after_generation(k) for k in gens]),
                 "best_error": trace_best[: last + 1], "time_s": times}
        hit = hit_gen != NO_HIT
        stopped_by = "target" if hit else ("time" if out_of_time else "budget")
        return trace, hit, stopped_by, self.fes_after_generation(hit_gen) if hit else None

    def _final_states(self, last):
        """Each trial's errors and best vector (host copies) at its last generation ``last[b]``."""
        fit, best_x = [], []
        for b, g in enumerate(last):
            d_pop, d_fit = self.final_population(b, g)
            fit.append(d_fit.copy_to_host())
            best_x.append(d_pop[int(np.argmin(fit[b]))].copy_to_host())
        return fit, best_x

    def _prebound_launches(self):
        """The :class:`PreboundLaunch` objects this implementation holds (attributes, or lists, tuples
        and dicts of them)."""
        from ..core.prebound import PreboundLaunch

        for value in vars(self).values():
            items = (value.values() if isinstance(value, dict)
                     else value if isinstance(value, (list, tuple)) else [value])
            yield from (x for x in items if isinstance(x, PreboundLaunch))

    def population(self, trial: int = 0):
        """Host copies of the final population and errors of trial ``trial`` of the last batch."""
        d_pop, d_fit = self.final_population(trial, self._last_generations[trial])
        return d_pop.copy_to_host(), d_fit.copy_to_host().astype(np.float64)

    def _mark(self, marks, g, t0):
        """Record an event behind generation g; wait for the one MAX_AHEAD generations back."""
        event = cuda.event()
        event.record(self.compute)
        marks.append((g, event, time.perf_counter() - t0))
        for back_g, back_event, _ in reversed(marks):
            if back_g <= g - MAX_AHEAD:
                back_event.synchronize()  # at once if the GPU keeps up
                break

    @staticmethod
    def _mark_times(marks, start, last_g, wall):
        """(generations, seconds) at which the GPU finished the marked generations, and the end.
        On numba's simulator, which keeps no event times (and runs synchronously), the host's."""
        gens = [m[0] for m in marks] + [last_g]
        times = [start.elapsed_time(e) / 1e3 for _, e, _ in marks]
        if any(t < 0 for t in times):
            times = [m[2] for m in marks]
        times = np.maximum.accumulate(np.array(times + [wall]))
        gens = np.array(gens)
        keep = np.r_[gens[1:] > gens[:-1], True]  # the end may repeat the last mark's generation
        return gens[keep], times[keep]

    def _poll(self):
        """Enqueue the asynchronous copy of the hit flags behind the work enqueued so far."""
        self.generation_done.record(self.compute)
        self.generation_done.wait(self.side)
        self.d_hit.copy_to_host(self.h_hit, stream=self.side)
