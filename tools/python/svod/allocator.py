# SPDX-License-Identifier: MIT OR GPL-2.0
"""The reference's ``StorageAllocator`` API, backed by ``/dev/svod``.

Same names, fields, exceptions and checks as the reference class
(``seeds/003_ca670d13f12a9aba.txt``); the allocation itself, the handle
table and the generation checks are the driver's. A program written against
the reference runs unchanged with ``from svod import ...``.
"""
import ctypes
import errno
import mmap
import os
import weakref
from dataclasses import dataclass
from itertools import count

from . import _abi
from .device import DEFAULT_PATH, open_device, query_tiers
from .errors import (DeviceGoneError, StaleHandleError, StorageExhaustedError,
                     TransferInterrupted, from_oserror)
from .sharing import DmaBuf
from .transfer import Transfer

# One token per allocator for the life of the process, as in the reference:
# the id() of a discarded object can be reused and would let a stale handle
# match.
_ALLOCATOR_TOKENS = count(1)

# token -> the allocator still alive with it (StorageHandle.export()).
_ALLOCATORS = weakref.WeakValueDictionary()

_ENGINES = {None: 0, "auto": 0, "cpu": _abi.XFER_CPU, "dma": _abi.XFER_DMA}


@dataclass(frozen=True)
class StorageHandle:
    """One allocation: identity plus placement.

    ``id`` and ``generation`` are the slot and generation the driver
    reported for its handle (``struct svod_alloc``, see
    ``Documentation/uapi.rst``): ids start at 0, the most recently freed id
    is reused first, and each reuse increments the generation, starting at
    1. The driver's ``__u64`` handle itself is opaque; the allocator keeps
    it for each live ``(id, generation)``. ``base`` is the device address, ``capacity`` the bytes granted,
    ``tier`` the tier's name and ``allocator`` the issuing allocator's
    token. Every operation checks the handle against the driver's live
    record, never trusting the handle's own copy of base/capacity.
    """
    id: int
    generation: int
    base: int
    capacity: int
    tier: str
    allocator: int

    def export(self, *, writable=True):
        """A :class:`svod.DmaBuf` of this handle's allocation: see
        :meth:`StorageAllocator.export`."""
        allocator = _ALLOCATORS.get(self.allocator)
        if allocator is None:
            raise StaleHandleError(f"handle {self.id} generation {self.generation}: "
                                   f"its allocator is gone")
        return allocator.export(self, writable=writable)


def _fmt_regions(regions):
    return "(" + ", ".join(f"({b:#x}, {s:#x})" for b, s in regions) + ")"


def _buffer(data):
    """``(address, nbytes, keepalive)`` of a bytes-like object, without a
    copy for bytes and writable contiguous buffers."""
    if isinstance(data, bytes):
        ptr = ctypes.c_char_p(data)
        return ctypes.cast(ptr, ctypes.c_void_p).value or 0, len(data), (data, ptr)
    view = memoryview(data)
    if view.readonly or not view.c_contiguous:
        return _buffer(view.tobytes())
    view = view.cast("B")
    if not view.nbytes:
        return 0, 0, view
    cbuf = (ctypes.c_char * view.nbytes).from_buffer(view)
    return ctypes.addressof(cbuf), view.nbytes, (view, cbuf)


def _check_span(capacity, offset, nbytes, reading):
    """``nbytes`` from byte ``offset`` of a ``capacity``-byte grant, checked:
    :class:`ValueError` if they do not fit. A write's ``nbytes`` is its
    data's (the reference's message); a read's may be ``None``, the rest of
    the grant. Returns ``nbytes``."""
    if offset < 0 or offset > capacity:
        raise ValueError(f"offset {offset} is outside the handle's {capacity}-byte grant")
    if not reading:
        if nbytes > capacity - offset:
            raise ValueError(f"{nbytes} bytes exceeds the handle's {capacity}-byte grant")
        return nbytes
    if nbytes is None:
        nbytes = capacity - offset
    if nbytes < 0 or nbytes > capacity - offset:
        raise ValueError(f"{nbytes} bytes at offset {offset} exceeds the handle's {capacity}-byte grant")
    return nbytes


class StorageAllocator:
    """First-fit allocator over one declared tier's ``[base, base+capacity)``,
    minus reserved regions, served by the svod driver.

    The keyword arguments are the reference's and must describe the tier as
    an administrator declared it (``svodctl declare``): its ``capacity_bytes``,
    ``base`` (device address of its first byte), ``reserved`` regions
    (``(base, size)`` pairs in device addresses) and ``align``. A mismatch
    raises :class:`ValueError` naming the declared values. ``path`` (an
    extra) is the device node. Each allocator has its own open file, so two
    allocators never share handles; :meth:`close` (or ``with``) frees every
    allocation it still holds.
    """

    def __init__(self, *, tier, capacity_bytes, base=0, reserved=(), align=64,
                 path=DEFAULT_PATH):
        if capacity_bytes <= 0:
            raise ValueError("capacity_bytes must be positive")
        if align <= 0 or align & (align - 1):
            raise ValueError("align must be a positive power of two")
        regions = tuple(sorted((int(b), int(s)) for b, s in reserved))
        for res_base, res_size in regions:
            if res_size <= 0:
                raise ValueError(f"reserved region ({res_base:#x}, {res_size}) must have positive size")
            if res_base < base or res_base + res_size > base + capacity_bytes:
                raise ValueError(f"reserved region ({res_base:#x}, {res_size}) lies outside the tier")
        self.tier = tier
        self.align = align
        self.capacity_bytes = capacity_bytes
        self.base = base
        self.reserved = regions
        self._token = next(_ALLOCATOR_TOKENS)
        self._handles = {}      # (id, generation) -> the driver's handle
        _ALLOCATORS[self._token] = self
        self._fd = open_device(path)
        try:
            self._tier_id = self._bind(tier, (capacity_bytes, base, regions, align))
        except BaseException:
            os.close(self._fd)
            self._fd = None
            raise

    def _bind(self, name, given):
        listed = query_tiers(self._fd)
        found = [t for t in listed if t.name == name and not t.gone] or \
            [t for t in listed if t.name == name]
        if not found:
            names = ", ".join(t.name for t in listed) or "none"
            raise ValueError(f"no tier named {name!r} is declared (declared tiers: {names})")
        t = found[0]
        if t.gone:
            raise DeviceGoneError(f"tier {name!r}: its device is gone")
        declared = (t.capacity, t.base, tuple(sorted(t.reserved)), t.align)
        if declared != given:
            raise ValueError(
                f"tier {name!r} is declared as capacity_bytes={t.capacity:#x}, "
                f"base={t.base:#x}, reserved={_fmt_regions(declared[2])}, "
                f"align={t.align}; the arguments say capacity_bytes={given[0]:#x}, "
                f"base={given[1]:#x}, reserved={_fmt_regions(given[2])}, "
                f"align={given[3]}")
        return t.id

    # -- the reference's API -------------------------------------------------

    def allocate(self, nbytes, *, mappable=False):
        """Allocate ``nbytes`` (first fit, aligned to ``align``).

        Returns a :class:`StorageHandle`. Raises :class:`ValueError` if
        ``nbytes`` is not positive, :class:`StorageExhaustedError` if no free
        span fits, :class:`QuotaError` at a per-file limit. ``mappable`` (an
        extra) rounds the allocation to whole, page-aligned pages so that
        :meth:`map` can map it (``capacity`` says the rounded size).
        """
        if nbytes <= 0:
            raise ValueError("nbytes must be positive")
        req = _abi.Alloc(tier=self._tier_id, size=nbytes, align=0,
                         flags=_abi.ALLOC_MAPPABLE if mappable else 0)
        try:
            _abi.ioctl(self._fileno(), _abi.IOCTL_ALLOC, req)
        except OSError as err:
            exc = from_oserror(err, f"tier {self.tier!r}: allocate {nbytes} bytes")
            if type(exc) is StorageExhaustedError:
                exc = StorageExhaustedError(f"tier {self.tier!r} cannot hold {nbytes} bytes")
            raise exc from None
        self._handles[req.id, req.generation] = req.handle
        return StorageHandle(id=req.id, generation=req.generation, base=req.device_addr,
                             capacity=req.capacity, tier=self.tier, allocator=self._token)

    def free(self, handle):
        """Free ``handle``'s allocation; the handle and every copy of it are
        stale from then on. Raises :class:`StaleHandleError` for a handle
        that is not live in this allocator (a double free included). Works
        after the tier's device is gone."""
        try:
            kernel_handle = self._resolve(handle)[0]    # a forged copy frees nothing
        except DeviceGoneError:
            # RESOLVE says ENODEV once the device is gone; FREE still works
            # and the driver still checks slot and generation.
            kernel_handle = self._checked(handle)
        try:
            _abi.ioctl(self._fileno(), _abi.IOCTL_FREE, _abi.Free(handle=kernel_handle))
        except OSError as err:
            if err.errno == errno.ESTALE:
                self._handles.pop((handle.id, handle.generation), None)
                raise self._stale(handle) from None
            raise from_oserror(err, "free") from None
        del self._handles[handle.id, handle.generation]

    def resolve(self, handle):
        """The handle's device address, generation-checked by the driver.
        Freed storage is never readdressed through an old name."""
        return self._resolve(handle)[1]

    def stage(self, device, handle, data, *, offset=0, engine=None):
        """Write ``data`` into the handle's allocation.

        ``device`` ``None`` stages through the driver (``SVOD_IOCTL_STAGE``,
        ``engine`` ``None``/``"auto"``, ``"cpu"`` or ``"dma"``); any other
        object gets ``device.write_dma(device_address=, data=)`` after the
        checks, as in the reference. ``offset`` (an extra) is the byte offset
        inside the allocation. Raises :class:`ValueError` if the data does
        not fit the live grant, :class:`StaleHandleError` for a stale handle,
        :class:`TransferInterrupted` on Ctrl-C during a driver transfer.
        """
        kernel_handle, base, capacity = self._resolve(handle)
        addr, nbytes, keep = _buffer(data)
        _check_span(capacity, offset, nbytes, reading=False)
        if device is not None:
            if engine is not None:
                raise ValueError("engine= applies to the driver's staging (device=None)")
            device.write_dma(device_address=base + offset, data=data)
            return
        self._xfer(_abi.IOCTL_STAGE, kernel_handle, offset, addr, nbytes, engine, "stage")
        del keep

    # -- extras ----------------------------------------------------------------

    def read(self, handle, nbytes=None, offset=0, *, engine=None):
        """Read ``nbytes`` (default: the rest of the grant) from byte
        ``offset`` of the handle's allocation through the driver
        (``SVOD_IOCTL_READ``); returns ``bytes``."""
        kernel_handle, _, capacity = self._resolve(handle)
        nbytes = _check_span(capacity, offset, nbytes, reading=True)
        buf = bytearray(nbytes)
        addr, _, keep = _buffer(buf)
        self._xfer(_abi.IOCTL_READ, kernel_handle, offset, addr, nbytes, engine, "read")
        del keep
        return bytes(buf)

    def stage_async(self, handle, data, *, offset=0, engine=None, after=None):
        """Queue a write of ``data`` into the handle's allocation and return
        at once: a :class:`svod.transfer.Transfer` (``done()``,
        ``result()``, ``fileno()``, ``await``). The driver makes every check
        :meth:`stage` makes before it returns; ``data`` is kept alive, and
        must not change, until the transfer ends. ``engine``: ``None``,
        ``"auto"``, ``"cpu"`` or ``"dma"``.
        ``after``: an in-fence the transfer waits for before it starts: a
        sync_file descriptor (an ``int``: svod's or any driver's, the call
        does not close it) or a :class:`svod.transfer.Transfer` of svod's
        own, not closed yet (its fence; it may be of another
        :class:`Allocator`). An in-fence that fails fails the transfer with
        its error, one not signalled within the driver's
        ``async_timeout_ms`` with ``ETIMEDOUT``; nothing moves then.
        Raises as :meth:`stage`, :class:`OSError` ``EAGAIN`` when the
        file has too many transfers in flight (wait for one), ``EBADF`` or
        ``EINVAL`` for an ``after`` fd that is not open or not a sync_file,
        and :class:`ValueError` for a closed Transfer."""
        kernel_handle, _, capacity = self._resolve(handle)
        addr, nbytes, keep = _buffer(data)
        _check_span(capacity, offset, nbytes, reading=False)
        x = self._submit(_abi.IOCTL_STAGE, kernel_handle, offset, addr, nbytes, engine, "stage",
                         after)
        return Transfer(self._fileno(), x.seqno, x.fence_fd, nbytes, keep, what="stage")

    def read_async(self, handle, nbytes=None, offset=0, *, engine=None, after=None):
        """Queue a read of ``nbytes`` (default: the rest of the grant) from
        byte ``offset``; the :class:`svod.transfer.Transfer`'s ``result()``
        (or ``await``) gives the ``bytes``. ``after``: an in-fence, as for
        :meth:`stage_async`."""
        kernel_handle, _, capacity = self._resolve(handle)
        nbytes = _check_span(capacity, offset, nbytes, reading=True)
        buf = bytearray(nbytes)
        addr, _, keep = _buffer(buf)
        x = self._submit(_abi.IOCTL_READ, kernel_handle, offset, addr, nbytes, engine, "read",
                         after)
        return Transfer(self._fileno(), x.seqno, x.fence_fd, nbytes, keep, out=buf, what="read")

    def map(self, handle):
        """A writable ``memoryview`` of the handle's whole allocation, mapped
        from the device (``SVOD_IOCTL_MAP_OFFSET`` and ``mmap``,
        write-combined): stores go straight to device memory.

        The allocation must come from ``allocate(..., mappable=True)``
        (else :class:`OSError` ``EOPNOTSUPP``). Release the view (``with``,
        or :meth:`memoryview.release` then closing ``view.obj``) before
        freeing: freeing revokes the mapping, and touching a revoked mapping
        kills the process with ``SIGBUS``; it never shows another owner's
        bytes.
        """
        kernel_handle = self._resolve(handle)[0]
        req = _abi.MapOffset(handle=kernel_handle)
        try:
            _abi.ioctl(self._fileno(), _abi.IOCTL_MAP_OFFSET, req)
        except OSError as err:
            raise from_oserror(err, "map") from None
        mapping = mmap.mmap(self._fileno(), req.size, flags=mmap.MAP_SHARED,
                            prot=mmap.PROT_READ | mmap.PROT_WRITE, offset=req.offset)
        return memoryview(mapping)

    def export(self, handle, *, writable=True):
        """A dma-buf of the handle's whole allocation, as a
        :class:`svod.DmaBuf` (``SVOD_IOCTL_EXPORT``): read-write, or
        read-only with ``writable=False``. Whoever holds the fd may import
        it (:meth:`import_fd`) or map it; the memory stays until the fd and
        every handle are gone, charged to this allocator's file. The
        allocation must be ``mappable`` (else :class:`OSError`
        ``EOPNOTSUPP``); a read-write export of a read-only import raises
        :class:`PermissionError`."""
        kernel_handle = self._resolve(handle)[0]
        req = _abi.Export(handle=kernel_handle, flags=_abi.EXPORT_WRITE if writable else 0)
        try:
            _abi.ioctl(self._fileno(), _abi.IOCTL_EXPORT, req)
        except OSError as err:
            raise from_oserror(err, "export") from None
        return DmaBuf(req.fd, req.size, writable)

    def import_fd(self, fd):
        """A new handle of this allocator for the allocation of an svod
        dma-buf (``fd``: an int or an object with ``fileno()``, such as a
        :class:`svod.DmaBuf` or an fd received with ``socket.recv_fds``),
        ``SVOD_IOCTL_IMPORT``. The handle behaves as one from
        :meth:`allocate`: :meth:`free` makes it stale (the memory stays
        while others hold it), and it must be freed on its own. Through a
        read-only dma-buf, :meth:`stage` raises :class:`PermissionError`.
        Raises :class:`ValueError` for a dma-buf of another tier than this
        allocator's (or not a dma-buf), :class:`OSError` ``EXDEV`` for a
        dma-buf of another driver, ``EBADF`` for a closed fd."""
        fileno = fd.fileno() if hasattr(fd, "fileno") else int(fd)
        req = _abi.Import(fd=fileno)
        try:
            _abi.ioctl(self._fileno(), _abi.IOCTL_IMPORT, req)
        except OSError as err:
            raise from_oserror(err, "import") from None
        if req.tier != self._tier_id:
            _abi.ioctl(self._fileno(), _abi.IOCTL_FREE, _abi.Free(handle=req.handle))
            raise ValueError(f"the dma-buf is of another tier than {self.tier!r}")
        self._handles[req.id, req.generation] = req.handle
        return StorageHandle(id=req.id, generation=req.generation, base=req.device_addr,
                             capacity=req.capacity, tier=self.tier, allocator=self._token)

    def tiers(self):
        """Every declared tier (all devices), as :class:`svod.Tier`."""
        return query_tiers(self._fileno())

    def fileno(self):
        """The allocator's open file descriptor of the device."""
        return self._fileno()

    @property
    def closed(self):
        """True once :meth:`close` ran."""
        return self._fd is None

    def close(self):
        """Close the device file: the driver frees every allocation this
        allocator still holds. Handles become stale; calling again is a
        no-op."""
        if self._fd is not None:
            fd, self._fd = self._fd, None
            self._handles.clear()
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
        return (f"<svod.StorageAllocator tier={self.tier!r} "
                f"capacity_bytes={self.capacity_bytes:#x} {state}>")

    # -- internals ---------------------------------------------------------------

    def _fileno(self):
        if self._fd is None:
            raise ValueError("operation on a closed StorageAllocator")
        return self._fd

    def _stale(self, handle):
        return StaleHandleError(
            f"handle {handle.id} generation {handle.generation} is stale, forged, or from "
            f"another allocator; freed storage is never readdressed")

    def _checked(self, handle):
        """The kernel handle ``handle`` names in this allocator, or raise."""
        if not isinstance(handle, StorageHandle):
            raise TypeError(f"expected a StorageHandle, got {type(handle).__name__}")
        self._fileno()                                  # a closed allocator says so first
        if handle.allocator != self._token or handle.tier != self.tier:
            raise self._stale(handle)
        try:
            return self._handles[handle.id, handle.generation]
        except (KeyError, TypeError):       # never issued, freed, or unhashable
            raise self._stale(handle) from None

    def _resolve(self, handle):
        """``(kernel handle, base, capacity)`` from the driver's live record;
        a handle whose base or capacity differ from it is forged."""
        kernel_handle = self._checked(handle)
        req = _abi.Resolve(handle=kernel_handle)
        try:
            _abi.ioctl(self._fileno(), _abi.IOCTL_RESOLVE, req)
        except OSError as err:
            if err.errno == errno.ESTALE:
                raise self._stale(handle) from None
            raise from_oserror(err, "resolve") from None
        if (req.tier, req.device_addr, req.capacity) != (self._tier_id, handle.base, handle.capacity):
            raise self._stale(handle)
        return kernel_handle, req.device_addr, req.capacity

    def _submit(self, cmd, kernel_handle, offset, addr, length, engine, what, after=None):
        if engine not in _ENGINES:
            raise ValueError(f"engine must be one of None, 'auto', 'cpu', 'dma', not {engine!r}")
        x = _abi.Xfer(handle=kernel_handle, offset=offset, user_ptr=addr or 0, length=length,
                      flags=_ENGINES[engine] | _abi.XFER_ASYNC | _abi.XFER_FENCE_FD)
        if after is not None:
            # A Transfer gives its sync_file (fileno() raises once closed).
            in_fd = after if isinstance(after, int) else after.fileno()
            if isinstance(in_fd, bool) or not isinstance(in_fd, int) or in_fd < 0:
                raise ValueError(f"after must be a sync_file fd or a Transfer, not {after!r}")
            x.flags |= _abi.XFER_IN_FENCE
            x.in_fence_fd = in_fd
        while True:
            try:
                _abi.ioctl(self._fileno(), cmd, x)
            except InterruptedError:
                continue
            except OSError as err:
                raise from_oserror(err, f"{what} of {length} bytes at offset {offset}") from None
            return x

    def _xfer(self, cmd, kernel_handle, offset, addr, length, engine, what):
        if engine not in _ENGINES:
            raise ValueError(f"engine must be one of None, 'auto', 'cpu', 'dma', not {engine!r}")
        x = _abi.Xfer(handle=kernel_handle, offset=offset, user_ptr=addr or 0,
                      length=length, flags=_ENGINES[engine])
        while True:
            try:
                _abi.ioctl(self._fileno(), cmd, x)
            except KeyboardInterrupt:
                # SIGINT: the driver stopped between chunks (EINTR: Python's
                # handlers have no SA_RESTART) and the handler raised;
                # x.done was written back.
                raise TransferInterrupted(x.done, length) from None
            except InterruptedError:
                # Another signal whose handler returned: the driver set
                # x.resume to x.done, so the same request goes on from there.
                continue
            except OSError as err:
                raise from_oserror(err, f"{what} of {length} bytes at offset {offset}") from None
            return
