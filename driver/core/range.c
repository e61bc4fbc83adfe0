// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * svod range allocator.
 *
 * The design is drm_mm's. Every node (the head sentinel, the reserved
 * regions, the caller's allocations) is on a list in address order and
 * records the free hole between its end and the next node's start
 * (hole_size). The nodes with a hole are also in an rbtree ordered by hole
 * address and augmented with the largest hole of each subtree, which makes
 * first fit a descent instead of a list walk. Two holes are always
 * separated by a node, so the holes are exactly the free spans (maximal
 * free intervals): removing a node hands its span and its hole to the hole
 * of the node in front, which is the coalescing.
 *
 * Placement is the reference design's: the lowest-address free span in
 * which the aligned start plus the size fits; the head fragment an
 * alignment leaves in front of the allocation stays free (it is the hole of
 * the node in front).
 *
 * Locking: none. This file is not thread-safe; callers lock. The nodes are
 * the caller's: insert and remove never allocate and never fail for lack of
 * memory. Only init allocates, the reserved regions' nodes, with the
 * caller's gfp and before the range is touched.
 */
#include "range.h"

static inline u64 svod_range_hole_start(const struct svod_range_node *node)
{
	return node->start + node->size;
}

static inline u64 svod_range_hole_size(const struct svod_range_node *node)
{
	return node->hole_size;
}

RB_DECLARE_CALLBACKS_MAX(static, svod_range_hole_cb, struct svod_range_node,
			 rb_hole, u64, subtree_max_hole, svod_range_hole_size);

static inline struct svod_range_node *svod_range_rb_node(struct rb_node *rb)
{
	return rb_entry(rb, struct svod_range_node, rb_hole);
}

static inline u64 svod_range_subtree_max(struct rb_node *rb)
{
	return rb ? svod_range_rb_node(rb)->subtree_max_hole : 0;
}

/* @node's hole became non-empty: link it in hole-address order. */
static void svod_range_add_hole(struct svod_range *r,
				struct svod_range_node *node)
{
	struct rb_node **link = &r->holes.rb_node;
	u64 addr = svod_range_hole_start(node);
	struct rb_node *parent = NULL;
	struct svod_range_node *cur;

	while (*link) {
		parent = *link;
		cur = svod_range_rb_node(parent);
		if (cur->subtree_max_hole < node->hole_size)
			cur->subtree_max_hole = node->hole_size;
		if (addr < svod_range_hole_start(cur))
			link = &parent->rb_left;
		else
			link = &parent->rb_right;
	}
	node->subtree_max_hole = node->hole_size;
	rb_link_node(&node->rb_hole, parent, link);
	rb_insert_augmented(&node->rb_hole, &r->holes, &svod_range_hole_cb);
	r->nr_free_spans++;
}

/* @node's hole (still its old size) leaves the tree. */
static void svod_range_rm_hole(struct svod_range *r,
			       struct svod_range_node *node)
{
	rb_erase_augmented(&node->rb_hole, &r->holes, &svod_range_hole_cb);
	RB_CLEAR_NODE(&node->rb_hole);
	r->nr_free_spans--;
}

/* Make @node's hole @size bytes, moving it in or out of the hole tree. */
static void svod_range_set_hole(struct svod_range *r,
				struct svod_range_node *node, u64 size)
{
	if (!node->hole_size) {
		node->hole_size = size;
		if (size)
			svod_range_add_hole(r, node);
		return;
	}
	if (!size) {
		svod_range_rm_hole(r, node);
		node->hole_size = 0;
		return;
	}
	/* Same hole address, new size: fix subtree_max_hole to the root. */
	node->hole_size = size;
	svod_range_hole_cb_propagate(&node->rb_hole, NULL);
}

/*
 * The hole at @from's end becomes @size bytes at @to's end, with no other
 * hole in between: @to takes @from's place in the tree, which keeps its
 * order, and only the subtree maxima above it change. This saves an erase
 * and an insert on the common insert (no head fragment) and remove (no
 * hole in front) paths.
 */
static void svod_range_move_hole(struct svod_range_node *from,
				 struct svod_range_node *to, u64 size,
				 struct svod_range *r)
{
	rb_replace_node(&from->rb_hole, &to->rb_hole, &r->holes);
	RB_CLEAR_NODE(&from->rb_hole);
	to->subtree_max_hole = from->subtree_max_hole;
	from->hole_size = 0;
	to->hole_size = size;
	svod_range_hole_cb_propagate(&to->rb_hole, NULL);
}

/* Leftmost hole of size >= @size in the subtree at @rb, or NULL. */
static struct svod_range_node *svod_range_first_large(struct rb_node *rb,
						      u64 size)
{
	struct svod_range_node *node;

	if (svod_range_subtree_max(rb) < size)
		return NULL;
	while (rb) {
		node = svod_range_rb_node(rb);
		if (svod_range_subtree_max(rb->rb_left) >= size) {
			rb = rb->rb_left;
			continue;
		}
		if (node->hole_size >= size)
			return node;
		/* subtree_max >= size and neither the left nor @node: right */
		rb = rb->rb_right;
	}
	return NULL;
}

/* Next hole of size >= @size after @node's in address order, or NULL. */
static struct svod_range_node *
svod_range_next_large(struct svod_range_node *node, u64 size)
{
	struct rb_node *rb = &node->rb_hole;
	struct rb_node *parent;

	if (svod_range_subtree_max(rb->rb_right) >= size)
		return svod_range_first_large(rb->rb_right, size);
	while ((parent = rb_parent(rb))) {
		if (parent->rb_left == rb) {
			if (svod_range_rb_node(parent)->hole_size >= size)
				return svod_range_rb_node(parent);
			if (svod_range_subtree_max(parent->rb_right) >= size)
				return svod_range_first_large(parent->rb_right,
							      size);
		}
		rb = parent;
	}
	return NULL;
}

/*
 * Does @size fit in @node's hole (of size >= @size) once its start is
 * rounded up to @align? On success *@start is the aligned start.
 */
static bool svod_range_fits(const struct svod_range_node *node, u64 size,
			    u64 align, u64 *start)
{
	u64 hole = svod_range_hole_start(node);
	u64 aligned = svod_round_up(hole, align);

	/* U64_MAX (no aligned start in 64 bits) never fits: size >= 1. */
	if (aligned - hole > node->hole_size - size)
		return false;
	*start = aligned;
	return true;
}

/*
 * First fit: walk the holes of size >= @size in address order (each step a
 * pruned descent) and take the first whose aligned start still fits.
 */
static struct svod_range_node *svod_range_first_fit(struct svod_range *r,
						    u64 size, u64 align,
						    u64 *start)
{
	struct svod_range_node *node;

	for (node = svod_range_first_large(r->holes.rb_node, size); node;
	     node = svod_range_next_large(node, size))
		if (svod_range_fits(node, size, align, start))
			return node;
	return NULL;
}

static int svod_range_node_cmp(const void *a, const void *b)
{
	const struct svod_range_node *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * Fill @res with the union of the @nr (>= 1) regions: sorted, overlapping
 * and touching regions merged. Return: the number of nodes used.
 */
static unsigned int svod_range_merge_reserved(struct svod_range_node *res,
					      const struct svod_range_region *reserved,
					      unsigned int nr)
{
	unsigned int i, n = 0;
	u64 end;

	for (i = 0; i < nr; i++)
		res[i] = (struct svod_range_node){ .start = reserved[i].base,
						   .size = reserved[i].size };
	sort(res, nr, sizeof(*res), svod_range_node_cmp, NULL);
	for (i = 1; i < nr; i++) {
		end = res[n].start + res[n].size;
		if (res[i].start > end)
			res[++n] = res[i];
		else if (res[i].start + res[i].size > end)
			res[n].size = res[i].start + res[i].size - res[n].start;
	}
	return n + 1;
}

/**
 * svod_range_refusal() - why svod_range_init() would refuse these arguments
 * @base: as svod_range_init()
 * @capacity: as svod_range_init()
 * @align: as svod_range_init()
 * @reserved: as svod_range_init()
 * @nr_reserved: as svod_range_init()
 *
 * Context: any.
 * Return: NULL if svod_range_init() accepts them, else the first reason it
 * refuses them, as a phrase for a log line.
 */
const char *svod_range_refusal(u64 base, u64 capacity, u64 align,
			       const struct svod_range_region *reserved,
			       unsigned int nr_reserved)
{
	u64 end, res_end;
	unsigned int i;

	if (!capacity)
		return "size 0";
	if (!is_power_of_2(align))
		return "align not a power of two";
	if (check_add_overflow(base, capacity, &end))
		return "base + size wraps around";
	for (i = 0; i < nr_reserved; i++) {
		if (!reserved[i].size)
			return "a reserved region of size 0";
		if (reserved[i].base < base ||
		    check_add_overflow(reserved[i].base, reserved[i].size,
				       &res_end) ||
		    res_end > end)
			return "a reserved region outside the tier";
	}
	return NULL;
}
EXPORT_SYMBOL_IF_KUNIT(svod_range_refusal);

/**
 * svod_range_init() - set up a range allocator
 * @r: the range to initialise
 * @base: first device address of the range
 * @capacity: bytes in the range, > 0; @base + @capacity must not overflow
 * @align: minimum alignment of every allocation, a power of two (not 0)
 * @reserved: regions never handed out; may overlap or touch each other
 * @nr_reserved: entries in @reserved (may be 0, then @reserved may be NULL)
 * @gfp: allocation flags for the reserved regions' nodes
 *
 * Every reserved region must have a size > 0 and lie inside the range. The
 * arguments are validated before anything is allocated; with no reserved
 * region nothing is allocated at all.
 *
 * Context: any context @gfp allows; the caller serialises calls on @r.
 * Return: 0 on success; -EINVAL on a bad argument (svod_range_refusal()
 * says which); -ENOMEM when the reserved regions' nodes cannot be
 * allocated (then @r is not initialised).
 */
int svod_range_init(struct svod_range *r, u64 base, u64 capacity, u64 align,
		    const struct svod_range_region *reserved,
		    unsigned int nr_reserved, gfp_t gfp)
{
	struct svod_range_node *res = NULL, *prev = &r->head;
	unsigned int i, nr = 0;

	if (svod_range_refusal(base, capacity, align, reserved, nr_reserved))
		return -EINVAL;
	if (nr_reserved) {
		res = kmalloc_array(nr_reserved, sizeof(*res), gfp);
		if (!res)
			return -ENOMEM;
		nr = svod_range_merge_reserved(res, reserved, nr_reserved);
	}

	*r = (struct svod_range){
		.head = { .start = base },
		.holes = RB_ROOT,
		.reserved = res,
		.base = base,
		.capacity = capacity,
		.align = align,
	};
	INIT_LIST_HEAD(&r->head.link);
	RB_CLEAR_NODE(&r->head.rb_hole);
	for (i = 0; i < nr; i++) {
		RB_CLEAR_NODE(&res[i].rb_hole);
		list_add_tail(&res[i].link, &r->head.link);
		svod_range_set_hole(r, prev,
				    res[i].start - svod_range_hole_start(prev));
		r->reserved_bytes += res[i].size;
		prev = &res[i];
	}
	/* base + capacity does not overflow: checked above. */
	svod_range_set_hole(r, prev,
			    base + capacity - svod_range_hole_start(prev));
	r->free_bytes = capacity - r->reserved_bytes;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(svod_range_init);

/**
 * svod_range_fini() - tear down a range allocator
 * @r: an initialised range
 *
 * Frees the reserved regions' nodes. Every allocation must have been
 * removed first: the nodes belong to the caller, and a leftover one is a
 * caller bug and warns.
 *
 * Context: any; the caller serialises calls on @r.
 */
void svod_range_fini(struct svod_range *r)
{
	WARN_ON(r->nr_live);
	kfree(r->reserved);
	r->reserved = NULL;
	r->holes = RB_ROOT;
	INIT_LIST_HEAD(&r->head.link);
	r->free_bytes = 0;
	r->nr_free_spans = 0;
}
EXPORT_SYMBOL_IF_KUNIT(svod_range_fini);

/**
 * svod_range_insert() - allocate @size bytes from a range, first fit
 * @r: the range
 * @node: the caller's node, zeroed or removed since its last insertion;
 *	on success @node->start and @node->size are the allocation
 * @size: bytes, > 0
 * @align: alignment of the start, a power of two, or 0 for the range's;
 *	the effective alignment is the larger of @align and the range's
 *
 * Places the allocation in the lowest-address free span in which the
 * aligned start plus @size fits. Never allocates memory. Cost: O(log n) in
 * the number of free spans when the first span of size >= @size also fits
 * after alignment; each span that is large enough but does not fit once
 * aligned adds an O(log n) step, so the worst case (many such spans in
 * front of the first fit, e.g. small unaligned spans and a large @align) is
 * O(n log n).
 *
 * Context: any; never sleeps; the caller serialises calls on @r.
 * Return: 0 on success; -EINVAL if @size is 0, @align is not 0 and not a
 * power of two, or @node is already allocated (a caller bug, which warns);
 * -ENOSPC if no free span can hold it. On any error the range and @node
 * are unchanged.
 */
int svod_range_insert(struct svod_range *r, struct svod_range_node *node,
		      u64 size, u64 align)
{
	struct svod_range_node *hole;
	u64 start, hole_end;

	if (WARN_ON(svod_range_node_allocated(node)))
		return -EINVAL;
	if (!size || (align && !is_power_of_2(align)))
		return -EINVAL;
	if (align < r->align)
		align = r->align;

	hole = svod_range_first_fit(r, size, align, &start);
	if (!hole)
		return -ENOSPC;
	hole_end = svod_range_hole_start(hole) + hole->hole_size;

	node->start = start;
	node->size = size;
	node->hole_size = 0;
	node->subtree_max_hole = 0;
	node->flags = SVOD_RANGE_NODE_ALLOCATED;
	RB_CLEAR_NODE(&node->rb_hole);
	list_add(&node->link, &hole->link);
	/* The head fragment stays @hole's; the tail becomes @node's hole. */
	if (start == svod_range_hole_start(hole) && hole_end > start + size) {
		svod_range_move_hole(hole, node, hole_end - (start + size), r);
	} else {
		svod_range_set_hole(r, hole, start - svod_range_hole_start(hole));
		svod_range_set_hole(r, node, hole_end - (start + size));
	}

	r->free_bytes -= size;
	r->live_bytes += size;
	r->nr_live++;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(svod_range_insert);

/**
 * svod_range_remove() - return an allocation to its range
 * @r: the range @node was inserted in
 * @node: a node svod_range_insert() allocated
 *
 * The node's span and the hole after it join the hole in front of it: the
 * free span it leaves is coalesced with both neighbours. @node->start and
 * @node->size keep their values; the node is the caller's again (it may be
 * freed or inserted anew). O(log n) in the number of free spans.
 *
 * Context: any; never sleeps, never allocates, never fails (removing a node
 * that is not allocated, e.g. twice, warns and does nothing); the caller
 * serialises calls on @r.
 */
void svod_range_remove(struct svod_range *r, struct svod_range_node *node)
{
	struct svod_range_node *prev;
	u64 merged;

	if (WARN_ON(!svod_range_node_allocated(node)))
		return;
	prev = list_entry(node->link.prev, struct svod_range_node, link);
	merged = prev->hole_size + node->size + node->hole_size;
	list_del(&node->link);
	if (!prev->hole_size && node->hole_size) {
		svod_range_move_hole(node, prev, merged, r);
	} else {
		if (node->hole_size)
			svod_range_rm_hole(r, node);
		svod_range_set_hole(r, prev, merged);
	}
	node->hole_size = 0;
	node->flags &= ~SVOD_RANGE_NODE_ALLOCATED;

	r->free_bytes += node->size;
	r->live_bytes -= node->size;
	r->nr_live--;
}
EXPORT_SYMBOL_IF_KUNIT(svod_range_remove);

/**
 * svod_range_largest_free() - size of the largest free span
 * @r: the range
 *
 * The largest allocation with the range's alignment that is sure to
 * succeed is smaller by up to the alignment minus one (the head fragment).
 *
 * Context: any; the caller serialises calls on @r.
 * Return: bytes in the largest free span, 0 if none. O(1).
 */
u64 svod_range_largest_free(const struct svod_range *r)
{
	return svod_range_subtree_max(r->holes.rb_node);
}
EXPORT_SYMBOL_IF_KUNIT(svod_range_largest_free);
