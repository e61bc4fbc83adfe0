// SPDX-License-Identifier: GPL-2.0
/*
 * svod ioctl layer: copy in, reject unknown flag bits and nonzero padding,
 * call the handler with kernel structs, copy out. Nothing else happens here.
 * A known number with the wrong size or direction is a different command
 * and gets -ENOTTY like any unknown one.
 */
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "svod.h"

static int svod_ioctl_query(void __user *uarg)
{
	struct svod_tier_info *infos;
	struct svod_query q = {};
	u32 nr, filled;
	int ret;

	if (copy_from_user(&q, uarg, sizeof(q)))
		return -EFAULT;
	if (q.flags || q.pad)
		return -EINVAL;
	if (q.nr_tiers && !q.tiers_ptr)
		return -EFAULT;

	svod_query(NULL, 0, &nr);
	nr = min(nr, q.nr_tiers);
	infos = kvcalloc(nr, sizeof(*infos), GFP_KERNEL);
	if (!infos)
		return -ENOMEM;
	svod_query(infos, nr, &q.nr_tiers);
	filled = min(nr, q.nr_tiers);

	ret = 0;
	q.abi_version = SVOD_ABI_VERSION;
	if (copy_to_user(u64_to_user_ptr(q.tiers_ptr), infos,
			 array_size(filled, sizeof(*infos))) ||
	    copy_to_user(uarg, &q, sizeof(q)))
		ret = -EFAULT;
	kvfree(infos);
	return ret;
}

static int svod_ioctl_alloc(struct svod_file *sf, void __user *uarg)
{
	struct svod_alloc a = {};
	int ret;

	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	if (a.flags)
		return -EINVAL;
	ret = svod_alloc(sf, &a);
	if (ret)
		return ret;
	if (copy_to_user(uarg, &a, sizeof(a))) {
		/* The caller never learns the handle: take it back. */
		struct svod_free f = { .handle = a.handle };

		svod_free(sf, &f);
		return -EFAULT;
	}
	return 0;
}

static int svod_ioctl_free(struct svod_file *sf, void __user *uarg)
{
	struct svod_free f = {};

	if (copy_from_user(&f, uarg, sizeof(f)))
		return -EFAULT;
	if (f.flags || f.pad)
		return -EINVAL;
	return svod_free(sf, &f);
}

static int svod_ioctl_resolve(struct svod_file *sf, void __user *uarg)
{
	struct svod_resolve r = {};
	int ret;

	if (copy_from_user(&r, uarg, sizeof(r)))
		return -EFAULT;
	if (r.flags)
		return -EINVAL;
	ret = svod_resolve(sf, &r);
	if (ret)
		return ret;
	if (copy_to_user(uarg, &r, sizeof(r)))
		return -EFAULT;
	return 0;
}

static int svod_ioctl_xfer(struct svod_file *sf, void __user *uarg,
			   bool to_device)
{
	struct svod_xfer x = {};
	int ret;

	if (copy_from_user(&x, uarg, sizeof(x)))
		return -EFAULT;
	if ((x.flags & ~SVOD_XFER_FLAGS) || x.pad)
		return -EINVAL;
	ret = svod_xfer(sf, &x, to_device);
	if (ret)
		return ret;
	if (copy_to_user(uarg, &x, sizeof(x)))
		return -EFAULT;
	return 0;
}

static int svod_ioctl_plan(void __user *uarg)
{
	struct svod_plan_event *events;
	struct svod_plan p = {};
	u64 *offsets;
	int ret;

	if (copy_from_user(&p, uarg, sizeof(p)))
		return -EFAULT;
	if (p.flags)
		return -EINVAL;
	if (p.nr_events > READ_ONCE(svod_max_plan_events))
		return -E2BIG;

	events = kvmalloc_array(p.nr_events, sizeof(*events),
				GFP_KERNEL_ACCOUNT);
	if (!events)
		return -ENOMEM;
	if (copy_from_user(events, u64_to_user_ptr(p.events_ptr),
			   array_size(p.nr_events, sizeof(*events)))) {
		ret = -EFAULT;
		goto free_events;
	}
	/* Zeroed: a plan refused early copies back offsets it never set. */
	offsets = kvmalloc_array(p.nr_events, sizeof(*offsets),
				 GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	if (!offsets) {
		ret = -ENOMEM;
		goto free_events;
	}

	ret = svod_plan(&p, events, offsets);
	/* Failed plans report where they stopped, and TLSF what it placed. */
	if (ret && ret != -ENOSPC && ret != -EINVAL)
		goto free_offsets;
	if (copy_to_user(u64_to_user_ptr(p.offsets_ptr), offsets,
			 array_size(p.nr_events, sizeof(*offsets))) ||
	    copy_to_user(uarg, &p, sizeof(p)))
		ret = -EFAULT;

free_offsets:
	kvfree(offsets);
free_events:
	kvfree(events);
	return ret;
}

/**
 * svod_ioctl() - the ioctls of /dev/svod (Documentation/uapi.rst)
 * @filp: the open file
 * @cmd: SVOD_IOCTL_*
 * @arg: user pointer to the command's struct
 *
 * Context: process context; sleeps.
 * Return: 0 or a negative errno; -ENOTTY for an unknown command.
 */
long svod_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	struct svod_file *sf = filp->private_data;
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case SVOD_IOCTL_QUERY:
		return svod_ioctl_query(uarg);
	case SVOD_IOCTL_ALLOC:
		return svod_ioctl_alloc(sf, uarg);
	case SVOD_IOCTL_FREE:
		return svod_ioctl_free(sf, uarg);
	case SVOD_IOCTL_RESOLVE:
		return svod_ioctl_resolve(sf, uarg);
	case SVOD_IOCTL_STAGE:
		return svod_ioctl_xfer(sf, uarg, true);
	case SVOD_IOCTL_READ:
		return svod_ioctl_xfer(sf, uarg, false);
	case SVOD_IOCTL_PLAN:
		return svod_ioctl_plan(uarg);
	default:
		return -ENOTTY;
	}
}
