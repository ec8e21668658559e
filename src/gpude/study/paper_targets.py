"""The paper and report targets of a workflow run: which experiments the report covers, the trial
tables each experiment's paper job reads, its presentation inputs and ``gpude paper`` arguments, the
optional outputs it writes, and the inputs of the GPU-scaling figure.

Every experiment of ``config/experiments/`` takes part: the configured one as loaded and checked
(:class:`~gpude.study.experiment.Experiment`), each other one read for its ``report:`` settings only
(:func:`~gpude.study.experiment.read_experiment`), so that a broken one fails only its own paper job.
Paths are relative to the workflow's directory.
"""

from __future__ import annotations

import functools
import shlex
from pathlib import Path

from ..core.errors import GpudeError
from . import experiment as experiment_model
from .projection import PAPER_EXPERIMENTS

EXPERIMENTS_DIR = "config/experiments"
REFERENCE_DIR = "results/reference"
#: the committed scaling runs (gpude.study.gpu_scaling writes a folder's rows.csv and batches.csv)
GPU_SCALING_DIR = "results/benchmarks/gpu_scaling"


def reference_tables(experiment: str) -> list[str]:
    """Committed trial tables of an experiment, one per machine that ran it: trials.csv, or
    trials.csv.gz for a large one that no campaign completes any more (pandas reads either).

    Raises
    ------
    ValueError
        A machine's folder holds both.
    """
    tables = []
    for folder in sorted(Path(REFERENCE_DIR).glob(f"*/{experiment}")):
        found = [folder / name for name in ("trials.csv", "trials.csv.gz") if (folder / name).is_file()]
        if len(found) > 1:
            raise ValueError(f"{folder} holds both trials.csv and trials.csv.gz: keep one")
        tables += [str(p) for p in found]
    return tables


def beside(table: str, name: str) -> str:
    """The file ``name`` (traces.npz, rerun_check.csv) in the folder of a trials table."""
    return str(Path(table).with_name(name))


def one_of(names) -> str:
    """A wildcard constraint matching exactly these names (nothing, for none)."""
    return "|".join(sorted(names)) or "(?!)"


def gpu_scaling_runs() -> list[str]:
    """The committed scaling runs' folders (those with both rows.csv and batches.csv)."""
    return sorted(str(p.parent) for p in Path(GPU_SCALING_DIR).glob("*/rows.csv")
                  if (p.parent / "batches.csv").is_file())


class PaperTargets:
    """The paper targets around a configured experiment.

    Parameters
    ----------
    configured : Experiment
        The run's experiment.
    runs_here : bool
        Whether it has batches to run on this machine (its grid is not empty).
    section_class : callable
        The report's section lookup (:func:`gpude.report.document.section_class`): a name, or None
        for the generic section, to its writer class; an unknown name raises GpudeError.
    """

    def __init__(self, configured: experiment_model.Experiment, runs_here: bool, section_class):
        self.configured = configured
        self.runs_here = runs_here
        self.section_class = section_class
        #: experiment name -> its file: every file of config/experiments/, and the configured one's
        self.files = {p.stem: str(p) for p in sorted(Path(EXPERIMENTS_DIR).glob("*.yaml"))}
        self.files[configured.name] = configured.file
        self._presentations = {configured.name: configured.report}

    @functools.cached_property
    def reported(self) -> list[str]:
        """The experiments the report covers: the configured one where it runs here or has
        reference results, then every other one with reference results."""
        name = self.configured.name
        return ([name] if self.runs_here or reference_tables(name) else []) + \
            [e for e in self.files if e != name and reference_tables(e)]

    @property
    def local_targets(self) -> list[str]:
        """The configured experiment's merged trials and statistics, where it runs here (else none:
        its paper outputs come from the committed reference results alone)."""
        name = self.configured.name
        return [f"results/{name}/trials.csv", f"results/{name}/stats/rank_sum_time.csv"] if self.runs_here else []

    def notice(self) -> str | None:
        """What to tell the user where the configured experiment has nothing to run here, else None."""
        if self.runs_here:
            return None
        name = self.configured.name
        return (f"gpude: experiment {name} has nothing to run on this machine; " +
                (f"its tables come from results/reference/*/{name}/ only" if name in self.reported else
                 "nor reference results: the report covers the other experiments"))

    def sources(self, experiment: str) -> list[str]:
        """The trial tables a paper job is made from: the experiment's reference tables, and this
        run's where it is the configured experiment and runs here.

        Raises
        ------
        ValueError
            There are none.
        """
        local = [f"results/{experiment}/trials.csv"] if experiment == self.configured.name and self.runs_here else []
        sources = reference_tables(experiment) + local
        if not sources:
            raise ValueError(f"no results for experiment {experiment}: run it, or commit "
                             f"results/reference/<machine>/{experiment}/trials.csv")
        return sources

    def presentation(self, experiment: str) -> dict:
        """The experiment's ``report:`` settings (each file read once: every paper job's input
        functions ask for them)."""
        if experiment not in self._presentations:
            self._presentations[experiment] = experiment_model.read_experiment(self.files[experiment]).get("report", {})
        return self._presentations[experiment]

    def presentation_files(self, experiment: str) -> list[str]:
        """The CSVs the experiment's ``report:`` names, and each reference's rerun check
        (``gpude rerun-check``'s rerun_check.csv beside its trials) where there is one: inputs of its
        paper job, so that a change re-runs it."""
        presentation = self.presentation(experiment)
        reruns = [beside(p, "rerun_check.csv") for p in reference_tables(experiment)]
        return [presentation[k] for k in ("published", "alone", "crosscheck") if presentation.get(k)] + \
            list(presentation.get("compare", {}).values()) + list(presentation.get("study_inputs", {}).values()) + \
            [p for p in reruns if Path(p).is_file()]

    def published_args(self, experiment: str) -> str:
        """``gpude paper``'s arguments for what the experiment's ``report:`` puts beside its results
        (the paper's own numbers, other measured tables) and its section."""
        presentation = self.presentation(experiment)
        args = [f"--published {presentation['published']}"] if presentation.get("published") else []
        args += [f"--compare {shlex.quote(f'{label}={csv}')}" for label, csv in presentation.get("compare", {}).items()]
        args += [f"--alone {presentation['alone']}"] if presentation.get("alone") else []
        args += [f"--study {presentation['section']}"] if presentation.get("section") else []
        args += [f"--study-input {shlex.quote(f'{name}={path}')}"
                 for name, path in presentation.get("study_inputs", {}).items()]
        return " ".join(args)

    def generic_outputs(self, experiment: str):
        """The optional generic outputs of ``gpude paper`` (gpude.report.document.GENERIC_OUTPUTS) that
        the experiment's report section wants; the generic section's for a misspelt section of another
        experiment (which fails in its own paper job)."""
        try:
            return self.section_class(self.presentation(experiment).get("section")).generic_outputs
        except GpudeError:
            return self.section_class(None).generic_outputs

    @functools.cached_property
    def wall_time_experiments(self) -> list[str]:
        """The experiments whose paper outputs include the wall-time tables and figure."""
        return sorted(e for e in self.files if "time" in self.generic_outputs(e))

    @functools.cached_property
    def figure_experiments(self) -> list[str]:
        """The reported experiments whose section shows the figures of every trial (the others' are
        drawn on request: ``snakemake paper/<experiment>/convergence.png``)."""
        return [e for e in self.reported if "figures" in self.generic_outputs(e)]

    @functools.cached_property
    def projected_experiments(self) -> list[str]:
        """The papers' experiments with committed references, whose GPU runs ``gpude
        paper-gpu-scaling`` projects onto 1, 2, 4, 8 GPUs."""
        return [e for e in PAPER_EXPERIMENTS if e in self.files and reference_tables(e)]
