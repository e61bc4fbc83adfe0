# SPDX-License-Identifier: MIT OR GPL-2.0
"""Stage patterned ranges through svod's Python API and keep them until power-off.

Run in the guest by ``t_python --manifest`` after the unload test, on the
first device's first tier (the device whose BAR 2 backing file the host
checks). For each range it prints::

    # svod-manifest: <bar2-offset-hex> <length> <seed>

and ``tools/testing/verify_bar.py`` checks on the host, after the guest
powered off, that the ivshmem backing file holds exactly those bytes: the
Python binding's STAGE put them in the real BAR at the granted address. A
child process keeps the allocator's open file (so the allocations) until
power-off; the parent leaves with ``os._exit`` so that nothing frees them.
"""
import os
import signal
import sys

import svod

SYSFS_DEVICES = "/sys/bus/pci/devices"

# (length, engine, seed): odd lengths, both engines where there is DMA.
RANGES = ((3, "cpu", 0x5eed0001), (4099, "cpu", 0x5eed0002),
          (70001, None, 0x5eed0003), (513, "dma", 0x5eed0004))


def xorshift32_bytes(seed, length):
    """verify_bar.py's pattern: byte i is xorshift32's (i+1)th output."""
    out = bytearray(length)
    x = seed & 0xFFFFFFFF
    for i in range(length):
        x ^= (x << 13) & 0xFFFFFFFF
        x ^= x >> 17
        x ^= (x << 5) & 0xFFFFFFFF
        out[i] = x & 0xFF
    return bytes(out)


def bar2_offset(tier, addr):
    """BAR 2 offset of device address ``addr`` of ``tier`` (as it is live)."""
    d = f"{SYSFS_DEVICES}/{tier.device}/svod/tier{tier.id}"
    with open(f"{d}/bar") as f:
        bar = int(f.read(), 0)
    with open(f"{d}/bar_offset") as f:
        offset = int(f.read(), 0)
    if bar != 2:
        raise ValueError(f"tier {tier.name} lies in BAR {bar}, not BAR 2")
    return offset + (addr - tier.base)


def first_tier():
    """The first present tier of the first device, in PCI address order."""
    live = [t for t in svod.tiers() if not t.gone]
    if not live:
        raise RuntimeError("no tier is declared")
    return min(live, key=lambda t: (t.device, t.id))


def main():
    tier = first_tier()
    alloc = svod.StorageAllocator(tier=tier.name, capacity_bytes=tier.capacity,
                                  base=tier.base, reserved=tier.reserved,
                                  align=tier.align)
    lines = []
    for length, engine, seed in RANGES:
        handle = alloc.allocate(length)
        try:
            alloc.stage(None, handle, xorshift32_bytes(seed, length), engine=engine)
        except OSError as e:
            if engine != "dma":
                raise
            print(f"# keeper.py: no DMA ({e}); range staged by the CPU")
            alloc.stage(None, handle, xorshift32_bytes(seed, length), engine="cpu")
        lines.append(f"# svod-manifest: {bar2_offset(tier, handle.base):x} {length} {seed}")
    print("\n".join(lines), flush=True)
    if os.fork() == 0:
        os.setsid()
        while True:
            signal.pause()
    os._exit(0)


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # the verdict is verify_bar.py's: say why here
        print(f"# keeper.py: failed: {e!r}", flush=True)
        sys.exit(1)
