"""``jso/block`` and ``lshade/block`` (numba's CUDA simulator): the run of ``jso/sequential`` to the
evaluation's rounding on a run long enough for the archive to fill and be replaced into, the population
to shrink every generation and the memory to turn; the generation schedule; time budgets in chunks;
bad options. (The registry batteries, tests/test_implementations.py and test_trials_per_launch.py, run
both on the tiny shared sizes.)"""

from __future__ import annotations

import numpy as np
import pytest

from gpude.algorithms.jso import JSOParams
from gpude.core.errors import InvalidInputError
from gpude.implementations.jso_block import fes_schedule
from gpude.run.trial import make_runner

SEEDS = [3, 4]


@pytest.fixture(scope="module", params=["jso", "lshade"])
def pair(request):
    """Both trials of a batch of 2 and their sequential runs: F03 (rotated Rastrigin), D 10, NP_init
    10, 150 FEs (the archive fills at once, NP shrinks 10 -> 4)."""
    algorithm = request.param
    gpu = make_runner(algorithm, "block", "F03", 10, 10, 150, trials_per_launch=2)
    cpu = make_runner(algorithm, "sequential", "F03", 10, 10, 150)
    g = gpu.run_batch(SEEDS)
    c = []
    for s in SEEDS:
        c.append((cpu.run(s), cpu.population(), cpu.memory()))
    return algorithm, gpu, g, c


def test_same_run_as_sequential_with_archive_replacements_and_shrinking(pair):
    algorithm, gpu, g, c = pair
    for b, (r, (pop, fit), (_m_f, _m_cr, _archive, state)) in enumerate(c):
        assert g[b].generations == r.generations and g[b].fes_used == r.fes_used == 150
        np.testing.assert_array_equal(g[b].trace["fes"], r.trace["fes"])
        np.testing.assert_allclose(g[b].trace["best_error"], r.trace["best_error"], rtol=1e-10)
        np.testing.assert_allclose(g[b].best_x, r.best_x, rtol=0, atol=1e-9)
        gpop, gfit = gpu.population(b)
        assert gpop.shape == pop.shape == (int(state[0]), 10) and int(state[0]) == 4
        np.testing.assert_allclose(gpop, pop, rtol=0, atol=1e-9)
        np.testing.assert_allclose(gfit, fit, rtol=1e-10)
    # the run did what the test is for: the archive was full (replacements drawn) and the memory moved
    m_f, m_cr, archive, state = c[0][2]
    assert len(archive) == int(state[2]) and not np.allclose(m_f, JSOParams(popsize=10).memory_F if algorithm == "jso"
                                                            else 0.5)


def test_fes_schedule_is_the_sequential_trace():
    p = JSOParams(popsize=18, max_fes=500)
    r = make_runner("jso", "sequential", "Q01", 10, 18, 500).run(1)
    np.testing.assert_array_equal(fes_schedule(p), r.trace["fes"])
    assert fes_schedule(p)[0] == 18 and fes_schedule(p)[-1] == 500


def test_a_time_budget_runs_in_chunks_and_makes_the_same_run():
    fixed = make_runner("jso", "block", "Q01", 10, 8, 60, trials_per_launch=1).run_batch([9])[0]
    chunked = make_runner("jso", "block", "Q01", 10, 8, 60, max_time_s=1e6, trials_per_launch=1,
                          chunk_generations=2).run_batch([9])[0]
    assert chunked.generations == fixed.generations and chunked.best_error == fixed.best_error
    np.testing.assert_array_equal(chunked.trace["best_error"], fixed.trace["best_error"])
    assert np.all(np.isfinite(chunked.trace["time_s"]))


def test_bad_options_are_refused():
    with pytest.raises(InvalidInputError, match="no option blocks"):
        make_runner("jso", "block", "Q01", 10, 8, 60, blocks=2)
    with pytest.raises(InvalidInputError, match="warps"):
        make_runner("jso", "block", "Q01", 10, 8, 60, warps=0)
