#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR GPL-2.0
"""BEST and the search (`plan --solve 1`) on the instances of cutgen.py,
a generator written apart from plan_gen --rect and never used to tune the
search: COUNT instances (default 16, make check's; seeds 1 and up, 100-1000 buffers,
granules 1 and 256 in turn) with 4 time units per buffer, and as many with
half a unit per buffer (coarse time). Prints peak / optimum as median and
worst, and how many instances the search leaves above the optimum and above
1.05x. Figures, not verdicts: the exit status is 1 only if a plan fails.

Usage: cutbench.py BUILD_DIR [COUNT]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cutgen  # noqa: E402
from solvetest import run_plan  # noqa: E402


def peak(plan, text, solve):
    """BEST's peak of @text (block 1), then the search's from it if @solve."""
    out, why = run_plan(plan, text, 1, solve)
    if why:
        raise RuntimeError(why)
    return int(out["peak"])


def stats(r):
    r = sorted(r)
    return "median %.3f worst %.3f" % (r[(len(r) - 1) // 2], r[-1])


def main():
    plan = os.path.join(sys.argv[1], "plan")
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 16
    for hfactor, what in ((4, "4 time units per buffer"), (0.5, "half a time unit per buffer")):
        best, solve = [], []
        for seed in range(1, count + 1):
            bufs = 100 + seed * 7919 % 901
            text, opt = cutgen.instance(seed, bufs, hfactor, 1 if seed % 2 else 256)
            try:
                best.append(peak(plan, text, None) / opt)
                solve.append(peak(plan, text, "1") / opt)
            except RuntimeError as e:
                print("plan: cutgen.py seed %d: %s" % (seed, e))
                return 1
        print("plan: known-optimum, cutgen.py (another generator), %s, %d instances: "
              "best %s solve (1 s) %s, solve above the optimum on %d, above 1.05x on %d"
              % (what, count, stats(best), stats(solve), sum(r > 1 for r in solve),
                 sum(r > 1.05 for r in solve)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
