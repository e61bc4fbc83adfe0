# SPDX-License-Identifier: MIT OR GPL-2.0
"""The ioctl ABI of ``/dev/svod`` (``uapi/linux/svod.h``, ABI 2) in ctypes.

Only this module knows struct layouts and command numbers. Every struct is
declared exactly as in the header; ``tools/python/tests/test_abi.py`` checks
the sizes against the header's ``SVOD_*_SIZE_VER0`` values. The two structs
of libsvodplan's ``svod_plan_solve()`` (``tools/plan/libsvodplan.h``, a
library's ABI, not the device's) are here too, at the end.
"""
import ctypes
import errno
import fcntl

ABI_VERSION = 2
IOCTL_MAGIC = 0xC5
NAME_LEN = 32

TIER_GONE = 1 << 0
TIER_NO_ACCESS = 1 << 1
ALLOC_MAPPABLE = 1 << 0
FREE_AFTER_USE = 1 << 0
EXPORT_WRITE = 1 << 0
ACCESS_READ = 1 << 0
ACCESS_WRITE = 1 << 1
XFER_CPU = 1 << 0
XFER_DMA = 1 << 1
XFER_ASYNC = 1 << 2
XFER_FENCE_FD = 1 << 3
XFER_IN_FENCE = 1 << 4
PLAN_ALLOC = 1
PLAN_FREE = 2
PLAN_TLSF = 0
PLAN_BEST = 1
PLAN_NO_OFFSET = (1 << 64) - 1
BATCH_STAGE = 1
BATCH_READ = 2
BATCH_FENCE_FD = 1 << 0
BATCH_IN_FENCE = 1 << 1
BATCH_MAX_ENTRIES = 4096

u32 = ctypes.c_uint32
u64 = ctypes.c_uint64


class Region(ctypes.Structure):
    """``struct svod_region``."""
    _fields_ = [("base", u64), ("size", u64)]


class TierInfo(ctypes.Structure):
    """``struct svod_tier_info``."""
    _fields_ = [
        ("id", u32), ("flags", u32),
        ("name", ctypes.c_char * NAME_LEN), ("device", ctypes.c_char * NAME_LEN),
        ("device_base", u64), ("capacity", u64), ("align", u64),
        ("free_bytes", u64), ("largest_free", u64), ("reserved_bytes", u64),
        ("nr_free_spans", u32), ("nr_live", u32),
        ("nr_reserved", u32), ("first_reserved", u32),
        ("cpu_bytes", u64), ("dma_bytes", u64),
    ]


class Query(ctypes.Structure):
    """``struct svod_query``."""
    _fields_ = [
        ("abi_version", u32), ("flags", u32), ("nr_tiers", u32),
        ("tier_info_size", u32), ("tiers_ptr", u64),
        ("nr_regions", u32), ("pad", u32), ("regions_ptr", u64),
    ]


class Alloc(ctypes.Structure):
    """``struct svod_alloc``."""
    _fields_ = [
        ("tier", u32), ("flags", u32), ("size", u64), ("align", u64),
        ("handle", u64), ("device_addr", u64), ("capacity", u64),
        ("id", u32), ("generation", u32),
    ]


class Free(ctypes.Structure):
    """``struct svod_free``."""
    _fields_ = [("handle", u64), ("flags", u32), ("pad", u32)]


class Resolve(ctypes.Structure):
    """``struct svod_resolve``."""
    _fields_ = [
        ("handle", u64), ("flags", u32), ("tier", u32),
        ("device_addr", u64), ("capacity", u64),
    ]


class Xfer(ctypes.Structure):
    """``struct svod_xfer`` (STAGE and READ)."""
    _fields_ = [
        ("handle", u64), ("offset", u64), ("user_ptr", u64), ("length", u64),
        ("flags", u32), ("pad", u32), ("done", u64), ("resume", u64),
        ("seqno", u64), ("fence_fd", ctypes.c_int32), ("pad2", u32),
        ("in_fence_fd", ctypes.c_int32), ("pad3", u32),
    ]


class PlanEvent(ctypes.Structure):
    """``struct svod_plan_event``."""
    _fields_ = [("op", u32), ("id", u32), ("size", u64), ("align", u64)]


class Plan(ctypes.Structure):
    """``struct svod_plan``."""
    _fields_ = [
        ("arena_size", u64), ("block_size", u32), ("lv2_cnt", u32),
        ("strategy", u32), ("flags", u32), ("nr_events", u32),
        ("failed_event", u32), ("events_ptr", u64), ("offsets_ptr", u64),
        ("peak", u64), ("lower_bound", u64),
    ]


class MapOffset(ctypes.Structure):
    """``struct svod_map_offset``."""
    _fields_ = [
        ("handle", u64), ("flags", u32), ("pad", u32), ("offset", u64),
        ("size", u64),
    ]


class Wait(ctypes.Structure):
    """``struct svod_wait``."""
    _fields_ = [
        ("seqno", u64), ("deadline_ns", ctypes.c_int64), ("done", u64),
        ("status", ctypes.c_int32), ("flags", u32),
    ]


class Export(ctypes.Structure):
    """``struct svod_export``."""
    _fields_ = [("handle", u64), ("flags", u32), ("fd", ctypes.c_int32), ("size", u64)]


class Import(ctypes.Structure):
    """``struct svod_import``."""
    _fields_ = [
        ("fd", ctypes.c_int32), ("flags", u32), ("handle", u64), ("device_addr", u64),
        ("capacity", u64), ("tier", u32), ("access", u32), ("id", u32),
        ("generation", u32),
    ]


class BatchEntry(ctypes.Structure):
    """``struct svod_batch_entry``."""
    _fields_ = [
        ("handle", u64), ("offset", u64), ("user_ptr", u64), ("length", u64),
        ("op", u32), ("flags", u32),
    ]


class Batch(ctypes.Structure):
    """``struct svod_batch``."""
    _fields_ = [
        ("entries_ptr", u64), ("nr_entries", u32), ("entry_size", u32), ("flags", u32),
        ("failed_entry", u32), ("seqno", u64), ("fence_fd", ctypes.c_int32), ("pad", u32),
        ("in_fence_fd", ctypes.c_int32), ("pad2", u32),
    ]


class SolveParams(ctypes.Structure):
    """``struct svod_solve_params`` (``libsvodplan.h``)."""
    _fields_ = [("block_size", u64), ("arena_size", u64), ("seconds", ctypes.c_double)]


class SolveResult(ctypes.Structure):
    """``struct svod_solve_result`` (``libsvodplan.h``)."""
    _fields_ = [("peak", u64), ("lower_bound", u64), ("nodes", u64),
                ("failed_event", u32), ("optimal", u32)]


SIZE_VER0 = {
    Query: 24, TierInfo: 152, Alloc: 48, Free: 16, Resolve: 32, Xfer: 48,
    Plan: 64, MapOffset: 32, Wait: 32, Export: 24, Import: 48, Batch: 40,
    BatchEntry: 40,
}

_IOC_WRITE = 1
_IOC_READ = 2


def _ioc(direction, nr, struct):
    return (direction << 30) | (ctypes.sizeof(struct) << 16) | (IOCTL_MAGIC << 8) | nr


IOCTL_QUERY = _ioc(_IOC_READ | _IOC_WRITE, 0x00, Query)
IOCTL_ALLOC = _ioc(_IOC_READ | _IOC_WRITE, 0x01, Alloc)
IOCTL_FREE = _ioc(_IOC_WRITE, 0x02, Free)
IOCTL_RESOLVE = _ioc(_IOC_READ | _IOC_WRITE, 0x03, Resolve)
IOCTL_STAGE = _ioc(_IOC_READ | _IOC_WRITE, 0x04, Xfer)
IOCTL_READ = _ioc(_IOC_READ | _IOC_WRITE, 0x05, Xfer)
IOCTL_PLAN = _ioc(_IOC_READ | _IOC_WRITE, 0x06, Plan)
IOCTL_MAP_OFFSET = _ioc(_IOC_READ | _IOC_WRITE, 0x07, MapOffset)
IOCTL_WAIT = _ioc(_IOC_READ | _IOC_WRITE, 0x08, Wait)
IOCTL_EXPORT = _ioc(_IOC_READ | _IOC_WRITE, 0x09, Export)
IOCTL_IMPORT = _ioc(_IOC_READ | _IOC_WRITE, 0x0a, Import)
IOCTL_BATCH = _ioc(_IOC_READ | _IOC_WRITE, 0x0b, Batch)


def ioctl(fd, request, arg):
    """Issue one command; ``arg`` (a ctypes struct) is written back in place,
    also when the call fails (fcntl copies the buffer back before it raises).

    Raises :class:`OSError` with the driver's errno. Kept as one function so
    tests can substitute it.
    """
    fcntl.ioctl(fd, request, arg, True)


ERRNO_NAMES = errno.errorcode
