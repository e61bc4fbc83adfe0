// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: svod_alloc, allocations (driver/alloc.c) of an open file in a tier
 * of a fake device: a freed handle is stale at once and never names the
 * next allocation of its range; FREE zeroes exactly the range through the
 * BAR; the file's usage follows its allocations back to nothing; a failed
 * ALLOC changes nothing; MAP_OFFSET needs whole pages.
 */
#include <kunit/test.h>
#include <linux/sizes.h>
#include <linux/string.h>
#include <linux/xarray.h>

#include <linux/svod.h>

#include "alloc.h"
#include "fake_dev.h"
#include "file.h"
#include "ioctl.h"
#include "svod_test.h"
#include "tier.h"

#define BAR_LEN		SZ_1M

static int free_handle(struct svod_file *sf, u64 handle)
{
	struct svod_free f = { .handle = handle };

	return svod_free_ioctl(sf, &f);
}

static void freed_handle_stale_never_reused(struct kunit *test)
{
	struct fake_dev *fd = fake_dev_add(test, BAR_LEN);
	struct svod_dev_tier *tier = fake_dev_tier(test, fd, 0);
	struct file *filp;
	struct svod_file *sf = fake_file_open(test, &filp);
	struct svod_resolve r;
	u64 h, h2, addr, addr2;

	h = fake_alloc(test, sf, tier->id, SZ_4K, 0, &addr);
	KUNIT_EXPECT_EQ(test, 0, fake_resolve(sf, h, &r));
	KUNIT_EXPECT_EQ(test, addr, r.device_addr);
	KUNIT_EXPECT_EQ(test, 0, free_handle(sf, h));
	KUNIT_EXPECT_EQ(test, -ESTALE, fake_resolve(sf, h, &r));
	KUNIT_EXPECT_EQ(test, -ESTALE, free_handle(sf, h));
	/* The same range again, first fit: a new handle, the old one stale. */
	h2 = fake_alloc(test, sf, tier->id, SZ_4K, 0, &addr2);
	KUNIT_EXPECT_EQ(test, addr, addr2);
	KUNIT_EXPECT_NE(test, h, h2);
	KUNIT_EXPECT_EQ(test, -ESTALE, fake_resolve(sf, h, &r));
	KUNIT_EXPECT_EQ(test, 0, fake_resolve(sf, h2, &r));
	svod_dev_tier_put(tier);
}

static void free_zeroes_exactly_the_range(struct kunit *test)
{
	struct fake_dev *fd = fake_dev_add(test, BAR_LEN);
	struct svod_dev_tier *tier = fake_dev_tier(test, fd, 0);
	struct file *filp;
	struct svod_file *sf = fake_file_open(test, &filp);
	u64 h, addr, off;

	/* A first allocation keeps the second off the start of the BAR. */
	fake_alloc(test, sf, tier->id, SZ_8K, 0, NULL);
	h = fake_alloc(test, sf, tier->id, SZ_16K, 0, &addr);
	off = tier->spec.offset + (addr - tier->spec.base);
	KUNIT_EXPECT_EQ(test, 0, free_handle(sf, h));
	KUNIT_EXPECT_TRUE(test, fake_dev_holds(fd, off, SZ_16K, 0));
	KUNIT_EXPECT_TRUE(test, fake_dev_holds(fd, 0, off, FAKE_DEV_GUARD));
	KUNIT_EXPECT_TRUE(test, fake_dev_holds(fd, off + SZ_16K, BAR_LEN - off - SZ_16K,
					       FAKE_DEV_GUARD));
	svod_dev_tier_put(tier);
}

static void usage_follows_allocations_to_nothing(struct kunit *test)
{
	struct fake_dev *fd = fake_dev_add(test, BAR_LEN);
	struct svod_dev_tier *tier = fake_dev_tier(test, fd, 0);
	struct file *filp;
	struct svod_file *sf = fake_file_open(test, &filp);
	const struct svod_usage *usage;
	u64 h1, h2;

	h1 = fake_alloc(test, sf, tier->id, SZ_4K, 0, NULL);
	h2 = fake_alloc(test, sf, tier->id, 100, 0, NULL);
	usage = xa_load(&sf->acct->usage, tier->id);
	KUNIT_ASSERT_NOT_NULL(test, usage);
	KUNIT_EXPECT_EQ(test, 2U, usage->handles);
	KUNIT_EXPECT_EQ(test, tier->core.live_bytes, usage->bytes);
	KUNIT_EXPECT_EQ(test, 0, free_handle(sf, h1));
	KUNIT_EXPECT_EQ(test, 1U, usage->handles);
	KUNIT_EXPECT_EQ(test, 0, free_handle(sf, h2));
	KUNIT_EXPECT_TRUE(test, xa_empty(&sf->acct->usage));
	KUNIT_EXPECT_EQ(test, 0ULL, tier->core.live_bytes);
	svod_dev_tier_put(tier);
}

/*
 * A second handle (IMPORT's) keeps the range and its charge: FREE of the
 * first leaves the bytes charged to the allocating file and in place; the
 * last handle's FREE scrubs the range, returns it and clears both usages.
 */
static void shared_range_stays_charged_until_last_handle(struct kunit *test)
{
	struct fake_dev *fd = fake_dev_add(test, BAR_LEN);
	struct svod_dev_tier *tier = fake_dev_tier(test, fd, 0);
	struct file *f1, *f2;
	struct svod_file *sf1 = fake_file_open(test, &f1);
	struct svod_file *sf2 = fake_file_open(test, &f2);
	const struct svod_usage *u1, *u2;
	struct svod_allocation *alloc;
	/* The ioctl's kernel copy: a handler may keep state past the struct. */
	u64 kx[SVOD_IOCTL_MAX_SIZE / sizeof(u64)] = {};
	struct svod_xfer *x = (struct svod_xfer *)kx;
	struct svod_resolve r;
	u64 h1, h2, addr, off;

	h1 = fake_alloc(test, sf1, tier->id, SZ_16K, 0, &addr);
	off = tier->spec.offset + (addr - tier->spec.base);
	memset(fd->mem + off, 0x5a, SZ_16K);		/* what a STAGE left */
	alloc = svod_allocation_get(sf1, h1, SVOD_ACCESS_READ, NULL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(alloc));
	KUNIT_ASSERT_EQ(test, 0, svod_hold_add(sf2, alloc, SVOD_ACCESS_READ, &h2));
	svod_allocation_put(alloc);

	KUNIT_EXPECT_EQ(test, 0, free_handle(sf1, h1));
	u1 = xa_load(&sf1->acct->usage, tier->id);
	u2 = xa_load(&sf2->acct->usage, tier->id);
	KUNIT_ASSERT_NOT_NULL(test, u1);
	KUNIT_ASSERT_NOT_NULL(test, u2);
	KUNIT_EXPECT_EQ(test, (u64)SZ_16K, u1->bytes);
	KUNIT_EXPECT_EQ(test, 0U, u1->handles);
	KUNIT_EXPECT_EQ(test, 0ULL, u2->bytes);
	KUNIT_EXPECT_EQ(test, 1U, u2->handles);
	KUNIT_EXPECT_EQ(test, (u64)SZ_16K, u2->imported);
	KUNIT_EXPECT_EQ(test, (u64)SZ_16K, tier->core.live_bytes);
	KUNIT_EXPECT_TRUE(test, fake_dev_holds(fd, off, SZ_16K, 0x5a));
	KUNIT_EXPECT_EQ(test, 0, fake_resolve(sf2, h2, &r));
	KUNIT_EXPECT_EQ(test, addr, r.device_addr);
	x->handle = h2;
	KUNIT_EXPECT_EQ(test, -EACCES, svod_stage_ioctl(sf2, x));
	KUNIT_EXPECT_EQ(test, -ESTALE, fake_resolve(sf1, h2, &r));

	KUNIT_EXPECT_EQ(test, 0, free_handle(sf2, h2));
	KUNIT_EXPECT_TRUE(test, xa_empty(&sf1->acct->usage));
	KUNIT_EXPECT_TRUE(test, xa_empty(&sf2->acct->usage));
	KUNIT_EXPECT_EQ(test, 0ULL, tier->core.live_bytes);
	KUNIT_EXPECT_TRUE(test, fake_dev_holds(fd, off, SZ_16K, 0));
	svod_dev_tier_put(tier);
}

static void failed_alloc_changes_nothing(struct kunit *test)
{
	struct fake_dev *fd = fake_dev_add(test, BAR_LEN);
	struct svod_dev_tier *tier = fake_dev_tier(test, fd, 0);
	struct file *filp;
	struct svod_file *sf = fake_file_open(test, &filp);
	struct svod_alloc big = { .tier = tier->id, .size = 2 * BAR_LEN };
	struct svod_alloc bad = { .tier = tier->id, .size = SZ_4K, .align = 3 };
	struct svod_alloc none = { .tier = U32_MAX, .size = SZ_4K };
	u64 free_bytes = tier->core.free_bytes;

	KUNIT_EXPECT_EQ(test, -ENOSPC, svod_alloc_ioctl(sf, &big));
	KUNIT_EXPECT_EQ(test, -EINVAL, svod_alloc_ioctl(sf, &bad));
	KUNIT_EXPECT_EQ(test, -ENOENT, svod_alloc_ioctl(sf, &none));
	KUNIT_EXPECT_EQ(test, free_bytes, tier->core.free_bytes);
	KUNIT_EXPECT_TRUE(test, xa_empty(&sf->acct->usage));
	KUNIT_EXPECT_TRUE(test, fake_dev_holds(fd, 0, BAR_LEN, FAKE_DEV_GUARD));
	svod_dev_tier_put(tier);
}

static void map_offset_whole_pages_only(struct kunit *test)
{
	struct fake_dev *fd = fake_dev_add(test, BAR_LEN);
	struct svod_dev_tier *tier = fake_dev_tier(test, fd, 0);
	struct file *filp;
	struct svod_file *sf = fake_file_open(test, &filp);
	struct svod_map_offset m = {}, again = {};
	u64 small, mappable;

	small = fake_alloc(test, sf, tier->id, 100, 0, NULL);
	mappable = fake_alloc(test, sf, tier->id, 100, SVOD_ALLOC_MAPPABLE, NULL);
	m.handle = small;
	KUNIT_EXPECT_EQ(test, -EOPNOTSUPP, svod_map_offset_ioctl(sf, &m));
	m = (struct svod_map_offset){ .handle = mappable };
	KUNIT_EXPECT_EQ(test, 0, svod_map_offset_ioctl(sf, &m));
	KUNIT_EXPECT_EQ(test, (u64)PAGE_SIZE, m.size);
	KUNIT_EXPECT_EQ(test, 0ULL, m.offset & (PAGE_SIZE - 1));
	/* One offset range per allocation: asking again finds it. */
	again.handle = mappable;
	KUNIT_EXPECT_EQ(test, 0, svod_map_offset_ioctl(sf, &again));
	KUNIT_EXPECT_EQ(test, m.offset, again.offset);
	KUNIT_EXPECT_EQ(test, 0, free_handle(sf, mappable));
	KUNIT_EXPECT_EQ(test, -ESTALE, svod_map_offset_ioctl(sf, &again));
	svod_dev_tier_put(tier);
}

static struct kunit_case svod_alloc_cases[] = {
	KUNIT_CASE(freed_handle_stale_never_reused),
	KUNIT_CASE(free_zeroes_exactly_the_range),
	KUNIT_CASE(usage_follows_allocations_to_nothing),
	KUNIT_CASE(shared_range_stays_charged_until_last_handle),
	KUNIT_CASE(failed_alloc_changes_nothing),
	KUNIT_CASE(map_offset_whole_pages_only),
	{}
};

struct kunit_suite svod_alloc_suite = {
	.name = "svod_alloc",
	.test_cases = svod_alloc_cases,
};
