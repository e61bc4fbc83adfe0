// SPDX-License-Identifier: GPL-2.0
/*
 * svod sysfs: each live tier is a device of the class "svod", named
 * tier<id>, a child of its PCI device: the driver core puts it at
 * <pci device>/svod/tier<id>/ (the class's glue directory) and links it
 * from /sys/class/svod/. Its files give the tier's name, placement and
 * usage figures, one value per file; its uevents carry SVOD_TIER,
 * SVOD_TIER_ID and SVOD_PCI_DEVICE. Tiers are declared in configfs
 * (configfs.c); sysfs only shows them.
 *
 * The device is added, with its uevents suppressed, when the tier is created
 * (a commit's step that may still fail), and announced with an "add" uevent
 * only once the tier is published: a refused commit sends no uevent. Tier
 * ids are never reused while a tier exists, so names never collide.
 */
#include <linux/device.h>
#include <linux/kobject.h>
#include <linux/slab.h>
#include <linux/sysfs.h>

#include "core/range.h"
#include "sysfs.h"
#include "tier.h"

/**
 * struct svod_tier_device - a tier's device in the class "svod"
 * @dev: the device
 * @tier: the tier (holds a reference, dropped in the release)
 */
struct svod_tier_device {
	struct device dev;
	struct svod_dev_tier *tier;
};

static struct svod_dev_tier *svod_dev_to_tier(struct device *dev)
{
	return container_of(dev, struct svod_tier_device, dev)->tier;
}

/* A value of the tier's declaration; never changes while the tier exists. */
#define SVOD_TIER_SPEC_ATTR(_name, _fmt, _field)			\
static ssize_t _name##_show(struct device *dev,				\
			    struct device_attribute *attr, char *buf)	\
{									\
	return sysfs_emit(buf, _fmt, svod_dev_to_tier(dev)->spec._field); \
}									\
static DEVICE_ATTR_RO(_name)

SVOD_TIER_SPEC_ATTR(name, "%s\n", name);
SVOD_TIER_SPEC_ATTR(device_base, "0x%llx\n", base);
SVOD_TIER_SPEC_ATTR(capacity, "%llu\n", size);
SVOD_TIER_SPEC_ATTR(bar, "%u\n", bar);
SVOD_TIER_SPEC_ATTR(bar_offset, "0x%llx\n", offset);
SVOD_TIER_SPEC_ATTR(align, "%llu\n", align);

#define SVOD_TIER_STAT_ATTR(_name, _expr)				\
static ssize_t _name##_show(struct device *dev,				\
			    struct device_attribute *attr, char *buf)	\
{									\
	struct svod_dev_tier *tier = svod_dev_to_tier(dev);		\
	u64 val;							\
									\
	mutex_lock(&tier->lock);					\
	val = (_expr);							\
	mutex_unlock(&tier->lock);					\
	return sysfs_emit(buf, "%llu\n", val);				\
}									\
static DEVICE_ATTR_RO(_name)

SVOD_TIER_STAT_ATTR(free_bytes, tier->core.free_bytes);
SVOD_TIER_STAT_ATTR(largest_free, svod_range_largest_free(&tier->core));
SVOD_TIER_STAT_ATTR(reserved_bytes, tier->core.reserved_bytes);
SVOD_TIER_STAT_ATTR(nr_live, tier->core.nr_live);
SVOD_TIER_STAT_ATTR(nr_free_spans, tier->core.nr_free_spans);

/* Who may use the tier: changes at a commit that keeps the tier. */
#define SVOD_TIER_ACCESS_ATTR(_name, _fmt, _field)			\
static ssize_t _name##_show(struct device *dev,				\
			    struct device_attribute *attr, char *buf)	\
{									\
	struct svod_tier_access access =				\
		svod_dev_tier_access(svod_dev_to_tier(dev));		\
									\
	return sysfs_emit(buf, _fmt, access._field);			\
}									\
static DEVICE_ATTR_RO(_name)

SVOD_TIER_ACCESS_ATTR(owner, "%u\n", uid);
SVOD_TIER_ACCESS_ATTR(group, "%u\n", gid);
SVOD_TIER_ACCESS_ATTR(mode, "%04o\n", mode);

/* ALLOC and IMPORT calls the access refused, since the tier was made. */
static ssize_t denied_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	return sysfs_emit(buf, "%lld\n",
			  atomic64_read(&svod_dev_to_tier(dev)->denied));
}
static DEVICE_ATTR_RO(denied);

static struct attribute *svod_tier_attrs[] = {
	&dev_attr_name.attr,
	&dev_attr_device_base.attr,
	&dev_attr_capacity.attr,
	&dev_attr_bar.attr,
	&dev_attr_bar_offset.attr,
	&dev_attr_align.attr,
	&dev_attr_free_bytes.attr,
	&dev_attr_largest_free.attr,
	&dev_attr_reserved_bytes.attr,
	&dev_attr_nr_live.attr,
	&dev_attr_nr_free_spans.attr,
	&dev_attr_owner.attr,
	&dev_attr_group.attr,
	&dev_attr_mode.attr,
	&dev_attr_denied.attr,
	NULL,
};
ATTRIBUTE_GROUPS(svod_tier);

/* The keys udev rules match on; the tier outlives its device (reference). */
static int svod_tier_dev_uevent(struct device *dev, struct kobj_uevent_env *env)
{
	struct svod_dev_tier *tier = svod_dev_to_tier(dev);

	return add_uevent_var(env, "SVOD_TIER=%s", tier->spec.name) ?:
	       add_uevent_var(env, "SVOD_TIER_ID=%u", tier->id) ?:
	       add_uevent_var(env, "SVOD_PCI_DEVICE=%s", tier->device);
}

static struct class svod_class = {
	.name = "svod",
	.owner = THIS_MODULE,
	.dev_groups = svod_tier_groups,
	.dev_uevent = svod_tier_dev_uevent,
};

static void svod_tier_dev_release(struct device *dev)
{
	struct svod_tier_device *td = container_of(dev, struct svod_tier_device, dev);

	svod_dev_tier_put(td->tier);
	kfree(td);
}

/**
 * svod_sysfs_tier_add() - add a tier's device, svod/tier<id>/, silently
 * @tier: the tier; the device holds a reference until svod_sysfs_tier_del()
 *	and the device's last put
 * @parent: the PCI device the tier belongs to
 *
 * The "add" uevent waits for svod_sysfs_tier_announce(). A @parent that is
 * not registered gets no device: only KUnit's fake devices (kunit/fake_dev.c)
 * are such, and a child of an unregistered device cannot be added (its
 * parent has no kobject in sysfs to hold the class directory).
 *
 * Context: process context.
 * Return: 0, or -ENOMEM or an errno of device_add().
 */
int svod_sysfs_tier_add(struct svod_dev_tier *tier, struct device *parent)
{
	struct svod_tier_device *td;
	int ret;

	if (!device_is_registered(parent))
		return 0;
	td = kzalloc(sizeof(*td), GFP_KERNEL);
	if (!td)
		return -ENOMEM;
	kref_get(&tier->ref);
	td->tier = tier;
	device_initialize(&td->dev);
	td->dev.class = &svod_class;
	td->dev.parent = parent;
	td->dev.release = svod_tier_dev_release;
	dev_set_uevent_suppress(&td->dev, 1);
	ret = dev_set_name(&td->dev, "tier%u", tier->id);
	if (!ret)
		ret = device_add(&td->dev);
	if (ret) {
		/* The release callback drops the reference and frees td. */
		put_device(&td->dev);
		return ret;
	}
	tier->dev = &td->dev;
	return 0;
}

/**
 * svod_sysfs_tier_announce() - send the "add" uevent of a published tier
 * @tier: the tier, its device added by svod_sysfs_tier_add()
 *
 * Context: process context; svod_decl_lock held.
 */
void svod_sysfs_tier_announce(struct svod_dev_tier *tier)
{
	if (!tier->dev)
		return;
	dev_set_uevent_suppress(tier->dev, 0);
	kobject_uevent(&tier->dev->kobj, KOBJ_ADD);
}

/**
 * svod_sysfs_tier_del() - remove a tier's device
 * @tier: the tier
 *
 * Sends a "remove" uevent if the "add" one was sent.
 *
 * Context: process context; svod_decl_lock held, or @tier detached from
 * its device (svod_dev_unregister()): one caller at a time.
 */
void svod_sysfs_tier_del(struct svod_dev_tier *tier)
{
	if (!tier->dev)
		return;
	device_unregister(tier->dev);
	tier->dev = NULL;
}

/**
 * svod_sysfs_init() - register the class "svod"
 *
 * Context: process context (module init), before the PCI driver registers.
 * Return: 0 or an errno of class_register().
 */
int svod_sysfs_init(void)
{
	return class_register(&svod_class);
}

/**
 * svod_sysfs_exit() - unregister the class "svod"
 *
 * Context: process context (module exit), after the PCI driver unregistered
 * (no tier device is left).
 */
void svod_sysfs_exit(void)
{
	class_unregister(&svod_class);
}
