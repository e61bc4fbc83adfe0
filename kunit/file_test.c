// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: svod_file, open files (driver/file.c) on a fake device: the last
 * close frees every allocation of the file (ranges zeroed and back in the
 * tier, usage gone); a handle names nothing in another file, open or
 * opened later.
 */
#include <kunit/test.h>
#include <linux/sizes.h>

#include <linux/svod.h>

#include "fake_dev.h"
#include "file.h"
#include "ioctl.h"
#include "svod_test.h"
#include "tier.h"

#define BAR_LEN		SZ_1M

static void close_frees_every_allocation(struct kunit *test)
{
	struct fake_dev *fd = fake_dev_add(test, BAR_LEN);
	struct svod_dev_tier *tier = fake_dev_tier(test, fd, 0);
	u64 free_bytes = tier->core.free_bytes, addr;
	struct file *filp;
	struct svod_file *sf = fake_file_open(test, &filp);
	unsigned int i;

	for (i = 0; i < 3; i++)
		fake_alloc(test, sf, tier->id, SZ_64K, 0, &addr);
	fake_alloc(test, sf, tier->id, SZ_4K, SVOD_ALLOC_MAPPABLE, NULL);
	KUNIT_EXPECT_EQ(test, 4U, tier->core.nr_live);
	fake_file_close(filp);
	KUNIT_EXPECT_EQ(test, 0U, tier->core.nr_live);
	KUNIT_EXPECT_EQ(test, free_bytes, tier->core.free_bytes);
	/* Every byte the file held was zeroed, nothing past them. */
	KUNIT_EXPECT_TRUE(test, fake_dev_holds(fd, 0, 3 * SZ_64K + SZ_4K, 0));
	KUNIT_EXPECT_TRUE(test, fake_dev_holds(fd, 3 * SZ_64K + SZ_4K,
					       BAR_LEN - 3 * SZ_64K - SZ_4K, FAKE_DEV_GUARD));
	svod_dev_tier_put(tier);
}

static void handles_name_nothing_in_another_file(struct kunit *test)
{
	struct fake_dev *fd = fake_dev_add(test, BAR_LEN);
	struct svod_dev_tier *tier = fake_dev_tier(test, fd, 0);
	struct file *fa, *fb, *fc;
	struct svod_file *a = fake_file_open(test, &fa);
	struct svod_file *b = fake_file_open(test, &fb);
	struct svod_file *c;
	struct svod_free f;
	u64 ha, hb;

	ha = fake_alloc(test, a, tier->id, SZ_4K, 0, NULL);
	hb = fake_alloc(test, b, tier->id, SZ_4K, 0, NULL);
	KUNIT_EXPECT_EQ(test, -ESTALE, fake_resolve(b, ha, NULL));
	KUNIT_EXPECT_EQ(test, -ESTALE, fake_resolve(a, hb, NULL));
	f = (struct svod_free){ .handle = ha };
	KUNIT_EXPECT_EQ(test, -ESTALE, svod_free_ioctl(b, &f));
	KUNIT_EXPECT_EQ(test, 0, fake_resolve(a, ha, NULL));

	/* A file opened after a close: the closed file's handle is stale. */
	fake_file_close(fa);
	c = fake_file_open(test, &fc);
	fake_alloc(test, c, tier->id, SZ_4K, 0, NULL);
	KUNIT_EXPECT_EQ(test, -ESTALE, fake_resolve(c, ha, NULL));
	KUNIT_EXPECT_EQ(test, -ESTALE, fake_resolve(c, hb, NULL));
	KUNIT_EXPECT_EQ(test, 0, fake_resolve(b, hb, NULL));
	svod_dev_tier_put(tier);
}

static void close_after_device_removal(struct kunit *test)
{
	struct fake_dev *fd = fake_dev_add(test, BAR_LEN);
	struct svod_dev_tier *tier = fake_dev_tier(test, fd, 0);
	struct file *filp;
	struct svod_file *sf = fake_file_open(test, &filp);
	u64 h = fake_alloc(test, sf, tier->id, SZ_4K, 0, NULL);

	fake_dev_remove(fd);
	KUNIT_EXPECT_TRUE(test, tier->gone);
	KUNIT_EXPECT_EQ(test, -ENODEV, fake_resolve(sf, h, NULL));
	/* Removal zeroed the range; the close touches the BAR no more. */
	memset(fd->mem, FAKE_DEV_GUARD, SZ_4K);
	fake_file_close(filp);
	KUNIT_EXPECT_TRUE(test, fake_dev_holds(fd, 0, SZ_4K, FAKE_DEV_GUARD));
	svod_dev_tier_put(tier);
}

static struct kunit_case svod_file_cases[] = {
	KUNIT_CASE(close_frees_every_allocation),
	KUNIT_CASE(handles_name_nothing_in_another_file),
	KUNIT_CASE(close_after_device_removal),
	{}
};

struct kunit_suite svod_file_suite = {
	.name = "svod_file",
	.test_cases = svod_file_cases,
};
