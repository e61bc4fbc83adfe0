/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace stand-in for <linux/export.h>: the copied rbtree includes it but
 * exports nothing.
 */
#ifndef SVOD_TOOLS_LINUX_EXPORT_H
#define SVOD_TOOLS_LINUX_EXPORT_H

#endif /* SVOD_TOOLS_LINUX_EXPORT_H */
