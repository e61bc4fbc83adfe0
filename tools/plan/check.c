// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * Plan invariants: every ALLOC has an offset honouring its alignment, inside
 * the arena; no two live buffers overlap (each occupying max(size,
 * block_size) bytes); the peak is the largest end; the lower bound is the
 * largest sum of requested live bytes and is not above the peak.
 */
#include <stdlib.h>

#include "check.h"

struct live_buf {
	uint32_t id;
	uint64_t start;
	uint64_t end;
	uint64_t size;
};

/**
 * plan_check() - check a successful plan
 * @arena: arena size
 * @block_size: minimum allocation size
 * @ev: events
 * @n: number of events
 * @offsets: the plan's offsets
 * @peak: the plan's peak
 * @lower_bound: the plan's lower bound
 *
 * Costs O(n * live): meant for traces of thousands of events.
 *
 * Context: any thread.
 * Return: NULL if every invariant holds, else which one failed.
 */
const char *plan_check(uint64_t arena, uint64_t block_size, const struct svod_plan_event *ev,
		       uint32_t n, const __u64 *offsets, uint64_t peak, uint64_t lower_bound)
{
	struct live_buf *live = calloc(n ? n : 1, sizeof(*live));
	uint64_t top = 0, bytes = 0, bound = 0;
	const char *why = NULL;
	uint32_t i, j, nr = 0;

	if (!live)
		return "out of memory";
	for (i = 0; i < n && !why; i++) {
		const struct svod_plan_event *e = &ev[i];
		uint64_t align = e->align ? e->align : 1;
		uint64_t size = e->size > block_size ? e->size : block_size;

		if (e->op == SVOD_PLAN_FREE) {
			if (offsets[i] != SVOD_PLAN_NO_OFFSET)
				why = "a FREE event has an offset";
			for (j = 0; j < nr; j++)
				if (live[j].id == e->id)
					break;
			if (j == nr) {
				why = "FREE of a buffer that is not live";
				break;
			}
			bytes -= live[j].size;
			live[j] = live[--nr];
			continue;
		}
		if (offsets[i] == SVOD_PLAN_NO_OFFSET) {
			why = "an ALLOC has no offset";
			break;
		}
		if (offsets[i] % align)
			why = "an offset breaks its alignment";
		if (offsets[i] > arena || size > arena - offsets[i])
			why = "an allocation ends beyond the arena";
		for (j = 0; j < nr && !why; j++)
			if (offsets[i] < live[j].end && live[j].start < offsets[i] + size)
				why = "two live buffers overlap";
		live[nr++] = (struct live_buf){ e->id, offsets[i], offsets[i] + size, e->size };
		if (offsets[i] + size > top)
			top = offsets[i] + size;
		bytes += e->size;
		if (bytes > bound)
			bound = bytes;
	}
	if (!why && top != peak)
		why = "peak is not the largest end";
	if (!why && bound != lower_bound)
		why = "lower bound is not the largest sum of live bytes";
	if (!why && lower_bound > peak)
		why = "peak below the lower bound";
	free(live);
	return why;
}
