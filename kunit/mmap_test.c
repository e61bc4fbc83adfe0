// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: svod_mmap_space, the page offsets SVOD_IOCTL_MAP_OFFSET hands out
 * (driver/mmap.c). svod.ko's own space is 2^63 bytes, too large to use up
 * in a test, so each case builds a space of a few pages with the same code
 * and drives it to exhaustion: -ENOSPC, and nothing changed, exactly as
 * MAP_OFFSET returns it (svod_map_create() adds to svod.ko's space with
 * svod_mmap_space_add() and frees its record on any error).
 */
#include <kunit/test.h>
#include <linux/limits.h>
#include <linux/maple_tree.h>

#include "mmap.h"
#include "svod_test.h"

#define FIRST	SVOD_MMAP_PGOFF_FIRST

/* A space of @pages page offsets from @first on, destroyed by space_fini(). */
static void space_init(struct svod_mmap_space *s, u64 first, u64 pages)
{
	mt_init(&s->mt);
	s->next = first;
	s->end = first + pages;
}

static void space_fini(struct svod_mmap_space *s)
{
	mtree_destroy(&s->mt);
}

/* Adds a range of @npages; its pgoff reads 0xdead until the space sets it. */
static int add(struct svod_mmap_space *s, struct svod_map *m, unsigned long npages)
{
	m->npages = npages;
	m->pgoff = 0xdead;
	return svod_mmap_space_add(s, m);
}

/* Every page offset of [@first, @end) names @m (NULL: nothing). */
static void expect_names(struct kunit *test, struct svod_mmap_space *s,
			 u64 first, u64 end, const struct svod_map *m)
{
	u64 i;

	for (i = first; i < end; i++)
		KUNIT_EXPECT_PTR_EQ_MSG(test, mtree_load(&s->mt, i), (void *)m,
					"page offset %llu", i - FIRST);
}

static void fills_exactly_then_enospc(struct kunit *test)
{
	struct svod_mmap_space s;
	struct svod_map m[3] = {};

	space_init(&s, FIRST, 8);
	KUNIT_EXPECT_EQ(test, add(&s, &m[0], 3), 0);
	KUNIT_EXPECT_EQ(test, m[0].pgoff, FIRST);
	KUNIT_EXPECT_EQ(test, add(&s, &m[1], 5), 0);
	KUNIT_EXPECT_EQ(test, m[1].pgoff, FIRST + 3);
	KUNIT_EXPECT_EQ(test, s.next, s.end);

	KUNIT_EXPECT_EQ(test, add(&s, &m[2], 1), -ENOSPC);
	KUNIT_EXPECT_EQ(test, m[2].pgoff, 0xdeadUL);
	KUNIT_EXPECT_EQ(test, s.next, s.end);
	expect_names(test, &s, FIRST, FIRST + 3, &m[0]);
	expect_names(test, &s, FIRST + 3, FIRST + 8, &m[1]);
	expect_names(test, &s, FIRST + 8, FIRST + 9, NULL);
	space_fini(&s);
}

/* A request larger than what is left fails whole; a smaller one still fits. */
static void enospc_changes_nothing(struct kunit *test)
{
	struct svod_mmap_space s;
	struct svod_map a = {}, big = {}, rest = {};

	space_init(&s, FIRST, 8);
	KUNIT_EXPECT_EQ(test, add(&s, &a, 3), 0);
	KUNIT_EXPECT_EQ(test, add(&s, &big, 6), -ENOSPC);
	KUNIT_EXPECT_EQ(test, s.next, FIRST + 3);
	KUNIT_EXPECT_EQ(test, big.pgoff, 0xdeadUL);
	expect_names(test, &s, FIRST, FIRST + 3, &a);
	expect_names(test, &s, FIRST + 3, FIRST + 8, NULL);

	KUNIT_EXPECT_EQ(test, add(&s, &rest, 5), 0);
	KUNIT_EXPECT_EQ(test, rest.pgoff, FIRST + 3);
	expect_names(test, &s, FIRST + 3, FIRST + 8, &rest);
	space_fini(&s);
}

/* A removed range's offsets name nothing and are never handed out again. */
static void removed_offsets_never_reused(struct kunit *test)
{
	struct svod_mmap_space s;
	struct svod_map a = {}, b = {}, c = {};

	space_init(&s, FIRST, 8);
	KUNIT_EXPECT_EQ(test, add(&s, &a, 4), 0);
	svod_mmap_space_remove(&s, &a);
	expect_names(test, &s, FIRST, FIRST + 4, NULL);
	KUNIT_EXPECT_EQ(test, add(&s, &b, 8), -ENOSPC);
	KUNIT_EXPECT_EQ(test, add(&s, &c, 4), 0);
	KUNIT_EXPECT_EQ(test, c.pgoff, FIRST + 4);
	svod_mmap_space_remove(&s, &c);
	KUNIT_EXPECT_EQ(test, add(&s, &b, 1), -ENOSPC);
	KUNIT_EXPECT_TRUE(test, mtree_empty(&s.mt));
	space_fini(&s);
}

/* At the top of svod.ko's own space: the last byte's offset fits a loff_t. */
static void top_of_real_space_no_overflow(struct kunit *test)
{
	struct svod_mmap_space s;
	struct svod_map a = {}, b = {};

	space_init(&s, SVOD_MMAP_PGOFF_END - 2, 2);
	KUNIT_EXPECT_EQ(test, add(&s, &b, ULONG_MAX), -ENOSPC);
	KUNIT_EXPECT_EQ(test, add(&s, &b, 3), -ENOSPC);
	KUNIT_EXPECT_EQ(test, add(&s, &a, 2), 0);
	KUNIT_EXPECT_EQ(test, ((u64)a.pgoff + a.npages) << PAGE_SHIFT, (u64)1 << 63);
	KUNIT_EXPECT_LE(test, ((u64)a.pgoff + a.npages) << PAGE_SHIFT, (u64)LLONG_MAX + 1);
	KUNIT_EXPECT_EQ(test, add(&s, &b, 1), -ENOSPC);
	KUNIT_EXPECT_EQ(test, add(&s, &b, ULONG_MAX), -ENOSPC);
	KUNIT_EXPECT_EQ(test, s.next, SVOD_MMAP_PGOFF_END);
	space_fini(&s);
}

static void zero_pages_einval(struct kunit *test)
{
	struct svod_mmap_space s;
	struct svod_map a = {};

	space_init(&s, FIRST, 8);
	KUNIT_EXPECT_EQ(test, add(&s, &a, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, s.next, FIRST);
	KUNIT_EXPECT_TRUE(test, mtree_empty(&s.mt));
	space_fini(&s);
}

static struct kunit_case svod_mmap_cases[] = {
	KUNIT_CASE(fills_exactly_then_enospc),
	KUNIT_CASE(enospc_changes_nothing),
	KUNIT_CASE(removed_offsets_never_reused),
	KUNIT_CASE(top_of_real_space_no_overflow),
	KUNIT_CASE(zero_pages_einval),
	{}
};

struct kunit_suite svod_mmap_suite = {
	.name = "svod_mmap",
	.test_cases = svod_mmap_cases,
};
