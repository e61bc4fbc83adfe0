// SPDX-License-Identifier: GPL-2.0
/*
 * svod open files: open and release (the file's allocations go through
 * alloc.c, which also keeps the file's usage per tier) and fdinfo. The file
 * operations are main.c's; the ioctls are dispatched by ioctl.c.
 */
#include <kunit/visibility.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/sizes.h>
#include <linux/slab.h>

#include "alloc.h"
#include "file.h"
#include "mmap.h"
#include "tier.h"

static unsigned int svod_max_handles = 65536;

/* Largest max_handles: 2^18 live handles per file. */
#define SVOD_MAX_HANDLES_LIMIT	BIT(18)

/*
 * Accepts 1..SVOD_MAX_HANDLES_LIMIT in decimal; anything else is -EINVAL,
 * unchanged. Base 10, not param_set_uint()'s base 0, which reads 010 as 8.
 */
static int svod_max_handles_set(const char *val, const struct kernel_param *kp)
{
	unsigned int n;
	int ret;

	ret = kstrtouint(val, 10, &n);
	if (ret || !n || n > SVOD_MAX_HANDLES_LIMIT)
		return -EINVAL;
	WRITE_ONCE(*(unsigned int *)kp->arg, n);
	return 0;
}

static const struct kernel_param_ops svod_max_handles_ops = {
	.set = svod_max_handles_set,
	.get = param_get_uint,
};

module_param_cb(max_handles, &svod_max_handles_ops, &svod_max_handles, 0644);
MODULE_PARM_DESC(max_handles,
		 "Live handles per open file, 1..262144, read at open (-EMFILE beyond)");

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

/**
 * svod_open() - open /dev/svod: a new file with its own handle table
 * @inode: the device node
 * @filp: the new file
 *
 * Context: process context; sleeps.
 * Return: 0, -ENOMEM, or the handle table's errno.
 */
int svod_open(struct inode *inode, struct file *filp)
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
	sf->acct = svod_account_create();
	if (!sf->acct) {
		mutex_lock(&svod_handle_owners_lock);
		svod_handle_table_fini(&sf->handles, &svod_handle_owners);
		mutex_unlock(&svod_handle_owners_lock);
		kfree(sf);
		return -ENOMEM;
	}
	mutex_init(&sf->lock);
	sf->filp = filp;
	sf->client_id = atomic64_inc_return(&svod_next_client_id);
	svod_async_init(&sf->async, sf->client_id);
	sf->pid = get_pid(task_tgid(current));
	get_task_comm(sf->comm, current);

	mutex_lock(&svod_files_lock);
	list_add_tail(&sf->node, &svod_files);
	mutex_unlock(&svod_files_lock);

	filp->private_data = sf;
	svod_mmap_file_init(filp);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(svod_open);

/**
 * svod_release() - the last close of a file: free its allocations
 * @inode: the device node
 * @filp: the file
 *
 * Cancels the file's asynchronous transfers first (the running one stops
 * at its next chunk), then frees its allocations.
 *
 * Context: process context; sleeps (scrubs what no transfer holds).
 * Return: 0.
 */
int svod_release(struct inode *inode, struct file *filp)
{
	struct svod_file *sf = filp->private_data;

	mutex_lock(&svod_files_lock);
	list_del(&sf->node);
	mutex_unlock(&svod_files_lock);

	/* No transfer may touch a range once it is back in its tier. */
	svod_async_fini(&sf->async);
	svod_file_free_all(sf);

	/* What others still share stays charged to the account until it goes. */
	svod_account_put(sf->acct);
	mutex_lock(&svod_handle_owners_lock);
	svod_handle_table_fini(&sf->handles, &svod_handle_owners);
	mutex_unlock(&svod_handle_owners_lock);
	put_pid(sf->pid);
	mutex_destroy(&sf->lock);
	kfree(sf);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(svod_release);

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

/*
 * Bytes of the allocations of @sf's handles in tier @id that a vma maps
 * through the handle; @sf's lock held.
 */
static u64 svod_file_mapped_bytes(struct svod_file *sf, unsigned long id)
{
	struct svod_hold *hold;
	u64 handle, bytes = 0;
	u32 pos = 0;

	lockdep_assert_held(&sf->lock);
	while ((hold = svod_handle_next(&sf->handles, &pos, &handle))) {
		if (hold->alloc->tier->id == id && svod_mmap_is_mapped(&hold->map))
			bytes += svod_allocation_size(hold->alloc);
	}
	return bytes;
}

/**
 * svod_show_fdinfo() - the file's holdings per tier, DRM's fdinfo keys
 * @m: the seq_file
 * @filp: the file
 *
 * One tier at a time, each with a reference of its own: svod_tier_xa's
 * spinlock is held only to find the next tier, never across the walk of
 * the file's handles (up to max_handles of them) that counts mapped bytes.
 *
 * Context: process context; takes the file's lock, its account's and
 * svod_tier_xa's.
 */
void svod_show_fdinfo(struct seq_file *m, struct file *filp)
{
	struct svod_file *sf = filp->private_data;
	struct svod_account *acct = sf->acct;
	struct svod_dev_tier *tier;
	unsigned long id = 0;

	seq_printf(m, "drm-driver:\t%s\n", KBUILD_MODNAME);
	seq_printf(m, "drm-client-id:\t%llu\n", sf->client_id);
	svod_async_show(&sf->async, m);

	for (; (tier = svod_dev_tier_next(&id)); id++) {
		const struct svod_usage *found;
		struct svod_usage usage = {};
		const char *name = tier->spec.name;
		u64 mapped = 0;

		mutex_lock(&sf->lock);
		mutex_lock(&acct->lock);
		found = xa_load(&acct->usage, id);
		if (found)
			usage = *found;
		mutex_unlock(&acct->lock);
		if (found)
			mapped = svod_file_mapped_bytes(sf, id);
		mutex_unlock(&sf->lock);

		svod_fdinfo_size(m, "drm-total", name, usage.bytes);
		seq_printf(m, "svod-handles-%s:\t%u\n", name, usage.handles);
		svod_fdinfo_size(m, "svod-mapped", name, mapped);
		svod_fdinfo_size(m, "svod-exported", name, usage.exported);
		svod_fdinfo_size(m, "svod-imported", name, usage.imported);
		svod_dev_tier_put(tier);
	}
}
