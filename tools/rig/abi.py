#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""ABI check of uapi/linux/svod.h against tools/rig/abi.golden.

Compiles a userspace object with every uapi struct, reads the layout with
pahole and checks: no struct has a hole or padding pahole reports, every
struct size is a multiple of 8, and every member of the golden layout is
still there at the same offset and size (new members may only be appended).
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


def main():
    structs, text = layout()
    now = parse(text)
    if len(sys.argv) > 1 and sys.argv[1] == "--update":
        with open(GOLDEN, "w") as f:
            f.write(text)
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
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
