#!/usr/bin/env bash
# Installs what is missing, builds, and runs the main demo on the embedded shared-memory
# transport: the isotach dining philosophers on 4 processes (checked: neighbours never eat
# at once), then the single-read isochron latency benchmark beside OpenSHMEM, on as many.
#   tools/run-demo.sh [nodes]     # philosophers on this many processes (default 4)
set -euo pipefail
cd "$(dirname "$0")/.."

nodes="${1:-4}"
tools/install-deps.sh
[ -f build/build.ninja ] || cmake --preset default
cmake --build --preset default >/dev/null

echo "== dining philosophers: ${nodes} processes, forks are isotach variables (sched/assign)"
build/bin/isorun -n "${nodes}" -- build/bin/philosophers --meals 2000
echo
echo "== latency of a single-read isochron (${nodes} processes: node 0 reads from the last),"
echo "   beside OpenSHMEM shmem_g"
build/bin/iso-lat --quick --nodes "${nodes}"
