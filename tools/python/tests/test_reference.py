# SPDX-License-Identifier: MIT OR GPL-2.0
"""The reference allocator's behaviour, written out.

Every test runs against svod.StorageAllocator on /dev/svod and against the
reference class loaded from the seeds (conftest.py): passing on the
reference proves each expectation is the reference's, passing on svod that
the driver keeps it. The tier is the default "bar2" (base 0, align 64, no
reserved regions, capacity CAP) unless a test declares its own.
"""
import dataclasses
import os
import shutil
import subprocess

import pytest


class FakeDevice:
    """The reference's duck-typed device: records every write_dma."""

    def __init__(self):
        self.writes = []

    def write_dma(self, *, device_address, data):
        self.writes.append((device_address, bytes(data)))


def _exc(backend, name):
    return getattr(backend.mod, name)


def fields(h):
    return (h.id, h.generation, h.base, h.capacity)


def test_handle_is_a_frozen_dataclass(backend, shape):
    a = backend.make(**shape)
    h = a.allocate(100)
    assert [f.name for f in dataclasses.fields(h)] == [
        "id", "generation", "base", "capacity", "tier", "allocator"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        h.base = 0
    assert h == dataclasses.replace(h) and hash(h) == hash(dataclasses.replace(h))
    assert h.tier == "bar2" and a.tier == "bar2" and a.align == 64


def test_exceptions_are_runtime_errors(backend):
    assert issubclass(_exc(backend, "StaleHandleError"), RuntimeError)
    assert issubclass(_exc(backend, "StorageExhaustedError"), RuntimeError)


def test_placements_ids_generations(backend, shape):
    a = backend.make(**shape)
    ha = a.allocate(100)
    hb = a.allocate(64)
    hc = a.allocate(1)
    assert [fields(h) for h in (ha, hb, hc)] == [(0, 1, 0, 100), (1, 1, 128, 64), (2, 1, 192, 1)]
    a.free(hb)
    hd = a.allocate(10)        # first fit into b's hole; b's id at generation 2
    he = a.allocate(100)       # the rest of the hole is too small after aligning
    assert fields(hd) == (1, 2, 128, 10)
    assert fields(he) == (3, 1, 256, 100)
    a.free(ha)
    a.free(hd)                 # [0, 192) is free again, coalesced
    hf = a.allocate(200)       # too big for it: goes after e, takes the last freed id
    hg = a.allocate(192)       # fits [0, 192) exactly, takes a's id
    assert fields(hf) == (1, 3, 384, 200)
    assert fields(hg) == (0, 2, 0, 192)
    assert [a.resolve(h) for h in (hc, he, hf, hg)] == [192, 256, 384, 0]


def test_freed_space_coalesces(backend, shape):
    a = backend.make(**shape)
    h1, h2, h3 = (a.allocate(64) for _ in range(3))
    a.free(h2)
    a.free(h1)
    assert fields(a.allocate(128)) == (0, 2, 0, 128)
    assert a.resolve(h3) == 128


def test_stale_after_free(backend, shape):
    a = backend.make(**shape)
    stale = _exc(backend, "StaleHandleError")
    h = a.allocate(256)
    a.free(h)
    dev = FakeDevice()
    with pytest.raises(stale):
        a.resolve(h)
    with pytest.raises(stale):
        a.stage(dev, h, b"x")
    with pytest.raises(stale):
        a.free(h)              # double free
    assert dev.writes == []


def test_stale_after_reuse(backend, shape):
    a = backend.make(**shape)
    stale = _exc(backend, "StaleHandleError")
    old = a.allocate(256)
    a.free(old)
    new = a.allocate(256)
    assert (new.id, new.generation, new.base) == (old.id, old.generation + 1, old.base)
    with pytest.raises(stale):
        a.resolve(old)         # same id, same place: the generation refuses it
    with pytest.raises(stale):
        a.free(old)
    assert a.resolve(new) == old.base
    a.free(new)


def test_forged_handles(backend, shape):
    a = backend.make(**shape)
    stale = _exc(backend, "StaleHandleError")
    h = a.allocate(128)
    for forged in (dataclasses.replace(h, base=h.base + 64),
                   dataclasses.replace(h, capacity=h.capacity * 2),
                   dataclasses.replace(h, generation=h.generation + 1),
                   dataclasses.replace(h, id=h.id + 1),
                   dataclasses.replace(h, allocator=h.allocator + 1000)):
        with pytest.raises(stale):
            a.resolve(forged)
        with pytest.raises(stale):
            a.free(forged)
    assert a.resolve(h) == 0   # the genuine handle survived every attempt


def test_foreign_handle_from_second_allocator(backend, shape):
    a = backend.make(**shape)
    b = backend.make(**shape)
    stale = _exc(backend, "StaleHandleError")
    h = a.allocate(64)
    hb = b.allocate(64)
    assert h.allocator != hb.allocator
    dev = FakeDevice()
    with pytest.raises(stale):
        b.resolve(h)
    with pytest.raises(stale):
        b.stage(dev, h, b"x")
    with pytest.raises(stale):
        b.free(h)
    with pytest.raises(stale):
        a.free(hb)
    assert dev.writes == []
    assert a.resolve(h) == h.base
    a.free(h)
    b.free(hb)


def test_exhaustion_before_staging(backend, shape):
    cap = shape["capacity_bytes"]
    a = backend.make(**shape)
    exhausted = _exc(backend, "StorageExhaustedError")
    with pytest.raises(exhausted):
        a.allocate(cap + 1)
    whole = a.allocate(cap)
    assert fields(whole) == (0, 1, 0, cap)
    with pytest.raises(exhausted):
        a.allocate(1)
    a.free(whole)
    assert fields(a.allocate(1)) == (0, 2, 0, 1)


def test_stage_through_device(backend, shape):
    a = backend.make(**shape)
    a.allocate(64)
    h = a.allocate(100)
    dev = FakeDevice()
    a.stage(dev, h, b"abc")
    a.stage(dev, h, bytes(range(100)))     # exactly the grant
    assert dev.writes == [(64, b"abc"), (64, bytes(range(100)))]


def test_oversize_stage(backend, shape):
    a = backend.make(**shape)
    h = a.allocate(100)
    dev = FakeDevice()
    with pytest.raises(ValueError):
        a.stage(dev, h, bytes(101))
    # the live grant counts, not the handle's copy of it
    with pytest.raises(_exc(backend, "StaleHandleError")):
        a.stage(dev, dataclasses.replace(h, capacity=1000), bytes(101))
    assert dev.writes == []


@pytest.mark.parametrize("kwargs", [
    {"capacity_bytes": 0}, {"capacity_bytes": -64},
    {"align": 0}, {"align": -64}, {"align": 3}, {"align": 96},
    {"reserved": ((0, 0),)}, {"reserved": ((64, -1),)},
    {"reserved": (("CAP-64", 128),)}, {"base": 4096, "reserved": ((0, 64),)},
], ids=lambda k: ",".join(f"{n}={v}" for n, v in k.items()))
def test_constructor_value_errors(backend, shape, kwargs):
    args = dict(shape, **kwargs)
    if "reserved" in kwargs:
        args["reserved"] = tuple(
            (shape["capacity_bytes"] - 64 if b == "CAP-64" else b, s) for b, s in kwargs["reserved"])
    with pytest.raises(ValueError):
        backend.make(**args)


@pytest.mark.parametrize("nbytes", [0, -1, -4096])
def test_allocate_value_errors(backend, shape, nbytes):
    a = backend.make(**shape)
    with pytest.raises(ValueError):
        a.allocate(nbytes)
    assert fields(a.allocate(1)) == (0, 1, 0, 1)   # nothing was taken


# -- a tier with reserved regions -------------------------------------------

RESERVED_SHAPE = {"tier": "pyres", "capacity_bytes": 0x10000, "base": 0x100000, "align": 256,
                  "reserved": ((0x108000, 0x100), (0x100400, 0x400))}
RESERVED_DECL = ("pyres bar=2 offset=0 size=0x10000 base=0x100000 align=256 "
                 "reserved=0x100400+0x400,0x108000+0x100")


def _svodctl():
    return shutil.which("svodctl") or next(
        (p for p in ("/svod/bin/svodctl", os.path.join(os.path.dirname(__file__), "..", "..",
                                                        "harness", "bin", "svodctl"))
         if os.access(p, os.X_OK)), None)


@pytest.fixture
def reserved_tier(backend):
    """Declares RESERVED_SHAPE on the second device for the svod backend
    (restoring its declaration afterwards, or removing it from configfs if it
    had none); skips if declaring fails."""
    if backend.name != "svod":
        yield
        return
    import svod
    ctl = _svodctl()
    other = [t for t in svod.tiers() if t.name.startswith("bar2-") and not t.nr_live]
    if ctl is None or not other or os.geteuid() != 0:
        pytest.skip("needs root, svodctl and an idle second device")
    bdf = other[0].device
    # A device bound with its default tier has no declaration in configfs;
    # one left behind would keep svod.ko loaded (svodctl(1), undeclare).
    had_declaration = os.path.isdir(f"/sys/kernel/config/svod/{bdf}")
    saved = subprocess.run([ctl, "declare", bdf], capture_output=True, text=True)
    done = subprocess.run([ctl, "declare", bdf, RESERVED_DECL], capture_output=True, text=True)
    if saved.returncode or done.returncode:
        pytest.skip(f"svodctl declare failed: {done.stderr.strip() or saved.stderr.strip()}")
    try:
        yield
    finally:
        backend.close()        # a tier with live allocations cannot be replaced
        # `svodctl declare BDF` prints "BDF:" then the declaration lines
        restore = "; ".join(l.strip() for l in saved.stdout.splitlines()[1:] if l.strip())
        subprocess.run([ctl, "declare", bdf, restore], check=True)
        if not had_declaration:
            subprocess.run([ctl, "undeclare", bdf], check=True)


def test_reserved_regions_are_never_allocated(backend, reserved_tier):
    a = backend.make(**RESERVED_SHAPE)
    got = [(a.allocate(n).base, n) for n in (0x400, 0x100, 0x7000, 0x800)]
    assert got == [(0x100000, 0x400), (0x100800, 0x100), (0x100900, 0x7000), (0x108100, 0x800)]
    with pytest.raises(_exc(backend, "StorageExhaustedError")):
        a.allocate(0x8000)
