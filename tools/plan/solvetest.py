#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR GPL-2.0
"""`svodctl plan --solve` through the `plan` program: on known-optimum
instances (plan_gen --rect) the search prints `strategy solve`, a valid plan
(offsets aligned, live buffers disjoint, peak the largest end) and reaches
the optimum, which equals the printed lower bound; on random traces with
alignments, zero sizes, reused ids and buffers never freed, at block sizes
1 and 256, its plan is valid and never above the plan it starts from (BEST's);
on tiny random traces its peak is the optimum found by brute force (the
search proves it and stops, well within its 10 s); cutgen.py, the second
generator, tiles (every step's live bytes its optimum) and the search reaches
its optimum; a bad SECONDS, SHAPE or cutgen.py argument is a usage error
(exit 2). No timed assertion: a short budget only bounds the run
time."""
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cutgen  # noqa: E402


def run_plan(plan, text, block, solve=None):
    args = [plan, "--strategy", "best", "--block-size", str(block)]
    if solve is not None:
        args += ["--solve", solve]
    p = subprocess.run(args + ["-"], input=text, capture_output=True, text=True)
    if p.returncode:
        return None, "exit %d: %s" % (p.returncode, p.stderr.strip())
    out, offsets = {}, {}
    for line in p.stdout.splitlines():
        f = line.split()
        if f[0] == "alloc":
            offsets[int(f[1])] = int(f[3])
        else:
            out[f[0]] = f[1]
    out["offsets"] = offsets
    return out, None


def check_valid(text, offsets, peak, block):
    """None if the plan is valid for the trace, else why not."""
    live, top = {}, 0
    for i, line in enumerate(l for l in text.splitlines() if l and l[0] != "#"):
        f = line.split()
        if f[0] == "free":
            del live[int(f[1])]
            continue
        o = offsets.get(i)
        size = max(int(f[2]), block)
        align = int(f[3]) if len(f) > 3 else 0
        if o is None:
            return "event %d has no offset" % i
        if align > 1 and o % align:
            return "event %d: offset %d not aligned to %d" % (i, o, align)
        for s, e in live.values():
            if o < e and s < o + size:
                return "event %d overlaps a live buffer" % i
        live[int(f[1])] = (o, o + size)
        top = max(top, o + size)
    if peak != top:
        return "peak %d, largest end %d" % (peak, top)
    return None


def random_trace(seed):
    """ALLOCs (sizes 0-5000, some aligned) and FREEs, ids reused, some never freed."""
    rnd = random.Random(seed)
    lines, live, next_id = [], [], 0
    for _ in range(rnd.randrange(20, 300)):
        if live and rnd.random() < 0.45:
            lines.append("free %d" % live.pop(rnd.randrange(len(live))))
            continue
        ident = rnd.choice([next_id, next_id, next_id + 1000])
        if ident in live:
            ident = next_id
        next_id += 1
        size = rnd.choice([0, 1, rnd.randrange(5000), 256 * rnd.randrange(1, 20)])
        align = rnd.choice([0, 0, 0, 1, 8, 64, 256, 4096])
        lines.append("alloc %d %d %d" % (ident, size, align))
        live.append(ident)
    return "\n".join(lines) + "\n"


def tiny_trace(rnd):
    """3-6 buffers of 0-6 bytes, alignments 0-4, random lifetimes."""
    lines, live, nb = [], [], rnd.randrange(3, 7)
    ident = 0
    while ident < nb or live:
        if live and (ident == nb or rnd.random() < 0.5):
            lines.append("free %d" % live.pop(rnd.randrange(len(live))))
            continue
        lines.append("alloc %d %d %d" % (ident, rnd.randrange(7), rnd.choice([0, 1, 2, 4])))
        live.append(ident)
        ident += 1
    return "\n".join(lines) + "\n"


def brute_force(text):
    """The lowest peak of any plan of the trace (block size 1)."""
    bufs, live = [], {}
    for i, line in enumerate(text.split("\n")[:-1]):
        f = line.split()
        if f[0] == "alloc":
            live[f[1]] = len(bufs)
            bufs.append([max(int(f[2]), 1), max(int(f[3]), 1), i, 1 << 30])
        else:
            bufs[live.pop(f[1])][3] = i
    n = len(bufs)
    meet = [[bufs[i][2] < bufs[j][3] and bufs[j][2] < bufs[i][3] for j in range(n)]
            for i in range(n)]
    order = sorted(range(n), key=lambda i: -bufs[i][0])
    offs = [None] * n

    def fits(k, cap):
        if k == n:
            return True
        i = order[k]
        size, align = bufs[i][0], bufs[i][1]
        for o in range(0, cap - size + 1, align):
            if all(not meet[i][j] or offs[j] is None or o + size <= offs[j] or
                   offs[j] + bufs[j][0] <= o for j in range(n)):
                offs[i] = o
                if fits(k + 1, cap):
                    offs[i] = None
                    return True
                offs[i] = None
        return False

    cap = 0
    while not fits(0, cap):
        cap += 1
    return cap


def check_tiny(plan, seed):
    text = tiny_trace(random.Random(1000 + seed))
    out, why = run_plan(plan, text, 1, "10")
    if why:
        return why
    why = check_valid(text, out["offsets"], int(out["peak"]), 1)
    if why:
        return why
    opt = brute_force(text)
    if int(out["peak"]) != opt:
        return "peak %s, optimum %d" % (out["peak"], opt)
    return None


def check_random(plan, seed, block):
    text = random_trace(seed)
    base, why = run_plan(plan, text, block)
    if why:
        return why
    out, why = run_plan(plan, text, block, "0.05")
    if why:
        return why
    if out.get("strategy") != "solve":
        return "strategy %s" % out.get("strategy")
    why = check_valid(text, out["offsets"], int(out["peak"]), block)
    if why:
        return why
    if int(out["peak"]) > int(base["peak"]):
        return "peak %s above best's %s" % (out["peak"], base["peak"])
    return None


def rect_instance(plan_gen, *args):
    """A known-optimum instance (plan_gen --rect ARGS): its text and optimum."""
    text = subprocess.run([plan_gen, "--rect"] + [str(a) for a in args],
                          capture_output=True, text=True, check=True).stdout
    opt = int([l for l in text.splitlines() if l.startswith("# optimum")][0].split()[2])
    return text, opt


def run_solve(plan, text, seconds):
    """The search's plan of @text (block 1), checked valid: (out, None), or
    (None, why not)."""
    out, why = run_plan(plan, text, 1, seconds)
    if why:
        return None, why
    if out.get("strategy") != "solve":
        return None, "strategy %s" % out.get("strategy")
    why = check_valid(text, out["offsets"], int(out["peak"]), 1)
    return (None, why) if why else (out, None)


def at_optimum(plan, text, opt):
    """The search (2 s) reaches the optimum @opt of @text, its lower bound:
    None, or why not."""
    out, why = run_solve(plan, text, "2")
    if why:
        return why
    if int(out["lower_bound"]) != opt or int(out["peak"]) != opt:
        return "peak %s, lower bound %s, optimum %d" % (out["peak"], out["lower_bound"], opt)
    return None


def check(plan, plan_gen, seed, bufs, granule):
    return at_optimum(plan, *rect_instance(plan_gen, seed, bufs, granule))


def alloc_runs(text):
    """Runs of ALLOC lines with no FREE between: the planner's time steps."""
    runs, inrun = 0, False
    for line in text.splitlines():
        if line.startswith("alloc"):
            runs += not inrun
            inrun = True
        elif line.startswith("free"):
            inrun = False
    return runs


def step_bytes(text):
    """Live bytes at the end of each run of ALLOC lines (each time step)."""
    size, live, out, inrun = {}, 0, [], False
    for line in text.splitlines():
        f = line.split()
        if f and f[0] == "alloc":
            size[f[1]] = int(f[2])
            live += int(f[2])
            inrun = True
        elif f and f[0] == "free":
            if inrun:
                out.append(live)
            live -= size[f[1]]
            inrun = False
    return out + ([live] if inrun else [])


def check_shape(plan, plan_gen, seed, bufs, shape):
    """plan_gen --rect's SHAPE: another instance than the default one,
    with lower bound = optimum (reached by the search); with coarse time
    (2) no more runs of ALLOCs than its bufs / 2 + 4 units; a tiling (every
    step's live bytes the optimum) but with slack (4), where some step has
    bytes to spare and one has none."""
    text, opt = rect_instance(plan_gen, seed, bufs, 1, 30, shape)
    base, _ = rect_instance(plan_gen, seed, bufs, 1, 30)
    body = [l for l in text.splitlines() if not l.startswith("#")]
    if body == [l for l in base.splitlines() if not l.startswith("#")]:
        return "shape %d gives the default instance" % shape
    if shape & 2 and alloc_runs(text) > bufs // 2 + 4:
        return "shape %d: %d runs of ALLOCs, more than %d" % (shape, alloc_runs(text),
                                                             bufs // 2 + 4)
    live = step_bytes(text)
    if max(live) != opt:
        return "shape %d: most live bytes %d, not the optimum %d" % (shape, max(live), opt)
    if bool(shape & 4) != (min(live) < opt):
        return "shape %d: fewest live bytes %d, optimum %d" % (shape, min(live), opt)
    return at_optimum(plan, text, opt)


def check_cutgen(plan, seed, bufs, hfactor, granule):
    """cutgen.py, the second generator: @bufs buffers, every step's live
    bytes its optimum (a tiling), reached by the search."""
    text, opt = cutgen.instance(seed, bufs, hfactor, granule)
    allocs = sum(l.startswith("alloc") for l in text.splitlines())
    if allocs != bufs:
        return "%d buffers, not %d" % (allocs, bufs)
    live = step_bytes(text)
    if min(live) != opt or max(live) != opt:
        return "live bytes %d to %d, optimum %d" % (min(live), max(live), opt)
    return at_optimum(plan, text, opt)


def check_hard(plan, plan_gen, seed, bufs):
    """A non-guillotine instance the search does not solve at once: the
    restarts below a prefix of the deepest partial plan (targets above the
    lower bound) must still give a valid plan, never above best's."""
    text, opt = rect_instance(plan_gen, seed, bufs, 1, 30)
    base, why = run_plan(plan, text, 1)
    if why:
        return why
    out, why = run_solve(plan, text, "0.3")
    if why:
        return why
    if int(out["peak"]) > int(base["peak"]):
        return "peak %s above best's %s" % (out["peak"], base["peak"])
    if int(out["peak"]) < opt:
        return "peak %s below the optimum %d" % (out["peak"], opt)
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
    shapes = [(s, 12 + 2 * s, 1 + s % 7) for s in range(14)]
    for seed, bufs, shape in shapes:
        why = check_shape(plan, plan_gen, seed, bufs, shape)
        if why:
            bad += 1
            print("# plan solve: rect seed %d, %d buffers, shape %d: %s"
                  % (seed, bufs, shape, why))
    cuts = [(s, 12 + 2 * s, 0.5 if s % 2 else 4, 256 if s % 4 < 2 else 1) for s in range(8)]
    for seed, bufs, hfactor, granule in cuts:
        why = check_cutgen(plan, seed, bufs, hfactor, granule)
        if why:
            bad += 1
            print("# plan solve: cutgen.py seed %d, %d buffers, %s units per buffer: %s"
                  % (seed, bufs, hfactor, why))
    cutgen_py = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cutgen.py")
    for arg in ("1 20 0 1", "1 20 x 1", "1 20 nan 1", "1 0 4 1", "1 2000000 4 1", "1 20 4 0",
                "1 20 4 2000000", "1 20 4"):
        p = subprocess.run([sys.executable, cutgen_py] + arg.split(" "), capture_output=True)
        if p.returncode != 2:
            bad += 1
            print("# cutgen.py %s exits %d, not 2" % (arg, p.returncode))
    for seed in range(24):
        block = 256 if seed % 2 else 1
        why = check_random(plan, seed, block)
        if why:
            bad += 1
            print("# plan solve: random trace seed %d, block %d: %s" % (seed, block, why))
    for seed, bufs in ((503, 790), (535, 967)):
        why = check_hard(plan, plan_gen, seed, bufs)
        if why:
            bad += 1
            print("# plan solve: hard rect seed %d, %d buffers: %s" % (seed, bufs, why))
    for seed in range(40):
        why = check_tiny(plan, seed)
        if why:
            bad += 1
            print("# plan solve: tiny trace seed %d: %s" % (seed, why))
    for arg in ("8", "-1", "x", "", "1 2"):
        p = subprocess.run([plan_gen, "--rect", "1", "20", "1", "30"] + arg.split(" "),
                           capture_output=True)
        if p.returncode != 2:
            bad += 1
            print("# plan_gen --rect: SHAPE %r exits %d, not 2" % (arg, p.returncode))
    for arg in ("-1", "x", "nan"):
        p = subprocess.run([plan, "--solve", arg, "-"], input="", capture_output=True)
        if p.returncode != 2:
            bad += 1
            print("# plan solve: --solve %s exits %d, not 2" % (arg, p.returncode))
    print("%s - plan --solve: %d known-optimum instances (and %d of other shapes, %d of "
          "cutgen.py) solved to the optimum with valid plans, 24 random traces and 2 hard non-guillotine instances valid and never above "
          "best, 40 tiny ones at the optimum, "
          "bad SECONDS, SHAPE and cutgen.py arguments refused"
          % ("not ok" if bad else "ok", len(cases), len(shapes), len(cuts)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
