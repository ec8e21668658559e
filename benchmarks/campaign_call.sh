#!/usr/bin/env bash
# The part every campaign's device call shares: `python -m gpude.campaign run` under a deadline, its log
# in the campaign's folder, the log's tail, the folder packed into $OUT/campaign.tar.gz.
#
#   benchmarks/campaign_call.sh NAME FOLDER SECONDS [CAMPAIGN RUN ARGUMENTS...]
#
# The campaign stops starting runs that would end after SECONDS - 30 by their projection; `timeout` is
# the backstop for a projection that was short.
set -u
name=$1 out=$2 seconds=$3
shift 3
mkdir -p "$out"
export PYTHONUNBUFFERED=1
timeout -s INT "$seconds" python3 -m gpude.campaign run "$@" --out "$out" --max-seconds $((seconds - 30)) \
  > "$out/campaign_$(date -u +%Y%m%dT%H%M%S).log" 2>&1
rc=$?
tail -n 30 "$out"/campaign_*.log | tail -n 30
tar czf "${OUT:-.}/campaign.tar.gz" "$out"
echo "$name: campaign exit $rc; packed $out into ${OUT:-.}/campaign.tar.gz"
