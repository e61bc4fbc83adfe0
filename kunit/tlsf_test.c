// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite svod_tlsf: the planner (driver/core/{tlsf,plan}.c).
 *
 * Hand-worked cases pin every rule of the reference TLSF with exact
 * offsets (worked out in Documentation/planner.rst's terms: l2_bits, the
 * granule, buckets (l1, l2)); error cases assert the errno and the failing
 * event; randomised cases check the invariants of both strategies. Each
 * logs its seed; load svod_test.ko with seed=<seed> to replay it.
 */
#include <kunit/test.h>

#include "core/plan.h"
#include "core/tlsf.h"
#include "svod_test.h"

#define NO	SVOD_PLAN_NO_OFFSET
#define A(i, s, a)	{ .op = SVOD_PLAN_ALLOC, .id = (i), .size = (s), .align = (a) }
#define F(i)		{ .op = SVOD_PLAN_FREE, .id = (i) }

/**
 * struct tlsf_case - one hand-worked plan
 * @arena: arena size
 * @block_size: block size
 * @lv2_cnt: second-level count
 * @strategy: SVOD_PLAN_*
 * @ev: events
 * @n: events in @ev
 */
struct tlsf_case {
	u64 arena;
	u64 block_size;
	u32 lv2_cnt;
	u32 strategy;
	const struct svod_plan_event *ev;
	u32 n;
};

static int tlsf_run(struct kunit *test, const struct tlsf_case *c, u64 *offsets,
		    struct svod_plan_result *res)
{
	struct svod_plan_params p = {
		.arena_size = c->arena,
		.block_size = c->block_size,
		.lv2_cnt = c->lv2_cnt,
		.strategy = c->strategy,
	};

	return svod_plan_run(&p, c->ev, c->n, offsets, res, GFP_KERNEL);
}

/* Run @c and expect success with exactly @want offsets and @peak. */
static void tlsf_expect(struct kunit *test, const struct tlsf_case *c, const u64 *want,
			u64 peak)
{
	struct svod_plan_result res;
	u64 *got = kunit_kcalloc(test, c->n, sizeof(*got), GFP_KERNEL);
	u32 i;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, got);
	KUNIT_ASSERT_EQ(test, tlsf_run(test, c, got, &res), 0);
	for (i = 0; i < c->n; i++)
		KUNIT_EXPECT_EQ_MSG(test, got[i], want[i], "event %u", i);
	KUNIT_EXPECT_EQ(test, res.peak, peak);
	KUNIT_EXPECT_EQ(test, res.failed_event, U32_MAX);
}

/* Run @c and expect @err at event @failed. */
static void tlsf_expect_err(struct kunit *test, const struct tlsf_case *c, int err, u32 failed)
{
	struct svod_plan_result res;
	u64 *got = kunit_kcalloc(test, c->n ? c->n : 1, sizeof(*got), GFP_KERNEL);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, got);
	KUNIT_EXPECT_EQ(test, tlsf_run(test, c, got, &res), err);
	KUNIT_EXPECT_EQ(test, res.failed_event, failed);
}

static struct tlsf_case *tlsf_case(struct kunit *test, u64 arena, u64 block_size, u32 lv2_cnt,
				   const struct svod_plan_event *ev, u32 n)
{
	struct tlsf_case *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, c);
	*c = (struct tlsf_case){
		.arena = arena, .block_size = block_size, .lv2_cnt = lv2_cnt, .ev = ev, .n = n,
	};
	return c;
}

static void tlsf_expect_einval(struct kunit *test, u64 arena, const struct svod_plan_event *ev,
			       u32 n, u32 failed)
{
	tlsf_expect_err(test, tlsf_case(test, arena, 256, 32, ev, n), -EINVAL, failed);
}

/* Size 0 counts as block_size; the peak counts block_size too. */
static void tlsf_zero_size_takes_block_size(struct kunit *test)
{
	static const struct svod_plan_event ev[] = { A(1, 0, 0), A(2, 0, 0) };
	static const u64 want[] = { 0, 256 };

	tlsf_expect(test, tlsf_case(test, 4096, 256, 32, ev, ARRAY_SIZE(ev)), want, 512);
}

/* block_size is a minimum, not a granule: 300 bytes end at 300. */
static void tlsf_block_size_is_minimum_not_granule(struct kunit *test)
{
	static const struct svod_plan_event ev[] = { A(1, 300, 0), A(2, 10, 0) };
	static const u64 want[] = { 0, 300 };

	tlsf_expect(test, tlsf_case(test, 4096, 256, 32, ev, ARRAY_SIZE(ev)), want, 300 + 256);
}

/*
 * 1000 bytes: msb 10 > l2_bits 6, granule 16: search size 1008, bucket
 * (10, 31), where the free 1010-byte block at 0 sits. With lv2_cnt 16
 * (l2_bits 5) the granule is 32: 1024, bucket (11, 0): the 1040 block.
 */
static void tlsf_granule_follows_l2_bits(struct kunit *test)
{
	static const struct svod_plan_event ev[] = {
		A(1, 1010, 0), A(2, 256, 0), A(3, 1040, 0), A(4, 256, 0),
		F(1), F(3), A(5, 1000, 0),
	};
	static const u64 want32[] = { 0, 1010, 1266, 2306, NO, NO, 0 };
	static const u64 want16[] = { 0, 1010, 1266, 2306, NO, NO, 1266 };

	tlsf_expect(test, tlsf_case(test, 1 << 20, 256, 32, ev, ARRAY_SIZE(ev)), want32, 2562);
	tlsf_expect(test, tlsf_case(test, 1 << 20, 256, 16, ev, ARRAY_SIZE(ev)), want16, 2562);
}

/*
 * Small sizes: lv2_cnt 4 (l2_bits 3): 9 has msb 4 > 3, granule 2, search
 * 10 in bucket (4, 1): the free 9-byte block (4, 0) is skipped, the 12-byte
 * block at 10 taken. lv2_cnt 7 has the same l2_bits. lv2_cnt 8 (l2_bits 4)
 * keeps 9 exact (small-size case, shift 0): bucket (4, 1) holds the 9.
 */
static void tlsf_small_sizes_and_lv2_bits(struct kunit *test)
{
	static const struct svod_plan_event ev[] = {
		A(1, 9, 0), A(2, 1, 0), A(3, 12, 0), A(4, 1, 0), F(1), F(3), A(5, 9, 0),
	};
	static const u64 want_coarse[] = { 0, 9, 10, 22, NO, NO, 10 };
	static const u64 want_exact[] = { 0, 9, 10, 22, NO, NO, 0 };

	tlsf_expect(test, tlsf_case(test, 64, 1, 4, ev, ARRAY_SIZE(ev)), want_coarse, 23);
	tlsf_expect(test, tlsf_case(test, 64, 1, 7, ev, ARRAY_SIZE(ev)), want_coarse, 23);
	tlsf_expect(test, tlsf_case(test, 64, 1, 8, ev, ARRAY_SIZE(ev)), want_exact, 23);
}

/* lv2_cnt 0 counts as 1 (l2_bits 1: one bucket per power of two). */
static void tlsf_lv2_zero_is_one(struct kunit *test)
{
	static const struct svod_plan_event ev[] = {
		A(1, 5, 0), A(2, 1, 0), A(3, 7, 0), A(4, 1, 0), F(1), F(3), A(5, 5, 0),
	};
	/* 5 -> granule 4 -> 8, bucket (4, 0): neither free block (5, 7) fits. */
	static const u64 want[] = { 0, 5, 6, 13, NO, NO, 14 };

	tlsf_expect(test, tlsf_case(test, 64, 1, 0, ev, ARRAY_SIZE(ev)), want, 19);
	tlsf_expect(test, tlsf_case(test, 64, 1, 1, ev, ARRAY_SIZE(ev)), want, 19);
}

/*
 * The search size includes align - 1: 256 aligned to 256 searches 511,
 * rounded to 512, bucket (10, 0); the free aligned 256 at 256 is skipped.
 */
static void tlsf_rounding_includes_align_padding(struct kunit *test)
{
	static const struct svod_plan_event ev[] = {
		A(1, 256, 0), A(2, 256, 0), A(3, 256, 0), F(2), A(4, 256, 256),
	};
	static const u64 want[] = { 0, 256, 512, NO, 768 };

	tlsf_expect(test, tlsf_case(test, 4096, 256, 32, ev, ARRAY_SIZE(ev)), want, 1024);
}

/*
 * An aligned request splits the head off the block it takes; the head goes
 * back into the buckets and serves the next request.
 */
static void tlsf_align_head_split(struct kunit *test)
{
	static const struct svod_plan_event ev[] = {
		A(1, 100, 0), A(2, 256, 1024), A(3, 512, 0),
	};
	static const u64 want[] = { 0, 1024, 256 };

	tlsf_expect(test, tlsf_case(test, 8192, 256, 32, ev, ARRAY_SIZE(ev)), want, 1280);
}

/* Any alignment, not only powers of two: the reference rounds with div_ceil. */
static void tlsf_align_not_power_of_two(struct kunit *test)
{
	static const struct svod_plan_event ev[] = { A(1, 256, 0), A(2, 256, 1000) };
	static const u64 want[] = { 0, 1000 };

	tlsf_expect(test, tlsf_case(test, 8192, 256, 32, ev, ARRAY_SIZE(ev)), want, 1256);
}

/* FIFO: B freed before A, both in bucket (11, 0): B is taken first. */
static void tlsf_bucket_is_fifo(struct kunit *test)
{
	static const struct svod_plan_event ev[] = {
		A(1, 1024, 0), A(2, 256, 0), A(3, 1024, 0), A(4, 256, 0),
		F(3), F(1), A(5, 1024, 0), A(6, 1024, 0),
	};
	static const u64 want[] = { 0, 1024, 1280, 2304, NO, NO, 1280, 0 };

	tlsf_expect(test, tlsf_case(test, 8192, 256, 32, ev, ARRAY_SIZE(ev)), want, 2560);
}

/*
 * A split re-appends the remainder at its bucket's tail: P (4800 at 0) and
 * Q (4800 at 4801) share bucket (13, 5); taking 1 byte from P puts its
 * 4799-byte rest behind Q, so the next byte comes from Q.
 */
static void tlsf_split_appends_at_tail(struct kunit *test)
{
	static const struct svod_plan_event ev[] = {
		A(1, 4800, 0), A(2, 1, 0), A(3, 4800, 0), A(4, 1, 0),
		F(1), F(3), A(5, 1, 0), A(6, 1, 0),
	};
	static const u64 want[] = { 0, 4800, 4801, 9601, NO, NO, 0, 4801 };

	tlsf_expect(test, tlsf_case(test, 16384, 1, 32, ev, ARRAY_SIZE(ev)), want, 9602);
}

/*
 * Freeing B between free A and free C walks left to A and merges right:
 * one 3072-byte block at 0, appended behind D (freed earlier, same bucket
 * (12, 16)): the first 3072 request gets D, the second the merged block.
 */
static void tlsf_merge_walks_left_appends_at_tail(struct kunit *test)
{
	static const struct svod_plan_event ev[] = {
		A(1, 1024, 0), A(2, 1024, 0), A(3, 1024, 0), A(4, 256, 0),
		A(5, 3072, 0), A(6, 256, 0), F(5), F(1), F(3), F(2),
		A(7, 3072, 0), A(8, 3072, 0),
	};
	static const u64 want[] = { 0, 1024, 2048, 3072, 3328, 6400, NO, NO, NO, NO, 3328, 0 };

	tlsf_expect(test, tlsf_case(test, 65536, 256, 32, ev, ARRAY_SIZE(ev)), want, 6656);
}

/* Sparse ids (the hashed id table) plan exactly like dense ones. */
static void tlsf_sparse_ids(struct kunit *test)
{
	static const struct svod_plan_event dense[] = {
		A(0, 1024, 0), A(1, 256, 0), A(2, 1024, 0), A(3, 256, 0),
		F(2), F(0), A(4, 1024, 0), A(5, 1024, 0), F(4), F(1),
	};
	static const struct svod_plan_event sparse[] = {
		A(U32_MAX, 1024, 0), A(1U << 31, 256, 0), A(7, 1024, 0), A(1U << 20, 256, 0),
		F(7), F(U32_MAX), A(7 << 20, 1024, 0), A(U32_MAX, 1024, 0), F(7 << 20),
		F(1U << 31),
	};
	static const u64 want[] = { 0, 1024, 1280, 2304, NO, NO, 1280, 0, NO, NO };

	tlsf_expect(test, tlsf_case(test, 8192, 256, 32, dense, ARRAY_SIZE(dense)), want, 2560);
	tlsf_expect(test, tlsf_case(test, 8192, 256, 32, sparse, ARRAY_SIZE(sparse)), want, 2560);
}

/* Ids are names, not offsets: a freed id may be allocated again. */
static void tlsf_id_reuse_after_free(struct kunit *test)
{
	static const struct svod_plan_event ev[] = { A(7, 256, 0), F(7), A(7, 512, 0) };
	static const u64 want[] = { 0, NO, 0 };

	tlsf_expect(test, tlsf_case(test, 4096, 256, 32, ev, ARRAY_SIZE(ev)), want, 512);
}

static void tlsf_enospc_reports_event(struct kunit *test)
{
	static const struct svod_plan_event ev[] = { A(1, 256, 0), A(2, 256, 0), A(3, 256, 0) };

	tlsf_expect_err(test, tlsf_case(test, 512, 256, 32, ev, ARRAY_SIZE(ev)), -ENOSPC, 2);
}

/* Events run in order: space runs out at 1 before the bad free at 2. */
static void tlsf_first_failing_event_wins(struct kunit *test)
{
	static const struct svod_plan_event ev[] = { A(1, 256, 0), A(2, 512, 0), F(9) };

	tlsf_expect_err(test, tlsf_case(test, 512, 256, 32, ev, ARRAY_SIZE(ev)), -ENOSPC, 1);
	tlsf_expect_einval(test, 4096, ev, ARRAY_SIZE(ev), 2);
}

static void tlsf_bad_events(struct kunit *test)
{
	static const struct svod_plan_event unknown[] = { A(1, 256, 0), F(2) };
	static const struct svod_plan_event twice[] = { A(1, 256, 0), F(1), F(1) };
	static const struct svod_plan_event live[] = { A(1, 256, 0), A(1, 256, 0) };
	static const struct svod_plan_event op[] = { A(1, 256, 0), { .op = 3, .id = 1 } };
	static const struct svod_plan_event fsize[] = { A(1, 256, 0),
		{ .op = SVOD_PLAN_FREE, .id = 1, .size = 1 } };
	static const struct svod_plan_event falign[] = { A(1, 256, 0),
		{ .op = SVOD_PLAN_FREE, .id = 1, .align = 1 } };
	static const struct svod_plan_event wrap[] = { A(1, 256, 0), A(2, U64_MAX, 2) };
	static const struct svod_plan_event wrap_granule[] = { A(1, U64_MAX - 1, 0) };

	tlsf_expect_einval(test, 4096, unknown, ARRAY_SIZE(unknown), 1);
	tlsf_expect_einval(test, 4096, twice, ARRAY_SIZE(twice), 2);
	tlsf_expect_einval(test, 4096, live, ARRAY_SIZE(live), 1);
	tlsf_expect_einval(test, 4096, op, ARRAY_SIZE(op), 1);
	tlsf_expect_einval(test, 4096, fsize, ARRAY_SIZE(fsize), 1);
	tlsf_expect_einval(test, 4096, falign, ARRAY_SIZE(falign), 1);
	tlsf_expect_einval(test, 4096, wrap, ARRAY_SIZE(wrap), 1);
	tlsf_expect_einval(test, U64_MAX, wrap_granule, ARRAY_SIZE(wrap_granule), 0);
}

static void tlsf_bad_params(struct kunit *test)
{
	static const struct svod_plan_event ev[] = { A(1, 256, 0) };
	struct tlsf_case c = *tlsf_case(test, 4096, 256, 32, ev, ARRAY_SIZE(ev));
	struct svod_plan_result res;
	u64 off;

	c.block_size = 0;
	tlsf_expect_err(test, &c, -EINVAL, U32_MAX);
	c = *tlsf_case(test, 0, 256, 32, ev, ARRAY_SIZE(ev));
	tlsf_expect_err(test, &c, -EINVAL, U32_MAX);
	c = *tlsf_case(test, 4096, 256, SVOD_TLSF_MAX_LV2_CNT + 1, ev, ARRAY_SIZE(ev));
	tlsf_expect_err(test, &c, -EINVAL, U32_MAX);
	c = *tlsf_case(test, 4096, 256, 32, ev, ARRAY_SIZE(ev));
	c.strategy = SVOD_PLAN_BEST + 1;
	tlsf_expect_err(test, &c, -EINVAL, U32_MAX);
	c = *tlsf_case(test, 4096, 256, SVOD_TLSF_MAX_LV2_CNT, ev, ARRAY_SIZE(ev));
	KUNIT_EXPECT_EQ(test, tlsf_run(test, &c, &off, &res), 0);
	/* Refused before the events are read. */
	c.n = SVOD_PLAN_MAX_EVENTS + 1;
	KUNIT_EXPECT_EQ(test, tlsf_run(test, &c, &off, &res), -E2BIG);
}

/* BEST: the skyline beats TLSF here (3072 vs 3328, the lower bound). */
static void tlsf_best_beats_tlsf(struct kunit *test)
{
	static const struct svod_plan_event ev[] = {
		A(1, 1024, 0), A(2, 256, 0), F(1), A(3, 2048, 0), F(2), A(4, 1024, 0), F(3), F(4),
	};
	static const u64 want_tlsf[] = { 0, 1024, NO, 1280, NO, 0, NO, NO };
	static const u64 want_best[] = { 256, 0, NO, 1024, NO, 0, NO, NO };
	struct tlsf_case c = *tlsf_case(test, 1 << 20, 256, 32, ev, ARRAY_SIZE(ev));
	struct svod_plan_result res;
	u64 got[ARRAY_SIZE(ev)];

	tlsf_expect(test, &c, want_tlsf, 3328);
	c.strategy = SVOD_PLAN_BEST;
	tlsf_expect(test, &c, want_best, 3072);
	KUNIT_ASSERT_EQ(test, tlsf_run(test, &c, got, &res), 0);
	KUNIT_EXPECT_EQ(test, res.used, SVOD_PLAN_USED_SKY);
	KUNIT_EXPECT_EQ(test, res.lower_bound, 3072);
}

/* BEST fits where TLSF runs out of space, and fails only if neither fits. */
static void tlsf_best_fits_where_tlsf_fails(struct kunit *test)
{
	static const struct svod_plan_event ev[] = {
		A(1, 1024, 0), A(2, 256, 0), F(1), A(3, 2048, 0), F(2), A(4, 1024, 0), F(3), F(4),
	};
	struct tlsf_case c = *tlsf_case(test, 3072, 256, 32, ev, ARRAY_SIZE(ev));

	tlsf_expect_err(test, &c, -ENOSPC, 3);
	c.strategy = SVOD_PLAN_BEST;
	tlsf_expect(test, &c, (const u64[]){ 256, 0, NO, 1024, NO, 0, NO, NO }, 3072);
	/* Neither fits: the event BEST places highest (A(3) ends at 3072). */
	c.arena = 3071;
	tlsf_expect_err(test, &c, -ENOSPC, 3);
}

/* The lower bound counts requested bytes: zero-size buffers add nothing. */
static void tlsf_lower_bound_counts_requested_bytes(struct kunit *test)
{
	static const struct svod_plan_event ev[] = {
		A(1, 0, 0), A(2, 100, 0), F(1), A(3, 300, 0), F(2), F(3),
	};
	struct tlsf_case c = *tlsf_case(test, 4096, 256, 32, ev, ARRAY_SIZE(ev));
	struct svod_plan_result res;
	u64 got[ARRAY_SIZE(ev)];

	KUNIT_ASSERT_EQ(test, tlsf_run(test, &c, got, &res), 0);
	KUNIT_EXPECT_EQ(test, res.lower_bound, 400);
	KUNIT_EXPECT_EQ(test, res.peak, 812);
}

static u64 tlsf_rand(u64 *s)
{
	u64 z = (*s += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

/* A random well-formed trace: about 40% frees of random live buffers. */
static u32 tlsf_random_trace(u64 *s, struct svod_plan_event *ev, u32 n, u32 *live)
{
	static const u64 aligns[] = { 0, 0, 1, 2, 8, 64, 256, 4096, 3, 1000 };
	u32 i, nr_live = 0, id = 0;

	for (i = 0; i < n; i++) {
		u64 r = tlsf_rand(s);

		if (nr_live && r % 10 < 4) {
			u32 k = (r >> 8) % nr_live;

			ev[i] = (struct svod_plan_event){ .op = SVOD_PLAN_FREE, .id = live[k] };
			live[k] = live[--nr_live];
			continue;
		}
		ev[i] = (struct svod_plan_event){
			.op = SVOD_PLAN_ALLOC, .id = id,
			.size = r % 16 == 0 ? 0 : (r >> 8) % (r % 3 ? 4096 : 1 << 20),
			.align = aligns[(r >> 40) % ARRAY_SIZE(aligns)],
		};
		live[nr_live++] = id++;
	}
	return n;
}

/*
 * Invariants of a successful plan: offsets aligned and inside the arena,
 * no two live buffers overlapping (max(size, block_size) bytes each), peak
 * the largest end, lower bound the largest sum of requested live bytes.
 */
static void tlsf_check_plan(struct kunit *test, const struct tlsf_case *c, const u64 *off,
			    const struct svod_plan_result *res, u32 *live)
{
	u64 top = 0, bytes = 0, bound = 0;
	u32 i, j, nr = 0;

	for (i = 0; i < c->n; i++) {
		const struct svod_plan_event *e = &c->ev[i];
		u64 size = max(e->size, c->block_size), rem;

		if (e->op == SVOD_PLAN_FREE) {
			for (j = 0; j < nr && c->ev[live[j]].id != e->id; j++)
				;
			KUNIT_ASSERT_LT(test, j, nr);
			bytes -= c->ev[live[j]].size;
			live[j] = live[--nr];
			continue;
		}
		div64_u64_rem(off[i], max(e->align, 1ULL), &rem);
		KUNIT_EXPECT_EQ_MSG(test, rem, 0, "event %u misaligned", i);
		KUNIT_EXPECT_LE_MSG(test, off[i] + size, c->arena, "event %u", i);
		for (j = 0; j < nr; j++) {
			u64 o = off[live[j]];
			u64 osize = max(c->ev[live[j]].size, c->block_size);

			KUNIT_EXPECT_TRUE_MSG(test, off[i] + size <= o || o + osize <= off[i],
					      "events %u and %u overlap", i, live[j]);
		}
		live[nr++] = i;
		top = max(top, off[i] + size);
		bytes += e->size;
		bound = max(bound, bytes);
	}
	KUNIT_EXPECT_EQ(test, res->peak, top);
	KUNIT_EXPECT_EQ(test, res->lower_bound, bound);
	KUNIT_EXPECT_GE(test, res->peak, res->lower_bound);
}

#define TLSF_RANDOM_EVENTS	400
#define TLSF_RANDOM_TRACES	24

static void tlsf_random_invariants(struct kunit *test)
{
	static const u32 lv2s[] = { 0, 1, 3, 16, 32, 33, 256 };
	static const u64 bss[] = { 1, 16, 256, 4096 };
	struct svod_plan_event *ev;
	struct svod_plan_result res, again, best;
	u64 s, *off, *off2, *offb;
	u32 *live, t;

	s = svod_test_seed(test);
	ev = kunit_kcalloc(test, TLSF_RANDOM_EVENTS, sizeof(*ev), GFP_KERNEL);
	off = kunit_kcalloc(test, TLSF_RANDOM_EVENTS, sizeof(*off), GFP_KERNEL);
	off2 = kunit_kcalloc(test, TLSF_RANDOM_EVENTS, sizeof(*off2), GFP_KERNEL);
	offb = kunit_kcalloc(test, TLSF_RANDOM_EVENTS, sizeof(*offb), GFP_KERNEL);
	live = kunit_kcalloc(test, TLSF_RANDOM_EVENTS, sizeof(*live), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ev);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, off);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, off2);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, offb);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, live);

	for (t = 0; t < TLSF_RANDOM_TRACES; t++) {
		struct tlsf_case c = {
			.arena = 1ULL << 32,
			.block_size = bss[tlsf_rand(&s) % ARRAY_SIZE(bss)],
			.lv2_cnt = lv2s[tlsf_rand(&s) % ARRAY_SIZE(lv2s)],
			.ev = ev,
			.n = tlsf_random_trace(&s, ev, TLSF_RANDOM_EVENTS, live),
		};

		KUNIT_ASSERT_EQ(test, tlsf_run(test, &c, off, &res), 0);
		tlsf_check_plan(test, &c, off, &res, live);

		/* Determinism: the same input gives the same plan. */
		KUNIT_ASSERT_EQ(test, tlsf_run(test, &c, off2, &again), 0);
		KUNIT_EXPECT_EQ(test, memcmp(off, off2, sizeof(*off) * c.n), 0);
		KUNIT_EXPECT_EQ(test, res.peak, again.peak);

		c.strategy = SVOD_PLAN_BEST;
		KUNIT_ASSERT_EQ(test, tlsf_run(test, &c, offb, &best), 0);
		tlsf_check_plan(test, &c, offb, &best, live);
		KUNIT_EXPECT_LE(test, best.peak, res.peak);
		KUNIT_EXPECT_GE(test, best.peak, best.lower_bound);
		if (best.used == SVOD_PLAN_TLSF)
			KUNIT_EXPECT_EQ(test, memcmp(off, offb, sizeof(*off) * c.n), 0);
	}
}

/* A failed plan still placed every event before the failure validly. */
static void tlsf_random_enospc_prefix(struct kunit *test)
{
	struct svod_plan_event *ev;
	struct svod_plan_result res;
	u64 s, *off;
	u32 *live, t;

	s = svod_test_seed(test) ^ 0x5eed;
	ev = kunit_kcalloc(test, TLSF_RANDOM_EVENTS, sizeof(*ev), GFP_KERNEL);
	off = kunit_kcalloc(test, TLSF_RANDOM_EVENTS, sizeof(*off), GFP_KERNEL);
	live = kunit_kcalloc(test, TLSF_RANDOM_EVENTS, sizeof(*live), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ev);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, off);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, live);

	for (t = 0; t < TLSF_RANDOM_TRACES; t++) {
		struct tlsf_case c = {
			.arena = 1 << 18,
			.block_size = 256,
			.lv2_cnt = 32,
			.ev = ev,
			.n = tlsf_random_trace(&s, ev, TLSF_RANDOM_EVENTS, live),
		};
		int err = tlsf_run(test, &c, off, &res);

		if (!err)
			continue;
		KUNIT_ASSERT_EQ(test, err, -ENOSPC);
		KUNIT_ASSERT_LT(test, res.failed_event, c.n);
		KUNIT_EXPECT_EQ(test, off[res.failed_event], NO);
		KUNIT_EXPECT_EQ(test, ev[res.failed_event].op, SVOD_PLAN_ALLOC);
		c.n = res.failed_event;
		KUNIT_ASSERT_EQ(test, tlsf_run(test, &c, off, &res), 0);
		tlsf_check_plan(test, &c, off, &res, live);
	}
}

static struct kunit_case tlsf_cases[] = {
	KUNIT_CASE(tlsf_zero_size_takes_block_size),
	KUNIT_CASE(tlsf_block_size_is_minimum_not_granule),
	KUNIT_CASE(tlsf_granule_follows_l2_bits),
	KUNIT_CASE(tlsf_small_sizes_and_lv2_bits),
	KUNIT_CASE(tlsf_lv2_zero_is_one),
	KUNIT_CASE(tlsf_rounding_includes_align_padding),
	KUNIT_CASE(tlsf_align_head_split),
	KUNIT_CASE(tlsf_align_not_power_of_two),
	KUNIT_CASE(tlsf_bucket_is_fifo),
	KUNIT_CASE(tlsf_split_appends_at_tail),
	KUNIT_CASE(tlsf_merge_walks_left_appends_at_tail),
	KUNIT_CASE(tlsf_sparse_ids),
	KUNIT_CASE(tlsf_id_reuse_after_free),
	KUNIT_CASE(tlsf_enospc_reports_event),
	KUNIT_CASE(tlsf_first_failing_event_wins),
	KUNIT_CASE(tlsf_bad_events),
	KUNIT_CASE(tlsf_bad_params),
	KUNIT_CASE(tlsf_best_beats_tlsf),
	KUNIT_CASE(tlsf_best_fits_where_tlsf_fails),
	KUNIT_CASE(tlsf_lower_bound_counts_requested_bytes),
	KUNIT_CASE(tlsf_random_invariants),
	KUNIT_CASE(tlsf_random_enospc_prefix),
	{}
};

struct kunit_suite svod_tlsf_suite = {
	.name = "svod_tlsf",
	.test_cases = tlsf_cases,
};
