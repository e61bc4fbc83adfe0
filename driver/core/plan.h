/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * svod planner: an event list (alloc id size align / free id) in, one arena
 * offset per alloc, the peak and the lower bound out. Two strategies:
 * SVOD_PLAN_TLSF reproduces the reference planner exactly (tlsf.h);
 * SVOD_PLAN_BEST packs the buffers offline with skyline passes (the lowest
 * segment of the skyline first), and falls back to the TLSF answer when
 * that one has the lower peak.
 * Documentation/planner.rst has every rule.
 *
 * Locking: none; the planner touches only what the caller passes in and the
 * memory it allocates (and frees) itself.
 */
#ifndef SVOD_CORE_PLAN_H
#define SVOD_CORE_PLAN_H

#include "compat.h"
#include <linux/svod.h>

/* Hard cap on events per call; the ioctl's own limit may only be lower. */
#define SVOD_PLAN_MAX_EVENTS		BIT(24)
/* Steps between two svod_yield() calls. */
#define SVOD_PLAN_YIELD_EVENTS		4096

/**
 * struct svod_plan_params - what to plan with
 * @arena_size: bytes in the arena, > 0
 * @block_size: minimum allocation size, > 0 (the reference uses 256)
 * @lv2_cnt: second-level buckets, at most SVOD_TLSF_MAX_LV2_CNT; 0 counts
 *	as 1 like in the reference (which uses 32)
 * @strategy: SVOD_PLAN_TLSF or SVOD_PLAN_BEST
 */
struct svod_plan_params {
	u64 arena_size;
	u64 block_size;
	u32 lv2_cnt;
	u32 strategy;
};

/**
 * struct svod_plan_result - what a plan reports
 * @peak: largest start + max(size, block_size) of any allocation
 * @lower_bound: largest sum of the requested sizes of live buffers at any
 *	time (U64_MAX if that sum overflows)
 * @failed_event: index of the failing event, or U32_MAX
 * @used: SVOD_PLAN_USED_*: the plan whose offsets were returned (TLSF
 *	for SVOD_PLAN_TLSF)
 */
struct svod_plan_result {
	u64 peak;
	u64 lower_bound;
	u32 failed_event;
	u32 used;
};

int svod_plan_check_params(const struct svod_plan_params *p);
int svod_plan_run(const struct svod_plan_params *p, const struct svod_plan_event *ev,
		  u32 n, u64 *offsets, struct svod_plan_result *res, gfp_t gfp);

#endif /* SVOD_CORE_PLAN_H */
