// SPDX-License-Identifier: GPL-2.0
/*
 * svod STAGE and READ: from a handle of the file to the staging engine
 * (stage.c) with the live grant. @done goes back to the caller whatever the
 * outcome (ioctl.c copies these structs out on error too).
 */
#include <kunit/visibility.h>
#include <linux/ktime.h>
#include <linux/uaccess.h>

#include "alloc.h"
#include "dev.h"
#include "file.h"
#include "ioctl.h"
#include "tier.h"
#include "trace.h"

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
static int svod_xfer(struct svod_file *sf, struct svod_xfer *req,
		     bool to_device)
{
	struct svod_xfer_req xfer = {
		.offset = req->offset,
		.length = req->length,
		.resume = req->resume,
		.ubuf = u64_to_user_ptr(req->user_ptr),
		.flags = req->flags,
		.to_device = to_device,
	};
	struct svod_allocation *alloc;
	struct svod_dev_tier *tier;
	u64 t0 = svod_trace_clock(to_device ? trace_svod_stage_enabled() :
					     trace_svod_read_enabled());
	int ret;

	req->done = 0;
	/* Argument errors first, whatever the handle and the tier. */
	if ((req->flags & ~SVOD_XFER_FLAGS) || req->pad ||
	    (req->flags & SVOD_XFER_FLAGS) == SVOD_XFER_FLAGS ||
	    req->resume > req->length)
		return -EINVAL;
	alloc = svod_allocation_get(sf, req->handle);
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
	xfer.grant_off = tier->spec.offset +
			 (svod_allocation_start(alloc) - tier->spec.base);
	xfer.grant_len = svod_allocation_size(alloc);
	ret = svod_stage_xfer(&tier->sdev->bars[tier->spec.bar], &xfer,
			      &tier->stats, &req->done);
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
	return ret;
}

/**
 * svod_stage_ioctl() - SVOD_IOCTL_STAGE: user buffer to the allocation
 * @sf: the file
 * @data: struct svod_xfer; in: handle, offset, user_ptr, length, flags, pad,
 *	resume; out: done, also on failure, and resume on -ERESTARTSYS
 *
 * Context: process context; sleeps.
 * Return: 0; -EINVAL for unknown flags, a nonzero pad or a resume beyond
 * the length; -ESTALE if the handle is not live in @sf; -ENODEV if the
 * device is gone; -ERESTARTSYS on a signal between two chunks; -EINTR on a
 * fatal signal (see svod_stage_xfer()), also while waiting for a device
 * removal in progress; else an errno of svod_stage_xfer().
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
