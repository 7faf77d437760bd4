#!/bin/sh
# Runs order-bench-broadcast (iso::ordered_group, sequencer order) and its MPI_Bcast peer
# on 2, 4 and 8 nodes, alternating, ROUNDS times each, and prints every line; the medians
# and ratios are taken from these lines. Above the machine's core count the jobs are
# oversubscribed (and 8 nodes run inproc: one process, a thread per node), which the
# output says.
#
#   tools/bench/run_order_bench_broadcast.sh [build/bin] [--quick]
set -eu
bin=${1:-build/bin}
quick=${2:-}
rounds=${ROUNDS:-3}
cores=$(nproc)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for n in 2 4 8; do
  transport=shm
  if [ "$n" -gt 4 ]; then transport=inproc; fi
  if [ "$n" -gt "$cores" ]; then
    echo "# $n nodes on $cores cores: oversubscribed ($transport)"
  fi
  r=0
  while [ "$r" -lt "$rounds" ]; do
    "$bin/isorun" -n "$n" --transport "$transport" "$bin/order-bench-broadcast" $quick
    if [ -x "$bin/order-bench-broadcast-mpi" ]; then
      mpirun -n "$n" --oversubscribe --mca pml ob1 --mca btl self,vader \
        --mca btl_vader_single_copy_mechanism none "$bin/order-bench-broadcast-mpi" $quick \
        2>/dev/null
    fi
    r=$((r + 1))
  done
done
