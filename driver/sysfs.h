/* SPDX-License-Identifier: GPL-2.0 */
/*
 * svod sysfs: each live tier is a device of the class "svod", tier<id>,
 * under the PCI device that has it (<pci device>/svod/tier<id>/).
 */
#ifndef SVOD_SYSFS_H
#define SVOD_SYSFS_H

struct device;
struct svod_dev_tier;

int svod_sysfs_tier_add(struct svod_dev_tier *tier, struct device *parent);
void svod_sysfs_tier_announce(struct svod_dev_tier *tier);
void svod_sysfs_tier_del(struct svod_dev_tier *tier);
int svod_sysfs_init(void);
void svod_sysfs_exit(void);

#endif /* SVOD_SYSFS_H */
