#!/usr/bin/env bash
# One device call's worth of case study 1 at the paper's n: the trials the committed
# reference (results/reference/nvidia-h200/janssen_cs1: all_gpu and ide at 30, sequential 1, master_slave
# 3, naive_gpu 1-3 per function) lacks, on the reference's machine kind (an H200 beside 16 cores).
#
#   benchmarks/cs1_campaign.sh [IMPLEMENTATIONS] [SECONDS]
#
# IMPLEMENTATIONS: default sequential,master_slave,naive_gpu; SECONDS: the call's budget (default 540).
# The experiment times sequential `shared` (up to 15 at once on the host's cores: their rows say
# shared:15, as the reference's one row says how it was made), master_slave and naive_gpu `exclusive`
# (one at a time, alone). `python -m gpude.campaign plan` (here) says what is left: ~12 hours of machine
# time at the reference's speeds, most of it sequential's 290 runs of 1-5 minutes; several calls.
# naive_gpu's 1-3 rows per function were made by the implementation before its copy floor (550 us a
# generation at D 30, now 41 us): remove them from the reference before its first call, so that every
# naive_gpu row of the table is one implementation's (here: python - <<< "import pandas as pd; p =
# 'results/reference/nvidia-h200/janssen_cs1/trials.csv'; t = pd.read_csv(p); t[t.implementation !=
# 'naive_gpu'].to_csv(p, index=False)"; their traces stay in traces.npz, unread), then commit. The
# device command, with the wheelhouse carried:
#
#   source .whl-slim/activate.sh .whl-slim >/dev/null && export NUMBA_ENABLE_CUDASIM=0 \
#       GPUDE_GIT_COMMIT=<commit>; benchmarks/cs1_campaign.sh
#
# and here, after it: tar xzf <files_at>/campaign.tar.gz; python -m gpude.campaign merge \
#   --experiment config/experiments/janssen_cs1.yaml --reference results/reference/nvidia-h200/janssen_cs1 \
#   --out .campaign/janssen_cs1
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
  --implementations "$implementations" --jobs 15 --setup-s 3
