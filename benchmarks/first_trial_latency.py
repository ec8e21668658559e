"""How soon a GPU batch's first trial starts after its GPU was leased, from a workflow run's batch logs.

Each GPU batch's log (``logs/<experiment>/run_batch/...``) holds the lease's line (``gpude: GPU k (...)
leased at T0``, taken as its ``gpude run`` starts) and the batch's header (``... setup S s (first trial at
T1)``); T1 - T0 is what the batch waited beyond its lease (and, where the lease's line gives its process's
age A, T1 - T0 + A the wait from the batch's process start, its imports included): a process of its own
pays the imports, the CUDA context and its kernels' loading there, a batch on a warm batch server
(gpude.run.batch_server) only its kernels' loading and its warm-up launch. A batch that started while
another held its GPU (the workflow's prefetch) waited at the lease too, so the GPU's view is given as well:
``gpu_idle_before_s``, T1 less the last release of the same GPU before T0 in the same run (empty for a
GPU's first batch): how long the GPU sat without a trial between two batches.

    python benchmarks/first_trial_latency.py LOGS_DIR [LOGS_DIR ...] --out results/benchmarks/first_trial_<device>.csv

Each LOGS_DIR is one run's logs (``benchmarks/gpu_checks.sh main_job`` brings back ``logs_<variant>_<k>/``);
a row per GPU batch: the folder, the batch's log, the GPU its lease names, the latencies and the setup time
(the run's commit and boot are not in the logs: the rows' file says them).
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from gpude.core.gpu_lease import LEASED_LINE, RELEASED_LINE  # noqa: E402  (the lines gpude run writes)

FIRST = re.compile(r"setup ([\d.]+)s \(first trial at ([\d.]+)\)")


def latencies(folder: Path) -> list[dict]:
    """A row per batch log under ``folder`` that leased a GPU and started a trial."""
    rows, releases = [], {}
    texts = {log: log.read_text(errors="replace") for log in sorted(folder.rglob("*.log"))}
    for text in texts.values():
        for released in RELEASED_LINE.finditer(text):
            releases.setdefault(released.group(2), []).append(float(released.group(3)))
    for log, text in texts.items():
        leased, first = LEASED_LINE.search(text), FIRST.search(text)
        if leased and first:
            at, age = float(leased.group(4)), leased.group(5)  # (logs written before the age have none)
            before = [t for t in releases.get(leased.group(2), []) if t <= at]
            rows.append({"run": folder.name, "log": str(log.relative_to(folder)), "gpu": leased.group(3),
                         "lease_to_first_trial_s": round(float(first.group(2)) - at, 3),
                         "start_to_first_trial_s": round(float(first.group(2)) - at + float(age), 3) if age else "",
                         "gpu_idle_before_s": round(float(first.group(2)) - max(before), 3) if before else "",
                         "setup_s": float(first.group(1))})
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("logs", nargs="+", type=Path, help="one run's batch logs each")
    parser.add_argument("--out", type=Path, help="CSV to write (default: print)")
    args = parser.parse_args(argv)
    rows = [row for folder in args.logs for row in latencies(folder)]
    if not rows:
        print("first_trial_latency: no batch log with a lease and a first trial under "
              + ", ".join(map(str, args.logs)), file=sys.stderr)
        return 2
    def write(handle):
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)

    if args.out:
        with open(args.out, "w", newline="") as handle:
            write(handle)
    else:
        write(sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
