#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host-side proof of svod's staging: check the ivshmem backing file.

usage: verify_bar.py [--prefix NAME] LOG BACKING_FILE

LOG is the guest's harness log. Every line
    # svod-manifest: <bar2-offset-hex> <length> <seed>
names a range the guest staged and left in place (a process kept its
allocations until power-off). Byte i of a range is the low byte of the
(i+1)th output of xorshift32 (13, 17, 5) started from <seed>.

BACKING_FILE is the file behind the guest's ivshmem BAR 2. The check is
that every manifest range holds its pattern byte for byte, and that every
byte outside all manifest ranges is zero (the driver scrubs freed memory,
so nothing any other test staged may survive).

Prints `ok - ...` / `not ok - ...` lines; exits 1 if any failed, 2 on bad usage.
"""
import argparse
import re
import sys

MANIFEST = re.compile(r"#\s*svod-manifest:\s*([0-9a-fA-Fx]+)\s+(\d+)\s+(\d+)\s*$")


def xorshift32_bytes(seed, length):
    out = bytearray(length)
    x = seed & 0xFFFFFFFF
    for i in range(length):
        x ^= (x << 13) & 0xFFFFFFFF
        x ^= x >> 17
        x ^= (x << 5) & 0xFFFFFFFF
        out[i] = x & 0xFF
    return bytes(out)


def read_manifest(log):
    ranges = []
    with open(log, errors="replace") as f:
        for line in f:
            m = MANIFEST.search(line.strip())
            if m:
                ranges.append((int(m.group(1), 16), int(m.group(2)), int(m.group(3))))
    return ranges


def first_nonzero(data, start, end):
    """Offset of the first nonzero byte of data[start:end], or None."""
    chunk = 1 << 20
    for pos in range(start, end, chunk):
        stop = min(end, pos + chunk)
        piece = data[pos:stop]
        if piece.count(0) != len(piece):
            return pos + next(i for i, b in enumerate(piece) if b)
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prefix", default="bar", help="name prefix of the verdicts")
    ap.add_argument("log")
    ap.add_argument("backing")
    a = ap.parse_args()
    p = a.prefix
    failed = False

    def verdict(good, name, why=""):
        nonlocal failed
        failed |= not good
        print(f"{'ok' if good else 'not ok'} - {p}: {name}" + (f" ({why})" if why and not good else ""))

    try:
        ranges = read_manifest(a.log)
        with open(a.backing, "rb") as f:
            data = f.read()
    except OSError as e:
        verdict(False, "manifest and backing file readable", str(e))
        return 1

    verdict(len(ranges) > 0, f"guest wrote a staging manifest ({len(ranges)} ranges)",
            "no '# svod-manifest:' line in the log")
    covered = []
    for off, length, seed in ranges:
        name = f"staged bytes at BAR2+{off:#x} len {length} seed {seed} match"
        if off + length > len(data):
            verdict(False, name, f"beyond the {len(data)}-byte file")
            continue
        want = xorshift32_bytes(seed, length)
        got = data[off:off + length]
        if got == want:
            verdict(True, name)
        else:
            bad = next(i for i in range(length) if got[i] != want[i])
            verdict(False, name, f"first mismatch at +{bad:#x}: {got[bad]:#04x} != {want[bad]:#04x}")
        covered.append((off, off + length))

    covered.sort()
    bad_at = None
    pos = 0
    for start, end in covered + [(len(data), len(data))]:
        if start > pos:
            bad_at = first_nonzero(data, pos, start)
            if bad_at is not None:
                break
        pos = max(pos, end)
    verdict(bad_at is None, f"every byte outside the manifest is zero ({len(data)} bytes)",
            f"nonzero byte {data[bad_at]:#04x} at BAR2+{bad_at:#x}" if bad_at is not None else "")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
