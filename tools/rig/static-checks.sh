#!/bin/bash
# Static checks, one verdict line each: svod.ko builds on Debian's stock
# headers with W=1 and no warning, sparse (C=2) reports nothing, and
# checkpatch --strict --no-tree is clean on every kernel source file.
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

# A fresh tree each time: W=1 and C=2 must see every file compiled.
rm -rf "$top/build/static"
build_ok=0
(top=$top; b=$top/build/static; mkdir -p "$b"
 rsync -a "$top/Kbuild" "$top/driver" "$top/uapi" "$top/kunit" "$b/"
 make -s -C "$kdir" M="$b" W=1 modules) >"$log" 2>&1 || build_ok=1
verdict $build_ok "svod.ko builds on Debian headers ($kdir)" "$log"
grep -E 'warning:|error:' "$log" >"$log.w" || true
verdict "$([ -s "$log.w" ] && echo 1 || echo 0)" "W=1 build has no warnings" "$log.w"

make -s -C "$kdir" M="$top/build/static" C=2 CHECK="sparse -Wno-decl" modules >"$log" 2>&1
grep -E "^($top/build/static/)?(driver|kunit|uapi)/.*(warning|error):" "$log" >"$log.w" || true
verdict "$([ -s "$log.w" ] && echo 1 || echo 0)" "sparse (C=2) reports nothing" "$log.w"
rm -f "$log.w"

files=$(cd "$top" && ls driver/*.[ch] driver/core/*.[ch] kunit/*.c uapi/linux/svod.h \
	tools/testing/*/*.[ch] 2>/dev/null)
for f in $files; do
	(cd "$top" && perl "$src/scripts/checkpatch.pl" --strict --no-tree --terse \
		--show-types -f "$f") >"$log" 2>&1
	grep -qE '(ERROR|WARNING|CHECK):' "$log"
	verdict "$([ $? = 0 ] && echo 1 || echo 0)" "checkpatch --strict clean: $f" "$log"
done

"$top/tools/rig/abi.py" || rc=1
exit $rc
