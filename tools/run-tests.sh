#!/usr/bin/env bash
# Installs what is missing, builds the default preset and runs the whole test suite.
#   tools/run-tests.sh            # everything
#   tools/run-tests.sh -L unit    # extra arguments go to ctest
set -euo pipefail
cd "$(dirname "$0")/.."

tools/install-deps.sh
[ -f build/build.ninja ] || cmake --preset default
cmake --build --preset default
ctest --preset default "$@"
