#!/usr/bin/env bash
# Runs a program as a job of <n> processes under Open MPI's mpirun (a PMIx launcher), with
# no isorun. Skips (exit 77) where mpirun is missing. Usage: mpirun_job.sh <n> <program> [args]
set -euo pipefail
n=$1
shift
if ! command -v mpirun >/dev/null 2>&1; then
  echo "SKIPPED: mpirun (Open MPI) is not installed, so no PMIx launcher can start the job"
  exit 77
fi
# Root in CI containers; more processes than cores on small machines; no MPI transport
# is set up since the programs never call MPI_Init.
exec mpirun --allow-run-as-root --oversubscribe -n "$n" "$@"
