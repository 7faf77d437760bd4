#!/bin/sh
# Runs order-bench and prints the machine's core count and load first, since every figure
# it prints depends on them. order-bench alternates its own jobs with its peers' (ordered
# messages in both orders beside MPI_Bcast on 2, 4 and 8 nodes, inproc above the core
# count; fetch-and-add and put/get beside OpenSHMEM) and reports medians [min-max].
#
#   tools/bench/run_order_bench.sh [build/bin] [order-bench options, e.g. --quick --only=ordered]
set -eu
bin=${1:-build/bin}
if [ $# -gt 0 ]; then shift; fi
echo "# $(nproc) cores; $(uptime | sed 's/.*load average/load average/')"
exec "$bin/order-bench" "$@"
