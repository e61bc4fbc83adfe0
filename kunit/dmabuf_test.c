// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the sizes a dma-buf of svod must count (driver/dmabuf.c). The
 * peer-to-peer table counts its entries in sg_alloc_table()'s unsigned int
 * and the gone device's sink counts its pages in vmap()'s; 2^32 pages of
 * 4 KiB is 16 TiB, more than any rig's BAR, so the cases give the counting
 * functions the sizes themselves.
 */
#include <kunit/test.h>
#include <linux/dma-buf.h>
#include <linux/limits.h>
#include <linux/sizes.h>

#include "dmabuf.h"
#include "svod_test.h"

/* The largest table sg_alloc_table() can count, then one page more. */
static void nents_refuses_what_unsigned_int_cannot_count(struct kunit *test)
{
	u64 most = (u64)UINT_MAX * PAGE_SIZE;
	unsigned int n = 0;

	KUNIT_EXPECT_EQ(test, svod_dmabuf_nents(most, PAGE_SIZE, &n), 0);
	KUNIT_EXPECT_EQ(test, n, UINT_MAX);
	n = 7;
	KUNIT_EXPECT_EQ(test, svod_dmabuf_nents(most + PAGE_SIZE, PAGE_SIZE, &n), -EOVERFLOW);
	KUNIT_EXPECT_EQ(test, n, 7U);
	KUNIT_EXPECT_EQ(test, svod_dmabuf_nents(most + 1, PAGE_SIZE, &n), -EOVERFLOW);
	KUNIT_EXPECT_EQ(test, svod_dmabuf_nents(U64_MAX, SZ_1G, &n), -EOVERFLOW);
}

static void nents_rounds_up(struct kunit *test)
{
	unsigned int n = 0;

	KUNIT_EXPECT_EQ(test, svod_dmabuf_nents(PAGE_SIZE, SZ_1G, &n), 0);
	KUNIT_EXPECT_EQ(test, n, 1U);
	KUNIT_EXPECT_EQ(test, svod_dmabuf_nents(SZ_1G + PAGE_SIZE, SZ_1G, &n), 0);
	KUNIT_EXPECT_EQ(test, n, 2U);
	KUNIT_EXPECT_EQ(test, svod_dmabuf_nents(SZ_16M, SZ_64K, &n), 0);
	KUNIT_EXPECT_EQ(test, n, 256U);
	/* 16 TiB in 1 GiB entries fits, though its pages do not. */
	KUNIT_EXPECT_EQ(test, svod_dmabuf_nents((u64)SZ_1G << 14, SZ_1G, &n), 0);
	KUNIT_EXPECT_EQ(test, n, 1U << 14);
}

/* A vmap only where the sink's page count fits, and never read-only. */
static void vmap_only_below_16_tib(struct kunit *test)
{
	u64 most = (u64)UINT_MAX * PAGE_SIZE;

	KUNIT_EXPECT_EQ(test, !!svod_dmabuf_ops(true, PAGE_SIZE)->vmap,
			IS_ENABLED(CONFIG_X86));
	KUNIT_EXPECT_EQ(test, !!svod_dmabuf_ops(true, most)->vmap, IS_ENABLED(CONFIG_X86));
	KUNIT_EXPECT_TRUE(test, !svod_dmabuf_ops(true, most + PAGE_SIZE)->vmap);
	KUNIT_EXPECT_TRUE(test, !svod_dmabuf_ops(false, PAGE_SIZE)->vmap);
	KUNIT_EXPECT_TRUE(test, !!svod_dmabuf_ops(true, most + PAGE_SIZE)->mmap);
}

static struct kunit_case svod_dmabuf_cases[] = {
	KUNIT_CASE(nents_refuses_what_unsigned_int_cannot_count),
	KUNIT_CASE(nents_rounds_up),
	KUNIT_CASE(vmap_only_below_16_tib),
	{}
};

struct kunit_suite svod_dmabuf_suite = {
	.name = "svod_dmabuf",
	.test_cases = svod_dmabuf_cases,
};
