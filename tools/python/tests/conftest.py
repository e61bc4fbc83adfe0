# SPDX-License-Identifier: MIT OR GPL-2.0
"""Fixtures of svod's Python suite, and its TAP output.

Backends: every test that takes ``backend`` runs once against
``svod.StorageAllocator`` on ``/dev/svod`` ("svod", skipped without the
device) and once against the reference class loaded from the seeds
("reference", skipped without them), with the same written-out
expectations.

With ``SVOD_TAP=1`` the suite prints TAP for the guest harness instead of
pytest's report (run it with ``-p no:terminal``): a plan ``1..N`` after
collection, then one ``ok N - name`` / ``not ok N - name`` line per test
(``# SKIP reason`` for skips) and the failure's report as ``#`` lines.
"""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..")))

import reference  # noqa: E402
import svod  # noqa: E402

DEVICE = os.environ.get("SVOD_DEVICE", svod.DEFAULT_PATH)
# libsvodplan for strategy="search": the tree's build (tools/plan) on the
# host, the copy next to the package in the guest (python-files.sh).
if not os.environ.get("SVOD_LIBSVODPLAN"):
    for _lib in ("../../plan/libsvodplan.so.1", "../libsvodplan.so.1"):
        _lib = os.path.abspath(os.path.join(os.path.dirname(__file__), _lib))
        if os.path.exists(_lib):
            os.environ["SVOD_LIBSVODPLAN"] = _lib
            break
# Which implementations the backend fixtures run: "svod,reference" unless
# SVOD_BACKENDS says otherwise (the guest, which has no seeds, says "svod").
BACKENDS = os.environ.get("SVOD_BACKENDS", "svod,reference").split(",")
_REF = reference.load_storage_reference()

# The shape of the reference suite's tier when there is no device to ask:
# the rig's first ivshmem BAR 2 (64 MiB), declared by default.
DEFAULT_SHAPE = {"tier": "bar2", "capacity_bytes": 64 << 20, "base": 0, "align": 64}


def have_device():
    """True when /dev/svod exists here."""
    return os.path.exists(DEVICE)


def have_libsvodplan():
    """True when libsvodplan (strategy="search") loads here."""
    try:
        svod.planner._libsvodplan()
    except OSError:
        return False
    return True


@pytest.fixture(scope="session")
def shape():
    """Constructor arguments describing the default tier "bar2": read from
    the driver when there is one (capacity is BAR 2's size)."""
    if have_device():
        for t in svod.tiers(DEVICE):
            if t.name == "bar2":
                return {"tier": "bar2", "capacity_bytes": t.capacity,
                        "base": t.base, "align": t.align}
    return dict(DEFAULT_SHAPE)


@pytest.fixture
def alloc(shape):
    """An allocator on /dev/svod's default tier, closed afterwards."""
    with svod.StorageAllocator(path=DEVICE, **shape) as a:
        yield a


def pattern(n, seed):
    """n bytes of (i * 7 + seed) mod 256 (period 256: built by repetition)."""
    block = bytes((i * 7 + seed) & 0xFF for i in range(256))
    return (block * (n // 256 + 1))[:n]


class Backend:
    """Makes allocators of one implementation and closes them afterwards."""

    def __init__(self, name, module):
        self.name = name
        self.mod = module
        self.made = []

    def make(self, **kwargs):
        """A StorageAllocator of this backend built with ``kwargs``."""
        if self.name == "svod":
            kwargs.setdefault("path", DEVICE)
        alloc = self.mod.StorageAllocator(**kwargs)
        self.made.append(alloc)
        return alloc

    def close(self):
        for alloc in self.made:
            if hasattr(alloc, "close"):
                alloc.close()


@pytest.fixture(params=BACKENDS)
def backend(request):
    """The implementation under test (see the module docstring)."""
    if request.param == "svod":
        if not have_device():
            pytest.skip(f"no {DEVICE}")
        b = Backend("svod", svod)
    else:
        if _REF is None:
            pytest.skip("the reference seeds are not on this machine")
        b = Backend("reference", _REF)
    yield b
    b.close()


# -- TAP ----------------------------------------------------------------------

class _Tap:
    def __init__(self):
        self.n = 0
        self.state = {}

    def out(self, line):
        sys.__stdout__.write(line + "\n")
        sys.__stdout__.flush()


_TAP = _Tap() if os.environ.get("SVOD_TAP") == "1" else None


def pytest_collection_finish(session):
    """TAP: the plan, once the tests are known."""
    if _TAP:
        _TAP.out(f"1..{len(session.items)}")


def pytest_runtest_logreport(report):
    """TAP: one result line per test, after its teardown."""
    if not _TAP:
        return
    st = _TAP.state.setdefault(report.nodeid, {"failed": [], "skip": None})
    if report.failed:
        st["failed"].append(report)
    elif report.skipped and st["skip"] is None:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else "skipped"
        st["skip"] = reason.replace("Skipped: ", "")
    if report.when != "teardown":
        return
    _TAP.n += 1
    name = report.nodeid.rsplit("/", 1)[-1].replace(".py::", ": ")
    if st["failed"]:
        _TAP.out(f"not ok {_TAP.n} - {name}")
        for rep in st["failed"]:
            for line in str(rep.longrepr).splitlines()[-40:]:
                _TAP.out(f"#   {line}")
    elif st["skip"] is not None:
        _TAP.out(f"ok {_TAP.n} - {name} # SKIP {st['skip']}")
    else:
        _TAP.out(f"ok {_TAP.n} - {name}")
    del _TAP.state[report.nodeid]


def pytest_collectreport(report):
    """TAP: a module that cannot be collected is a failure, not silence."""
    if _TAP and report.failed:
        _TAP.out(f"not ok 0 - collect {report.nodeid}")
        for line in str(report.longrepr).splitlines()[-40:]:
            _TAP.out(f"#   {line}")
