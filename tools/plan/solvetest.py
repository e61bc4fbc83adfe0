#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""`svodctl plan --solve` through the `plan` program: on known-optimum
instances (plan_gen --rect) the search prints `strategy solve`, a valid plan
(offsets aligned, live buffers disjoint, peak the largest end) and reaches
the optimum, which equals the printed lower bound; a bad SECONDS is a usage
error (exit 2)."""
import os
import subprocess
import sys


def check(plan, plan_gen, seed, bufs, granule):
    text = subprocess.run([plan_gen, "--rect", str(seed), str(bufs), str(granule)],
                          capture_output=True, text=True, check=True).stdout
    opt = int([l for l in text.splitlines() if l.startswith("# optimum")][0].split()[2])
    p = subprocess.run([plan, "--strategy", "best", "--block-size", "1", "--solve", "2", "-"],
                       input=text, capture_output=True, text=True)
    if p.returncode:
        return "exit %d: %s" % (p.returncode, p.stderr.strip())
    out = {}
    offsets = {}
    for line in p.stdout.splitlines():
        f = line.split()
        if f[0] == "alloc":
            offsets[int(f[1])] = int(f[3])
        else:
            out[f[0]] = f[1]
    if out.get("strategy") != "solve":
        return "strategy %s" % out.get("strategy")
    live, top = {}, 0
    for i, line in enumerate(l for l in text.splitlines() if l and l[0] != "#"):
        f = line.split()
        if f[0] == "free":
            del live[int(f[1])]
            continue
        o, size = offsets.get(i), int(f[2])
        if o is None:
            return "event %d has no offset" % i
        for s, e in live.values():
            if o < e and s < o + size:
                return "event %d overlaps a live buffer" % i
        live[int(f[1])] = (o, o + size)
        top = max(top, o + size)
    if int(out["peak"]) != top:
        return "peak %s, largest end %d" % (out["peak"], top)
    if int(out["lower_bound"]) != opt or top != opt:
        return "peak %d, lower bound %s, optimum %d" % (top, out["lower_bound"], opt)
    return None


def main():
    plan = sys.argv[1]
    plan_gen = os.path.join(os.path.dirname(plan), "plan_gen")
    bad = 0
    cases = [(s, 10 + 3 * s, 1 if s % 2 else 256) for s in range(12)]
    for seed, bufs, granule in cases:
        why = check(plan, plan_gen, seed, bufs, granule)
        if why:
            bad += 1
            print("# plan solve: rect seed %d, %d buffers: %s" % (seed, bufs, why))
    for arg in ("-1", "x", "nan"):
        p = subprocess.run([plan, "--solve", arg, "-"], input="", capture_output=True)
        if p.returncode != 2:
            bad += 1
            print("# plan solve: --solve %s exits %d, not 2" % (arg, p.returncode))
    print("%s - plan --solve: %d known-optimum instances solved to the optimum with valid "
          "plans, bad SECONDS refused" % ("not ok" if bad else "ok", len(cases)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
