// SPDX-License-Identifier: GPL-2.0
/*
 * svod configfs: where an administrator declares the tiers of a PCI device,
 * one directory per object and one value per file. Every directory is the
 * administrator's: the driver makes and removes none.
 *
 *   /sys/kernel/config/svod/
 *     <pci name>/               mkdir: a declaration for that device, bound
 *                               or not (e.g. 0000:00:04.0)
 *       status                  "bound" or "unbound"
 *       last_apply              "none", or the last apply's result
 *       commit                  write 1: apply the declaration now (bound)
 *       tiers/
 *         <tier name>/          mkdir: a declared tier (at most 8)
 *           bar offset size     required
 *           base align          0 and 64 unless written
 *           owner group mode    who may use it: 0, 0 and 0666 unless written
 *           reserved/
 *             <any name>/       mkdir: a reserved region (at most 8)
 *               base size       required
 *
 * Writes only change the declaration: numbers of svod's one grammar
 * (core/number.h); a malformed one fails at once with -EINVAL, one beyond
 * 64 bits (or 32 for bar) with -ERANGE, and the kernel log names the accepted
 * forms. A declaration is applied, as one, by svod_dev_set_tiers(), which
 * keeps, replaces or refuses the whole set: when its device binds (if it
 * declares at least one tier, the device starts with them instead of its
 * default tier; a refusal leaves the default tier), and at each commit
 * while it is bound. It outlives unbind and rebind; sysfs shows
 * what is live.
 *
 * Every item type names svod.ko as its owner, so each directory an
 * administrator made holds a module reference: rmmod is refused while one
 * exists, as with every configfs module.
 */
#include <linux/capability.h>
#include <linux/configfs.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/mutex.h>
#include <linux/overflow.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/string.h>

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

/*
 * Protects the list of declarations and the list of bound devices, and the
 * links between them (struct svod_cfs_dev.sdev, struct svod_dev.cfs); taken
 * before any struct svod_cfs_dev.lock.
 */
static DEFINE_MUTEX(svod_cfs_lock);
/* Every declaration (struct svod_cfs_dev.node). */
static LIST_HEAD(svod_cfs_decls);
/* Every bound device (struct svod_dev.cfs_node). */
static LIST_HEAD(svod_cfs_bound);

/**
 * struct svod_cfs_dev - a device's declaration, svod/<pci name>/
 * @group: the directory
 * @tiers_group: its tiers/ directory
 * @node: entry in svod_cfs_decls
 * @lock: protects @staged, @nr_staged, @last_apply and every staged tier's
 *	and region's values and lists
 * @sdev: the device while it is bound, else NULL; written under both
 *	svod_cfs_lock and @lock, read under either
 * @staged: declared tiers in mkdir order (struct svod_cfs_tier.node)
 * @nr_staged: entries in @staged
 * @last_apply: the last apply's result, as last_apply reads it
 */
struct svod_cfs_dev {
	struct config_group group;
	struct config_group tiers_group;
	struct list_head node;
	/* Protects the declaration and @last_apply. */
	struct mutex lock;
	struct svod_dev *sdev;
	struct list_head staged;
	unsigned int nr_staged;
	char last_apply[SVOD_DECL_WHY_LEN + 32];
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

/*
 * Access attributes: owner and group are decimal ids of the initial user
 * namespace, as ls -n shows them; mode is octal, as chmod(1) takes it.
 * Applied at commit like every value, but in place: the tier stays.
 */

static ssize_t svod_cfs_tier_access_show(struct config_item *item, char *page,
					 const char *fmt, size_t field)
{
	struct svod_cfs_tier *t = to_svod_cfs_tier(item);
	ssize_t len;

	mutex_lock(&t->cdev->lock);
	len = sprintf(page, fmt, *(u32 *)((char *)&t->spec.access + field));
	mutex_unlock(&t->cdev->lock);
	return len;
}

/* Parses an id (@base 10) or a mode (@base 8, at most @max). */
static ssize_t svod_cfs_tier_access_store(struct config_item *item,
					  const char *page, size_t count,
					  const char *attr, size_t field,
					  unsigned int base, u32 max)
{
	struct svod_cfs_tier *t = to_svod_cfs_tier(item);
	u32 val;
	int ret;

	ret = kstrtou32(page, base, &val);
	if (!ret && val > max)
		ret = -ERANGE;
	if (ret) {
		pr_info_ratelimited("svod: configfs: %s/%s: \"%*pE\" refused (%s): write %s\n",
				    config_item_name(item), attr,
				    (int)min_t(size_t, strcspn(page, "\n"), 32), page,
				    ret == -ERANGE ? "ERANGE" : "EINVAL",
				    base == 8 ? "an octal mode, 0 to 0777" :
				    "a decimal id below 4294967295");
		return ret;
	}
	mutex_lock(&t->cdev->lock);
	*(u32 *)((char *)&t->spec.access + field) = val;
	mutex_unlock(&t->cdev->lock);
	return count;
}

static ssize_t svod_cfs_tier_owner_show(struct config_item *item, char *page)
{
	return svod_cfs_tier_access_show(item, page, "%u\n",
					 offsetof(struct svod_tier_access, uid));
}

/* (u32)-1 is no id: chown(2) takes it as "unchanged". */
static ssize_t svod_cfs_tier_owner_store(struct config_item *item,
					 const char *page, size_t count)
{
	return svod_cfs_tier_access_store(item, page, count, "owner",
					  offsetof(struct svod_tier_access, uid),
					  10, U32_MAX - 1);
}
CONFIGFS_ATTR(svod_cfs_tier_, owner);

static ssize_t svod_cfs_tier_group_show(struct config_item *item, char *page)
{
	return svod_cfs_tier_access_show(item, page, "%u\n",
					 offsetof(struct svod_tier_access, gid));
}

static ssize_t svod_cfs_tier_group_store(struct config_item *item,
					 const char *page, size_t count)
{
	return svod_cfs_tier_access_store(item, page, count, "group",
					  offsetof(struct svod_tier_access, gid),
					  10, U32_MAX - 1);
}
CONFIGFS_ATTR(svod_cfs_tier_, group);

static ssize_t svod_cfs_tier_mode_show(struct config_item *item, char *page)
{
	return svod_cfs_tier_access_show(item, page, "%04o\n",
					 offsetof(struct svod_tier_access, mode));
}

static ssize_t svod_cfs_tier_mode_store(struct config_item *item,
					const char *page, size_t count)
{
	return svod_cfs_tier_access_store(item, page, count, "mode",
					  offsetof(struct svod_tier_access, mode),
					  8, 0777);
}
CONFIGFS_ATTR(svod_cfs_tier_, mode);

static struct configfs_attribute *svod_cfs_tier_attrs[] = {
	&svod_cfs_tier_attr_bar,
	&svod_cfs_tier_attr_offset,
	&svod_cfs_tier_attr_size,
	&svod_cfs_tier_attr_base,
	&svod_cfs_tier_attr_align,
	&svod_cfs_tier_attr_owner,
	&svod_cfs_tier_attr_group,
	&svod_cfs_tier_attr_mode,
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

static const struct config_item_type svod_cfs_region_type = {
	.ct_item_ops = &svod_cfs_region_item_ops,
	.ct_attrs = svod_cfs_region_attrs,
	.ct_owner = THIS_MODULE,
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
	if (t->nr_regions == SVOD_MAX_RESERVED)
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
	.ct_owner = THIS_MODULE,
};

static void svod_cfs_tier_release(struct config_item *item)
{
	kfree(to_svod_cfs_tier(item));
}

static struct configfs_item_operations svod_cfs_tier_item_ops = {
	.release = svod_cfs_tier_release,
};

static const struct config_item_type svod_cfs_tier_type = {
	.ct_item_ops = &svod_cfs_tier_item_ops,
	.ct_attrs = svod_cfs_tier_attrs,
	.ct_owner = THIS_MODULE,
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
	t->spec.access.mode = SVOD_TIER_DEFAULT_MODE;
	INIT_LIST_HEAD(&t->regions);

	mutex_lock(&cdev->lock);
	if (cdev->nr_staged == SVOD_MAX_DEV_TIERS)
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
	.ct_owner = THIS_MODULE,
};

/* Builds a spec from a declared tier; says why it cannot in @why. */
static int svod_cfs_tier_spec(struct svod_cfs_dev *cdev, struct svod_cfs_tier *t,
			      struct svod_tier_spec *spec, char *why)
{
	struct svod_cfs_region *r;

	lockdep_assert_held(&cdev->lock);
	if ((t->set & SVOD_CFS_TIER_REQUIRED) != SVOD_CFS_TIER_REQUIRED) {
		snprintf(why, SVOD_DECL_WHY_LEN,
			 "tier %s: bar, offset and size must be written", t->spec.name);
		return -EINVAL;
	}
	*spec = t->spec;
	spec->nr_reserved = 0;
	list_for_each_entry(r, &t->regions, node) {
		if ((r->set & SVOD_CFS_REGION_REQUIRED) != SVOD_CFS_REGION_REQUIRED) {
			snprintf(why, SVOD_DECL_WHY_LEN,
				 "tier %s: reserved region %s: base and size must be written",
				 t->spec.name, config_item_name(&r->item));
			return -EINVAL;
		}
		spec->reserved[spec->nr_reserved++] = r->region;
	}
	svod_tier_spec_sort_reserved(spec);
	return 0;
}

/*
 * The declaration as specs (SVOD_MAX_DEV_TIERS entries at @specs): their
 * number, or -EINVAL with the reason in @why.
 */
static int svod_cfs_specs(struct svod_cfs_dev *cdev, struct svod_tier_spec *specs,
			  char *why)
{
	struct svod_cfs_tier *t;
	int nr = 0, ret;

	lockdep_assert_held(&cdev->lock);
	list_for_each_entry(t, &cdev->staged, node) {
		ret = svod_cfs_tier_spec(cdev, t, &specs[nr++], why);
		if (ret)
			return ret;
	}
	return nr;
}

/* Records an apply's result (@event is "bind" or "commit") for last_apply. */
static void svod_cfs_applied(struct svod_cfs_dev *cdev, const char *event,
			     int ret, const char *why)
{
	lockdep_assert_held(&cdev->lock);
	if (!ret)
		snprintf(cdev->last_apply, sizeof(cdev->last_apply), "%s: ok", event);
	else
		snprintf(cdev->last_apply, sizeof(cdev->last_apply), "%s: error %d%s%s",
			 event, ret, why[0] ? ": " : "", why);
}

/* Applies the declaration to its bound device at commit. */
static int svod_cfs_commit(struct svod_cfs_dev *cdev)
{
	char why[SVOD_DECL_WHY_LEN] = "";
	struct svod_tier_spec *specs;
	int ret;

	lockdep_assert_held(&cdev->lock);
	specs = kcalloc(SVOD_MAX_DEV_TIERS, sizeof(*specs), GFP_KERNEL);
	if (!specs) {
		ret = -ENOMEM;
		goto out;
	}
	ret = svod_cfs_specs(cdev, specs, why);
	if (ret < 0)
		dev_err(&cdev->sdev->pdev->dev, "commit: %s\n", why);
	else
		ret = svod_dev_set_tiers(cdev->sdev, specs, ret, why);
	kfree(specs);
out:
	svod_cfs_applied(cdev, "commit", ret, why);
	return ret;
}

static ssize_t svod_cfs_dev_commit_store(struct config_item *item,
					 const char *page, size_t count)
{
	struct svod_cfs_dev *cdev = to_svod_cfs_dev(item);
	int ret;

	mutex_lock(&cdev->lock);
	if (!capable(CAP_SYS_ADMIN)) {
		pr_info_ratelimited("svod: configfs: %s/commit: declaring tiers needs CAP_SYS_ADMIN\n",
				    config_item_name(item));
		ret = -EPERM;
	} else if (!sysfs_streq(page, "1")) {
		pr_info_ratelimited("svod: configfs: %s/commit: write 1 to commit\n",
				    config_item_name(item));
		ret = -EINVAL;
	} else if (!cdev->sdev) {
		pr_info_ratelimited("svod: configfs: %s/commit: the device is not bound; the declaration is applied when it binds\n",
				    config_item_name(item));
		ret = -ENODEV;
	} else {
		ret = svod_cfs_commit(cdev);
	}
	mutex_unlock(&cdev->lock);
	return ret ? ret : count;
}
CONFIGFS_ATTR_WO(svod_cfs_dev_, commit);

static ssize_t svod_cfs_dev_status_show(struct config_item *item, char *page)
{
	struct svod_cfs_dev *cdev = to_svod_cfs_dev(item);
	ssize_t len;

	mutex_lock(&cdev->lock);
	len = sprintf(page, "%s\n", cdev->sdev ? "bound" : "unbound");
	mutex_unlock(&cdev->lock);
	return len;
}
CONFIGFS_ATTR_RO(svod_cfs_dev_, status);

static ssize_t svod_cfs_dev_last_apply_show(struct config_item *item, char *page)
{
	struct svod_cfs_dev *cdev = to_svod_cfs_dev(item);
	ssize_t len;

	mutex_lock(&cdev->lock);
	len = sprintf(page, "%s\n", cdev->last_apply);
	mutex_unlock(&cdev->lock);
	return len;
}
CONFIGFS_ATTR_RO(svod_cfs_dev_, last_apply);

static struct configfs_attribute *svod_cfs_dev_attrs[] = {
	&svod_cfs_dev_attr_commit,
	&svod_cfs_dev_attr_status,
	&svod_cfs_dev_attr_last_apply,
	NULL,
};

static void svod_cfs_dev_release(struct config_item *item)
{
	struct svod_cfs_dev *cdev = to_svod_cfs_dev(item);

	mutex_destroy(&cdev->lock);
	kfree(cdev);
}

static struct configfs_item_operations svod_cfs_dev_item_ops = {
	.release = svod_cfs_dev_release,
};

static const struct config_item_type svod_cfs_dev_type = {
	.ct_item_ops = &svod_cfs_dev_item_ops,
	.ct_attrs = svod_cfs_dev_attrs,
	.ct_owner = THIS_MODULE,
};

/* Links a declaration and its bound device, or (@sdev NULL) unlinks them. */
static void svod_cfs_link(struct svod_cfs_dev *cdev, struct svod_dev *sdev)
{
	lockdep_assert_held(&svod_cfs_lock);
	lockdep_assert_held(&cdev->lock);
	if (cdev->sdev)
		cdev->sdev->cfs = NULL;
	cdev->sdev = sdev;
	if (sdev)
		sdev->cfs = cdev;
}

/**
 * svod_decl_pci_name_valid() - may a declaration have this name?
 * @name: NUL-terminated directory name
 *
 * Only a PCI device name as pci_name() spells it ("0000:00:04.0": domain,
 * bus, slot and function in lower-case hexadecimal, zero-padded), so that
 * a declaration names exactly one possible device.
 *
 * Context: any context.
 * Return: true if @name is one.
 */
bool svod_decl_pci_name_valid(const char *name)
{
	unsigned int domain, bus, slot, fn;
	char canon[32];
	int len = 0;

	if (sscanf(name, "%x:%x:%x.%x%n", &domain, &bus, &slot, &fn, &len) != 4 ||
	    name[len] || bus > 0xff || slot > 0x1f || fn > 7)
		return false;
	snprintf(canon, sizeof(canon), "%04x:%02x:%02x.%u", domain, bus, slot, fn);
	return !strcmp(name, canon);
}
EXPORT_SYMBOL_IF_KUNIT(svod_decl_pci_name_valid);

static struct config_group *svod_cfs_dev_make(struct config_group *group,
					      const char *name)
{
	struct svod_cfs_dev *cdev;
	struct svod_dev *sdev;

	if (!svod_decl_pci_name_valid(name))
		return ERR_PTR(-EINVAL);
	cdev = kzalloc(sizeof(*cdev), GFP_KERNEL);
	if (!cdev)
		return ERR_PTR(-ENOMEM);
	mutex_init(&cdev->lock);
	INIT_LIST_HEAD(&cdev->staged);
	strscpy(cdev->last_apply, "none", sizeof(cdev->last_apply));
	config_group_init_type_name(&cdev->group, name, &svod_cfs_dev_type);
	config_group_init_type_name(&cdev->tiers_group, "tiers",
				    &svod_cfs_tiers_type);
	configfs_add_default_group(&cdev->tiers_group, &cdev->group);

	/* configfs refuses a name already in use: one declaration a device. */
	mutex_lock(&svod_cfs_lock);
	list_add_tail(&cdev->node, &svod_cfs_decls);
	list_for_each_entry(sdev, &svod_cfs_bound, cfs_node) {
		if (!strcmp(pci_name(sdev->pdev), name)) {
			mutex_lock(&cdev->lock);
			svod_cfs_link(cdev, sdev);
			mutex_unlock(&cdev->lock);
			break;
		}
	}
	mutex_unlock(&svod_cfs_lock);
	return &cdev->group;
}

/*
 * rmdir of a declaration (configfs allows it once its tiers are removed):
 * the live tiers stay as they are.
 */
static void svod_cfs_dev_drop(struct config_group *group,
			      struct config_item *item)
{
	struct svod_cfs_dev *cdev = to_svod_cfs_dev(item);

	mutex_lock(&svod_cfs_lock);
	list_del(&cdev->node);
	mutex_lock(&cdev->lock);
	svod_cfs_link(cdev, NULL);
	mutex_unlock(&cdev->lock);
	mutex_unlock(&svod_cfs_lock);
	config_item_put(item);
}

static struct configfs_group_operations svod_cfs_root_group_ops = {
	.make_group = svod_cfs_dev_make,
	.drop_item = svod_cfs_dev_drop,
};

static const struct config_item_type svod_cfs_root_type = {
	.ct_group_ops = &svod_cfs_root_group_ops,
	.ct_owner = THIS_MODULE,
};

static struct configfs_subsystem svod_cfs_subsys = {
	.su_group = {
		.cg_item = {
			.ci_namebuf = KBUILD_MODNAME,
			.ci_type = &svod_cfs_root_type,
		},
	},
};

/* The declaration for @name, or NULL. */
static struct svod_cfs_dev *svod_cfs_find(const char *name)
{
	struct svod_cfs_dev *cdev;

	lockdep_assert_held(&svod_cfs_lock);
	list_for_each_entry(cdev, &svod_cfs_decls, node) {
		if (!strcmp(config_item_name(&cdev->group.cg_item), name))
			return cdev;
	}
	return NULL;
}

/**
 * svod_configfs_dev_bind() - register a bound device with its declared tiers
 * @sdev: the device, not yet registered
 *
 * If svod/<pci name of @sdev>/ declares at least one tier, the device starts
 * with those tiers (svod_dev_register()); a refused declaration is logged,
 * recorded in last_apply, and leaves the device its default tier. Without a
 * declaration it gets the default tier.
 *
 * Context: process context (probe); may sleep.
 * Return: 0, or an errno of svod_dev_register(): the device is not added.
 */
int svod_configfs_dev_bind(struct svod_dev *sdev)
{
	char why[SVOD_DECL_WHY_LEN] = "";
	struct svod_tier_spec *specs = NULL;
	struct svod_cfs_dev *cdev;
	int nr = 0, refused = 0, ret;

	mutex_lock(&svod_cfs_lock);
	cdev = svod_cfs_find(pci_name(sdev->pdev));
	if (cdev) {
		mutex_lock(&cdev->lock);
		if (cdev->nr_staged) {
			specs = kcalloc(SVOD_MAX_DEV_TIERS, sizeof(*specs), GFP_KERNEL);
			nr = specs ? svod_cfs_specs(cdev, specs, why) : -ENOMEM;
			if (nr < 0 && specs)
				dev_err(&sdev->pdev->dev, "bind: %s\n", why);
		}
	}
	ret = svod_dev_register(sdev, specs, max(nr, 0), &refused, why);
	if (nr < 0)
		refused = nr;
	if (!ret)
		list_add_tail(&sdev->cfs_node, &svod_cfs_bound);
	if (cdev && !ret) {
		svod_cfs_link(cdev, sdev);
		if (nr || refused)
			svod_cfs_applied(cdev, "bind", refused, why);
		if (refused)
			dev_warn(&sdev->pdev->dev, "bind: the declaration in configfs is refused; the default tier stays\n");
	}
	if (cdev)
		mutex_unlock(&cdev->lock);
	mutex_unlock(&svod_cfs_lock);
	kfree(specs);
	return ret;
}

/**
 * svod_configfs_dev_unbind() - forget a device that is going away
 * @sdev: the device, still registered
 *
 * Its declaration stays, reads as unbound, and refuses commit with
 * -ENODEV from now on.
 *
 * Context: process context (remove); may sleep.
 */
void svod_configfs_dev_unbind(struct svod_dev *sdev)
{
	struct svod_cfs_dev *cdev;

	mutex_lock(&svod_cfs_lock);
	list_del(&sdev->cfs_node);
	cdev = sdev->cfs;
	if (cdev) {
		mutex_lock(&cdev->lock);
		svod_cfs_link(cdev, NULL);
		mutex_unlock(&cdev->lock);
	}
	mutex_unlock(&svod_cfs_lock);
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
 * No declaration exists by then: each holds a reference to the module.
 *
 * Context: process context (module exit).
 */
void svod_configfs_exit(void)
{
	configfs_unregister_subsystem(&svod_cfs_subsys);
	mutex_destroy(&svod_cfs_subsys.su_mutex);
}
