// SPDX-License-Identifier: GPL-2.0
/*
 * t_argorder: argument errors come first, for every ioctl, whatever the
 * state (Documentation/uapi.rst, "Conventions").
 *
 * Each command gets every pure argument error it has (a flags bit outside
 * its mask, a nonzero pad, a zero size, a bad align, element size or plan
 * parameter, a struct shorter than the first layout, a longer struct with a
 * nonzero tail) in states where the same call without the error fails on
 * the state: no tier with that id (ENOENT) and a never-issued handle
 * (ESTALE); a freed handle (ESTALE); a full tier (ENOSPC); a file at
 * max_bytes (EDQUOT); a file at max_handles (EMFILE); a handle and a tier of
 * an unbound device (ENODEV); and, where the kernel has fail-nth, a kernel
 * allocation that fails (ENOMEM). Each state's case first shows the
 * state is real (the valid call fails on it); then each command's case
 * requires the documented argument errno (EINVAL, or E2BIG for the tail)
 * from every error, and the state's usage unchanged afterwards. WAIT is
 * left out: it reads no state but the file's timeline (t_async has its
 * argument errors). IMPORT's calls name a dma-buf exported at the start
 * from an allocation that stays live throughout.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "common.h"
#include "tap.h"

#define NR_CMDS		10
#define NR_STATES	7
#define NR_MEM_CMDS	3
/* Per state: the state, each command, usage unchanged; then the ENOMEM ones. */
#define NR_CASES	(NR_STATES * (NR_CMDS + 2) + 2 * NR_MEM_CMDS)

#define BUF_SIZE	512
#define DBG		"/sys/kernel/debug"

/* What the calls of one state use. */
struct state {
	const char *name;
	int fd;
	uint32_t tier;		/* for ALLOC */
	uint64_t handle;	/* for the commands that take one */
	int want_alloc;		/* the valid ALLOC's errno in this state */
	int want_handle;	/* the valid RESOLVE's errno in this state */
};

static uint8_t xbuf[64];
/* A dma-buf of the first tier, for IMPORT (-1 if EXPORT failed). */
static int import_fd = -1;
static uint64_t plan_off;
static struct svod_plan_event plan_ev = { .op = SVOD_PLAN_ALLOC, .id = 1, .size = 256 };

struct cmd {
	const char *name;
	unsigned int nr, dir;
	size_t size, ver0;
	void (*fill)(void *buf, const struct state *s);
};

static void fill_query(void *buf, const struct state *s)
{
	(void)s;
	memset(buf, 0, sizeof(struct svod_query));
}

static void fill_alloc(void *buf, const struct state *s)
{
	*(struct svod_alloc *)buf = (struct svod_alloc){ .tier = s->tier, .size = 4096 };
}

static void fill_free(void *buf, const struct state *s)
{
	*(struct svod_free *)buf = (struct svod_free){ .handle = s->handle };
}

static void fill_resolve(void *buf, const struct state *s)
{
	*(struct svod_resolve *)buf = (struct svod_resolve){ .handle = s->handle };
}

static void fill_xfer(void *buf, const struct state *s)
{
	*(struct svod_xfer *)buf = (struct svod_xfer){
		.handle = s->handle, .user_ptr = (uintptr_t)xbuf,
		.length = sizeof(xbuf), .flags = SVOD_XFER_CPU,
	};
}

static void fill_plan(void *buf, const struct state *s)
{
	(void)s;
	*(struct svod_plan *)buf = (struct svod_plan){
		.arena_size = 1 << 20, .block_size = 256, .lv2_cnt = 32,
		.nr_events = 1, .events_ptr = (uintptr_t)&plan_ev,
		.offsets_ptr = (uintptr_t)&plan_off,
	};
}

static void fill_map_offset(void *buf, const struct state *s)
{
	*(struct svod_map_offset *)buf = (struct svod_map_offset){ .handle = s->handle };
}

static void fill_export(void *buf, const struct state *s)
{
	*(struct svod_export *)buf = (struct svod_export){ .handle = s->handle };
}

static void fill_import(void *buf, const struct state *s)
{
	(void)s;
	*(struct svod_import *)buf = (struct svod_import){ .fd = import_fd };
}

#define CMD(n, c, st, v, f) { n, _IOC_NR(SVOD_IOCTL_##c), _IOC_DIR(SVOD_IOCTL_##c), \
			      sizeof(struct st), v, f }
static const struct cmd cmds[NR_CMDS] = {
	CMD("query", QUERY, svod_query, SVOD_QUERY_SIZE_VER0, fill_query),
	CMD("alloc", ALLOC, svod_alloc, SVOD_ALLOC_SIZE_VER0, fill_alloc),
	CMD("free", FREE, svod_free, SVOD_FREE_SIZE_VER0, fill_free),
	CMD("resolve", RESOLVE, svod_resolve, SVOD_RESOLVE_SIZE_VER0, fill_resolve),
	CMD("stage", STAGE, svod_xfer, SVOD_XFER_SIZE_VER0, fill_xfer),
	CMD("read", READ, svod_xfer, SVOD_XFER_SIZE_VER0, fill_xfer),
	CMD("plan", PLAN, svod_plan, SVOD_PLAN_SIZE_VER0, fill_plan),
	CMD("map_offset", MAP_OFFSET, svod_map_offset, SVOD_MAP_OFFSET_SIZE_VER0,
	    fill_map_offset),
	CMD("export", EXPORT, svod_export, SVOD_EXPORT_SIZE_VER0, fill_export),
	CMD("import", IMPORT, svod_import, SVOD_IMPORT_SIZE_VER0, fill_import),
};

/* One argument error: a field set to a value, or the struct's size changed. */
struct bad {
	int cmd;		/* index in cmds[] */
	const char *what;
	size_t off, width;	/* width 0: no field changed */
	uint64_t val;
	int size;		/* 0, SHORT or TAIL */
	int want;
};

#define SHORT	1	/* 8 bytes less than the first layout */
#define TAIL	2	/* 8 bytes more than the driver's struct, nonzero */

#define F(c, st, fld, v, w) { c, #fld "=" #v, offsetof(struct st, fld), \
			      sizeof(((struct st *)0)->fld), v, 0, w }
static const struct bad bads[] = {
	F(0, svod_query, flags, 1, -EINVAL),
	F(0, svod_query, pad, 1, -EINVAL),
	F(0, svod_query, tier_info_size, 8, -EINVAL),
	F(0, svod_query, tier_info_size, 156, -EINVAL),
	F(0, svod_query, tier_info_size, 4104, -EINVAL),
	F(1, svod_alloc, flags, 0x80000000, -EINVAL),
	F(1, svod_alloc, size, 0, -EINVAL),
	F(1, svod_alloc, align, 3, -EINVAL),
	F(1, svod_alloc, align, 0x8000000000000001ULL, -EINVAL),
	F(2, svod_free, flags, 0x80000000, -EINVAL),
	F(2, svod_free, pad, 1, -EINVAL),
	F(3, svod_resolve, flags, 1, -EINVAL),
	F(4, svod_xfer, flags, 0x80000000, -EINVAL),
	F(4, svod_xfer, flags, 3, -EINVAL),
	F(4, svod_xfer, flags, 7, -EINVAL),
	F(4, svod_xfer, flags, 8, -EINVAL),
	F(4, svod_xfer, pad, 1, -EINVAL),
	F(4, svod_xfer, pad2, 1, -EINVAL),
	F(4, svod_xfer, resume, sizeof(xbuf) + 1, -EINVAL),
	F(5, svod_xfer, flags, 0x80000000, -EINVAL),
	F(5, svod_xfer, flags, 3, -EINVAL),
	F(5, svod_xfer, pad, 1, -EINVAL),
	F(5, svod_xfer, flags, SVOD_XFER_FENCE_FD | SVOD_XFER_CPU, -EINVAL),
	F(5, svod_xfer, resume, ~0ULL, -EINVAL),
	F(6, svod_plan, flags, 1, -EINVAL),
	F(6, svod_plan, pad2, 1, -EINVAL),
	F(6, svod_plan, arena_size, 0, -EINVAL),
	F(6, svod_plan, block_size, 0, -EINVAL),
	F(6, svod_plan, lv2_cnt, 257, -EINVAL),
	F(6, svod_plan, strategy, 7, -EINVAL),
	F(6, svod_plan, pad3, 1, -EINVAL),
	F(6, svod_plan, event_size, 16, -EINVAL),
	F(6, svod_plan, event_size, 28, -EINVAL),
	F(6, svod_plan, event_size, 4104, -EINVAL),
	F(7, svod_map_offset, flags, 1, -EINVAL),
	F(7, svod_map_offset, pad, 1, -EINVAL),
	F(8, svod_export, flags, 2, -EINVAL),
	F(8, svod_export, flags, 0x80000000, -EINVAL),
	F(9, svod_import, flags, 1, -EINVAL),
	F(9, svod_import, flags, 0x80000000, -EINVAL),
};

/* The valid call of @c in @s, with @b applied (NULL: none). */
static int call(int c, const struct state *s, const struct bad *b)
{
	static uint8_t buf[BUF_SIZE];
	const struct cmd *cm = &cmds[c];
	size_t size = cm->size;
	uint64_t v;

	memset(buf, 0, sizeof(buf));
	cm->fill(buf, s);
	if (b && b->width) {
		v = b->val;
		if (b->width == 4) {
			uint32_t v32 = (uint32_t)v;

			memcpy(buf + b->off, &v32, 4);
		} else {
			memcpy(buf + b->off, &v, 8);
		}
	}
	if (b && b->size == SHORT)
		size = cm->ver0 - 8;
	if (b && b->size == TAIL) {
		buf[size] = 1;
		size += 8;
	}
	return svod_ioctl(s->fd, _IOC(cm->dir, SVOD_IOCTL_MAGIC, cm->nr, size), buf);
}

/* Every argument error of command @c in @s; the misses go to @why. */
static int bad_calls(int c, const struct state *s, char *why, size_t len)
{
	static const struct bad sized[] = {
		{ 0, "short", 0, 0, 0, SHORT, -EINVAL },
		{ 0, "tail", 0, 0, 0, TAIL, -E2BIG },
	};
	size_t i, n = 0;
	int ret, miss = 0;

	why[0] = '\0';
	for (i = 0; i < ARRAY_SIZE(bads) + ARRAY_SIZE(sized); i++) {
		const struct bad *b = i < ARRAY_SIZE(bads) ? &bads[i] : &sized[i - ARRAY_SIZE(bads)];

		if (i < ARRAY_SIZE(bads) && b->cmd != c)
			continue;
		ret = call(c, s, b);
		if (ret == b->want)
			continue;
		miss++;
		if (n + 48 < len)
			n += (size_t)snprintf(why + n, len - n, " %s:%s", b->what, ht_err(ret));
	}
	return miss;
}

static int usage(const struct state *s, uint32_t tier, uint64_t *free_bytes, uint32_t *live)
{
	return ht_tier_usage(s->fd, tier, free_bytes, live);
}

/*
 * One state: the valid ALLOC and RESOLVE fail as the state says, every
 * command's argument errors win over it, and nothing changed.
 */
static void run_state(const struct state *s, uint32_t watch)
{
	struct svod_resolve r;
	struct svod_alloc a;
	uint64_t fb0 = 0, fb1 = 0;
	uint32_t l0 = 0, l1 = 0;
	char why[256];
	int ra, rr, c, miss, u0, u1;

	ra = svod_alloc(s->fd, s->tier, 4096, 0, &a);
	if (!ra)
		svod_free(s->fd, a.handle);
	rr = svod_resolve(s->fd, s->handle, &r);
	tap_ok(ra == s->want_alloc && rr == s->want_handle,
	       "%s: the state is real (valid alloc %s, want %s; valid resolve %s, want %s)",
	       s->name, ht_err(ra), ht_err(s->want_alloc), ht_err(rr), ht_err(s->want_handle));
	u0 = usage(s, watch, &fb0, &l0);
	for (c = 0; c < NR_CMDS; c++) {
		miss = bad_calls(c, s, why, sizeof(why));
		tap_ok(!miss, "%s: %s argument errors first (%d wrong:%s)", s->name,
		       cmds[c].name, miss, why);
	}
	u1 = usage(s, watch, &fb1, &l1);
	rr = svod_resolve(s->fd, s->handle, &r);
	tap_ok(!u0 && !u1 && fb0 == fb1 && l0 == l1 && rr == s->want_handle,
	       "%s: nothing changed (%llu free, %u live before; %llu, %u after; resolve %s)",
	       s->name, (unsigned long long)fb0, l0, (unsigned long long)fb1, l1, ht_err(rr));
}

/* fail-nth = @n for this thread (0 clears); -1 if it cannot be set. */
static int nth(int nfd, unsigned int n)
{
	char b[16];
	int len = snprintf(b, sizeof(b), "%u", n);

	return pwrite(nfd, b, (size_t)len, 0) == len ? 0 : -1;
}

/*
 * Memory failure: for QUERY, ALLOC and PLAN, find the fail-nth step at which
 * the valid call fails with ENOMEM (the user copies before it count as steps
 * too), then make each argument error at that same step.
 */
static void run_nomem(const struct state *s)
{
	static const int mcmd[NR_MEM_CMDS] = { 0, 1, 6 };
	struct svod_alloc *a;
	unsigned int n, step;
	char why[256];
	int nfd, i, ret, miss;
	uint8_t buf[BUF_SIZE];

	nfd = open("/proc/thread-self/fail-nth", O_RDWR);
	if (nfd < 0 || access(DBG "/failslab", F_OK) || ht_fail_nth_quiet(false)) {
		for (i = 0; i < 2 * NR_MEM_CMDS; i++)
			tap_skip("no failslab or fail-nth in this kernel", "no_memory case %d", i);
		if (nfd >= 0)
			close(nfd);
		return;
	}
	for (i = 0; i < NR_MEM_CMDS; i++) {
		step = 0;
		ret = 0;
		for (n = 1; n <= 16 && !step; n++) {
			nth(nfd, n);
			memset(buf, 0, sizeof(buf));
			cmds[mcmd[i]].fill(buf, s);
			ret = svod_ioctl(s->fd, _IOC(cmds[mcmd[i]].dir, SVOD_IOCTL_MAGIC,
						    cmds[mcmd[i]].nr, cmds[mcmd[i]].size), buf);
			nth(nfd, 0);
			if (ret == -ENOMEM)
				step = n;
			a = (struct svod_alloc *)buf;
			if (!ret && mcmd[i] == 1)
				svod_free(s->fd, a->handle);
			if (!ret)
				break;
		}
		tap_ok(step != 0, "no_memory: valid %s fails with ENOMEM at fail-nth step %u (last %s)",
		       cmds[mcmd[i]].name, step, ht_err(ret));
		/* Each argument error with the same step pending. */
		miss = 0;
		why[0] = '\0';
		if (step) {
			size_t k, len = 0;

			for (k = 0; k < ARRAY_SIZE(bads); k++) {
				if (bads[k].cmd != mcmd[i])
					continue;
				nth(nfd, step);
				ret = call(mcmd[i], s, &bads[k]);
				nth(nfd, 0);
				if (ret == bads[k].want)
					continue;
				miss++;
				if (len + 48 < sizeof(why))
					len += (size_t)snprintf(why + len, sizeof(why) - len, " %s:%s",
								bads[k].what, ht_err(ret));
			}
		}
		tap_ok(step && !miss, "no_memory: %s argument errors first (%d wrong:%s)",
		       cmds[mcmd[i]].name, miss, why);
	}
	ht_fail_nth_restore(false);
	close(nfd);
}

static void skip_state(const char *name, const char *why)
{
	int i;

	for (i = 0; i < NR_CMDS + 2; i++)
		tap_skip(why, "%s case %d", name, i);
}

int main(void)
{
	char bdfs[4][SVOD_NAME_LEN];
	struct svod_tier_info t0, t1;
	struct svod_alloc a, ex, held[64];
	struct state s;
	uint64_t old;
	int fd, n, nh, ret;

	tap_plan(NR_CASES);
	fd = ht_open();
	if (fd < 0 || ht_first_tier(fd, &t0)) {
		tap_diag("no device");
		return tap_done();
	}

	/* What IMPORT takes: a dma-buf of another allocation, live throughout. */
	if (svod_alloc_flags(fd, t0.id, 4096, 0, SVOD_ALLOC_MAPPABLE, &ex) ||
	    svod_export(fd, ex.handle, 0, &import_fd, NULL))
		tap_diag("no dma-buf to import: IMPORT's states are not shown real");

	/* A file with a live allocation: the calls would work. */
	s = (struct state){ "fresh", fd, t0.id, 0, 0, 0 };
	if (svod_alloc_flags(fd, t0.id, 4096, 0, SVOD_ALLOC_MAPPABLE, &a)) {
		skip_state(s.name, "cannot allocate");
	} else {
		s.handle = a.handle;
		run_state(&s, t0.id);
		svod_free(fd, a.handle);
	}

	/* No tier has the id; the handle was never issued. */
	s = (struct state){ "no_such_tier", fd, 0xfffffff0u, 0, -ENOENT, -ESTALE };
	run_state(&s, t0.id);

	/* A freed handle. */
	s = (struct state){ "stale_handle", fd, t0.id, 0, 0, -ESTALE };
	if (svod_alloc(fd, t0.id, 4096, 0, &a)) {
		skip_state(s.name, "cannot allocate");
	} else {
		svod_free(fd, a.handle);
		s.handle = a.handle;
		run_state(&s, t0.id);
	}

	/* The tier is full: its largest free span taken until none is left. */
	s = (struct state){ "tier_full", ht_open(), t0.id, 0, -ENOSPC, 0 };
	for (nh = 0; nh < (int)ARRAY_SIZE(held); nh++) {
		struct svod_tier_info t;

		if (svod_tier_by_id(fd, t0.id, &t) || !t.largest_free ||
		    svod_alloc(s.fd, t0.id, t.largest_free, 0, &held[nh]))
			break;
	}
	s.handle = nh ? held[0].handle : 0;
	if (s.fd < 0 || !nh)
		skip_state(s.name, "cannot fill the tier");
	else
		run_state(&s, t0.id);
	if (s.fd >= 0)
		close(s.fd);
	ht_wait_free(fd, t0.id, t0.free_bytes, 2000);

	/* The file holds max_bytes in the tier. */
	s = (struct state){ "max_bytes", ht_open(), t0.id, 0, -EDQUOT, 0 };
	if (s.fd < 0 || svod_param_read("max_bytes", &old) || svod_param_write("max_bytes", 4096)) {
		skip_state(s.name, "max_bytes not writable");
	} else {
		if (svod_alloc(s.fd, t0.id, 4096, 0, &a))
			skip_state(s.name, "cannot allocate");
		else {
			s.handle = a.handle;
			run_state(&s, t0.id);
		}
		svod_param_write("max_bytes", old);
	}
	if (s.fd >= 0)
		close(s.fd);

	/* The file holds max_handles (1) handles. */
	s = (struct state){ "max_handles", -1, t0.id, 0, -EMFILE, 0 };
	if (svod_param_read("max_handles", &old) || svod_param_write("max_handles", 1)) {
		skip_state(s.name, "max_handles not writable");
	} else {
		s.fd = ht_open();
		svod_param_write("max_handles", old);
		if (s.fd < 0 || svod_alloc(s.fd, t0.id, 4096, 0, &a)) {
			skip_state(s.name, "cannot allocate");
		} else {
			s.handle = a.handle;
			run_state(&s, t0.id);
		}
	}
	if (s.fd >= 0)
		close(s.fd);

	s = (struct state){ "no_memory", fd, t0.id, 0, 0, 0 };
	if (svod_alloc(fd, t0.id, 4096, 0, &a) == 0)
		s.handle = a.handle;
	run_nomem(&s);
	if (s.handle)
		svod_free(fd, s.handle);

	/*
	 * A device unbound under a live allocation: its tier is gone (listed
	 * until the allocation is freed), the handle is ENODEV.
	 */
	n = svod_devices(bdfs, 4);
	s = (struct state){ "unbound", fd, 0, 0, -ENODEV, -ENODEV };
	if (n < 1 || svod_tier_by_device(fd, bdfs[n - 1], &t1) ||
	    svod_alloc(fd, t1.id, 4096, 0, &a)) {
		skip_state(s.name, "no device to unbind");
	} else {
		s.tier = t1.id;
		s.handle = a.handle;
		ret = svod_driver_bind(bdfs[n - 1], 0);
		if (ret) {
			tap_diag("unbind %s: %s", bdfs[n - 1], ht_err(ret));
			skip_state(s.name, "cannot unbind");
		} else {
			run_state(&s, t0.id);
		}
		svod_free(fd, a.handle);
		if (!ret)
			tap_diag("rebind %s: %s", bdfs[n - 1], ht_err(svod_driver_bind(bdfs[n - 1], 1)));
	}

	if (import_fd >= 0) {
		close(import_fd);
		svod_free(fd, ex.handle);
	}
	close(fd);
	return tap_done();
}
