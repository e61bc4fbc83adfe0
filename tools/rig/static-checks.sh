#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Static checks, one verdict line each: svod.ko builds on Debian's stock
# headers, and svod.ko with svod_test.ko on the test kernel (the only one
# with KUnit, and every option of kunit/.kunitconfig), with W=1 and no
# warning; sparse (C=2) reports nothing on either; checkpatch --strict
# --no-tree is clean on every kernel source file; no circle in the call
# graph between svod.ko's objects (layers.py, with its self-test); the ABI
# check (abi.py); the ABI documents Documentation/ABI/testing/*-svod
# (abidoc.py, with its self-test, and the kernel's get_abi.pl validate);
# every source file carries the SPDX licence tag COPYING allows for its
# place (spdx.py, with its self-test).
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tools/rig/lib.sh
. "$top/tools/rig/lib.sh"
src=$("$top/tools/rig/kernel.sh" --source-dir)
rc=0
verdict() { # verdict GOOD WHAT [DETAILS_FILE]
	if [ "$1" = 0 ]; then
		echo "ok - static: $2"
	else
		echo "not ok - static: $2"
		[ -z "${3:-}" ] || sed 's/^/#   /' "$3" | head -30
		rc=1
	fi
}

kdir=$(kdir_for stock)
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# static_build KIND KDIR: W=1 and C=2 builds of a fresh tree (each must see
# every file compiled) in build/static-KIND, one verdict each.
static_build() {
	local kind=$1 kdir=$2 b=$top/build/static-$1 build_ok=0
	rm -rf "$b"
	mkdir -p "$b"
	rsync -a "$top/Kbuild" "$top/VERSION" "$top/driver" "$top/uapi" "$top/kunit" "$b/"
	make -s -j"$(nproc)" -C "$kdir" M="$b" W=1 modules >"$log" 2>&1 || build_ok=1
	verdict $build_ok "$kind kernel: the modules build ($kdir)" "$log"
	grep -E 'warning:|error:' "$log" >"$log.w" || true
	verdict "$([ -s "$log.w" ] && echo 1 || echo 0)" "$kind kernel: W=1 build has no warnings" "$log.w"

	make -s -j"$(nproc)" -C "$kdir" M="$b" C=2 CHECK="sparse -Wno-decl" modules >"$log" 2>&1
	grep -E "^($b/)?(driver|kunit|uapi)/.*(warning|error):" "$log" >"$log.w" || true
	verdict "$([ -s "$log.w" ] && echo 1 || echo 0)" "$kind kernel: sparse (C=2) reports nothing" "$log.w"
	rm -f "$log.w"
}

static_build stock "$kdir"
tkdir=$(kdir_for test)
grep '^CONFIG_' "$top/kunit/.kunitconfig" | while read -r opt; do
	grep -qx "$opt" "$tkdir/.config" || echo "not in $tkdir/.config: $opt"
done >"$log"
verdict "$([ -s "$log" ] && echo 1 || echo 0)" "test kernel has every option of kunit/.kunitconfig" "$log"
static_build test "$tkdir"
[ -f "$top/build/static-test/svod_test.ko" ]
verdict $? "test kernel: svod_test.ko built"
nm "$top/build/static-stock/svod.ko" | grep -i kunit >"$log"
verdict "$([ -s "$log" ] && echo 1 || echo 0)" "stock kernel: svod.ko holds no KUnit symbol" "$log"

files=$(cd "$top" && ls driver/*.[ch] driver/core/*.[ch] kunit/*.[ch] uapi/linux/svod.h \
	tools/testing/*/*.[ch] 2>/dev/null)
for f in $files; do
	(cd "$top" && perl "$src/scripts/checkpatch.pl" --strict --no-tree --terse \
		--show-types -f "$f") >"$log" 2>&1
	grep -qE '(ERROR|WARNING|CHECK):' "$log"
	verdict "$([ $? = 0 ] && echo 1 || echo 0)" "checkpatch --strict clean: $f" "$log"
done

# Calls go one way (Documentation/svod.rst, "Layout"): no circle between
# svod.ko's objects, and a back-call added on purpose is caught.
"$top/tools/rig/layers.py" "$top/build/static-stock" || rc=1
"$top/tools/rig/layers.py" --selftest "$kdir" || rc=1

"$top/tools/rig/abi.py" || rc=1

"$top/tools/rig/abidoc.py" || rc=1
"$top/tools/rig/abidoc.py" --selftest || rc=1
(cd "$src" && perl scripts/get_abi.pl --dir "$top/Documentation/ABI" validate) >"$log" 2>&1
[ -s "$log" ] || (cd "$src" && perl scripts/get_abi.pl --dir "$top/Documentation/ABI" rest \
	2>&1 >/dev/null) >"$log"
verdict "$([ -s "$log" ] && echo 1 || echo 0)" "the kernel's get_abi.pl validates Documentation/ABI" "$log"

# Licences (COPYING): an SPDX tag on every source file, the right one for
# its place, and a missing or wrong tag is caught.
"$top/tools/rig/spdx.py" "$top" || rc=1
"$top/tools/rig/spdx.py" --selftest || rc=1
exit $rc
