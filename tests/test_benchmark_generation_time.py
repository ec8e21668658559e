"""benchmarks/generation_time.py on the simulator at tiny sizes: a row per timed run with its span,
single launches for the implementations without graphs, and clear refusals of bad cases."""

import os

import numpy as np
import pandas as pd
import pytest
from _benchmarks import load_benchmark

bench = load_benchmark("generation_time")


@pytest.mark.cudasim
def test_rows_per_case_span_and_repeat(tmp_path):
    out = tmp_path / "gen.csv"
    assert bench.main(["--cases", "all_gpu:N09:6:6:2,ide:N09:6:6", "--spans", "1,2",
                       "--generations", "4", "--repeats", "2", "--out", str(out)]) == 0
    rows = pd.read_csv(out)
    # all_gpu (2 trials per launch) at spans 1 and 2, ide at span 1 only; twice each
    key = rows.groupby(["implementation", "trials_per_launch", "graph_generations"]).size().to_dict()
    assert key == {("all_gpu", 2, 1): 2, ("all_gpu", 2, 2): 2, ("ide", 1, 1): 2}
    assert (rows["generations"] == 4).all()
    np.testing.assert_allclose(rows["us_per_generation"], 1e6 * rows["wall_s"] / 4, rtol=1e-12)  # (CSV round trip)
    graphed = rows[rows["graph_generations"] == 2]
    # the simulator replays one by one; a GPU captures the graph
    assert (graphed["graph_captured"] == (os.environ.get("NUMBA_ENABLE_CUDASIM") != "1")).all()
    assert {"gpu", "host", "git_commit", "numba"} <= set(rows.columns)


@pytest.mark.parametrize("case", ["all_gpu:F01:100", "all_gpu:F01:100:x", "all_gpu:F01:100:50:y"])
def test_a_bad_case_is_named_with_the_form_it_takes(case):
    with pytest.raises(SystemExit, match="IMPLEMENTATION:FUNCTION:DIM:NP"):
        bench.parse_case(case)


def test_bad_spans_are_refused(tmp_path):
    with pytest.raises(SystemExit, match="--spans"):
        bench.main(["--spans", "1,x", "--out", str(tmp_path / "x.csv")])
    with pytest.raises(SystemExit, match="must be positive"):
        bench.main(["--spans", "0", "--out", str(tmp_path / "x.csv")])


def test_the_implementations_with_graphs_are_read_from_their_options():
    assert [i for i in ("all_gpu", "many_threaded", "fpde", "ide", "sequential") if bench.takes_graphs(i)] == \
        ["all_gpu", "many_threaded"]
