// SPDX-License-Identifier: GPL-2.0
/*
 * svod staging engines.
 *
 * Both engines pin the user buffer one chunk at a time
 * (pin_user_pages_fast(), FOLL_WRITE only for READ, so a read-only mapping is
 * a valid STAGE source and a READ into it fails with -EFAULT) and unpin it
 * before the next chunk.
 *
 * CPU engine: memcpy_toio()/memcpy_fromio() between the pinned pages and the
 * write-combined BAR mapping, one page segment at a time; wmb() drains the
 * write-combining buffers before the call returns. Documentation/staging.rst
 * has the measurement that chose pinned pages over a bounce buffer.
 *
 * DMA engine: a dmaengine DMA_MEMCPY channel, taken once at module init. Each
 * pinned chunk is described by a scatterlist mapped for the channel's device
 * and copied to (or from) the BAR range mapped with dma_map_resource() on
 * that device: peer-to-peer into the BAR.
 *
 * The channel is shared by every file, synchronous and asynchronous
 * (async.c) alike, so it is never reset on one user's behalf: its lane
 * (struct svod_dma_lane) keeps one svod descriptor on it at a time, the
 * users taking turns, one descriptor each. A caller that stops (a fatal
 * signal, its chunk's time up) leaves the line, or waits out its one
 * descriptor; only a descriptor still not done dma_timeout_ms after that is
 * the engine's hang, and then the reset (dmaengine_terminate_sync()) drops
 * that descriptor alone, because it is the only one on the channel.
 *
 * Between two chunks (1 MiB CPU, 64 KiB DMA) both reschedule and stop if a
 * signal is pending: -EINTR for a fatal one, else -ERESTARTSYS, and the
 * caller records how far it got (the request's resume) so that a restart
 * after an SA_RESTART handler goes on from there, while a handler without
 * SA_RESTART (Python's SIGINT) still ends a long transfer with EINTR. Chunks
 * moved before that stay moved; @done says how many bytes. Every call moves
 * at least one chunk before it looks at signals, so a storm of them cannot
 * keep a restarted transfer from finishing. Inside a chunk only a fatal
 * signal interrupts (killable waits). A chunk that cannot be pinned moves nothing:
 * -EFAULT for an address that is not mapped (or, on READ, not writable),
 * -ENOMEM when pinning a valid page ran out of memory.
 */

#include <kunit/visibility.h>
#include <linux/dma-mapping.h>
#include <linux/dmaengine.h>
#include <linux/highmem.h>
#include <linux/io.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/sched/signal.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include <linux/svod.h>

#include "stage.h"

#define SVOD_STAGE_CPU_CHUNK	SZ_1M
#define SVOD_STAGE_DMA_CHUNK	SZ_64K
/*
 * Page pointers on the stack: a transfer of up to 64 KiB (one DMA chunk)
 * needs no allocation for them, at any alignment of the user buffer.
 */
#define SVOD_STAGE_SMALL_PAGES	(SZ_64K / PAGE_SIZE + 1)

static unsigned long dma_threshold;

/* A decimal integer (svod.rst, "Limits"): 010 is ten, 0x10 is -EINVAL. */
static int svod_dma_threshold_set(const char *val, const struct kernel_param *kp)
{
	unsigned long n;
	int ret;

	ret = kstrtoul(val, 10, &n);
	if (ret)
		return ret;
	WRITE_ONCE(dma_threshold, n);
	return 0;
}

static const struct kernel_param_ops svod_dma_threshold_ops = {
	.set = svod_dma_threshold_set,
	.get = param_get_ulong,
};

module_param_cb(dma_threshold, &svod_dma_threshold_ops, &dma_threshold, 0644);
MODULE_PARM_DESC(dma_threshold,
		 "Auto mode uses DMA for transfers longer than this many bytes (decimal) when a DMA_MEMCPY channel exists; 0 (default): never");

static unsigned int dma_timeout_ms = 20000;

/* 1..86400000, in decimal (svod.rst "Numbers"); else -EINVAL. */
static int svod_dma_timeout_set(const char *val, const struct kernel_param *kp)
{
	unsigned int n;

	if (kstrtouint(val, 10, &n) || !n || n > 24 * 3600 * 1000)
		return -EINVAL;
	WRITE_ONCE(dma_timeout_ms, n);
	return 0;
}

static const struct kernel_param_ops svod_dma_timeout_ops = {
	.set = svod_dma_timeout_set,
	.get = param_get_uint,
};

module_param_cb(dma_timeout_ms, &svod_dma_timeout_ops, &dma_timeout_ms, 0644);
MODULE_PARM_DESC(dma_timeout_ms,
		 "Time allowed for one synchronous DMA chunk (64 KiB) before the transfer fails with -ETIMEDOUT, and for one descriptor on the engine before the channel is taken for hung, 1..86400000 (default 20000)");

/* The module's channel and its lane; lane.chan NULL: no channel. */
static struct svod_dma_lane svod_stage_lane;

/**
 * svod_stage_check() - validate a request against the live grant
 * @bar: the BAR the grant lies in
 * @req: the request
 *
 * Overflow-safe: no sum of user-supplied values is formed.
 *
 * Context: any.
 * Return: 0 if @req may proceed; -EINVAL for a flag bit outside
 * SVOD_XFER_FLAGS, both engine bits, FENCE_FD without ASYNC or
 * @req->resume beyond @req->length;
 * -ERANGE if @req->offset +
 * @req->length lies beyond the grant (or the grant beyond the BAR, a
 * caller bug that also warns).
 */
int svod_stage_check(const struct svod_bar *bar, const struct svod_xfer_req *req)
{
	if (req->flags & ~SVOD_XFER_FLAGS)
		return -EINVAL;
	if ((req->flags & SVOD_XFER_FENCE_FD) && !(req->flags & SVOD_XFER_ASYNC))
		return -EINVAL;
	if ((req->flags & SVOD_XFER_ENGINES) == SVOD_XFER_ENGINES)
		return -EINVAL;
	if (req->resume > req->length)
		return -EINVAL;
	if (WARN_ON_ONCE(req->grant_off > bar->len ||
			 req->grant_len > bar->len - req->grant_off))
		return -ERANGE;
	if (req->offset > req->grant_len ||
	    req->length > req->grant_len - req->offset)
		return -ERANGE;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(svod_stage_check);

/**
 * svod_stage_pick() - choose the engine for a transfer
 * @flags: SVOD_XFER_* of the request, already checked
 * @length: bytes to move
 * @threshold: auto mode uses DMA above this many bytes; 0: never
 * @have_dma: a DMA_MEMCPY channel exists
 *
 * Context: any.
 * Return: SVOD_XFER_CPU or SVOD_XFER_DMA; -EOPNOTSUPP if DMA is forced but
 * there is no channel.
 */
int svod_stage_pick(u32 flags, u64 length, u64 threshold, bool have_dma)
{
	if (flags & SVOD_XFER_CPU)
		return SVOD_XFER_CPU;
	if (flags & SVOD_XFER_DMA)
		return have_dma ? SVOD_XFER_DMA : -EOPNOTSUPP;
	if (have_dma && threshold && length > threshold)
		return SVOD_XFER_DMA;
	return SVOD_XFER_CPU;
}
EXPORT_SYMBOL_IF_KUNIT(svod_stage_pick);

static void svod_bar_write(const struct svod_bar *bar, u64 off,
			   const void *src, size_t len)
{
	if (bar->ops)
		bar->ops->write(bar, off, src, len);
	else
		memcpy_toio(bar->wc + off, src, len);
}

static void svod_bar_read(const struct svod_bar *bar, u64 off, void *dst,
			  size_t len)
{
	if (bar->ops)
		bar->ops->read(bar, off, dst, len);
	else
		memcpy_fromio(dst, bar->wc + off, len);
}

/**
 * svod_stage_zero() - zero a range of a BAR
 * @bar: the BAR
 * @off: BAR offset of the first byte, checked by the caller
 * @len: bytes
 *
 * In chunks of 1 MiB through the write-combined mapping (a page at a time
 * through @bar's ops), rescheduling between them; the zeros are posted to
 * the device (wmb()) before this returns.
 *
 * Context: process context; may sleep. The caller keeps the BAR mapped.
 */
void svod_stage_zero(const struct svod_bar *bar, u64 off, u64 len)
{
	size_t n;

	while (len) {
		n = min_t(u64, len, bar->ops ? PAGE_SIZE : SVOD_STAGE_CPU_CHUNK);
		if (bar->ops)
			bar->ops->write(bar, off, page_address(ZERO_PAGE(0)), n);
		else
			memset_io(bar->wc + off, 0, n);
		off += n;
		len -= n;
		cond_resched();
	}
	/* Drain the write-combining buffers before the range is reused. */
	wmb();
}

/*
 * Between two chunks: give the CPU away, stop if a signal is pending. A
 * fatal one ends the transfer; for any other the call is restartable.
 */
static int svod_stage_yield(void)
{
	cond_resched();
	if (fatal_signal_pending(current))
		return -EINTR;
	return signal_pending(current) ? -ERESTARTSYS : 0;
}

/**
 * svod_stage_cpu() - move one chunk between pages and the BAR with the CPU
 * @bar: the BAR
 * @bar_off: BAR offset of the first byte, already checked
 * @pages: the memory side (pinned user pages; kernel pages in KUnit)
 * @head: offset of the first byte in @pages[0]
 * @len: bytes; @pages holds at least DIV_ROUND_UP(@head + @len, PAGE_SIZE)
 * @to_device: true: @pages to BAR; false: BAR to @pages
 *
 * One memcpy_toio()/memcpy_fromio() per page segment; after writes, wmb()
 * drains the write-combining buffers, so the bytes are posted on return.
 *
 * Context: any; does not sleep.
 */
void svod_stage_cpu(const struct svod_bar *bar, u64 bar_off,
		    struct page **pages, unsigned int head, size_t len,
		    bool to_device)
{
	size_t pos = 0, seg;
	void *va;

	while (pos < len) {
		seg = min_t(size_t, len - pos, PAGE_SIZE - head);
		va = kmap_local_page(*pages);
		if (to_device)
			svod_bar_write(bar, bar_off + pos, va + head, seg);
		else
			svod_bar_read(bar, bar_off + pos, va + head, seg);
		kunmap_local(va);
		pos += seg;
		head = 0;
		pages++;
	}
	if (to_device) {
		/* Drain the write-combining buffers: posted before we return. */
		wmb();
	}
}
EXPORT_SYMBOL_IF_KUNIT(svod_stage_cpu);

/**
 * svod_dma_lane_init() - a lane for a DMA channel
 * @lane: the lane
 * @chan: the channel, or NULL (a lane no transfer takes)
 *
 * Context: any.
 */
void svod_dma_lane_init(struct svod_dma_lane *lane, struct dma_chan *chan)
{
	lane->chan = chan;
	spin_lock_init(&lane->lock);
	INIT_LIST_HEAD(&lane->waiting);
	lane->busy = false;
}
EXPORT_SYMBOL_IF_KUNIT(svod_dma_lane_init);

/**
 * svod_dma_lane_enter() - ask for a turn on the channel
 * @lane: the lane
 * @turn: the owner's turn, not in line; @turn->go set
 *
 * If the channel is free, @turn->go runs now, in the caller's context;
 * else once the owners before it are done, in the context of whoever ends
 * the descriptor before it (a completion callback, a reset). @turn->go
 * submits one descriptor, or none; whoever ends that descriptor (or @go,
 * if it submitted none) calls svod_dma_lane_next() once.
 *
 * Context: any; takes the lane's spinlock (not across @turn->go).
 */
void svod_dma_lane_enter(struct svod_dma_lane *lane, struct svod_dma_turn *turn)
{
	unsigned long irq;
	bool now;

	spin_lock_irqsave(&lane->lock, irq);
	now = !lane->busy;
	if (now)
		lane->busy = true;
	else
		list_add_tail(&turn->node, &lane->waiting);
	spin_unlock_irqrestore(&lane->lock, irq);
	if (now)
		turn->go(turn);
}
EXPORT_SYMBOL_IF_KUNIT(svod_dma_lane_enter);

/**
 * svod_dma_lane_next() - the channel's descriptor ended: the next turn
 * @lane: the lane
 *
 * Context: any; takes the lane's spinlock (not across the next @go).
 */
void svod_dma_lane_next(struct svod_dma_lane *lane)
{
	struct svod_dma_turn *turn;
	unsigned long irq;

	spin_lock_irqsave(&lane->lock, irq);
	turn = list_first_entry_or_null(&lane->waiting, struct svod_dma_turn, node);
	if (turn)
		list_del_init(&turn->node);
	else
		lane->busy = false;
	spin_unlock_irqrestore(&lane->lock, irq);
	if (turn)
		turn->go(turn);
}
EXPORT_SYMBOL_IF_KUNIT(svod_dma_lane_next);

/**
 * svod_dma_lane_pass() - back in line, at its end, after one's descriptor
 * @lane: the lane
 * @turn: the turn whose descriptor just ended
 *
 * The owners waiting go first, one descriptor each; then @turn->go again.
 *
 * Context: any; takes the lane's spinlock (not across @go).
 */
void svod_dma_lane_pass(struct svod_dma_lane *lane, struct svod_dma_turn *turn)
{
	struct svod_dma_turn *next;
	unsigned long irq;

	spin_lock_irqsave(&lane->lock, irq);
	list_add_tail(&turn->node, &lane->waiting);
	next = list_first_entry(&lane->waiting, struct svod_dma_turn, node);
	list_del_init(&next->node);
	spin_unlock_irqrestore(&lane->lock, irq);
	next->go(next);
}

/**
 * svod_dma_lane_leave() - leave the line before one's turn
 * @lane: the lane
 * @turn: a turn that entered
 *
 * Context: any; takes the lane's spinlock.
 * Return: true if @turn was waiting and now never goes; false if its
 * @go has run (or is running).
 */
bool svod_dma_lane_leave(struct svod_dma_lane *lane, struct svod_dma_turn *turn)
{
	unsigned long irq;
	bool waiting;

	spin_lock_irqsave(&lane->lock, irq);
	waiting = !list_empty(&turn->node);
	if (waiting)
		list_del_init(&turn->node);
	spin_unlock_irqrestore(&lane->lock, irq);
	return waiting;
}

/**
 * svod_dma_lane_reset() - reset the channel under a hung descriptor
 * @lane: the lane
 * @live: the hung descriptor's flag, taken (set to 0) by whoever ends it
 *
 * Nothing is done if the descriptor's end was taken already (its callback
 * is ending it). Else the lane keeps that descriptor alone on the channel,
 * so the reset drops it alone. When this returns true the engine no longer
 * touches the descriptor's memory (dmaengine_terminate_sync(): the
 * provider has stopped it and no callback of it runs any more), and the
 * next turn has gone.
 *
 * Context: process context; sleeps. Not in a fence-signalling section.
 * Return: true if the channel was reset; false if the callback took the
 * descriptor first (the caller waits for the callback to end it).
 */
bool svod_dma_lane_reset(struct svod_dma_lane *lane, atomic_t *live)
{
	/* Taken first: a late callback of it passes no turn on meanwhile. */
	if (!atomic_xchg(live, 0))
		return false;
	dmaengine_terminate_sync(lane->chan);
	svod_dma_lane_next(lane);
	return true;
}

/* One descriptor of a synchronous chunk, and its waiter. */
struct svod_stage_dma_desc {
	struct svod_dma_turn turn;
	struct svod_dma_lane *lane;
	struct completion done;
	/* 1 from the turn's request until its end is taken. */
	atomic_t live;
	dma_addr_t dst;
	dma_addr_t src;
	size_t len;
	int error;
};

/* The descriptor ended: wake its waiter, then the next turn goes. */
static void svod_stage_dma_end(struct svod_stage_dma_desc *d)
{
	struct svod_dma_lane *lane = d->lane;

	if (!atomic_xchg(&d->live, 0))
		return;
	/* @d is the waiter's: not touched after this. */
	complete(&d->done);
	svod_dma_lane_next(lane);
}

static void svod_stage_dma_done(void *param, const struct dmaengine_result *res)
{
	struct svod_stage_dma_desc *d = param;

	if (res->result != DMA_TRANS_NOERROR)
		WRITE_ONCE(d->error, -EIO);
	svod_stage_dma_end(d);
}

/* Its turn: submit the descriptor, or end it with -EIO. */
static void svod_stage_dma_go(struct svod_dma_turn *turn)
{
	struct svod_stage_dma_desc *d = container_of(turn, struct svod_stage_dma_desc, turn);
	struct dma_chan *chan = d->lane->chan;
	struct dma_async_tx_descriptor *tx;

	tx = dmaengine_prep_dma_memcpy(chan, d->dst, d->src, d->len, DMA_PREP_INTERRUPT);
	if (tx) {
		tx->callback_result = svod_stage_dma_done;
		tx->callback_param = d;
		if (!dma_submit_error(dmaengine_submit(tx))) {
			dma_async_issue_pending(chan);
			return;
		}
	}
	WRITE_ONCE(d->error, -EIO);
	svod_stage_dma_end(d);
}

/*
 * The waiter stops (fatal signal, time up): out of line, or its descriptor
 * waited out; one not done in @timeout more is hung, and reset.
 */
static void svod_stage_dma_stop(struct svod_stage_dma_desc *d, unsigned long timeout)
{
	if (svod_dma_lane_leave(d->lane, &d->turn)) {
		atomic_set(&d->live, 0);
		return;
	}
	if (wait_for_completion_timeout(&d->done, timeout))
		return;
	if (svod_dma_lane_reset(d->lane, &d->live))
		dev_err_ratelimited(d->lane->chan->device->dev,
				    "svod: DMA descriptor of %zu bytes hung on %s; channel reset\n",
				    d->len, dma_chan_name(d->lane->chan));
	else
		/* Its callback is completing @d, on our stack: let it finish. */
		wait_for_completion(&d->done);
}

/**
 * svod_stage_dma_sgt() - move one chunk with a dmaengine channel
 * @lane: the lane of a DMA_MEMCPY channel
 * @bar: the BAR; @bar->phys is mapped for the channel's device
 * @bar_off: BAR offset of the first byte, already checked
 * @sgt: the memory side, not yet DMA-mapped; its length is the chunk's
 * @to_device: true: @sgt to BAR; false: BAR to @sgt
 * @timeout: jiffies allowed for the whole chunk
 *
 * Maps @sgt and the BAR range for the channel's device, moves one mapped
 * segment per descriptor, one turn of @lane each, unmaps. A chunk that
 * stops early (a fatal signal, @timeout) leaves the line or waits out its
 * descriptor on the channel, so nothing of it outlives the mappings and
 * nobody else's descriptors are dropped; only a descriptor still not done
 * @timeout after that resets the channel (it is the only one on it).
 *
 * Context: process context, may sleep.
 * Return: 0; -EINTR on a fatal signal; -ETIMEDOUT if the chunk did not
 * complete in @timeout; -ENOMEM if mapping the memory side ran out of
 * memory; -EIO if another mapping failure, or preparing or submitting a
 * descriptor failed, or the channel reported a failed transfer.
 */
int svod_stage_dma_sgt(struct svod_dma_lane *lane, const struct svod_bar *bar,
		       u64 bar_off, struct sg_table *sgt, bool to_device,
		       unsigned long timeout)
{
	struct device *dma_dev = lane->chan->device->dev;
	enum dma_data_direction mem_dir = to_device ? DMA_TO_DEVICE : DMA_FROM_DEVICE;
	enum dma_data_direction bar_dir = to_device ? DMA_FROM_DEVICE : DMA_TO_DEVICE;
	unsigned long deadline = jiffies + timeout;
	struct svod_stage_dma_desc d = { .lane = lane };
	struct scatterlist *sg;
	dma_addr_t bar_dma, bar_at, mem;
	size_t len = 0;
	unsigned int i;
	long left;
	int ret;

	for_each_sgtable_sg(sgt, sg, i)
		len += sg->length;

	ret = dma_map_sgtable(dma_dev, sgt, mem_dir, 0);
	if (ret)
		return ret == -ENOMEM ? ret : -EIO;
	bar_dma = dma_map_resource(dma_dev, bar->phys + bar_off, len, bar_dir, 0);
	if (dma_mapping_error(dma_dev, bar_dma)) {
		ret = -EIO;
		goto unmap_sgt;
	}

	init_completion(&d.done);
	INIT_LIST_HEAD(&d.turn.node);
	d.turn.go = svod_stage_dma_go;
	bar_at = bar_dma;
	for_each_sgtable_dma_sg(sgt, sg, i) {
		mem = sg_dma_address(sg);
		d.dst = to_device ? bar_at : mem;
		d.src = to_device ? mem : bar_at;
		d.len = sg_dma_len(sg);
		d.error = 0;
		reinit_completion(&d.done);
		atomic_set(&d.live, 1);
		svod_dma_lane_enter(lane, &d.turn);
		left = time_before(jiffies, deadline) ? deadline - jiffies : 0;
		left = wait_for_completion_killable_timeout(&d.done, left);
		if (left <= 0) {
			ret = left ? -EINTR : -ETIMEDOUT;
			if (!left)
				dev_err_ratelimited(bar->dev, "DMA chunk of %zu bytes timed out on %s\n",
						    len, dma_chan_name(lane->chan));
			svod_stage_dma_stop(&d, timeout);
			break;
		}
		ret = READ_ONCE(d.error);
		if (ret)
			break;
		bar_at += d.len;
	}

	dma_unmap_resource(dma_dev, bar_dma, len, bar_dir, 0);
unmap_sgt:
	dma_unmap_sgtable(dma_dev, sgt, mem_dir, 0);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(svod_stage_dma_sgt);

/**
 * svod_stage_pin() - pin user pages for a transfer
 * @uaddr: page-aligned user address
 * @nr: pages to pin
 * @gup: FOLL_WRITE when the device's bytes go into them (READ), else 0
 * @pages: out: the pages
 * @pinned: out: how many are pinned, also on failure
 *
 * pin_user_pages_fast() stops at the first page it cannot pin; pinning
 * from there again returns that page's own errno, which tells a bad
 * address (-EFAULT) from a lack of memory (-ENOMEM).
 *
 * Context: process context; may sleep.
 * Return: 0 with *@pinned == @nr; else -ENOMEM, -EINTR (fatal signal) or
 * -EFAULT, with the *@pinned pages for the caller to unpin.
 */
int svod_stage_pin(unsigned long uaddr, int nr, unsigned int gup,
		   struct page **pages, int *pinned)
{
	int ret;

	*pinned = 0;
	while (*pinned < nr) {
		ret = pin_user_pages_fast(uaddr + (unsigned long)*pinned * PAGE_SIZE,
					  nr - *pinned, gup, pages + *pinned);
		if (ret <= 0) {
			if (ret == -ENOMEM || ret == -EINTR)
				return ret;
			return -EFAULT;
		}
		*pinned += ret;
	}
	return 0;
}

/* Pin one chunk of the user buffer and move it on @lane, or with the CPU. */
static int svod_stage_chunk(struct svod_dma_lane *lane, const struct svod_bar *bar,
			    u64 bar_off, unsigned long uaddr, size_t len,
			    bool to_device, struct page **pages)
{
	unsigned int head = offset_in_page(uaddr);
	int nr = DIV_ROUND_UP(head + len, PAGE_SIZE);
	unsigned long timeout;
	struct sg_table sgt;
	int pinned, ret;

	/* READ writes into the user pages: they must be writable. */
	ret = svod_stage_pin(uaddr & PAGE_MASK, nr, to_device ? 0 : FOLL_WRITE,
			     pages, &pinned);
	if (ret)
		goto unpin;

	if (!lane) {
		svod_stage_cpu(bar, bar_off, pages, head, len, to_device);
		goto unpin;
	}
	ret = sg_alloc_table_from_pages(&sgt, pages, nr, head, len,
					GFP_KERNEL | __GFP_NOWARN);
	if (ret)
		goto unpin;
	timeout = msecs_to_jiffies(READ_ONCE(dma_timeout_ms));
	ret = svod_stage_dma_sgt(lane, bar, bar_off, &sgt, to_device, timeout);
	sg_free_table(&sgt);
unpin:
	unpin_user_pages_dirty_lock(pages, pinned, !to_device && pinned == nr);
	return ret;
}

/*
 * Move the request from @req->resume on in chunks, pinning one chunk at a
 * time; *@done is the cursor (from @req->offset).
 */
static int svod_stage_user(struct svod_dma_lane *lane, const struct svod_bar *bar,
			   u64 bar_off, const struct svod_xfer_req *req,
			   u64 *done)
{
	size_t chunk = lane ? SVOD_STAGE_DMA_CHUNK : SVOD_STAGE_CPU_CHUNK;
	unsigned long uaddr = (unsigned long)req->ubuf;
	struct page *small[SVOD_STAGE_SMALL_PAGES], **pages = small;
	size_t n;
	int ret = 0;

	/* A chunk that does not start on a page boundary spans one more page. */
	if (DIV_ROUND_UP(offset_in_page(uaddr) + min_t(u64, req->length, chunk),
			 PAGE_SIZE) > SVOD_STAGE_SMALL_PAGES) {
		pages = kmalloc_array(chunk / PAGE_SIZE + 1, sizeof(*pages),
				      GFP_KERNEL | __GFP_NOWARN);
		if (!pages)
			return -ENOMEM;
	}

	while (*done < req->length) {
		if (*done > req->resume) {
			ret = svod_stage_yield();
			if (ret)
				break;
		}
		n = min_t(u64, req->length - *done, chunk);
		ret = svod_stage_chunk(lane, bar, bar_off + *done, uaddr + *done,
				       n, req->to_device, pages);
		if (ret)
			break;
		*done += n;
	}

	if (pages != small)
		kfree(pages);
	return ret;
}

/**
 * svod_stage_xfer_on() - svod_stage_xfer() with an explicit DMA lane
 * @lane: the lane of a DMA_MEMCPY channel, or NULL for none
 * @threshold: auto mode uses DMA above this many bytes; 0: never
 * @bar: the BAR the grant lies in
 * @req: the request, with the grant taken from the live record
 * @stats: counters to add the moved bytes to
 * @done: out: bytes moved
 *
 * What svod_stage_xfer() does, on @lane; KUnit passes its fake channel's.
 *
 * Context: process context, may sleep. No locks held.
 * Return: as svod_stage_xfer().
 */
int svod_stage_xfer_on(struct svod_dma_lane *lane, u64 threshold,
		       const struct svod_bar *bar, const struct svod_xfer_req *req,
		       struct svod_stage_stats *stats, u64 *done)
{
	u64 bar_off;
	int engine, ret;

	*done = 0;
	ret = svod_stage_check(bar, req);
	if (ret)
		return ret;
	if (req->resume == req->length) {
		*done = req->length;
		return 0;
	}
	engine = svod_stage_pick(req->flags, req->length, threshold, lane);
	if (engine < 0)
		return engine;
	if (!access_ok(req->ubuf, req->length))
		return -EFAULT;

	bar_off = req->grant_off + req->offset;
	*done = req->resume;
	if (engine == SVOD_XFER_DMA) {
		ret = svod_stage_user(lane, bar, bar_off, req, done);
		atomic64_add(*done - req->resume, &stats->dma_bytes);
	} else {
		ret = svod_stage_user(NULL, bar, bar_off, req, done);
		atomic64_add(*done - req->resume, &stats->cpu_bytes);
	}
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(svod_stage_xfer_on);

/**
 * svod_stage_xfer() - STAGE or READ one range of a live grant
 * @bar: the BAR the grant lies in
 * @req: the request, with the grant taken from the live record
 * @stats: counters to add the moved bytes to
 * @done: out: bytes moved (== @req->length on success)
 *
 * Checks flags and bounds before a single byte moves; a zero @req->length
 * then returns 0 without touching anything. The engine is the one
 * @req->flags forces, else DMA for transfers above the dma_threshold module
 * parameter when a DMA_MEMCPY channel exists, else the CPU. The caller keeps
 * the grant allocated and the BAR mapped for the whole call.
 *
 * Context: process context, may sleep. No locks held.
 * Return: 0; -EINVAL for bad flags or a resume beyond the length; -ERANGE
 * if the range lies beyond the grant; -EOPNOTSUPP if DMA is forced and there
 * is no channel; -EFAULT for a bad user buffer (or, on READ, a read-only
 * one); -ENOMEM if memory ran out (pinning a valid buffer included);
 * -ETIMEDOUT if a DMA chunk did not complete in time; -ERESTARTSYS on a
 * signal between two chunks (restartable from *@done); -EINTR on a fatal
 * signal between two chunks or inside one; -EIO if the DMA channel failed.
 * The engine starts at @req->resume. After an error past the checks, @done
 * counts @req->resume and the whole chunks (1 MiB CPU, 64 KiB DMA) moved
 * after it; a request with nothing left returns 0 with @done @req->length.
 */
int svod_stage_xfer(const struct svod_bar *bar, const struct svod_xfer_req *req,
		    struct svod_stage_stats *stats, u64 *done)
{
	return svod_stage_xfer_on(svod_stage_lane.chan ? &svod_stage_lane : NULL,
				  READ_ONCE(dma_threshold),
				  bar, req, stats, done);
}
EXPORT_SYMBOL_IF_KUNIT(svod_stage_xfer);

/**
 * svod_stage_engine() - the engine a transfer gets, and its DMA lane
 * @flags: SVOD_XFER_* of the request, already checked
 * @length: bytes to move
 * @lane: out: the DMA_MEMCPY channel's lane for SVOD_XFER_DMA, else NULL
 *
 * The choice svod_stage_xfer() makes (the dma_threshold module parameter
 * included), for a caller that runs the transfer itself (async.c). The
 * lane and its channel live until module exit.
 *
 * Context: any.
 * Return: SVOD_XFER_CPU or SVOD_XFER_DMA; -EOPNOTSUPP if DMA is forced but
 * there is no channel.
 */
int svod_stage_engine(u32 flags, u64 length, struct svod_dma_lane **lane)
{
	int engine = svod_stage_pick(flags, length, READ_ONCE(dma_threshold),
				     svod_stage_lane.chan);

	*lane = engine == SVOD_XFER_DMA ? &svod_stage_lane : NULL;
	return engine;
}

/**
 * svod_stage_dma_timeout() - dma_timeout_ms, in jiffies
 *
 * Context: any.
 * Return: the time one descriptor may stay on the engine.
 */
unsigned long svod_stage_dma_timeout(void)
{
	return msecs_to_jiffies(READ_ONCE(dma_timeout_ms));
}

/**
 * svod_stage_init() - acquire a DMA_MEMCPY channel, if the system has one
 *
 * Context: process context, may sleep.
 *
 * Call once from module init, before /dev/svod exists. Without a channel
 * the CPU engine moves every byte and forced DMA fails with -EOPNOTSUPP.
 */
void svod_stage_init(void)
{
	struct dma_chan *chan;
	dma_cap_mask_t mask;

	dma_cap_zero(mask);
	dma_cap_set(DMA_MEMCPY, mask);
	chan = dma_request_chan_by_mask(&mask);
	if (IS_ERR(chan)) {
		pr_info("svod: no DMA_MEMCPY channel (%pe): the CPU engine moves every byte\n",
			chan);
		return;
	}
	svod_dma_lane_init(&svod_stage_lane, chan);
	pr_info("svod: DMA engine: channel %s of %s\n", dma_chan_name(chan),
		dev_name(chan->device->dev));
}

/**
 * svod_stage_exit() - release the DMA channel
 *
 * Context: process context, may sleep.
 *
 * Call once from module exit, after /dev/svod is gone and no transfer runs.
 */
void svod_stage_exit(void)
{
	if (svod_stage_lane.chan)
		dma_release_channel(svod_stage_lane.chan);
	svod_stage_lane.chan = NULL;
}
