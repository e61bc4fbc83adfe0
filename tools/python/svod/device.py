# SPDX-License-Identifier: MIT OR GPL-2.0
"""Opening ``/dev/svod`` and listing its tiers (``SVOD_IOCTL_QUERY``)."""
import ctypes
import os
from dataclasses import dataclass

from . import _abi
from .errors import from_oserror

#: Where the driver's misc device lives.
DEFAULT_PATH = "/dev/svod"


@dataclass(frozen=True)
class Tier:
    """One declared tier, as ``SVOD_IOCTL_QUERY`` reported it at one moment.

    ``base`` is the device address of the tier's first byte, ``capacity`` its
    size with reserved regions included, ``reserved`` its reserved regions as
    ``(base, size)`` pairs in device addresses (the form the reference's
    ``reserved=`` argument takes). The counters are the driver's, all open
    files together.
    """
    id: int
    name: str
    device: str
    base: int
    capacity: int
    align: int
    reserved: tuple
    free_bytes: int
    largest_free: int
    reserved_bytes: int
    nr_free_spans: int
    nr_live: int
    cpu_bytes: int
    dma_bytes: int
    gone: bool


def open_device(path=DEFAULT_PATH):
    """Open the svod device read-write; returns the file descriptor.

    Raises :class:`OSError` (e.g. ``FileNotFoundError`` when the module is
    not loaded).
    """
    return os.open(path, os.O_RDWR | os.O_CLOEXEC)


def _query(fd, nr_tiers, nr_regions):
    tiers = (_abi.TierInfo * max(nr_tiers, 1))()
    regions = (_abi.Region * max(nr_regions, 1))()
    q = _abi.Query(tier_info_size=ctypes.sizeof(_abi.TierInfo),
                   nr_tiers=nr_tiers, nr_regions=nr_regions,
                   tiers_ptr=ctypes.addressof(tiers) if nr_tiers else 0,
                   regions_ptr=ctypes.addressof(regions) if nr_regions else 0)
    try:
        _abi.ioctl(fd, _abi.IOCTL_QUERY, q)
    except OSError as err:
        raise from_oserror(err, "query") from None
    return q, tiers, regions


def query_tiers(fd):
    """Every tier the driver reports, in tier id order, as :class:`Tier`.

    Asks for the counts first and retries with larger arrays while tiers or
    regions are being declared meanwhile.
    """
    nr_tiers = nr_regions = 0
    while True:
        q, infos, regions = _query(fd, nr_tiers, nr_regions)
        if q.nr_tiers <= nr_tiers and q.nr_regions <= nr_regions:
            break
        nr_tiers = max(nr_tiers, q.nr_tiers)
        nr_regions = max(nr_regions, q.nr_regions)
    out = []
    for info in infos[:q.nr_tiers]:
        first = info.first_reserved
        res = tuple((r.base, r.size)
                    for r in regions[first:first + info.nr_reserved])
        out.append(Tier(
            id=info.id, name=info.name.decode(), device=info.device.decode(),
            base=info.device_base, capacity=info.capacity, align=info.align,
            reserved=res, free_bytes=info.free_bytes,
            largest_free=info.largest_free, reserved_bytes=info.reserved_bytes,
            nr_free_spans=info.nr_free_spans, nr_live=info.nr_live,
            cpu_bytes=info.cpu_bytes, dma_bytes=info.dma_bytes,
            gone=bool(info.flags & _abi.TIER_GONE)))
    return out


def tiers(path=DEFAULT_PATH):
    """List the tiers of every svod device (see :class:`Tier`)."""
    fd = open_device(path)
    try:
        return query_tiers(fd)
    finally:
        os.close(fd)
