#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make demo: boot Debian's stock kernel in QEMU with an ivshmem-plain BAR,
# load svod and run `svodctl demo`; print the session and the verdicts.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
verdicts=$(mktemp)
trap 'rm -f "$verdicts"' EXIT
"$top/tools/rig/run.sh" demo >"$verdicts"
rc=$?
echo "=== the guest's session (build/run-demo/harness.log)"
grep -vE '^svod-(kmemleak|guest: (begin|done))' "$top/build/run-demo/harness.log"
echo "=== verdicts"
cat "$verdicts"
exit $rc
