"""One experiment model (gpude.study.experiment): the workflow's rules, a campaign's plan and an interleaved
run list the same batches for every experiment file. The Snakefile's own dry runs are compared in
the tests that already make them, all in one process (tests/test_workflow.py: every experiment
without a GPU; tests/test_kromer_pilot.py: a parameter grid; tests/test_scaling_curves.py: subgrids,
with a GPU); here every file with a GPU, through the functions the Snakefile calls."""

import contextlib
import re
import sys
from pathlib import Path

import pytest

from gpude.campaign import cells as campaign_cells
from gpude.campaign.interleave import interleaved_jobs
from gpude.study import experiment as model

ROOT = Path(__file__).resolve().parents[1]
FILES = sorted((ROOT / "config/experiments").glob("*.yaml"))


@contextlib.contextmanager
def registry_kept():
    """What loading an experiment registers (its plugins' and programs' implementations) leaves after
    the block; the side by side's plugin is imported afresh (a plugin registers when imported)."""
    from gpude.implementations import registry

    registry._ensure_loaded()
    saved = dict(registry._REGISTRY)
    sys.modules.pop("gpude.implementations.janssen", None)
    try:
        yield
    finally:
        registry._REGISTRY.clear()
        registry._REGISTRY.update(saved)


def dry_run_batches(stderr: str) -> set[str]:
    """The batches of a `snakemake -n -p` job list: the stems of its `gpude run` jobs' --out-csv."""
    return {m.group(1) for m in re.finditer(r"gpude run .*? --out-csv (\S+)\.csv", stderr)}


def campaign_batches(path, has_gpu: bool = True) -> set[str]:
    """The batches of a campaign's plan of the experiment file (:func:`gpude.campaign.cells.grid`)."""
    with registry_kept():
        experiment = campaign_cells.load_experiment(path)
        return {c.batch(experiment["name"], k) for c in campaign_cells.grid(experiment, has_gpu=has_gpu)
            for k in c.chunks()}


def test_the_model_fills_the_schemas_defaults():
    defaults = model.defaults()
    assert defaults["trials"] == 30 and defaults["dtypes"] == ["float64"] and defaults["timing"] == "exclusive"
    assert campaign_cells.DEFAULTS == defaults
    experiment = model.load_experiment(ROOT / "config/experiments/smoke.yaml")
    assert all(key in experiment for key in defaults)


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_the_workflow_the_campaign_and_the_interleave_plan_the_same_batches(path):
    with registry_kept():
        experiment = model.load_experiment(path)
        workflow = [job.path(experiment["name"]) for job in model.grid(experiment, True)]
        jobs = interleaved_jobs(experiment, str(path)) if len(experiment["algorithms"]) == 1 else None
    assert len(workflow) == len(set(workflow))
    assert campaign_batches(path) == set(workflow)
    if jobs is not None:
        assert sorted(j["stem"] for j in jobs) == sorted(workflow)


def test_subgrids_and_parameter_grids_reach_the_campaign():
    # the case: scaling_curves.yaml's subgrids leave 69 batches, not the full 225
    curves = ROOT / "config/experiments/scaling_curves.yaml"
    assert len(interleaved_jobs(model.load_experiment(curves), str(curves))) == 69
    pilot = campaign_cells.load_experiment(ROOT / "config/experiments/kromer_pilot_etc_f_consistent.yaml")
    cells = campaign_cells.grid(pilot)
    assert len(cells) == 4 * 3 * 2 and len({c.key() for c in cells}) == len(cells)
    cell = next(c for c in cells if c.setting == "F0.3_CR0.01")
    command = campaign_cells.rule_command(pilot, cell, 0)
    assert "/de/sequential/F0.3_CR0.01/" in command and "--F 0.3 --CR 0.01" in command
    assert "--setting F0.3_CR0.01" in command
    assert campaign_cells.run_id(cell, 0) == f"de/sequential/F0.3_CR0.01/{cell.function}/d{cell.dim}/np64/float64/t0"


def test_the_experiment_object_is_the_checked_mapping_with_its_file(tmp_path):
    smoke = ROOT / "config/experiments/smoke.yaml"
    with registry_kept():
        experiment = model.Experiment.load(smoke)
        spec = model.load_experiment(smoke)
    assert experiment.spec == spec and experiment.name == "smoke" and experiment.file == str(smoke)
    assert experiment.grid(False) == model.grid(spec, False) and experiment.param_grid is False
    batch = experiment.grid()[0]
    assert experiment.chunk_trials(batch.algorithm, batch.implementation, 0) == \
        model.chunk_trials(spec, batch.algorithm, batch.implementation, 0)
    assert experiment.run_spec(batch, 0, 2, "shared") == model.run_spec(spec, batch, 0, 2, "shared")
    assert experiment.report == spec.get("report", {}) and experiment.get("seed") == spec["seed"]


def test_the_configured_experiment_names_its_file_and_checks_its_report_section(tmp_path):
    from gpude.report.document import section_class

    smoke = ROOT / "config/experiments/smoke.yaml"
    copy = tmp_path / "mine.yaml"
    copy.write_text(smoke.read_text())
    config = {"experiment": "config/experiments/default.yaml", **model.read_experiment(smoke), "scaling": None}
    with registry_kept():
        experiment = model.Experiment.from_config(config, [str(smoke), str(copy), ROOT / "config/config.yaml"],
                                                  section_class=section_class)
        assert experiment.name == "smoke" and "scaling" not in experiment.spec
        assert experiment.file == str(copy)  # the last --configfile that names it
        assert model.Experiment.from_config(config, [], section_class=section_class).file == \
            "config/experiments/default.yaml"
        with pytest.raises(ValueError, match="experiment smoke: report: unknown report section 'nope'"):
            model.Experiment.from_config({**config, "report": {"section": "nope"}}, [], section_class=section_class)
