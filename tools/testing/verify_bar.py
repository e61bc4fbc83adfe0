#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host-side proof of svod's staging: check the ivshmem backing file.

usage: verify_bar.py [--prefix NAME] LOG BACKING_FILE
       verify_bar.py --self-test

LOG is the guest's harness log. Every line
    # svod-manifest: <bar2-offset-hex> <length> <seed>
names a range the guest staged and left in place (a process kept its
allocations until power-off). Byte i of a range is the low byte of the
(i+1)th output of xorshift32 (13, 17, 5) started from <seed>.

BACKING_FILE is the file behind the guest's ivshmem BAR 2. The check is
that every manifest range holds its pattern byte for byte, and that every
byte outside all manifest ranges is zero (the driver scrubs freed memory,
so nothing any other test staged may survive).

A line
    # svod-bar-sentinel: <bar2-size> <byte>
says the guest unbound a device for good (t_unbind_load, under load) and
filled its whole BAR 2 with <byte> right after the unbind returned. The
device's backing file is the other ivshmem*.bin next to BACKING_FILE whose
size is <bar2-size>; every byte of it must still be <byte> (nothing wrote
to the BAR after the unbind). Each such file next to BACKING_FILE needs its
sentinel line.

Every run first checks the verifier itself on files it makes (a clean set
passes; one wrong byte in the staged range, outside it, or in the sentinel
file each fails); --self-test does only that.

Prints `ok - ...` / `not ok - ...` lines; exits 1 if any failed, 2 on bad usage.
"""
import argparse
import glob
import os
import re
import sys
import tempfile

MANIFEST = re.compile(r"#\s*svod-manifest:\s*([0-9a-fA-Fx]+)\s+(\d+)\s+(\d+)\s*$")
SENTINEL = re.compile(r"#\s*svod-bar-sentinel:\s*(\d+)\s+(0x[0-9a-fA-F]+|\d+)\s*$")


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
    """(ranges, sentinels): [(offset, length, seed)], [(bar2 size, byte)]."""
    ranges, sentinels = [], []
    with open(log, errors="replace") as f:
        for line in f:
            m = MANIFEST.search(line.strip())
            if m:
                ranges.append((int(m.group(1), 16), int(m.group(2)), int(m.group(3))))
            m = SENTINEL.search(line.strip())
            if m:
                sentinels.append((int(m.group(1)), int(m.group(2), 0)))
    return ranges, sentinels


def first_nonzero(data, start, end):
    """Offset of the first nonzero byte of data[start:end], or None."""
    chunk = 1 << 20
    for pos in range(start, end, chunk):
        stop = min(end, pos + chunk)
        piece = data[pos:stop]
        if piece.count(0) != len(piece):
            return pos + next(i for i, b in enumerate(piece) if b)
    return None


def verify(log, backing, p):
    """The verdicts for LOG and BACKING_FILE: [(good, line)]."""
    out = []

    def verdict(good, name, why=""):
        out.append((good, f"{'ok' if good else 'not ok'} - {p}: {name}"
                    + (f" ({why})" if why and not good else "")))

    try:
        ranges, sentinels = read_manifest(log)
        with open(backing, "rb") as f:
            data = f.read()
    except OSError as e:
        verdict(False, "manifest and backing file readable", str(e))
        return out

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

    # The devices unbound for good: their whole backing file is the sentinel.
    here = os.path.dirname(os.path.abspath(backing))
    others = sorted(f for f in glob.glob(os.path.join(here, "ivshmem*.bin"))
                    if os.path.abspath(f) != os.path.abspath(backing))
    for path in others:
        name = os.path.basename(path)
        size = os.path.getsize(path)
        mine = [b for sz, b in sentinels if sz == size]
        what = f"{name}: every byte after the unbind is the sentinel"
        if not mine:
            verdict(False, what, f"no '# svod-bar-sentinel: {size} ...' line in the log")
            continue
        with open(path, "rb") as f:
            other = f.read()
        byte = mine[-1]
        wrong = len(other) - other.count(byte)
        if wrong:
            first = next(i for i, b in enumerate(other) if b != byte)
            verdict(False, f"{what} ({byte:#04x})",
                    f"{wrong} bytes differ, first at BAR2+{first:#x}: {other[first]:#04x}")
        else:
            verdict(True, f"{what} ({byte:#04x}, {size} bytes)")
    for size, byte in sentinels:
        if not any(os.path.getsize(f) == size for f in others):
            verdict(False, f"a backing file of {size} bytes for the sentinel {byte:#04x}",
                    "no ivshmem*.bin of that size next to the backing file")
    return out


def self_test(p):
    """The verifier on files it makes: clean passes, each corruption fails."""
    out = []
    seed, off, length, size, byte = 7, 0x1000, 64, 1 << 16, 0xA5
    with tempfile.TemporaryDirectory() as d:
        log = os.path.join(d, "harness.log")
        main_bin = os.path.join(d, "ivshmem.bin")
        other_bin = os.path.join(d, "ivshmem2.bin")
        with open(log, "w") as f:
            f.write(f"# svod-manifest: {off:x} {length} {seed}\n")
            f.write(f"# svod-bar-sentinel: {size // 2} {byte:#04x}\n")
        clean = bytearray(size)
        clean[off:off + length] = xorshift32_bytes(seed, length)

        def case(main_data, other_data):
            with open(main_bin, "wb") as f:
                f.write(main_data)
            with open(other_bin, "wb") as f:
                f.write(other_data)
            return all(good for good, _ in verify(log, main_bin, "t"))

        sentinel = bytes([byte]) * (size // 2)
        staged = bytearray(clean)
        staged[off + 3] ^= 1
        outside = bytearray(clean)
        outside[size - 1] = 1
        scribbled = bytearray(sentinel)
        scribbled[12345] = 0
        for good, what in [
                (case(bytes(clean), sentinel), "passes a clean set of files"),
                (not case(bytes(staged), sentinel), "fails on a wrong staged byte"),
                (not case(bytes(outside), sentinel), "fails on a nonzero byte outside the manifest"),
                (not case(bytes(clean), bytes(scribbled)), "fails on one byte of the sentinel file overwritten"),
                (not case(bytes(clean), sentinel[:-1] + b"\0"), "fails on the sentinel file's last byte zeroed")]:
            out.append((good, f"{'ok' if good else 'not ok'} - {p}: verify_bar self-test {what}"))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prefix", default="bar", help="name prefix of the verdicts")
    ap.add_argument("--self-test", action="store_true", help="only check the verifier")
    ap.add_argument("log", nargs="?")
    ap.add_argument("backing", nargs="?")
    a = ap.parse_args()
    if not a.self_test and (a.log is None or a.backing is None):
        ap.error("LOG and BACKING_FILE are needed")
    verdicts = self_test(a.prefix)
    if not a.self_test:
        verdicts += verify(a.log, a.backing, a.prefix)
    for _, line in verdicts:
        print(line)
    return 0 if all(good for good, _ in verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
