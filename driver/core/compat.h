/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * svod core shim: the core (range allocator, handle table, TLSF, planner)
 * builds unchanged in the kernel and in userspace (tools/core, tools/plan,
 * svodctl, the harness). In the kernel this header only includes the kernel
 * headers the core uses; in userspace it defines the same names, with the
 * same meaning, on top of libc. The kernel's rbtree, which only the range
 * allocator uses, comes in userspace from the copy in tools/core/include.
 *
 * Both sides also get the two helpers the core shares: svod_round_up() and
 * svod_yield().
 */
#ifndef SVOD_CORE_COMPAT_H
#define SVOD_CORE_COMPAT_H

#ifdef __KERNEL__

#include <kunit/visibility.h>
#include <linux/bitops.h>
#include <linux/bug.h>
#include <linux/errno.h>
#include <linux/export.h>
#include <linux/limits.h>
#include <linux/list.h>
#include <linux/log2.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/overflow.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/types.h>

/* Test-only entry points exist when the target kernel has KUnit. */
#define SVOD_CORE_TEST_HOOKS	IS_ENABLED(CONFIG_KUNIT)

/**
 * svod_yield() - let a long loop give up the CPU and notice a fatal signal
 *
 * Called by the planner's long loops every few thousand steps. (Staging
 * stops between chunks on any pending signal, not only a fatal one: its
 * own helper in stage.c.)
 *
 * Context: process context, may sleep.
 * Return: 0 to go on, -EINTR when the current task has a fatal signal
 * pending.
 */
static inline int svod_yield(void)
{
	cond_resched();
	return fatal_signal_pending(current) ? -EINTR : 0;
}

/* A random odd multiplier for the planner's id hash. */
static inline u64 svod_plan_hash_key(void)
{
	return get_random_u64() | 1;
}

#else /* !__KERNEL__ */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>

typedef __u64 u64;
typedef __u32 u32;
typedef __u16 u16;
typedef __u8 u8;

/* As in the kernel (<linux/types.h> defines __bitwise for sparse). */
typedef unsigned int __bitwise gfp_t;

#define GFP_KERNEL		((gfp_t)0U)
#define __GFP_NOWARN		((gfp_t)0U)

#ifndef U16_MAX
#define U16_MAX			((u16)~0U)
#endif
#ifndef U32_MAX
#define U32_MAX			((u32)~0U)
#endif
#ifndef U64_MAX
#define U64_MAX			((u64)~0ULL)
#endif

/* Userspace builds carry the test hooks. */
#define SVOD_CORE_TEST_HOOKS		1
/* The core is linked into the program: nothing is exported. */
#define EXPORT_SYMBOL_IF_KUNIT(symbol)

/* tools/core/include/linux/kernel.h (the rbtree's) may define it first. */
#ifndef container_of
#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))
#endif
#ifndef BIT
#define BIT(n)			(1UL << (n))
#endif
#define max(a, b) ({							\
	typeof(a) __a = (a);						\
	typeof(b) __b = (b);						\
	__a > __b ? __a : __b;						\
})
#define min(a, b) ({							\
	typeof(a) __a = (a);						\
	typeof(b) __b = (b);						\
	__a < __b ? __a : __b;						\
})
#define clamp_t(type, val, lo, hi) ({					\
	type __v = (val), __l = (lo), __h = (hi);			\
	__v < __l ? __l : __v > __h ? __h : __v;			\
})
#define check_add_overflow(a, b, d)	__builtin_add_overflow(a, b, d)

/* A warning is a bug in the core or its caller: stop the program. */
#define WARN_ON(cond) ({						\
	int __svod_warn = !!(cond);					\
	if (__svod_warn) {						\
		fprintf(stderr, "WARN_ON(%s) at %s:%d\n", #cond,	\
			__FILE__, __LINE__);				\
		abort();						\
	}								\
	__svod_warn;							\
})
#define WARN_ON_ONCE(cond)		WARN_ON(cond)

static inline int fls64(u64 x)
{
	return x ? 64 - __builtin_clzll(x) : 0;
}

static inline unsigned long __ffs64(u64 x)
{
	return __builtin_ctzll(x);
}

static inline bool is_power_of_2(u64 n)
{
	return n && !(n & (n - 1));
}

static inline u64 div64_u64_rem(u64 dividend, u64 divisor, u64 *remainder)
{
	*remainder = dividend % divisor;
	return dividend / divisor;
}

/*
 * Allocation failure injection, built only with -DSVOD_COMPAT_FAULTS
 * (tools/core): when svod_compat_fail_countdown reaches zero the allocation
 * fails (once); negative means never. Defined in tools/core/compat.c.
 */
#ifdef SVOD_COMPAT_FAULTS
extern long svod_compat_fail_countdown;

static inline bool svod_compat_should_fail(void)
{
	if (svod_compat_fail_countdown < 0)
		return false;
	return svod_compat_fail_countdown-- == 0;
}
#else
static inline bool svod_compat_should_fail(void)
{
	return false;
}
#endif

static inline void *kmalloc_array(size_t n, size_t size, gfp_t gfp)
{
	size_t bytes;

	(void)gfp;
	if (__builtin_mul_overflow(n, size, &bytes) ||
	    svod_compat_should_fail())
		return NULL;
	return malloc(bytes ? bytes : 1);
}

static inline void *kmalloc(size_t size, gfp_t gfp)
{
	return kmalloc_array(1, size, gfp);
}

static inline void *kvmalloc_array(size_t n, size_t size, gfp_t gfp)
{
	return kmalloc_array(n, size, gfp);
}

static inline void *kvcalloc(size_t n, size_t size, gfp_t gfp)
{
	void *p = kmalloc_array(n, size, gfp);

	if (p)
		memset(p, 0, n * size);
	return p;
}

static inline void *krealloc_array(void *p, size_t n, size_t size, gfp_t gfp)
{
	size_t bytes;

	(void)gfp;
	if (__builtin_mul_overflow(n, size, &bytes) ||
	    svod_compat_should_fail())
		return NULL;
	return realloc(p, bytes ? bytes : 1);
}

static inline void kfree(const void *p)
{
	free((void *)p);
}

static inline void kvfree(const void *p)
{
	free((void *)p);
}

static inline void sort(void *base, size_t num, size_t size,
			int (*cmp)(const void *, const void *),
			void (*swap)(void *, void *, int))
{
	(void)swap;
	qsort(base, num, size, cmp);
}

struct list_head {
	struct list_head *next, *prev;
};

static inline void INIT_LIST_HEAD(struct list_head *h)
{
	h->next = h;
	h->prev = h;
}

static inline void __list_add(struct list_head *n, struct list_head *prev,
			      struct list_head *next)
{
	n->prev = prev;
	n->next = next;
	prev->next = n;
	next->prev = n;
}

/* @n goes right after @h. */
static inline void list_add(struct list_head *n, struct list_head *h)
{
	__list_add(n, h, h->next);
}

/* @n goes right before @h (at the tail of the list @h heads). */
static inline void list_add_tail(struct list_head *n, struct list_head *h)
{
	__list_add(n, h->prev, h);
}

static inline void list_del(struct list_head *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->next = NULL;
	n->prev = NULL;
}

static inline bool list_empty(const struct list_head *h)
{
	return h->next == h;
}

#define list_entry(ptr, type, member)	container_of(ptr, type, member)
#define list_first_entry(h, type, member) \
	list_entry((h)->next, type, member)

/* Userspace never needs to give up the CPU: see the kernel's version. */
static inline int svod_yield(void)
{
	return 0;
}

/* A fixed odd multiplier: userspace plans are reproducible. */
static inline u64 svod_plan_hash_key(void)
{
	return 0x9E3779B97F4A7C15ULL;
}

#endif /* __KERNEL__ */

/**
 * svod_round_up() - round @n up to a multiple of @align
 * @n: the value
 * @align: the granule, >= 1 (any value, not only a power of two)
 *
 * Context: any.
 * Return: the smallest multiple of @align that is >= @n, or U64_MAX when it
 * does not fit in 64 bits.
 */
static inline u64 svod_round_up(u64 n, u64 align)
{
	u64 rem;

	if (is_power_of_2(align))
		rem = n & (align - 1);
	else
		div64_u64_rem(n, align, &rem);
	if (rem && check_add_overflow(n, align - rem, &n))
		return U64_MAX;
	return n;
}

#endif /* SVOD_CORE_COMPAT_H */
