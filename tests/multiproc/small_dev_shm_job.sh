#!/usr/bin/env bash
# Runs mpirun_job.sh <n> <program> [args] in a mount namespace of its own whose /dev/shm is
# a tmpfs of <size> (as on a container with a small /dev/shm). Skips (exit 77) where the
# namespace or the mount cannot be made (it needs root) or mpirun is missing.
# Usage: small_dev_shm_job.sh <size> <n> <program> [args]
set -euo pipefail
size=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v unshare >/dev/null 2>&1 ||
  ! unshare -m sh -c 'mount -t tmpfs -o size=1m tmpfs /dev/shm' 2>/dev/null; then
  echo "SKIPPED: cannot mount a small /dev/shm in a mount namespace of our own (needs root)"
  exit 77
fi
# shellcheck disable=SC2016 # expanded by the inner shell
exec unshare -m sh -c 'mount -t tmpfs -o size="$1" tmpfs /dev/shm && shift && exec "$@"' \
  sh "$size" "$here/mpirun_job.sh" "$@"
