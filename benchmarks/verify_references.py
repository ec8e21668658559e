"""`gpude verify` over every committed reference, and its table.

``run``: for each ``results/reference/<machine>/<experiment>/trials.csv[.gz]`` with rows of the chosen
device, re-make ``--rows`` rows of it here (sampled with ``--sample-seed`` among its rows of that
device that ended normally and took at most ``--max-row-seconds``; a reference's experiment plugins
loaded from its experiment file) and write ``<out>/<machine>__<experiment>__<device>.csv``: the
outcomes (`gpude.run.verify`), GPU rows of another model compared too (``any_gpu``). Rows that cannot
be re-made here (a wall-clock budget that ran out, a failed trial) are sampled like the others and
say why, unless ``--remakable`` samples only those that can. One row at a time, so that
``--max-seconds`` stops between rows (the rows left are listed as not reached).

``summary``: ``results/verify/<device>.md`` from the CSVs of one or more ``run`` folders.

    python benchmarks/verify_references.py run --device gpu --out OUT/verify --max-seconds 480
    python benchmarks/verify_references.py summary OUT/verify --out results/verify/nvidia-h100.md
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd
import yaml

from gpude.algorithms import load_plugins
from gpude.core.io import read_csv, write_csv_atomic
from gpude.run import verify

ROOT = Path(__file__).resolve().parents[1]

REMAKABLE = ["target", "budget"]  # --remakable's statuses (a run whose clock ran out cannot be re-made)


def references(root: Path = ROOT / "results" / "reference") -> list[Path]:
    """The trials tables of a folder of references (<machine>/<experiment>/), in name order."""
    return sorted(p for p in root.glob("*/*/trials.csv*") if p.name in ("trials.csv", "trials.csv.gz"))


def plugins_of(experiment: str) -> list[str]:
    path = ROOT / "config" / "experiments" / f"{experiment}.yaml"
    if not path.is_file():
        return []
    return list((yaml.safe_load(path.read_text()) or {}).get("plugins") or [])


def cmd_run(args) -> int:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    for table_path in references(Path(args.references)):
        machine, experiment = table_path.parts[-3], table_path.parts[-2]
        if args.only and experiment not in args.only and f"{machine}/{experiment}" not in args.only:
            continue
        load_plugins(plugins_of(experiment))
        table = read_csv(table_path)
        devices = [verify.registered_device(a, i) for a, i in zip(table["algorithm"], table["implementation"])]
        mine = table[[d == args.device for d in devices]]
        if not len(mine):
            continue
        pool = mine[mine["status"].astype(str).isin(REMAKABLE)] if args.remakable else mine
        pool = pool if len(pool) else mine  # none re-makable: sample them all, each says why not
        try:
            rows = verify.select_rows(pool, rows=args.rows, sample_seed=args.sample_seed,
                                      max_row_seconds=args.max_row_seconds)
        except Exception as exc:  # e.g. no row short enough: one line, and the next table
            print(f"{machine}/{experiment}: nothing sampled ({exc})", flush=True)
            continue
        print(f"{machine}/{experiment}: {len(rows)} of its {len(mine)} {args.device} rows", flush=True)
        outcomes = []
        for i in range(len(rows)):
            if time.perf_counter() - t0 > args.max_seconds:
                outcomes.append(verify.Outcome(str(rows.loc[i, "run_id"]), "not reached",
                                               f"the call's --max-seconds {args.max_seconds:g} ran out"))
                continue
            outcomes += verify.verify_rows(rows.iloc[[i]].reset_index(drop=True), any_gpu=True,
                                           log=lambda line: print("  " + line, flush=True))
        frame = verify.outcome_table(outcomes).assign(
            machine=machine, experiment=experiment, device=args.device, sample_seed=args.sample_seed,
            table_rows=len(table), device_rows=len(mine), sampled_from=len(pool))
        write_csv_atomic(frame, out / f"{machine}__{experiment}__{args.device}.csv")
    print(f"done in {time.perf_counter() - t0:.0f} s", flush=True)
    return 0


def _short(commit: str) -> str:
    return str(commit)[:7] + ("+dirty" if str(commit).endswith("+dirty") else "")


def summary_table(frame: pd.DataFrame) -> str:
    lines = ["| reference | device | rows re-made / sampled | same | differ | cannot | made on, at | re-made on, at | "
             "what differed or why not |", "|" + "---|" * 9]
    for (machine, experiment, device), g in frame.groupby(["machine", "experiment", "device"], sort=True):
        counts = g["outcome"].value_counts()
        remade = g[g["outcome"].isin(["same", "differs"])]
        made = "; ".join(sorted({f"{m}, {_short(c)}" for m, c in zip(g["made_on"], g["made_at"])}))
        again = "; ".join(sorted({f"{m}, {_short(c)}" for m, c in zip(remade["remade_on"], remade["remade_at"])}))
        notes = []
        for _, row in g[g["outcome"] != "same"].iterrows():
            notes.append(f"`{row['run_id']}` {row['outcome']}: {row['detail']}")
        lines.append(f"| {machine}/{experiment} | {device} | "
                     f"{len(remade)} / {len(g)} (of {g['sampled_from'].iloc[0]:,}) | "
                     f"{counts.get('same', 0)} | {counts.get('differs', 0)} | {counts.get('cannot', 0)} | {made} | "
                     f"{again or '-'} | {'<br>'.join(notes) or '-'} |")
    return "\n".join(lines) + "\n"


def cmd_summary(args) -> int:
    frames = [read_csv(p) for folder in args.folders for p in sorted(Path(folder).glob("*__*__*.csv"))]
    if not frames:
        print(f"no outcome CSVs in {', '.join(args.folders)}", file=sys.stderr)
        return 1
    frame = pd.concat(frames, ignore_index=True)
    text = (args.title + "\n\n" if args.title else "") + summary_table(frame)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    print(f"{len(frame)} rows -> {args.out}")
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--device", choices=("gpu", "cpu"), required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--rows", type=int, default=5)
    r.add_argument("--sample-seed", type=int, default=0)
    r.add_argument("--max-row-seconds", type=float, default=15.0)
    r.add_argument("--max-seconds", type=float, default=480.0)
    r.add_argument("--remakable", action="store_true", help="sample only rows that ended at a target or budget")
    r.add_argument("--only", action="append", help="an experiment (or machine/experiment) to verify; repeat")
    r.add_argument("--references", default=str(ROOT / "results" / "reference"),
                   help="the folder of <machine>/<experiment>/trials.csv (default: the committed references)")
    r.set_defaults(func=cmd_run)
    s = sub.add_parser("summary")
    s.add_argument("folders", nargs="+")
    s.add_argument("--out", required=True)
    s.add_argument("--title", default="")
    s.set_defaults(func=cmd_summary)
    args = p.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
