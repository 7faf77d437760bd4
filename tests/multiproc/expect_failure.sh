#!/bin/sh
# Runs a command that must fail and print a line matching an extended regular expression.
#   expect_failure.sh PATTERN COMMAND [ARGS...]
pattern=$1
shift
output=$("$@" 2>&1)
status=$?
printf '%s\n' "$output"
if [ "$status" -eq 0 ]; then
  echo "expect_failure: the command succeeded; it was to fail" >&2
  exit 1
fi
if ! printf '%s\n' "$output" | grep -Eq -- "$pattern"; then
  echo "expect_failure: no line matches: $pattern" >&2
  exit 1
fi
echo "expect_failure: failed as expected (status $status)"
