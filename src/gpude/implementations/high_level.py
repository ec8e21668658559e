"""``high_level``: DE/rand/1/bin written as a person writes it, in plain Python and numpy (no JIT).

Two jobs:

* the readable specification of the suite's DE (:mod:`gpude.algorithms.de` states the rules; here
  they are one short method each, in the order a generation applies them);
* Krömer et al.'s "CPU" column: "a simple CPU implementation (high level object oriented C++
  code)", beside the "optimized CPU implementation (low level C code)", which is ``de/sequential``.

It makes the same random decisions as every other implementation (each at its fixed slot of
:mod:`gpude.core.rng`) and the same arithmetic as ``de/sequential`` (explicit FMAs, in numpy:
:func:`gpude.core.fma.fma_numpy`), and evaluates with the problem's own CPU evaluator, so a seed gives
``de/sequential``'s run, bit for bit: population, errors and FEs. Only the time differs: a loop over
the individuals in Python, numpy over the coordinates.
"""

from __future__ import annotations

import numpy as np

from ..algorithms.de import BEST1, CLIP, CURRENT_TO_BEST1, EXP, RAND1, RESAMPLE
from ..core.fma import fma_numpy
from ..core.rng import uniforms
from .base import HostLoopImplementation
from .sequential import OneThreadEvaluation


class RandomSlots:
    """The run's random numbers, by decision: slot ``s`` of individual ``i`` in generation ``g``
    (generation 0 is the initialisation). Layout of :mod:`gpude.algorithms.de`: slots 0-2 pick r1,
    r2, r3, slot 3 j_rand, slot 4 + j coordinate j's crossover draw, slot 4 + D + j its repair (and
    its initial value in generation 0)."""

    def __init__(self, key, popsize: int, dim: int):
        self.key, self.popsize, self.dim = key, popsize, dim

    def of_individual(self, g: int, i: int) -> np.ndarray:
        """All 4 + 2D uniforms in [0, 1) of individual i in generation g, indexed by slot."""
        per_individual = 4 + 2 * self.dim
        first = (g * self.popsize + i) * per_individual
        return uniforms(self.key, first + np.arange(per_individual))


def below(u: float, n: int) -> int:
    """A uniform integer in [0, n) from a uniform u in [0, 1) (gpude.core.rng's ``below``)."""
    return min(int(u * n), n - 1)


class HighLevel(OneThreadEvaluation, HostLoopImplementation):
    """DE/rand/1/bin (and the other mutations and crossovers of :mod:`gpude.algorithms.de`) on one
    CPU thread, in Python: the population a numpy array, a loop over the targets."""

    name = "high_level"
    device = "cpu"
    variants = "all"

    def setup(self):
        self.setup_evaluator()

    def evaluated(self, X: np.ndarray) -> np.ndarray:
        errors = np.empty(X.shape[0], dtype=self.dtype)
        self.evaluate(np.ascontiguousarray(X, dtype=self.dtype), errors)
        return errors

    # --- the run: initialisation, then generations --------------------------------------------------

    def initialize(self, key):
        """NP points uniform in the box: x_ij = lower + u (upper - lower), in float64, then cast."""
        self.random = RandomSlots(key, self.popsize, self.dim)
        D = self.dim
        self.pop = np.empty((self.popsize, D), dtype=self.dtype)
        for i in range(self.popsize):
            u = self.random.of_individual(0, i)[4 + D:]
            self.pop[i] = fma_numpy(u, self.upper - self.lower, self.lower)
        self.fit = self.evaluated(self.pop)
        return self.fit.min()

    def generation(self, key, g, n):
        """Trials of the first n targets, all evaluated, then each replaces its target if not worse
        (generational replacement: every trial is built from the population the generation starts
        from)."""
        best = self.best_index() if self.params.mutation_code != RAND1 else 0
        trials = np.array([self.trial(g, i, best) for i in range(n)], dtype=self.dtype)
        trial_errors = self.evaluated(trials)
        for i in range(n):
            if trial_errors[i] <= self.fit[i]:
                self.pop[i] = trials[i]
                self.fit[i] = trial_errors[i]
        return self.fit.min()

    # --- one trial vector ------------------------------------------------------------------------------

    def trial(self, g: int, i: int, best: int) -> np.ndarray:
        """The target with the coordinates that the crossover takes from the mutant replaced by
        the mutant's (repaired where outside the box)."""
        u = self.random.of_individual(g, i)
        r1, r2, r3 = self.partners(i, u)
        j_rand = below(u[3], self.dim)
        takes = np.flatnonzero(self.crossover_mask(u, j_rand))
        trial = self.pop[i].copy()
        mutant = self.mutant(takes, i, best, r1, r2, r3)
        trial[takes] = self.repaired(mutant, trial[takes], u[4 + self.dim:][takes])
        return trial

    def partners(self, i: int, u: np.ndarray) -> tuple[int, int, int]:
        """r1, r2, r3: mutually distinct and not i, each uniform among the indices still allowed."""
        chosen = [i]
        for slot in range(3):
            r = below(u[slot], self.popsize - len(chosen))
            for taken in sorted(chosen):  # step over the excluded indices in increasing order
                if r >= taken:
                    r += 1
            chosen.append(r)
        return chosen[1], chosen[2], chosen[3]

    def mutant(self, coordinates: np.ndarray, i: int, best: int, r1: int, r2: int, r3: int) -> np.ndarray:
        """The mutant's components at ``coordinates``. rand1: x_r1 + F (x_r2 - x_r3); best1:
        x_best + F (x_r1 - x_r2); current_to_best1: x_i + F (x_best - x_i) + F (x_r1 - x_r2); each
        multiply-add rounded once."""
        T = self.dtype
        F = T(self.params.F)

        def x(r):
            return self.pop[r, coordinates]

        mutation = self.params.mutation_code
        if mutation == BEST1:
            return fma_numpy(F, x(r1) - x(r2), x(best), T)
        if mutation == CURRENT_TO_BEST1:
            return fma_numpy(F, x(r1) - x(r2), fma_numpy(F, x(best) - x(i), x(i), T), T)
        return fma_numpy(F, x(r2) - x(r3), x(r1), T)

    def crossover_mask(self, u: np.ndarray, j_rand: int) -> np.ndarray:
        """Which coordinates the trial takes from the mutant. Binomial: u_j < CR, and j_rand always.
        Exponential: L consecutive coordinates from j_rand (cyclically), L = 1 plus one per draw
        below CR (slots 4, 5, ...), at most D."""
        D, CR = self.dim, self.params.CR
        crossover_draws = u[4:4 + D]
        if self.params.crossover_code == EXP:
            length = 1
            while length < D and crossover_draws[length - 1] < CR:
                length += 1
            return (np.arange(D) - j_rand) % D < length
        takes = crossover_draws < CR
        takes[j_rand] = True
        return takes

    def repaired(self, mutant: np.ndarray, target: np.ndarray, repair_draws: np.ndarray) -> np.ndarray:
        """Mutant components (``target``: the target's, ``repair_draws``: their slots 4 + D + j) with
        those outside the box repaired (:data:`gpude.algorithms.de.
        BOUND_MODES`): resampled uniformly (the default), clipped, or halfway to the target's."""
        T = self.dtype
        lo, hi = T(self.lower), T(self.upper)
        inside = (lo <= mutant) & (mutant <= hi)  # False for NaN
        mode = self.params.bound_mode
        if mode == RESAMPLE:
            fixed = fma_numpy(repair_draws, self.upper - self.lower, self.lower).astype(T)
        elif mode == CLIP:
            fixed = np.where(mutant < lo, lo, hi)
        else:  # MIDPOINT
            fixed = np.where(mutant < lo, (lo + target) * T(0.5), (hi + target) * T(0.5))
        return np.where(inside, mutant, fixed)

    def best_index(self) -> int:
        """The best target of the population (lowest index on ties, as every implementation)."""
        best = 0
        for k in range(1, self.popsize):
            if self.fit[k] < self.fit[best]:
                best = k
        return best

    # --- what the driver reads after a run ---------------------------------------------------------

    def best_vector(self):
        return self.pop[int(np.argmin(self.fit))].copy()

    def population(self):
        """Copies of the final population and errors of the last run."""
        return self.pop.copy(), self.fit.astype(np.float64)
