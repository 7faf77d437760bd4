#!/usr/bin/env bash
# A lowest node killed while its job started leaves its memory-window object in /dev/shm
# (its name carries the maker's pid). Makes two such objects, one whose maker is gone and
# one whose maker lives (this script), runs a job of <n> under mpirun, and checks that the
# job's lowest node removed the first and left the second. Skips (77) where mpirun is
# missing or /dev/shm is not writable.
#   stale_windows_check.sh <n> <program> [args]
set -euo pipefail
n=$1
shift
if [ ! -w /dev/shm ]; then
  echo "SKIPPED: /dev/shm is not writable here"
  exit 77
fi
gone=$(sh -c 'echo $$')  # a process that has ended
stale="/dev/shm/iso-windows-$gone-stale$$"
live="/dev/shm/iso-windows-$$-live$$"
trap 'rm -f "$stale" "$live"' EXIT
head -c 4096 /dev/zero >"$stale"
head -c 4096 /dev/zero >"$live"
status=0
"$(dirname "$0")/mpirun_job.sh" "$n" "$@" || status=$?
if [ "$status" -eq 77 ]; then exit 77; fi
if [ "$status" -ne 0 ]; then
  echo "stale_windows_check: the job failed (exit status $status)"
  exit 1
fi
if [ -e "$stale" ]; then
  echo "stale_windows_check: FAILED: $stale (maker pid $gone, gone) is still there"
  exit 1
fi
if [ ! -e "$live" ]; then
  echo "stale_windows_check: FAILED: $live (maker pid $$, alive) was removed"
  exit 1
fi
echo "stale_windows_check: the object of a gone maker was removed, a live maker's kept"
