#!/usr/bin/env bash
# A lowest node killed while its job started leaves its memory-window object in /dev/shm
# (its name carries the maker's pid). Makes three such objects, one whose maker is gone,
# one whose maker is a zombie (dead, its parent has not reaped it) and one whose maker lives
# (this script), runs a job of <n> under mpirun, and checks that the job's lowest node
# removed the first two and left the third. Skips (77) where mpirun is missing or /dev/shm
# is not writable.
#   stale_windows_check.sh <n> <program> [args]
set -euo pipefail
n=$1
shift
if [ ! -w /dev/shm ]; then
  echo "SKIPPED: /dev/shm is not writable here"
  exit 77
fi
gone=$(sh -c 'echo $$')  # a process that has ended
# A zombie: a child of a process that never reaps it (the subshell becomes `sleep`). The
# child outlives the exec by a second; should the subshell reap it first (a machine too
# loaded to exec within that second), another try is made.
zombie_pid_file=$(mktemp)
zombie_parents=()
stale="/dev/shm/iso-windows-$gone-stale$$"
live="/dev/shm/iso-windows-$$-live$$"
trap 'kill "${zombie_parents[@]}" 2>/dev/null || true; rm -f "$stale" "$live" "${zombie_stale:-}" "$zombie_pid_file"' EXIT
zombie=""
for _ in 1 2 3; do
  (
    sleep 1 &
    echo $! >"$zombie_pid_file"
    exec sleep 300
  ) >/dev/null 2>&1 &
  zombie_parents+=("$!")
  for _ in $(seq 300); do
    candidate=$(cat "$zombie_pid_file")
    state=$(awk '{print $3}' "/proc/$candidate/stat" 2>/dev/null || true)
    if [ "$state" = Z ]; then zombie=$candidate; fi
    if [ -n "$zombie" ] || { [ -n "$candidate" ] && [ -z "$state" ]; }; then break; fi
    sleep 0.01
  done
  if [ -n "$zombie" ]; then break; fi
  : >"$zombie_pid_file"
done
if [ -z "$zombie" ]; then
  echo "SKIPPED: no zombie process could be made here"
  exit 77
fi
zombie_stale="/dev/shm/iso-windows-$zombie-zombie$$"
head -c 4096 /dev/zero >"$stale"
head -c 4096 /dev/zero >"$zombie_stale"
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
if [ -e "$zombie_stale" ]; then
  echo "stale_windows_check: FAILED: $zombie_stale (maker pid $zombie, a zombie) is still there"
  exit 1
fi
if [ ! -e "$live" ]; then
  echo "stale_windows_check: FAILED: $live (maker pid $$, alive) was removed"
  exit 1
fi
echo "stale_windows_check: the objects of a gone and a zombie maker were removed, a live maker's kept"
