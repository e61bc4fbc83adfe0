// SPDX-License-Identifier: GPL-2.0
/*
 * svod tier allocator.
 *
 * A tier is [base, base + capacity) minus reserved regions. Free spans live
 * in an address-ordered rbtree augmented with the largest free span of each
 * subtree (as drm_mm does with its holes), which makes first-fit a descent
 * instead of a list walk. Placement is exactly the reference design's: the
 * lowest-address free span in which the aligned start plus the size fits;
 * the span is split around the allocation and a head fragment left in front
 * of an aligned start stays free. Free returns the live span and coalesces
 * it with both neighbours.
 *
 * Locking: none. This file is not thread-safe; callers lock. It never
 * allocates behind the caller's back: every allocation uses the caller's gfp
 * and happens before the tree is touched, so a failure leaves the tier as it
 * was. Free never allocates and never fails.
 */
#include "tier.h"

static inline u64 svod_tier_node_size(const struct svod_tier_node *node)
{
	return node->size;
}

RB_DECLARE_CALLBACKS_MAX(static, svod_tier_cb, struct svod_tier_node, rb,
			 u64, subtree_max, svod_tier_node_size);

static inline struct svod_tier_node *svod_tier_rb_node(struct rb_node *rb)
{
	return rb_entry(rb, struct svod_tier_node, rb);
}

static inline u64 svod_tier_subtree_max(struct rb_node *rb)
{
	return rb ? svod_tier_rb_node(rb)->subtree_max : 0;
}

/* Link @node (not yet in the tree) in address order and rebalance. */
static void svod_tier_insert(struct svod_tier *tier,
			     struct svod_tier_node *node)
{
	struct rb_node **link = &tier->free.rb_node;
	struct rb_node *parent = NULL;
	struct svod_tier_node *cur;

	while (*link) {
		parent = *link;
		cur = svod_tier_rb_node(parent);
		if (cur->subtree_max < node->size)
			cur->subtree_max = node->size;
		if (node->start < cur->start)
			link = &parent->rb_left;
		else
			link = &parent->rb_right;
	}
	node->subtree_max = node->size;
	rb_link_node(&node->rb, parent, link);
	rb_insert_augmented(&node->rb, &tier->free, &svod_tier_cb);
}

static void svod_tier_erase(struct svod_tier *tier,
			    struct svod_tier_node *node)
{
	rb_erase_augmented(&node->rb, &tier->free, &svod_tier_cb);
	RB_CLEAR_NODE(&node->rb);
}

/* @node's size changed in place: fix subtree_max up to the root. */
static void svod_tier_resized(struct svod_tier_node *node)
{
	svod_tier_cb_propagate(&node->rb, NULL);
}

/* Leftmost span of size >= @size in the subtree at @rb, or NULL. */
static struct svod_tier_node *svod_tier_first_large(struct rb_node *rb,
						    u64 size)
{
	struct svod_tier_node *node;

	if (svod_tier_subtree_max(rb) < size)
		return NULL;
	while (rb) {
		node = svod_tier_rb_node(rb);
		if (svod_tier_subtree_max(rb->rb_left) >= size) {
			rb = rb->rb_left;
			continue;
		}
		if (node->size >= size)
			return node;
		/* subtree_max >= size and neither the left nor @node: right */
		rb = rb->rb_right;
	}
	return NULL;
}

/* Next span of size >= @size after @node in address order, or NULL. */
static struct svod_tier_node *svod_tier_next_large(struct svod_tier_node *node,
						   u64 size)
{
	struct rb_node *rb = &node->rb;
	struct rb_node *parent;

	if (svod_tier_subtree_max(rb->rb_right) >= size)
		return svod_tier_first_large(rb->rb_right, size);
	while ((parent = rb_parent(rb))) {
		if (parent->rb_left == rb) {
			if (svod_tier_rb_node(parent)->size >= size)
				return svod_tier_rb_node(parent);
			if (svod_tier_subtree_max(parent->rb_right) >= size)
				return svod_tier_first_large(parent->rb_right,
							     size);
		}
		rb = parent;
	}
	return NULL;
}

/*
 * Does @size fit in @node (of size >= @size) once its start is rounded up
 * to @align? On success *@start is the aligned start.
 */
static bool svod_tier_fits(const struct svod_tier_node *node, u64 size,
			   u64 align, u64 *start)
{
	u64 aligned;

	if (check_add_overflow(node->start, align - 1, &aligned))
		return false;
	aligned &= ~(align - 1);
	if (aligned - node->start > node->size - size)
		return false;
	*start = aligned;
	return true;
}

/*
 * First fit: walk the spans of size >= @size in address order (each step a
 * pruned descent) and take the first whose aligned start still fits.
 */
static struct svod_tier_node *svod_tier_first_fit(struct svod_tier *tier,
						  u64 size, u64 align,
						  u64 *start)
{
	struct svod_tier_node *node;

	for (node = svod_tier_first_large(tier->free.rb_node, size); node;
	     node = svod_tier_next_large(node, size))
		if (svod_tier_fits(node, size, align, start))
			return node;
	return NULL;
}

/* Leftmost span that ends after @addr, or NULL. */
static struct svod_tier_node *svod_tier_first_ending_after(struct svod_tier *tier,
							   u64 addr)
{
	struct rb_node *rb = tier->free.rb_node;
	struct svod_tier_node *found = NULL, *node;

	while (rb) {
		node = svod_tier_rb_node(rb);
		if (node->start + node->size > addr) {
			found = node;
			rb = rb->rb_left;
		} else {
			rb = rb->rb_right;
		}
	}
	return found;
}

static void svod_tier_destroy_spans(struct svod_tier *tier)
{
	struct svod_tier_node *node, *next;

	rbtree_postorder_for_each_entry_safe(node, next, &tier->free, rb)
		kfree(node);
	tier->free = RB_ROOT;
}

/* Remove [@res_start, @res_end) from the free spans. */
static int svod_tier_carve(struct svod_tier *tier, u64 res_start, u64 res_end,
			   gfp_t gfp)
{
	struct svod_tier_node *node, *tail;
	struct rb_node *next;
	u64 end;

	node = svod_tier_first_ending_after(tier, res_start);
	while (node && node->start < res_end) {
		end = node->start + node->size;
		next = rb_next(&node->rb);
		if (node->start < res_start && end > res_end) {
			tail = kmalloc(sizeof(*tail), gfp);
			if (!tail)
				return -ENOMEM;
			tail->start = res_end;
			tail->size = end - res_end;
			node->size = res_start - node->start;
			svod_tier_resized(node);
			svod_tier_insert(tier, tail);
			tier->nr_free_spans++;
			tier->free_bytes -= res_end - res_start;
			return 0;
		}
		if (node->start < res_start) {
			node->size = res_start - node->start;
			tier->free_bytes -= end - res_start;
			svod_tier_resized(node);
		} else if (end > res_end) {
			tier->free_bytes -= res_end - node->start;
			node->size = end - res_end;
			node->start = res_end;
			svod_tier_resized(node);
		} else {
			tier->free_bytes -= node->size;
			tier->nr_free_spans--;
			svod_tier_erase(tier, node);
			kfree(node);
		}
		node = next ? svod_tier_rb_node(next) : NULL;
	}
	return 0;
}

/**
 * svod_tier_init() - set up a tier's allocator
 * @tier: the tier to initialise
 * @base: first device address of the tier
 * @capacity: bytes in the tier, > 0; @base + @capacity must not overflow
 * @align: minimum alignment of every allocation, a power of two (not 0)
 * @reserved: regions never handed out; may overlap or touch each other
 * @nr_reserved: entries in @reserved (may be 0, then @reserved may be NULL)
 * @gfp: allocation flags for the span records
 *
 * Every reserved region must have a size > 0 and lie inside the tier. The
 * arguments are validated before anything is allocated.
 *
 * Context: any context @gfp allows; the caller serialises calls on @tier.
 * Return: 0 on success; -EINVAL on a bad argument; -ENOMEM when a span record
 * cannot be allocated (nothing is left allocated, @tier is not initialised).
 */
int svod_tier_init(struct svod_tier *tier, u64 base, u64 capacity, u64 align,
		   const struct svod_tier_region *reserved, unsigned int nr_reserved,
		   gfp_t gfp)
{
	struct svod_tier_node *node;
	u64 end, res_end;
	unsigned int i;
	int ret;

	if (!capacity || !is_power_of_2(align) ||
	    check_add_overflow(base, capacity, &end))
		return -EINVAL;
	for (i = 0; i < nr_reserved; i++) {
		if (!reserved[i].size || reserved[i].base < base ||
		    check_add_overflow(reserved[i].base, reserved[i].size,
				       &res_end) ||
		    res_end > end)
			return -EINVAL;
	}

	node = kmalloc(sizeof(*node), gfp);
	if (!node)
		return -ENOMEM;
	tier->base = base;
	tier->capacity = capacity;
	tier->align = align;
	tier->free = RB_ROOT;
	tier->free_bytes = capacity;
	tier->live_bytes = 0;
	tier->nr_free_spans = 1;
	tier->nr_live = 0;
	node->start = base;
	node->size = capacity;
	svod_tier_insert(tier, node);

	for (i = 0; i < nr_reserved; i++) {
		ret = svod_tier_carve(tier, reserved[i].base,
				      reserved[i].base + reserved[i].size, gfp);
		if (ret)
			goto destroy_spans;
	}
	tier->reserved_bytes = capacity - tier->free_bytes;
	return 0;

destroy_spans:
	svod_tier_destroy_spans(tier);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(svod_tier_init);

/**
 * svod_tier_fini() - tear down a tier's allocator
 * @tier: an initialised tier
 *
 * Frees the free-span records. Every allocation must have been freed first
 * (live records belong to the caller; a leftover one is a caller bug and
 * warns).
 *
 * Context: any; the caller serialises calls on @tier.
 */
void svod_tier_fini(struct svod_tier *tier)
{
	WARN_ON(tier->nr_live);
	svod_tier_destroy_spans(tier);
	tier->free_bytes = 0;
	tier->nr_free_spans = 0;
}
EXPORT_SYMBOL_IF_KUNIT(svod_tier_fini);

/**
 * svod_tier_alloc() - allocate @size bytes from a tier, first fit
 * @tier: the tier
 * @size: bytes, > 0
 * @align: alignment of the start, a power of two, or 0 for the tier's; the
 *	   effective alignment is the larger of @align and the tier's
 * @gfp: allocation flags for the records
 * @out: on success, the live record (start and size of the allocation),
 *	 owned by the caller until svod_tier_free()
 *
 * Places the allocation in the lowest-address free span in which the
 * aligned start plus @size fits. Cost: O(log n) in the number of free spans
 * when the first span of size >= @size also fits after alignment; each span
 * that is large enough but does not fit once aligned adds an O(log n) step,
 * so the worst case (many such spans in front of the first fit, e.g. small
 * unaligned spans and a large @align) is O(n log n).
 *
 * Context: any context @gfp allows; the caller serialises calls on @tier.
 * Return: 0 on success; -EINVAL if @size is 0 or @align is not 0 and not a
 * power of two; -ENOSPC if no free span can hold it; -ENOMEM if a record
 * cannot be allocated. On any error the tier is unchanged.
 */
int svod_tier_alloc(struct svod_tier *tier, u64 size, u64 align, gfp_t gfp,
		    struct svod_tier_node **out)
{
	struct svod_tier_node *span, *live, *tail;
	u64 start, end;

	if (!size || (align && !is_power_of_2(align)))
		return -EINVAL;
	if (align < tier->align)
		align = tier->align;

	span = svod_tier_first_fit(tier, size, align, &start);
	if (!span)
		return -ENOSPC;
	end = span->start + span->size;

	if (start == span->start && start + size == end) {
		/* Exact fit: the span's record becomes the live one. */
		svod_tier_erase(tier, span);
		tier->nr_free_spans--;
		live = span;
		goto account;
	}

	live = kmalloc(sizeof(*live), gfp);
	if (!live)
		return -ENOMEM;
	live->start = start;
	live->size = size;
	RB_CLEAR_NODE(&live->rb);
	live->subtree_max = 0;

	if (start == span->start) {
		/* No head: the span keeps the tail, order is unchanged. */
		span->start = start + size;
		span->size = end - span->start;
		svod_tier_resized(span);
		goto account;
	}
	if (start + size < end) {
		/* Head and tail: the span keeps the head, a new record the tail. */
		tail = kmalloc(sizeof(*tail), gfp);
		if (!tail) {
			kfree(live);
			return -ENOMEM;
		}
		tail->start = start + size;
		tail->size = end - tail->start;
		span->size = start - span->start;
		svod_tier_resized(span);
		svod_tier_insert(tier, tail);
		tier->nr_free_spans++;
		goto account;
	}
	/* Head only. */
	span->size = start - span->start;
	svod_tier_resized(span);

account:
	tier->free_bytes -= size;
	tier->live_bytes += size;
	tier->nr_live++;
	*out = live;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(svod_tier_alloc);

/**
 * svod_tier_free() - return an allocation to its tier
 * @tier: the tier @node was allocated from
 * @node: the live record svod_tier_alloc() returned; consumed
 *
 * The live record's span (never a caller's copy of it) becomes free and is
 * coalesced with the free spans on either side. The record is reused as the
 * free span's record or freed. O(log n) in the number of free spans.
 *
 * Context: any; never sleeps, never allocates, never fails (freeing a record
 * that is a free span warns and does nothing); the caller serialises calls
 * on @tier.
 */
void svod_tier_free(struct svod_tier *tier, struct svod_tier_node *node)
{
	struct rb_node **link = &tier->free.rb_node;
	struct svod_tier_node *prev = NULL, *next = NULL, *cur;
	struct rb_node *parent = NULL;
	bool merge_prev, merge_next;

	/* A record still in the tree is a free span: a double free. */
	if (WARN_ON(!RB_EMPTY_NODE(&node->rb)))
		return;

	while (*link) {
		parent = *link;
		cur = svod_tier_rb_node(parent);
		if (node->start < cur->start) {
			next = cur;
			link = &parent->rb_left;
		} else {
			prev = cur;
			link = &parent->rb_right;
		}
	}
	merge_prev = prev && prev->start + prev->size == node->start;
	merge_next = next && node->start + node->size == next->start;

	tier->free_bytes += node->size;
	tier->live_bytes -= node->size;
	tier->nr_live--;

	if (merge_prev && merge_next) {
		svod_tier_erase(tier, next);
		prev->size += node->size + next->size;
		svod_tier_resized(prev);
		tier->nr_free_spans--;
		kfree(next);
		kfree(node);
	} else if (merge_prev) {
		prev->size += node->size;
		svod_tier_resized(prev);
		kfree(node);
	} else if (merge_next) {
		next->start = node->start;
		next->size += node->size;
		svod_tier_resized(next);
		kfree(node);
	} else {
		node->subtree_max = node->size;
		rb_link_node(&node->rb, parent, link);
		if (parent)
			svod_tier_cb_propagate(parent, NULL);
		rb_insert_augmented(&node->rb, &tier->free, &svod_tier_cb);
		tier->nr_free_spans++;
	}
}
EXPORT_SYMBOL_IF_KUNIT(svod_tier_free);

/**
 * svod_tier_largest_free() - size of the largest free span
 * @tier: the tier
 *
 * The largest allocation with the tier's alignment that is sure to succeed
 * is smaller by up to the alignment minus one (the head fragment).
 *
 * Context: any; the caller serialises calls on @tier.
 * Return: bytes in the largest free span, 0 if none. O(1).
 */
u64 svod_tier_largest_free(const struct svod_tier *tier)
{
	return svod_tier_subtree_max(tier->free.rb_node);
}
EXPORT_SYMBOL_IF_KUNIT(svod_tier_largest_free);
