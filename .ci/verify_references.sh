#!/usr/bin/env bash
# CI's reproducibility guard: re-make a fixed sample of committed CPU reference rows with this checkout
# and fail on any changed bit, so that no change (a refactor above all) alters a result unseen.
# `gpude verify` exits 1 when a re-made row differs; a sample of which nothing could be re-made fails
# too (a guard that checks nothing must not pass). ~10 s with numba's cache warm, ~40 s cold.
#   VERIFY_TABLE: the trials table to sample (default: the Qin reference; its standard-DE rows take
#   0.1-2 s each and need only the committed CEC data)
set -eo pipefail
table=${VERIFY_TABLE:-results/reference/nvidia-h200/qin/trials.csv}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
python -m gpude verify "$table" --implementation sequential --rows 8 --status budget --status target \
  --max-row-seconds 2 --sample-seed 0 --out "$out/outcomes.csv" | tee "$out/log"
if ! grep -q "rows: 8 the same bits, 0 differ, 0 cannot" "$out/log"; then
  echo "verify guard: not every sampled row was re-made the same (above)" >&2
  exit 1
fi
