/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * svod TLSF: a two-level segregated fit allocator over arena offsets that
 * reproduces, quirk for quirk, the reference planner (kept outside this
 * tree; Documentation/planner.rst lists its rules).
 * It assigns numbers only; it owns no memory but its own metadata.
 *
 * Every operation is O(1): free blocks sit in per-bucket FIFO lists, and
 * bitmaps of non-empty buckets are searched with find-first-bit.
 *
 * Locking: none. One allocator belongs to one planning call.
 */
#ifndef SVOD_CORE_TLSF_H
#define SVOD_CORE_TLSF_H

#include "compat.h"

/* lv2_cnt above this is refused: buckets cost memory even when empty. */
#define SVOD_TLSF_MAX_LV2_CNT	256

/**
 * struct svod_tlsf_block - a span of the arena, free or allocated
 * @link: entry in its bucket's FIFO while free
 * @prev: the block just below in address order, or NULL
 * @next: the block just above in address order, or NULL
 * @start: first offset
 * @size: bytes
 * @free: in a bucket (true) or handed out (false)
 * @l1: row of the bucket the block is in (valid while @free)
 * @l2: column of that bucket (valid while @free)
 */
struct svod_tlsf_block {
	struct list_head link;
	struct svod_tlsf_block *prev;
	struct svod_tlsf_block *next;
	u64 start;
	u64 size;
	bool free;
	u8 l1;
	u16 l2;
};

/**
 * struct svod_tlsf - one allocator
 * @block_size: minimum allocation size
 * @l2_bits: bit length of lv2_cnt (lv2_cnt 32 gives 6)
 * @nr_levels: first-level rows: bit length of the arena size, plus one
 * @nr_l2: buckets per row, 1 << (@l2_bits - 1) (the reference's upper half
 *	of each row is never used)
 * @l2_words: u64 words per row of @l2_map
 * @l1_map: bit (l1 - 1) set while row l1 has a free block
 * @l2_map: per row, bit l2 set while bucket (l1, l2) is non-empty
 * @buckets: per row, @nr_l2 FIFO lists of free blocks
 * @pool: block metadata, @nr_pool entries
 * @nr_pool: entries in @pool
 * @spare: unused entries of @pool, chained through @next
 * @peak: largest start + size handed out so far
 */
struct svod_tlsf {
	u64 block_size;
	unsigned int l2_bits;
	unsigned int nr_levels;
	unsigned int nr_l2;
	unsigned int l2_words;
	u64 l1_map;
	u64 *l2_map;
	struct list_head *buckets;
	struct svod_tlsf_block *pool;
	u32 nr_pool;
	struct svod_tlsf_block *spare;
	u64 peak;
};

int svod_tlsf_init(struct svod_tlsf *t, u64 arena_size, u64 block_size,
		   u32 lv2_cnt, u32 max_live, gfp_t gfp);
void svod_tlsf_fini(struct svod_tlsf *t);
int svod_tlsf_alloc(struct svod_tlsf *t, u64 size, u64 align,
		    struct svod_tlsf_block **out);
void svod_tlsf_free(struct svod_tlsf *t, struct svod_tlsf_block *blk);

#endif /* SVOD_CORE_TLSF_H */
