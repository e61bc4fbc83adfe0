// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: svod_tier, tier objects (driver/tier.c) on a fake device: a tier
 * is reachable by id only once published and never after its last
 * reference; a lookup holds a reference; scrubbing zeroes exactly its range
 * through the BAR; retirement never waits for a transfer; an unbind waits
 * for an importer's vmap, and a vmap is refused once the tier is retiring.
 * A tier's access is judged as a device node's, by the one class the
 * credentials fall in, needing read and write.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/cred.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/mutex.h>
#include <linux/rwsem.h>
#include <linux/sizes.h>

#include "fake_dev.h"
#include "svod_test.h"
#include "tier.h"

#define BAR_LEN		SZ_1M

static void unpublished_unreachable_then_published(struct kunit *test)
{
	struct fake_dev *fd = fake_dev_add(test, BAR_LEN);
	struct svod_tier_spec spec = {
		.name = "kunit_extra", .bar = 2, .offset = SZ_512K, .size = SZ_64K,
		.base = 0, .align = 64,
	};
	struct svod_dev_tier *tier, *found;
	u32 id;

	mutex_lock(&svod_decl_lock);
	tier = svod_dev_tier_create(&fd->sdev, &spec);
	mutex_unlock(&svod_decl_lock);
	KUNIT_ASSERT_FALSE(test, IS_ERR(tier));
	id = tier->id;
	KUNIT_EXPECT_FALSE(test, fake_tier_reachable(id));

	mutex_lock(&svod_decl_lock);
	svod_dev_tier_publish(tier);
	mutex_unlock(&svod_decl_lock);
	found = svod_dev_tier_get_by_id(id);
	KUNIT_EXPECT_PTR_EQ(test, tier, found);
	if (found)
		svod_dev_tier_put(found);
	/* The creator's reference was the last: the id names nothing again. */
	svod_dev_tier_put(tier);
	KUNIT_EXPECT_FALSE(test, fake_tier_reachable(id));
}

static void create_refuses_bad_declaration(struct kunit *test)
{
	struct fake_dev *fd = fake_dev_add(test, BAR_LEN);
	struct svod_tier_spec spec = {
		.name = "kunit_bad", .bar = 2, .size = SZ_64K, .align = 3,
	};
	struct svod_dev_tier *tier;

	mutex_lock(&svod_decl_lock);
	tier = svod_dev_tier_create(&fd->sdev, &spec);
	mutex_unlock(&svod_decl_lock);
	KUNIT_EXPECT_EQ(test, -EINVAL, PTR_ERR_OR_ZERO(tier));
	if (!IS_ERR(tier))
		svod_dev_tier_put(tier);
}

static void lookup_holds_a_reference(struct kunit *test)
{
	struct fake_dev *fd = fake_dev_add(test, BAR_LEN);
	struct svod_dev_tier *tier = fake_dev_tier(test, fd, 0);
	unsigned int before = kref_read(&tier->ref);
	struct svod_dev_tier *again = svod_dev_tier_get_by_id(tier->id);

	KUNIT_EXPECT_PTR_EQ(test, tier, again);
	KUNIT_EXPECT_EQ(test, before + 1, kref_read(&tier->ref));
	if (again)
		svod_dev_tier_put(again);
	KUNIT_EXPECT_EQ(test, before, kref_read(&tier->ref));
	svod_dev_tier_put(tier);
	KUNIT_EXPECT_FALSE(test, fake_tier_reachable(U32_MAX));
}

static void scrub_zeroes_exactly_its_range(struct kunit *test)
{
	struct fake_dev *fd = fake_dev_add(test, BAR_LEN);
	struct svod_dev_tier *tier = fake_dev_tier(test, fd, 0);
	u64 start = tier->spec.base + 3 * PAGE_SIZE + 5, size = 2 * PAGE_SIZE + 7;

	down_read(&tier->io_sem);
	svod_dev_tier_scrub(tier, start, size);
	up_read(&tier->io_sem);
	KUNIT_EXPECT_TRUE(test, fake_dev_holds(fd, 0, 3 * PAGE_SIZE + 5, FAKE_DEV_GUARD));
	KUNIT_EXPECT_TRUE(test, fake_dev_holds(fd, 3 * PAGE_SIZE + 5, size, 0));
	KUNIT_EXPECT_TRUE(test, fake_dev_holds(fd, 3 * PAGE_SIZE + 5 + size,
					       BAR_LEN - (3 * PAGE_SIZE + 5 + size),
					       FAKE_DEV_GUARD));
	svod_dev_tier_put(tier);
}

static void retire_refused_while_a_transfer_runs(struct kunit *test)
{
	struct fake_dev *fd = fake_dev_add(test, BAR_LEN);
	struct svod_dev_tier *tier = fake_dev_tier(test, fd, 0);
	bool locked, reading;

	/*
	 * What a STAGE holds. Under svod_decl_lock a tier's io_sem is only
	 * ever try-locked (svod.h's lock order), here too.
	 */
	mutex_lock(&svod_decl_lock);
	reading = down_read_trylock(&tier->io_sem);
	locked = svod_dev_tier_trylock_retire(tier);
	if (locked)
		svod_dev_tier_unlock_retire(tier);
	if (reading)
		up_read(&tier->io_sem);
	mutex_unlock(&svod_decl_lock);
	KUNIT_EXPECT_TRUE(test, reading);
	KUNIT_EXPECT_FALSE(test, locked);

	mutex_lock(&svod_decl_lock);
	locked = svod_dev_tier_trylock_retire(tier);
	if (locked)
		svod_dev_tier_unlock_retire(tier);
	mutex_unlock(&svod_decl_lock);
	KUNIT_EXPECT_TRUE(test, locked);
	KUNIT_EXPECT_FALSE(test, tier->gone);
	svod_dev_tier_put(tier);
}

struct unbinder {
	struct fake_dev *fd;
	struct completion done;
};

static int unbinder_fn(void *data)
{
	struct unbinder *u = data;

	fake_dev_remove(u->fd);
	complete(&u->done);
	return 0;
}

static void unbind_waits_for_an_importers_vmap(struct kunit *test)
{
	struct fake_dev *fd = fake_dev_add(test, BAR_LEN);
	struct svod_dev_tier *tier = fake_dev_tier(test, fd, 0);
	struct unbinder u = { .fd = fd };
	struct task_struct *t;
	bool closed = false, again;
	int i;

	init_completion(&u.done);
	KUNIT_ASSERT_TRUE(test, svod_dev_tier_importer_get(tier));
	t = kthread_run(unbinder_fn, &u, "svod-kunit-unbind");
	if (IS_ERR(t)) {
		svod_dev_tier_importer_put(tier);
		svod_dev_tier_put(tier);
		KUNIT_ASSERT_FAILURE(test, "no thread to unbind with");
	}
	/* Bounded only so that a broken driver fails instead of hanging. */
	for (i = 0; i < 10000 && !closed; i++) {
		closed = READ_ONCE(tier->async_closed);
		if (!closed)
			usleep_range(1000, 2000);
	}
	KUNIT_EXPECT_TRUE(test, closed);
	/* Closed, with the importer still mapping: the unbind is inside. */
	KUNIT_EXPECT_FALSE(test, completion_done(&u.done));
	KUNIT_EXPECT_FALSE(test, READ_ONCE(tier->gone));
	again = svod_dev_tier_importer_get(tier);
	KUNIT_EXPECT_FALSE(test, again);
	if (again)
		svod_dev_tier_importer_put(tier);
	svod_dev_tier_importer_put(tier);
	wait_for_completion(&u.done);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(tier->gone));
	svod_dev_tier_put(tier);
}

static bool allows(u32 uid, u32 gid, u32 mode, const struct cred *cred)
{
	struct svod_tier_access access = { .uid = uid, .gid = gid, .mode = mode };

	return svod_tier_access_allows(&access, cred);
}

static void access_judged_by_one_class(struct kunit *test)
{
	struct group_info *groups = groups_alloc(1);
	struct cred cred = {
		.fsuid = KUIDT_INIT(1000),
		.fsgid = KGIDT_INIT(1000),
	};

	KUNIT_ASSERT_NOT_NULL(test, groups);
	groups->gid[0] = KGIDT_INIT(4242);
	cred.group_info = groups;

	/* The default: everyone. */
	KUNIT_EXPECT_TRUE(test, allows(0, 0, 0666, &cred));
	/* Owner class: its bits alone, even if group or other would allow. */
	KUNIT_EXPECT_TRUE(test, allows(1000, 0, 0600, &cred));
	KUNIT_EXPECT_FALSE(test, allows(1000, 1000, 0466, &cred));
	/* Group class: by fsgid, by a supplementary group. */
	KUNIT_EXPECT_TRUE(test, allows(0, 1000, 0660, &cred));
	KUNIT_EXPECT_TRUE(test, allows(0, 4242, 0660, &cred));
	KUNIT_EXPECT_FALSE(test, allows(0, 4242, 0606, &cred));
	/* Other class. */
	KUNIT_EXPECT_FALSE(test, allows(0, 7, 0660, &cred));
	KUNIT_EXPECT_TRUE(test, allows(0, 7, 0006, &cred));
	/* Read and write both, as O_RDWR. */
	KUNIT_EXPECT_FALSE(test, allows(0, 0, 0444, &cred));
	KUNIT_EXPECT_FALSE(test, allows(0, 0, 0222, &cred));
	KUNIT_EXPECT_FALSE(test, allows(1000, 0, 0, &cred));
	put_group_info(groups);
}

static struct kunit_case svod_tier_cases[] = {
	KUNIT_CASE(unpublished_unreachable_then_published),
	KUNIT_CASE(create_refuses_bad_declaration),
	KUNIT_CASE(lookup_holds_a_reference),
	KUNIT_CASE(scrub_zeroes_exactly_its_range),
	KUNIT_CASE(retire_refused_while_a_transfer_runs),
	KUNIT_CASE(unbind_waits_for_an_importers_vmap),
	KUNIT_CASE(access_judged_by_one_class),
	{}
};

struct kunit_suite svod_tier_suite = {
	.name = "svod_tier",
	.test_cases = svod_tier_cases,
};
