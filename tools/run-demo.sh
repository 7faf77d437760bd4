#!/usr/bin/env bash
# Installs what is missing, builds, and runs the main demo on the embedded shared-memory
# transport: the bundled LU factorization on 4 processes (checked against its sequential
# version, timed, with the speedup over a sequential run of the same size), the isotach
# dining philosophers on as many (checked: neighbours never eat at once), then the
# single-read isochron latency benchmark beside OpenSHMEM.
#   tools/run-demo.sh [nodes]     # this many processes (default 4)
set -euo pipefail
cd "$(dirname "$0")/.."

nodes="${1:-4}"
tools/install-deps.sh
[ -f build/build.ninja ] || cmake --preset default
cmake --build --preset default >/dev/null

lu_size=(--n 768 --block 32)
echo "== LU factorization, ${lu_size[*]}: ${nodes} processes, the panels travel through isotach memory"
if [ "${nodes}" -gt "$(nproc)" ]; then
  echo "   (${nodes} processes on $(nproc) cores: oversubscribed, so expect little speedup)"
fi
lu_out=$(build/bin/isorun -n "${nodes}" -- build/bin/lu "${lu_size[@]}" --check)
printf '%s\n' "${lu_out}"
seq_out=$(build/bin/lu-seq "${lu_size[@]}")
printf '%s\n' "${seq_out}" | grep ': time'
parallel_s=$(printf '%s\n' "${lu_out}" | sed -n 's/^lu: time \([0-9.]*\) s.*/\1/p')
seq_s=$(printf '%s\n' "${seq_out}" | sed -n 's/^lu-seq: time \([0-9.]*\) s.*/\1/p')
awk -v s="${seq_s}" -v p="${parallel_s}" -v n="${nodes}" \
  'BEGIN { printf "lu: speedup %.2f on %d processes against the sequential run\n", s / p, n }'
echo
echo "== dining philosophers: ${nodes} processes, forks are isotach variables (sched/assign)"
build/bin/isorun -n "${nodes}" -- build/bin/philosophers --meals 2000
echo
echo "== latency of a single-read isochron (${nodes} processes: node 0 reads from the last),"
echo "   beside OpenSHMEM shmem_g"
build/bin/iso-lat --quick --nodes "${nodes}"
