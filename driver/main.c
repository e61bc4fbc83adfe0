// SPDX-License-Identifier: GPL-2.0
/*
 * svod: the /dev/svod misc device, its file operations, and the
 * registration of the PCI driver, the configfs subsystem and the sysfs
 * class: the top of the layers (Documentation/svod.rst, "Layout"). All bound
 * devices' tiers appear under one /dev/svod. Each module parameter lives with the code that reads
 * it (file.c, alloc.c, planner.c, stage.c).
 */
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>

#include "async.h"
#include "configfs.h"
#include "file.h"
#include "ioctl.h"
#include "mmap.h"
#include "stage.h"
#include "svod.h"
#include "sysfs.h"
#include "tier.h"

static const struct file_operations svod_fops = {
	.owner = THIS_MODULE,
	.open = svod_open,
	.release = svod_release,
	.unlocked_ioctl = svod_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.show_fdinfo = svod_show_fdinfo,
	.mmap = svod_mmap,
	.llseek = noop_llseek,
};

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

	ret = svod_async_module_init();
	if (ret)
		goto exit_stage;

	ret = svod_mmap_init();
	if (ret)
		goto exit_async;

	ret = misc_register(&svod_misc);
	if (ret)
		goto exit_mmap;

	ret = svod_configfs_init();
	if (ret)
		goto deregister_misc;

	ret = svod_sysfs_init();
	if (ret)
		goto exit_configfs;

	ret = svod_pci_register();
	if (ret)
		goto exit_sysfs;

	return 0;

exit_sysfs:
	svod_sysfs_exit();
exit_configfs:
	svod_configfs_exit();
deregister_misc:
	misc_deregister(&svod_misc);
exit_mmap:
	svod_mmap_exit();
exit_async:
	svod_async_module_exit();
exit_stage:
	svod_stage_exit();
	svod_debugfs_fini();
	return ret;
}

static void __exit svod_exit(void)
{
	svod_pci_unregister();
	svod_sysfs_exit();
	svod_configfs_exit();
	misc_deregister(&svod_misc);
	svod_mmap_exit();
	svod_async_module_exit();
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
