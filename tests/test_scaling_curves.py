"""The scaling curves as experiments (config/experiments/scaling_curves.yaml and
scaling_curves_batched.yaml, formerly benchmarks/scaling.py): the workflow's batch jobs are the NP
sweep at D=100 and the D sweep at NP=250 (F01 and F10 to D=100, N05 to 1000) for each line, every run
with no target. Both files parsed in one Snakemake process (as `snakemake -n` parses them), on a copy
of the workflow."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpude.study.experiment import BATCH

ROOT = Path(__file__).resolve().parents[1]
EXPERIMENTS = ("scaling_curves", "scaling_curves_batched")
# what the parse reports per experiment: the batch jobs (common.smk's GRID) and a batch's arguments
PARSE = r"""
import json, sys, types
from pathlib import Path
from snakemake.api import SnakemakeApi
from snakemake.settings.types import ConfigSettings, OutputSettings, ResourceSettings

out = {}
for name in sys.argv[1:]:
    with SnakemakeApi(OutputSettings()) as api:
        dag = api.workflow(resource_settings=ResourceSettings(cores=1), snakefile=Path("Snakefile"),
                           workdir=Path("."), config_settings=ConfigSettings(
                               configfiles=[Path(f"config/experiments/{name}.yaml")], config={"gpu": "yes"})).dag()
        g = dag.workflow_api._workflow.globals
        grid = [job.wildcards() for job in g["GRID"]]
        wildcards = types.SimpleNamespace(**{k: str(v) for k, v in grid[0].items()}, experiment=name)
        out[name] = dict(grid=grid, args=g["run_params"](wildcards))
Path("parsed.json").write_text(json.dumps(out))
"""


@pytest.fixture(scope="module")
def parsed(tmp_path_factory):
    work = tmp_path_factory.mktemp("scaling_curves")
    for name in ("Snakefile", "workflow", "config", "profiles"):  # (no results: the grid needs none)
        (shutil.copytree if (ROOT / name).is_dir() else shutil.copy)(ROOT / name, work / name)
    res = subprocess.run([sys.executable, "-c", PARSE, *EXPERIMENTS], cwd=work, capture_output=True, text=True,
                         timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads((work / "parsed.json").read_text())


def plan(implementations):
    """The old script's points: per function the NP sweep at D=100, then the D sweep at NP=250 (F01 and
    F10 have official data up to D=100 only); every line at each."""
    points = set()
    for function in ("F01", "F10", "N05"):
        dims = (10, 30, 100) if function != "N05" else (10, 30, 100, 300, 1000)
        sizes = {(100, p) for p in (50, 100, 250, 500, 1000)} | {(d, 250) for d in dims}
        points |= {(impl, function, d, p) for impl in implementations for d, p in sizes}
    return points


def test_the_sweeps_are_the_batch_jobs(parsed):
    # both experiments in one test: one parse for both (the cases of a parametrized test could run on
    # two xdist workers, each parsing)
    for name, implementations, per_launch in [("scaling_curves", ("ide", "resident", "all_gpu"), 1),
                                              ("scaling_curves_batched", ("ide",), 30)]:
        grid, args = parsed[name]["grid"], parsed[name]["args"]
        cells = [(j["implementation"], j["function"], j["dim"], j["popsize"]) for j in grid]
        # one job per point (the shared one once)
        assert len(cells) == len(set(cells)) == 23 * len(implementations), name
        assert set(cells) == plan(implementations), name
        assert {j["dtype"] for j in grid} == {"float32"} and {j["chunk"] for j in grid} == {0}, name
        # the campaign and the interleave plan the same batches (subgrids honoured)
        from test_experiment_model import campaign_batches

        assert campaign_batches(ROOT / f"config/experiments/{name}.yaml") == \
            {BATCH.format(experiment=name, **j) for j in grid}, name
        # no target (every run spends the 1e7 FEs), F and CR of case study 1, the trials of one job
        assert "--target=-inf" in args and "--max-fes 10000000" in args and "--F 0.5 --CR 0.3" in args, (name, args)
        assert ("--trials-per-launch 30" in args) == (per_launch > 1), (name, args)
        assert f"--trials {30 if per_launch > 1 else 3} " in args and "--concurrency exclusive" in args, (name, args)
