// SPDX-License-Identifier: GPL-2.0
/*
 * svod: module parameters, global registries, the /dev/svod misc device and
 * the registration of the PCI driver and the configfs subsystem. All bound
 * devices' tiers appear under one /dev/svod.
 */
#include <linux/miscdevice.h>
#include <linux/module.h>

#include "configfs.h"
#include "mmap.h"
#include "svod.h"

unsigned int svod_max_handles = 65536;

/* Largest max_handles: 2^18 live handles per file. */
#define SVOD_MAX_HANDLES_LIMIT	BIT(18)

/* Accepts 1..SVOD_MAX_HANDLES_LIMIT; anything else is -EINVAL, unchanged. */
static int svod_max_handles_set(const char *val, const struct kernel_param *kp)
{
	unsigned int n;
	int ret;

	ret = kstrtouint(val, 0, &n);
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

unsigned long long svod_max_bytes;
module_param_named(max_bytes, svod_max_bytes, ullong, 0644);
MODULE_PARM_DESC(max_bytes,
		 "Bytes per open file per tier, 0 = unlimited (-EDQUOT beyond)");

unsigned int svod_max_plan_events = 1U << 20;
module_param_named(max_plan_events, svod_max_plan_events, uint, 0644);
MODULE_PARM_DESC(max_plan_events, "Events per PLAN call (-E2BIG beyond)");

/* Protects the device list and every device's tier set. */
DEFINE_MUTEX(svod_decl_lock);

/*
 * Tier id -> struct svod_dev_tier, for every tier not yet released (gone
 * tiers stay while allocations hold them, so calls on them see -ENODEV).
 * Lookups take a reference under the xarray's lock; release erases the
 * entry under that lock before freeing.
 */
DEFINE_XARRAY_ALLOC(svod_tier_xa);

static struct miscdevice svod_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "svod",
	.fops = &svod_fops,
	.mode = 0660,
};

static int __init svod_init(void)
{
	int ret;

	svod_debugfs_init();
	svod_stage_init();

	ret = svod_mmap_init();
	if (ret)
		goto exit_stage;

	ret = misc_register(&svod_misc);
	if (ret)
		goto exit_mmap;

	ret = svod_configfs_init();
	if (ret)
		goto deregister_misc;

	ret = svod_pci_register();
	if (ret)
		goto exit_configfs;

	return 0;

exit_configfs:
	svod_configfs_exit();
deregister_misc:
	misc_deregister(&svod_misc);
exit_mmap:
	svod_mmap_exit();
exit_stage:
	svod_stage_exit();
	svod_debugfs_fini();
	return ret;
}

static void __exit svod_exit(void)
{
	svod_pci_unregister();
	svod_configfs_exit();
	misc_deregister(&svod_misc);
	svod_mmap_exit();
	svod_stage_exit();
	svod_debugfs_fini();
	svod_files_exit();
	WARN_ON(!xa_empty(&svod_tier_xa));
}

module_init(svod_init);
module_exit(svod_exit);

MODULE_DESCRIPTION("svod: safe sharing of an accelerator's memory tiers");
MODULE_LICENSE("GPL");
MODULE_VERSION(SVOD_VERSION);
