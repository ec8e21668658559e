"""The ``masw/gpu`` runner: the host's decisions and the launches of each phase over a batch of trials.

The host keeps the scalars and makes the scalar decisions with ``masw/sequential``'s code (the GA
step's counter draws, the individual to improve, a new chain's rho, keep or drop); the kernels
(:mod:`.kernels`, :mod:`.ls`, :mod:`.ga`) do every loop over D. A GA step and a Solis-Wets step are
pre-bound launches queued without a host read; the batch's loop is
:class:`~gpude.implementations.batched.HostSteppedBatch`'s.
"""

from __future__ import annotations

import dataclasses
import math
import sys
import time
import warnings

import numpy as np
from numba import cuda

from ...algorithms.masw import first_unit, ls_choice, width
from ...core.errors import InvalidInputError
from ..batched import HostSteppedBatch
from ..masw_profile import NO_CLOCK, ModuleClock
from ..masw_sequential import build_cpu_masw
from .buffers import Buffers, bytes_per_trial
from .kernels import build_gpu_masw, build_step_planner, grid_blocks, rank_threads
from .options import resolve_options
from .state import ACCEPTED, BUDGET, F_LS, FAIL, RHO, STEPS, SUCC, USED


class MASWGPU(HostSteppedBatch):
    """MA-SW-Chains on the GPU (Lastra et al. 2015).

    Options
    -------
    threads : int
        Threads per block of the kernels over D (default: 256, or the next power of two >= D when
        D is smaller).
    ls_mode : {"fused", "steps"}
        How a Solis-Wets application runs: one cooperative launch that generates each candidate
        inside its evaluation (``"fused"``: the large-scale functions only), or kernels queued step
        by step with the decisions on the device (``"steps"``: any problem). Default: ``"fused"`` on
        the large-scale functions up to the D where it was measured faster
        (:data:`gpude.implementations.masw_gpu.ls.FUSED_MAX_DIM`), ``"steps"`` otherwise.
    ga_mode : {"fused", "separate"}
        How a GA step's children are evaluated: as the crossover makes them, in the same kernel
        (``"fused"``, :mod:`gpude.implementations.masw_gpu.ga`: the large-scale functions but
        Schwefel 1.2), or by the function's evaluator after they are written (``"separate"``: any
        problem; the default: the fused form was measured slower for some kinds at large D,
        docs/implementations.md). The same errors bit for bit.
    ls_unroll : {1, 4}
        Coordinates the fused local search's loop loads before computing them (more reads in flight
        per thread; the same run bit for bit). Default: 4 for pointwise terms and the rotated head,
        else 1 (:func:`gpude.implementations.masw_gpu.ls.fused_options`, the fastest measured).
    ls_regen : bool
        The fused local search draws each step's perturbation again where the '-' candidate and the
        update need it instead of storing it (default False; the same run).
    ls_dual : bool
        The fused local search sums a step's '+' and '-' candidates in one pass over x, the bias and
        the shift (one draw of the perturbation), so that a failed '+' costs no second pass: about
        half the local search's reads and grid barriers where most steps fail (default: on wherever
        it applies; the same run bit for bit). Pointwise terms, the rotated head group,
        Schwefel 1.2's scan and, with ``ls_share_next``, Rosenbrock's next coordinate
        (:func:`gpude.implementations.masw_gpu.ls.dual_supported`); elsewhere it changes nothing, and
        ``ls_dual`` reads False after.
    ls_share_next : bool
        Rosenbrock's next coordinate (C13, C18, C20) in the fused local search: a coordinate's term
        takes its neighbour's value from the thread that computes it (shared memory) instead of
        drawing the neighbour's perturbation and reading its x, bias and shift again (default False:
        measured slower at large D; the same run bit for bit; other kinds: no effect, and
        ``ls_share_next`` reads False after).
    ls_min_blocks : int
        Blocks per SM the fused local search's kernel is compiled to keep resident (launch bounds,
        0-32; 0: none). Default: 2 for pointwise terms and the rotated head, 3 for Schwefel 1.2 from
        D = 1e6, else 0.
    trials_per_launch : int
        Trials a driver (``gpude run``) hands to :meth:`run_batch` at once (default 1, at most
        :data:`~gpude.implementations.masw_gpu.options.MAX_TRIALS_PER_LAUNCH`). The trials of a batch share
        every launch: the GA kernels, the evaluation of all their children (one range of rows), the steps
        mode's kernels and the evaluation of their candidates; the host makes each trial's decisions in turn
        and reads the batch's state once where a trial alone reads its own. In the fused mode each trial's
        Solis-Wets application is still its own cooperative launch (queued one after the other, one host read
        for all). Each trial makes the run it makes alone (its key, its decisions), stops at its own target,
        and is charged its fair share of the batch's wall time. Memory: ``trials_per_launch`` times a trial's
        (:func:`bytes_per_trial`).
    quiet : bool
        Do not print the memory line before the run.
    profile : bool
        Time each module of a run (:mod:`gpude.implementations.masw_profile`): the stream is
        synchronised after each module's launches and the seconds summed per module into
        ``module_s`` (the runner's, and each result's ``info["module_s"]``: the batch's). The same run;
        a slower one (no module overlaps another or the host's work), so a profiled row's ``params``
        say ``"profile": true``. Default False: no synchronisation, nothing timed.

    Notes
    -----
    After a run (or a batch) the runner's ``counts`` (the counters of :mod:`.traffic`'s model, which
    ``benchmarks/masw_perf.py`` reports), ``ls_applications``, ``ls_improved`` and ``phase_s`` are the
    batch's: summed over its trials, except ``ga_steps`` (GA steps launched: one for all the trials)
    and ``phase_s`` (the batch's time in each phase).
    """

    needs_program = False  # the problem's evaluators (large-scale functions have no program)
    algorithm = "masw"
    name = "gpu"
    device = "gpu"
    hit_time_before_final_copies = True  # a trial's time at its hit, as masw/sequential records it

    def __init__(self, function, params, threads: int | None = None, ls_mode: str | None = None,
                 quiet: bool = False, trials_per_launch: int = 1, ga_mode: str | None = None,
                 ls_unroll: int | None = None, ls_min_blocks: int | None = None, ls_regen: bool = False,
                 layout: str | None = None, ls_dual: bool | None = None, ls_share_next: bool = False,
                 profile: bool = False, **options):
        super().__init__(function, params, **options)
        self.profile = bool(profile)
        self.clock, self.module_s = NO_CLOCK, None
        self.options = resolve_options(function, threads=threads, ls_mode=ls_mode, trials_per_launch=trials_per_launch,
                                       ga_mode=ga_mode, ls_unroll=ls_unroll, ls_min_blocks=ls_min_blocks,
                                       ls_regen=ls_regen, layout=layout, ls_dual=ls_dual, ls_share_next=ls_share_next)
        for field in dataclasses.fields(self.options):  # runner.ls_mode etc.: the options in effect
            setattr(self, field.name, getattr(self.options, field.name))
        self.quiet = quiet
        self.cpu = build_cpu_masw(self.dtype)
        self.plan_step = build_step_planner(self.dtype)
        self.kernels = build_gpu_masw(self.dtype, params.popsize, self.threads, self.layout == "position")
        self.W = width(self.dim)
        self.blocks = grid_blocks(self.dim, self.threads)
        self._allocated = None

    def evaluations_per_generation(self) -> int:
        return self.params.cycle_evals

    def warmup_evaluations(self) -> int:
        """Into the first local search (its '+' and '-' candidates), so every kernel is compiled."""
        p = self.params
        return p.popsize + p.ssga_evals + min(p.ls_intensity, 4)

    def warmup(self) -> None:
        """Check that a batch of ``trials_per_launch`` fits before compiling (a trial of one)."""
        if self.trials_per_launch > 1:
            self.check_memory(self.trials_per_launch)
        super().warmup()

    # -- memory ------------------------------------------------------------------------------
    def check_memory(self, batch: int = 1):
        """Print a trial's device memory (and a batch's); fail clearly if the batch does not fit."""
        p, D = self.params, self.dim
        item = np.dtype(self.dtype).itemsize
        data = 3 * D * 8  # the function's data, allowed for once
        per_trial = bytes_per_trial(p.popsize, p.offspring, D, item)
        need = batch * per_trial + data
        try:
            free, total = cuda.current_context().get_memory_info()
        except Exception:  # the simulator has no memory info
            free = total = None
        if not self.quiet:
            have = f" of {free / 1e9:.2f} GB free ({total / 1e9:.1f} GB total)" if free else ""
            both = f"; {need / 1e9:.3f} GB for {batch} trials per launch" if batch > 1 else ""
            print(f"masw/gpu: {self.function.fid} D={D:,} popsize={p.popsize} offspring={p.offspring} "
                  f"{np.dtype(self.dtype).name}: {(per_trial + data) / 1e9:.3f} GB of device memory per "
                  f"trial{both}{have}", file=sys.stderr)
        if free is not None and need > 0.95 * free:
            fit_trials = int((0.95 * free - data) // per_trial)
            if batch > 1 and fit_trials >= 1:
                raise InvalidInputError(
                    f"masw/gpu needs {need / 1e9:.2f} GB of device memory for trials_per_launch={batch} "
                    f"({per_trial / 1e9:.3f} GB per trial at D={D:,}, popsize {p.popsize}, offspring "
                    f"{p.offspring}, {np.dtype(self.dtype).name}) but the GPU has {free / 1e9:.2f} GB free; "
                    f"the largest trials_per_launch that fits is {fit_trials}")
            one = per_trial + data
            per_dim = one / D
            fit = int(0.95 * free / per_dim)
            raise InvalidInputError(
                f"masw/gpu needs {one / 1e9:.2f} GB of device memory for D={D:,} (popsize "
                f"{p.popsize}, offspring {p.offspring}, {np.dtype(self.dtype).name}) but the GPU has "
                f"{free / 1e9:.2f} GB free; the largest D that fits is about {fit:,} (or use float32, "
                f"or a smaller popsize)")
        return need

    # -- set-up --------------------------------------------------------------------------------
    def setup(self, batch: int = 1):
        """Device arrays for ``batch`` trials (:mod:`.buffers`), the evaluator and the pre-bound
        launches (once per shape); per-run state."""
        p, T, D, P, off = self.params, self.dtype, self.dim, self.params.popsize, self.params.offspring
        B = batch
        shape = (B, P, off, D)
        if self._allocated != shape:
            self.check_memory(B)
            self.batch = B
            self.stream = cuda.stream()
            self.buf = Buffers(B, P, off, p.nam, D, T, self.blocks, -(-p.ssga_evals // off), self.ls_mode)
            self.ls_threads = 32 * -(-B // 32)  # a thread per trial
            options = {"threads": self.threads} if getattr(self.function, "streaming", False) else {}
            if self.layout == "position":
                options["layout"] = "position"
            self.ev = self.function.gpu_evaluator(T, max_rows=max(B * off, min(B * P, 64)), **options)
            # where each row is stored in pop: an entering child swaps rows with the slot it takes (no
            # copy) where the evaluator reads rows through a map
            self.swap_rows = bool(getattr(self.ev, "row_map", False))
            # the coordinate each index of a row holds (a dummy the kernels do not read, in natural order)
            lay = self.function.evaluator_args(T)[1] if self.layout == "position" else np.zeros(1)
            self.h_lay = np.ascontiguousarray(lay, dtype=np.int32)
            self.d_lay = cuda.to_device(self.h_lay)
            if self.ga_mode == "fused":
                from .ga import build_crossover_evaluation

                _, _, has_perm, _, m = self.function.evaluator_args(T)
                self.crossover_evaluate = build_crossover_evaluation(
                    self.function.code, D, m, has_perm and self.layout == "natural", self.ev.threads, T,
                    layout=self.layout == "position")
            self._eval_ranges = {}
            self.rank_threads = rank_threads()
            if self.ls_mode == "fused":
                self._bind_fused_ls()
            self._prebind()
            self._allocated = shape
        self.fit = np.empty((B, P))
        self.rho = np.zeros((B, P))
        self.succ, self.fail = np.zeros((B, P), np.int64), np.zeros((B, P), np.int64)
        self.has_chain, self.non_improved = np.zeros((B, P), np.bool_), np.zeros((B, P), np.bool_)
        self.buf.d_replaced.copy_to_device(self.buf.h_no_replaced, stream=self.stream)
        self.buf.d_where.copy_to_device(self.buf.identity, stream=self.stream)
        self.buf.d_tally.copy_to_device(np.zeros(2 * B, np.int64), stream=self.stream)
        self.ls_applications = self.ls_improved = 0
        self.phase_s = {"ga": 0.0, "ls": 0.0}
        # profiling: each module's time after waiting for its launches (NO_CLOCK: nothing waits)
        self.clock = ModuleClock(wait=lambda: self.stream.synchronize()) if self.profile else NO_CLOCK
        # what the kernels did, for the traffic model (.traffic: rows of D values),
        # summed over the batch's trials (ga_steps: the steps launched, one for all the trials)
        self.counts = dict(ga_steps=0, children=0, dist_pairs=0, dist_rows=0, parent_rows=0, moves=0, copies=0,
                           ls_evaluations=0, ls_steps=0, ls_accepted=0, new_chains=0, fused_children=0)

    def _bind_fused_ls(self):
        """The cooperative Solis-Wets kernel, its grid and a pre-marshalled launch per trial (its x,
        perturbation and state rows)."""
        buf = self.buf
        from ...core.prebound import PreboundLaunch
        from .ls import build_sw_application, cooperative_blocks

        f, T, D = self.function, self.dtype, self.dim
        _, _, has_perm, _, m = f.evaluator_args(T)
        position = self.layout == "position"  # the function without its permutation; lay in perm's place
        kernel = build_sw_application(f.code, D, m, has_perm and not position, self.threads, T, self.ls_unroll,
                                      self.ls_min_blocks, self.ls_regen, layout=position, dual=self.ls_dual,
                                      share_next=self.ls_share_next)
        self.sw_kernel = kernel
        o, perm, M = self.ev.data
        perm = self.d_lay if position else perm

        def args(b, partials):
            return [buf.x_ls[b], buf.bias, np.int64(0), buf.d[b], buf.st[b], np.uint64(0), np.int64(0),
                    np.int64(self.W), o, perm, M, partials, float(self.lower), float(self.upper)]

        grid = cooperative_blocks(kernel, args(0, cuda.device_array((2, 2, 4), np.float64)), self.threads, D)
        # the applications run one after the other on one stream: they share the partials
        self.ls_partials = cuda.device_array((2, grid + 1, 4), np.float64)
        self.ls_grid = grid
        self.sw_applications = [PreboundLaunch(kernel, tuple(args(b, self.ls_partials)), grid, self.threads,
                                               self.stream, variable={"row": 2, "key": 5, "unit": 6})
                                for b in range(self.batch)]

    def _prebind(self):
        """Pre-marshalled launches of one Solis-Wets step and of a full GA step (the hot loops)."""
        buf = self.buf
        from ...core.prebound import PreboundLaunch

        k, s, nb, nt, B = self.kernels, self.stream, self.blocks, self.threads, self.batch
        lo, hi = self.lower, self.upper
        if self.ls_mode == "steps":
            rows, tb = buf.d_rows, self.ls_threads
            self.step_launches = {
                "plus": PreboundLaunch(k["sw_plus"], (buf.ls, buf.bias, rows, buf.d, buf.st, buf.gate,
                                                      buf.d_keys, np.int64(0), np.int64(self.W), lo, hi,
                                                      self.d_lay),
                                       (nb, B), nt, s, variable={"unit": 7}),
                "after_plus": PreboundLaunch(k["sw_after_plus"], (buf.st, buf.out, buf.gate, buf.gate_minus,
                                                                  buf.gate_minus_any), 1, tb, s),
                "minus": PreboundLaunch(k["sw_minus"], (buf.ls, buf.bias, rows, buf.d, buf.gate_minus, lo, hi),
                                        (nb, B), nt, s),
                "after_minus": PreboundLaunch(k["sw_after_minus"], (buf.st, buf.out, buf.gate_minus), 1, tb, s),
                "finish": PreboundLaunch(k["sw_finish"], (buf.ls, buf.bias, rows, buf.d, buf.st, buf.gate),
                                         (nb, B), nt, s),
                "end": PreboundLaunch(k["sw_end"], (buf.st, buf.gate, buf.gate_minus, buf.gate_any,
                                                    buf.gate_minus_any), 1, tb, s),
            }
            # every trial's candidate in one launch, run while some trial's gate is open
            self.eval_plus = self.ev.prebound(buf.ls, buf.out, B, B, s, buf.gate_any)
            self.eval_minus = self.ev.prebound(buf.ls, buf.out, 2 * B, B, s, buf.gate_minus_any)
        # a full GA step of every trial: off * nam distances, off children, their evaluation
        p, P, off = self.params, self.params.popsize, self.params.offspring
        npairs = B * off * p.nam
        per = np.int64(off * p.nam)
        self.full_step = {
            "dist_partial": PreboundLaunch(k["dist_partial"], (buf.pop, buf.d_where, buf.d_pairs, per, per,
                                                               buf.d_active, buf.partials), (npairs, nb), nt, s),
            "dist_final": PreboundLaunch(k["dist_final"], (buf.partials, np.int64(nb), buf.dists),
                                         npairs, nt, s),
            "choose_fathers": PreboundLaunch(k["choose_fathers"], (buf.d_cands, buf.dists, buf.d_plan,
                                                                   np.int64(off), np.int64(p.nam), np.int64(off),
                                                                   np.int64(B)), -(-B * off // 32), 32, s),
            "crossover": PreboundLaunch(k["crossover"], (buf.pop, buf.d_where, np.int64(B * P), buf.d_plan,
                                                         buf.d_delta, buf.d_keys, np.int64(0), np.int64(self.W),
                                                         float(p.alpha), float(lo), float(hi), np.int64(off),
                                                         np.int64(off), buf.d_active, self.d_lay),
                                        (B * off, nb), nt, s, variable={"unit": 6}),
            "replace_children": PreboundLaunch(k["replace_batch"], (buf.fit_all, np.int64(P), np.int64(off),
                                                                    np.int64(off), buf.d_plan, buf.d_moves,
                                                                    buf.d_nmoves, buf.d_replaced, buf.d_tally,
                                                                    buf.d_active, buf.d_where,
                                                                    np.int32(self.swap_rows), buf.d_rank),
                                                B, self.rank_threads, s),
            "copy_moves": PreboundLaunch(k["copy_moves"], (buf.pop, buf.d_moves, buf.d_nmoves, np.int64(off)),
                                         (B * off, nb), nt, s),
        }
        if self.ga_mode == "fused":
            self.full_step["crossover_evaluate"] = PreboundLaunch(
                self.crossover_evaluate, self._crossover_evaluate_args(off), (B * off, self.ev.blocks),
                self.ev.threads, s, variable={"unit": 6})

    def _crossover_evaluate_args(self, k, unit=0):
        """The arguments of the fused crossover (:mod:`.ga`) for k children per trial from
        unit ``unit``."""
        buf = self.buf
        p, B, P, off = self.params, self.batch, self.params.popsize, self.params.offspring
        o, perm, M = self.ev.data
        perm = self.d_lay if self.layout == "position" else perm  # (the draws' coordinates: .ga)
        return (buf.pop, buf.d_where, np.int64(B * P), buf.d_plan, buf.d_delta, buf.d_keys, np.int64(unit),
                np.int64(self.W), float(p.alpha), float(self.lower), float(self.upper), np.int64(k), np.int64(off),
                buf.d_active, self.ev.partials, self.ev.counters, buf.fit_all, o, perm, M)

    def _launch(self, name, grid, block, *args):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.kernels[name][grid, block, self.stream](*args)

    def _rows(self):
        """The evaluator's row map argument (none for an evaluator that reads rows in place)."""
        return {"rows": self.buf.d_where} if self.swap_rows else {}

    def _evaluate_rows(self, row0, n):
        for r in range(row0, row0 + n, self.ev.max_rows):
            self.ev.launch(self.buf.pop, self.buf.fit_all, r, min(self.ev.max_rows, row0 + n - r), self.stream,
                           **self._rows())

    def _evaluate_children(self, k, active):
        """The first k children of every active trial: one range of rows, from the first active
        trial's children to the last's (a stopped trial's in between are evaluated, not used)."""
        P, off, B = self.params.popsize, self.params.offspring, self.batch
        row0 = B * P + active[0] * off
        n = (active[-1] - active[0]) * off + k
        launch = self._eval_ranges.get((row0, n))
        if launch is None:
            launch = self._eval_ranges[row0, n] = self.ev.prebound(self.buf.pop, self.buf.fit_all, row0, n, self.stream,
                                                                   **self._rows())
        launch()

    def _chain_distances(self, chains):
        """Squared Euclidean distances from individual i of trial b to the trial's others, for each
        (b, i) in ``chains``: an array (len(chains), P - 1), in one launch and one host read."""
        buf = self.buf
        P = self.params.popsize
        n = len(chains) * (P - 1)
        h = buf.h_pairs
        for c, (b, i) in enumerate(chains):
            rows = h[c * (P - 1):(c + 1) * (P - 1)]
            rows[:, 0] = b * P + i
            rows[:, 1] = [b * P + q for q in range(P) if q != i]
        buf.d_pairs[:n].copy_to_device(h[:n], stream=self.stream)
        per = np.int64(P - 1)
        self._launch("dist_partial", (n, self.blocks), self.threads, buf.pop, buf.d_where, buf.d_pairs, per, per,
                     buf.d_all, buf.partials)
        self._launch("dist_final", n, self.threads, buf.partials, np.int64(self.blocks), buf.dists)
        buf.dists[:n].copy_to_host(buf.h_dists[:n], stream=self.stream)
        self.stream.synchronize()
        return buf.h_dists[:n].reshape(len(chains), P - 1)

    def _set_active(self, active):
        """The trials the next generation advances (the kernels skip the others' work)."""
        buf = self.buf
        buf.h_active[:] = 0
        buf.h_active[list(active)] = 1
        buf.d_active.copy_to_device(buf.h_active, stream=self.stream)

    def initialize(self):
        """Every trial's initial population and its errors; each trial's best."""
        buf = self.buf
        p, B, P = self.params, self.batch, self.params.popsize
        clock = self.clock
        clock.start()
        buf.d_keys.copy_to_device(buf.h_keys, stream=self.stream)
        self._launch("init_population", (self.blocks, B), self.threads, buf.pop, buf.d_keys, p.strata, self.W,
                     self.lower, self.upper, self.d_lay)
        clock.charge("initial_population")
        self._evaluate_rows(0, B * P)
        clock.charge("fitness_evaluation")
        buf.fit_all.copy_to_host(buf.h_fit, stream=self.stream)
        self.stream.synchronize()
        clock.charge("transfers_to_host")
        self.fit[:] = buf.h_fit[:B * P].reshape(B, P)
        self.unit = first_unit(p.popsize)
        return self.fit.min(axis=1)

    # -- the GA phase ------------------------------------------------------------------------
    def ga_step(self, k, step, active):
        """One GA step of k children per active trial, queued without a host round trip: the host
        draws every trial's mothers, NAM candidates and mutations (counter draws: no device data
        needed) into its pinned buffers for this step of the cycle; the device computes the
        distances, picks the fathers, makes and evaluates the children and replaces
        (``replace_batch``, a block per trial), for all the trials in one launch each. The host
        reads the populations' errors once, after the GA phase (:meth:`_read_ga_phase`)."""
        buf = self.buf
        p, P, nam, off, B = self.params, self.params.popsize, self.params.nam, self.params.offspring, self.batch
        cands, pairs, delta = buf.h_cands[step], buf.h_step_pairs[step], buf.h_step_delta[step]
        clock = self.clock
        clock.start()
        distinct = self.plan_step(buf.h_keys, buf.h_active, np.int64(self.unit), np.int64(self.W), P, nam, k,
                                  off, self.dim, p.mutation_prob, float(self.lower), float(self.upper), cands, pairs,
                                  delta)
        counts = self.counts
        counts["ga_steps"] += 1
        counts["children"] += k * len(active)
        counts["dist_pairs"] += k * nam * len(active)
        counts["dist_rows"] += distinct
        s = self.stream
        buf.d_step_pairs.copy_to_device(pairs, stream=s)
        buf.d_cands.copy_to_device(cands, stream=s)
        buf.d_delta.copy_to_device(delta, stream=s)
        fused = self.ga_mode == "fused"
        if fused:
            counts["fused_children"] += k * len(active)
        crossover_module = "crossover_with_evaluation" if fused else "crossover_and_random_numbers"
        if k == off:
            g = self.full_step
            g["dist_partial"].launch()
            g["dist_final"].launch()
            g["choose_fathers"].launch()
            clock.charge("distance")
            if fused:
                g["crossover_evaluate"].launch(unit=np.int64(self.unit))
                clock.charge(crossover_module)
            else:
                g["crossover"].launch(unit=np.int64(self.unit))
                clock.charge(crossover_module)
                self._evaluate_children(k, active)
                clock.charge("fitness_evaluation")
            g["replace_children"].launch()
            if not self.swap_rows:
                g["copy_moves"].launch()
            clock.charge("replacement")
        else:
            nb, nt, npairs = self.blocks, self.threads, B * off * nam
            per, o64, k64 = np.int64(off * nam), np.int64(off), np.int64(k)
            self._launch("dist_partial", (npairs, nb), nt, buf.pop, buf.d_where, buf.d_pairs, per,
                         np.int64(k * nam), buf.d_active, buf.partials)
            self._launch("dist_final", npairs, nt, buf.partials, np.int64(nb), buf.dists)
            self._launch("choose_fathers", -(-B * off // 32), 32, buf.d_cands, buf.dists, buf.d_plan, k64,
                         np.int64(nam), o64, np.int64(B))
            clock.charge("distance")
            if fused:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    self.crossover_evaluate[(B * k, self.ev.blocks), self.ev.threads, s](
                        *self._crossover_evaluate_args(k, self.unit))
                clock.charge(crossover_module)
            else:
                self._launch("crossover", (B * k, nb), nt, buf.pop, buf.d_where, np.int64(B * P), buf.d_plan,
                             buf.d_delta,
                             buf.d_keys, np.int64(self.unit), np.int64(self.W), float(p.alpha),
                             float(self.lower), float(self.upper), k64, o64, buf.d_active, self.d_lay)
                clock.charge(crossover_module)
                self._evaluate_children(k, active)
                clock.charge("fitness_evaluation")
            self._launch("replace_batch", B, self.rank_threads, buf.fit_all, np.int64(P), k64, o64, buf.d_plan,
                         buf.d_moves, buf.d_nmoves, buf.d_replaced, buf.d_tally, buf.d_active, buf.d_where,
                         np.int32(self.swap_rows), buf.d_rank)
            if not self.swap_rows:
                self._launch("copy_moves", (B * off, nb), nt, buf.pop, buf.d_moves, buf.d_nmoves, o64)
            clock.charge("replacement")
        self.unit += k

    def _read_ga_phase(self):
        """The populations' errors after the GA phase, and the slots it replaced (their chains end)."""
        buf = self.buf
        P, B, s = self.params.popsize, self.batch, self.stream
        self.clock.start()
        buf.fit_all.copy_to_host(buf.h_fit, stream=s)
        buf.d_replaced.copy_to_host(buf.h_replaced, stream=s)
        buf.d_tally.copy_to_host(buf.h_tally, stream=s)
        buf.d_replaced.copy_to_device(buf.h_no_replaced, stream=s)
        s.synchronize()
        self.clock.charge("transfers_to_host")
        self.fit[:] = buf.h_fit[:B * P].reshape(B, P)
        gone = buf.h_replaced.reshape(B, P).astype(bool)
        self.has_chain[gone] = False
        self.non_improved[gone] = False
        self.counts["moves"] = int(buf.h_tally[0::2].sum())
        self.counts["copies"] = 0 if self.swap_rows else self.counts["moves"]  # (swapped rows move no data)
        self.counts["parent_rows"] = int(buf.h_tally[1::2].sum())

    # -- the local search phase ----------------------------------------------------------------
    def local_search(self, budget, active):
        """One Solis-Wets application of ``budget`` evaluations per active trial, all queued
        together (steps: one launch per kernel for all; fused: one cooperative launch per trial);
        one host read of the trials' states at the end (steps: every ``ceil(remaining / 2)`` steps)."""
        buf = self.buf
        p, P, B = self.params, self.params.popsize, self.batch
        unit = self.unit
        self.unit += 1 + p.ls_intensity
        chosen, fresh = {}, []
        for b in active:
            i = ls_choice(self.fit[b], self.non_improved[b])
            if i < 0:
                i = int(self.cpu["below"](buf.h_keys[b], self.cpu["ctr"](unit, 0, self.W), P))
            chosen[b] = i
            if not self.has_chain[b, i]:
                fresh.append(b)
        clock = self.clock
        if fresh:
            self.counts["new_chains"] += len(fresh)
            clock.start()
            distances = self._chain_distances([(b, chosen[b]) for b in fresh])
            clock.charge("distance")
            for b, d2 in zip(fresh, distances):
                i = chosen[b]
                d = math.sqrt(d2.min()) / self.dim
                self.rho[b, i] = min(p.rho_max, d / 2.0)
                self.succ[b, i] = self.fail[b, i] = 0
        h, s = buf.h_st, self.stream
        h[:] = 0.0
        buf.h_rows[:], buf.h_fresh[:], buf.h_gates[:] = -1, 0, 0
        for b, i in chosen.items():
            buf.h_rows[b] = b * P + i
            buf.h_fresh[b] = b in fresh
            h[b, F_LS], h[b, RHO], h[b, SUCC], h[b, FAIL] = self.fit[b, i], self.rho[b, i], self.succ[b, i], \
                self.fail[b, i]
            h[b, BUDGET] = budget
            buf.h_gates[b] = 1
        buf.h_gates[2 * B] = 1  # some trial's '+' evaluation is open
        clock.start()
        buf.d_rows.copy_to_device(buf.h_rows, stream=s)
        buf.d_fresh.copy_to_device(buf.h_fresh, stream=s)
        buf.st.copy_to_device(h, stream=s)
        self._launch("ls_begin", (self.blocks, B), self.threads, buf.pop, buf.d_where, buf.x_ls, buf.bias,
                     buf.d_rows, buf.d_fresh)
        if self.ls_mode == "fused":
            for b, i in chosen.items():
                self.sw_applications[b].launch(row=np.int64(b * P + i), key=buf.h_keys[b], unit=np.int64(unit + 1))
            clock.charge("solis_wets_with_evaluation")
            buf.st.copy_to_host(h, stream=s)
            s.synchronize()
            clock.charge("transfers_to_host")
            self.counts["ls_steps"] += int(sum(h[b, STEPS] for b in chosen))
            self.counts["ls_accepted"] += int(sum(h[b, ACCEPTED] for b in chosen))
        else:
            buf.gates.copy_to_device(buf.h_gates, stream=s)
            L = self.step_launches
            t, used = 0, 0
            while used < budget:  # the trial that used the fewest evaluations sets the steps queued
                for _ in range(max(1, (budget - used + 1) // 2)):
                    L["plus"].launch(unit=np.int64(unit + 1 + t))
                    clock.charge("solis_wets")
                    self.eval_plus()
                    clock.charge("fitness_evaluation")
                    L["after_plus"].launch()
                    L["minus"].launch()
                    clock.charge("solis_wets")
                    self.eval_minus()
                    clock.charge("fitness_evaluation")
                    L["after_minus"].launch()
                    L["finish"].launch()
                    L["end"].launch()
                    clock.charge("solis_wets")
                    t += 1
                buf.st.copy_to_host(h, stream=s)
                s.synchronize()
                clock.charge("transfers_to_host")
                used = min(int(h[b, USED]) for b in chosen)
        used = {b: int(h[b, USED]) for b in chosen}
        self.counts["ls_evaluations"] += sum(used.values())
        buf.h_keep[:] = 0
        for b, i in chosen.items():
            buf.h_keep[b] = self.keep(b, i, float(h[b, F_LS]), float(h[b, RHO]), int(h[b, SUCC]), int(h[b, FAIL]))
        if buf.h_keep.any():  # the kept results into their rows (the device's copy of the errors too)
            clock.start()
            buf.d_keep.copy_to_device(buf.h_keep, stream=s)
            self._launch("ls_keep", (self.blocks, B), self.threads, buf.pop, buf.d_where, buf.fit_all, buf.x_ls,
                         buf.d_rows, buf.d_keep, buf.st)
            clock.charge("solis_wets")
        return used

    def keep(self, b, i, f, rho, succ, fail):
        """Realea's rule on the host (as masw/sequential); whether trial b's result replaces individual i."""
        self.ls_applications += 1
        if f < self.fit[b, i] and self.fit[b, i] - f >= self.params.improvement:
            self.fit[b, i] = f
            self.rho[b, i], self.succ[b, i], self.fail[b, i] = rho, succ, fail
            self.has_chain[b, i], self.non_improved[b, i] = True, False
            self.ls_improved += 1
            return True
        self.has_chain[b, i], self.non_improved[b, i] = False, True
        return False

    def generation(self, n, active):
        """One cycle of every active trial (n evaluations at most, the same for all: they are in
        step); each trial's evaluations used."""
        p = self.params
        ga = min(p.ssga_evals, n)
        used = 0
        t0 = time.perf_counter()
        step = 0
        while used < ga:
            k = min(p.offspring, ga - used)
            self.ga_step(k, step, active)
            used += k
            step += 1
        if step:
            self._read_ga_phase()
        t1 = time.perf_counter()
        spent = {b: used for b in active}
        if n - used > 0:
            for b, u in self.local_search(min(p.ls_intensity, n - used), active).items():
                spent[b] += u
        # each phase ends with a host read of its results, so these are the phases' GPU times too
        self.phase_s["ga"] += t1 - t0
        self.phase_s["ls"] += time.perf_counter() - t1
        return spent

    # -- the batch's steps (the loop: gpude.implementations.batched.HostSteppedBatch) ----------------
    def start_trials(self, keys):
        self.setup(len(keys))
        self.buf.h_keys[:] = keys

    def initialize_trials(self):
        self._set_active(range(self.batch))
        return self.initialize()

    def advance_trials(self, budgets):
        """One cycle of the trials in ``budgets`` (in step: the same budget for all); the trials that
        stopped are no longer advanced (the kernels skip them)."""
        active = list(budgets)
        if len(active) < int(self.buf.h_active.sum()):
            self._set_active(active)
        spent = self.generation(budgets[active[0]], active)
        return {b: (spent[b], self.fit[b].min()) for b in active}

    def final_vectors(self, batch):
        self.clock.start()
        vectors = [self.best_vector(b) for b in range(batch)]
        self.clock.charge("transfers_to_host")
        return vectors

    def teardown(self) -> None:
        """After the batch's clock has stopped: the profile's seconds per module (``module_s``)."""
        if self.clock:
            self.module_s = dict(self.clock.seconds)

    def batch_info(self, batch: int) -> dict:
        """The options a row records beside ``trials_per_launch``: how the run was made. They change its
        time, not its result (each is the same run bit for bit), so that rows of one cell made two ways
        can be told apart, e.g. before and after a default changes. A profiled batch adds
        ``"profile": True`` to them and its ``module_s``."""
        info = {"options": {**self.options.recorded(), "trials_per_launch": batch}}
        if self.profile:
            info["options"]["profile"] = True
            info["module_s"] = dict(self.module_s or {})
        return info

    def _natural(self, rows: np.ndarray) -> np.ndarray:
        """Rows in the function's coordinate order (``layout="position"`` keeps them in position order)."""
        if self.layout != "position":
            return rows
        out = np.empty_like(rows)
        out[..., self.h_lay] = rows
        return out

    def _stored(self, rows) -> np.ndarray:
        """Rows (population slots b P + i) read from where they are stored."""
        buf = self.buf
        buf.d_where.copy_to_host(buf.h_where, stream=self.stream)
        self.stream.synchronize()
        return np.stack([buf.pop[int(buf.h_where[r])].copy_to_host() for r in rows])

    def population(self, trial: int = 0):
        """Copies of trial ``trial``'s final population and its errors (float64), last batch."""
        P = self.params.popsize
        return self._natural(self._stored(range(trial * P, (trial + 1) * P))), self.fit[trial].copy()

    def best_vector(self, trial: int = 0):
        i = int(np.argmin(self.fit[trial]))
        return self._natural(self._stored([trial * self.params.popsize + i])[0])

