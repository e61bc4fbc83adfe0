// SPDX-License-Identifier: GPL-2.0
/*
 * svod sysfs: the svod_tiers device attribute (declare and show a device's
 * tiers) and one read-only directory per tier, svod/<tier id>/, with its
 * name and usage figures, one value per file.
 */
#include <linux/capability.h>
#include <linux/kobject.h>
#include <linux/slab.h>
#include <linux/sysfs.h>

#include "svod.h"

static ssize_t svod_tiers_show(struct device *dev,
			       struct device_attribute *attr, char *buf)
{
	return svod_dev_tiers_show(pci_get_drvdata(to_pci_dev(dev)), buf);
}

static ssize_t svod_tiers_store(struct device *dev,
				struct device_attribute *attr,
				const char *buf, size_t count)
{
	struct svod_dev *sdev = pci_get_drvdata(to_pci_dev(dev));
	struct svod_tier_spec *specs;
	unsigned int nr;
	char *text;
	int ret;

	if (!capable(CAP_SYS_ADMIN)) {
		dev_err(dev, "svod_tiers: declaring tiers needs CAP_SYS_ADMIN\n");
		return -EPERM;
	}

	text = kstrndup(buf, count, GFP_KERNEL);
	if (!text)
		return -ENOMEM;
	specs = kcalloc(SVOD_MAX_DEV_TIERS, sizeof(*specs), GFP_KERNEL);
	if (!specs) {
		ret = -ENOMEM;
		goto free_text;
	}

	ret = svod_tier_spec_parse(text, specs, SVOD_MAX_DEV_TIERS, &nr);
	if (ret)
		dev_err(dev, "svod_tiers: malformed declaration (see Documentation/svod.rst; at most %u tiers)\n",
			SVOD_MAX_DEV_TIERS);
	else
		ret = svod_dev_set_tiers(sdev, specs, nr);

	kfree(specs);
free_text:
	kfree(text);
	return ret ? ret : count;
}
static DEVICE_ATTR_RW(svod_tiers);

static struct attribute *svod_dev_attrs[] = {
	&dev_attr_svod_tiers.attr,
	NULL,
};

static const struct attribute_group svod_dev_group = {
	.attrs = svod_dev_attrs,
};

const struct attribute_group *svod_dev_groups[] = {
	&svod_dev_group,
	NULL,
};

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

static ssize_t name_show(struct kobject *kobj, struct kobj_attribute *attr,
			 char *buf)
{
	return sysfs_emit(buf, "%s\n", svod_kobj_tier(kobj)->spec.name);
}

static ssize_t device_base_show(struct kobject *kobj,
				struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "0x%llx\n", svod_kobj_tier(kobj)->spec.base);
}

static ssize_t capacity_show(struct kobject *kobj, struct kobj_attribute *attr,
			     char *buf)
{
	return sysfs_emit(buf, "%llu\n", svod_kobj_tier(kobj)->spec.size);
}

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

static struct kobj_attribute svod_attr_name = __ATTR_RO(name);
static struct kobj_attribute svod_attr_device_base = __ATTR_RO(device_base);
static struct kobj_attribute svod_attr_capacity = __ATTR_RO(capacity);

static struct attribute *svod_tier_attrs[] = {
	&svod_attr_name.attr,
	&svod_attr_device_base.attr,
	&svod_attr_capacity.attr,
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
 * Context: process context; svod_decl_lock held.
 */
void svod_sysfs_tier_del(struct svod_dev_tier *tier)
{
	lockdep_assert_held(&svod_decl_lock);
	if (!tier->kobj)
		return;
	kobject_del(tier->kobj);
	kobject_put(tier->kobj);
	tier->kobj = NULL;
}
