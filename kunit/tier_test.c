// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite svod_tier: the tier allocator (driver/core/tier.c).
 *
 * Every scenario is a table row; the cases only run the rows and compare
 * with a shared checker that walks the whole tree after each step (spans
 * sorted, disjoint, coalesced, inside the tier; subtree_max correct;
 * counters exact; free + live + reserved == capacity). The randomized case
 * runs against a list model written from the design and logs its seed;
 * load svod_test.ko with seed=<seed> to replay it.
 */

#include <kunit/test.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/prandom.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/mm.h>

#include "core/tier.h"
#include "svod_test.h"

#define MAX_SPANS	8
#define MAX_REGIONS	4
#define MAX_STEPS	12
#define MAX_LIVE	8

struct span {
	u64 start;
	u64 end;
};

/* Per-case state; the exit hook releases whatever a failed case left. */
struct tier_ctx {
	struct svod_tier tier;
	bool inited;
	struct svod_tier_node **live;
	unsigned int nr_live_slots;
};

static int tier_test_init(struct kunit *test)
{
	struct tier_ctx *ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, ctx);
	test->priv = ctx;
	return 0;
}

static void tier_test_exit(struct kunit *test)
{
	struct tier_ctx *ctx = test->priv;
	unsigned int i;

	if (!ctx->inited)
		return;
	/* The benchmark leaves 100k live: let the scheduler and RCU breathe. */
	for (i = 0; i < ctx->nr_live_slots; i++) {
		if (ctx->live[i])
			svod_tier_free(&ctx->tier, ctx->live[i]);
		cond_resched();
	}
	svod_tier_fini(&ctx->tier);
	kvfree(ctx->live);
}

/* Set up ctx->tier with room for @nr_live live records. */
static int ctx_init(struct kunit *test, u64 base, u64 capacity, u64 align,
		    const struct svod_tier_region *regions, unsigned int nr,
		    unsigned int nr_live)
{
	struct tier_ctx *ctx = test->priv;
	int ret;

	ret = svod_tier_init(&ctx->tier, base, capacity, align, regions, nr,
			     GFP_KERNEL);
	if (ret)
		return ret;
	ctx->live = kvcalloc(nr_live, sizeof(*ctx->live), GFP_KERNEL);
	if (!ctx->live) {
		svod_tier_fini(&ctx->tier);
		return -ENOMEM;
	}
	ctx->nr_live_slots = nr_live;
	ctx->inited = true;
	return 0;
}

static struct svod_tier_node *to_node(struct rb_node *rb)
{
	return rb_entry(rb, struct svod_tier_node, rb);
}

/* Checks subtree_max below @rb; returns the largest span there. */
static u64 check_subtree(struct kunit *test, struct rb_node *rb)
{
	u64 max, left, right;

	if (!rb)
		return 0;
	left = check_subtree(test, rb->rb_left);
	right = check_subtree(test, rb->rb_right);
	max = max3(to_node(rb)->size, left, right);
	KUNIT_EXPECT_EQ_MSG(test, to_node(rb)->subtree_max, max,
			    "subtree_max at %#llx", to_node(rb)->start);
	return max;
}

/* The shared invariant checker. Returns the number of free spans seen. */
static unsigned int check_tier(struct kunit *test, const struct svod_tier *tier)
{
	u64 sum = 0, largest = 0, prev_end = 0, end;
	const struct svod_tier_node *node;
	unsigned int n = 0;
	struct rb_node *rb;

	for (rb = rb_first(&tier->free); rb; rb = rb_next(rb), n++) {
		node = to_node(rb);
		end = node->start + node->size;
		KUNIT_EXPECT_GT(test, node->size, 0ULL);
		KUNIT_EXPECT_GE(test, node->start, tier->base);
		KUNIT_EXPECT_LE(test, end, tier->base + tier->capacity);
		if (n)
			KUNIT_EXPECT_GT_MSG(test, node->start, prev_end,
					    "spans not sorted, disjoint, coalesced");
		prev_end = end;
		sum += node->size;
		largest = max(largest, node->size);
	}
	KUNIT_EXPECT_EQ(test, tier->nr_free_spans, n);
	KUNIT_EXPECT_EQ(test, tier->free_bytes, sum);
	KUNIT_EXPECT_EQ(test, tier->free_bytes + tier->live_bytes +
			tier->reserved_bytes, tier->capacity);
	KUNIT_EXPECT_EQ(test, check_subtree(test, tier->free.rb_node), largest);
	KUNIT_EXPECT_EQ(test, svod_tier_largest_free(tier), largest);
	return n;
}

static void expect_spans(struct kunit *test, const struct svod_tier *tier,
			 const struct span *want, unsigned int nr_want)
{
	unsigned int i = 0;
	struct rb_node *rb;

	KUNIT_EXPECT_EQ(test, check_tier(test, tier), nr_want);
	for (rb = rb_first(&tier->free); rb && i < nr_want; rb = rb_next(rb), i++) {
		KUNIT_EXPECT_EQ_MSG(test, to_node(rb)->start, want[i].start, "span %u", i);
		KUNIT_EXPECT_EQ_MSG(test, to_node(rb)->start + to_node(rb)->size,
				    want[i].end, "span %u", i);
	}
}

/* Set-up validation and reserved-region carving. */
struct init_row {
	const char *name;
	u64 base;
	u64 capacity;
	u64 align;
	struct svod_tier_region regions[MAX_REGIONS];
	unsigned int nr_regions;
	int err;
	struct span spans[MAX_SPANS];
	unsigned int nr_spans;
};

static const struct init_row init_rows[] = {
	{ .name = "capacity_zero", .capacity = 0, .align = 64, .err = -EINVAL },
	{ .name = "align_zero", .capacity = 0x1000, .align = 0, .err = -EINVAL },
	{ .name = "align_not_power_of_two", .capacity = 0x1000, .align = 48,
	  .err = -EINVAL },
	{ .name = "end_overflows_u64", .base = U64_MAX - 0xfff,
	  .capacity = 0x1001, .align = 64, .err = -EINVAL },
	{ .name = "end_at_u64_max", .base = U64_MAX - 0xfff, .capacity = 0xfff,
	  .align = 64, .spans = { { U64_MAX - 0xfff, U64_MAX } }, .nr_spans = 1 },
	{ .name = "reserved_size_zero", .base = 0x1000, .capacity = 0x1000,
	  .align = 64, .regions = { { 0x1100, 0 } }, .nr_regions = 1,
	  .err = -EINVAL },
	{ .name = "reserved_below_base", .base = 0x1000, .capacity = 0x1000,
	  .align = 64, .regions = { { 0xff0, 0x20 } }, .nr_regions = 1,
	  .err = -EINVAL },
	{ .name = "reserved_past_end", .base = 0x1000, .capacity = 0x1000,
	  .align = 64, .regions = { { 0x1ff0, 0x20 } }, .nr_regions = 1,
	  .err = -EINVAL },
	{ .name = "reserved_end_overflows_u64", .base = 0x1000,
	  .capacity = 0x1000, .align = 64, .regions = { { 0x1800, U64_MAX } },
	  .nr_regions = 1, .err = -EINVAL },
	{ .name = "second_reserved_bad", .base = 0x1000, .capacity = 0x1000,
	  .align = 64, .regions = { { 0x1100, 0x100 }, { 0x3000, 0x10 } },
	  .nr_regions = 2, .err = -EINVAL },
	{ .name = "no_reserved", .base = 0x1000, .capacity = 0x1000, .align = 64,
	  .spans = { { 0x1000, 0x2000 } }, .nr_spans = 1 },
	{ .name = "reserved_at_start", .base = 0x1000, .capacity = 0x1000,
	  .align = 64, .regions = { { 0x1000, 0x100 } }, .nr_regions = 1,
	  .spans = { { 0x1100, 0x2000 } }, .nr_spans = 1 },
	{ .name = "reserved_in_middle", .base = 0x1000, .capacity = 0x1000,
	  .align = 64, .regions = { { 0x1400, 0x100 } }, .nr_regions = 1,
	  .spans = { { 0x1000, 0x1400 }, { 0x1500, 0x2000 } }, .nr_spans = 2 },
	{ .name = "reserved_at_end", .base = 0x1000, .capacity = 0x1000,
	  .align = 64, .regions = { { 0x1f00, 0x100 } }, .nr_regions = 1,
	  .spans = { { 0x1000, 0x1f00 } }, .nr_spans = 1 },
	{ .name = "reserved_overlapping", .base = 0x1000, .capacity = 0x1000,
	  .align = 64, .regions = { { 0x1400, 0x200 }, { 0x1500, 0x200 } },
	  .nr_regions = 2,
	  .spans = { { 0x1000, 0x1400 }, { 0x1700, 0x2000 } }, .nr_spans = 2 },
	{ .name = "reserved_adjacent", .base = 0x1000, .capacity = 0x1000,
	  .align = 64, .regions = { { 0x1400, 0x100 }, { 0x1500, 0x100 } },
	  .nr_regions = 2,
	  .spans = { { 0x1000, 0x1400 }, { 0x1600, 0x2000 } }, .nr_spans = 2 },
	{ .name = "reserved_nested_and_unsorted", .base = 0x1000,
	  .capacity = 0x1000, .align = 64,
	  .regions = { { 0x1800, 0x100 }, { 0x1200, 0x400 }, { 0x1300, 0x10 } },
	  .nr_regions = 3,
	  .spans = { { 0x1000, 0x1200 }, { 0x1600, 0x1800 }, { 0x1900, 0x2000 } },
	  .nr_spans = 3 },
	{ .name = "reserved_everything", .base = 0x1000, .capacity = 0x1000,
	  .align = 64, .regions = { { 0x1000, 0x800 }, { 0x1800, 0x800 } },
	  .nr_regions = 2, .nr_spans = 0 },
	{ .name = "reserved_across_4gib", .base = 0xffff0000,
	  .capacity = 0x20000, .align = 64,
	  .regions = { { 0xfffff000, 0x2000 } }, .nr_regions = 1,
	  .spans = { { 0xffff0000, 0xfffff000 }, { 0x100001000, 0x100010000 } },
	  .nr_spans = 2 },
};

static void init_row_desc(const struct init_row *row, char *desc)
{
	strscpy(desc, row->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(init_rows, init_rows, init_row_desc);

static void init_validates_and_carves(struct kunit *test)
{
	const struct init_row *row = test->param_value;
	struct tier_ctx *ctx = test->priv;
	struct svod_tier_node *node;
	int ret;

	ret = ctx_init(test, row->base, row->capacity, row->align, row->regions,
		       row->nr_regions, 1);
	KUNIT_ASSERT_EQ(test, ret, row->err);
	if (ret)
		return;
	expect_spans(test, &ctx->tier, row->spans, row->nr_spans);
	KUNIT_EXPECT_EQ(test, ctx->tier.nr_live, 0U);
	KUNIT_EXPECT_EQ(test, ctx->tier.live_bytes, 0ULL);
	if (!row->nr_spans)
		KUNIT_EXPECT_EQ(test, svod_tier_alloc(&ctx->tier, 1, 0, GFP_KERNEL,
						      &node), -ENOSPC);
}

/* Allocation and free scripts. */
enum step_op { STEP_END, STEP_ALLOC, STEP_FREE };

/*
 * STEP_ALLOC puts the allocation in live[slot] and expects @err or, on
 * success, @start; STEP_FREE frees live[slot]. After each step the tier
 * must have @nr_spans free spans.
 */
struct tier_step {
	enum step_op op;
	unsigned int slot;
	u64 size;
	u64 align;
	int err;
	u64 start;
	unsigned int nr_spans;
};

struct script_row {
	const char *name;
	u64 base;
	u64 capacity;
	u64 align;
	struct svod_tier_region regions[MAX_REGIONS];
	unsigned int nr_regions;
	struct tier_step steps[MAX_STEPS];
	struct span spans[MAX_SPANS];	/* free spans at the end */
	unsigned int nr_spans;
};

#define ALLOC(s, sz, al, st, n)	{ STEP_ALLOC, s, sz, al, 0, st, n }
#define ALLOC_ERR(sz, al, e, n)	{ STEP_ALLOC, 0, sz, al, e, 0, n }
#define FREE(s, n)		{ STEP_FREE, s, 0, 0, 0, 0, n }

static const struct script_row script_rows[] = {
	{ .name = "first_fit_takes_lowest_address", .capacity = 0x1000,
	  .align = 64,
	  .steps = { ALLOC(0, 0x100, 0, 0x000, 1), ALLOC(1, 0x100, 0, 0x100, 1),
		     ALLOC(2, 0x100, 0, 0x200, 1), FREE(0, 2),
		     ALLOC(3, 0x80, 0, 0x000, 2), ALLOC(4, 0x80, 0, 0x080, 1),
		     ALLOC(5, 0x80, 0, 0x300, 1) },
	  .spans = { { 0x380, 0x1000 } }, .nr_spans = 1 },
	{ .name = "unaligned_base_head_fragment_stays_free", .base = 0x10,
	  .capacity = 0x1000, .align = 64,
	  .steps = { ALLOC(0, 0x40, 0, 0x40, 2), ALLOC(1, 0x20, 0, 0x80, 2) },
	  .spans = { { 0x10, 0x40 }, { 0xa0, 0x1010 } }, .nr_spans = 2 },
	{ .name = "larger_align_head_fragment_reused", .base = 0x40,
	  .capacity = 0x2000, .align = 64,
	  .steps = { ALLOC(0, 0x40, 0x1000, 0x1000, 2),
		     ALLOC(1, 0x40, 0, 0x40, 2), ALLOC(2, 0x40, 64, 0x80, 2),
		     FREE(0, 1), ALLOC(3, 0x1000, 0x1000, 0x1000, 2) },
	  .spans = { { 0xc0, 0x1000 }, { 0x2000, 0x2040 } }, .nr_spans = 2 },
	{ .name = "smaller_align_raised_to_tier", .base = 0x80,
	  .capacity = 0x1000, .align = 0x100,
	  .steps = { ALLOC(0, 0x10, 0x10, 0x100, 2),
		     ALLOC(1, 0x10, 1, 0x200, 3) },
	  .spans = { { 0x80, 0x100 }, { 0x110, 0x200 }, { 0x210, 0x1080 } },
	  .nr_spans = 3 },
	{ .name = "large_span_skipped_when_aligned_start_overflows_it",
	  .capacity = 0x3000, .align = 64,
	  .regions = { { 0x0, 0x10 }, { 0x90, 0xf70 } }, .nr_regions = 2,
	  .steps = { ALLOC(0, 0x80, 0, 0x1000, 2), ALLOC(1, 0x40, 0, 0x40, 3),
		     ALLOC(2, 0x10, 0, 0x80, 2), ALLOC(3, 0x20, 0, 0x1080, 2) },
	  .spans = { { 0x10, 0x40 }, { 0x10a0, 0x3000 } }, .nr_spans = 2 },
	{ .name = "bad_arguments_and_exhaustion", .capacity = 0x1000,
	  .align = 64,
	  .steps = { ALLOC_ERR(0, 0, -EINVAL, 1), ALLOC_ERR(0x40, 3, -EINVAL, 1),
		     ALLOC_ERR(0x40, 96, -EINVAL, 1),
		     ALLOC_ERR(0x1001, 0, -ENOSPC, 1),
		     ALLOC_ERR(U64_MAX, 0, -ENOSPC, 1),
		     ALLOC(0, 0x40, 0, 0, 1),
		     ALLOC_ERR(0x40, 1ULL << 63, -ENOSPC, 1),
		     ALLOC_ERR(0xfc1, 0, -ENOSPC, 1),
		     ALLOC(1, 0xfc0, 0, 0x40, 0), ALLOC_ERR(1, 0, -ENOSPC, 0) },
	  .nr_spans = 0 },
	{ .name = "exact_fit_consumes_span", .capacity = 0x100, .align = 64,
	  .steps = { ALLOC(0, 0x100, 0, 0, 0), ALLOC_ERR(1, 0, -ENOSPC, 0),
		     FREE(0, 1) },
	  .spans = { { 0, 0x100 } }, .nr_spans = 1 },
	{ .name = "coalesce_none_left_right", .capacity = 0x400, .align = 0x100,
	  .steps = { ALLOC(0, 0x100, 0, 0x000, 1), ALLOC(1, 0x100, 0, 0x100, 1),
		     ALLOC(2, 0x100, 0, 0x200, 1), ALLOC(3, 0x100, 0, 0x300, 0),
		     FREE(1, 1), FREE(2, 1), FREE(0, 1), FREE(3, 1) },
	  .spans = { { 0, 0x400 } }, .nr_spans = 1 },
	{ .name = "coalesce_both_sides", .capacity = 0x400, .align = 0x100,
	  .steps = { ALLOC(0, 0x100, 0, 0x000, 1), ALLOC(1, 0x100, 0, 0x100, 1),
		     ALLOC(2, 0x100, 0, 0x200, 1), ALLOC(3, 0x100, 0, 0x300, 0),
		     FREE(0, 1), FREE(2, 2), FREE(1, 1) },
	  .spans = { { 0, 0x300 } }, .nr_spans = 1 },
	{ .name = "coalesce_around_reserved_keeps_it", .capacity = 0x400,
	  .align = 0x100, .regions = { { 0x100, 0x100 } }, .nr_regions = 1,
	  .steps = { ALLOC(0, 0x100, 0, 0x000, 1), ALLOC(1, 0x100, 0, 0x200, 1),
		     FREE(0, 2), FREE(1, 2) },
	  .spans = { { 0, 0x100 }, { 0x200, 0x400 } }, .nr_spans = 2 },
	{ .name = "straddles_4gib", .base = 0xfffff000, .capacity = 0x3000,
	  .align = 0x1000,
	  .steps = { ALLOC(0, 0x2000, 0, 0xfffff000, 1),
		     ALLOC(1, 0x1000, 0, 0x100001000, 0) },
	  .nr_spans = 0 },
	{ .name = "larger_than_4gib", .capacity = 0x200000000, .align = 64,
	  .steps = { ALLOC(0, 0x100000001, 0, 0, 1),
		     ALLOC_ERR(0x100000000, 0x100000000, -ENOSPC, 1),
		     ALLOC(1, 0xffffffc0, 0, 0x100000040, 1) },
	  .spans = { { 0x100000001, 0x100000040 } }, .nr_spans = 1 },
	{ .name = "aligned_start_overflows_u64", .base = U64_MAX - 0xfff,
	  .capacity = 0xfff, .align = 1,
	  .steps = { ALLOC(0, 0x10, 0x1000, U64_MAX - 0xfff, 1),
		     ALLOC_ERR(0x10, 0x1000, -ENOSPC, 1),
		     ALLOC(1, 0x10, 0x10, U64_MAX - 0xfef, 1) },
	  .spans = { { U64_MAX - 0xfdf, U64_MAX } }, .nr_spans = 1 },
};

static void script_row_desc(const struct script_row *row, char *desc)
{
	strscpy(desc, row->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(script_rows, script_rows, script_row_desc);

static void alloc_free_script(struct kunit *test)
{
	const struct script_row *row = test->param_value;
	struct tier_ctx *ctx = test->priv;
	const struct tier_step *step;
	struct svod_tier_node *node;
	unsigned int i;
	int ret;

	KUNIT_ASSERT_EQ(test, ctx_init(test, row->base, row->capacity, row->align,
				       row->regions, row->nr_regions, MAX_STEPS), 0);
	for (i = 0; i < MAX_STEPS && row->steps[i].op != STEP_END; i++) {
		step = &row->steps[i];
		if (step->op == STEP_FREE) {
			KUNIT_ASSERT_NOT_NULL(test, ctx->live[step->slot]);
			svod_tier_free(&ctx->tier, ctx->live[step->slot]);
			ctx->live[step->slot] = NULL;
		} else {
			node = NULL;
			ret = svod_tier_alloc(&ctx->tier, step->size, step->align,
					      GFP_KERNEL, &node);
			KUNIT_ASSERT_EQ_MSG(test, ret, step->err, "step %u", i);
			if (!ret) {
				KUNIT_EXPECT_EQ_MSG(test, node->start, step->start,
						    "step %u", i);
				KUNIT_EXPECT_EQ(test, node->size, step->size);
				KUNIT_ASSERT_NULL(test, ctx->live[step->slot]);
				ctx->live[step->slot] = node;
			}
		}
		KUNIT_EXPECT_EQ_MSG(test, check_tier(test, &ctx->tier),
				    step->nr_spans, "free spans after step %u", i);
	}
	expect_spans(test, &ctx->tier, row->spans, row->nr_spans);
}

/* Snapshot of everything observable, to prove a failed call changed nothing. */
struct tier_snapshot {
	struct span spans[MAX_SPANS * 4];
	unsigned int nr;
	u64 free_bytes, live_bytes;
	u32 nr_live;
};

static void snapshot(const struct svod_tier *tier, struct tier_snapshot *s)
{
	struct rb_node *rb;

	memset(s, 0, sizeof(*s));
	for (rb = rb_first(&tier->free); rb && s->nr < ARRAY_SIZE(s->spans);
	     rb = rb_next(rb), s->nr++) {
		s->spans[s->nr].start = to_node(rb)->start;
		s->spans[s->nr].end = to_node(rb)->start + to_node(rb)->size;
	}
	s->free_bytes = tier->free_bytes;
	s->live_bytes = tier->live_bytes;
	s->nr_live = tier->nr_live;
}

static void exhaustion_leaves_state_unchanged(struct kunit *test)
{
	static const struct { u64 size, align; int err; } fails[] = {
		{ 0x101, 0, -ENOSPC }, { 0x40, 0x10000, -ENOSPC },
		{ U64_MAX, 0, -ENOSPC }, { 0, 0, -EINVAL }, { 0x40, 5, -EINVAL },
	};
	struct tier_ctx *ctx = test->priv;
	struct tier_snapshot *before, *after;
	struct svod_tier_node *node;
	unsigned int i;

	before = kunit_kzalloc(test, sizeof(*before), GFP_KERNEL);
	after = kunit_kzalloc(test, sizeof(*after), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, before);
	KUNIT_ASSERT_NOT_NULL(test, after);

	/* 16 blocks of 0x100, the odd ones free: 8 spans, none at 0. */
	KUNIT_ASSERT_EQ(test, ctx_init(test, 0, 0x1000, 0x100, NULL, 0, 16), 0);
	for (i = 0; i < 16; i++)
		KUNIT_ASSERT_EQ(test, svod_tier_alloc(&ctx->tier, 0x100, 0,
						      GFP_KERNEL, &ctx->live[i]), 0);
	for (i = 1; i < 16; i += 2) {
		svod_tier_free(&ctx->tier, ctx->live[i]);
		ctx->live[i] = NULL;
	}
	snapshot(&ctx->tier, before);
	KUNIT_EXPECT_EQ(test, before->nr, 8U);
	for (i = 0; i < ARRAY_SIZE(fails); i++) {
		KUNIT_EXPECT_EQ(test, svod_tier_alloc(&ctx->tier, fails[i].size,
						      fails[i].align, GFP_KERNEL,
						      &node), fails[i].err);
		snapshot(&ctx->tier, after);
		KUNIT_EXPECT_EQ(test, memcmp(before, after, sizeof(*before)), 0);
		check_tier(test, &ctx->tier);
	}
}

/* The list model, written from the design: linear first fit, merge on free. */
#define MODEL_SPANS	128
#define RANDOM_LIVE	48
#define RANDOM_OPS	3000

struct tier_model {
	u64 align;
	struct span spans[MODEL_SPANS];
	unsigned int nr;
};

static int model_alloc(struct tier_model *m, u64 size, u64 align, u64 *start)
{
	struct span *s;
	unsigned int i;
	u64 aligned;

	if (align < m->align)
		align = m->align;
	for (i = 0; i < m->nr; i++) {
		s = &m->spans[i];
		aligned = (s->start + align - 1) & ~(align - 1);
		if (aligned + size > s->end)
			continue;
		if (aligned > s->start && aligned + size < s->end) {
			memmove(&m->spans[i + 1], s, (m->nr - i) * sizeof(*s));
			m->nr++;
			s->end = aligned;
			m->spans[i + 1].start = aligned + size;
		} else if (aligned > s->start) {
			s->end = aligned;
		} else if (aligned + size < s->end) {
			s->start = aligned + size;
		} else {
			memmove(s, s + 1, (m->nr - i - 1) * sizeof(*s));
			m->nr--;
		}
		*start = aligned;
		return 0;
	}
	return -ENOSPC;
}

static void model_free(struct tier_model *m, u64 start, u64 size)
{
	unsigned int i = 0;

	while (i < m->nr && m->spans[i].start < start)
		i++;
	memmove(&m->spans[i + 1], &m->spans[i], (m->nr - i) * sizeof(m->spans[0]));
	m->spans[i].start = start;
	m->spans[i].end = start + size;
	m->nr++;
	if (i + 1 < m->nr && m->spans[i].end == m->spans[i + 1].start) {
		m->spans[i].end = m->spans[i + 1].end;
		memmove(&m->spans[i + 1], &m->spans[i + 2],
			(m->nr - i - 2) * sizeof(m->spans[0]));
		m->nr--;
	}
	if (i > 0 && m->spans[i - 1].end == m->spans[i].start) {
		m->spans[i - 1].end = m->spans[i].end;
		memmove(&m->spans[i], &m->spans[i + 1],
			(m->nr - i - 1) * sizeof(m->spans[0]));
		m->nr--;
	}
}

static void random_against_list_model(struct kunit *test)
{
	struct svod_tier_region regions[MAX_REGIONS];
	struct tier_ctx *ctx = test->priv;
	u64 seed = svod_test_seed(test);
	struct svod_tier_node *node;
	u64 capacity, align, size, req_align, start;
	struct tier_model *m;
	struct rnd_state rnd;
	unsigned int i, k, nr;
	u64 reg_end, cut;
	int ret, want;

	prandom_seed_state(&rnd, seed);
	m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, m);

	capacity = (prandom_u32_state(&rnd) % 0x400 + 0x40) * 0x100;
	align = 1ULL << (prandom_u32_state(&rnd) % 10);
	nr = prandom_u32_state(&rnd) % (MAX_REGIONS + 1);
	m->align = align;
	m->spans[0].start = 0x10000;
	m->spans[0].end = 0x10000 + capacity;
	m->nr = 1;
	for (i = 0; i < nr; i++) {
		regions[i].base = 0x10000 + prandom_u32_state(&rnd) % capacity;
		regions[i].size = prandom_u32_state(&rnd) % 0x2000 + 1;
		reg_end = min(regions[i].base + regions[i].size, 0x10000 + capacity);
		regions[i].size = reg_end - regions[i].base;
		/* Carve the model the design's way: split every span it meets. */
		for (k = 0; k < m->nr; k++) {
			struct span *s = &m->spans[k];

			if (reg_end <= s->start || regions[i].base >= s->end)
				continue;
			if (s->start < regions[i].base && reg_end < s->end) {
				memmove(s + 1, s, (m->nr - k) * sizeof(*s));
				m->nr++;
				s->end = regions[i].base;
				s[1].start = reg_end;
				k++;
			} else if (s->start < regions[i].base) {
				s->end = regions[i].base;
			} else if (reg_end < s->end) {
				s->start = reg_end;
			} else {
				memmove(s, s + 1, (m->nr - k - 1) * sizeof(*s));
				m->nr--;
				k--;
			}
		}
	}
	KUNIT_ASSERT_EQ(test, ctx_init(test, 0x10000, capacity, align, regions,
				       nr, RANDOM_LIVE), 0);
	expect_spans(test, &ctx->tier, m->spans, m->nr);

	for (i = 0; i < RANDOM_OPS; i++) {
		k = prandom_u32_state(&rnd) % RANDOM_LIVE;
		if (ctx->live[k]) {
			node = ctx->live[k];
			start = node->start;
			size = node->size;
			svod_tier_free(&ctx->tier, node);
			ctx->live[k] = NULL;
			model_free(m, start, size);
		} else {
			cut = prandom_u32_state(&rnd) % 4;
			size = (prandom_u32_state(&rnd) % (capacity >> (4 + 2 * cut))) + 1;
			req_align = prandom_u32_state(&rnd) % 3 ? 0 :
				    1ULL << (prandom_u32_state(&rnd) % 14);
			want = model_alloc(m, size, req_align, &start);
			ret = svod_tier_alloc(&ctx->tier, size, req_align, GFP_KERNEL,
					      &ctx->live[k]);
			KUNIT_ASSERT_EQ_MSG(test, ret, want, "op %u: alloc %#llx align %#llx",
					    i, size, req_align);
			if (!ret)
				KUNIT_ASSERT_EQ_MSG(test, ctx->live[k]->start, start,
						    "op %u", i);
			else
				ctx->live[k] = NULL;
		}
		KUNIT_ASSERT_LT(test, m->nr, MODEL_SPANS - 2);
		expect_spans(test, &ctx->tier, m->spans, m->nr);
	}
}

/* Figures only: ns per alloc and per free with 1k, 10k, 100k live. */
#define BENCH_BATCH	1000
#define BENCH_ROUNDS	10

static u64 bench_size(struct rnd_state *rnd)
{
	return ((u64)(prandom_u32_state(rnd) % 1024) + 1) * 64;
}

static void bench_level(struct kunit *test, unsigned int live)
{
	struct tier_ctx *ctx = test->priv;
	u64 t0, t_fill, t_alloc = 0, t_free = 0;
	unsigned int i, r, *idx;
	struct rnd_state rnd;
	int ret;

	idx = kunit_kmalloc_array(test, BENCH_BATCH, sizeof(*idx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, idx);
	prandom_seed_state(&rnd, live);
	KUNIT_ASSERT_EQ(test, ctx_init(test, 0, (u64)live * 65536 * 2, 64, NULL, 0,
				       live), 0);
	t_fill = 0;
	for (i = 0; i < live; i++) {
		t0 = ktime_get_ns();
		ret = svod_tier_alloc(&ctx->tier, bench_size(&rnd), 0, GFP_KERNEL,
				      &ctx->live[i]);
		t_fill += ktime_get_ns() - t0;
		KUNIT_ASSERT_EQ(test, ret, 0);
		cond_resched();
	}
	for (r = 0; r < BENCH_ROUNDS; r++) {
		for (i = 0; i < BENCH_BATCH; i++)
			idx[i] = prandom_u32_state(&rnd) % live;
		t0 = ktime_get_ns();
		for (i = 0; i < BENCH_BATCH; i++) {
			if (ctx->live[idx[i]]) {
				svod_tier_free(&ctx->tier, ctx->live[idx[i]]);
				ctx->live[idx[i]] = NULL;
			}
		}
		t_free += ktime_get_ns() - t0;
		t0 = ktime_get_ns();
		for (i = 0; i < BENCH_BATCH; i++)
			if (!ctx->live[idx[i]])
				KUNIT_ASSERT_EQ(test,
						svod_tier_alloc(&ctx->tier, bench_size(&rnd), 0,
								GFP_KERNEL, &ctx->live[idx[i]]), 0);
		t_alloc += ktime_get_ns() - t0;
		cond_resched();
	}
	kunit_info(test, "live=%u free_spans=%u fill ns/alloc=%llu churn ns/alloc=%llu ns/free=%llu\n",
		   live, ctx->tier.nr_free_spans, div_u64(t_fill, live),
		   div_u64(t_alloc, BENCH_ROUNDS * BENCH_BATCH),
		   div_u64(t_free, BENCH_ROUNDS * BENCH_BATCH));
	tier_test_exit(test);
	ctx->inited = false;
	ctx->live = NULL;
	ctx->nr_live_slots = 0;
}

static void bench_1k_10k_100k_live(struct kunit *test)
{
	bench_level(test, 1000);
	bench_level(test, 10000);
	bench_level(test, 100000);
}

/* Case attributes (KUNIT_CASE_SLOW) arrived after 6.1: there, a plain case. */
#ifndef KUNIT_CASE_SLOW
#define KUNIT_CASE_SLOW(test_name)	KUNIT_CASE(test_name)
#endif

static struct kunit_case svod_tier_cases[] = {
	KUNIT_CASE_PARAM(init_validates_and_carves, init_rows_gen_params),
	KUNIT_CASE_PARAM(alloc_free_script, script_rows_gen_params),
	KUNIT_CASE(exhaustion_leaves_state_unchanged),
	KUNIT_CASE(random_against_list_model),
	KUNIT_CASE_SLOW(bench_1k_10k_100k_live),
	{}
};

struct kunit_suite svod_range_suite = {
	.name = "svod_tier",
	.init = tier_test_init,
	.exit = tier_test_exit,
	.test_cases = svod_tier_cases,
};
