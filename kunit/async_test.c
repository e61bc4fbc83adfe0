// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: svod_async, the asynchronous queue (driver/async.c) on a fake
 * device, with zero-length transfers (no user pages): a job's fence takes
 * the file's next timeline value, signals with status 0, and the timeline
 * compares all 64 bits (a value past 2^32 is later than a small one, as
 * the fence ops' use_64bit_seqno promises; with 32-bit compares it would
 * not be).
 */
#include <kunit/test.h>
#include <linux/dma-fence.h>
#include <linux/sizes.h>

#include "async.h"
#include "fake_dev.h"
#include "svod_test.h"
#include "tier.h"

/* A zero-length transfer of @tier on @q, queued; its fence, referenced. */
static struct dma_fence *zero_job(struct kunit *test, struct svod_async *q,
				  struct svod_dev_tier *tier, u64 *seqno)
{
	struct svod_async_req req = {
		.tier = tier,
		.bar = &tier->sdev->bars[tier->spec.bar],
		.key = q,
		.to_device = true,
	};
	struct svod_async_job *job = svod_async_prepare(q, &req);
	struct file *fence_file = NULL;
	struct dma_fence *fence;
	int fence_fd = -1;

	KUNIT_ASSERT_FALSE(test, IS_ERR(job));
	/* The fence is the job's first member (see struct svod_async_job). */
	fence = dma_fence_get((struct dma_fence *)job);
	KUNIT_ASSERT_EQ(test, 0, svod_async_submit(q, job, false, seqno, &fence_fd,
						   &fence_file));
	KUNIT_EXPECT_EQ(test, -1, fence_fd);
	KUNIT_EXPECT_NULL(test, fence_file);
	return fence;
}

static void timeline_compares_64_bits(struct kunit *test)
{
	struct fake_dev *fd = fake_dev_add(test, SZ_1M);
	struct svod_dev_tier *tier = fake_dev_tier(test, fd, 0);
	struct svod_async *q = kunit_kzalloc(test, sizeof(*q), GFP_KERNEL);
	struct dma_fence *early, *late;
	u64 s1 = 0, s2 = 0, done = 1;
	int status = 1;

	KUNIT_ASSERT_NOT_NULL(test, q);
	svod_async_init(q, 1);
	early = zero_job(test, q, tier, &s1);
	KUNIT_EXPECT_EQ(test, 1ULL, s1);
	KUNIT_EXPECT_EQ(test, 0, svod_async_wait(q, s1, S64_MAX, &done, &status));
	KUNIT_EXPECT_EQ(test, 0, status);
	KUNIT_EXPECT_EQ(test, 0ULL, done);

	/* Jump the timeline past 2^32: the next value's low 32 bits are 1. */
	q->seqno = BIT_ULL(32);
	late = zero_job(test, q, tier, &s2);
	KUNIT_EXPECT_EQ(test, BIT_ULL(32) + 1, s2);
	KUNIT_EXPECT_EQ(test, 0, svod_async_wait(q, s2, S64_MAX, &done, &status));
	KUNIT_EXPECT_TRUE(test, dma_fence_is_signaled(late));
	KUNIT_EXPECT_TRUE(test, dma_fence_is_later(late, early));
	KUNIT_EXPECT_FALSE(test, dma_fence_is_later(early, late));

	svod_async_fini(q);
	dma_fence_put(early);
	dma_fence_put(late);
	svod_dev_tier_put(tier);
}

static struct kunit_case async_cases[] = {
	KUNIT_CASE(timeline_compares_64_bits),
	{}
};

struct kunit_suite svod_async_suite = {
	.name = "svod_async",
	.test_cases = async_cases,
};
