#!/usr/bin/env bash
# Runs a program as a job of <n> processes under Open MPI's mpirun (a PMIx launcher), with
# no isorun, and bounds it (Open MPI 4.1's mpirun has been seen to hang when a job ends oddly).
# Skips (exit 77) where mpirun is missing. Usage: mpirun_job.sh <n> <program> [args]
set -euo pipefail
n=$1
shift
if ! command -v mpirun >/dev/null 2>&1; then
  echo "SKIPPED: mpirun (Open MPI) is not installed, so no PMIx launcher can start the job"
  exit 77
fi
# Root in CI containers; more processes than cores on small machines. The programs never
# call MPI_Init, so no MPI transport is set up.
exec timeout -k 5 "${ISO_MPIRUN_TIMEOUT:-100}" \
  mpirun --allow-run-as-root --oversubscribe -n "$n" "$@" 2>&1
