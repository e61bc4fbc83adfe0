/* SPDX-License-Identifier: GPL-2.0 */
/*
 * svod allocations: a range of a tier held through one handle of one open
 * file, and the ioctls that create, free and describe them.
 */
#ifndef SVOD_ALLOC_H
#define SVOD_ALLOC_H

#include <linux/kref.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/types.h>

#include "core/range.h"

struct svod_dev_tier;
struct svod_file;
struct svod_map;

/**
 * struct svod_allocation - one live allocation
 * @ref: one reference for the handle, one per transfer in flight; the range
 *	is scrubbed and returned to the tier when the last one goes
 * @tier: the tier (holds a reference)
 * @node: the range in @tier's allocator, embedded (svod_range_insert())
 * @tier_link: entry in @tier's live list (@tier's lock)
 * @map: its mmap offset range, NULL until SVOD_IOCTL_MAP_OFFSET and after
 *	revocation (svod_mmap_sem)
 */
struct svod_allocation {
	struct kref ref;
	struct svod_dev_tier *tier;
	struct svod_range_node node;
	struct list_head tier_link;
	struct svod_map *map;
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
struct svod_allocation *svod_allocation_get(struct svod_file *sf, u64 handle);
void svod_file_free_all(struct svod_file *sf);

#endif /* SVOD_ALLOC_H */
