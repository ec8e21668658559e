#!/usr/bin/env bash
# One device call's worth of case study 1 at the paper's n: the trials the committed
# reference (results/reference/nvidia-h200/janssen_cs1: all_gpu and ide at 30, sequential 1, master_slave
# 3, naive_gpu 1-3 per function) lacks, on the reference's machine kind (one H200 beside 16 cores: the
# error and time tables are per machine, so every row of the case study comes from that kind).
#
#   benchmarks/cs1_campaign.sh [IMPLEMENTATIONS] [SECONDS]
#
# IMPLEMENTATIONS: default sequential,master_slave,naive_gpu; SECONDS: the call's budget (default 540).
# CS1_PHASES=shared CS1_JOBS=60: standard DE's untimed trials on a host of many cores; CS1_GROUP=5: 5 a process.
# Standard DE (sequential, one core a run): each function's trials 0-4 timed in lanes first (CS1_LANES,
# default 4, at once and nothing else on the host: rows exclusive-cpu:4; the time table uses those), then
# trials 5-29 side by side (rows shared:JOBS: their errors count, their times do not); master_slave and
# naive_gpu `exclusive` (one at a time, alone). The plan (`python -m gpude.campaign plan ... --alone 5
# --alone-lanes 4`): standard DE's 300 runs are 9.9 core-hours (60-290 s a run): 25 minutes in four lanes
# plus 33 on 15 cores; master_slave's runs 7.5 s and naive_gpu's 4.7 s alone (measured), 8-9 s a process
# of one trial, 40 minutes each: about 1.8 hours of the host in all, over several calls.
# Every naive_gpu row is today's implementation's (the rows made before its copy floor are out). The
# device command, with the wheelhouse carried:
#
#   source .whl-slim/activate.sh .whl-slim >/dev/null && export NUMBA_ENABLE_CUDASIM=0 \
#       GPUDE_GIT_COMMIT=<commit>; benchmarks/cs1_campaign.sh
#
# and here, after it: tar xzf <files_at>/campaign.tar.gz; python -m gpude.campaign merge \
#   --experiment config/experiments/janssen_cs1.yaml --reference results/reference/nvidia-h200/janssen_cs1 \
#   --out .campaign/janssen_cs1 --alone 5 --alone-lanes 4
# (the merge takes the run's --alone and --alone-lanes: under them the shared-timed trial-0 rows are the
# stale ones the lane runs replace)
set -u
implementations=${1:-sequential,master_slave,naive_gpu}
seconds=${2:-540}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
case "$gpu" in
  *H200*) ;;
  *) echo "cs1_campaign: the reference is an H200's; nvidia-smi says '${gpu}'" >&2; exit 2 ;;
esac
bash benchmarks/compile_bytecode.sh
bash benchmarks/campaign_call.sh cs1_campaign .campaign/janssen_cs1 "$seconds" \
  --experiment config/experiments/janssen_cs1.yaml --reference results/reference/nvidia-h200/janssen_cs1 \
  --implementations "$implementations" --jobs "${CS1_JOBS:-15}" --setup-s 3 --group "${CS1_GROUP:-1}" --alone 5 \
  --alone-lanes "${CS1_LANES:-4}" --phases "${CS1_PHASES:-lanes,shared,gpu,cpu}"
