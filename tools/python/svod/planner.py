# SPDX-License-Identifier: MIT OR GPL-2.0
"""Arena planning over ``SVOD_IOCTL_PLAN``: :func:`plan` for a whole
schedule, :class:`TLSFAllocator` for runtimes that plan one event at a time.

The driver's TLSF strategy is the reference planner
(``seeds/000_e02b2738333224c2.txt``) exactly: same offsets, same peak
(``Documentation/planner.rst``). ``strategy="search"`` goes on from the
driver's BEST plan with libsvodplan's search (``svod_plan_solve()``, loaded
with ctypes from ``libsvodplan.so.1``, or the file ``$SVOD_LIBSVODPLAN``
names), in this process.
"""
import ctypes
import errno
import os
from dataclasses import dataclass

from . import _abi
from .device import DEFAULT_PATH, open_device
from .errors import StorageExhaustedError, from_oserror

_STRATEGIES = {"tlsf": _abi.PLAN_TLSF, "best": _abi.PLAN_BEST}
_NO_EVENT = 0xFFFFFFFF
_U64_MAX = (1 << 64) - 1
_LIBSVODPLAN = "libsvodplan.so.1"



_solve = None


@dataclass(frozen=True)
class PlanResult:
    """The outcome of :func:`plan`.

    ``offsets`` has one entry per event: the arena offset of an ``alloc``,
    ``None`` for a ``free``. ``peak`` is the largest
    ``offset + max(size, block_size)``, ``lower_bound`` the largest sum of
    requested sizes live at one time (no plan can do with less).
    """
    offsets: list
    peak: int
    lower_bound: int


class PlanError(ValueError):
    """A malformed event (ALLOC of a live id, FREE of an id that is not
    live, unknown op...). ``failed_event`` is its index, or None when the
    parameters themselves were refused."""

    def __init__(self, msg, failed_event):
        super().__init__(msg)
        self.failed_event = failed_event


class PlanExhaustedError(StorageExhaustedError):
    """The plan does not fit the arena. ``failed_event`` is the index of the
    ALLOC that found no room, ``offsets`` what was placed before it and
    ``peak`` the arena the plan needs so far."""

    def __init__(self, msg, failed_event, offsets, peak):
        super().__init__(msg)
        self.failed_event = failed_event
        self.offsets = offsets
        self.peak = peak


def _event(ev):
    op = ev[0]
    if op == "alloc" and len(ev) in (3, 4):
        return _abi.PlanEvent(op=_abi.PLAN_ALLOC, id=ev[1], size=ev[2],
                              align=ev[3] if len(ev) == 4 else 0)
    if op == "free" and len(ev) == 2:
        return _abi.PlanEvent(op=_abi.PLAN_FREE, id=ev[1])
    raise ValueError(f"event {ev!r}: expected ('alloc', id, size[, align]) or ('free', id)")


def _plan_fd(fd, events, arena_size, strategy, block_size, lv2_cnt):
    if strategy not in _STRATEGIES:
        raise ValueError(f"strategy must be 'tlsf', 'best' or 'search', not {strategy!r}")
    evs = [_event(ev) for ev in events]
    n = len(evs)
    arr = (_abi.PlanEvent * max(n, 1))(*evs)
    offs = (_abi.u64 * max(n, 1))()
    req = _abi.Plan(arena_size=arena_size, block_size=block_size, lv2_cnt=lv2_cnt,
                    strategy=_STRATEGIES[strategy], nr_events=n,
                    events_ptr=ctypes.addressof(arr), offsets_ptr=ctypes.addressof(offs))
    err = None
    try:
        _abi.ioctl(fd, _abi.IOCTL_PLAN, req)
    except OSError as e:
        err = e
    offsets = [None if o == _abi.PLAN_NO_OFFSET else o for o in offs[:n]]
    failed = None if req.failed_event == _NO_EVENT else req.failed_event
    if err is None:
        return PlanResult(offsets=offsets, peak=req.peak, lower_bound=req.lower_bound)
    if err.errno == errno.ENOSPC:
        raise PlanExhaustedError(
            f"the plan does not fit {arena_size} bytes (event {failed}, peak {req.peak})",
            failed, offsets, req.peak) from None
    if err.errno == errno.EINVAL:
        where = f"event {failed} {events[failed]!r}" if failed is not None else "parameters"
        raise PlanError(f"plan refused: {where}: {os.strerror(err.errno)}", failed) from None
    raise from_oserror(err, "plan") from None


def _libsvodplan():
    """``svod_plan_solve()`` of libsvodplan, loaded on first use."""
    global _solve
    if _solve is None:
        name = os.environ.get("SVOD_LIBSVODPLAN") or _LIBSVODPLAN
        try:
            lib = ctypes.CDLL(name)
        except OSError as e:
            raise OSError(errno.ENOENT, f"plan: strategy 'search' needs libsvodplan "
                          f"({name}: {e}); make install puts it in PREFIX/lib") from None
        fn = lib.svod_plan_solve
        fn.restype = ctypes.c_int
        fn.argtypes = [ctypes.POINTER(_abi.PlanEvent), _abi.u32, ctypes.POINTER(_abi.SolveParams),
                       ctypes.POINTER(_abi.u64), ctypes.POINTER(_abi.u64),
                       ctypes.POINTER(_abi.SolveResult)]
        _solve = fn
    return _solve


def _search(events, arena_size, block_size, seconds, start=None):
    """libsvodplan's search over ``events`` (tuples, as :func:`plan`), from
    the offsets ``start`` (a valid plan of the same events, or None), for
    at most ``seconds`` of CPU time per search thread. Returns a
    :class:`PlanResult`; raises as :func:`plan` does: the library refuses
    what the ioctl refuses, with the same errno and failed event."""
    solve = _libsvodplan()
    evs = [_event(ev) for ev in events]
    n = len(evs)
    arr = (_abi.PlanEvent * max(n, 1))(*evs)
    offs = (_abi.u64 * max(n, 1))()
    hint = None
    if start is not None:
        hint = (_abi.u64 * max(n, 1))(*[_abi.PLAN_NO_OFFSET if o is None else o
                                         for o in start])
    params = _abi.SolveParams(block_size=block_size, arena_size=arena_size, seconds=seconds)
    res = _abi.SolveResult()
    err = -solve(arr, n, ctypes.byref(params), hint, offs, ctypes.byref(res))
    offsets = [None if o == _abi.PLAN_NO_OFFSET else o for o in offs[:n]]
    failed = None if res.failed_event == _NO_EVENT else res.failed_event
    if not err:
        return PlanResult(offsets=offsets, peak=res.peak, lower_bound=res.lower_bound)
    if err == errno.ENOSPC:
        raise PlanExhaustedError(
            f"the plan does not fit {arena_size} bytes (event {failed}, peak {res.peak})",
            failed, offsets, res.peak)
    if err == errno.EINVAL:
        where = f"event {failed} {events[failed]!r}" if failed is not None else "parameters"
        raise PlanError(f"plan refused: {where}: {os.strerror(err)}", failed)
    raise from_oserror(OSError(err, os.strerror(err)), "plan")


def _search_fd(fd, events, arena_size, block_size, lv2_cnt, seconds):
    # BEST's plan, whatever the arena, is where the search starts (never
    # above it); a malformed list is refused here, as the library would.
    try:
        start = _plan_fd(fd, events, _U64_MAX, "best", block_size, lv2_cnt).offsets
    except PlanExhaustedError:
        start = None
    return _search(events, arena_size, block_size, seconds, start)


def plan(events, arena_size, strategy="tlsf", block_size=256, lv2_cnt=32, *,
         seconds=1.0, path=DEFAULT_PATH):
    """Plan arena offsets for a schedule of events.

    ``events`` is a sequence of ``("alloc", id, size)``,
    ``("alloc", id, size, align)`` and ``("free", id)`` tuples in schedule
    order (an id is live from its alloc to its free and may be allocated
    again after). ``strategy`` is ``"tlsf"`` (the reference planner),
    ``"best"`` (offline best fit, never worse) or ``"search"``: BEST's plan,
    then libsvodplan's search for a lower peak (at most ``seconds`` of CPU
    time per search thread, less when it meets the lower bound; never
    above BEST). Returns a :class:`PlanResult`; raises
    :class:`PlanExhaustedError` when the plan does not fit ``arena_size``
    and :class:`PlanError` for a malformed event or parameter.
    """
    events = list(events)
    fd = open_device(path)
    try:
        if strategy == "search":
            return _search_fd(fd, events, arena_size, block_size, lv2_cnt, seconds)
        return _plan_fd(fd, events, arena_size, strategy, block_size, lv2_cnt)
    finally:
        os.close(fd)


class TLSFAllocator:
    """The reference planner's operations, one event at a time.

    ``alloc(size, align)`` returns the offset (``base``-relative offsets plus
    ``base``), ``free(offset)`` frees it, exactly as the reference's
    ``TlsfAllocator`` would. Each call replays the schedule so far through
    ``SVOD_IOCTL_PLAN`` (TLSF is deterministic), so a call costs one ioctl
    over every event before it: fine for schedules of thousands of events;
    for a whole known schedule use :func:`plan`.
    """

    def __init__(self, size, base=0, block_size=256, lv2_cnt=32, *, path=DEFAULT_PATH):
        self.size = size
        self.base = base
        self.block_size = block_size
        self.lv2_cnt = lv2_cnt
        self._events = []
        self._live = {}         # offset -> buffer id
        self._ever = set()      # offsets ever returned
        self._next_id = 0
        self._peak = 0
        self._fd = open_device(path)

    def alloc(self, req_size, align=1):
        """Place ``req_size`` bytes aligned to ``align``; returns the offset.
        Raises :class:`StorageExhaustedError` when no block fits."""
        if req_size < 0 or align < 0:
            raise ValueError("req_size and align must not be negative")
        buf_id = self._next_id
        events = self._events + [("alloc", buf_id, req_size, align)]
        try:
            result = _plan_fd(self._fileno(), events, self.size, "tlsf",
                              self.block_size, self.lv2_cnt)
        except PlanExhaustedError:
            raise StorageExhaustedError(
                f"TLSF out of memory: requested {max(req_size, self.block_size)} bytes") from None
        self._events = events
        self._next_id += 1
        offset = result.offsets[-1]
        self._live[offset] = buf_id
        self._ever.add(offset)
        self._peak = max(self._peak, offset + max(req_size, self.block_size))
        return offset + self.base

    def free(self, offset):
        """Free the block at ``offset``. Raises :class:`ValueError` for an
        offset never returned ("unknown offset") or already freed ("double
        free")."""
        start = offset - self.base
        if start not in self._live:
            kind = "double free at" if start in self._ever else "free of unknown"
            raise ValueError(f"TLSF: {kind} offset {offset}")
        self._events.append(("free", self._live.pop(start)))

    @property
    def peak_used(self):
        """The largest end offset any ``alloc`` returned (relative to base)."""
        return self._peak

    def close(self):
        """Close the device file; calling again is a no-op."""
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _fileno(self):
        if self._fd is None:
            raise ValueError("operation on a closed TLSFAllocator")
        return self._fd
