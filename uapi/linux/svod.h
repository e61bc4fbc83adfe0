/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * svod: safe sharing of an accelerator's memory tiers.
 *
 * The whole ABI of /dev/svod. Rules (Documentation/process/botching-up-ioctls.rst):
 * fixed-width fields, naturally aligned, every struct a multiple of 8 bytes,
 * explicit pad fields that must be zero, user pointers as __u64, flags checked
 * against the published masks below. Documentation/uapi.rst lists every errno.
 *
 * The ABI grows by appending: members never move, new ones are only added at
 * the end of a struct, and a new member's zero value keeps the old behaviour.
 * The driver takes the size of a command's struct from the command number
 * (_IOC_SIZE) and copies it the way openat2() and clone3() do: a struct
 * shorter than the driver's (an older binary) is zero-extended, a longer one
 * (a newer binary) is accepted only if the bytes the driver does not know are
 * zero (else -E2BIG), and at most the caller's size is written back. A struct
 * shorter than its first published layout (SVOD_*_SIZE_VER0) is -EINVAL.
 * Arrays of structs that can grow carry their element size (in/out).
 */
#ifndef _UAPI_LINUX_SVOD_H
#define _UAPI_LINUX_SVOD_H

#include <linux/const.h>
#include <linux/ioctl.h>
#include <linux/types.h>

/*
 * 1: svod 0.1 (fixed-size commands, reserved regions inside svod_tier_info).
 * 2: growable commands, element sizes, reserved regions in their own array.
 */
#define SVOD_ABI_VERSION	2

/* Unassigned in Documentation/userspace-api/ioctl/ioctl-number.rst (6.1). */
#define SVOD_IOCTL_MAGIC	0xC5

#define SVOD_NAME_LEN		32

/** struct svod_region - a [base, base + size) range of device addresses */
struct svod_region {
	__u64 base;
	__u64 size;
};

/* svod_tier_info.flags */
#define SVOD_TIER_GONE		_BITUL(0)	/* device removed: calls fail with -ENODEV */
/*
 * The opener of the file asking may not use the tier (its owner, group and
 * mode, Documentation/uapi.rst "Access"): ALLOC and IMPORT fail with -EACCES.
 */
#define SVOD_TIER_NO_ACCESS	_BITUL(1)

/**
 * struct svod_tier_info - one tier, as reported by SVOD_IOCTL_QUERY
 * @id: stable id, what SVOD_IOCTL_ALLOC takes
 * @flags: SVOD_TIER_*
 * @name: NUL-terminated tier name
 * @device: NUL-terminated name of the owning PCI device (e.g. "0000:00:04.0")
 * @device_base: device-side address of the tier's first byte
 * @capacity: bytes in the tier, reserved regions included
 * @align: the tier's minimum alignment (a power of two)
 * @free_bytes: bytes free for allocation
 * @largest_free: the largest free span
 * @reserved_bytes: bytes covered by reserved regions
 * @nr_free_spans: number of free spans
 * @nr_live: live allocations in the tier, all files together
 * @nr_reserved: the tier's reserved regions
 * @first_reserved: index of the tier's first reserved region in the
 *	array at svod_query.regions_ptr; its regions are the @nr_reserved
 *	entries from there (those that fit in the caller's array)
 * @cpu_bytes: bytes moved by the CPU engine (stage and read)
 * @dma_bytes: bytes moved by the DMA engine (stage and read)
 *
 * Elements are svod_query.tier_info_size bytes apart; a field the driver
 * does not know reads as zero.
 */
struct svod_tier_info {
	__u32 id;
	__u32 flags;
	char name[SVOD_NAME_LEN];
	char device[SVOD_NAME_LEN];
	__u64 device_base;
	__u64 capacity;
	__u64 align;
	__u64 free_bytes;
	__u64 largest_free;
	__u64 reserved_bytes;
	__u32 nr_free_spans;
	__u32 nr_live;
	__u32 nr_reserved;
	__u32 first_reserved;
	__u64 cpu_bytes;
	__u64 dma_bytes;
};

#define SVOD_TIER_INFO_SIZE_VER0	152	/* ABI 2 */

/**
 * struct svod_query - SVOD_IOCTL_QUERY
 * @abi_version: out: SVOD_ABI_VERSION
 * @flags: in: zero
 * @nr_tiers: in: entries the array at @tiers_ptr holds; out: tiers that exist.
 *	The driver fills min(in, out) entries; a caller that sees out > in
 *	retries with a larger array.
 * @tier_info_size: in: bytes per entry of the array at @tiers_ptr, at least
 *	SVOD_TIER_INFO_SIZE_VER0, or 0 for SVOD_TIER_INFO_SIZE_VER0; out: the
 *	driver's sizeof(struct svod_tier_info). The driver writes
 *	min(in, its own) bytes of each entry and zeroes the rest of the entry.
 * @tiers_ptr: in: user array of struct svod_tier_info (may be 0 if @nr_tiers is 0)
 * @nr_regions: in: entries the array at @regions_ptr holds; out: reserved
 *	regions of all tiers reported. The driver fills min(in, out) entries.
 * @pad: zero
 * @regions_ptr: in: user array of struct svod_region (may be 0 if
 *	@nr_regions is 0): the reserved regions of the tiers reported, tier
 *	after tier (see svod_tier_info.first_reserved)
 */
struct svod_query {
	__u32 abi_version;
	__u32 flags;
	__u32 nr_tiers;
	__u32 tier_info_size;
	__u64 tiers_ptr;
	__u32 nr_regions;
	__u32 pad;
	__u64 regions_ptr;
};

#define SVOD_QUERY_SIZE_VER0	24	/* ABI 2 without the regions */

/*
 * svod_alloc.flags. MAPPABLE rounds the size up to the kernel's page size
 * and aligns the start to it (at least), so the allocation can be mapped
 * (SVOD_IOCTL_MAP_OFFSET, mmap()); a tier whose BAR offset and device base
 * differ by other than a multiple of the page size refuses it (-EOPNOTSUPP).
 */
#define SVOD_ALLOC_MAPPABLE	_BITUL(0)
#define SVOD_ALLOC_FLAGS	SVOD_ALLOC_MAPPABLE

/**
 * struct svod_alloc - SVOD_IOCTL_ALLOC
 * @tier: in: tier id
 * @flags: in: SVOD_ALLOC_*
 * @size: in: bytes, > 0
 * @align: in: 0 for the tier's alignment, else a power of two
 * @handle: out: the handle, valid in this open file only; an opaque value
 *	(its bits are no ABI)
 * @device_addr: out: device-side address of the first byte
 * @capacity: out: bytes granted (== @size, rounded up to the page size
 *	with SVOD_ALLOC_MAPPABLE)
 * @id: out (since SVOD_ALLOC_SIZE_VER1): the handle's slot in the file's
 *	table, from 0; the most recently freed id is used again first
 * @generation: out (since SVOD_ALLOC_SIZE_VER1): which use of @id this is:
 *	at least 1, and higher at each reuse of @id (uapi.rst, "Handles")
 */
struct svod_alloc {
	__u32 tier;
	__u32 flags;
	__u64 size;
	__u64 align;
	__u64 handle;
	__u64 device_addr;
	__u64 capacity;
	__u32 id;
	__u32 generation;
};

#define SVOD_ALLOC_SIZE_VER0	48
#define SVOD_ALLOC_SIZE_VER1	56

/**
 * struct svod_free - SVOD_IOCTL_FREE
 * @handle: in
 * @flags: in: zero (cancel the handle's asynchronous transfers) or
 *	SVOD_FREE_AFTER_USE (let them finish; the range goes back to the
 *	tier after the last one has signalled)
 * @pad: zero
 */
struct svod_free {
	__u64 handle;
	__u32 flags;
	__u32 pad;
};

#define SVOD_FREE_SIZE_VER0	16

#define SVOD_FREE_AFTER_USE	_BITUL(0)
#define SVOD_FREE_FLAGS		SVOD_FREE_AFTER_USE

/**
 * struct svod_resolve - SVOD_IOCTL_RESOLVE
 * @handle: in
 * @flags: in: zero
 * @tier: out: tier id
 * @device_addr: out
 * @capacity: out
 */
struct svod_resolve {
	__u64 handle;
	__u32 flags;
	__u32 tier;
	__u64 device_addr;
	__u64 capacity;
};

#define SVOD_RESOLVE_SIZE_VER0	32

/*
 * svod_xfer.flags: at most one engine bit (none means auto); ASYNC queues
 * the transfer and returns (SVOD_IOCTL_WAIT, Documentation/staging.rst);
 * FENCE_FD, with ASYNC only, also returns a sync_file for it; IN_FENCE,
 * with ASYNC only, makes it wait for the sync_file at @in_fence_fd first.
 */
#define SVOD_XFER_CPU		_BITUL(0)
#define SVOD_XFER_DMA		_BITUL(1)
#define SVOD_XFER_ASYNC		_BITUL(2)
#define SVOD_XFER_FENCE_FD	_BITUL(3)
#define SVOD_XFER_IN_FENCE	_BITUL(4)
#define SVOD_XFER_FLAGS		(SVOD_XFER_CPU | SVOD_XFER_DMA | \
				 SVOD_XFER_ASYNC | SVOD_XFER_FENCE_FD | \
				 SVOD_XFER_IN_FENCE)

/**
 * struct svod_xfer - SVOD_IOCTL_STAGE (user to device) and SVOD_IOCTL_READ
 * (device to user)
 * @handle: in
 * @offset: in: byte offset inside the allocation
 * @user_ptr: in: user buffer
 * @length: in: bytes; 0 is a no-op
 * @flags: in: SVOD_XFER_*
 * @pad: zero
 * @done: out, written whatever the outcome (also when the call fails, as
 *	long as the struct is writable): bytes from @offset moved when the
 *	call returned, @resume included (0 when it failed on its arguments;
 *	less than @length only when it failed: a signal, a fault in the user
 *	buffer, a DMA error or timeout)
 * @resume: in/out (since SVOD_XFER_SIZE_VER1): bytes from @offset that an
 *	earlier, interrupted call of this same request moved; the call moves
 *	the rest. 0 for a new request; at most @length. When a signal stops
 *	a transfer between two chunks the driver writes @done here, so a call
 *	restarted after an SA_RESTART handler, or the same struct issued
 *	again after EINTR, goes on where it stopped.
 * @seqno: out (since SVOD_XFER_SIZE_VER2), with SVOD_XFER_ASYNC: the
 *	transfer's value on the file's timeline, 1 for the file's first
 *	asynchronous transfer and one more for each one after it (never
 *	reused, never wraps); what SVOD_IOCTL_WAIT takes. 0 otherwise.
 * @fence_fd: out (since SVOD_XFER_SIZE_VER2), with SVOD_XFER_FENCE_FD: a
 *	sync_file (O_CLOEXEC) that signals when the transfer ends, its
 *	status the transfer's errno if it failed. -1 otherwise.
 * @pad2: zero
 * @in_fence_fd: in (since SVOD_XFER_SIZE_VER3), with SVOD_XFER_IN_FENCE: a
 *	sync_file (svod's or any driver's) the transfer waits for before it
 *	starts, without a thread; the file's later transfers wait behind it.
 *	If it signals an error the transfer fails with that error, and if it
 *	has not signalled async_timeout_ms after the submission with
 *	ETIMEDOUT; either way no byte moves. 0 without the flag.
 * @pad3: zero
 */
struct svod_xfer {
	__u64 handle;
	__u64 offset;
	__u64 user_ptr;
	__u64 length;
	__u32 flags;
	__u32 pad;
	__u64 done;
	__u64 resume;
	__u64 seqno;
	__s32 fence_fd;
	__u32 pad2;
	__s32 in_fence_fd;
	__u32 pad3;
};

#define SVOD_XFER_SIZE_VER0	48	/* no @resume: a signal gives EINTR */
#define SVOD_XFER_SIZE_VER1	56	/* no @seqno, @fence_fd */
#define SVOD_XFER_SIZE_VER2	72	/* no @in_fence_fd */
#define SVOD_XFER_SIZE_VER3	80

/**
 * struct svod_wait - SVOD_IOCTL_WAIT: the end of an asynchronous transfer
 * @seqno: in: a value SVOD_IOCTL_STAGE or READ returned on this file
 * @deadline_ns: in: CLOCK_MONOTONIC time to give up at; 0 (or any time
 *	already past) only looks; INT64_MAX waits for ever
 * @done: out: bytes from the transfer's offset it moved (its length when
 *	@status is 0)
 * @status: out: 0, or the negative errno the transfer failed with
 * @flags: zero
 */
struct svod_wait {
	__u64 seqno;
	__s64 deadline_ns;
	__u64 done;
	__s32 status;
	__u32 flags;
};

#define SVOD_WAIT_SIZE_VER0	32

/* svod_plan_event.op */
#define SVOD_PLAN_ALLOC		1
#define SVOD_PLAN_FREE		2

/**
 * struct svod_plan_event - one event of a plan
 * @op: SVOD_PLAN_ALLOC or SVOD_PLAN_FREE
 * @id: buffer id (an alloc names it, a free refers to it)
 * @size: ALLOC: bytes; FREE: zero
 * @align: ALLOC: alignment, 0 or 1 for none; FREE: zero
 */
struct svod_plan_event {
	__u32 op;
	__u32 id;
	__u64 size;
	__u64 align;
};

/* svod_plan.strategy */
#define SVOD_PLAN_TLSF		0	/* the reference TLSF, exactly */
#define SVOD_PLAN_BEST		1	/* offline best fit, never worse than TLSF */

#define SVOD_PLAN_NO_OFFSET	(~0ULL)

/* svod_plan.strategy_used: which plan's offsets were returned */
#define SVOD_PLAN_USED_TLSF	0	/* the reference TLSF */
#define SVOD_PLAN_USED_SIZE	1	/* greedy by size (never returned) */
#define SVOD_PLAN_USED_AREA	2	/* greedy by area (never returned) */
#define SVOD_PLAN_USED_SKY	3	/* SVOD_PLAN_BEST's skyline passes */

/**
 * struct svod_plan - SVOD_IOCTL_PLAN
 * @arena_size: in: bytes in the arena
 * @block_size: in: minimum block size (reference: 256)
 * @lv2_cnt: in: second-level buckets (reference: 32)
 * @strategy: in: SVOD_PLAN_*
 * @flags: in: zero
 * @nr_events: in: entries at @events_ptr and @offsets_ptr
 * @failed_event: out: index of the failing event, or ~0U
 * @events_ptr: in: user array of struct svod_plan_event
 * @offsets_ptr: in: user array of __u64; out: the offset of each ALLOC event,
 *	SVOD_PLAN_NO_OFFSET for FREE events
 * @peak: out: largest end offset of any allocation
 * @lower_bound: out: largest sum of live sizes at any time
 * @strategy_used: out: SVOD_PLAN_USED_*, the plan whose offsets were
 *	returned (appended to the first layout, SVOD_PLAN_SIZE_VER0)
 * @pad2: zero
 * @event_size: in (since SVOD_PLAN_SIZE_VER2): bytes per entry of the array
 *	at @events_ptr, 0 for SVOD_PLAN_EVENT_SIZE_VER0; else at least that, a
 *	multiple of 8 and at most 4096. Bytes of an entry past the driver's
 *	struct svod_plan_event must be zero (-E2BIG).
 * @pad3: zero
 */
struct svod_plan {
	__u64 arena_size;
	__u32 block_size;
	__u32 lv2_cnt;
	__u32 strategy;
	__u32 flags;
	__u32 nr_events;
	__u32 failed_event;
	__u64 events_ptr;
	__u64 offsets_ptr;
	__u64 peak;
	__u64 lower_bound;
	__u32 strategy_used;
	__u32 pad2;
	__u32 event_size;
	__u32 pad3;
};

#define SVOD_PLAN_SIZE_VER0	64
#define SVOD_PLAN_SIZE_VER1	72	/* no @event_size: 24-byte events */
#define SVOD_PLAN_SIZE_VER2	80
#define SVOD_PLAN_EVENT_SIZE_VER0	24

/**
 * struct svod_map_offset - SVOD_IOCTL_MAP_OFFSET
 * @handle: in: a live handle of this file
 * @flags: in: zero
 * @pad: zero
 * @offset: out: the offset to pass to mmap() on this file for the
 *	allocation's first byte (the same on every call for one allocation;
 *	never reused for another one)
 * @size: out: bytes that can be mapped from @offset (the allocation's size)
 *
 * mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, @offset + k) maps
 * bytes [k, k + len) of the allocation write-combined, k a multiple of the
 * page size. The mapping is revoked (any access raises SIGBUS) when the
 * allocation is freed: FREE, the file's release, device removal.
 */
struct svod_map_offset {
	__u64 handle;
	__u32 flags;
	__u32 pad;
	__u64 offset;
	__u64 size;
};

#define SVOD_MAP_OFFSET_SIZE_VER0	32

/*
 * svod_export.flags: WRITE makes a read-write dma-buf; without it the fd is
 * read-only (O_RDONLY): its mmap() is read-only, an IMPORT of it gives a
 * read-only handle, and no importer may write through it.
 */
#define SVOD_EXPORT_WRITE	_BITUL(0)
#define SVOD_EXPORT_FLAGS	SVOD_EXPORT_WRITE

/**
 * struct svod_export - SVOD_IOCTL_EXPORT: a dma-buf fd for an allocation
 * @handle: in: a live handle of this file (an imported one too)
 * @flags: in: SVOD_EXPORT_*
 * @fd: out: a new dma-buf fd (O_CLOEXEC) for the whole allocation
 * @size: out: bytes in the dma-buf (the allocation's capacity)
 *
 * Each call makes a new dma-buf; holding it keeps the allocation's range
 * out of its tier (Documentation/uapi.rst, "Sharing").
 */
struct svod_export {
	__u64 handle;
	__u32 flags;
	__s32 fd;
	__u64 size;
};

#define SVOD_EXPORT_SIZE_VER0	24

/* svod_import.access: what the new handle may do (READ always). */
#define SVOD_ACCESS_READ	_BITUL(0)
#define SVOD_ACCESS_WRITE	_BITUL(1)

/**
 * struct svod_import - SVOD_IOCTL_IMPORT: a handle for a dma-buf of svod
 * @fd: in: a dma-buf fd that svod exported
 * @flags: in: zero
 * @handle: out: a new handle of this file naming the dma-buf's allocation
 * @device_addr: out: device-side address of its first byte
 * @capacity: out: bytes
 * @tier: out: tier id
 * @access: out: SVOD_ACCESS_*; WRITE if the dma-buf is read-write
 * @id: out: the handle's slot, as in struct svod_alloc
 * @generation: out: as in struct svod_alloc
 */
struct svod_import {
	__s32 fd;
	__u32 flags;
	__u64 handle;
	__u64 device_addr;
	__u64 capacity;
	__u32 tier;
	__u32 access;
	__u32 id;
	__u32 generation;
};

#define SVOD_IMPORT_SIZE_VER0	48

/* svod_batch_entry.op */
#define SVOD_BATCH_STAGE	1	/* user buffer to the allocation */
#define SVOD_BATCH_READ		2	/* the allocation to the user buffer */

/**
 * struct svod_batch_entry - one transfer of SVOD_IOCTL_BATCH
 * @handle: in: a live handle of this file
 * @offset: in: byte offset inside the allocation
 * @user_ptr: in: user buffer
 * @length: in: bytes; 0 moves nothing
 * @op: in: SVOD_BATCH_STAGE or SVOD_BATCH_READ
 * @flags: in: zero (the CPU engine moves every entry)
 *
 * Elements are svod_batch.entry_size bytes apart.
 */
struct svod_batch_entry {
	__u64 handle;
	__u64 offset;
	__u64 user_ptr;
	__u64 length;
	__u32 op;
	__u32 flags;
};

#define SVOD_BATCH_ENTRY_SIZE_VER0	40

/* Entries one SVOD_IOCTL_BATCH takes at most (-E2BIG beyond). */
#define SVOD_BATCH_MAX_ENTRIES	4096

/*
 * svod_batch.flags: FENCE_FD also returns a sync_file for the batch;
 * IN_FENCE makes the batch wait for the sync_file at @in_fence_fd first.
 */
#define SVOD_BATCH_FENCE_FD	_BITUL(0)
#define SVOD_BATCH_IN_FENCE	_BITUL(1)
#define SVOD_BATCH_FLAGS	(SVOD_BATCH_FENCE_FD | SVOD_BATCH_IN_FENCE)

/**
 * struct svod_batch - SVOD_IOCTL_BATCH: many transfers, one timeline value
 * @entries_ptr: in: user array of struct svod_batch_entry
 * @nr_entries: in: entries at @entries_ptr, 1..SVOD_BATCH_MAX_ENTRIES
 * @entry_size: in: bytes per entry, 0 for SVOD_BATCH_ENTRY_SIZE_VER0;
 *	else at least that, a multiple of 8 and at most 4096. Bytes of an
 *	entry past the driver's struct svod_batch_entry must be zero (-E2BIG).
 * @flags: in: SVOD_BATCH_*
 * @failed_entry: out, written whatever the outcome: the index of the
 *	first entry the call could not take (SVOD_BATCH_MAX_ENTRIES for a
 *	count past the cap, 0 for an @entry_size too small), or ~0U
 * @seqno: out: the batch's value on the file's timeline (as
 *	svod_xfer.seqno: what SVOD_IOCTL_WAIT takes); 0 when the call failed
 * @fence_fd: out, with SVOD_BATCH_FENCE_FD: a sync_file (O_CLOEXEC) that
 *	signals when the whole batch ends; -1 otherwise
 * @pad: zero
 * @in_fence_fd: in (since SVOD_BATCH_SIZE_VER1), with SVOD_BATCH_IN_FENCE:
 *	a sync_file the batch waits for before its first entry starts, as
 *	svod_xfer.in_fence_fd; 0 without the flag
 * @pad2: zero
 *
 * The batch is asynchronous: every entry is checked and its user buffer
 * pinned before any is queued; one bad entry fails the call and nothing is
 * queued or pinned. The entries then run in order, as one transfer of the
 * file's queue (Documentation/staging.rst, "Batches").
 */
struct svod_batch {
	__u64 entries_ptr;
	__u32 nr_entries;
	__u32 entry_size;
	__u32 flags;
	__u32 failed_entry;
	__u64 seqno;
	__s32 fence_fd;
	__u32 pad;
	__s32 in_fence_fd;
	__u32 pad2;
};

#define SVOD_BATCH_SIZE_VER0	40	/* no @in_fence_fd */
#define SVOD_BATCH_SIZE_VER1	48

#define SVOD_IOCTL_QUERY	_IOWR(SVOD_IOCTL_MAGIC, 0x00, struct svod_query)
#define SVOD_IOCTL_ALLOC	_IOWR(SVOD_IOCTL_MAGIC, 0x01, struct svod_alloc)
#define SVOD_IOCTL_FREE		_IOW(SVOD_IOCTL_MAGIC, 0x02, struct svod_free)
#define SVOD_IOCTL_RESOLVE	_IOWR(SVOD_IOCTL_MAGIC, 0x03, struct svod_resolve)
#define SVOD_IOCTL_STAGE	_IOWR(SVOD_IOCTL_MAGIC, 0x04, struct svod_xfer)
#define SVOD_IOCTL_READ		_IOWR(SVOD_IOCTL_MAGIC, 0x05, struct svod_xfer)
#define SVOD_IOCTL_PLAN		_IOWR(SVOD_IOCTL_MAGIC, 0x06, struct svod_plan)
#define SVOD_IOCTL_MAP_OFFSET	_IOWR(SVOD_IOCTL_MAGIC, 0x07, struct svod_map_offset)
#define SVOD_IOCTL_WAIT		_IOWR(SVOD_IOCTL_MAGIC, 0x08, struct svod_wait)
#define SVOD_IOCTL_EXPORT	_IOWR(SVOD_IOCTL_MAGIC, 0x09, struct svod_export)
#define SVOD_IOCTL_IMPORT	_IOWR(SVOD_IOCTL_MAGIC, 0x0a, struct svod_import)
#define SVOD_IOCTL_BATCH	_IOWR(SVOD_IOCTL_MAGIC, 0x0b, struct svod_batch)

#endif /* _UAPI_LINUX_SVOD_H */
