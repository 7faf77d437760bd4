#!/usr/bin/env bash
# Runs clang-tidy with the repository's .clang-tidy over the project's own C++ sources and
# fails on any warning. It reads the compile_commands.json of a build folder of its own
# (build-tidy/, configured here when missing), so that it never disturbs another build.
#   tools/check-tidy.sh                   # every first-party .cpp the build compiles
#   tools/check-tidy.sh nicfw/siu.cpp     # only these (paths from the repository root)
# Headers are checked through the .cpp files that include them (.clang-tidy's
# HeaderFilterRegex). Two jobs, for the 2-core machines: the whole tree takes 5 to 10 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

# Files left out of the check, each with its reason (none today).
held_back=()

build=${ISO_TIDY_BUILD_DIR:-build-tidy}
if [ ! -f "$build/compile_commands.json" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
    >/dev/null
fi
# Generated headers must exist before clang-tidy parses the sources that include them: protoc's
# (topology, the IDL options, the code generator's references) and protoc-gen-iso's.
cmake --build "$build" --target nicfw/topology.pb.h compiler-support/iso/options.pb.h \
  tests/unit/compiler_support/protobuf/kinds.pb.h \
  tests/unit/compiler_support/iso_generated/iso_test_kinds/kinds.iso.hpp \
  tests/unit/compiler_support/iso_generated/iso_test_job_queue/job_queue.iso.hpp \
  tools/bench/protobuf/marshal_bench.pb.h \
  tools/bench/iso_generated/marshal-bench/marshal_bench.iso.hpp >/dev/null

if [ $# -gt 0 ]; then
  files=("$@")
else
  # First-party: tracked by git, and compiled by the build (so the database has its flags).
  mapfile -t files < <(
    comm -12 <(git ls-files '*.cpp' | sort) \
      <(sed -n "s|^ *\"file\": \"$root/\(.*\.cpp\)\",\?$|\1|p" "$build/compile_commands.json" |
        sort -u) |
      grep -v -x -F -f <(printf '%s\n' "${held_back[@]}"))
fi
if [ ${#files[@]} -eq 0 ]; then
  echo "check-tidy: no files to check" >&2
  exit 1
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
if command -v run-clang-tidy >/dev/null; then
  # Its positional arguments are regular expressions on paths: anchor each file.
  patterns=()
  for f in "${files[@]}"; do patterns+=("^$root/${f//./\\.}\$"); done
  run-clang-tidy -quiet -j 2 -p "$build" "${patterns[@]}" >"$log" 2>&1 || true
else
  printf '%s\n' "${files[@]}" | xargs -P 2 -n 4 clang-tidy --quiet -p "$build" >"$log" 2>&1 || true
fi

# clang-tidy's exit status says nothing about warnings; its diagnostics do. Colour codes
# (run-clang-tidy asks for them) are stripped so that the patterns match.
sed -i 's/\x1b\[[0-9;]*m//g' "$log"
if grep -q -E '(warning|error): ' "$log"; then
  grep -v -E '^[0-9]+ (warnings?|errors?)( and [0-9]+ errors?)? generated\.$|^Suppressed [0-9]+ warnings|^Use -header-filter|^clang-tidy(-[0-9]+)? |^Running clang-tidy|^Enabled checks|^ +[a-z-]+\.?[a-z-]*$' \
    "$log" || true
  echo "check-tidy: clang-tidy found problems (above)" >&2
  exit 1
fi
echo "check-tidy: ${#files[@]} files pass clang-tidy"
