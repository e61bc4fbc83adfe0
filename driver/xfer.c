// SPDX-License-Identifier: GPL-2.0
/*
 * svod STAGE and READ: from a handle of the file to the staging engine
 * (stage.c) with the live grant. @done goes back to the caller whatever the
 * outcome (ioctl.c copies these structs out on error too).
 */
#include <kunit/visibility.h>
#include <linux/dma-fence.h>
#include <linux/file.h>
#include <linux/ktime.h>
#include <linux/uaccess.h>

#include "alloc.h"
#include "async.h"
#include "dev.h"
#include "file.h"
#include "ioctl.h"
#include "stage.h"
#include "tier.h"
#include "trace.h"

/*
 * STAGE's and READ's struct in the ioctl's kernel copy, and past it (never
 * copied out) the sync_file of SVOD_XFER_FENCE_FD, for the commit to
 * install at the reserved fd or the unwind to drop.
 */
struct svod_xfer_call {
	struct svod_xfer req;
	struct file *fence;
};

static_assert(sizeof(struct svod_xfer_call) <= SVOD_IOCTL_MAX_SIZE);

/*
 * SVOD_XFER_ASYNC, step one, under the tier's io_sem: the checks
 * svod_stage_xfer() makes, then the job is prepared (its pages pinned).
 * The job keeps neither @alloc's reference nor io_sem: FREE and close
 * cancel it before the range can leave the allocation (FREE after use
 * gives it a reference instead, svod_async_hand_over()), and the tier's
 * retirement stops it (async.c).
 */
static struct svod_async_job *svod_xfer_prepare(struct svod_file *sf,
						struct svod_allocation *alloc,
						const void *key,
						const struct svod_bar *bar,
						const struct svod_xfer_req *xfer)
{
	struct svod_async_req areq = {
		.tier = alloc->tier,
		.bar = bar,
		.key = key,
		.bar_off = xfer->grant_off + xfer->offset + xfer->resume,
		.length = xfer->length - xfer->resume,
		.resume = xfer->resume,
		.ubuf = (unsigned long)xfer->ubuf + xfer->resume,
		.to_device = xfer->to_device,
	};
	int ret;

	ret = svod_stage_check(bar, xfer);
	if (!ret)
		ret = svod_stage_engine(xfer->flags, xfer->length, &areq.lane);
	if (ret < 0)
		return ERR_PTR(ret);
	if (!access_ok(xfer->ubuf, xfer->length))
		return ERR_PTR(-EFAULT);
	return svod_async_prepare(&sf->async, &areq);
}

/*
 * Step two, without io_sem (the file's lock is taken outside it): queue the
 * job unless a FREE has removed the handle since the lookup (that FREE
 * cancelled what it found queued, which is not this job). @key is what
 * the handle named then.
 */
static int svod_xfer_queue(struct svod_file *sf, const void *key,
			   struct svod_async_job *job, struct svod_xfer_call *call)
{
	struct svod_xfer *req = &call->req;
	int ret;

	mutex_lock(&sf->lock);
	if (svod_handle_lookup(&sf->handles, req->handle) != key)
		ret = -ESTALE;
	else
		ret = svod_async_submit(&sf->async, job,
					req->flags & SVOD_XFER_FENCE_FD,
					&req->seqno, &req->fence_fd, &call->fence);
	mutex_unlock(&sf->lock);
	if (ret)
		svod_async_abort(&sf->async, job);
	return ret;
}

/*
 * Holds a reference on the allocation (so FREE or close cannot return the
 * range to the tier meanwhile) and the tier's io_sem for read (so removal
 * waits for the transfer and the BAR stays mapped) around the engine.
 *
 * A signal between two chunks gives -ERESTARTSYS with @resume set to what
 * moved: the syscall restarted after an SA_RESTART handler reads the struct
 * back and goes on from there (STAGE and READ are idempotent, so the bytes
 * of a request moved twice are the same bytes). svod_ioctl() turns it into
 * -EINTR for a caller whose struct has no @resume.
 */
static int svod_xfer(struct svod_file *sf, struct svod_xfer_call *call,
		     bool to_device)
{
	struct svod_xfer *req = &call->req;
	struct svod_xfer_req xfer = {
		.offset = req->offset,
		.length = req->length,
		.resume = req->resume,
		.ubuf = u64_to_user_ptr(req->user_ptr),
		.flags = req->flags,
		.to_device = to_device,
	};
	struct dma_fence *in_fence = NULL;
	struct svod_allocation *alloc;
	struct svod_async_job *job;
	struct svod_dev_tier *tier;
	const struct svod_bar *bar;
	const void *key;
	u64 t0 = svod_trace_clock(to_device ? trace_svod_stage_enabled() :
					     trace_svod_read_enabled());
	int ret;

	req->done = 0;
	req->seqno = 0;
	req->fence_fd = -1;
	call->fence = NULL;
	/* Argument errors first, whatever the handle and the tier. */
	if ((req->flags & ~SVOD_XFER_FLAGS) || req->pad || req->pad2 ||
	    (req->flags & SVOD_XFER_ENGINES) == SVOD_XFER_ENGINES ||
	    ((req->flags & SVOD_XFER_FENCE_FD) && !(req->flags & SVOD_XFER_ASYNC)) ||
	    ((req->flags & SVOD_XFER_IN_FENCE) && !(req->flags & SVOD_XFER_ASYNC)) ||
	    (!(req->flags & SVOD_XFER_IN_FENCE) && req->in_fence_fd) || req->pad3 ||
	    req->resume > req->length)
		return -EINVAL;
	if (req->flags & SVOD_XFER_IN_FENCE) {
		in_fence = svod_async_fence_from_fd(req->in_fence_fd);
		if (IS_ERR(in_fence))
			return PTR_ERR(in_fence);
	}
	alloc = svod_allocation_get(sf, req->handle, to_device ?
				    SVOD_ACCESS_WRITE : SVOD_ACCESS_READ, &key);
	if (IS_ERR(alloc)) {
		dma_fence_put(in_fence);
		return PTR_ERR(alloc);
	}
	tier = alloc->tier;

	ret = down_read_killable(&tier->io_sem);
	if (ret)
		goto put_alloc;
	if (tier->gone) {
		ret = -ENODEV;
		goto up_io;
	}
	xfer.grant_off = svod_allocation_bar_off(alloc);
	xfer.grant_len = svod_allocation_size(alloc);
	bar = &tier->sdev->bars[tier->spec.bar];
	if (req->flags & SVOD_XFER_ASYNC) {
		job = svod_xfer_prepare(sf, alloc, key, bar, &xfer);
		up_read(&tier->io_sem);
		ret = PTR_ERR_OR_ZERO(job);
		if (!ret && in_fence)
			svod_async_wait_for(job, in_fence);
		if (!ret)
			ret = svod_xfer_queue(sf, key, job, call);
		goto put_alloc;
	}
	ret = svod_stage_xfer(bar, &xfer, &tier->stats, &req->done);
	if (ret == -ERESTARTSYS)
		req->resume = req->done;
up_io:
	up_read(&tier->io_sem);
put_alloc:
	if (to_device)
		trace_svod_stage(tier, req->handle, req->offset, req->length,
				 req->done, req->flags, ret, svod_trace_since(t0));
	else
		trace_svod_read(tier, req->handle, req->offset, req->length,
				req->done, req->flags, ret, svod_trace_since(t0));
	svod_allocation_put(alloc);
	dma_fence_put(in_fence);
	return ret;
}

/**
 * svod_stage_ioctl() - SVOD_IOCTL_STAGE: user buffer to the allocation
 * @sf: the file
 * @data: struct svod_xfer; in: handle, offset, user_ptr, length, flags, pad,
 *	resume, pad2, in_fence_fd, pad3; out: done, also on failure, and
 *	resume on -ERESTARTSYS; with SVOD_XFER_ASYNC, seqno and fence_fd
 *
 * Context: process context; sleeps.
 * With SVOD_XFER_ASYNC the same checks are made in the same order, the
 * user buffer is pinned and the transfer queued (svod_async_prepare(),
 * svod_async_submit()); nothing moves before the call returns. With
 * SVOD_XFER_IN_FENCE the transfer waits for that fence first
 * (svod_async_wait_for()).
 *
 * Return: 0; -EINVAL for unknown flags, both engine bits, FENCE_FD or
 * IN_FENCE without ASYNC, an in_fence_fd without IN_FENCE, a nonzero pad,
 * pad2 or pad3 or a resume beyond the length; with IN_FENCE, -EINVAL for a
 * negative in_fence_fd or one that is not a sync_file, -EBADF for one that
 * is not open (svod_async_fence_from_fd()); -ESTALE if
 * the handle is not live in @sf; -EACCES (STAGE) through a read-only
 * handle (SVOD_IOCTL_IMPORT); -ENODEV if the device is gone;
 * -ERESTARTSYS on a signal between two chunks; -EINTR on a fatal signal
 * (see svod_stage_xfer()), also while waiting for a device removal in
 * progress; else an errno of svod_stage_xfer(). With ASYNC, after the
 * checks: -EFAULT, and the errnos of svod_async_prepare() and
 * svod_async_submit().
 */
int svod_stage_ioctl(struct svod_file *sf, void *data)
{
	return svod_xfer(sf, data, true);
}
EXPORT_SYMBOL_IF_KUNIT(svod_stage_ioctl);

/**
 * svod_read_ioctl() - SVOD_IOCTL_READ: the allocation to a user buffer
 * @sf: the file
 * @data: struct svod_xfer, as for svod_stage_ioctl()
 *
 * Context: process context; sleeps.
 * Return: as svod_stage_ioctl().
 */
int svod_read_ioctl(struct svod_file *sf, void *data)
{
	return svod_xfer(sf, data, false);
}
EXPORT_SYMBOL_IF_KUNIT(svod_read_ioctl);

/**
 * svod_xfer_ioctl_check() - STAGE's and READ's checks of the caller's size
 * @data: struct svod_xfer, as copied in
 * @usize: the size of the caller's struct
 *
 * SVOD_XFER_FENCE_FD needs @fence_fd in the caller's struct: a struct
 * shorter than SVOD_XFER_SIZE_VER2 could never learn the fd's number.
 * SVOD_XFER_IN_FENCE needs @in_fence_fd: SVOD_XFER_SIZE_VER3.
 *
 * Context: any.
 * Return: 0, or -EINVAL with the outputs an argument error leaves.
 */
int svod_xfer_ioctl_check(void *data, size_t usize)
{
	struct svod_xfer_call *call = data;

	if ((!(call->req.flags & SVOD_XFER_FENCE_FD) || usize >= SVOD_XFER_SIZE_VER2) &&
	    (!(call->req.flags & SVOD_XFER_IN_FENCE) || usize >= SVOD_XFER_SIZE_VER3))
		return 0;
	call->req.done = 0;
	call->fence = NULL;
	return -EINVAL;
}

/**
 * svod_xfer_ioctl_commit() - install a FENCE_FD's fd, its number written back
 * @sf: the file
 * @data: what svod_stage_ioctl() or svod_read_ioctl() filled
 *
 * Context: process context.
 */
void svod_xfer_ioctl_commit(struct svod_file *sf, void *data)
{
	struct svod_xfer_call *call = data;

	if (call->fence)
		fd_install(call->req.fence_fd, call->fence);
}

/**
 * svod_xfer_ioctl_unwind() - drop a FENCE_FD's fd whose number was lost
 * @sf: the file
 * @data: what svod_stage_ioctl() or svod_read_ioctl() filled
 *
 * The transfer stays queued (its bytes move as asked); the process is left
 * no fd it cannot know of.
 *
 * Context: process context.
 */
void svod_xfer_ioctl_unwind(struct svod_file *sf, void *data)
{
	struct svod_xfer_call *call = data;

	if (!call->fence)
		return;
	put_unused_fd(call->req.fence_fd);
	fput(call->fence);
}

/**
 * svod_wait_ioctl() - SVOD_IOCTL_WAIT: the end of an asynchronous transfer
 * @sf: the file
 * @data: struct svod_wait; in: seqno, deadline_ns, flags; out: done, status
 *
 * Context: process context; sleeps, interruptibly.
 * Return: 0 when the transfer has ended; -EINVAL for nonzero flags; else
 * an errno of svod_async_wait().
 */
int svod_wait_ioctl(struct svod_file *sf, void *data)
{
	struct svod_wait *req = data;

	if (req->flags)
		return -EINVAL;
	return svod_async_wait(&sf->async, req->seqno, req->deadline_ns,
			       &req->done, &req->status);
}
EXPORT_SYMBOL_IF_KUNIT(svod_wait_ioctl);
