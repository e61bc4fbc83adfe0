// SPDX-License-Identifier: GPL-2.0
/*
 * svodctl plan: plan an arena for a trace file, with the userspace build of
 * the planner core (default) or through SVOD_IOCTL_PLAN (--ioctl).
 *
 * Trace format (Documentation/planner.rst), one event per line; blank lines
 * and lines starting with '#' are ignored; numbers are decimal or 0x hex:
 *   alloc ID SIZE [ALIGN]
 *   free ID
 *
 * --solve SECONDS: after the plan, libsvod's branch and bound searches for
 * a lower peak (svod_plan_solve(), at most SECONDS, stopping at the lower
 * bound); its plan is printed, with "strategy solve".
 *
 * Output: one line per alloc, "alloc EVENT ID OFFSET", then "strategy S",
 * "peak N", "lower_bound N" and "ratio R" (peak / lower bound). On failure:
 * the allocs placed before it, then "error ERRNO event K" and exit status 1.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "svodctl.h"
#include "../../driver/core/plan.h"

/**
 * struct plan_trace - events read from a trace file
 * @ev: events
 * @nr: events in @ev
 * @cap: room in @ev
 */
struct plan_trace {
	struct svod_plan_event *ev;
	uint32_t nr;
	uint32_t cap;
};

static int plan_parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!s || *s == '-')
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 0);
	if (errno || end == s || *end)
		return -EINVAL;
	return 0;
}

static int plan_parse_u32(const char *s, uint32_t *v)
{
	uint64_t x;

	if (plan_parse_u64(s, &x) || x > UINT32_MAX)
		return -EINVAL;
	*v = (uint32_t)x;
	return 0;
}

static int plan_trace_push(struct plan_trace *t, const struct svod_plan_event *e)
{
	if (t->nr == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 1024;
		void *p;

		if (cap > SVOD_PLAN_MAX_EVENTS)
			return -E2BIG;
		p = realloc(t->ev, sizeof(*t->ev) * cap);
		if (!p)
			return -ENOMEM;
		t->ev = p;
		t->cap = cap;
	}
	t->ev[t->nr++] = *e;
	return 0;
}

/* One line: 0, 1 for a line without an event, or -EINVAL. */
static int plan_parse_line(char *line, struct svod_plan_event *e)
{
	uint64_t size, align = 0;
	char *tok[5];
	int n = 0;

	line += strspn(line, " \t");
	if (line[0] == '#')
		return 1;
	for (char *s = strtok(line, " \t\r\n"); s; s = strtok(NULL, " \t\r\n")) {
		if (n == 5)
			return -EINVAL;
		tok[n++] = s;
	}
	if (!n)
		return 1;
	*e = (struct svod_plan_event){};
	if (!strcmp(tok[0], "alloc") && (n == 3 || n == 4)) {
		e->op = SVOD_PLAN_ALLOC;
		if (plan_parse_u32(tok[1], &e->id) || plan_parse_u64(tok[2], &size))
			return -EINVAL;
		if (n == 4 && plan_parse_u64(tok[3], &align))
			return -EINVAL;
		e->size = size;
		e->align = align;
		return 0;
	}
	if (!strcmp(tok[0], "free") && n == 2) {
		e->op = SVOD_PLAN_FREE;
		return plan_parse_u32(tok[1], &e->id);
	}
	return -EINVAL;
}

static int plan_read_trace(const char *path, struct plan_trace *t)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	struct svod_plan_event e;
	unsigned long lineno = 0;
	char line[256];
	int err = 0;

	if (!f) {
		err = -errno;
		fprintf(stderr, "svodctl plan: %s: %s\n", path, strerror(errno));
		return err;
	}
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		err = plan_parse_line(line, &e);
		if (err < 0) {
			fprintf(stderr, "svodctl plan: %s:%lu: %s\n", path, lineno,
				"expected 'alloc ID SIZE [ALIGN]' or 'free ID'");
			break;
		}
		err = err ? 0 : plan_trace_push(t, &e);
		if (err) {
			fprintf(stderr, "svodctl plan: %s: more than %u events\n", path,
				(unsigned int)SVOD_PLAN_MAX_EVENTS);
			break;
		}
	}
	if (f != stdin)
		fclose(f);
	return err;
}

static int plan_via_ioctl(const struct svod_plan_params *p, const struct plan_trace *t,
			  __u64 *offsets, struct svod_plan_result *res)
{
	struct svod_plan arg = {
		.arena_size = p->arena_size,
		.block_size = (uint32_t)p->block_size,
		.lv2_cnt = p->lv2_cnt,
		.strategy = p->strategy,
		.nr_events = t->nr,
		.events_ptr = (uintptr_t)t->ev,
		.offsets_ptr = (uintptr_t)offsets,
	};
	int fd, err;

	fd = svod_open();
	if (fd < 0)
		return fd;
	err = svod_plan(fd, &arg);
	svod_close(fd);
	*res = (struct svod_plan_result){
		.peak = arg.peak,
		.lower_bound = arg.lower_bound,
		.failed_event = arg.failed_event,
		.used = p->strategy,
	};
	return err;
}

static int plan_parse_secs(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	if (errno || end == s || *end || !(*v >= 0) || *v > 1e6)
		return -EINVAL;
	return 0;
}

/*
 * --solve: libsvod's branch and bound (svod_plan_solve()), seeded with the
 * plan just made, for @secs seconds at most; @offsets and @res get its plan.
 */
static int plan_solve(const struct svod_plan_params *p, const struct plan_trace *t,
		      double secs, __u64 *offsets, struct svod_plan_result *res)
{
	const struct svod_solve_params sp = {
		.block_size = p->block_size, .arena_size = p->arena_size, .seconds = secs,
	};
	uint64_t *out = calloc(t->nr ? t->nr : 1, sizeof(*out));
	struct svod_solve_result sr;
	int err;

	if (!out)
		return -ENOMEM;
	err = svod_plan_solve(t->ev, t->nr, &sp, (const uint64_t *)offsets, out, &sr);
	if (!err) {
		memcpy(offsets, out, sizeof(*out) * t->nr);
		res->peak = sr.peak;
		res->lower_bound = sr.lower_bound;
	} else {
		res->failed_event = sr.failed_event;
	}
	free(out);
	return err;
}

static void plan_usage(void)
{
	fprintf(stderr,
		"usage: svodctl plan [--strategy tlsf|best] [--arena BYTES] [--block-size BYTES]\n"
		"                    [--lv2 N] [--ioctl] [--solve SECONDS] TRACEFILE|-\n"
		"  --solve: then search (branch and bound) for a lower peak for at most\n"
		"           SECONDS, stopping at the lower bound; prints strategy solve\n"
		"  trace lines: 'alloc ID SIZE [ALIGN]' or 'free ID'; '#' starts a comment\n"
		"  defaults: --strategy tlsf --arena 0x10000000000 --block-size 256 --lv2 32\n");
}

/**
 * svodctl_cmd_plan() - `svodctl plan`
 * @argc: arguments, argv[0] being "plan"
 * @argv: arguments
 *
 * Context: the main thread of svodctl.
 * Return: 0 on success, 1 if the plan failed, 2 for a usage or input error.
 */
int svodctl_cmd_plan(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "strategy", required_argument, NULL, 's' },
		{ "arena", required_argument, NULL, 'a' },
		{ "block-size", required_argument, NULL, 'b' },
		{ "lv2", required_argument, NULL, 'l' },
		{ "ioctl", no_argument, NULL, 'k' },
		{ "solve", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct svod_plan_params p = {
		.arena_size = 1ULL << 40,
		.block_size = 256,
		.lv2_cnt = 32,
		.strategy = SVOD_PLAN_TLSF,
	};
	struct svod_plan_result res;
	struct plan_trace t = {};
	uint64_t num;
	__u64 *offsets = NULL;
	int use_ioctl = 0, c, err, ret = 2;
	double solve_secs = -1;
	uint32_t i;

	optind = 1;
	while ((c = getopt_long(argc, argv, "s:a:b:l:kS:h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (!strcmp(optarg, "tlsf"))
				p.strategy = SVOD_PLAN_TLSF;
			else if (!strcmp(optarg, "best"))
				p.strategy = SVOD_PLAN_BEST;
			else
				goto usage;
			break;
		case 'a':
			if (plan_parse_u64(optarg, &num))
				goto usage;
			p.arena_size = num;
			break;
		case 'b':
			if (plan_parse_u64(optarg, &num) || num > UINT32_MAX)
				goto usage;
			p.block_size = num;
			break;
		case 'l':
			if (plan_parse_u32(optarg, &p.lv2_cnt))
				goto usage;
			break;
		case 'k':
			use_ioctl = 1;
			break;
		case 'S':
			if (plan_parse_secs(optarg, &solve_secs))
				goto usage;
			break;
		default:
			goto usage;
		}
	}
	if (optind != argc - 1)
		goto usage;
	if (plan_read_trace(argv[optind], &t))
		goto free_trace;

	offsets = calloc(t.nr ? t.nr : 1, sizeof(*offsets));
	if (!offsets) {
		fprintf(stderr, "svodctl plan: out of memory\n");
		goto free_trace;
	}
	if (use_ioctl)
		err = plan_via_ioctl(&p, &t, offsets, &res);
	else
		err = svod_plan_run(&p, t.ev, t.nr, offsets, &res, GFP_KERNEL);
	if (!err && solve_secs >= 0)
		err = plan_solve(&p, &t, solve_secs, offsets, &res);

	for (i = 0; i < t.nr; i++)
		if (t.ev[i].op == SVOD_PLAN_ALLOC && offsets[i] != SVOD_PLAN_NO_OFFSET)
			printf("alloc %u %u %llu\n", i, t.ev[i].id,
			       (unsigned long long)offsets[i]);
	if (err) {
		printf("error %s event %d\n", svod_errno_name(err),
		       res.failed_event == UINT32_MAX ? -1 : (int)res.failed_event);
		printf("peak %llu\n", (unsigned long long)res.peak);
		fprintf(stderr, "svodctl plan: %s\n", svod_strerror(err));
		ret = 1;
		goto free_offsets;
	}
	printf("strategy %s\n", solve_secs >= 0 ? "solve" : res.used ? "best" : "tlsf");
	printf("peak %llu\n", (unsigned long long)res.peak);
	printf("lower_bound %llu\n", (unsigned long long)res.lower_bound);
	printf("ratio %.4f\n", res.lower_bound ? (double)res.peak / (double)res.lower_bound : 1.0);
	ret = 0;

free_offsets:
	free(offsets);
free_trace:
	free(t.ev);
	return ret;

usage:
	plan_usage();
	return 2;
}
