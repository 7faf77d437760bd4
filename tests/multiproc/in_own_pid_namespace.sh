#!/bin/sh
# Runs a job through isorun in which one node lives in a pid namespace of its own, as a node
# started inside a container does: the other nodes cannot see its process, so they learn
# that it ended only from the launcher. The job must fail, isorun naming that node, and the
# output must have a line matching PATTERN (what a surviving node says).
#   in_own_pid_namespace.sh ISORUN NODES RANK PATTERN COMMAND [ARGS...]
# Exits 77 (skipped) where this system gives no pid namespaces (unshare -Urpf).
if [ "$1" = --node ]; then
  # One node of the job: RANK goes into a new pid (and user) namespace.
  rank=$2
  shift 2
  if [ "${ISO_RANK:-}" = "$rank" ]; then exec unshare --user --map-root-user --pid --fork "$@"; fi
  exec "$@"
fi
isorun=$1
nodes=$2
rank=$3
pattern=$4
shift 4
if ! unshare --user --map-root-user --pid --fork true 2>/dev/null; then
  echo "in_own_pid_namespace: no pid namespaces on this system; skipped"
  exit 77
fi
output=$("$isorun" -n "$nodes" --timeout 20 -- "$0" --node "$rank" "$@" 2>&1)
status=$?
printf '%s\n' "$output"
if [ "$status" -eq 0 ]; then
  echo "in_own_pid_namespace: the job succeeded; it was to fail" >&2
  exit 1
fi
for expected in "$pattern" "^isorun: node $rank "; do
  if ! printf '%s\n' "$output" | grep -Eq -- "$expected"; then
    echo "in_own_pid_namespace: no line matches: $expected" >&2
    exit 1
  fi
done
echo "in_own_pid_namespace: failed as expected (status $status)"
