/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace stand-in for the few <linux/kernel.h> names the kernel's tools/
 * rbtree (copied next to this file, unchanged) uses.
 */
#ifndef SVOD_TOOLS_LINUX_KERNEL_H
#define SVOD_TOOLS_LINUX_KERNEL_H

#include <stddef.h>
#include <linux/compiler.h>

/* driver/core/compat.h may define it first (with the same meaning). */
#ifndef container_of
#define container_of(ptr, type, member) ({				\
	const typeof(((type *)0)->member) * __mptr = (ptr);		\
	(type *)((char *)__mptr - offsetof(type, member)); })
#endif

#endif /* SVOD_TOOLS_LINUX_KERNEL_H */
