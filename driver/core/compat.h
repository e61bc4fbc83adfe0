/* SPDX-License-Identifier: GPL-2.0 */
/*
 * svod core compatibility: the core (tier allocator, handle table) builds
 * unchanged in the kernel and as a userspace library (tools/core/). In the
 * kernel this header only pulls in the kernel headers the core uses; in
 * userspace it maps the same names onto libc and onto the kernel's own
 * rbtree, copied from the kernel source's tools/ into tools/core/.
 */
#ifndef SVOD_CORE_COMPAT_H
#define SVOD_CORE_COMPAT_H

#ifdef __KERNEL__

#include <linux/types.h>
#include <linux/errno.h>
#include <linux/bug.h>
#include <linux/slab.h>
#include <linux/rbtree_augmented.h>
#include <linux/log2.h>
#include <linux/limits.h>
#include <linux/overflow.h>
#include <linux/export.h>
#include <kunit/visibility.h>

/* Test-only entry points exist for svod_test.ko on a kernel with KUnit. */
#define SVOD_CORE_TEST_HOOKS	IS_ENABLED(CONFIG_KUNIT)

#else /* !__KERNEL__ */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <linux/types.h>
#include <linux/rbtree_augmented.h>

typedef __u64 u64;
typedef __u32 u32;
typedef __u16 u16;
typedef __u8 u8;

/* As in the kernel (<linux/types.h> defines __bitwise for sparse). */
typedef unsigned int __bitwise gfp_t;

#define GFP_KERNEL	0U

#define U16_MAX		((u16)~0U)
#define U32_MAX		((u32)~0U)
#define U64_MAX		((u64)~0ULL)

#define SVOD_CORE_TEST_HOOKS	1
#ifndef EXPORT_SYMBOL_IF_KUNIT
#define EXPORT_SYMBOL_IF_KUNIT(symbol)
#endif

/*
 * Allocation failure injection for the userspace tests: when
 * svod_compat_fail_countdown reaches zero the allocation fails (once).
 * Negative means never. Defined in tools/core/compat.c.
 */
extern long svod_compat_fail_countdown;

static inline bool svod_compat_should_fail(void)
{
	if (svod_compat_fail_countdown < 0)
		return false;
	return svod_compat_fail_countdown-- == 0;
}

static inline void *kmalloc(size_t size, gfp_t gfp)
{
	(void)gfp;
	return svod_compat_should_fail() ? NULL : malloc(size);
}

static inline void *kzalloc(size_t size, gfp_t gfp)
{
	(void)gfp;
	return svod_compat_should_fail() ? NULL : calloc(1, size);
}

static inline void *krealloc(void *p, size_t size, gfp_t gfp)
{
	(void)gfp;
	return svod_compat_should_fail() ? NULL : realloc(p, size);
}

static inline void *krealloc_array(void *p, size_t n, size_t size, gfp_t gfp)
{
	size_t bytes;

	if (__builtin_mul_overflow(n, size, &bytes))
		return NULL;
	return krealloc(p, bytes, gfp);
}

static inline void kfree(const void *p)
{
	free((void *)p);
}

/* A warning is a bug in the core or its caller: stop the test run. */
#define WARN_ON(cond) ({						\
	int __svod_warn = !!(cond);					\
	if (__svod_warn) {						\
		fprintf(stderr, "WARN_ON(%s) at %s:%d\n", #cond,	\
			__FILE__, __LINE__);				\
		abort();						\
	}								\
	__svod_warn;							\
})

static inline bool is_power_of_2(u64 n)
{
	return n != 0 && (n & (n - 1)) == 0;
}

#define check_add_overflow(a, b, d)	__builtin_add_overflow(a, b, d)

#endif /* __KERNEL__ */

#endif /* SVOD_CORE_COMPAT_H */
