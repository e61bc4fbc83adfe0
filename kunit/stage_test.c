// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite svod_stage: the staging engines against a fake BAR (plain
 * memory behind struct svod_bar_ops, and its physical address for DMA) and a
 * fake dmaengine provider (a platform device whose DMA_MEMCPY channel copies
 * synchronously in issue_pending, or stalls, or fails, on request).
 *
 * The engines' cores take kernel pages (the CPU engine a page array, the DMA
 * engine a scatterlist). The user-facing svod_stage_xfer() (pinning,
 * chunking, faults) runs against anonymous mappings made in the mm of the
 * process that loads svod_test.ko, borrowed with kthread_use_mm(): KUnit 6.1
 * has no user-memory helpers of its own.
 */

#include <kunit/test.h>
#include <linux/device.h>
#include <linux/dmaengine.h>
#include <linux/dma-mapping.h>
#include <linux/io.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/mman.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/platform_device.h>
#include <linux/scatterlist.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include <linux/svod.h>

#include "stage.h"
#include "svod_test.h"

#define FAKE_NAME		"svod-stage-fake-dma"
#define FAKE_MAX_OPS		8
#define CPU_BAR_LEN		(4 * PAGE_SIZE + SZ_8K)
#define DMA_BAR_LEN		(4 * PAGE_SIZE)
#define GUARD			0xa5

/* What the fake BAR's accessors saw, in call order. */
struct fake_bar {
	u8 *mem;
	unsigned int nr_ops;
	u64 op_off[FAKE_MAX_OPS];
	size_t op_len[FAKE_MAX_OPS];
};

static void fake_bar_note(const struct svod_bar *bar, u64 off, size_t len)
{
	struct fake_bar *fb = bar->priv;

	if (fb->nr_ops < FAKE_MAX_OPS) {
		fb->op_off[fb->nr_ops] = off;
		fb->op_len[fb->nr_ops] = len;
	}
	fb->nr_ops++;
}

static void fake_bar_write(const struct svod_bar *bar, u64 off,
			   const void *src, size_t len)
{
	struct fake_bar *fb = bar->priv;

	fake_bar_note(bar, off, len);
	memcpy(fb->mem + off, src, len);
}

static void fake_bar_read(const struct svod_bar *bar, u64 off, void *dst,
			  size_t len)
{
	struct fake_bar *fb = bar->priv;

	fake_bar_note(bar, off, len);
	memcpy(dst, fb->mem + off, len);
}

static const struct svod_bar_ops fake_bar_ops = {
	.write = fake_bar_write,
	.read = fake_bar_read,
};

enum fake_dma_mode {
	FAKE_DMA_COPY,
	FAKE_DMA_STALL,
	FAKE_DMA_FAIL,
};

struct fake_desc {
	struct dma_async_tx_descriptor tx;
	struct list_head node;
	dma_addr_t dst;
	dma_addr_t src;
	size_t len;
};

/* The fake provider; one per suite run. */
struct fake_dma {
	struct dma_device dma;
	struct dma_chan chan;
	/* Protects @queue and the channel's cookies. */
	spinlock_t lock;
	struct list_head queue;
	enum fake_dma_mode mode;
	unsigned int prep_budget;
	unsigned int nr_prep;
	unsigned int nr_terminate;
};

static struct fake_dma *fake;
static struct platform_device *fake_pdev;

/*
 * The mm of the process that loads svod_test.ko (its module_init runs the
 * suites). User-pointer cases borrow it with kthread_use_mm() and map their
 * buffers in it, then unmap them and let it go before any assertion.
 */
static struct mm_struct *user_mm;

static dma_cookie_t fake_tx_submit(struct dma_async_tx_descriptor *tx)
{
	struct fake_desc *d = container_of(tx, struct fake_desc, tx);
	dma_cookie_t cookie;

	spin_lock_bh(&fake->lock);
	cookie = max(fake->chan.cookie + 1, DMA_MIN_COOKIE);
	fake->chan.cookie = cookie;
	tx->cookie = cookie;
	list_add_tail(&d->node, &fake->queue);
	spin_unlock_bh(&fake->lock);
	return cookie;
}

static struct dma_async_tx_descriptor *
fake_prep_memcpy(struct dma_chan *chan, dma_addr_t dst, dma_addr_t src,
		 size_t len, unsigned long flags)
{
	struct fake_desc *d;

	if (fake->nr_prep++ >= fake->prep_budget)
		return NULL;
	d = kzalloc(sizeof(*d), GFP_NOWAIT);
	if (!d)
		return NULL;
	dma_async_tx_descriptor_init(&d->tx, chan);
	d->tx.flags = flags;
	d->tx.tx_submit = fake_tx_submit;
	d->dst = dst;
	d->src = src;
	d->len = len;
	return &d->tx;
}

/* Direct mapping (no IOMMU in the test kernel): bus address == physical. */
static void fake_issue_pending(struct dma_chan *chan)
{
	struct dmaengine_result res = { .residue = 0 };
	struct fake_desc *d;

	if (fake->mode == FAKE_DMA_STALL)
		return;
	res.result = fake->mode == FAKE_DMA_FAIL ? DMA_TRANS_WRITE_FAILED :
						   DMA_TRANS_NOERROR;
	for (;;) {
		spin_lock_bh(&fake->lock);
		d = list_first_entry_or_null(&fake->queue, struct fake_desc, node);
		if (d) {
			list_del(&d->node);
			if (res.result == DMA_TRANS_NOERROR)
				memcpy(phys_to_virt(d->dst), phys_to_virt(d->src),
				       d->len);
			chan->completed_cookie = d->tx.cookie;
		}
		spin_unlock_bh(&fake->lock);
		if (!d)
			return;
		d->tx.callback_result(d->tx.callback_param, &res);
		kfree(d);
	}
}

static enum dma_status fake_tx_status(struct dma_chan *chan, dma_cookie_t cookie,
				      struct dma_tx_state *state)
{
	enum dma_status status;

	spin_lock_bh(&fake->lock);
	dma_set_tx_state(state, chan->completed_cookie, chan->cookie, 0);
	status = dma_async_is_complete(cookie, chan->completed_cookie,
				       chan->cookie);
	spin_unlock_bh(&fake->lock);
	return status;
}

static int fake_terminate_all(struct dma_chan *chan)
{
	struct fake_desc *d, *tmp;
	LIST_HEAD(dropped);

	spin_lock_bh(&fake->lock);
	list_splice_init(&fake->queue, &dropped);
	fake->nr_terminate++;
	spin_unlock_bh(&fake->lock);
	list_for_each_entry_safe(d, tmp, &dropped, node)
		kfree(d);
	return 0;
}

static void fake_synchronize(struct dma_chan *chan)
{
}

static int fake_dma_probe(struct platform_device *pdev)
{
	int ret;

	ret = dma_coerce_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		return ret;
	fake = devm_kzalloc(&pdev->dev, sizeof(*fake), GFP_KERNEL);
	if (!fake)
		return -ENOMEM;
	spin_lock_init(&fake->lock);
	INIT_LIST_HEAD(&fake->queue);
	fake->dma.dev = &pdev->dev;
	INIT_LIST_HEAD(&fake->dma.channels);
	dma_cap_set(DMA_MEMCPY, fake->dma.cap_mask);
	dma_cap_set(DMA_PRIVATE, fake->dma.cap_mask);
	fake->dma.device_prep_dma_memcpy = fake_prep_memcpy;
	fake->dma.device_issue_pending = fake_issue_pending;
	fake->dma.device_tx_status = fake_tx_status;
	fake->dma.device_terminate_all = fake_terminate_all;
	fake->dma.device_synchronize = fake_synchronize;
	fake->chan.device = &fake->dma;
	list_add_tail(&fake->chan.device_node, &fake->dma.channels);
	return dma_async_device_register(&fake->dma);
}

static int fake_dma_remove(struct platform_device *pdev)
{
	dma_async_device_unregister(&fake->dma);
	fake = NULL;
	return 0;
}

static struct platform_driver fake_dma_driver = {
	.driver.name = FAKE_NAME,
	.probe = fake_dma_probe,
	.remove = fake_dma_remove,
};

static bool fake_dma_filter(struct dma_chan *chan, void *param)
{
	return chan->device->dev == param;
}

static int stage_suite_init(struct kunit_suite *suite)
{
	int ret;

	ret = platform_driver_register(&fake_dma_driver);
	if (ret)
		return ret;
	fake_pdev = platform_device_register_simple(FAKE_NAME, PLATFORM_DEVID_NONE,
						    NULL, 0);
	if (IS_ERR(fake_pdev)) {
		platform_driver_unregister(&fake_dma_driver);
		return PTR_ERR(fake_pdev);
	}
	user_mm = current->mm;
	if (user_mm)
		mmget(user_mm);
	return fake ? 0 : -ENODEV;
}

static void stage_suite_exit(struct kunit_suite *suite)
{
	if (user_mm)
		mmput(user_mm);
	platform_device_unregister(fake_pdev);
	platform_driver_unregister(&fake_dma_driver);
}

/*
 * Per-test state, freed by stage_test_exit() however the case ended: the fake
 * BAR and, for DMA cases, the fake channel, three pages and a scatterlist.
 */
struct stage_ctx {
	struct fake_bar fb;
	struct svod_bar bar;
	u8 *vmem;
	u8 *vsrc;
	struct dma_chan *chan;
	struct svod_dma_lane lane;
	struct page *pages[3];
	struct sg_table sgt;
};

static int stage_test_init(struct kunit *test)
{
	test->priv = kunit_kzalloc(test, sizeof(struct stage_ctx), GFP_KERNEL);
	return test->priv ? 0 : -ENOMEM;
}

static void stage_test_exit(struct kunit *test)
{
	struct stage_ctx *ctx = test->priv;
	unsigned int i;

	if (ctx->sgt.sgl)
		sg_free_table(&ctx->sgt);
	for (i = 0; i < ARRAY_SIZE(ctx->pages); i++)
		if (ctx->pages[i])
			__free_page(ctx->pages[i]);
	if (ctx->chan)
		dma_release_channel(ctx->chan);
	vfree(ctx->vsrc);
	vfree(ctx->vmem);
}

static void fill_pattern(u8 *p, size_t len, u32 seed)
{
	size_t i;

	for (i = 0; i < len; i++) {
		seed ^= seed << 13;
		seed ^= seed >> 17;
		seed ^= seed << 5;
		p[i] = seed;
	}
}

/* Every byte of [from, to) of the fake BAR still holds the guard pattern. */
static bool guard_intact(const u8 *mem, size_t from, size_t to)
{
	return !memchr_inv(mem + from, GUARD, to - from);
}

static void ctx_bar_init(struct stage_ctx *ctx, u8 *mem, u64 len)
{
	memset(mem, GUARD, len);
	ctx->fb.mem = mem;
	ctx->bar.dev = &fake_pdev->dev;
	ctx->bar.len = len;
	ctx->bar.ops = &fake_bar_ops;
	ctx->bar.priv = &ctx->fb;
}

static struct stage_ctx *cpu_ctx(struct kunit *test)
{
	struct stage_ctx *ctx = test->priv;

	ctx->vmem = vmalloc(CPU_BAR_LEN);
	KUNIT_ASSERT_NOT_NULL(test, ctx->vmem);
	ctx_bar_init(ctx, ctx->vmem, CPU_BAR_LEN);
	return ctx;
}

static void check_flags_invalid(struct kunit *test)
{
	struct stage_ctx *ctx = cpu_ctx(test);
	struct svod_xfer_req req = { .grant_len = PAGE_SIZE, .length = 1 };

	req.flags = SVOD_XFER_CPU | SVOD_XFER_DMA;
	KUNIT_EXPECT_EQ(test, -EINVAL, svod_stage_check(&ctx->bar, &req));
	req.flags = 1U << 31;
	KUNIT_EXPECT_EQ(test, -EINVAL, svod_stage_check(&ctx->bar, &req));
	req.flags = SVOD_XFER_FENCE_FD;
	KUNIT_EXPECT_EQ(test, -EINVAL, svod_stage_check(&ctx->bar, &req));
	req.flags = SVOD_XFER_FENCE_FD | SVOD_XFER_CPU;
	KUNIT_EXPECT_EQ(test, -EINVAL, svod_stage_check(&ctx->bar, &req));
	req.flags = SVOD_XFER_ASYNC | SVOD_XFER_FENCE_FD | SVOD_XFER_CPU;
	KUNIT_EXPECT_EQ(test, 0, svod_stage_check(&ctx->bar, &req));
	req.flags = 1U << 31;
	KUNIT_EXPECT_EQ(test, -EINVAL, svod_stage_check(&ctx->bar, &req));
	req.flags = SVOD_XFER_DMA;
	KUNIT_EXPECT_EQ(test, 0, svod_stage_check(&ctx->bar, &req));
	req.resume = 1;
	KUNIT_EXPECT_EQ(test, 0, svod_stage_check(&ctx->bar, &req));
	req.resume = 2;
	KUNIT_EXPECT_EQ(test, -EINVAL, svod_stage_check(&ctx->bar, &req));
}

static void check_bounds_range(struct kunit *test)
{
	struct stage_ctx *ctx = cpu_ctx(test);
	struct svod_xfer_req req = {
		.grant_off = PAGE_SIZE, .grant_len = SZ_8K,
	};

	req.offset = 0;
	req.length = SZ_8K;
	KUNIT_EXPECT_EQ(test, 0, svod_stage_check(&ctx->bar, &req));
	req.length = SZ_8K + 1;
	KUNIT_EXPECT_EQ(test, -ERANGE, svod_stage_check(&ctx->bar, &req));
	req.offset = SZ_8K;
	req.length = 0;
	KUNIT_EXPECT_EQ(test, 0, svod_stage_check(&ctx->bar, &req));
	req.length = 1;
	KUNIT_EXPECT_EQ(test, -ERANGE, svod_stage_check(&ctx->bar, &req));
	req.offset = SZ_8K + 1;
	req.length = 0;
	KUNIT_EXPECT_EQ(test, -ERANGE, svod_stage_check(&ctx->bar, &req));
	/* offset + length wraps to a small number: still out of range. */
	req.offset = 16;
	req.length = U64_MAX - 8;
	KUNIT_EXPECT_EQ(test, -ERANGE, svod_stage_check(&ctx->bar, &req));
	req.offset = U64_MAX;
	req.length = 2;
	KUNIT_EXPECT_EQ(test, -ERANGE, svod_stage_check(&ctx->bar, &req));
}

/* Grants and offsets across the 4 GiB line: no 32-bit truncation anywhere. */
static void check_bounds_across_4gib(struct kunit *test)
{
	const struct svod_bar bar = { .len = 16ULL * SZ_1G };
	struct svod_xfer_req req = {
		.grant_off = SZ_4G - PAGE_SIZE, .grant_len = SZ_4G + 2,
	};

	req.length = SZ_4G + 2;
	KUNIT_EXPECT_EQ(test, 0, svod_stage_check(&bar, &req));
	req.length = SZ_4G + 3;
	KUNIT_EXPECT_EQ(test, -ERANGE, svod_stage_check(&bar, &req));
	req.offset = SZ_4G;
	req.length = 2;
	KUNIT_EXPECT_EQ(test, 0, svod_stage_check(&bar, &req));
	req.length = 3;
	KUNIT_EXPECT_EQ(test, -ERANGE, svod_stage_check(&bar, &req));
	/* Only the low 32 bits of offset + length would look in bounds. */
	req.offset = 1;
	req.length = SZ_8G;
	KUNIT_EXPECT_EQ(test, -ERANGE, svod_stage_check(&bar, &req));
	KUNIT_EXPECT_EQ(test, SVOD_XFER_DMA, svod_stage_pick(0, SZ_4G + 1, SZ_4G, true));
	KUNIT_EXPECT_EQ(test, SVOD_XFER_CPU, svod_stage_pick(0, SZ_4G, SZ_4G, true));
}

static void pick_engine_rules(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, SVOD_XFER_CPU, svod_stage_pick(SVOD_XFER_CPU, SZ_1G, 1, true));
	KUNIT_EXPECT_EQ(test, SVOD_XFER_DMA, svod_stage_pick(SVOD_XFER_DMA, 1, 0, true));
	KUNIT_EXPECT_EQ(test, -EOPNOTSUPP, svod_stage_pick(SVOD_XFER_DMA, 1, 0, false));
	/* Auto: DMA strictly above a nonzero threshold, only with a channel. */
	KUNIT_EXPECT_EQ(test, SVOD_XFER_CPU, svod_stage_pick(0, SZ_1G, 0, true));
	KUNIT_EXPECT_EQ(test, SVOD_XFER_CPU, svod_stage_pick(0, SZ_64K, SZ_64K, true));
	KUNIT_EXPECT_EQ(test, SVOD_XFER_DMA, svod_stage_pick(0, SZ_64K + 1, SZ_64K, true));
	KUNIT_EXPECT_EQ(test, SVOD_XFER_CPU, svod_stage_pick(0, SZ_64K + 1, SZ_64K, false));
}

static void xfer_rejects_before_moving(struct kunit *test)
{
	struct stage_ctx *ctx = cpu_ctx(test);
	struct svod_stage_stats stats = {};
	struct svod_xfer_req req = {
		.grant_off = PAGE_SIZE, .grant_len = PAGE_SIZE,
		.ubuf = (void __user *)PAGE_SIZE, .to_device = true,
	};
	u64 done = 1;

	/* Length 0 is a no-op, whatever the buffer. */
	KUNIT_EXPECT_EQ(test, 0, svod_stage_xfer(&ctx->bar, &req, &stats, &done));
	KUNIT_EXPECT_EQ(test, 0ULL, done);
	req.offset = 1;
	req.length = PAGE_SIZE;
	KUNIT_EXPECT_EQ(test, -ERANGE, svod_stage_xfer(&ctx->bar, &req, &stats, &done));
	req.offset = 0;
	req.flags = SVOD_XFER_CPU | SVOD_XFER_DMA;
	KUNIT_EXPECT_EQ(test, -EINVAL, svod_stage_xfer(&ctx->bar, &req, &stats, &done));
	req.flags = 0;
	req.ubuf = (void __user *)(TASK_SIZE_MAX - 1);
	KUNIT_EXPECT_EQ(test, -EFAULT, svod_stage_xfer(&ctx->bar, &req, &stats, &done));
	KUNIT_EXPECT_EQ(test, 0ULL, done);
	KUNIT_EXPECT_EQ(test, 0U, ctx->fb.nr_ops);
	KUNIT_EXPECT_EQ(test, 0LL, atomic64_read(&stats.cpu_bytes));
	KUNIT_EXPECT_TRUE(test, guard_intact(ctx->fb.mem, 0, CPU_BAR_LEN));
}

/* Three kernel pages in @ctx->pages, each with its own pattern. */
static void ctx_pages(struct kunit *test, struct stage_ctx *ctx)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ctx->pages); i++) {
		ctx->pages[i] = alloc_page(GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, ctx->pages[i]);
		fill_pattern(page_address(ctx->pages[i]), PAGE_SIZE, 100 + i);
	}
}

/* @len bytes of @ctx->pages from @head in the first, made linear. */
static void pages_linear(struct stage_ctx *ctx, unsigned int head, size_t len,
			 u8 *out)
{
	struct page **pg = ctx->pages;
	size_t seg;

	while (len) {
		seg = min_t(size_t, len, PAGE_SIZE - head);
		memcpy(out, page_address(*pg) + head, seg);
		out += seg;
		len -= seg;
		head = 0;
		pg++;
	}
}

static void cpu_stage_unaligned(struct kunit *test)
{
	static const struct { u64 off; unsigned int head; size_t len; } cases[] = {
		{ 0, 0, 1 }, { 1, PAGE_SIZE - 1, 1 }, { PAGE_SIZE - 1, PAGE_SIZE - 1, 2 },
		{ 3, 7, 2 * PAGE_SIZE + 5 }, { 5000, 100, 2 * PAGE_SIZE + 50 },
		{ 0, 0, 3 * PAGE_SIZE },
	};
	struct stage_ctx *ctx = cpu_ctx(test);
	unsigned int i;
	u8 *want;

	ctx_pages(test, ctx);
	want = kunit_kmalloc(test, 3 * PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, want);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		memset(ctx->fb.mem, GUARD, CPU_BAR_LEN);
		svod_stage_cpu(&ctx->bar, cases[i].off, ctx->pages, cases[i].head,
			       cases[i].len, true);
		pages_linear(ctx, cases[i].head, cases[i].len, want);
		KUNIT_EXPECT_EQ_MSG(test, 0, memcmp(ctx->fb.mem + cases[i].off, want,
						    cases[i].len), "case %u", i);
		KUNIT_EXPECT_TRUE_MSG(test, guard_intact(ctx->fb.mem, 0, cases[i].off),
				      "case %u", i);
		KUNIT_EXPECT_TRUE_MSG(test, guard_intact(ctx->fb.mem,
							 cases[i].off + cases[i].len,
							 CPU_BAR_LEN), "case %u", i);
	}
}

/* One BAR access per page segment, at consecutive BAR offsets. */
static void cpu_segments_follow_pages(struct kunit *test)
{
	struct stage_ctx *ctx = cpu_ctx(test);

	ctx_pages(test, ctx);
	svod_stage_cpu(&ctx->bar, 10, ctx->pages, 100, 2 * PAGE_SIZE + 50, true);
	KUNIT_ASSERT_EQ(test, 3U, ctx->fb.nr_ops);
	KUNIT_EXPECT_EQ(test, 10ULL, ctx->fb.op_off[0]);
	KUNIT_EXPECT_EQ(test, (size_t)PAGE_SIZE - 100, ctx->fb.op_len[0]);
	KUNIT_EXPECT_EQ(test, 10ULL + PAGE_SIZE - 100, ctx->fb.op_off[1]);
	KUNIT_EXPECT_EQ(test, (size_t)PAGE_SIZE, ctx->fb.op_len[1]);
	KUNIT_EXPECT_EQ(test, 10ULL + 2 * PAGE_SIZE - 100, ctx->fb.op_off[2]);
	KUNIT_EXPECT_EQ(test, (size_t)150, ctx->fb.op_len[2]);
}

static void cpu_read_roundtrip(struct kunit *test)
{
	const unsigned int head = PAGE_SIZE - 1;
	const size_t len = PAGE_SIZE + 1;
	struct stage_ctx *ctx = cpu_ctx(test);
	u8 *got, before;

	ctx_pages(test, ctx);
	got = kunit_kmalloc(test, len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, got);
	fill_pattern(ctx->fb.mem, CPU_BAR_LEN, 42);
	before = *(u8 *)(page_address(ctx->pages[0]) + head - 1);
	svod_stage_cpu(&ctx->bar, 777, ctx->pages, head, len, false);
	pages_linear(ctx, head, len, got);
	KUNIT_EXPECT_EQ(test, 0, memcmp(got, ctx->fb.mem + 777, len));
	KUNIT_EXPECT_EQ(test, before, *(u8 *)(page_address(ctx->pages[0]) + head - 1));
	KUNIT_EXPECT_EQ(test, 2U, ctx->fb.nr_ops);
}

/*
 * User-pointer cases: a fake BAR of USER_BAR_LEN, a kernel copy of the
 * pattern in ctx->vsrc, and an anonymous mapping of the loader's mm.
 */
#define USER_LEN	(2 * SZ_1M + 5)		/* three CPU chunks */
#define USER_MAP_LEN	(USER_LEN + 2 * PAGE_SIZE)
#define USER_BAR_LEN	(USER_LEN + SZ_64K)

static struct stage_ctx *user_ctx(struct kunit *test)
{
	struct stage_ctx *ctx = test->priv;

	KUNIT_ASSERT_NOT_NULL_MSG(test, user_mm, "no mm to borrow");
	ctx->vmem = vmalloc(USER_BAR_LEN);
	KUNIT_ASSERT_NOT_NULL(test, ctx->vmem);
	ctx_bar_init(ctx, ctx->vmem, USER_BAR_LEN);
	ctx->vsrc = vmalloc(USER_LEN);
	KUNIT_ASSERT_NOT_NULL(test, ctx->vsrc);
	fill_pattern(ctx->vsrc, USER_LEN, 77);
	return ctx;
}

static unsigned long user_mmap(unsigned long prot)
{
	return vm_mmap(NULL, 0, USER_MAP_LEN, prot, MAP_ANONYMOUS | MAP_PRIVATE, 0);
}

/* 2 MiB + 5 from an unaligned user buffer: three chunks, every byte right. */
static void xfer_user_stage_chunks(struct kunit *test)
{
	struct stage_ctx *ctx = user_ctx(test);
	struct svod_stage_stats stats = {};
	struct svod_xfer_req req = {
		.grant_off = 8, .grant_len = USER_LEN + 3, .offset = 3,
		.length = USER_LEN, .flags = SVOD_XFER_CPU, .to_device = true,
	};
	unsigned long addr;
	u64 done = 0;
	int ret;

	kthread_use_mm(user_mm);
	addr = user_mmap(PROT_READ | PROT_WRITE);
	if (IS_ERR_VALUE(addr)) {
		ret = (int)addr;
	} else {
		req.ubuf = (void __user *)(addr + 7);
		ret = copy_to_user(req.ubuf, ctx->vsrc, USER_LEN) ? -EFAULT :
		      svod_stage_xfer(&ctx->bar, &req, &stats, &done);
		vm_munmap(addr, USER_MAP_LEN);
	}
	kthread_unuse_mm(user_mm);

	KUNIT_EXPECT_EQ(test, 0, ret);
	KUNIT_EXPECT_EQ(test, (u64)USER_LEN, done);
	KUNIT_EXPECT_EQ(test, (s64)USER_LEN, atomic64_read(&stats.cpu_bytes));
	KUNIT_EXPECT_EQ(test, 0, memcmp(ctx->fb.mem + 11, ctx->vsrc, USER_LEN));
	KUNIT_EXPECT_TRUE(test, guard_intact(ctx->fb.mem, 0, 11));
	KUNIT_EXPECT_TRUE(test, guard_intact(ctx->fb.mem, 11 + USER_LEN, USER_BAR_LEN));
	/*
	 * One BAR access per page segment; the two 1 MiB chunk boundaries fall
	 * 7 bytes into a page and split it: two accesses more.
	 */
	KUNIT_EXPECT_EQ(test, (unsigned int)DIV_ROUND_UP(7 + USER_LEN, PAGE_SIZE) + 2,
			ctx->fb.nr_ops);
}

/* READ to user memory, and never into a read-only mapping. */
static void xfer_user_read(struct kunit *test)
{
	struct stage_ctx *ctx = user_ctx(test);
	struct svod_stage_stats stats = {};
	struct svod_xfer_req req = {
		.grant_len = USER_BAR_LEN, .offset = 1, .length = USER_LEN,
	};
	unsigned long addr;
	u64 done = 0, ro_done = 1;
	int ret, ro_ret;
	u8 *got = ctx->vsrc;

	fill_pattern(ctx->fb.mem, USER_BAR_LEN, 3);
	kthread_use_mm(user_mm);
	addr = user_mmap(PROT_READ | PROT_WRITE);
	if (IS_ERR_VALUE(addr)) {
		ret = (int)addr;
	} else {
		req.ubuf = (void __user *)(addr + PAGE_SIZE - 1);
		ret = svod_stage_xfer(&ctx->bar, &req, &stats, &done);
		if (!ret && copy_from_user(got, req.ubuf, USER_LEN))
			ret = -EFAULT;
		vm_munmap(addr, USER_MAP_LEN);
	}
	addr = user_mmap(PROT_READ);
	if (IS_ERR_VALUE(addr)) {
		ro_ret = (int)addr;
	} else {
		req.ubuf = (void __user *)addr;
		ro_ret = svod_stage_xfer(&ctx->bar, &req, &stats, &ro_done);
		vm_munmap(addr, USER_MAP_LEN);
	}
	kthread_unuse_mm(user_mm);

	KUNIT_EXPECT_EQ(test, 0, ret);
	KUNIT_EXPECT_EQ(test, (u64)USER_LEN, done);
	KUNIT_EXPECT_EQ(test, 0, memcmp(got, ctx->fb.mem + 1, USER_LEN));
	KUNIT_EXPECT_EQ(test, -EFAULT, ro_ret);
	KUNIT_EXPECT_EQ(test, 0ULL, ro_done);
}

/*
 * A hole in the second chunk: the first chunk (1 MiB) is moved and counted,
 * the failing chunk moves nothing.
 */
static void xfer_user_fault_keeps_whole_chunks(struct kunit *test)
{
	struct stage_ctx *ctx = user_ctx(test);
	struct svod_stage_stats stats = {};
	struct svod_xfer_req req = {
		.grant_len = USER_BAR_LEN, .length = USER_LEN,
		.flags = SVOD_XFER_CPU, .to_device = true,
	};
	unsigned long addr;
	u64 done = 0;
	int ret;

	kthread_use_mm(user_mm);
	addr = user_mmap(PROT_READ | PROT_WRITE);
	if (IS_ERR_VALUE(addr)) {
		ret = (int)addr;
	} else {
		req.ubuf = (void __user *)addr;
		if (copy_to_user(req.ubuf, ctx->vsrc, USER_LEN))
			ret = -ENOMEM;
		else if (vm_munmap(addr + SZ_1M + SZ_512K, PAGE_SIZE))
			ret = -ENOMEM;
		else
			ret = svod_stage_xfer(&ctx->bar, &req, &stats, &done);
		vm_munmap(addr, USER_MAP_LEN);
	}
	kthread_unuse_mm(user_mm);

	KUNIT_EXPECT_EQ(test, -EFAULT, ret);
	KUNIT_EXPECT_EQ(test, (u64)SZ_1M, done);
	KUNIT_EXPECT_EQ(test, (s64)SZ_1M, atomic64_read(&stats.cpu_bytes));
	KUNIT_EXPECT_EQ(test, 0, memcmp(ctx->fb.mem, ctx->vsrc, SZ_1M));
	KUNIT_EXPECT_TRUE(test, guard_intact(ctx->fb.mem, SZ_1M, USER_BAR_LEN));
}

/*
 * STAGE of USER_LEN from a user mapping of ctx->vsrc, from @resume on:
 * svod_stage_xfer()'s result, *@done and the bytes counted. With @signal,
 * a SIGUSR1 is pending before the call (the case's kthread allows it).
 */
static int user_stage_from(struct kunit *test, u64 resume, bool signal, u64 *done,
			   struct svod_stage_stats *stats)
{
	struct stage_ctx *ctx = test->priv;
	struct svod_xfer_req req = {
		.grant_len = USER_BAR_LEN, .length = USER_LEN, .resume = resume,
		.flags = SVOD_XFER_CPU, .to_device = true,
	};
	unsigned long addr;
	int ret;

	kthread_use_mm(user_mm);
	addr = user_mmap(PROT_READ | PROT_WRITE);
	if (IS_ERR_VALUE(addr)) {
		ret = (int)addr;
	} else {
		req.ubuf = (void __user *)addr;
		ret = copy_to_user(req.ubuf, ctx->vsrc, USER_LEN) ? -EFAULT : 0;
		if (!ret && signal) {
			allow_signal(SIGUSR1);
			send_sig(SIGUSR1, current, 0);
		}
		if (!ret)
			ret = svod_stage_xfer(&ctx->bar, &req, stats, done);
		flush_signals(current);
		disallow_signal(SIGUSR1);
		vm_munmap(addr, USER_MAP_LEN);
	}
	kthread_unuse_mm(user_mm);
	return ret;
}

/*
 * A call with resume set moves only what is left: the bytes before it are
 * not touched again (the fake BAR keeps its guard there), done counts them
 * all, the engine's counter only what this call moved.
 */
static void xfer_user_resume_moves_the_rest(struct kunit *test)
{
	struct stage_ctx *ctx = user_ctx(test);
	struct svod_stage_stats stats = {};
	u64 resume = SZ_1M + 5, done = 0;

	KUNIT_EXPECT_EQ(test, 0, user_stage_from(test, resume, false, &done, &stats));
	KUNIT_EXPECT_EQ(test, (u64)USER_LEN, done);
	KUNIT_EXPECT_EQ(test, (s64)(USER_LEN - resume), atomic64_read(&stats.cpu_bytes));
	KUNIT_EXPECT_TRUE(test, guard_intact(ctx->fb.mem, 0, resume));
	KUNIT_EXPECT_EQ(test, 0, memcmp(ctx->fb.mem + resume, ctx->vsrc + resume,
					USER_LEN - resume));
	KUNIT_EXPECT_TRUE(test, guard_intact(ctx->fb.mem, USER_LEN, USER_BAR_LEN));

	/* Nothing left: 0, done the whole length, no BAR access. */
	ctx->fb.nr_ops = 0;
	KUNIT_EXPECT_EQ(test, 0, user_stage_from(test, USER_LEN, false, &done, &stats));
	KUNIT_EXPECT_EQ(test, (u64)USER_LEN, done);
	KUNIT_EXPECT_EQ(test, 0U, ctx->fb.nr_ops);
}

/*
 * A signal pending from the start: the call still moves one chunk (so a
 * storm of signals cannot stall a restarted transfer), then stops with
 * -ERESTARTSYS and done at that chunk; the call again from there (as the
 * restart does) completes, and every byte is right.
 */
static void xfer_user_signal_restarts_after_a_chunk(struct kunit *test)
{
	struct stage_ctx *ctx = user_ctx(test);
	struct svod_stage_stats stats = {};
	u64 done = 0, first;

	KUNIT_EXPECT_EQ(test, -ERESTARTSYS, user_stage_from(test, 0, true, &done, &stats));
	KUNIT_EXPECT_EQ(test, (u64)SZ_1M, done);
	KUNIT_EXPECT_TRUE(test, guard_intact(ctx->fb.mem, SZ_1M, USER_BAR_LEN));
	first = done;
	KUNIT_EXPECT_EQ(test, -ERESTARTSYS, user_stage_from(test, first, true, &done, &stats));
	KUNIT_EXPECT_EQ(test, (u64)2 * SZ_1M, done);
	KUNIT_EXPECT_EQ(test, 0, user_stage_from(test, done, false, &done, &stats));
	KUNIT_EXPECT_EQ(test, (u64)USER_LEN, done);
	KUNIT_EXPECT_EQ(test, (s64)USER_LEN, atomic64_read(&stats.cpu_bytes));
	KUNIT_EXPECT_EQ(test, 0, memcmp(ctx->fb.mem, ctx->vsrc, USER_LEN));
}

/*
 * The user path on the fake channel: three 64 KiB DMA chunks from an
 * unaligned buffer (auto mode above a threshold), then READ back by DMA.
 */
#define USER_DMA_LEN	(2 * SZ_64K + 300)

static void xfer_user_dma_chunks(struct kunit *test)
{
	struct stage_ctx *ctx = test->priv;
	struct svod_stage_stats stats = {};
	struct svod_xfer_req req = {
		.grant_off = 5, .grant_len = USER_DMA_LEN, .length = USER_DMA_LEN,
		.to_device = true,
	};
	dma_cap_mask_t mask;
	unsigned long addr;
	u64 done = 0, rdone = 0;
	int ret, rret = -EIO;
	u8 *mem;

	KUNIT_ASSERT_NOT_NULL(test, user_mm);
	mem = kunit_kmalloc(test, USER_DMA_LEN + SZ_4K, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, mem);
	ctx_bar_init(ctx, mem, USER_DMA_LEN + SZ_4K);
	ctx->bar.phys = virt_to_phys(mem);
	ctx->vsrc = vmalloc(2 * USER_DMA_LEN);
	KUNIT_ASSERT_NOT_NULL(test, ctx->vsrc);
	fill_pattern(ctx->vsrc, USER_DMA_LEN, 11);
	dma_cap_zero(mask);
	dma_cap_set(DMA_MEMCPY, mask);
	ctx->chan = dma_request_channel(mask, fake_dma_filter, &fake_pdev->dev);
	KUNIT_ASSERT_NOT_NULL(test, ctx->chan);
	svod_dma_lane_init(&ctx->lane, ctx->chan);
	fake->mode = FAKE_DMA_COPY;
	fake->prep_budget = UINT_MAX;
	fake->nr_prep = 0;

	kthread_use_mm(user_mm);
	addr = vm_mmap(NULL, 0, 2 * USER_DMA_LEN, PROT_READ | PROT_WRITE,
		       MAP_ANONYMOUS | MAP_PRIVATE, 0);
	if (IS_ERR_VALUE(addr)) {
		ret = (int)addr;
	} else {
		req.ubuf = (void __user *)(addr + 7);
		ret = copy_to_user(req.ubuf, ctx->vsrc, USER_DMA_LEN) ? -EFAULT :
		      svod_stage_xfer_on(&ctx->lane, SZ_64K, &ctx->bar, &req,
					 &stats, &done);
		req.ubuf = (void __user *)(addr + USER_DMA_LEN);
		req.to_device = false;
		req.flags = SVOD_XFER_DMA;
		if (!ret)
			rret = svod_stage_xfer_on(&ctx->lane, 0, &ctx->bar, &req,
						  &stats, &rdone);
		if (!rret && copy_from_user(ctx->vsrc + USER_DMA_LEN, req.ubuf,
					    USER_DMA_LEN))
			rret = -EFAULT;
		vm_munmap(addr, 2 * USER_DMA_LEN);
	}
	kthread_unuse_mm(user_mm);

	KUNIT_EXPECT_EQ(test, 0, ret);
	KUNIT_EXPECT_EQ(test, (u64)USER_DMA_LEN, done);
	KUNIT_EXPECT_EQ(test, 0, memcmp(mem + 5, ctx->vsrc, USER_DMA_LEN));
	KUNIT_EXPECT_TRUE(test, guard_intact(mem, 0, 5));
	KUNIT_EXPECT_TRUE(test, guard_intact(mem, 5 + USER_DMA_LEN,
					     USER_DMA_LEN + SZ_4K));
	/* At least one descriptor per chunk, and no CPU access to the BAR. */
	KUNIT_EXPECT_GE(test, fake->nr_prep, 3U);
	KUNIT_EXPECT_EQ(test, 0U, ctx->fb.nr_ops);
	KUNIT_EXPECT_EQ(test, 0, rret);
	KUNIT_EXPECT_EQ(test, (u64)USER_DMA_LEN, rdone);
	KUNIT_EXPECT_EQ(test, 0, memcmp(ctx->vsrc + USER_DMA_LEN, ctx->vsrc,
					USER_DMA_LEN));
	KUNIT_EXPECT_EQ(test, (s64)2 * USER_DMA_LEN, atomic64_read(&stats.dma_bytes));
	KUNIT_EXPECT_EQ(test, 0LL, atomic64_read(&stats.cpu_bytes));
}

/*
 * DMA cases: a physically contiguous fake BAR, the fake channel, and a
 * scatterlist of @len bytes starting @head bytes into the first of three
 * pages, one segment per page (never merged).
 */
static struct stage_ctx *dma_ctx(struct kunit *test, unsigned int head,
				 size_t len)
{
	struct stage_ctx *ctx = test->priv;
	struct scatterlist *sg;
	dma_cap_mask_t mask;
	unsigned int i, n, nents;
	u8 *mem;

	nents = DIV_ROUND_UP(head + len, PAGE_SIZE);
	KUNIT_ASSERT_LE(test, nents, (unsigned int)ARRAY_SIZE(ctx->pages));
	mem = kunit_kmalloc(test, DMA_BAR_LEN, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, mem);
	ctx_bar_init(ctx, mem, DMA_BAR_LEN);
	ctx->bar.phys = virt_to_phys(mem);

	dma_cap_zero(mask);
	dma_cap_set(DMA_MEMCPY, mask);
	ctx->chan = dma_request_channel(mask, fake_dma_filter, &fake_pdev->dev);
	KUNIT_ASSERT_NOT_NULL(test, ctx->chan);
	svod_dma_lane_init(&ctx->lane, ctx->chan);
	KUNIT_ASSERT_EQ(test, 0, sg_alloc_table(&ctx->sgt, nents, GFP_KERNEL));
	ctx_pages(test, ctx);
	for_each_sgtable_sg(&ctx->sgt, sg, i) {
		n = min_t(size_t, len, PAGE_SIZE - head);
		sg_set_page(sg, ctx->pages[i], n, head);
		len -= n;
		head = 0;
	}

	fake->mode = FAKE_DMA_COPY;
	fake->prep_budget = UINT_MAX;
	fake->nr_prep = 0;
	fake->nr_terminate = 0;
	return ctx;
}

/* The bytes the scatterlist covers equal the fake BAR's at @bar_off. */
static bool sgt_matches_bar(struct stage_ctx *ctx, u64 bar_off)
{
	struct scatterlist *sg;
	unsigned int i;
	u64 pos = bar_off;

	for_each_sgtable_sg(&ctx->sgt, sg, i) {
		if (memcmp(sg_virt(sg), ctx->fb.mem + pos, sg->length))
			return false;
		pos += sg->length;
	}
	return true;
}

static void dma_stage_pages(struct kunit *test)
{
	const unsigned int head = 100;
	const size_t len = 2 * PAGE_SIZE + 50;
	struct stage_ctx *ctx = dma_ctx(test, head, len);

	KUNIT_EXPECT_EQ(test, 0, svod_stage_dma_sgt(&ctx->lane, &ctx->bar, 33,
						    &ctx->sgt, true, HZ));
	KUNIT_EXPECT_TRUE(test, sgt_matches_bar(ctx, 33));
	KUNIT_EXPECT_TRUE(test, guard_intact(ctx->fb.mem, 0, 33));
	KUNIT_EXPECT_TRUE(test, guard_intact(ctx->fb.mem, 33 + len, DMA_BAR_LEN));
	KUNIT_EXPECT_EQ(test, 0U, fake->nr_terminate);
	/* The engine never touches the BAR through the CPU accessors. */
	KUNIT_EXPECT_EQ(test, 0U, ctx->fb.nr_ops);
}

static void dma_read_pages(struct kunit *test)
{
	const size_t len = PAGE_SIZE + 1;
	struct stage_ctx *ctx = dma_ctx(test, PAGE_SIZE - 1, len);

	fill_pattern(ctx->fb.mem, DMA_BAR_LEN, 9);
	KUNIT_EXPECT_EQ(test, 0, svod_stage_dma_sgt(&ctx->lane, &ctx->bar, 1,
						    &ctx->sgt, false, HZ));
	KUNIT_EXPECT_TRUE(test, sgt_matches_bar(ctx, 1));
}

/*
 * A channel that never completes: -ETIMEDOUT; the descriptor is waited out
 * for the timeout once more, then the channel is reset, and the lane is
 * free.
 */
static void dma_timeout_terminates(struct kunit *test)
{
	struct stage_ctx *ctx = dma_ctx(test, 0, PAGE_SIZE);

	fake->mode = FAKE_DMA_STALL;
	KUNIT_EXPECT_EQ(test, -ETIMEDOUT,
			svod_stage_dma_sgt(&ctx->lane, &ctx->bar, 0, &ctx->sgt,
					   true, msecs_to_jiffies(50)));
	KUNIT_EXPECT_EQ(test, 1U, fake->nr_terminate);
	KUNIT_EXPECT_TRUE(test, list_empty(&fake->queue));
	KUNIT_EXPECT_TRUE(test, guard_intact(ctx->fb.mem, 0, DMA_BAR_LEN));
	KUNIT_EXPECT_FALSE(test, ctx->lane.busy);
}

static void dma_transfer_error(struct kunit *test)
{
	struct stage_ctx *ctx = dma_ctx(test, 0, PAGE_SIZE);

	fake->mode = FAKE_DMA_FAIL;
	KUNIT_EXPECT_EQ(test, -EIO, svod_stage_dma_sgt(&ctx->lane, &ctx->bar, 0,
						       &ctx->sgt, true, HZ));
	KUNIT_EXPECT_EQ(test, 0U, fake->nr_terminate);
}

/*
 * The second descriptor cannot be prepared: the first one has moved its
 * page (one descriptor at a time), nothing is left on the channel and
 * nothing was reset.
 */
static void dma_prep_failure_stops(struct kunit *test)
{
	struct stage_ctx *ctx = dma_ctx(test, 0, 3 * PAGE_SIZE);

	fake->prep_budget = 1;
	KUNIT_EXPECT_EQ(test, -EIO, svod_stage_dma_sgt(&ctx->lane, &ctx->bar,
						       0, &ctx->sgt, true, HZ));
	KUNIT_EXPECT_EQ(test, 0U, fake->nr_terminate);
	KUNIT_EXPECT_TRUE(test, list_empty(&fake->queue));
	KUNIT_EXPECT_EQ(test, 0, memcmp(ctx->fb.mem, page_address(ctx->pages[0]),
					PAGE_SIZE));
	KUNIT_EXPECT_TRUE(test, guard_intact(ctx->fb.mem, PAGE_SIZE, DMA_BAR_LEN));
	KUNIT_EXPECT_FALSE(test, ctx->lane.busy);
}

/* Another user's descriptor on the channel; ended by another_user_done(). */
static void another_user_go(struct svod_dma_turn *turn)
{
}

/*
 * Issue 59: a caller whose chunk times out while another user has the
 * channel (a stalled descriptor of theirs) leaves the line: it never
 * submits, and never resets the channel under the other user. When the
 * other user's descriptor ends, the lane is free again.
 */
static void dma_timeout_in_line_resets_nothing(struct kunit *test)
{
	struct stage_ctx *ctx = dma_ctx(test, 0, PAGE_SIZE);
	struct svod_dma_turn other = { .go = another_user_go };

	INIT_LIST_HEAD(&other.node);
	svod_dma_lane_enter(&ctx->lane, &other);
	KUNIT_EXPECT_TRUE(test, ctx->lane.busy);
	KUNIT_EXPECT_EQ(test, -ETIMEDOUT,
			svod_stage_dma_sgt(&ctx->lane, &ctx->bar, 0, &ctx->sgt,
					   true, msecs_to_jiffies(50)));
	KUNIT_EXPECT_EQ(test, 0U, fake->nr_terminate);
	KUNIT_EXPECT_EQ(test, 0U, fake->nr_prep);
	KUNIT_EXPECT_TRUE(test, list_empty(&ctx->lane.waiting));
	KUNIT_EXPECT_TRUE(test, guard_intact(ctx->fb.mem, 0, DMA_BAR_LEN));
	svod_dma_lane_next(&ctx->lane);
	KUNIT_EXPECT_FALSE(test, ctx->lane.busy);
	/* The channel works for the next caller. */
	KUNIT_EXPECT_EQ(test, 0, svod_stage_dma_sgt(&ctx->lane, &ctx->bar, 0,
						    &ctx->sgt, true, HZ));
	KUNIT_EXPECT_TRUE(test, sgt_matches_bar(ctx, 0));
}

/* Two users take turns: the second goes when the first's descriptor ends. */
static void dma_lane_turns_in_order(struct kunit *test)
{
	struct stage_ctx *ctx = dma_ctx(test, 0, PAGE_SIZE);
	struct svod_dma_turn a = { .go = another_user_go };
	struct svod_dma_turn b = { .go = another_user_go };

	INIT_LIST_HEAD(&a.node);
	INIT_LIST_HEAD(&b.node);
	svod_dma_lane_enter(&ctx->lane, &a);
	svod_dma_lane_enter(&ctx->lane, &b);
	KUNIT_EXPECT_FALSE(test, list_empty(&b.node));
	svod_dma_lane_next(&ctx->lane);
	KUNIT_EXPECT_TRUE(test, list_empty(&b.node));
	KUNIT_EXPECT_TRUE(test, ctx->lane.busy);
	svod_dma_lane_next(&ctx->lane);
	KUNIT_EXPECT_FALSE(test, ctx->lane.busy);
}

static struct kunit_case stage_cases[] = {
	KUNIT_CASE(check_flags_invalid),
	KUNIT_CASE(check_bounds_range),
	KUNIT_CASE(check_bounds_across_4gib),
	KUNIT_CASE(pick_engine_rules),
	KUNIT_CASE(xfer_rejects_before_moving),
	KUNIT_CASE(cpu_stage_unaligned),
	KUNIT_CASE(cpu_segments_follow_pages),
	KUNIT_CASE(cpu_read_roundtrip),
	KUNIT_CASE(xfer_user_stage_chunks),
	KUNIT_CASE(xfer_user_read),
	KUNIT_CASE(xfer_user_fault_keeps_whole_chunks),
	KUNIT_CASE(xfer_user_resume_moves_the_rest),
	KUNIT_CASE(xfer_user_signal_restarts_after_a_chunk),
	KUNIT_CASE(xfer_user_dma_chunks),
	KUNIT_CASE(dma_stage_pages),
	KUNIT_CASE(dma_read_pages),
	KUNIT_CASE(dma_timeout_terminates),
	KUNIT_CASE(dma_transfer_error),
	KUNIT_CASE(dma_prep_failure_stops),
	KUNIT_CASE(dma_timeout_in_line_resets_nothing),
	KUNIT_CASE(dma_lane_turns_in_order),
	{}
};

struct kunit_suite svod_stage_suite = {
	.name = "svod_stage",
	.suite_init = stage_suite_init,
	.suite_exit = stage_suite_exit,
	.init = stage_test_init,
	.exit = stage_test_exit,
	.test_cases = stage_cases,
};
