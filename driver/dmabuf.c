// SPDX-License-Identifier: GPL-2.0
/*
 * svod dma-bufs: sharing an allocation on purpose (Documentation/uapi.rst,
 * "Sharing"), after drm_prime.c.
 *
 * - SVOD_IOCTL_EXPORT makes a new dma-buf of a handle's whole allocation,
 *   read-only or read-write (the fd's mode). The dma-buf holds a reference
 *   on the allocation: the range stays out of its tier, charged to the file
 *   that allocated it, until the dma-buf and every handle are gone.
 * - SVOD_IOCTL_IMPORT gives the caller a new handle of its own for the
 *   allocation of a dma-buf of svod, with the access the dma-buf grants.
 *   A handle still names nothing in another file: the fd is the capability.
 * - mmap() of the dma-buf maps the allocation as /dev/svod does (mmap.c),
 *   revoked when the device goes.
 * - Importers in the kernel: vmap (x86, read-write dma-bufs), the way
 *   videobuf2 imports (svod_dmabuf_vmap()), which the device's unbind
 *   waits for, and dynamic attachments of devices that reach the BAR
 *   peer-to-peer (svod_dmabuf_attach()), which it revokes instead: svod is
 *   a dynamic exporter, as vfio's BAR dma-buf is, mapping under the
 *   reservation lock; the unbind marks each dma-buf revoked and tells its
 *   importers with dma_buf_move_notify() (svod_dev_tier_revoke_dmabufs()),
 *   and their next map is -ENODEV. An importer's own pin is refused
 *   (svod_dmabuf_pin()). Documentation/svod.rst, "Revocation", says why.
 *
 * Lock order: the file's lock, then the tier's lock, then svod_mmap_sem
 * (as MAP_OFFSET); the dma-buf core's locks are taken outside all of them,
 * except a dma-buf's reservation lock, which the tier's dmabuf_lock nests
 * (revocation).
 */
#include <kunit/visibility.h>
#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/dma-resv.h>
#include <linux/fcntl.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/pci-p2pdma.h>
#include <linux/scatterlist.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/svod.h>

#include "alloc.h"
#include "dev.h"
#include "dmabuf.h"
#include "file.h"
#include "ioctl.h"
#include "mmap.h"
#include "tier.h"

/**
 * struct svod_dmabuf - the exporter's side of one dma-buf
 * @td: its entry in the tier's dma-bufs, and whether it is revoked
 * @alloc: the allocation (holds a reference)
 * @map: the range its mmap() maps, NULL once revoked (svod_mmap_sem)
 * @counted: counted in the allocation's exports (svod_account_export())
 * @sink: the page behind the importers' vmap of a gone device, or NULL
 *	while they map the BAR (svod_dmabuf_vmap(); the dma-buf's lock)
 */
struct svod_dmabuf {
	struct svod_tier_dmabuf td;
	struct svod_allocation *alloc;
	struct svod_map *map;
	bool counted;
	struct page *sink;
};

/**
 * struct svod_dmabuf_attach - the exporter's count of one attachment
 * @pins: pin calls not yet undone (the importer's and the core's)
 * @maps: tables handed out and not yet unmapped
 *
 * Both change under the dma-buf's reservation lock (dynamic attachments
 * only: svod_dmabuf_attach()).
 */
struct svod_dmabuf_attach {
	unsigned int pins;
	unsigned int maps;
};

/**
 * svod_dmabuf_own_pins() - the pins an importer took itself
 * @pins: the attachment's pins, the core's included
 * @maps: its tables, the one being made included
 * @core_pins: the core pins around each table (6.1 without
 *	CONFIG_DMABUF_MOVE_NOTIFY: dma_buf_map_attachment() pins, then maps)
 *
 * Context: any context.
 * Return: the pins dma_buf_pin() took, which svod refuses.
 */
unsigned int svod_dmabuf_own_pins(unsigned int pins, unsigned int maps, bool core_pins)
{
	if (!core_pins)
		return pins;
	return pins > maps ? pins - maps : 0;
}
EXPORT_SYMBOL_IF_KUNIT(svod_dmabuf_own_pins);

/*
 * Attachments, for an importer whose device reaches the BAR peer-to-peer.
 * BAR memory has no struct pages: the importer gets a table of the
 * allocation's addresses for its device, by the route its requests take
 * (svod_dmabuf_bus_route()): the PCI bus address where a switch routes
 * them, an address mapped with dma_map_resource() (an IOVA under an IOMMU)
 * where they go through the host bridge, as upstream's dma-buf mapping
 * helpers choose by pci_p2pdma_map_type(). Only an importer that allows
 * peer-to-peer (in 6.1 a dynamic one with allow_peer2peer: a static
 * attachment never does) and whose device pci_p2pdma_distance() finds a
 * path to is attached (never on a kernel without CONFIG_PCI_P2PDMA, as
 * Debian's); anything else gets EOPNOTSUPP before it builds on a table,
 * which is also what keeps vgem's shmem helpers off their WARN for I/O
 * memory. Every attachment is dynamic, so the device's unbind does not
 * wait for it: it revokes the dma-buf, and the importer's next map is
 * -ENODEV (svod_dmabuf_map()); an attachment of a revoked dma-buf is
 * -ENODEV at once. The tier is held only while its device is looked at.
 */
static int svod_dmabuf_attach(struct dma_buf *dmabuf,
			      struct dma_buf_attachment *attach)
{
	struct svod_dmabuf *priv = dmabuf->priv;
	struct svod_dev_tier *tier = priv->alloc->tier;
	struct svod_dmabuf_attach *sa;
	int dist;

	if (!attach->peer2peer)
		return -EOPNOTSUPP;
	/* Unlocked: a map checks again under the reservation lock. */
	if (READ_ONCE(priv->td.revoked) || !svod_dev_tier_importer_get(tier))
		return -ENODEV;
	dist = pci_p2pdma_distance(tier->sdev->pdev, attach->dev, false);
	svod_dev_tier_importer_put(tier);
	if (dist < 0)
		return -EOPNOTSUPP;
	sa = kzalloc(sizeof(*sa), GFP_KERNEL_ACCOUNT);
	if (!sa)
		return -ENOMEM;
	attach->priv = sa;
	return 0;
}

static void svod_dmabuf_detach(struct dma_buf *dmabuf,
			       struct dma_buf_attachment *attach)
{
	kfree(attach->priv);
}

/*
 * An importer's own pin (dma_buf_pin(): RDMA's memory regions without
 * on-demand paging, a display's scanout) promises the table stays valid
 * until it unpins, and such importers do not unmap when told to move; a
 * BAR whose device goes cannot keep that promise, and waiting for the
 * unpin would hold the unbind on userspace. So svod refuses it, as vfio
 * does: with CONFIG_DMABUF_MOVE_NOTIFY the core pins only for the importer,
 * and the pin is -EOPNOTSUPP; without it (6.1's default, Debian's) the core
 * also pins around each map, which must work, so the pin is counted and the
 * importer's map with a pin of its own is -EOPNOTSUPP instead
 * (svod_dmabuf_map()). Called under the reservation lock.
 */
static int svod_dmabuf_pin(struct dma_buf_attachment *attach)
{
	struct svod_dmabuf_attach *sa = attach->priv;

	dma_resv_assert_held(attach->dmabuf->resv);
	if (IS_ENABLED(CONFIG_DMABUF_MOVE_NOTIFY))
		return -EOPNOTSUPP;
	sa->pins++;
	return 0;
}

static void svod_dmabuf_unpin(struct dma_buf_attachment *attach)
{
	struct svod_dmabuf_attach *sa = attach->priv;

	dma_resv_assert_held(attach->dmabuf->resv);
	sa->pins--;
}

/**
 * svod_dmabuf_nents() - the entries of a peer-to-peer table
 * @size: the allocation's bytes
 * @seg: bytes per entry, the last one excepted (not 0)
 * @nents: out: how many entries @size takes
 *
 * sg_alloc_table() counts entries in an unsigned int: 2^32 pages of 4 KiB
 * (16 TiB) would wrap it, and a short table would give the importer part of
 * the range as the whole. The count is made in 64 bits and refused beyond.
 *
 * Context: any context.
 * Return: 0; -EOVERFLOW if the count does not fit an unsigned int.
 */
int svod_dmabuf_nents(u64 size, unsigned int seg, unsigned int *nents)
{
	u32 rem;
	u64 n = div_u64_rem(size, seg, &rem) + !!rem;

	if (n > UINT_MAX)
		return -EOVERFLOW;
	*nents = n;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(svod_dmabuf_nents);

/* ACS that sends peer-to-peer requests upstream (6.1's pci_bridge_has_acs_redir()). */
static bool svod_dmabuf_acs_redir(struct pci_dev *pdev)
{
	u16 ctrl;

	if (!pdev->acs_cap)
		return false;
	pci_read_config_word(pdev, pdev->acs_cap + PCI_ACS_CTRL, &ctrl);
	return ctrl & (PCI_ACS_RR | PCI_ACS_CR | PCI_ACS_EC);
}

/**
 * svod_dmabuf_bus_route() - whether a peer reaches the BAR by its bus address
 * @provider: the tier's device
 * @client: the importer's device (pci_p2pdma_distance() accepted the pair)
 *
 * The route of 6.1's calc_map_type_and_dist() (drivers/pci/p2pdma.c,
 * static there). Below a common upstream bridge, with no ACS redirect on
 * the way up to it from either device, the switch routes the peer's
 * requests to the BAR by PCI bus address and they never reach an IOMMU
 * (PCI_P2PDMA_MAP_BUS_ADDR). Otherwise they go up through the host bridge,
 * and through the IOMMU if one translates, so the BAR must be mapped for
 * the peer (PCI_P2PDMA_MAP_THRU_HOST_BRIDGE). Whether that path is allowed
 * at all is pci_p2pdma_distance()'s to say.
 *
 * Context: any context.
 * Return: true for the bus address, false for a mapping.
 */
static bool svod_dmabuf_bus_route(struct pci_dev *provider, struct pci_dev *client)
{
	struct pci_dev *a, *b;
	bool redir = false;

	for (a = provider; a; a = pci_upstream_bridge(a)) {
		redir |= svod_dmabuf_acs_redir(a);
		for (b = client; b; b = pci_upstream_bridge(b))
			if (a == b)
				goto common;
	}
	return false;
common:
	for (b = client; b != a; b = pci_upstream_bridge(b))
		redir |= svod_dmabuf_acs_redir(b);
	return !redir;
}

/*
 * The whole allocation, its address for the importer's device taken once
 * and cut into entries of at most its maximum segment (a whole number of
 * pages). The entries carry DMA addresses and lengths only: no page and no
 * CPU length, as the table has no struct pages behind it. A bus address
 * is marked as one (sg_dma_mark_bus_address()), which also tells the unmap
 * there is no mapping to undo. A device's writes are not checked, so a
 * read-only dma-buf is mapped only for the device to read (DMA_TO_DEVICE);
 * an importer asking for more is refused.
 *
 * Called under the dma-buf's reservation lock (every attachment is
 * dynamic), which revocation takes to set @td.revoked: a revoked dma-buf
 * is -ENODEV, and one not revoked still has its device (tier->sdev).
 */
static struct sg_table *svod_dmabuf_map(struct dma_buf_attachment *attach,
					enum dma_data_direction dir)
{
	struct svod_dmabuf *priv = attach->dmabuf->priv;
	const struct svod_dev_tier *tier = priv->alloc->tier;
	struct svod_dmabuf_attach *sa = attach->priv;
	u64 size = svod_allocation_size(priv->alloc), done, len;
	int bar = tier->spec.bar;
	unsigned int seg, n, i;
	struct scatterlist *sg;
	struct pci_dev *pdev;
	phys_addr_t phys;
	struct sg_table *sgt;
	dma_addr_t addr;
	bool bus;
	int ret;

	dma_resv_assert_held(attach->dmabuf->resv);
	if (priv->td.revoked)
		return ERR_PTR(-ENODEV);
	/* Not revoked: the device is still bound (its unbind revokes first). */
	pdev = tier->sdev->pdev;
	phys = svod_allocation_phys(priv->alloc);
	if (svod_dmabuf_own_pins(sa->pins, sa->maps + 1, !IS_ENABLED(CONFIG_DMABUF_MOVE_NOTIFY)))
		return ERR_PTR(-EOPNOTSUPP);
	if (!(attach->dmabuf->file->f_mode & FMODE_WRITE) && dir != DMA_TO_DEVICE)
		return ERR_PTR(-EACCES);
	seg = max_t(unsigned int, PAGE_SIZE,
		    round_down(min_t(unsigned int, dma_get_max_seg_size(attach->dev), SZ_1G),
			       PAGE_SIZE));
	ret = svod_dmabuf_nents(size, seg, &n);
	if (ret)
		return ERR_PTR(ret);
	sgt = kzalloc(sizeof(*sgt), GFP_KERNEL);
	if (!sgt)
		return ERR_PTR(-ENOMEM);
	ret = sg_alloc_table(sgt, n, GFP_KERNEL);
	if (ret)
		goto free;
	/* svod_dmabuf_attach() let only a PCI device with a path this far. */
	bus = svod_dmabuf_bus_route(pdev, to_pci_dev(attach->dev));
	if (bus) {
		addr = pci_bus_address(pdev, bar) + (phys - pci_resource_start(pdev, bar));
	} else {
		addr = dma_map_resource(attach->dev, phys, size, dir, DMA_ATTR_SKIP_CPU_SYNC);
		ret = dma_mapping_error(attach->dev, addr);
		if (ret)
			goto table;
	}
	done = 0;
	for_each_sgtable_sg(sgt, sg, i) {
		len = min_t(u64, seg, size - done);
		sg_set_page(sg, NULL, 0, 0);
		sg_dma_address(sg) = addr + done;
		sg_dma_len(sg) = len;
		if (bus)
			sg_dma_mark_bus_address(sg);
		done += len;
	}
	sa->maps++;
	return sgt;

table:
	sg_free_table(sgt);
free:
	kfree(sgt);
	return ERR_PTR(ret);
}

/* Also after the revocation: the table is the importer's device's to unmap. */
static void svod_dmabuf_unmap(struct dma_buf_attachment *attach,
			      struct sg_table *sgt, enum dma_data_direction dir)
{
	struct svod_dmabuf *priv = attach->dmabuf->priv;
	struct svod_dmabuf_attach *sa = attach->priv;

	dma_resv_assert_held(attach->dmabuf->resv);
	sa->maps--;

	if (!sg_is_dma_bus_address(sgt->sgl))
		dma_unmap_resource(attach->dev, sg_dma_address(sgt->sgl),
				   svod_allocation_size(priv->alloc), dir, DMA_ATTR_SKIP_CPU_SYNC);
	sg_free_table(sgt);
	kfree(sgt);
}

static int svod_dmabuf_mmap(struct dma_buf *dmabuf, struct vm_area_struct *vma)
{
	struct svod_dmabuf *priv = dmabuf->priv;

	return svod_mmap_dmabuf(&priv->map, vma);
}

static void svod_dmabuf_release(struct dma_buf *dmabuf)
{
	struct svod_dmabuf *priv = dmabuf->priv;

	/* No vma is left (each holds the file); the range holds the inode. */
	svod_mmap_revoke(&priv->map);
	svod_dev_tier_dmabuf_del(priv->alloc->tier, &priv->td);
	if (priv->counted)
		svod_account_export(priv->alloc, false);
	svod_allocation_put(priv->alloc);
	kfree(priv);
}

/*
 * The vmap of a dma-buf whose device is gone: every page of the range
 * maps the same zeroed page, this vmap's own, where the importer's writes
 * go. dma_buf_vmap() WARNs (once) when an exporter's vmap fails, so only
 * a lack of memory here reaches it: a sink that could not fail would need
 * its page array, vmalloc range and page tables (the size of the
 * allocation) held from export on, for every read-write dma-buf, to serve
 * an importer that maps after its device is gone. The page count fits
 * vmap()'s unsigned int: larger dma-bufs have no vmap (svod_dmabuf_ops()).
 */
static int svod_dmabuf_vmap_sink(struct svod_dmabuf *priv, struct iosys_map *map)
{
	unsigned int i, n = svod_allocation_size(priv->alloc) >> PAGE_SHIFT;
	struct page **pages;
	void *vaddr = NULL;

	priv->sink = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	pages = kvmalloc_array(n, sizeof(*pages), GFP_KERNEL);
	if (priv->sink && pages) {
		for (i = 0; i < n; i++)
			pages[i] = priv->sink;
		vaddr = vmap(pages, n, VM_MAP, PAGE_KERNEL);
	}
	kvfree(pages);
	if (!vaddr) {
		if (priv->sink)
			__free_page(priv->sink);
		priv->sink = NULL;
		return -ENOMEM;
	}
	iosys_map_set_vaddr(map, vaddr);
	return 0;
}

/*
 * vmap for importers in the kernel (the dma-buf's lock held; the core
 * counts them, so this runs for the first and svod_dmabuf_vunmap() for the
 * last). The address is the BAR's write-combined mapping at the
 * allocation, as a system-memory iosys_map: on x86 I/O memory mapped so
 * takes ordinary loads and stores, and the 6.1 importers that vmap
 * (videobuf2) rebuild the map as system memory to unmap it, so an
 * I/O-memory map would BUG in dma_buf_vunmap(). i915 gives its device
 * memory the same way. Read-write dma-bufs only: a kernel importer's
 * stores are not checked, so a read-only dma-buf has no vmap
 * (svod_dmabuf_ro_ops; dma_buf_vmap() gives EINVAL without a WARN).
 *
 * The tier's device stays bound until every importer lets go: its unbind
 * waits (svod_dev_tier_importer_get()). Once it is going, the importer gets
 * a sink instead, and no byte reaches the BAR.
 */
static int svod_dmabuf_vmap(struct dma_buf *dmabuf, struct iosys_map *map)
{
	struct svod_dmabuf *priv = dmabuf->priv;
	struct svod_allocation *alloc = priv->alloc;
	struct svod_dev_tier *tier = alloc->tier;
	const struct svod_bar *bar;

	if (!svod_dev_tier_importer_get(tier))
		return svod_dmabuf_vmap_sink(priv, map);
	bar = &tier->sdev->bars[tier->spec.bar];
	iosys_map_set_vaddr(map, (void __force *)bar->wc +
			    (svod_allocation_phys(alloc) - bar->phys));
	return 0;
}

static void svod_dmabuf_vunmap(struct dma_buf *dmabuf, struct iosys_map *map)
{
	struct svod_dmabuf *priv = dmabuf->priv;

	if (priv->sink) {
		vunmap(map->vaddr);
		__free_page(priv->sink);
		priv->sink = NULL;
	} else {
		svod_dev_tier_importer_put(priv->alloc->tier);
	}
}

/*
 * Read-only dma-bufs, every one where I/O memory needs accessors, and those
 * whose page count does not fit vmap()'s unsigned int.
 */
static const struct dma_buf_ops svod_dmabuf_ro_ops = {
	.attach = svod_dmabuf_attach,
	.detach = svod_dmabuf_detach,
	.pin = svod_dmabuf_pin,
	.unpin = svod_dmabuf_unpin,
	.map_dma_buf = svod_dmabuf_map,
	.unmap_dma_buf = svod_dmabuf_unmap,
	.mmap = svod_dmabuf_mmap,
	.release = svod_dmabuf_release,
};

static const struct dma_buf_ops svod_dmabuf_rw_ops = {
	.attach = svod_dmabuf_attach,
	.detach = svod_dmabuf_detach,
	.pin = svod_dmabuf_pin,
	.unpin = svod_dmabuf_unpin,
	.map_dma_buf = svod_dmabuf_map,
	.unmap_dma_buf = svod_dmabuf_unmap,
	.mmap = svod_dmabuf_mmap,
	.vmap = svod_dmabuf_vmap,
	.vunmap = svod_dmabuf_vunmap,
	.release = svod_dmabuf_release,
};

/**
 * svod_dmabuf_ops() - the operations of a new dma-buf
 * @writable: a read-write dma-buf
 * @size: the allocation's bytes
 *
 * Only a read-write dma-buf on x86 has a vmap, and only if its pages can
 * be counted in vmap()'s unsigned int (below 16 TiB of 4 KiB pages), the
 * sink's count: one beyond would wrap it, and a refusal in vmap WARNs in
 * dma_buf_vmap(), while a dma-buf without .vmap is refused there quietly
 * with -EINVAL.
 *
 * Context: any context.
 * Return: svod's operations for such a dma-buf.
 */
const struct dma_buf_ops *svod_dmabuf_ops(bool writable, u64 size)
{
	if (writable && IS_ENABLED(CONFIG_X86) && size >> PAGE_SHIFT <= UINT_MAX)
		return &svod_dmabuf_rw_ops;
	return &svod_dmabuf_ro_ops;
}
EXPORT_SYMBOL_IF_KUNIT(svod_dmabuf_ops);

/* Whether @dmabuf is one of svod's. */
static bool svod_dmabuf_is_ours(const struct dma_buf *dmabuf)
{
	return dmabuf->ops == &svod_dmabuf_ro_ops || dmabuf->ops == &svod_dmabuf_rw_ops;
}

/*
 * Gives @dmabuf its mmap range, unless the device is gone or the
 * allocation cannot be mapped (its dma-buf could not be mmap()ed), and
 * puts it among its tier's dma-bufs, for revocation.
 */
static int svod_dmabuf_init(struct dma_buf *dmabuf, bool writable)
{
	struct svod_dmabuf *priv = dmabuf->priv;
	struct svod_dev_tier *tier = priv->alloc->tier;
	unsigned long pfn;
	int ret;

	mutex_lock(&tier->lock);
	if (tier->gone)
		ret = -ENODEV;
	else if (!svod_allocation_pfn(priv->alloc, &pfn))
		ret = -EOPNOTSUPP;
	else
		ret = svod_mmap_dmabuf_init(priv->alloc, pfn, dmabuf->file->f_mapping,
					    writable, &priv->map);
	mutex_unlock(&tier->lock);
	return ret ? ret : svod_dev_tier_dmabuf_add(tier, &priv->td);
}

/*
 * EXPORT's struct in the ioctl's kernel copy, and past it (never copied
 * out) the dma-buf's file, for the commit to install at the reserved fd or
 * the unwind to drop.
 */
struct svod_export_call {
	struct svod_export req;
	struct file *file;
};

static_assert(sizeof(struct svod_export_call) <= SVOD_IOCTL_MAX_SIZE);

/**
 * svod_export_ioctl() - SVOD_IOCTL_EXPORT
 * @sf: the file
 * @data: struct svod_export; in: handle, flags; out: fd, size
 *
 * Makes the dma-buf and reserves its fd; the fd is installed only once the
 * reply is written back (svod_export_ioctl_commit()).
 *
 * Context: process context; takes @sf's lock, the tier's, svod_mmap_sem
 * and the account's.
 * Return: 0; -EINVAL for unknown flags; -ESTALE if the handle is not live
 * in @sf; -EACCES for SVOD_EXPORT_WRITE through a read-only handle;
 * -ENODEV if its device is gone; -EOPNOTSUPP if the allocation's start (in
 * its BAR) or size is not a multiple of the page size; -EMFILE without a
 * free fd; -ENOMEM. Nothing is left behind on failure.
 */
int svod_export_ioctl(struct svod_file *sf, void *data)
{
	struct svod_export_call *call = data;
	struct svod_export *req = &call->req;
	bool writable = req->flags & SVOD_EXPORT_WRITE;
	DEFINE_DMA_BUF_EXPORT_INFO(info);
	struct svod_allocation *alloc;
	struct svod_dmabuf *priv;
	struct dma_buf *dmabuf;
	int ret, fd;

	if (req->flags & ~SVOD_EXPORT_FLAGS)
		return -EINVAL;
	alloc = svod_allocation_get(sf, req->handle, writable ?
				    SVOD_ACCESS_WRITE : SVOD_ACCESS_READ, NULL);
	if (IS_ERR(alloc))
		return PTR_ERR(alloc);
	priv = kzalloc(sizeof(*priv), GFP_KERNEL_ACCOUNT);
	if (!priv) {
		svod_allocation_put(alloc);
		return -ENOMEM;
	}
	priv->alloc = alloc;
	INIT_LIST_HEAD(&priv->td.link);
	info.size = svod_allocation_size(alloc);
	info.ops = svod_dmabuf_ops(writable, info.size);
	info.flags = writable ? O_RDWR : O_RDONLY;
	info.priv = priv;
	dmabuf = dma_buf_export(&info);
	if (IS_ERR(dmabuf)) {
		kfree(priv);
		svod_allocation_put(alloc);
		return PTR_ERR(dmabuf);
	}
	/* From here on svod_dmabuf_release() undoes what is done. */
	priv->td.dmabuf = dmabuf;
	ret = svod_dmabuf_init(dmabuf, writable);
	if (ret)
		goto put;
	svod_account_export(alloc, true);
	priv->counted = true;
	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0) {
		ret = fd;
		goto put;
	}
	call->file = dmabuf->file;
	req->fd = fd;
	req->size = info.size;
	return 0;

put:
	dma_buf_put(dmabuf);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(svod_export_ioctl);

/**
 * svod_export_ioctl_commit() - install an EXPORT's fd
 * @sf: the file
 * @data: what svod_export_ioctl() filled; the caller has the fd number
 *
 * Context: process context.
 */
void svod_export_ioctl_commit(struct svod_file *sf, void *data)
{
	struct svod_export_call *call = data;

	fd_install(call->req.fd, call->file);
}

/**
 * svod_export_ioctl_unwind() - take back an EXPORT whose reply was lost
 * @sf: the file
 * @data: what svod_export_ioctl() filled
 *
 * The reserved fd goes back, and the dma-buf with its only reference.
 *
 * Context: process context.
 */
void svod_export_ioctl_unwind(struct svod_file *sf, void *data)
{
	struct svod_export_call *call = data;

	put_unused_fd(call->req.fd);
	fput(call->file);
}

/**
 * svod_import_ioctl() - SVOD_IOCTL_IMPORT
 * @sf: the file
 * @data: struct svod_import; in: fd, flags; out: handle, device_addr,
 *	capacity, tier, access, id, generation
 *
 * Each call gives a new handle, also for a dma-buf the file exported
 * itself; it counts against the file's max_handles, not its max_bytes.
 *
 * Context: process context; takes @sf's lock and its account's.
 * Return: 0; -EINVAL for nonzero flags or an fd that is not a dma-buf;
 * -EBADF for an fd that is not open; -EXDEV for a dma-buf that svod did not
 * export; -EACCES if the file's opener may not use the allocation's tier
 * (svod_dev_tier_may_use()); -ENODEV if its device is gone; -EMFILE at the file's max_handles;
 * -ENOMEM. Nothing changes on failure.
 */
int svod_import_ioctl(struct svod_file *sf, void *data)
{
	struct svod_import *req = data;
	struct svod_allocation *alloc;
	struct svod_dmabuf *priv;
	struct dma_buf *dmabuf;
	u32 access;
	int ret;

	if (req->flags)
		return -EINVAL;
	dmabuf = dma_buf_get(req->fd);
	if (IS_ERR(dmabuf))
		return PTR_ERR(dmabuf);
	if (!svod_dmabuf_is_ours(dmabuf)) {
		ret = -EXDEV;
		goto put;
	}
	priv = dmabuf->priv;
	alloc = priv->alloc;
	ret = svod_dev_tier_may_use(alloc->tier, sf->filp);
	if (ret)
		goto put;
	access = SVOD_ACCESS_READ;
	if (dmabuf->file->f_mode & FMODE_WRITE)
		access |= SVOD_ACCESS_WRITE;
	ret = svod_hold_add(sf, alloc, access, &req->handle);
	if (ret)
		goto put;
	req->device_addr = svod_allocation_start(alloc);
	req->capacity = svod_allocation_size(alloc);
	req->tier = alloc->tier->id;
	req->access = access;
	req->id = svod_handle_slot(req->handle);
	req->generation = svod_handle_gen(req->handle);
put:
	dma_buf_put(dmabuf);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(svod_import_ioctl);

/**
 * svod_import_ioctl_unwind() - take back an IMPORT whose reply was lost
 * @sf: the file
 * @data: the struct svod_import svod_import_ioctl() filled
 *
 * Context: process context; may sleep.
 */
void svod_import_ioctl_unwind(struct svod_file *sf, void *data)
{
	const struct svod_import *req = data;
	struct svod_free f = { .handle = req->handle };

	svod_free_ioctl(sf, &f);
}

MODULE_IMPORT_NS(DMA_BUF);
