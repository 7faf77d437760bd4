#!/usr/bin/env bash
# Runs every ```sh block of a tutorial (docs/tutorial-sc.md), each as a bash script with
# errexit, in a scratch folder, with the build's programs first on the PATH.
#   tutorial_test.sh <bin folder> <tutorial.md> <scratch folder>
set -euo pipefail
bin=$1
doc=$2
work=$3
rm -rf "$work"
mkdir -p "$work/blocks"
awk -v dir="$work/blocks" '
  /^```sh$/ { n++; file = sprintf("%s/%02d.sh", dir, n); inside = 1; next }
  /^```$/ { inside = 0; next }
  inside { print > file }
' "$doc"
blocks=$(find "$work/blocks" -name '*.sh' | sort)
[ -n "$blocks" ] || { echo "FAIL: no sh blocks in $doc"; exit 1; }
cd "$work"
for block in $blocks; do
  echo "=== $(basename "$block"):"
  sed 's/^/  $ /' "$block"
  if ! PATH="$bin:$PATH" bash -e "$block"; then
    echo "FAIL: block $(basename "$block") of $doc failed"
    exit 1
  fi
done
echo "tutorial: every block ran"
