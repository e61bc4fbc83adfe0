// SPDX-License-Identifier: GPL-2.0
/*
 * svod ioctl dispatch: one table of commands, as drm_ioctl() has. A command
 * is found by its number; its direction must be the table's; the caller's
 * struct size comes from the command (_IOC_SIZE), so structs can grow:
 *
 * - shorter than the command's first layout (SVOD_*_SIZE_VER0): -EINVAL;
 * - shorter than the driver's struct (an older binary): zero-extended;
 * - longer (a newer binary): accepted only if the bytes the driver does not
 *   know are zero, else -E2BIG (copy_struct_from_user(), as openat2 does);
 * - at most the caller's size is written back.
 *
 * A struct that is readable but not writable fails with -EFAULT and leaves
 * nothing behind: a command whose effect cannot be undone (STAGE, READ, BATCH:
 * bytes moved, a transfer queued) writes the struct back once, unchanged,
 * before its handler runs; ALLOC has an unwind for a reply that cannot be
 * written; the others change no state a caller could lose.
 * Handlers get the kernel copy and fill their outputs in place. Outputs go
 * back on success, and on failure too for the commands that say so (STAGE,
 * READ and PLAN report how far they got). A handler's -ERESTARTSYS (the
 * syscall is restarted after an SA_RESTART handler) stands only if the
 * caller's struct carries the state the restart goes on from (@restart_size
 * bytes) and was written back; else the caller gets -EINTR. Nothing else
 * happens here.
 */
#include <linux/build_bug.h>
#include <linux/fs.h>
#include <linux/nospec.h>
#include <linux/uaccess.h>

#include <linux/svod.h>

#include "ioctl.h"

/* Every command's struct fits this (checked at build time). */

/* Outputs are written back when the handler fails too. */
#define SVOD_IOCTL_OUT_ON_ERROR	BIT(0)
/* The struct is written back before the handler runs (nothing to unwind). */
#define SVOD_IOCTL_PROBE	BIT(1)

/**
 * struct svod_ioctl_desc - one command of /dev/svod
 * @dir: the command's direction, _IOC_WRITE and/or _IOC_READ
 * @size: sizeof() the driver's struct
 * @min_size: the struct's first published size (SVOD_*_SIZE_VER0)
 * @flags: SVOD_IOCTL_*
 * @restart_size: the caller's struct size from which a -ERESTARTSYS of
 *	@func may restart the call (0: never)
 * @check: the checks that depend on the caller's struct size (NULL: none),
 *	made before @func; its error is returned as @func's would be
 * @func: the handler
 * @unwind: undoes a successful call whose outputs could not be written
 *	back (NULL if there is nothing to undo)
 * @commit: finishes a successful call once its outputs are written back
 *	(NULL if there is nothing to finish): what userspace must learn of
 *	before it exists, such as a new fd
 */
struct svod_ioctl_desc {
	unsigned int dir;
	u16 size;
	u16 min_size;
	u16 restart_size;
	u32 flags;
	int (*check)(void *data, size_t usize);
	int (*func)(struct svod_file *sf, void *data);
	void (*unwind)(struct svod_file *sf, void *data);
	void (*commit)(struct svod_file *sf, void *data);
};

/* Sizes come from the command numbers; abi.py checks each _ver0 fits. */
#define SVOD_IOCTL_DEF(_cmd, _ver0, _restart, _flags, _check, _func, _unwind, _commit) \
	[_IOC_NR(SVOD_IOCTL_##_cmd)] = {				\
		.dir = _IOC_DIR(SVOD_IOCTL_##_cmd),			\
		.size = _IOC_SIZE(SVOD_IOCTL_##_cmd) +			\
			BUILD_BUG_ON_ZERO(_IOC_SIZE(SVOD_IOCTL_##_cmd) > \
					  SVOD_IOCTL_MAX_SIZE),		\
		.min_size = (_ver0),					\
		.restart_size = (_restart),				\
		.flags = (_flags),					\
		.check = (_check),					\
		.func = (_func),					\
		.unwind = (_unwind),					\
		.commit = (_commit),					\
	}

static const struct svod_ioctl_desc svod_ioctls[] = {
	SVOD_IOCTL_DEF(QUERY, SVOD_QUERY_SIZE_VER0, 0, 0,
		       NULL, svod_query_ioctl, NULL, NULL),
	SVOD_IOCTL_DEF(ALLOC, SVOD_ALLOC_SIZE_VER0, 0, 0,
		       NULL, svod_alloc_ioctl, svod_alloc_ioctl_unwind, NULL),
	SVOD_IOCTL_DEF(FREE, SVOD_FREE_SIZE_VER0, 0, 0,
		       NULL, svod_free_ioctl, NULL, NULL),
	SVOD_IOCTL_DEF(RESOLVE, SVOD_RESOLVE_SIZE_VER0, 0, 0,
		       NULL, svod_resolve_ioctl, NULL, NULL),
	/* A FENCE_FD's fd is installed only once the caller has its number. */
	SVOD_IOCTL_DEF(STAGE, SVOD_XFER_SIZE_VER0, SVOD_XFER_SIZE_VER1,
		       SVOD_IOCTL_OUT_ON_ERROR | SVOD_IOCTL_PROBE, svod_xfer_ioctl_check,
		       svod_stage_ioctl, svod_xfer_ioctl_unwind, svod_xfer_ioctl_commit),
	SVOD_IOCTL_DEF(READ, SVOD_XFER_SIZE_VER0, SVOD_XFER_SIZE_VER1,
		       SVOD_IOCTL_OUT_ON_ERROR | SVOD_IOCTL_PROBE, svod_xfer_ioctl_check,
		       svod_read_ioctl, svod_xfer_ioctl_unwind, svod_xfer_ioctl_commit),
	SVOD_IOCTL_DEF(PLAN, SVOD_PLAN_SIZE_VER0, 0,
		       SVOD_IOCTL_OUT_ON_ERROR, NULL, svod_plan_ioctl, NULL, NULL),
	SVOD_IOCTL_DEF(MAP_OFFSET, SVOD_MAP_OFFSET_SIZE_VER0, 0, 0,
		       NULL, svod_map_offset_ioctl, NULL, NULL),
	SVOD_IOCTL_DEF(WAIT, SVOD_WAIT_SIZE_VER0, SVOD_WAIT_SIZE_VER0, 0,
		       NULL, svod_wait_ioctl, NULL, NULL),
	/* The new fd is installed only once the caller has its number. */
	SVOD_IOCTL_DEF(EXPORT, SVOD_EXPORT_SIZE_VER0, 0, 0,
		       NULL, svod_export_ioctl, svod_export_ioctl_unwind,
		       svod_export_ioctl_commit),
	SVOD_IOCTL_DEF(IMPORT, SVOD_IMPORT_SIZE_VER0, 0, 0,
		       NULL, svod_import_ioctl, svod_import_ioctl_unwind, NULL),
	/* Written back first: a queued batch must not lose its seqno. */
	SVOD_IOCTL_DEF(BATCH, SVOD_BATCH_SIZE_VER0, 0,
		       SVOD_IOCTL_OUT_ON_ERROR | SVOD_IOCTL_PROBE, svod_batch_ioctl_check,
		       svod_batch_ioctl, svod_batch_ioctl_unwind, svod_batch_ioctl_commit),
};

/* The desc of @cmd, or NULL if it is not a command of ours. */
static const struct svod_ioctl_desc *svod_ioctl_find(unsigned int cmd)
{
	const struct svod_ioctl_desc *desc;
	unsigned int nr = _IOC_NR(cmd);

	if (_IOC_TYPE(cmd) != SVOD_IOCTL_MAGIC || nr >= ARRAY_SIZE(svod_ioctls))
		return NULL;
	desc = &svod_ioctls[array_index_nospec(nr, ARRAY_SIZE(svod_ioctls))];
	if (!desc->func || _IOC_DIR(cmd) != desc->dir)
		return NULL;
	return desc;
}

/**
 * svod_ioctl() - the ioctls of /dev/svod (Documentation/uapi.rst)
 * @filp: the open file
 * @cmd: SVOD_IOCTL_*, with any struct size from the command's first layout on
 * @arg: user pointer to the command's struct
 *
 * Context: process context; sleeps.
 * Return: 0 or a negative errno: -ENOTTY for an unknown command or a known
 * number with another direction; -EINVAL for a struct shorter than the
 * command's first layout; -E2BIG for a longer struct whose extra bytes are
 * not zero; -EFAULT if the struct cannot be read, or (_IOWR) written back
 * (STAGE and READ: before they run; the others after, undone or without
 * effect); else the handler's.
 */
long svod_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	u64 kdata[SVOD_IOCTL_MAX_SIZE / sizeof(u64)];
	void __user *uarg = (void __user *)arg;
	struct svod_file *sf = filp->private_data;
	const struct svod_ioctl_desc *desc;
	size_t usize = _IOC_SIZE(cmd), outsize;
	int ret;

	desc = svod_ioctl_find(cmd);
	if (!desc)
		return -ENOTTY;
	if (usize < desc->min_size)
		return -EINVAL;
	outsize = min_t(size_t, usize, desc->size);

	ret = copy_struct_from_user(kdata, desc->size, uarg, usize);
	if (ret)
		return ret;
	if ((desc->flags & SVOD_IOCTL_PROBE) && copy_to_user(uarg, kdata, outsize))
		return -EFAULT;
	ret = desc->check ? desc->check(kdata, usize) : 0;
	if (!ret)
		ret = desc->func(sf, kdata);
	if (ret == -ERESTARTSYS && (!desc->restart_size || usize < desc->restart_size))
		ret = -EINTR;
	if (!(desc->dir & _IOC_READ) ||
	    (ret && !(desc->flags & SVOD_IOCTL_OUT_ON_ERROR)))
		return ret;
	if (copy_to_user(uarg, kdata, outsize)) {
		if (!ret && desc->unwind)
			desc->unwind(sf, kdata);
		/* A restart without its state written back would start over. */
		if (ret == -ERESTARTSYS)
			return -EINTR;
		return ret ? ret : -EFAULT;
	}
	if (!ret && desc->commit)
		desc->commit(sf, kdata);
	return ret;
}
