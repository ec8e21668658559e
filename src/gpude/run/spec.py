"""``RunSpec``: everything that fixes a batch of runs, one typed value from the experiment to the kernel.

A batch is the trials ``first_trial .. first_trial + trials - 1`` of one cell (algorithm,
implementation, function, D, NP, dtype) under one configuration (budget, target, wall-clock limit,
the algorithm's parameters, the implementation's options), their seeds derived from ``seed``; the
rows also record ``suite``, ``setting`` and ``concurrency``. The experiment model builds a RunSpec
per batch (:func:`gpude.study.experiment.run_spec`) and the workflow's rules, a campaign's processes and
an interleaved run write its :meth:`RunSpec.to_args`; ``gpude run`` parses those arguments back into
the same RunSpec (:meth:`RunSpec.from_args`), resolves its registry entry once and runs it
(:func:`gpude.run.trials.run_trials`). ``gpude warmup`` builds the same runner from the configuration
part (:meth:`RunSpec.configuration_args`), so that a warm-up compiles what the run will load.

The argument definitions of ``gpude run`` and ``gpude warmup`` live here too
(:func:`add_configuration_arguments`, :func:`add_run_arguments`): the command line and the
in-process batches of ``gpude run-batches`` parse with them alone.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import shlex

from ..core.arguments import float_above, gpu_choice, int_at_least, number, seed_list
from ..core.arguments import target as target_value
from ..core.errors import GpudeError, OneLineArgumentParser

#: the algorithm parameters that are flags of ``gpude run`` (the others go as ``--param KEY=VALUE``)
FLAGS = ("F", "CR", "bounds")

#: ``gpude run``/``warmup`` flags that are also parameters of :func:`gpude.run.trial.make_runner`:
#: ``--param KEY=VALUE`` refuses them (one way to say each thing) and names the flag
FLAG_PARAMS = {"algorithm": "--algorithm", "implementation": "--implementation", "function": "--function",
               "dim": "--dim", "popsize": "--popsize", "max_fes": "--max-fes", "F": "--F", "CR": "--CR",
               "bounds": "--bounds", "dtype": "--dtype", "target": "--target", "max_time_s": "--max-time-s",
               "workers": "--workers", "members_per_block": "--members-per-block",
               "trials_per_launch": "--trials-per-launch"}


def _target_arg(target) -> str:
    """``--target 1e-08``; ``--target=-inf`` for no target (argparse takes '-inf' alone for an option)."""
    return f"--target {target}" if float(target) >= 0 else f"--target={target}"


def param_value(value: str):
    """A --param value: an int, a float, a bool (true/false, any case: the workflow writes YAML's
    booleans as Python's True/False), else the text."""
    if value.lower() in ("true", "false"):
        return value.lower() == "true"
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    return value


@dataclasses.dataclass(frozen=True)
class RunSpec:
    """One batch of runs (module docstring). ``params``: the algorithm's parameters beyond F, CR and
    bounds and any other option given as ``--param`` (sorted (key, value) pairs); ``plugins`` and
    ``programs``: what registers the implementation (an experiment's plugin modules, an outside
    program's experiment file); ``seeds``: explicit seeds instead of ``seed`` and ``trials``;
    ``keep_failed``: a failed trial is a row that says why, not a failed batch (outside programs)."""

    algorithm: str
    implementation: str
    function: str
    dim: int
    popsize: int
    max_fes: int
    dtype: str = "float64"
    target: float = 1e-8
    max_time_s: float | None = None
    F: float | None = None
    CR: float | None = None
    bounds: str | None = None
    params: tuple = ()
    trials_per_launch: int | None = None
    workers: int | None = None
    members_per_block: int | None = None
    plugins: tuple = ()
    programs: str | None = None
    trials: int = 1
    first_trial: int = 0
    seed: int = 0
    seeds: tuple | None = None
    suite: str = ""
    setting: str = ""
    concurrency: str = "unknown"
    keep_failed: bool = False

    # --- from an experiment's values and from a command line ---------------------------------------------

    @classmethod
    def of(cls, algorithm, implementation, function, dim, popsize, dtype, *, max_fes, parameters: dict,
           **fields) -> RunSpec:
        """A RunSpec whose algorithm parameters come as one dict (an experiment setting's: F, CR, bounds
        and the others), the rest as fields."""
        flags = {k: parameters[k] for k in FLAGS if k in parameters}
        others = tuple(sorted((k, v) for k, v in parameters.items() if k not in FLAGS))
        return cls(algorithm, implementation, function, int(dim), int(popsize), max_fes, dtype, **flags,
                   params=others, **fields)

    @classmethod
    def from_namespace(cls, args: argparse.Namespace) -> RunSpec:
        """The RunSpec of a parsed ``gpude run`` (or ``warmup``: its trials are the defaults) command
        line; a ``--param`` that repeats a flag is refused, naming the flag."""
        params = {}
        for item in args.param or []:
            key, _, value = item.partition("=")
            if not value or not key:
                raise GpudeError(f"--param expects KEY=VALUE, got {item!r}")
            flag = FLAG_PARAMS.get(key.replace("-", "_"))
            if flag:
                raise GpudeError(f"--param {item}: {key} is a flag of `gpude {getattr(args, 'command', 'run')}`; "
                                 f"give {flag} {value} instead")
            params[key] = param_value(value)
        run = {k: getattr(args, k) for k in ("trials", "first_trial", "seed", "suite", "setting", "concurrency",
                                             "keep_failed") if getattr(args, k, None) is not None}
        seeds = getattr(args, "seeds", None)
        _register(args.plugin, args.programs)  # before the name is resolved: a plugin may register the problem
        from ..problems.registry import canonical_name

        # F01 for f01; an instance's name as in the paper: the id rows record and seeds derive from
        function = canonical_name(args.function)
        return cls(args.algorithm, args.implementation, function, args.dim, args.popsize, int(args.max_fes),
                   args.dtype, args.target, args.max_time_s, args.F, args.CR, args.bounds,
                   params=tuple(sorted(params.items())), trials_per_launch=args.trials_per_launch,
                   workers=args.workers, members_per_block=args.members_per_block,
                   plugins=tuple(args.plugin or ()), programs=args.programs,
                   seeds=tuple(seeds) if seeds else None, **run)

    @classmethod
    def from_args(cls, args) -> RunSpec:
        """The RunSpec of ``gpude run``'s arguments (a list, or one string as :meth:`to_args` writes)."""
        argv = shlex.split(args) if isinstance(args, str) else list(args)
        return cls.from_namespace(run_parser().parse_args(argv))

    # --- as a command line ---------------------------------------------------------------------------------

    def cell_args(self) -> str:
        """The cell, as the rules' shell lines write it."""
        return (f"--algorithm {self.algorithm} --implementation {self.implementation} --function {self.function} "
                f"--dim {self.dim} --popsize {self.popsize} --dtype {self.dtype}")

    def configuration_args(self) -> str:
        """What the batch builds and compiles: the arguments its ``gpude run`` shares with its ``gpude
        warmup`` (ends with a space, as the rules' ``{params.args}`` takes it)."""
        common = " ".join(f"--{k} {getattr(self, k)}" for k in FLAGS if getattr(self, k) is not None)
        if self.trials_per_launch and self.trials_per_launch > 1:
            # only then, so that results made before the key existed stay up to date
            common += f" --trials-per-launch {self.trials_per_launch}"
        others = " ".join(f"--param {k}={v}" for k, v in self.params)
        others += "".join(f" --plugin {m}" for m in self.plugins)
        if self.programs:
            others += f" --programs {shlex.quote(str(self.programs))}"
        text = (f"{common} {others} --max-fes {self.max_fes} {_target_arg(self.target)} "
                + (f"--max-time-s {self.max_time_s} " if self.max_time_s else ""))
        for flag, value in (("--workers", self.workers), ("--members-per-block", self.members_per_block)):
            if value is not None:
                text += f"{flag} {value} "
        return text

    def run_args(self) -> str:
        """``gpude run``'s arguments after the cell: the configuration, the trials (seed, first trial,
        count), the suite, the timing recorded in the rows, ``--keep-failed`` and a parameter grid's
        ``--setting``."""
        if self.seeds:
            raise GpudeError("a RunSpec with explicit seeds has no workflow command line (its trials' seeds "
                             "derive from one seed there)")
        return (self.configuration_args() + f"--seed {self.seed} --first-trial {self.first_trial} "
                f"--trials {self.trials} --suite {self.suite} --concurrency {self.concurrency}"
                + (" --keep-failed" if self.keep_failed else "")
                + (f" --setting {self.setting}" if self.setting else ""))

    def to_args(self) -> str:
        """``gpude run``'s arguments (without outputs): :meth:`from_args` reads them back to this RunSpec."""
        return f"{self.cell_args()} {self.run_args()}"

    def run_command(self, out_stem: str) -> str:
        """rule run_batch's ``gpude run`` line, its rows and traces at ``out_stem``.csv/.npz (without its
        log redirection)."""
        return f"python3 -m gpude run {self.to_args()} --out-csv {out_stem}.csv --out-traces {out_stem}.npz"

    def warmup_command(self, out: str) -> str:
        """rule warmup's ``gpude warmup`` line, its marker at ``out`` (without its log redirection)."""
        return f"python3 -m gpude warmup {self.cell_args()} {self.configuration_args()}--out {out}"

    # --- to the kernel ---------------------------------------------------------------------------------------

    @functools.cached_property
    def entry(self):
        """The (algorithm, implementation)'s registry entry, looked up once (after the plugins and
        programs that may register it)."""
        from ..implementations.registry import get

        _register(self.plugins, self.programs)
        return get(self.algorithm, self.implementation)

    @property
    def needs_gpu(self) -> bool:
        return self.entry.needs_gpu

    def options(self) -> dict:
        """The keywords :func:`gpude.run.trial.make_runner` takes beyond the cell and budget."""
        options = dict(self.params)
        for key in ("workers", "members_per_block", "trials_per_launch"):
            if getattr(self, key) is not None:
                options[key] = getattr(self, key)
        return options

    def make_runner(self):
        """The implementation built for this configuration and warmed up (JIT)."""
        from .trial import make_runner

        return make_runner(self.algorithm, self.implementation, self.function, self.dim, self.popsize,
                           int(self.max_fes), F=self.F, CR=self.CR, bounds=self.bounds, dtype=self.dtype,
                           target=self.target, max_time_s=self.max_time_s, entry=self.entry, **self.options())

    def trial_seeds(self) -> list[tuple[int, int]]:
        """(trial, seed) of each trial: the explicit seeds, or each derived from ``seed`` and (function,
        D, NP, trial) (:func:`gpude.core.rng.trial_seed`), so that a chunk of a longer cell keeps its
        trials' seeds."""
        from ..core.rng import trial_seed

        if self.seeds:
            return list(enumerate(self.seeds, self.first_trial))
        return [(t, trial_seed(self.seed, self.function, self.dim, self.popsize, t))
                for t in range(self.first_trial, self.first_trial + self.trials)]


def _register(plugins, programs) -> None:
    """Import the plugin modules and register the outside programs (each once a process)."""
    from ..algorithms import load_plugins
    from ..implementations.external import load_programs

    load_plugins(list(plugins or ()))
    load_programs(programs)


# --- the arguments -------------------------------------------------------------------------------------------

def add_configuration_arguments(r) -> None:
    """The arguments that say what a ``run`` (or its ``warmup``) builds and compiles."""
    r.add_argument("--algorithm", default="de")
    r.add_argument("--implementation", required=True, help="see `gpude list`")
    r.add_argument("--function", required=True)
    r.add_argument("--dim", type=int_at_least(1), required=True)
    r.add_argument("--popsize", type=int_at_least(1), required=True)
    r.add_argument("--max-fes", type=float_above(0), required=True, help="budget of function evaluations")
    r.add_argument("--F", type=number, help="differential weight (jDE: every individual's initial F); "
                   "default: the algorithm's (0.5)")
    r.add_argument("--CR", type=number, help="crossover rate (jDE: the initial CR); default: the "
                   "algorithm's (DE 0.3, jDE 0.9)")
    r.add_argument("--param", action="append", metavar="KEY=VALUE",
                   help="another parameter of the algorithm, e.g. --param tau1=0.1 --param index_scheme=displacement "
                        "(not one that has its own flag: --F, --CR, --bounds, --dtype, --target, --max-time-s, "
                        "--workers, --members-per-block, --trials-per-launch; those are refused)")
    r.add_argument("--plugin", action="append", metavar="MODULE",
                   help="import this module first (it registers its own algorithms and implementations; "
                        "docs/tutorial.md)")
    r.add_argument("--programs", metavar="YAML",
                   help="register the outside programs of this file's 'programs:' (an experiment file) as "
                        "implementations (docs/tutorial.md)")
    r.add_argument("--bounds", help="bound handling; DE: resample (default), clip or midpoint; PSO: its own modes")
    r.add_argument("--dtype", choices=("float64", "float32"), default="float64")
    r.add_argument("--target", type=target_value, default=1e-8, help="stop a trial at this error (default 1e-8; "
                   "--target=-inf: no target)")
    r.add_argument("--max-time-s", type=float_above(0),
                   help="wall-clock budget per trial in seconds (with --max-fes and --target: whichever comes "
                        "first); in a batch of trials per launch every trial gets the whole budget, concurrently")
    r.add_argument("--workers", type=int_at_least(1), help="master_slave: worker threads (default: all cores)")
    r.add_argument("--members-per-block", type=int_at_least(1), help="ide: override the occupancy-driven choice")
    r.add_argument("--trials-per-launch", type=int_at_least(1),
                   help="all_gpu, ide, cudade, fpde, cujde: advance this many trials together, one launch per operator "
                        "and generation for all of them; each trial's wall time is its fair share "
                        "of the group's (default 1)")


def add_run_arguments(r) -> None:
    """``gpude run``'s arguments: the configuration's, the trials, what the rows record, the GPU lease
    and the outputs."""
    add_configuration_arguments(r)
    seeds = r.add_mutually_exclusive_group()
    seeds.add_argument("--seeds", type=seed_list, help="comma-separated explicit seeds, one trial each")
    seeds.add_argument("--seed", type=int_at_least(0), default=0,
                       help="experiment seed; trial seeds derive from it and (function, dim, popsize, trial)")
    r.add_argument("--trials", type=int_at_least(1), default=1, help="number of trials (default 1)")
    r.add_argument("--first-trial", type=int_at_least(0), default=0,
                   help="index of the first trial (a chunk of a longer cell keeps its trials' seeds)")
    r.add_argument("--gpu", type=gpu_choice, default="any", metavar="any|INDEX|UUID|shared",
                   help="GPU implementations: lease a GPU of this host for the run (any free one, waiting "
                        "while all are leased; or the one named), so that runs never share a GPU; 'shared' "
                        "takes no lease (CUDA's default device, which other runs may use too); rows record "
                        "the GPU's index, UUID and lease")
    r.add_argument("--concurrency", default="unknown", help="recorded in each row, e.g. timing_slot=1")
    r.add_argument("--keep-failed", action="store_true",
                   help="exit 0 even if trials failed (their rows say why in 'status'); without it a failed "
                        "trial makes the exit status 1")
    r.add_argument("--suite", default="", help="recorded in each row, e.g. the experiment name")
    r.add_argument("--setting", default="", help="the parameter setting's label in an experiment with a "
                                                 "parameter grid (e.g. F0.3_CR0.01): part of each row's run_id")
    r.add_argument("--out-csv", help="the batch's rows (one per trial), written at the end; without --out-csv "
                   "and --out-traces the run prints each trial and a summary and writes nothing")
    r.add_argument("--out-traces", help="the trials' convergence traces (.npz); goes with --out-csv")


def run_parser() -> argparse.ArgumentParser:
    """A parser of ``gpude run``'s arguments alone (after ``run``)."""
    parser = OneLineArgumentParser(prog="gpude run")
    add_run_arguments(parser)
    return parser
