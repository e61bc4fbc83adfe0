/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace stand-in for the <linux/compiler.h> names the copied rbtree uses.
 * The core is single-threaded in userspace: plain volatile accesses suffice.
 */
#ifndef SVOD_TOOLS_LINUX_COMPILER_H
#define SVOD_TOOLS_LINUX_COMPILER_H

#include <stdbool.h>

#ifndef __always_inline
#define __always_inline	inline __attribute__((__always_inline__))
#endif
#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)
#define READ_ONCE(x)	(*(const volatile typeof(x) *)&(x))
#define WRITE_ONCE(x, val)	(*(volatile typeof(x) *)&(x) = (val))

#endif /* SVOD_TOOLS_LINUX_COMPILER_H */
