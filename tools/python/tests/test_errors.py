# SPDX-License-Identifier: MIT OR GPL-2.0
"""The errno -> exception table (Documentation/python.rst) and the ABI
layout, host-side."""
import ctypes
import errno
import os
import re

import pytest

import svod
from svod import _abi
from svod.errors import from_oserror

TABLE = [
    (errno.ESTALE, svod.StaleHandleError), (errno.ENOSPC, svod.StorageExhaustedError),
    (errno.EDQUOT, svod.QuotaError), (errno.EMFILE, svod.QuotaError),
    (errno.EINVAL, ValueError), (errno.ERANGE, ValueError),
    (errno.ENODEV, svod.DeviceGoneError), (errno.ENOENT, svod.DeviceGoneError),
    (errno.EFAULT, OSError), (errno.EIO, OSError), (errno.ETIMEDOUT, OSError),
]


@pytest.mark.parametrize("code,exc", TABLE, ids=[errno.errorcode[c] for c, _ in TABLE])
def test_errno_maps_to_one_exception(code, exc):
    got = from_oserror(OSError(code, os.strerror(code)), "op")
    if exc is OSError:     # OSError() picks its subclass (TimeoutError...)
        assert isinstance(got, OSError) and type(got).__module__ == "builtins"
    else:
        assert type(got) is exc
    assert got.errno == code


def test_exception_hierarchy():
    assert issubclass(svod.QuotaError, svod.StorageExhaustedError)
    assert issubclass(svod.StorageExhaustedError, RuntimeError)
    assert issubclass(svod.StaleHandleError, RuntimeError)
    assert issubclass(svod.DeviceGoneError, RuntimeError)
    assert issubclass(svod.TransferInterrupted, KeyboardInterrupt)
    assert issubclass(svod.PlanExhaustedError, svod.StorageExhaustedError)
    assert issubclass(svod.PlanError, ValueError)


HEADER = os.path.join(os.path.dirname(__file__), "..", "..", "..", "uapi", "linux", "svod.h")


@pytest.mark.skipif(not os.path.exists(HEADER), reason="no uapi header here")
def test_struct_sizes_match_the_header():
    text = open(HEADER, encoding="utf-8").read()
    ver0 = dict(re.findall(r"#define SVOD_(\w+)_SIZE_VER0\s+(\d+)", text))
    names = {"QUERY": _abi.Query, "TIER_INFO": _abi.TierInfo, "ALLOC": _abi.Alloc,
             "FREE": _abi.Free, "RESOLVE": _abi.Resolve, "XFER": _abi.Xfer, "PLAN": _abi.Plan,
             "PLAN_EVENT": _abi.PlanEvent, "MAP_OFFSET": _abi.MapOffset, "WAIT": _abi.Wait,
             "EXPORT": _abi.Export, "IMPORT": _abi.Import, "BATCH": _abi.Batch,
             "BATCH_ENTRY": _abi.BatchEntry}
    assert set(ver0) == set(names)
    for name, struct in names.items():
        assert ctypes.sizeof(struct) >= int(ver0[name]), name
    assert ctypes.sizeof(_abi.Query) == 40 and ctypes.sizeof(_abi.PlanEvent) == 24
    assert f"SVOD_ABI_VERSION\t{_abi.ABI_VERSION}" in text


PLAN_HEADER = os.path.join(os.path.dirname(__file__), "..", "..", "plan", "libsvodplan.h")


@pytest.mark.skipif(not os.path.exists(PLAN_HEADER), reason="no libsvodplan.h here")
def test_solve_structs_match_libsvodplan_h():
    text = open(PLAN_HEADER, encoding="utf-8").read()
    for struct, name in ((_abi.SolveParams, "svod_solve_params"),
                         (_abi.SolveResult, "svod_solve_result")):
        body = re.search(r"struct %s \{(.*?)\};" % name, text, re.S).group(1)
        fields = re.findall(r"^\s*(uint64_t|uint32_t|double) (\w+);", body, re.M)
        ctypes_of = {"uint64_t": _abi.u64, "uint32_t": _abi.u32, "double": ctypes.c_double}
        assert [(f, ctypes_of[t]) for t, f in fields] == struct._fields_, name
    assert ctypes.sizeof(_abi.SolveParams) == 24 and ctypes.sizeof(_abi.SolveResult) == 32

