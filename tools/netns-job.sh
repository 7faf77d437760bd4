#!/usr/bin/env bash
# Runs a program as a job of <n> nodes on emulated hosts: mpirun starts the processes (a PMIx
# launcher, so they run as a ucx job), and each node, once it has joined PMIx, moves into the
# network namespace of its host (ISO_TEST_NETNS, runtime/config.hpp) and an IPC namespace of
# its own, so that nodes on different hosts reach each other only over veth pairs joined by a
# bridge. Each host holds one node, or k consecutive nodes with --per-host k (a mixed job:
# the nodes of one host share memory windows). Needs root (ip netns); skips (exit 77) with a
# message where namespaces cannot be made. Everything it makes is removed on exit, however it
# ends. A program that cannot move itself (an MPI peer measured beside iso on the same
# lanes) is given --preload <library>, the build's libiso-emulated-host-preload.so, which
# moves it before its main.
#   tools/netns-job.sh [--per-host k] [--preload lib] <n> <program> [args...]
set -euo pipefail

per_host=1
preload=""
while [ $# -gt 0 ]; do
  case "$1" in
    --per-host)
      if [ $# -lt 2 ]; then per_host=""; break; fi
      per_host=$2
      shift 2
      ;;
    --preload)
      if [ $# -lt 2 ]; then
        echo "netns-job: --preload needs a library" >&2
        exit 2
      fi
      preload=$2
      shift 2
      if [ ! -f "$preload" ]; then
        echo "netns-job: --preload '$preload' is not a file" >&2
        exit 2
      fi
      ;;
    *) break ;;
  esac
done
if [ $# -lt 2 ] || ! [[ "$per_host" =~ ^[1-9][0-9]*$ ]] || ! [[ "$1" =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: $0 [--per-host k] [--preload lib] <nodes> <program> [args...]" >&2
  exit 2
fi
n=$1
shift
hosts=$(((n + per_host - 1) / per_host))
for tool in ip mpirun; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "SKIPPED: $tool is not installed, so no emulated hosts can be made"
    exit 77
  fi
done

tag="i$$"                # short: interface names have at most 15 characters
prefix="${tag}h"         # namespaces ${prefix}0 .. ${prefix}<hosts-1>
bridge="${tag}br"
made_namespaces=()
made_bridge=0

cleanup() {
  for ns in "${made_namespaces[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
  if [ "$made_bridge" = 1 ]; then ip link del "$bridge" 2>/dev/null || true; fi
}
trap cleanup EXIT

if ! ip netns add "${prefix}0" 2>/dev/null; then
  echo "SKIPPED: cannot make network namespaces here (ip netns add needs root)"
  exit 77
fi
made_namespaces+=("${prefix}0")
for ((k = 1; k < hosts; k++)); do
  ip netns add "${prefix}$k"
  made_namespaces+=("${prefix}$k")
done
ip link add "$bridge" type bridge
made_bridge=1
ip link set "$bridge" up
for ((k = 0; k < hosts; k++)); do
  ns="${prefix}$k"
  ip link add "${tag}v$k" type veth peer name "${tag}p$k"
  ip link set "${tag}v$k" master "$bridge"
  ip link set "${tag}v$k" up
  ip link set "${tag}p$k" netns "$ns"
  ip -n "$ns" link set lo up
  ip -n "$ns" addr add "10.77.0.$((k + 1))/24" dev "${tag}p$k"
  ip -n "$ns" link set "${tag}p$k" up
done
# A veth has carrier a moment after it is set up; UCX refuses a device without it.
for ((k = 0; k < hosts; k++)); do
  for ((try = 0; ; try++)); do
    if ip -n "${prefix}$k" link show "${tag}p$k" | grep -q "state UP"; then break; fi
    if [ "$try" -ge 100 ]; then
      echo "netns-job: ${tag}p$k in ${prefix}$k did not come up within 10 s" >&2
      exit 1
    fi
    sleep 0.1
  done
done

# Separate network and IPC namespaces still share the process table, so UCX would reach a
# peer's memory by cross-memory attach (cma) for large messages; a real host could not.
export UCX_TLS="${UCX_TLS:-^cma}"
preloading=()
if [ -n "$preload" ]; then
  # A sanitizer's runtime must come first among the libraries of a program built with one
  # (AddressSanitizer refuses to start otherwise): it goes ahead of the preloaded library.
  runtimes=$(ldd "$1" 2>/dev/null | awk '/lib(asan|tsan)\.so/ { printf "%s:", $3 }')
  preloading=(-x "LD_PRELOAD=$runtimes$preload")
fi
status=0
ISO_TEST_NETNS="$prefix" ISO_TEST_NODES_PER_HOST="$per_host" timeout -k 5 "${ISO_MPIRUN_TIMEOUT:-150}" \
  mpirun --allow-run-as-root --oversubscribe -x ISO_TEST_NETNS -x ISO_TEST_NODES_PER_HOST \
  -x UCX_TLS "${preloading[@]}" -n "$n" "$@" ||
  status=$?
exit "$status"
