#!/usr/bin/env bash
# Installs the build into a scratch prefix, builds the example projects against it with
# find_package(iso): the C++ one (example/, which also runs the installed protoc-gen-iso
# through iso_generate) and a C-only one with the classic listings (classic/, sources from
# apps/classic), and runs each as a 3-node job with the installed isorun.
#   check_package.sh <build-dir> <package-test-dir> <classic-listings-dir>
set -euo pipefail
build="$1"
tests="$2"
listings="$3"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

cmake --install "$build" --prefix "$scratch/prefix" >/dev/null
cmake -S "$tests/example" -B "$scratch/example" -G Ninja -DCMAKE_PREFIX_PATH="$scratch/prefix" >/dev/null
cmake --build "$scratch/example" >/dev/null
out="$("$scratch/prefix/bin/isorun" -n 3 --timeout 60 -- "$scratch/example/hello")"
echo "$out"
# The example is the README's first program: 0 + 1 + 2 added to a shared counter.
for node in 0 1 2; do
  grep -q "node $node of 3 sees 3" <<<"$out" || { echo "node $node did not report 3"; exit 1; }
done

# The generated marshaling and descriptor table, from the installed plugin and options.proto.
out="$("$scratch/example/marshal_demo")"
echo "$out"
grep -q "round trip equal, 3 entries, 28 bytes" <<<"$out" || { echo "marshal_demo: bad round trip"; exit 1; }
grep -q "operation 1 Get read" <<<"$out" || { echo "marshal_demo: no descriptor table"; exit 1; }
grep -q "skeleton: example.CounterObject counter 5" <<<"$out" || { echo "marshal_demo: skeleton"; exit 1; }

# A C-only project: the package must carry what a C link needs (the C++ runtime).
cmake -S "$tests/classic" -B "$scratch/classic" -G Ninja -DCMAKE_PREFIX_PATH="$scratch/prefix" \
  -DISO_CLASSIC_SOURCES="$listings" >/dev/null
cmake --build "$scratch/classic" >"$scratch/classic.log" 2>&1 || { cat "$scratch/classic.log"; exit 1; }
# The listing never frees its forks (a leak of its own), which a sanitized build reports.
out="$(ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
  "$scratch/prefix/bin/isorun" -n 3 --timeout 60 -- "$scratch/classic/philo")"
echo "$out"
[[ "$(grep -c "all done" <<<"$out")" == 3 ]] || { echo "philo: not every node said all done"; exit 1; }
