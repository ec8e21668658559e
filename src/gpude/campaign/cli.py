"""``python -m gpude.campaign plan|run|merge|pack``: the campaign's command line (the package's
docstring); every error a one-line message, exit status 1. ``python -m gpude.campaign interleave``
is :mod:`gpude.campaign.interleave`'s (its own options)."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

import pandas as pd

from ..core.errors import GpudeError
from ..core.io import read_csv
from .cells import CELL, ROOT, grid, load_experiment, parse_trials
from .merge import merge
from .plan import batch_share, campaign_rows, groups, machine_gpu, projections, ranges, reference_machine, todo
from .run import PHASES, archive, check_machine, host_gpus, host_machine, pack_instances, runs_on_gpu, unpack_instances
from .run import run as run_groups


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["interleave"]:
        from .interleave import main as interleave

        return interleave(argv[1:])
    doc = sys.modules[__package__].__doc__
    p = argparse.ArgumentParser(prog="python -m gpude.campaign", description=doc.split("\n\n")[0], epilog=doc,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("action", choices=("plan", "run", "merge", "pack"),
                   help="(and `interleave`, with options of its own: `interleave --help`)")
    p.add_argument("--experiment", type=Path, required=True, help="config/experiments/<name>.yaml")
    p.add_argument("--reference", type=Path, required=True, help="results/reference/<machine>/<name>")
    p.add_argument("--set", action="append", default=[], metavar="ALGORITHM.KEY=VALUE",
                   help="a parameter other than the experiment file's (repeatable), e.g. de.CR=0.01")
    p.add_argument("--trials", help="more trials for some functions: 'PATTERN=N,...' (fnmatch patterns, e.g. "
                                     "'L06=20,C*=20'); never fewer than the experiment's")
    p.add_argument("--implementations", help="only these implementations' cells (comma-separated)")
    p.add_argument("--functions", help="only these functions' cells (comma-separated fnmatch patterns, e.g. 'L0*')")
    p.add_argument("--dtypes", help="the cells of these floating types (comma-separated; default the experiment's)")
    p.add_argument("--out", type=Path, default=Path(".campaign"), help="the campaign's folder (default .campaign/)")
    p.add_argument("--max-seconds", type=float, default=540.0, help="run: start nothing that would end later")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="run: shared-timed processes at once")
    p.add_argument("--gpus", type=int, help="run: exclusive GPU processes at once, one per GPU (default: the "
                                            "host's GPUs, as gpude.core.gpu_lease lists them)")
    p.add_argument("--new-machine", action="store_true",
                   help="run: make this host the reference's machine (every GPU row of another is re-made)")
    p.add_argument("--alone", type=int, default=0,
                   help="with --per-launch: each cell's first ALONE trials one per launch (timed), the rest batched")
    p.add_argument("--alone-lanes", type=int, default=0,
                   help="with --alone K: a shared-timed cell's (e.g. standard DE's single-threaded runs) first K "
                        "trials timed in lanes, at most this many at once with nothing else on the host (rows say "
                        "exclusive-cpu:LANES); its other trials shared, --jobs at a time")
    p.add_argument("--per-launch", type=int,
                   help="trials per launch of a batched implementation (default: the experiment's trials_per_launch)")
    p.add_argument("--group", type=int, default=5, help="run: at most this many trials per process "
                                                        "(batched implementations: a launch's worth)")
    p.add_argument("--setup-s", type=float, default=12.0, help="a process's start-up before its first trial")
    p.add_argument("--default-run-s", type=float, default=120.0,
                   help="a FE-budgeted trial's expected seconds when no row tells")
    p.add_argument("--trace-decades", type=float, help="merge: thin the new traces (as the reference's, e.g. 0.1)")
    p.add_argument("--archive", type=Path, help="run: pack --out into this .tar.gz; pack: the instance files' .tgz")
    p.add_argument("--instance-data", type=Path, help="run: the instance files (a folder, or a .tgz of `pack`) "
                                                      "for LOP and ETC cells, as GPUDE_INSTANCE_DATA")
    p.add_argument("--phases", default=",".join(PHASES),
                   help=f"run: only these of the phases {','.join(PHASES)} (comma-separated; they run in that "
                        "order; default: all), e.g. 'shared' on a host of many cores, whose rows' times do not "
                        "count, and the rest on the reference's machine")
    p.add_argument("--dry-run", action="store_true", help="run: print the commands only")
    p.add_argument("--root", type=Path, default=ROOT)
    args = p.parse_args(argv)
    root = args.root.resolve()
    resolve = lambda path: path if path.is_absolute() else root / path  # noqa: E731
    reference_dir, out = resolve(args.reference), resolve(args.out)
    try:
        experiment = load_experiment(resolve(args.experiment), args.set)
        implementations = args.implementations.split(",") if args.implementations else None
        phases = set(args.phases.split(","))
        if not phases <= set(PHASES):
            raise GpudeError(f"--phases takes some of {','.join(PHASES)} (comma-separated), not "
                             f"{','.join(sorted(phases - set(PHASES)))}")
        if args.alone < 0 or (args.per_launch is not None and args.per_launch < 1):
            raise GpudeError("--alone takes a count >= 0 and --per-launch one >= 1 (e.g. --alone 3 --per-launch 10)")
        if args.alone_lanes < 0 or (args.alone_lanes and not args.alone):
            raise GpudeError("--alone-lanes L takes L >= 1 with --alone K (e.g. --alone 5 --alone-lanes 4): each "
                             "shared cell's first K trials are timed, L at a time")
        if args.alone and not args.alone_lanes and not (args.per_launch and args.per_launch > 1):
            raise GpudeError("--alone K needs --per-launch B > 1 (the trials from K on go B per launch) or "
                             "--alone-lanes L (a shared cell's first K trials timed, L at a time)")
        cells = grid(experiment, implementations, args.dtypes.split(",") if args.dtypes else None,
                     trials_by_function=parse_trials(args.trials), alone=args.alone, per_launch=args.per_launch,
                     functions=args.functions.split(",") if args.functions else None, alone_lanes=args.alone_lanes)
        if not cells:
            raise GpudeError(f"no cell of the experiment matches --functions {args.functions} / --implementations "
                             f"{args.implementations}: its functions are {', '.join(experiment['functions'])}")
        trials_path = reference_dir / "trials.csv"
        reference = read_csv(trials_path) if trials_path.is_file() else pd.DataFrame(columns=["run_id", *CELL, "trial"])
        found = campaign_rows(out, experiment, cells) if out.is_dir() else []
        if args.action == "pack":
            if not args.archive:
                raise GpudeError("pack needs --archive FILE.tgz")
            packed = pack_instances(cells, resolve(args.archive))
            print(f"campaign: {len(packed)} instance file(s) packed into {args.archive} "
                  "(give it to run as --instance-data)")
            return 0
        if args.action == "merge":
            if not found:
                raise GpudeError(f"nothing to merge: no finished campaign files under {out}")
            merge(reference_dir, experiment, cells, found, args.trace_decades)
            merged = read_csv(trials_path)
            work = todo(cells, experiment, merged, machine=reference_machine(merged))
            print(f"campaign: {sum(len(t) for _, t, _ in work)} trial(s) still to run")
            return 0
        done = set().union(*(set(rows["run_id"]) for rows, _ in found)) if found else set()
        machine = reference_machine(reference)
        batched_only = False  # a host of the reference's GPU but not its machine: the untimed runs only
        if args.action == "run" and not args.dry_run and machine and any(runs_on_gpu(c) for c in cells):
            here = host_machine()
            if here != machine and not args.new_machine:
                # a batched run's result is the same bits on any host and GPU model (its distance to the
                # optimum is summed correctly rounded; gpude verify --any-gpu checks it): it may fill the
                # reference's quality cells wherever it is made, and its row names where
                batched_only = True
                same_gpu = machine_gpu(here) == machine_gpu(machine)
                which = "has the reference's GPU but is not its machine" if same_gpu \
                    else f"has another GPU than the reference's ({machine_gpu(machine)})"
                instead = (", or give --new-machine to make this host the reference's (every timed row of another "
                           "is then re-made here)") if same_gpu else ""
                print(f"campaign: this host ({here}) {which}: it makes only the runs made several per launch "
                      "(their errors count; their times are shares, which the REPORT does not use); the runs "
                      f"made one per launch wait for {machine}{instead}")
            else:
                machine = here
        if machine:
            print(f"campaign: the reference's machine: {machine} (rows of another are re-made)")
        work = todo(cells, experiment, reference, done, machine)
        tables = [reference] + [rows for rows, _ in found]
        expected = projections(experiment, cells, tables, args.default_run_s)
        plan = groups(work, expected, args.group, batch_share(tables))
        if batched_only:
            waiting = [g for g in plan if g.per_launch == 1]
            plan = [g for g in plan if g.per_launch > 1]
            print(f"campaign: {sum(g.count for g in waiting)} trial(s) made one per launch left for the "
                  "reference's machine")
        total = sum(g.expected_s for g in plan) + args.setup_s * len(plan)
        need = sum(len(t) for _, t, _ in work)
        stale = sum(len(s) for _, _, s in work)
        print(f"campaign: {experiment['name']}: {len(cells)} cell(s), {sum(c.trials for c in cells)} trial(s) wanted; "
              f"{need} to run ({stale} of them stale in the reference, {len(done)} done in {out}) in {len(plan)} "
              f"process(es): about {total / 3600:.2f} h of machine time (exclusive and shared alike)")
        if args.action == "plan":
            for cell, trials, reasons in work:
                why = f"; stale: {next(iter(reasons.values()))}" if reasons else ""
                print(f"  {cell}: trials {ranges(trials)} x {expected[cell.key()]:.1f} s{why}")
            return 0
        if not args.dry_run and not batched_only:
            check_machine(reference, cells)
        with tempfile.TemporaryDirectory(prefix="campaign_instances_") as folder:
            if args.instance_data:
                data = resolve(args.instance_data)
                if data.is_dir():
                    folder = str(data)
                else:
                    unpack_instances(data, Path(folder))
                os.environ["GPUDE_INSTANCE_DATA"] = folder  # the runs' processes inherit it
            gpus = args.gpus if args.gpus else host_gpus()
            stats = run_groups(experiment, plan, out, args.max_seconds, max(1, args.jobs), args.setup_s,
                               args.dry_run, root, max(1, gpus), str(args.experiment), phases)
        stopped = f", {stats['interrupted']} stopped by an interrupt" if stats["interrupted"] else ""
        print(f"campaign: {stats['ran']} process(es) ran, {stats['failed']} failed{stopped}, "
              f"{stats['skipped_time']} left for the next call")
        if args.archive:
            archive(resolve(args.archive), out, root)
        return 1 if stats["failed"] else (130 if stats["interrupted"] else 0)
    except (GpudeError, OSError) as exc:  # (OSError: a file missing or unreadable)
        print(f"campaign: {exc}", file=sys.stderr)
        return 1
