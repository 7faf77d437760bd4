#!/usr/bin/env bash
# Installs the build into a scratch prefix, builds the example project against it with
# find_package(iso), and runs it as a 3-node job with the installed isorun.
#   check_package.sh <build-dir> <example-source-dir>
set -euo pipefail
build="$1"
example="$2"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

cmake --install "$build" --prefix "$scratch/prefix" >/dev/null
cmake -S "$example" -B "$scratch/example" -G Ninja -DCMAKE_PREFIX_PATH="$scratch/prefix" >/dev/null
cmake --build "$scratch/example" >/dev/null
out="$("$scratch/prefix/bin/isorun" -n 3 --timeout 60 -- "$scratch/example/hello")"
echo "$out"
# The example is the README's first program: 0 + 1 + 2 added to a shared counter.
for node in 0 1 2; do
  grep -q "node $node of 3 sees 3" <<<"$out" || { echo "node $node did not report 3"; exit 1; }
done
