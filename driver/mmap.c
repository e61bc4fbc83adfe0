// SPDX-License-Identifier: GPL-2.0
/*
 * svod mappings of allocations, after DRM's fake offsets (drm_vma_manager,
 * drm_gem_mmap()):
 *
 * - SVOD_IOCTL_MAP_OFFSET (alloc.c, then svod_mmap_offset()) gives a live
 *   handle of a page-aligned allocation a range of page offsets, taken from
 *   a counter that never goes back, so an offset never names a second
 *   range. mmap() at an offset of the range maps that part of the
 *   allocation's BAR range, write-combined, MAP_SHARED; writable only if
 *   the handle grants writing.
 * - A dma-buf of an allocation (dmabuf.c) has a range of its own, in its
 *   file's address space, from page 0.
 * - Every open file of /dev/svod uses one address space (f_mapping is set to
 *   the mapping of one anonymous inode at open), so every vma of a range,
 *   in any process, any file, after fork(), is found by
 *   unmap_mapping_range() on that range.
 * - Pages are inserted on demand by the fault handler, under svod_mmap_sem
 *   for read, only while the range still names its allocation: the
 *   faulting page with vmf_insert_pfn_prot() (on x86, the one lookup of
 *   its PAT memory type), then the rest of its window in one pass over the
 *   page tables (apply_to_page_range(), as i915's remap_io_mapping()), if
 *   the faulting page's PTE shows the vma's write-combined protection is
 *   the BAR's memory type. That type is held for the whole BAR by the device's own
 *   write-combined ioremap, which outlives every PTE (removal revokes
 *   first), so a mapping reserves none of its own.
 * - Revocation (FREE of the handle, release, device removal; a dma-buf's
 *   range at device removal only) clears the range's allocation and
 *   erases the range under svod_mmap_sem for write, then zaps every PTE of
 *   the range. A fault that came first inserted its pages
 *   before the write lock was granted and is zapped; one that comes later
 *   finds no allocation and raises SIGBUS. Only then is the allocation's
 *   range scrubbed and returned to its tier (the caller's next step).
 *
 * A vma keeps its struct svod_map (not the allocation) and, as every file
 * mapping does, its open file: closing the fd leaves the mapping working
 * until the handle is freed (a dma-buf's: until the device goes).
 */
#include <kunit/visibility.h>
#include <linux/fs.h>
#include <linux/maple_tree.h>
#include <linux/mm.h>
#include <linux/mount.h>
#include <linux/pseudo_fs.h>
#include <linux/rwsem.h>
#include <linux/slab.h>
#include <linux/svod.h>

#include "alloc.h"
#include "file.h"
#include "ioctl.h"
#include "mmap.h"
#include "tier.h"

#define SVOD_MMAP_MAGIC		0x5e0d3a9bU

/*
 * What one fault fills at most: 32 page tables on x86-64, a few ms of a
 * read hold of svod_mmap_sem, the whole of most mappings.
 */
#define SVOD_MMAP_FILL_BYTES	SZ_64M

/*
 * Protects svod_mmap_space and struct svod_map.alloc of every range: faults
 * and mmap() read, offset creation and revocation write. Taken inside
 * mmap_lock and inside the tier and file locks.
 */
static DECLARE_RWSEM(svod_mmap_sem);

/* The offset space of every range not yet revoked. */
static struct svod_mmap_space svod_mmap_space = {
	.mt = MTREE_INIT(svod_mmap_space.mt, 0),
	.next = SVOD_MMAP_PGOFF_FIRST,
	.end = SVOD_MMAP_PGOFF_END,
};

/* The address space every open file of /dev/svod shares. */
static struct inode *svod_mmap_inode;
static struct vfsmount *svod_mmap_mnt;
static int svod_mmap_mnt_count;

static int svod_mmap_init_fs_context(struct fs_context *fc)
{
	return init_pseudo(fc, SVOD_MMAP_MAGIC) ? 0 : -ENOMEM;
}

/*
 * No .owner: the mount pinned for the module's lifetime must not hold the
 * module itself (it could never be unloaded). Only svod_mmap_init_fs_context()
 * is the module's code, and it runs at svod_mmap_init() alone.
 */
static struct file_system_type svod_mmap_fs_type = {
	.name = "svod_mmap",
	.init_fs_context = svod_mmap_init_fs_context,
	.kill_sb = kill_anon_super,
};

/**
 * svod_mmap_init() - create the address space the files share
 *
 * Context: process context (module init).
 * Return: 0, or an errno of the internal mount or of alloc_anon_inode().
 */
int svod_mmap_init(void)
{
	struct inode *inode;
	int ret;

	ret = simple_pin_fs(&svod_mmap_fs_type, &svod_mmap_mnt,
			    &svod_mmap_mnt_count);
	if (ret)
		return ret;
	inode = alloc_anon_inode(svod_mmap_mnt->mnt_sb);
	if (IS_ERR(inode)) {
		simple_release_fs(&svod_mmap_mnt, &svod_mmap_mnt_count);
		return PTR_ERR(inode);
	}
	svod_mmap_inode = inode;
	return 0;
}

/**
 * svod_mmap_exit() - drop the shared address space
 *
 * Context: process context (module exit); no file of /dev/svod is open.
 */
void svod_mmap_exit(void)
{
	iput(svod_mmap_inode);
	simple_release_fs(&svod_mmap_mnt, &svod_mmap_mnt_count);
	WARN_ON(!mtree_empty(&svod_mmap_space.mt));
	mtree_destroy(&svod_mmap_space.mt);
}

/**
 * svod_mmap_file_init() - make an open file use the shared address space
 * @filp: a file of /dev/svod being opened
 *
 * Context: process context (open).
 */
void svod_mmap_file_init(struct file *filp)
{
	filp->f_mapping = svod_mmap_inode->i_mapping;
}

/**
 * svod_mmap_space_add() - give a range its page offsets
 * @space: the offset space; its caller's lock held (svod_mmap_sem for
 *	svod.ko's own space)
 * @map: the range: @map->npages set, @map->pgoff set here
 *
 * Takes @map->npages page offsets from @space's counter, which never goes
 * back: an offset names at most one range while the space lives, and space
 * given up by svod_mmap_space_remove() is never reused.
 *
 * Context: process context; may sleep (the tree allocates, GFP_KERNEL).
 * Return: 0; -EINVAL if @map->npages is 0; -ENOSPC if fewer than
 * @map->npages page offsets are left; -ENOMEM if the tree cannot grow. On
 * an error @space is unchanged.
 */
int svod_mmap_space_add(struct svod_mmap_space *space, struct svod_map *map)
{
	int ret;

	if (!map->npages)
		return -EINVAL;
	/* next <= end always: compare what is left, never next + npages. */
	if (map->npages > space->end - space->next)
		return -ENOSPC;
	ret = mtree_insert_range(&space->mt, space->next,
				 space->next + map->npages - 1, map,
				 GFP_KERNEL_ACCOUNT);
	if (ret)
		return ret;
	map->pgoff = space->next;
	space->next += map->npages;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(svod_mmap_space_add);

/**
 * svod_mmap_space_remove() - erase a range from its offset space
 * @space: the space @map was added to; its caller's lock held
 * @map: a range of @space
 *
 * Its offsets then name nothing; the counter does not go back.
 *
 * Context: any context the tree allows (it frees under RCU).
 */
void svod_mmap_space_remove(struct svod_mmap_space *space, struct svod_map *map)
{
	mtree_erase(&space->mt, map->pgoff);
}
EXPORT_SYMBOL_IF_KUNIT(svod_mmap_space_remove);

static void svod_map_release(struct kref *ref)
{
	struct svod_map *map = container_of(ref, struct svod_map, ref);

	/* A dma-buf's range held its file's inode (svod_mmap_dmabuf_init()). */
	if (!map->sf)
		iput(map->mapping->host);
	kfree_rcu(map, rcu);
}

static void svod_map_put(struct svod_map *map)
{
	kref_put(&map->ref, svod_map_release);
}

/*
 * A new range mapping @alloc from BAR page @pfn, kept at @owner, on
 * @alloc's list of maps; svod_mmap_sem held for write, and the tier's lock
 * (the tier not gone: a removal then waits until the range exists, so that
 * it revokes it).
 */
static struct svod_map *svod_map_create(struct svod_allocation *alloc,
					unsigned long pfn,
					struct svod_map **owner)
{
	struct svod_map *map;

	lockdep_assert_held_write(&svod_mmap_sem);
	lockdep_assert_held(&alloc->tier->lock);
	map = kzalloc(sizeof(*map), GFP_KERNEL_ACCOUNT);
	if (!map)
		return NULL;
	kref_init(&map->ref);
	map->alloc = alloc;
	map->owner = owner;
	map->npages = svod_allocation_size(alloc) >> PAGE_SHIFT;
	map->pfn = pfn;
	return map;
}

/* Publishes @map; svod_mmap_sem held for write. */
static void svod_map_publish(struct svod_map *map)
{
	list_add_tail(&map->link, &map->alloc->maps);
	WRITE_ONCE(*map->owner, map);
}

/**
 * svod_mmap_offset() - the offset at which mmap() maps a handle's allocation
 * @sf: the file holding @hold, its lock held
 * @hold: what the handle names; its allocation's tier's lock held and the
 *	tier not gone (a removal then waits until the range exists, so that
 *	it revokes it)
 * @pfn: BAR page frame of the allocation's first byte
 * @offset: out: the offset
 *
 * The first call gives @hold its offset range; later calls find it. Its
 * vmas may be writable if the handle grants SVOD_ACCESS_WRITE.
 *
 * Context: process context; takes svod_mmap_sem.
 * Return: 0; -ENOSPC once the offset space is used up; -ENOMEM.
 */
int svod_mmap_offset(struct svod_file *sf, struct svod_hold *hold,
		     unsigned long pfn, u64 *offset)
{
	struct svod_map *map;
	int ret = 0;

	lockdep_assert_held(&sf->lock);
	down_write(&svod_mmap_sem);
	map = hold->map;
	if (!map) {
		map = svod_map_create(hold->alloc, pfn, &hold->map);
		ret = map ? 0 : -ENOMEM;
		if (!ret) {
			map->sf = sf;
			map->mapping = svod_mmap_inode->i_mapping;
			map->writable = hold->access & SVOD_ACCESS_WRITE;
			ret = svod_mmap_space_add(&svod_mmap_space, map);
		}
		if (!ret)
			svod_map_publish(map);
		else
			kfree(map);
	}
	if (!ret)
		*offset = (u64)map->pgoff << PAGE_SHIFT;
	up_write(&svod_mmap_sem);
	return ret;
}

/**
 * svod_mmap_dmabuf_init() - the range a dma-buf's mmap() maps
 * @alloc: the dma-buf's allocation; its tier's lock held and the tier not
 *	gone
 * @pfn: BAR page frame of @alloc's first byte
 * @mapping: the address space of the dma-buf's file
 * @writable: the dma-buf is read-write
 * @owner: where the dma-buf keeps the range
 *
 * Page offsets count from the dma-buf's first byte. The range holds the
 * inode of @mapping: the dma-buf's file drops its own before the dma-buf's
 * release revokes the range, and a removal may zap the range in between.
 *
 * Context: process context; takes svod_mmap_sem.
 * Return: 0 or -ENOMEM.
 */
int svod_mmap_dmabuf_init(struct svod_allocation *alloc, unsigned long pfn,
			  struct address_space *mapping, bool writable,
			  struct svod_map **owner)
{
	struct svod_map *map;

	down_write(&svod_mmap_sem);
	map = svod_map_create(alloc, pfn, owner);
	if (map) {
		map->mapping = mapping;
		ihold(mapping->host);
		map->writable = writable;
		svod_map_publish(map);
	}
	up_write(&svod_mmap_sem);
	return map ? 0 : -ENOMEM;
}

/*
 * Takes @map off its allocation so that no fault inserts a page any more;
 * svod_mmap_sem held for write. Return: false if it was revoked already.
 */
static bool svod_map_unlink(struct svod_map *map)
{
	lockdep_assert_held_write(&svod_mmap_sem);
	if (!map->alloc)
		return false;
	list_del(&map->link);
	map->alloc = NULL;
	WRITE_ONCE(*map->owner, NULL);
	if (map->sf)
		svod_mmap_space_remove(&svod_mmap_space, map);
	return true;
}

/* Zaps the PTEs of an unlinked @map and drops its owner's reference. */
static void svod_map_zap(struct svod_map *map)
{
	unmap_mapping_range(map->mapping, (loff_t)map->pgoff << PAGE_SHIFT,
			    (loff_t)map->npages << PAGE_SHIFT, 1);
	svod_map_put(map);
}

/**
 * svod_mmap_revoke() - revoke every mapping of one range
 * @owner: where the range's owner keeps it (a handle being freed, a
 *	dma-buf being released); NULL there means nothing to do
 *
 * When this returns no PTE maps the range and none can be inserted again:
 * any access through an old mapping raises SIGBUS. *@owner is NULL.
 *
 * Context: process context; may sleep; takes svod_mmap_sem and the
 * mapping's i_mmap_rwsem.
 */
void svod_mmap_revoke(struct svod_map **owner)
{
	struct svod_map *map;
	bool unlinked;

	down_write(&svod_mmap_sem);
	map = *owner;
	unlinked = map && svod_map_unlink(map);
	up_write(&svod_mmap_sem);
	if (unlinked)
		svod_map_zap(map);
}

/**
 * svod_mmap_revoke_all() - revoke every mapping of an allocation
 * @alloc: an allocation whose tier is being retired, before its range is
 *	scrubbed
 *
 * Every handle's and every dma-buf's range of it, as svod_mmap_revoke().
 *
 * Context: process context; may sleep; takes svod_mmap_sem.
 */
void svod_mmap_revoke_all(struct svod_allocation *alloc)
{
	struct svod_map *map, *next;
	LIST_HEAD(gone);

	down_write(&svod_mmap_sem);
	list_for_each_entry_safe(map, next, &alloc->maps, link) {
		svod_map_unlink(map);
		list_add_tail(&map->link, &gone);
	}
	up_write(&svod_mmap_sem);
	list_for_each_entry_safe(map, next, &gone, link)
		svod_map_zap(map);
}

/**
 * svod_mmap_is_mapped() - is a range mapped by at least one vma?
 * @owner: where its owner keeps it (a live handle's; its file's lock held;
 *	device removal may revoke it meanwhile: the range is read under RCU)
 *
 * Context: any context.
 * Return: true if a vma maps (part of) it.
 */
bool svod_mmap_is_mapped(struct svod_map *const *owner)
{
	const struct svod_map *map;
	bool mapped;

	rcu_read_lock();
	map = READ_ONCE(*owner);
	mapped = map && atomic_read(&map->vmas) > 0;
	rcu_read_unlock();
	return mapped;
}

static void svod_vm_open(struct vm_area_struct *vma)
{
	struct svod_map *map = vma->vm_private_data;

	kref_get(&map->ref);
	atomic_inc(&map->vmas);
}

static void svod_vm_close(struct vm_area_struct *vma)
{
	struct svod_map *map = vma->vm_private_data;

	atomic_dec(&map->vmas);
	svod_map_put(map);
}

/*
 * A pass over a window's page tables: the PTEs it fills, from @pfn on;
 * @fault: the faulting page, which is in already; @other_type: its PTE is
 * not the one the pass would write.
 */
struct svod_fill {
	struct mm_struct *mm;
	unsigned long fault;
	unsigned long pfn;
	pgprot_t prot;
	bool other_type;
};

static int svod_fill_pte(pte_t *pte, unsigned long addr, void *data)
{
	struct svod_fill *fill = data;
	pte_t old = ptep_get(pte), new = pte_mkspecial(pfn_pte(fill->pfn, fill->prot));

	/*
	 * vmf_insert_pfn_prot() gave the faulting page the memory type the
	 * kernel looked up for it (x86 PAT). Unless that is the vma's
	 * write-combined one, the window is filled page by page, each page
	 * looked up. Accessed and dirty bits aside: an access may set them.
	 */
	if (addr == fill->fault &&
	    !pte_same(pte_mkold(pte_mkclean(old)), pte_mkold(pte_mkclean(new)))) {
		fill->other_type = true;
		return -EBUSY;
	}
	/* A present entry stays: the faulting page, or a racing fault's. */
	if (pte_none(old))
		set_pte_at(fill->mm, addr, pte, new);
	fill->pfn++;
	return 0;
}

/*
 * Fills the PTEs of [@start, @end) of @vma, @pfn the page of @start, the
 * faulting page in already: from the faulting page on (whose PTE the pass
 * checks first), then the part before it. Nothing is reported: a page left
 * out (no memory for its page table) takes a fault of its own.
 */
static void svod_fill_window(struct vm_fault *vmf, unsigned long start,
			     unsigned long end, unsigned long pfn)
{
	struct vm_area_struct *vma = vmf->vma;
	unsigned long addr = vmf->address;
	struct svod_fill fill = {
		.mm = vma->vm_mm,
		.fault = addr,
		.pfn = pfn + ((addr - start) >> PAGE_SHIFT),
		.prot = vma->vm_page_prot,
	};

	if (!apply_to_page_range(vma->vm_mm, addr, end - addr, svod_fill_pte,
				 &fill)) {
		fill.pfn = pfn;
		if (start < addr)
			apply_to_page_range(vma->vm_mm, start, addr - start,
					    svod_fill_pte, &fill);
		return;
	}
	if (!fill.other_type)
		return;
	for (addr = start; addr < end; addr += PAGE_SIZE, pfn++) {
		if (addr != vmf->address &&
		    vmf_insert_pfn_prot(vma, addr, pfn, vma->vm_page_prot) &
		    VM_FAULT_ERROR)
			return;
	}
}

/*
 * Inserts the faulting page, then fills the rest of its window: the part
 * of the vma in the SVOD_MMAP_FILL_BYTES-aligned block that holds it. All
 * under svod_mmap_sem, so a revocation waits for the whole fill and then
 * zaps it.
 */
static vm_fault_t svod_vm_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct svod_map *map = vma->vm_private_data;
	unsigned long first = vma->vm_pgoff - map->pgoff;
	unsigned long addr = vmf->address, start, end;
	unsigned long page = first + ((addr - vma->vm_start) >> PAGE_SHIFT);
	vm_fault_t ret = VM_FAULT_SIGBUS;

	start = max(vma->vm_start, ALIGN_DOWN(addr, SVOD_MMAP_FILL_BYTES));
	end = min(vma->vm_end, ALIGN_DOWN(addr, SVOD_MMAP_FILL_BYTES) +
		  SVOD_MMAP_FILL_BYTES);
	down_read(&svod_mmap_sem);
	if (!map->alloc || page >= map->npages)
		goto unlock;
	/* The one memory type lookup of the fault (track_pfn_insert()). */
	ret = vmf_insert_pfn_prot(vma, addr, map->pfn + page, vma->vm_page_prot);
	if (!(ret & VM_FAULT_ERROR) && end - start > PAGE_SIZE)
		svod_fill_window(vmf, start, end, map->pfn + first +
				 ((start - vma->vm_start) >> PAGE_SHIFT));
unlock:
	up_read(&svod_mmap_sem);
	return ret;
}

#ifdef CONFIG_HAVE_IOREMAP_PROT
/*
 * ptrace() and /proc/<pid>/mem: get_user_pages() refuses a VM_PFNMAP vma,
 * so the core asks here, with the mm's mmap_lock held. generic_access_phys()
 * reads and writes through the live PTE, under its lock, so a revoked range
 * (its PTEs zapped, and no fault refills them) gives an error, never a byte.
 * It maps @len bytes from that one PTE's page, while the core passes what
 * is left of the whole request: cut at the page's end, or a read at the
 * vma's last page would run on into the next allocation in the BAR. A page
 * not yet touched has no PTE: it is faulted in as a touch would be (the
 * fault refuses a write the vma does not allow, and a revoked range).
 */
static int svod_vm_access(struct vm_area_struct *vma, unsigned long addr,
			  void *buf, int len, int write)
{
	int ret;

	len = min_t(int, len, PAGE_SIZE - offset_in_page(addr));
	ret = generic_access_phys(vma, addr, buf, len, write);
	if (ret != -EINVAL)
		return ret;
	if (fixup_user_fault(vma->vm_mm, addr,
			     write & FOLL_WRITE ? FAULT_FLAG_WRITE : 0, NULL))
		return ret;
	return generic_access_phys(vma, addr, buf, len, write);
}
#endif

static const struct vm_operations_struct svod_vm_ops = {
	.open = svod_vm_open,
	.close = svod_vm_close,
	.fault = svod_vm_fault,
#ifdef CONFIG_HAVE_IOREMAP_PROT
	.access = svod_vm_access,
#endif
};

/* The range @vma may map, with a reference for the vma, or an errno. */
static struct svod_map *svod_mmap_find(struct file *filp,
				       struct vm_area_struct *vma)
{
	unsigned long npages = vma_pages(vma);
	struct svod_map *map;

	down_read(&svod_mmap_sem);
	map = mtree_load(&svod_mmap_space.mt, vma->vm_pgoff);
	if (!map || !map->alloc)
		map = ERR_PTR(-EINVAL);
	else if (map->sf != filp->private_data)
		map = ERR_PTR(-EACCES);
	else if (npages > map->npages - (vma->vm_pgoff - map->pgoff))
		map = ERR_PTR(-ENXIO);
	else
		kref_get(&map->ref);
	up_read(&svod_mmap_sem);
	return map;
}

/*
 * Checks @vma's flags against @map and makes it a mapping of @map, which
 * holds a reference for it. Return: 0 or -EACCES for a writable mapping of
 * a read-only range.
 */
static int svod_mmap_setup(struct svod_map *map, struct vm_area_struct *vma)
{
	if (!map->writable && (vma->vm_flags & VM_WRITE)) {
		svod_map_put(map);
		return -EACCES;
	}
	atomic_inc(&map->vmas);
	/* No exec later either: mprotect(PROT_EXEC) fails with -EACCES. */
	vma->vm_flags |= VM_IO | VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP;
	vma->vm_flags &= ~VM_MAYEXEC;
	if (!map->writable)
		vma->vm_flags &= ~VM_MAYWRITE;
	vma->vm_page_prot = pgprot_writecombine(vm_get_page_prot(vma->vm_flags));
	vma->vm_private_data = map;
	vma->vm_ops = &svod_vm_ops;
	return 0;
}

/* What every svod mapping needs, before its range is looked up. */
static int svod_mmap_check(const struct vm_area_struct *vma)
{
	/* VM_MAYSHARE: a read-only MAP_SHARED of an O_RDONLY fd lacks VM_SHARED. */
	if (!(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;
	return 0;
}

/**
 * svod_mmap() - the .mmap of /dev/svod
 * @filp: the open file
 * @vma: the new mapping; vm_pgoff inside a range of SVOD_IOCTL_MAP_OFFSET
 *
 * Context: process context; mmap_lock held for write.
 * Return: 0; -EINVAL without MAP_SHARED, or for an offset that names no
 * live allocation; -EPERM with PROT_EXEC; -EACCES for an offset of another
 * file's allocation, or PROT_WRITE through a read-only handle; -ENXIO if
 * the mapping reaches past the allocation.
 */
int svod_mmap(struct file *filp, struct vm_area_struct *vma)
{
	struct svod_map *map;
	int ret;

	ret = svod_mmap_check(vma);
	if (ret)
		return ret;
	map = svod_mmap_find(filp, vma);
	if (IS_ERR(map))
		return PTR_ERR(map);
	return svod_mmap_setup(map, vma);
}

/**
 * svod_mmap_dmabuf() - the mmap() of a dma-buf of svod
 * @owner: where the dma-buf keeps its range
 * @vma: the new mapping; the dma-buf core checked that it lies inside the
 *	dma-buf, and the VFS that a writable one is of a read-write dma-buf
 *
 * The same mapping as /dev/svod's, revoked when the allocation's tier is
 * retired (device removal): the dma-buf's own range, not a handle's.
 *
 * Context: process context; mmap_lock held for write.
 * Return: 0; -EINVAL without MAP_SHARED; -EPERM with PROT_EXEC; -ENODEV
 * once the device is gone.
 */
int svod_mmap_dmabuf(struct svod_map **owner, struct vm_area_struct *vma)
{
	struct svod_map *map;
	int ret;

	ret = svod_mmap_check(vma);
	if (ret)
		return ret;
	down_read(&svod_mmap_sem);
	map = *owner;
	if (map)
		kref_get(&map->ref);
	up_read(&svod_mmap_sem);
	if (!map)
		return -ENODEV;
	return svod_mmap_setup(map, vma);
}
