/* SPDX-License-Identifier: GPL-2.0 */
/*
 * svod allocations: a range of a tier, held through handles of open files
 * (ALLOC's, IMPORT's) and dma-bufs (dmabuf.c), the ioctls that create, free
 * and describe them, and the account each one is charged to.
 */
#ifndef SVOD_ALLOC_H
#define SVOD_ALLOC_H

#include <linux/kref.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/xarray.h>

#include "core/range.h"

struct svod_dev_tier;
struct svod_file;
struct svod_map;

/**
 * struct svod_account - what one open file is charged, per tier
 * @ref: one reference for the file, one per allocation charged to it: the
 *	bytes of an allocation stay charged until its range is back in its
 *	tier, also after the file is closed
 * @lock: protects @usage and every charged allocation's @exports
 * @usage: tier id -> struct svod_usage
 */
struct svod_account {
	struct kref ref;
	/* Protects @usage and the @exports of the allocations charged here. */
	struct mutex lock;
	struct xarray usage;
};

/**
 * struct svod_usage - one account's holdings in one tier (present while
 *	any member is nonzero)
 * @bytes: bytes of the allocations charged (ALLOC's, until their range is
 *	back in the tier)
 * @handles: live handles of the file (ALLOC's and IMPORT's)
 * @exported: bytes of charged allocations with at least one dma-buf
 * @imported: bytes named by the file's imported handles
 */
struct svod_usage {
	u64 bytes;
	u32 handles;
	u64 exported;
	u64 imported;
};

/**
 * struct svod_allocation - one allocation, live while anything names it
 * @ref: one reference per handle (in any file), per dma-buf and per
 *	transfer in flight; the range is scrubbed and returned to the tier
 *	when the last one goes
 * @tier: the tier (holds a reference)
 * @acct: the account of the file that allocated it (holds a reference)
 * @node: the range in @tier's allocator, embedded (svod_range_insert())
 * @tier_link: entry in @tier's live list (@tier's lock)
 * @maps: every mmap range of it not revoked yet, its handles' and its
 *	dma-bufs' (svod_mmap_sem)
 * @exports: its live dma-bufs (@acct's lock)
 */
struct svod_allocation {
	struct kref ref;
	struct svod_dev_tier *tier;
	struct svod_account *acct;
	struct svod_range_node node;
	struct list_head tier_link;
	struct list_head maps;
	unsigned int exports;
};

/**
 * struct svod_hold - what one handle of one file names
 * @alloc: the allocation (holds a reference)
 * @map: the handle's mmap offset range, NULL until SVOD_IOCTL_MAP_OFFSET
 *	and after revocation (svod_mmap_sem)
 * @access: SVOD_ACCESS_*
 * @imported: made by SVOD_IOCTL_IMPORT
 */
struct svod_hold {
	struct svod_allocation *alloc;
	struct svod_map *map;
	u32 access;
	bool imported;
};

/* Device address of the allocation's first byte. */
static inline u64 svod_allocation_start(const struct svod_allocation *alloc)
{
	return alloc->node.start;
}

/* Bytes in the allocation. */
static inline u64 svod_allocation_size(const struct svod_allocation *alloc)
{
	return alloc->node.size;
}

/*
 * Latencies for the tracepoints: the clock is read only while the event is
 * enabled (the guest's clocksource may be a slow MMIO read, as HPET is).
 * svod_trace_clock(trace_svod_x_enabled()) at the start, svod_trace_since()
 * at the end: 0 if the event was enabled in between.
 */
static inline u64 svod_trace_clock(bool enabled)
{
	return enabled ? ktime_get_ns() : 0;
}

static inline u64 svod_trace_since(u64 t0)
{
	return t0 ? ktime_get_ns() - t0 : 0;
}

void svod_allocation_put(struct svod_allocation *alloc);
struct svod_allocation *svod_allocation_get(struct svod_file *sf, u64 handle,
					    u32 access, const void **key);
int svod_hold_add(struct svod_file *sf, struct svod_allocation *alloc,
		  u32 access, u64 *handle);
void svod_file_free_all(struct svod_file *sf);
u64 svod_allocation_bar_off(const struct svod_allocation *alloc);
phys_addr_t svod_allocation_phys(const struct svod_allocation *alloc);
bool svod_allocation_pfn(const struct svod_allocation *alloc, unsigned long *pfn);
struct svod_account *svod_account_create(void);
void svod_account_put(struct svod_account *acct);
void svod_account_export(struct svod_allocation *alloc, bool add);

#endif /* SVOD_ALLOC_H */
