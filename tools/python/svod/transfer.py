# SPDX-License-Identifier: MIT OR GPL-2.0
"""Asynchronous transfers: what ``StorageAllocator.stage_async()`` and
``read_async()`` return.

A :class:`Transfer` is a future for one queued ``SVOD_IOCTL_STAGE`` or
``READ`` (``SVOD_XFER_ASYNC``): :meth:`done`, :meth:`result` (with a
timeout), :meth:`fileno` (the transfer's sync_file, readable once it has
ended: ``selectors``, ``select``, ``poll``) and ``await`` in asyncio (the
event loop watches the same descriptor, no thread). See
``Documentation/python.rst``.
"""
import ctypes
import errno
import fcntl
import os
import time

from . import _abi
from .errors import from_oserror


class _SyncFileInfo(ctypes.Structure):
    """``struct sync_file_info`` of ``<linux/sync_file.h>``."""
    _fields_ = [("name", ctypes.c_char * 32), ("status", ctypes.c_int32),
                ("flags", ctypes.c_uint32), ("num_fences", ctypes.c_uint32),
                ("pad", ctypes.c_uint32), ("sync_fence_info", ctypes.c_uint64)]


# _IOWR('>', 4, struct sync_file_info)
_SYNC_IOC_FILE_INFO = (3 << 30) | (ctypes.sizeof(_SyncFileInfo) << 16) | (ord(">") << 8) | 4


class Transfer:
    """One asynchronous transfer of an allocator's open file.

    The buffer it reads from (stage) or writes into (read) is kept alive
    until the transfer has ended: dropping the object waits for the end
    first, so memory Python reuses is never written by the device. Its
    descriptor is closed by :meth:`result` (once it succeeds or raises the
    transfer's error), by :meth:`close` or when the object goes. Until then
    it can be another transfer's in-fence (``stage_async(...,
    after=transfer)``, any allocator's), or be handed to another driver as
    a sync_file (:meth:`fileno`).
    """

    def __init__(self, fd, seqno, fence_fd, length, keep, out=None, what="transfer"):
        self._fd = fd
        self.seqno = seqno
        self._fence = fence_fd
        self.length = length
        self._keep = keep
        self._out = out
        self._what = what
        self._status = None
        self.done_bytes = None

    def fileno(self):
        """The transfer's sync_file descriptor: readable once it has ended
        (for ``selectors``/``select``/``poll``; ``ValueError`` after
        :meth:`close`)."""
        if self._fence < 0:
            raise ValueError("transfer closed")
        return self._fence

    def _wait(self, deadline_ns):
        """``True`` once ended (status recorded), ``False`` at the deadline."""
        if self._status is not None:
            return True
        w = _abi.Wait(seqno=self.seqno, deadline_ns=deadline_ns)
        try:
            _abi.ioctl(self._fd, _abi.IOCTL_WAIT, w)
        except OSError as err:
            if err.errno == errno.ETIME:
                return False
            if err.errno == errno.ENOENT and self._fence >= 0:
                return self._from_fence()
            raise from_oserror(err, f"wait for {self._what}") from None
        self._status, self.done_bytes = w.status, w.done
        return True

    def _from_fence(self):
        """Status from the sync_file when WAIT no longer keeps it."""
        info = _SyncFileInfo()
        fcntl.ioctl(self._fence, _SYNC_IOC_FILE_INFO, info, True)
        if info.status == 0:
            return False
        self._status = 0 if info.status == 1 else info.status
        self.done_bytes = self.length if info.status == 1 else None
        return True

    def done(self):
        """``True`` if the transfer has ended (successfully or not)."""
        return self._wait(0)

    def result(self, timeout=None):
        """Wait for the end (``timeout`` seconds; ``None`` for ever) and
        return ``None`` for a stage, the bytes for a read. Raises
        :class:`TimeoutError` if it has not ended in time, and the
        transfer's error if it failed (``OSError`` with ``ECANCELED`` when
        its allocation was freed, :class:`DeviceGoneError` when the device
        went away, ...)."""
        if timeout is None:
            deadline = 2**63 - 1
        else:
            deadline = time.clock_gettime_ns(time.CLOCK_MONOTONIC) + max(0, int(timeout * 1e9))
        while True:
            try:
                ended = self._wait(deadline)
                break
            except InterruptedError:
                continue
        if not ended:
            raise TimeoutError(f"{self._what} {self.seqno} has not ended")
        self.close()
        if self._status:
            err = OSError(-self._status, os.strerror(-self._status))
            raise from_oserror(err, f"{self._what} of {self.length} bytes "
                                    f"({self.done_bytes} moved)")
        return None if self._out is None else bytes(self._out)

    def close(self):
        """Close the descriptor (after the end: the buffer is released)."""
        if self._status is None:
            self._wait(2**63 - 1)
        if self._fence >= 0:
            os.close(self._fence)
            self._fence = -1
        self._keep = None

    def __await__(self):
        if not self.done():
            import asyncio
            loop = asyncio.get_running_loop()
            fut = loop.create_future()

            def ready():
                if not fut.done():
                    fut.set_result(None)
            loop.add_reader(self.fileno(), ready)
            try:
                yield from fut.__await__()
            finally:
                loop.remove_reader(self._fence)
        return self.result(timeout=0)

    def __del__(self):
        try:
            self.close()
        except Exception:   # noqa: BLE001 - nothing to report to at teardown
            pass

    def __repr__(self):
        state = "pending" if self._status is None else f"status {self._status}"
        return f"<svod.Transfer {self._what} seqno {self.seqno} {state}>"
