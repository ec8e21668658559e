"""Trials advanced together (every registered implementation that takes ``trials_per_launch``: the
GPU device loops, resident and block, pso/gpu, ss/gpu, masw/gpu, ...): each trial of a batch makes
exactly the run it makes alone, stops at its own target, and is charged its fair share of the batch's
wall time. On numba's CUDA simulator here, tiny sizes."""

import json

import numpy as np
import pandas as pd
import pytest
from test_implementations import ALGORITHMS

from gpude.core.errors import InvalidInputError
from gpude.implementations import registry
from gpude.implementations.batched import BatchedImplementation, fair_shares
from gpude.run.trial import make_runner

# every batched implementation, as the registry has them (a new one joins the battery by its class)
DEVICE_LOOPS = [(e.algorithm, e.implementation) for e in registry.entries()
                if issubclass(e.load(), BatchedImplementation)]
FUNCTION, DIM, NP, MAX_FES = "Q04", 10, 6, 27  # 4 generations, the last one partial
SEEDS = [3, 11, 12]


def runner(algorithm, implementation, **kw):
    # (all_gpu and many_threaded in single launches: on the simulator a graph's 32 generations run one by
    # one past a trial's hit; replays make the runs of single launches: tests/test_generation_graph.py)
    options = {"ide": {"quiet": True}, "cudade": {"blocks": 3}, "all_gpu": {"graph_generations": 1},
               "many_threaded": {"graph_generations": 1}}.get(implementation, {})
    kw = {**ALGORITHMS[algorithm]["params"], **kw}  # the battery's tiny parameters of each algorithm
    return make_runner(algorithm, implementation, FUNCTION, DIM, NP, kw.pop("max_fes", MAX_FES), **kw, **options)


@pytest.mark.parametrize("entry", [(e.algorithm, e.implementation) for e in registry.entries()],
                         ids=[f"{e.algorithm}/{e.implementation}" for e in registry.entries()])
def test_an_implementation_that_takes_several_trials_a_launch_is_in_the_battery(entry):
    # the battery selects by class; an implementation that takes the option outside it would escape it
    try:
        taken = runner(*entry, trials_per_launch=2).trials_per_launch == 2
    except InvalidInputError as exc:
        assert "takes no option trials_per_launch" in str(exc)
        taken = False
    assert taken == (entry in DEVICE_LOOPS)


def assert_same_run(batched, alone):
    assert batched.seed == alone.seed
    assert batched.best_error == alone.best_error
    np.testing.assert_array_equal(batched.best_x, alone.best_x)
    np.testing.assert_array_equal(batched.trace["best_error"], alone.trace["best_error"])
    assert (batched.fes_used, batched.generations, batched.hit_target, batched.fes_to_target) == \
        (alone.fes_used, alone.generations, alone.hit_target, alone.fes_to_target)


@pytest.mark.parametrize("entry", DEVICE_LOOPS, ids=[f"{a}/{i}" for a, i in DEVICE_LOOPS])
def test_each_trial_of_a_batch_makes_its_own_run(entry):
    r = runner(*entry)
    batch = r.run_batch(SEEDS[:2])
    population = r.population(1)[0]
    alone = [r.run(s) for s in SEEDS[:2]]
    for b, a in zip(batch, alone):
        assert_same_run(b, a)
    assert batch[0].best_error != batch[1].best_error  # different seeds, different runs
    np.testing.assert_array_equal(population, r.population()[0])  # trial 1's, as alone
    # the shares add up to the batch's wall time, and the row records the grouping
    wall = batch[0].info["batch_wall_time_s"]
    assert sum(b.wall_time_s for b in batch) == pytest.approx(wall)
    assert all(b.info["options"]["trials_per_launch"] == 2 for b in batch)
    assert alone[0].info["options"]["trials_per_launch"] == 1
    assert alone[0].wall_time_s == alone[0].info["batch_wall_time_s"]


@pytest.mark.parametrize("entry", DEVICE_LOOPS, ids=[f"{a}/{i}" for a, i in DEVICE_LOOPS])
def test_each_trial_of_a_batch_stops_at_its_own_target(entry):
    # a target between the trials' final errors: two trials reach it, each at the first generation
    # its best error is below it, and the batch runs on for the third with the others' state kept
    max_fes = 6 * NP
    full = [runner(*entry, max_fes=max_fes).run(s) for s in SEEDS]
    finals = sorted(r.best_error for r in full)
    target = (finals[1] + finals[2]) / 2
    batch = runner(*entry, max_fes=max_fes, target=target).run_batch(SEEDS)
    assert sorted(b.hit_target for b in batch) == [False, True, True]
    for b, a in zip(batch, full):
        trace = a.trace["best_error"]
        hit = np.flatnonzero(trace <= target)
        last = int(hit[0]) if hit.size else len(trace) - 1
        assert b.hit_target == bool(hit.size) and b.generations == last
        np.testing.assert_array_equal(b.trace["best_error"], trace[: last + 1])
        # (FEs as the lone run had spent them by then: NP a generation for DE and PSO, not for ss and masw)
        assert b.best_error == trace[last] and b.fes_used == int(a.trace["fes"][last])
        assert (b.time_to_target_s is not None) == b.hit_target
        if b.hit_target:
            assert b.fes_to_target == b.fes_used
            # a trial stops being charged at its hit (masw/gpu's hit time leaves out its share of the final
            # copies, as its lone run records the time at the hit)
            if registry.get(*entry).load().hit_time_before_final_copies:
                assert b.time_to_target_s <= b.wall_time_s
            else:
                assert b.time_to_target_s == b.wall_time_s
    if ALGORITHMS[entry[0]]["np_per_generation"]:  # (ss and masw may reach it only with their last step here)
        assert min(b.fes_used for b in batch) < max_fes  # someone stopped before the budget


def test_fair_shares_by_hand():
    # trials end at 1 s, 3 s and never; the batch took 4 s: 0-1 s shared by 3, 1-3 s by 2, 3-4 s by 1
    np.testing.assert_allclose(fair_shares([1.0, None, 3.0], 4.0), [1 / 3, 1 / 3 + 1 + 1, 1 / 3 + 1])
    # every trial ended (seen) before the final copies: the last 1 s is shared equally
    np.testing.assert_allclose(fair_shares([1.0, 2.0], 3.0), [0.5 + 0.5, 0.5 + 1 + 0.5])
    assert fair_shares([None], 2.5).tolist() == [2.5]
    shares = fair_shares([0.3, None, 0.1, 0.7, None], 1.0)
    assert shares.sum() == pytest.approx(1.0)


def test_trials_per_launch_is_checked():
    from gpude.core.errors import InvalidInputError

    with pytest.raises(InvalidInputError, match="trials_per_launch must be a positive integer"):
        runner("jde", "cujde", trials_per_launch=0)
    with pytest.raises(InvalidInputError, match="sequential takes no option trials_per_launch"):
        runner("de", "sequential", trials_per_launch=2)


@pytest.mark.slow
def test_gpude_run_groups_trials_and_records_the_grouping(tmp_path):
    # 3 trials, 2 per launch: groups of 2 and 1; the rows say so (through the command line's entry
    # point, in this process: the kernels are compiled already)
    from gpude.cli import main

    out = tmp_path / "batch.csv"
    argv = ["run", "--algorithm", "jde", "--implementation", "cujde",
            "--function", FUNCTION, "--dim", str(DIM), "--popsize", str(NP), "--max-fes", str(MAX_FES),
            "--trials", "3", "--seed", "4", "--trials-per-launch", "2", "--out-csv", str(out),
            "--out-traces", str(tmp_path / "batch.npz"), "--gpu", "shared"]  # (CUDA runs here already: no lease)
    assert main(argv) == 0
    rows = pd.read_csv(out)
    assert [json.loads(p)["trials_per_launch"] for p in rows.params] == [2, 2, 1]
    assert rows.trial.tolist() == [0, 1, 2] and (rows.status == "budget").all()
    assert rows.best_error.nunique() == 3


@pytest.mark.slow
def test_gpude_run_groups_masw_gpu_trials(tmp_path):
    # masw/gpu is a host loop, not a device loop, and batches too (tests/test_masw_gpu.py): 2 trials
    # in one launch through the CLI (the grouping of a remainder: the device loops' test above)
    # in this process (its compiled code warm from the other masw tests; a new process spent ~40 s
    # compiling on a cold cache), through the command line's own entry point
    from gpude.cli import main

    out = tmp_path / "masw.csv"
    argv = ["run", "--algorithm", "masw", "--implementation", "gpu",
            "--function", FUNCTION, "--dim", str(DIM), "--popsize", str(NP), "--max-fes", str(MAX_FES),
            "--param", "ls_intensity=2", "--param", "offspring=2", "--trials", "2", "--seed", "4",
            "--trials-per-launch", "2", "--out-csv", str(out), "--out-traces", str(tmp_path / "masw.npz"),
            "--gpu", "shared"]  # (CUDA runs in this process already: no lease)
    assert main(argv) == 0
    rows = pd.read_csv(out)
    assert [json.loads(p)["trials_per_launch"] for p in rows.params] == [2, 2]
    # how the runs were made, beside the algorithm's parameters (Q04 is no large-scale function: the steps)
    assert {k: json.loads(rows.params[0])[k] for k in ("ls_mode", "ga_mode", "layout", "ls_intensity")} == \
        {"ls_mode": "steps", "ga_mode": "separate", "layout": "natural", "ls_intensity": 2}
    assert (rows.status == "budget").all() and rows.best_error.nunique() == 2
    # (that each row is its trial's run alone: tests/test_masw_gpu.py, in process)
