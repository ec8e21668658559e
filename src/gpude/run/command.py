"""The workflow's ``gpude run`` and ``gpude warmup`` command lines, built in one place.

The workflow's rules (``configuration_args`` and ``run_params`` in workflow/rules/common.smk), a
campaign's processes (:func:`gpude.campaign.cells.gpude_command`) and the interleaved run of an
experiment on a host without Snakemake (:mod:`gpude.campaign.interleave`) all write their command
lines with these functions, so that a row made by any of them is the row the workflow would make
(tests compare the campaign's and the interleave's lines with ``snakemake -n -p``). Each caller works
out the values (the cell, its budget, its timing) from the experiment in its own way; these only
write them. Nothing here imports the rest of the package.
"""

from __future__ import annotations

import shlex

#: the algorithm parameters that are flags of ``gpude run`` (the others go as ``--param KEY=VALUE``)
FLAGS = ("F", "CR", "bounds")


def target_arg(target) -> str:
    """``--target 1e-08``; ``--target=-inf`` for no target (argparse takes '-inf' alone for an option)."""
    return f"--target {target}" if float(target) >= 0 else f"--target={target}"


def cell_args(algorithm: str, implementation: str, function: str, dim, popsize, dtype: str) -> str:
    """The batch's cell, as the rules' shell lines write it."""
    return (f"--algorithm {algorithm} --implementation {implementation} --function {function} --dim {dim} "
            f"--popsize {popsize} --dtype {dtype}")


def configuration_args(params: dict, *, max_fes, target, per_launch: int = 1, plugins=(), max_time_s=None,
                       programs_file: str | None = None) -> str:
    """What a batch builds and compiles: the arguments its ``gpude run`` shares with its ``gpude
    warmup`` (the algorithm's parameters, trials per launch, plugins, an outside program's spec file,
    budget, target). Ends with a space, as the rules' ``{params.args}`` takes it."""
    common = " ".join(f"--{k} {params[k]}" for k in FLAGS if k in params)
    if per_launch > 1:  # only then, so that results made before the key existed stay up to date
        common += f" --trials-per-launch {per_launch}"
    others = " ".join(f"--param {k}={v}" for k, v in sorted(params.items()) if k not in FLAGS)
    others += "".join(f" --plugin {m}" for m in plugins)
    if programs_file:
        others = f"{others} --programs {shlex.quote(str(programs_file))}"
    return (f"{common} {others} --max-fes {max_fes} {target_arg(target)} "
            + (f"--max-time-s {max_time_s} " if max_time_s else ""))


def run_args(configuration: str, *, seed, first: int, count: int, suite: str, concurrency: str,
             keep_failed: bool = False, setting: str | None = None) -> str:
    """``gpude run``'s arguments after the cell: the configuration (:func:`configuration_args`), the
    trials (seed, first trial, count), the suite, the timing recorded in the rows, ``--keep-failed``
    (an outside program's failed run is a row that says why, not a failed job) and a parameter
    grid's ``--setting``."""
    return (configuration + f"--seed {seed} --first-trial {first} --trials {count} --suite {suite} "
            f"--concurrency {concurrency}" + (" --keep-failed" if keep_failed else "")
            + (f" --setting {setting}" if setting else ""))


def run_command(cell: str, args: str, out_stem: str) -> str:
    """rule run_batch's ``gpude run`` line, without its log redirection."""
    return f"python3 -m gpude run {cell} {args} --out-csv {out_stem}.csv --out-traces {out_stem}.npz"


def warmup_command(cell: str, configuration: str, out: str) -> str:
    """rule warmup's ``gpude warmup`` line, without its log redirection."""
    return f"python3 -m gpude warmup {cell} {configuration}--out {out}"
