# SPDX-License-Identifier: MIT OR GPL-2.0
"""svod's exceptions and the errno -> exception mapping.

The two exceptions of the reference allocator keep their names and bases
(``RuntimeError``); svod adds subclasses for what a kernel driver can say
and a pure-Python allocator cannot.

========================= ===============================================
errno                     exception
========================= ===============================================
ESTALE                    :class:`StaleHandleError`
ENOSPC                    :class:`StorageExhaustedError`
EDQUOT, EMFILE            :class:`QuotaError` (a StorageExhaustedError)
EINVAL, ERANGE            :class:`ValueError`
ENODEV, ENOENT            :class:`DeviceGoneError`
EINTR (STAGE/READ)        :class:`TransferInterrupted` (a KeyboardInterrupt)
anything else             :class:`OSError` with that errno
========================= ===============================================
"""
import errno
import os


class StaleHandleError(RuntimeError):
    """A handle whose allocation was freed (or never existed) was used:
    freed, double-freed, forged, or issued by another allocator."""


class StorageExhaustedError(RuntimeError):
    """The tier cannot hold the requested allocation."""


class QuotaError(StorageExhaustedError):
    """This open file reached a per-file limit of the driver (``EDQUOT``:
    the ``max_bytes`` module parameter; ``EMFILE``: ``max_handles``), even
    though the tier may have room."""


class DeviceGoneError(RuntimeError):
    """The tier's device was removed (``ENODEV``) or the tier is no longer
    declared (``ENOENT``). Freeing handles still works."""


class TransferInterrupted(KeyboardInterrupt):
    """A STAGE or READ was interrupted by Ctrl-C (SIGINT) between two chunks.

    ``done`` is the number of bytes moved before the interruption (whole
    chunks from the start of the transfer); ``length`` the bytes asked for.
    """

    def __init__(self, done, length):
        super().__init__(f"transfer interrupted after {done} of {length} bytes")
        self.done = done
        self.length = length


def from_oserror(err, what):
    """The svod exception for ``err`` (an :class:`OSError` from an ioctl),
    with ``what`` (the operation) in its message and ``errno`` set."""
    code = err.errno
    msg = f"{what}: {os.strerror(code)}" if code else f"{what}: {err}"
    if code == errno.ESTALE:
        exc = StaleHandleError(msg)
    elif code in (errno.EDQUOT, errno.EMFILE):
        exc = QuotaError(msg)
    elif code == errno.ENOSPC:
        exc = StorageExhaustedError(msg)
    elif code in (errno.EINVAL, errno.ERANGE):
        exc = ValueError(msg)
    elif code in (errno.ENODEV, errno.ENOENT):
        exc = DeviceGoneError(msg)
    else:
        return OSError(code, msg)
    exc.errno = code
    return exc
