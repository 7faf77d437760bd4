#!/usr/bin/env bash
# Runs a program as a job of <n> tasks under Slurm's srun --mpi=pmix, with no isorun, on a
# private one-node Slurm cluster that this script starts (munged, slurmctld and slurmd on
# random ports, everything in a folder of this run) and always stops. Bounded like
# mpirun_job.sh. Skips (exit 77) where Slurm or munge is missing or not run as root.
# Usage: srun_job.sh <n> <program> [args]
set -euo pipefail
n=$1
shift
for tool in munged slurmctld slurmd srun sinfo; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "SKIPPED: $tool is not installed (Debian: munge slurmctld slurmd slurm-client)"
    exit 77
  fi
done
if [ "$(id -u)" -ne 0 ]; then
  echo "SKIPPED: a private Slurm cluster needs root"
  exit 77
fi
dir=$(mktemp -d /tmp/iso-slurm-XXXXXX)
stop_all() {
  # A step still running (srun timed out) ends first, with its tasks and slurmstepd.
  SLURM_CONF=$dir/slurm.conf scancel --user=root 2>/dev/null || true
  for _ in $(seq 20); do
    [ -z "$(SLURM_CONF=$dir/slurm.conf squeue -h 2>/dev/null)" ] && break
    sleep 0.1
  done
  for daemon in slurmd slurmctld munged; do
    if [ -s "$dir/$daemon.pid" ]; then kill "$(cat "$dir/$daemon.pid")" 2>/dev/null || true; fi
  done
  # The daemons remove their pid files as they end; a second look, then the folder goes.
  for _ in $(seq 50); do
    [ -e "$dir/slurmd.pid" ] || [ -e "$dir/slurmctld.pid" ] || break
    sleep 0.1
  done
  rm -rf "$dir"
}
trap stop_all EXIT
head -c 1024 /dev/urandom >"$dir/munge.key"
chmod 400 "$dir/munge.key"
# munged refuses root without --force; its socket and key are this run's own.
munged --force --socket="$dir/munge.sock" --key-file="$dir/munge.key" \
  --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/munge.seed"
host=$(hostname -s)
# Below the kernel's ephemeral ports (32768 up), which parallel jobs' connections take.
port=$((10000 + RANDOM % 20000))
mkdir -p "$dir/state" "$dir/spool"
# No cgroups (containers often lack them): processes tracked by their parents, no task
# binding. OverSubscribe=FORCE and --overcommit: more tasks than cores, as in CI.
cat >"$dir/slurm.conf" <<CONF
ClusterName=iso
SlurmctldHost=$host
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge.sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
MpiDefault=none
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=iso Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE
CONF
export SLURM_CONF=$dir/slurm.conf
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
for _ in $(seq 200); do
  if sinfo -h -o %T 2>/dev/null | grep -q idle; then break; fi
  sleep 0.1
done
if ! sinfo -h -o %T 2>/dev/null | grep -q idle; then
  echo "srun_job.sh: the private Slurm cluster did not come up:"
  tail -5 "$dir/slurmctld.log" "$dir/slurmd.log" 2>/dev/null || true
  exit 1
fi
timeout -k 5 "${ISO_SRUN_TIMEOUT:-60}" srun --mpi=pmix --overcommit -n "$n" "$@" 2>&1
