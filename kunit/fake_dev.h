/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit: a bound device over a fake BAR, and open files of /dev/svod without
 * the device node, for the suites of the middle layer (tier objects,
 * allocations, open files, a device's tier set). The device is registered
 * with svod like a PCI device at probe, its BAR 2 is plain memory behind
 * struct svod_bar_ops, and everything is undone when the case ends, however
 * it ends.
 */
#ifndef SVOD_FAKE_DEV_H
#define SVOD_FAKE_DEV_H

#include <kunit/test.h>
#include <linux/pci.h>
#include <linux/types.h>

#include <linux/svod.h>

#include "dev.h"
#include "file.h"

/* What BAR 2 holds before svod touches it: scrubs show as zeros. */
#define FAKE_DEV_GUARD		0xa5

/**
 * struct fake_dev - one fake device
 * @pdev: a zeroed pci_dev: a name and a memory BAR 2, nothing else
 * @sdev: what svod knows of it
 * @mem: BAR 2's bytes
 * @len: bytes in BAR 2
 * @registered: @sdev is in svod's device list
 * @zeroed_at_register: registering left every byte of BAR 2 zero
 */
struct fake_dev {
	struct pci_dev pdev;
	struct svod_dev sdev;
	u8 *mem;
	u64 len;
	bool registered;
	bool zeroed_at_register;
};

struct fake_dev *fake_dev_add(struct kunit *test, u64 len);
void fake_dev_remove(struct fake_dev *fd);
struct svod_dev_tier *fake_dev_tier(struct kunit *test, struct fake_dev *fd,
				    unsigned int i);
bool fake_tier_reachable(u32 id);
bool fake_dev_holds(const struct fake_dev *fd, u64 off, u64 len, u8 byte);
struct svod_file *fake_file_open(struct kunit *test, struct file **filp);
void fake_file_close(struct file *filp);
u64 fake_alloc(struct kunit *test, struct svod_file *sf, u32 tier, u64 size,
	       u32 flags, u64 *device_addr);
int fake_resolve(struct svod_file *sf, u64 handle, struct svod_resolve *out);

#endif /* SVOD_FAKE_DEV_H */
