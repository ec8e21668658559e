"""masw/gpu's Solis-Wets applications in one cooperative launch (``ls_mode="fused"``): the same run
as masw/sequential and as the step-by-step launches, on each kind of large-scale function (pointwise
terms, Griewank's product, Ackley's two sums, the rotated head group, Rosenbrock's next coordinate
through a permutation, Schwefel 1.2's scan). On numba's simulator a cooperative grid has one block;
the GPU test log covers many."""

import os

import numpy as np
import pytest

from gpude.core.errors import InvalidInputError
from gpude.run.trial import make_runner

pytestmark = pytest.mark.cudasim

# I_str = 16: applications of several steps, with successes and failures; 2 cycles
PARAMS = dict(ls_intensity=16, offspring=2)
NP, SEED = 5, 7
MAX_FES = NP + 2 * 32
# tiny on the simulator (a cooperative grid of one block); on a GPU (NUMBA_ENABLE_CUDASIM=0) 100x
# larger, so that the grid has tens to hundreds of blocks
SCALE = 1 if os.environ.get("NUMBA_ENABLE_CUDASIM", "1") == "1" else 100
CASES = [("L02", 24 * SCALE), ("L06", 24 * SCALE), ("C03", 100 * SCALE), ("C04", 100 * SCALE), ("C13", 100 * SCALE)]


def run(impl, fid, dim, dtype="float64", **options):
    r = make_runner("masw", impl, fid, dim, NP, MAX_FES, dtype=dtype, **PARAMS, **options)
    return r, r.run(SEED)


def assert_same_run(a, b, rtol):
    assert a.fes_used == b.fes_used == MAX_FES
    np.testing.assert_allclose(b.trace["best_error"], a.trace["best_error"], rtol=rtol)
    np.testing.assert_allclose(b.best_x, a.best_x, rtol=rtol)


@pytest.mark.parametrize("fid,dim", CASES, ids=[c[0] for c in CASES])
def test_fused_local_search_follows_sequential(fid, dim):
    _, ref = run("sequential", fid, dim)
    runner, fused = run("gpu", fid, dim, threads=16)
    assert runner.ls_mode == "fused"
    assert runner.ls_applications == 2 and 0 < runner.ls_improved
    # the GPU sums in another order: equal to rounding, and every decision the same
    assert_same_run(ref, fused, rtol=1e-10)


def test_pending_halvings_folded_into_the_bias_change_nothing(monkeypatch):
    # b * 2^-2 every two failed steps instead of b / 2 each step: the same bias, the same run
    from gpude.implementations.masw_gpu import ls as masw_gpu_ls

    dim = 24 * SCALE
    _, ref = run("sequential", "L01", dim, dtype="float32")
    monkeypatch.setattr(masw_gpu_ls, "MAX_PENDING_HALVINGS", 2)
    _, fused = run("gpu", "L01", dim, dtype="float32", threads=8)
    assert_same_run(ref, fused, rtol=1e-5)
    _, steps = run("gpu", "L01", dim, dtype="float32", threads=8, ls_mode="steps")
    assert_same_run(steps, fused, rtol=1e-5)


UNROLL_CASES = [("L02", 43 * SCALE), ("C04", 100 * SCALE)]


@pytest.mark.parametrize("fid,dim", UNROLL_CASES, ids=[c[0] for c in UNROLL_CASES])
def test_loads_of_four_coordinates_together_make_the_same_run(fid, dim):
    # ls_unroll=4 issues four coordinates' reads before computing them; the terms are summed in the
    # same order, so the run is the same bit for bit (the D leave a remainder for the plain loop;
    # C04: the rotated head apart, its other coordinates in memory order)
    _, plain = run("gpu", fid, dim, threads=8, ls_unroll=1, ls_min_blocks=0)
    runner, unrolled = run("gpu", fid, dim, threads=8, ls_unroll=4, ls_min_blocks=2)
    assert runner.ls_mode == "fused" and runner.ls_improved > 0
    np.testing.assert_array_equal(unrolled.trace["best_error"], plain.trace["best_error"])
    np.testing.assert_array_equal(unrolled.best_x, plain.best_x)


REGEN_CASES = [("L02", 43 * SCALE), ("C13", 100 * SCALE)]


@pytest.mark.parametrize("fid,dim", REGEN_CASES, ids=[c[0] for c in REGEN_CASES])
def test_the_perturbation_drawn_again_makes_the_same_run(fid, dim):
    # ls_regen: the '-' candidate and the update draw d from its counter instead of reading it back
    # (pointwise and unrolled; Rosenbrock's next coordinate, drawn again for the neighbour's term too)
    _, stored = run("gpu", fid, dim, threads=8, ls_mode="fused")
    runner, regen = run("gpu", fid, dim, threads=8, ls_mode="fused", ls_regen=True)
    assert runner.ls_regen and runner.ls_improved > 0
    np.testing.assert_array_equal(regen.trace["best_error"], stored.trace["best_error"])
    np.testing.assert_array_equal(regen.best_x, stored.best_x)
    with pytest.raises(InvalidInputError, match="ls_regen must be True or False"):
        make_runner("masw", "gpu", "L01", 24, NP, MAX_FES, ls_regen=1)


DUAL_CASES = [("L02", 43 * SCALE), ("C04", 100 * SCALE), ("L06", 24 * SCALE)]


@pytest.mark.parametrize("fid,dim", DUAL_CASES, ids=[c[0] for c in DUAL_CASES])
def test_both_candidates_summed_in_one_pass_make_the_same_run(fid, dim):
    # ls_dual: a step's '+' and '-' candidates summed in one pass (one draw of d), the '-' sums those the
    # second pass makes in the same order: the same run bit for bit, the same evaluations counted
    # (pointwise with the unrolled loop and a remainder; C04: the rotated head group apart; L06: the
    # scan's two passes, each for both)
    single_runner, single = run("gpu", fid, dim, threads=8, ls_mode="fused", ls_dual=False)
    runner, dual = run("gpu", fid, dim, threads=8, ls_mode="fused")  # on by default where it applies
    assert runner.ls_dual and not single_runner.ls_dual
    # steps whose '-' candidate was needed (and so came from the one pass), and accepted steps
    assert runner.counts["ls_evaluations"] > runner.counts["ls_steps"] and runner.ls_improved > 0
    np.testing.assert_array_equal(dual.trace["best_error"], single.trace["best_error"])
    np.testing.assert_array_equal(dual.best_x, single.best_x)
    assert runner.counts == single_runner.counts
    # the rows say how each run was made
    assert dual.info["options"]["ls_dual"] is True and single.info["options"]["ls_dual"] is False


SHARE_CASES = [("C13", 100 * SCALE, "position"), ("C13", 100 * SCALE, "natural")]


@pytest.mark.parametrize("fid,dim,layout", SHARE_CASES, ids=[c[2] for c in SHARE_CASES])
def test_a_neighbour_taken_from_the_thread_that_computes_it_makes_the_same_run(fid, dim, layout):
    # ls_share_next: Rosenbrock's next coordinate from shared memory (the tile's last position computes
    # its own; D = 100 with 8 threads leaves a part tile): the same values in the same order, bit for bit
    kw = dict(threads=8, ls_mode="fused", layout=layout)
    _, drawn = run("gpu", fid, dim, **kw)
    runner, shared = run("gpu", fid, dim, ls_share_next=True, ls_dual=False, **kw)
    assert runner.ls_share_next and runner.ls_improved > 0
    assert shared.info["options"]["ls_share_next"] is True and shared.info["options"]["layout"] == layout
    # and with ls_dual, both candidates in one pass, their neighbours shared alike
    runner, both = run("gpu", fid, dim, ls_share_next=True, ls_dual=True, **kw)
    assert runner.ls_dual and runner.counts["ls_evaluations"] > runner.counts["ls_steps"]
    np.testing.assert_array_equal(both.trace["best_error"], drawn.trace["best_error"])
    np.testing.assert_array_equal(both.best_x, drawn.best_x)
    np.testing.assert_array_equal(shared.trace["best_error"], drawn.trace["best_error"])
    np.testing.assert_array_equal(shared.best_x, drawn.best_x)


def test_dual_is_a_flag_and_changes_nothing_where_the_terms_read_other_coordinates():
    with pytest.raises(InvalidInputError, match="ls_dual must be True or False"):
        make_runner("masw", "gpu", "L01", 24, NP, MAX_FES, ls_dual="yes")
    # Rosenbrock's next coordinate: one candidate a pass, as without it, unless its neighbours are shared
    assert make_runner("masw", "gpu", "C13", 100, NP, MAX_FES, ls_mode="fused", ls_dual=True).ls_dual is False
    assert make_runner("masw", "gpu", "C13", 100, NP, MAX_FES, ls_mode="fused").ls_dual is False
    assert make_runner("masw", "gpu", "C13", 100, NP, MAX_FES, ls_mode="fused", ls_share_next=True).ls_dual is True
    assert make_runner("masw", "gpu", "L01", 100, NP, MAX_FES, ls_mode="steps", ls_dual=True).ls_dual is False
    # ls_share_next likewise: a flag, for Rosenbrock's next coordinate only
    with pytest.raises(InvalidInputError, match="ls_share_next must be True or False"):
        make_runner("masw", "gpu", "C13", 100, NP, MAX_FES, ls_share_next=1)
    assert make_runner("masw", "gpu", "L01", 100, NP, MAX_FES, ls_mode="fused", ls_share_next=True).ls_share_next \
        is False


def test_rows_in_position_order_make_the_same_run():
    # layout="position" (C13's default: Rosenbrock's next coordinate through a permutation) keeps x[perm[k]]
    # at index k, so nothing is gathered; each index draws its coordinate's numbers (initial population,
    # crossover, mutation, perturbation): the same run as the natural order, the same final population
    # (returned in the natural order), to the rounding of sums in another order. Here the step kernels
    # and the fused GA; the fused local search and the separate GA with it (C13's defaults) make
    # masw/sequential's run above (test_fused_local_search_follows_sequential[C13]).
    fid, dim = "C13", 100 * SCALE
    kw = dict(threads=8, ls_mode="steps", ga_mode="fused")
    natural_runner, natural = run("gpu", fid, dim, layout="natural", **kw)
    runner, position = run("gpu", fid, dim, layout="position", **kw)
    assert runner.layout == "position" and runner.ls_improved > 0
    assert make_runner("masw", "gpu", fid, dim, NP, MAX_FES).layout == "position"
    assert make_runner("masw", "gpu", "C04", dim, NP, MAX_FES).layout == "natural"  # (memory order: no gather)
    assert_same_run(natural, position, rtol=1e-12)
    for x, y in zip(natural_runner.population(), runner.population()):
        np.testing.assert_allclose(y, x, rtol=1e-12)


def test_layout_is_checked():
    with pytest.raises(InvalidInputError, match="layout must be one of natural, position"):
        make_runner("masw", "gpu", "C13", 100, NP, MAX_FES, layout="permuted")
    with pytest.raises(InvalidInputError, match="L01 has no permutation: use layout='natural'"):
        make_runner("masw", "gpu", "L01", 24, NP, MAX_FES, layout="position")


def test_ls_unroll_and_min_blocks_are_checked():
    for bad in (2, 0, True, "4"):
        with pytest.raises(InvalidInputError, match="ls_unroll must be one of 1, 4"):
            make_runner("masw", "gpu", "L01", 24, NP, MAX_FES, ls_unroll=bad)
    for bad in (-1, 33, 1.5, True):
        with pytest.raises(InvalidInputError, match=r"ls_min_blocks must be an integer in \[0, 32\]"):
            make_runner("masw", "gpu", "L01", 24, NP, MAX_FES, ls_min_blocks=bad)


def test_ls_mode_is_checked():
    with pytest.raises(InvalidInputError, match="ls_mode must be"):
        make_runner("masw", "gpu", "L01", 24, NP, MAX_FES, ls_mode="one")
    with pytest.raises(InvalidInputError, match="needs a large-scale function"):
        make_runner("masw", "gpu", "Q04", 10, NP, MAX_FES, ls_mode="fused")


def test_replacement_on_the_device_is_the_host_rule():
    # ties (between population and children, and among children), NaN and inf, several sizes
    from numba import cuda

    from gpude.algorithms.masw import replacement
    from gpude.implementations.masw_gpu import build_gpu_masw

    kernel = build_gpu_masw(np.float64, 6, 8)["replace_children"]
    rng = np.random.default_rng(5)
    for trial in range(12):
        P, k = 6, int(rng.integers(1, 5))
        values = rng.choice([0.5, 1.0, 2.0, 3.0, np.inf, np.nan], size=P + k)
        plan = np.zeros((k, 3), np.int64)
        plan[:, :2] = rng.integers(0, P, (k, 2))
        fit, moves = cuda.to_device(values), cuda.to_device(np.full((k, 2), -1))
        nmoves = cuda.to_device(np.zeros(1, np.int64))
        replaced, tally = cuda.to_device(np.zeros(P, np.int32)), cuda.to_device(np.zeros(2, np.int64))
        where = cuda.to_device(np.arange(P + k, dtype=np.int64))
        rank = cuda.to_device(np.zeros(P + k, np.int32))
        threads = (1, 3, 32)[trial % 3]  # the block's threads share the ranking: any number of them
        kernel[1, threads](fit, P, k, cuda.to_device(plan), moves, nmoves, replaced, tally, where, np.int32(1), rank)
        expect = replacement(values[:P], values[P:])
        n = int(nmoves.copy_to_host()[0])
        got = [(int(a), int(b) - P) for a, b in moves.copy_to_host()[:n]]
        assert got == expect, (values, got, expect)
        after = values[:P].copy()
        for slot, c in expect:
            after[slot] = values[P + c]
        np.testing.assert_array_equal(fit.copy_to_host()[:P], after)
        assert sorted(np.flatnonzero(replaced.copy_to_host())) == sorted(s for s, _ in expect)
        assert tally.copy_to_host().tolist() == [len(expect), len(set(plan[:, :2].ravel().tolist()))]
        # the entering children's rows are the slots' now, and the slots' rows are theirs (no copy)
        stored = np.arange(P + k)
        for slot, c in expect:
            stored[slot], stored[P + c] = P + c, slot
        np.testing.assert_array_equal(where.copy_to_host(), stored)


def test_the_default_ls_mode_follows_the_measurements():
    from gpude.functions.largescale import LARGE_SCALE
    from gpude.implementations.masw_gpu.ls import default_ls_mode, fused_options

    codes = {fid: d.code for fid, d in LARGE_SCALE.items()}
    # pointwise terms, the rotated head and Schwefel 1.2's scan: fused at every D (measured up to
    # 3e6); Rosenbrock's next coordinate: fused up to 5e5
    for fid in ("L01", "L06", "C04", "C08"):
        assert default_ls_mode(codes[fid], 3_000_000) == "fused", fid
    assert default_ls_mode(codes["C13"], 500_000) == "fused" and default_ls_mode(codes["C13"], 1_000_000) == "steps"
    assert fused_options(codes["L01"], 100_000) == {"ls_unroll": 4, "ls_min_blocks": 2}
    assert fused_options(codes["C04"], 3_000_000) == {"ls_unroll": 4, "ls_min_blocks": 2}
    assert fused_options(codes["L06"], 100_000) == {"ls_unroll": 1, "ls_min_blocks": 0}
    assert fused_options(codes["L06"], 1_000_000) == {"ls_unroll": 1, "ls_min_blocks": 3}
    assert fused_options(codes["C13"], 100_000) == {"ls_unroll": 1, "ls_min_blocks": 0}
    runner = make_runner("masw", "gpu", "L01", 24, NP, MAX_FES)
    assert (runner.ls_mode, runner.ls_unroll, runner.ls_min_blocks) == ("fused", 4, 2)
    runner = make_runner("masw", "gpu", "L01", 24, NP, MAX_FES, ls_unroll=1, ls_min_blocks=0)
    assert (runner.ls_unroll, runner.ls_min_blocks) == (1, 0)


# -- trials per launch ------------------------------------------------------------------
# (a large-scale function through each local search mode, a CEC 2010 one and a program function; L06
# through steps added 20 s to the CI suite and nothing these do not cover)
BATCH_CASES = [("L02", 24 * SCALE, "fused"), ("C04", 100 * SCALE, "steps"), ("Q04", 10, "steps")]


def assert_same_trial(batched, alone):
    """The same run to the last bit: the same evaluators on the same rows, whatever the batch."""
    assert batched.seed == alone.seed
    assert batched.best_error == alone.best_error
    np.testing.assert_array_equal(batched.best_x, alone.best_x)
    for key in ("generation", "fes", "best_error"):
        np.testing.assert_array_equal(batched.trace[key], alone.trace[key])
    assert (batched.fes_used, batched.generations, batched.hit_target, batched.fes_to_target, batched.stopped_by) == \
        (alone.fes_used, alone.generations, alone.hit_target, alone.fes_to_target, alone.stopped_by)


@pytest.mark.parametrize("fid,dim,ls_mode", BATCH_CASES, ids=[f"{c[0]}-{c[2]}" for c in BATCH_CASES])
def test_each_trial_of_a_batch_makes_its_own_run(fid, dim, ls_mode):
    # a batch's trials share every launch (the fused mode: all but the applications), each with its
    # own key: each makes exactly its run alone, new chains and kept results included
    seeds = [SEED, 8, 9] if ls_mode == "fused" else [SEED, 8]
    threads = {} if fid == "Q04" else {"threads": 16}
    r = make_runner("masw", "gpu", fid, dim, NP, MAX_FES, **PARAMS, **threads, ls_mode=ls_mode,
                    trials_per_launch=len(seeds), quiet=True)
    assert r.trials_per_launch == len(seeds) and r.ls_mode == ls_mode
    batch = r.run_batch(seeds)
    population = r.population(1)
    applications, counts = r.ls_applications, dict(r.counts)
    alone, populations = [], []
    summed = dict.fromkeys(counts, 0)
    for s in seeds:
        alone.append(r.run(s))
        populations.append(r.population())
        for key, value in r.counts.items():
            summed[key] += value
    for b, a in zip(batch, alone):
        assert_same_trial(b, a)
    assert len({b.best_error for b in batch}) == len(seeds)  # different seeds, different runs
    for x, y in zip(population, populations[1]):  # trial 1's final population and errors, as alone
        np.testing.assert_array_equal(x, y)
    # the kernels' counts are the trials' summed (ga_steps: one per step launched, for all)
    assert applications == 2 * len(seeds)
    assert {k: v for k, v in counts.items() if k != "ga_steps"} == \
        {k: v for k, v in summed.items() if k != "ga_steps"}
    assert counts["ga_steps"] * len(seeds) == summed["ga_steps"]
    # the shares add up to the batch's wall time, and the row records the grouping
    wall = batch[0].info["batch_wall_time_s"]
    assert sum(b.wall_time_s for b in batch) == pytest.approx(wall)
    assert all(b.info["options"]["trials_per_launch"] == len(seeds) for b in batch)
    assert alone[0].info["options"]["trials_per_launch"] == 1
    assert alone[0].wall_time_s == alone[0].info["batch_wall_time_s"]


def test_each_trial_of_a_batch_stops_at_its_own_target():
    # a target that one trial reaches after its first cycle and another not before its third: the
    # first stops there (its population no longer advanced: the batch's copy is its state then)
    # while the batch runs on, and every trial's row is that of its run alone with the target
    seeds, max_fes = [3, 11], NP + 3 * 32
    kw = dict(**PARAMS, ls_mode="steps", quiet=True)
    full = make_runner("masw", "gpu", "Q04", 10, NP, max_fes, **kw)
    traces = [full.run(s).trace["best_error"] for s in seeds]
    target = min(t[1] for t in traces)
    assert max(t[-2] for t in traces) > target  # some trial runs past the others' stop
    r = make_runner("masw", "gpu", "Q04", 10, NP, max_fes, target=target, trials_per_launch=2, **kw)
    batch = r.run_batch(seeds)
    finals = [r.population(b) for b in range(2)]
    for b, (s, trace) in enumerate(zip(seeds, traces)):
        a = r.run(s)
        assert_same_trial(batch[b], a)
        for x, y in zip(finals[b], r.population()):
            np.testing.assert_array_equal(x, y)
        hit = np.flatnonzero(trace <= target)
        last = int(hit[0]) if hit.size else len(trace) - 1
        assert batch[b].generations == last and batch[b].hit_target == bool(hit.size)
        np.testing.assert_array_equal(batch[b].trace["best_error"], trace[:last + 1])
        assert (batch[b].time_to_target_s is not None) == batch[b].hit_target
        assert batch[b].stopped_by == ("target" if hit.size else "budget")
    assert min(b.generations for b in batch) == 1 < max(b.generations for b in batch)
    # a trial that stopped is charged until the host saw its stop; the shares add up to the wall time
    assert sum(b.wall_time_s for b in batch) == pytest.approx(batch[0].info["batch_wall_time_s"])
    first = min(range(2), key=lambda b: batch[b].generations)
    assert batch[first].time_to_target_s <= batch[first].wall_time_s < max(b.wall_time_s for b in batch)


def test_trials_per_launch_is_checked(monkeypatch):
    from gpude.implementations import masw_gpu

    with pytest.raises(InvalidInputError, match="trials_per_launch must be a positive integer"):
        make_runner("masw", "gpu", "L01", 24, NP, MAX_FES, trials_per_launch=0)
    with pytest.raises(InvalidInputError, match="at most 1024 trials per launch"):
        make_runner("masw", "gpu", "L01", 24, NP, MAX_FES, trials_per_launch=1025)
    # a batch that does not fit names the largest trials_per_launch that does
    r = make_runner("masw", "gpu", "L01", 24, NP, MAX_FES, trials_per_launch=8, quiet=True)
    per_trial = masw_gpu.bytes_per_trial(NP, 20, 24, 8)
    free = (3 * per_trial + 3 * 24 * 8) / 0.95 + 1  # three trials and the function's data

    class Context:
        def get_memory_info(self):
            return free, 10 * free

    monkeypatch.setattr(masw_gpu.runner.cuda, "current_context", lambda: Context())
    assert r.check_memory(3) == 3 * per_trial + 3 * 24 * 8
    with pytest.raises(InvalidInputError, match="the largest trials_per_launch that fits is 3"):
        r.check_memory(8)
    with pytest.raises(InvalidInputError, match="the largest trials_per_launch that fits is 3"):
        r.warmup()
    free = per_trial / 2  # not even one trial: the largest D that fits, as before
    with pytest.raises(InvalidInputError, match="the largest D that fits"):
        r.check_memory(8)


def test_batched_replacement_on_the_device_is_the_host_rule_per_trial():
    # three trials' populations then their children in one array; trial 1 stopped: no move
    from numba import cuda

    from gpude.algorithms.masw import replacement
    from gpude.implementations.masw_gpu import build_gpu_masw

    kernel = build_gpu_masw(np.float64, 6, 8)["replace_batch"]
    rng = np.random.default_rng(6)
    B, P, off = 3, 6, 4
    for trial in range(6):
        k = int(rng.integers(1, off + 1))
        pops = rng.choice([0.5, 1.0, 2.0, 3.0, np.inf, np.nan], size=(B, P))
        children = rng.choice([0.5, 1.0, 2.0, 3.0, np.inf, np.nan], size=(B, off))
        fit = np.concatenate([pops.ravel(), children.ravel()])
        plan = np.zeros((B * off, 3), np.int64)
        plan[:, :2] = rng.integers(0, P, (B * off, 2)) + np.repeat(np.arange(B) * P, off)[:, None]
        active = np.array([1, 0, 1], np.int32)
        d_fit, moves = cuda.to_device(fit), cuda.to_device(np.full((B * off, 2), -1))
        nmoves, replaced = cuda.to_device(np.full(B, 99, np.int64)), cuda.to_device(np.zeros(B * P, np.int32))
        tally = cuda.to_device(np.zeros(2 * B, np.int64))
        where = cuda.to_device(np.arange(B * (P + off), dtype=np.int64))
        swap = trial % 2  # without swapping (an evaluator without a row map) the rows stay where they are
        rank = cuda.to_device(np.zeros(B * (P + off), np.int32))
        kernel[B, (1, 4, 32)[trial % 3]](d_fit, P, k, off, cuda.to_device(plan), moves, nmoves, replaced, tally,
                                         cuda.to_device(active), where, np.int32(swap), rank)
        stored = np.arange(B * (P + off))
        after, n, moved = d_fit.copy_to_host(), nmoves.copy_to_host(), moves.copy_to_host()
        for b in range(B):
            expect = replacement(pops[b], children[b, :k]) if active[b] else []
            got = [(int(s) - b * P, int(c) - B * P - b * off) for s, c in moved[b * off:b * off + n[b]]]
            assert got == expect, (b, got, expect)
            want = pops[b].copy()
            for slot, c in expect:
                want[slot] = children[b, c]
            np.testing.assert_array_equal(after[b * P:(b + 1) * P], want)
            assert sorted(np.flatnonzero(replaced.copy_to_host()[b * P:(b + 1) * P])) == sorted(s for s, _ in expect)
            parents = len(set(plan[b * off:b * off + k, :2].ravel().tolist())) if active[b] else 0
            assert tally.copy_to_host()[2 * b:2 * b + 2].tolist() == [len(expect), parents]
            for slot, c in expect if swap else []:
                stored[b * P + slot], stored[B * P + b * off + c] = B * P + b * off + c, b * P + slot
        np.testing.assert_array_equal(where.copy_to_host(), stored)


@pytest.mark.parametrize("fid,dim,offspring", [("L02", 24 * SCALE, 3), ("C04", 100 * SCALE, 2),
                                               ("C13", 100 * SCALE, 2)],
                         ids=["L02-short-step", "C04-head", "C13-next"])
def test_children_evaluated_as_they_are_made_give_the_same_run(fid, dim, offspring):
    """ga_mode='fused' (masw_gpu.ga): the crossover adds each child's terms as it makes them, with the
    evaluator's coordinates, blocks and closing; the run is the separate evaluation's bit for bit
    (pointwise terms with a short last GA step; the rotated head group and Rosenbrock's next
    coordinate through a permutation)."""
    params = dict(PARAMS, offspring=offspring)
    runs = {}
    for mode in ("separate", "fused"):
        r = make_runner("masw", "gpu", fid, dim, NP, NP + 32, **params, ga_mode=mode, threads=16, quiet=True)
        assert r.ga_mode == mode
        runs[mode] = (r.run(SEED), r.population(), dict(r.counts))
    (a, pa, ca), (b, pb, cb) = runs["separate"], runs["fused"]
    np.testing.assert_array_equal(b.trace["best_error"], a.trace["best_error"])
    np.testing.assert_array_equal(pb[0], pa[0])
    np.testing.assert_array_equal(pb[1], pa[1])
    assert cb.pop("fused_children") == cb["children"] > 0 and ca.pop("fused_children") == 0
    assert ca == cb


def test_ga_mode_is_checked():
    assert make_runner("masw", "gpu", "L02", 24, NP, MAX_FES, **PARAMS, quiet=True).ga_mode == "separate"
    assert make_runner("masw", "gpu", "L06", 24, NP, MAX_FES, **PARAMS, quiet=True).ga_mode == "separate"
    with pytest.raises(InvalidInputError, match="ga_mode must be 'fused' or 'separate'"):
        make_runner("masw", "gpu", "L02", 24, NP, MAX_FES, **PARAMS, ga_mode="merged")
    for fid, dim in (("L06", 24), ("Q04", 10)):
        with pytest.raises(InvalidInputError, match="ga_mode='fused'.*use ga_mode='separate'"):
            make_runner("masw", "gpu", fid, dim, NP, MAX_FES, **PARAMS, ga_mode="fused")


def test_children_evaluated_as_they_are_made_in_a_batch():
    # two trials per launch (grid row b k + c, the children of trial b at its own rows): each trial's
    # run is the separate evaluation's
    runs = {}
    for mode in ("separate", "fused"):
        r = make_runner("masw", "gpu", "L02", 24 * SCALE, NP, NP + 32, **dict(PARAMS, offspring=3), ga_mode=mode,
                        threads=16, trials_per_launch=2, quiet=True)
        runs[mode] = r.run_batch([SEED, 8])
    for a, b in zip(runs["separate"], runs["fused"]):
        np.testing.assert_array_equal(b.trace["best_error"], a.trace["best_error"])
        np.testing.assert_array_equal(b.best_x, a.best_x)
    assert runs["fused"][0].best_error != runs["fused"][1].best_error


def test_rows_by_reference_make_the_run_of_copies(monkeypatch):
    """An entering child swaps stored rows with its slot (the row map ``where``) instead of being
    copied into it: the same run bit for bit as the copies an evaluator without a row map needs (the
    children evaluated through the map; the fused GA's own test compares it with this path), the
    population read back through the map; and the rows did move."""
    from gpude.functions.streaming_gpu import StreamingEvaluator

    def one(row_map):
        monkeypatch.setattr(StreamingEvaluator, "row_map", row_map)
        r = make_runner("masw", "gpu", "L02", 24, NP, NP + 24, **PARAMS, ls_mode="steps", threads=16, quiet=True)
        res = r.run(SEED)
        assert r.swap_rows == row_map
        where = r.buf.d_where.copy_to_host()
        return res, r.population(), r.best_vector(), r.counts["moves"], where

    (a, pa, xa, moves_a, where_a), (b, pb, xb, moves_b, where_b) = one(False), one(True)
    np.testing.assert_array_equal(b.trace["best_error"], a.trace["best_error"])
    np.testing.assert_array_equal(pb[0], pa[0])
    np.testing.assert_array_equal(pb[1], pa[1])
    np.testing.assert_array_equal(xb, xa)
    np.testing.assert_array_equal(b.best_x, a.best_x)
    assert moves_a == moves_b > 0
    np.testing.assert_array_equal(where_a, np.arange(where_a.size))
    assert sorted(where_b) == list(range(where_b.size)) and (where_b != np.arange(where_b.size)).any()
