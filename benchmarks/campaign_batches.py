"""A campaign's GPU batches in one ``gpude run-batches`` process: one GPU lease and one CUDA context for
all of them, instead of a ``gpude run`` process each (each process holds the GPU's lease from its start,
so its kernels' compile time keeps the GPU from the others: jso/block's 58 cells of cec2017_jso took
~14 s a cell that way on one H100, almost all of it compile).

Plans like ``python -m gpude.campaign run`` (the trials the reference lacks, the workflow's command
lines and batch files under ``--out``), writes the jobs file, and runs it (``--max-seconds``: start no
batch after that). Then, here: ``python -m gpude.campaign merge --experiment E --reference R --out
<files_at>/.../camp``.

    python3 benchmarks/campaign_batches.py --experiment config/experiments/cec2017_jso.yaml \
        --reference results/reference/nvidia-h100/cec2017_jso --implementations block --out OUT/camp \
        [--max-seconds 450] [--dry-run]
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from gpude.run.batches import Job, write_jobs  # noqa: E402


def planned_commands(experiment: str, reference: str, implementations: str, out: str) -> list[str]:
    """The campaign's ``gpude run`` command lines for the trials the reference lacks."""
    cmd = [sys.executable, "-m", "gpude.campaign", "run", "--experiment", experiment, "--reference", reference,
           "--implementations", implementations, "--out", out, "--jobs", "1", "--default-run-s", "0.01",
           "--max-seconds", "1e9", "--dry-run"]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=True)
    prefix = "campaign:   "
    return [line[len(prefix):] for line in done.stdout.splitlines() + done.stderr.splitlines()
            if line.startswith(prefix + "python3 -m gpude run ")]


def to_job(command: str) -> Job:
    """A campaign command line (``python3 -m gpude run ARGS > LOG 2>&1``) as a run-batches job."""
    words = shlex.split(command)
    log = words[words.index(">") + 1]
    args = words[3:words.index(">")]
    Path(log).parent.mkdir(parents=True, exist_ok=True)
    return Job(args, log)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--experiment", required=True)
    ap.add_argument("--reference", required=True)
    ap.add_argument("--implementations", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--max-seconds", type=float, default=450.0)
    ap.add_argument("--dry-run", action="store_true")
    a = ap.parse_args(argv)
    jobs = [to_job(c) for c in planned_commands(a.experiment, a.reference, a.implementations, a.out)]
    listing = Path(a.out) / "run_batches.jsonl"
    listing.parent.mkdir(parents=True, exist_ok=True)
    write_jobs(jobs, listing)
    print(f"{len(jobs)} batches -> {listing}", flush=True)
    if a.dry_run or not jobs:
        return 0
    return subprocess.run([sys.executable, "-m", "gpude", "run-batches", str(listing), "--max-seconds",
                           str(a.max_seconds)], cwd=ROOT).returncode


if __name__ == "__main__":
    raise SystemExit(main())
