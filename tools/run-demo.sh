#!/usr/bin/env bash
# Installs what is missing, builds, and runs the main demo: a multi-process job on the
# embedded shared-memory transport, printing its result and timing.
#   tools/run-demo.sh [nodes]     # default 4 nodes
set -euo pipefail
cd "$(dirname "$0")/.."

nodes="${1:-4}"
tools/install-deps.sh
[ -f build/build.ninja ] || cmake --preset default
cmake --build --preset default >/dev/null

echo "== token-ring on ${nodes} processes (shm transport)"
build/bin/isorun -n "${nodes}" -- build/bin/token-ring --laps 20000
