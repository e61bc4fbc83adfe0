#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR GPL-2.0
"""Differential test: the C planner (strategy tlsf, through the `plan` CLI,
i.e. tools/svodctl/cmd_plan.c over the userspace build of driver/core) against
tlsf_ref.py, the line-by-line port of the reference. Seeded random traces
cover sizes (zero, tiny, powers of two and their neighbours, large), any
alignment (powers of two or not), block sizes, lv2_cnt, arena sizes,
out-of-space, bad frees, live-id reuse and 64-bit wrap; plus generated
network schedules (plan_gen). Offsets, peak, errno and the failing event
must all match.

usage: difftest.py PLAN_BINARY [--traces N] [--seed S]
Prints `ok - ...` / `not ok - ...` lines; exits 1 on a mismatch.
"""

import argparse
import errno
import os
import random
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tlsf_ref  # noqa: E402

U64_MAX = (1 << 64) - 1


def rand_size(r, arena):
    k = r.random()
    if k < 0.08:
        return 0
    if k < 0.3:
        return r.randint(1, 600)
    if k < 0.5:
        p = 1 << r.randint(0, 20)
        return max(0, p + r.choice((-1, 0, 1)))
    if k < 0.993:
        return r.randint(1, max(1, arena // r.choice((8, 16, 64, 64, 256))))
    if k < 0.999:
        return r.randint(arena // 2, arena * 2)
    return U64_MAX - r.randint(0, 4096)


def rand_align(r):
    return r.choice((0, 0, 0, 1, 2, 4, 8, 64, 256, 256, 4096, 3, 24, 1000, r.randint(1, 5000)))


def rand_trace(r):
    arena = r.choice((r.randint(1, 1 << 12), r.randint(1, 1 << 20), 1 << 20, (1 << 26) + 1,
                      r.randint(1, 1 << 40), U64_MAX))
    block_size = r.choice((1, 1, 2, 7, 16, 256, 256, 1000, 4096))
    lv2 = r.choice((0, 1, 2, 3, 5, 16, 31, 32, 32, 33, 64, 255, 256))
    n = r.randint(1, 400)
    live = []
    freed = []
    next_id = r.randint(0, 10)
    events = []
    for _ in range(n):
        k = r.random()
        if live and k < 0.42:
            bid = live.pop(r.randrange(len(live)))
            freed.append(bid)
            events.append(("free", bid))
        elif k < 0.998:
            events.append(("alloc", next_id, rand_size(r, min(arena, 1 << 40)), rand_align(r)))
            live.append(next_id)
            next_id += r.choice((1, 1, 1, 2, 1000))
        elif k < 0.9986 and freed:
            events.append(("free", r.choice(freed)))
        elif k < 0.9993 and live:
            events.append(("alloc", r.choice(live), 256, 0))
        else:
            events.append(("free", next_id + 7))
    return arena, block_size, lv2, events


def gen_trace(plan_gen, seed, n):
    out = subprocess.run([plan_gen, str(seed), str(n)], capture_output=True, text=True,
                         check=True).stdout
    return parse_trace(out)


def parse_trace(text):
    events = []
    for line in text.splitlines():
        f = line.split()
        if not f or f[0].startswith("#"):
            continue
        if f[0] == "alloc":
            events.append(("alloc", int(f[1]), int(f[2], 0), int(f[3], 0) if len(f) > 3 else 0))
        else:
            events.append(("free", int(f[1])))
    return events


def write_trace(path, events):
    with open(path, "w") as f:
        for e in events:
            if e[0] == "alloc":
                f.write("alloc %d %d %d\n" % (e[1], e[2], e[3]))
            else:
                f.write("free %d\n" % e[1])


def run_c(plan, path, arena, block_size, lv2):
    p = subprocess.run([plan, "--strategy", "tlsf", "--arena", str(arena), "--block-size",
                        str(block_size), "--lv2", str(lv2), path],
                       capture_output=True, text=True)
    offsets = {}
    err, failed, peak = 0, None, None
    for line in p.stdout.splitlines():
        f = line.split()
        if f[0] == "alloc":
            offsets[int(f[1])] = int(f[3])
        elif f[0] == "error":
            err = -getattr(errno, f[1])
            failed = int(f[3]) if int(f[3]) >= 0 else None
        elif f[0] == "peak":
            peak = int(f[1])
    return err, failed, offsets, peak


def compare(plan, path, arena, block_size, lv2, events):
    write_trace(path, events)
    c_err, c_failed, c_offsets, c_peak = run_c(plan, path, arena, block_size, lv2)
    r_err, r_failed, r_offsets, r_peak = tlsf_ref.plan_ref(events, arena, block_size, lv2)
    r_offsets = {i: o for i, o in enumerate(r_offsets) if o is not None}
    if (c_err, c_failed) != (r_err, r_failed):
        return "errno/failed event: C %s@%s, reference %s@%s" % (c_err, c_failed, r_err, r_failed)
    if c_offsets != r_offsets:
        bad = min(i for i in set(c_offsets) | set(r_offsets)
                  if c_offsets.get(i) != r_offsets.get(i))
        return "offset of event %d: C %s, reference %s" % (bad, c_offsets.get(bad),
                                                          r_offsets.get(bad))
    if r_err == 0 or r_failed is not None:
        if c_peak != r_peak:
            return "peak: C %s, reference %s" % (c_peak, r_peak)
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("plan")
    ap.add_argument("--traces", type=int, default=int(os.environ.get("DIFF_TRACES", "600")))
    ap.add_argument("--seed", type=int, default=int(os.environ.get("DIFF_SEED", "20261130")))
    a = ap.parse_args()
    plan_gen = os.path.join(os.path.dirname(a.plan), "plan_gen")
    r = random.Random(a.seed)
    stats = {"traces": 0, "events": 0, "enospc": 0, "einval": 0}
    failures = 0
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "trace.txt")
        cases = []
        for i in range(a.traces):
            cases.append(("random %d" % i,) + rand_trace(r))
        if os.access(plan_gen, os.X_OK):
            for s in range(8):
                cases.append(("network %d" % s, 1 << 40, 256, 32,
                              gen_trace(plan_gen, s + 1, 3000)))
            cases.append(("network tight", 48 << 20, 256, 32, gen_trace(plan_gen, 99, 3000)))
        for name, arena, bs, lv2, events in cases:
            why = compare(a.plan, path, arena, bs, lv2, events)
            stats["traces"] += 1
            stats["events"] += len(events)
            res = tlsf_ref.plan_ref(events, arena, bs, lv2)[0]
            if res == -errno.ENOSPC:
                stats["enospc"] += 1
            elif res == -errno.EINVAL:
                stats["einval"] += 1
            if why:
                failures += 1
                print("# difftest %s (seed %d, arena %d, block %d, lv2 %d): %s"
                      % (name, a.seed, arena, bs, lv2, why))
    status = "not ok" if failures else "ok"
    print("%s - plan difftest: %d traces, %d events (%d ENOSPC, %d EINVAL) identical to the "
          "Python port of the reference%s" % (status, stats["traces"], stats["events"],
                                              stats["enospc"], stats["einval"],
                                              ", %d differ" % failures if failures else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
