// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * plan_kbench: the kernel planner's quality table, before and after in
 * one run. The same generators as plan_bench, run through svod_plan_run()
 * (this tree's driver/core/plan.c) and svod_plan_run_old() (the plan.c of
 * the revision named by the Makefile's OLD_REV, built with its symbols
 * renamed): known-optimum instances (peak/optimum; the bench's 60, then
 * its 120 held out), network traces (peak/lower bound: the model-like
 * traces) and the time to plan 1M events. Then one `ok`/`not ok` line for
 * the targets of the current code (issue 49): median at most 1.10 of the
 * optimum, never above TLSF, on the network traces at least as often at
 * the bound as before and never further above it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gen.h"
#include "rect.h"
#include "../../driver/core/plan.h"

#define KB_BIG		1048576U
#define KB_HARD		60
#define KB_TRACES	32

int svod_plan_run_old(const struct svod_plan_params *p, const struct svod_plan_event *ev,
		      u32 n, u64 *offsets, struct svod_plan_result *res, gfp_t gfp);

typedef int (*run_fn)(const struct svod_plan_params *, const struct svod_plan_event *, u32,
		      u64 *, struct svod_plan_result *, gfp_t);

static const run_fn runs[2] = { svod_plan_run_old, svod_plan_run };

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *r, int n)
{
	qsort(r, n, sizeof(*r), dbl_cmp);
	return n % 2 ? r[n / 2] : (r[n / 2 - 1] + r[n / 2]) / 2;
}

static const struct {
	uint64_t granule;
	unsigned int pinwheel_pct;
} kinds[] = { { 256, 0 }, { 1, 0 }, { 256, 30 }, { 1, 30 } };

static int run(int v, uint32_t strategy, uint64_t block, const struct svod_plan_event *ev,
	       uint32_t n, u64 *off, struct svod_plan_result *res)
{
	struct svod_plan_params p = { 1ULL << 40, block, 32, strategy };

	if (runs[v](&p, ev, n, off, res, GFP_KERNEL)) {
		fprintf(stderr, "plan_kbench: plan failed\n");
		exit(1);
	}
	return 0;
}

int main(void)
{
	struct svod_plan_event *ev = calloc(KB_BIG, sizeof(*ev));
	u64 *off = calloc(KB_BIG, sizeof(*off));
	double r[3][KB_HARD], held[2][2 * KB_HARD], worst[3], t, secs[2];
	int above[2] = {}, fb[2] = {}, at_lb[2] = {}, at_lb_small[2] = {}, i, v, k;
	double slow[2] = {}, net_worst[2], med;
	struct svod_plan_result res, tl;
	uint64_t opt;
	uint32_t n, nb;

	if (!ev || !off)
		return 1;
	printf("plan-kernel: %-44s %12s %12s\n", "", "before", "after");
	for (v = 0; v < 3; v++)
		worst[v] = 0;
	for (i = 0; i < KB_HARD; i++) {
		k = i % ARRAY_SIZE(kinds);
		nb = 100 + (uint32_t)(plan_gen_rand(&(uint64_t){ i + 1 }) % 901);
		n = plan_gen_rect(500 + i, nb, kinds[k].granule, kinds[k].pinwheel_pct, ev, &opt);
		run(1, SVOD_PLAN_TLSF, 1, ev, n, off, &tl);
		r[2][i] = (double)tl.peak / opt;
		worst[2] = r[2][i] > worst[2] ? r[2][i] : worst[2];
		for (v = 0; v < 2; v++) {
			t = now();
			run(v, SVOD_PLAN_BEST, 1, ev, n, off, &res);
			t = now() - t;
			slow[v] = t > slow[v] ? t : slow[v];
			r[v][i] = (double)res.peak / opt;
			worst[v] = r[v][i] > worst[v] ? r[v][i] : worst[v];
			above[v] += res.peak > tl.peak;
		}
	}
	printf("plan-kernel: %-44s %12.3f %12.3f\n", "known-optimum (60), tlsf median/optimum",
	       median(r[2], KB_HARD), median(r[2], KB_HARD));
	med = median(r[1], KB_HARD);
	printf("plan-kernel: %-44s %12.3f %12.3f\n", "known-optimum (60), best median/optimum",
	       median(r[0], KB_HARD), med);
	printf("plan-kernel: %-44s %12.3f %12.3f\n", "known-optimum (60), best worst/optimum",
	       worst[0], worst[1]);
	printf("plan-kernel: %-44s %12d %12d\n", "known-optimum (60), best above tlsf", above[0],
	       above[1]);
	printf("plan-kernel: %-44s %12.3f %12.3f\n", "known-optimum (60), best slowest, seconds",
	       slow[0], slow[1]);

	for (v = 0; v < 2; v++) {
		for (i = 0; i < 2 * KB_HARD; i++) {
			k = i % ARRAY_SIZE(kinds);
			nb = 100 + (uint32_t)(plan_gen_rand(&(uint64_t){ i + 61 }) % 901);
			n = plan_gen_rect(560 + i, nb, kinds[k].granule, kinds[k].pinwheel_pct, ev,
					  &opt);
			run(v, SVOD_PLAN_BEST, 1, ev, n, off, &res);
			held[v][i] = (double)res.peak / opt;
		}
	}
	printf("plan-kernel: %-44s %12.3f %12.3f\n", "held out (120, seeds 560-679), best median",
	       median(held[0], 2 * KB_HARD), median(held[1], 2 * KB_HARD));

	for (v = 0; v < 2; v++)
		worst[v] = 0;
	for (i = 0; i < KB_TRACES; i++) {
		n = plan_gen_network(100 + i, 4000, ev);
		for (v = 0; v < 2; v++) {
			run(v, SVOD_PLAN_BEST, 256, ev, n, off, &res);
			t = (double)res.peak / res.lower_bound;
			worst[v] = t > worst[v] ? t : worst[v];
			at_lb[v] += res.peak == res.lower_bound;
			fb[v] += res.used == SVOD_PLAN_USED_TLSF;
		}
	}
	printf("plan-kernel: %-44s %12.4f %12.4f\n", "network traces (32x4000), best worst/bound",
	       worst[0], worst[1]);
	net_worst[0] = worst[0];
	net_worst[1] = worst[1];
	printf("plan-kernel: %-44s %9d/32 %9d/32\n", "network traces, best at the bound", at_lb[0],
	       at_lb[1]);
	printf("plan-kernel: %-44s %9d/32 %9d/32\n", "network traces, best fell back to tlsf",
	       fb[0], fb[1]);
	for (i = 0; i < 4; i++) {
		n = plan_gen_network(300 + i, 1200, ev);
		for (v = 0; v < 2; v++) {
			run(v, SVOD_PLAN_BEST, 256, ev, n, off, &res);
			t = (double)res.peak / res.lower_bound;
			at_lb_small[v] += res.peak == res.lower_bound;
		}
	}
	printf("plan-kernel: %-44s %10d/4 %10d/4\n", "network traces (4x1200), best at the bound",
	       at_lb_small[0], at_lb_small[1]);

	n = plan_gen_network(3, KB_BIG, ev);
	for (v = 0; v < 2; v++) {
		secs[v] = 1e9;
		for (i = 0; i < 3; i++) {
			t = now();
			run(v, SVOD_PLAN_BEST, 256, ev, n, off, &res);
			t = now() - t;
			secs[v] = t < secs[v] ? t : secs[v];
		}
	}
	printf("plan-kernel: %-44s %12.3f %12.3f\n", "best, 1M-event network trace, seconds",
	       secs[0], secs[1]);
	free(off);
	free(ev);
	k = med <= 1.10 && !above[1] && at_lb[1] >= at_lb[0] && at_lb_small[1] >= at_lb_small[0] &&
	    net_worst[1] <= net_worst[0];
	printf("%s - plan kernel best: median %.3f of the optimum (at most 1.10), never above "
	       "tlsf, network traces at the bound %d/32 (before %d/32)\n", k ? "ok" : "not ok", med,
	       at_lb[1], at_lb[0]);
	return !k;
}
