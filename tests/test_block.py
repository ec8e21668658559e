"""``de/block``: each trial's run in one thread block (a block per trial, a block barrier between
generations). It makes ``de/resident``'s run for a seed bit for bit (the same unit steps and
threads) and ``de/sequential``'s to rounding, trial by trial in a batch, under every stop (target,
a max_fes cut in a generation; a wall-clock budget in chunks of generations: tests/test_resident.py)."""

import os

import numpy as np
import pytest
from test_resident import bad_option_cases

from gpude.core.errors import InvalidInputError
from gpude.run.trial import make_runner

pytestmark = pytest.mark.cudasim

SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM", "1") == "1"
DIM, NP = 10, 6 * (1 if SIMULATOR else 10)
SEEDS = [3, 11, 12]
MAX_FES = NP * 4 + 2  # 3 full generations and a partial one


def runner(implementation, function="Q04", max_fes=MAX_FES, **kw):
    return make_runner("de", implementation, function, DIM, NP, max_fes, **kw)


def same(got, want, exact=True):
    assert (got.seed, got.fes_used, got.generations, got.hit_target, got.fes_to_target, got.stopped_by) == \
        (want.seed, want.fes_used, want.generations, want.hit_target, want.fes_to_target, want.stopped_by)
    if exact:
        assert got.best_error == want.best_error
        np.testing.assert_array_equal(got.best_x, want.best_x)
        np.testing.assert_array_equal(got.trace["best_error"], want.trace["best_error"])
    else:
        np.testing.assert_allclose(got.trace["best_error"], want.trace["best_error"], rtol=1e-9)
        np.testing.assert_allclose(got.best_x, want.best_x, rtol=1e-12)


def test_a_batch_makes_the_runs_of_resident_and_sequential(function="Q04"):
    # (the unit steps are resident's, tested there on wider shared buffers too: N17)
    block = runner("block", function)
    batch = block.run_batch(SEEDS)
    assert block.blocks == len(SEEDS) and all(b.info["options"]["blocks"] == 3 for b in batch)
    resident = runner("resident", function).run_batch(SEEDS)
    for b, r, seed in zip(batch, resident, SEEDS):
        assert b.generations == 4 and b.fes_used == MAX_FES and b.stopped_by == "budget"
        same(b, r)
        same(b, runner("sequential", function).run(seed), exact=False)
    # the final population (the last generation cut by max_fes: the last NP - 2 keep their parents)
    sequential = runner("sequential", function)
    sequential.run(SEEDS[2])
    np.testing.assert_allclose(block.population(2)[0], sequential.population()[0], rtol=1e-12)


def test_each_block_stops_at_its_own_target():
    # one trial hits at initialisation, one later, one never: each block stops at its own
    max_fes = 8 * NP
    full = [runner("sequential", max_fes=max_fes).run(s) for s in SEEDS]
    starts = sorted(r.trace["best_error"][0] for r in full)
    finals = sorted(r.best_error for r in full if r.trace["best_error"][0] > (starts[0] + starts[1]) / 2)
    for target in ((starts[0] + starts[1]) / 2, (finals[0] + finals[1]) / 2):
        r = runner("block", max_fes=max_fes, target=target)
        got = r.run_batch(SEEDS)
        want = runner("resident", max_fes=max_fes, target=target).run_batch(SEEDS)
        for g, w in zip(got, want):
            same(g, w)
        assert int(r.h_state[0]) == max(g.generations for g in got)


def test_a_second_batch_on_the_same_runner_starts_again():
    # the blocks raise the last-generation counter with atomic.max, so it is zeroed before every batch:
    # a batch whose trial never hits (9 generations), then one whose trial hits early. The seeds and the
    # target are picked from the runs this backend makes (the simulator's and a GPU's differ in rounding)
    full = {s: runner("resident", max_fes=10 * NP).run(s) for s in range(1, 9)}  # (the same bits)
    late = max(full, key=lambda s: full[s].best_error)

    def first_below(s):  # (index into the trace, which keeps the generations that improved)
        below = np.flatnonzero(full[s].trace["best_error"] < full[late].best_error)
        return int(below[0]) if below.size and full[s].trace["generation"][below[0]] > 0 else None

    hits = {s: first_below(s) for s in full if s != late and first_below(s) is not None}
    early = min(hits, key=lambda s: full[s].trace["generation"][hits[s]])
    target = float(full[early].trace["best_error"][hits[early]])
    hit_generation = int(full[early].trace["generation"][hits[early]])
    assert full[late].best_error > target and 0 < hit_generation < 9
    r = runner("block", max_fes=10 * NP, target=target)
    assert r.run(late).generations == 9 and int(r.h_state[0]) == 9
    hit = r.run(early)
    assert hit.hit_target and hit.generations == hit_generation
    assert int(r.h_state[0]) == hit.generations
    same(hit, runner("resident", max_fes=10 * NP, target=target).run(early))


@pytest.mark.parametrize("options,msg", [({"blocks": 2}, "de/block takes no option blocks"),
                                         *bad_option_cases("block")])
def test_bad_options_are_refused_clearly(options, msg):
    with pytest.raises(InvalidInputError, match=msg):
        runner("block", **options)


@pytest.mark.parametrize("function", ["F05", "F09"])
def test_warps_over_several_rounds_make_sequential_runs(function, monkeypatch):
    # D 50: a lane sums two elements (rounding apart from resident's); NP 7 over 2 warps: four rounds,
    # the last with a warp that has no individual; a hybrid and a composition function
    from gpude.implementations import block

    monkeypatch.setattr(block, "MAX_WARPS", 2)
    dim, popsize, max_fes = 50, 7, 7 * 2 + 5  # a full generation and a partial one
    r = make_runner("de", "block", function, dim, popsize, max_fes, dtype="float64")
    batch = r.run_batch([4, 9])
    assert r.threads == 32 * 2
    for got, seed in zip(batch, [4, 9]):
        want = make_runner("de", "sequential", function, dim, popsize, max_fes, dtype="float64").run(seed)
        same(got, want, exact=False)


def test_warps_are_capped_by_shared_memory_and_population():
    from gpude.implementations.block import MAX_WARPS, SHARED_BYTES, block_warps

    assert block_warps(250, 100, 100, np.float32) == MAX_WARPS
    assert block_warps(6, 100, 100, np.float32) == 6 and block_warps(250, 100, 100, np.float32, most=2) == 2
    per_warp = (1000 + 2 * 2000 + 128) * 8
    assert block_warps(250, 1000, 2000, np.float64) == SHARED_BYTES // per_warp
    with pytest.raises(InvalidInputError, match="use de/resident"):
        block_warps(250, 4000, 4000, np.float64)
