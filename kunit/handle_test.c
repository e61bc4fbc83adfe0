// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite svod_handle: the handle table and the owner registry
 * (driver/core/handle.c).
 *
 * Scenarios are scripts of table rows; after every step a shared checker
 * compares the table with what it must hold (live count, free-list order,
 * slots) and every issued handle that must no longer resolve is tried.
 */

#include <kunit/test.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "core/handle.h"
#include "svod_test.h"

#define TAG		0x5a17
#define MAX_STEPS	16
#define NR_OBJS		8

/* Each case has its own registry: its tags are its own. */
struct handle_ctx {
	struct svod_handle_owners owners;
	struct svod_handle_table tbl;
	int objs[NR_OBJS];
};

/* Release what a case left live, then free the table and give its tag back. */
static void release_table(struct svod_handle_table *tbl,
			  struct svod_handle_owners *owners)
{
	u32 pos = 0;
	u64 handle;

	while (svod_handle_next(tbl, &pos, &handle))
		svod_handle_free(tbl, handle, NULL);
	svod_handle_table_fini(tbl, owners);
}

/* A table on tag @tag of @owners (which no live table may hold). */
static void init_table(struct kunit *test, struct svod_handle_owners *owners,
		       struct svod_handle_table *tbl, u32 tag, u32 max_live)
{
	svod_handle_owners_set_next(owners, tag);
	KUNIT_ASSERT_EQ(test, svod_handle_table_init(tbl, owners, max_live,
						     GFP_KERNEL), 0);
	KUNIT_ASSERT_EQ(test, tbl->tag, tag);
}

/* Replaces the case's table with an empty one of @max_live on TAG. */
static void reinit_table(struct kunit *test, struct handle_ctx *ctx, u32 max_live)
{
	release_table(&ctx->tbl, &ctx->owners);
	init_table(test, &ctx->owners, &ctx->tbl, TAG, max_live);
}

static int handle_test_init(struct kunit *test)
{
	struct handle_ctx *ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, ctx);
	svod_handle_owners_init(&ctx->owners);
	svod_handle_owners_set_next(&ctx->owners, TAG);
	KUNIT_ASSERT_EQ(test, svod_handle_table_init(&ctx->tbl, &ctx->owners,
						     1024, GFP_KERNEL), 0);
	test->priv = ctx;
	return 0;
}

static void handle_test_exit(struct kunit *test)
{
	struct handle_ctx *ctx = test->priv;

	release_table(&ctx->tbl, &ctx->owners);
	KUNIT_EXPECT_EQ(test, ctx->owners.nr_live, 0U);
	svod_handle_owners_fini(&ctx->owners);
}

/* The shared checker: counters, free list and slots agree. */
static void check_table(struct kunit *test, const struct svod_handle_table *tbl)
{
	u32 id, live = 0, on_free_list = 0, retired = 0;

	const struct svod_handle_slot *slot;

	KUNIT_EXPECT_LE(test, (u64)tbl->nr_slots,
			(u64)tbl->cap_chunks * SVOD_HANDLE_CHUNK);
	for (id = 0; id < tbl->nr_slots; id++) {
		slot = svod_handle_at(tbl, id);
		if (slot->obj) {
			live++;
			KUNIT_EXPECT_GT(test, slot->gen, tbl->base);
			KUNIT_EXPECT_LE(test, slot->gen, tbl->top_gen);
		}
		if (slot->next_free == SVOD_HANDLE_RETIRED) {
			retired++;
			KUNIT_EXPECT_NULL(test, slot->obj);
			KUNIT_EXPECT_EQ(test, slot->gen, SVOD_HANDLE_GEN_MAX);
		}
	}
	for (id = tbl->free_head; id != SVOD_HANDLE_NO_SLOT;
	     id = svod_handle_at(tbl, id)->next_free) {
		KUNIT_ASSERT_LT(test, id, tbl->nr_slots);
		KUNIT_EXPECT_NULL(test, svod_handle_at(tbl, id)->obj);
		KUNIT_ASSERT_LE(test, ++on_free_list, tbl->nr_slots);
	}
	KUNIT_EXPECT_EQ(test, tbl->nr_live, live);
	KUNIT_EXPECT_EQ(test, live + on_free_list + retired, tbl->nr_slots);
}

static void expect_same_table(struct kunit *test,
			      const struct svod_handle_table *before,
			      const struct svod_handle_table *after)
{
	KUNIT_EXPECT_PTR_EQ(test, before->chunks, after->chunks);
	KUNIT_EXPECT_EQ(test, before->nr_slots, after->nr_slots);
	KUNIT_EXPECT_EQ(test, before->cap_chunks, after->cap_chunks);
	KUNIT_EXPECT_EQ(test, before->top_gen, after->top_gen);
	KUNIT_EXPECT_EQ(test, before->free_head, after->free_head);
	KUNIT_EXPECT_EQ(test, before->nr_live, after->nr_live);
}

static void expect_stale(struct kunit *test, struct svod_handle_table *tbl,
			 u64 handle)
{
	u32 nr_live = tbl->nr_live;

	KUNIT_EXPECT_NULL_MSG(test, svod_handle_lookup(tbl, handle),
			      "handle %#llx resolves", handle);
	KUNIT_EXPECT_EQ_MSG(test, svod_handle_free(tbl, handle, NULL), -ESTALE,
			    "handle %#llx", handle);
	KUNIT_EXPECT_EQ(test, tbl->nr_live, nr_live);
}

/* Handle layout: gen [63:40], tag [39:20], slot [19:0]. */
struct layout_row {
	u32 gen;
	u32 tag;
	u32 slot;
	u64 handle;
};

static const struct layout_row layout_rows[] = {
	{ 1, 0, 0, 0x0000010000000000ULL },
	{ 1, 0x5a17, 0, 0x00000105a1700000ULL },
	{ 2, 0x5a17, 3, 0x00000205a1700003ULL },
	{ SVOD_HANDLE_GEN_MAX, SVOD_HANDLE_TAG_MASK, SVOD_HANDLE_SLOT_MASK, U64_MAX },
	{ 0x123456, 0xabcde, 0x789ab, 0x123456abcde789abULL },
};

static void handle_layout_is_gen_tag_slot(struct kunit *test)
{
	const struct layout_row *row;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(layout_rows); i++) {
		row = &layout_rows[i];
		KUNIT_EXPECT_EQ(test, svod_handle_make(row->gen, row->tag, row->slot),
				row->handle);
		KUNIT_EXPECT_EQ(test, svod_handle_gen(row->handle), row->gen);
		KUNIT_EXPECT_EQ(test, svod_handle_tag(row->handle), row->tag);
		KUNIT_EXPECT_EQ(test, svod_handle_slot(row->handle), row->slot);
	}
}

/*
 * Scripts. H_ALLOC issues a handle for objs[obj] into h[idx] and expects
 * @slot and @gen; H_FREE frees h[idx] and expects @err (then h[idx] must be
 * stale); H_SET_GEN sets slot @slot's generation to @gen and expects @err.
 */
enum h_op { H_END, H_ALLOC, H_FREE, H_SET_GEN };

struct h_step {
	enum h_op op;
	unsigned int idx;
	u32 slot;
	u32 gen;
	int err;
};

struct h_script {
	const char *name;
	u32 max_live;
	struct h_step steps[MAX_STEPS];
};

#define H_ALLOC(i, s, g)	{ H_ALLOC, i, s, g, 0 }
#define H_ALLOC_ERR(e)		{ H_ALLOC, 0, 0, 0, e }
#define H_FREE(i, e)		{ H_FREE, i, 0, 0, e }
#define H_SET_GEN(s, g, e)	{ H_SET_GEN, 0, s, g, e }

static const struct h_script h_scripts[] = {
	{ .name = "reuse_most_recently_freed_first", .max_live = 16,
	  .steps = { H_ALLOC(0, 0, 1), H_ALLOC(1, 1, 1), H_ALLOC(2, 2, 1),
		     H_ALLOC(3, 3, 1), H_FREE(1, 0), H_FREE(3, 0), H_FREE(0, 0),
		     H_ALLOC(4, 0, 2), H_ALLOC(5, 3, 2), H_ALLOC(6, 1, 2),
		     H_ALLOC(7, 4, 1) } },
	{ .name = "generation_increments_per_alloc", .max_live = 16,
	  .steps = { H_ALLOC(0, 0, 1), H_FREE(0, 0), H_ALLOC(1, 0, 2),
		     H_FREE(1, 0), H_ALLOC(2, 0, 3), H_FREE(2, 0),
		     H_ALLOC(3, 0, 4) } },
	{ .name = "double_free_is_stale", .max_live = 16,
	  .steps = { H_ALLOC(0, 0, 1), H_ALLOC(1, 1, 1), H_FREE(0, 0),
		     H_FREE(0, -ESTALE), H_ALLOC(2, 0, 2), H_FREE(0, -ESTALE),
		     H_FREE(2, 0), H_FREE(2, -ESTALE) } },
	{ .name = "live_bound_emfile_leaves_no_trace", .max_live = 3,
	  .steps = { H_ALLOC(0, 0, 1), H_ALLOC(1, 1, 1), H_ALLOC(2, 2, 1),
		     H_ALLOC_ERR(-EMFILE), H_ALLOC_ERR(-EMFILE), H_FREE(1, 0),
		     H_ALLOC(3, 1, 2), H_ALLOC_ERR(-EMFILE) } },
	{ .name = "live_bound_zero", .max_live = 0,
	  .steps = { H_ALLOC_ERR(-EMFILE) } },
	{ .name = "wrap_retires_slot", .max_live = 16,
	  .steps = { H_ALLOC(0, 0, 1), H_ALLOC(1, 1, 1), H_FREE(0, 0),
		     H_SET_GEN(0, SVOD_HANDLE_GEN_MAX - 1, 0),
		     H_ALLOC(2, 0, SVOD_HANDLE_GEN_MAX), H_FREE(2, 0),
		     H_ALLOC(3, 2, 1), H_FREE(3, 0), H_ALLOC(4, 2, 2),
		     H_SET_GEN(0, SVOD_HANDLE_GEN_MAX - 1, -EINVAL),
		     H_FREE(2, -ESTALE) } },
	{ .name = "set_gen_rejects", .max_live = 16,
	  .steps = { H_ALLOC(0, 0, 1), H_ALLOC(1, 1, 1), H_FREE(1, 0),
		     H_SET_GEN(0, 5, -EINVAL), H_SET_GEN(2, 5, -EINVAL),
		     H_SET_GEN(1, SVOD_HANDLE_GEN_MAX, -EINVAL),
		     H_SET_GEN(1, 7, 0), H_SET_GEN(1, 6, -EINVAL),
		     H_ALLOC(2, 1, 8) } },
};

static void h_script_desc(const struct h_script *row, char *desc)
{
	strscpy(desc, row->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(h_scripts, h_scripts, h_script_desc);

static void handle_script(struct kunit *test)
{
	const struct h_script *row = test->param_value;
	struct handle_ctx *ctx = test->priv;
	struct svod_handle_table *tbl = &ctx->tbl;
	/* freed[] holds every handle freed so far: none may come back */
	u64 h[MAX_STEPS] = {}, freed[MAX_STEPS], handle;
	unsigned int i, j, nr_freed = 0;
	struct svod_handle_table before;
	const struct h_step *step;
	void *obj;
	int ret;

	reinit_table(test, ctx, row->max_live);
	for (i = 0; i < MAX_STEPS && row->steps[i].op != H_END; i++) {
		step = &row->steps[i];
		switch (step->op) {
		case H_ALLOC:
			before = *tbl;
			obj = &ctx->objs[i % NR_OBJS];
			ret = svod_handle_alloc(tbl, obj, GFP_KERNEL, &handle);
			KUNIT_ASSERT_EQ_MSG(test, ret, step->err, "step %u", i);
			if (ret) {
				expect_same_table(test, &before, tbl);
				break;
			}
			KUNIT_EXPECT_EQ_MSG(test, svod_handle_slot(handle), step->slot,
					    "step %u", i);
			KUNIT_EXPECT_EQ_MSG(test, svod_handle_gen(handle), step->gen,
					    "step %u", i);
			KUNIT_EXPECT_EQ(test, svod_handle_tag(handle), TAG);
			KUNIT_EXPECT_PTR_EQ(test, svod_handle_lookup(tbl, handle), obj);
			h[step->idx] = handle;
			break;
		case H_FREE:
			ret = svod_handle_free(tbl, h[step->idx], NULL);
			KUNIT_EXPECT_EQ_MSG(test, ret, step->err, "step %u", i);
			if (!ret)
				freed[nr_freed++] = h[step->idx];
			break;
		case H_SET_GEN:
			KUNIT_EXPECT_EQ_MSG(test, svod_handle_set_gen(tbl, step->slot,
								      step->gen),
					    step->err, "step %u", i);
			break;
		case H_END:
			break;
		}
		check_table(test, tbl);
		for (j = 0; j < nr_freed; j++)
			expect_stale(test, tbl, freed[j]);
	}
}

static void free_returns_object(struct kunit *test)
{
	struct handle_ctx *ctx = test->priv;
	void *obj = NULL;
	u64 handle;

	KUNIT_ASSERT_EQ(test, svod_handle_alloc(&ctx->tbl, &ctx->objs[3], GFP_KERNEL,
						&handle), 0);
	KUNIT_EXPECT_EQ(test, svod_handle_free(&ctx->tbl, handle, &obj), 0);
	KUNIT_EXPECT_PTR_EQ(test, obj, (void *)&ctx->objs[3]);
	KUNIT_EXPECT_EQ(test, ctx->tbl.nr_live, 0U);
}

/* Every way a handle can fail to name a live entry of this table. */
static void forged_handles_are_stale(struct kunit *test)
{
	struct handle_ctx *ctx = test->priv;
	struct svod_handle_table *tbl = &ctx->tbl;
	/* The scenario below leaves slot 0 live at generation 2. */
	const u64 forged[] = {
		svod_handle_make(1, TAG, 0),			/* freed */
		svod_handle_make(3, TAG, 0),			/* gen ahead */
		svod_handle_make(0, TAG, 0),			/* gen 0 */
		svod_handle_make(2, TAG ^ 1, 0),		/* other tag */
		svod_handle_make(2, 0, 0),			/* tag 0 */
		svod_handle_make(1, TAG, 1),			/* never issued */
		svod_handle_make(2, TAG, SVOD_HANDLE_SLOT_MASK),
		0,
		U64_MAX,
	};
	u64 live, freed;
	unsigned int i;

	KUNIT_ASSERT_EQ(test, svod_handle_alloc(tbl, &ctx->objs[0], GFP_KERNEL, &freed), 0);
	KUNIT_ASSERT_EQ(test, svod_handle_free(tbl, freed, NULL), 0);
	KUNIT_ASSERT_EQ(test, svod_handle_alloc(tbl, &ctx->objs[1], GFP_KERNEL, &live), 0);
	KUNIT_ASSERT_EQ(test, freed, forged[0]);
	KUNIT_ASSERT_EQ(test, live, svod_handle_make(2, TAG, 0));

	for (i = 0; i < ARRAY_SIZE(forged); i++)
		expect_stale(test, tbl, forged[i]);
	KUNIT_EXPECT_PTR_EQ(test, svod_handle_lookup(tbl, live), (void *)&ctx->objs[1]);
	check_table(test, tbl);
}

static void other_tables_handle_is_stale(struct kunit *test)
{
	struct handle_ctx *ctx = test->priv;
	struct svod_handle_table *other;
	u64 mine, theirs;

	other = kunit_kzalloc(test, sizeof(*other), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, other);
	/* TAG is held: the registry hands out the next tag. */
	svod_handle_owners_set_next(&ctx->owners, TAG);
	KUNIT_ASSERT_EQ(test, svod_handle_table_init(other, &ctx->owners, 16,
						     GFP_KERNEL), 0);
	KUNIT_EXPECT_EQ(test, other->tag, TAG + 1);
	KUNIT_ASSERT_EQ(test, svod_handle_alloc(&ctx->tbl, &ctx->objs[0], GFP_KERNEL,
						&mine), 0);
	KUNIT_EXPECT_EQ(test, svod_handle_alloc(other, &ctx->objs[1], GFP_KERNEL,
						&theirs), 0);
	/* Same slot and generation; only the tag tells them apart. */
	KUNIT_EXPECT_EQ(test, svod_handle_slot(mine), svod_handle_slot(theirs));
	KUNIT_EXPECT_EQ(test, svod_handle_gen(mine), svod_handle_gen(theirs));
	expect_stale(test, &ctx->tbl, theirs);
	expect_stale(test, other, mine);
	KUNIT_EXPECT_PTR_EQ(test, svod_handle_lookup(other, theirs), (void *)&ctx->objs[1]);
	release_table(other, &ctx->owners);
}

static void next_walks_live_in_slot_order(struct kunit *test)
{
	struct handle_ctx *ctx = test->priv;
	struct svod_handle_table *tbl = &ctx->tbl;
	static const u32 want[] = { 0, 2, 4 };
	u64 h[5], handle;
	unsigned int i, n = 0;
	u32 pos = 0;
	void *obj;

	for (i = 0; i < 5; i++)
		KUNIT_ASSERT_EQ(test, svod_handle_alloc(tbl, &ctx->objs[i], GFP_KERNEL,
							&h[i]), 0);
	KUNIT_ASSERT_EQ(test, svod_handle_free(tbl, h[1], NULL), 0);
	KUNIT_ASSERT_EQ(test, svod_handle_free(tbl, h[3], NULL), 0);
	while ((obj = svod_handle_next(tbl, &pos, &handle))) {
		KUNIT_ASSERT_LT(test, n, ARRAY_SIZE(want));
		KUNIT_EXPECT_EQ(test, handle, h[want[n]]);
		KUNIT_EXPECT_PTR_EQ(test, obj, (void *)&ctx->objs[want[n]]);
		/* The release pattern: free what was just returned. */
		KUNIT_EXPECT_EQ(test, svod_handle_free(tbl, handle, NULL), 0);
		n++;
	}
	KUNIT_EXPECT_EQ(test, n, 3U);
	KUNIT_EXPECT_EQ(test, tbl->nr_live, 0U);
	pos = 0;
	KUNIT_EXPECT_NULL(test, svod_handle_next(tbl, &pos, &handle));
	check_table(test, tbl);
}

static void table_grows_keeping_handles(struct kunit *test)
{
	struct handle_ctx *ctx = test->priv;
	struct svod_handle_table *tbl = &ctx->tbl;
	/* 20 chunks: the directory doubles three times. */
	const unsigned int n = 5000;
	unsigned int i;
	u64 *h;

	h = kunit_kmalloc_array(test, n, sizeof(*h), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, h);
	reinit_table(test, ctx, n);
	for (i = 0; i < n; i++) {
		KUNIT_ASSERT_EQ(test, svod_handle_alloc(tbl, &ctx->objs[i % NR_OBJS],
							GFP_KERNEL, &h[i]), 0);
		KUNIT_EXPECT_EQ(test, svod_handle_slot(h[i]), i);
	}
	KUNIT_EXPECT_EQ(test, tbl->nr_slots, n);
	KUNIT_EXPECT_GE(test, (u64)tbl->cap_chunks * SVOD_HANDLE_CHUNK, (u64)n);
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_PTR_EQ(test, svod_handle_lookup(tbl, h[i]),
				    (void *)&ctx->objs[i % NR_OBJS]);
	KUNIT_EXPECT_EQ(test, svod_handle_alloc(tbl, &ctx->objs[0], GFP_KERNEL,
						&h[0]), -EMFILE);
	check_table(test, tbl);
}

/*
 * The owner wrap: once the cursor passes the last tag it starts again at
 * 0, skipping held tags, and a table on a reused tag starts its generations
 * above everything the tag's earlier holders issued.
 */
static void reused_tag_starts_above_floor(struct kunit *test)
{
	struct handle_ctx *ctx = test->priv;
	struct svod_handle_table *t = kunit_kcalloc(test, 3, sizeof(*t), GFP_KERNEL);
	u64 a[3], b, c[2];
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, t);
	release_table(&ctx->tbl, &ctx->owners);
	init_table(test, &ctx->owners, &t[0], SVOD_HANDLE_TAG_MASK, 16);
	KUNIT_ASSERT_EQ(test, svod_handle_alloc(&t[0], &ctx->objs[0], GFP_KERNEL, &a[0]), 0);
	KUNIT_ASSERT_EQ(test, svod_handle_free(&t[0], a[0], NULL), 0);
	KUNIT_ASSERT_EQ(test, svod_handle_alloc(&t[0], &ctx->objs[1], GFP_KERNEL, &a[1]), 0);
	KUNIT_ASSERT_EQ(test, svod_handle_alloc(&t[0], &ctx->objs[2], GFP_KERNEL, &a[2]), 0);
	KUNIT_EXPECT_EQ(test, a[1], svod_handle_make(2, SVOD_HANDLE_TAG_MASK, 0));

	/* The cursor wrapped to tag 0. */
	KUNIT_ASSERT_EQ(test, svod_handle_table_init(&t[1], &ctx->owners, 16, GFP_KERNEL), 0);
	KUNIT_EXPECT_EQ(test, t[1].tag, 0U);
	KUNIT_ASSERT_EQ(test, svod_handle_alloc(&t[1], &ctx->objs[3], GFP_KERNEL, &b), 0);
	KUNIT_EXPECT_EQ(test, b, svod_handle_make(1, 0, 0));
	for (i = 0; i < 3; i++)
		expect_stale(test, &t[1], a[i]);

	/* The last tag again, once its holder is gone: above floor 2. */
	release_table(&t[0], &ctx->owners);
	init_table(test, &ctx->owners, &t[2], SVOD_HANDLE_TAG_MASK, 16);
	KUNIT_EXPECT_EQ(test, t[2].base, 2U);
	KUNIT_ASSERT_EQ(test, svod_handle_alloc(&t[2], &ctx->objs[4], GFP_KERNEL, &c[0]), 0);
	KUNIT_ASSERT_EQ(test, svod_handle_alloc(&t[2], &ctx->objs[5], GFP_KERNEL, &c[1]), 0);
	KUNIT_EXPECT_EQ(test, c[0], svod_handle_make(3, SVOD_HANDLE_TAG_MASK, 0));
	KUNIT_EXPECT_EQ(test, c[1], svod_handle_make(3, SVOD_HANDLE_TAG_MASK, 1));
	for (i = 0; i < 3; i++)
		expect_stale(test, &t[2], a[i]);
	expect_stale(test, &t[2], b);
	expect_stale(test, &t[1], c[0]);
	check_table(test, &t[2]);
	release_table(&t[1], &ctx->owners);
	release_table(&t[2], &ctx->owners);
	init_table(test, &ctx->owners, &ctx->tbl, TAG, 16);
}

/* A tag whose floor reached the last generation is never handed out again. */
static void exhausted_tag_is_skipped(struct kunit *test)
{
	struct handle_ctx *ctx = test->priv;
	struct svod_handle_table *tbl = &ctx->tbl;
	u64 h;

	KUNIT_ASSERT_EQ(test, svod_handle_alloc(tbl, &ctx->objs[0], GFP_KERNEL, &h), 0);
	KUNIT_ASSERT_EQ(test, svod_handle_free(tbl, h, NULL), 0);
	KUNIT_ASSERT_EQ(test, svod_handle_set_gen(tbl, 0, SVOD_HANDLE_GEN_MAX - 1), 0);
	KUNIT_ASSERT_EQ(test, svod_handle_alloc(tbl, &ctx->objs[0], GFP_KERNEL, &h), 0);
	KUNIT_ASSERT_EQ(test, svod_handle_free(tbl, h, NULL), 0);
	release_table(tbl, &ctx->owners);
	svod_handle_owners_set_next(&ctx->owners, TAG);
	KUNIT_ASSERT_EQ(test, svod_handle_table_init(tbl, &ctx->owners, 16, GFP_KERNEL), 0);
	KUNIT_EXPECT_EQ(test, tbl->tag, TAG + 1);
	KUNIT_EXPECT_EQ(test, tbl->base, 0U);
	expect_stale(test, tbl, h);
}

/*
 * 65,536 + 16 tables, one after another (a 16-bit tag wrapped here). Every
 * one holds a tag other than the first table's, and every 64th one, and
 * each of the last 32, allocates at slot 0, generation 1: neither the first
 * table's live handle nor its freed one resolves there, nor theirs in it.
 * (Allocating in all of them takes minutes under KASAN in TCG.)
 */
static void many_tables_never_share_a_handle(struct kunit *test)
{
	struct handle_ctx *ctx = test->priv;
	struct svod_handle_table *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	const unsigned int n = 65536 + 16;
	unsigned int i, bad = 0, tried = 0;
	u64 stale, live, h;

	KUNIT_ASSERT_NOT_NULL(test, t);
	KUNIT_ASSERT_EQ(test, svod_handle_alloc(&ctx->tbl, &ctx->objs[0], GFP_KERNEL, &stale), 0);
	KUNIT_ASSERT_EQ(test, svod_handle_free(&ctx->tbl, stale, NULL), 0);
	KUNIT_ASSERT_EQ(test, svod_handle_alloc(&ctx->tbl, &ctx->objs[0], GFP_KERNEL, &live), 0);
	for (i = 0; i < n && !bad; i++) {
		KUNIT_ASSERT_EQ(test, svod_handle_table_init(t, &ctx->owners, 4, GFP_KERNEL), 0);
		bad += t->tag == ctx->tbl.tag || t->base;
		if (!(i % 64) || i >= n - 32) {
			KUNIT_ASSERT_EQ(test, svod_handle_alloc(t, &ctx->objs[1],
								GFP_KERNEL, &h), 0);
			bad += svod_handle_slot(h) != 0 || svod_handle_gen(h) != 1 ||
			       svod_handle_lookup(t, live) || svod_handle_lookup(t, stale) ||
			       svod_handle_lookup(&ctx->tbl, h);
			svod_handle_free(t, h, NULL);
			tried++;
		}
		svod_handle_table_fini(t, &ctx->owners);
		if (!(i % 1024))
			cond_resched();
	}
	KUNIT_EXPECT_EQ_MSG(test, bad, 0U, "table %u of %u", i, n);
	KUNIT_EXPECT_EQ(test, tried, (n + 63) / 64 + 31);
	KUNIT_EXPECT_PTR_EQ(test, svod_handle_lookup(&ctx->tbl, live), (void *)&ctx->objs[0]);
}

/*
 * Every tag held: 2^20 tables at once (open files cannot reach that in the
 * guest; the registry can). The next table init fails with -ENFILE and
 * changes nothing; once one holder goes, the next init gets exactly that tag,
 * and its generations start above the tag's floor, so none of the handles
 * the tag issued before resolves again. A tag given back leaves the
 * registry as full as before: -ENFILE again.
 */
static void every_tag_held_is_enfile(struct kunit *test)
{
	struct handle_ctx *ctx = test->priv;
	const u32 n = SVOD_HANDLE_NR_TAGS;
	struct svod_handle_table *t, extra;
	unsigned long *seen;
	u32 i, taken, victim = n / 2, dup = 0, bad_init = 0;
	u64 old[3], h;
	int ret;

	t = kvcalloc(n, sizeof(*t), GFP_KERNEL);
	seen = kunit_kzalloc(test, BITS_TO_LONGS(n) * sizeof(long), GFP_KERNEL);
	if (!t || !seen) {
		kvfree(t);
		KUNIT_FAIL(test, "no memory for %u tables", n);
		return;
	}
	/* TAG issues three generations of slot 0, then goes: its floor is 3. */
	for (i = 0; i < 3; i++) {
		KUNIT_ASSERT_EQ(test, svod_handle_alloc(&ctx->tbl, &ctx->objs[i], GFP_KERNEL,
							&old[i]), 0);
		KUNIT_ASSERT_EQ(test, svod_handle_free(&ctx->tbl, old[i], NULL), 0);
	}
	release_table(&ctx->tbl, &ctx->owners);
	KUNIT_ASSERT_EQ(test, ctx->owners.nr_live, 0U);

	svod_handle_owners_set_next(&ctx->owners, TAG + 1);
	for (i = 0; i < n; i++) {
		ret = svod_handle_table_init(&t[i], &ctx->owners, 4, GFP_KERNEL);
		if (ret) {
			bad_init++;
			break;
		}
		dup += __test_and_set_bit(t[i].tag, seen);
		if (t[i].tag == TAG)
			victim = i;
		if (!(i % 4096))
			cond_resched();
	}
	taken = i;
	KUNIT_EXPECT_EQ_MSG(test, bad_init, 0U, "table %u of %u: %d", i, n, ret);
	KUNIT_EXPECT_EQ(test, dup, 0U);
	KUNIT_EXPECT_EQ(test, ctx->owners.nr_live, n);
	KUNIT_EXPECT_EQ(test, t[victim].tag, (u32)TAG);
	KUNIT_EXPECT_EQ(test, t[victim].base, 3U);
	if (bad_init)
		goto out;

	/* Full: -ENFILE, twice, and the registry is as it was. */
	KUNIT_EXPECT_EQ(test, svod_handle_table_init(&extra, &ctx->owners, 4, GFP_KERNEL),
			-ENFILE);
	KUNIT_EXPECT_EQ(test, svod_handle_table_init(&extra, &ctx->owners, 4, GFP_KERNEL),
			-ENFILE);
	KUNIT_EXPECT_EQ(test, ctx->owners.nr_live, n);

	/* TAG's holder goes: the next init takes TAG, above its floor. */
	svod_handle_table_fini(&t[victim], &ctx->owners);
	KUNIT_ASSERT_EQ(test, svod_handle_table_init(&t[victim], &ctx->owners, 4, GFP_KERNEL), 0);
	KUNIT_EXPECT_EQ(test, t[victim].tag, (u32)TAG);
	KUNIT_EXPECT_EQ(test, t[victim].base, 3U);
	KUNIT_ASSERT_EQ(test, svod_handle_alloc(&t[victim], &ctx->objs[3], GFP_KERNEL, &h), 0);
	KUNIT_EXPECT_EQ(test, h, svod_handle_make(4, TAG, 0));
	for (i = 0; i < 3; i++) {
		KUNIT_EXPECT_NE(test, h, old[i]);
		expect_stale(test, &t[victim], old[i]);
	}
	KUNIT_EXPECT_EQ(test, svod_handle_table_init(&extra, &ctx->owners, 4, GFP_KERNEL),
			-ENFILE);
out:
	while (taken--) {
		release_table(&t[taken], &ctx->owners);
		if (!(taken % 4096))
			cond_resched();
	}
	kvfree(t);
	KUNIT_EXPECT_EQ(test, ctx->owners.nr_live, 0U);
	init_table(test, &ctx->owners, &ctx->tbl, TAG, 16);
}

static struct kunit_case svod_handle_cases[] = {
	KUNIT_CASE(handle_layout_is_gen_tag_slot),
	KUNIT_CASE_PARAM(handle_script, h_scripts_gen_params),
	KUNIT_CASE(free_returns_object),
	KUNIT_CASE(forged_handles_are_stale),
	KUNIT_CASE(other_tables_handle_is_stale),
	KUNIT_CASE(next_walks_live_in_slot_order),
	KUNIT_CASE(table_grows_keeping_handles),
	KUNIT_CASE(reused_tag_starts_above_floor),
	KUNIT_CASE(exhausted_tag_is_skipped),
	KUNIT_CASE(many_tables_never_share_a_handle),
	KUNIT_CASE(every_tag_held_is_enfile),
	{}
};

struct kunit_suite svod_handle_suite = {
	.name = "svod_handle",
	.init = handle_test_init,
	.exit = handle_test_exit,
	.test_cases = svod_handle_cases,
};
