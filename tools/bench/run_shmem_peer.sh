#!/usr/bin/env bash
# run_shmem_peer.sh <path-to-iso-shmem-peer> [--quick] [--pes N] [--sizes]
#
# Runs the OpenSHMEM peer on 2 PEs (or N, 2 to 8, mapped round robin over the cores and
# bound to them, several to a core when there are fewer cores than PEs) and prints only its result lines on stdout. Exits 0 when
# at least the shmem_g_us line came out, whatever oshrun's own status (a crash in
# shmem_finalize must not lose figures that were already printed), 1 otherwise; the peer's
# other output goes to stderr when something went wrong. The benchmark drivers rely on this.
#
# The options, measured on the 2-core VM (Debian 12, Open MPI 4.1.4, UCX 1.13.1). The host
# is noisy: one configuration's figures move by up to 2x from run to run (shmem_g 0.039-0.10
# us) and a plain CPU loop by 1.9-2.9 ns per iteration, so each choice below rests on 15
# interleaved --quick runs per setting, all with the mem_hooks option, comparing the medians
# of the runs' medians (g / p+quiet / fadd, in us):
#   Open MPI and UCX defaults (binds to core for 2 PEs) 0.081 / 0.105 / 0.083
#   -x UCX_TLS=sm,self                                  0.080 / 0.094 / 0.085
#   -x UCX_TLS=posix,self                               0.083 / 0.082 / 0.088
#   -x UCX_TLS=sysv,self                                0.085 / 0.088 / 0.084
#   --bind-to none                                      0.089 / 0.113 / 0.091
#   -x UCX_PROTO_ENABLE=y (with sm,self)                0.105 / 0.111 / 0.121
#   --mca sshmem mmap / sysv (1 run each, g only)       0.62 / 0.76: heap no longer mappable
# - --bind-to core --map-by core: leaving the PEs unbound cost up to 10% on the figures.
#   It is Open MPI's default for 2 processes anyway; naming it keeps it for other defaults.
# - UCX_TLS=sm,self: UCX already picks its shared-memory transports by itself, and none of
#   them differs from another beyond the noise; naming them keeps UCX from probing or choosing
#   a network device where one exists, so the peer always measures the shared-memory path.
# - --mca opal_common_ucx_opal_mem_hooks 0: avoids the segfault in shmem_finalize (the cause
#   is in shmem_peer.c's header); without it no run of 20 exited cleanly, with it 40 of 40.
set -uo pipefail

usage() {
  echo "usage: $0 <path-to-iso-shmem-peer> [--quick] [--pes 2..8] [--sizes]" >&2
  exit 1
}

[[ $# -ge 1 ]] || usage
peer=$1
shift
quick=()
sizes=()
pes=2
while [[ $# -gt 0 ]]; do
  case $1 in
    --quick) quick=(--quick) ;;
    --sizes) sizes=(--sizes) ;;
    --pes)
      [[ $# -ge 2 && $2 =~ ^[2-8]$ ]] || usage
      pes=$2
      shift
      ;;
    *) usage ;;
  esac
  shift
done
if [[ ! -x $peer ]]; then
  echo "$0: $peer is not an executable" >&2
  exit 1
fi
if ! command -v oshrun >/dev/null; then
  echo "$0: oshrun not found (Debian: apt-get install openmpi-bin)" >&2
  exit 1
fi

# Open MPI refuses to start as root unless told twice that it is meant.
if [[ $(id -u) -eq 0 ]]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# More PEs than cores: Open MPI refuses to place or bind them unless told that it is meant.
placement=(--bind-to core --map-by core)
if [[ $pes -gt $(nproc) ]]; then
  placement=(--oversubscribe --bind-to core:overload-allowed --map-by core:oversubscribe)
fi
timeout --kill-after=10 120 oshrun -n "$pes" "${placement[@]}" \
  --mca opal_common_ucx_opal_mem_hooks 0 -x UCX_TLS=sm,self \
  "$peer" "${quick[@]}" "${sizes[@]}" </dev/null >"$work/out" 2>"$work/err"
status=$?

grep -E '^(shmem_g_us|shmem_p_quiet_us|shmem_p_quiet_k_us|shmem_atomic_fadd_us|shmem_atomic_fadd_all_us|shmem_lock_fadd4_us|shmem_lock_fadd4_all_us|shmem_lock_put4_us|shmem_getmem_us|shmem_putmem_quiet_us) ' \
  "$work/out" >"$work/results"
cat "$work/results"

have_g=0
grep -q '^shmem_g_us ' "$work/results" && have_g=1
if [[ $status -ne 0 || $have_g -eq 0 ]]; then
  reason="oshrun exited with status $status"
  [[ $have_g -eq 1 ]] || reason+=" and the peer printed no shmem_g_us line"
  echo "$0: $reason; the peer's other output follows" >&2
  grep -vxF -f "$work/results" "$work/out" >&2
  cat "$work/err" >&2
fi
[[ $have_g -eq 1 ]] && exit 0
exit 1
