#!/usr/bin/env bash
# One device call's worth of Lastra's protocol, on the GPU host.
#
#   benchmarks/lastra_campaign.sh FUNCTIONS [SECONDS]
#
# FUNCTIONS: fnmatch patterns of the experiment's functions (e.g. 'L0*' for part 1, 'C01,C02,C03' for
# part 2); SECONDS: the call's budget (default 540, under the device's 600 s per command).
# The reference is the one of the host's GPU (results/reference/nvidia-h100/lastra on H100s,
# nvidia-h200/lastra on H200s: a reference holds one machine kind; a host of the same GPU but other
# cores, e.g. four H200s for the two-H200 reference, makes only the batched runs). Each cell's first three runs go
# one per launch (the timed ones), the others ten per launch (`--alone 3 --per-launch 10`); the
# paper's numbers of runs: 10 per cell, 20 for L06 and the CEC 2010 functions. Whatever has finished
# when the time is up is packed into $OUT/campaign.tar.gz (a run still going is lost, not half-kept:
# its files are written whole at its end). The device command, with the wheelhouse carried:
#
#   source .whl-slim/activate.sh .whl-slim >/dev/null && export NUMBA_ENABLE_CUDASIM=0 \
#       GPUDE_GIT_COMMIT=<commit>; benchmarks/lastra_campaign.sh 'L0*'
#
# and here, after it: tar xzf <files_at>/campaign.tar.gz; python -m gpude.campaign merge \
#   --experiment config/experiments/lastra.yaml --reference results/reference/<machine>/lastra \
#   --trials 'L06=20,C*=20' --out .campaign/lastra --trace-decades 0.1
set -u
functions=${1:?give the functions, e.g. 'L0*'}
seconds=${2:-540}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
case "$gpu" in
  *H200*) machine=nvidia-h200 ;;
  *H100*) machine=nvidia-h100 ;;
  *) echo "lastra_campaign: no H100 or H200 here (nvidia-smi says '${gpu}'): which reference?" >&2; exit 2 ;;
esac
echo "lastra_campaign: $gpu -> results/reference/$machine/lastra; functions $functions; $seconds s"
bash benchmarks/campaign_call.sh lastra_campaign .campaign/lastra "$seconds" --experiment config/experiments/lastra.yaml \
  --reference "results/reference/$machine/lastra" --trials 'L06=20,C*=20' --functions "$functions" \
  --alone 3 --per-launch 10 --setup-s 12
