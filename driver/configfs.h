/* SPDX-License-Identifier: GPL-2.0 */
/*
 * svod configfs: the tree under /sys/kernel/config/svod/ where an
 * administrator declares each PCI device's tiers (Documentation/svod.rst).
 */
#ifndef SVOD_CONFIGFS_H
#define SVOD_CONFIGFS_H

#include <linux/types.h>

struct svod_dev;

int svod_configfs_init(void);
void svod_configfs_exit(void);
int svod_configfs_dev_bind(struct svod_dev *sdev);
void svod_configfs_dev_unbind(struct svod_dev *sdev);

int svod_decl_parse_u64(const char *buf, u64 *val);
bool svod_decl_pci_name_valid(const char *name);

#endif /* SVOD_CONFIGFS_H */
