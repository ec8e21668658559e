"""Shared test setup.

CUDA code runs on numba's CUDA simulator unless the caller sets
NUMBA_ENABLE_CUDASIM=0 (on a machine with a GPU, to test the real device), with the scheduler of
tests/_fast_simulator.py (GPUDE_TEST_STOCK_SIMULATOR=1 for numba-cuda's own).
The variable must be set before numba is first imported, hence here.
"""

import json
import os
import sys
from pathlib import Path

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
# the workflow's CPU lane (gpude.study.host_shape) would depend on the machine's GPUs and cores; the tests
# that want it set the host's shape themselves (GPUDE_HOST_CORES, GPUDE_FAKE_GPUS, GPUDE_CPU_LANE)
os.environ.setdefault("GPUDE_CPU_LANE", "0")
# the suite runs more workers than CI's cores: numba's OpenMP threads (master_slave's parallel regions) must
# sleep at a barrier, not spin, or a spinning thread holds up one that shares its core for a time slice at
# every generation (docs/implementations.md, master_slave); results do not depend on it
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
if os.environ["NUMBA_ENABLE_CUDASIM"] == "1":
    if os.environ.get("GPUDE_TEST_STOCK_SIMULATOR") != "1":
        # the same simulator with a scheduler that neither polls nor starts a thread per CUDA thread
        # and launch: two to four times as fast (_fast_simulator.py)
        from _fast_simulator import install

        install()
    else:
        # the stock scheduler polls its threads in a loop that holds the GIL for the switch interval
        # (default 5 ms) between threads' turns: a short one makes its kernels several times faster
        sys.setswitchinterval(5e-4)

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

REFERENCE = Path(__file__).parent / "reference" / "cec"


def load_reference():
    """values.csv joined with the points: {(fid, dim): (X, rows DataFrame with column 'row')}."""
    values = pd.read_csv(REFERENCE / "values.csv")
    layout = json.loads((REFERENCE / "points" / "manifest.json").read_text())["row_layout"]
    out = {}
    for (fid, dim), rows in values.groupby(["function_id", "dim"]):
        name = f"{fid}_D{dim}.npy"
        index = {(kind, int(i)): r for r, (kind, i) in enumerate(layout[name])}
        rows = rows.assign(row=[index[(k, int(i))] for k, i in zip(rows.point_kind, rows.point_index)])
        out[(fid, int(dim))] = (np.load(REFERENCE / "points" / name), rows)
    return out


def pytest_sessionstart(session):
    # Compile DE on one thread and on a thread pool (what most tests and every `gpude run` of the
    # end-to-end tests use) once, into numba's disk cache, before the xdist workers start: with an
    # empty cache both workers and each of those subprocesses compiled it at the same time (~10 s each).
    # Only in the controller (or a run without xdist); the workers and subprocesses load it.
    if hasattr(session.config, "workerinput") or session.config.option.collectonly:
        return
    from gpude import run_trial

    for implementation in ("sequential", "master_slave"):
        run_trial(implementation=implementation, function="Q01", dim=10, popsize=8, max_fes=40, seed=1)


def pytest_collection_modifyitems(config, items):
    # the long end-to-end tests (marked slow) first: the workers start them early and end together,
    # instead of one worker running a minute-long test at the end while the other idles
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)  # stable: otherwise as collected
    # --dist loadgroup sends the tests of an xdist_group to one worker by the suffix "@<group>" of their
    # node ids, which pytest-xdist sets through Item._nodeid; pytest 9.2 reads node ids from Item._id
    # instead, so the suffix was lost and every test went to whichever worker was free (pytest-xdist
    # issue 1386): tests sharing an expensive module fixture each made it again on each worker. The
    # same suffix, where pytest 9.2 reads it (the workers' collections: what the scheduler sees).
    if getattr(config.option, "loadgroup", False):  # (set by pytest-xdist in a worker of --dist loadgroup)
        for item in items:
            names = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                            for m in item.iter_markers("xdist_group")})
            if names and "@" not in item.nodeid and hasattr(item, "_id"):
                item._id = type(item._id).parse(f"{item.nodeid}@{'_'.join(names)}")


@pytest.fixture(scope="session")
def reference():
    return load_reference()


def relative_error(got, want):
    """|got - want| / max(|want|, 1), the CEC reference's measure."""
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    return np.abs(got - want) / np.maximum(np.abs(want), 1.0)
