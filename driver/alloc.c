// SPDX-License-Identifier: GPL-2.0
/*
 * svod allocations and their ioctls: ALLOC, FREE and RESOLVE, each file's
 * usage per tier (what max_bytes is checked against, what fdinfo shows) and
 * the release of a closing file's allocations. Handlers take the kernel copy
 * of their struct (ioctl.c copies and dispatches).
 *
 * An allocation is freed in two steps. FREE (or close) removes its handle at
 * once, so no call can reach it any more, revokes its mappings (mmap.c) and
 * cancels its asynchronous transfers (async.c: none touches the range after
 * FREE returns); the range is zeroed through the write-combined mapping and
 * returned to the tier when the last reference goes, which is at the end
 * of FREE unless a synchronous STAGE or READ of the same allocation is
 * still running, then at the end of that transfer.
 */
#include <kunit/visibility.h>
#include <linux/ktime.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "alloc.h"
#include "async.h"
#include "dev.h"
#include "file.h"
#include "ioctl.h"
#include "mmap.h"
#include "tier.h"
#include "trace.h"

static unsigned long long svod_max_bytes;
module_param_named(max_bytes, svod_max_bytes, ullong, 0644);
MODULE_PARM_DESC(max_bytes,
		 "Bytes per open file per tier, 0 = unlimited (-EDQUOT beyond)");

/* The file's usage of @tier, created empty if it has none yet. */
static struct svod_usage *svod_usage_get(struct svod_file *sf,
					 const struct svod_dev_tier *tier)
{
	struct svod_usage *usage;
	int ret;

	lockdep_assert_held(&sf->lock);
	usage = xa_load(&sf->usage, tier->id);
	if (usage)
		return usage;
	usage = kzalloc(sizeof(*usage), GFP_KERNEL_ACCOUNT);
	if (!usage)
		return ERR_PTR(-ENOMEM);
	ret = xa_err(xa_store(&sf->usage, tier->id, usage, GFP_KERNEL_ACCOUNT));
	if (ret) {
		kfree(usage);
		return ERR_PTR(ret);
	}
	return usage;
}

/*
 * svod_usage_trim() - drop a usage record once it holds nothing
 * @sf: the file, its lock held
 * @tier: the tier @usage counts
 * @usage: the record
 *
 * An idle tier costs a file nothing.
 *
 * Context: process context; @sf's lock held.
 */
static void svod_usage_trim(struct svod_file *sf, const struct svod_dev_tier *tier,
			    struct svod_usage *usage)
{
	lockdep_assert_held(&sf->lock);
	if (usage->handles)
		return;
	xa_erase(&sf->usage, tier->id);
	kfree(usage);
}

/*
 * svod_usage_charge() - the file's usage of a tier, if @size more bytes fit
 * @sf: the file, its lock held
 * @tier: the tier
 * @size: bytes about to be allocated
 *
 * Checks the max_bytes limit only; the caller adds @size and one handle to
 * the record once the allocation succeeded, or calls svod_usage_trim().
 *
 * Context: process context; @sf's lock held.
 * Return: the record, ERR_PTR(-EDQUOT) beyond max_bytes, or
 * ERR_PTR(-ENOMEM).
 */
static struct svod_usage *svod_usage_charge(struct svod_file *sf,
					    const struct svod_dev_tier *tier, u64 size)
{
	u64 max_bytes = READ_ONCE(svod_max_bytes);
	struct svod_usage *usage;

	usage = svod_usage_get(sf, tier);
	if (IS_ERR(usage))
		return usage;
	if (max_bytes && (size > max_bytes || usage->bytes > max_bytes - size)) {
		svod_usage_trim(sf, tier, usage);
		return ERR_PTR(-EDQUOT);
	}
	return usage;
}

/*
 * svod_usage_sub() - forget an allocation in its file's usage
 * @sf: the file, its lock held
 * @alloc: the allocation whose handle was just removed
 *
 * Context: process context; @sf's lock held.
 */
static void svod_usage_sub(struct svod_file *sf, const struct svod_allocation *alloc)
{
	struct svod_usage *usage = xa_load(&sf->usage, alloc->tier->id);

	lockdep_assert_held(&sf->lock);
	if (WARN_ON(!usage))
		return;
	usage->bytes -= svod_allocation_size(alloc);
	usage->handles--;
	svod_usage_trim(sf, alloc->tier, usage);
}

static void svod_allocation_release(struct kref *ref)
{
	struct svod_allocation *alloc =
		container_of(ref, struct svod_allocation, ref);
	struct svod_dev_tier *tier = alloc->tier;

	down_read(&tier->io_sem);
	if (!tier->gone)
		svod_dev_tier_scrub(tier, svod_allocation_start(alloc),
				    svod_allocation_size(alloc));
	mutex_lock(&tier->lock);
	list_del(&alloc->tier_link);
	svod_range_remove(&tier->core, &alloc->node);
	mutex_unlock(&tier->lock);
	up_read(&tier->io_sem);

	kfree(alloc);
	svod_dev_tier_put(tier);
}

/**
 * svod_allocation_put() - drop a reference to an allocation
 * @alloc: the allocation
 *
 * The last reference scrubs the range (unless the device is gone) and
 * returns it to the tier.
 *
 * Context: process context; may sleep.
 */
void svod_allocation_put(struct svod_allocation *alloc)
{
	kref_put(&alloc->ref, svod_allocation_release);
}
EXPORT_SYMBOL_IF_KUNIT(svod_allocation_put);

/**
 * svod_allocation_get() - the allocation a handle of a file names
 * @sf: the file
 * @handle: the handle
 *
 * Context: process context; takes @sf's lock.
 * Return: the allocation with a reference the caller drops with
 * svod_allocation_put(), or NULL if @handle is not live in @sf.
 */
struct svod_allocation *svod_allocation_get(struct svod_file *sf, u64 handle)
{
	struct svod_allocation *alloc;

	mutex_lock(&sf->lock);
	alloc = svod_handle_lookup(&sf->handles, handle);
	if (alloc)
		kref_get(&alloc->ref);
	mutex_unlock(&sf->lock);
	return alloc;
}
EXPORT_SYMBOL_IF_KUNIT(svod_allocation_get);

/* Takes @size bytes of @tier for @alloc; @tier's lock is taken here. */
static int svod_allocation_place(struct svod_allocation *alloc,
				 struct svod_dev_tier *tier, u64 size,
				 u64 align)
{
	int ret;

	mutex_lock(&tier->lock);
	if (tier->gone)
		ret = -ENODEV;
	else
		ret = svod_range_insert(&tier->core, &alloc->node, size, align);
	if (!ret)
		list_add_tail(&alloc->tier_link, &tier->live);
	mutex_unlock(&tier->lock);
	return ret;
}

/* Returns a range that was never reachable from userspace: no scrub. */
static void svod_allocation_unplace(struct svod_allocation *alloc)
{
	struct svod_dev_tier *tier = alloc->tier;

	/* io_sem too: an unbind walks @live under io_sem alone. */
	down_read(&tier->io_sem);
	mutex_lock(&tier->lock);
	list_del(&alloc->tier_link);
	svod_range_remove(&tier->core, &alloc->node);
	mutex_unlock(&tier->lock);
	up_read(&tier->io_sem);
}

/* ALLOC once the tier is found: everything under the file's lock. */
static int svod_alloc_locked(struct svod_file *sf,
			     struct svod_allocation *alloc,
			     struct svod_alloc *req, u64 size, u64 align)
{
	struct svod_dev_tier *tier = alloc->tier;
	struct svod_usage *usage;
	u64 handle;
	int ret;

	lockdep_assert_held(&sf->lock);
	if (READ_ONCE(tier->gone))
		return -ENODEV;
	usage = svod_usage_charge(sf, tier, size);
	if (IS_ERR(usage))
		return PTR_ERR(usage);
	ret = svod_allocation_place(alloc, tier, size, align);
	if (ret)
		goto trim_usage;
	ret = svod_handle_alloc(&sf->handles, alloc, GFP_KERNEL_ACCOUNT,
				&handle);
	if (ret)
		goto unplace;

	usage->bytes += svod_allocation_size(alloc);
	usage->handles++;
	req->handle = handle;
	req->device_addr = svod_allocation_start(alloc);
	req->capacity = svod_allocation_size(alloc);
	req->id = svod_handle_slot(handle);
	req->generation = svod_handle_gen(handle);
	return 0;

unplace:
	svod_allocation_unplace(alloc);
trim_usage:
	svod_usage_trim(sf, tier, usage);
	return ret;
}

/*
 * SVOD_ALLOC_MAPPABLE: whole pages, page-aligned in the BAR; the tier's BAR
 * offset and device base must agree modulo the page size.
 */
static int svod_alloc_mappable(const struct svod_dev_tier *tier,
			       u64 *size, u64 *align)
{
	if (!PAGE_ALIGNED(tier->spec.offset - tier->spec.base))
		return -EOPNOTSUPP;
	if (*size > U64_MAX - (PAGE_SIZE - 1))
		return -ENOSPC;
	*size = PAGE_ALIGN(*size);
	*align = max_t(u64, *align, PAGE_SIZE);
	return 0;
}

/**
 * svod_alloc_ioctl() - SVOD_IOCTL_ALLOC
 * @sf: the file
 * @data: struct svod_alloc; in: tier, flags, size, align; out: handle,
 *	device_addr, capacity
 *
 * Context: process context; takes @sf's lock, then the tier's.
 * Return: 0; -EINVAL for unknown flags, size 0 or an align that is not a
 * power of two; -ENOENT for an unknown tier; -EOPNOTSUPP for
 * SVOD_ALLOC_MAPPABLE in a tier whose BAR offset and base differ by other
 * than whole pages; -ENODEV if its device is gone; -EDQUOT beyond the
 * file's max_bytes in the tier; -ENOSPC if it does not fit; -EMFILE at the
 * file's max_handles; -ENOMEM. Nothing changes on failure.
 */
int svod_alloc_ioctl(struct svod_file *sf, void *data)
{
	struct svod_alloc *req = data;
	struct svod_allocation *alloc;
	struct svod_dev_tier *tier;
	u64 size = req->size, align = req->align;
	u64 t0 = svod_trace_clock(trace_svod_alloc_enabled());
	int ret;

	/* Argument errors first, whatever the state of the tier. */
	if ((req->flags & ~SVOD_ALLOC_FLAGS) || !req->size ||
	    (req->align && !is_power_of_2(req->align)))
		return -EINVAL;
	tier = svod_dev_tier_get_by_id(req->tier);
	if (!tier)
		return -ENOENT;
	ret = req->flags & SVOD_ALLOC_MAPPABLE ?
	      svod_alloc_mappable(tier, &size, &align) : 0;
	alloc = ret ? NULL : kzalloc(sizeof(*alloc), GFP_KERNEL_ACCOUNT);
	if (!alloc) {
		svod_dev_tier_put(tier);
		return ret ? ret : -ENOMEM;
	}
	kref_init(&alloc->ref);
	alloc->tier = tier;

	mutex_lock(&sf->lock);
	ret = svod_alloc_locked(sf, alloc, req, size, align);
	mutex_unlock(&sf->lock);
	trace_svod_alloc(tier, ret ? 0 : req->handle, size, align, ret,
			 svod_trace_since(t0));
	if (ret) {
		kfree(alloc);
		svod_dev_tier_put(tier);
	}
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(svod_alloc_ioctl);

/**
 * svod_alloc_ioctl_unwind() - take back an ALLOC whose reply was lost
 * @sf: the file
 * @data: the struct svod_alloc svod_alloc_ioctl() filled
 *
 * The caller could not be told the handle: free it, so nothing leaks.
 *
 * Context: process context; may sleep.
 */
void svod_alloc_ioctl_unwind(struct svod_file *sf, void *data)
{
	const struct svod_alloc *req = data;
	struct svod_free f = { .handle = req->handle };

	svod_free_ioctl(sf, &f);
}

/**
 * svod_free_ioctl() - SVOD_IOCTL_FREE
 * @sf: the file
 * @data: struct svod_free; in: handle, flags, pad
 *
 * The handle is dead when this returns, and every mapping of the allocation
 * revoked (SIGBUS on access); the range is zeroed and back in its tier too,
 * unless a synchronous transfer on it is still running (then it goes back
 * when that transfer ends). Its asynchronous transfers are cancelled:
 * queued ones end with -ECANCELED, a running one stops at its next chunk
 * and FREE waits for that. Works on a gone device's tier (nothing is
 * zeroed).
 *
 * Context: process context; may sleep while zeroing, and for one chunk of
 * a running asynchronous transfer.
 * Return: 0; -EINVAL for unknown flags or a nonzero pad; -ESTALE if the
 * handle is not live in @sf.
 */
int svod_free_ioctl(struct svod_file *sf, void *data)
{
	const struct svod_free *req = data;
	struct svod_allocation *alloc;
	struct svod_dev_tier *tier;
	u64 t0 = svod_trace_clock(trace_svod_free_enabled()), size;
	void *obj;
	int ret;

	if (req->flags || req->pad)
		return -EINVAL;
	mutex_lock(&sf->lock);
	ret = svod_handle_free(&sf->handles, req->handle, &obj);
	if (!ret)
		svod_usage_sub(sf, obj);
	mutex_unlock(&sf->lock);
	if (ret)
		return ret;
	alloc = obj;
	tier = alloc->tier;
	size = svod_allocation_size(alloc);
	/* The tier outlives the allocation's last reference for the event. */
	kref_get(&tier->ref);
	/*
	 * MAP_OFFSET gives an allocation its map only under @sf's lock and
	 * with its handle live: with the handle gone, a NULL map stays NULL
	 * (device removal may only clear it), and there is nothing to revoke.
	 */
	if (READ_ONCE(alloc->map))
		svod_mmap_revoke(alloc);
	/* Queued transfers end, a running one stops: none outlives the range. */
	svod_async_cancel(&sf->async, alloc);
	svod_allocation_put(alloc);
	trace_svod_free(tier, req->handle, size, svod_trace_since(t0));
	svod_dev_tier_put(tier);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(svod_free_ioctl);

/**
 * svod_resolve_ioctl() - SVOD_IOCTL_RESOLVE
 * @sf: the file
 * @data: struct svod_resolve; in: handle, flags; out: tier, device_addr,
 *	capacity
 *
 * Context: process context; takes @sf's lock.
 * Return: 0; -EINVAL for unknown flags; -ESTALE if the handle is not live
 * in @sf; -ENODEV if its tier's device is gone.
 */
int svod_resolve_ioctl(struct svod_file *sf, void *data)
{
	struct svod_resolve *req = data;
	struct svod_allocation *alloc;
	int ret = 0;

	if (req->flags)
		return -EINVAL;
	mutex_lock(&sf->lock);
	alloc = svod_handle_lookup(&sf->handles, req->handle);
	if (!alloc) {
		ret = -ESTALE;
	} else if (READ_ONCE(alloc->tier->gone)) {
		ret = -ENODEV;
	} else {
		req->tier = alloc->tier->id;
		req->device_addr = svod_allocation_start(alloc);
		req->capacity = svod_allocation_size(alloc);
	}
	mutex_unlock(&sf->lock);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(svod_resolve_ioctl);

/**
 * svod_file_free_all() - free every allocation of a closing file
 * @sf: the file; no call can reach it any more
 *
 * Each handle goes, its usage is forgotten and its mappings revoked; the
 * range returns to its tier when the last transfer holding it ends.
 *
 * Context: process context; sleeps; takes @sf's lock.
 */
void svod_file_free_all(struct svod_file *sf)
{
	struct svod_allocation *alloc;
	u32 pos = 0;
	u64 handle;

	mutex_lock(&sf->lock);
	while ((alloc = svod_handle_next(&sf->handles, &pos, &handle))) {
		svod_handle_free(&sf->handles, handle, NULL);
		svod_usage_sub(sf, alloc);
		/* @sf's lock keeps MAP_OFFSET out: NULL means never mapped. */
		if (READ_ONCE(alloc->map))
			svod_mmap_revoke(alloc);
		svod_allocation_put(alloc);
	}
	mutex_unlock(&sf->lock);
}

/* BAR page frame of @alloc's first byte; its tier is not gone. */
static bool svod_allocation_pfn(const struct svod_allocation *alloc,
				unsigned long *pfn)
{
	const struct svod_dev_tier *tier = alloc->tier;
	phys_addr_t phys = tier->sdev->bars[tier->spec.bar].phys +
			   tier->spec.offset +
			   (svod_allocation_start(alloc) - tier->spec.base);

	*pfn = PHYS_PFN(phys);
	return PAGE_ALIGNED(phys) && PAGE_ALIGNED(svod_allocation_size(alloc));
}

/**
 * svod_map_offset_ioctl() - SVOD_IOCTL_MAP_OFFSET
 * @sf: the file
 * @data: struct svod_map_offset; in: handle, flags, pad; out: offset, size
 *
 * Context: process context; takes @sf's lock, the tier's, then
 * svod_mmap_sem.
 * Return: 0; -EINVAL for unknown flags or a nonzero pad; -ESTALE if the
 * handle is not live in @sf; -ENODEV if its tier's device is gone;
 * -EOPNOTSUPP if the allocation's start (in its BAR) or size is not a
 * multiple of the page size; -ENOSPC once the offset space is used up;
 * -ENOMEM.
 */
int svod_map_offset_ioctl(struct svod_file *sf, void *data)
{
	struct svod_map_offset *req = data;
	struct svod_allocation *alloc;
	struct svod_dev_tier *tier;
	unsigned long pfn;
	int ret;

	if (req->flags || req->pad)
		return -EINVAL;
	mutex_lock(&sf->lock);
	alloc = svod_handle_lookup(&sf->handles, req->handle);
	if (!alloc) {
		ret = -ESTALE;
		goto unlock_file;
	}
	/*
	 * The tier lock keeps the device, and a removal waits until the range
	 * exists so that it revokes it (svod_dev_unregister()).
	 */
	tier = alloc->tier;
	mutex_lock(&tier->lock);
	if (tier->gone)
		ret = -ENODEV;
	else if (!svod_allocation_pfn(alloc, &pfn))
		ret = -EOPNOTSUPP;
	else
		ret = svod_mmap_offset(sf, alloc, pfn, &req->offset);
	if (!ret)
		req->size = svod_allocation_size(alloc);
	mutex_unlock(&tier->lock);
unlock_file:
	mutex_unlock(&sf->lock);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(svod_map_offset_ioctl);
