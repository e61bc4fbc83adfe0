/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * libsvodplan: the arena planner's search, in userspace.
 *
 * svod_plan_solve() plans the same event lists as SVOD_IOCTL_PLAN (struct
 * svod_plan_event, uapi/linux/svod.h, with the same rules, the same errno
 * and failed event for a malformed one) and searches, within a time
 * budget, for the plan with the lowest peak (Documentation/planner.rst,
 * "Search"; its measurements: planner-search.rst). It needs no
 * device: it takes no file descriptor and keeps no state between calls.
 * It may run a second search on a thread of its own for the length of the
 * call (joined before it returns), so a static program links libsvodplan.a
 * with -pthread (`pkg-config --static --libs libsvodplan` says so).
 *
 * It was part of libsvod up to libsvod.so.1; libsvod is the device's
 * library, this one is the planner's. Build with
 * `pkg-config --cflags --libs libsvodplan`.
 */
#ifndef LIBSVODPLAN_H
#define LIBSVODPLAN_H

#include <stdint.h>
#include <linux/svod.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * struct svod_solve_params - what svod_plan_solve() plans with
 * @block_size: minimum buffer size, > 0 (as struct svod_plan)
 * @arena_size: bytes in the arena, > 0
 * @seconds: time budget, in CPU seconds of each search thread (about the
 *	wall clock on an idle machine, longer on a loaded one, the same
 *	search either way); the search stops earlier at the lower bound.
 *	With two or more CPUs online, two searches run side by side, one
 *	per thread, each with this budget (Documentation/planner-search.rst)
 */
struct svod_solve_params {
	uint64_t block_size;
	uint64_t arena_size;
	double seconds;
};

/**
 * struct svod_solve_result - what svod_plan_solve() found
 * @peak: peak of the returned plan
 * @lower_bound: largest sum of requested live bytes (as the ioctl's)
 * @nodes: search nodes visited
 * @failed_event: the malformed event (-EINVAL), the ALLOC placed highest
 *	(-ENOSPC), else ~0U
 * @optimal: 1 when @peak meets the lower bound or the search completed
 */
struct svod_solve_result {
	uint64_t peak;
	uint64_t lower_bound;
	uint64_t nodes;
	uint32_t failed_event;
	uint32_t optimal;
};

int svod_plan_solve(const struct svod_plan_event *ev, uint32_t n,
		    const struct svod_solve_params *p, const uint64_t *hint,
		    uint64_t *offsets, struct svod_solve_result *res);

#ifdef __cplusplus
}
#endif

#endif /* LIBSVODPLAN_H */
