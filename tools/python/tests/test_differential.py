# SPDX-License-Identifier: MIT OR GPL-2.0
"""The reference class and svod.StorageAllocator side by side: the same
random program against both, every result compared (handles field for
field, or the exception's type). Needs /dev/svod and the seeds: in the
guest, tools/rig/python-files.sh brings the seed along when the host has
it. Replay a failure with SVOD_SEED=<seed>."""
import dataclasses
import os
import random

import pytest

import reference
import svod
from conftest import DEVICE, have_device

_REF = reference.load_storage_reference()

pytestmark = pytest.mark.skipif(not have_device() or _REF is None,
                                reason="needs /dev/svod and the reference seeds")


def outcome(fn, *args):
    """What a call did, comparable across the two implementations."""
    try:
        r = fn(*args)
    except (ValueError, RuntimeError) as exc:
        for name in ("StaleHandleError", "StorageExhaustedError"):
            if isinstance(exc, getattr(svod, name)) or isinstance(exc, getattr(_REF, name)):
                return name
        return type(exc).__name__
    if dataclasses.is_dataclass(r):
        return (r.id, r.generation, r.base, r.capacity, r.tier)
    return r


@pytest.mark.parametrize("round_", range(3))
def test_same_program_same_results(shape, round_):
    seed = int(os.environ.get("SVOD_SEED", "0"), 0) or random.SystemRandom().getrandbits(32)
    rng = random.Random(seed + round_)
    cap = shape["capacity_bytes"]
    if {t.name: t for t in svod.tiers(DEVICE)}["bar2"].nr_live:
        pytest.skip("the default tier is in use")
    ours = svod.StorageAllocator(path=DEVICE, **shape)
    ref = _REF.StorageAllocator(**shape)
    live, dead = [], []          # pairs (ours, ref) of handles
    try:
        for step in range(250):
            op = rng.random()
            if op < 0.5 or not live:
                n = rng.choice([1, 63, 64, 65, 4096, rng.randrange(1, 1 << 16),
                                rng.randrange(1, cap // 4), cap, cap + 1, 0])
                a, b = outcome(ours.allocate, n), outcome(ref.allocate, n)
                assert a == b, f"seed {seed + round_} step {step}: allocate({n})"
                if isinstance(a, tuple):
                    live.append((ours_handle(ours, a), ref_handle(ref, b)))
            elif op < 0.85:
                pair = live.pop(rng.randrange(len(live)))
                assert outcome(ours.free, pair[0]) == outcome(ref.free, pair[1]) is None, \
                    f"seed {seed + round_} step {step}: free"
                dead.append(pair)
            else:
                pair = rng.choice(dead or live)
                assert outcome(ours.resolve, pair[0]) == outcome(ref.resolve, pair[1]), \
                    f"seed {seed + round_} step {step}: resolve"
    finally:
        ours.close()


def ours_handle(alloc, t):
    return svod.StorageHandle(*t, allocator=alloc._token)


def ref_handle(alloc, t):
    return _REF.StorageHandle(*t, allocator=alloc._token)
