"""What every implementation shares: the trial result, the trace and the host's run loop.

Nothing here is specific to one algorithm: the loop reads the fields of
:class:`gpude.algorithms.base.RunParams` (popsize, max_fes, target, max_time_s) and calls the
subclass's ``initialize``/``generation``, so DE, jDE, PSO and scatter search plug into the same
loop, budget accounting and trace.

Timing: ``wall_time_s`` runs from the start of initialisation until the best value
is on the host. It excludes JIT compilation (:meth:`Implementation.warmup` compiles
everything first, and :func:`gpude.run_trial` calls it) and process start-up.

Stopping: a run ends at the first of (a) the target reached, (b) the FE budget spent, (c) the
wall-clock budget ``max_time_s`` spent, checked after every generation (so a run may overrun
``max_time_s`` by at most one generation; :attr:`TrialResult.stopped_by` says which).
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..algorithms.base import RunParams
from ..core.rng import seed_key
from ..functions.function import BenchmarkFunction

if TYPE_CHECKING:
    from ..algorithms.de import DEParams


@dataclass
class TrialResult:
    """The outcome of one run.

    Attributes
    ----------
    best_error : float
        Best error found (f(x) - f(x*)).
    best_x : ndarray
        The best individual.
    fes_used : int
        Function evaluations used (initial population included); never more than max_fes.
    generations : int
        Generations after initialisation.
    wall_time_s : float
        Seconds from initialisation until the best value was on the host (no JIT, no start-up).
    hit_target : bool
        Whether the best error reached ``target`` (1e-8 by default).
    fes_to_target, time_to_target_s : int or None, float or None
        FEs used and seconds elapsed when the target was first seen (checked every generation).
    trace : dict of ndarray
        Per generation (0 = initial population): ``generation``, ``fes``, ``best_error`` and
        ``time_s`` (NaN where the implementation does not observe each generation on the host).
    stopped_by : str
        ``"target"``, ``"budget"`` (max_fes) or ``"time"`` (max_time_s).
    """

    algorithm: str
    implementation: str
    function: str
    dim: int
    popsize: int
    seed: int
    params: RunParams
    best_error: float
    best_x: np.ndarray
    fes_used: int
    generations: int
    wall_time_s: float
    hit_target: bool
    fes_to_target: int | None
    time_to_target_s: float | None
    trace: dict = field(repr=False)
    info: dict = field(default_factory=dict, repr=False)
    stopped_by: str = "budget"


def fes_after(generation: int, popsize: int, max_fes: int) -> int:
    """FEs used once ``generation`` is complete (generation 0 = the initial population)."""
    return min(max_fes, popsize * (generation + 1))


def points_trace(points) -> dict:
    """A trace from the (generation, fes, best_error, time_s) points a host loop recorded."""
    gens, fes, best, times = (np.array(v) for v in zip(*points))
    return {"generation": gens, "fes": fes, "best_error": best, "time_s": times}


class Implementation:
    """Base class: holds the problem and parameters; subclasses implement :meth:`run`."""

    algorithm = "de"
    name = ""
    device = "cpu"
    #: True: the implementation fuses the function's formula (``function.program``) into its own
    #: kernels, so it runs the benchmark functions only; False: it calls the problem's evaluators
    #: (:mod:`gpude.problems.base`), so it runs any problem (LOP, scheduling, large-scale functions)
    needs_program = True

    def __init__(self, function: BenchmarkFunction, params: DEParams, **options):
        if options:
            from ..core.errors import InvalidInputError

            raise InvalidInputError(f"{self.algorithm}/{self.name or type(self).__name__} takes no option "
                                    f"{', '.join(sorted(options))}; see `gpude list` and "
                                    f"docs/implementations.md for each implementation's options")
        if self.needs_program and getattr(function, "program", None) is None:
            from ..core.errors import InvalidInputError
            from .registry import entries

            able = [f"{e.algorithm}/{e.implementation}" for e in entries()
                    if e.algorithm == self.algorithm and not e.load(check_device=False).needs_program]
            raise InvalidInputError(
                f"{self.algorithm}/{self.name} fuses a benchmark function's formula into its kernels and "
                f"cannot run {function.fid} ({type(function).__name__}); implementations of {self.algorithm} "
                f"that run any problem: {', '.join(able) or 'none'}")
        self.function = function
        self.params = params
        self.dtype = params.numpy_dtype
        self.popsize, self.dim = params.popsize, function.dim
        self.lower, self.upper = function.lower, function.upper

    def warmup(self) -> None:
        """Compile every kernel by running a short trial of the same shapes."""
        if self.device == "gpu":
            from ..core.gpu_runtime import simulator_enabled

            if simulator_enabled():
                return  # nothing to compile on numba's simulator
        saved = self.params
        self.params = dataclasses.replace(saved, max_fes=self.warmup_evaluations(), max_time_s=None)
        try:
            self.run(0)
        finally:
            self.params = saved

    def warmup_evaluations(self) -> int:
        """The budget of :meth:`warmup`'s trial: enough to reach every kernel (default 3 NP)."""
        return 3 * self.params.popsize

    #: trials a driver should hand to :meth:`run_batch` at once (GPU device loops: an option)
    trials_per_launch = 1

    def run(self, seed: int) -> TrialResult:
        raise NotImplementedError

    def run_batch(self, seeds) -> list[TrialResult]:
        """One trial per seed. Here one after the other; the GPU device loops advance them together."""
        return [self.run(seed) for seed in seeds]

    def _result(self, seed, best_error, best_x, fes_used, generations, wall, hit_fes, hit_time, trace,
                stopped_by=None, **info) -> TrialResult:
        if stopped_by is None:
            stopped_by = "target" if hit_fes is not None else "budget"
        summary = getattr(self.function, "summary", None)  # a problem's own view of the best (after timing)
        if summary is not None and np.isfinite(best_error):
            info["solution"] = summary(np.asarray(best_x, dtype=np.float64))
        return TrialResult(
            algorithm=self.algorithm, implementation=self.name, function=self.function.fid,
            dim=self.dim, popsize=self.popsize, seed=int(seed), params=self.params,
            best_error=float(best_error), best_x=np.asarray(best_x, dtype=np.float64),
            fes_used=int(fes_used), generations=int(generations), wall_time_s=float(wall),
            hit_target=hit_fes is not None, fes_to_target=hit_fes, time_to_target_s=hit_time,
            trace=trace, info=info, stopped_by=stopped_by)


class HostLoopImplementation(Implementation):
    """Implementations whose host sees the best error after every generation.

    Subclasses provide ``initialize(key) -> best``, ``generation(key, g, n) -> best`` and
    ``best_vector()``. ``n`` is the most evaluations the generation may use: normally
    :meth:`evaluations_per_generation`, fewer in a last generation that would overrun the budget.
    A generation that uses another number of evaluations than ``n`` (scatter search's improvement
    step stops early) returns ``(best, used)``.
    """

    def evaluations_per_generation(self) -> int:
        """Evaluations of a full generation (the population size, unless the algorithm says otherwise)."""
        return self.params.popsize

    def run(self, seed: int) -> TrialResult:
        p = self.params
        key = seed_key(seed)
        self.setup()
        gens, fes_list, bests, times = [], [], [], []
        per_generation = self.evaluations_per_generation()
        deadline = math.inf if p.max_time_s is None else p.max_time_s
        t0 = time.perf_counter()
        best = float(self.initialize(key))
        fes, g = min(p.popsize, p.max_fes), 0
        hit_fes = hit_time = None

        def record():
            gens.append(g), fes_list.append(fes), bests.append(best)
            times.append(time.perf_counter() - t0)

        record()
        if best <= p.target:
            hit_fes, hit_time = fes, times[-1]
        while hit_fes is None and fes < p.max_fes and times[-1] < deadline:
            g += 1
            n = min(per_generation, p.max_fes - fes)
            out = self.generation(key, g, n)
            best, used = (float(out[0]), int(out[1])) if isinstance(out, tuple) else (float(out), n)
            fes += used
            record()
            if best <= p.target:
                hit_fes, hit_time = fes, times[-1]
        best_x = self.best_vector()
        wall = time.perf_counter() - t0
        self.teardown()
        trace = {"generation": np.array(gens), "fes": np.array(fes_list),
                 "best_error": np.array(bests), "time_s": np.array(times)}
        stopped_by = "target" if hit_fes is not None else ("budget" if fes >= p.max_fes else "time")
        return self._result(seed, best, best_x, fes, g, wall, hit_fes, hit_time, trace, stopped_by)

    def setup(self) -> None:
        """Allocate per-run state (called before timing starts)."""

    def teardown(self) -> None:
        """Release per-run resources (called after timing ends)."""
