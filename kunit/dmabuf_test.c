// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the sizes a dma-buf of svod must count (driver/dmabuf.c). The
 * peer-to-peer table counts its entries in sg_alloc_table()'s unsigned int
 * and the gone device's sink counts its pages in vmap()'s; 2^32 pages of
 * 4 KiB is 16 TiB, more than any rig's BAR, so the cases give the counting
 * functions the sizes themselves.
 *
 * Revocation: every dma-buf of svod is dynamic; a pin is refused by its
 * count (the importer's own, not the core's around a map); and a fake
 * device's unbind revokes a dma-buf of its tier while a dynamic importer
 * keeps its attachment: the unbind returns, the importer was told once,
 * and no dma-buf of the tier is made afterwards. The dma-buf there is this
 * suite's own (a fake device's tier cannot be attached peer-to-peer), in
 * the tier's list as svod's are.
 */
#include <kunit/test.h>
#include <linux/dma-buf.h>
#include <linux/dma-resv.h>
#include <linux/fcntl.h>
#include <linux/limits.h>
#include <linux/module.h>
#include <linux/sizes.h>

#include "dmabuf.h"
#include "fake_dev.h"
#include "svod_test.h"
#include "tier.h"

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

static void every_dmabuf_is_dynamic(struct kunit *test)
{
	const struct dma_buf_ops *ops[] = {
		svod_dmabuf_ops(true, PAGE_SIZE), svod_dmabuf_ops(false, PAGE_SIZE),
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		KUNIT_EXPECT_TRUE(test, ops[i]->pin && ops[i]->unpin);
		KUNIT_EXPECT_FALSE(test, ops[i]->cache_sgt_mapping);
	}
}

/* The core's pin around each map is not the importer's; one more pin is. */
static void own_pins_leave_out_the_cores(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, svod_dmabuf_own_pins(1, 1, true), 0U);
	KUNIT_EXPECT_EQ(test, svod_dmabuf_own_pins(3, 3, true), 0U);
	KUNIT_EXPECT_EQ(test, svod_dmabuf_own_pins(2, 1, true), 1U);
	KUNIT_EXPECT_EQ(test, svod_dmabuf_own_pins(0, 0, true), 0U);
	KUNIT_EXPECT_EQ(test, svod_dmabuf_own_pins(0, 1, true), 0U);
	KUNIT_EXPECT_EQ(test, svod_dmabuf_own_pins(1, 0, false), 1U);
	KUNIT_EXPECT_EQ(test, svod_dmabuf_own_pins(0, 1, false), 0U);
}

/* This suite's exporter: a dynamic one whose table is never asked for. */
static int kunit_pin(struct dma_buf_attachment *attach)
{
	return 0;
}

static void kunit_unpin(struct dma_buf_attachment *attach)
{
}

static struct sg_table *kunit_map(struct dma_buf_attachment *attach,
				  enum dma_data_direction dir)
{
	return ERR_PTR(-EOPNOTSUPP);
}

static void kunit_unmap(struct dma_buf_attachment *attach, struct sg_table *sgt,
			enum dma_data_direction dir)
{
}

static void kunit_release(struct dma_buf *dmabuf)
{
}

static const struct dma_buf_ops kunit_exporter_ops = {
	.pin = kunit_pin,
	.unpin = kunit_unpin,
	.map_dma_buf = kunit_map,
	.unmap_dma_buf = kunit_unmap,
	.release = kunit_release,
};

/* The importer's side: how often it was told, and what it saw then. */
struct kunit_importer {
	unsigned int moves;
	bool revoked_when_told;
};

static void kunit_move_notify(struct dma_buf_attachment *attach)
{
	struct kunit_importer *imp = attach->importer_priv;
	struct svod_tier_dmabuf *td = attach->dmabuf->priv;

	dma_resv_assert_held(attach->dmabuf->resv);
	imp->moves++;
	imp->revoked_when_told = td->revoked;
}

static const struct dma_buf_attach_ops kunit_importer_ops = {
	.move_notify = kunit_move_notify,
};

static void unbind_revokes_without_waiting_for_the_importer(struct kunit *test)
{
	struct fake_dev *fd = fake_dev_add(test, SZ_1M);
	struct svod_dev_tier *tier = fake_dev_tier(test, fd, 0);
	struct svod_tier_dmabuf td = {}, late = {};
	struct kunit_importer imp = {};
	DEFINE_DMA_BUF_EXPORT_INFO(info);
	struct dma_buf_attachment *attach;
	struct dma_buf *dmabuf;

	info.ops = &kunit_exporter_ops;
	info.size = PAGE_SIZE;
	info.flags = O_RDWR;
	info.priv = &td;
	dmabuf = dma_buf_export(&info);
	KUNIT_ASSERT_FALSE(test, IS_ERR(dmabuf));
	td.dmabuf = dmabuf;
	INIT_LIST_HEAD(&td.link);
	INIT_LIST_HEAD(&late.link);
	attach = dma_buf_dynamic_attach(dmabuf, &fd->pdev.dev, &kunit_importer_ops, &imp);
	KUNIT_ASSERT_FALSE(test, IS_ERR(attach));
	KUNIT_EXPECT_EQ(test, svod_dev_tier_dmabuf_add(tier, &td), 0);

	/* Returns with the attachment still there: nothing waited for it. */
	fake_dev_remove(fd);
	KUNIT_EXPECT_EQ(test, imp.moves, 1U);
	KUNIT_EXPECT_TRUE(test, imp.revoked_when_told);
	late.dmabuf = dmabuf;
	KUNIT_EXPECT_EQ(test, svod_dev_tier_dmabuf_add(tier, &late), -ENODEV);
	KUNIT_EXPECT_TRUE(test, list_empty(&late.link));

	dma_buf_detach(dmabuf, attach);
	svod_dev_tier_dmabuf_del(tier, &td);
	dma_buf_put(dmabuf);
	svod_dev_tier_put(tier);
}

static struct kunit_case svod_dmabuf_cases[] = {
	KUNIT_CASE(nents_refuses_what_unsigned_int_cannot_count),
	KUNIT_CASE(nents_rounds_up),
	KUNIT_CASE(vmap_only_below_16_tib),
	KUNIT_CASE(every_dmabuf_is_dynamic),
	KUNIT_CASE(own_pins_leave_out_the_cores),
	KUNIT_CASE(unbind_revokes_without_waiting_for_the_importer),
	{}
};

struct kunit_suite svod_dmabuf_suite = {
	.name = "svod_dmabuf",
	.test_cases = svod_dmabuf_cases,
};

MODULE_IMPORT_NS(DMA_BUF);
