/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * Invariants of a successful plan, shared by the fuzz target, the
 * benchmark and the guest harness.
 */
#ifndef SVOD_PLAN_CHECK_H
#define SVOD_PLAN_CHECK_H

#include <stdint.h>
#include <linux/svod.h>

const char *plan_check(uint64_t arena, uint64_t block_size, const struct svod_plan_event *ev,
		       uint32_t n, const __u64 *offsets, uint64_t peak, uint64_t lower_bound);

#endif /* SVOD_PLAN_CHECK_H */
