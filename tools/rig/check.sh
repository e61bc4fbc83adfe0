#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make check: every test svod has, one verdict line each (`ok - ...` or
# `not ok - ...`), then the total as its last line: `N passed, N failed`.
# Exit status non-zero on any failure. Everything is logged in build/check/.
# Before the total, each step's duration (`step NAME: N s`).
#   --selftest-only   only prove that the judge catches failures
#   --guest MODE      a developer's loop: one boot (MODE test, stock or direct) after
#                     the kernel and tools steps; with SVOD_ONLY=t_a,t_b only
#                     those harness programs (`make check-guest`)
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
rig=$top/tools/rig
out=$top/build/check
mkdir -p "$out"
results=$out/results.txt
durations=$out/durations.txt
: >"$results"
: >"$durations"

# step NAME CMD...: run one step, keep its verdict lines, and turn a step
# that fails without saying why into a verdict of its own.
step() {
	local name=$1 rc start=$SECONDS
	shift
	echo "=== $name" >&2
	"$@" >"$out/$name.verdicts" 2> >(tee "$out/$name.log" >&2)
	rc=$?
	echo "step $name: $((SECONDS - start)) s" >>"$durations"
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

step_kernel() { step kernel verdict_of "rig: test kernel built or reused" "$rig/kernel.sh"; }
step_tools() {
	step tools verdict_of "tools: libsvod, libsvodplan, svodctl and the static harness build" \
		make -s -C "$top/tools"
}

if [ "${1:-}" = --selftest-only ]; then
	step_kernel
	step selftest "$rig/run.sh" selftest
elif [ "${1:-}" = --guest ]; then
	mode=${2:-}
	case $mode in
	test|stock|direct) ;;
	*) echo "check.sh: --guest test|stock|direct, not '$mode'" >&2; exit 2 ;;
	esac
	[ "$mode" = stock ] || step_kernel
	step_tools
	step "guest-$mode" "$rig/run.sh" "$mode"
else
	step_kernel
	step_tools
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
	# The named boot without the IOMMU (run.sh): what needs it, alone.
	step guest-direct "$rig/run.sh" direct
	echo "=== benchmarks (figures only, not verdicts)"
	for mode in test stock; do
		[ -s "$top/build/run-$mode/bench.txt" ] || continue
		echo "--- guest, $mode kernel"
		cat "$top/build/run-$mode/bench.txt"
	done
	echo "--- host, userspace builds of the core"
	start=$SECONDS
	make -s -C "$top/tools" bench 2>&1 | tee "$out/bench-host.txt"
	echo "step benchmarks: $((SECONDS - start)) s" >>"$durations"
fi

echo "=== step durations (wall clock, figures only)"
cat "$durations"
echo "total: $SECONDS s"

passed=$(grep -c '^ok - ' "$results")
failed=$(grep -c '^not ok - ' "$results")
if [ "$failed" != 0 ]; then
	echo "=== failures"
	grep '^not ok - ' "$results"
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$passed" != 0 ]
