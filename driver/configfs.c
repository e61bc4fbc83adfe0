// SPDX-License-Identifier: GPL-2.0
/*
 * svod configfs: where an administrator declares each bound device's tiers,
 * one directory per object and one value per file:
 *
 *   /sys/kernel/config/svod/
 *     <pci name>/               a bound device (made at bind, gone at unbind)
 *       commit                  write 1: check the staged tiers, swap them in
 *       tiers/
 *         <tier name>/          mkdir: a staged tier (at most 8)
 *           bar offset size     required
 *           base align          0 and 64 unless written
 *           reserved/
 *             <any name>/       mkdir: a reserved region (at most 8)
 *               base size       required
 *
 * Writes only stage values: numbers of svod's one grammar (core/number.h);
 * a malformed one fails at once with -EINVAL, one beyond 64 bits (or 32 for
 * bar) with -ERANGE, and the kernel log names the accepted forms;
 * commit hands the whole staged set to svod_dev_set_tiers(), which keeps,
 * replaces or refuses it as one. At bind the driver makes the directory of
 * each tier the device has (its default tier), so the tree shows the live
 * set after every successful commit.
 *
 * configfs cannot remove a directory that still holds directories made by
 * mkdir. So at unbind the driver removes each tier and region directory
 * itself, through vfs_rmdir() (the path a user's rmdir takes, with the same
 * locks and callbacks), from a work item (kernel credentials, no signals),
 * before it removes the device's directory; new mkdirs are refused from the
 * moment the device starts going. For the same reason the tier and region
 * types name no owner module: the default tier's directory would pin svod.ko
 * for as long as a device is bound. No svod directory outlives the module.
 */
#include <linux/capability.h>
#include <linux/configfs.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/mutex.h>
#include <linux/namei.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/workqueue.h>

#include <kunit/visibility.h>

#include "configfs.h"
#include "core/number.h"
#include "dev.h"
#include "tier.h"

/* Which values of a tier or region were written (struct svod_cfs_*.set). */
#define SVOD_CFS_BAR		BIT(0)
#define SVOD_CFS_OFFSET		BIT(1)
#define SVOD_CFS_SIZE		BIT(2)
#define SVOD_CFS_TIER_REQUIRED	(SVOD_CFS_BAR | SVOD_CFS_OFFSET | SVOD_CFS_SIZE)
#define SVOD_CFS_BASE		BIT(3)
#define SVOD_CFS_REGION_REQUIRED	(SVOD_CFS_BASE | SVOD_CFS_SIZE)

/**
 * struct svod_cfs_dev - a bound device's directory, svod/<pci name>/
 * @group: the directory
 * @tiers_group: its tiers/ directory
 * @lock: protects @sdev, @staged, @nr_staged and every staged tier's and
 *	region's values and lists
 * @sdev: the device; NULL once it is going away (mkdir and commit then
 *	fail with -ENODEV)
 * @staged: staged tiers in mkdir order (struct svod_cfs_tier.node)
 * @nr_staged: entries in @staged
 */
struct svod_cfs_dev {
	struct config_group group;
	struct config_group tiers_group;
	/* Protects the staged tiers and @sdev. */
	struct mutex lock;
	struct svod_dev *sdev;
	struct list_head staged;
	unsigned int nr_staged;
};

/**
 * struct svod_cfs_tier - a staged tier, tiers/<name>/
 * @group: the directory
 * @reserved_group: its reserved/ directory
 * @cdev: the device's directory
 * @node: entry in @cdev's staged list; empty once removed
 * @spec: the staged values (name, bar, offset, size, base, align)
 * @set: which of bar, offset and size were written
 * @regions: staged reserved regions (struct svod_cfs_region.node)
 * @nr_regions: entries in @regions
 */
struct svod_cfs_tier {
	struct config_group group;
	struct config_group reserved_group;
	struct svod_cfs_dev *cdev;
	struct list_head node;
	struct svod_tier_spec spec;
	unsigned long set;
	struct list_head regions;
	unsigned int nr_regions;
};

/**
 * struct svod_cfs_region - a staged reserved region, reserved/<name>/
 * @item: the directory
 * @tier: the tier it belongs to
 * @node: entry in @tier's region list; empty once removed
 * @region: the staged values
 * @set: which of base and size were written
 */
struct svod_cfs_region {
	struct config_item item;
	struct svod_cfs_tier *tier;
	struct list_head node;
	struct svod_range_region region;
	unsigned long set;
};

static struct svod_cfs_dev *to_svod_cfs_dev(struct config_item *item)
{
	return container_of(to_config_group(item), struct svod_cfs_dev, group);
}

static struct svod_cfs_tier *to_svod_cfs_tier(struct config_item *item)
{
	return container_of(to_config_group(item), struct svod_cfs_tier, group);
}

static struct svod_cfs_region *to_svod_cfs_region(struct config_item *item)
{
	return container_of(item, struct svod_cfs_region, item);
}

/**
 * svod_decl_parse_u64() - parse a number written to configfs
 * @buf: NUL-terminated; a number of svod's grammar (core/number.h: decimal
 *	or 0x hex, memparse()'s units K to E or KiB to EiB), and one optional
 *	trailing newline as echo(1) adds
 * @val: out: the value, written only on success
 *
 * Context: any context.
 * Return: 0; -EINVAL for a text outside the grammar; -ERANGE for a value
 * beyond U64_MAX.
 */
int svod_decl_parse_u64(const char *buf, u64 *val)
{
	size_t len = strlen(buf);

	if (len && buf[len - 1] == '\n')
		len--;
	return svod_number_parse(buf, len, val);
}
EXPORT_SYMBOL_IF_KUNIT(svod_decl_parse_u64);

/*
 * Parse the value written to @attr of @item; a refusal is logged with the
 * forms accepted, since write(2) can only return its errno.
 */
static int svod_cfs_parse(struct config_item *item, const char *attr,
			  const char *page, u64 *val)
{
	int ret = svod_decl_parse_u64(page, val);

	if (ret)
		pr_info_ratelimited("svod: configfs: %s/%s: \"%*pE\" refused (%s): write %s\n",
				    config_item_name(item), attr,
				    (int)min_t(size_t, strcspn(page, "\n"), 32), page,
				    ret == -ERANGE ? "ERANGE, beyond 2^64 - 1" : "EINVAL",
				    SVOD_NUMBER_FORMS);
	return ret;
}

/* Tier attributes: bar, offset, size, base, align. */

static ssize_t svod_cfs_tier_show(struct config_item *item, char *page,
				  const char *fmt, size_t field, unsigned long bit)
{
	struct svod_cfs_tier *t = to_svod_cfs_tier(item);
	ssize_t len = 0;

	mutex_lock(&t->cdev->lock);
	if (!bit || (t->set & bit))
		len = sprintf(page, fmt, *(u64 *)((char *)&t->spec + field));
	mutex_unlock(&t->cdev->lock);
	return len;
}

static ssize_t svod_cfs_tier_store(struct config_item *item, const char *page,
				   size_t count, const char *attr, size_t field,
				   unsigned long bit)
{
	struct svod_cfs_tier *t = to_svod_cfs_tier(item);
	u64 val;
	int ret;

	ret = svod_cfs_parse(item, attr, page, &val);
	if (ret)
		return ret;
	mutex_lock(&t->cdev->lock);
	*(u64 *)((char *)&t->spec + field) = val;
	t->set |= bit;
	mutex_unlock(&t->cdev->lock);
	return count;
}

static ssize_t svod_cfs_tier_offset_show(struct config_item *item, char *page)
{
	return svod_cfs_tier_show(item, page, "0x%llx\n",
				  offsetof(struct svod_tier_spec, offset), SVOD_CFS_OFFSET);
}

static ssize_t svod_cfs_tier_offset_store(struct config_item *item,
					  const char *page, size_t count)
{
	return svod_cfs_tier_store(item, page, count, "offset",
				   offsetof(struct svod_tier_spec, offset), SVOD_CFS_OFFSET);
}
CONFIGFS_ATTR(svod_cfs_tier_, offset);

static ssize_t svod_cfs_tier_size_show(struct config_item *item, char *page)
{
	return svod_cfs_tier_show(item, page, "0x%llx\n",
				  offsetof(struct svod_tier_spec, size), SVOD_CFS_SIZE);
}

static ssize_t svod_cfs_tier_size_store(struct config_item *item,
					const char *page, size_t count)
{
	return svod_cfs_tier_store(item, page, count, "size",
				   offsetof(struct svod_tier_spec, size), SVOD_CFS_SIZE);
}
CONFIGFS_ATTR(svod_cfs_tier_, size);

static ssize_t svod_cfs_tier_base_show(struct config_item *item, char *page)
{
	return svod_cfs_tier_show(item, page, "0x%llx\n",
				  offsetof(struct svod_tier_spec, base), 0);
}

static ssize_t svod_cfs_tier_base_store(struct config_item *item,
					const char *page, size_t count)
{
	return svod_cfs_tier_store(item, page, count, "base",
				   offsetof(struct svod_tier_spec, base), 0);
}
CONFIGFS_ATTR(svod_cfs_tier_, base);

static ssize_t svod_cfs_tier_align_show(struct config_item *item, char *page)
{
	return svod_cfs_tier_show(item, page, "%llu\n",
				  offsetof(struct svod_tier_spec, align), 0);
}

static ssize_t svod_cfs_tier_align_store(struct config_item *item,
					 const char *page, size_t count)
{
	return svod_cfs_tier_store(item, page, count, "align",
				   offsetof(struct svod_tier_spec, align), 0);
}
CONFIGFS_ATTR(svod_cfs_tier_, align);

static ssize_t svod_cfs_tier_bar_show(struct config_item *item, char *page)
{
	struct svod_cfs_tier *t = to_svod_cfs_tier(item);
	ssize_t len = 0;

	mutex_lock(&t->cdev->lock);
	if (t->set & SVOD_CFS_BAR)
		len = sprintf(page, "%u\n", t->spec.bar);
	mutex_unlock(&t->cdev->lock);
	return len;
}

static ssize_t svod_cfs_tier_bar_store(struct config_item *item,
				       const char *page, size_t count)
{
	struct svod_cfs_tier *t = to_svod_cfs_tier(item);
	u64 bar;
	int ret;

	ret = svod_cfs_parse(item, "bar", page, &bar);
	if (ret)
		return ret;
	if (bar > UINT_MAX)
		return -ERANGE;
	mutex_lock(&t->cdev->lock);
	t->spec.bar = bar;
	t->set |= SVOD_CFS_BAR;
	mutex_unlock(&t->cdev->lock);
	return count;
}
CONFIGFS_ATTR(svod_cfs_tier_, bar);

static struct configfs_attribute *svod_cfs_tier_attrs[] = {
	&svod_cfs_tier_attr_bar,
	&svod_cfs_tier_attr_offset,
	&svod_cfs_tier_attr_size,
	&svod_cfs_tier_attr_base,
	&svod_cfs_tier_attr_align,
	NULL,
};

/* Region attributes: base, size. */

static ssize_t svod_cfs_region_show(struct config_item *item, char *page,
				    bool size)
{
	struct svod_cfs_region *r = to_svod_cfs_region(item);
	unsigned long bit = size ? SVOD_CFS_SIZE : SVOD_CFS_BASE;
	ssize_t len = 0;

	mutex_lock(&r->tier->cdev->lock);
	if (r->set & bit)
		len = sprintf(page, "0x%llx\n",
			      size ? r->region.size : r->region.base);
	mutex_unlock(&r->tier->cdev->lock);
	return len;
}

static ssize_t svod_cfs_region_store(struct config_item *item,
				     const char *page, size_t count, bool size)
{
	struct svod_cfs_region *r = to_svod_cfs_region(item);
	u64 val;
	int ret;

	ret = svod_cfs_parse(item, size ? "size" : "base", page, &val);
	if (ret)
		return ret;
	mutex_lock(&r->tier->cdev->lock);
	if (size)
		r->region.size = val;
	else
		r->region.base = val;
	r->set |= size ? SVOD_CFS_SIZE : SVOD_CFS_BASE;
	mutex_unlock(&r->tier->cdev->lock);
	return count;
}

static ssize_t svod_cfs_region_base_show(struct config_item *item, char *page)
{
	return svod_cfs_region_show(item, page, false);
}

static ssize_t svod_cfs_region_base_store(struct config_item *item,
					  const char *page, size_t count)
{
	return svod_cfs_region_store(item, page, count, false);
}
CONFIGFS_ATTR(svod_cfs_region_, base);

static ssize_t svod_cfs_region_size_show(struct config_item *item, char *page)
{
	return svod_cfs_region_show(item, page, true);
}

static ssize_t svod_cfs_region_size_store(struct config_item *item,
					  const char *page, size_t count)
{
	return svod_cfs_region_store(item, page, count, true);
}
CONFIGFS_ATTR(svod_cfs_region_, size);

static struct configfs_attribute *svod_cfs_region_attrs[] = {
	&svod_cfs_region_attr_base,
	&svod_cfs_region_attr_size,
	NULL,
};

static void svod_cfs_region_release(struct config_item *item)
{
	kfree(to_svod_cfs_region(item));
}

static struct configfs_item_operations svod_cfs_region_item_ops = {
	.release = svod_cfs_region_release,
};

/* No owner: see the comment at the top. */
static const struct config_item_type svod_cfs_region_type = {
	.ct_item_ops = &svod_cfs_region_item_ops,
	.ct_attrs = svod_cfs_region_attrs,
};

static struct config_item *svod_cfs_region_make(struct config_group *group,
						const char *name)
{
	struct svod_cfs_tier *t =
		container_of(group, struct svod_cfs_tier, reserved_group);
	struct svod_cfs_region *r;
	int ret = 0;

	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return ERR_PTR(-ENOMEM);
	config_item_init_type_name(&r->item, name, &svod_cfs_region_type);
	r->tier = t;

	mutex_lock(&t->cdev->lock);
	if (!t->cdev->sdev)
		ret = -ENODEV;
	else if (t->nr_regions == SVOD_MAX_RESERVED)
		ret = -ENOSPC;
	else
		list_add_tail(&r->node, &t->regions);
	t->nr_regions += !ret;
	mutex_unlock(&t->cdev->lock);
	if (ret) {
		config_item_put(&r->item);
		return ERR_PTR(ret);
	}
	return &r->item;
}

static void svod_cfs_region_drop(struct config_group *group,
				 struct config_item *item)
{
	struct svod_cfs_region *r = to_svod_cfs_region(item);

	mutex_lock(&r->tier->cdev->lock);
	list_del_init(&r->node);
	r->tier->nr_regions--;
	mutex_unlock(&r->tier->cdev->lock);
	config_item_put(item);
}

static struct configfs_group_operations svod_cfs_reserved_group_ops = {
	.make_item = svod_cfs_region_make,
	.drop_item = svod_cfs_region_drop,
};

static const struct config_item_type svod_cfs_reserved_type = {
	.ct_group_ops = &svod_cfs_reserved_group_ops,
};

static void svod_cfs_tier_release(struct config_item *item)
{
	kfree(to_svod_cfs_tier(item));
}

static struct configfs_item_operations svod_cfs_tier_item_ops = {
	.release = svod_cfs_tier_release,
};

/* No owner: see the comment at the top. */
static const struct config_item_type svod_cfs_tier_type = {
	.ct_item_ops = &svod_cfs_tier_item_ops,
	.ct_attrs = svod_cfs_tier_attrs,
};

static struct config_group *svod_cfs_tier_make(struct config_group *group,
					       const char *name)
{
	struct svod_cfs_dev *cdev =
		container_of(group, struct svod_cfs_dev, tiers_group);
	struct svod_cfs_tier *t;
	int ret = 0;

	if (!svod_tier_name_valid(name))
		return ERR_PTR(-EINVAL);
	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return ERR_PTR(-ENOMEM);
	config_group_init_type_name(&t->group, name, &svod_cfs_tier_type);
	config_group_init_type_name(&t->reserved_group, "reserved",
				    &svod_cfs_reserved_type);
	configfs_add_default_group(&t->reserved_group, &t->group);
	t->cdev = cdev;
	strscpy(t->spec.name, name, sizeof(t->spec.name));
	t->spec.align = SVOD_DEFAULT_ALIGN;
	INIT_LIST_HEAD(&t->regions);

	mutex_lock(&cdev->lock);
	if (!cdev->sdev)
		ret = -ENODEV;
	else if (cdev->nr_staged == SVOD_MAX_DEV_TIERS)
		ret = -ENOSPC;
	else
		list_add_tail(&t->node, &cdev->staged);
	cdev->nr_staged += !ret;
	mutex_unlock(&cdev->lock);
	if (ret) {
		config_group_put(&t->group);
		return ERR_PTR(ret);
	}
	return &t->group;
}

static void svod_cfs_tier_drop(struct config_group *group,
			       struct config_item *item)
{
	struct svod_cfs_tier *t = to_svod_cfs_tier(item);

	mutex_lock(&t->cdev->lock);
	list_del_init(&t->node);
	t->cdev->nr_staged--;
	mutex_unlock(&t->cdev->lock);
	config_item_put(item);
}

static struct configfs_group_operations svod_cfs_tiers_group_ops = {
	.make_group = svod_cfs_tier_make,
	.drop_item = svod_cfs_tier_drop,
};

static const struct config_item_type svod_cfs_tiers_type = {
	.ct_group_ops = &svod_cfs_tiers_group_ops,
};

/* Builds a spec from a staged tier; logs why it cannot. */
static int svod_cfs_tier_spec(struct svod_cfs_dev *cdev, struct svod_cfs_tier *t,
			      struct svod_tier_spec *spec)
{
	struct device *dev = &cdev->sdev->pdev->dev;
	struct svod_cfs_region *r;

	lockdep_assert_held(&cdev->lock);
	if ((t->set & SVOD_CFS_TIER_REQUIRED) != SVOD_CFS_TIER_REQUIRED) {
		dev_err(dev, "commit: tier %s: bar, offset and size must be written\n",
			t->spec.name);
		return -EINVAL;
	}
	*spec = t->spec;
	spec->nr_reserved = 0;
	list_for_each_entry(r, &t->regions, node) {
		if ((r->set & SVOD_CFS_REGION_REQUIRED) != SVOD_CFS_REGION_REQUIRED) {
			dev_err(dev, "commit: tier %s: reserved region %s: base and size must be written\n",
				t->spec.name, config_item_name(&r->item));
			return -EINVAL;
		}
		spec->reserved[spec->nr_reserved++] = r->region;
	}
	svod_tier_spec_sort_reserved(spec);
	return 0;
}

static int svod_cfs_dev_commit_locked(struct svod_cfs_dev *cdev)
{
	struct svod_tier_spec *specs;
	struct svod_cfs_tier *t;
	unsigned int nr = 0;
	int ret = 0;

	lockdep_assert_held(&cdev->lock);
	specs = kcalloc(SVOD_MAX_DEV_TIERS, sizeof(*specs), GFP_KERNEL);
	if (!specs)
		return -ENOMEM;
	list_for_each_entry(t, &cdev->staged, node) {
		ret = svod_cfs_tier_spec(cdev, t, &specs[nr++]);
		if (ret)
			break;
	}
	if (!ret)
		ret = svod_dev_set_tiers(cdev->sdev, specs, nr);
	kfree(specs);
	return ret;
}

static ssize_t svod_cfs_dev_commit_store(struct config_item *item,
					 const char *page, size_t count)
{
	struct svod_cfs_dev *cdev = to_svod_cfs_dev(item);
	int ret;

	mutex_lock(&cdev->lock);
	if (!cdev->sdev) {
		ret = -ENODEV;
	} else if (!capable(CAP_SYS_ADMIN)) {
		dev_err(&cdev->sdev->pdev->dev, "commit: declaring tiers needs CAP_SYS_ADMIN\n");
		ret = -EPERM;
	} else if (!sysfs_streq(page, "1")) {
		dev_err(&cdev->sdev->pdev->dev, "commit: write 1 to commit\n");
		ret = -EINVAL;
	} else {
		ret = svod_cfs_dev_commit_locked(cdev);
	}
	mutex_unlock(&cdev->lock);
	return ret ? ret : count;
}
CONFIGFS_ATTR_WO(svod_cfs_dev_, commit);

static struct configfs_attribute *svod_cfs_dev_attrs[] = {
	&svod_cfs_dev_attr_commit,
	NULL,
};

static const struct config_item_type svod_cfs_dev_type = {
	.ct_attrs = svod_cfs_dev_attrs,
	.ct_owner = THIS_MODULE,
};

/* No owner and no mkdir: see the comment at the top. */
static const struct config_item_type svod_cfs_root_type = {
};

static struct configfs_subsystem svod_cfs_subsys = {
	.su_group = {
		.cg_item = {
			.ci_namebuf = KBUILD_MODNAME,
			.ci_type = &svod_cfs_root_type,
		},
	},
};

/*
 * mkdir @name in @parent as a user would (configfs calls the make_group or
 * make_item of @parent).
 */
static int svod_cfs_mkdir(struct config_group *parent, const char *name)
{
	struct dentry *dir = parent->cg_item.ci_dentry;
	struct dentry *child;
	int ret;

	inode_lock_nested(d_inode(dir), I_MUTEX_PARENT);
	child = lookup_one_len(name, dir, strlen(name));
	if (IS_ERR(child)) {
		ret = PTR_ERR(child);
	} else {
		ret = d_really_is_positive(child) ? -EEXIST :
		      vfs_mkdir(&init_user_ns, d_inode(dir), child, 0755);
		dput(child);
	}
	inode_unlock(d_inode(dir));
	return ret;
}

/*
 * rmdir @item (a directory made by mkdir in @parent) as a user would, unless
 * it is already gone: @node is its entry in its staged list, emptied by the
 * drop_item callbacks. The parent's inode lock keeps a user's rmdir away.
 */
static int svod_cfs_rmdir(struct svod_cfs_dev *cdev, struct config_group *parent,
			  struct config_item *item, struct list_head *node)
{
	struct dentry *dir = parent->cg_item.ci_dentry;
	struct dentry *child = NULL;
	int ret = 0;

	inode_lock_nested(d_inode(dir), I_MUTEX_PARENT);
	mutex_lock(&cdev->lock);
	if (!list_empty(node))
		child = dget(item->ci_dentry);
	mutex_unlock(&cdev->lock);
	if (child) {
		ret = vfs_rmdir(&init_user_ns, d_inode(dir), child);
		dput(child);
	}
	inode_unlock(d_inode(dir));
	return ret;
}

/* The next staged tier (with a reference), or NULL. */
static struct svod_cfs_tier *svod_cfs_first_tier(struct svod_cfs_dev *cdev)
{
	struct svod_cfs_tier *t;

	mutex_lock(&cdev->lock);
	t = list_first_entry_or_null(&cdev->staged, struct svod_cfs_tier, node);
	if (t)
		config_group_get(&t->group);
	mutex_unlock(&cdev->lock);
	return t;
}

/* Removes a staged tier's region directories, then the tier's. */
static int svod_cfs_tier_remove(struct svod_cfs_dev *cdev, struct svod_cfs_tier *t)
{
	struct svod_cfs_region *r;
	int ret;

	for (;;) {
		mutex_lock(&cdev->lock);
		r = list_first_entry_or_null(&t->regions, struct svod_cfs_region,
					     node);
		if (r)
			config_item_get(&r->item);
		mutex_unlock(&cdev->lock);
		if (!r)
			break;
		ret = svod_cfs_rmdir(cdev, &t->reserved_group, &r->item, &r->node);
		config_item_put(&r->item);
		if (ret)
			return ret;
	}
	return svod_cfs_rmdir(cdev, &cdev->tiers_group, &t->group.cg_item,
			      &t->node);
}

/**
 * struct svod_cfs_work - a tree change made with kernel credentials
 * @work: runs on system_wq
 * @cdev: the device's directory
 * @ret: out: 0 or an errno
 */
struct svod_cfs_work {
	struct work_struct work;
	struct svod_cfs_dev *cdev;
	int ret;
};

static void svod_cfs_unload_work(struct work_struct *work)
{
	struct svod_cfs_work *w = container_of(work, struct svod_cfs_work, work);
	struct svod_cfs_tier *t;

	while ((t = svod_cfs_first_tier(w->cdev))) {
		w->ret = svod_cfs_tier_remove(w->cdev, t);
		config_group_put(&t->group);
		if (w->ret)
			return;
	}
}

/* Makes a tier's directory and stages @spec's values in it. */
static int svod_cfs_load_tier(struct svod_cfs_dev *cdev,
			      const struct svod_tier_spec *spec)
{
	struct svod_cfs_region *r;
	struct svod_cfs_tier *t;
	unsigned int i;
	char name[12];
	int ret;

	ret = svod_cfs_mkdir(&cdev->tiers_group, spec->name);
	if (ret)
		return ret;
	mutex_lock(&cdev->lock);
	list_for_each_entry(t, &cdev->staged, node) {
		if (!strcmp(t->spec.name, spec->name))
			break;
	}
	/* Removed by a user already: nothing to fill in. */
	if (list_entry_is_head(t, &cdev->staged, node)) {
		mutex_unlock(&cdev->lock);
		return 0;
	}
	t->spec = *spec;
	t->set = SVOD_CFS_TIER_REQUIRED;
	config_group_get(&t->group);
	mutex_unlock(&cdev->lock);

	for (i = 0; i < spec->nr_reserved; i++) {
		snprintf(name, sizeof(name), "%u", i);
		ret = svod_cfs_mkdir(&t->reserved_group, name);
		if (ret)
			break;
		mutex_lock(&cdev->lock);
		list_for_each_entry(r, &t->regions, node) {
			if (!strcmp(config_item_name(&r->item), name)) {
				r->region = spec->reserved[i];
				r->set = SVOD_CFS_REGION_REQUIRED;
			}
		}
		mutex_unlock(&cdev->lock);
	}
	config_group_put(&t->group);
	return ret;
}

static void svod_cfs_load_work(struct work_struct *work)
{
	struct svod_cfs_work *w = container_of(work, struct svod_cfs_work, work);
	struct svod_tier_spec *specs;
	int i, nr;

	specs = kcalloc(SVOD_MAX_DEV_TIERS, sizeof(*specs), GFP_KERNEL);
	if (!specs) {
		w->ret = -ENOMEM;
		return;
	}
	nr = svod_dev_get_specs(w->cdev->sdev, specs, SVOD_MAX_DEV_TIERS);
	for (i = 0; i < nr && !w->ret; i++)
		w->ret = svod_cfs_load_tier(w->cdev, &specs[i]);
	kfree(specs);
}

static int svod_cfs_run(struct svod_cfs_dev *cdev, work_func_t fn)
{
	struct svod_cfs_work w = { .cdev = cdev };

	INIT_WORK_ONSTACK(&w.work, fn);
	schedule_work(&w.work);
	flush_work(&w.work);
	destroy_work_on_stack(&w.work);
	return w.ret;
}

/**
 * svod_configfs_dev_add() - make a bound device's directory
 * @sdev: the device, registered with its tiers
 *
 * The directory svod/<pci name>/ gets one tier directory per current tier
 * of the device, its values staged as they are live.
 *
 * Context: process context (probe); may sleep.
 * Return: 0, -ENOMEM or an errno of configfs_register_group() or mkdir.
 */
int svod_configfs_dev_add(struct svod_dev *sdev)
{
	struct svod_cfs_dev *cdev;
	int ret;

	cdev = kzalloc(sizeof(*cdev), GFP_KERNEL);
	if (!cdev)
		return -ENOMEM;
	mutex_init(&cdev->lock);
	INIT_LIST_HEAD(&cdev->staged);
	cdev->sdev = sdev;
	config_group_init_type_name(&cdev->group, pci_name(sdev->pdev),
				    &svod_cfs_dev_type);
	config_group_init_type_name(&cdev->tiers_group, "tiers",
				    &svod_cfs_tiers_type);
	configfs_add_default_group(&cdev->tiers_group, &cdev->group);

	ret = configfs_register_group(&svod_cfs_subsys.su_group, &cdev->group);
	if (ret) {
		kfree(cdev);
		return ret;
	}
	sdev->cfs = cdev;
	ret = svod_cfs_run(cdev, svod_cfs_load_work);
	if (ret) {
		dev_err(&sdev->pdev->dev, "configfs: cannot make the tier directories (%d)\n",
			ret);
		svod_configfs_dev_remove(sdev);
	}
	return ret;
}

/**
 * svod_configfs_dev_remove() - remove a device's directory
 * @sdev: the device, still registered
 *
 * From the start, mkdir under the directory and commit fail with -ENODEV.
 * Processes may keep the directories open or be inside them: they are left
 * with removed directories.
 *
 * Context: process context (remove); may sleep.
 */
void svod_configfs_dev_remove(struct svod_dev *sdev)
{
	struct svod_cfs_dev *cdev = sdev->cfs;
	int ret;

	if (!cdev)
		return;
	mutex_lock(&cdev->lock);
	cdev->sdev = NULL;
	mutex_unlock(&cdev->lock);

	ret = svod_cfs_run(cdev, svod_cfs_unload_work);
	sdev->cfs = NULL;
	if (ret) {
		/* Still referenced by a directory configfs could not remove. */
		dev_err(&sdev->pdev->dev, "configfs: a tier directory cannot be removed (%d); svod/%s is left behind\n",
			ret, pci_name(sdev->pdev));
		return;
	}
	configfs_unregister_group(&cdev->group);
	mutex_destroy(&cdev->lock);
	kfree(cdev);
}

/**
 * svod_configfs_init() - register svod's configfs subsystem
 *
 * Context: process context (module init).
 * Return: 0 or an errno of configfs_register_subsystem().
 */
int svod_configfs_init(void)
{
	config_group_init(&svod_cfs_subsys.su_group);
	mutex_init(&svod_cfs_subsys.su_mutex);
	return configfs_register_subsystem(&svod_cfs_subsys);
}

/**
 * svod_configfs_exit() - unregister svod's configfs subsystem
 *
 * Every device's directory is gone by then (the PCI driver is unregistered
 * first).
 *
 * Context: process context (module exit).
 */
void svod_configfs_exit(void)
{
	configfs_unregister_subsystem(&svod_cfs_subsys);
	mutex_destroy(&svod_cfs_subsys.su_mutex);
}
