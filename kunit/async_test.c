// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: svod_async, the asynchronous queue (driver/async.c) on a fake
 * device, with zero-length transfers (no user pages): a job's fence takes
 * the file's next timeline value, signals with status 0, and the timeline
 * compares all 64 bits (a value past 2^32 is later than a small one, as
 * the fence ops' use_64bit_seqno promises; with 32-bit compares it would
 * not be). A batch (svod_async_prepare_batch()) of entries on two tiers
 * takes one timeline value and gives every tier reference back; one whose
 * pages pass max_pinned_pages fails with -EFBIG at the entry that passes
 * it, before pinning, and reserves nothing. svod_async_hand_over() gives
 * a queued job a reference it holds until after its signal, and the job
 * forgets its key: a cancellation by that key no longer reaches it.
 * In-fences (a fence of the test's own): a job waits for one, and the job
 * behind it waits too; its signal starts the job, its error fails the job
 * with that error, and a cancellation ends a job whose in-fence never
 * signals (its later signal finds the callback removed).
 */
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/dma-fence.h>
#include <linux/sizes.h>
#include <linux/slab.h>

#include "async.h"
#include "fake_dev.h"
#include "svod_test.h"
#include "tier.h"

/* A zero-length transfer after @in (or none), queued; its fence, referenced. */
static struct dma_fence *zero_job_after(struct kunit *test, struct svod_async *q,
					struct svod_dev_tier *tier, struct dma_fence *in,
					u64 *seqno)
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
	if (in)
		svod_async_wait_for(job, in);
	KUNIT_ASSERT_EQ(test, 0, svod_async_submit(q, job, false, seqno, &fence_fd,
						   &fence_file));
	KUNIT_EXPECT_EQ(test, -1, fence_fd);
	KUNIT_EXPECT_NULL(test, fence_file);
	return fence;
}

static struct dma_fence *zero_job(struct kunit *test, struct svod_async *q,
				  struct svod_dev_tier *tier, u64 *seqno)
{
	return zero_job_after(test, q, tier, NULL, seqno);
}

/* The test's own fences: another driver's, as far as svod can tell. */
static const char *in_fence_name(struct dma_fence *fence)
{
	return "svod-test";
}

static const struct dma_fence_ops in_fence_ops = {
	.get_driver_name = in_fence_name,
	.get_timeline_name = in_fence_name,
};

static DEFINE_SPINLOCK(in_fence_lock);

static struct dma_fence *in_fence_new(struct kunit *test)
{
	struct dma_fence *f = kzalloc(sizeof(*f), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, f);
	dma_fence_init(f, &in_fence_ops, &in_fence_lock, dma_fence_context_alloc(1), 1);
	return f;
}

/* Has transfer @seqno of @q ended? Its status in *@status if so. */
static bool job_ended(struct svod_async *q, u64 seqno, int *status)
{
	u64 done;

	return !svod_async_wait(q, seqno, 0, &done, status);
}

static void in_fence_signal_starts_job_and_the_next(struct kunit *test)
{
	struct fake_dev *fd = fake_dev_add(test, SZ_1M);
	struct svod_dev_tier *tier = fake_dev_tier(test, fd, 0);
	struct svod_async *q = kunit_kzalloc(test, sizeof(*q), GFP_KERNEL);
	struct dma_fence *in = in_fence_new(test), *a, *b;
	u64 s1 = 0, s2 = 0, done = 1;
	int status = 1;

	KUNIT_ASSERT_NOT_NULL(test, q);
	svod_async_init(q, 1);
	a = zero_job_after(test, q, tier, in, &s1);
	b = zero_job(test, q, tier, &s2);
	/* A worker pass at least: neither may have ended. */
	msleep(50);
	KUNIT_EXPECT_FALSE(test, job_ended(q, s1, &status));
	KUNIT_EXPECT_FALSE(test, job_ended(q, s2, &status));
	dma_fence_signal(in);
	KUNIT_EXPECT_EQ(test, 0, svod_async_wait(q, s1, S64_MAX, &done, &status));
	KUNIT_EXPECT_EQ(test, 0, status);
	KUNIT_EXPECT_EQ(test, 0, svod_async_wait(q, s2, S64_MAX, &done, &status));
	KUNIT_EXPECT_EQ(test, 0, status);
	svod_async_fini(q);
	dma_fence_put(a);
	dma_fence_put(b);
	dma_fence_put(in);
	svod_dev_tier_put(tier);
}

static void in_fence_error_fails_job_with_it(struct kunit *test)
{
	struct fake_dev *fd = fake_dev_add(test, SZ_1M);
	struct svod_dev_tier *tier = fake_dev_tier(test, fd, 0);
	struct svod_async *q = kunit_kzalloc(test, sizeof(*q), GFP_KERNEL);
	struct dma_fence *in = in_fence_new(test), *a, *b;
	u64 s1 = 0, s2 = 0, done = 1;
	int status = 1;

	KUNIT_ASSERT_NOT_NULL(test, q);
	svod_async_init(q, 1);
	a = zero_job_after(test, q, tier, in, &s1);
	b = zero_job(test, q, tier, &s2);
	dma_fence_set_error(in, -EIO);
	dma_fence_signal(in);
	KUNIT_EXPECT_EQ(test, 0, svod_async_wait(q, s1, S64_MAX, &done, &status));
	KUNIT_EXPECT_EQ(test, -EIO, status);
	KUNIT_EXPECT_EQ(test, 0ULL, done);
	KUNIT_EXPECT_EQ(test, -EIO, a->error);
	/* The next job is not the in-fence's: it runs. */
	KUNIT_EXPECT_EQ(test, 0, svod_async_wait(q, s2, S64_MAX, &done, &status));
	KUNIT_EXPECT_EQ(test, 0, status);
	svod_async_fini(q);
	dma_fence_put(a);
	dma_fence_put(b);
	dma_fence_put(in);
	svod_dev_tier_put(tier);
}

static void in_fence_never_signalled_cancel_ends_job(struct kunit *test)
{
	struct fake_dev *fd = fake_dev_add(test, SZ_1M);
	struct svod_dev_tier *tier = fake_dev_tier(test, fd, 0);
	struct svod_async *q = kunit_kzalloc(test, sizeof(*q), GFP_KERNEL);
	struct dma_fence *in = in_fence_new(test), *a;
	u64 s1 = 0, done = 1;
	int status = 1;

	KUNIT_ASSERT_NOT_NULL(test, q);
	svod_async_init(q, 1);
	a = zero_job_after(test, q, tier, in, &s1);
	svod_async_cancel(q, q);
	KUNIT_EXPECT_EQ(test, 0, svod_async_wait(q, s1, S64_MAX, &done, &status));
	KUNIT_EXPECT_EQ(test, -ECANCELED, status);
	/* Every cleanup has run: the callback is gone, the signal is harmless. */
	svod_async_fini(q);
	KUNIT_EXPECT_FALSE(test, dma_fence_is_signaled(in));
	dma_fence_signal(in);
	dma_fence_put(a);
	dma_fence_put(in);
	svod_dev_tier_put(tier);
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

/* A batch of @n zero-length entries on @tier, two keys, queued. */
static u64 zero_batch(struct kunit *test, struct svod_async *q,
		      struct svod_dev_tier *tier, unsigned int n)
{
	struct svod_async_part parts[4] = {};
	struct file *fence_file = NULL;
	struct svod_async_job *job;
	unsigned int failed = ~0U, i;
	int fence_fd = 0;
	u64 seqno = 0;

	KUNIT_ASSERT_LE(test, n, ARRAY_SIZE(parts));
	for (i = 0; i < n; i++) {
		parts[i].tier = tier;
		parts[i].bar = &tier->sdev->bars[tier->spec.bar];
		parts[i].key = &parts[i % 2];
		parts[i].to_device = i % 2;
	}
	job = svod_async_prepare_batch(q, parts, n, &failed);
	KUNIT_ASSERT_FALSE(test, IS_ERR(job));
	KUNIT_EXPECT_EQ(test, ~0U, failed);
	KUNIT_ASSERT_EQ(test, 0, svod_async_submit(q, job, false, &seqno, &fence_fd,
						   &fence_file));
	KUNIT_EXPECT_EQ(test, -1, fence_fd);
	return seqno;
}

static void batch_takes_one_timeline_value(struct kunit *test)
{
	struct fake_dev *fd = fake_dev_add(test, SZ_1M);
	struct svod_dev_tier *t0 = fake_dev_tier(test, fd, 0);
	struct svod_async *q = kunit_kzalloc(test, sizeof(*q), GFP_KERNEL);
	unsigned int ref0;
	int status = 1;
	u64 s1, s2, done = 1;

	KUNIT_ASSERT_NOT_NULL(test, q);
	svod_async_init(q, 1);
	ref0 = kref_read(&t0->ref);
	s1 = zero_batch(test, q, t0, 3);
	s2 = zero_batch(test, q, t0, 4);
	KUNIT_EXPECT_EQ(test, 1ULL, s1);
	KUNIT_EXPECT_EQ(test, 2ULL, s2);
	KUNIT_EXPECT_EQ(test, 0, svod_async_wait(q, s1, S64_MAX, &done, &status));
	KUNIT_EXPECT_EQ(test, 0, status);
	KUNIT_EXPECT_EQ(test, 0ULL, done);
	KUNIT_EXPECT_EQ(test, 0, svod_async_wait(q, s2, S64_MAX, &done, &status));
	KUNIT_EXPECT_EQ(test, 0, status);
	svod_async_fini(q);
	/* A batch's cleanup drops its entries' tier references before its caps. */
	KUNIT_EXPECT_EQ(test, ref0, kref_read(&t0->ref));
	svod_dev_tier_put(t0);
}

static void batch_pages_past_cap_efbig_at_entry(struct kunit *test)
{
	struct fake_dev *fd = fake_dev_add(test, SZ_1M);
	struct svod_dev_tier *t0 = fake_dev_tier(test, fd, 0);
	struct svod_async *q = kunit_kzalloc(test, sizeof(*q), GFP_KERNEL);
	struct svod_async_part parts[4] = {};
	struct svod_async_job *job;
	unsigned int failed = ~0U, i, ref0;

	KUNIT_ASSERT_NOT_NULL(test, q);
	svod_async_init(q, 1);
	ref0 = kref_read(&t0->ref);
	/* Half the default cap (65536 pages) twice, then one page more. */
	for (i = 0; i < ARRAY_SIZE(parts); i++) {
		parts[i].tier = t0;
		parts[i].bar = &t0->sdev->bars[t0->spec.bar];
		parts[i].key = q;
		parts[i].ubuf = 0x10000000UL;
		parts[i].length = i < 2 ? 32768ULL * PAGE_SIZE : 1;
		parts[i].to_device = true;
	}
	job = svod_async_prepare_batch(q, parts, ARRAY_SIZE(parts), &failed);
	KUNIT_EXPECT_EQ(test, -EFBIG, PTR_ERR_OR_ZERO(job));
	KUNIT_EXPECT_EQ(test, 2U, failed);
	KUNIT_EXPECT_EQ(test, 0U, q->inflight);
	KUNIT_EXPECT_EQ(test, 0UL, q->pinned);
	KUNIT_EXPECT_EQ(test, ref0, kref_read(&t0->ref));
	svod_async_fini(q);
	svod_dev_tier_put(t0);
}

/* The test keeps the first reference: reaching zero is a bug. */
static void never_released(struct kref *ref)
{
	WARN_ON(1);
}

static void hand_over_holds_reference_until_signal(struct kunit *test)
{
	struct fake_dev *fd = fake_dev_add(test, SZ_1M);
	struct svod_dev_tier *tier = fake_dev_tier(test, fd, 0);
	struct svod_async *q = kunit_kzalloc(test, sizeof(*q), GFP_KERNEL);
	struct svod_async_req req = {
		.tier = tier,
		.bar = &tier->sdev->bars[tier->spec.bar],
		.key = tier,
		.to_device = true,
	};
	struct svod_async_job *blocker;
	struct dma_fence *fence;
	struct kref ref;
	u64 seqno = 0, later = 0, done = 1;
	int status = 1;

	KUNIT_ASSERT_NOT_NULL(test, q);
	svod_async_init(q, 1);
	kref_init(&ref);
	/* A job never queued stands in as running: the worker starts none. */
	blocker = svod_async_prepare(q, &req);
	KUNIT_ASSERT_FALSE(test, IS_ERR(blocker));
	spin_lock_irq(&q->lock);
	q->running = blocker;
	spin_unlock_irq(&q->lock);
	fence = zero_job(test, q, tier, &seqno);
	KUNIT_EXPECT_FALSE(test, dma_fence_is_signaled(fence));

	svod_async_hand_over(q, q, &ref, never_released);
	KUNIT_EXPECT_EQ(test, 2U, kref_read(&ref));
	/* The key is forgotten: the handle's cancellation does not stop it. */
	svod_async_cancel(q, q);
	KUNIT_EXPECT_FALSE(test, dma_fence_is_signaled(fence));
	/* Only the jobs of the key take one; the blocker is no queued job. */
	svod_async_hand_over(q, tier, &ref, never_released);
	KUNIT_EXPECT_EQ(test, 2U, kref_read(&ref));

	spin_lock_irq(&q->lock);
	q->running = NULL;
	spin_unlock_irq(&q->lock);
	/* The next submission runs the worker again. */
	dma_fence_put(zero_job(test, q, tier, &later));
	KUNIT_EXPECT_EQ(test, 0, svod_async_wait(q, seqno, S64_MAX, &done, &status));
	KUNIT_EXPECT_EQ(test, 0, status);
	KUNIT_EXPECT_EQ(test, 0ULL, done);
	svod_async_abort(q, blocker);
	svod_async_fini(q);
	/* svod_async_fini() returns after every cleanup: the reference is back. */
	KUNIT_EXPECT_EQ(test, 1U, kref_read(&ref));
	dma_fence_put(fence);
	svod_dev_tier_put(tier);
}

static struct kunit_case async_cases[] = {
	KUNIT_CASE(timeline_compares_64_bits),
	KUNIT_CASE(batch_takes_one_timeline_value),
	KUNIT_CASE(batch_pages_past_cap_efbig_at_entry),
	KUNIT_CASE(hand_over_holds_reference_until_signal),
	KUNIT_CASE(in_fence_signal_starts_job_and_the_next),
	KUNIT_CASE(in_fence_error_fails_job_with_it),
	KUNIT_CASE(in_fence_never_signalled_cancel_ends_job),
	{}
};

struct kunit_suite svod_async_suite = {
	.name = "svod_async",
	.test_cases = async_cases,
};
