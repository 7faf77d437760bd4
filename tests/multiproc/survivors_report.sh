#!/usr/bin/env bash
# Runs pmix-failure-probe as a job of <n> under mpirun with node <victim> killed, each
# survivor writing what it saw into a folder of this run, then judges: every survivor that
# heard of the failure must name the victim. Open MPI 4.1 may end the survivors before they
# hear of it at all (mpirun then names the victim itself, which is checked instead), so
# either outcome passes, and a survivor that heard without naming it fails the test.
# Skips (77) where mpirun is missing.
#   survivors_report.sh <n> <victim> <pmix-failure-probe>
set -euo pipefail
n=$1
victim=$2
probe=$3
if ! command -v mpirun >/dev/null 2>&1; then
  echo "SKIPPED: mpirun (Open MPI) is not installed, so no PMIx launcher can start the job"
  exit 77
fi
reports=$(mktemp -d)
trap 'rm -rf "$reports"' EXIT
output=$("$(dirname "$0")/mpirun_job.sh" "$n" "$probe" "$victim" "$reports" || true)
echo "$output"
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
  if grep -q "process rank $victim with PID [0-9]* on node [^ ]* exited on signal 9" <<<"$output"; then
    echo "survivors: none heard before the launcher ended them; mpirun named node $victim"
    exit 0
  fi
  echo "survivors: FAILED: nobody named node $victim"
  exit 1
fi
echo "survivors: all $heard that heard named node $victim"
