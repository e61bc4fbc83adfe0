// SPDX-License-Identifier: GPL-2.0
/*
 * svod sysfs: one read-only directory per tier, svod/<tier id>/, with its
 * name, placement and usage figures, one value per file. Tiers are declared
 * in configfs (configfs.c); sysfs only shows them.
 */
#include <linux/kobject.h>
#include <linux/slab.h>
#include <linux/sysfs.h>

#include "core/range.h"
#include "sysfs.h"
#include "tier.h"

/**
 * struct svod_tier_kobj - a tier's sysfs directory
 * @kobj: the directory
 * @tier: the tier (holds a reference)
 */
struct svod_tier_kobj {
	struct kobject kobj;
	struct svod_dev_tier *tier;
};

static struct svod_dev_tier *svod_kobj_tier(struct kobject *kobj)
{
	return container_of(kobj, struct svod_tier_kobj, kobj)->tier;
}

/* A value of the tier's declaration; never changes while the tier exists. */
#define SVOD_TIER_SPEC_ATTR(_name, _fmt, _field)			\
static ssize_t _name##_show(struct kobject *kobj,			\
			    struct kobj_attribute *attr, char *buf)	\
{									\
	return sysfs_emit(buf, _fmt, svod_kobj_tier(kobj)->spec._field); \
}									\
static struct kobj_attribute svod_attr_##_name = __ATTR_RO(_name)

SVOD_TIER_SPEC_ATTR(name, "%s\n", name);
SVOD_TIER_SPEC_ATTR(device_base, "0x%llx\n", base);
SVOD_TIER_SPEC_ATTR(capacity, "%llu\n", size);
SVOD_TIER_SPEC_ATTR(bar, "%u\n", bar);
SVOD_TIER_SPEC_ATTR(bar_offset, "0x%llx\n", offset);
SVOD_TIER_SPEC_ATTR(align, "%llu\n", align);

#define SVOD_TIER_STAT_ATTR(_name, _expr)				\
static ssize_t _name##_show(struct kobject *kobj,			\
			    struct kobj_attribute *attr, char *buf)	\
{									\
	struct svod_dev_tier *tier = svod_kobj_tier(kobj);		\
	u64 val;							\
									\
	mutex_lock(&tier->lock);					\
	val = (_expr);							\
	mutex_unlock(&tier->lock);					\
	return sysfs_emit(buf, "%llu\n", val);				\
}									\
static struct kobj_attribute svod_attr_##_name = __ATTR_RO(_name)

SVOD_TIER_STAT_ATTR(free_bytes, tier->core.free_bytes);
SVOD_TIER_STAT_ATTR(largest_free, svod_range_largest_free(&tier->core));
SVOD_TIER_STAT_ATTR(reserved_bytes, tier->core.reserved_bytes);
SVOD_TIER_STAT_ATTR(nr_live, tier->core.nr_live);
SVOD_TIER_STAT_ATTR(nr_free_spans, tier->core.nr_free_spans);

static struct attribute *svod_tier_attrs[] = {
	&svod_attr_name.attr,
	&svod_attr_device_base.attr,
	&svod_attr_capacity.attr,
	&svod_attr_bar.attr,
	&svod_attr_bar_offset.attr,
	&svod_attr_align.attr,
	&svod_attr_free_bytes.attr,
	&svod_attr_largest_free.attr,
	&svod_attr_reserved_bytes.attr,
	&svod_attr_nr_live.attr,
	&svod_attr_nr_free_spans.attr,
	NULL,
};
ATTRIBUTE_GROUPS(svod_tier);

static void svod_tier_kobj_release(struct kobject *kobj)
{
	struct svod_tier_kobj *tk = container_of(kobj, struct svod_tier_kobj, kobj);

	svod_dev_tier_put(tk->tier);
	kfree(tk);
}

static const struct kobj_type svod_tier_ktype = {
	.release = svod_tier_kobj_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = svod_tier_groups,
};

/**
 * svod_sysfs_tier_add() - add a tier's directory, svod/<id>/
 * @tier: the tier; the directory holds a reference until
 *	svod_sysfs_tier_del()
 * @dir: the device's svod directory
 *
 * Context: process context.
 * Return: 0, or -ENOMEM or an errno of kobject_add().
 */
int svod_sysfs_tier_add(struct svod_dev_tier *tier, struct kobject *dir)
{
	struct svod_tier_kobj *tk;
	int ret;

	tk = kzalloc(sizeof(*tk), GFP_KERNEL);
	if (!tk)
		return -ENOMEM;
	kref_get(&tier->ref);
	tk->tier = tier;
	ret = kobject_init_and_add(&tk->kobj, &svod_tier_ktype, dir, "%u",
				   tier->id);
	if (ret) {
		/* The release callback drops the reference and frees tk. */
		kobject_put(&tk->kobj);
		return ret;
	}
	tier->kobj = &tk->kobj;
	return 0;
}

/**
 * svod_sysfs_tier_del() - remove a tier's directory
 * @tier: the tier
 *
 * Context: process context; svod_decl_lock held, or @tier detached from
 * its device (svod_dev_unregister()): one caller at a time.
 */
void svod_sysfs_tier_del(struct svod_dev_tier *tier)
{
	if (!tier->kobj)
		return;
	kobject_del(tier->kobj);
	kobject_put(tier->kobj);
	tier->kobj = NULL;
}
