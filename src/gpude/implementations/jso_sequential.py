"""``jso/sequential`` and ``lshade/sequential``: jSO and L-SHADE on one CPU thread (numba); the reference
the GPU version is checked against.

State (what a GPU version mirrors): ``pop[NP_init, D]`` and ``fit[NP_init]`` (the first NP rows live;
``fit`` holds the raw errors, every comparison goes through the error floor), ``archive[arc_cap0, D]``
(the first A rows live), ``m_f[H]``, ``m_cr[H]`` (float64), the ints ``state = [NP, A, arc_cap, pos]``
and ``p`` (float64), and the best-so-far ``(best, best_x)`` (raw error: the trace and the result).

A generation g (``nfes`` FEs used before it, ``n = min(NP, max_fes - nfes)`` children): ``make_trials``
(ranks, draws and the trial vectors of rows 0..n-1 from the generation-start population and archive),
the evaluation of ``trials[:n]``, then ``select`` (selection in index order with the archive,
the memory update, LPSR). It reports ``(best, n)`` to the host loop, so the trace's FEs are the FEs
used (NP shrinks, so a generation's FEs vary).
"""

from __future__ import annotations

from functools import cache

import numba
import numpy as np

from ..algorithms.jso import build_jso_ops
from .base import HostLoopImplementation
from .sequential import OneThreadEvaluation

NP_, A_, CAP_, POS_ = 0, 1, 2, 3  # the int state's fields


@cache
def build_cpu_jso(dtype):
    ops = build_jso_ops(dtype, "cpu")
    init_value, draw_memory_slot, slot_means = ops.init_value, ops.draw_memory_slot, ops.slot_means
    draw_CR, draw_F, weighted, pick, trial_value = ops.draw_CR, ops.draw_F, ops.weighted, ops.pick, ops.trial_value
    archive_slot, archive_capacity, archive_removal = ops.archive_slot, ops.archive_capacity, ops.archive_removal
    next_popsize, p_at, p_count, clamped = ops.next_popsize, ops.p_at, ops.p_count, ops.clamped
    rank_of, removal_rank, memory_update = ops.rank_of, ops.removal_rank, ops.memory_update
    jit = numba.njit(cache=True, nogil=True)

    @jit
    def init_population(pop, key, lower, upper):
        np_init, dim = pop.shape
        for i in range(np_init):
            for j in range(dim):
                pop[i, j] = init_value(key, i, j, np_init, dim, lower, upper)

    @jit
    def make_trials(pop, fit, archive, trials, Fs, CRs, sorted_idx, m_f, m_cr, state, p, key, g, n, nfes,
                    max_fes, floor, fixed_last, cr_schedule, f_schedule, weighted_F, pbest_not_self,
                    lower, upper):
        np_init, dim = pop.shape
        NP, A = state[NP_], state[A_]
        H = m_f.shape[0]
        p_num = p_count(p, NP)
        for i in range(NP):  # the ranking of the generation-start population (ties by index)
            sorted_idx[rank_of(fit, NP, i, floor)] = i
        for i in range(n):
            r = draw_memory_slot(key, g, i, np_init, dim, H)
            mu_F, mu_CR = slot_means(r, H, m_f, m_cr, fixed_last)
            CR = draw_CR(key, g, i, np_init, dim, mu_CR, nfes, max_fes, cr_schedule)
            F = draw_F(key, g, i, np_init, dim, mu_F, nfes, max_fes, f_schedule)
            Fw = weighted(F, nfes, max_fes, weighted_F)
            Fs[i], CRs[i] = F, CR
            rank_i = rank_of(fit, NP, i, floor)
            pb, r1, r2, jrand = pick(key, g, i, np_init, dim, NP, A, p_num, rank_i, nfes, max_fes,
                                     pbest_not_self)
            b = sorted_idx[pb]
            for j in range(dim):
                x2 = pop[r2, j] if r2 < NP else archive[r2 - NP, j]
                trials[i, j] = trial_value(key, g, i, j, np_init, dim, jrand, F, Fw, CR, pop[i, j],
                                           pop[b, j], pop[r1, j], x2, lower, upper)

    @jit
    def select(pop, fit, archive, trials, tfit, Fs, CRs, s_f, s_cr, delta, m_f, m_cr, state, pstate,
               best_x, key, g, n, nfes_after, max_fes, floor, np_min, arc_rate, averaged, p_max, p_min,
               best):
        np_init, dim = pop.shape
        NP = state[NP_]
        ns = 0
        for i in range(n):  # selection in index order (the archive's replacements are sequential)
            fu, fx = clamped(tfit[i], floor), clamped(fit[i], floor)
            if fu < fx:
                s_f[ns], s_cr[ns], delta[ns] = Fs[i], CRs[i], fx - fu
                ns += 1
                cap = state[CAP_]
                if cap > 1:
                    if state[A_] < cap:
                        k = state[A_]
                        state[A_] += 1
                    else:
                        k = archive_slot(key, g, i, np_init, dim, cap)
                    for j in range(dim):
                        archive[k, j] = pop[i, j]
            if fu <= fx:
                for j in range(dim):
                    pop[i, j] = trials[i, j]
                fit[i] = tfit[i]
            if tfit[i] < best:  # the best so far, on the raw errors
                best = np.float64(tfit[i])
                for j in range(dim):
                    best_x[j] = trials[i, j]
        if ns > 0:
            pos = state[POS_]
            memory_update(m_f, m_cr, pos, s_f, s_cr, delta, ns, averaged)
            state[POS_] = (pos + 1) % m_f.shape[0]
        new_np = next_popsize(NP, nfes_after, np_init, np_min, max_fes)
        if new_np < NP:
            # the NP - new_np worst go (ties: the lower index first), the others keep their order
            drop = NP - new_np
            order = np.empty(NP, dtype=np.int64)  # the removal ranks first: the compaction moves rows
            for i in range(NP):
                order[i] = removal_rank(fit, NP, i, floor)
            w = 0
            for i in range(NP):
                if order[i] >= drop:
                    if w != i:
                        for j in range(dim):
                            pop[w, j] = pop[i, j]
                        fit[w] = fit[i]
                    w += 1
            state[NP_] = new_np
            state[CAP_] = archive_capacity(new_np, arc_rate, False)
            state[A_] = archive_removal(state[A_], state[CAP_])
            pstate[0] = p_at(nfes_after, p_max, p_min, max_fes)
        return best

    return init_population, make_trials, select


class JSOSequential(OneThreadEvaluation, HostLoopImplementation):
    algorithm = "jso"
    name = "sequential"
    device = "cpu"

    def setup(self):
        T, p, n = self.dtype, self.params, self.popsize
        self.pop = np.empty((n, self.dim), dtype=T)
        self.trials = np.empty_like(self.pop)
        self.fit, self.tfit = np.empty(n, dtype=T), np.empty(n, dtype=T)
        self.archive = np.empty((max(p.archive_capacity0(), 1), self.dim), dtype=T)
        # F, CR, the successes and the memory stay float64 in every dtype (as the random draws)
        self.Fs, self.CRs, self.s_f, self.s_cr, self.delta = (np.empty(n) for _ in range(5))
        self.sorted_idx = np.empty(n, dtype=np.int64)
        self.m_f, self.m_cr = np.empty(p.memory_size), np.empty(p.memory_size)
        self.state = np.zeros(4, dtype=np.int64)
        self.pstate = np.zeros(1)
        self.best_x = np.empty(self.dim, dtype=T)
        self._init, self._make_trials, self._select = build_cpu_jso(T)
        self.setup_evaluator()

    def initialize(self, key):
        p = self.params
        self._init(self.pop, key, self.lower, self.upper)
        self.evaluate(self.pop, self.fit)
        self.m_f[:], self.m_cr[:] = p.memory_F, p.memory_CR
        self.state[:] = (p.popsize, 0, p.archive_capacity0(), 0)
        self.pstate[0] = p.p_max
        self.nfes = min(p.popsize, p.max_fes)
        b = int(np.argmin(self.fit))
        self.best = float(self.fit[b])
        self.best_x[:] = self.pop[b]
        return self.best

    def generation(self, key, g, n):
        p = self.params
        n = min(n, int(self.state[NP_]))
        self._make_trials(self.pop, self.fit, self.archive, self.trials, self.Fs, self.CRs, self.sorted_idx,
                          self.m_f, self.m_cr, self.state, self.pstate[0], key, g, n, self.nfes, p.max_fes,
                          p.floor, p.fixed_last_slot, p.cr_schedule, p.f_schedule, p.weighted_F,
                          p.pbest_not_self, self.lower, self.upper)
        self.evaluate(self.trials[:n], self.tfit[:n])
        self.nfes += n
        self.best = self._select(self.pop, self.fit, self.archive, self.trials, self.tfit, self.Fs, self.CRs,
                                 self.s_f, self.s_cr, self.delta, self.m_f, self.m_cr, self.state, self.pstate,
                                 self.best_x, key, g, n, self.nfes, p.max_fes, p.floor, p.np_min,
                                 p.arc_rate, p.averaged_memory, p.p_max, p.p_min, self.best)
        return self.best, n

    def population(self):
        """Copies of the final population (its NP live rows) and their errors."""
        NP = int(self.state[NP_])
        return self.pop[:NP].copy(), self.fit[:NP].astype(np.float64)

    def memory(self):
        """Copies of the memory (M_F, M_CR), the archive's live rows and the int state [NP, A, arc_cap, pos]."""
        return self.m_f.copy(), self.m_cr.copy(), self.archive[: int(self.state[A_])].copy(), self.state.copy()

    def best_vector(self):
        return self.best_x.copy()


class LSHADESequential(JSOSequential):
    algorithm = "lshade"
