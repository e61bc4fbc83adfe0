// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite svod_range: the range allocator (driver/core/range.c).
 *
 * Every scenario is a table row; the cases only run the rows and compare
 * with a shared checker that walks the whole range after each step: the
 * free spans through svod_range_for_each_free() (sorted, disjoint,
 * coalesced, inside the range), the hole tree (subtree_max_hole exact), the
 * node list (address order, each hole up to the next node) and the
 * counters (free + live + reserved == capacity). The nodes are the test's,
 * embedded in its own arrays as a driver embeds them in its records. The
 * randomized case runs against a list model written from the design, with
 * the seed of svod_test_seed() (which logs how to replay it).
 */

#include <kunit/test.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/prandom.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "core/range.h"
#include "svod_test.h"

#define MAX_SPANS	8
#define MAX_REGIONS	4
#define MAX_STEPS	12
/* The node failing steps use: never inserted successfully. */
#define ERR_SLOT	MAX_STEPS

struct span {
	u64 start;
	u64 end;
};

/* Per-case state; the exit hook removes whatever a failed case left. */
struct range_ctx {
	struct svod_range range;
	bool inited;
	struct svod_range_node *nodes;	/* the caller's nodes, zeroed */
	unsigned int nr_nodes;
};

static int range_test_init(struct kunit *test)
{
	struct range_ctx *ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, ctx);
	test->priv = ctx;
	return 0;
}

static void ctx_release(struct range_ctx *ctx)
{
	unsigned int i;

	if (!ctx->inited)
		return;
	/* Up to 100k live: let the scheduler and RCU breathe. */
	for (i = 0; i < ctx->nr_nodes; i++) {
		if (svod_range_node_allocated(&ctx->nodes[i]))
			svod_range_remove(&ctx->range, &ctx->nodes[i]);
		if (i % 1024 == 1023)
			cond_resched();
	}
	svod_range_fini(&ctx->range);
	kvfree(ctx->nodes);
	ctx->nodes = NULL;
	ctx->nr_nodes = 0;
	ctx->inited = false;
}

static void range_test_exit(struct kunit *test)
{
	ctx_release(test->priv);
}

/* Set up ctx->range and @nr_nodes zeroed nodes of the test's own. */
static int ctx_init(struct kunit *test, u64 base, u64 capacity, u64 align,
		    const struct svod_range_region *regions, unsigned int nr,
		    unsigned int nr_nodes)
{
	struct range_ctx *ctx = test->priv;
	int ret;

	ret = svod_range_init(&ctx->range, base, capacity, align, regions, nr,
			      GFP_KERNEL);
	if (ret)
		return ret;
	ctx->nodes = kvcalloc(nr_nodes, sizeof(*ctx->nodes), GFP_KERNEL);
	if (!ctx->nodes) {
		svod_range_fini(&ctx->range);
		return -ENOMEM;
	}
	ctx->nr_nodes = nr_nodes;
	ctx->inited = true;
	return 0;
}

static struct svod_range_node *hole_node(struct rb_node *rb)
{
	return rb_entry(rb, struct svod_range_node, rb_hole);
}

/* Checks subtree_max_hole below @rb; returns the largest hole there. */
static u64 check_subtree(struct kunit *test, struct rb_node *rb)
{
	u64 max, left, right;

	if (!rb)
		return 0;
	left = check_subtree(test, rb->rb_left);
	right = check_subtree(test, rb->rb_right);
	KUNIT_EXPECT_GT(test, hole_node(rb)->hole_size, 0ULL);
	max = max3(hole_node(rb)->hole_size, left, right);
	KUNIT_EXPECT_EQ_MSG(test, hole_node(rb)->subtree_max_hole, max,
			    "subtree_max_hole after %#llx", hole_node(rb)->start);
	return max;
}

/* The node list: address order, each hole exactly up to the next node. */
static void check_nodes(struct kunit *test, const struct svod_range *r)
{
	const struct svod_range_node *node = &r->head, *next;
	u64 live = 0, reserved = 0, end;
	u32 nr_live = 0;

	KUNIT_EXPECT_EQ(test, r->head.start, r->base);
	KUNIT_EXPECT_EQ(test, r->head.size, 0ULL);
	KUNIT_EXPECT_FALSE(test, svod_range_node_allocated(&r->head));
	do {
		next = list_next_entry(node, link);
		end = next == &r->head ? r->base + r->capacity : next->start;
		KUNIT_EXPECT_LE_MSG(test, node->start + node->size, end,
				    "node at %#llx overlaps the next",
				    node->start);
		KUNIT_EXPECT_EQ_MSG(test, node->hole_size,
				    end - (node->start + node->size),
				    "hole after %#llx", node->start);
		KUNIT_EXPECT_EQ(test, RB_EMPTY_NODE(&node->rb_hole),
				!node->hole_size);
		if (svod_range_node_allocated(node)) {
			live += node->size;
			nr_live++;
		} else {
			reserved += node->size;
		}
		node = next;
	} while (node != &r->head);
	KUNIT_EXPECT_EQ(test, r->live_bytes, live);
	KUNIT_EXPECT_EQ(test, r->nr_live, nr_live);
	KUNIT_EXPECT_EQ(test, r->reserved_bytes, reserved);
}

/* The shared invariant checker. Returns the number of free spans seen. */
static unsigned int check_range(struct kunit *test, const struct svod_range *r)
{
	u64 sum = 0, largest = 0, prev_end = 0, start, size;
	struct svod_range_node *pos;
	unsigned int n = 0;

	svod_range_for_each_free(pos, r, start, size) {
		KUNIT_EXPECT_GT(test, size, 0ULL);
		KUNIT_EXPECT_EQ(test, start, pos->start + pos->size);
		KUNIT_EXPECT_GE(test, start, r->base);
		KUNIT_EXPECT_LE(test, start + size, r->base + r->capacity);
		if (n)
			KUNIT_EXPECT_GT_MSG(test, start, prev_end,
					    "spans not sorted, disjoint, coalesced");
		prev_end = start + size;
		sum += size;
		largest = max(largest, size);
		n++;
	}
	KUNIT_EXPECT_EQ(test, r->nr_free_spans, n);
	KUNIT_EXPECT_EQ(test, r->free_bytes, sum);
	KUNIT_EXPECT_EQ(test, r->free_bytes + r->live_bytes + r->reserved_bytes,
			r->capacity);
	KUNIT_EXPECT_EQ(test, check_subtree(test, r->holes.rb_node), largest);
	KUNIT_EXPECT_EQ(test, svod_range_largest_free(r), largest);
	check_nodes(test, r);
	return n;
}

static void expect_spans(struct kunit *test, const struct svod_range *r,
			 const struct span *want, unsigned int nr_want)
{
	struct svod_range_node *pos;
	unsigned int i = 0;
	u64 start, size;

	KUNIT_EXPECT_EQ(test, check_range(test, r), nr_want);
	svod_range_for_each_free(pos, r, start, size) {
		if (i == nr_want)
			break;
		KUNIT_EXPECT_EQ_MSG(test, start, want[i].start, "span %u", i);
		KUNIT_EXPECT_EQ_MSG(test, start + size, want[i].end, "span %u", i);
		i++;
	}
}

/* Set-up validation and reserved-region carving. */
struct init_row {
	const char *name;
	u64 base;
	u64 capacity;
	u64 align;
	struct svod_range_region regions[MAX_REGIONS];
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

/* svod_range_refusal() agrees with svod_range_init() and names the reason. */
static void refusal_names_the_reason(struct kunit *test)
{
	static const struct { const char *row, *why; } named[] = {
		{ "capacity_zero", "size 0" },
		{ "align_zero", "align not a power of two" },
		{ "align_not_power_of_two", "align not a power of two" },
		{ "end_overflows_u64", "base + size wraps around" },
		{ "reserved_size_zero", "a reserved region of size 0" },
		{ "reserved_below_base", "a reserved region outside the tier" },
	};
	const struct init_row *row;
	unsigned int i, j, seen = 0;
	const char *why;

	for (i = 0; i < ARRAY_SIZE(init_rows); i++) {
		row = &init_rows[i];
		why = svod_range_refusal(row->base, row->capacity, row->align,
					 row->regions, row->nr_regions);
		KUNIT_EXPECT_EQ_MSG(test, !!why, row->err == -EINVAL, "%s", row->name);
		for (j = 0; j < ARRAY_SIZE(named); j++) {
			if (strcmp(row->name, named[j].row))
				continue;
			KUNIT_EXPECT_STREQ_MSG(test, why ?: "(none)", named[j].why, "%s",
					       row->name);
			seen++;
		}
	}
	KUNIT_EXPECT_EQ(test, seen, ARRAY_SIZE(named));
}

static void init_validates_and_carves(struct kunit *test)
{
	const struct init_row *row = test->param_value;
	struct range_ctx *ctx = test->priv;
	int ret;

	ret = ctx_init(test, row->base, row->capacity, row->align, row->regions,
		       row->nr_regions, 1);
	KUNIT_ASSERT_EQ(test, ret, row->err);
	if (ret)
		return;
	expect_spans(test, &ctx->range, row->spans, row->nr_spans);
	KUNIT_EXPECT_EQ(test, ctx->range.nr_live, 0U);
	KUNIT_EXPECT_EQ(test, ctx->range.live_bytes, 0ULL);
	if (!row->nr_spans) {
		KUNIT_EXPECT_EQ(test, svod_range_insert(&ctx->range,
							&ctx->nodes[0], 1, 0),
				-ENOSPC);
		KUNIT_EXPECT_FALSE(test,
				   svod_range_node_allocated(&ctx->nodes[0]));
	}
}

/* Allocation and free scripts. */
enum step_op { STEP_END, STEP_ALLOC, STEP_FREE };

/*
 * STEP_ALLOC inserts node[slot] and expects @err (on node ERR_SLOT, never
 * allocated) or @start; STEP_FREE removes node[slot]. After each step the
 * range must have @nr_spans free spans.
 */
struct range_step {
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
	struct svod_range_region regions[MAX_REGIONS];
	unsigned int nr_regions;
	struct range_step steps[MAX_STEPS];
	struct span spans[MAX_SPANS];	/* free spans at the end */
	unsigned int nr_spans;
};

#define ALLOC(s, sz, al, st, n)	{ STEP_ALLOC, s, sz, al, 0, st, n }
#define ALLOC_ERR(sz, al, e, n)	{ STEP_ALLOC, ERR_SLOT, sz, al, e, 0, n }
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
	{ .name = "smaller_align_raised_to_range", .base = 0x80,
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

static void run_step(struct kunit *test, const struct range_step *step,
		     unsigned int i)
{
	struct range_ctx *ctx = test->priv;
	struct svod_range_node *node = &ctx->nodes[step->slot];
	int ret;

	if (step->op == STEP_FREE) {
		KUNIT_ASSERT_TRUE(test, svod_range_node_allocated(node));
		svod_range_remove(&ctx->range, node);
		KUNIT_EXPECT_FALSE(test, svod_range_node_allocated(node));
		return;
	}
	KUNIT_ASSERT_FALSE(test, svod_range_node_allocated(node));
	ret = svod_range_insert(&ctx->range, node, step->size, step->align);
	KUNIT_ASSERT_EQ_MSG(test, ret, step->err, "step %u", i);
	KUNIT_EXPECT_EQ(test, svod_range_node_allocated(node), !ret);
	if (ret)
		return;
	KUNIT_EXPECT_EQ_MSG(test, node->start, step->start, "step %u", i);
	KUNIT_EXPECT_EQ(test, node->size, step->size);
}

static void alloc_free_script(struct kunit *test)
{
	const struct script_row *row = test->param_value;
	struct range_ctx *ctx = test->priv;
	unsigned int i;

	KUNIT_ASSERT_EQ(test, ctx_init(test, row->base, row->capacity, row->align,
				       row->regions, row->nr_regions,
				       MAX_STEPS + 1), 0);
	for (i = 0; i < MAX_STEPS && row->steps[i].op != STEP_END; i++) {
		run_step(test, &row->steps[i], i);
		KUNIT_EXPECT_EQ_MSG(test, check_range(test, &ctx->range),
				    row->steps[i].nr_spans,
				    "free spans after step %u", i);
	}
	expect_spans(test, &ctx->range, row->spans, row->nr_spans);
}

/* Snapshot of everything observable, to prove a failed call changed nothing. */
struct range_snapshot {
	struct span spans[MAX_SPANS * 4];
	unsigned int nr;
	u64 free_bytes, live_bytes;
	u32 nr_live;
	struct svod_range_node node;
};

static void snapshot(const struct svod_range *r,
		     const struct svod_range_node *node,
		     struct range_snapshot *s)
{
	struct svod_range_node *pos;
	u64 start, size;

	memset(s, 0, sizeof(*s));
	svod_range_for_each_free(pos, r, start, size) {
		if (s->nr == ARRAY_SIZE(s->spans))
			break;
		s->spans[s->nr].start = start;
		s->spans[s->nr].end = start + size;
		s->nr++;
	}
	s->free_bytes = r->free_bytes;
	s->live_bytes = r->live_bytes;
	s->nr_live = r->nr_live;
	s->node = *node;
}

static void exhaustion_leaves_state_unchanged(struct kunit *test)
{
	static const struct { u64 size, align; int err; } fails[] = {
		{ 0x101, 0, -ENOSPC }, { 0x40, 0x10000, -ENOSPC },
		{ U64_MAX, 0, -ENOSPC }, { 0, 0, -EINVAL }, { 0x40, 5, -EINVAL },
	};
	struct range_ctx *ctx = test->priv;
	struct range_snapshot *before, *after;
	struct svod_range_node *spare;
	unsigned int i;

	before = kunit_kzalloc(test, sizeof(*before), GFP_KERNEL);
	after = kunit_kzalloc(test, sizeof(*after), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, before);
	KUNIT_ASSERT_NOT_NULL(test, after);

	/* 16 blocks of 0x100, the odd ones free: 8 spans, none at 0. */
	KUNIT_ASSERT_EQ(test, ctx_init(test, 0, 0x1000, 0x100, NULL, 0, 17), 0);
	for (i = 0; i < 16; i++)
		KUNIT_ASSERT_EQ(test, svod_range_insert(&ctx->range,
							&ctx->nodes[i], 0x100,
							0), 0);
	for (i = 1; i < 16; i += 2)
		svod_range_remove(&ctx->range, &ctx->nodes[i]);
	/* A node removed before and a zeroed one: both must stay as they are. */
	for (spare = &ctx->nodes[15]; spare; spare = spare == &ctx->nodes[15] ?
	     &ctx->nodes[16] : NULL) {
		snapshot(&ctx->range, spare, before);
		KUNIT_EXPECT_EQ(test, before->nr, 8U);
		for (i = 0; i < ARRAY_SIZE(fails); i++) {
			KUNIT_EXPECT_EQ(test,
					svod_range_insert(&ctx->range, spare,
							  fails[i].size,
							  fails[i].align),
					fails[i].err);
			snapshot(&ctx->range, spare, after);
			KUNIT_EXPECT_EQ(test, memcmp(before, after,
						     sizeof(*before)), 0);
			KUNIT_EXPECT_FALSE(test,
					   svod_range_node_allocated(spare));
			check_range(test, &ctx->range);
		}
	}
}

/*
 * A node's life: zeroed, inserted, removed (its start and size kept),
 * inserted again elsewhere; a failed insert leaves it unallocated.
 */
static void node_lifecycle(struct kunit *test)
{
	struct range_ctx *ctx = test->priv;
	struct svod_range_node *a, *b;

	KUNIT_ASSERT_EQ(test, ctx_init(test, 0x1000, 0x400, 0x100, NULL, 0, 2),
			0);
	a = &ctx->nodes[0];
	b = &ctx->nodes[1];
	KUNIT_EXPECT_FALSE(test, svod_range_node_allocated(a));

	KUNIT_ASSERT_EQ(test, svod_range_insert(&ctx->range, a, 0x100, 0), 0);
	KUNIT_EXPECT_TRUE(test, svod_range_node_allocated(a));
	KUNIT_EXPECT_EQ(test, a->start, 0x1000ULL);
	KUNIT_ASSERT_EQ(test, svod_range_insert(&ctx->range, b, 0x100, 0), 0);
	KUNIT_EXPECT_EQ(test, b->start, 0x1100ULL);

	svod_range_remove(&ctx->range, a);
	KUNIT_EXPECT_FALSE(test, svod_range_node_allocated(a));
	KUNIT_EXPECT_EQ(test, a->start, 0x1000ULL);
	KUNIT_EXPECT_EQ(test, a->size, 0x100ULL);
	KUNIT_EXPECT_EQ(test, check_range(test, &ctx->range), 2U);

	/* Too large for the hole in front: the same node goes after @b. */
	KUNIT_ASSERT_EQ(test, svod_range_insert(&ctx->range, a, 0x200, 0), 0);
	KUNIT_EXPECT_TRUE(test, svod_range_node_allocated(a));
	KUNIT_EXPECT_EQ(test, a->start, 0x1200ULL);
	KUNIT_EXPECT_EQ(test, check_range(test, &ctx->range), 1U);

	svod_range_remove(&ctx->range, b);
	KUNIT_EXPECT_EQ(test, svod_range_insert(&ctx->range, b, 0x300, 0),
			-ENOSPC);
	KUNIT_EXPECT_FALSE(test, svod_range_node_allocated(b));
	svod_range_remove(&ctx->range, a);
	KUNIT_EXPECT_EQ(test, check_range(test, &ctx->range), 1U);
	KUNIT_EXPECT_EQ(test, ctx->range.free_bytes, 0x400ULL);
}

/* Who a free span follows, for the iterator's cursor. */
#define AFTER_HEAD	(-1)
#define AFTER_RESERVED	(-2)

struct iter_span {
	u64 start;
	u64 end;
	int after;	/* AFTER_HEAD, AFTER_RESERVED or a node index */
};

struct iter_step {
	enum step_op op;
	unsigned int slot;
	u64 size;
	u64 start;
	struct iter_span spans[4];
	unsigned int nr_spans;
};

/*
 * [0x1000, 0x2000), align 0x100, reserved [0x1200, 0x1300) and
 * [0x1f00, 0x2000): every step lists the free spans the iterator must yield,
 * in order, with the node each one follows.
 */
static const struct iter_step iter_steps[] = {
	{ STEP_END, 0, 0, 0, { { 0x1000, 0x1200, AFTER_HEAD },
			       { 0x1300, 0x1f00, AFTER_RESERVED } }, 2 },
	{ STEP_ALLOC, 0, 0x100, 0x1000, { { 0x1100, 0x1200, 0 },
					  { 0x1300, 0x1f00, AFTER_RESERVED } },
	  2 },
	{ STEP_ALLOC, 1, 0x100, 0x1100, { { 0x1300, 0x1f00, AFTER_RESERVED } },
	  1 },
	{ STEP_ALLOC, 2, 0x100, 0x1300, { { 0x1400, 0x1f00, 2 } }, 1 },
	{ STEP_FREE, 0, 0, 0, { { 0x1000, 0x1100, AFTER_HEAD },
				{ 0x1400, 0x1f00, 2 } }, 2 },
	{ STEP_ALLOC, 3, 0xb00, 0x1400, { { 0x1000, 0x1100, AFTER_HEAD } }, 1 },
	{ STEP_ALLOC, 4, 0x100, 0x1000, { }, 0 },
	{ STEP_FREE, 2, 0, 0, { { 0x1300, 0x1400, AFTER_RESERVED } }, 1 },
};

static void expect_iteration(struct kunit *test, const struct iter_step *step,
			     unsigned int i)
{
	struct range_ctx *ctx = test->priv;
	const struct iter_span *want;
	struct svod_range_node *pos;
	unsigned int n = 0;
	u64 start, size;

	svod_range_for_each_free(pos, &ctx->range, start, size) {
		KUNIT_ASSERT_LT_MSG(test, n, step->nr_spans, "step %u", i);
		want = &step->spans[n++];
		KUNIT_EXPECT_EQ_MSG(test, start, want->start, "step %u", i);
		KUNIT_EXPECT_EQ_MSG(test, start + size, want->end, "step %u", i);
		if (want->after == AFTER_HEAD) {
			KUNIT_EXPECT_PTR_EQ(test, pos, &ctx->range.head);
		} else if (want->after == AFTER_RESERVED) {
			KUNIT_EXPECT_PTR_NE(test, pos, &ctx->range.head);
			KUNIT_EXPECT_FALSE(test, svod_range_node_allocated(pos));
		} else {
			KUNIT_EXPECT_PTR_EQ(test, pos, &ctx->nodes[want->after]);
		}
	}
	KUNIT_EXPECT_EQ_MSG(test, n, step->nr_spans, "step %u", i);
}

static void free_span_iterator(struct kunit *test)
{
	static const struct svod_range_region regions[] = {
		{ 0x1f00, 0x100 }, { 0x1200, 0x100 },
	};
	struct range_ctx *ctx = test->priv;
	const struct iter_step *step;
	struct svod_range_node *node;
	unsigned int i;

	KUNIT_ASSERT_EQ(test, ctx_init(test, 0x1000, 0x1000, 0x100, regions,
				       ARRAY_SIZE(regions), 5), 0);
	for (i = 0; i < ARRAY_SIZE(iter_steps); i++) {
		step = &iter_steps[i];
		node = &ctx->nodes[step->slot];
		if (step->op == STEP_ALLOC) {
			KUNIT_ASSERT_EQ(test, svod_range_insert(&ctx->range,
								node,
								step->size, 0),
					0);
			KUNIT_EXPECT_EQ(test, node->start, step->start);
		} else if (step->op == STEP_FREE) {
			svod_range_remove(&ctx->range, node);
		}
		expect_iteration(test, step, i);
		KUNIT_EXPECT_EQ(test, check_range(test, &ctx->range),
				step->nr_spans);
	}
}

/*
 * 100k insertions and removals with the test's own nodes: the API takes no
 * gfp and has no -ENOMEM, so nothing is allocated per allocation. Exact
 * fits fill the range; removal in a scattered order coalesces it back.
 */
#define EMBED_NODES	100000U
#define EMBED_STRIDE	7919U	/* a prime: i * stride % nodes visits all */

static void embedded_nodes_100k(struct kunit *test)
{
	struct range_ctx *ctx = test->priv;
	struct svod_range_node extra = { };
	unsigned int i, k;

	KUNIT_ASSERT_EQ(test, ctx_init(test, 0x40000000, EMBED_NODES * 64ULL,
				       64, NULL, 0, EMBED_NODES), 0);
	for (i = 0; i < EMBED_NODES; i++) {
		KUNIT_ASSERT_EQ(test, svod_range_insert(&ctx->range,
							&ctx->nodes[i], 64, 0),
				0);
		KUNIT_ASSERT_EQ(test, ctx->nodes[i].start, 0x40000000 + i * 64ULL);
		if (i % 1024 == 1023)
			cond_resched();
	}
	KUNIT_EXPECT_EQ(test, check_range(test, &ctx->range), 0U);
	KUNIT_EXPECT_EQ(test, ctx->range.nr_live, EMBED_NODES);
	KUNIT_EXPECT_EQ(test, svod_range_insert(&ctx->range, &extra, 1, 0),
			-ENOSPC);
	for (i = 0; i < EMBED_NODES; i++) {
		k = (u64)i * EMBED_STRIDE % EMBED_NODES;
		KUNIT_ASSERT_TRUE(test, svod_range_node_allocated(&ctx->nodes[k]));
		svod_range_remove(&ctx->range, &ctx->nodes[k]);
		if (i % 1024 == 1023)
			cond_resched();
	}
	KUNIT_EXPECT_EQ(test, check_range(test, &ctx->range), 1U);
	KUNIT_EXPECT_EQ(test, ctx->range.free_bytes, EMBED_NODES * 64ULL);
	KUNIT_EXPECT_EQ(test, ctx->range.nr_live, 0U);
}

/* The list model, written from the design: linear first fit, merge on free. */
#define MODEL_SPANS	128
#define RANDOM_LIVE	48
#define RANDOM_OPS	3000

struct range_model {
	u64 align;
	struct span spans[MODEL_SPANS];
	unsigned int nr;
};

static int model_alloc(struct range_model *m, u64 size, u64 align, u64 *start)
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

static void model_free(struct range_model *m, u64 start, u64 size)
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

/* Carve [@base, @end) out of the model the design's way: split every span. */
static void model_reserve(struct range_model *m, u64 base, u64 end)
{
	struct span *s;
	unsigned int k;

	for (k = 0; k < m->nr; k++) {
		s = &m->spans[k];
		if (end <= s->start || base >= s->end)
			continue;
		if (s->start < base && end < s->end) {
			memmove(s + 1, s, (m->nr - k) * sizeof(*s));
			m->nr++;
			s->end = base;
			s[1].start = end;
			k++;
		} else if (s->start < base) {
			s->end = base;
		} else if (end < s->end) {
			s->start = end;
		} else {
			memmove(s, s + 1, (m->nr - k - 1) * sizeof(*s));
			m->nr--;
			k--;
		}
	}
}

static void random_against_list_model(struct kunit *test)
{
	struct svod_range_region regions[MAX_REGIONS];
	struct range_ctx *ctx = test->priv;
	u64 capacity, align, size, req_align, start;
	struct svod_range_node *node;
	struct range_model *m;
	struct rnd_state rnd;
	unsigned int i, k, nr;
	u64 reg_end, cut;
	int ret, want;

	prandom_seed_state(&rnd, svod_test_seed(test));
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
		model_reserve(m, regions[i].base, reg_end);
	}
	KUNIT_ASSERT_EQ(test, ctx_init(test, 0x10000, capacity, align, regions,
				       nr, RANDOM_LIVE), 0);
	expect_spans(test, &ctx->range, m->spans, m->nr);

	for (i = 0; i < RANDOM_OPS; i++) {
		k = prandom_u32_state(&rnd) % RANDOM_LIVE;
		node = &ctx->nodes[k];
		if (svod_range_node_allocated(node)) {
			svod_range_remove(&ctx->range, node);
			model_free(m, node->start, node->size);
		} else {
			cut = prandom_u32_state(&rnd) % 4;
			size = (prandom_u32_state(&rnd) % (capacity >> (4 + 2 * cut))) + 1;
			req_align = prandom_u32_state(&rnd) % 3 ? 0 :
				    1ULL << (prandom_u32_state(&rnd) % 14);
			want = model_alloc(m, size, req_align, &start);
			ret = svod_range_insert(&ctx->range, node, size, req_align);
			KUNIT_ASSERT_EQ_MSG(test, ret, want, "op %u: alloc %#llx align %#llx",
					    i, size, req_align);
			if (!ret)
				KUNIT_ASSERT_EQ_MSG(test, node->start, start,
						    "op %u", i);
		}
		KUNIT_ASSERT_LT(test, m->nr, MODEL_SPANS - 2);
		expect_spans(test, &ctx->range, m->spans, m->nr);
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
	struct range_ctx *ctx = test->priv;
	u64 t0, t_fill, t_alloc = 0, t_free = 0;
	struct svod_range_node *node;
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
		ret = svod_range_insert(&ctx->range, &ctx->nodes[i],
					bench_size(&rnd), 0);
		t_fill += ktime_get_ns() - t0;
		KUNIT_ASSERT_EQ(test, ret, 0);
		cond_resched();
	}
	for (r = 0; r < BENCH_ROUNDS; r++) {
		for (i = 0; i < BENCH_BATCH; i++)
			idx[i] = prandom_u32_state(&rnd) % live;
		t0 = ktime_get_ns();
		for (i = 0; i < BENCH_BATCH; i++) {
			node = &ctx->nodes[idx[i]];
			if (svod_range_node_allocated(node))
				svod_range_remove(&ctx->range, node);
		}
		t_free += ktime_get_ns() - t0;
		t0 = ktime_get_ns();
		for (i = 0; i < BENCH_BATCH; i++) {
			node = &ctx->nodes[idx[i]];
			if (!svod_range_node_allocated(node))
				KUNIT_ASSERT_EQ(test,
						svod_range_insert(&ctx->range, node,
								  bench_size(&rnd), 0),
						0);
		}
		t_alloc += ktime_get_ns() - t0;
		cond_resched();
	}
	kunit_info(test, "live=%u free_spans=%u fill ns/alloc=%llu churn ns/alloc=%llu ns/free=%llu\n",
		   live, ctx->range.nr_free_spans, div_u64(t_fill, live),
		   div_u64(t_alloc, BENCH_ROUNDS * BENCH_BATCH),
		   div_u64(t_free, BENCH_ROUNDS * BENCH_BATCH));
	ctx_release(ctx);
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

static struct kunit_case svod_range_cases[] = {
	KUNIT_CASE_PARAM(init_validates_and_carves, init_rows_gen_params),
	KUNIT_CASE(refusal_names_the_reason),
	KUNIT_CASE_PARAM(alloc_free_script, script_rows_gen_params),
	KUNIT_CASE(exhaustion_leaves_state_unchanged),
	KUNIT_CASE(node_lifecycle),
	KUNIT_CASE(free_span_iterator),
	KUNIT_CASE(random_against_list_model),
	KUNIT_CASE_SLOW(embedded_nodes_100k),
	KUNIT_CASE_SLOW(bench_1k_10k_100k_live),
	{}
};

struct kunit_suite svod_range_suite = {
	.name = "svod_range",
	.init = range_test_init,
	.exit = range_test_exit,
	.test_cases = svod_range_cases,
};
