#!/bin/sh
# Runs a job that must end normally several times: each run must exit 0 and print no line
# of isorun's (isorun speaks only of failures) and no "failed".
#   ends_quietly.sh RUNS COMMAND [ARGS...]
runs=$1
shift
run=1
while [ "$run" -le "$runs" ]; do
  output=$("$@" 2>&1)
  status=$?
  if [ "$status" -ne 0 ] || printf '%s\n' "$output" | grep -Eq -- '^isorun:|failed'; then
    printf '%s\n' "$output"
    echo "ends_quietly: run $run of $runs ended with status $status" >&2
    exit 1
  fi
  run=$((run + 1))
done
echo "ends_quietly: $runs runs ended quietly"
