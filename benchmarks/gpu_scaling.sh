#!/usr/bin/env bash
# Runs per hour against the number of GPUs (docs/scaling.md): the same GPU batches through the
# workflow with 1, 2, 4, ... of the host's GPUs leased, one after the other on one host.
# Usage, on the GPU host from the repository root (snakemake on PATH):
#   benchmarks/gpu_scaling.sh CONFIG OUT_DIR [GPU_COUNT ...] [-- SNAKEMAKE_ARGUMENTS ...]
# CONFIG: an experiment (config/experiments/<name>.yaml: all its batches) or a scaling set
# (config/scaling/<name>.yaml: the batches it picks from several experiments). GPU counts default
# to the scaling set's gpu_counts (or 1 2 4 8), those above the host's GPUs left out. What follows `--`
# goes to every snakemake call: KEY=VALUE words first (they join its --config, e.g. timing=host against
# timing=exclusive), then options (e.g. --resources gpu=2).
# First a priming run: the warm-ups alone (numba's cache filled: compilation is paid once per host,
# and reported apart); then for each count the batches are deleted (their warm-up
# markers kept) and the workflow runs them again on GPUs 0..N-1 (CUDA_VISIBLE_DEVICES), while the
# host's CPU (/proc/stat) and GPUs (nvidia-smi) are sampled every half second.
# OUT_DIR/gpus<N>/ gets snakemake.log, logs.tar.gz (the batch logs: the leases), trials.csv,
# cpu.csv, gpu.csv, wall.txt; then `python -m gpude.study.gpu_scaling rows OUT_DIR --config CONFIG`
# writes OUT_DIR/rows.csv (one row per GPU count).
set -uo pipefail
config=$1; out=$2; shift 2
mkdir -p "$out"
# SCALING_INSTANCES: a folder of the LOP/ETC instance files (lolib/, etc/) for a host that cannot
# download them
extra=(${SCALING_INSTANCES:+"instance_data_from=$SCALING_INSTANCES"})
case "$config" in
  */scaling/*) mode=(--config gpu=yes "scaling=$config" "${extra[@]}") ;;
  *) mode=(--configfile "$config" --config gpu=yes "${extra[@]}") ;;
esac
target=$(python3 -m gpude.study.gpu_scaling target "$config") || exit 1
host_gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
counts=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do counts+=("$1"); shift; done
[ $# -eq 0 ] || shift
passthrough=("$@")
[ ${#counts[@]} -gt 0 ] || read -r -a counts <<< "$(python3 -m gpude.study.gpu_scaling gpu-counts "$config")"

sample() {  # sample DIR: CPU and GPU every 0.5 s until killed
  python3 - "$1/cpu.csv" <<'PY' &
import sys, time
with open(sys.argv[1], "w") as f:
    f.write("t,busy_jiffies,total_jiffies\n")
    while True:
        v = [int(x) for x in open("/proc/stat").readline().split()[1:]]
        idle = v[3] + v[4]
        f.write(f"{time.time():.3f},{sum(v) - idle},{sum(v)}\n"); f.flush()
        time.sleep(0.5)
PY
  nvidia-smi --query-gpu=timestamp,index,utilization.gpu,memory.used --format=csv,noheader,nounits \
    -lms 500 > "$1/gpu.csv" 2>/dev/null &
}

run() {  # run DIR GPU_LIST [TARGET ...]: the workflow once on those GPUs, timed
  local dir=$1 visible=$2; shift 2
  local targets=("${@:-$target}")
  mkdir -p "$dir"
  python3 -m gpude.study.gpu_scaling clean "$config"   # batches and their logs; warm-up markers stay
  sample "$dir"
  local t0 t1 rc prefetch
  prefetch=$(CUDA_VISIBLE_DEVICES=$visible python3 -c "from gpude.study.host_shape import HostShape as H; print(H.from_environment().prefetch)")
  t0=$(date +%s.%N)
  CUDA_VISIBLE_DEVICES=$visible snakemake --cores all "${mode[@]}" "${passthrough[@]}" -- "${targets[@]}" > "$dir/snakemake.log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  kill $(jobs -p) 2>/dev/null; wait 2>/dev/null
  printf 'start %s\nend %s\nexit %s\nvisible %s\nhost_gpus %s\nprefetch %s\n' "$t0" "$t1" "$rc" "$visible" \
    "$host_gpus" "$prefetch" > "$dir/wall.txt"
  cp "$target" "$dir/trials.csv" 2>/dev/null
  python3 -m gpude.study.gpu_scaling pack-logs "$config" "$dir/logs.tar.gz"
  echo "== $dir: exit $rc after $(python3 -c "print(round($t1 - $t0, 1))") s"
  [ "$rc" -eq 0 ] || tail -30 "$dir/snakemake.log"
}

all_gpus=$(seq -s, 0 $((host_gpus - 1)))
# priming: the warm-ups alone (they compile into numba's cache), on every GPU
mapfile -t markers < <(python3 -m gpude.study.gpu_scaling warmups "$config")
run "$out/priming" "$all_gpus" "${markers[@]}"
for n in "${counts[@]}"; do
  [ "$n" -le "$host_gpus" ] || { echo "== $n GPUs: the host has $host_gpus, left out"; continue; }
  run "$out/gpus$n" "$(seq -s, 0 $((n - 1)))"
done
python3 -m gpude.study.gpu_scaling rows "$out" --config "$config" --out "$out/rows.csv"
