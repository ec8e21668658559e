"""RunSpec, the one typed value from the experiment to the kernel: every experiment's batch written as
`gpude run` arguments reads back to the same RunSpec; `gpude run` asks the registry once; the GPU
lease is released however the run ends."""

from __future__ import annotations

import pytest
from test_experiment_model import FILES, registry_kept

from gpude import cli
from gpude.campaign import cells as campaign_cells
from gpude.core import gpu_lease
from gpude.core.errors import GpudeError
from gpude.run.spec import RunSpec
from gpude.study import experiment as model

RUN = ["run", "--implementation", "sequential", "--function", "f01", "--dim", "10", "--popsize", "10",
       "--max-fes", "100", "--trials", "2", "--first-trial", "3", "--seed", "7", "--suite", "s", "--param", "tau1=0.1"]


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_every_batch_of_every_experiment_reads_back_from_its_arguments(path):
    with registry_kept():
        experiment = campaign_cells.load_experiment(path)
        experiment_file = str(path)
        batches = model.grid(experiment)
        assert batches
        for batch in batches:
            first, count = model.chunk_trials(experiment, batch.algorithm, batch.implementation, batch.chunk)
            spec = model.run_spec(experiment, batch, first, count, "exclusive-gpu:2", experiment_file=experiment_file)
            again = RunSpec.from_args(spec.to_args())
            assert again == spec, (spec.to_args(), again, spec)


def test_a_command_line_becomes_a_spec_with_the_canonical_function_and_its_trials_seeds():
    spec = RunSpec.from_namespace(cli.build_parser().parse_args(RUN))
    assert spec.function == "F01" and spec.max_fes == 100 and spec.params == (("tau1", 0.1),)
    assert [t for t, _ in spec.trial_seeds()] == [3, 4]
    assert spec.trial_seeds() == RunSpec.from_args(spec.to_args()).trial_seeds()
    assert "--param tau1=0.1" in spec.configuration_args() and "--first-trial 3 --trials 2" in spec.run_args()
    with pytest.raises(GpudeError, match="give --CR 0.5 instead"):
        RunSpec.from_args(RUN[1:] + ["--param", "CR=0.5"])


def test_gpude_run_asks_the_registry_once(tmp_path, monkeypatch, capsys):
    from gpude.implementations import registry

    calls = []
    real = registry.get
    monkeypatch.setattr(registry, "get", lambda *a, **k: calls.append(a) or real(*a, **k))
    out = tmp_path / "rows"
    assert cli.main(RUN[:-2] + ["--out-csv", f"{out}.csv", "--out-traces", f"{out}.npz"]) == 0
    assert calls == [("de", "sequential")]


def test_the_gpu_lease_is_released_however_the_run_ends(monkeypatch, capsys):
    from gpude.run import trials

    events = []

    class Lease:
        class device:
            index, uuid, name = 0, "GPU-fake", "fake"

        def release(self):
            events.append("released")

    monkeypatch.setattr(gpu_lease, "list_devices", lambda: ["fake"])
    monkeypatch.setattr(gpu_lease, "acquire", lambda *a, **k: events.append("leased") or Lease())
    monkeypatch.setattr(RunSpec, "needs_gpu", property(lambda self: True))
    monkeypatch.setattr(RunSpec, "entry", property(lambda self: type("E", (), {"load": lambda *a, **k: None})()))

    def broken(spec, *a):
        raise GpudeError("the run broke")

    monkeypatch.setattr(trials, "run_trials", broken)
    assert cli.main(RUN) == 2
    assert events == ["leased", "released"]
    assert "gpude run: error: the run broke" in capsys.readouterr().err
