# SPDX-License-Identifier: MIT OR GPL-2.0
"""Sharing from Python, on /dev/svod: handle.export() gives a DmaBuf,
StorageAllocator.import_fd() a handle of the importer's own, also in another
process that received the fd over a Unix socket."""
import errno
import os
import socket

import pytest

import svod
from conftest import DEVICE, have_device, pattern

pytestmark = pytest.mark.skipif(not have_device(), reason=f"no {DEVICE}")

KIB = 1 << 10


@pytest.fixture
def other(shape):
    """A second allocator: another open file, its own handle table."""
    with svod.StorageAllocator(path=DEVICE, **shape) as b:
        yield b


def test_import_reads_what_the_owner_staged_and_stages_back(alloc, other):
    h = alloc.allocate(64 * KIB, mappable=True)
    alloc.stage(None, h, pattern(64 * KIB, 1))
    with h.export() as buf:
        assert buf.size == 64 * KIB and buf.writable
        mine = other.import_fd(buf)
    assert (mine.base, mine.capacity) == (h.base, h.capacity)
    assert other.resolve(mine) == h.base
    assert other.read(mine) == pattern(64 * KIB, 1)
    other.stage(None, mine, b"back", offset=100)
    assert alloc.read(h, 4, offset=100) == b"back"
    with pytest.raises(svod.StaleHandleError):
        alloc.resolve(mine)                     # names nothing in the owner's file


def test_read_only_export_refuses_stage_and_writable_map(alloc, other):
    h = alloc.allocate(16 * KIB, mappable=True)
    alloc.stage(None, h, pattern(16 * KIB, 2))
    buf = alloc.export(h, writable=False)
    ro = other.import_fd(buf.fileno())
    assert other.read(ro, 16) == pattern(16, 2)
    with pytest.raises(PermissionError):
        other.stage(None, ro, b"x")
    with pytest.raises(PermissionError):
        other.export(ro)                        # read-write from read-only
    view = buf.map()
    assert view.readonly and bytes(view[:16]) == pattern(16, 2)
    view.release()
    buf.close()
    assert alloc.read(h, 16) == pattern(16, 2)


def test_free_is_deferred_while_shared(alloc, other):
    h = alloc.allocate(8 * KIB, mappable=True)
    alloc.stage(None, h, pattern(8 * KIB, 3))
    with h.export() as buf:
        mine = other.import_fd(buf)
    alloc.free(h)
    with pytest.raises(svod.StaleHandleError):
        alloc.read(h)
    assert other.read(mine) == pattern(8 * KIB, 3)  # the memory stayed
    other.free(mine)
    with pytest.raises(svod.StaleHandleError):
        other.free(mine)


def test_import_errors(alloc):
    with pytest.raises(OSError) as err:
        alloc.import_fd(10**6)
    assert err.value.errno == errno.EBADF
    r, w = os.pipe()
    try:
        with pytest.raises(ValueError):
            alloc.import_fd(r)                  # not a dma-buf: EINVAL
    finally:
        os.close(r)
        os.close(w)
    h = alloc.allocate(100)                     # not whole pages
    with pytest.raises(OSError) as err:
        alloc.export(h)
    assert err.value.errno == errno.EOPNOTSUPP


def test_another_process_imports_over_a_unix_socket(alloc, shape):
    h = alloc.allocate(32 * KIB, mappable=True)
    alloc.stage(None, h, pattern(32 * KIB, 4))
    parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    pid = os.fork()
    if pid == 0:                                # the receiver
        status = 1
        try:
            parent.close()
            _, fds, _, _ = socket.recv_fds(child, 1, 1)
            with svod.StorageAllocator(path=DEVICE, **shape) as b:
                mine = b.import_fd(fds[0])
                os.close(fds[0])
                if b.read(mine) == pattern(32 * KIB, 4):
                    b.stage(None, mine, b"from the child")
                    status = 0
        finally:
            os._exit(status)
    child.close()
    with h.export() as buf:
        socket.send_fds(parent, [b"x"], [buf.fileno()])
    _, status = os.waitpid(pid, 0)
    parent.close()
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    assert alloc.read(h, 14) == b"from the child"
