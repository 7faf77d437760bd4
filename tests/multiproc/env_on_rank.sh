#!/bin/sh
# Runs a command of a job with one more environment setting on one rank only (isorun gives
# every rank the same environment): for tests of ranks whose settings disagree.
#   env_on_rank.sh RANK NAME=VALUE COMMAND [ARGS...]
rank=$1
setting=$2
shift 2
if [ "${ISO_RANK:-}" = "$rank" ]; then
  export "${setting?}"
fi
exec "$@"
