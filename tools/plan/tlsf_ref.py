#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR GPL-2.0
"""Line-by-line Python port of the reference TLSF planner
(seeds/000_e02b2738333224c2.txt, Rust), used as the oracle of the
differential test. Buckets are Python lists used exactly like the
reference's Vec: append (push), [0] (front), index() + pop(pos)
(iter().position() + remove(pos)). Block metadata is a dict keyed by start
offset, like the reference's HashMap. usize is 64 bits: callers keep inputs
where the reference would not wrap (plan_ref() checks that, below).

plan_ref() adds what the svod planner puts around the reference: buffer ids
mapped to offsets, and the errors of Documentation/planner.rst.
"""

import errno

U64_MAX = (1 << 64) - 1


class TlsfError(Exception):
    """OutOfMemory, UnknownOffset or DoubleFree of the reference."""

    def __init__(self, kind, value):
        super().__init__(kind, value)
        self.kind = kind
        self.value = value


class BlockMeta:
    __slots__ = ("size", "next", "prev", "is_free")

    def __init__(self, size, next, prev, is_free):
        self.size = size
        self.next = next
        self.prev = prev
        self.is_free = is_free

    def copy(self):
        return BlockMeta(self.size, self.next, self.prev, self.is_free)


def bit_length(n):
    return 0 if n == 0 else n.bit_length()


def round_up(n, granule):
    if granule <= 1:
        return n
    return -(-n // granule) * granule  # n.div_ceil(granule) * granule


class TlsfAllocator:
    def __init__(self, size, base, block_size, lv2_cnt):
        lv2_cnt = max(lv2_cnt, 1)
        l2_bits = bit_length(lv2_cnt)
        lv1_levels = bit_length(size) + 1

        self.base = base
        self.block_size = block_size
        self.l2_bits = l2_bits
        self.storage = [[[] for _ in range(1 << l2_bits)] for _ in range(lv1_levels)]
        self.lv1_entries = [0] * lv1_levels
        self.blocks = {}
        self.peak_used = 0

        # Seed with one free block covering the whole arena.
        if size > 0:
            self.blocks[0] = BlockMeta(size, None, None, True)
            self.insert_block_index(0, size)

    def lv1(self, size):
        return bit_length(size)

    def lv2(self, size):
        msb = bit_length(size)
        if msb == 0:
            return 0
        shift = max(msb - self.l2_bits, 0)  # saturating_sub
        return (size - (1 << (msb - 1))) >> shift

    def insert_block_index(self, start, size):
        l1 = self.lv1(size)
        l2 = self.lv2(size)
        self.storage[l1][l2].append(start)
        self.lv1_entries[l1] += 1

    def remove_block_index(self, start, size):
        l1 = self.lv1(size)
        l2 = self.lv2(size)
        bucket = self.storage[l1][l2]
        if start in bucket:
            pos = bucket.index(start)
            bucket.pop(pos)
            self.lv1_entries[l1] -= 1

    def split_block(self, start, size, new_size):
        next = self.blocks[start].next
        assert self.blocks[start].is_free, "split target must be free"

        self.remove_block_index(start, size)
        self.blocks[start] = BlockMeta(new_size, start + new_size, self.blocks[start].prev, True)
        self.insert_block_index(start, new_size)

        remainder_start = start + new_size
        remainder_size = size - new_size
        self.blocks[remainder_start] = BlockMeta(remainder_size, next, start, True)
        self.insert_block_index(remainder_start, remainder_size)

        if next is not None and next in self.blocks:
            self.blocks[next].prev = remainder_start

    def merge_right(self, start):
        size = self.blocks[start].size
        nxt = self.blocks[start].next
        assert self.blocks[start].is_free, "merge_right target must be free"

        while nxt is not None:
            n = nxt
            if n not in self.blocks:
                break
            blk = self.blocks[n].copy()
            if not blk.is_free:
                break
            self.remove_block_index(start, size)
            self.remove_block_index(n, blk.size)
            size += blk.size
            self.blocks[start] = BlockMeta(size, blk.next, self.blocks[start].prev, True)
            self.insert_block_index(start, size)
            nxt = blk.next
            del self.blocks[n]

        if nxt is not None and nxt in self.blocks:
            self.blocks[nxt].prev = start

    def merge_block(self, start):
        # Walk left while neighbours are free, then merge right from there.
        s = start
        while True:
            prev = self.blocks[s].prev
            if prev is None or not (prev in self.blocks and self.blocks[prev].is_free):
                break
            s = prev
        self.merge_right(s)

    def alloc(self, req_size, align):
        req_size = max(req_size, self.block_size)
        align = max(align, 1)
        size = req_size + align - 1
        size = max(size, self.block_size)

        # Round size up to next bucket granularity so any block in that
        # bucket fits the request.
        msb = bit_length(size)
        if msb > self.l2_bits:
            granule_bits = msb - self.l2_bits
            granule = 1 << granule_bits
            size = (size + granule - 1) & ~(granule - 1)

        target_l1 = self.lv1(size)
        target_l2 = self.lv2(size)

        for l1 in range(target_l1, len(self.storage)):
            if self.lv1_entries[l1] == 0:
                continue
            l2_start = target_l2 if l1 == target_l1 else 0
            for l2 in range(l2_start, len(self.storage[l1])):
                if not self.storage[l1][l2]:
                    continue
                start = self.storage[l1][l2][0]
                nsize = self.blocks[start].size
                assert nsize >= size, "bucketed block must be >= requested size"

                # Handle alignment: if the natural start is misaligned,
                # split off the head so the next block starts aligned.
                aligned_start = round_up(start, align)
                if aligned_start != start:
                    head = aligned_start - start
                    self.split_block(start, nsize, head)
                    start = aligned_start
                    nsize = self.blocks[start].size

                if nsize > req_size:
                    self.split_block(start, nsize, req_size)
                self.remove_block_index(start, req_size)
                if start in self.blocks:
                    self.blocks[start].is_free = False
                abs_offset = start + self.base
                used_end = start + req_size
                if used_end > self.peak_used:
                    self.peak_used = used_end
                return abs_offset

        raise TlsfError("OutOfMemory", req_size)

    def free(self, offset):
        start = offset - self.base
        if start < 0:
            raise TlsfError("UnknownOffset", offset)
        if start not in self.blocks:
            raise TlsfError("UnknownOffset", offset)
        blk = self.blocks[start].copy()
        if blk.is_free:
            raise TlsfError("DoubleFree", offset)
        self.blocks[start] = BlockMeta(blk.size, blk.next, blk.prev, True)
        self.insert_block_index(start, blk.size)
        self.merge_block(start)

    def peak(self):
        return self.peak_used


def would_wrap(size, align, block_size, l2_bits):
    """True where the reference's alloc() arithmetic leaves 64 bits."""
    req = max(size, block_size)
    need = req + max(align, 1) - 1
    if need > U64_MAX:
        return True
    msb = bit_length(need)
    if msb > l2_bits:
        granule = 1 << (msb - l2_bits)
        if need + granule - 1 > U64_MAX:
            return True
    return False


def plan_ref(events, arena, block_size, lv2_cnt):
    """Run events [("alloc", id, size, align) | ("free", id)] through the
    reference. Returns (err, failed_event, offsets, peak): err is 0 or a
    negative errno, offsets has one entry per event (None for frees and
    events not reached)."""
    if arena == 0 or block_size == 0 or lv2_cnt > 256:
        return (-errno.EINVAL, None, [None] * len(events), 0)
    t = TlsfAllocator(arena, 0, block_size, lv2_cnt)
    live = {}
    offsets = [None] * len(events)
    for i, e in enumerate(events):
        if e[0] == "alloc":
            _, bid, size, align = e
            if bid in live or would_wrap(size, align, block_size, t.l2_bits):
                return (-errno.EINVAL, i, offsets, t.peak())
            try:
                off = t.alloc(size, align)
            except TlsfError:
                return (-errno.ENOSPC, i, offsets, t.peak())
            live[bid] = off
            offsets[i] = off
        else:
            bid = e[1]
            if bid not in live:
                return (-errno.EINVAL, i, offsets, t.peak())
            t.free(live.pop(bid))
    return (0, None, offsets, t.peak())
