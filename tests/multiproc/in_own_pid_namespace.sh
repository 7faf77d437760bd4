#!/bin/sh
# Runs a job through isorun in which one node lives in a pid namespace of its own, with its
# own /proc and a pid far from the machine's, as a node started inside a container does:
# its pid names no process (or another one) outside, the others' pids name none inside, so
# no node can look at the other's process; they learn that it ended only from the launcher.
#   in_own_pid_namespace.sh ISORUN NODES RANK fails PATTERN COMMAND [ARGS...]
#     the job must fail, isorun naming node RANK, and a line must match PATTERN (what a
#     surviving node says);
#   in_own_pid_namespace.sh ISORUN NODES RANK succeeds PATTERN COMMAND [ARGS...]
#     the job must end with status 0, isorun saying nothing, and a line must match PATTERN.
# Exits 77 (skipped) where this system gives no pid namespaces (unshare -Urpf --mount-proc).
in_namespace() {
  # The pid after 30000 where the kernel lets the namespace's root choose (else 2).
  unshare --user --map-root-user --pid --fork --mount-proc sh -c \
    'echo 30000 >/proc/sys/kernel/ns_last_pid 2>/dev/null; "$@"; exit $?' sh "$@"
}
if [ "$1" = --node ]; then
  rank=$2
  shift 2
  if [ "${ISO_RANK:-}" = "$rank" ]; then
    in_namespace "$@"
    exit $?
  fi
  exec "$@"
fi
isorun=$1
nodes=$2
rank=$3
outcome=$4
pattern=$5
shift 5
if ! in_namespace true 2>/dev/null; then
  echo "in_own_pid_namespace: no pid namespaces on this system; skipped"
  exit 77
fi
output=$("$isorun" -n "$nodes" --timeout 20 -- "$0" --node "$rank" "$@" 2>&1)
status=$?
printf '%s\n' "$output"
if [ "$outcome" = succeeds ]; then
  if [ "$status" -ne 0 ] || printf '%s\n' "$output" | grep -q '^isorun:'; then
    echo "in_own_pid_namespace: the job ended with status $status; it was to succeed" >&2
    exit 1
  fi
  expected="$pattern"
else
  if [ "$status" -eq 0 ]; then
    echo "in_own_pid_namespace: the job succeeded; it was to fail" >&2
    exit 1
  fi
  expected="$pattern
^isorun: node $rank "
fi
printf '%s\n' "$expected" | while IFS= read -r line; do
  if ! printf '%s\n' "$output" | grep -Eq -- "$line"; then
    echo "in_own_pid_namespace: no line matches: $line" >&2
    exit 1
  fi
done || exit 1
echo "in_own_pid_namespace: ended as expected (status $status)"
