# SPDX-License-Identifier: MIT OR GPL-2.0
"""What only a driver can say, on /dev/svod: per-file quotas (QuotaError)
and a removed device (DeviceGoneError). Needs root: module parameters and
driver bind/unbind are written through sysfs."""
import os

import pytest

import svod
from conftest import DEVICE, have_device

pytestmark = pytest.mark.skipif(not have_device() or os.geteuid() != 0,
                                reason=f"needs root and {DEVICE}")

PARAMS = "/sys/module/svod/parameters"
DRIVER = "/sys/bus/pci/drivers/svod"


def _write(path, value):
    with open(path, "w", encoding="ascii") as f:
        f.write(str(value))


@pytest.fixture
def param():
    """Sets svod module parameters, restoring their values afterwards."""
    saved = {}

    def set_param(name, value):
        path = os.path.join(PARAMS, name)
        if not os.access(path, os.W_OK):
            pytest.skip(f"{path} is not writable")
        if name not in saved:
            with open(path, encoding="ascii") as f:
                saved[name] = f.read().strip()
        _write(path, value)

    yield set_param
    for name, value in saved.items():
        _write(os.path.join(PARAMS, name), value)


def test_max_handles_is_a_quota_error(param, shape):
    param("max_handles", 3)                       # read when the file opens
    with svod.StorageAllocator(path=DEVICE, **shape) as a:
        handles = [a.allocate(64) for _ in range(3)]
        with pytest.raises(svod.QuotaError) as info:
            a.allocate(64)
        assert info.value.errno == 24             # EMFILE
        assert isinstance(info.value, svod.StorageExhaustedError)
        a.free(handles[0])
        a.allocate(64)                            # room again


def test_max_bytes_is_a_quota_error(param, shape):
    param("max_bytes", 8192)
    with svod.StorageAllocator(path=DEVICE, **shape) as a:
        h = a.allocate(8192)
        with pytest.raises(svod.QuotaError) as info:
            a.allocate(64)
        assert info.value.errno == 122            # EDQUOT
        a.free(h)
        a.allocate(4096)


def test_removed_device_is_device_gone():
    """Unbind the second device under a live allocation, then bind it back."""
    other = [t for t in svod.tiers(DEVICE) if t.name.startswith("bar2-") and not t.nr_live]
    if not other or not os.access(os.path.join(DRIVER, "unbind"), os.W_OK):
        pytest.skip("needs an idle second device and the svod driver's sysfs")
    t = other[0]
    a = svod.StorageAllocator(path=DEVICE, tier=t.name, capacity_bytes=t.capacity,
                              base=t.base, reserved=t.reserved, align=t.align)
    try:
        h = a.allocate(4096)
        _write(os.path.join(DRIVER, "unbind"), t.device)
        try:
            with pytest.raises(svod.DeviceGoneError):
                a.resolve(h)
            with pytest.raises(svod.DeviceGoneError):
                a.stage(None, h, b"x")
            with pytest.raises(svod.DeviceGoneError):
                a.allocate(64)
            gone = {x.name: x for x in a.tiers()}[t.name]
            assert gone.gone
            a.free(h)                             # freeing still works
            with pytest.raises(svod.StaleHandleError):
                a.free(h)
        finally:
            _write(os.path.join(DRIVER, "bind"), t.device)
    finally:
        a.close()
    back = {x.name: x for x in svod.tiers(DEVICE)}[t.name]
    assert (back.capacity, back.gone) == (t.capacity, False)
