#!/usr/bin/env bash
# Runs fabric-status-probe as a job of <n> through a launcher script (mpirun_job.sh,
# srun_job.sh) and checks how every node says it waits: polling first where the job's
# nodes fit the machine's cores, sleeping at once where they outnumber them. A PMIx
# launcher binds each process to a core of its own; that one core must not make a job
# that fits look oversubscribed. Passes on the launcher's skip (77).
#   waiting_check.sh <launcher-script> <n> <fabric-status-probe>
set -euo pipefail
launcher=$1
n=$2
probe=$3
# Cores as hwloc counts them: hardware threads of one core count once.
cores=$(lscpu -p=core,socket | grep -v '^#' | sort -u | wc -l)
if [ "$n" -le "$cores" ]; then
  expected="waiting polls, then yields, then sleeps"
else
  expected="waiting sleeps at once: more nodes than cores"
fi
status=0
output=$("$launcher" "$n" "$probe") || status=$?
echo "$output"
if [ "$status" -eq 77 ]; then exit 77; fi
if [ "$status" -ne 0 ]; then
  echo "waiting_check: the job failed (exit status $status)"
  exit 1
fi
lines=$(grep -c "^node [0-9]*: fabric" <<<"$output" || true)
matching=$(grep "^node [0-9]*: fabric" <<<"$output" | grep -c ", $expected\$" || true)
echo "waiting_check: $n nodes on $cores cores: $matching of $lines nodes say '$expected'"
[ "$lines" -eq "$n" ] && [ "$matching" -eq "$n" ]
