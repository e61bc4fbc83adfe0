# SPDX-License-Identifier: MIT OR GPL-2.0
"""svod's extras beyond the reference, on /dev/svod: staging through the
driver, read(), tiers(), binding to the declaration, close() and Ctrl-C."""
import errno
import mmap
import os

import pytest

import svod
from svod import _abi
from conftest import DEVICE, have_device, pattern

pytestmark = pytest.mark.skipif(not have_device(), reason=f"no {DEVICE}")


def test_stage_and_read_back(alloc):
    h = alloc.allocate(4096 + 3)
    assert alloc.read(h) == bytes(4096 + 3)         # new allocations read as zeros
    data = pattern(4096 + 3, 1)
    alloc.stage(None, h, data)
    assert alloc.read(h) == data
    alloc.stage(None, h, b"\xaa" * 5, offset=4096 - 2)
    assert alloc.read(h, 6, offset=4096 - 3) == data[4093:4094] + b"\xaa" * 5
    alloc.stage(None, h, bytearray(b"xyz"), engine="cpu")
    alloc.stage(None, h, memoryview(b"--abc--")[2:5], offset=3, engine="auto")
    assert alloc.read(h, 6, engine="cpu") == b"xyzabc"
    alloc.stage(None, h, b"")                         # length 0 is a no-op
    with pytest.raises(ValueError):
        alloc.stage(None, h, b"12", offset=4098)
    with pytest.raises(ValueError):
        alloc.read(h, 2, offset=4098)
    with pytest.raises(ValueError):
        alloc.stage(None, h, b"1", engine="gpu")


def test_dma_engine_or_eopnotsupp(alloc):
    h = alloc.allocate(1 << 17)
    data = pattern(1 << 17, 3)
    try:
        alloc.stage(None, h, data, engine="dma")
    except OSError as err:
        assert err.errno == errno.EOPNOTSUPP         # no DMA_MEMCPY channel here
        return
    assert alloc.read(h, engine="dma") == data


def test_staged_bytes_land_in_the_bar(alloc):
    """Independent of READ: the bytes are in BAR 2, seen through sysfs."""
    tier = next(t for t in alloc.tiers() if t.name == "bar2")
    res = f"/sys/bus/pci/devices/{tier.device}/resource2"
    if not os.path.exists(res):
        pytest.skip(f"no {res}")
    h = alloc.allocate(8192)
    data = pattern(8192, 9)
    alloc.stage(None, h, data)
    fd = os.open(res, os.O_RDONLY | os.O_SYNC)
    try:
        with mmap.mmap(fd, tier.capacity, mmap.MAP_SHARED, mmap.PROT_READ) as m:
            off = h.base - tier.base
            assert m[off:off + 8192] == data
    finally:
        os.close(fd)


def test_tiers_and_live_counts(alloc, shape):
    t = {t.name: t for t in svod.tiers(DEVICE)}["bar2"]
    assert (t.capacity, t.base, t.align, t.reserved, t.gone) == (
        shape["capacity_bytes"], shape["base"], shape["align"], (), False)
    before = t.nr_live
    h = alloc.allocate(1000)
    after = {t.name: t for t in alloc.tiers()}["bar2"]
    assert after.nr_live == before + 1
    assert after.free_bytes == t.free_bytes - 1000
    alloc.free(h)


def test_binding_names_the_declaration(shape):
    with pytest.raises(ValueError, match=r"declared as capacity_bytes=0x[0-9a-f]+, base=0x0, "
                                         r"reserved=\(\), align=64"):
        svod.StorageAllocator(path=DEVICE, **dict(shape, capacity_bytes=shape["capacity_bytes"] // 2))
    with pytest.raises(ValueError, match="declared as"):
        svod.StorageAllocator(path=DEVICE, **dict(shape, align=128))
    with pytest.raises(ValueError, match="declared as"):
        svod.StorageAllocator(path=DEVICE, **dict(shape, reserved=((0, 64),)))
    with pytest.raises(ValueError, match="no tier named 'nosuchtier'"):
        svod.StorageAllocator(path=DEVICE, **dict(shape, tier="nosuchtier"))


def test_ids_are_what_alloc_reports(alloc):
    """StorageHandle.id/.generation are ALLOC's id and generation fields:
    a freed id comes back first, one generation on."""
    req = _abi.Alloc(tier=alloc._tier_id, size=64)
    _abi.ioctl(alloc.fileno(), _abi.IOCTL_ALLOC, req)
    _abi.ioctl(alloc.fileno(), _abi.IOCTL_FREE, _abi.Free(handle=req.handle))
    h = alloc.allocate(64)
    assert (h.id, h.generation) == (req.id, req.generation + 1)
    assert req.generation >= 1
    alloc.free(h)


def test_close_frees_everything(shape):
    a = svod.StorageAllocator(path=DEVICE, **shape)
    live0 = {t.name: t for t in a.tiers()}["bar2"].nr_live
    h = a.allocate(4096)
    a.close()
    a.close()                                           # idempotent
    assert a.closed
    with pytest.raises(ValueError):
        a.resolve(h)
    assert {t.name: t for t in svod.tiers(DEVICE)}["bar2"].nr_live == live0
    with svod.StorageAllocator(path=DEVICE, **shape) as b:
        h2 = b.allocate(4096)
        assert h2.base == h.base                        # the space came back
    assert b.closed


def test_ctrl_c_reports_partial_count(alloc, monkeypatch):
    """SIGINT between chunks: the driver returns EINTR with done, Python's
    handler raises KeyboardInterrupt inside fcntl.ioctl; the binding turns it
    into TransferInterrupted with the partial count (driver side simulated:
    see Documentation/python.rst)."""
    h = alloc.allocate(3 << 20)
    real = _abi.ioctl

    def interrupted(fd, request, arg):
        if request == _abi.IOCTL_STAGE:
            arg.length = 1 << 20                 # the driver moves one chunk
            real(fd, request, arg)
            raise KeyboardInterrupt
        return real(fd, request, arg)

    monkeypatch.setattr(_abi, "ioctl", interrupted)
    with pytest.raises(KeyboardInterrupt) as info:
        alloc.stage(None, h, pattern(3 << 20, 5))
    assert isinstance(info.value, svod.TransferInterrupted)
    assert (info.value.done, info.value.length) == (1 << 20, 3 << 20)
    monkeypatch.setattr(_abi, "ioctl", real)
    assert alloc.read(h, 1 << 20) == pattern(3 << 20, 5)[:1 << 20]
    assert alloc.read(h, 16, offset=1 << 20) == bytes(16)


def test_other_signal_resumes(alloc, monkeypatch):
    """EINTR whose handler returned (no exception): the driver recorded in
    ``resume`` how far it got, and the binding issues the same request
    again, which goes on from there and completes."""
    h = alloc.allocate(3 << 20)
    real = _abi.ioctl
    calls = []

    def eintr_once(fd, request, arg):
        if request != _abi.IOCTL_STAGE:
            return real(fd, request, arg)
        calls.append((arg.offset, arg.length, arg.resume))
        if len(calls) == 1:
            arg.length = 1 << 20                 # the driver moves one chunk
            real(fd, request, arg)
            arg.length = 3 << 20
            arg.resume = arg.done                # and records where it stopped
            raise InterruptedError(errno.EINTR, "Interrupted system call")
        return real(fd, request, arg)

    monkeypatch.setattr(_abi, "ioctl", eintr_once)
    data = pattern(3 << 20, 6)
    alloc.stage(None, h, data)
    monkeypatch.setattr(_abi, "ioctl", real)
    assert calls == [(0, 3 << 20, 0), (0, 3 << 20, 1 << 20)]   # the same request, resumed
    assert alloc.read(h) == data


def test_real_sigint_stops_within_a_chunk(alloc):
    """A real SIGINT while a 16 MiB stage runs stops it within the chunk in
    flight: the work is counted in chunks, not seconds. A thread watches the
    allocation through a mapping, sends SIGINT to the main thread once the
    first 1 MiB chunk is in place, then counts the chunks in place. The
    driver stops before the next chunk, so ``done`` is at most one chunk
    past that count, the bytes before ``done`` are in place and none after."""
    import signal
    import threading
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        pytest.skip("SIGINT does not raise KeyboardInterrupt here")
    chunk, length = 1 << 20, 16 << 20
    h = alloc.allocate(length, mappable=True)
    data = pattern(length, 11)
    view = alloc.map(h)
    landed = []

    def chunks_in_place():
        n = 0
        while n < length // chunk and view[(n + 1) * chunk - 1] == data[(n + 1) * chunk - 1]:
            n += 1
        return n

    def watch():
        while chunks_in_place() == 0:
            pass
        signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
        landed.append(chunks_in_place())

    def attempt():
        """The TransferInterrupted, or None if the stage ended first (the
        SIGINT then lands after it, as a KeyboardInterrupt, while the
        watcher is joined)."""
        alloc.stage(None, h, bytes(length), engine="cpu")
        landed.clear()
        watcher = threading.Thread(target=watch)
        try:
            try:
                watcher.start()
                alloc.stage(None, h, data, engine="cpu")
            finally:
                watcher.join()
        except svod.TransferInterrupted as exc:
            return exc
        except KeyboardInterrupt:
            pass
        return None

    try:
        # A loaded host may let the whole stage finish before the watcher
        # runs: that attempt proves nothing and is made again.
        for _ in range(5):
            exc = attempt()
            if exc is not None:
                break
        assert exc is not None, "the stage finished before SIGINT, five times"
        assert exc.length == length and exc.done % chunk == 0
        assert exc.done <= (landed[0] + 1) * chunk < length, (exc.done, landed)
        assert alloc.read(h, exc.done) == data[:exc.done]
        assert alloc.read(h, length - exc.done, exc.done) == bytes(length - exc.done)
    finally:
        mapping = view.obj
        view.release()
        mapping.close()


def test_map_gives_a_memoryview_of_the_allocation(alloc):
    page = mmap.PAGESIZE
    h = alloc.allocate(page + 1, mappable=True)
    assert h.capacity == 2 * page
    view = alloc.map(h)
    assert len(view) == 2 * page and not view.readonly
    assert bytes(view[:16]) == bytes(16)              # a new allocation reads as zeros
    data = pattern(2 * page, 5)
    view[:] = data                                    # stores through the mapping
    assert alloc.read(h) == data
    alloc.stage(None, h, b"\x11" * 8, offset=page - 4)
    assert bytes(view[page - 4:page + 4]) == b"\x11" * 8
    mapping = view.obj
    view.release()
    mapping.close()
    alloc.free(h)
    with pytest.raises(svod.StaleHandleError):
        alloc.map(h)


def test_map_refuses_an_allocation_that_is_not_whole_pages(alloc):
    h = alloc.allocate(100)
    with pytest.raises(OSError) as err:
        alloc.map(h)
    assert err.value.errno == errno.EOPNOTSUPP
    alloc.free(h)
