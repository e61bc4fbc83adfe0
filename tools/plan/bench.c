// SPDX-License-Identifier: GPL-2.0
/*
 * plan_bench: figures of the userspace build of the planner on generated
 * network schedules (gen.h): TLSF events/s on 1M-event traces, BEST
 * events/s on its largest accepted traces, and peak / lower bound of both
 * strategies over a set of traces. `plan_bench --check` instead checks the
 * invariants (check.c) of both strategies over many generated traces and
 * prints `ok - ...` / `not ok - ...` lines. `plan_bench --trace FILE` prints
 * the events/s of svod_plan_run (TLSF) on a trace file, best of three, the
 * events read first (refbench.py compares it with the reference planner).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "gen.h"
#include "../../driver/core/plan.h"

#define BENCH_BIG	1048576U
#define BENCH_TRACES	32
#define BENCH_EVENTS	4000
#define CHECK_TRACES	200

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int plan(uint32_t strategy, const struct svod_plan_event *ev, uint32_t n, u64 *off,
		struct svod_plan_result *res)
{
	struct svod_plan_params p = {
		.arena_size = 1ULL << 40, .block_size = 256, .lv2_cnt = 32, .strategy = strategy,
	};

	return svod_plan_run(&p, ev, n, off, res, GFP_KERNEL);
}

/* Best of three runs, in events per second. */
static double rate(uint32_t strategy, const struct svod_plan_event *ev, uint32_t n, u64 *off)
{
	struct svod_plan_result res;
	double best = 0, t;
	int i;

	for (i = 0; i < 3; i++) {
		t = now();
		if (plan(strategy, ev, n, off, &res)) {
			fprintf(stderr, "plan_bench: plan failed\n");
			exit(1);
		}
		t = now() - t;
		if (n / t > best)
			best = n / t;
	}
	return best;
}

static int bench(void)
{
	struct svod_plan_event *ev = calloc(BENCH_BIG, sizeof(*ev));
	u64 *off = calloc(BENCH_BIG, sizeof(*off));
	double sum[2] = {}, worst[2] = {}, gain = 0;
	struct svod_plan_result res[2];
	uint32_t n, t, fallbacks = 0;
	int s;

	if (!ev || !off)
		return 1;
	n = plan_gen_network(1, BENCH_BIG, ev);
	printf("plan: tlsf %u-event trace: %.2f Mevents/s\n", n,
	       rate(SVOD_PLAN_TLSF, ev, n, off) / 1e6);
	n = plan_gen_network(2, BENCH_BIG, ev);
	printf("plan: tlsf %u-event trace (seed 2): %.2f Mevents/s\n", n,
	       rate(SVOD_PLAN_TLSF, ev, n, off) / 1e6);
	n = plan_gen_network(3, 2 * SVOD_PLAN_BEST_MAX_ALLOCS, ev);
	printf("plan: best %u-event trace: %.3f Mevents/s\n", n,
	       rate(SVOD_PLAN_BEST, ev, n, off) / 1e6);

	for (t = 0; t < BENCH_TRACES; t++) {
		n = plan_gen_network(100 + t, BENCH_EVENTS, ev);
		for (s = 0; s < 2; s++) {
			if (plan(s ? SVOD_PLAN_BEST : SVOD_PLAN_TLSF, ev, n, off, &res[s]))
				return 1;
			double r = (double)res[s].peak / (double)res[s].lower_bound;

			sum[s] += r;
			if (r > worst[s])
				worst[s] = r;
		}
		fallbacks += res[1].used == SVOD_PLAN_TLSF;
		gain += (double)res[1].peak / (double)res[0].peak;
	}
	printf("plan: peak/bound over %u traces of %u events:", BENCH_TRACES, BENCH_EVENTS);
	printf(" tlsf mean %.3f max %.3f, best mean %.3f max %.3f\n", sum[0] / BENCH_TRACES,
	       worst[0], sum[1] / BENCH_TRACES, worst[1]);
	printf("plan: best/tlsf peak mean %.3f; best fell back to tlsf on %u of %u traces\n",
	       gain / BENCH_TRACES, fallbacks, BENCH_TRACES);
	free(off);
	free(ev);
	return 0;
}

static int check(void)
{
	struct svod_plan_event *ev = calloc(BENCH_BIG, sizeof(*ev));
	u64 *off = calloc(BENCH_BIG, sizeof(*off));
	u64 *off2 = calloc(BENCH_BIG, sizeof(*off2));
	struct svod_plan_result res, best;
	const char *why = NULL;
	uint32_t n, t;
	int rc = 0;

	if (!ev || !off || !off2)
		return 1;
	for (t = 0; t < CHECK_TRACES; t++) {
		n = plan_gen_network(1000 + t, 500 + 37 * t, ev);
		if (plan(SVOD_PLAN_TLSF, ev, n, off, &res) ||
		    plan(SVOD_PLAN_BEST, ev, n, off2, &best)) {
			why = "a plan failed";
			break;
		}
		why = plan_check(1ULL << 40, 256, ev, n, off, res.peak, res.lower_bound);
		if (!why)
			why = plan_check(1ULL << 40, 256, ev, n, off2, best.peak, best.lower_bound);
		if (!why && best.peak > res.peak)
			why = "best above tlsf";
		if (why)
			break;
	}
	if (why) {
		printf("# plan invariants: trace seed %u: %s\n", 1000 + t, why);
		rc = 1;
	}
	printf("%s - plan invariants: %u generated traces, tlsf and best\n", why ? "not ok" : "ok",
	       CHECK_TRACES);

	n = plan_gen_network(7, BENCH_BIG, ev);
	why = plan(SVOD_PLAN_TLSF, ev, n, off, &res) ? "plan failed" :
	      plan_check(1ULL << 40, 256, ev, n, off, res.peak, res.lower_bound);
	if (!why && (plan(SVOD_PLAN_TLSF, ev, n, off2, &best) ||
		     memcmp(off, off2, sizeof(*off) * n)))
		why = "not deterministic";
	if (!why && plan(SVOD_PLAN_BEST, ev, n, off2, &best) != -E2BIG)
		why = "best accepted more allocs than SVOD_PLAN_BEST_MAX_ALLOCS";
	if (why) {
		printf("# plan 1M-event trace: %s\n", why);
		rc = 1;
	}
	printf("%s - plan %u-event trace: tlsf valid and deterministic, best refused (E2BIG)\n",
	       why ? "not ok" : "ok", n);
	free(off2);
	free(off);
	free(ev);
	return rc;
}

/* Reads a trace file (alloc ID SIZE [ALIGN] / free ID) into @ev. Return: events or -1. */
static long read_trace(const char *path, struct svod_plan_event *ev, uint32_t max)
{
	unsigned long long a, b, c;
	FILE *f = fopen(path, "r");
	char line[256], op[8];
	uint32_t n = 0;
	int k;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		k = sscanf(line, "%7s %lli %lli %lli", op, &a, &b, &c);
		if (k < 2 || op[0] == '#')
			continue;
		if (n == max) {
			fclose(f);
			return -1;
		}
		ev[n] = (struct svod_plan_event){ .id = (uint32_t)a };
		if (!strcmp(op, "alloc")) {
			ev[n].op = SVOD_PLAN_ALLOC;
			ev[n].size = b;
			ev[n].align = k == 4 ? c : 0;
		} else {
			ev[n].op = SVOD_PLAN_FREE;
		}
		n++;
	}
	fclose(f);
	return n;
}

static int bench_trace(const char *path)
{
	struct svod_plan_event *ev = calloc(SVOD_PLAN_MAX_EVENTS, sizeof(*ev));
	u64 *off = calloc(SVOD_PLAN_MAX_EVENTS, sizeof(*off));
	long n = ev && off ? read_trace(path, ev, SVOD_PLAN_MAX_EVENTS) : -1;

	if (n < 0) {
		fprintf(stderr, "plan_bench: cannot read %s\n", path);
		return 1;
	}
	printf("%.0f\n", rate(SVOD_PLAN_TLSF, ev, (uint32_t)n, off));
	free(off);
	free(ev);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--trace"))
		return bench_trace(argv[2]);
	if (argc == 2 && !strcmp(argv[1], "--check"))
		return check();
	if (argc != 1) {
		fprintf(stderr, "usage: plan_bench [--check | --trace FILE]\n");
		return 2;
	}
	return bench();
}
