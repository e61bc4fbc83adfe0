/* SPDX-License-Identifier: GPL-2.0 */
/*
 * svod mappings of allocations: mmap offsets (the DRM "fake offset" model),
 * the .mmap of /dev/svod, faults inserting the BAR's pages on demand, and
 * revocation on one address space shared by every open file of /dev/svod.
 */
#ifndef SVOD_MMAP_H
#define SVOD_MMAP_H

#include <linux/atomic.h>
#include <linux/kref.h>
#include <linux/maple_tree.h>
#include <linux/rcupdate.h>
#include <linux/sizes.h>
#include <linux/types.h>

struct address_space;
struct file;
struct svod_allocation;
struct svod_file;
struct svod_hold;
struct vm_area_struct;

/**
 * struct svod_map - a range of page offsets that maps one allocation: a
 *	handle's (SVOD_IOCTL_MAP_OFFSET) or a dma-buf's
 * @ref: one reference for its owner (dropped at revocation), one per vma
 *	mapping it
 * @alloc: the allocation, NULL once revoked (svod_mmap_sem)
 * @owner: where its owner keeps it (struct svod_hold.map, a dma-buf's);
 *	set to NULL at revocation (svod_mmap_sem)
 * @link: entry in @alloc's maps (svod_mmap_sem)
 * @sf: the file of the handle (only compared, never followed); NULL for a
 *	dma-buf's range
 * @mapping: the address space its vmas are in: the one /dev/svod's files
 *	share, or the dma-buf's file's (whose inode the range holds)
 * @pgoff: first page of the range in @mapping
 * @npages: pages in the range (the allocation's size)
 * @pfn: page frame of the allocation's first byte in its BAR
 * @writable: its vmas may be writable
 * @vmas: vmas mapping the range (what fdinfo counts as mapped)
 * @rcu: freed after a grace period: fdinfo reads a handle's @map under
 *	RCU, without svod_mmap_sem
 */
struct svod_map {
	struct kref ref;
	struct svod_allocation *alloc;
	struct svod_map **owner;
	struct list_head link;
	const struct svod_file *sf;
	struct address_space *mapping;
	unsigned long pgoff;
	unsigned long npages;
	unsigned long pfn;
	bool writable;
	atomic_t vmas;
	struct rcu_head rcu;
};

/*
 * Offsets start above 4 GiB, as DRM's do, so an offset of 0 or a small one
 * names nothing; they stay below 2^63 bytes so loff_t never overflows.
 */
#define SVOD_MMAP_PGOFF_FIRST	((u64)SZ_4G >> PAGE_SHIFT)
#define SVOD_MMAP_PGOFF_END	(((u64)1 << 63) >> PAGE_SHIFT)

/**
 * struct svod_mmap_space - page offsets handed out to ranges
 * @mt: page offset -> struct svod_map of every range not yet removed
 * @next: the first page offset of the next range; only grows
 * @end: the first page offset past the space
 *
 * No lock of its own: svod.ko's one space is under svod_mmap_sem; a KUnit
 * case's space is its own.
 */
struct svod_mmap_space {
	struct maple_tree mt;
	u64 next;
	u64 end;
};

int svod_mmap_space_add(struct svod_mmap_space *space, struct svod_map *map);
void svod_mmap_space_remove(struct svod_mmap_space *space, struct svod_map *map);

int svod_mmap_init(void);
void svod_mmap_exit(void);
void svod_mmap_file_init(struct file *filp);
int svod_mmap(struct file *filp, struct vm_area_struct *vma);
int svod_mmap_offset(struct svod_file *sf, struct svod_hold *hold,
		     unsigned long pfn, u64 *offset);
int svod_mmap_dmabuf_init(struct svod_allocation *alloc, unsigned long pfn,
			  struct address_space *mapping, bool writable,
			  struct svod_map **owner);
int svod_mmap_dmabuf(struct svod_map **owner, struct vm_area_struct *vma);
void svod_mmap_revoke(struct svod_map **owner);
void svod_mmap_revoke_all(struct svod_allocation *alloc);
bool svod_mmap_is_mapped(struct svod_map *const *owner);

#endif /* SVOD_MMAP_H */
