#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Calls go one way: no circle in the call graph between svod's objects.

Reads the symbol tables of the objects of a built svod.ko (`nm`: a symbol an
object defines, T/D/B/R and friends, and one it uses, U) and draws an edge
A -> B when A uses a symbol B defines. Any circle (a strongly connected
component of more than one object) fails, named with the symbols of each of
its edges, e.g.

    not ok - static: layers: a circle: tier.o -> sysfs.o (svod_sysfs_tier_add)
             -> tier.o (svod_dev_tier_put)

Usage: layers.py [--graph] BUILD_DIR   (the M= directory of a svod.ko build)
       layers.py --selftest KDIR       (copies the tree, adds a back-call
                                        from tier.c to ioctl.c, builds it
                                        against KDIR and requires the check
                                        to fail on that circle)
--graph prints every edge. Exit status: 0 if no circle.
"""
import os
import shutil
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def objects(build):
    """svod.ko's objects, from the kbuild file that lists them."""
    with open(os.path.join(build, "svod.mod")) as f:
        return [o for o in f.read().split() if o.endswith(".o")]


def symbols(build, obj):
    out = subprocess.run(["nm", os.path.join(build, obj)], check=True,
                         capture_output=True, text=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        f = line.split()
        if len(f) == 2 and f[0] == "U":
            used.add(f[1])
        elif len(f) == 3 and f[1] in "TDBRVWG":
            defined.add(f[2])
    return defined, used


def graph(build):
    objs = objects(build)
    table = {o: symbols(build, o) for o in objs}
    owner = {}
    for o, (defined, _) in table.items():
        for s in defined:
            owner.setdefault(s, o)
    edges = {o: {} for o in objs}
    for o, (_, used) in table.items():
        for s in sorted(used):
            b = owner.get(s)
            if b and b != o:
                edges[o].setdefault(b, []).append(s)
    return edges


def circles(edges):
    """Tarjan's strongly connected components of more than one node."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def one_cycle(edges, comp):
    """A cycle through the component's first node, as a list of nodes."""
    start = comp[0]
    members = set(comp)
    path, seen = [start], {start}

    def walk(v):
        for w in sorted(edges[v]):
            if w == start:
                return True
            if w in members and w not in seen:
                seen.add(w)
                path.append(w)
                if walk(w):
                    return True
                path.pop()
        return False

    walk(start)
    return path + [start]


def name(o):
    return o.split("/")[-1]


def describe(edges, cycle):
    parts = [name(cycle[0])]
    for a, b in zip(cycle, cycle[1:]):
        syms = edges[a][b]
        more = f", +{len(syms) - 2}" if len(syms) > 2 else ""
        parts.append(f"{name(b)} ({', '.join(syms[:2])}{more})")
    return " -> ".join(parts)


def check(build, show=False):
    edges = graph(build)
    if show:
        for a in sorted(edges):
            for b in sorted(edges[a]):
                print(f"# {name(a)} -> {name(b)}: {' '.join(edges[a][b])}")
    found = circles(edges)
    for comp in found:
        print(f"not ok - static: layers: a circle: {describe(edges, one_cycle(edges, comp))}"
              f" (in all {len(comp)} objects call each other: "
              f"{', '.join(name(o) for o in comp)})")
    nedges = sum(len(v) for v in edges.values())
    if not found:
        print(f"ok - static: layers: no circle between svod.ko's {len(edges)} objects "
              f"({nedges} edges)")
    return found


def selftest(kdir):
    """A deliberate back-call from tier.c (low) to svod_ioctl() (high)."""
    with tempfile.TemporaryDirectory() as d:
        for part in ("Kbuild", "VERSION", "driver", "uapi", "kunit"):
            src = os.path.join(TOP, part)
            if os.path.isdir(src):
                shutil.copytree(src, os.path.join(d, part))
            else:
                shutil.copy(src, d)
        with open(os.path.join(d, "driver/tier.c"), "a") as f:
            f.write("\n#include \"ioctl.h\"\n"
                    "long svod_layers_selftest(void);\n"
                    "long svod_layers_selftest(void)\n{\n"
                    "\treturn svod_ioctl(NULL, 0, 0);\n}\n")
        r = subprocess.run(["make", "-s", "-C", kdir, f"M={d}", "modules"],
                           capture_output=True, text=True)
        if r.returncode:
            sys.stderr.write(r.stdout + r.stderr)
            print("not ok - static: layers: self-test tree builds")
            return 1
        found = circles(graph(d))
        caught = any({"tier.o", "ioctl.o"} <= {name(o) for o in c} for c in found)
        print(f"{'ok' if caught else 'not ok'} - static: layers: the check catches a "
              f"deliberate back-call tier.c -> ioctl.c ({len(found)} circle(s) found)")
        return 0 if caught else 1


def main(argv):
    if len(argv) == 3 and argv[1] == "--selftest":
        return selftest(argv[2])
    show = "--graph" in argv
    args = [a for a in argv[1:] if a != "--graph"]
    if len(args) != 1:
        sys.stderr.write(__doc__)
        return 2
    return 1 if check(args[0], show) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
