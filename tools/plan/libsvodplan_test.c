// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * Host-side test of libsvodplan's input checks: svod_plan_solve() refuses
 * bad parameters and malformed event lists with the errno and
 * failed_event of SVOD_IOCTL_PLAN's SVOD_PLAN_BEST, here the same core
 * code built in userspace (driver/core/plan.c), case by case (events out
 * of order, a FREE of an unknown or freed id, sizes that overflow, ...)
 * and over random traces with one event broken. Prints "ok - NAME" /
 * "not ok - NAME" per check, exits 1 if any failed. argv[1] names the
 * library flavour under test (static or shared).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libsvodplan.h"
#include "../../driver/core/plan.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define BLOCK		256
#define ARENA		(1ULL << 40)
#define MAX_EVENTS	64
#define RANDOM_TRACES	400

static const char *flavour = "";
static int failed;

static void check(int cond, const char *name)
{
	printf("%s - libsvodplan %s: %s\n", cond ? "ok" : "not ok", flavour, name);
	if (!cond)
		failed = 1;
}

#define ALLOC(i, s, a)	{ .op = SVOD_PLAN_ALLOC, .id = (i), .size = (s), .align = (a) }
#define FREE(i)		{ .op = SVOD_PLAN_FREE, .id = (i) }

/**
 * struct outcome - what one planner said about a list
 * @err: 0 or -errno
 * @failed_event: the event it names
 * @peak: the plan's peak
 * @lower_bound: the lower bound it reported
 * @cleared: every offset SVOD_PLAN_NO_OFFSET
 */
struct outcome {
	int err;
	uint32_t failed_event;
	uint64_t peak;
	uint64_t lower_bound;
	int cleared;
};

static int all_cleared(const uint64_t *off, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (off[i] != SVOD_PLAN_NO_OFFSET)
			return 0;
	return 1;
}

static struct outcome run_solve(const struct svod_plan_event *ev, uint32_t n,
				uint64_t block, uint64_t arena, double seconds,
				const uint64_t *hint, uint64_t *off)
{
	const struct svod_solve_params p = { block, arena, seconds };
	struct svod_solve_result r;
	struct outcome o;

	memset(off, 0x5a, (n ? n : 1) * sizeof(*off));
	o.err = svod_plan_solve(ev, n, &p, hint, off, &r);
	o.failed_event = r.failed_event;
	o.peak = r.peak;
	o.lower_bound = r.lower_bound;
	o.cleared = all_cleared(off, n);
	return o;
}

static struct outcome run_ioctl(const struct svod_plan_event *ev, uint32_t n,
				uint64_t block, uint64_t arena, u64 *off)
{
	const struct svod_plan_params p = {
		.arena_size = arena, .block_size = block, .lv2_cnt = 32,
		.strategy = SVOD_PLAN_BEST,
	};
	struct svod_plan_result r;
	struct outcome o;

	o.err = svod_plan_run(&p, ev, n, off, &r, GFP_KERNEL);
	o.failed_event = r.failed_event;
	o.peak = r.peak;
	o.lower_bound = r.lower_bound;
	o.cleared = all_cleared((uint64_t *)off, n);
	return o;
}

/* The search's plan is valid: no two buffers live together overlap. */
static int valid_plan(const struct svod_plan_event *ev, uint32_t n, const uint64_t *off,
		      uint64_t block)
{
	uint32_t i, j;

	for (i = 0; i < n; i++) {
		uint64_t ai = ev[i].op == SVOD_PLAN_ALLOC ? ev[i].align : 0;

		if (ev[i].op != SVOD_PLAN_ALLOC)
			continue;
		if (off[i] == SVOD_PLAN_NO_OFFSET || (ai > 1 && off[i] % ai))
			return 0;
		for (j = i + 1; j < n; j++) {
			uint64_t ei = off[i] + (ev[i].size > block ? ev[i].size : block);
			uint64_t ej;

			if (ev[j].op == SVOD_PLAN_FREE && ev[j].id == ev[i].id)
				break;
			if (ev[j].op != SVOD_PLAN_ALLOC)
				continue;
			ej = off[j] + (ev[j].size > block ? ev[j].size : block);
			if (off[i] < ej && off[j] < ei)
				return 0;
		}
	}
	return 1;
}

/**
 * struct bad_case - one malformed list and what both planners must say
 * @name: the check's name
 * @ev: the events
 * @n: events in @ev
 * @failed_event: the event both must name
 */
struct bad_case {
	const char *name;
	struct svod_plan_event ev[6];
	uint32_t n;
	uint32_t failed_event;
};

static const struct bad_case bad_cases[] = {
	{ "unknown op einval", { ALLOC(1, 64, 0), { .op = 7, .id = 1 } }, 2, 1 },
	{ "free with size einval", { ALLOC(1, 64, 0), { .op = SVOD_PLAN_FREE, .id = 1, .size = 8 } },
	  2, 1 },
	{ "free with align einval", { ALLOC(1, 64, 0), { .op = SVOD_PLAN_FREE, .id = 1, .align = 8 } },
	  2, 1 },
	{ "alloc of a live id einval", { ALLOC(1, 64, 0), ALLOC(2, 64, 0), ALLOC(1, 64, 0) }, 3, 2 },
	{ "free of an unknown id einval", { ALLOC(1, 64, 0), FREE(2), FREE(1) }, 3, 1 },
	{ "free twice einval", { ALLOC(1, 64, 0), FREE(1), FREE(1) }, 3, 2 },
	{ "free before its alloc (out of order) einval", { FREE(1), ALLOC(1, 64, 0) }, 2, 0 },
	{ "size overflows einval", { ALLOC(1, 64, 0), FREE(1), ALLOC(2, UINT64_MAX, 0) }, 3, 2 },
	{ "size plus align overflows einval",
	  { ALLOC(1, 64, 0), ALLOC(2, 1ULL << 63, 1ULL << 63) }, 2, 1 },
	{ "a malformed event wins over an earlier overflow",
	  { ALLOC(1, UINT64_MAX, 0), ALLOC(2, 64, 0), FREE(3) }, 3, 2 },
};

static void test_bad_cases(void)
{
	uint64_t off[MAX_EVENTS];
	u64 koff[MAX_EVENTS];
	char name[128];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad_cases); i++) {
		const struct bad_case *c = &bad_cases[i];
		struct outcome s = run_solve(c->ev, c->n, BLOCK, ARENA, 0.1, NULL, off);
		struct outcome k = run_ioctl(c->ev, c->n, BLOCK, ARENA, koff);

		snprintf(name, sizeof(name), "%s at event %u, as the ioctl", c->name,
			 c->failed_event);
		check(s.err == -EINVAL && s.failed_event == c->failed_event && s.cleared &&
		      k.err == -EINVAL && k.failed_event == c->failed_event, name);
	}
}

static void test_params(void)
{
	const struct svod_plan_event ev[] = { ALLOC(1, 64, 0), FREE(1) };
	uint64_t off[2];
	u64 koff[2];
	struct outcome s, k;

	s = run_solve(ev, 2, 0, ARENA, 0.1, NULL, off);
	k = run_ioctl(ev, 2, 0, ARENA, koff);
	check(s.err == -EINVAL && k.err == -EINVAL && s.failed_event == UINT32_MAX &&
	      k.failed_event == UINT32_MAX && s.cleared, "block_size 0 einval, as the ioctl");
	s = run_solve(ev, 2, BLOCK, 0, 0.1, NULL, off);
	k = run_ioctl(ev, 2, BLOCK, 0, koff);
	check(s.err == -EINVAL && k.err == -EINVAL && s.failed_event == UINT32_MAX &&
	      k.failed_event == UINT32_MAX && s.cleared, "arena_size 0 einval, as the ioctl");
	s = run_solve(ev, 2, BLOCK, ARENA, -1, NULL, off);
	check(s.err == -EINVAL && s.failed_event == UINT32_MAX, "negative seconds einval");
	s = run_solve(ev, 0, BLOCK, ARENA, 0.1, NULL, off);
	check(!s.err && !s.peak && !s.lower_bound && s.failed_event == UINT32_MAX,
	      "no events: peak 0");
}

static void test_enospc(void)
{
	const struct svod_plan_event ev[] = {
		ALLOC(1, 300, 0), ALLOC(2, 100, 0), FREE(1), ALLOC(3, 400, 0), FREE(2), FREE(3),
	};
	const struct svod_plan_event huge[] = {
		ALLOC(1, 1ULL << 63, 0), ALLOC(2, 1ULL << 63, 0), FREE(1), FREE(2),
	};
	uint64_t off[6];
	u64 koff[6];
	struct outcome s, k;

	s = run_solve(ev, 6, BLOCK, 600, 0.1, NULL, off);
	k = run_ioctl(ev, 6, BLOCK, 600, koff);
	check(s.err == -ENOSPC && k.err == -ENOSPC && s.peak > 600 &&
	      s.failed_event < 6 && ev[s.failed_event].op == SVOD_PLAN_ALLOC &&
	      off[s.failed_event] + (ev[s.failed_event].size > BLOCK ?
				     ev[s.failed_event].size : BLOCK) == s.peak &&
	      valid_plan(ev, 6, off, BLOCK),
	      "arena too small enospc, as the ioctl: the plan kept, the ALLOC placed highest named");
	s = run_solve(huge, 4, BLOCK, ARENA, 0.1, NULL, off);
	k = run_ioctl(huge, 4, BLOCK, ARENA, koff);
	check(s.err == -ENOSPC && k.err == -ENOSPC && s.lower_bound == UINT64_MAX &&
	      k.lower_bound == UINT64_MAX, "live sizes overflowing enospc, as the ioctl");
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* A well-formed trace of up to MAX_EVENTS events over ids 0..7. */
static uint32_t random_trace(struct svod_plan_event *ev)
{
	uint32_t n = 0, live = 0, id;

	while (n < MAX_EVENTS - 8 && rnd() % 16) {
		id = rnd() % 8;
		if (live & 1U << id)
			ev[n++] = (struct svod_plan_event)FREE(id);
		else
			ev[n++] = (struct svod_plan_event)ALLOC(id, rnd() % 2048, rnd() % 3 ? 0 :
								1U << (rnd() % 10));
		live ^= 1U << id;
	}
	return n;
}

/* Break one event: a new op, id, size or field the rules refuse. */
static void break_one(struct svod_plan_event *ev, uint32_t n)
{
	struct svod_plan_event *e = &ev[rnd() % n];

	switch (rnd() % 6) {
	case 0:
		e->op = 2 + rnd() % 3;
		break;
	case 1:
		e->id = rnd() % 10;
		break;
	case 2:
		e->op = e->op == SVOD_PLAN_ALLOC ? SVOD_PLAN_FREE : SVOD_PLAN_ALLOC;
		break;
	case 3:
		e->size = UINT64_MAX - rnd() % 512;
		break;
	case 4:
		e->align = 1ULL << 63;
		e->size = 1ULL << 63;
		break;
	default:
		e->size = rnd() % 2 ? 0 : 64;
		e->align = rnd() % 2 ? 0 : 8;
		break;
	}
}

static void test_random(void)
{
	struct svod_plan_event ev[MAX_EVENTS];
	uint64_t off[MAX_EVENTS];
	u64 koff[MAX_EVENTS];
	int differ = 0, malformed = 0, good = 0, i;
	uint32_t n;

	for (i = 0; i < RANDOM_TRACES; i++) {
		struct outcome s, k;

		n = random_trace(ev);
		if (!n)
			continue;
		if (i % 4)
			break_one(ev, n);
		/* Started from BEST's plan, as svodctl plan --solve: never above it. */
		k = run_ioctl(ev, n, BLOCK, ARENA, koff);
		s = run_solve(ev, n, BLOCK, ARENA, 0.02, k.err ? NULL : (uint64_t *)koff, off);
		if (s.err != k.err) {
			differ++;
		} else if (s.err == -EINVAL) {
			malformed++;
			differ += s.failed_event != k.failed_event || !s.cleared;
		} else if (!s.err) {
			good++;
			differ += s.lower_bound != k.lower_bound || s.peak > k.peak ||
				  !valid_plan(ev, n, off, BLOCK);
		}
	}
	printf("# %d malformed, %d planned, %d differ\n", malformed, good, differ);
	check(!differ && malformed > RANDOM_TRACES / 4 && good > RANDOM_TRACES / 8,
	      "random traces with one event broken: errno and failed_event as the ioctl's");
}

int main(int argc, char **argv)
{
	flavour = argc > 1 ? argv[1] : "";
	test_params();
	test_bad_cases();
	test_enospc();
	test_random();
	return failed;
}
