# SPDX-License-Identifier: MIT OR GPL-2.0
"""Asynchronous staging from Python, on /dev/svod: stage_async() and
read_async() return a Transfer that works as a future, with selectors and
with asyncio."""
import asyncio
import errno
import os
import selectors

import pytest

from conftest import DEVICE, have_device, pattern

pytestmark = pytest.mark.skipif(not have_device(), reason=f"no {DEVICE}")

MIB = 1 << 20


def test_stage_async_result_and_read_async(alloc):
    h = alloc.allocate(2 * MIB)
    data = pattern(2 * MIB, 5)
    t = alloc.stage_async(h, data)
    assert t.seqno == 1 and t.fileno() >= 0
    assert t.result(timeout=60) is None
    assert t.done() and t.done_bytes == 2 * MIB
    r = alloc.read_async(h, MIB, offset=MIB)
    assert r.seqno == 2
    assert r.result() == data[MIB:]
    with pytest.raises(ValueError):
        r.fileno()                                      # closed by result()
    with pytest.raises(ValueError):
        alloc.stage_async(h, b"x", offset=2 * MIB)
    with pytest.raises(ValueError):
        alloc.stage_async(h, b"x", engine="gpu")


def test_selectors_sees_the_end(alloc):
    h = alloc.allocate(4 * MIB)
    ts = [alloc.stage_async(h, pattern(4 * MIB, k)) for k in range(3)]
    sel = selectors.DefaultSelector()
    for t in ts:
        sel.register(t, selectors.EVENT_READ)
    pending = set(ts)
    while pending:
        for key, _ in sel.select(timeout=60):
            sel.unregister(key.fileobj)
            assert key.fileobj.done()
            pending.discard(key.fileobj)
    sel.close()
    for t in ts:
        t.result(timeout=0)
    assert alloc.read(h) == pattern(4 * MIB, 2)       # in submission order


def test_asyncio_await(alloc):
    h = alloc.allocate(4 * MIB)

    async def main():
        await alloc.stage_async(h, pattern(4 * MIB, 9))
        halves = await asyncio.gather(alloc.read_async(h, 2 * MIB),
                                      alloc.read_async(h, 2 * MIB, offset=2 * MIB))
        return b"".join(halves)

    assert asyncio.run(main()) == pattern(4 * MIB, 9)


def test_free_cancels_what_is_queued(alloc):
    h = alloc.allocate(16 * MIB)
    data = pattern(16 * MIB, 1)
    ts = [alloc.stage_async(h, data) for _ in range(4)]
    alloc.free(h)
    outcomes = []
    for t in ts:
        try:
            t.result(timeout=60)
            outcomes.append(0)
        except OSError as err:
            outcomes.append(err.errno)
    assert outcomes[-1] == errno.ECANCELED               # 48 MiB ahead of it
    assert set(outcomes) <= {0, errno.ECANCELED}


def test_dropping_a_transfer_waits_for_it(alloc):
    h = alloc.allocate(8 * MIB)
    t = alloc.read_async(h)
    fd = t.fileno()
    del t                                               # waits, then closes
    with pytest.raises(OSError):
        os.fstat(fd)


def test_after_another_allocators_transfer(alloc, shape):
    """A read of another open file waits for this file's stage (in-fence)."""
    import svod
    h = alloc.allocate(32 * MIB, mappable=True)
    data = pattern(32 * MIB, 3)
    with svod.StorageAllocator(path=DEVICE, **shape) as other:
        with alloc.export(h) as dmabuf:
            h2 = other.import_fd(dmabuf)
        t = alloc.stage_async(h, data)
        r = other.read_async(h2, MIB, offset=31 * MIB, after=t)
        assert r.result(timeout=60) == data[31 * MIB:]
        assert t.done()
        other.free(h2)


def test_after_a_failed_transfer_fails_alike(alloc):
    h = alloc.allocate(16 * MIB)
    y = alloc.allocate(MIB)
    data, small = pattern(16 * MIB, 1), pattern(MIB, 2)
    ahead = [alloc.stage_async(h, data) for _ in range(3)]
    cancelled = alloc.stage_async(y, small)
    alloc.free(y)                                       # 48 MiB ahead: ECANCELED
    z = alloc.allocate(MIB)
    t = alloc.stage_async(z, pattern(MIB, 4), after=cancelled)
    with pytest.raises(OSError) as exc:
        t.result(timeout=60)
    assert exc.value.errno == errno.ECANCELED
    assert alloc.read(z) == bytes(MIB)                  # no byte moved
    for a in ahead:
        a.result(timeout=60)


def test_after_refuses_bad_fences(alloc):
    h = alloc.allocate(MIB)
    r, w = os.pipe()
    try:
        with pytest.raises(ValueError) as exc:          # EINVAL: not a sync_file
            alloc.stage_async(h, b"x", after=r)
        assert exc.value.errno == errno.EINVAL
    finally:
        os.close(r)
        os.close(w)
    with pytest.raises(OSError) as exc:
        alloc.stage_async(h, b"x", after=r)             # closed now
    assert exc.value.errno == errno.EBADF
    t = alloc.stage_async(h, b"y")
    t.result(timeout=60)
    with pytest.raises(ValueError):
        alloc.stage_async(h, b"x", after=t)             # its fence fd is closed
    with pytest.raises(ValueError):
        alloc.stage_async(h, b"x", after=-1)
