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
 * still running, then at the end of that transfer. FREE with
 * SVOD_FREE_AFTER_USE instead gives each asynchronous transfer of the
 * handle not yet signalled a reference (svod_async_hand_over()), dropped
 * in the job's cleanup work after its fence signalled: the last one zeroes
 * and returns the range, still charged to the file until then.
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

/* A decimal integer (svod.rst, "Limits"): 010 is ten, 0x10 is -EINVAL. */
static int svod_max_bytes_set(const char *val, const struct kernel_param *kp)
{
	unsigned long long n;
	int ret;

	ret = kstrtoull(val, 10, &n);
	if (ret)
		return ret;
	WRITE_ONCE(svod_max_bytes, n);
	return 0;
}

static const struct kernel_param_ops svod_max_bytes_ops = {
	.set = svod_max_bytes_set,
	.get = param_get_ullong,
};

module_param_cb(max_bytes, &svod_max_bytes_ops, &svod_max_bytes, 0644);
MODULE_PARM_DESC(max_bytes,
		 "Bytes per open file per tier, decimal, 0 = unlimited (-EDQUOT beyond)");

/**
 * svod_account_create() - a new, empty account for an open file
 *
 * Context: process context.
 * Return: the account with one reference, or NULL.
 */
struct svod_account *svod_account_create(void)
{
	struct svod_account *acct = kzalloc(sizeof(*acct), GFP_KERNEL_ACCOUNT);

	if (!acct)
		return NULL;
	kref_init(&acct->ref);
	mutex_init(&acct->lock);
	xa_init(&acct->usage);
	return acct;
}

static void svod_account_release(struct kref *ref)
{
	struct svod_account *acct = container_of(ref, struct svod_account, ref);

	WARN_ON(!xa_empty(&acct->usage));
	xa_destroy(&acct->usage);
	mutex_destroy(&acct->lock);
	kfree(acct);
}

/**
 * svod_account_put() - drop a reference to an account
 * @acct: the account
 *
 * Context: any context that may sleep.
 */
void svod_account_put(struct svod_account *acct)
{
	kref_put(&acct->ref, svod_account_release);
}
EXPORT_SYMBOL_IF_KUNIT(svod_account_put);

/* @acct's usage of tier @id, created empty if it has none yet. */
static struct svod_usage *svod_usage_get(struct svod_account *acct, u32 id)
{
	struct svod_usage *usage;
	int ret;

	lockdep_assert_held(&acct->lock);
	usage = xa_load(&acct->usage, id);
	if (usage)
		return usage;
	usage = kzalloc(sizeof(*usage), GFP_KERNEL_ACCOUNT);
	if (!usage)
		return ERR_PTR(-ENOMEM);
	ret = xa_err(xa_store(&acct->usage, id, usage, GFP_KERNEL_ACCOUNT));
	if (ret) {
		kfree(usage);
		return ERR_PTR(ret);
	}
	return usage;
}

/*
 * svod_usage_trim() - drop a usage record once it holds nothing
 * @acct: the account, its lock held
 * @id: the tier @usage counts
 * @usage: the record
 *
 * An idle tier costs an account nothing.
 *
 * Context: process context; @acct's lock held.
 */
static void svod_usage_trim(struct svod_account *acct, u32 id,
			    struct svod_usage *usage)
{
	lockdep_assert_held(&acct->lock);
	if (usage->bytes || usage->handles || usage->exported || usage->imported)
		return;
	xa_erase(&acct->usage, id);
	kfree(usage);
}

/*
 * svod_usage_charge() - charge @size more bytes of @tier to an account
 * @acct: the account, its lock held
 * @tier: the tier
 * @size: bytes about to be allocated
 *
 * Checks the max_bytes limit, then adds @size; the caller gives it back
 * with svod_usage_uncharge() if the allocation fails.
 *
 * Context: process context; @acct's lock held.
 * Return: the record, ERR_PTR(-EDQUOT) beyond max_bytes, or
 * ERR_PTR(-ENOMEM).
 */
static struct svod_usage *svod_usage_charge(struct svod_account *acct,
					    const struct svod_dev_tier *tier, u64 size)
{
	u64 max_bytes = READ_ONCE(svod_max_bytes);
	struct svod_usage *usage;

	usage = svod_usage_get(acct, tier->id);
	if (IS_ERR(usage))
		return usage;
	if (max_bytes && (size > max_bytes || usage->bytes > max_bytes - size)) {
		svod_usage_trim(acct, tier->id, usage);
		return ERR_PTR(-EDQUOT);
	}
	usage->bytes += size;
	return usage;
}

/* Takes back @size bytes charged to @usage of tier @id; @acct's lock held. */
static void svod_usage_uncharge(struct svod_account *acct, u32 id,
				struct svod_usage *usage, u64 size)
{
	lockdep_assert_held(&acct->lock);
	usage->bytes -= size;
	svod_usage_trim(acct, id, usage);
}

/* @acct's record of tier @id, which an allocation or a handle keeps. */
static struct svod_usage *svod_usage_of(struct svod_account *acct, u32 id)
{
	struct svod_usage *usage = xa_load(&acct->usage, id);

	lockdep_assert_held(&acct->lock);
	WARN_ON(!usage);
	return usage;
}

/**
 * svod_account_export() - count a dma-buf of an allocation in and out
 * @alloc: the allocation
 * @add: a dma-buf of it was made (true) or released (false)
 *
 * The allocation's bytes count as exported in its account while it has a
 * dma-buf.
 *
 * Context: process context; takes the account's lock.
 */
void svod_account_export(struct svod_allocation *alloc, bool add)
{
	struct svod_account *acct = alloc->acct;
	struct svod_usage *usage;

	mutex_lock(&acct->lock);
	usage = svod_usage_of(acct, alloc->tier->id);
	if (add && !alloc->exports++)
		usage->exported += svod_allocation_size(alloc);
	else if (!add && !--alloc->exports)
		usage->exported -= svod_allocation_size(alloc);
	mutex_unlock(&acct->lock);
}

/*
 * svod_hold_forget() - count a handle out of its file's usage
 * @sf: the file, its lock held
 * @hold: what the handle named; the handle was just removed
 *
 * Context: process context; @sf's lock held; takes its account's lock.
 */
static void svod_hold_forget(struct svod_file *sf, const struct svod_hold *hold)
{
	struct svod_account *acct = sf->acct;
	u32 id = hold->alloc->tier->id;
	struct svod_usage *usage;

	lockdep_assert_held(&sf->lock);
	mutex_lock(&acct->lock);
	usage = svod_usage_of(acct, id);
	usage->handles--;
	if (hold->imported)
		usage->imported -= svod_allocation_size(hold->alloc);
	svod_usage_trim(acct, id, usage);
	mutex_unlock(&acct->lock);
}

static void svod_allocation_release(struct kref *ref)
{
	struct svod_allocation *alloc =
		container_of(ref, struct svod_allocation, ref);
	struct svod_dev_tier *tier = alloc->tier;
	struct svod_account *acct = alloc->acct;
	u64 size = svod_allocation_size(alloc);

	down_read(&tier->io_sem);
	if (!tier->gone)
		svod_dev_tier_scrub(tier, svod_allocation_start(alloc), size);
	mutex_lock(&tier->lock);
	list_del(&alloc->tier_link);
	svod_range_remove(&tier->core, &alloc->node);
	mutex_unlock(&tier->lock);
	up_read(&tier->io_sem);

	/* Charged until here: a shared range counts against its allocator. */
	mutex_lock(&acct->lock);
	svod_usage_uncharge(acct, tier->id, svod_usage_of(acct, tier->id), size);
	mutex_unlock(&acct->lock);
	svod_account_put(acct);
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
 * @access: SVOD_ACCESS_* the caller needs
 * @key: out, unless NULL: what names the handle for svod_async_cancel()
 *	(only compared, never followed)
 *
 * Context: process context; takes @sf's lock.
 * Return: the allocation with a reference the caller drops with
 * svod_allocation_put(); ERR_PTR(-ESTALE) if @handle is not live in @sf,
 * ERR_PTR(-EACCES) if it lacks @access.
 */
struct svod_allocation *svod_allocation_get(struct svod_file *sf, u64 handle,
					    u32 access, const void **key)
{
	struct svod_allocation *alloc = ERR_PTR(-ESTALE);
	struct svod_hold *hold;

	mutex_lock(&sf->lock);
	hold = svod_handle_lookup(&sf->handles, handle);
	if (hold && (hold->access & access) != access) {
		alloc = ERR_PTR(-EACCES);
	} else if (hold) {
		alloc = hold->alloc;
		kref_get(&alloc->ref);
		if (key)
			*key = hold;
	}
	mutex_unlock(&sf->lock);
	return alloc;
}
EXPORT_SYMBOL_IF_KUNIT(svod_allocation_get);

/*
 * Gives @hold a handle in @sf and counts it in the file's usage; @sf's lock
 * held. Return: 0, -EMFILE or -ENOMEM.
 */
static int svod_hold_add_locked(struct svod_file *sf, struct svod_hold *hold,
				u64 *handle)
{
	struct svod_account *acct = sf->acct;
	u32 id = hold->alloc->tier->id;
	struct svod_usage *usage;
	int ret;

	lockdep_assert_held(&sf->lock);
	mutex_lock(&acct->lock);
	usage = svod_usage_get(acct, id);
	ret = PTR_ERR_OR_ZERO(usage);
	if (!ret)
		ret = svod_handle_alloc(&sf->handles, hold, GFP_KERNEL_ACCOUNT,
					handle);
	if (!ret) {
		usage->handles++;
		if (hold->imported)
			usage->imported += svod_allocation_size(hold->alloc);
	} else if (!IS_ERR(usage)) {
		svod_usage_trim(acct, id, usage);
	}
	mutex_unlock(&acct->lock);
	return ret;
}

/**
 * svod_hold_add() - a new handle of a file for an allocation it imports
 * @sf: the file
 * @alloc: the allocation (the caller keeps its own reference)
 * @access: SVOD_ACCESS_* the handle grants
 * @handle: out: the handle
 *
 * Context: process context; takes @sf's lock and its account's.
 * Return: 0; -ENODEV if the allocation's device is gone; -EMFILE at the
 * file's max_handles; -ENOMEM. Nothing changes on failure.
 */
int svod_hold_add(struct svod_file *sf, struct svod_allocation *alloc,
		  u32 access, u64 *handle)
{
	struct svod_hold *hold;
	int ret;

	hold = kzalloc(sizeof(*hold), GFP_KERNEL_ACCOUNT);
	if (!hold)
		return -ENOMEM;
	hold->alloc = alloc;
	hold->access = access;
	hold->imported = true;
	mutex_lock(&sf->lock);
	ret = READ_ONCE(alloc->tier->gone) ? -ENODEV :
	      svod_hold_add_locked(sf, hold, handle);
	if (!ret)
		kref_get(&alloc->ref);
	mutex_unlock(&sf->lock);
	if (ret)
		kfree(hold);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(svod_hold_add);

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
static int svod_alloc_locked(struct svod_file *sf, struct svod_hold *hold,
			     struct svod_alloc *req, u64 size, u64 align)
{
	struct svod_allocation *alloc = hold->alloc;
	struct svod_dev_tier *tier = alloc->tier;
	struct svod_account *acct = sf->acct;
	struct svod_usage *usage;
	u64 handle;
	int ret;

	lockdep_assert_held(&sf->lock);
	if (READ_ONCE(tier->gone))
		return -ENODEV;
	mutex_lock(&acct->lock);
	usage = svod_usage_charge(acct, tier, size);
	mutex_unlock(&acct->lock);
	if (IS_ERR(usage))
		return PTR_ERR(usage);
	ret = svod_allocation_place(alloc, tier, size, align);
	if (ret)
		goto uncharge;
	ret = svod_hold_add_locked(sf, hold, &handle);
	if (ret)
		goto unplace;

	req->handle = handle;
	req->device_addr = svod_allocation_start(alloc);
	req->capacity = svod_allocation_size(alloc);
	req->id = svod_handle_slot(handle);
	req->generation = svod_handle_gen(handle);
	return 0;

unplace:
	svod_allocation_unplace(alloc);
uncharge:
	mutex_lock(&acct->lock);
	svod_usage_uncharge(acct, tier->id, usage, size);
	mutex_unlock(&acct->lock);
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
 * power of two; -ENOENT for an unknown tier; -EACCES if the file's opener
 * may not use the tier (svod_dev_tier_may_use()); -EOPNOTSUPP for
 * SVOD_ALLOC_MAPPABLE in a tier whose BAR offset and base differ by other
 * than whole pages; -ENODEV if its device is gone; -EDQUOT beyond the
 * file's max_bytes in the tier; -ENOSPC if it does not fit; -EMFILE at the
 * file's max_handles; -ENOMEM. Nothing changes on failure.
 */
int svod_alloc_ioctl(struct svod_file *sf, void *data)
{
	struct svod_alloc *req = data;
	struct svod_allocation *alloc = NULL;
	struct svod_dev_tier *tier;
	struct svod_hold *hold = NULL;
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
	ret = svod_dev_tier_may_use(tier, sf->filp);
	if (!ret && (req->flags & SVOD_ALLOC_MAPPABLE))
		ret = svod_alloc_mappable(tier, &size, &align);
	if (!ret) {
		alloc = kzalloc(sizeof(*alloc), GFP_KERNEL_ACCOUNT);
		hold = kzalloc(sizeof(*hold), GFP_KERNEL_ACCOUNT);
		ret = alloc && hold ? 0 : -ENOMEM;
	}
	if (ret)
		goto free;
	kref_init(&alloc->ref);
	alloc->tier = tier;
	alloc->acct = sf->acct;
	INIT_LIST_HEAD(&alloc->maps);
	hold->alloc = alloc;
	hold->access = SVOD_ACCESS_READ | SVOD_ACCESS_WRITE;

	mutex_lock(&sf->lock);
	ret = svod_alloc_locked(sf, hold, req, size, align);
	if (!ret)
		kref_get(&sf->acct->ref);
	mutex_unlock(&sf->lock);
	trace_svod_alloc(tier, ret ? 0 : req->handle, size, align, ret,
			 svod_trace_since(t0));
	if (!ret)
		return 0;
free:
	kfree(hold);
	kfree(alloc);
	svod_dev_tier_put(tier);
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
 * The handle is dead when this returns, and every mapping made through it
 * revoked (SIGBUS on access); the range is zeroed and back in its tier too,
 * unless something else still names it: a synchronous transfer still
 * running, another handle (IMPORT) or a dma-buf (then it goes back, and
 * stays charged to the file that allocated it, until the last of them
 * goes). The handle's asynchronous transfers are cancelled:
 * queued ones end with -ECANCELED, a running one stops at its next chunk
 * and FREE waits for that. With SVOD_FREE_AFTER_USE they run on instead,
 * each holding a reference on the allocation that its cleanup drops after
 * its fence signalled: the range stays charged (fdinfo, QUERY, sysfs) and
 * out of the tier until the last of them, then is zeroed and returned.
 * Works on a gone device's tier (nothing is zeroed).
 *
 * Context: process context; may sleep while zeroing, and (without
 * SVOD_FREE_AFTER_USE) for one chunk of a running asynchronous transfer.
 * Return: 0; -EINVAL for unknown flags or a nonzero pad; -ESTALE if the
 * handle is not live in @sf.
 */
int svod_free_ioctl(struct svod_file *sf, void *data)
{
	const struct svod_free *req = data;
	struct svod_allocation *alloc;
	struct svod_dev_tier *tier;
	u64 t0 = svod_trace_clock(trace_svod_free_enabled()), size;
	struct svod_hold *hold;
	void *obj;
	int ret;

	if ((req->flags & ~SVOD_FREE_FLAGS) || req->pad)
		return -EINVAL;
	mutex_lock(&sf->lock);
	ret = svod_handle_free(&sf->handles, req->handle, &obj);
	if (!ret)
		svod_hold_forget(sf, obj);
	mutex_unlock(&sf->lock);
	if (ret)
		return ret;
	hold = obj;
	alloc = hold->alloc;
	tier = alloc->tier;
	size = svod_allocation_size(alloc);
	/* The tier outlives the allocation's last reference for the event. */
	kref_get(&tier->ref);
	/*
	 * MAP_OFFSET gives a handle its map only under @sf's lock and with
	 * the handle live: with the handle gone, a NULL map stays NULL
	 * (device removal may only clear it), and there is nothing to revoke.
	 */
	if (READ_ONCE(hold->map))
		svod_mmap_revoke(&hold->map);
	/*
	 * Queued transfers end, a running one stops: none outlives the hold.
	 * After use, each takes a reference on the allocation instead: the
	 * range is zeroed and back in the tier once the last has signalled.
	 */
	if (req->flags & SVOD_FREE_AFTER_USE)
		svod_async_hand_over(&sf->async, hold, &alloc->ref,
				     svod_allocation_release);
	else
		svod_async_cancel(&sf->async, hold);
	kfree(hold);
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
	struct svod_hold *hold;
	int ret = 0;

	if (req->flags)
		return -EINVAL;
	mutex_lock(&sf->lock);
	hold = svod_handle_lookup(&sf->handles, req->handle);
	alloc = hold ? hold->alloc : NULL;
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
 * range returns to its tier when the last transfer, handle or dma-buf
 * holding it goes.
 *
 * Context: process context; sleeps; takes @sf's lock.
 */
void svod_file_free_all(struct svod_file *sf)
{
	struct svod_hold *hold;
	u32 pos = 0;
	u64 handle;

	mutex_lock(&sf->lock);
	while ((hold = svod_handle_next(&sf->handles, &pos, &handle))) {
		svod_handle_free(&sf->handles, handle, NULL);
		svod_hold_forget(sf, hold);
		/* @sf's lock keeps MAP_OFFSET out: NULL means never mapped. */
		if (READ_ONCE(hold->map))
			svod_mmap_revoke(&hold->map);
		svod_allocation_put(hold->alloc);
		kfree(hold);
	}
	mutex_unlock(&sf->lock);
}

/**
 * svod_allocation_bar_off() - offset of an allocation's first byte in its BAR
 * @alloc: the allocation
 *
 * Context: any context.
 * Return: the offset from the start of its tier's BAR.
 */
u64 svod_allocation_bar_off(const struct svod_allocation *alloc)
{
	const struct svod_dev_tier *tier = alloc->tier;

	return tier->spec.offset + (svod_allocation_start(alloc) - tier->spec.base);
}

/**
 * svod_allocation_phys() - CPU physical address of an allocation's first byte
 * @alloc: the allocation; its tier not gone (its device bound)
 *
 * Context: any context.
 * Return: the address, in its BAR.
 */
phys_addr_t svod_allocation_phys(const struct svod_allocation *alloc)
{
	const struct svod_dev_tier *tier = alloc->tier;

	return tier->sdev->bars[tier->spec.bar].phys + svod_allocation_bar_off(alloc);
}

/**
 * svod_allocation_pfn() - BAR page frame of an allocation's first byte
 * @alloc: the allocation; its tier's lock held and the tier not gone
 * @pfn: out: the page frame
 *
 * Context: any context.
 * Return: true if the allocation starts on a page of its BAR and is whole
 * pages long (so it can be mapped).
 */
bool svod_allocation_pfn(const struct svod_allocation *alloc, unsigned long *pfn)
{
	phys_addr_t phys = svod_allocation_phys(alloc);

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
	struct svod_hold *hold;
	unsigned long pfn;
	int ret;

	if (req->flags || req->pad)
		return -EINVAL;
	mutex_lock(&sf->lock);
	hold = svod_handle_lookup(&sf->handles, req->handle);
	if (!hold) {
		ret = -ESTALE;
		goto unlock_file;
	}
	alloc = hold->alloc;
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
		ret = svod_mmap_offset(sf, hold, pfn, &req->offset);
	if (!ret)
		req->size = svod_allocation_size(alloc);
	mutex_unlock(&tier->lock);
unlock_file:
	mutex_unlock(&sf->lock);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(svod_map_offset_ioctl);
