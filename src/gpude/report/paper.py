"""``gpude paper``: the tables, figures and statistics of one experiment's trials, in one folder.

The generic outputs (time and error tables beside the published numbers, the figures of every trial,
the per-cell table, time vs NP, the statistics) are written for every experiment, as far as its
study wants them (:attr:`gpude.report.section.Section.generic_outputs`); then the study's own
(e.g. Nashed et al.'s Table 2 and Fig. 2), the rerun check beside the trials and, given trials run one
per launch, how they compare with the same trials run several per launch. ``gpude report`` assembles
``paper/REPORT.md`` from these folders.
"""

from __future__ import annotations

from pathlib import Path

from ..core.errors import InvalidInputError

#: ``write_paper``'s choices of the figures of every trial
FIGURE_CHOICES = ("study", "all", "none", "only")


def write_paper(trials: list[str], out_dir, *, published: str | None = None, study: str | None = None,
                study_inputs: dict[str, str] | None = None, alone: str | None = None,
                compare: dict[str, str] | None = None, time_budget: bool | None = None,
                figures: str = "study") -> dict:
    """Write an experiment's tables, figures and statistics into ``out_dir``.

    Parameters
    ----------
    trials
        Trials tables (each with its ``traces.npz`` beside it): several combine machines or runs.
    out_dir
        The folder to write (created if missing).
    published
        The paper's numbers (CSV) to put beside ours.
    study
        The experiment's report section (``report: section:``), or None for the generic outputs alone.
    study_inputs
        ``name -> path``: the files the study's section reads beside the trials.
    alone
        A trials table of some of the same trials run one per launch (``table_alone_vs_batched.csv``).
    compare
        ``label -> path``: other measured tables in the published layout (e.g. the authors' code).
    time_budget
        The runs had a wall-clock budget: no time-based score. None: read it from the trials.
    figures
        The figures of every trial (:data:`gpude.report.section.FIGURES`): ``"study"`` where the study's
        section shows them, ``"all"``, ``"none"``, or ``"only"`` (those figures and nothing else: the
        workflow draws them in a job of their own, for the studies that show them and on request).

    Returns
    -------
    dict
        What was written, by kind: a path or a list of paths each.
    """
    import pandas as pd

    from ..core.io import read_csv, write_csv_atomic
    from ..stats.tables import with_competitors, write_statistics
    from .document import section_class
    from .scaling import cell_table, time_vs_popsize
    from .sources import load_sources
    from .timing import write_all

    if figures not in FIGURE_CHOICES:
        raise InvalidInputError(f"figures={figures!r}: one of {', '.join(FIGURE_CHOICES)}")
    # every input before anything is written
    wanted = section_class(study).generic_outputs  # the study's choice of the generic outputs
    table, traces = load_sources(trials, join_guests=section_class(study).join_guests)
    # tables and figures are per competitor: the implementation where only it varies (case study
    # 1), else e.g. algorithm/implementation/popsize (case study 2)
    labelled = with_competitors(table).assign(implementation=lambda d: d["competitor"])
    if figures == "only":
        return write_figures(labelled, traces, out_dir)
    published = read_csv(published, comment="#") if published else None
    others = {label: read_csv(path, comment="#") for label, path in (compare or {}).items()}
    alone = read_csv(alone) if alone else None
    files = write_all(labelled, out_dir, published, others, time="time" in wanted)
    if figures == "all" or (figures == "study" and "figures" in wanted):
        files.update(write_figures(labelled, traces, out_dir))
    cells = cell_table(table)  # per implementation, function, D and NP (Qin et al.'s Tables 1-3)
    files["cells"] = write_csv_atomic(cells, Path(out_dir) / "table_cells.csv")
    if "time_vs_popsize" in wanted:
        files["scaling"] = time_vs_popsize(cells, out_dir)
    # the study's budget: its flag, else the trials' max_time_s (no time-based score under a time budget)
    files["stats"] = list(write_statistics(table, Path(out_dir) / "stats", time_budget=time_budget).values())
    if study:  # the study's own tables and figures (e.g. Nashed et al.'s Table 2 and Fig. 2)
        files["study"] = section_class(study).write_outputs(table, traces, out_dir, **(study_inputs or {}))
    reruns = [Path(p).with_name("rerun_check.csv") for p in trials]
    reruns = [read_csv(p).assign(source=str(p)) for p in reruns if p.is_file()]
    if reruns:  # trials run twice (`gpude rerun-check`): the report says how the sessions compare
        files["reruns"] = write_csv_atomic(pd.concat(reruns, ignore_index=True), Path(out_dir) / "rerun_check.csv")
    if alone is not None:  # the same trials run one at a time, beside these (run several per launch)
        from .batching import alone_vs_batched

        files["alone"] = write_csv_atomic(alone_vs_batched(with_competitors(table), alone),
                                          Path(out_dir) / "table_alone_vs_batched.csv")
    return files


def write_figures(labelled, traces, out_dir) -> dict:
    """The figures of every trial (:data:`gpude.report.section.FIGURES`) of trials labelled by
    competitor, by kind: convergence (against FEs and time) and ECDF, and final error against time."""
    from .convergence import figures
    from .scatter import error_vs_time

    return {"convergence": figures(labelled, traces, out_dir), "scatter": error_vs_time(labelled, out_dir)}
