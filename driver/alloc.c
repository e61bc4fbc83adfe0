// SPDX-License-Identifier: GPL-2.0
/*
 * svod allocations and their ioctls: ALLOC, FREE and RESOLVE. Handlers take
 * the kernel copy of their struct (ioctl.c copies and dispatches).
 *
 * An allocation is freed in two steps. FREE (or close) removes its handle at
 * once, so no call can reach it any more, and revokes its mappings
 * (mmap.c); the range is zeroed through the
 * write-combined mapping and returned to the tier when the last reference
 * goes, which is at the end of FREE unless a STAGE or READ of the same
 * allocation is still running, then at the end of that transfer.
 */
#include <linux/ktime.h>
#include <linux/log2.h>
#include <linux/slab.h>

#include "alloc.h"
#include "file.h"
#include "ioctl.h"
#include "mmap.h"
#include "svod.h"
#include "trace.h"

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
 * unless a transfer on it is still running (then it goes back when that
 * transfer ends). Works on a gone device's tier (nothing is zeroed).
 *
 * Context: process context; may sleep while zeroing.
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
	svod_allocation_put(alloc);
	trace_svod_free(tier, req->handle, size, svod_trace_since(t0));
	svod_dev_tier_put(tier);
	return 0;
}

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
