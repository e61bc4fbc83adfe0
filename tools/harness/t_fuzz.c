// SPDX-License-Identifier: GPL-2.0
/*
 * t_fuzz: an ioctl fuzzer for a bounded time, and QUERY's snapshot.
 *
 * Phase 1 (5 s): one thread replaces the second device's tier set in a loop
 * (two sets: its default tier; two tiers "fzA" and "fzB", each with an owner,
 * group and mode drawn at random, and now and then the same two tiers again
 * with another access: a commit that keeps them) while another
 * runs QUERY with a larger array than needed, prefilled with a sentinel.
 * Every reply must be one snapshot: each entry below the returned count
 * written, and the second device's tiers that are not gone exactly one of
 * the two sets (or none, while it is rebound).
 *
 * Phase 2 (SVOD_FUZZ_SECONDS, default 30): four threads issue every ioctl
 * with valid-looking and garbage arguments (wrong sizes and directions,
 * unknown commands and flags, nonzero pads, huge and overflowing offsets and
 * lengths, NULL, unmapped, read-only and concurrently unmapped buffers,
 * stale, forged and foreign handles, random PLAN events; one thread's file
 * is opened by root without CAP_DAC_OVERRIDE, so the tiers' random access
 * refuses it now and then) on files that a
 * chaos thread closes, dup2()s over and reopens under them; forked children
 * stage in a loop and are SIGKILLed mid-call; the second device is
 * re-declared, unbound and rebound meanwhile. Invariants, one TAP line each:
 * only documented errnos (EBADF only on a closed descriptor); a handle of
 * one file never resolves in another; READ returns what STAGE wrote while
 * the handle lives; no call but transfers and PLANs of many events (work of
 * the size asked) uses more than 1 s of its thread's CPU time (the calling
 * thread's CLOCK_THREAD_CPUTIME_ID, which does not run while the thread waits
 * for a core, so a loaded host does not count: the wall-clock times are
 * printed per ioctl as figures, not judged; that no call waits behind a
 * transfer is t_unbind_load's ordering check); every
 * declaration answers 0 or EBUSY, and one changing only the access 0; once
 * every file is closed each tier's
 * free bytes are back to their start. The seed is printed; SVOD_FUZZ_SEED
 * replays a run (thread interleavings differ, the argument streams do not).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "tap.h"

#define NR_CASES	9

#define NR_FUZZERS	4
#define NR_FILES	6
#define MAX_HANDLES	16
#define NR_KINDS	9	/* ioctl numbers 0..7, and the rest */
#define CALL_CPU_MS	1000	/* generous for a KASAN, lockdep guest */
#define BIG		(1u << 20)
#define SENTINEL	0xa5a5a5a5u

static char bdf0[SVOD_NAME_LEN], bdf1[SVOD_NAME_LEN], orig1[4096];
static char def1[SVOD_NAME_LEN];
static int files[NR_FILES];
static int stop_flag;
static uint8_t *ro_page, *gap, *victim;
static size_t page_size;
static unsigned int nr_ids;
static uint32_t ids[32];

static double clock_ms(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static double now_ms(void)
{
	return clock_ms(CLOCK_MONOTONIC);
}

static int stopping(void)
{
	return __atomic_load_n(&stop_flag, __ATOMIC_ACQUIRE);
}

/* Phase 1 and the declaring thread of phase 2. */
struct decl_state {
	unsigned int commits, busy, bad, rebinds, unbind_fail, access_kept;
	int unbind;	/* also unbind and rebind now and then */
	uint64_t seed;
};

/* Tiers fzA and fzB, with an owner, group and mode each drawn from @rng. */
static void set_b_with_access(uint64_t *rng, char *buf, size_t len)
{
	static const unsigned int who[] = { 0, 4242, 5000 };
	static const unsigned int modes[] = { 0666, 0660, 0606, 0600, 0066, 0 };
	unsigned int o[2], g[2], m[2], t;

	for (t = 0; t < 2; t++) {
		o[t] = who[ht_rand(rng) % ARRAY_SIZE(who)];
		g[t] = who[ht_rand(rng) % ARRAY_SIZE(who)];
		m[t] = modes[ht_rand(rng) % ARRAY_SIZE(modes)];
	}
	snprintf(buf, len,
		 "fzA bar=2 offset=0 size=0x800000 owner=%u group=%u mode=%o;"
		 "fzB bar=2 offset=0x800000 size=0x800000 owner=%u group=%u mode=%o",
		 o[0], g[0], m[0], o[1], g[1], m[1]);
}

static void *declare(void *arg)
{
	struct decl_state *d = arg;
	unsigned int i = 0;
	char text[512];
	int ret;

	while (!stopping()) {
		if (d->unbind && ht_rand(&d->seed) % 8 == 0) {
			ret = svod_driver_bind(bdf1, 0);
			d->unbind_fail += ret != 0;
			usleep((useconds_t)(ht_rand(&d->seed) % 50000));
			ret = svod_driver_bind(bdf1, 1);
			d->unbind_fail += ret != 0;
			d->rebinds++;
			continue;
		}
		set_b_with_access(&d->seed, text, sizeof(text));
		ret = svod_tiers_write(bdf1, i++ & 1 ? orig1 : text);
		d->commits += !ret;
		d->busy += ret == -EBUSY;
		d->bad += ret && ret != -EBUSY;
		if (ret)
			tap_diag("declare: %s", ht_err(ret));
		if (ret || !(i & 1) || ht_rand(&d->seed) % 2)
			continue;
		/* The same tiers, another access: kept, so never EBUSY. */
		set_b_with_access(&d->seed, text, sizeof(text));
		ret = svod_tiers_write(bdf1, text);
		d->access_kept += !ret;
		d->bad += ret != 0;
		if (ret)
			tap_diag("declare, access only: %s", ht_err(ret));
	}
	svod_tiers_write(bdf1, orig1);
	return NULL;
}

/* 0: the device's present tiers are {def1}, {fzA, fzB} or none. */
static int one_set(const struct svod_tier_info *t, uint32_t n)
{
	unsigned int def = 0, a = 0, b = 0, other = 0;
	uint32_t i;

	for (i = 0; i < n; i++) {
		if ((t[i].flags & SVOD_TIER_GONE) || strcmp(t[i].device, bdf1))
			continue;
		if (!strcmp(t[i].name, def1))
			def++;
		else if (!strcmp(t[i].name, "fzA"))
			a++;
		else if (!strcmp(t[i].name, "fzB"))
			b++;
		else
			other++;
	}
	if (other || (def && (a || b)) || def > 1 || a != b || a > 1)
		return -1;
	return 0;
}

static void phase_snapshot(uint64_t seed)
{
	static struct svod_tier_info t[64];
	struct decl_state d = { .seed = seed };
	unsigned int replies = 0, torn = 0, mixed = 0, failed = 0;
	struct svod_query q;
	pthread_t th;
	double end;
	uint32_t i;

	if (!bdf1[0]) {
		tap_skip("one device", "query_is_one_snapshot_under_declarations");
		return;
	}
	pthread_create(&th, NULL, declare, &d);
	for (end = now_ms() + 5000; now_ms() < end;) {
		memset(t, 0xa5, sizeof(t));
		q = (struct svod_query){ .nr_tiers = 64, .tiers_ptr = (uintptr_t)t };
		if (svod_query(files[0], &q)) {
			failed++;
			continue;
		}
		replies++;
		for (i = 0; i < q.nr_tiers && i < 64; i++)
			torn += t[i].id == SENTINEL || t[i].capacity == 0xa5a5a5a5a5a5a5a5ULL;
		mixed += one_set(t, q.nr_tiers < 64 ? q.nr_tiers : 64) != 0;
	}
	__atomic_store_n(&stop_flag, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	__atomic_store_n(&stop_flag, 0, __ATOMIC_RELEASE);
	tap_ok(replies > 0 && !torn && !mixed && !failed && d.commits > 4 && !d.bad,
	       "query_is_one_snapshot_under_declarations (%u replies, %u commits, %u access only: %u with unwritten entries, %u mixing sets, %u failed)",
	       replies, d.commits, d.access_kept, torn, mixed, failed);
}

/* Phase 2. */
struct fuzzer {
	pthread_t th;
	uint64_t rng;
	unsigned int calls, bad_errno, foreign_ok, mismatches, slow, roundtrips;
	/* Per ioctl number (the rest under NR_KINDS - 1), but transfers. */
	unsigned int kind_calls[NR_KINDS];
	double slowest_wall[NR_KINDS], slowest_cpu[NR_KINDS];
	int last_bad;
	unsigned int me;
	int own;			/* this thread's file: no chaos on it */
	uint64_t handles[MAX_HANDLES];	/* live in @own */
	uint64_t loose[MAX_HANDLES];	/* received on shared files */
	uint8_t src[8192], dst[8192];
	uint8_t qbuf[9 * 4096];	/* 9 QUERY entries of the largest size */
};

/* One live handle of each fuzzer's own file, for the others to try. */
static uint64_t published[NR_FUZZERS];

static const int documented[] = {
	0, -E2BIG, -EDQUOT, -EFAULT, -EINTR, -EINVAL, -EIO, -EMFILE, -ENODEV, -ENOENT,
	-ENOMEM, -ENOSPC, -ENOTTY, -EOPNOTSUPP, -ERANGE, -ESTALE, -ETIMEDOUT, -EBADF,
	-EAGAIN, -EFBIG, -ETIME, -EACCES,
};

static void check_errno(struct fuzzer *f, int ret)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(documented); i++) {
		if (ret == documented[i])
			return;
	}
	f->bad_errno++;
	f->last_bad = ret;
}

static uint64_t pick(struct fuzzer *f, const uint64_t *v, unsigned int n)
{
	return v[ht_rand(&f->rng) % n];
}

static uint64_t garbage_u64(struct fuzzer *f)
{
	static const uint64_t v[] = {
		0, 1, 7, 63, 64, 4096, 4097, 65536, BIG, ~0ULL, ~0ULL - 4095,
		1ULL << 63, (1ULL << 32) - 1, 1ULL << 32,
	};

	return ht_rand(&f->rng) & 1 ? pick(f, v, ARRAY_SIZE(v)) : ht_rand(&f->rng);
}

static void *garbage_ptr(struct fuzzer *f, void *valid)
{
	switch (ht_rand(&f->rng) % 8) {
	case 0: return NULL;
	case 1: return gap;
	case 2: return ro_page;
	case 3: return victim;
	case 4: return (void *)(uintptr_t)0xffff800000000000ULL;
	case 5: return (void *)(uintptr_t)ht_rand(&f->rng);
	default: return valid;
	}
}

static int fd_of(struct fuzzer *f)
{
	return __atomic_load_n(&files[ht_rand(&f->rng) % NR_FILES], __ATOMIC_RELAXED);
}

static int is_mine(const struct fuzzer *f, uint64_t h)
{
	unsigned int i;

	for (i = 0; i < MAX_HANDLES; i++) {
		if (f->handles[i] == h)
			return 1;
	}
	return 0;
}

static uint64_t some_handle(struct fuzzer *f)
{
	unsigned int i = (unsigned int)(ht_rand(&f->rng) % MAX_HANDLES);

	switch (ht_rand(&f->rng) % 6) {
	case 0: return ht_rand(&f->rng);
	case 1: return f->handles[i] ^ (1ULL << (ht_rand(&f->rng) % 64));
	case 2: return f->loose[i];
	case 3: return __atomic_load_n(&published[ht_rand(&f->rng) % NR_FUZZERS],
				       __ATOMIC_RELAXED);
	default: return f->handles[i];
	}
}

/*
 * One ioctl; returns -errno. Measures everything but transfers: the wall
 * clock as a figure, the thread's CPU time against the bound.
 */
static int timed(struct fuzzer *f, int fd, unsigned long cmd, void *arg, int transfer)
{
	double w = now_ms(), c = clock_ms(CLOCK_THREAD_CPUTIME_ID);
	int ret = ioctl(fd, cmd, arg) ? -errno : 0;
	unsigned int k = _IOC_NR(cmd) < NR_KINDS - 1 ? _IOC_NR(cmd) : NR_KINDS - 1;

	c = clock_ms(CLOCK_THREAD_CPUTIME_ID) - c;
	w = now_ms() - w;
	f->calls++;
	check_errno(f, ret);
	if (transfer)
		return ret;
	if (c > CALL_CPU_MS)
		f->slow++;
	f->kind_calls[k]++;
	if (w > f->slowest_wall[k])
		f->slowest_wall[k] = w;
	if (c > f->slowest_cpu[k])
		f->slowest_cpu[k] = c;
	return ret;
}

static void fz_alloc(struct fuzzer *f)
{
	struct svod_alloc a = { 0 };
	unsigned int slot = (unsigned int)(ht_rand(&f->rng) % MAX_HANDLES);
	int own = ht_rand(&f->rng) % 2, fd = own ? f->own : fd_of(f), ret;

	a.tier = ht_rand(&f->rng) % 4 ? ids[ht_rand(&f->rng) % nr_ids] : (uint32_t)ht_rand(&f->rng);
	a.size = ht_rand(&f->rng) % 4 ? 4096u << (ht_rand(&f->rng) % 5) : garbage_u64(f);
	a.align = ht_rand(&f->rng) % 2 ? 0 : garbage_u64(f);
	if (ht_rand(&f->rng) % 8 == 0)
		a.flags = (uint32_t)ht_rand(&f->rng);
	ret = timed(f, fd, SVOD_IOCTL_ALLOC, &a, 0);
	if (ret)
		return;
	if (!own) {
		f->loose[slot] = a.handle;
		return;
	}
	if (f->handles[slot])
		svod_free(f->own, f->handles[slot]);
	f->handles[slot] = a.handle;
	__atomic_store_n(&published[f->me], a.handle, __ATOMIC_RELAXED);
}

static void fz_handle_ops(struct fuzzer *f, unsigned int me)
{
	struct svod_resolve r = { 0 };
	struct svod_free fr = { 0 };
	uint64_t h = some_handle(f);
	int fd = ht_rand(&f->rng) % 2 ? f->own : fd_of(f), ret;
	unsigned int i;

	/* Another fuzzer's handle must never resolve in this thread's file. */
	for (i = 0; i < NR_FUZZERS; i++) {
		r.handle = __atomic_load_n(&published[i], __ATOMIC_RELAXED);
		if (i == me || !r.handle || is_mine(f, r.handle))
			continue;
		ret = timed(f, f->own, SVOD_IOCTL_RESOLVE, &r, 0);
		f->foreign_ok += ret != -ESTALE;
	}
	r.handle = h;
	timed(f, fd, SVOD_IOCTL_RESOLVE, &r, 0);
	if (ht_rand(&f->rng) % 4 == 0 && (fd != f->own || !is_mine(f, h))) {
		fr.handle = h;
		if (ht_rand(&f->rng) % 8 == 0)
			fr.pad = 1;
		timed(f, fd, SVOD_IOCTL_FREE, &fr, 0);
	}
}

static void fz_xfer(struct fuzzer *f)
{
	struct svod_wait w = { .deadline_ns = INT64_MAX };
	struct svod_xfer x = { 0 };
	int fd = ht_rand(&f->rng) % 2 ? f->own : fd_of(f);

	x.handle = some_handle(f);
	x.offset = ht_rand(&f->rng) % 2 ? ht_rand(&f->rng) % 8192 : garbage_u64(f);
	x.user_ptr = (uintptr_t)garbage_ptr(f, ht_rand(&f->rng) % 2 ? f->src : f->dst);
	/* Lengths beyond the buffer only with ones no allocation can hold. */
	x.length = ht_rand(&f->rng) % sizeof(f->src);
	if (ht_rand(&f->rng) % 2)
		x.length = ~0ULL - ht_rand(&f->rng) % 8192;
	else if (ht_rand(&f->rng) % 4 == 0)
		x.length = ht_rand(&f->rng) | (1ULL << 62);
	if (ht_rand(&f->rng) % 8 == 0)
		x.flags = (uint32_t)ht_rand(&f->rng) & 0x1f;
	if (ht_rand(&f->rng) % 16 == 0)
		x.pad = 1;
	if (timed(f, fd, ht_rand(&f->rng) % 2 ? SVOD_IOCTL_STAGE : SVOD_IOCTL_READ, &x, 1) ||
	    !(x.flags & SVOD_XFER_ASYNC))
		return;
	/* Queued: its end before this thread's buffers are used again. */
	w.seqno = ht_rand(&f->rng) % 8 ? x.seqno : garbage_u64(f);
	timed(f, fd, SVOD_IOCTL_WAIT, &w, 1);
	if (w.seqno != x.seqno) {
		w = (struct svod_wait){ .seqno = x.seqno, .deadline_ns = INT64_MAX };
		timed(f, fd, SVOD_IOCTL_WAIT, &w, 1);
	}
	if (x.fence_fd >= 0)
		close(x.fence_fd);
}

/* STAGE then READ on a live handle of this thread: the bytes come back. */
static void fz_roundtrip(struct fuzzer *f)
{
	unsigned int slot = (unsigned int)(ht_rand(&f->rng) % MAX_HANDLES), i;
	uint64_t len = 1 + ht_rand(&f->rng) % sizeof(f->src), done1 = 0, done2 = 0;
	int a, b, fd = f->own;

	if (!f->handles[slot])
		return;
	for (i = 0; i < len; i++)
		f->src[i] = (uint8_t)ht_rand(&f->rng);
	a = svod_stage(fd, f->handles[slot], 0, f->src, len, 0, &done1);
	b = a ? a : svod_read(fd, f->handles[slot], 0, f->dst, len, 0, &done2);
	check_errno(f, a);
	check_errno(f, b);
	if (!a && !b) {
		f->roundtrips++;
		f->mismatches += memcmp(f->src, f->dst, len) != 0;
	}
}

static void fz_query_plan(struct fuzzer *f)
{
	struct svod_plan_event ev[8];
	uint64_t off[8];
	struct svod_query q = { 0 };
	struct svod_plan p = { 0 };
	unsigned int i, n = (unsigned int)(ht_rand(&f->rng) % 9);

	q.nr_tiers = (uint32_t)(ht_rand(&f->rng) % 10);
	q.tiers_ptr = (uintptr_t)garbage_ptr(f, f->qbuf);
	q.tier_info_size = ht_rand(&f->rng) % 4 ? 0 : (uint32_t)garbage_u64(f);
	if (ht_rand(&f->rng) % 8 == 0)
		q.flags = 1;
	timed(f, fd_of(f), SVOD_IOCTL_QUERY, &q, 0);

	for (i = 0; i < n; i++) {
		ev[i].op = 1 + (uint32_t)(ht_rand(&f->rng) % 3);
		ev[i].id = (uint32_t)(ht_rand(&f->rng) % 4);
		ev[i].size = ht_rand(&f->rng) % 2 ? ht_rand(&f->rng) % 65536 : garbage_u64(f);
		ev[i].align = ht_rand(&f->rng) % 2 ? 0 : garbage_u64(f);
	}
	p.arena_size = ht_rand(&f->rng) % 2 ? 1 << 20 : garbage_u64(f);
	p.block_size = ht_rand(&f->rng) % 2 ? 256 : (uint32_t)garbage_u64(f);
	p.lv2_cnt = ht_rand(&f->rng) % 2 ? 32 : (uint32_t)garbage_u64(f);
	p.strategy = (uint32_t)(ht_rand(&f->rng) % 3);
	p.nr_events = n;
	p.events_ptr = (uintptr_t)garbage_ptr(f, ev);
	p.offsets_ptr = (uintptr_t)garbage_ptr(f, off);
	if (ht_rand(&f->rng) % 8 == 0) {
		/* More events than the arrays hold: only unwritable offsets. */
		p.nr_events = (uint32_t)ht_rand(&f->rng);
		p.offsets_ptr = (uintptr_t)(ht_rand(&f->rng) % 2 ? gap : ro_page);
	}
	/* A plan of up to max_plan_events events is work of the size asked. */
	timed(f, fd_of(f), SVOD_IOCTL_PLAN, &p, p.nr_events > 8);
}

/* Commands of the wrong size, direction or number, garbage arguments. */
static void fz_raw(struct fuzzer *f)
{
	static const unsigned int dirs[] = { _IOC_NONE, _IOC_READ, _IOC_WRITE,
					     _IOC_READ | _IOC_WRITE };
	uint8_t arg[512];
	unsigned long cmd;
	unsigned int i;

	for (i = 0; i < sizeof(arg); i++)
		arg[i] = (uint8_t)(ht_rand(&f->rng) % 4 ? 0 : ht_rand(&f->rng));
	cmd = _IOC(dirs[ht_rand(&f->rng) % 4], SVOD_IOCTL_MAGIC,
		   (unsigned int)(ht_rand(&f->rng) % 10),
		   (unsigned int)(ht_rand(&f->rng) % sizeof(arg)));
	timed(f, fd_of(f), cmd, garbage_ptr(f, arg), 1);
}

static void *fuzz(void *arg)
{
	struct fuzzer *f = arg;

	while (!stopping()) {
		switch (ht_rand(&f->rng) % 7) {
		case 0: fz_alloc(f); break;
		case 1: fz_handle_ops(f, f->me); break;
		case 2: fz_xfer(f); break;
		case 3: fz_roundtrip(f); break;
		case 4: fz_query_plan(f); break;
		case 5: fz_raw(f); break;
		default: fz_alloc(f); fz_roundtrip(f); break;
		}
	}
	return NULL;
}

/* Closes, dup2()s over and reopens the shared files; unmaps @victim. */
static void *chaos(void *arg)
{
	uint64_t *rng = arg;
	int i, f, nf;

	while (!stopping()) {
		usleep((useconds_t)(ht_rand(rng) % 20000));
		i = (int)(ht_rand(rng) % NR_FILES);
		f = files[i];
		switch (ht_rand(rng) % 3) {
		case 0:
			nf = ht_open();
			if (nf >= 0) {
				__atomic_store_n(&files[i], nf, __ATOMIC_RELAXED);
				close(f);
			}
			break;
		case 1:
			/* The descriptor now names another file, under the users. */
			dup2(files[(i + 1) % NR_FILES], f);
			break;
		default:
			munmap(victim, 4 * page_size);
			usleep(1000);
			mmap(victim, 4 * page_size, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
			break;
		}
	}
	return NULL;
}

struct killer_state {
	uint64_t rng;
	unsigned int reaped;
};

/* Forks stagers and SIGKILLs them at random moments, mid-call mostly. */
static void *killer(void *arg)
{
	struct killer_state *k = arg;
	uint64_t *rng = &k->rng;
	pid_t pid;

	while (!stopping()) {
		pid = fork();
		if (pid == 0) {
			static uint8_t buf[BIG];
			struct svod_alloc a;
			int cfd = ht_open();

			if (cfd < 0 || svod_alloc(cfd, ids[0], BIG, 0, &a))
				_exit(0);
			for (;;) {
				svod_stage(cfd, a.handle, 0, buf, BIG, 0, NULL);
				svod_read(cfd, a.handle, 0, buf, BIG, 0, NULL);
			}
		}
		if (pid < 0)
			break;
		usleep((useconds_t)(ht_rand(rng) % 200000));
		kill(pid, SIGKILL);
		if (waitpid(pid, NULL, 0) == pid)
			k->reaped++;
	}
	return NULL;
}

static void load_ids(void)
{
	struct svod_tier_info *t;
	uint32_t n, i;

	nr_ids = 0;
	if (svod_query_all(files[0], &t, &n))
		return;
	for (i = 0; i < n && nr_ids < ARRAY_SIZE(ids); i++) {
		if (!(t[i].flags & SVOD_TIER_GONE))
			ids[nr_ids++] = t[i].id;
	}
	free(t);
}

/* Free bytes of every present tier of @bdf, summed. */
static uint64_t free_of(int fd, const char *bdf)
{
	struct svod_tier_info *t;
	uint32_t n, i;
	uint64_t sum = 0;

	if (svod_query_all(fd, &t, &n))
		return 0;
	for (i = 0; i < n; i++) {
		if (!(t[i].flags & SVOD_TIER_GONE) && !strcmp(t[i].device, bdf))
			sum += t[i].free_bytes;
	}
	free(t);
	return sum;
}

static void phase_fuzz(uint64_t seed, unsigned int seconds)
{
	static struct fuzzer fz[NR_FUZZERS];
	struct decl_state d = { .seed = seed ^ 0xdec1, .unbind = 1 };
	uint64_t chaos_rng = seed ^ 0xc4a05;
	struct killer_state ks = { .rng = seed ^ 0x4b1 };
	unsigned int i, k, calls = 0, bad = 0, foreign = 0, mism = 0, slow = 0, rt = 0;
	pthread_t ch, kl, dt;
	unsigned int kind_calls[NR_KINDS] = { 0 };
	double wall[NR_KINDS] = { 0 }, cpu[NR_KINDS] = { 0 }, slowest = 0;
	int last_bad = 0;

	load_ids();
	if (!nr_ids) {
		tap_diag("no tier");
		return;
	}
	for (i = 0; i < NR_FUZZERS; i++) {
		memset(&fz[i], 0, sizeof(fz[i]));
		fz[i].rng = seed + 0x9e3779b97f4a7c15ULL * (i + 1);
		fz[i].me = i;
		fz[i].own = i ? ht_open() : ht_open_without_dac_override();
		pthread_create(&fz[i].th, NULL, fuzz, &fz[i]);
	}
	pthread_create(&ch, NULL, chaos, &chaos_rng);
	pthread_create(&kl, NULL, killer, &ks);
	if (bdf1[0])
		pthread_create(&dt, NULL, declare, &d);
	sleep(seconds);
	__atomic_store_n(&stop_flag, 1, __ATOMIC_RELEASE);
	for (i = 0; i < NR_FUZZERS; i++) {
		pthread_join(fz[i].th, NULL);
		calls += fz[i].calls;
		bad += fz[i].bad_errno;
		foreign += fz[i].foreign_ok;
		mism += fz[i].mismatches;
		slow += fz[i].slow;
		rt += fz[i].roundtrips;
		for (k = 0; k < NR_KINDS; k++) {
			kind_calls[k] += fz[i].kind_calls[k];
			if (fz[i].slowest_wall[k] > wall[k])
				wall[k] = fz[i].slowest_wall[k];
			if (fz[i].slowest_cpu[k] > cpu[k])
				cpu[k] = fz[i].slowest_cpu[k];
		}
		if (fz[i].last_bad)
			last_bad = fz[i].last_bad;
		close(fz[i].own);
	}
	pthread_join(ch, NULL);
	pthread_join(kl, NULL);
	if (bdf1[0])
		pthread_join(dt, NULL);

	tap_ok(calls > 1000 && !bad, "fuzz_only_documented_errnos (%u calls, %u bad, last %s)",
	       calls, bad, ht_err(last_bad));
	tap_ok(!foreign, "fuzz_foreign_handle_never_resolves (%u did)", foreign);
	tap_ok(rt > 0 && !mism, "fuzz_read_returns_what_stage_wrote (%u round trips, %u differ)",
	       rt, mism);
	for (k = 0; k < NR_KINDS; k++) {
		if (!kind_calls[k])
			continue;
		tap_diag("ioctl nr %u%s: %u timed calls, slowest %.1f ms wall, %.1f ms CPU",
			 k, k == NR_KINDS - 1 ? " and above" : "", kind_calls[k], wall[k], cpu[k]);
		if (cpu[k] > slowest)
			slowest = cpu[k];
	}
	tap_ok(!slow, "fuzz_no_call_but_transfers_over_%d_ms_cpu (%u did; slowest %.1f ms CPU)",
	       CALL_CPU_MS, slow, slowest);
	tap_ok(ks.reaped > 0, "fuzz_children_killed_mid_call_reaped (%u)", ks.reaped);
	if (bdf1[0])
		tap_ok(!d.bad && !d.unbind_fail && d.commits + d.busy > 0,
		       "fuzz_declarations_0_or_ebusy_unbind_rebind_ok (%u commits, %u EBUSY, %u access only, %u rebinds)",
		       d.commits, d.busy, d.access_kept, d.rebinds);
	else
		tap_skip("one device", "fuzz_declarations_0_or_ebusy_unbind_rebind_ok");
}

int main(void)
{
	char bdfs[4][SVOD_NAME_LEN];
	const char *env = getenv("SVOD_FUZZ_SEED");
	unsigned int seconds = 30, i;
	uint64_t seed, free0, free1 = 0, f0, f1 = 0;
	struct svod_tier_decl d;
	int n, fd;

	tap_plan(NR_CASES);
	if (getenv("SVOD_FUZZ_SECONDS"))
		seconds = (unsigned int)strtoul(getenv("SVOD_FUZZ_SECONDS"), NULL, 0);
	if (env)
		setenv("SVOD_SEED", env, 1);
	seed = ht_seed("t_fuzz");
	tap_diag("t_fuzz: %u s (SVOD_FUZZ_SECONDS); replay with SVOD_FUZZ_SEED=0x%llx",
		 seconds, (unsigned long long)seed);
	page_size = (size_t)sysconf(_SC_PAGESIZE);
	signal(SIGPIPE, SIG_IGN);

	n = svod_devices(bdfs, 4);
	fd = ht_open();
	if (n < 1 || fd < 0) {
		tap_diag("no device");
		return tap_done();
	}
	memcpy(bdf0, bdfs[0], sizeof(bdf0));
	if (n > 1 && svod_tiers_read(bdfs[1], orig1, sizeof(orig1)) >= 0 &&
	    !svod_decl_parse(orig1, &d)) {
		memcpy(bdf1, bdfs[1], sizeof(bdf1));
		memcpy(def1, d.name, sizeof(def1));
	}
	free0 = free_of(fd, bdf0);
	if (bdf1[0])
		free1 = free_of(fd, bdf1);

	ro_page = mmap(NULL, page_size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	gap = mmap(NULL, page_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	victim = mmap(NULL, 4 * page_size, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	for (i = 0; i < NR_FILES; i++)
		files[i] = ht_open();

	phase_snapshot(seed);
	phase_fuzz(seed, seconds);

	for (i = 0; i < NR_FILES; i++)
		close(files[i]);
	if (bdf1[0] && svod_devices(bdfs, 4) < n)
		svod_driver_bind(bdf1, 1);
	if (bdf1[0])
		svod_tiers_write(bdf1, orig1);
	usleep(200 * 1000);
	f0 = free_of(fd, bdf0);
	if (bdf1[0])
		f1 = free_of(fd, bdf1);
	tap_ok(f0 == free0 && f1 == free1,
	       "fuzz_free_bytes_back_to_start_after_close (%s %llu/%llu, %s %llu/%llu)",
	       bdf0, (unsigned long long)f0, (unsigned long long)free0,
	       bdf1, (unsigned long long)f1, (unsigned long long)free1);
	{
		char now[4096] = "";

		tap_ok(!bdf1[0] || (svod_tiers_read(bdf1, now, sizeof(now)) >= 0 &&
				    !strcmp(now, orig1)),
		       "fuzz_second_device_declaration_restored");
	}
	close(fd);
	/* Live tiers are back as they were: forget the declarations made. */
	ht_undeclare_all();
	return tap_done();
}
