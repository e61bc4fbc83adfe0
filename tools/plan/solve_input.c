// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * libsvodplan's input checks and lower bound: the event list refused as
 * SVOD_IOCTL_PLAN's SVOD_PLAN_BEST refuses it, with its errno and failed
 * event (solve_pair(), solve_check_sizes()), before any search; the
 * highest offset of a plan (solve_highest()) and the lower bound no plan
 * goes below (solve_lower_bound()).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "solve_internal.h"

/* Pair every FREE with its ALLOC (as the kernel planner checks them). */
int solve_pair(const struct svod_plan_event *ev, uint32_t n, uint32_t *last,
	       uint32_t *failed)
{
	size_t cap = 16, mask, h;
	uint32_t *slot_id, *slot_ev, i;
	int err = 0;

	while (cap < 2 * (size_t)n)
		cap <<= 1;
	mask = cap - 1;
	slot_id = calloc(cap, sizeof(*slot_id));
	slot_ev = malloc(cap * sizeof(*slot_ev));
	if (!slot_id || !slot_ev) {
		err = -ENOMEM;
		goto out;
	}
	memset(slot_ev, 0xff, cap * sizeof(*slot_ev));
	for (i = 0; i < n && !err; i++) {
		const struct svod_plan_event *e = &ev[i];

		h = (e->id * 0x9E3779B97F4A7C15ULL) >> 40 & mask;
		while (slot_ev[h] != SOLVE_NONE && slot_id[h] != e->id)
			h = (h + 1) & mask;
		/* slot_ev: the live ALLOC, or SOLVE_NONE - 1 once freed. */
		if (e->op == SVOD_PLAN_ALLOC && slot_ev[h] >= SOLVE_NONE - 1) {
			slot_id[h] = e->id;
			slot_ev[h] = i;
			last[i] = n;
		} else if (e->op == SVOD_PLAN_FREE && !e->size && !e->align &&
			   slot_ev[h] < SOLVE_NONE - 1) {
			last[slot_ev[h]] = i;
			slot_ev[h] = SOLVE_NONE - 1;
		} else {
			*failed = i;
			err = -EINVAL;
		}
	}
out:
	free(slot_id);
	free(slot_ev);
	return err;
}

/*
 * An ALLOC is malformed where its size (at least @block_size) plus its
 * alignment minus one, rounded up to the granule of its TLSF bucket, does
 * not fit in 64 bits: the ioctl's rule, with the reference's 32
 * second-level buckets (SOLVE_L2_BITS). Reported after solve_pair()'s
 * errors, as SVOD_PLAN_BEST does.
 */
int solve_check_sizes(const struct svod_plan_event *ev, uint32_t n,
		      uint64_t block_size, uint32_t *failed)
{
	uint64_t need, align, granule;
	uint32_t i;
	int msb;

	for (i = 0; i < n; i++) {
		if (ev[i].op != SVOD_PLAN_ALLOC)
			continue;
		need = solve_max(ev[i].size, block_size);
		align = solve_max(ev[i].align, 1);
		if (need > UINT64_MAX - (align - 1)) {
			*failed = i;
			return -EINVAL;
		}
		need += align - 1;
		msb = 64 - __builtin_clzll(need);
		granule = msb > SOLVE_L2_BITS ? 1ULL << (msb - SOLVE_L2_BITS) : 1;
		if (need > UINT64_MAX - (granule - 1)) {
			*failed = i;
			return -EINVAL;
		}
	}
	return 0;
}

/* The ALLOC whose end is the plan's peak (the first such), else ~0U. */
uint32_t solve_highest(const struct svod_plan_event *ev, uint32_t n,
		       uint64_t block_size, const uint64_t *offsets, uint64_t peak)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (ev[i].op == SVOD_PLAN_ALLOC && offsets[i] != SVOD_PLAN_NO_OFFSET &&
		    offsets[i] + solve_max(ev[i].size, block_size) == peak)
			return i;
	return UINT32_MAX;
}

/* Largest sum of requested live bytes, saturating (the kernel's bound). */
uint64_t solve_lower_bound(const struct svod_plan_event *ev, uint32_t n,
			   const uint32_t *last)
{
	uint64_t *gone = calloc((size_t)n + 1, sizeof(*gone)), live = 0, lb = 0;
	int saturated = 0;
	uint32_t i;

	if (!gone)
		return 0;
	for (i = 0; i < n; i++) {
		if (ev[i].op != SVOD_PLAN_ALLOC) {
			live -= gone[i];
			continue;
		}
		gone[last[i]] = ev[i].size;
		if (live > UINT64_MAX - ev[i].size)
			saturated = 1;
		live += ev[i].size;
		if (saturated)
			lb = UINT64_MAX;
		else if (live > lb)
			lb = live;
	}
	free(gone);
	return lb;
}
