// SPDX-License-Identifier: GPL-2.0
/*
 * svod debugfs: svod/state lists every tier with its free spans and every
 * open file with its allocations, pid and comm (format in
 * Documentation/svod.rst).
 */
#include <linux/debugfs.h>
#include <linux/pid.h>
#include <linux/seq_file.h>

#include "alloc.h"
#include "core/handle.h"
#include "core/range.h"
#include "file.h"
#include "svod.h"
#include "tier.h"

static struct dentry *svod_debugfs_root;

static void svod_state_show_tier(struct seq_file *m, struct svod_dev_tier *tier)
{
	struct svod_range_node *pos;
	u64 start, size;

	mutex_lock(&tier->lock);
	seq_printf(m, "tier %u %s device=%s base=0x%llx capacity=0x%llx free=0x%llx largest=0x%llx live=%u%s\n",
		   tier->id, tier->spec.name, tier->device, tier->spec.base,
		   tier->spec.size, tier->core.free_bytes,
		   svod_range_largest_free(&tier->core), tier->core.nr_live,
		   tier->gone ? " gone" : "");
	svod_range_for_each_free(pos, &tier->core, start, size)
		seq_printf(m, "  free 0x%llx+0x%llx\n", start, size);
	mutex_unlock(&tier->lock);
}

static void svod_state_show_file(struct seq_file *m, struct svod_file *sf)
{
	const struct svod_hold *hold;
	u32 pos = 0;
	u64 handle;

	mutex_lock(&sf->lock);
	seq_printf(m, "file %llu pid=%d comm=%s handles=%u\n", sf->client_id,
		   pid_nr(sf->pid), sf->comm, sf->handles.nr_live);
	while ((hold = svod_handle_next(&sf->handles, &pos, &handle)))
		seq_printf(m, "  %s 0x%llx tier=%u addr=0x%llx size=0x%llx%s\n",
			   hold->imported ? "import" : "alloc", handle,
			   hold->alloc->tier->id, svod_allocation_start(hold->alloc),
			   svod_allocation_size(hold->alloc),
			   hold->access & SVOD_ACCESS_WRITE ? "" : " ro");
	mutex_unlock(&sf->lock);
}

static int svod_state_show(struct seq_file *m, void *unused)
{
	struct svod_dev_tier *tier;
	struct svod_file *sf;
	unsigned long id;

	for (id = 0; (tier = svod_dev_tier_next(&id)); id++) {
		svod_state_show_tier(m, tier);
		svod_dev_tier_put(tier);
	}

	mutex_lock(&svod_files_lock);
	list_for_each_entry(sf, &svod_files, node)
		svod_state_show_file(m, sf);
	mutex_unlock(&svod_files_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(svod_state);

/**
 * svod_debugfs_init() - create svod/state in debugfs (best effort)
 *
 * Context: process context (module init).
 */
void svod_debugfs_init(void)
{
	svod_debugfs_root = debugfs_create_dir(KBUILD_MODNAME, NULL);
	debugfs_create_file("state", 0400, svod_debugfs_root, NULL,
			    &svod_state_fops);
}

/**
 * svod_debugfs_fini() - remove svod's debugfs files
 *
 * Context: process context (module exit).
 */
void svod_debugfs_fini(void)
{
	debugfs_remove_recursive(svod_debugfs_root);
}
