#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install what svod's build, demo and tests need from Debian 12 packages.
# Idempotent and quiet: prints nothing and touches nothing when all is there.
set -euo pipefail

pkgs=(linux-source-6.1 linux-headers-amd64 linux-image-amd64 qemu-system-x86
      busybox-static cpio kmod bc bison flex libelf-dev libssl-dev dwarves sparse
      xz-utils python3 python3-pytest gcc make perl rsync clang libclang-rt-14-dev pkgconf
      liburing-dev)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "deps: missing packages: ${missing[*]}; run as root to install them" >&2
	exit 1
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
