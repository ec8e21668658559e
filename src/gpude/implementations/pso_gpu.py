"""PSO ``gpu``: the swarm stays on the GPU, Mussi et al.'s three kernels per generation.

The layout of libCudaOptimize's PSO (Mussi, Daolio & Cagnoni; Nashed et al., PPSN 2012), with
a trial dimension first in every array so that ``run_batch`` advances B trials together (see
:mod:`gpude.implementations.device_loop`):

1. **move**: a thread per (trial, particle, coordinate), particles i < n. Each thread finds its
   particle's lbest index from the pbest errors (ring: i-1, i, i+1; global: a scan of the NP
   values; the lowest index on ties), then updates its velocity and position coordinate with the
   operator of :func:`gpude.algorithms.pso.build_pso_ops`. Only pbest is read across particles,
   and it is written by kernel 3 only, so the update is synchronous.
2. **evaluate**: the function's population kernel on the positions, a block per (trial, particle)
   (all NP rows; only the first n count in a last partial generation).
3. **pbest**: a block per (particle, trial): the position replaces the personal best when not
   worse (thread 0 decides, the block copies the row), and the pbest error goes into the
   device-side trace (``atomic.min``) and the hit flag (``device_loop.select_block``).

Initialisation: a thread per (trial, particle, coordinate) writes x, v and p = x; the population
kernel evaluates p; ``init_stats_kernel`` records generation 0. The final population of a trial
is its (pbest positions, pbest errors). For a seed it makes exactly the decisions of
:class:`gpude.implementations.pso_sequential.PSOSequential`.
"""

from __future__ import annotations

from functools import cache

import numpy as np
from numba import cuda

from ..algorithms.pso import build_pso_ops
from ..core.prebound import PreboundLaunch
from ..functions import gpu
from .all_gpu import _grid, rows
from .device_loop import DeviceLoopImplementation, init_stats_kernel, select_block


@cache
def build_pso_kernels(dtype):
    """(init, move, pbest) kernels. x, v, px are (B, NP, D), f, pfit (B, NP), keys (B,)."""
    ops = build_pso_ops(dtype, "cuda")
    init_position, init_velocity = ops.init_position, ops.init_velocity
    neighbour_best, move = ops.neighbour_best, ops.move

    @cuda.jit(cache=True)
    def init_kernel(x, v, px, keys, lower, upper, span):
        t = cuda.grid(1)
        trials, popsize, dim = x.shape
        if t < trials * popsize * dim:
            b, i, j = t // (popsize * dim), (t // dim) % popsize, t % dim
            xi = init_position(keys[b], i, j, popsize, dim, lower, upper)
            x[b, i, j] = xi
            px[b, i, j] = xi
            v[b, i, j] = init_velocity(keys[b], i, j, popsize, dim, span)

    @cuda.jit(cache=True)
    def move_kernel(x, v, px, pfit, keys, g, n, w, c1, c2, vclamp, lower, upper, topology, mode,
                    hit_gen):
        t = cuda.grid(1)
        trials, popsize, dim = x.shape
        if t < trials * n * dim:
            b, i, j = t // (n * dim), (t // dim) % n, t % dim
            if hit_gen[b] < g:
                return  # this trial reached the target in an earlier generation
            lb = neighbour_best(pfit[b], i, popsize, topology)
            nx, nv = move(keys[b], g, i, j, popsize, dim, x[b, i, j], v[b, i, j], px[b, i, j],
                          px[b, lb, j], w, c1, c2, vclamp, lower, upper, mode)
            x[b, i, j] = nx
            v[b, i, j] = nv

    @cuda.jit(cache=True)
    def pbest_kernel(x, f, px, pfit, n, g, trace, hit_gen, target):
        # a block per (particle, trial): thread 0 decides, all threads copy the row
        if hit_gen[cuda.blockIdx.y] < g:
            return  # a previous generation of this trial reached the target: keep its state
        take = cuda.shared.array(1, np.int32)
        select_block(px, pfit, x, f, n, g, trace, hit_gen, target, take)

    return init_kernel, move_kernel, pbest_kernel


class PSOGPU(DeviceLoopImplementation):
    algorithm = "pso"
    name = "gpu"

    def allocate(self):
        T, B, NP, D = self.dtype, self.batch, self.popsize, self.dim
        p, s, keys = self.params, self.compute, self.d_keys
        self.fn = gpu.compile_function(self.function.program, T)
        self.k_init, self.k_move, self.k_pbest = build_pso_kernels(T)
        self.d_x = cuda.device_array((B, NP, D), dtype=T)
        self.d_v = cuda.device_array((B, NP, D), dtype=T)
        self.d_px = cuda.device_array((B, NP, D), dtype=T)
        self.d_f = cuda.device_array((B, NP), dtype=T)
        self.d_pfit = cuda.device_array((B, NP), dtype=T)
        vclamp = float(p.velocity_clamp(self.lower, self.upper))
        self.bound = [
            PreboundLaunch(self.k_move, (self.d_x, self.d_v, self.d_px, self.d_pfit, keys, 1, NP,
                                         float(p.w), float(p.c1), float(p.c2), vclamp,
                                         float(self.lower), float(self.upper), p.topology_code,
                                         p.bound_mode, self.d_hit),
                           *_grid(B * NP * D), s, {"g": 5, "n": 6}),
            PreboundLaunch(self.fn.population_kernel, (rows(self.d_x), rows(self.d_f), *self.fn.data),
                           B * NP, self.fn.threads, s),
            PreboundLaunch(self.k_pbest, (self.d_x, self.d_f, self.d_px, self.d_pfit, NP, 1,
                                          self.d_trace, self.d_hit, p.target),
                           (NP, B), self.fn.threads, s, {"n": 4, "g": 5}),
        ]
        self.prebound = all(b.fast for b in self.bound)

    def launch_init(self):
        p, s, B, NP, D = self.params, self.compute, self.batch, self.popsize, self.dim
        self.k_init[_grid(B * NP * D) + (s,)](self.d_x, self.d_v, self.d_px, self.d_keys,
                                              float(self.lower), float(self.upper),
                                              float(p.initial_velocity_span(self.lower, self.upper)))
        self.fn.population_kernel[B * NP, self.fn.threads, s](rows(self.d_px), rows(self.d_pfit),
                                                              *self.fn.data)
        init_stats_kernel[_grid(B * NP) + (s,)](self.d_pfit, self.d_trace, self.d_hit, p.target)

    def launch_generation(self, g, n):
        move, evaluate, pbest = self.bound
        move.launch(g=g, n=n)
        evaluate.launch()
        pbest.launch(n=n, g=g)

    def final_population(self, b, last_generation):
        return self.d_px[b], self.d_pfit[b]
