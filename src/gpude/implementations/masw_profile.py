"""Where a MA-SW-Chains run spends its time: the modules of Lastra et al.'s profile (Tables 13-14).

``masw/sequential`` and ``masw/gpu`` take ``profile=True``; the runner then adds the seconds of each
module of the run to ``module_s`` (an attribute of the runner after a run, and the run's
``info["module_s"]``). Off by default; off, nothing of this module runs.

The modules (:data:`MODULES`), as close to the paper's categories as the code allows:

``initial_population``
    The stratified initial population (its random draws included). Our generator is counter-based
    (:mod:`gpude.core.rng`): it has no state to initialise, so the paper's GPU "random number init." has
    no counterpart.
``fitness_evaluation``
    Every evaluation: the initial population, the GA's children, the Solis-Wets candidates (but in
    ``masw/gpu``'s fused local search, where a candidate is evaluated in the kernel that makes it:
    ``solis_wets_with_evaluation``).
``distance``
    The negative assortative mating: the mothers' and candidates' draws, the distances to the
    candidates, the choice of the fathers; and a new chain's distance to the nearest individual.
``random_numbers`` (CPU)
    The BLX draws (one uniform per gene of a child) and the Solis-Wets perturbations (a normal per
    coordinate): drawn into an array apart from their use, so that their time is measured alone.
``crossover`` (CPU)
    BLX-alpha of the parents from those draws, and the BGA mutation.
``crossover_and_random_numbers`` (GPU)
    The crossover kernel, which draws each gene's uniform where it uses it (the paper's
    "Crossover + rand. gen.").
``replacement``
    The (mu + offspring) replacement: the ranking and the entering children's rows.
``crossover_with_evaluation`` (GPU, ``ga_mode="fused"``)
    The crossover kernel that evaluates each child as it makes it.
``solis_wets``
    The individual's change: the candidates (CPU: from the drawn perturbations; GPU, steps mode:
    drawn inside), the bias and x updates, the copies of the individual in and out.
``solis_wets_with_evaluation`` (GPU, fused local search)
    The whole application in one cooperative launch: candidates, their evaluations and updates.
``transfers_to_host`` (GPU)
    The device-to-host reads: the errors after a GA phase, the Solis-Wets state after an
    application, a new chain's distances, the best individual at the end.

What no module names (the host's scalar decisions, the run loop, Python between the calls) is the
run's wall time less the modules' sum: :func:`shares` calls it ``other``.

**Cost.** CPU: two ``time.perf_counter`` calls and a Python call around each compiled call, and the
BLX draws and the Solis-Wets perturbations written to arrays and read back (in the unprofiled run
they are used where drawn): the same numbers, so the same run bit for bit (tested). GPU: the stream
is synchronised after each module's launches, so no module overlaps another or the host's work (the
unprofiled run queues a GA step's launches without waiting): a profiled run is slower, and its shares
are of that slower run.
"""

from __future__ import annotations

import time
from functools import cache

import numba
import numpy as np

from ..algorithms.masw import HEADER_SLOTS, build_masw_ops
from ..algorithms.solis_wets import build_sw_ops
from ..core.fma import fma_for
from .masw_nam import build_nam

#: module id -> what it holds (the module docstring says more)
MODULES = {
    "initial_population": "the stratified initial population (its draws included)",
    "fitness_evaluation": "every evaluation of the initial population, the children and the Solis-Wets candidates",
    "distance": "the NAM parent choice (draws, distances to the candidates, the fathers) and a new chain's "
                "nearest-individual distance",
    "random_numbers": "the BLX uniforms and the Solis-Wets normals, drawn apart from their use",
    "crossover": "BLX-alpha from the drawn uniforms and the BGA mutation",
    "crossover_and_random_numbers": "the crossover kernel, its uniforms drawn inside",
    "crossover_with_evaluation": "the fused GA kernel: crossover, its draws and the children's evaluation",
    "replacement": "the (mu + offspring) replacement",
    "solis_wets": "the Solis-Wets individual change: candidates, bias and x updates, the individual's copies",
    "solis_wets_with_evaluation": "the fused Solis-Wets application: candidates, their evaluation, updates",
    "transfers_to_host": "device-to-host reads (errors, the Solis-Wets state, distances, the best individual)",
}
#: the run's wall time less the modules' sum
OTHER = "other"


class ModuleClock:
    """Seconds per module, summed over a run (``seconds``: module id -> seconds).

    ``wait`` (the GPU runner's stream synchronisation) is called before each reading of the clock,
    so that a module's time includes its queued device work.
    """

    def __init__(self, wait=None):
        self.seconds: dict[str, float] = {}
        self.wait = wait
        self.mark = time.perf_counter()

    def start(self) -> None:
        """Start a module's time here (after waiting for what was queued before it)."""
        if self.wait is not None:
            self.wait()
        self.mark = time.perf_counter()

    def charge(self, module: str) -> None:
        """Add the time since :meth:`start` (or the last charge) to ``module``; the next module's time
        starts now."""
        if self.wait is not None:
            self.wait()
        now = time.perf_counter()
        self.seconds[module] = self.seconds.get(module, 0.0) + (now - self.mark)
        self.mark = now

    def timed(self, module: str, fn):
        """``fn`` with its calls' time charged to ``module`` (a CPU compiled call: nothing queued)."""
        seconds = self.seconds

        def call(*args):
            t0 = time.perf_counter()
            out = fn(*args)
            seconds[module] = seconds.get(module, 0.0) + (time.perf_counter() - t0)
            return out

        return call


class _NoClock:
    """The clock of a run that is not profiled: nothing waits, nothing is timed (and it is false, so
    that ``if clock:`` tells a profiled run)."""

    seconds: dict = {}

    def start(self) -> None:
        pass

    def charge(self, module: str) -> None:
        pass

    def __bool__(self) -> bool:
        return False


NO_CLOCK = _NoClock()


def shares(module_s: dict, wall_s: float) -> dict:
    """Each module's share of ``wall_s`` (fractions), ``other`` the part no module holds (negative if the
    modules' sum exceeds the wall time: the clock's own calls are outside the modules)."""
    out = {m: s / wall_s for m, s in module_s.items()}
    out[OTHER] = (wall_s - sum(module_s.values())) / wall_s
    return out


@cache
def build_cpu_split_kernels(dtype):
    """The CPU GA step and Solis-Wets '+' candidate split by module, for a profiled ``masw/sequential``.

    Returns a dict of numba functions:

    ``nam_parents(pop, k, key, unit0, W, nam, parents)``
        The mother and father of children 0..k-1 (units unit0..) into ``parents``: the loop
        ``make_children`` runs (:func:`gpude.implementations.masw_nam.build_nam`).
    ``blx_draws(key, unit0, k, W, draws)``
        ``draws[c, j]`` = the uniform gene j of child c uses (float64, shape at least (k, D)).
    ``blx_children(pop, children, k, parents, draws, key, unit0, W, alpha, prob, lower, upper)``
        The children from their parents and draws, then the BGA mutation: ``make_children``'s genes.
    ``sw_draws(d, key, unit, W, rho)``
        ``d[j]`` = the step's perturbation of coordinate j (``plus_candidate``'s).
    ``plus_from_draws(x, b, d, cand, lower, upper)``
        The '+' candidate from x, the bias and d (``plus_candidate``'s arithmetic).

    Together they compute what ``make_children`` and ``plus_candidate`` compute, the same numbers
    (BLX's arithmetic is written here again around a drawn uniform: :func:`blx_from_uniform`; the
    tests hold it to ``build_masw_ops(...).blx``).
    """
    ops, sw = build_masw_ops(dtype, "cpu"), build_sw_ops(dtype, "cpu")
    mutation, clip, ctr, uniform = ops.mutation, ops.clip, ops.ctr, ops.uniform
    dif, plus = sw.dif, sw.plus
    blx_from = blx_from_uniform(dtype)
    nam_parents = build_nam(dtype)[1]
    H = HEADER_SLOTS
    jit = numba.njit(cache=True, nogil=True)

    @jit
    def blx_draws(key, unit0, k, W, draws):
        for c in range(k):
            for j in range(draws.shape[1]):
                draws[c, j] = uniform(key, ctr(unit0 + c, H + j, W))

    @jit
    def blx_children(pop, children, k, parents, draws, key, unit0, W, alpha, prob, lower, upper):
        D = pop.shape[1]
        for c in range(k):
            mother, father = parents[c, 0], parents[c, 1]
            for j in range(D):
                children[c, j] = blx_from(draws[c, j], pop[mother, j], pop[father, j], alpha, lower, upper)
            gene, delta = mutation(key, unit0 + c, W, D, prob, lower, upper)
            if gene >= 0:
                children[c, gene] = clip(children[c, gene] + delta, lower, upper)

    @jit
    def sw_draws(d, key, unit, W, rho):
        for j in range(d.shape[0]):
            d[j] = dif(key, ctr(unit, H + 2 * j, W), rho)

    @jit
    def plus_from_draws(x, b, d, cand, lower, upper):
        for j in range(x.shape[0]):
            cand[j] = plus(x[j], b[j], d[j], lower, upper)

    return dict(nam_parents=nam_parents, blx_draws=blx_draws, blx_children=blx_children, sw_draws=sw_draws,
                plus_from_draws=plus_from_draws)


@cache
def blx_from_uniform(dtype):
    """``blx_from(u, a, b, alpha, lower, upper)``: ``build_masw_ops(dtype, "cpu").blx``'s gene from the
    uniform ``u`` it would draw (the same operations in the same order, CPU only)."""
    T = np.dtype(dtype).type
    clip = build_masw_ops(dtype, "cpu").clip
    fma = fma_for("cpu")

    @numba.njit(cache=True, nogil=True)
    def blx_from(u, a, b, alpha, lower, upper):
        lo = np.float64(a) if a < b else np.float64(b)
        hi = np.float64(b) if a < b else np.float64(a)
        span = alpha * (hi - lo)
        start = max(lo - span, lower)
        end = min(hi + span, upper)
        return clip(T(fma(u, end - start, start)), lower, upper)

    return blx_from


def profiled_cpu_kernels(kernels: dict, clock: ModuleClock, dtype, offspring: int, dim: int) -> dict:
    """``masw/sequential``'s kernels (``build_cpu_masw``'s dict, not changed) with each call's time
    charged to its module on ``clock``; ``make_children`` and ``plus_candidate`` replaced by their
    split forms (:func:`build_cpu_split_kernels`), with the same signatures and results."""
    split = build_cpu_split_kernels(dtype)
    draws = np.empty((offspring, dim))  # a GA step's BLX uniforms
    nam_parents = clock.timed("distance", split["nam_parents"])
    blx_draws = clock.timed("random_numbers", split["blx_draws"])
    blx_children = clock.timed("crossover", split["blx_children"])
    sw_draws = clock.timed("random_numbers", split["sw_draws"])
    plus_from_draws = clock.timed("solis_wets", split["plus_from_draws"])

    def make_children(pop, children, k, key, unit0, W, nam, alpha, prob, lower, upper, parents):
        nam_parents(pop, k, key, unit0, W, nam, parents)
        blx_draws(key, unit0, k, W, draws[:k])
        blx_children(pop, children, k, parents, draws, key, unit0, W, alpha, prob, lower, upper)

    def plus_candidate(x, b, d, cand, key, unit, W, rho, lower, upper):
        sw_draws(d, key, unit, W, rho)
        plus_from_draws(x, b, d, cand, lower, upper)

    out = dict(kernels)
    out.update(make_children=make_children, plus_candidate=plus_candidate,
               init_population=clock.timed("initial_population", kernels["init_population"]),
               nearest_distance=clock.timed("distance", kernels["nearest_distance"]),
               minus_candidate=clock.timed("solis_wets", kernels["minus_candidate"]),
               finish_step=clock.timed("solis_wets", kernels["finish_step"]))
    return out
