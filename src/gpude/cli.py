"""Command-line interface: ``gpude <command> ...``.

Commands
--------
eval        errors of the points in a .npy file, one per line
run         all trials of one (algorithm, implementation, function, dim, popsize)
warmup      compile what a `run` needs into numba's on-disk cache, outside any timed window
list        registered algorithms and implementations
merge       concatenate batch CSVs into one trials table
rerun-check the same trials run twice: same results? how much slower or faster?
stats       rank-sum scores and tests of a trials table
paper       timing table and figure of a trials table, beside the published numbers
paper-gpu-scaling  runs per hour against GPUs, and the references' regeneration on N GPUs (projected)
problems    every problem by name: benchmark functions, LOP and ETC instances, registered ones
functions   the benchmark functions and their definitions (the functions' view of `problems`)
fetch-data  (re)create data/cec from the opfunu 1.0.4 wheel on PyPI
export-ioh  an experiment's trials and traces in IOHprofiler's format (IOHanalyzer)
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from .core.arguments import float_above as _float_above
from .core.arguments import gpu_choice as _gpu_choice
from .core.arguments import int_at_least as _int_at_least
from .core.errors import GpudeError, say_error
from .core.errors import OneLineArgumentParser as _Parser
from .run.spec import add_configuration_arguments, add_run_arguments


def _cmd_eval(args) -> int:
    from .functions import get_function

    f = get_function(args.function, args.dim)
    try:
        X = np.load(args.points, allow_pickle=False)
    except (OSError, ValueError, EOFError) as exc:
        raise GpudeError(f"cannot read points from {args.points!r}: {exc} "
                         f"(expected a .npy file holding an (n, {args.dim}) array)") from exc
    errors = np.atleast_1d(f.evaluate(X, device=args.device, dtype=args.dtype,
                                      threads=args.threads))
    sys.stdout.write("".join(f"{v!r}\n" for v in errors.tolist()))
    return 0


def _cmd_functions(args) -> int:
    from .functions import list_functions
    from .functions.largescale import LARGE_SCALE
    from .functions.suites import FUNCTIONS

    suite = args.suite or "all"
    if suite in ("lop", "lolib", "n-lolib", "etc"):
        from .problems.instances import catalog

        sizes = catalog("etc" if suite == "etc" else "lop")
        what = "tasks (16 machines)" if suite == "etc" else "rows (n)"
        for name in list_functions(suite):
            print(f"{name:<12s} {sizes[name]:>4d} {what}")
        print("\nInstance files: `gpude fetch-data lolib|etc`; in an experiment, dims: [instance].")
        return 0
    for fid in list_functions(suite):
        if fid in LARGE_SCALE:
            d = LARGE_SCALE[fid]
            print(f"{fid}  {d.origin} {d.kind_name:<12s} bias {d.bias:>7g}  {d.name} (D: {d.dims_text()})")
            continue
        f = FUNCTIONS[fid]
        parts = ", ".join(c.name for c in f.components)
        print(f"{f.fid}  {f.origin} {f.kind_name:<12s} "
              f"bias {f.bias:>7g}  {f.name}: {parts}")
    if suite == "all":
        print("\nAlso the LOP and ETC instances of Kromer et al.: `gpude problems --suite lop|etc` "
              "(every problem: `gpude problems`).")
    return 0


def _cmd_problems(args) -> int:
    from .algorithms import load_plugins
    from .problems import describe, list_problems, suites

    load_plugins(args.plugin)  # a plugin may register problems (gpude.problems.register_problem)
    names = list_problems(args.suite)
    rows = [(name, *describe(name)) for name in names]
    width = max([len(r[0]) for r in rows] + [4])
    dims = max([len(r[2]) for r in rows] + [1])
    print(f"{'name':<{width}s}  {'family':<11s}  {'D':<{dims}s}  what")
    for name, family, dim, what in rows:
        print(f"{name:<{width}s}  {family:<11s}  {dim:<{dims}s}  {what}")
    print(f"\n{len(rows)} problem(s). Suites (--suite): {', '.join(suites())}. In an experiment, an "
          "instance takes dims: [instance]; its files come from `gpude fetch-data lolib|etc`.")
    return 0


def _cmd_export_ioh(args) -> int:
    from .study.ioh import export_experiment

    files = export_experiment(args.results, args.out)
    print(f"wrote {len(files)} IOHprofiler meta file(s) under {files[0].parent.parent if files else args.out}; "
          "load the folder (or a zip of it) in IOHanalyzer")
    return 0


def _cmd_list(args) -> int:
    from .implementations import registry

    print(f"{'algorithm':<10s} {'implementation':<14s} {'device':<6s} description")
    for e in registry.entries():
        print(f"{e.algorithm:<10s} {e.implementation:<14s} {e.device:<6s} {e.description}")
    print("\n'gpu' entries need a CUDA GPU (or NUMBA_ENABLE_CUDASIM=1, numba's slow simulator).")
    return 0


def _configuration_lock(args):
    """An exclusive lock (a file in numba's cache folder) per configuration of ``warmup``, or no lock
    where there is no ``fcntl``."""
    import contextlib
    import hashlib
    import os

    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        return contextlib.nullcontext()
    key = sorted((k, repr(v)) for k, v in vars(args).items() if k not in ("out", "func"))
    folder = os.path.join(os.environ.get("NUMBA_CACHE_DIR") or ".", "warmup-locks")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, hashlib.sha256(repr(key).encode()).hexdigest()[:16] + ".lock")

    @contextlib.contextmanager
    def held():
        with open(path, "a") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)

    return held()


def _cmd_warmup(args) -> int:
    """Compile what a ``run`` of this configuration needs into numba's on-disk cache (CPU functions
    and CUDA kernels; docs/startup.md says which are cached), without timing anything or leasing a
    GPU; a later ``run`` then only loads it. The marker file records what was done."""
    import json
    import os

    from .core.io import write_atomic
    from .run.spec import RunSpec

    spec = RunSpec.from_namespace(args)
    function = spec.function
    t0 = time.perf_counter()
    with _configuration_lock(args):  # the chunks of a cell: one compiles, the others then load it
        spec.make_runner()
    setup = time.perf_counter() - t0
    print(f"{args.implementation} {function} D={args.dim} NP={args.popsize}: warm-up {setup:.1f}s "
          f"(cache {os.environ.get('NUMBA_CACHE_DIR', '')})", file=sys.stderr)
    _prestart_servers(spec)
    if args.out:
        write_atomic(args.out, json.dumps({
            "algorithm": args.algorithm, "implementation": args.implementation, "function": function,
            "dim": args.dim, "popsize": args.popsize, "dtype": args.dtype, "warmup_s": round(setup, 3),
            "numba_cache_dir": os.environ.get("NUMBA_CACHE_DIR", "")}, indent=1) + "\n")
    return 0


def _prestart_servers(spec) -> None:
    """Where the batches of ``spec`` go to their GPU's batch server (servers on), start and prime the servers
    now, in the warm-up's time, so that the first timed batch finds its server warm."""
    from .run import batch_server

    if not batch_server.enabled() or not spec.needs_gpu:
        return
    try:
        started = batch_server.prestart()
    except batch_server.ServerUnavailable as exc:  # the batches start their own, or run in their process
        print(f"gpude warmup: {exc}", file=sys.stderr, flush=True)
    else:
        if started:
            print(f"gpude warmup: started {started} batch server{'s' if started > 1 else ''}", file=sys.stderr)


def _cmd_run(args) -> int:
    """The trials of one batch (gpude.run.trials.run_trials), inside the GPU lease they need; a GPU batch
    on its GPU's batch server, a thread-pool batch on the CPU's, where ``GPUDE_BATCH_SERVER=1``
    (gpude.run.batch_server)."""
    from .core.gpu_lease import held
    from .run import batch_server
    from .run.spec import RunSpec
    from .run.trials import run_trials

    if (args.out_csv is None) != (args.out_traces is None):
        raise GpudeError("--out-csv and --out-traces go together (the batch's rows and their traces); "
                         "give both, or neither to print the trials and write nothing")
    spec = RunSpec.from_namespace(args)
    leased = spec.needs_gpu and args.gpu != "shared"  # (a GPU of its own: a lease, and a GPU server)
    if batch_server.enabled() and getattr(args, "argv", None):
        # a GPU batch in its GPU's warm process; a thread-pool batch (master_slave: every core) in the CPU's
        pool = not spec.needs_gpu and spec.entry.threads == "all"
        if pool or leased:
            try:
                return batch_server.submit(args.argv, args.gpu, on_gpu=spec.needs_gpu)
            except batch_server.ServerUnavailable as exc:
                print(f"gpude run: {exc}; the batch runs in this process", file=sys.stderr, flush=True)
    if leased:
        # what needs no GPU (numba and the implementation's modules) is imported before the lease: a
        # batch waiting at it (gpude.study.host_shape: prefetch) then has it done when the GPU comes free
        spec.entry.load(check_device=False)
    # (before CUDA starts: it reads CUDA_VISIBLE_DEVICES once)
    with held(args.gpu, spec.needs_gpu):
        results = run_trials(spec, args.out_csv, args.out_traces)
    return 0 if spec.keep_failed or all(r is not None for r in results) else 1


def _server_key(text: str) -> str:
    if len(text) != 16 or any(c not in "0123456789abcdef" for c in text):
        raise argparse.ArgumentTypeError(f"expected 16 lowercase hex digits (a key of "
                                         f"gpude.run.batch_server.server_key), got {text!r}")
    return text


def _cmd_serve_batches(args) -> int:
    from .run import batch_server

    return batch_server.serve(args.key, batch_server.IDLE_S if args.idle is None else args.idle,
                              on_gpu=args.device == "gpu")


def _cmd_run_batches(args) -> int:
    from .run import batches as run_batches

    return run_batches.run_batches(run_batches.read_jobs(args.jobs), gpu=args.gpu, max_seconds=args.max_seconds)


def _cmd_merge(args) -> int:
    from pathlib import Path

    from .core.io import read_csv, write_csv_atomic
    from .run.rows import merge_traces
    from .study.experiment import concat_trials

    frames = [read_csv(p) for p in args.inputs]
    merged = concat_trials(frames, "the inputs (remove the stale batch file)")
    if args.traces_out:  # a batch's traces sit beside its CSV; a merged table's in traces.npz
        npz = [Path(p).with_suffix(".npz") for p in args.inputs]
        npz = [n if n.exists() else Path(p).with_name("traces.npz") for n, p in zip(npz, args.inputs)]
        for n, p in zip(npz, args.inputs):
            if not n.exists():
                raise GpudeError(f"no traces for {p}: expected {Path(p).with_suffix('.npz').name} or "
                                 "traces.npz beside it; merge without --traces-out to combine the tables alone")
        merge_traces(list(zip(frames, map(str, npz))), args.traces_out, decades=args.trace_decades)
    write_csv_atomic(merged, args.out)
    print(f"merged {len(frames)} batch files, {len(merged)} trials -> {args.out}")
    return 0


def _cmd_rerun_check(args) -> int:
    import pandas as pd

    from .core.io import read_csv, write_csv_atomic
    from .run.rows import rerun_check, rerun_totals

    reference = pd.concat([read_csv(p) for p in args.reference], ignore_index=True)
    rerun = pd.concat([read_csv(p) for p in args.rerun], ignore_index=True)
    check = rerun_check(reference, rerun)
    write_csv_atomic(check, args.out)
    total = rerun_totals(check)
    print(f"{total['n']} trials in {total['cells']} cells run twice: {total['same_error']:.0%} end on the same "
          f"final error; rerun time over reference: median {total['time_ratio_median']:.3g}x -> {args.out}")
    return 0 if total["same_error"] == 1 else 1


def _cmd_verify(args) -> int:
    """Re-make sampled rows of a trials table on this machine (gpude.run.verify); exit 1 when one differs."""
    from collections import Counter

    from .algorithms import load_plugins
    from .core.gpu_lease import held
    from .core.io import read_csv, write_csv_atomic
    from .implementations.external import load_programs
    from .run import verify

    load_plugins(args.plugin)
    load_programs(args.programs)
    table = read_csv(args.table)
    rows = verify.select_rows(table, args.rows, args.run_id, args.implementation, args.max_row_seconds,
                              args.sample_seed, args.status)
    how = "the rows asked for" if args.run_id else f"sampled with seed {args.sample_seed}"
    # (the lease before CUDA starts: it reads CUDA_VISIBLE_DEVICES once)
    with held(args.gpu, any(verify.needs_gpu(row) for _, row in rows.iterrows())):
        print(f"verify {args.table}: {len(rows)} of {len(table)} rows ({how})", flush=True)
        outcomes = verify.verify_rows(rows, any_gpu=args.any_gpu, log=lambda line: print(line, flush=True))
    counts = Counter(o.outcome for o in outcomes)
    print(f"{len(outcomes)} rows: {counts['same']} the same bits, {counts['differs']} differ, "
          f"{counts['cannot']} cannot be re-made here" + (f" -> {args.out}" if args.out else ""))
    if args.out:
        write_csv_atomic(verify.outcome_table(outcomes), args.out)
    return 1 if counts["differs"] else 0


def _cmd_stats(args) -> int:
    from .core.io import read_csv
    from .stats.tables import write_statistics

    trials = read_csv(args.trials)
    files = write_statistics(trials, args.out_dir, time_budget=args.time_budget)
    excluded = read_csv(files["excluded"])
    excluded = [f"{r.competitor} on {r.machine}" for r in excluded.itertuples()]
    omitted = read_csv(files["omitted"])["file"].tolist()
    print(f"statistics of {len(trials)} trials, per machine -> {args.out_dir}"
          + (f" (left out for fewer trials: {', '.join(excluded)})" if excluded else "")
          + (f" (no time-based score under a wall-clock budget: {', '.join(omitted)} empty)" if omitted else ""))
    return 0


def _cmd_paper(args) -> int:
    """An experiment's tables, figures and statistics (gpude.report.paper.write_paper)."""
    from .core.io import set_figure_formats
    from .report.document import section_class
    from .report.paper import write_paper

    # the command line first (an unknown study, then the LABEL=PATH pairs), then every input, before
    # anything is written
    section_class(args.study)
    set_figure_formats(args.figure_formats.split(","))
    compare = _pairs(args.compare, "--compare", "LABEL")
    inputs = _pairs(args.study_input, "--study-input", "NAME")
    files = write_paper(args.trials, args.out_dir, published=args.published, study=args.study, study_inputs=inputs,
                        alone=args.alone, compare=compare, time_budget=args.time_budget, figures=args.figures)
    print("wrote", ", ".join(str(p) for v in files.values() for p in (v if isinstance(v, list) else [v])))
    return 0


def _cmd_paper_gpu_scaling(args) -> int:
    """The committed scaling runs' table and figure and the projection (gpude.report.runs_per_hour)."""
    from pathlib import Path

    from .core.io import set_figure_formats
    from .report.runs_per_hour import write_outputs
    from .study.projection import EXPERIMENTS_DIR, PAPER_EXPERIMENTS, REFERENCE_ROOT

    set_figure_formats(args.figure_formats.split(","))
    for name in args.experiment or []:
        if not (EXPERIMENTS_DIR / f"{name}.yaml").is_file():
            known = ", ".join(sorted(p.stem for p in Path(EXPERIMENTS_DIR).glob("*.yaml"))) or "none here"
            raise GpudeError(f"--experiment {name}: no {EXPERIMENTS_DIR}/{name}.yaml; the experiments: {known}")
    files = write_outputs(args.scaling_dir, args.out_dir, experiments=args.experiment or PAPER_EXPERIMENTS,
                          reference_root=args.reference_root or REFERENCE_ROOT)
    print("wrote", ", ".join(str(p) for p in files))
    return 0


def _pairs(items: list[str] | None, flag: str, key: str) -> dict[str, str]:
    """``KEY=PATH`` arguments as ``{KEY: PATH}`` (a later KEY replaces an earlier one)."""
    pairs = {}
    for item in items or []:
        name, _, path = item.partition("=")
        if not path or not name:
            raise GpudeError(f"{flag} expects {key}=PATH, got {item!r}")
        pairs[name] = path
    return pairs


def _cmd_report(args) -> int:
    from pathlib import Path

    import yaml

    from .report.document import build

    sections = []
    for item in args.section:
        yaml_path, _, paper_dir = item.partition("=")
        if not paper_dir or not yaml_path:
            raise GpudeError(f"--section expects EXPERIMENT_YAML=PAPER_DIR, got {item!r}")
        try:
            spec = yaml.safe_load(Path(yaml_path).read_text())
        except OSError as exc:
            raise GpudeError(f"--section {item}: {yaml_path}: {exc.strerror or exc}") from None
        except (yaml.YAMLError, UnicodeDecodeError) as exc:
            raise GpudeError(f"--section {item}: {yaml_path} is not a readable YAML file "
                             f"({' '.join(str(exc).split())})") from None
        if not isinstance(spec, dict):
            raise GpudeError(f"--section {item}: {yaml_path} is not an experiment file (a YAML mapping)")
        if not Path(paper_dir).is_dir():
            raise GpudeError(f"--section {item}: {paper_dir} is not a folder (`gpude paper --out-dir` writes it)")
        sections.append((yaml_path, paper_dir))
    if args.gpu_scaling and not (Path(args.gpu_scaling) / "table_scaling.csv").is_file():
        raise GpudeError(f"--gpu-scaling {args.gpu_scaling}: no table_scaling.csv there (`gpude paper-gpu-scaling "
                         "--out-dir` writes the folder)")
    print("wrote", build(sections, args.out, gpu_scaling=Path(args.gpu_scaling) if args.gpu_scaling else None))
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The ``gpude`` command line, a subcommand each (module docstring): a parsed command's ``func`` is
    its ``_cmd_*`` (``fetch-data`` is listed for ``--help`` only: :func:`main` hands it on)."""
    p = _Parser(prog="gpude", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)

    e = sub.add_parser("eval", help="evaluate points stored in a .npy file")
    e.add_argument("function", help="F01..F10 or Q01..Q04")
    e.add_argument("--dim", type=_int_at_least(1), required=True, help="10, 30, 50 or 100")
    e.add_argument("--points", required=True, help=".npy file with an (n, dim) array")
    e.add_argument("--device", choices=("cpu", "gpu"), default="cpu")
    e.add_argument("--dtype", choices=("float64", "float32"), default="float64")
    e.add_argument("--threads", type=_int_at_least(1), default=1, help="CPU threads (default 1)")
    e.set_defaults(func=_cmd_eval)

    r = sub.add_parser("run", help="run all trials of one configuration; one CSV row per trial")
    add_run_arguments(r)
    r.set_defaults(func=_cmd_run)

    rb = sub.add_parser("run-batches", help="several `gpude run` batches one after the other in one process "
                        "(one GPU lease, the imports and the CUDA context paid once); each batch's rows as "
                        "`gpude run` writes them")
    rb.add_argument("jobs", help="a file of one batch a line, as JSON: {\"args\": [the gpude run arguments], "
                                 "\"log\": PATH}")
    rb.add_argument("--gpu", type=_gpu_choice, default="any", metavar="any|INDEX|UUID|shared",
                    help="the one GPU lease of all the batches (as `gpude run --gpu`)")
    rb.add_argument("--max-seconds", type=_float_above(0), help="start no batch after this many seconds")
    rb.set_defaults(func=_cmd_run_batches)

    sv = sub.add_parser("serve-batches", help="the batch server of one GPU (started by `gpude run` where "
                        "GPUDE_BATCH_SERVER=1; gpude.run.batch_server): runs its clients' batches one at a time")
    sv.add_argument("--key", required=True, type=_server_key,
                    help="the server's key, 16 hex digits (gpude.run.batch_server.server_key)")
    sv.add_argument("--idle", type=_float_above(0), default=None,
                    help="leave after this many seconds without a batch (default 120)")
    sv.add_argument("--device", choices=("gpu", "cpu"), default="gpu",
                    help="what its batches run on (a GPU server imports numba-cuda's registries first)")
    sv.set_defaults(func=_cmd_serve_batches)

    w = sub.add_parser("warmup", help="compile what a `run` of this configuration needs into numba's on-disk "
                       "cache (no trials, no timing, no GPU lease), so that the run only loads it")
    add_configuration_arguments(w)
    w.add_argument("--out", help="marker file to write (JSON: what was compiled, how long it took)")
    w.set_defaults(func=_cmd_warmup)

    m = sub.add_parser("merge", help="concatenate batch CSVs into one trials table (atomic)")
    m.add_argument("--out", required=True)
    m.add_argument("--traces-out", help="also merge the batches' .npz traces into this file")
    m.add_argument("--trace-decades", type=_float_above(0),
                   help="thin the merged traces to a point per this many decades of best error (runs keep "
                        "one per 0.01; e.g. 0.05 for reference results that fall through many decades)")
    m.add_argument("inputs", nargs="*",
                   help="batch CSVs (traces in the .npz beside each) or merged trials.csv (traces.npz beside)")
    m.set_defaults(func=_cmd_merge)

    rc = sub.add_parser("rerun-check", help="compare trials run twice (same run_id): results and time; "
                        "exits 1 when a rerun ends on a different final error")
    rc.add_argument("--reference", nargs="+", required=True, help="trials tables (batch CSVs or merged)")
    rc.add_argument("--rerun", nargs="+", required=True, help="the same trials run again")
    rc.add_argument("--out", required=True, help="per-cell comparison CSV (written atomically)")
    rc.set_defaults(func=_cmd_rerun_check)

    v = sub.add_parser("verify", help="re-make sampled rows of a trials table on this machine and compare their "
                       "results bit for bit; exits 1 when a re-made row differs")
    v.add_argument("table", help="a trials table (trials.csv or trials.csv.gz; e.g. a committed reference's)")
    v.add_argument("--rows", type=_int_at_least(1), default=5, help="how many rows to sample (default 5)")
    v.add_argument("--run-id", action="append", metavar="ID", help="re-make this row (repeat; instead of sampling)")
    v.add_argument("--implementation", action="append", metavar="NAME",
                   help="sample only rows of this implementation (repeat)")
    v.add_argument("--status", action="append", metavar="STATUS",
                   help="sample only rows that ended so: target, budget or time (repeat)")
    v.add_argument("--max-row-seconds", type=_float_above(0),
                   help="sample only rows whose recorded wall_time_s is at most this")
    v.add_argument("--sample-seed", type=_int_at_least(0), default=0, help="the sample's seed (default 0)")
    v.add_argument("--any-gpu", action="store_true",
                   help="re-make GPU rows made on another GPU model too (and say where they differ)")
    v.add_argument("--plugin", action="append", metavar="MODULE",
                   help="import this module first (an experiment's plugins: its implementations)")
    v.add_argument("--programs", metavar="YAML", help="register the outside programs of this experiment file")
    v.add_argument("--gpu", type=_gpu_choice, default="any", metavar="any|INDEX|UUID|shared",
                   help="GPU rows: lease a GPU of this host (as `gpude run --gpu`); 'shared' takes no lease")
    v.add_argument("--out", help="the outcomes, a row each, as CSV (written atomically)")
    v.set_defaults(func=_cmd_verify)

    st = sub.add_parser("stats", help="rank-sum scores, Kruskal-Wallis and pairwise tests of a trials table")
    st.add_argument("--trials", required=True)
    st.add_argument("--out-dir", required=True)
    st.add_argument("--time-budget", action="store_true", default=None,
                    help="the runs had a wall-clock budget (the experiment's max_time_s): write no time-based score. "
                         "Without it, read from the trials (max_time_s set, or a run stopped by the time budget)")
    st.set_defaults(func=_cmd_stats)

    pp = sub.add_parser("paper", help="tables (Markdown, LaTeX, CSV), figures and statistics of trial tables")
    pp.add_argument("--trials", required=True, action="append",
                    help="a trials.csv (its traces.npz beside it); repeat to combine machines or runs")
    pp.add_argument("--out-dir", required=True)
    pp.add_argument("--figure-formats", default="png",
                    help="the figures' formats, comma-separated: png and any of pdf, svg (default: png)")
    pp.add_argument("--published", help="the paper's numbers (CSV) to put beside ours")
    pp.add_argument("--study",
                    help="the experiment's report section (e.g. nashed): also write its own tables and figures, "
                         "and of the generic ones only those it wants (a time-budgeted study: no wall-time tables)")
    pp.add_argument("--study-input", action="append", metavar="NAME=PATH",
                    help="a file the study's section reads beside the trials (experiment key report: study_inputs:)")
    pp.add_argument("--alone", help="trials CSV of some of the same trials (same seeds) run one per launch, "
                    "to compare with trials run several per launch (table_alone_vs_batched.csv)")
    pp.add_argument("--compare", action="append",
                    help="LABEL=CSV: another measured table in the published layout (e.g. the authors' code)")
    pp.add_argument("--time-budget", action="store_true", default=None,
                    help="the runs had a wall-clock budget (the experiment's max_time_s): write no time-based score. "
                         "Without it, read from the trials (max_time_s set, or a run stopped by the time budget)")
    pp.add_argument("--figures", choices=("study", "all", "none", "only"), default="study",
                    help="the figures of every trial (convergence, ECDF, error vs time): where the study's section "
                         "shows them (study, the default), all, none, or only them and nothing else")
    pp.set_defaults(func=_cmd_paper)

    gs = sub.add_parser("paper-gpu-scaling", help="runs per hour against GPUs (the committed scaling runs) and the "
                        "papers' GPU references regenerated on 1, 2, 4, 8 GPUs (projected from their trial times)")
    gs.add_argument("--scaling-dir", required=True,
                    help="the committed scaling runs, a folder each (results/benchmarks/gpu_scaling)")
    gs.add_argument("--out-dir", required=True)
    gs.add_argument("--figure-formats", default="png", help="png and any of pdf, svg, comma-separated (default: png)")
    gs.add_argument("--reference-root",
                    help="the committed references, <root>/<machine>/<experiment>/trials.csv[.gz] (default "
                         "results/reference)")
    gs.add_argument("--experiment", action="append",
                    help="an experiment to project (config/experiments/<name>.yaml); repeat; default: the five "
                         "papers' (gpude.study.projection.PAPER_EXPERIMENTS)")
    gs.set_defaults(func=_cmd_paper_gpu_scaling)

    rp = sub.add_parser("report", help="paper/REPORT.md from the folders `gpude paper` wrote")
    rp.add_argument("--section", action="append", required=True,
                    help="EXPERIMENT_YAML=PAPER_DIR, one per experiment in the report")
    rp.add_argument("--out", required=True)
    rp.add_argument("--gpu-scaling", metavar="DIR",
                    help="the folder `gpude paper-gpu-scaling` wrote: its section goes last")
    rp.set_defaults(func=_cmd_report)

    io = sub.add_parser("export-ioh", help="an experiment's trials and traces in IOHprofiler's format, for IOHanalyzer")
    io.add_argument("results", help="a merged experiment folder: results/<experiment>/ or "
                                    "results/reference/<machine>/<experiment>/ (trials.csv, traces.npz)")
    io.add_argument("--out", default=None, help="output folder (default: <results>/ioh); replaced whole")
    io.set_defaults(func=_cmd_export_ioh)
    ls = sub.add_parser("list", help="registered algorithms and implementations")
    ls.set_defaults(func=_cmd_list)

    pr = sub.add_parser("problems", help="list every problem by name: benchmark and large-scale functions, "
                        "LOP and ETC instances, registered problems")
    pr.add_argument("--suite", default=None,
                    help="one suite: janssen, qin_cec2005, nashed, lastra, cec2010, lop, lolib, n-lolib, etc or "
                         "registered (default: every problem)")
    pr.add_argument("--plugin", action="append", metavar="MODULE",
                    help="import this module first (it may register problems; docs/tutorial.md)")
    pr.set_defaults(func=_cmd_problems)

    f = sub.add_parser("functions", help="list the benchmark functions (the functions' view of `gpude problems`)")
    f.add_argument("--suite", default=None,
                   help="janssen, qin_cec2005, nashed, cec2017, lastra, cec2010, lop, lolib, n-lolib or etc "
                        "(default: all functions)")
    f.set_defaults(func=_cmd_functions)

    # Listed for --help only: main() hands "fetch-data ..." to gpude.cecdata.fetch.
    sub.add_parser("fetch-data", help="recreate data/cec from the opfunu 1.0.4 wheel (see --help); "
                   "`fetch-data lolib|etc [--from DIR]`: Kromer et al.'s instances")
    return p


def main(argv=None) -> int:
    """``gpude ARGS`` (``argv``: without the program's name; None: ``sys.argv``); returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["fetch-data"] and argv[1:2] in (["lolib"], ["etc"]):  # Kromer et al.'s instances
        from .problems import instances

        return instances.main(argv[1:])
    if argv[:1] == ["fetch-data"]:  # argparse's REMAINDER would swallow the fetch options badly
        from .cecdata import fetch

        return fetch.main(argv[1:])
    args = build_parser().parse_args(argv)
    args.argv = argv  # the command line as given (a batch server's client hands it on)
    return dispatch(args)


def dispatch(args) -> int:
    """Run a parsed command line (:func:`build_parser`): its inputs and outputs checked first, every
    error one line on stderr and exit status 2."""
    try:
        _check_inputs(args)
        _check_outputs(args)
        return args.func(args)
    except Exception as exc:
        return say_error(args.command, exc)


# the options that name a file (or a folder) a command writes: refused before any work when the path
# is of the wrong kind
_OUTPUT_FILES = {"out_csv": "--out-csv", "out_traces": "--out-traces", "traces_out": "--traces-out", "out": "--out"}
_OUTPUT_FOLDERS = {"out_dir": "--out-dir"}


# the options that name files (or folders) a command reads, by (command, dest): "table" (a CSV: it ends
# with a newline), "folder", or "table after =" and "path after =" (LABEL=PATH; a path: a file or a
# folder); each is checked before any work, so that a missing or broken input leaves nothing
# half-written. --section of `report`, --programs of `run`/`warmup` (YAML) and --points of `eval`
# (.npy) are checked by their commands
_INPUTS = {("run-batches", "jobs"): "table", ("merge", "inputs"): "table", ("rerun-check", "reference"): "table",
           ("rerun-check", "rerun"): "table", ("stats", "trials"): "table", ("paper", "trials"): "table",
           ("paper", "alone"): "table", ("paper", "published"): "table", ("paper", "compare"): "table after =",
           ("paper", "study_input"): "path after =", ("export-ioh", "results"): "folder",
           ("verify", "table"): "table", ("paper-gpu-scaling", "scaling_dir"): "folder",
           ("paper-gpu-scaling", "reference_root"): "folder", ("report", "gpu_scaling"): "folder"}


def _check_inputs(args) -> None:
    from pathlib import Path

    for (command, dest), kind in _INPUTS.items():
        values = getattr(args, dest, None) if command == args.command else None
        for value in (values if isinstance(values, list) else [values] if values else []):
            flag = dest if dest in ("inputs", "results", "jobs") else "--" + dest.replace("_", "-")
            text = value.partition("=")[2] if kind.endswith(" after =") else value
            if not text:
                continue  # LABEL=PATH without a PATH: the command says what it expects
            path = Path(text)
            if kind == "folder":
                if not path.is_dir():
                    raise GpudeError(f"{flag} {value}: {'is a file' if path.exists() else 'no such folder'}; "
                                     f"{flag} takes a folder")
                continue
            if not path.exists():
                raise GpudeError(f"{flag} {value}: no such file")
            if kind == "path after =" and path.is_dir():
                continue
            if path.is_dir():
                raise GpudeError(f"{flag} {value}: is a folder; {flag} takes a file")
            with open(path, "rb") as fh:  # unreadable: an OSError, one line in main()
                fh.seek(0, os.SEEK_END)
                if fh.tell() == 0:
                    raise GpudeError(f"{flag} {value}: the file is empty")
                fh.seek(-1, os.SEEK_END)
                # (a compressed table, e.g. a reference's trials.csv.gz, ends however its format does)
                compressed = path.suffix in (".gz", ".bz2", ".xz", ".zip", ".zst")
                if kind.startswith("table") and not compressed and fh.read(1) != b"\n":
                    raise GpudeError(f"{flag} {value}: the table ends mid-line, truncated? (the tables gpude "
                                     "writes end with a newline)")


def _check_outputs(args) -> None:
    from pathlib import Path

    folders = dict(_OUTPUT_FOLDERS, **({"out": "--out"} if args.command == "export-ioh" else {}))
    for dest, flag in {**_OUTPUT_FILES, **folders}.items():
        value = getattr(args, dest, None)
        if not value:
            continue
        path = Path(value)
        if dest in folders and path.exists() and not path.is_dir():
            raise GpudeError(f"{flag} {value}: is a file; {flag} takes a folder (created if missing)")
        if dest not in folders and path.is_dir():
            raise GpudeError(f"{flag} {value}: is a folder; {flag} takes a file path")


if __name__ == "__main__":
    sys.exit(main())
