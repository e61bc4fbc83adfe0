#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""ABI check of uapi/linux/svod.h against tools/rig/abi.golden.

Compiles a userspace object with every uapi struct, reads the layout with
pahole and checks: no struct has a hole or padding pahole reports, every
struct size is a multiple of 8, and every member of the golden layout is
still there at the same offset and size (new members may only be appended).
Every SVOD_<X>_SIZE_VER0 (the first layout of a growable struct) is a
multiple of 8 that ends on a member of its struct, no larger than the struct,
and never changes once in the golden file.
`abi.py --update` rewrites the golden file after a deliberate ABI addition.
"""
import os
import re
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GOLDEN = os.path.join(TOP, "tools/rig/abi.golden")
HEADER = os.path.join(TOP, "uapi/linux/svod.h")


def layout():
    structs = re.findall(r"^struct (svod_\w+) \{", open(HEADER).read(), re.M)
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "abi.c")
        with open(src, "w") as f:
            f.write('#include "linux/svod.h"\n')
            for s in structs:
                f.write(f"struct {s} abi_{s};\n")
        obj = os.path.join(d, "abi.o")
        subprocess.run(["gcc", "-g", "-c", "-I", os.path.join(TOP, "uapi"), src, "-o", obj],
                       check=True)
        text = subprocess.run(["pahole", obj], check=True, capture_output=True,
                              text=True).stdout
    return structs, text


def parse(text):
    out, cur = {}, None
    for line in text.splitlines():
        m = re.match(r"^struct (\w+) \{", line)
        if m:
            cur = out.setdefault(m.group(1), {"members": [], "size": None, "notes": []})
            continue
        if cur is None:
            continue
        m = re.match(r"^\s+.*?\s\**(\w+)(\[\d+\])*;\s+/\*\s+(\d+)\s+(\d+)\s+\*/", line)
        if m:
            cur["members"].append((m.group(1), int(m.group(3)), int(m.group(4))))
        m = re.search(r"/\* size: (\d+)", line)
        if m:
            cur["size"] = int(m.group(1))
        if re.search(r"XXX|padding:|holes:", line):
            cur["notes"].append(line.strip())
        if line.startswith("};"):
            cur = None
    return out


# SVOD_<X>_SIZE_VER0 -> struct
VER0_STRUCT = {"QUERY": "svod_query", "TIER_INFO": "svod_tier_info",
               "ALLOC": "svod_alloc", "FREE": "svod_free", "RESOLVE": "svod_resolve",
               "XFER": "svod_xfer", "PLAN": "svod_plan",
               "PLAN_EVENT": "svod_plan_event",
               "MAP_OFFSET": "svod_map_offset", "WAIT": "svod_wait",
               "EXPORT": "svod_export", "IMPORT": "svod_import",
               "BATCH": "svod_batch", "BATCH_ENTRY": "svod_batch_entry"}


def ver0_sizes():
    found = re.findall(r"^#define SVOD_(\w+)_SIZE_VER0\s+(\d+)", open(HEADER).read(), re.M)
    return {k: int(v) for k, v in found}


def golden_ver0(text):
    return {k: int(v) for k, v in re.findall(r"^/\* ver0 (\w+) (\d+) \*/$", text, re.M)}


def main():
    structs, text = layout()
    ver0 = ver0_sizes()
    now = parse(text)
    if len(sys.argv) > 1 and sys.argv[1] == "--update":
        with open(GOLDEN, "w") as f:
            f.write(text)
            for k, v in sorted(ver0.items()):
                f.write(f"/* ver0 {k} {v} */\n")
        print(f"abi: golden rewritten with {len(structs)} structs")
        return 0
    ok = True

    def verdict(good, what):
        nonlocal ok
        ok &= good
        print(f"{'ok' if good else 'not ok'} - static: abi {what}")

    golden = parse(open(GOLDEN).read()) if os.path.exists(GOLDEN) else {}
    verdict(bool(golden), "golden layout exists (tools/rig/abi.golden)")
    for s in structs:
        st = now.get(s)
        good = st is not None and not st["notes"] and st["size"] % 8 == 0
        verdict(good, f"struct {s}: no holes, size {st and st['size']} a multiple of 8"
                + (f" ({'; '.join(st['notes'])})" if st and st["notes"] else ""))
        if s in golden:
            old = golden[s]["members"]
            verdict(st is not None and st["members"][:len(old)] == old,
                    f"struct {s}: no member moved since the golden layout")
    for s in golden:
        if s not in now:
            verdict(False, f"struct {s} removed")
    verdict(set(ver0) == set(VER0_STRUCT), "every growable struct has its SVOD_*_SIZE_VER0")
    old_ver0 = golden_ver0(open(GOLDEN).read()) if golden else {}
    for k, v in sorted(ver0.items()):
        st = now.get(VER0_STRUCT.get(k, ""))
        ends = {off + size for _, off, size in st["members"]} if st else set()
        verdict(st is not None and v % 8 == 0 and v <= st["size"] and v in ends
                and old_ver0.get(k, v) == v,
                f"SVOD_{k}_SIZE_VER0 = {v}: ends on a member, unchanged since the golden file")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
