// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * svodctl plan: plan an arena for a trace file, with the userspace build of
 * the planner core (default) or through SVOD_IOCTL_PLAN (--ioctl).
 *
 * Trace format (Documentation/planner.rst), one event per line; blank lines
 * and lines starting with '#' are ignored; numbers are svod_parse_size()'s
 * (decimal or 0x hex, K..E or KiB..EiB units):
 *   alloc ID SIZE [ALIGN]
 *   free ID
 *
 * --solve SECONDS: after the plan, libsvodplan's branch and bound searches for
 * a lower peak (svod_plan_solve(), at most SECONDS of CPU time per search
 * thread, stopping at the lower bound); its plan is printed, with
 * "strategy solve".
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

#include "libsvodplan.h"
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
	return s ? svod_parse_size(s, v) : -EINVAL;
}

/*
 * An option's number, at most @max; a refusal says why, as
 * svodctl_parse_u64() does (this file also links without svodctl.c, into
 * tools/plan's plan).
 */
static int plan_option_u64(const char *opt, const char *s, uint64_t max, uint64_t *v)
{
	int ret = svod_parse_size(s, v);

	if (!ret && *v > max)
		ret = -ERANGE;
	if (ret)
		fprintf(stderr, "svodctl: plan: %s: %s \"%s\" is %s: write %s\n",
			svod_errno_name(ret), opt, s,
			ret == -EINVAL ? "not a number" : max == UINT64_MAX ?
			"beyond 2^64 - 1" : "beyond 2^32 - 1", svod_size_forms());
	return ret;
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

/* Bytes read from a trace file at a time. */
#define PLAN_READ_CHUNK	(1U << 20)

/*
 * A number token of @len bytes: plain decimal digits without a leading zero
 * are converted here; anything else (0x hex, units, signs, junk) goes
 * through plan_parse_u64(), so both accept exactly svod_parse_size()'s
 * grammar.
 */
static int plan_token_u64(const char *s, size_t len, uint64_t *v)
{
	char tmp[72];
	uint64_t x = 0;
	size_t i;

	if (len && len < 20 && (s[0] != '0' || len == 1)) {
		for (i = 0; i < len && s[i] >= '0' && s[i] <= '9'; i++)
			x = x * 10 + (uint64_t)(s[i] - '0');
		if (i == len) {
			*v = x;
			return 0;
		}
	}
	if (len >= sizeof(tmp))
		return -EINVAL;
	memcpy(tmp, s, len);
	tmp[len] = '\0';
	return plan_parse_u64(tmp, v);
}

static int plan_token_u32(const char *s, size_t len, uint32_t *v)
{
	uint64_t x;

	if (plan_token_u64(s, len, &x) || x > UINT32_MAX)
		return -EINVAL;
	*v = (uint32_t)x;
	return 0;
}

static int plan_is_sep(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/*
 * One line of @len bytes (no newline): 0, 1 for a line without an event, or
 * -EINVAL. Tokens are separated by spaces, tabs and carriage returns; a
 * line whose first token starts with '#' is a comment.
 */
static int plan_parse_line(const char *line, size_t len, struct svod_plan_event *e)
{
	const char *tok[5];
	size_t tlen[5], i = 0;
	uint64_t size, align = 0;
	int n = 0;

	while (i < len && (line[i] == ' ' || line[i] == '\t'))
		i++;
	if (i < len && line[i] == '#')
		return 1;
	while (i < len) {
		while (i < len && plan_is_sep(line[i]))
			i++;
		if (i == len)
			break;
		if (n == 5)
			return -EINVAL;
		tok[n] = line + i;
		while (i < len && !plan_is_sep(line[i]))
			i++;
		tlen[n] = (size_t)(line + i - tok[n]);
		n++;
	}
	if (!n)
		return 1;
	*e = (struct svod_plan_event){};
	if (tlen[0] == 5 && !memcmp(tok[0], "alloc", 5) && (n == 3 || n == 4)) {
		e->op = SVOD_PLAN_ALLOC;
		if (plan_token_u32(tok[1], tlen[1], &e->id) ||
		    plan_token_u64(tok[2], tlen[2], &size))
			return -EINVAL;
		if (n == 4 && plan_token_u64(tok[3], tlen[3], &align))
			return -EINVAL;
		e->size = size;
		e->align = align;
		return 0;
	}
	if (tlen[0] == 4 && !memcmp(tok[0], "free", 4) && n == 2) {
		e->op = SVOD_PLAN_FREE;
		return plan_token_u32(tok[1], tlen[1], &e->id);
	}
	return -EINVAL;
}

/*
 * Parse every complete line of buf[0..*len) (and the last, unterminated
 * one when @eof) into @t. Moves an incomplete last line to the front of
 * @buf and leaves its length in *@len. Return: 0, -EINVAL (a bad line,
 * reported) or -E2BIG.
 */
static int plan_parse_chunk(const char *path, char *buf, size_t *len, int eof,
			    unsigned long *lineno, struct plan_trace *t)
{
	struct svod_plan_event e;
	size_t pos = 0, end;
	char *nl;
	int err;

	while (pos < *len) {
		nl = memchr(buf + pos, '\n', *len - pos);
		if (!nl && !eof)
			break;
		end = nl ? (size_t)(nl - buf) : *len;
		++*lineno;
		err = plan_parse_line(buf + pos, end - pos, &e);
		if (err < 0) {
			fprintf(stderr, "svodctl plan: %s:%lu: expected 'alloc ID SIZE [ALIGN]' "
				"or 'free ID', each number %s\n", path, *lineno, svod_size_forms());
			return err;
		}
		if (!err && plan_trace_push(t, &e)) {
			fprintf(stderr, "svodctl plan: %s: more than %u events\n", path,
				(unsigned int)SVOD_PLAN_MAX_EVENTS);
			return -E2BIG;
		}
		pos = nl ? end + 1 : *len;
	}
	memmove(buf, buf + pos, *len - pos);
	*len -= pos;
	return 0;
}

/* Reads the trace a megabyte at a time; lines may have any length. */
static int plan_read_trace(const char *path, struct plan_trace *t)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	size_t len = 0, cap = PLAN_READ_CHUNK, got;
	unsigned long lineno = 0;
	char *buf, *p;
	int err = 0, eof = 0;

	if (!f) {
		err = -errno;
		fprintf(stderr, "svodctl plan: %s: %s\n", path, strerror(errno));
		return err;
	}
	buf = malloc(cap);
	while (buf && !err && !eof) {
		if (cap - len < PLAN_READ_CHUNK / 2) {
			/* One line longer than what is left: make room for it. */
			p = realloc(buf, cap * 2);
			if (!p)
				break;
			buf = p;
			cap *= 2;
		}
		got = fread(buf + len, 1, cap - len, f);
		len += got;
		eof = got == 0;
		err = plan_parse_chunk(path, buf, &len, eof, &lineno, t);
	}
	if (!buf || (!err && !eof)) {
		fprintf(stderr, "svodctl plan: out of memory\n");
		err = -ENOMEM;
	}
	free(buf);
	if (f != stdin)
		fclose(f);
	return err;
}

/* Decimal digits of @v written backwards ending at @end; returns the start. */
static char *plan_utoa(char *end, uint64_t v)
{
	do {
		*--end = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return end;
}

/* "alloc EVENT ID OFFSET" per placed ALLOC, formatted by hand in big writes. */
static void plan_print_allocs(const struct plan_trace *t, const __u64 *offsets)
{
	static char out[1 << 16];
	char num[24], *d;
	size_t n = 0;
	uint32_t i;

	for (i = 0; i < t->nr; i++) {
		if (t->ev[i].op != SVOD_PLAN_ALLOC || offsets[i] == SVOD_PLAN_NO_OFFSET)
			continue;
		if (n > sizeof(out) - 80) {
			fwrite(out, 1, n, stdout);
			n = 0;
		}
		memcpy(out + n, "alloc ", 6);
		n += 6;
		d = plan_utoa(num + sizeof(num), i);
		memcpy(out + n, d, (size_t)(num + sizeof(num) - d));
		n += (size_t)(num + sizeof(num) - d);
		out[n++] = ' ';
		d = plan_utoa(num + sizeof(num), t->ev[i].id);
		memcpy(out + n, d, (size_t)(num + sizeof(num) - d));
		n += (size_t)(num + sizeof(num) - d);
		out[n++] = ' ';
		d = plan_utoa(num + sizeof(num), offsets[i]);
		memcpy(out + n, d, (size_t)(num + sizeof(num) - d));
		n += (size_t)(num + sizeof(num) - d);
		out[n++] = '\n';
	}
	fwrite(out, 1, n, stdout);
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
 * --solve: libsvodplan's branch and bound (svod_plan_solve()), seeded with the
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

static void plan_usage(FILE *out)
{
	fprintf(out,
		"usage: svodctl plan [--strategy tlsf|best] [--arena BYTES] [--block-size BYTES]\n"
		"                    [--lv2 N] [--ioctl] [--solve SECONDS] TRACEFILE|-\n"
		"  --solve: then search (branch and bound) for a lower peak for at most\n"
		"           SECONDS of CPU time per search, stopping at the lower bound;\n"
		"           prints strategy solve\n"
		"           (two searches, one per thread, when two CPUs are online)\n"
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

	optind = 0;
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
			if (plan_option_u64("--arena", optarg, UINT64_MAX, &num))
				goto usage;
			p.arena_size = num;
			break;
		case 'b':
			if (plan_option_u64("--block-size", optarg, UINT32_MAX, &num))
				goto usage;
			p.block_size = num;
			break;
		case 'l':
			if (plan_option_u64("--lv2", optarg, UINT32_MAX, &num))
				goto usage;
			p.lv2_cnt = (uint32_t)num;
			break;
		case 'k':
			use_ioctl = 1;
			break;
		case 'h':
			plan_usage(stdout);
			return 0;
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

	plan_print_allocs(&t, offsets);
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
	plan_usage(stderr);
	return 2;
}
