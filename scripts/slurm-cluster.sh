#!/usr/bin/env bash
# A one-node SLURM cluster on this machine, for testing the workflow's SLURM profile for real
# (tests/test_slurm.py; .ci/run starts it before the tests). Run as root.
#
#   scripts/slurm-cluster.sh start    # install slurm-wlm and munge if missing, write slurm.conf, start the daemons
#   scripts/slurm-cluster.sh status   # sinfo
#   scripts/slurm-cluster.sh stop     # stop the daemons
#
# What runs: munged, slurmctld and slurmd (Debian bookworm: SLURM 22.05), one node with this machine's
# cores and memory (less 10 % for the system), one partition `debug`, no accounting (no slurmdbd, no
# MariaDB): snakemake-executor-plugin-slurm 2.8 asks squeue for job states and falls back from
# sacct without accounting (see tests/test_slurm.py), so slurmdbd is not needed.
set -euo pipefail
conf=/etc/slurm/slurm.conf
logs=/var/log/slurm

install() {
  command -v slurmctld >/dev/null && command -v munged >/dev/null && return
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null
  apt-get install -y -q slurm-wlm munge >/dev/null
}

configure() {
  local host cpus mem_mb
  host=$(hostname -s)
  cpus=$(nproc)
  mem_mb=$(awk '/MemTotal/ {print int($2 / 1024 * 0.9)}' /proc/meminfo)
  mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd "$logs" /run/munge
  chown munge:munge /run/munge
  [ -s /etc/munge/munge.key ] || { dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null;
                                   chown munge:munge /etc/munge/munge.key; chmod 400 /etc/munge/munge.key; }
  cat > "$conf" <<CONF
# written by scripts/slurm-cluster.sh
ClusterName=gpude-test
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SwitchType=switch/none
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
# finished jobs stay visible to squeue for 5 minutes (the plugin checks job states with squeue)
MinJobAge=300
SlurmctldLogFile=$logs/slurmctld.log
SlurmdLogFile=$logs/slurmd.log
NodeName=$host CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
}

running() { pgrep -x "$1" >/dev/null; }

start() {
  install
  configure
  running munged || su munge -s /bin/sh -c /usr/sbin/munged
  # -c: forget the jobs an earlier cluster saved in StateSaveLocation. A disk that held a cluster
  # (a machine image made while tests ran) otherwise brings their jobs back, and the node stays
  # `mix` running them instead of taking the tests' jobs.
  running slurmctld || /usr/sbin/slurmctld -c
  running slurmd || /usr/sbin/slurmd
  # A cluster that was already running starts empty too: its jobs are not the tests'.
  for _ in $(seq 10); do squeue -h >/dev/null 2>&1 && break; sleep 1; done
  squeue -h -o '%i' 2>/dev/null | xargs -r scancel 2>/dev/null || true
  for _ in $(seq 60); do  # until the node takes jobs
    if sinfo -h -o '%T' 2>/dev/null | grep -qx idle; then sinfo; return 0; fi
    sleep 1
  done
  echo "slurm-cluster: the node did not become idle in 60 s; see $logs/" >&2
  sinfo >&2 || true
  exit 1
}

stop() {
  for daemon in slurmd slurmctld munged; do
    pkill -x "$daemon" || true
  done
  for _ in $(seq 20); do running slurmctld || running slurmd || return 0; sleep 0.5; done
  echo "slurm-cluster: daemons still running" >&2; exit 1
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) sinfo ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
