// SPDX-License-Identifier: GPL-2.0
/*
 * svod open files: each has its own handle table (the unit of isolation;
 * an fd shared by fork or SCM_RIGHTS shares it), its usage per tier, and the
 * handlers of the ioctls, which take kernel structs only (ioctl.c copies).
 *
 * An allocation is freed in two steps. FREE (or close) removes its handle at
 * once, so no call can reach it any more; the range is zeroed through the
 * write-combined mapping and returned to the tier when the last reference
 * goes, which is at the end of FREE unless a STAGE or READ of the same
 * allocation is still running, then at the end of that transfer.
 */
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "core/plan.h"
#include "svod.h"

static atomic64_t svod_next_client_id = ATOMIC64_INIT(0);

static void svod_allocation_release(struct kref *ref)
{
	struct svod_allocation *alloc =
		container_of(ref, struct svod_allocation, ref);
	struct svod_dev_tier *tier = alloc->tier;

	down_read(&tier->io_sem);
	if (!tier->gone)
		svod_dev_tier_scrub(tier, alloc->node->start, alloc->node->size);
	mutex_lock(&tier->lock);
	list_del(&alloc->tier_link);
	svod_tier_free(&tier->core, alloc->node);
	mutex_unlock(&tier->lock);
	up_read(&tier->io_sem);

	kfree(alloc);
	svod_dev_tier_put(tier);
}

static void svod_allocation_put(struct svod_allocation *alloc)
{
	kref_put(&alloc->ref, svod_allocation_release);
}

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

/* Drops @usage once it holds nothing, so an idle tier costs nothing. */
static void svod_usage_trim(struct svod_file *sf,
			    const struct svod_dev_tier *tier,
			    struct svod_usage *usage)
{
	lockdep_assert_held(&sf->lock);
	if (usage->handles)
		return;
	xa_erase(&sf->usage, tier->id);
	kfree(usage);
}

/* Forgets a handle's allocation in the file's usage; sf->lock held. */
static void svod_usage_sub(struct svod_file *sf,
			   const struct svod_allocation *alloc)
{
	struct svod_usage *usage = xa_load(&sf->usage, alloc->tier->id);

	lockdep_assert_held(&sf->lock);
	if (WARN_ON(!usage))
		return;
	usage->bytes -= alloc->node->size;
	usage->handles--;
	svod_usage_trim(sf, alloc->tier, usage);
}

static int svod_open(struct inode *inode, struct file *filp)
{
	struct svod_file *sf;

	sf = kzalloc(sizeof(*sf), GFP_KERNEL_ACCOUNT);
	if (!sf)
		return -ENOMEM;
	mutex_init(&sf->lock);
	xa_init(&sf->usage);
	sf->client_id = atomic64_inc_return(&svod_next_client_id);
	/* Tags only need to differ between tables; the table is the file's. */
	svod_handle_table_init(&sf->handles, (u16)sf->client_id,
			       READ_ONCE(svod_max_handles));
	sf->pid = get_pid(task_tgid(current));
	get_task_comm(sf->comm, current);

	mutex_lock(&svod_files_lock);
	list_add_tail(&sf->node, &svod_files);
	mutex_unlock(&svod_files_lock);

	filp->private_data = sf;
	return 0;
}

static int svod_release(struct inode *inode, struct file *filp)
{
	struct svod_file *sf = filp->private_data;
	struct svod_allocation *alloc;
	u32 pos = 0;
	u64 handle;

	mutex_lock(&svod_files_lock);
	list_del(&sf->node);
	mutex_unlock(&svod_files_lock);

	mutex_lock(&sf->lock);
	while ((alloc = svod_handle_next(&sf->handles, &pos, &handle))) {
		svod_handle_free(&sf->handles, handle, NULL);
		svod_usage_sub(sf, alloc);
		svod_allocation_put(alloc);
	}
	mutex_unlock(&sf->lock);

	WARN_ON(!xa_empty(&sf->usage));
	xa_destroy(&sf->usage);
	svod_handle_table_fini(&sf->handles);
	put_pid(sf->pid);
	mutex_destroy(&sf->lock);
	kfree(sf);
	return 0;
}

/* Prints a byte count the way DRM's fdinfo does: exact, in the largest unit. */
static void svod_fdinfo_size(struct seq_file *m, const char *key,
			     const char *tier, u64 bytes)
{
	static const char * const units[] = { "", " KiB", " MiB" };
	unsigned int u = 0;

	while (u < ARRAY_SIZE(units) - 1 && bytes >= SZ_1K &&
	       !(bytes & (SZ_1K - 1))) {
		bytes >>= 10;
		u++;
	}
	seq_printf(m, "%s-%s:\t%llu%s\n", key, tier, bytes, units[u]);
}

static void svod_show_fdinfo(struct seq_file *m, struct file *filp)
{
	struct svod_file *sf = filp->private_data;
	struct svod_dev_tier *tier;
	unsigned long id;

	seq_printf(m, "drm-driver:\t%s\n", KBUILD_MODNAME);
	seq_printf(m, "drm-client-id:\t%llu\n", sf->client_id);

	mutex_lock(&sf->lock);
	xa_lock(&svod_tier_xa);
	xa_for_each(&svod_tier_xa, id, tier) {
		const struct svod_usage *usage = xa_load(&sf->usage, id);

		svod_fdinfo_size(m, "drm-total", tier->spec.name,
				 usage ? usage->bytes : 0);
		seq_printf(m, "svod-handles-%s:\t%u\n", tier->spec.name,
			   usage ? usage->handles : 0);
	}
	xa_unlock(&svod_tier_xa);
	mutex_unlock(&sf->lock);
}

const struct file_operations svod_fops = {
	.owner = THIS_MODULE,
	.open = svod_open,
	.release = svod_release,
	.unlocked_ioctl = svod_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.show_fdinfo = svod_show_fdinfo,
	.llseek = noop_llseek,
};

static void svod_tier_fill_info(struct svod_dev_tier *tier,
				struct svod_tier_info *info)
{
	const struct svod_tier_spec *spec = &tier->spec;
	unsigned int i;

	info->id = tier->id;
	strscpy(info->name, spec->name, sizeof(info->name));
	strscpy(info->device, tier->device, sizeof(info->device));
	info->device_base = spec->base;
	info->capacity = spec->size;
	info->align = spec->align;
	info->nr_reserved = spec->nr_reserved;
	for (i = 0; i < spec->nr_reserved; i++) {
		info->reserved[i].base = spec->reserved[i].base;
		info->reserved[i].size = spec->reserved[i].size;
	}
	info->cpu_bytes = atomic64_read(&tier->stats.cpu_bytes);
	info->dma_bytes = atomic64_read(&tier->stats.dma_bytes);

	mutex_lock(&tier->lock);
	if (tier->gone)
		info->flags |= SVOD_TIER_GONE;
	info->free_bytes = tier->core.free_bytes;
	info->largest_free = svod_tier_largest_free(&tier->core);
	info->reserved_bytes = tier->core.reserved_bytes;
	info->nr_free_spans = tier->core.nr_free_spans;
	info->nr_live = tier->core.nr_live;
	mutex_unlock(&tier->lock);
}

/**
 * svod_query() - describe every tier, in id order
 * @infos: out: the first @max tiers; zero-initialised by the caller
 * @max: entries @infos holds (may be 0)
 * @nr_tiers: out: tiers that exist, including gone ones still referenced
 *
 * Context: process context; takes each tier's lock in turn.
 * Return: 0.
 */
int svod_query(struct svod_tier_info *infos, u32 max, u32 *nr_tiers)
{
	struct svod_dev_tier *tier;
	unsigned long id;
	u32 n = 0;

	for (id = 0; (tier = svod_dev_tier_next(&id)); id++) {
		if (n < max)
			svod_tier_fill_info(tier, &infos[n]);
		n++;
		svod_dev_tier_put(tier);
	}
	*nr_tiers = n;
	return 0;
}

/* The file's usage of @tier if @size more bytes fit its max_bytes. */
static struct svod_usage *svod_usage_charge(struct svod_file *sf,
					    const struct svod_dev_tier *tier,
					    u64 size)
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

/**
 * svod_alloc() - SVOD_IOCTL_ALLOC
 * @sf: the file
 * @req: in: tier, size, align; out: handle, device_addr, capacity
 *
 * Context: process context; takes @sf's lock, then the tier's.
 * Return: 0; -ENOENT for an unknown tier; -ENODEV if its device is gone;
 * -EDQUOT beyond the file's max_bytes in the tier; -EINVAL for size 0 or an
 * align that is not a power of two; -ENOSPC if it does not fit; -EMFILE at
 * the file's max_handles; -ENOMEM. Nothing changes on failure.
 */
int svod_alloc(struct svod_file *sf, struct svod_alloc *req)
{
	struct svod_allocation *alloc;
	struct svod_dev_tier *tier;
	struct svod_tier_node *node;
	struct svod_usage *usage;
	u64 handle;
	int ret;

	tier = svod_dev_tier_get_by_id(req->tier);
	if (!tier)
		return -ENOENT;
	alloc = kzalloc(sizeof(*alloc), GFP_KERNEL_ACCOUNT);
	if (!alloc) {
		ret = -ENOMEM;
		goto put_tier;
	}

	mutex_lock(&sf->lock);
	if (READ_ONCE(tier->gone)) {
		ret = -ENODEV;
		goto unlock_file;
	}
	usage = svod_usage_charge(sf, tier, req->size);
	if (IS_ERR(usage)) {
		ret = PTR_ERR(usage);
		goto unlock_file;
	}

	mutex_lock(&tier->lock);
	if (tier->gone)
		ret = -ENODEV;
	else
		ret = svod_tier_alloc(&tier->core, req->size, req->align,
				      GFP_KERNEL_ACCOUNT, &node);
	if (!ret)
		list_add_tail(&alloc->tier_link, &tier->live);
	mutex_unlock(&tier->lock);
	if (ret)
		goto trim_usage;

	kref_init(&alloc->ref);
	alloc->tier = tier;
	alloc->node = node;
	ret = svod_handle_alloc(&sf->handles, alloc, GFP_KERNEL_ACCOUNT, &handle);
	if (ret)
		goto free_node;
	usage->bytes += node->size;
	usage->handles++;
	mutex_unlock(&sf->lock);

	req->handle = handle;
	req->device_addr = node->start;
	req->capacity = node->size;
	return 0;

free_node:
	/* Never reachable from userspace, never written: no scrub needed. */
	mutex_lock(&tier->lock);
	list_del(&alloc->tier_link);
	svod_tier_free(&tier->core, node);
	mutex_unlock(&tier->lock);
trim_usage:
	svod_usage_trim(sf, tier, usage);
unlock_file:
	mutex_unlock(&sf->lock);
	kfree(alloc);
put_tier:
	svod_dev_tier_put(tier);
	return ret;
}

/**
 * svod_free() - SVOD_IOCTL_FREE
 * @sf: the file
 * @req: in: handle
 *
 * The handle is dead when this returns; the range is zeroed and back in its
 * tier too, unless a transfer on it is still running (then it goes back when
 * that transfer ends). Works on a gone device's tier (nothing is zeroed).
 *
 * Context: process context; may sleep while zeroing.
 * Return: 0, or -ESTALE if @req->handle is not live in @sf.
 */
int svod_free(struct svod_file *sf, const struct svod_free *req)
{
	void *obj;
	int ret;

	mutex_lock(&sf->lock);
	ret = svod_handle_free(&sf->handles, req->handle, &obj);
	if (!ret)
		svod_usage_sub(sf, obj);
	mutex_unlock(&sf->lock);
	if (ret)
		return ret;
	svod_allocation_put(obj);
	return 0;
}

/**
 * svod_resolve() - SVOD_IOCTL_RESOLVE
 * @sf: the file
 * @req: in: handle; out: tier, device_addr, capacity
 *
 * Context: process context; takes @sf's lock.
 * Return: 0; -ESTALE if @req->handle is not live in @sf; -ENODEV if its
 * tier's device is gone.
 */
int svod_resolve(struct svod_file *sf, struct svod_resolve *req)
{
	struct svod_allocation *alloc;
	int ret = 0;

	mutex_lock(&sf->lock);
	alloc = svod_handle_lookup(&sf->handles, req->handle);
	if (!alloc) {
		ret = -ESTALE;
	} else if (READ_ONCE(alloc->tier->gone)) {
		ret = -ENODEV;
	} else {
		req->tier = alloc->tier->id;
		req->device_addr = alloc->node->start;
		req->capacity = alloc->node->size;
	}
	mutex_unlock(&sf->lock);
	return ret;
}

/**
 * svod_xfer() - SVOD_IOCTL_STAGE and SVOD_IOCTL_READ
 * @sf: the file
 * @req: in: handle, offset, user_ptr, length, flags; out: done
 * @to_device: true for STAGE, false for READ
 *
 * Holds a reference on the allocation (so FREE or close cannot return the
 * range to the tier meanwhile) and the tier's io_sem for read (so removal
 * waits for the transfer and the BAR stays mapped) around the engine.
 *
 * Context: process context; sleeps.
 * Return: 0; -ESTALE if @req->handle is not live in @sf; -ENODEV if the
 * device is gone; -EINTR on a fatal signal (also while waiting for a device
 * removal in progress); else an errno of svod_stage_xfer().
 */
int svod_xfer(struct svod_file *sf, struct svod_xfer *req, bool to_device)
{
	struct svod_xfer_req xfer = {
		.offset = req->offset,
		.length = req->length,
		.ubuf = u64_to_user_ptr(req->user_ptr),
		.flags = req->flags,
		.to_device = to_device,
	};
	struct svod_allocation *alloc;
	struct svod_dev_tier *tier;
	u64 done = 0;
	int ret;

	mutex_lock(&sf->lock);
	alloc = svod_handle_lookup(&sf->handles, req->handle);
	if (alloc)
		kref_get(&alloc->ref);
	mutex_unlock(&sf->lock);
	if (!alloc)
		return -ESTALE;
	tier = alloc->tier;

	ret = down_read_killable(&tier->io_sem);
	if (ret)
		goto put_alloc;
	if (tier->gone) {
		ret = -ENODEV;
		goto up_io;
	}
	xfer.grant_off = tier->spec.offset + (alloc->node->start - tier->spec.base);
	xfer.grant_len = alloc->node->size;
	ret = svod_stage_xfer(&tier->sdev->bars[tier->spec.bar], &xfer,
			      &tier->stats, &done);
	req->done = done;
up_io:
	up_read(&tier->io_sem);
put_alloc:
	svod_allocation_put(alloc);
	return ret;
}

/**
 * svod_plan() - SVOD_IOCTL_PLAN
 * @req: in: arena_size, block_size, lv2_cnt, strategy, nr_events; out: peak,
 *	lower_bound, failed_event
 * @events: @req->nr_events events
 * @offsets: out: @req->nr_events offsets (see svod_plan_run())
 *
 * Context: process context; sleeps, stops on a fatal signal.
 * Return: 0 or an errno of svod_plan_run(); @req's outputs are set either
 * way.
 */
int svod_plan(struct svod_plan *req, const struct svod_plan_event *events,
	      u64 *offsets)
{
	const struct svod_plan_params params = {
		.arena_size = req->arena_size,
		.block_size = req->block_size,
		.lv2_cnt = req->lv2_cnt,
		.strategy = req->strategy,
	};
	struct svod_plan_result res;
	int ret;

	ret = svod_plan_run(&params, events, req->nr_events, offsets, &res,
			    GFP_KERNEL_ACCOUNT);
	req->peak = res.peak;
	req->lower_bound = res.lower_bound;
	req->failed_event = res.failed_event;
	return ret;
}
