#!/usr/bin/env bash
# Runs pmix-failure-probe as a job of <n> under mpirun (or, with --srun, under Slurm's srun
# on a private cluster, srun_job.sh) with node <victim> killed, each survivor writing what
# it saw into a folder of this run, then judges: every survivor that heard of the failure
# must name the victim. The launcher may end the survivors before they hear of it at all
# (it then names the victim itself, which is checked instead), so either outcome passes,
# and a survivor that heard without naming it fails the test. Skips (77) where the
# launcher is missing.
#   survivors_report.sh [--srun] <n> <victim> <pmix-failure-probe>
set -euo pipefail
launcher=mpirun
if [ "${1:-}" = --srun ]; then
  launcher=srun
  shift
fi
n=$1
victim=$2
probe=$3
if [ "$launcher" = mpirun ] && ! command -v mpirun >/dev/null 2>&1; then
  echo "SKIPPED: mpirun (Open MPI) is not installed, so no PMIx launcher can start the job"
  exit 77
fi
reports=$(mktemp -d)
trap 'rm -rf "$reports"' EXIT
status=0
output=$("$(dirname "$0")/${launcher}_job.sh" "$n" "$probe" "$victim" "$reports") || status=$?
echo "$output"
if [ "$status" -eq 77 ]; then exit 77; fi
heard=0
for report in "$reports"/node-*; do
  [ -f "$report" ] || continue
  heard=$((heard + 1))
  line=$(cat "$report")
  echo "survivors: $line"
  # Found gone by the survivor itself ("ended: its process is gone") or, where the launcher's
  # event came first, "ended (the launcher said so)": either names the victim.
  if ! grep -qE "ABORTED: node $victim ended(: its process is gone| \(the launcher said so\))" <<<"$line"; then
    echo "survivors: FAILED: a survivor heard of the failure without naming node $victim"
    exit 1
  fi
done
if [ "$heard" -eq 0 ]; then
  # mpirun: "process rank 1 with PID 123 on node vm exited on signal 9"; srun: "task 1: Killed".
  if grep -qE "process rank $victim with PID [0-9]* on node [^ ]* exited on signal 9|task $victim: Killed" <<<"$output"; then
    echo "survivors: none heard before the launcher ended them; $launcher named node $victim"
    exit 0
  fi
  echo "survivors: FAILED: nobody named node $victim"
  exit 1
fi
echo "survivors: all $heard that heard named node $victim"
