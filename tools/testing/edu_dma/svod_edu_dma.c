// SPDX-License-Identifier: GPL-2.0
/*
 * svod_edu_dma: a test-only dmaengine provider for QEMU's edu device
 * (PCI 1234:11e8), so svod's DMA engine moves real bus-master DMA in a guest.
 * Never installed.
 *
 * Two DMA_MEMCPY channels on edu's one engine: svod.ko takes the first for
 * its lifetime, and the second is left for another client (t_p2p's test
 * importer). edu can only copy between a bus address and its own 4 KiB
 * buffer (device address 0x40000), so each memcpy descriptor is done in
 * hops of at most 4095 bytes (see EDU_HOP_MAX): source bus address -> edu
 * buffer -> destination bus address. One worker runs the issued
 * descriptors of both channels, each channel's in order, polling edu's DMA
 * command register (each hop takes about 100 ms of QEMU's virtual clock).
 * Register facts: /work/shared/qemu-devices.md (QEMU docs/specs/edu.txt).
 *
 * Lock ordering: edu_dma.lock is the only lock; callbacks run without it.
 */

#include <linux/dmaengine.h>
#include <linux/dma-mapping.h>
#include <linux/io.h>
#include <linux/iopoll.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#define EDU_REG_ID		0x00
#define EDU_ID_MAGIC		0xed
#define EDU_REG_DMA_SRC		0x80
#define EDU_REG_DMA_DST		0x88
#define EDU_REG_DMA_CNT		0x90
#define EDU_REG_DMA_CMD		0x98
#define EDU_DMA_START		BIT(0)
#define EDU_DMA_FROM_EDU	BIT(1)

#define EDU_BUF_ADDR		0x40000
/*
 * The buffer holds 4096 bytes, but QEMU 7.2's range check wants the end of
 * a transfer strictly inside it (a 4096-byte hop aborts QEMU with "DMA range
 * ... out of bounds"): a hop moves at most 4095 bytes.
 */
#define EDU_HOP_MAX		4095

/* A hop takes ~100 ms of virtual time; a loaded TCG host may take longer. */
#define EDU_HOP_POLL_US		1000
#define EDU_HOP_TIMEOUT_US	(5 * USEC_PER_SEC)

/**
 * struct edu_desc - one memcpy descriptor
 * @tx: what dmaengine clients see
 * @node: in edu_dma.submitted or edu_dma.issued
 * @dst: destination bus address
 * @src: source bus address
 * @len: bytes
 */
struct edu_desc {
	struct dma_async_tx_descriptor tx;
	struct list_head node;
	dma_addr_t dst;
	dma_addr_t src;
	size_t len;
};

#define EDU_NR_CHANS		2

/**
 * struct edu_chan - one channel
 * @chan: what dmaengine clients see
 * @edu: its device
 * @submitted: descriptors submitted, not yet issued
 * @issued: descriptors issued, waiting for the worker
 * @abort_active: terminate_all was called while the worker ran one of this
 *	channel's descriptors: drop it
 */
struct edu_chan {
	struct dma_chan chan;
	struct edu_dma *edu;
	struct list_head submitted;
	struct list_head issued;
	bool abort_active;
};

/**
 * struct edu_dma - one edu device and its channels
 * @dma: the dmaengine device
 * @chans: its channels
 * @regs: BAR0
 * @lock: see below
 * @active: the descriptor the worker runs, or NULL
 * @next: the channel the worker looks at first (round robin)
 * @work: the worker
 */
struct edu_dma {
	struct dma_device dma;
	struct edu_chan chans[EDU_NR_CHANS];
	void __iomem *regs;
	/*
	 * Protects the channels' lists, their abort_active and cookies
	 * (chan.cookie, chan.completed_cookie), @active and @next.
	 */
	spinlock_t lock;
	struct edu_desc *active;
	unsigned int next;
	struct work_struct work;
};

static struct edu_chan *to_ec(struct dma_chan *chan)
{
	return container_of(chan, struct edu_chan, chan);
}

static struct edu_dma *to_edu(struct dma_chan *chan)
{
	return to_ec(chan)->edu;
}

static dma_cookie_t edu_tx_submit(struct dma_async_tx_descriptor *tx)
{
	struct edu_desc *d = container_of(tx, struct edu_desc, tx);
	struct dma_chan *chan = tx->chan;
	struct edu_dma *edu = to_edu(chan);
	dma_cookie_t cookie;

	spin_lock_bh(&edu->lock);
	cookie = chan->cookie + 1;
	if (cookie < DMA_MIN_COOKIE)
		cookie = DMA_MIN_COOKIE;
	chan->cookie = cookie;
	tx->cookie = cookie;
	list_add_tail(&d->node, &to_ec(chan)->submitted);
	spin_unlock_bh(&edu->lock);
	return cookie;
}

static struct dma_async_tx_descriptor *
edu_prep_dma_memcpy(struct dma_chan *chan, dma_addr_t dst, dma_addr_t src,
		    size_t len, unsigned long flags)
{
	struct edu_desc *d;

	if (!len)
		return NULL;
	d = kzalloc(sizeof(*d), GFP_NOWAIT);
	if (!d)
		return NULL;
	dma_async_tx_descriptor_init(&d->tx, chan);
	d->tx.flags = flags;
	d->tx.tx_submit = edu_tx_submit;
	d->dst = dst;
	d->src = src;
	d->len = len;
	return &d->tx;
}

static void edu_issue_pending(struct dma_chan *chan)
{
	struct edu_dma *edu = to_edu(chan);
	struct edu_chan *ec = to_ec(chan);

	spin_lock_bh(&edu->lock);
	list_splice_tail_init(&ec->submitted, &ec->issued);
	spin_unlock_bh(&edu->lock);
	schedule_work(&edu->work);
}

static enum dma_status edu_tx_status(struct dma_chan *chan, dma_cookie_t cookie,
				     struct dma_tx_state *state)
{
	struct edu_dma *edu = to_edu(chan);
	dma_cookie_t used, done;

	spin_lock_bh(&edu->lock);
	used = chan->cookie;
	done = chan->completed_cookie;
	spin_unlock_bh(&edu->lock);
	dma_set_tx_state(state, done, used, 0);
	return dma_async_is_complete(cookie, done, used);
}

static void edu_free_list(struct list_head *list)
{
	struct edu_desc *d, *tmp;

	list_for_each_entry_safe(d, tmp, list, node) {
		list_del(&d->node);
		kfree(d);
	}
}

static int edu_terminate_all(struct dma_chan *chan)
{
	struct edu_dma *edu = to_edu(chan);
	struct edu_chan *ec = to_ec(chan);
	LIST_HEAD(dropped);

	spin_lock_bh(&edu->lock);
	list_splice_tail_init(&ec->submitted, &dropped);
	list_splice_tail_init(&ec->issued, &dropped);
	if (edu->active && edu->active->tx.chan == chan)
		ec->abort_active = true;
	spin_unlock_bh(&edu->lock);
	edu_free_list(&dropped);
	return 0;
}

static void edu_synchronize(struct dma_chan *chan)
{
	flush_work(&to_edu(chan)->work);
}

static void edu_free_chan_resources(struct dma_chan *chan)
{
	edu_terminate_all(chan);
	edu_synchronize(chan);
}

/*
 * One hop: edu buffer <-> bus address, started and polled to its end. It
 * never gives up on a running hop: edu reads its address registers when
 * the transfer fires, so a hop abandoned while running would move bytes
 * later, after its descriptor's memory was unmapped and unpinned, or to
 * the next hop's addresses. A terminate waits (edu_synchronize()) for the
 * hop in flight, so once it returns the device touches nothing of it.
 */
static void edu_hop(struct edu_dma *edu, dma_addr_t src, dma_addr_t dst,
		    size_t len, u64 cmd)
{
	u64 busy;

	writeq(src, edu->regs + EDU_REG_DMA_SRC);
	writeq(dst, edu->regs + EDU_REG_DMA_DST);
	writeq(len, edu->regs + EDU_REG_DMA_CNT);
	writeq(cmd | EDU_DMA_START, edu->regs + EDU_REG_DMA_CMD);
	while (readq_poll_timeout(edu->regs + EDU_REG_DMA_CMD, busy,
				  !(busy & EDU_DMA_START), EDU_HOP_POLL_US,
				  EDU_HOP_TIMEOUT_US))
		dev_warn_ratelimited(edu->dma.dev, "DMA hop still running after %lu s\n",
				     EDU_HOP_TIMEOUT_US / USEC_PER_SEC);
}

/* Run @d in hops; false if terminate_all dropped it on the way. */
static bool edu_run(struct edu_dma *edu, struct edu_desc *d)
{
	struct edu_chan *ec = to_ec(d->tx.chan);
	size_t pos, n;
	bool aborted;

	for (pos = 0; pos < d->len; pos += n) {
		n = min_t(size_t, d->len - pos, EDU_HOP_MAX);
		edu_hop(edu, d->src + pos, EDU_BUF_ADDR, n, 0);
		edu_hop(edu, EDU_BUF_ADDR, d->dst + pos, n, EDU_DMA_FROM_EDU);
		spin_lock_bh(&edu->lock);
		aborted = ec->abort_active;
		spin_unlock_bh(&edu->lock);
		if (aborted)
			return false;
	}
	return true;
}

/* The next issued descriptor, the channels taken in turn; edu's lock held. */
static struct edu_desc *edu_next(struct edu_dma *edu)
{
	struct edu_desc *d;
	unsigned int i, c;

	for (i = 0; i < EDU_NR_CHANS; i++) {
		c = (edu->next + i) % EDU_NR_CHANS;
		d = list_first_entry_or_null(&edu->chans[c].issued, struct edu_desc, node);
		if (d) {
			list_del(&d->node);
			edu->chans[c].abort_active = false;
			edu->next = c + 1;
			return d;
		}
	}
	return NULL;
}

static void edu_work(struct work_struct *work)
{
	struct edu_dma *edu = container_of(work, struct edu_dma, work);
	struct dmaengine_result res = { .result = DMA_TRANS_NOERROR };
	struct edu_desc *d;
	bool keep;

	for (;;) {
		spin_lock_bh(&edu->lock);
		d = edu_next(edu);
		edu->active = d;
		spin_unlock_bh(&edu->lock);
		if (!d)
			return;

		keep = edu_run(edu, d);

		spin_lock_bh(&edu->lock);
		keep = keep && !to_ec(d->tx.chan)->abort_active;
		edu->active = NULL;
		if (keep)
			d->tx.chan->completed_cookie = d->tx.cookie;
		spin_unlock_bh(&edu->lock);

		if (keep && d->tx.callback_result)
			d->tx.callback_result(d->tx.callback_param, &res);
		else if (keep && d->tx.callback)
			d->tx.callback(d->tx.callback_param);
		kfree(d);
	}
}

static int edu_dma_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct edu_dma *edu;
	unsigned int i;
	u32 ident;
	int ret;

	edu = devm_kzalloc(&pdev->dev, sizeof(*edu), GFP_KERNEL);
	if (!edu)
		return -ENOMEM;
	ret = pcim_enable_device(pdev);
	if (ret)
		return ret;
	ret = pcim_iomap_regions(pdev, BIT(0), KBUILD_MODNAME);
	if (ret)
		return ret;
	edu->regs = pcim_iomap_table(pdev)[0];
	ident = readl(edu->regs + EDU_REG_ID);
	if ((ident & 0xff) != EDU_ID_MAGIC) {
		dev_err(&pdev->dev, "not an edu device: id %#x\n", ident);
		return -ENODEV;
	}
	/* Without 64 bits the BAR of another device may be out of reach. */
	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		return ret;
	pci_set_master(pdev);

	spin_lock_init(&edu->lock);
	INIT_WORK(&edu->work, edu_work);

	edu->dma.dev = &pdev->dev;
	INIT_LIST_HEAD(&edu->dma.channels);
	dma_cap_set(DMA_MEMCPY, edu->dma.cap_mask);
	dma_cap_set(DMA_PRIVATE, edu->dma.cap_mask);
	edu->dma.copy_align = DMAENGINE_ALIGN_1_BYTE;
	edu->dma.device_prep_dma_memcpy = edu_prep_dma_memcpy;
	edu->dma.device_issue_pending = edu_issue_pending;
	edu->dma.device_tx_status = edu_tx_status;
	edu->dma.device_terminate_all = edu_terminate_all;
	edu->dma.device_synchronize = edu_synchronize;
	edu->dma.device_free_chan_resources = edu_free_chan_resources;
	for (i = 0; i < EDU_NR_CHANS; i++) {
		edu->chans[i].edu = edu;
		INIT_LIST_HEAD(&edu->chans[i].submitted);
		INIT_LIST_HEAD(&edu->chans[i].issued);
		edu->chans[i].chan.device = &edu->dma;
		list_add_tail(&edu->chans[i].chan.device_node, &edu->dma.channels);
	}

	ret = dma_async_device_register(&edu->dma);
	if (ret)
		return ret;
	pci_set_drvdata(pdev, edu);
	dev_info(&pdev->dev, "edu id %#x: DMA_MEMCPY channels %s, %s\n", ident,
		 dma_chan_name(&edu->chans[0].chan), dma_chan_name(&edu->chans[1].chan));
	return 0;
}

static void edu_dma_remove(struct pci_dev *pdev)
{
	struct edu_dma *edu = pci_get_drvdata(pdev);

	dma_async_device_unregister(&edu->dma);
	flush_work(&edu->work);
}

static const struct pci_device_id edu_dma_ids[] = {
	{ PCI_DEVICE(0x1234, 0x11e8) },
	{ }
};
MODULE_DEVICE_TABLE(pci, edu_dma_ids);

static struct pci_driver edu_dma_driver = {
	.name = KBUILD_MODNAME,
	.id_table = edu_dma_ids,
	.probe = edu_dma_probe,
	.remove = edu_dma_remove,
	/* A client holds the channel for its lifetime: no unbind under it. */
	.driver.suppress_bind_attrs = true,
};
module_pci_driver(edu_dma_driver);

MODULE_DESCRIPTION("svod test-only: dmaengine DMA_MEMCPY provider on QEMU's edu device");
MODULE_LICENSE("GPL");
