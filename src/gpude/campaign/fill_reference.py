"""Fill the cells a committed reference run lacks, through the workflow's own rule, and add them to the
reference without touching its rows.

A reference (``results/reference/<machine>/<experiment>/trials.csv`` and ``traces.npz``) may lack cells
that a session's device time cut (e.g. Qin et al.'s iDE in float32: 44 of 48 cells). This tool

* ``missing``: lists the cells of the experiment's grid (restricted by ``--implementations`` and
  ``--dtypes``) with fewer trials in the reference than the experiment asks for, and their batch files
  (the workflow's ``results/<experiment>/batches/...`` paths, ``BATCH`` in workflow/rules/common.smk);
* ``run``: makes exactly those batch files with Snakemake (``snakemake <batch files> --cores all
  --configfile <experiment> --config gpu=yes dtypes=[...]``; ``--dry-run`` adds ``-n``), so the trials
  run with the arguments and seeds the rule gives every cell (``run_params``: the seeds depend on the
  experiment's seed, function, D, NP and trial only, not on the dtype); ``--via gpude`` runs the rule's
  own command line per batch instead (``python3 -m gpude run ...``, rebuilt here and checked against
  ``snakemake -n -p`` by the tests), for a host without Snakemake;
* ``merge``: appends the new batches' rows to ``trials.csv`` and their traces to ``traces.npz`` (thinned
  like the reference's with ``--trace-decades``): the existing rows are read and written back
  unchanged (columns the new rows bring are added, empty for the old ones), the existing traces are
  copied as they are; both files are checked against the originals before they replace them;
* ``verify``: checks that every cell of the grid has its trials, once each, with a trace, and that the
  seeds are the workflow's;
* ``fill``: run, merge and verify in one go, and with ``--archive FILE`` pack the new batch files,
  their logs and the merged reference into one .tar.gz (for a GPU host whose command returns a few
  files).

Qin et al.'s four missing float32 cells, on the GPU host (see results/reference/nvidia-h200/qin/README.md):

    python3 -m gpude.campaign.fill_reference fill --experiment config/experiments/qin.yaml \\
        --reference results/reference/nvidia-h200/qin --implementations ide --dtypes float32 \\
        --trace-decades 0.1 --archive $OUT/qin_fill_float32.tar.gz [--via gpude]
"""

from __future__ import annotations

import argparse
import io
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

from ..core.errors import GpudeError
from ..core.io import read_csv
from ..study.experiment import concat_trials, refuse_failed
from . import cells as _cells
from .cells import BATCH, DEFAULTS, LOG, ROOT, Cell, gpude_command, grid, row_key, rule_command
from .merge import replace_checked
from .run import write_tar

# (the batch and log paths, the schema's defaults and the rule's command line are the campaign's too)
__all__ = ["BATCH", "DEFAULTS", "LOG", "Cell", "gpude_command", "grid", "load_experiment", "main", "merge",
           "missing_cells", "rule_command", "snakemake_command", "verify"]


def load_experiment(path) -> dict:
    experiment = _cells.load_experiment(path)
    if "instance" in map(str, experiment["dims"]):
        raise GpudeError(f"{path}: dims: instance (LOP/ETC) is not handled by this tool; give the cells' batch "
                         "files to snakemake yourself")
    return experiment


def trials_per_cell(reference: pd.DataFrame) -> dict[tuple, int]:
    """Per cell key (:meth:`Cell.key`) the reference's trials that did not fail."""
    ok = reference[~reference["status"].astype(str).str.startswith("error")]
    return dict(Counter(row_key(r) for r in ok.to_dict("records")))


def missing_cells(cells: list[Cell], reference: pd.DataFrame) -> list[Cell]:
    """The cells with no trial in the reference; a cell with some but not all is an error (its chunks
    may be half there: fill it by hand)."""
    have = trials_per_cell(reference)
    partial = [c for c in cells if 0 < have.get(c.key(), 0) < c.trials]
    if partial:
        raise GpudeError("cells with some of their trials: " + "; ".join(f"{c}: {have[c.key()]} of {c.trials}"
                                                                      for c in partial))
    return [c for c in cells if have.get(c.key(), 0) == 0]


def batch_csvs(cells, experiment_name: str, root: Path) -> list[Path]:
    return [root / c.batch(experiment_name, k) for c in cells for k in c.chunks()]


# --- run ---------------------------------------------------------------------------------------------

def snakemake_command(experiment_file, experiment: dict, cells: list[Cell], dtypes, dry_run: bool,
                      extra=()) -> list[str]:
    """The Snakemake call that makes exactly the cells' batch files with the workflow's rule."""
    all_dtypes = list(dict.fromkeys([*experiment["dtypes"], *(dtypes or [])]))
    targets = [f"{c.batch(experiment['name'], k)}.csv" for c in cells for k in c.chunks()]
    cmd = [sys.executable, "-m", "snakemake", *targets, "--cores", "all", "--scheduler", "greedy",
           "--configfile", str(experiment_file), "--config", "gpu=yes", f"dtypes=[{','.join(all_dtypes)}]"]
    return cmd + (["-n"] if dry_run else []) + list(extra)


def run(experiment_file, experiment, cells, dtypes, root: Path, dry_run=False, extra=(), via="snakemake") -> int:
    """Make the cells' batch files: through Snakemake, or (``via="gpude"``, a host without Snakemake) by
    running the rule's own command per batch, one after the other, skipping batches already there."""
    if not cells:
        print("fill_reference: no missing cell: nothing to run")
        return 0
    if via == "snakemake":
        cmd = snakemake_command(experiment_file, experiment, cells, dtypes, dry_run, extra)
        print("fill_reference: " + " ".join(cmd), flush=True)
        return subprocess.run(cmd, cwd=root).returncode
    failed = 0
    for c in cells:
        for k in c.chunks():
            batch = root / c.batch(experiment["name"], k)
            command = rule_command(experiment, c, k, str(experiment_file))
            if Path(f"{batch}.csv").is_file():
                print(f"fill_reference: {batch}.csv is there already")
                continue
            print(f"fill_reference: {command}", flush=True)
            if dry_run:
                continue
            (root / c.log(experiment["name"], k)).parent.mkdir(parents=True, exist_ok=True)
            code = subprocess.run(command, shell=True, cwd=root).returncode
            if code:
                failed += 1
                print(f"fill_reference: the batch failed (exit {code}); its log: {c.log(experiment['name'], k)}",
                      file=sys.stderr)
    return 1 if failed else 0


# --- merge ---------------------------------------------------------------------------------------------

def merge(reference_dir: Path, batches: list[Path], trace_decades: float | None = None) -> pd.DataFrame:
    """Append the batches' rows and traces to the reference (see the module docstring); returns the
    merged table. Nothing is written unless every check passes."""
    trials_path, traces_path = reference_dir / "trials.csv", reference_dir / "traces.npz"
    old_text = trials_path.read_text()
    old = read_csv(io.StringIO(old_text))
    frames = [read_csv(b) for b in batches]
    clash = sorted(set(old["run_id"]) & {rid for f in frames for rid in f["run_id"]})
    if clash:
        raise GpudeError(f"trials already in the reference, e.g. {clash[0]}: nothing was merged")
    new = concat_trials(frames, "the batches")
    refuse_failed(new)
    merged = pd.concat([old, new], ignore_index=True)  # the old columns first, in their order
    # the new traces thinned as the reference's were, keyed by run_id; the old ones copied as they are
    replace_checked(reference_dir, ".fill_reference", [(read_csv(b), b.with_suffix(".npz")) for b in batches],
                    [(old, str(traces_path))], new, merged, trace_decades,
                    lambda csv, npz: check_merge(old, old_text, new, csv, traces_path, npz))
    print(f"fill_reference: {len(new)} trial(s) of {len(batches)} batch file(s) added to {trials_path} "
          f"({len(old)} before, {len(merged)} now)")
    return merged


def check_merge(old, old_text, new, merged_csv, old_traces, merged_traces) -> None:
    """The merged files hold the old rows and traces unchanged and the new ones once each."""
    from ..run.rows import load_traces

    merged = read_csv(merged_csv)
    again = merged.iloc[:len(old)][list(old.columns)]
    pd.testing.assert_frame_equal(again.reset_index(drop=True), old.reset_index(drop=True), check_dtype=False)
    if list(merged.columns[:len(old.columns)]) != list(old.columns):
        raise GpudeError("the merged table reorders the reference's columns")
    if not set(merged.columns) - set(old.columns):  # same columns: the old rows' text must be the same too
        head = merged_csv.read_text().splitlines()[:len(old) + 1]
        if head != old_text.splitlines():
            raise GpudeError("the merged table writes the reference's rows differently")
    rows = set(old["run_id"])  # (traces of run_ids the table lacks are not carried over: merge_traces keys by rows)
    before = {k: v for k, v in load_traces(old_traces).items() if k in rows}
    after = load_traces(merged_traces)
    for run_id, trace in before.items():
        if run_id not in after or any(not np.array_equal(trace[k], after[run_id][k], equal_nan=True) for k in trace):
            raise GpudeError(f"the merged traces change {run_id}'s")
    missing = [r for r in new["run_id"] if r not in after]
    if missing or len(after) != len(before) + len(new):
        raise GpudeError(f"the merged traces lack {missing[:3]} or hold extra ones")


# --- verify ----------------------------------------------------------------------------------------

def verify(experiment: dict, cells: list[Cell], reference_dir: Path) -> list[str]:
    """Problems with the reference for the cells: missing or extra trials, traces, seeds ([] = none)."""
    from ..core.rng import trial_seed
    from ..run.rows import load_traces

    table = read_csv(reference_dir / "trials.csv")
    traces = load_traces(reference_dir / "traces.npz")
    problems = []
    if table["run_id"].duplicated().any():
        problems.append(f"run_id twice: {table.loc[table['run_id'].duplicated(), 'run_id'].iloc[0]}")
    by_cell = {k: g for k, g in table.groupby(pd.Series([row_key(r) for r in table.to_dict("records")],
                                                        index=table.index))}
    for c in cells:
        g = by_cell.get(c.key())
        if g is None:
            problems.append(f"{c}: no trials")
            continue
        if sorted(g["trial"]) != list(range(c.trials)):
            problems.append(f"{c}: trials {sorted(g['trial'])[:5]}... ({len(g)}), expected 0..{c.trials - 1}")
        if g["status"].astype(str).str.startswith("error").any():
            problems.append(f"{c}: failed trials")
        seeds = [trial_seed(experiment["seed"], c.function, c.dim, c.popsize, int(t)) for t in g["trial"]]
        if [int(s) for s in g["seed"]] != seeds:
            problems.append(f"{c}: seeds differ from the workflow's")
        lacking = [r for r in g["run_id"] if r not in traces]
        if lacking:
            problems.append(f"{c}: {len(lacking)} trial(s) without a trace, e.g. {lacking[0]}")
    return problems


# --- the command line ----------------------------------------------------------------------------------

def archive(path: Path, root: Path, experiment_name: str, cells: list[Cell], reference_dir: Path) -> None:
    """One .tar.gz of the cells' batch files and logs and the merged reference, paths from the root."""
    members = []
    for c in cells:
        for k in c.chunks():
            members += [c.batch(experiment_name, k) + ".csv", c.batch(experiment_name, k) + ".npz",
                        c.log(experiment_name, k)]
    members += [str((reference_dir / name).resolve().relative_to(root.resolve())) for name in
                ("trials.csv", "traces.npz")]
    write_tar(path, [(root / m, m) for m in members if (root / m).exists()])
    print(f"fill_reference: packed {len(members)} file(s) into {path}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m gpude.campaign.fill_reference", description=__doc__.split("\n\n")[0],
                                usage="%(prog)s ACTION [options] [-- SNAKEMAKE ARGS]",
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("action", choices=("missing", "run", "merge", "verify", "fill"))
    p.add_argument("--experiment", type=Path, required=True, help="config/experiments/<name>.yaml")
    p.add_argument("--reference", type=Path, required=True, help="results/reference/<machine>/<name>")
    p.add_argument("--implementations", help="the cells of these implementations only (comma-separated)")
    p.add_argument("--dtypes", help="the cells of these floating types (comma-separated; default the experiment's)")
    p.add_argument("--trace-decades", type=float, help="thin the new traces to a point per this many decades "
                                                       "(as the reference's were, e.g. 0.1)")
    p.add_argument("--root", type=Path, default=ROOT, help="the workflow's folder (default this repository)")
    p.add_argument("--via", choices=("snakemake", "gpude"), default="snakemake",
                   help="run, fill: through Snakemake (default), or the rule's own `python3 -m gpude run` command per "
                        "batch (a host without Snakemake)")
    p.add_argument("--dry-run", action="store_true", help="run, fill: print what would run (`snakemake -n`)")
    p.add_argument("--archive", type=Path, help="fill: pack the batch files, logs and merged reference here")
    argv = list(sys.argv[1:] if argv is None else argv)
    # run, fill: arguments after -- go to Snakemake (e.g. -- -p)
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    args = p.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    root = args.root.resolve()
    experiment_file = args.experiment if args.experiment.is_absolute() else root / args.experiment
    reference_dir = args.reference if args.reference.is_absolute() else root / args.reference
    implementations = args.implementations.split(",") if args.implementations else None
    dtypes = args.dtypes.split(",") if args.dtypes else None
    try:
        experiment = load_experiment(experiment_file)
        cells = grid(experiment, implementations, dtypes)
        if args.action == "verify":
            return _report_verify(experiment, cells, reference_dir)
        reference = read_csv(reference_dir / "trials.csv")
        todo = missing_cells(cells, reference)
        name = experiment["name"]
        if args.action == "missing":
            print(f"{len(todo)} of {len(cells)} cell(s) missing from {reference_dir}:")
            for c in todo:
                print(f"  {c}: " + ", ".join(f"{c.batch(name, k)}.csv" for k in c.chunks()))
            return 0
        code = 0
        if args.action in ("run", "fill"):
            code = run(experiment_file, experiment, todo, dtypes, root, args.dry_run, extra, args.via)
            if args.action == "run" or args.dry_run:
                return code
        batches = [b.with_suffix(".csv") for b in batch_csvs(todo, name, root)]
        try:
            if code:
                return code  # a batch failed: nothing merged (its log comes back in the archive)
            absent = [b for b in batches if not b.is_file()]
            if absent:
                raise GpudeError(f"batch file(s) missing, e.g. {absent[0]}: run them first "
                                 "(`python -m gpude.campaign.fill_reference run`)")
            if todo:
                merge(reference_dir, batches, args.trace_decades)
            return _report_verify(experiment, cells, reference_dir)
        finally:
            # whatever ran comes back, merged or not (a failed merge can be redone from the batch files)
            if args.action == "fill" and args.archive:
                archive(args.archive, root, name, todo, reference_dir)
    except (GpudeError, OSError) as exc:  # (OSError: a file missing or unreadable)
        print(f"fill_reference: {exc}", file=sys.stderr)
        return 1


def _report_verify(experiment, cells, reference_dir) -> int:
    problems = verify(experiment, cells, reference_dir)
    for problem in problems:
        print(f"fill_reference: {problem}", file=sys.stderr)
    trials = sum(c.trials for c in cells)
    print(f"fill_reference: {reference_dir}: {len(cells)} cell(s), {trials} trial(s) expected: "
          + ("all there, each with its trace and the workflow's seed" if not problems
             else f"{len(problems)} problem(s)"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
