"""Command-line interface: ``gpude <command> ...``.

Commands
--------
eval        errors of the points in a .npy file, one per line
functions   the benchmark functions and their definitions
fetch-data  (re)create data/cec from the opfunu 1.0.4 wheel on PyPI
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from .errors import GpudeError


def _cmd_eval(args) -> int:
    from .functions import get_function

    f = get_function(args.function, args.dim)
    try:
        X = np.load(args.points, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise GpudeError(f"cannot read points from {args.points!r}: {exc} "
                         f"(expected a .npy file holding an (n, {args.dim}) array)") from exc
    errors = np.atleast_1d(f.evaluate(X, device=args.device, dtype=args.dtype,
                                      threads=args.threads))
    sys.stdout.write("".join(f"{v!r}\n" for v in errors.tolist()))
    return 0


def _cmd_functions(args) -> int:
    from .functions.suites import FUNCTIONS

    for f in FUNCTIONS.values():
        parts = ", ".join(c.name for c in f.components)
        print(f"{f.fid}  CEC'{f.cec_year % 100:02d} F{f.cec_fn:<3d} {f.kind_name:<12s} "
              f"bias {f.bias:>7g}  {f.name}: {parts}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="gpude", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)

    e = sub.add_parser("eval", help="evaluate points stored in a .npy file")
    e.add_argument("function", help="F01..F10 or Q01..Q04")
    e.add_argument("--dim", type=int, required=True, help="10, 30, 50 or 100")
    e.add_argument("--points", required=True, help=".npy file with an (n, dim) array")
    e.add_argument("--device", choices=("cpu", "gpu"), default="cpu")
    e.add_argument("--dtype", choices=("float64", "float32"), default="float64")
    e.add_argument("--threads", type=int, default=1, help="CPU threads (default 1)")
    e.set_defaults(func=_cmd_eval)

    f = sub.add_parser("functions", help="list the benchmark functions")
    f.set_defaults(func=_cmd_functions)

    # Listed for --help only: main() hands "fetch-data ..." to gpude.cecdata.fetch.
    sub.add_parser("fetch-data", help="recreate data/cec from the opfunu 1.0.4 wheel (see --help)")
    return p


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["fetch-data"]:  # argparse's REMAINDER would swallow the fetch options badly
        from .cecdata import fetch

        return fetch.main(argv[1:])
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (GpudeError, RuntimeError) as exc:  # CECDataError is a RuntimeError
        print(f"gpude {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
