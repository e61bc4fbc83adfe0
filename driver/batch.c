// SPDX-License-Identifier: GPL-2.0
/*
 * svod BATCH: many STAGE and READ transfers queued as one asynchronous
 * transfer of the file (async.c): one timeline value, one fence. Every
 * entry is checked against its live grant and every user buffer pinned
 * before the batch is queued; the first bad entry fails the call with its
 * index in failed_entry, and nothing stays queued, pinned or reserved.
 */
#include <kunit/visibility.h>
#include <linux/dma-fence.h>
#include <linux/file.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "alloc.h"
#include "async.h"
#include "dev.h"
#include "file.h"
#include "ioctl.h"
#include "stage.h"
#include "tier.h"

/* Bytes per entry the caller may use (struct svod_batch.entry_size). */
#define SVOD_BATCH_ENTRY_SIZE_MAX	4096

/*
 * BATCH's struct in the ioctl's kernel copy, and past it (never copied
 * out) the sync_file of SVOD_BATCH_FENCE_FD, for the commit to install at
 * the reserved fd or the unwind to drop.
 */
struct svod_batch_call {
	struct svod_batch req;
	struct file *fence;
};

static_assert(sizeof(struct svod_batch_call) <= SVOD_IOCTL_MAX_SIZE);

/*
 * The caller's entries, @esize bytes each, into the driver's layout: one
 * copy when the sizes agree (entry by entry only to find which one faults),
 * else entry by entry with the struct rules (a longer entry's tail zero or
 * -E2BIG). @failed: the entry that could not be copied.
 */
static int svod_batch_copy_entries(struct svod_batch_entry *entries,
				   const struct svod_batch *req, u32 esize,
				   u32 *failed)
{
	const u8 __user *uent = u64_to_user_ptr(req->entries_ptr);
	u32 i;
	int ret;

	if (esize == sizeof(*entries) &&
	    !copy_from_user(entries, uent, array_size(req->nr_entries, esize)))
		return 0;
	for (i = 0; i < req->nr_entries; i++) {
		ret = copy_struct_from_user(&entries[i], sizeof(*entries),
					    uent + (size_t)i * esize, esize);
		if (ret) {
			*failed = i;
			return ret;
		}
		if (fatal_signal_pending(current))
			return -EINTR;
	}
	return 0;
}

/*
 * What the last entry's lookup found, for the entries after it that name
 * the same handle with the same op (a layer's tensors in one allocation):
 * they skip the file's lock and the tier's io_sem and hold no reference of
 * their own, the first one's covering them until the batch is queued.
 */
struct svod_batch_grant {
	u64 handle;
	u32 op;
	struct svod_allocation *alloc;
	const struct svod_bar *bar;
	const void *key;
	u64 grant_off;
	u64 grant_len;
};

/*
 * One entry against its live grant, with the checks (and errnos) of a
 * single STAGE or READ. On success *@allocp is a reference on the
 * allocation the caller owns until the batch is queued or given up (FREE
 * or close cannot return its range to the tier meanwhile), or NULL for an
 * entry @g covered.
 */
static int svod_batch_check_entry(struct svod_file *sf,
				  const struct svod_batch_entry *e,
				  struct svod_batch_grant *g,
				  struct svod_async_part *part,
				  struct svod_allocation **allocp)
{
	bool to_device = e->op == SVOD_BATCH_STAGE;
	struct svod_xfer_req xfer = {
		.offset = e->offset,
		.length = e->length,
		.ubuf = u64_to_user_ptr(e->user_ptr),
		.flags = SVOD_XFER_CPU,
		.to_device = to_device,
	};
	struct svod_allocation *alloc = NULL;
	struct svod_dev_tier *tier;
	int ret;

	*allocp = NULL;
	if ((e->op != SVOD_BATCH_STAGE && e->op != SVOD_BATCH_READ) || e->flags)
		return -EINVAL;
	if (!g->alloc || g->handle != e->handle || g->op != e->op) {
		alloc = svod_allocation_get(sf, e->handle, to_device ?
					    SVOD_ACCESS_WRITE : SVOD_ACCESS_READ, &g->key);
		g->alloc = NULL;
		if (IS_ERR(alloc))
			return PTR_ERR(alloc);
		tier = alloc->tier;
		ret = down_read_killable(&tier->io_sem);
		if (ret)
			goto put_alloc;
		if (tier->gone) {
			up_read(&tier->io_sem);
			ret = -ENODEV;
			goto put_alloc;
		}
		g->grant_off = svod_allocation_bar_off(alloc);
		g->grant_len = svod_allocation_size(alloc);
		g->bar = &tier->sdev->bars[tier->spec.bar];
		up_read(&tier->io_sem);
		g->handle = e->handle;
		g->op = e->op;
		g->alloc = alloc;
	}
	xfer.grant_off = g->grant_off;
	xfer.grant_len = g->grant_len;
	ret = svod_stage_check(g->bar, &xfer);
	if (!ret && !access_ok(xfer.ubuf, xfer.length))
		ret = -EFAULT;
	if (ret)
		goto put_alloc;
	*part = (struct svod_async_part){
		.tier = g->alloc->tier,
		.bar = g->bar,
		.key = g->key,
		.bar_off = xfer.grant_off + xfer.offset,
		.length = xfer.length,
		.ubuf = (unsigned long)xfer.ubuf,
		.to_device = to_device,
	};
	*allocp = alloc;
	return 0;

put_alloc:
	if (alloc) {
		g->alloc = NULL;
		svod_allocation_put(alloc);
	}
	return ret;
}

/*
 * Queue the prepared batch unless a FREE has removed one of its handles
 * since the check (that FREE cancelled what it found queued, which is not
 * this batch): under the file's lock, as svod_xfer_queue() does.
 */
static int svod_batch_queue(struct svod_file *sf,
			    const struct svod_batch_entry *entries,
			    const struct svod_async_part *parts,
			    struct svod_async_job *job, struct svod_batch_call *call)
{
	struct svod_batch *req = &call->req;
	u32 i;
	int ret = 0;

	mutex_lock(&sf->lock);
	for (i = 0; i < req->nr_entries; i++) {
		/* One lookup for a run of entries through one handle. */
		if (i && entries[i].handle == entries[i - 1].handle &&
		    parts[i].key == parts[i - 1].key)
			continue;
		if (svod_handle_lookup(&sf->handles, entries[i].handle) != parts[i].key) {
			req->failed_entry = i;
			ret = -ESTALE;
			break;
		}
	}
	if (!ret)
		ret = svod_async_submit(&sf->async, job, req->flags & SVOD_BATCH_FENCE_FD,
					&req->seqno, &req->fence_fd, &call->fence);
	mutex_unlock(&sf->lock);
	if (ret)
		svod_async_abort(&sf->async, job);
	return ret;
}

/**
 * svod_batch_ioctl() - SVOD_IOCTL_BATCH: queue many transfers as one
 * @sf: the file
 * @data: struct svod_batch; in: entries_ptr, nr_entries, entry_size,
 *	flags, pad, in_fence_fd, pad2; out: failed_entry (also on failure),
 *	seqno, fence_fd
 *
 * The struct's own errors come first (flags, pads, the count, the entry
 * size, the in-fence), then each entry in order: copied, checked as a single STAGE or
 * READ is (op, flags, handle, access, device, range, buffer), then every
 * buffer pinned, then the batch is queued (svod_async_prepare_batch(),
 * svod_async_submit()). A failure leaves nothing queued or pinned and
 * failed_entry names the entry it stopped at (~0U for an error of the
 * whole call).
 *
 * Context: process context; sleeps.
 * Return: 0; -EINVAL for unknown flags, a nonzero pad or pad2, an
 * in_fence_fd without SVOD_BATCH_IN_FENCE, no entries, a bad entry_size
 * (failed_entry 0), or an entry with an unknown op or nonzero flags; with
 * IN_FENCE, -EINVAL or -EBADF as svod_async_fence_from_fd(); -E2BIG for
 * more than SVOD_BATCH_MAX_ENTRIES entries (failed_entry
 * SVOD_BATCH_MAX_ENTRIES) or an entry whose bytes past the driver's struct
 * are not zero; -ESTALE, -EACCES, -ENODEV, -ERANGE, -EFAULT for an entry,
 * as single STAGE and READ; -ENOMEM; -EINTR on a fatal signal; the errnos
 * of svod_async_prepare_batch() and svod_async_submit().
 */
int svod_batch_ioctl(struct svod_file *sf, void *data)
{
	struct svod_batch_call *call = data;
	struct svod_batch *req = &call->req;
	u32 esize = req->entry_size ?: SVOD_BATCH_ENTRY_SIZE_VER0;
	struct svod_allocation **allocs;
	struct svod_batch_entry *entries;
	struct svod_async_part *parts;
	struct svod_async_job *job;
	struct svod_batch_grant grant = {};
	struct dma_fence *in_fence = NULL;
	u32 i, nr_held = 0;
	int ret;

	req->failed_entry = ~0U;
	req->seqno = 0;
	req->fence_fd = -1;
	call->fence = NULL;
	if ((req->flags & ~SVOD_BATCH_FLAGS) || req->pad || req->pad2 || !req->nr_entries ||
	    (!(req->flags & SVOD_BATCH_IN_FENCE) && req->in_fence_fd))
		return -EINVAL;
	if (esize < SVOD_BATCH_ENTRY_SIZE_VER0 || esize > SVOD_BATCH_ENTRY_SIZE_MAX ||
	    !IS_ALIGNED(esize, 8)) {
		req->failed_entry = 0;
		return -EINVAL;
	}
	if (req->nr_entries > SVOD_BATCH_MAX_ENTRIES) {
		req->failed_entry = SVOD_BATCH_MAX_ENTRIES;
		return -E2BIG;
	}
	if (req->flags & SVOD_BATCH_IN_FENCE) {
		in_fence = svod_async_fence_from_fd(req->in_fence_fd);
		if (IS_ERR(in_fence))
			return PTR_ERR(in_fence);
	}

	/* User-sized: a failure is the caller's -ENOMEM, not a warning. */
	ret = -ENOMEM;
	entries = kvmalloc_array(req->nr_entries, sizeof(*entries),
				 GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!entries)
		goto put_in_fence;
	parts = kvmalloc_array(req->nr_entries, sizeof(*parts),
			       GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!parts)
		goto free_entries;
	allocs = kvmalloc_array(req->nr_entries, sizeof(*allocs),
				GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!allocs)
		goto free_parts;
	ret = svod_batch_copy_entries(entries, req, esize, &req->failed_entry);
	if (ret)
		goto free_allocs;

	for (i = 0; i < req->nr_entries; i++) {
		ret = svod_batch_check_entry(sf, &entries[i], &grant, &parts[i], &allocs[i]);
		if (ret) {
			req->failed_entry = i;
			goto put_allocs;
		}
		nr_held++;
	}
	job = svod_async_prepare_batch(&sf->async, parts, req->nr_entries,
				       &req->failed_entry);
	if (IS_ERR(job)) {
		ret = PTR_ERR(job);
		goto put_allocs;
	}
	if (in_fence)
		svod_async_wait_for(job, in_fence);
	ret = svod_batch_queue(sf, entries, parts, job, call);

put_allocs:
	for (i = 0; i < nr_held; i++) {
		if (allocs[i])
			svod_allocation_put(allocs[i]);
	}
free_allocs:
	kvfree(allocs);
free_parts:
	kvfree(parts);
free_entries:
	kvfree(entries);
put_in_fence:
	dma_fence_put(in_fence);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(svod_batch_ioctl);

/**
 * svod_batch_ioctl_check() - BATCH's checks of the caller's size
 * @data: struct svod_batch, as copied in
 * @usize: the size of the caller's struct
 *
 * SVOD_BATCH_IN_FENCE needs @in_fence_fd in the caller's struct:
 * SVOD_BATCH_SIZE_VER1.
 *
 * Context: any.
 * Return: 0, or -EINVAL with the outputs an argument error leaves.
 */
int svod_batch_ioctl_check(void *data, size_t usize)
{
	struct svod_batch_call *call = data;

	if (!(call->req.flags & SVOD_BATCH_IN_FENCE) || usize >= SVOD_BATCH_SIZE_VER1)
		return 0;
	call->req.failed_entry = ~0U;
	call->req.seqno = 0;
	call->req.fence_fd = -1;
	call->fence = NULL;
	return -EINVAL;
}

/**
 * svod_batch_ioctl_commit() - install a FENCE_FD's fd, its number written back
 * @sf: the file
 * @data: what svod_batch_ioctl() filled
 *
 * Context: process context.
 */
void svod_batch_ioctl_commit(struct svod_file *sf, void *data)
{
	struct svod_batch_call *call = data;

	if (call->fence)
		fd_install(call->req.fence_fd, call->fence);
}

/**
 * svod_batch_ioctl_unwind() - drop a FENCE_FD's fd whose number was lost
 * @sf: the file
 * @data: what svod_batch_ioctl() filled
 *
 * The batch stays queued (its bytes move as asked); the process is left no
 * fd it cannot know of.
 *
 * Context: process context.
 */
void svod_batch_ioctl_unwind(struct svod_file *sf, void *data)
{
	struct svod_batch_call *call = data;

	if (!call->fence)
		return;
	put_unused_fd(call->req.fence_fd);
	fput(call->fence);
}
