#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR GPL-2.0
"""make demo's Python session: the reference allocator's API on /dev/svod.

Prints each statement and its result like an interactive session; exits 1
if a result is not the expected one.
"""
import sys

import svod
from svod import StaleHandleError, StorageAllocator, StorageExhaustedError

failed = 0


def show(src, env, expect=None, raises=None):
    """Run ``src`` in ``env``, print it and its outcome, check it."""
    global failed
    print(f">>> {src}")
    try:
        if "=" in src.split("(")[0]:
            exec(src, env)
            return None
        value = eval(src, env)
    except Exception as exc:  # the demo shows exceptions as Python would
        print(f"{type(exc).__name__}: {exc}")
        if raises is None or not isinstance(exc, raises):
            failed += 1
            print("    (unexpected)")
        return None
    if value is not None:
        print(repr(value))
    if raises is not None or (expect is not None and value != expect):
        failed += 1
        print("    (unexpected)")
    return value


def main():
    """The session."""
    env = {"svod": svod, "StorageAllocator": StorageAllocator}
    tier = next(t for t in svod.tiers() if t.name == "bar2")
    env["CAP"] = tier.capacity
    print("# the reference's class, backed by /dev/svod: only the import changes")
    print(">>> from svod import StorageAllocator, StaleHandleError, StorageExhaustedError")
    show("[(t.name, hex(t.capacity), t.align) for t in svod.tiers()]", env)
    show("alloc = StorageAllocator(tier='bar2', capacity_bytes=CAP, base=0, align=64)", env)
    show("a = alloc.allocate(100)", env)
    show("a", env)
    show("b = alloc.allocate(4096)", env)
    show("alloc.resolve(b)", env, expect=128)
    show("alloc.stage(None, b, b'hello from python')", env)
    show("alloc.read(b, 17)", env, expect=b"hello from python")
    show("alloc.free(a)", env)
    show("alloc.resolve(a)", env, raises=StaleHandleError)
    show("a2 = alloc.allocate(64)", env)
    show("(a2.id, a2.generation, a2.base)", env, expect=(0, 2, 0))
    show("alloc.allocate(CAP)", env, raises=StorageExhaustedError)
    show("svod.plan([('alloc', 1, 1000), ('alloc', 2, 300), ('free', 1), ('alloc', 3, 500)], 1 << 20).offsets",
         env, expect=[0, 1000, None, 0])
    show("alloc.close()", env)
    print(f"# python session: {'all as expected' if not failed else f'{failed} unexpected'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
