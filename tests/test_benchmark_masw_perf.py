"""benchmarks/masw_perf.py's traffic model and protocol bookkeeping (no GPU: the measurements
themselves run on the GPU host)."""

import importlib.util
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("masw_perf", ROOT / "benchmarks" / "masw_perf.py")
masw_perf = importlib.util.module_from_spec(spec)
spec.loader.exec_module(masw_perf)


def test_every_lastra_function_has_a_kind_and_its_runs():
    config = yaml.safe_load((ROOT / "config" / "experiments" / "lastra.yaml").read_text())
    assert sorted(f for fids in masw_perf.KINDS.values() for f in fids) == sorted(config["functions"])
    assert tuple(config["dims"]) == masw_perf.PROTOCOL_DIMS
    runs = [masw_perf.runs_per_cell(f) for f in config["functions"]]
    assert sum(runs) * len(config["dims"]) == 1250  # 5 x 5 x 10 + 10 x 5 x 20


def test_traffic_model_by_hand():
    # one GA step of 2 children (pairs (0,1),(0,2),(3,1),(3,4): 5 distinct rows; parents {0,1,3}),
    # one replacement; LS: 5 evaluations in 3 steps, 1 accepted
    counts = dict(ga_steps=1, children=2, dist_pairs=4, dist_rows=5, parent_rows=3, moves=1,
                  ls_evaluations=5, ls_steps=3, ls_accepted=1, new_chains=0)
    after = masw_perf.traffic_rows(counts, "after", has_perm=False)
    assert after == dict(ga=5 + 3 + 2 * 2 + 1 + 2, ls=4 * 5 + 5)
    before = masw_perf.traffic_rows(counts, "before", has_perm=False)
    # pairs 2 rows each; children: 2 parents + write, then read + o; per evaluation 6 rows
    # (+ reads x, b, writes d, candidate; the evaluation reads the candidate and o), per step 3
    # (b, d read, b written), per accepted step 2
    assert before == dict(ga=2 * 4 + 3 * 2 + 2 * 2 + 2, ls=6 * 5 + 3 * 3 + 2)
    assert masw_perf.traffic_rows(counts, "after", has_perm=True)["ls"] == 4.5 * 5 + 5


def test_a_batched_measurement_reports_per_run_times(monkeypatch):
    """--trials-per-launch: the child runs a batch and divides the batch's clock by its size (on the
    simulator, tiny sizes: the bookkeeping, not the speed)."""
    import pytest

    from gpude.functions.gpu import simulator_enabled

    if not simulator_enabled():
        pytest.skip("the simulator's tiny sizes")
    monkeypatch.setattr(masw_perf, "CYCLE_FES", 30)
    monkeypatch.setattr(masw_perf, "POPSIZE", 8)
    batch = masw_perf.child("L01", 16, 1, "steps", 2)
    assert batch["batch"] == 2 and len(batch["cycle_s"]) == 1 and batch["fes"] == 38
    assert batch["cycle_s"][0] > 0 and batch["init_s"] >= 0
