"""PSO ``sequential``: the CPU reference of :mod:`gpude.algorithms.pso` on one thread (numba).

Each generation moves the first n particles (n = NP, fewer in a last generation that would
overrun the budget) with the operators of :func:`gpude.algorithms.pso.build_pso_ops`, evaluates
them with the numba CPU evaluator and updates the personal bests. It makes exactly the decisions
of the GPU implementation (:mod:`gpude.implementations.pso_gpu`) for the same seed.
"""

from __future__ import annotations

from functools import cache

import numba
import numpy as np

from ..algorithms.pso import build_pso_ops
from .base import HostLoopImplementation
from .sequential import OneThreadEvaluation


@cache
def build_cpu_pso(dtype):
    ops = build_pso_ops(dtype, "cpu")
    init_position, init_velocity = ops.init_position, ops.init_velocity
    neighbour_best, move = ops.neighbour_best, ops.move
    jit = numba.njit(cache=True, nogil=True)

    @jit
    def init_swarm(x, v, key, lower, upper, span):
        popsize, dim = x.shape
        for i in range(popsize):
            for j in range(dim):
                x[i, j] = init_position(key, i, j, popsize, dim, lower, upper)
                v[i, j] = init_velocity(key, i, j, popsize, dim, span)

    @jit
    def move_swarm(x, v, px, pfit, lbest, key, g, n, w, c1, c2, vclamp, lower, upper, topology, mode):
        popsize, dim = x.shape
        for i in range(n):  # every lbest from the pbest of the end of generation g - 1
            lbest[i] = neighbour_best(pfit, i, popsize, topology)
        for i in range(n):
            lb = lbest[i]
            for j in range(dim):
                x[i, j], v[i, j] = move(key, g, i, j, popsize, dim, x[i, j], v[i, j], px[i, j],
                                        px[lb, j], w, c1, c2, vclamp, lower, upper, mode)

    @jit
    def update_pbest(x, f, px, pfit, n):
        for i in range(n):
            if f[i] <= pfit[i]:  # not worse replaces
                px[i, :] = x[i, :]
                pfit[i] = f[i]
        return pfit.min()

    return init_swarm, move_swarm, update_pbest


class PSOSequential(OneThreadEvaluation, HostLoopImplementation):
    algorithm = "pso"
    name = "sequential"
    device = "cpu"

    def setup(self):
        T, NP, D = self.dtype, self.popsize, self.dim
        self.x = np.empty((NP, D), dtype=T)
        self.v = np.empty((NP, D), dtype=T)
        self.px = np.empty((NP, D), dtype=T)
        self.f = np.empty(NP, dtype=T)
        self.pfit = np.empty(NP, dtype=T)
        self.lbest = np.empty(NP, dtype=np.int64)
        self._init, self._move, self._update = build_cpu_pso(T)
        self.setup_evaluator()

    def initialize(self, key):
        p = self.params
        self._init(self.x, self.v, key, self.lower, self.upper,
                   p.initial_velocity_span(self.lower, self.upper))
        self.evaluate(self.x, self.f)
        self.px[:] = self.x
        self.pfit[:] = self.f
        return self.pfit.min()

    def generation(self, key, g, n):
        p = self.params
        self._move(self.x, self.v, self.px, self.pfit, self.lbest, key, g, n, p.w, p.c1, p.c2,
                   p.velocity_clamp(self.lower, self.upper), self.lower, self.upper,
                   p.topology_code, p.bound_mode)
        self.evaluate(self.x[:n], self.f[:n])
        return self._update(self.x, self.f, self.px, self.pfit, n)

    def population(self):
        """Copies of the final personal bests and their errors of the last run."""
        return self.px.copy(), self.pfit.astype(np.float64)

    def best_vector(self):
        return self.px[int(np.argmin(self.pfit))].copy()
