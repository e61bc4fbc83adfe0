// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: svod_dev, a device's tier set (driver/dev.c) on a fake device:
 * the default tier is the whole of BAR 2, zeroed at register; a new tier
 * is zeroed before it is published, its reserved regions excepted, and a
 * refused set zeroes nothing; a new set replaces the old
 * atomically (replaced tiers gone, unchanged ones kept); a tier with
 * a live allocation is never replaced and a refused set changes nothing,
 * but a set changing only its owner, group and mode keeps it, in place;
 * removal revokes mappings, zeroes live ranges and fails later calls with
 * -ENODEV.
 */
#include <kunit/test.h>
#include <linux/sizes.h>
#include <linux/string.h>

#include <linux/svod.h>

#include "alloc.h"
#include "fake_dev.h"
#include "file.h"
#include "ioctl.h"
#include "svod_test.h"
#include "tier.h"

#define BAR_LEN		SZ_1M

static void spec_set(struct svod_tier_spec *s, const char *name, u64 offset, u64 size)
{
	*s = (struct svod_tier_spec){ .bar = 2, .offset = offset, .size = size, .align = 64,
				    .access.mode = SVOD_TIER_DEFAULT_MODE };
	strscpy(s->name, name, sizeof(s->name));
}

/* Tier declarations are large: the cases keep theirs off the stack. */
static struct svod_tier_spec *specs_alloc(struct kunit *test)
{
	struct svod_tier_spec *s = kunit_kcalloc(test, SVOD_MAX_DEV_TIERS, sizeof(*s),
						 GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, s);
	return s;
}

static void default_tier_is_whole_bar2(struct kunit *test)
{
	struct fake_dev *fd = fake_dev_add(test, BAR_LEN);
	struct svod_tier_spec *specs = specs_alloc(test);

	KUNIT_ASSERT_EQ(test, 1, svod_dev_get_specs(&fd->sdev, specs, SVOD_MAX_DEV_TIERS));
	KUNIT_EXPECT_EQ(test, 2U, specs[0].bar);
	KUNIT_EXPECT_EQ(test, 0ULL, specs[0].offset);
	KUNIT_EXPECT_EQ(test, (u64)BAR_LEN, specs[0].size);
	KUNIT_EXPECT_EQ(test, 0, strncmp(specs[0].name, "bar2", 4));
	/* Whatever the BAR held before the bind never reaches an owner. */
	KUNIT_EXPECT_TRUE(test, fd->zeroed_at_register);
}

static void new_tier_zeroed_but_reserved(struct kunit *test)
{
	struct fake_dev *fd = fake_dev_add(test, BAR_LEN);
	struct svod_tier_spec *set = specs_alloc(test);
	u64 res_end = SZ_64K + SZ_2K + SZ_8K;

	/* Device addresses away from BAR offsets; two regions that overlap. */
	spec_set(&set[0], "kunit_r", 0, SZ_512K);
	set[0].base = SZ_256M;
	set[0].reserved[0] = (struct svod_range_region){
		.base = SZ_256M + SZ_64K, .size = SZ_4K };
	set[0].reserved[1] = (struct svod_range_region){
		.base = SZ_256M + SZ_64K + SZ_2K, .size = SZ_8K };
	set[0].nr_reserved = 2;
	KUNIT_ASSERT_EQ(test, 0, svod_dev_set_tiers(&fd->sdev, set, 1, NULL));
	KUNIT_EXPECT_TRUE(test, fake_dev_holds(fd, 0, SZ_64K, 0));
	KUNIT_EXPECT_TRUE(test, fake_dev_holds(fd, SZ_64K, res_end - SZ_64K, FAKE_DEV_GUARD));
	KUNIT_EXPECT_TRUE(test, fake_dev_holds(fd, res_end, SZ_512K - res_end, 0));
	KUNIT_EXPECT_TRUE(test, fake_dev_holds(fd, SZ_512K, BAR_LEN - SZ_512K, FAKE_DEV_GUARD));

	/* The regions and a new tail become allocatable: zeroed before publication. */
	set[0].nr_reserved = 0;
	set[0].size = SZ_512K + SZ_256K;
	KUNIT_ASSERT_EQ(test, 0, svod_dev_set_tiers(&fd->sdev, set, 1, NULL));
	KUNIT_EXPECT_TRUE(test, fake_dev_holds(fd, 0, SZ_512K + SZ_256K, 0));
	KUNIT_EXPECT_TRUE(test, fake_dev_holds(fd, SZ_512K + SZ_256K, SZ_256K, FAKE_DEV_GUARD));
}

static void new_set_replaces_keeps_unchanged(struct kunit *test)
{
	struct fake_dev *fd = fake_dev_add(test, BAR_LEN);
	struct svod_dev_tier *old = fake_dev_tier(test, fd, 0), *kept, *again;
	struct svod_tier_spec *set = specs_alloc(test), *got = specs_alloc(test);
	struct svod_alloc alloc = { .size = SZ_4K };
	u32 old_id = old->id, a_id;
	struct file *filp;
	struct svod_file *sf = fake_file_open(test, &filp);

	spec_set(&set[0], "kunit_a", 0, SZ_512K);
	spec_set(&set[1], "kunit_b", SZ_512K, SZ_256K);
	KUNIT_ASSERT_EQ(test, 0, svod_dev_set_tiers(&fd->sdev, set, 2, NULL));
	KUNIT_EXPECT_TRUE(test, old->gone);
	/* Found while a reference holds it, but nothing can use it. */
	alloc.tier = old_id;
	KUNIT_EXPECT_EQ(test, -ENODEV, svod_alloc_ioctl(sf, &alloc));
	KUNIT_ASSERT_EQ(test, 2, svod_dev_get_specs(&fd->sdev, got, SVOD_MAX_DEV_TIERS));
	KUNIT_EXPECT_TRUE(test, svod_tier_spec_equal(&set[0], &got[0]));
	KUNIT_EXPECT_TRUE(test, svod_tier_spec_equal(&set[1], &got[1]));
	svod_dev_tier_put(old);
	KUNIT_EXPECT_FALSE(test, fake_tier_reachable(old_id));

	/* kunit_a again, unchanged: the same tier object, the same id. */
	kept = fake_dev_tier(test, fd, 0);
	a_id = kept->id;
	KUNIT_ASSERT_EQ(test, 0, svod_dev_set_tiers(&fd->sdev, set, 1, NULL));
	again = fake_dev_tier(test, fd, 0);
	KUNIT_EXPECT_PTR_EQ(test, kept, again);
	KUNIT_EXPECT_EQ(test, a_id, again->id);
	KUNIT_EXPECT_FALSE(test, kept->gone);
	svod_dev_tier_put(again);
	svod_dev_tier_put(kept);
}

static void busy_tier_refused_set_unchanged(struct kunit *test)
{
	struct fake_dev *fd = fake_dev_add(test, BAR_LEN);
	struct svod_dev_tier *tier = fake_dev_tier(test, fd, 0);
	struct svod_tier_spec *set = specs_alloc(test);
	struct svod_tier_spec *before = specs_alloc(test), *after = specs_alloc(test);
	struct file *filp;
	struct svod_file *sf = fake_file_open(test, &filp);
	struct svod_resolve r;
	u64 h;
	int n;

	spec_set(&set[0], "kunit_c", 0, SZ_512K);
	h = fake_alloc(test, sf, tier->id, SZ_4K, 0, NULL);
	n = svod_dev_get_specs(&fd->sdev, before, SVOD_MAX_DEV_TIERS);
	KUNIT_EXPECT_EQ(test, -EBUSY, svod_dev_set_tiers(&fd->sdev, set, 1, NULL));
	/* A refused set zeroes nothing, the busy tier's live bytes included. */
	KUNIT_EXPECT_TRUE(test, fake_dev_holds(fd, 0, BAR_LEN, FAKE_DEV_GUARD));
	KUNIT_ASSERT_EQ(test, n, svod_dev_get_specs(&fd->sdev, after, SVOD_MAX_DEV_TIERS));
	KUNIT_EXPECT_TRUE(test, svod_tier_spec_equal(&before[0], &after[0]));
	KUNIT_EXPECT_FALSE(test, tier->gone);
	KUNIT_EXPECT_EQ(test, 0, fake_resolve(sf, h, &r));
	KUNIT_EXPECT_EQ(test, tier->id, r.tier);
	svod_dev_tier_put(tier);
}

static void access_change_keeps_busy_tier(struct kunit *test)
{
	struct fake_dev *fd = fake_dev_add(test, BAR_LEN);
	struct svod_dev_tier *tier = fake_dev_tier(test, fd, 0);
	struct svod_tier_spec *set = specs_alloc(test);
	struct svod_tier_access now;
	struct file *filp;
	struct svod_file *sf = fake_file_open(test, &filp);
	struct svod_resolve r;
	u64 h;

	h = fake_alloc(test, sf, tier->id, SZ_4K, 0, NULL);
	KUNIT_ASSERT_EQ(test, 1, svod_dev_get_specs(&fd->sdev, set, SVOD_MAX_DEV_TIERS));
	set[0].access = (struct svod_tier_access){ .uid = 1000, .gid = 4242, .mode = 0600 };
	/* Who may use a tier is not what it is: kept, allocations and all. */
	KUNIT_EXPECT_EQ(test, 0, svod_dev_set_tiers(&fd->sdev, set, 1, NULL));
	KUNIT_EXPECT_FALSE(test, tier->gone);
	KUNIT_EXPECT_EQ(test, 0, fake_resolve(sf, h, &r));
	KUNIT_EXPECT_EQ(test, tier->id, r.tier);
	now = svod_dev_tier_access(tier);
	KUNIT_EXPECT_EQ(test, 1000U, now.uid);
	KUNIT_EXPECT_EQ(test, 4242U, now.gid);
	KUNIT_EXPECT_EQ(test, 0600U, now.mode);
	svod_dev_tier_put(tier);
}

static void removal_revokes_zeroes_enodev(struct kunit *test)
{
	struct fake_dev *fd = fake_dev_add(test, BAR_LEN);
	struct svod_dev_tier *tier = fake_dev_tier(test, fd, 0);
	struct file *filp;
	struct svod_file *sf = fake_file_open(test, &filp);
	struct svod_map_offset m = {};
	struct svod_alloc a = { .size = SZ_4K };
	/* The ioctl's kernel copy: a handler may keep state past the struct. */
	u64 kx[SVOD_IOCTL_MAX_SIZE / sizeof(u64)] = {};
	struct svod_xfer *x = (struct svod_xfer *)kx;
	struct svod_hold *hold;
	u64 addr, off;

	m.handle = fake_alloc(test, sf, tier->id, SZ_8K, SVOD_ALLOC_MAPPABLE, &addr);
	KUNIT_ASSERT_EQ(test, 0, svod_map_offset_ioctl(sf, &m));
	hold = svod_handle_lookup(&sf->handles, m.handle);
	KUNIT_ASSERT_NOT_NULL(test, hold);
	KUNIT_EXPECT_NOT_NULL(test, READ_ONCE(hold->map));
	off = tier->spec.offset + (addr - tier->spec.base);
	memset(fd->mem + off, 0x5a, SZ_8K);		/* what a STAGE left */

	fake_dev_remove(fd);
	KUNIT_EXPECT_TRUE(test, tier->gone);
	KUNIT_EXPECT_NULL(test, READ_ONCE(hold->map));
	KUNIT_EXPECT_TRUE(test, fake_dev_holds(fd, off, SZ_8K, 0));
	a.tier = tier->id;
	KUNIT_EXPECT_EQ(test, -ENODEV, svod_alloc_ioctl(sf, &a));
	KUNIT_EXPECT_EQ(test, -ENODEV, svod_map_offset_ioctl(sf, &m));
	x->handle = m.handle;
	KUNIT_EXPECT_EQ(test, -ENODEV, svod_stage_ioctl(sf, x));
	svod_dev_tier_put(tier);
}

static struct kunit_case svod_dev_cases[] = {
	KUNIT_CASE(default_tier_is_whole_bar2),
	KUNIT_CASE(new_tier_zeroed_but_reserved),
	KUNIT_CASE(new_set_replaces_keeps_unchanged),
	KUNIT_CASE(busy_tier_refused_set_unchanged),
	KUNIT_CASE(access_change_keeps_busy_tier),
	KUNIT_CASE(removal_revokes_zeroes_enodev),
	{}
};

struct kunit_suite svod_dev_suite = {
	.name = "svod_dev",
	.test_cases = svod_dev_cases,
};
