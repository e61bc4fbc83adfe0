// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * libFuzzer target for the planner core: bytes become parameters and an
 * event list (bad frees and live-id reuse included); both strategies must
 * return a documented result, and every successful plan must satisfy the
 * invariants of check.c, BEST never above TLSF, TLSF deterministic.
 * A failed TLSF plan must be valid up to its failing event.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gen.h"
#include "../../driver/core/plan.h"

static const u64 arenas[] = { 1 << 10, 3000, 12345, 1 << 16, 1 << 20, 1ULL << 40, U64_MAX };
static const u64 block_sizes[] = { 1, 2, 16, 256, 1000, 4096 };
static const u64 aligns[] = { 0, 1, 2, 3, 8, 64, 256, 1000, 4096, 1 << 20, 24, 7, 0, 0, 0, 0 };

static void fuzz_fail(const char *why)
{
	fprintf(stderr, "plan_fuzz: %s\n", why);
	abort();
}

static int fuzz_plan(struct svod_plan_params *p, const struct svod_plan_event *ev, u32 n,
		     u64 *off, struct svod_plan_result *res)
{
	int err = svod_plan_run(p, ev, n, off, res, GFP_KERNEL);
	const char *why;

	if (err && err != -EINVAL && err != -ENOSPC && err != -E2BIG)
		fuzz_fail("undocumented errno");
	if (err && err != -E2BIG && res->failed_event >= n)
		fuzz_fail("no failing event");
	if (!err) {
		why = plan_check(p->arena_size, p->block_size, ev, n, off, res->peak,
				 res->lower_bound);
		if (why)
			fuzz_fail(why);
	}
	return err;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct svod_plan_params p = {};
	struct svod_plan_result res, again, best;
	struct svod_plan_event *ev;
	u64 *off, *off2;
	u32 n, i;
	int err;

	if (size < 3)
		return 0;
	p.arena_size = arenas[data[0] % ARRAY_SIZE(arenas)];
	p.block_size = block_sizes[data[1] % ARRAY_SIZE(block_sizes)];
	p.lv2_cnt = data[2] == 255 ? 256 : data[2] % 65;
	n = (size - 3) / 4;
	ev = calloc(n + 1, sizeof(*ev));
	off = calloc(n + 1, sizeof(*off));
	off2 = calloc(n + 1, sizeof(*off2));
	if (!ev || !off || !off2)
		fuzz_fail("out of memory");
	for (i = 0; i < n; i++) {
		const uint8_t *r = data + 3 + 4 * i;

		ev[i].id = r[0] & 63;
		if ((r[0] >> 6) == 3) {
			ev[i].op = SVOD_PLAN_FREE;
			continue;
		}
		ev[i].op = SVOD_PLAN_ALLOC;
		ev[i].size = (u64)(r[1] | r[2] << 8) << (r[3] & 15);
		ev[i].align = aligns[r[3] >> 4];
	}

	p.strategy = SVOD_PLAN_TLSF;
	err = fuzz_plan(&p, ev, n, off, &res);
	if (svod_plan_run(&p, ev, n, off2, &again, GFP_KERNEL) != err ||
	    memcmp(off, off2, sizeof(*off) * n) || res.peak != again.peak ||
	    res.failed_event != again.failed_event)
		fuzz_fail("TLSF is not deterministic");
	if (err == -ENOSPC && fuzz_plan(&p, ev, res.failed_event, off2, &again))
		fuzz_fail("TLSF prefix before the failing event does not plan");

	p.strategy = SVOD_PLAN_BEST;
	if (!fuzz_plan(&p, ev, n, off2, &best)) {
		if (!err && best.peak > res.peak)
			fuzz_fail("BEST above TLSF");
	} else if (!err) {
		fuzz_fail("BEST failed where TLSF planned");
	}

	free(off2);
	free(off);
	free(ev);
	return 0;
}
