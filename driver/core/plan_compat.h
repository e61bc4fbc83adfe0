/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the planner core (tlsf.c, plan.c) needs from the kernel, so the same
 * files build unchanged in userspace (tools/plan, svodctl, the harness).
 * In the kernel this only includes headers; in userspace it provides the few
 * kernel helpers the planner uses, with the same meaning.
 */
#ifndef SVOD_CORE_PLAN_COMPAT_H
#define SVOD_CORE_PLAN_COMPAT_H

#ifdef __KERNEL__

#include <linux/bitops.h>
#include <linux/bug.h>
#include <linux/errno.h>
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
#include <linux/export.h>
#include <kunit/visibility.h>

/*
 * svod_plan_yield() - let a long plan give up the CPU and notice a fatal
 * signal; called by the core every SVOD_PLAN_YIELD_EVENTS steps.
 * Return: 0 to go on, -EINTR when the caller has a fatal signal pending.
 */
static inline int svod_plan_yield(void)
{
	cond_resched();
	return fatal_signal_pending(current) ? -EINTR : 0;
}

/* A random odd multiplier for the planner's id hash. */
static inline u64 svod_plan_hash_key(void)
{
	return get_random_u64() | 1;
}

#else /* userspace */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>

typedef __u32 u32;
typedef __u64 u64;
typedef unsigned int __bitwise gfp_t;
#ifndef EXPORT_SYMBOL_IF_KUNIT
#define EXPORT_SYMBOL_IF_KUNIT(symbol)
#endif

#define GFP_KERNEL		((gfp_t)0U)

#ifndef U32_MAX
#define U32_MAX			((u32)~0U)
#endif
#ifndef U64_MAX
#define U64_MAX			((u64)~0ULL)
#endif

#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))
#ifndef BIT
#define BIT(n)			(1UL << (n))
#endif
#define max(a, b) ({							\
	typeof(a) __a = (a);						\
	typeof(b) __b = (b);						\
	__a > __b ? __a : __b;						\
})
#define check_add_overflow(a, b, d)	__builtin_add_overflow(a, b, d)
#define WARN_ON_ONCE(c) ({						\
	bool __c = !!(c);						\
	if (__c)							\
		fprintf(stderr, "WARN_ON_ONCE(%s) at %s:%d\n", #c,	\
			__FILE__, __LINE__);				\
	__c;								\
})

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

static inline void *kvcalloc(size_t n, size_t size, gfp_t gfp)
{
	(void)gfp;
	return calloc(n ? n : 1, size ? size : 1);
}

static inline void *kvmalloc_array(size_t n, size_t size, gfp_t gfp)
{
	size_t bytes;

	(void)gfp;
	if (__builtin_mul_overflow(n, size, &bytes))
		return NULL;
	return malloc(bytes ? bytes : 1);
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

static inline void list_add_tail(struct list_head *n, struct list_head *h)
{
	n->prev = h->prev;
	n->next = h;
	h->prev->next = n;
	h->prev = n;
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

#define list_first_entry(h, type, member) \
	container_of((h)->next, type, member)

static inline int svod_plan_yield(void)
{
	return 0;
}

static inline u64 svod_plan_hash_key(void)
{
	return 0x9E3779B97F4A7C15ULL;
}

#endif /* __KERNEL__ */

#endif /* SVOD_CORE_PLAN_COMPAT_H */
