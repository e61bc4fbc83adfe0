// SPDX-License-Identifier: GPL-2.0
/*
 * svod PLAN: copies an event list in, runs the core planner (core/plan.c)
 * and copies the offsets out. Plans touch no device and no file state.
 */
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "core/plan.h"
#include "core/tlsf.h"
#include "ioctl.h"

/* Bytes per event the caller may use (struct svod_plan.event_size). */
#define SVOD_PLAN_EVENT_SIZE_MAX	4096

static unsigned int svod_max_plan_events = 1U << 20;

/* Decimal only: param_set_uint() reads with base 0, so 010 would be 8. */
static int svod_max_plan_events_set(const char *val, const struct kernel_param *kp)
{
	unsigned int n;
	int ret;

	ret = kstrtouint(val, 10, &n);
	if (ret)
		return ret;
	WRITE_ONCE(*(unsigned int *)kp->arg, n);
	return 0;
}

static const struct kernel_param_ops svod_max_plan_events_ops = {
	.set = svod_max_plan_events_set,
	.get = param_get_uint,
};

module_param_cb(max_plan_events, &svod_max_plan_events_ops, &svod_max_plan_events, 0644);
MODULE_PARM_DESC(max_plan_events, "Events per PLAN call (-E2BIG beyond)");

/* The core's parameters of @req. */
static struct svod_plan_params svod_plan_params_of(const struct svod_plan *req)
{
	return (struct svod_plan_params){
		.arena_size = req->arena_size,
		.block_size = req->block_size,
		.lv2_cnt = req->lv2_cnt,
		.strategy = req->strategy,
	};
}

static int svod_plan_run_req(struct svod_plan *req,
			     const struct svod_plan_event *events,
			     u64 *offsets)
{
	const struct svod_plan_params params = svod_plan_params_of(req);
	struct svod_plan_result res;
	int ret;

	ret = svod_plan_run(&params, events, req->nr_events, offsets, &res,
			    GFP_KERNEL_ACCOUNT);
	req->peak = res.peak;
	req->lower_bound = res.lower_bound;
	req->failed_event = res.failed_event;
	req->strategy_used = res.used;
	return ret;
}

/*
 * The caller's events, @esize bytes each, into the driver's layout: one
 * copy when the sizes agree, else entry by entry with the struct rules
 * (a shorter entry zero-extended, a longer one's tail zero or -E2BIG).
 */
static int svod_plan_copy_events(struct svod_plan_event *events, const struct svod_plan *req,
				 u32 esize)
{
	const u8 __user *uev = u64_to_user_ptr(req->events_ptr);
	u32 i;
	int ret;

	if (esize == sizeof(*events))
		return copy_from_user(events, uev, array_size(req->nr_events, esize)) ?
			-EFAULT : 0;
	for (i = 0; i < req->nr_events; i++) {
		ret = copy_struct_from_user(&events[i], sizeof(*events),
					    uev + (size_t)i * esize, esize);
		if (ret)
			return ret;
		if (fatal_signal_pending(current))
			return -EINTR;
	}
	return 0;
}

/**
 * svod_plan_ioctl() - SVOD_IOCTL_PLAN
 * @sf: the file (unused: plans are stateless)
 * @data: struct svod_plan; in: arena_size, block_size, lv2_cnt, strategy,
 *	flags, nr_events, events_ptr, offsets_ptr, pad2, event_size, pad3;
 *	out: peak, lower_bound, failed_event, strategy_used
 *
 * peak, lower_bound and failed_event are written back whatever the outcome
 * (0, 0 and ~0 when the call fails before planning). A plan that fails with
 * -ENOSPC or -EINVAL also writes its offsets (those it placed) and says
 * where it stopped in failed_event.
 *
 * Context: process context; sleeps, stops on a fatal signal.
 * Argument errors come first: flags, the pads, event_size and the
 * parameters (arena_size, block_size, lv2_cnt, strategy) are checked before
 * nr_events against max_plan_events and before any memory is allocated or
 * copied.
 *
 * Return: 0; -EINVAL for unknown flags, a nonzero pad, a bad event_size, a
 * bad event or parameter; -E2BIG beyond max_plan_events, or for an event
 * whose bytes past the driver's struct are not zero; -EFAULT; -ENOMEM;
 * -ENOSPC if the arena is too small; -EINTR on a fatal signal.
 */
int svod_plan_ioctl(struct svod_file *sf, void *data)
{
	struct svod_plan *req = data;
	struct svod_plan_params params;
	struct svod_plan_event *events;
	u32 esize = req->event_size ?: SVOD_PLAN_EVENT_SIZE_VER0;
	u64 *offsets;
	int ret;

	req->peak = 0;
	req->lower_bound = 0;
	req->failed_event = ~0U;
	req->strategy_used = SVOD_PLAN_USED_TLSF;
	/*
	 * Parameter errors before a byte is allocated or copied: -EINVAL
	 * whatever the memory state.
	 */
	params = svod_plan_params_of(req);
	if (req->flags || req->pad2 || req->pad3 || svod_plan_check_params(&params) ||
	    esize < SVOD_PLAN_EVENT_SIZE_VER0 || esize > SVOD_PLAN_EVENT_SIZE_MAX ||
	    !IS_ALIGNED(esize, 8))
		return -EINVAL;
	if (req->nr_events > READ_ONCE(svod_max_plan_events))
		return -E2BIG;

	/* User-sized: a failure is the caller's -ENOMEM, not a warning. */
	events = kvmalloc_array(req->nr_events, sizeof(*events),
				GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!events)
		return -ENOMEM;
	ret = svod_plan_copy_events(events, req, esize);
	if (ret)
		goto free_events;
	/* Zeroed: a plan refused early copies back offsets it never set. */
	offsets = kvmalloc_array(req->nr_events, sizeof(*offsets),
				 GFP_KERNEL_ACCOUNT | __GFP_ZERO | __GFP_NOWARN);
	if (!offsets) {
		ret = -ENOMEM;
		goto free_events;
	}

	ret = svod_plan_run_req(req, events, offsets);
	if (ret && ret != -ENOSPC && ret != -EINVAL)
		goto free_offsets;
	if (copy_to_user(u64_to_user_ptr(req->offsets_ptr), offsets,
			 array_size(req->nr_events, sizeof(*offsets))))
		ret = -EFAULT;

free_offsets:
	kvfree(offsets);
free_events:
	kvfree(events);
	return ret;
}
