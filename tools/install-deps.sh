#!/usr/bin/env bash
# Installs the Debian 12 packages the build, the tests and the benchmark peers need.
# Idempotent: installs only what is missing. Uses sudo only when not root.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libabsl-dev libprotobuf-dev protobuf-compiler libprotoc-dev
  libhwloc-dev libpmix-dev zlib1g-dev libgtest-dev libgmock-dev libboost-context-dev
  openmpi-bin libopenmpi-dev libucx-dev ucx-utils iproute2 clang-format clang-tidy
  chromium-headless-shell
  munge slurmctld slurmd slurm-client
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
