#!/bin/bash
# make check: every test svod has, one verdict line each (`ok - ...` or
# `not ok - ...`), then the total as its last line: `N passed, N failed`.
# Exit status non-zero on any failure. Everything is logged in build/check/.
#   --selftest-only   only prove that the judge catches failures
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
rig=$top/tools/rig
out=$top/build/check
mkdir -p "$out"
results=$out/results.txt
: >"$results"

# step NAME CMD...: run one step, keep its verdict lines, and turn a step
# that fails without saying why into a verdict of its own.
step() {
	local name=$1 rc
	shift
	echo "=== $name" >&2
	"$@" >"$out/$name.verdicts" 2> >(tee "$out/$name.log" >&2)
	rc=$?
	grep -E '^(not )?ok - ' "$out/$name.verdicts" | tee -a "$results"
	grep -vE '^(not )?ok - ' "$out/$name.verdicts" >&2
	if [ $rc != 0 ] && ! grep -q '^not ok - ' "$out/$name.verdicts"; then
		echo "not ok - $name: failed (rc=$rc), see build/check/$name.log" | tee -a "$results"
	fi
}

verdict_of() { # verdict_of WHAT CMD...: the command's exit status is the verdict
	local what=$1
	shift
	if "$@" >&2; then echo "ok - $what"; else echo "not ok - $what"; fi
}

if [ "${1:-}" = --selftest-only ]; then
	step kernel verdict_of "rig: test kernel built or reused" "$rig/kernel.sh"
	step selftest "$rig/run.sh" selftest
else
	step kernel verdict_of "rig: test kernel built or reused" "$rig/kernel.sh"
	step tools verdict_of "tools: libsvod, svodctl and the static harness build" make -s -C "$top/tools"
	step static "$rig/static-checks.sh"
	step host make -s -C "$top/tools" check
	step selftest "$rig/run.sh" selftest
	for mode in test stock; do
		step "guest-$mode" "$rig/run.sh" "$mode"
		if [ -x "$top/tools/testing/verify_bar.py" ]; then
			step "bar-$mode" "$top/tools/testing/verify_bar.py" --prefix "$mode" \
				"$top/build/run-$mode/harness.log" "$top/build/run-$mode/ivshmem.bin"
		fi
	done
	echo "=== benchmarks (figures only, not verdicts)"
	for mode in test stock; do
		[ -s "$top/build/run-$mode/bench.txt" ] || continue
		echo "--- guest, $mode kernel"
		cat "$top/build/run-$mode/bench.txt"
	done
	echo "--- host, userspace builds of the core"
	make -s -C "$top/tools" bench 2>&1 | tee "$out/bench-host.txt"
fi

passed=$(grep -c '^ok - ' "$results")
failed=$(grep -c '^not ok - ' "$results")
if [ "$failed" != 0 ]; then
	echo "=== failures"
	grep '^not ok - ' "$results"
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$passed" != 0 ]
