/* SPDX-License-Identifier: GPL-2.0 */
/*
 * svod sysfs: one read-only directory per tier, svod/<tier id>/, under the
 * device that has it.
 */
#ifndef SVOD_SYSFS_H
#define SVOD_SYSFS_H

struct kobject;
struct svod_dev_tier;

int svod_sysfs_tier_add(struct svod_dev_tier *tier, struct kobject *dir);
void svod_sysfs_tier_del(struct svod_dev_tier *tier);

#endif /* SVOD_SYSFS_H */
