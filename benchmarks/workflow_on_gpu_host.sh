#!/usr/bin/env bash
# One experiment's GPU batches through the workflow on a GPU host, every batch on a GPU it leases
# (docs/scaling.md), and what the run shows: wall time, runs per hour, which GPU ran each batch
# and when (from the batch logs), the most GPU leases held at once.
# Usage, from the repository root (snakemake on PATH):
#   benchmarks/workflow_on_gpu_host.sh EXPERIMENT OUT_DIR [more snakemake arguments]
# OUT_DIR gets trials.csv, leases.csv, summary.csv, snakemake.log and logs.tar.gz (the batch logs).
set -euo pipefail
experiment=$1; out=$2; shift 2
mkdir -p "$out"
start=$(date +%s.%N)
snakemake --cores all --configfile "config/experiments/$experiment.yaml" --config gpu=yes "$@" \
  -- "results/$experiment/trials.csv" > "$out/snakemake.log" 2>&1 || { tail -50 "$out/snakemake.log"; exit 1; }
end=$(date +%s.%N)
cp "results/$experiment/trials.csv" "$out/trials.csv"
tar czf "$out/logs.tar.gz" "logs/$experiment"
python3 - "$experiment" "$out" "$start" "$end" <<'PY'
import re, sys
from pathlib import Path
import pandas as pd
experiment, out, start, end = sys.argv[1], Path(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
rows = []
for log in sorted(Path("logs", experiment, "run_batch").rglob("*.log")):
    text = log.read_text()
    leased = re.search(r"GPU (\d+) \((\S+), (.*)\) leased at ([\d.]+)", text)
    released = re.search(r"released at ([\d.]+)", text)
    if leased and released:
        rows.append(dict(batch=str(log.relative_to("logs")), gpu_index=int(leased.group(1)), gpu_uuid=leased.group(2),
                         gpu=leased.group(3), leased_s=float(leased.group(4)) - start,
                         released_s=float(released.group(1)) - start))
leases = pd.DataFrame(rows)
leases.to_csv(out / "leases.csv", index=False)
events = sorted([(t, 1) for t in leases.leased_s] + [(t, -1) for t in leases.released_s])
held, most = 0, 0
for _, step in events:
    held += step
    most = max(most, held)
trials = pd.read_csv(out / "trials.csv")
summary = pd.DataFrame([dict(experiment=experiment, runs=len(trials), batches=len(leases),
                             gpus_used=leases.gpu_uuid.nunique(), most_leases_at_once=most,
                             wall_s=end - start, runs_per_hour=len(trials) / (end - start) * 3600,
                             gpu=trials.gpu.iloc[0], host=trials.host.iloc[0], cpu_cores=trials.cpu_cores.iloc[0],
                             git_commit=trials.git_commit.iloc[0])])
summary.to_csv(out / "summary.csv", index=False)
print(summary.T.to_string())
PY
