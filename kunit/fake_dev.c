// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the fake device and files of fake_dev.h.
 */
#include <kunit/resource.h>
#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/vmalloc.h>

#include <linux/svod.h>

#include "fake_dev.h"
#include "ioctl.h"
#include "sysfs.h"
#include "tier.h"

static void fake_bar_write(const struct svod_bar *bar, u64 off, const void *src,
			   size_t len)
{
	struct fake_dev *fd = bar->priv;

	memcpy(fd->mem + off, src, len);
}

static void fake_bar_read(const struct svod_bar *bar, u64 off, void *dst,
			  size_t len)
{
	struct fake_dev *fd = bar->priv;

	memcpy(dst, fd->mem + off, len);
}

static const struct svod_bar_ops fake_bar_ops = {
	.write = fake_bar_write,
	.read = fake_bar_read,
};

/* Each device's name, and so its default tier's, differs from the last. */
static atomic_t fake_dev_nr = ATOMIC_INIT(0);

static void fake_dev_free(struct kunit_resource *res)
{
	struct fake_dev *fd = res->data;

	fake_dev_remove(fd);
	vfree(fd->mem);
	kfree(fd->pdev.dev.init_name);
	kfree(fd);
}

/**
 * fake_dev_add() - register a device whose BAR 2 is @len bytes of memory
 * @test: the case; the device goes when it ends
 * @len: BAR 2's size, a multiple of the page size
 *
 * svod gives it its default tier (the whole of BAR 2, fake_dev_tier(0)).
 * BAR 2 holds FAKE_DEV_GUARD bytes (again, after svod zeroed its default
 * tier: see @zeroed_at_register).
 *
 * Context: a KUnit case.
 * Return: the device; the case fails (and stops) if it cannot be added.
 */
struct fake_dev *fake_dev_add(struct kunit *test, u64 len)
{
	struct svod_bar *bar;
	struct fake_dev *fd;
	char *name;
	int ret;

	fd = kzalloc(sizeof(*fd), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, fd);
	name = kasprintf(GFP_KERNEL, "svod-kunit-%d", atomic_inc_return(&fake_dev_nr));
	fd->mem = vmalloc(len);
	/*
	 * Never registered: svod's tiers of this device get no sysfs device
	 * (svod_sysfs_tier_add()), the rest of svod runs as for a real one.
	 */
	fd->pdev.dev.init_name = name;
	if (!name || !fd->mem) {
		vfree(fd->mem);
		kfree(name);
		kfree(fd);
		KUNIT_ASSERT_FAILURE(test, "no memory for a fake device");
	}
	memset(fd->mem, FAKE_DEV_GUARD, len);
	fd->len = len;
	fd->pdev.resource[2].start = 0;
	fd->pdev.resource[2].end = len - 1;
	fd->pdev.resource[2].flags = IORESOURCE_MEM;
	fd->sdev.pdev = &fd->pdev;
	INIT_LIST_HEAD(&fd->sdev.node);
	INIT_LIST_HEAD(&fd->sdev.tiers);
	/* Mapped already: svod's BAR mapping step keeps it. */
	bar = &fd->sdev.bars[2];
	bar->dev = &fd->pdev.dev;
	bar->wc = (void __iomem __force *)fd->mem;
	bar->len = len;
	bar->ops = &fake_bar_ops;
	bar->priv = fd;

	ret = svod_dev_register(&fd->sdev, NULL, 0, NULL, NULL);
	fd->registered = !ret;
	/*
	 * Registering zeroed the default tier, the whole BAR. Guard bytes
	 * again, so each later scrub shows where it happened.
	 */
	fd->zeroed_at_register = fake_dev_holds(fd, 0, len, 0);
	memset(fd->mem, FAKE_DEV_GUARD, len);
	KUNIT_ASSERT_NOT_NULL(test, kunit_alloc_resource(test, NULL, fake_dev_free,
							 GFP_KERNEL, fd));
	KUNIT_ASSERT_EQ(test, 0, ret);
	return fd;
}

/**
 * fake_dev_remove() - unbind the device, as a PCI remove would
 * @fd: the device
 *
 * Context: a KUnit case; at most once per device (later calls do nothing).
 */
void fake_dev_remove(struct fake_dev *fd)
{
	if (!fd->registered)
		return;
	svod_dev_unregister(&fd->sdev);
	fd->registered = false;
}

/**
 * fake_dev_tier() - the device's @i-th current tier, with a reference
 * @test: the case
 * @fd: the device
 * @i: index in the tier set
 *
 * Context: a KUnit case.
 * Return: the tier; drop it with svod_dev_tier_put(). Fails the case if
 * there is no such tier.
 */
struct svod_dev_tier *fake_dev_tier(struct kunit *test, struct fake_dev *fd,
				    unsigned int i)
{
	struct svod_dev_tier *tier, *found = NULL;

	mutex_lock(&svod_decl_lock);
	list_for_each_entry(tier, &fd->sdev.tiers, dev_node) {
		if (!i--) {
			found = svod_dev_tier_get_by_id(tier->id);
			break;
		}
	}
	mutex_unlock(&svod_decl_lock);
	KUNIT_ASSERT_NOT_NULL(test, found);
	return found;
}

/**
 * fake_tier_reachable() - does a lookup of @id find a tier?
 * @id: tier id
 *
 * The reference a lookup takes is dropped at once.
 *
 * Context: process context.
 * Return: true if svod_dev_tier_get_by_id() found one.
 */
bool fake_tier_reachable(u32 id)
{
	struct svod_dev_tier *tier = svod_dev_tier_get_by_id(id);

	if (tier)
		svod_dev_tier_put(tier);
	return tier;
}

/**
 * fake_dev_holds() - is every byte of a range of BAR 2 @byte?
 * @fd: the device
 * @off: BAR offset
 * @len: bytes
 * @byte: the value
 *
 * Context: any.
 * Return: true if so.
 */
bool fake_dev_holds(const struct fake_dev *fd, u64 off, u64 len, u8 byte)
{
	return !memchr_inv(fd->mem + off, byte, len);
}

static void fake_file_free(struct kunit_resource *res)
{
	struct file *f = res->data;

	fake_file_close(f);
	put_cred(f->f_cred);
	kfree(f);
}

/**
 * fake_file_open() - open a file of /dev/svod, as open(2) would
 * @test: the case; the file is closed when it ends, if it was not before
 * @filp: out: the file, for fake_file_close()
 *
 * Context: a KUnit case.
 * Return: the svod file; fails the case if it cannot be opened.
 */
struct svod_file *fake_file_open(struct kunit *test, struct file **filp)
{
	struct file *f = kzalloc(sizeof(*f), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, f);
	f->f_cred = get_current_cred();
	if (svod_open(NULL, f)) {
		put_cred(f->f_cred);
		kfree(f);
		KUNIT_ASSERT_FAILURE(test, "svod_open() failed");
	}
	KUNIT_ASSERT_NOT_NULL(test, kunit_alloc_resource(test, NULL, fake_file_free,
							 GFP_KERNEL, f));
	*filp = f;
	return f->private_data;
}

/**
 * fake_file_close() - the last close of a file of fake_file_open()
 * @filp: the file; closing it again does nothing
 *
 * Context: a KUnit case.
 */
void fake_file_close(struct file *filp)
{
	if (!filp->private_data)
		return;
	svod_release(NULL, filp);
	filp->private_data = NULL;
}

/**
 * fake_alloc() - SVOD_IOCTL_ALLOC, asserted to succeed
 * @test: the case
 * @sf: the file
 * @tier: tier id
 * @size: bytes
 * @flags: SVOD_ALLOC_*
 * @device_addr: out (may be NULL): the allocation's first byte
 *
 * Context: a KUnit case.
 * Return: the handle.
 */
u64 fake_alloc(struct kunit *test, struct svod_file *sf, u32 tier, u64 size,
	       u32 flags, u64 *device_addr)
{
	struct svod_alloc a = { .tier = tier, .size = size, .flags = flags };

	KUNIT_ASSERT_EQ(test, 0, svod_alloc_ioctl(sf, &a));
	if (device_addr)
		*device_addr = a.device_addr;
	return a.handle;
}

/**
 * fake_resolve() - SVOD_IOCTL_RESOLVE
 * @sf: the file
 * @handle: the handle
 * @out: out (may be NULL): the reply
 *
 * Context: a KUnit case.
 * Return: the ioctl's result.
 */
int fake_resolve(struct svod_file *sf, u64 handle, struct svod_resolve *out)
{
	struct svod_resolve r = { .handle = handle };
	int ret = svod_resolve_ioctl(sf, &r);

	if (out)
		*out = r;
	return ret;
}
