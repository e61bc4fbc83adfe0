// SPDX-License-Identifier: GPL-2.0
/*
 * svod open files: open and release, the file's usage per tier (what
 * max_bytes is checked against, what fdinfo shows), and fdinfo. The ioctls
 * are dispatched by ioctl.c.
 */
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/sizes.h>
#include <linux/slab.h>

#include "alloc.h"
#include "file.h"
#include "ioctl.h"
#include "mmap.h"
#include "svod.h"

/* Protects svod_files, the list of open files debugfs walks. */
DEFINE_MUTEX(svod_files_lock);
LIST_HEAD(svod_files);

static atomic64_t svod_next_client_id = ATOMIC64_INIT(0);

/*
 * Protects svod_handle_owners, the owner tags of every file's handle table
 * (taken at open, given back at release; never on an ioctl's path).
 */
static DEFINE_MUTEX(svod_handle_owners_lock);
static struct svod_handle_owners svod_handle_owners;

/**
 * svod_files_exit() - free the owner registry at module unload
 *
 * Context: module exit; every file is closed.
 */
void svod_files_exit(void)
{
	mutex_lock(&svod_handle_owners_lock);
	svod_handle_owners_fini(&svod_handle_owners);
	mutex_unlock(&svod_handle_owners_lock);
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

/**
 * svod_usage_trim() - drop a usage record once it holds nothing
 * @sf: the file, its lock held
 * @tier: the tier @usage counts
 * @usage: the record
 *
 * An idle tier costs a file nothing.
 *
 * Context: process context; @sf's lock held.
 */
void svod_usage_trim(struct svod_file *sf, const struct svod_dev_tier *tier,
		     struct svod_usage *usage)
{
	lockdep_assert_held(&sf->lock);
	if (usage->handles)
		return;
	xa_erase(&sf->usage, tier->id);
	kfree(usage);
}

/**
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
struct svod_usage *svod_usage_charge(struct svod_file *sf,
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

/**
 * svod_usage_sub() - forget an allocation in its file's usage
 * @sf: the file, its lock held
 * @alloc: the allocation whose handle was just removed
 *
 * Context: process context; @sf's lock held.
 */
void svod_usage_sub(struct svod_file *sf, const struct svod_allocation *alloc)
{
	struct svod_usage *usage = xa_load(&sf->usage, alloc->tier->id);

	lockdep_assert_held(&sf->lock);
	if (WARN_ON(!usage))
		return;
	usage->bytes -= svod_allocation_size(alloc);
	usage->handles--;
	svod_usage_trim(sf, alloc->tier, usage);
}

static int svod_open(struct inode *inode, struct file *filp)
{
	struct svod_file *sf;
	int ret;

	sf = kzalloc(sizeof(*sf), GFP_KERNEL_ACCOUNT);
	if (!sf)
		return -ENOMEM;
	/* The table's tag differs from every other file's, open or closed. */
	mutex_lock(&svod_handle_owners_lock);
	ret = svod_handle_table_init(&sf->handles, &svod_handle_owners,
				     READ_ONCE(svod_max_handles), GFP_KERNEL);
	mutex_unlock(&svod_handle_owners_lock);
	if (ret) {
		kfree(sf);
		return ret;
	}
	mutex_init(&sf->lock);
	xa_init(&sf->usage);
	sf->client_id = atomic64_inc_return(&svod_next_client_id);
	sf->pid = get_pid(task_tgid(current));
	get_task_comm(sf->comm, current);

	mutex_lock(&svod_files_lock);
	list_add_tail(&sf->node, &svod_files);
	mutex_unlock(&svod_files_lock);

	filp->private_data = sf;
	svod_mmap_file_init(filp);
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
		/* @sf's lock keeps MAP_OFFSET out: NULL means never mapped. */
		if (READ_ONCE(alloc->map))
			svod_mmap_revoke(alloc);
		svod_allocation_put(alloc);
	}
	mutex_unlock(&sf->lock);

	WARN_ON(!xa_empty(&sf->usage));
	xa_destroy(&sf->usage);
	mutex_lock(&svod_handle_owners_lock);
	svod_handle_table_fini(&sf->handles, &svod_handle_owners);
	mutex_unlock(&svod_handle_owners_lock);
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

/* Bytes of @sf's allocations in tier @id that a vma maps; @sf's lock held. */
static u64 svod_file_mapped_bytes(struct svod_file *sf, unsigned long id)
{
	struct svod_allocation *alloc;
	u64 handle, bytes = 0;
	u32 pos = 0;

	lockdep_assert_held(&sf->lock);
	while ((alloc = svod_handle_next(&sf->handles, &pos, &handle))) {
		if (alloc->tier->id == id && svod_mmap_is_mapped(alloc))
			bytes += svod_allocation_size(alloc);
	}
	return bytes;
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
		svod_fdinfo_size(m, "svod-mapped", tier->spec.name,
				 usage ? svod_file_mapped_bytes(sf, id) : 0);
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
	.mmap = svod_mmap,
	.llseek = noop_llseek,
};
