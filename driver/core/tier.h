/* SPDX-License-Identifier: GPL-2.0 */
/*
 * svod tier allocator: first-fit over [base, base + capacity) minus reserved
 * regions, on device addresses (u64 numbers only).
 *
 * Locking: none. The core is not thread-safe: the caller serialises every
 * call on one tier (and holds its lock across them).
 */
#ifndef SVOD_CORE_TIER_H
#define SVOD_CORE_TIER_H

#include "compat.h"

/**
 * struct svod_tier_node - a span of the tier: free (in the tree) or live
 * (an allocation, owned by the caller between alloc and free)
 * @rb: node in the address-ordered free-span tree (free spans only)
 * @start: first device address
 * @size: bytes
 * @subtree_max: largest free span in this node's subtree (free spans only)
 */
struct svod_tier_node {
	struct rb_node rb;
	u64 start;
	u64 size;
	u64 subtree_max;
};

/**
 * struct svod_tier_region - a reserved [base, base + size) range
 * @base: first device address
 * @size: bytes, > 0
 */
struct svod_tier_region {
	u64 base;
	u64 size;
};

/**
 * struct svod_tier - one tier's allocator state
 * @base: first device address of the tier
 * @capacity: bytes in the tier, reserved regions included
 * @align: minimum alignment of every allocation, a power of two
 * @free: free spans, address-ordered, augmented with subtree_max
 * @free_bytes: sum of free spans
 * @live_bytes: sum of live allocations
 * @reserved_bytes: bytes covered by reserved regions (overlaps counted once)
 * @nr_free_spans: number of free spans
 * @nr_live: number of live allocations
 *
 * free_bytes + live_bytes + reserved_bytes == capacity at all times: the
 * head fragment an alignment leaves in front of an allocation stays free.
 */
struct svod_tier {
	u64 base;
	u64 capacity;
	u64 align;
	struct rb_root free;
	u64 free_bytes;
	u64 live_bytes;
	u64 reserved_bytes;
	u32 nr_free_spans;
	u32 nr_live;
};

int svod_tier_init(struct svod_tier *tier, u64 base, u64 capacity, u64 align,
		   const struct svod_tier_region *reserved, unsigned int nr_reserved,
		   gfp_t gfp);
void svod_tier_fini(struct svod_tier *tier);
int svod_tier_alloc(struct svod_tier *tier, u64 size, u64 align, gfp_t gfp,
		    struct svod_tier_node **out);
void svod_tier_free(struct svod_tier *tier, struct svod_tier_node *node);
u64 svod_tier_largest_free(const struct svod_tier *tier);

#endif /* SVOD_CORE_TIER_H */
