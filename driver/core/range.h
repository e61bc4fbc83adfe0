/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * svod range allocator: first fit over [base, base + capacity) minus
 * reserved regions, on device addresses (u64 numbers only). The caller
 * embeds a struct svod_range_node in its own allocation record, as drm_mm's
 * callers embed a struct drm_mm_node: inserting and removing never allocate
 * and never fail for lack of memory. Only svod_range_init() allocates (one
 * array of nodes for the reserved regions).
 *
 * Locking: none. The range allocator is not thread-safe: the caller
 * serialises every call on one range, svod_range_for_each_free() walks
 * included, and holds its lock across them.
 */
#ifndef SVOD_CORE_RANGE_H
#define SVOD_CORE_RANGE_H

#include "compat.h"
#include <linux/rbtree_augmented.h>

/**
 * struct svod_range_node - one occupied span of a range: an allocation
 * (embedded by the caller), a reserved region or the head sentinel
 * @link: entry in the range's address-ordered list of every node
 * @rb_hole: entry in the range's hole tree while @hole_size > 0
 * @start: first device address; read-only to the caller
 * @size: bytes; read-only to the caller
 * @hole_size: free bytes from @start + @size up to the next node (or the
 *	end of the range)
 * @subtree_max_hole: largest @hole_size in this node's subtree of the hole
 *	tree
 * @flags: SVOD_RANGE_NODE_* bits
 *
 * A node handed to svod_range_insert() must be zeroed (kzalloc) or removed
 * since its last insertion. Between a successful svod_range_insert() and
 * svod_range_remove() the range links it: the caller must not free it.
 */
struct svod_range_node {
	struct list_head link;
	struct rb_node rb_hole;
	u64 start;
	u64 size;
	u64 hole_size;
	u64 subtree_max_hole;
	u32 flags;
};

/* @flags: the node is a caller's live allocation. */
#define SVOD_RANGE_NODE_ALLOCATED	BIT(0)

/**
 * struct svod_range_region - a reserved [base, base + size) range
 * @base: first device address
 * @size: bytes, > 0
 */
struct svod_range_region {
	u64 base;
	u64 size;
};

/**
 * struct svod_range - one range allocator
 * @head: sentinel at @base, size 0: its hole is the free span at the start
 *	of the range, and it ends the address-ordered node list
 * @holes: the nodes whose hole is not empty, ordered by hole address,
 *	augmented with the largest hole of each subtree
 * @reserved: the nodes of the reserved regions (one array, from init)
 * @base: first device address of the range
 * @capacity: bytes in the range, reserved regions included
 * @align: minimum alignment of every allocation, a power of two
 * @free_bytes: sum of the free spans
 * @live_bytes: sum of the live allocations
 * @reserved_bytes: bytes covered by reserved regions (overlaps counted once)
 * @nr_free_spans: number of free spans (maximal free intervals)
 * @nr_live: number of live allocations
 *
 * free_bytes + live_bytes + reserved_bytes == capacity at all times: the
 * head fragment an alignment leaves in front of an allocation stays free.
 */
struct svod_range {
	struct svod_range_node head;
	struct rb_root holes;
	struct svod_range_node *reserved;
	u64 base;
	u64 capacity;
	u64 align;
	u64 free_bytes;
	u64 live_bytes;
	u64 reserved_bytes;
	u32 nr_free_spans;
	u32 nr_live;
};

const char *svod_range_refusal(u64 base, u64 capacity, u64 align,
			       const struct svod_range_region *reserved,
			       unsigned int nr_reserved);
int svod_range_init(struct svod_range *r, u64 base, u64 capacity, u64 align,
		    const struct svod_range_region *reserved,
		    unsigned int nr_reserved, gfp_t gfp);
void svod_range_fini(struct svod_range *r);
int svod_range_insert(struct svod_range *r, struct svod_range_node *node,
		      u64 size, u64 align);
void svod_range_remove(struct svod_range *r, struct svod_range_node *node);
u64 svod_range_largest_free(const struct svod_range *r);

/**
 * svod_range_node_allocated() - is @node a live allocation of a range?
 * @node: a node embedded by the caller
 *
 * Context: any; the caller serialises it with the calls on the range.
 * Return: true between a successful svod_range_insert() of @node and its
 * svod_range_remove(), false otherwise (zeroed, failed insert, removed).
 */
static inline bool svod_range_node_allocated(const struct svod_range_node *node)
{
	return node->flags & SVOD_RANGE_NODE_ALLOCATED;
}

/**
 * __svod_range_next_free() - step of svod_range_for_each_free()
 * @r: the range
 * @prev: the node of the previous free span, or NULL for the first span
 * @start: set to the first address of the span found
 * @size: set to its bytes
 *
 * Context: the caller serialises it with the calls on @r.
 * Return: the node the next free span follows, or NULL after the last.
 */
static inline struct svod_range_node *
__svod_range_next_free(const struct svod_range *r,
		       const struct svod_range_node *prev, u64 *start,
		       u64 *size)
{
	struct rb_node *rb = prev ? rb_next(&prev->rb_hole) :
				    rb_first(&r->holes);
	struct svod_range_node *node;

	if (!rb)
		return NULL;
	node = rb_entry(rb, struct svod_range_node, rb_hole);
	*start = node->start + node->size;
	*size = node->hole_size;
	return node;
}

/**
 * svod_range_for_each_free() - walk every free span in address order
 * @pos: struct svod_range_node * cursor: the node the span follows (an
 *	allocation, a reserved region or the range's head); do not modify it
 * @r: the range
 * @span_start: u64 lvalue, set to the first address of each free span
 * @span_size: u64 lvalue, set to the bytes of each free span (never 0)
 *
 * Amortised O(1) per step, O(nr_free_spans) for the walk. The range must
 * not change during the walk (the caller holds its lock across it).
 */
#define svod_range_for_each_free(pos, r, span_start, span_size)		\
	for (struct svod_range_node *__svod_pos = NULL;			\
	     (__svod_pos = __svod_range_next_free((r), __svod_pos,	\
						  &(span_start),	\
						  &(span_size))) &&	\
	     ((pos) = __svod_pos);)

#endif /* SVOD_CORE_RANGE_H */
