# SPDX-License-Identifier: MIT OR GPL-2.0
"""dma-buf file descriptors of svod allocations (``SVOD_IOCTL_EXPORT``).

A :class:`DmaBuf` owns one dma-buf fd: pass it to another process
(``socket.send_fds``, inheritance), import it there with
:meth:`svod.StorageAllocator.import_fd`, map it, close it. Holding it keeps
the allocation's memory alive (``Documentation/uapi.rst``, "Sharing").
"""
import mmap
import os


class DmaBuf:
    """One dma-buf fd of an svod allocation: ``size`` bytes, ``writable`` or
    read-only. Closed by :meth:`close`, ``with``, or when collected."""

    def __init__(self, fd, size, writable):
        self._fd = fd
        self.size = size
        self.writable = writable

    def fileno(self):
        """The fd, for ``socket.send_fds`` and ``select``."""
        if self._fd is None:
            raise ValueError("operation on a closed DmaBuf")
        return self._fd

    def detach(self):
        """Give up the fd without closing it; the caller owns it."""
        fd, self._fd = self.fileno(), None
        return fd

    def map(self):
        """A ``memoryview`` of the whole buffer (``mmap`` of the dma-buf,
        write-combined), writable only if the dma-buf is."""
        prot = mmap.PROT_READ | (mmap.PROT_WRITE if self.writable else 0)
        return memoryview(mmap.mmap(self.fileno(), self.size, flags=mmap.MAP_SHARED, prot=prot))

    @property
    def closed(self):
        """True once :meth:`close` or :meth:`detach` ran."""
        return self._fd is None

    def close(self):
        """Close the fd; calling again is a no-op."""
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if getattr(self, "_fd", None) is not None:
            self.close()

    def __repr__(self):
        state = "closed" if self.closed else f"fd={self._fd}"
        mode = "rw" if self.writable else "ro"
        return f"<svod.DmaBuf {self.size} bytes {mode} {state}>"
