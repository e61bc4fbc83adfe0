// SPDX-License-Identifier: GPL-2.0
/*
 * svod_p2p_importer: a test-only dma-buf importer in the kernel, for
 * t_p2p (tools/harness/t_p2p.c). No driver in QEMU's guest attaches a
 * dma-buf peer-to-peer, so this one does it the way RDMA's importers do,
 * on behalf of QEMU's edu device, the guest's bus-master: a dynamic
 * attachment that allows peer-to-peer and is told when to move
 * (ib_umem_dmabuf_get() with on-demand paging), or one that pins first
 * (ib_umem_dmabuf_get_pinned()), which svod refuses. It moves bytes through
 * the table with edu's second DMA channel (svod_edu_dma; svod.ko holds the
 * first).
 *
 * /sys/kernel/debug/svod_p2p_importer/ctl takes SVOD_P2P_IOCTL with a
 * struct svod_p2p_req (tools/harness/p2p_importer.h has the same definitions):
 * op STATIC attaches statically (dma_buf_attach()) and detaches; P2P_HOLD
 * attaches dynamically with allow_peer2peer, maps and keeps the attachment
 * (one at a time) and reports its table; when the exporter calls its
 * move_notify, the importer counts it and unmaps the table at once, as
 * ib_umem_dmabuf's invalidation does; MAP maps the held attachment again if
 * it has no table (ENODEV from a revoked dma-buf) and reports it; STATE
 * reports in @moves how often move_notify was called since HOLD and in
 * @mapped whether a table is held; RELEASE unmaps and detaches it; PIN
 * attaches, pins and maps as ib_umem_dmabuf_get_pinned() does, lets go,
 * and returns what the pin and the map gave;
 * NOT_PCI attaches as P2P_HOLD does with a device that is not PCI, and
 * lets go; WRITE has edu copy @length bytes (at most 64 KiB) of a pattern
 * (tools/harness/common.c's xorshift of @seed) from memory to @offset of
 * the held attachment's range, through its table (mapped again first if
 * move_notify took it), and waits for the copy, under the reservation
 * lock, so a move waits for it.
 * WRONG maps wrongly on purpose, for t_iommu: edu copies @length bytes (at
 * most a page) of the pattern to a kernel page by the page's CPU physical
 * address, which nothing mapped for edu, and reports in @len how many of
 * the page's bytes it wrote. With an IOMMU translating, the write is
 * an IOMMU fault and nothing changes; without one it lands.
 * The edu device is the importer's; ENODEV without one.
 */
#include <linux/completion.h>
#include <linux/debugfs.h>
#include <linux/dmaengine.h>
#include <linux/dma-mapping.h>
#include <linux/device.h>
#include <linux/dma-buf.h>
#include <linux/dma-resv.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/scatterlist.h>
#include <linux/sizes.h>
#include <linux/slab.h>

struct svod_p2p_req {
	__s32 fd;
	__u32 op;
	__u64 addr;	/* out: first entry's DMA address */
	__u64 len;	/* out: sum of the entries' DMA lengths */
	__u32 nents;	/* out */
	__u32 contiguous;	/* out: 1 if each entry starts where the last ended */
	__u64 offset;	/* WRITE: where in the range */
	__u32 length;	/* WRITE: bytes */
	__u32 seed;	/* WRITE: the pattern's */
	__u32 moves;	/* STATE: move_notify calls since HOLD */
	__u32 mapped;	/* STATE: 1 if the held attachment has a table */
};

enum {
	SVOD_P2P_STATIC, SVOD_P2P_HOLD, SVOD_P2P_RELEASE, SVOD_P2P_NOT_PCI, SVOD_P2P_WRITE,
	SVOD_P2P_WRONG, SVOD_P2P_PIN, SVOD_P2P_MAP, SVOD_P2P_STATE,
};

#define SVOD_P2P_MAX_WRITE	SZ_64K

#define SVOD_P2P_IOCTL	_IOWR('S', 0x70, struct svod_p2p_req)

static struct dentry *dir;
static struct device *not_pci;
static DEFINE_MUTEX(lock);
/* The held attachment (@lock); its table and moves are under its reservation lock. */
static struct dma_buf_attachment *held;
static struct sg_table *held_sgt;
static unsigned int held_moves;

/*
 * The exporter moves or revokes the buffer: as ib_umem_dmabuf's
 * invalidation, the table is unmapped at once (the reservation lock is
 * held) and mapped again only when next needed. Only the held attachment
 * has @importer_priv; PIN's and NOT_PCI's never keep a table.
 */
static void p2p_move_notify(struct dma_buf_attachment *attach)
{
	dma_resv_assert_held(attach->dmabuf->resv);
	if (!attach->importer_priv)
		return;
	held_moves++;
	if (held_sgt) {
		dma_buf_unmap_attachment(attach, held_sgt, DMA_BIDIRECTIONAL);
		held_sgt = NULL;
	}
}

static const struct dma_buf_attach_ops p2p_ops = {
	.allow_peer2peer = true,
	.move_notify = p2p_move_notify,
};

static void p2p_release(void)
{
	struct dma_buf *dmabuf;

	if (!held)
		return;
	dmabuf = held->dmabuf;
	dma_resv_lock(dmabuf->resv, NULL);
	if (held_sgt)
		dma_buf_unmap_attachment(held, held_sgt, DMA_BIDIRECTIONAL);
	held_sgt = NULL;
	dma_resv_unlock(dmabuf->resv);
	dma_buf_detach(dmabuf, held);
	dma_buf_put(dmabuf);
	held = NULL;
}

/* Reports @sgt in @req. */
static void p2p_report(struct sg_table *sgt, struct svod_p2p_req *req)
{
	struct scatterlist *sg;
	dma_addr_t next = 0;
	unsigned int i;

	req->addr = sg_dma_address(sgt->sgl);
	req->len = 0;
	req->nents = sgt->nents;
	req->contiguous = 1;
	for_each_sgtable_dma_sg(sgt, sg, i) {
		if (i && sg_dma_address(sg) != next)
			req->contiguous = 0;
		next = sg_dma_address(sg) + sg_dma_len(sg);
		req->len += sg_dma_len(sg);
	}
}

/* The held attachment's table, mapped again if a move took it; the caller holds its lock. */
static int p2p_map_held(void)
{
	struct sg_table *sgt;

	dma_resv_assert_held(held->dmabuf->resv);
	if (held_sgt)
		return 0;
	sgt = dma_buf_map_attachment(held, DMA_BIDIRECTIONAL);
	if (IS_ERR(sgt))
		return PTR_ERR(sgt);
	held_sgt = sgt;
	return 0;
}

static int p2p_hold(struct dma_buf *dmabuf, struct device *dev, struct svod_p2p_req *req)
{
	struct dma_buf_attachment *attach;
	int ret;

	/* importer_priv marks the attachment whose table move_notify takes. */
	attach = dma_buf_dynamic_attach(dmabuf, dev, &p2p_ops, &held);
	if (IS_ERR(attach))
		return PTR_ERR(attach);
	held = attach;
	dma_resv_lock(dmabuf->resv, NULL);
	held_moves = 0;
	ret = p2p_map_held();
	if (!ret)
		p2p_report(held_sgt, req);
	dma_resv_unlock(dmabuf->resv);
	if (ret) {
		dma_buf_detach(dmabuf, attach);
		held = NULL;
	}
	return ret;
}

/* As ib_umem_dmabuf_get_pinned(): pin, then map, under the lock; then let go. */
static int p2p_pin(struct dma_buf *dmabuf, struct device *dev)
{
	struct dma_buf_attachment *attach;
	struct sg_table *sgt;
	int ret;

	attach = dma_buf_dynamic_attach(dmabuf, dev, &p2p_ops, NULL);
	if (IS_ERR(attach))
		return PTR_ERR(attach);
	dma_resv_lock(dmabuf->resv, NULL);
	ret = dma_buf_pin(attach);
	if (!ret) {
		sgt = dma_buf_map_attachment(attach, DMA_BIDIRECTIONAL);
		ret = PTR_ERR_OR_ZERO(sgt);
		if (!ret)
			dma_buf_unmap_attachment(attach, sgt, DMA_BIDIRECTIONAL);
		dma_buf_unpin(attach);
	}
	dma_resv_unlock(dmabuf->resv);
	dma_buf_detach(dmabuf, attach);
	return ret;
}

static void p2p_done(void *param)
{
	complete(param);
}

/*
 * One memcpy descriptor per table entry that [@offset, @offset + @len)
 * touches, the last one completing @done (a channel runs its descriptors
 * in order); 0 or a negative errno.
 */
static int p2p_queue(struct dma_chan *chan, struct sg_table *sgt, u64 offset,
		     dma_addr_t src, size_t len, struct completion *done)
{
	struct dma_async_tx_descriptor *tx;
	struct scatterlist *sg;
	u64 start = 0, pos, n;
	unsigned int i;

	for_each_sgtable_dma_sg(sgt, sg, i) {
		if (!len)
			break;
		if (offset < start + sg_dma_len(sg)) {
			pos = offset - start;
			n = min_t(u64, len, sg_dma_len(sg) - pos);
			tx = dmaengine_prep_dma_memcpy(chan, sg_dma_address(sg) + pos, src, n,
						       DMA_PREP_INTERRUPT);
			if (!tx)
				return -ENOMEM;
			if (n == len) {
				tx->callback = p2p_done;
				tx->callback_param = done;
			}
			if (dma_submit_error(dmaengine_submit(tx)))
				return -EIO;
			offset += n;
			src += n;
			len -= n;
		}
		start += sg_dma_len(sg);
	}
	return len ? -ERANGE : 0;
}

/* tools/harness/common.c's xorshift of @seed, @len bytes of it. */
static void p2p_pattern(u8 *buf, size_t len, u32 seed)
{
	size_t i;

	for (i = 0; i < len; i++) {
		seed ^= seed << 13;
		seed ^= seed >> 17;
		seed ^= seed << 5;
		buf[i] = (u8)seed;
	}
}

/* edu copies the pattern to @offset of @sgt's range and waits for the copy. */
static int p2p_write(struct svod_p2p_req *req, struct sg_table *sgt)
{
	DECLARE_COMPLETION_ONSTACK(done);
	struct dma_chan *chan;
	dma_cap_mask_t mask;
	dma_addr_t src;
	u8 *buf;
	int ret;

	if (!req->length || req->length > SVOD_P2P_MAX_WRITE)
		return -EINVAL;
	dma_cap_zero(mask);
	dma_cap_set(DMA_MEMCPY, mask);
	chan = dma_request_chan_by_mask(&mask);
	if (IS_ERR(chan))
		return PTR_ERR(chan);
	ret = -ENOMEM;
	buf = kmalloc(req->length, GFP_KERNEL);
	if (!buf)
		goto release;
	p2p_pattern(buf, req->length, req->seed);
	src = dma_map_single(chan->device->dev, buf, req->length, DMA_TO_DEVICE);
	ret = dma_mapping_error(chan->device->dev, src);
	if (ret)
		goto free;
	/* A hop takes about 100 ms of edu's time: 60 s is for a broken engine. */
	ret = p2p_queue(chan, sgt, req->offset, src, req->length, &done);
	if (!ret) {
		dma_async_issue_pending(chan);
		if (!wait_for_completion_timeout(&done, 60 * HZ))
			ret = -ETIMEDOUT;
	}
	if (ret)
		dmaengine_terminate_sync(chan);
	dma_unmap_single(chan->device->dev, src, req->length, DMA_TO_DEVICE);
free:
	kfree(buf);
release:
	dma_release_channel(chan);
	return ret;
}

/*
 * The wrong mapping: a one-entry table of a page's CPU physical address.
 * The page starts as the pattern's complement, so each byte that matches
 * the pattern afterwards is one edu wrote.
 */
static int p2p_wrong(struct svod_p2p_req *req)
{
	struct page *page = alloc_page(GFP_KERNEL);
	struct scatterlist sg;
	struct sg_table sgt = { .sgl = &sg, .nents = 1, .orig_nents = 1 };
	u8 *p, *want;
	int ret, i;

	if (!page)
		return -ENOMEM;
	ret = -EINVAL;
	if (req->length > PAGE_SIZE)
		goto out;
	ret = -ENOMEM;
	want = kmalloc(PAGE_SIZE, GFP_KERNEL);
	if (!want)
		goto out;
	p = page_address(page);
	p2p_pattern(want, PAGE_SIZE, req->seed);
	for (i = 0; i < PAGE_SIZE; i++)
		p[i] = ~want[i];
	sg_init_table(&sg, 1);
	sg_dma_address(&sg) = page_to_phys(page);
	sg_dma_len(&sg) = PAGE_SIZE;
	req->offset = 0;
	ret = p2p_write(req, &sgt);
	for (req->len = 0, i = 0; i < PAGE_SIZE; i++)
		req->len += p[i] == want[i];
	kfree(want);
out:
	__free_page(page);
	return ret;
}

/* The held attachment's op under its reservation lock: WRITE, MAP or STATE. */
static int p2p_held_op(struct svod_p2p_req *req)
{
	struct dma_resv *resv;
	int ret = 0;

	if (!held)
		return -ENOENT;
	resv = held->dmabuf->resv;
	dma_resv_lock(resv, NULL);
	if (req->op == SVOD_P2P_STATE) {
		req->moves = held_moves;
		req->mapped = !!held_sgt;
	} else {
		ret = p2p_map_held();
		if (!ret && req->op == SVOD_P2P_MAP)
			p2p_report(held_sgt, req);
		else if (!ret)
			ret = p2p_write(req, held_sgt);
	}
	dma_resv_unlock(resv);
	return ret;
}

static long p2p_ioctl(struct file *f, unsigned int cmd, unsigned long arg)
{
	struct pci_dev *edu = pci_get_device(0x1234, 0x11e8, NULL);
	struct dma_buf_attachment *attach;
	struct svod_p2p_req req;
	struct dma_buf *dmabuf = NULL;
	long ret;

	if (cmd != SVOD_P2P_IOCTL) {
		ret = -ENOTTY;
		goto out;
	}
	if (copy_from_user(&req, (void __user *)arg, sizeof(req))) {
		ret = -EFAULT;
		goto out;
	}
	mutex_lock(&lock);
	if (req.op == SVOD_P2P_RELEASE) {
		ret = held ? 0 : -ENOENT;
		p2p_release();
		goto unlock;
	}
	if (req.op == SVOD_P2P_WRITE || req.op == SVOD_P2P_MAP || req.op == SVOD_P2P_STATE) {
		ret = p2p_held_op(&req);
		if (!ret && copy_to_user((void __user *)arg, &req, sizeof(req)))
			ret = -EFAULT;
		goto unlock;
	}
	if (req.op == SVOD_P2P_WRONG) {
		ret = edu ? p2p_wrong(&req) : -ENODEV;
		if (!ret && copy_to_user((void __user *)arg, &req, sizeof(req)))
			ret = -EFAULT;
		goto unlock;
	}
	ret = -ENODEV;
	if (!edu)
		goto unlock;
	dmabuf = dma_buf_get(req.fd);
	if (IS_ERR(dmabuf)) {
		ret = PTR_ERR(dmabuf);
		dmabuf = NULL;
		goto unlock;
	}
	switch (req.op) {
	case SVOD_P2P_STATIC:
		attach = dma_buf_attach(dmabuf, &edu->dev);
		ret = PTR_ERR_OR_ZERO(attach);
		if (!ret)
			dma_buf_detach(dmabuf, attach);
		break;
	case SVOD_P2P_HOLD:
		ret = held ? -EBUSY : p2p_hold(dmabuf, &edu->dev, &req);
		if (!ret)
			dmabuf = NULL;	/* the held attachment keeps the reference */
		break;
	case SVOD_P2P_PIN:
		ret = p2p_pin(dmabuf, &edu->dev);
		break;
	case SVOD_P2P_NOT_PCI:
		ret = held ? -EBUSY : p2p_hold(dmabuf, not_pci, &req);
		p2p_release();
		break;
	default:
		ret = -EINVAL;
	}
	if (!ret && copy_to_user((void __user *)arg, &req, sizeof(req)))
		ret = -EFAULT;
unlock:
	mutex_unlock(&lock);
	if (dmabuf)
		dma_buf_put(dmabuf);
out:
	pci_dev_put(edu);
	return ret;
}

static const struct file_operations p2p_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = p2p_ioctl,
};

static int __init p2p_init(void)
{
	not_pci = root_device_register("svod_p2p_not_pci");
	if (IS_ERR(not_pci))
		return PTR_ERR(not_pci);
	dir = debugfs_create_dir("svod_p2p_importer", NULL);
	debugfs_create_file("ctl", 0600, dir, NULL, &p2p_fops);
	return 0;
}

static void __exit p2p_exit(void)
{
	debugfs_remove_recursive(dir);
	mutex_lock(&lock);
	p2p_release();
	mutex_unlock(&lock);
	root_device_unregister(not_pci);
}

module_init(p2p_init);
module_exit(p2p_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("svod test-only: a peer-to-peer dma-buf importer for t_p2p");
MODULE_IMPORT_NS(DMA_BUF);
