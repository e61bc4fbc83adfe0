#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR GPL-2.0
"""Known-optimum instances from a second generator, written apart from
plan_gen --rect (rect.c) and never used to tune the search.

A rectangle W bytes wide (a random 1-60 MiB on GRANULE bytes) and
H = HFACTOR * BUFFERS whole time units high is cut until it holds BUFFERS
pieces: the piece to cut is picked uniformly among those that can still be
cut, the direction is bytes or time with equal odds (the other if the piece
is one granule wide or one unit long), and the cut falls anywhere along that
side (rect.c: in its middle 80%, the largest of three pieces cut next, time
in 4 * BUFFERS + 16 units). Each piece is a buffer (size = width, lifetime =
height). The pieces tile the rectangle, so W bytes are live at every time:
the lower bound, and the optimum. Events in time order, at equal times every
FREE before every ALLOC; ids in a random order. Python's own PRNG.

Usage: cutgen.py SEED BUFFERS HFACTOR GRANULE (a trace on stdout, with
"# optimum W"; plan it with --block-size 1). BUFFERS and GRANULE 1 to 2^20,
HFACTOR above 0 and at most 1024; anything else exits 2. Fewer pieces than
BUFFERS if no piece can be cut further (the first comment line says how
many).
"""
import random
import sys


def instance(seed, bufs, hfactor, granule):
    """The trace text of instance @seed and its optimum."""
    rnd = random.Random(seed)
    width = rnd.randint(1 << 20, 60 << 20) // granule * granule
    height = max(2, int(hfactor * bufs))
    pieces = [(0, width, 0, height)]
    can = [0]  # the pieces that can still be cut, in no order

    def cuttable(x0, x1, t0, t1):
        return x1 - x0 >= 2 * granule or t1 - t0 >= 2

    while len(pieces) < bufs and can:
        k = rnd.randrange(len(can))
        i = can[k]
        x0, x1, t0, t1 = pieces[i]
        in_bytes = rnd.random() < 0.5
        if in_bytes and x1 - x0 < 2 * granule:
            in_bytes = False
        elif not in_bytes and t1 - t0 < 2:
            in_bytes = True
        if in_bytes:
            c = x0 + rnd.randint(1, (x1 - x0) // granule - 1) * granule
            pieces[i], new = (x0, c, t0, t1), (c, x1, t0, t1)
        else:
            c = rnd.randint(t0 + 1, t1 - 1)
            pieces[i], new = (x0, x1, t0, c), (x0, x1, c, t1)
        pieces.append(new)
        if not cuttable(*pieces[i]):
            can[k] = can[-1]
            can.pop()
        if cuttable(*new):
            can.append(len(pieces) - 1)
    rnd.shuffle(pieces)
    ev = []
    for k, (x0, x1, t0, t1) in enumerate(pieces):
        ev.append((t0, 1, k, x1 - x0))
        ev.append((t1, 0, k, 0))
    ev.sort()
    lines = ["# cutgen seed %d: %d buffers, %d time units" % (seed, len(pieces), height),
             "# optimum %d" % width]
    lines += ["alloc %d %d" % (k, size) if is_alloc else "free %d" % k
              for _, is_alloc, k, size in ev]
    return "\n".join(lines) + "\n", width


def main():
    if len(sys.argv) != 5:
        print("usage: cutgen.py SEED BUFFERS HFACTOR GRANULE", file=sys.stderr)
        return 2
    try:
        seed, bufs, granule = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[4])
        hfactor = float(sys.argv[3])
    except ValueError:
        print("cutgen.py: SEED, BUFFERS and GRANULE are integers, HFACTOR a number",
              file=sys.stderr)
        return 2
    if not 1 <= bufs <= 1 << 20 or not 1 <= granule <= 1 << 20 or not 0 < hfactor <= 1 << 10:
        print("cutgen.py: BUFFERS and GRANULE 1 to 2^20, HFACTOR above 0 and at most 1024",
              file=sys.stderr)
        return 2
    sys.stdout.write(instance(seed, bufs, hfactor, granule)[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
