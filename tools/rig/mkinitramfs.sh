#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# mkinitramfs.sh KIND MODULE_DIR OUT: the guest's initramfs for kernel KIND
# (test|stock): busybox (static, from busybox-static), /init, the .ko files in MODULE_DIR and the
# static harness binaries in tools/harness/bin.
set -euo pipefail
kind=$1 moddir=$2 out=$3
top=$(cd "$(dirname "$0")/../.." && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

mkdir -p "$stage"/{bin,dev,proc,sys,tmp,svod/bin,svod/modules}
cp /bin/busybox "$stage/bin/busybox"
ln -s busybox "$stage/bin/sh"
mknod -m 600 "$stage/dev/console" c 5 1
cp "$top/tools/rig/init" "$stage/init"
echo "$kind" >"$stage/svod/kernel"
cp "$moddir"/*.ko "$stage/svod/modules/"
if [ -d "$top/tools/harness/bin" ]; then
	cp "$top"/tools/harness/bin/* "$stage/svod/bin/" 2>/dev/null || true
fi
# Python, pytest and tools/python's suite for t_python.
"$top/tools/rig/python-files.sh" "$stage"
(cd "$stage" && find . | cpio -o -H newc --quiet | gzip -1) >"$out"
