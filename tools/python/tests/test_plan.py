# SPDX-License-Identifier: GPL-2.0
"""Arena planning: svod.TLSFAllocator / svod.plan on /dev/svod against the
reference TLSF planner (tools/plan/tlsf_ref.py, the line-by-line port of
seeds/000), with written-out expectations."""
import pytest

import reference
import svod
from conftest import BACKENDS, DEVICE, have_device

_TLSF = reference.load_tlsf_reference()


class RefTLSF:
    """The reference planner with svod's exception types: OutOfMemory is a
    StorageExhaustedError, UnknownOffset and DoubleFree are ValueErrors."""

    def __init__(self, size, base=0, block_size=256, lv2_cnt=32):
        self.t = _TLSF.TlsfAllocator(size, base, block_size, lv2_cnt)

    def _call(self, fn, *args):
        try:
            return fn(*args)
        except _TLSF.TlsfError as err:
            if err.kind == "OutOfMemory":
                raise svod.StorageExhaustedError(str(err)) from None
            raise ValueError(err.kind) from None

    def alloc(self, size, align=1):
        return self._call(self.t.alloc, size, align)

    def free(self, offset):
        return self._call(self.t.free, offset)

    @property
    def peak_used(self):
        return self.t.peak()

    def close(self):
        pass


@pytest.fixture(params=BACKENDS)
def tlsf(request):
    """A TLSFAllocator factory of one implementation."""
    made = []
    if request.param == "svod":
        if not have_device():
            pytest.skip(f"no {DEVICE}")

        def make(*args, **kwargs):
            made.append(svod.TLSFAllocator(*args, path=DEVICE, **kwargs))
            return made[-1]
    else:
        if _TLSF is None:
            pytest.skip("tools/plan/tlsf_ref.py is not here")

        def make(*args, **kwargs):
            made.append(RefTLSF(*args, **kwargs))
            return made[-1]
    yield make
    for m in made:
        m.close()


def test_tlsf_offsets(tlsf):
    t = tlsf(1 << 20)
    a = t.alloc(1000)
    b = t.alloc(300)
    t.free(a)
    c = t.alloc(500)
    d = t.alloc(2000, 4096)
    t.free(b)
    e = t.alloc(0)
    f = t.alloc(0)
    assert (a, b, c, d, e, f) == (0, 1000, 0, 4096, 500, 756)
    assert t.peak_used == 6096
    with pytest.raises(ValueError):
        t.free(b)            # freed already
    with pytest.raises(ValueError):
        t.free(12345)        # never returned


def test_tlsf_exhaustion_and_base(tlsf):
    t = tlsf(4096)
    assert t.alloc(4096) == 0
    with pytest.raises(svod.StorageExhaustedError):
        t.alloc(1)
    based = tlsf(1 << 16, 0x1000)
    assert (based.alloc(100), based.alloc(100)) == (0x1000, 0x1100)


EVENTS = [("alloc", 1, 1000), ("alloc", 2, 300), ("free", 1), ("alloc", 3, 500),
          ("alloc", 4, 2000, 4096), ("free", 2), ("alloc", 5, 0), ("alloc", 6, 0)]


@pytest.mark.skipif(not have_device(), reason=f"no {DEVICE}")
def test_plan_whole_schedule():
    res = svod.plan(EVENTS, 1 << 20, path=DEVICE)
    assert res.offsets == [0, 1000, None, 0, 4096, None, 500, 756]
    assert res.peak == 6096
    assert res.lower_bound == 2800          # b + c + d live together
    best = svod.plan(EVENTS, 1 << 20, strategy="best", path=DEVICE)
    assert best.peak <= res.peak and best.lower_bound == 2800


@pytest.mark.skipif(not have_device(), reason=f"no {DEVICE}")
def test_plan_errors():
    with pytest.raises(svod.PlanExhaustedError) as info:
        svod.plan(EVENTS, 4096, path=DEVICE)
    assert info.value.failed_event == 4 and info.value.offsets[:4] == [0, 1000, None, 0]
    with pytest.raises(svod.PlanError) as bad:
        svod.plan([("alloc", 1, 10), ("alloc", 1, 10)], 4096, path=DEVICE)
    assert bad.value.failed_event == 1
    with pytest.raises(svod.PlanError) as params:
        svod.plan(EVENTS, 0, path=DEVICE)
    assert params.value.failed_event is None
    with pytest.raises(ValueError):
        svod.plan([("move", 1)], 4096, path=DEVICE)
