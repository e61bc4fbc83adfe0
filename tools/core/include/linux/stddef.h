/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace stand-in for <linux/stddef.h>, for the copied rbtree. */
#ifndef SVOD_TOOLS_LINUX_STDDEF_H
#define SVOD_TOOLS_LINUX_STDDEF_H

#include <stddef.h>

#endif /* SVOD_TOOLS_LINUX_STDDEF_H */
