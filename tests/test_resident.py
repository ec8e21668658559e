"""``de/resident``: the whole DE run in one cooperative kernel launch (grid barrier between
generations, the stop test and the trace on the device). It makes the run of every other DE
implementation for a seed, trial by trial in a batch, and under every stop (target, max_fes cut in
a generation, wall-clock budget in chunks of generations).

On numba's simulator (a cooperative grid of one block only): tiny sizes. On a GPU
(NUMBA_ENABLE_CUDASIM=0) the populations and batches are 10x larger, so that the grid has
hundreds of blocks and each block strides over several units, and the forced grids vary.
"""

import itertools
import os
from types import SimpleNamespace

import numpy as np
import pytest

from gpude.core.errors import InvalidInputError
from gpude.run.trial import make_runner

pytestmark = pytest.mark.cudasim

SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM", "1") == "1"
SCALE = 1 if SIMULATOR else 10
DIM = 10
NP = 6 * SCALE
#: rotated N17 has shared buffers of 2 D (wider than the trial vector)
FUNCTIONS = ["Q04", "N09", "N17"]
SEEDS = [3, 11, 12]
#: 3 full generations and a partial one (2 of the NP trial vectors)
MAX_FES = NP * 4 + 2
#: the grids to try: 1 block (every unit by one block), a few (blocks stride), the default
GRIDS = [1] if SIMULATOR else [1, 7, None]


def runner(implementation, function="Q04", max_fes=MAX_FES, **kw):
    return make_runner("de", implementation, function, DIM, NP, max_fes, **kw)


def assert_same_run(got, want, exact, rtol=1e-9):
    """The same decisions; the errors equal to rounding (CPU vs GPU evaluation), or bit for bit."""
    assert (got.seed, got.fes_used, got.generations, got.hit_target, got.fes_to_target, got.stopped_by) == \
        (want.seed, want.fes_used, want.generations, want.hit_target, want.fes_to_target, want.stopped_by)
    if exact:
        assert got.best_error == want.best_error
        np.testing.assert_array_equal(got.best_x, want.best_x)
        np.testing.assert_array_equal(got.trace["best_error"], want.trace["best_error"])
    else:
        np.testing.assert_allclose(got.best_error, want.best_error, rtol=rtol)
        np.testing.assert_allclose(got.best_x, want.best_x, rtol=rtol * 1e-3)
        np.testing.assert_allclose(got.trace["best_error"], want.trace["best_error"], rtol=rtol)
    np.testing.assert_array_equal(got.trace["fes"], want.trace["fes"])
    np.testing.assert_array_equal(got.trace["generation"], want.trace["generation"])


@pytest.mark.parametrize("function", FUNCTIONS)
def test_same_runs_as_sequential_and_all_gpu(function):
    resident, sequential, all_gpu = (runner(i, function) for i in ("resident", "sequential", "all_gpu"))
    seeds = SEEDS if function == FUNCTIONS[0] else SEEDS[:2]
    batch = resident.run_batch(seeds)
    for b, seed in enumerate(seeds):
        alone = resident.run(seed)
        ref = sequential.run(seed)
        assert alone.fes_used == MAX_FES and alone.generations == 4 and alone.stopped_by == "budget"
        assert_same_run(alone, ref, exact=False)
        # the same evaluation code as all_gpu's, the same threads: bit for bit on the simulator
        assert_same_run(alone, all_gpu.run(seed), exact=SIMULATOR)
        assert_same_run(batch[b], alone, exact=True)
        # the final population (the last generation cut by max_fes: the last NP - 2 keep their parents)
        np.testing.assert_allclose(resident.population()[0], sequential.population()[0], rtol=1e-12)


@pytest.mark.parametrize("blocks", GRIDS)
def test_the_grid_changes_nothing(blocks):
    base = runner("resident").run_batch(SEEDS)
    r = runner("resident", blocks=blocks)
    got = r.run_batch(SEEDS)
    assert all(g.info["options"]["blocks"] == r.blocks for g in got)
    if blocks is not None:
        assert r.blocks == blocks
    for g, b in zip(got, base):
        assert_same_run(g, b, exact=True)


def test_each_trial_stops_at_its_own_target_even_at_initialisation():
    # a target between the trials' initial bests (one trial hits at generation 0), and one between
    # the others' final errors: the trials stop where they stop alone, and as sequential's runs
    max_fes = 8 * NP
    full = [runner("sequential", max_fes=max_fes).run(s) for s in SEEDS]
    starts = sorted(r.trace["best_error"][0] for r in full)
    target = (starts[0] + starts[1]) / 2
    finals = sorted(r.best_error for r in full if r.trace["best_error"][0] > target)
    target2 = (finals[0] + finals[1]) / 2  # a second trial hits later, the third never
    for t in (target, target2):
        r = runner("resident", max_fes=max_fes, target=t)
        batch = r.run_batch(SEEDS)
        for b, seed, ref in zip(batch, SEEDS, full):
            trace = ref.trace["best_error"]
            hit = np.flatnonzero(trace <= t)
            last = int(hit[0]) if hit.size else len(trace) - 1
            assert b.generations == last and b.hit_target == bool(hit.size)
            assert b.stopped_by == ("target" if hit.size else "budget")
            np.testing.assert_allclose(b.trace["best_error"], trace[: last + 1], rtol=1e-9)
            assert_same_run(b, r.run(seed), exact=True)
            if b.hit_target:
                assert b.fes_to_target == b.fes_used == NP * (last + 1)
                assert b.time_to_target_s == b.wall_time_s
        if t == target:
            assert sorted(b.generations for b in batch)[:1] == [0]
        assert sum(b.wall_time_s for b in batch) == pytest.approx(batch[0].info["batch_wall_time_s"])


def test_every_trial_hitting_stops_the_kernel_early():
    # a target every trial reaches: the kernel stops after the last trial's hit, long before max_fes
    full = [runner("sequential", max_fes=8 * NP).run(s) for s in SEEDS]
    target = max(r.trace["best_error"][3] for r in full)
    r = runner("resident", max_fes=10**6, target=target)
    batch = r.run_batch(SEEDS)
    assert all(b.hit_target for b in batch) and max(b.generations for b in batch) <= 3
    assert int(r.h_state[0]) == max(b.generations for b in batch)  # the kernel's last generation


@pytest.mark.parametrize("implementation", ["resident", "block"])  # (de/block: resident's host side)
def test_a_time_budget_runs_in_chunks_of_generations(monkeypatch, implementation):
    from gpude.implementations import device_loop, resident

    # the trace grows on demand (1 -> 2 -> 4 -> 8 generations) as chunks of 3 generations need it;
    # the host's clock advances 10 ms at every read, so the budget buys 3 chunks however busy the machine
    monkeypatch.setattr(device_loop, "TRACE_CHUNK", 1)
    r = runner(implementation, max_fes=10**12, target=0.0, max_time_s=0.025, chunk_generations=3)
    clock = itertools.count()
    monkeypatch.setattr(resident, "time", SimpleNamespace(perf_counter=lambda: next(clock) * 0.01))
    timed = r.run_batch(SEEDS[:2])
    monkeypatch.undo()
    for t in timed:
        assert t.stopped_by == "time" and t.generations == 9 and t.fes_used == 10 * NP
        assert t.info["options"]["chunk_generations"] == 3
        assert t.wall_time_s == t.info["batch_wall_time_s"]  # every trial had the whole budget
        times = t.trace["time_s"]
        assert np.all(np.isfinite(times)) and np.all(np.diff(times) > 0) and times[-1] <= t.wall_time_s
    assert 9 < r.d_trace.shape[1] <= 16
    # the seeds' runs: a fixed budget of the FEs the time bought ends on the same trace
    fixed = runner("resident", max_fes=10 * NP, target=0.0).run_batch(SEEDS[:2])
    for t, f in zip(timed, fixed):
        assert f.stopped_by == "budget"
        np.testing.assert_array_equal(t.trace["best_error"], f.trace["best_error"])
        np.testing.assert_array_equal(t.best_x, f.best_x)
        assert np.isnan(f.trace["time_s"]).all()  # no per-generation times without chunks


def test_a_time_budget_of_nothing_still_runs_its_first_chunk():
    r = runner("resident", max_fes=10**12, max_time_s=1e-9, chunk_generations=2).run(5)
    assert r.stopped_by == "time" and r.generations == 2 and r.fes_used == 3 * NP


def test_under_a_time_budget_the_fe_budget_and_the_target_still_stop_the_run():
    want = runner("resident").run_batch(SEEDS)
    got = runner("resident", max_time_s=600.0, chunk_generations=3).run_batch(SEEDS)  # chunks 1-3, 4
    for g, w in zip(got, want):
        assert_same_run(g, w, exact=True)
    ref = runner("sequential", max_fes=8 * NP).run(SEEDS[0])
    target = float(ref.trace["best_error"][2])
    hit = runner("resident", max_fes=10**12, target=target, max_time_s=600.0, chunk_generations=2).run(SEEDS[0])
    assert hit.stopped_by == "target" and hit.generations == int(np.flatnonzero(ref.trace["best_error"] <= target)[0])
    assert hit.time_to_target_s == hit.wall_time_s


def bad_option_cases(implementation):
    """The options resident and de/block refuse alike (resident's host side serves both)."""
    return [({"chunk_generations": 0}, "chunk_generations must be a positive integer"),
            ({"trials_per_launch": 0}, "trials_per_launch must be a positive integer"),
            ({"poll_every": 2}, f"de/{implementation} takes no option poll_every"),
            ({"mutation": "best1"}, f"'{implementation}' runs DE/rand/1/bin only")]


@pytest.mark.parametrize("options,msg", [({"blocks": 0}, "blocks must be a positive integer"),
                                         *bad_option_cases("resident")])
def test_bad_options_are_refused_clearly(options, msg):
    with pytest.raises(InvalidInputError, match=msg):
        runner("resident", **options)


@pytest.mark.skipif(not SIMULATOR, reason="the simulator's limit")
def test_the_simulator_runs_one_block():
    with pytest.raises(InvalidInputError, match="cooperative grids of one block only"):
        runner("resident", blocks=2)
    r = runner("resident")
    r.run(1)
    assert r.blocks == 1


@pytest.mark.skipif(SIMULATOR, reason="a real GPU's occupancy")
def test_a_grid_larger_than_the_gpu_keeps_resident_is_refused():
    r = runner("resident")
    r.run(1)
    with pytest.raises(InvalidInputError, match="cooperative launch needs every block resident"):
        runner("resident", blocks=r.blocks + 10**6).run(1)


@pytest.mark.parametrize("max_time_s", [None, 600.0])
def test_a_budget_of_the_initial_population_only(max_time_s):
    got = runner("resident", max_fes=NP, max_time_s=max_time_s).run_batch(SEEDS[:2])
    for g, seed in zip(got, SEEDS):
        want = runner("sequential", max_fes=NP).run(seed)
        assert g.generations == 0 and g.fes_used == NP and g.stopped_by == "budget"
        np.testing.assert_allclose(g.trace["best_error"], want.trace["best_error"], rtol=1e-9)


def test_float32_makes_all_gpus_run():
    want = runner("all_gpu", "N09", dtype="float32").run(SEEDS[0])
    got = runner("resident", "N09", dtype="float32").run(SEEDS[0])
    assert_same_run(got, want, exact=SIMULATOR, rtol=1e-5)
