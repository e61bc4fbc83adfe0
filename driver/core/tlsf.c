// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * svod TLSF: the reference planner's allocator, step for step.
 *
 * The reference planner (kept outside this tree; Documentation/planner.rst
 * lists its rules) keeps each bucket as a Vec with push-back, take-front and
 * remove-at-position, and block metadata in a map keyed by start offset.
 * Here a bucket is a list_head FIFO (removing an
 * entry keeps the order of the others, exactly like Vec::remove), a block is
 * reached by pointer, and bitmaps replace the reference's linear bucket scan
 * with the same answer: the first non-empty bucket at or after the target.
 * Every index insertion and removal happens in the reference's order, so
 * each bucket holds the same blocks in the same order at every step.
 *
 * Locking: none; see tlsf.h.
 */
#include "tlsf.h"

/* The reference's bit_length(): 1-based index of the top set bit, 0 for 0. */
static unsigned int svod_tlsf_lv1(u64 size)
{
	return fls64(size);
}

/* Second-level bucket inside lv1(size)'s power-of-two range. */
static unsigned int svod_tlsf_lv2(const struct svod_tlsf *t, u64 size)
{
	unsigned int msb = fls64(size);
	unsigned int shift = msb > t->l2_bits ? msb - t->l2_bits : 0;

	if (!msb)
		return 0;
	return (size - (1ULL << (msb - 1))) >> shift;
}

static struct list_head *svod_tlsf_bucket(struct svod_tlsf *t, unsigned int l1,
					  unsigned int l2)
{
	return &t->buckets[(size_t)l1 * t->nr_l2 + l2];
}

static u64 *svod_tlsf_row(struct svod_tlsf *t, unsigned int l1)
{
	return &t->l2_map[(size_t)l1 * t->l2_words];
}

/* Append at the bucket's tail: the reference's Vec::push. */
static void svod_tlsf_index_insert(struct svod_tlsf *t, struct svod_tlsf_block *b)
{
	unsigned int l1 = svod_tlsf_lv1(b->size);
	unsigned int l2 = svod_tlsf_lv2(t, b->size);

	/* Kept for the removal: l1 <= 64, l2 < SVOD_TLSF_MAX_LV2_CNT. */
	b->l1 = l1;
	b->l2 = l2;
	list_add_tail(&b->link, svod_tlsf_bucket(t, l1, l2));
	svod_tlsf_row(t, l1)[l2 / 64] |= 1ULL << (l2 % 64);
	t->l1_map |= 1ULL << (l1 - 1);
}

/* The reference's Vec::remove at the block's position. */
static void svod_tlsf_index_remove(struct svod_tlsf *t, struct svod_tlsf_block *b)
{
	unsigned int l1 = b->l1, l2 = b->l2, w;
	u64 *row;

	/* Another block stays in the bucket: nothing else changes. */
	if (b->link.next != b->link.prev) {
		list_del(&b->link);
		return;
	}
	list_del(&b->link);
	row = svod_tlsf_row(t, l1);
	row[l2 / 64] &= ~(1ULL << (l2 % 64));
	for (w = 0; w < t->l2_words; w++)
		if (row[w])
			return;
	t->l1_map &= ~(1ULL << (l1 - 1));
}

/* First set bit of a row at or after @from, or nr_l2 if none. */
static unsigned int svod_tlsf_row_next(struct svod_tlsf *t, unsigned int l1,
				       unsigned int from)
{
	const u64 *row = svod_tlsf_row(t, l1);
	unsigned int w = from / 64;
	u64 word;

	if (from >= t->nr_l2)
		return t->nr_l2;
	word = row[w] & (~0ULL << (from % 64));
	for (;;) {
		if (word)
			return w * 64 + __ffs64(word);
		if (++w == t->l2_words)
			return t->nr_l2;
		word = row[w];
	}
}

/*
 * The head of the first non-empty bucket at or after (l1, l2) in the
 * reference's scan order, or NULL.
 */
static struct svod_tlsf_block *svod_tlsf_find(struct svod_tlsf *t, unsigned int l1,
					      unsigned int l2)
{
	unsigned int b;
	u64 above;

	if (l1 >= t->nr_levels)
		return NULL;
	if (t->l1_map & (1ULL << (l1 - 1))) {
		b = svod_tlsf_row_next(t, l1, l2);
		if (b < t->nr_l2)
			goto found;
	}
	/* Bits of rows l1 + 1 and up start at bit l1. */
	above = l1 < 64 ? t->l1_map & (~0ULL << l1) : 0;
	if (!above)
		return NULL;
	l1 = __ffs64(above) + 1;
	b = svod_tlsf_row_next(t, l1, 0);
found:
	return list_first_entry(svod_tlsf_bucket(t, l1, b), struct svod_tlsf_block, link);
}

static struct svod_tlsf_block *svod_tlsf_block_get(struct svod_tlsf *t)
{
	struct svod_tlsf_block *b = t->spare;

	/* The pool holds 2 * max_live + 1 blocks: more can never be in use. */
	if (WARN_ON_ONCE(!b))
		return NULL;
	t->spare = b->next;
	return b;
}

static void svod_tlsf_block_put(struct svod_tlsf *t, struct svod_tlsf_block *b)
{
	b->next = t->spare;
	t->spare = b;
}

/*
 * The reference re-indexes blocks step by step: split_block() removes a
 * block, appends its shrunk self and the remainder; merge_right() removes
 * both blocks and appends the merged one, once per neighbour. Two patterns
 * in those sequences change nothing: appending a block at a bucket's tail
 * and removing it again with only removals in between leaves every bucket
 * as it was (removals keep the order of the other entries). Cancelling
 * them, what remains is:
 *
 *   alloc: remove the block found; append the alignment head (if any);
 *          append the tail (if any), in that order
 *   free:  remove the free left and right neighbours (free blocks never
 *          touch, so there is at most one of each); append the merged block
 *
 * which is what the code below does: every bucket holds the same blocks in
 * the same order as the reference's after every call, with two to six list
 * operations fewer per call.
 */

/* Link @n into the address list right after @b. */
static void svod_tlsf_link_after(struct svod_tlsf_block *b, struct svod_tlsf_block *n)
{
	n->prev = b;
	n->next = b->next;
	if (n->next)
		n->next->prev = n;
	b->next = n;
}

/* Unlink @n (the block after @b), giving its bytes to @b; @n returns to the pool. */
static void svod_tlsf_absorb(struct svod_tlsf *t, struct svod_tlsf_block *b,
			     struct svod_tlsf_block *n)
{
	b->size += n->size;
	b->next = n->next;
	if (b->next)
		b->next->prev = b;
	svod_tlsf_block_put(t, n);
}

/**
 * svod_tlsf_init() - set up an allocator over [0, @arena_size)
 * @t: the allocator
 * @arena_size: bytes; 0 gives an allocator where every allocation fails
 * @block_size: minimum allocation size, > 0
 * @lv2_cnt: second-level buckets per power of two; 0 counts as 1, as in
 *	the reference; at most SVOD_TLSF_MAX_LV2_CNT
 * @max_live: most allocations ever live at once (sizes the block pool)
 * @gfp: allocation flags for the metadata (GFP_KERNEL_ACCOUNT for a user)
 *
 * Context: may sleep if @gfp allows it.
 * Return: 0, -EINVAL for a bad @block_size, @lv2_cnt or @max_live (at
 * most U32_MAX / 2 - 1), -ENOMEM.
 */
int svod_tlsf_init(struct svod_tlsf *t, u64 arena_size, u64 block_size,
		   u32 lv2_cnt, u32 max_live, gfp_t gfp)
{
	size_t nr_buckets, i;

	if (!block_size || lv2_cnt > SVOD_TLSF_MAX_LV2_CNT || max_live > U32_MAX / 2 - 1)
		return -EINVAL;
	*t = (struct svod_tlsf){ .block_size = block_size };
	t->l2_bits = fls64(max(lv2_cnt, 1U));
	t->nr_levels = fls64(arena_size) + 1;
	t->nr_l2 = 1U << (t->l2_bits - 1);
	t->l2_words = (t->nr_l2 + 63) / 64;
	t->nr_pool = 2 * max_live + 1;
	nr_buckets = (size_t)t->nr_levels * t->nr_l2;

	t->l2_map = kvcalloc((size_t)t->nr_levels * t->l2_words, sizeof(*t->l2_map), gfp);
	if (!t->l2_map)
		return -ENOMEM;
	t->buckets = kvmalloc_array(nr_buckets, sizeof(*t->buckets), gfp);
	if (!t->buckets)
		goto free_l2_map;
	t->pool = kvmalloc_array(t->nr_pool, sizeof(*t->pool), gfp);
	if (!t->pool)
		goto free_buckets;

	for (i = 0; i < nr_buckets; i++)
		INIT_LIST_HEAD(&t->buckets[i]);
	for (i = t->nr_pool; i-- > 0;)
		svod_tlsf_block_put(t, &t->pool[i]);
	if (arena_size) {
		struct svod_tlsf_block *b = svod_tlsf_block_get(t);

		*b = (struct svod_tlsf_block){ .size = arena_size, .free = true };
		svod_tlsf_index_insert(t, b);
	}
	return 0;

free_buckets:
	kvfree(t->buckets);
free_l2_map:
	kvfree(t->l2_map);
	return -ENOMEM;
}

/**
 * svod_tlsf_fini() - free an allocator's metadata
 * @t: the allocator, set up by svod_tlsf_init()
 *
 * Context: any.
 */
void svod_tlsf_fini(struct svod_tlsf *t)
{
	kvfree(t->pool);
	kvfree(t->buckets);
	kvfree(t->l2_map);
	*t = (struct svod_tlsf){};
}

/**
 * svod_tlsf_alloc() - the reference's alloc(@size, @align)
 * @t: the allocator
 * @size: bytes; below the block size (zero included) it counts as the
 *	block size
 * @align: alignment, any value; 0 counts as 1
 * @out: on success, the allocated block (its @start is the offset)
 *
 * Searches from the bucket of @size + @align - 1 rounded up to that
 * bucket's granule, takes the head of the first non-empty bucket, splits
 * off an alignment head and a tail, and raises the peak to start + size.
 *
 * Context: any.
 * Return: 0; -EINVAL if @size + @align - 1, rounded up to its bucket's
 * granule, does not fit in 64 bits (the reference would wrap); -ENOSPC if
 * no free block is large enough.
 */
int svod_tlsf_alloc(struct svod_tlsf *t, u64 size, u64 align,
		    struct svod_tlsf_block **out)
{
	u64 req = max(size, t->block_size);
	u64 need, granule, aligned, head, tail;
	struct svod_tlsf_block *b, *a, *rest;
	unsigned int msb;

	align = max(align, 1ULL);
	if (check_add_overflow(req, align - 1, &need))
		return -EINVAL;
	msb = fls64(need);
	if (msb > t->l2_bits) {
		granule = 1ULL << (msb - t->l2_bits);
		if (check_add_overflow(need, granule - 1, &need))
			return -EINVAL;
		need &= ~(granule - 1);
	}

	b = svod_tlsf_find(t, svod_tlsf_lv1(need), svod_tlsf_lv2(t, need));
	if (!b)
		return -ENOSPC;

	/* The bucket's blocks are >= need >= req + align - 1 bytes. */
	aligned = svod_round_up(b->start, align);
	head = aligned - b->start;
	tail = b->size - head - req;
	/* The pool holds 2 * max_live + 1 blocks: more can never be in use. */
	if (WARN_ON_ONCE((head || tail) &&
			 (!t->spare || (head && tail && !t->spare->next))))
		return -ENOMEM;

	svod_tlsf_index_remove(t, b);
	a = b;
	if (head) {
		/* @b stays free as the head; the allocation is a new block. */
		a = svod_tlsf_block_get(t);
		a->start = aligned;
		a->size = b->size - head;
		svod_tlsf_link_after(b, a);
		b->size = head;
		svod_tlsf_index_insert(t, b);
	}
	if (tail) {
		rest = svod_tlsf_block_get(t);
		rest->start = a->start + req;
		rest->size = tail;
		rest->free = true;
		svod_tlsf_link_after(a, rest);
		a->size = req;
		svod_tlsf_index_insert(t, rest);
	}
	a->free = false;
	t->peak = max(t->peak, a->start + req);
	*out = a;
	return 0;
}

/**
 * svod_tlsf_free() - the reference's free() of an allocated block
 * @t: the allocator
 * @blk: a block returned by svod_tlsf_alloc() and not freed since
 *
 * Merges @blk with its free left and right neighbours and indexes the
 * result at its bucket's tail: the buckets end as the reference's do after
 * its free() (which indexes @blk, walks left, then merges right).
 *
 * Context: any.
 */
void svod_tlsf_free(struct svod_tlsf *t, struct svod_tlsf_block *blk)
{
	struct svod_tlsf_block *left = blk->prev, *right = blk->next;

	if (WARN_ON_ONCE(blk->free))
		return;
	if (left && left->free) {
		svod_tlsf_index_remove(t, left);
		svod_tlsf_absorb(t, left, blk);
		blk = left;
	}
	if (right && right->free) {
		svod_tlsf_index_remove(t, right);
		svod_tlsf_absorb(t, blk, right);
	}
	blk->free = true;
	svod_tlsf_index_insert(t, blk);
}
