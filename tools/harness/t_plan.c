// SPDX-License-Identifier: GPL-2.0
/*
 * t_plan: SVOD_IOCTL_PLAN in the guest. The kernel's plans must equal the
 * userspace build of the same core (linked in, see t_plan.mk) on generated
 * network schedules and on random traces with bad events, for both
 * strategies; every error path returns its documented errno and failing
 * event; event counts above the max_plan_events module parameter are
 * refused with E2BIG (the parameter is decimal: "010" is ten, "0x10" is
 * refused); SIGKILL ends a long plan promptly.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "tap.h"
#include "check.h"
#include "gen.h"
#include "../../driver/core/plan.h"
#include "../../driver/core/tlsf.h"

#define NR_TESTS	40
/* Events of the big traces: the default max_plan_events. */
#define PLAN_BIG	1048576U
#define NET_TRACES	3
#define RAND_TRACES	6
#define RAND_EVENTS	600

static int fd = -1;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Both paths on the same input; 0 if they agree in every output. */
static int plan_both(const struct svod_plan_params *p, const struct svod_plan_event *ev,
		     uint32_t n, int *err_out, struct svod_plan *out)
{
	__u64 *ko = calloc(n ? n : 1, sizeof(*ko)), *uo = calloc(n ? n : 1, sizeof(*uo));
	struct svod_plan arg = {
		.arena_size = p->arena_size,
		.block_size = (uint32_t)p->block_size,
		.lv2_cnt = p->lv2_cnt,
		.strategy = p->strategy,
		.nr_events = n,
		.failed_event = 0xdeadbeef,
		.events_ptr = (uintptr_t)ev,
		.offsets_ptr = (uintptr_t)ko,
	};
	struct svod_plan_result res;
	int kerr, uerr, diff = 0;
	uint32_t i;

	if (!ko || !uo) {
		tap_diag("out of memory");
		free(ko);
		free(uo);
		return -1;
	}
	kerr = svod_plan(fd, &arg);
	uerr = svod_plan_run(p, ev, n, uo, &res, GFP_KERNEL);
	if (kerr != uerr) {
		tap_diag("errno: kernel %s, userspace %s", svod_errno_name(kerr),
			 svod_errno_name(uerr));
		diff = 1;
	} else if (!kerr || kerr == -EINVAL || kerr == -ENOSPC) {
		if (arg.peak != res.peak || arg.lower_bound != res.lower_bound ||
		    arg.failed_event != res.failed_event ||
		    (!kerr && arg.strategy_used != res.used)) {
			tap_diag("peak %llu/%llu bound %llu/%llu failed %u/%u (kernel/user)",
				 (unsigned long long)arg.peak, (unsigned long long)res.peak,
				 (unsigned long long)arg.lower_bound,
				 (unsigned long long)res.lower_bound, arg.failed_event,
				 res.failed_event);
			diff = 1;
		}
		for (i = 0; i < n && !diff; i++) {
			if (ko[i] != uo[i]) {
				tap_diag("event %u: kernel offset %llu, userspace %llu", i,
					 (unsigned long long)ko[i], (unsigned long long)uo[i]);
				diff = 1;
			}
		}
	}
	if (!diff && !kerr) {
		const char *why = plan_check(p->arena_size, p->block_size, ev, n, ko, arg.peak,
					     arg.lower_bound);

		if (why) {
			tap_diag("invalid plan: %s", why);
			diff = 1;
		}
	}
	if (err_out)
		*err_out = kerr;
	if (out)
		*out = arg;
	free(ko);
	free(uo);
	return diff;
}

/* A random trace with some bad events (see tools/plan/difftest.py). */
static uint32_t rand_trace(uint64_t *s, struct svod_plan_event *ev, uint32_t n)
{
	static const uint64_t aligns[] = { 0, 0, 1, 2, 3, 8, 64, 256, 1000, 4096 };
	uint32_t live[RAND_EVENTS], nr_live = 0, id = 0, i;

	for (i = 0; i < n; i++) {
		uint64_t r = ht_rand(s);

		if (nr_live && r % 10 < 4) {
			uint32_t k = (r >> 8) % nr_live;

			ev[i] = (struct svod_plan_event){ .op = SVOD_PLAN_FREE, .id = live[k] };
			live[k] = live[--nr_live];
		} else if ((r >> 20) % 1024 == 0) {
			ev[i] = (struct svod_plan_event){ .op = SVOD_PLAN_FREE, .id = id + 5 };
		} else {
			ev[i] = (struct svod_plan_event){
				.op = SVOD_PLAN_ALLOC, .id = id,
				.size = r % 16 == 0 ? 0 : (r >> 8) % (r % 3 ? 4096 : 1 << 18),
				.align = aligns[(r >> 40) % ARRAY_SIZE(aligns)],
			};
			live[nr_live++] = id++;
		}
	}
	return n;
}

/* One raw ioctl; returns -errno and the failing event. */
static int plan_raw(struct svod_plan *arg)
{
	arg->failed_event = 0xdeadbeef;
	return svod_plan(fd, arg);
}

static void error_paths(void)
{
	struct svod_plan_event ev[3] = {
		{ .op = SVOD_PLAN_ALLOC, .id = 1, .size = 256 },
		{ .op = SVOD_PLAN_FREE, .id = 1 },
		{ .op = SVOD_PLAN_ALLOC, .id = 2, .size = 256 },
	};
	__u64 off[3];
	struct svod_plan ok = {
		.arena_size = 4096, .block_size = 256, .lv2_cnt = 32,
		.nr_events = 3, .events_ptr = (uintptr_t)ev, .offsets_ptr = (uintptr_t)off,
	};
	struct svod_plan a;
	int err;

	a = ok;
	err = plan_raw(&a);
	tap_ok(!err && off[0] == 0 && off[1] == SVOD_PLAN_NO_OFFSET && off[2] == 0 &&
	       a.peak == 256 && a.lower_bound == 256 && a.failed_event == ~0U,
	       "plan: small plan: offsets 0 - 0, peak 256, bound 256, failed_event ~0");

	a = ok;
	a.flags = 1;
	tap_errno(plan_raw(&a), -EINVAL, "plan: nonzero flags -> EINVAL");
	a = ok;
	a.block_size = 0;
	err = plan_raw(&a);
	tap_ok(err == -EINVAL && a.failed_event == ~0U, "plan: block_size 0 -> EINVAL, no event");
	a = ok;
	a.arena_size = 0;
	tap_errno(plan_raw(&a), -EINVAL, "plan: arena_size 0 -> EINVAL");
	a = ok;
	a.lv2_cnt = SVOD_TLSF_MAX_LV2_CNT + 1;
	tap_errno(plan_raw(&a), -EINVAL, "plan: lv2_cnt %u -> EINVAL", a.lv2_cnt);
	a = ok;
	a.strategy = 2;
	tap_errno(plan_raw(&a), -EINVAL, "plan: unknown strategy -> EINVAL");

	a = ok;
	ev[1].op = 7;
	err = plan_raw(&a);
	tap_ok(err == -EINVAL && a.failed_event == 1, "plan: unknown op -> EINVAL at event 1");
	ev[1] = (struct svod_plan_event){ .op = SVOD_PLAN_FREE, .id = 9 };
	err = plan_raw(&a);
	tap_ok(err == -EINVAL && a.failed_event == 1, "plan: free of unknown id -> EINVAL at 1");
	ev[1] = (struct svod_plan_event){ .op = SVOD_PLAN_FREE, .id = 1, .size = 1 };
	err = plan_raw(&a);
	tap_ok(err == -EINVAL && a.failed_event == 1, "plan: free with size -> EINVAL at 1");
	ev[1] = (struct svod_plan_event){ .op = SVOD_PLAN_FREE, .id = 1 };
	ev[2] = (struct svod_plan_event){ .op = SVOD_PLAN_FREE, .id = 1 };
	err = plan_raw(&a);
	tap_ok(err == -EINVAL && a.failed_event == 2, "plan: double free -> EINVAL at 2");
	ev[1] = (struct svod_plan_event){ .op = SVOD_PLAN_ALLOC, .id = 1, .size = 256 };
	err = plan_raw(&a);
	tap_ok(err == -EINVAL && a.failed_event == 1, "plan: alloc of a live id -> EINVAL at 1");
	ev[1] = (struct svod_plan_event){ .op = SVOD_PLAN_ALLOC, .id = 2, .size = ~0ULL,
					  .align = 2 };
	err = plan_raw(&a);
	tap_ok(err == -EINVAL && a.failed_event == 1, "plan: size + align overflow -> EINVAL at 1");
	ev[1] = (struct svod_plan_event){ .op = SVOD_PLAN_ALLOC, .id = 2, .size = 4000 };
	err = plan_raw(&a);
	tap_ok(err == -ENOSPC && a.failed_event == 1 && off[0] == 0 &&
	       off[1] == SVOD_PLAN_NO_OFFSET, "plan: no space -> ENOSPC at 1, event 0 placed");
	/* Neither plan fits: BEST reports the alloc it placed highest (id 1 above id 2). */
	a.strategy = SVOD_PLAN_BEST;
	err = plan_raw(&a);
	tap_ok(err == -ENOSPC && a.failed_event == 0, "plan: best, no space -> ENOSPC at 0");

	a = ok;
	a.events_ptr = 8;
	tap_errno(plan_raw(&a), -EFAULT, "plan: bad events_ptr -> EFAULT");
	a = ok;
	a.offsets_ptr = 8;
	tap_errno(plan_raw(&a), -EFAULT, "plan: bad offsets_ptr -> EFAULT");
	a = ok;
	a.nr_events = 0;
	err = plan_raw(&a);
	tap_ok(!err && a.peak == 0 && a.lower_bound == 0, "plan: no events -> 0, peak 0");
}

static void event_limit(void)
{
	struct svod_plan_event ev[11] = {};
	__u64 off[11];
	struct svod_plan a = {
		.arena_size = 1 << 20, .block_size = 256, .lv2_cnt = 32,
		.events_ptr = (uintptr_t)ev, .offsets_ptr = (uintptr_t)off,
	};
	uint64_t max;
	int i, ret;

	for (i = 0; i < 11; i++)
		ev[i] = (struct svod_plan_event){ .op = SVOD_PLAN_ALLOC, .id = i, .size = 256 };
	if (svod_param_read("max_plan_events", &max)) {
		tap_skip("no max_plan_events parameter", "plan: max_plan_events + 1 -> E2BIG");
		tap_skip("no max_plan_events parameter", "plan: max_plan_events refuses 0x10");
		tap_skip("no max_plan_events parameter", "plan: max_plan_events takes 010");
		tap_skip("no max_plan_events parameter", "plan: max_plan_events 010: 11 events -> E2BIG");
		tap_skip("no max_plan_events parameter", "plan: max_plan_events 010: 10 events -> 0");
		return;
	}
	a.nr_events = (uint32_t)max + 1;
	tap_errno(plan_raw(&a), -E2BIG, "plan: max_plan_events (%llu) + 1 -> E2BIG",
		  (unsigned long long)max);
	tap_errno(ht_write_file(SVOD_SYSFS_PARAMS "/max_plan_events", "0x10\n"), -EINVAL,
		  "plan: max_plan_events refuses 0x10");
	/* param_set_uint()'s base 0 read "010" as 8: 10 events would be E2BIG. */
	ret = ht_write_file(SVOD_SYSFS_PARAMS "/max_plan_events", "010\n");
	tap_errno(ret, 0, "plan: max_plan_events takes 010");
	if (ret) {
		tap_skip("cannot write max_plan_events", "plan: max_plan_events 010: 11 events -> E2BIG");
		tap_skip("cannot write max_plan_events", "plan: max_plan_events 010: 10 events -> 0");
		svod_param_write("max_plan_events", max);
		return;
	}
	a.nr_events = 11;
	tap_errno(plan_raw(&a), -E2BIG, "plan: max_plan_events 010: 11 events -> E2BIG");
	a.nr_events = 10;
	tap_errno(plan_raw(&a), 0, "plan: max_plan_events 010: 10 events -> 0");
	if (svod_param_write("max_plan_events", max))
		tap_diag("could not restore max_plan_events to %llu", (unsigned long long)max);
}

/* BEST plans a 1M-event network (max_plan_events) in the kernel, no E2BIG. */
/* Returns the CPU seconds the BEST plan took: fatal_signal()'s yardstick. */
static double best_big(struct svod_plan_event *ev, uint32_t cap)
{
	struct svod_plan_params p = {
		.arena_size = 1ULL << 40, .block_size = 256, .lv2_cnt = 32,
		.strategy = SVOD_PLAN_TLSF,
	};
	uint32_t n = plan_gen_network(77, cap, ev);
	__u64 *off = calloc(n, sizeof(*off));
	struct svod_plan out, a = {
		.arena_size = 1ULL << 40, .block_size = 256, .lv2_cnt = 32, .nr_events = n,
		.strategy = SVOD_PLAN_BEST,
		.events_ptr = (uintptr_t)ev, .offsets_ptr = (uintptr_t)off,
	};
	const char *why = "out of memory";
	double t = now(), cpu = thread_cpu();
	int diff, err = -ENOMEM;

	if (off) {
		err = svod_plan(fd, &a);
		t = now() - t;
		cpu = thread_cpu() - cpu;
		why = err ? svod_errno_name(err) :
		      plan_check(a.arena_size, 256, ev, n, off, a.peak, a.lower_bound);
	}
	tap_ok(!why && a.strategy_used != SVOD_PLAN_USED_TLSF,
	       "plan: best, %u events: %s, strategy_used %u, peak/bound %.4f, %.0f events/s", n,
	       why ? why : "valid", a.strategy_used, (double)a.peak / (double)a.lower_bound,
	       n / t);
	free(off);
	diff = plan_both(&p, ev, n, &err, &out);
	tap_ok(!diff && !err, "plan: tlsf, %u-event network equals userspace (peak %llu)", n,
	       (unsigned long long)out.peak);
	return off && !why ? cpu : 0;
}

/*
 * strategy_used says whose offsets came back: the skyline plan where it
 * beats TLSF, TLSF when asked for; pad2 must be zero.
 */
static void strategy_used(void)
{
	static const struct svod_plan_event ev[] = {
		{ SVOD_PLAN_ALLOC, 1, 1024, 0 }, { SVOD_PLAN_ALLOC, 2, 256, 0 },
		{ SVOD_PLAN_FREE, 1, 0, 0 }, { SVOD_PLAN_ALLOC, 3, 2048, 0 },
		{ SVOD_PLAN_FREE, 2, 0, 0 }, { SVOD_PLAN_ALLOC, 4, 1024, 0 },
		{ SVOD_PLAN_FREE, 3, 0, 0 }, { SVOD_PLAN_FREE, 4, 0, 0 },
	};
	__u64 off[ARRAY_SIZE(ev)];
	struct svod_plan a = {
		.arena_size = 1 << 20, .block_size = 256, .lv2_cnt = 32,
		.strategy = SVOD_PLAN_BEST, .nr_events = ARRAY_SIZE(ev),
		.events_ptr = (uintptr_t)ev, .offsets_ptr = (uintptr_t)off,
		.strategy_used = 77,
	};
	int eb, et;
	__u64 best_peak;
	__u32 best_used;

	eb = svod_plan(fd, &a);
	best_peak = a.peak;
	best_used = a.strategy_used;
	a.strategy = SVOD_PLAN_TLSF;
	et = svod_plan(fd, &a);
	tap_ok(!eb && !et && best_used == SVOD_PLAN_USED_SKY && best_peak == 3072 &&
	       a.strategy_used == SVOD_PLAN_USED_TLSF && a.peak == 3328,
	       "plan: strategy_used: best %u (peak %llu), tlsf %u (peak %llu)", best_used,
	       (unsigned long long)best_peak, a.strategy_used, (unsigned long long)a.peak);
	a.pad2 = 1;
	tap_errno(svod_plan(fd, &a), -EINVAL, "plan: pad2 nonzero -> EINVAL");
}

static int read_file(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t got;

	if (!f)
		return -1;
	got = fread(buf, 1, len - 1, f);
	buf[got] = 0;
	fclose(f);
	return (int)got;
}

/* `svodctl plan --ioctl` prints what `svodctl plan` (userspace) prints. */
static void svodctl_plan(struct svod_plan_event *ev)
{
	static char a[1 << 16], b[1 << 16];
	uint32_t n = plan_gen_network(79, 400, ev), i;
	FILE *f = fopen("/tmp/t_plan.trace", "w");
	int ra, rb, la, lb;

	if (!f) {
		tap_ok(0, "plan: svodctl plan --ioctl (cannot write the trace)");
		return;
	}
	fprintf(f, "# t_plan network 79\n");
	for (i = 0; i < n; i++) {
		if (ev[i].op == SVOD_PLAN_ALLOC)
			fprintf(f, "alloc %u %llu %llu\n", ev[i].id, (unsigned long long)ev[i].size,
				(unsigned long long)ev[i].align);
		else
			fprintf(f, "free %u\n", ev[i].id);
	}
	fclose(f);
	ra = system("svodctl plan --ioctl /tmp/t_plan.trace >/tmp/t_plan.k");
	rb = system("svodctl plan /tmp/t_plan.trace >/tmp/t_plan.u");
	la = read_file("/tmp/t_plan.k", a, sizeof(a));
	lb = read_file("/tmp/t_plan.u", b, sizeof(b));
	tap_ok(!ra && !rb && la > 0 && la == lb && !strcmp(a, b),
	       "plan: svodctl plan --ioctl prints what svodctl plan prints (%u events, %d bytes)",
	       n, la);
}

/*
 * The planner checks for fatal signals: SIGKILL ends a long BEST plan. The
 * child is killed 200 ms in; the CPU time it used in all must stay under
 * half of what a whole BEST plan of the same size took in this run
 * (@yard, best_big()): a planner that ignored the signal would run on to
 * the end. CPU time, not the clock: a loaded host does not count.
 */
static void fatal_signal(struct svod_plan_event *ev, double yard)
{
	uint32_t n = plan_gen_network(78, PLAN_BIG, ev);
	struct rusage ru;
	double cpu;
	pid_t pid;
	int st;

	pid = fork();
	if (pid == 0) {
		__u64 *off = calloc(n, sizeof(*off));
		struct svod_plan a = {
			.arena_size = 1ULL << 40, .block_size = 256, .lv2_cnt = 32,
			.strategy = SVOD_PLAN_BEST, .nr_events = n,
			.events_ptr = (uintptr_t)ev, .offsets_ptr = (uintptr_t)off,
		};

		_exit(off && !svod_plan(fd, &a) ? 0 : 1);
	}
	if (pid < 0) {
		tap_ok(0, "plan: SIGKILL ends a long best plan (fork failed)");
		return;
	}
	usleep(200000);
	kill(pid, SIGKILL);
	if (wait4(pid, &st, 0, &ru) != pid) {
		tap_ok(0, "plan: SIGKILL ends a long best plan (wait4: %s)", strerror(errno));
		return;
	}
	cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	      ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		tap_skip("the plan finished within 200 ms", "plan: SIGKILL ends a long best plan");
	else if (yard < 0.8)
		tap_skip("a whole best plan took under 0.8 s of CPU: too short to tell",
			 "plan: SIGKILL ends a long best plan");
	else
		tap_ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL && cpu < yard / 2,
		       "plan: SIGKILL ends a long best plan (%u events) after %.0f ms of CPU, "
		       "a whole one %.0f ms", n, cpu * 1000, yard * 1000);
}

int main(void)
{
	uint32_t cap = PLAN_BIG, n, t;
	double yard;
	struct svod_plan_event *ev = calloc(cap, sizeof(*ev));
	uint64_t seed, s;
	struct svod_plan out;
	int err, s_err;

	tap_plan(NR_TESTS);
	fd = ht_open();
	if (fd < 0 || !ev) {
		tap_diag("cannot open the svod device: %s", svod_strerror(fd));
		return tap_done();
	}
	seed = ht_seed("t_plan");
	s = seed;

	for (t = 0; t < NET_TRACES; t++) {
		struct svod_plan_params p = {
			.arena_size = 1ULL << 40, .block_size = 256, .lv2_cnt = 32,
		};
		struct svod_plan tl;

		n = plan_gen_network(seed + t, 2000, ev);
		err = plan_both(&p, ev, n, &s_err, &tl);
		tap_ok(!err && !s_err, "plan: tlsf network %u (%u events) equals userspace", t, n);
		p.strategy = SVOD_PLAN_BEST;
		err = plan_both(&p, ev, n, &s_err, &out);
		tap_ok(!err && !s_err && out.peak <= tl.peak && out.peak >= out.lower_bound,
		       "plan: best network %u equals userspace, peak %llu <= tlsf %llu, bound %llu",
		       t, (unsigned long long)out.peak, (unsigned long long)tl.peak,
		       (unsigned long long)out.lower_bound);
		tap_diag("bench: plan network %u: tlsf peak/bound %.3f, best %.3f", t,
			 (double)tl.peak / (double)tl.lower_bound,
			 (double)out.peak / (double)out.lower_bound);
	}
	for (t = 0; t < RAND_TRACES; t++) {
		static const uint32_t lv2s[] = { 0, 1, 5, 32, 64, 256 };
		struct svod_plan_params p = {
			.arena_size = t & 1 ? 1 << 20 : 1ULL << 36,
			.block_size = t % 3 ? 256 : 1,
			.lv2_cnt = lv2s[t % ARRAY_SIZE(lv2s)],
			.strategy = t >= RAND_TRACES / 2,
		};

		n = rand_trace(&s, ev, RAND_EVENTS);
		err = plan_both(&p, ev, n, &s_err, &out);
		tap_ok(!err, "plan: random trace %u (%s, lv2 %u, block %llu): %s at %d, as user",
		       t, p.strategy ? "best" : "tlsf", p.lv2_cnt,
		       (unsigned long long)p.block_size, s_err ? svod_errno_name(s_err) : "ok",
		       s_err ? (int)out.failed_event : -1);
	}
	error_paths();
	event_limit();
	strategy_used();
	yard = best_big(ev, cap);
	fatal_signal(ev, yard);
	svodctl_plan(ev);

	free(ev);
	svod_close(fd);
	return tap_done();
}
