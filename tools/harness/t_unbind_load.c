// SPDX-License-Identifier: GPL-2.0
/*
 * t_unbind_load: a long transfer stalls nothing else, and an unbind under
 * load is clean.
 *
 * Stall: a child runs a DMA STAGE of 512 KiB of 0x5a over zeroed bytes
 * (eight 64 KiB chunks, over 10 s in the TCG guest) on the first device's
 * default tier. Once its first bytes are in the BAR, this process makes
 * calls that must not wait for it: a declaration that would retire that
 * tier answers EBUSY, a declaration of the second device (its own set
 * again) succeeds, reading a value of either device's configfs
 * declaration, QUERY, this file's fdinfo, an ALLOC and FREE on the busy
 * tier and a small PLAN succeed. Each must return while the transfer's
 * last byte, read through sysfs resource2, is still unwritten: a call that
 * waited behind the transfer (a lock held across it) could return only
 * after it landed. That is an ordering, not a time, so a loaded host does
 * not fail it; each call's wall-clock time is printed as a figure. The
 * transfer must still be in flight after the calls, and completes whole.
 *
 * Unbind under load: three threads allocate, STAGE, READ back and free on
 * the second device's tier while it is unbound; one of them stages
 * asynchronously (four transfers queued at once, then waited for), so
 * transfers are queued and running when the unbind comes: each ends with
 * its bytes in place or ENODEV; so does a 512 KiB asynchronous DMA STAGE
 * in flight, which the BAR's unchanged hash after the unbind shows stopped. No READ returns other bytes
 * than its STAGE wrote; every STAGE, READ or ALLOC started after the unbind
 * returned fails with ENODEV (ALLOC: or ENOENT); the BAR, read through
 * sysfs resource2, does not change after the unbind while the threads go
 * on; a rebind brings the default tier back, clean.
 *
 * Then a sysfs reset, an injected non-fatal and an injected fatal PCIe
 * error (aer_inject at the root port) under the same load, each taking the
 * device out of service and back with a new tier (test_recover()).
 *
 * Last, checked by the host: the loaders run again on the rebound device and
 * it is unbound under them once more, this time for good (driver_override
 * keeps svod's later reload from binding it). Right after the unbind
 * returns, the whole BAR 2 is filled with the sentinel byte 0xa5 through
 * sysfs resource2 while the loaders go on for 300 ms; every call they start
 * after the fill must fail with ENODEV (ALLOC: or ENOENT). A shared allocation
 * is under load too: STAGE through a handle another file imported from its
 * dma-buf, and stores through the dma-buf's own mapping; after the unbind
 * each STAGE is ENODEV and each store SIGBUS. Nothing touches
 * the device afterwards: the line "# svod-bar-sentinel: <bar2-size> 0xa5"
 * asks the host (tools/testing/verify_bar.py, after power-off) to check that
 * every byte of the device's backing file still holds the sentinel, so a
 * write of the driver after the unbind, at any time until power-off, fails
 * the run.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "tap.h"

#define NR_CASES	(29 + 3 * NR_RECOVER_CASES)

#define SENTINEL	0xa5

#define DMA_LEN		(512u << 10)	/* eight DMA chunks, over 10 s here */
#define NR_STALL	8		/* calls made while it runs */
#define LOAD_LEN	(64u << 10)
#define NR_LOADERS	3

static int fd = -1;
static char bdf0[SVOD_NAME_LEN], bdf1[SVOD_NAME_LEN];
static int have_dev1;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/*
 * Child: zeroes an allocation of DMA_LEN by CPU, checks that DMA works with
 * a 1-byte DMA STAGE of 0, reports 'r' and the allocation's device address
 * (or 'n': no DMA), then DMA STAGEs DMA_LEN of 0x5a and reports 'd' if it
 * all went ('f' if not). It then holds the allocation (its release scrubs
 * the bytes) until @rfd reads EOF.
 */
static void long_stage(uint32_t id, int wfd, int rfd)
{
	static uint8_t buf[DMA_LEN];
	struct svod_alloc a;
	uint64_t done = 0;
	int cfd, ret;

	cfd = ht_open();
	if (cfd < 0 || svod_alloc(cfd, id, DMA_LEN, 0, &a) ||
	    svod_stage(cfd, a.handle, 0, buf, DMA_LEN, SVOD_XFER_CPU, NULL))
		_exit(100);
	ret = svod_stage(cfd, a.handle, 0, buf, 1, SVOD_XFER_DMA, NULL);
	if (ret)
		_exit(ht_write_all(wfd, "n", 1) ? 101 : 0);
	if (ht_write_all(wfd, "r", 1) || ht_write_all(wfd, &a.device_addr, sizeof(a.device_addr)))
		_exit(102);
	memset(buf, 0x5a, sizeof(buf));
	ret = svod_stage(cfd, a.handle, 0, buf, DMA_LEN, SVOD_XFER_DMA, &done);
	if (ht_write_all(wfd, ret || done != DMA_LEN ? "f" : "d", 1))
		_exit(103);
	while (read(rfd, buf, 1) > 0)
		;
	_exit(0);
}

/* The transfer's first and last byte in BAR 2, mapped read-only. */
struct span {
	volatile uint8_t *first, *last;
	void *map;
	size_t len;
};

static int map_span(const struct svod_tier_info *t, uint64_t addr, struct span *s)
{
	int ret = ht_bar2_map(t, addr, DMA_LEN, &s->first, &s->map, &s->len);

	if (!ret)
		s->last = s->first + DMA_LEN - 1;
	return ret;
}

/*
 * One call made while the transfer runs: its result, its wall-clock time
 * (a figure) and whether the transfer's last byte was still unwritten when
 * it returned (the check: a call that waited for the transfer returns only
 * after the last byte landed).
 */
struct during {
	int ret;
	double ms;
	int before_end;
};

#define DURING(d, s, call) do { double __t = now_ms(); (d)->ret = (call); \
				(d)->ms = now_ms() - __t; \
				(d)->before_end = *(s)->last != 0x5a; } while (0)

static int read_fdinfo(void)
{
	char path[64], buf[4096];
	int f, n;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = open(path, O_RDONLY);
	if (f < 0)
		return -errno;
	n = (int)read(f, buf, sizeof(buf));
	close(f);
	return n > 0 ? 0 : -EIO;
}

static int alloc_free(uint32_t id)
{
	struct svod_alloc a;
	int ret = svod_alloc(fd, id, 4096, 0, &a);

	return ret ? ret : svod_free(fd, a.handle);
}

static int plan_small(void)
{
	struct svod_plan_event ev[4] = {
		{ .op = SVOD_PLAN_ALLOC, .id = 0, .size = 1000 },
		{ .op = SVOD_PLAN_ALLOC, .id = 1, .size = 3000 },
		{ .op = SVOD_PLAN_FREE, .id = 0 },
		{ .op = SVOD_PLAN_FREE, .id = 1 },
	};
	uint64_t off[4];
	struct svod_plan p = { .arena_size = 1 << 20, .block_size = 256, .lv2_cnt = 32,
			       .nr_events = 4, .events_ptr = (uintptr_t)ev,
			       .offsets_ptr = (uintptr_t)off };

	return svod_plan(fd, &p);
}

static void stall_case(const struct during *d, int want, const char *name)
{
	tap_ok(d->ret == want && d->before_end, "%s_while_transfer_runs (%s in %.1f ms, %s)",
	       name, ht_err(d->ret), d->ms,
	       d->before_end ? "before its last byte" : "after its last byte landed");
}

static void test_stall(void)
{
	static volatile uint8_t zero;
	static char orig0[4096], orig1[4096], text[512], rel0[128], rel1[128], val[64];
	struct svod_tier_info t0, t1, *tiers;
	struct during d[NR_STALL];
	struct span sp = { 0 };
	int p[2], q[2], ret, status, in_flight, polls, landed;
	struct pollfd pfd;
	uint64_t addr;
	uint32_t nr;
	char c = 0;
	pid_t pid;

	if (svod_tier_by_device(fd, bdf0, &t0) || svod_tiers_read(bdf0, orig0, sizeof(orig0)) < 0 ||
	    (have_dev1 && (svod_tiers_read(bdf1, orig1, sizeof(orig1)) < 0 ||
			   svod_tier_by_device(fd, bdf1, &t1))) || pipe(p) || pipe(q)) {
		tap_diag("setup failed");
		return;
	}
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		close(q[1]);
		long_stage(t0.id, p[1], q[0]);
	}
	close(p[1]);
	close(q[0]);
	if (pid < 0 || ht_read_all(p[0], &c, 1) || c != 'r' ||
	    ht_read_all(p[0], &addr, sizeof(addr))) {
		for (ret = 0; ret < NR_STALL + 3; ret++)
			tap_skip("no DMA_MEMCPY channel in this guest", "stall case %d", ret);
		close(p[0]);
		close(q[1]);
		if (pid > 0)
			ht_wait_exit(pid);
		return;
	}
	ret = map_span(&t0, addr, &sp);
	if (ret) {
		tap_diag("cannot map the transfer's bytes: %s", ht_err(ret));
		sp.first = sp.last = &zero;	/* the cases fail */
	}
	/* In flight: its first 4 KiB hop is in the BAR (a safety cap of 60 s). */
	for (polls = 0; *sp.first != 0x5a && polls < 3000; polls++)
		usleep(20 * 1000);
	/* An empty declaration for bdf0: d[0]'s refused commit leaves it so. */
	snprintf(rel0, sizeof(rel0), SVOD_CONFIGFS "/%s", bdf0);
	mkdir(rel0, 0755);
	snprintf(rel0, sizeof(rel0), "status");
	if (have_dev1)
		snprintf(rel1, sizeof(rel1), "tiers/%s/size", t1.name);
	snprintf(text, sizeof(text), "%s bar=2 offset=0 size=0x%llx align=128", t0.name,
		 (unsigned long long)t0.capacity);

	DURING(&d[0], &sp, svod_tiers_write(bdf0, text));
	DURING(&d[1], &sp, have_dev1 ? svod_tiers_write(bdf1, orig1) : 0);
	DURING(&d[2], &sp, have_dev1 ? ht_cfs_read(bdf1, rel1, val, sizeof(val)) : 0);
	DURING(&d[3], &sp, ht_cfs_read(bdf0, rel0, val, sizeof(val)));
	DURING(&d[4], &sp, svod_query_all(fd, &tiers, &nr));
	if (!d[4].ret)
		free(tiers);
	DURING(&d[5], &sp, read_fdinfo());
	DURING(&d[6], &sp, alloc_free(t0.id));
	DURING(&d[7], &sp, plan_small());
	/* The child reports the end of the transfer: nothing to read yet. */
	pfd = (struct pollfd){ .fd = p[0], .events = POLLIN };
	in_flight = poll(&pfd, 1, 0) == 0;

	tap_ok(*sp.first == 0x5a, "transfer_moved_data_before_the_calls (%d polls of 20 ms)", polls);
	stall_case(&d[0], -EBUSY, "declare_over_transfer_ebusy");
	if (have_dev1) {
		stall_case(&d[1], 0, "declare_other_device");
		stall_case(&d[2], 0, "read_other_device_configfs");
	} else {
		tap_skip("one device", "declare_other_device_while_transfer_runs");
		tap_skip("one device", "read_other_device_configfs_while_transfer_runs");
	}
	stall_case(&d[3], 0, "read_busy_device_configfs");
	stall_case(&d[4], 0, "query");
	stall_case(&d[5], 0, "fdinfo");
	stall_case(&d[6], 0, "alloc_free_same_tier");
	stall_case(&d[7], 0, "plan");
	tap_ok(in_flight, "transfer_was_in_flight_throughout");
	/* Its last byte must land, else "before its last byte" proves nothing. */
	c = 0;
	ht_read_all(p[0], &c, 1);
	landed = *sp.last == 0x5a;
	close(q[1]);
	status = ht_wait_exit(pid);
	tap_ok(c == 'd' && landed && status == 0,
	       "long_transfer_completed_whole (%s, last byte %s, status %d)",
	       c == 'd' ? "all of it" : "not all", landed ? "landed" : "not landed", status);
	close(p[0]);
	if (sp.map)
		munmap(sp.map, sp.len);
	svod_tiers_write(bdf0, orig0);
}

struct loader {
	pthread_t thread;
	uint32_t id;
	uint64_t seed;
	unsigned int ops, after, after_fill, bad_after, mismatches, surprises;
	int async;
};

/* 0: bound; 1: unbind returned; 2: the BAR holds the sentinel. */
static int unbound, stop;

static int expected(int ret, int is_alloc)
{
	return !ret || ret == -ENODEV || ret == -EINTR || (is_alloc && ret == -ENOENT);
}

/*
 * The asynchronous loader's STAGE: four quarters queued at once, then
 * waited for; the first error of a submission or of a transfer.
 */
static int stage_async(int lfd, uint64_t handle, const uint8_t *src)
{
	struct svod_xfer x[4];
	struct svod_wait w;
	int n, i, ret = 0, r;

	for (n = 0; n < 4; n++) {
		x[n] = (struct svod_xfer){ .handle = handle, .offset = n * (LOAD_LEN / 4),
					   .user_ptr = (uintptr_t)(src + n * (LOAD_LEN / 4)),
					   .length = LOAD_LEN / 4, .flags = SVOD_XFER_ASYNC };
		ret = svod_ioctl(lfd, SVOD_IOCTL_STAGE, &x[n]);
		if (ret)
			break;
	}
	for (i = 0; i < n; i++) {
		w = (struct svod_wait){ .seqno = x[i].seqno, .deadline_ns = INT64_MAX };
		r = svod_ioctl(lfd, SVOD_IOCTL_WAIT, &w);
		if (!ret)
			ret = r ? r : w.status;
	}
	return ret;
}

static void *load(void *arg)
{
	struct loader *l = arg;
	uint8_t *src = malloc(LOAD_LEN), *dst = malloc(LOAD_LEN);
	struct svod_alloc a;
	int lfd = ht_open(), ret, after;
	size_t i;

	if (lfd < 0 || !src || !dst) {
		l->surprises++;
		goto out;
	}
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		for (i = 0; i < LOAD_LEN; i++)
			src[i] = (uint8_t)ht_rand(&l->seed);
		after = __atomic_load_n(&unbound, __ATOMIC_ACQUIRE);
		ret = svod_alloc(lfd, l->id, LOAD_LEN, 0, &a);
		l->ops++;
		l->after += after != 0;
		l->after_fill += after == 2;
		l->bad_after += after && ret != -ENODEV && ret != -ENOENT;
		l->surprises += !expected(ret, 1);
		if (ret)
			continue;
		after = __atomic_load_n(&unbound, __ATOMIC_ACQUIRE);
		ret = l->async ? stage_async(lfd, a.handle, src) :
				 svod_stage(lfd, a.handle, 0, src, LOAD_LEN, SVOD_XFER_CPU, NULL);
		l->bad_after += after && ret != -ENODEV;
		l->surprises += !expected(ret, 0);
		if (!ret) {
			after = __atomic_load_n(&unbound, __ATOMIC_ACQUIRE);
			ret = svod_read(lfd, a.handle, 0, dst, LOAD_LEN, SVOD_XFER_CPU, NULL);
			l->bad_after += after && ret != -ENODEV;
			l->surprises += !expected(ret, 0);
			l->mismatches += !ret && memcmp(src, dst, LOAD_LEN);
		}
		l->surprises += svod_free(lfd, a.handle) != 0;
	}
out:
	if (lfd >= 0)
		close(lfd);
	free(src);
	free(dst);
	return NULL;
}

/*
 * A shared allocation under load, for the sentinel: a mappable allocation of
 * one file, exported read-write, imported by a second file and mapped
 * through the dma-buf. Until stop, STAGE through the imported handle and a
 * store through the dma-buf's mapping, page by page; after the unbind, each
 * STAGE must be ENODEV and each store SIGBUS.
 */
struct sharer {
	pthread_t thread;
	uint32_t id;
	int setup;
	unsigned int ops, after_fill, bad_after, surprises;
};

static void *share(void *arg)
{
	struct sharer *s = arg;
	int efd = ht_open(), ifd = ht_open(), d = -1, ret, r, after, dead = 0;
	struct svod_import im = {};
	struct svod_alloc a = {};
	uint8_t *m = MAP_FAILED, buf[4096];
	size_t off;

	ret = efd < 0 ? efd : ifd < 0 ? ifd :
	      svod_alloc_flags(efd, s->id, LOAD_LEN, 0, SVOD_ALLOC_MAPPABLE, &a);
	ret = ret ? ret : svod_export(efd, a.handle, SVOD_EXPORT_WRITE, &d, NULL);
	ret = ret ? ret : svod_import(ifd, d, &im);
	if (!ret) {
		m = mmap(NULL, LOAD_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, d, 0);
		ret = m == MAP_FAILED ? -errno : 0;
	}
	s->setup = ret;
	memset(buf, 0x3c, sizeof(buf));
	while (!ret && !__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		off = (s->ops % (LOAD_LEN / sizeof(buf))) * sizeof(buf);
		after = __atomic_load_n(&unbound, __ATOMIC_ACQUIRE);
		r = svod_stage(ifd, im.handle, off, buf, sizeof(buf), SVOD_XFER_CPU, NULL);
		s->ops++;
		s->after_fill += after == 2;
		s->bad_after += after && r != -ENODEV;
		s->surprises += !expected(r, 0);
		if (!dead)
			dead = ht_touch(m + off, 1) == SIGBUS;
		s->bad_after += after && !dead;
	}
	if (m != MAP_FAILED)
		munmap(m, LOAD_LEN);
	if (d >= 0)
		close(d);
	if (ifd >= 0)
		close(ifd);
	if (efd >= 0)
		close(efd);
	return NULL;
}

/* Maps BAR 2 of @bdf through sysfs resource2; NULL if it cannot. */
static void *bar_map(const char *bdf, int prot, uint64_t *size)
{
	char path[256];
	void *m;
	int f;

	if (ht_bar_size(bdf, 2, size))
		return NULL;
	snprintf(path, sizeof(path), SVOD_SYSFS_DEVICES "/%s/resource2", bdf);
	f = open(path, prot & PROT_WRITE ? O_RDWR : O_RDONLY);
	if (f < 0)
		return NULL;
	m = mmap(NULL, *size, prot, MAP_SHARED, f, 0);
	close(f);
	return m == MAP_FAILED ? NULL : m;
}

/* FNV-1a of BAR 2 of @bdf read through sysfs; 0 if it cannot be read. */
static uint64_t bar_hash(const char *bdf)
{
	uint64_t size, h = 1469598103934665603ULL, i;
	const volatile uint64_t *p;
	void *m = bar_map(bdf, PROT_READ, &size);

	if (!m)
		return 0;
	p = m;
	for (i = 0; i < size / 8; i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	munmap(m, size);
	return h ? h : 1;
}

static void start_loaders(struct loader *l, uint32_t id, uint64_t seed)
{
	unsigned int i;

	__atomic_store_n(&unbound, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&stop, 0, __ATOMIC_RELEASE);
	for (i = 0; i < NR_LOADERS; i++) {
		memset(&l[i], 0, sizeof(l[i]));
		l[i].id = id;
		l[i].seed = seed + i + 1;
		l[i].async = i == 0;
		pthread_create(&l[i].thread, NULL, load, &l[i]);
	}
}

/* Stops and joins the loaders; @sum gets their counts added up. */
static void stop_loaders(struct loader *l, struct loader *sum)
{
	unsigned int i;

	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	memset(sum, 0, sizeof(*sum));
	for (i = 0; i < NR_LOADERS; i++) {
		pthread_join(l[i].thread, NULL);
		sum->ops += l[i].ops;
		sum->after += l[i].after;
		sum->after_fill += l[i].after_fill;
		sum->bad_after += l[i].bad_after;
		sum->mismatches += l[i].mismatches;
		sum->surprises += l[i].surprises;
	}
}

/* Bytes of @m (@size) that are not @byte. */
static uint64_t count_not(const volatile uint8_t *m, uint64_t size, uint8_t byte)
{
	uint64_t i, n = 0;

	for (i = 0; i < size; i++)
		n += m[i] != byte;
	return n;
}

/* Keeps any driver from binding @bdf again (svod's reload included). */
static int no_driver(const char *bdf)
{
	char path[256];

	snprintf(path, sizeof(path), SVOD_SYSFS_DEVICES "/%s/driver_override", bdf);
	return ht_write_file(path, "none");
}

/*
 * The device is unbound under load for good; the BAR is filled with the
 * sentinel right after, and the host checks it still holds it at power-off.
 */
static void test_sentinel(uint64_t seed)
{
	struct loader l[NR_LOADERS], sum;
	struct svod_tier_info t1;
	struct sharer sh = {};
	volatile uint8_t *bar;
	uint64_t size = 0, wrong_fill = ~0ULL, wrong_end = ~0ULL, i;
	double ms;
	int ret, ov, sh_ret;

	if (!have_dev1 || svod_tier_by_device(fd, bdf1, &t1)) {
		for (i = 0; i < 9; i++)
			tap_skip("no second device", "sentinel case %llu", (unsigned long long)i);
		return;
	}
	start_loaders(l, t1.id, seed + 100);
	sh.id = t1.id;
	sh.setup = -EAGAIN;
	sh_ret = pthread_create(&sh.thread, NULL, share, &sh);
	usleep(500 * 1000);
	ms = now_ms();
	ret = svod_driver_bind(bdf1, 0);
	ms = now_ms() - ms;
	__atomic_store_n(&unbound, 1, __ATOMIC_RELEASE);
	tap_errno(ret, 0, "sentinel_unbind_under_load (%.1f ms)", ms);
	ov = no_driver(bdf1);
	tap_errno(ov, 0, "sentinel_device_kept_unbound (driver_override)");
	bar = bar_map(bdf1, PROT_READ | PROT_WRITE, &size);
	if (bar) {
		for (i = 0; i < size; i += 8)
			*(volatile uint64_t *)(bar + i) = 0x0101010101010101ULL * SENTINEL;
		__sync_synchronize();
		wrong_fill = count_not(bar, size, SENTINEL);
	}
	__atomic_store_n(&unbound, 2, __ATOMIC_RELEASE);
	tap_ok(bar && wrong_fill == 0, "sentinel_filled_after_unbind (%llu bytes, %llu wrong)",
	       (unsigned long long)size, (unsigned long long)wrong_fill);
	usleep(300 * 1000);
	stop_loaders(l, &sum);
	if (!sh_ret)
		pthread_join(sh.thread, NULL);
	if (bar)
		wrong_end = count_not(bar, size, SENTINEL);
	tap_ok(bar && wrong_end == 0, "sentinel_intact_after_load (%llu wrong)",
	       (unsigned long long)wrong_end);
	tap_ok(sum.after_fill > 0 && sum.ops > sum.after,
	       "sentinel_loaders_called_after_fill (%u ops, %u after unbind, %u after fill)",
	       sum.ops, sum.after, sum.after_fill);
	tap_ok(sum.bad_after == 0, "sentinel_every_call_after_unbind_enodev (%u did not)",
	       sum.bad_after);
	tap_ok(sum.mismatches == 0 && sum.surprises == 0,
	       "sentinel_reads_match_and_errnos_documented (%u mismatches, %u surprises)",
	       sum.mismatches, sum.surprises);
	tap_ok(!sh_ret && !sh.setup && sh.after_fill > 0 && !sh.bad_after && !sh.surprises,
	       "sentinel_shared_allocation_enodev_and_sigbus_after_unbind (%s; %u ops, %u after fill, %u not ENODEV/SIGBUS, %u surprises)",
	       ht_err(sh_ret ? -sh_ret : sh.setup), sh.ops, sh.after_fill, sh.bad_after,
	       sh.surprises);
	ret = svod_tier_by_device(fd, bdf1, &t1);
	tap_ok(ret == -ENODEV || ret == -ENOENT, "sentinel_device_has_no_tier (%s)", ht_err(ret));
	if (bar)
		munmap((void *)bar, size);
	/* The host's check (verify_bar.py); nothing touches the device after this. */
	if (bar && !wrong_end && !ov)
		tap_diag("svod-bar-sentinel: %llu 0x%02x", (unsigned long long)size, SENTINEL);
}

/*
 * An asynchronous DMA STAGE of DMA_LEN bytes of 0x77 on tier @id (seconds
 * under TCG), on a file of its own (*@dfd, -1 if none opened): its
 * allocation, source (free it) and timeline value. Returns 0 or the errno
 * of the first step that failed (-EOPNOTSUPP: no DMA_MEMCPY channel).
 */
static int dma_in_flight(uint32_t id, int *dfd, struct svod_alloc *da, uint8_t **dsrc,
			 uint64_t *dseq)
{
	int ret;

	*dfd = ht_open();
	ret = *dfd < 0 ? *dfd : svod_alloc(*dfd, id, DMA_LEN, 0, da);
	*dsrc = malloc(DMA_LEN);
	if (!*dsrc)
		ret = -ENOMEM;
	if (!ret) {
		memset(*dsrc, 0x77, DMA_LEN);
		ret = svod_stage_async(*dfd, da->handle, 0, *dsrc, DMA_LEN, SVOD_XFER_DMA, dseq,
				       NULL);
	}
	return ret;
}

/* How test_recover() takes the device out of service and back. */
enum recover_how { RESET, AER_NONFATAL, AER_FATAL, NR_HOW };

static const char *const how_name[NR_HOW] = { "reset", "aer_nonfatal", "aer_fatal" };

#define NR_RECOVER_CASES	8

/*
 * aer_inject's record (drivers/pci/pcie/aer_inject.c): an error as if
 * @bus:@dev.@fn reported it to its root port.
 */
struct aer_error_inj {
	uint8_t bus, dev, fn;
	uint32_t uncor_status, cor_status;
	uint32_t header_log0, header_log1, header_log2, header_log3;
	uint32_t domain;
};

#define PCI_ERR_UNC_DLP		0x00000010	/* fatal by default */
#define PCI_ERR_UNC_COMP_ABORT	0x00008000	/* non-fatal by default */

/*
 * An uncorrectable error reported by the root port above @bdf (the device
 * has no AER capability of its own; the port's recovery reaches every
 * device below it): non-fatal, or fatal, which resets the port's bus.
 */
static int inject_aer(const char *bdf, int fatal)
{
	char path[512], real[PATH_MAX], *dev, *port;
	struct aer_error_inj e = { .uncor_status = fatal ? PCI_ERR_UNC_DLP :
						       PCI_ERR_UNC_COMP_ABORT };
	unsigned int dom, bus, d, fn;
	int f, ret;

	snprintf(path, sizeof(path), SVOD_SYSFS_DEVICES "/%s", bdf);
	if (!realpath(path, real))
		return -errno;
	dev = strrchr(real, '/');
	if (!dev)
		return -EINVAL;
	*dev = '\0';
	port = strrchr(real, '/');
	if (!port || sscanf(port + 1, "%x:%x:%x.%x", &dom, &bus, &d, &fn) != 4)
		return -EINVAL;
	e.domain = dom;
	e.bus = bus;
	e.dev = d;
	e.fn = fn;
	f = open("/dev/aer_inject", O_WRONLY | O_CLOEXEC);
	if (f < 0)
		return -errno;
	ret = write(f, &e, sizeof(e)) == sizeof(e) ? 0 : -errno;
	close(f);
	return ret;
}

/* svod's state of @bdf (sysfs svod_state) is @want within 30 s: 0, or -ETIMEDOUT. */
static int wait_state(const char *bdf, const char *want)
{
	char path[512], v[32] = "";
	int i;

	snprintf(path, sizeof(path), SVOD_SYSFS_DEVICES "/%s/svod_state", bdf);
	for (i = 0; i < 3000; i++) {
		if (!ht_read_line(path, v, sizeof(v)) && !strcmp(v, want))
			return 0;
		usleep(10000);
	}
	return -ETIMEDOUT;
}

/*
 * The second device taken out of service and brought back under load: a
 * reset through sysfs, or an injected PCIe error. Its tier is retired as
 * on an unbind and a new one comes back: each call the loaders start
 * afterwards on the old tier or through the shared allocation fails with
 * ENODEV (stores SIGBUS); the asynchronous DMA STAGE in flight ends; the
 * BAR holds zeroes only once the device is back (the old tier's ranges
 * scrubbed, the new tier zeroed) and keeps them while the loaders go on;
 * a new allocation works and an old handle names nothing; the kernel log
 * says both steps.
 */
static void test_recover(uint64_t seed, enum recover_how how)
{
	const char *name = how_name[how];
	struct loader l[NR_LOADERS], sum;
	struct svod_tier_info t1, t2;
	struct sharer sh = {};
	struct svod_alloc da = {}, fa = {};
	uint8_t *dsrc = NULL, pat[4096], back[4096];
	uint64_t size = 0, dseq = 0, ddone = 0, nz1 = ~0ULL, nz2 = ~0ULL;
	volatile uint8_t *bar;
	long long pinned = -1;
	int ret, dfd = -1, dret, dst = 1, sh_ret, kfd, kfd2, out = 0, back_in = 0, old = 1, fresh;
	double ms;
	unsigned int i;

	if (!have_dev1 || svod_tier_by_device(fd, bdf1, &t1)) {
		for (i = 0; i < NR_RECOVER_CASES; i++)
			tap_skip("no second device", "%s case %u", name, i);
		return;
	}
	/* Two readers: each call of ht_kmsg_find() consumes what it read. */
	kfd = ht_kmsg_open();
	kfd2 = ht_kmsg_open();
	start_loaders(l, t1.id, seed);
	sh.id = t1.id;
	sh.setup = -EAGAIN;
	sh_ret = pthread_create(&sh.thread, NULL, share, &sh);
	dret = dma_in_flight(t1.id, &dfd, &da, &dsrc, &dseq);
	usleep(500 * 1000);
	ms = now_ms();
	if (how == RESET) {
		char path[512];

		snprintf(path, sizeof(path), SVOD_SYSFS_DEVICES "/%s/reset", bdf1);
		ret = ht_write_file(path, "1");
	} else {
		ht_write_file("/dev/kmsg", how == AER_FATAL ?
			      "svod-expect-fault: begin t_unbind_load fatal PCIe error" :
			      "svod-expect-fault: begin t_unbind_load non-fatal PCIe error");
		ret = inject_aer(bdf1, how == AER_FATAL);
		/* Recovery runs in the AER thread: out of service, then back. */
		for (i = 0; !ret && i < 3000; i++) {
			if (!svod_tier_by_device(fd, bdf1, &t2) && t2.id != t1.id)
				break;
			usleep(10000);
		}
		if (!ret && i == 3000)
			ret = -ETIMEDOUT;
	}
	ret = ret ? ret : wait_state(bdf1, "live");
	ms = now_ms() - ms;
	__atomic_store_n(&unbound, 2, __ATOMIC_RELEASE);
	bar = bar_map(bdf1, PROT_READ, &size);
	if (bar)
		nz1 = count_not(bar, size, 0);
	usleep(300 * 1000);
	stop_loaders(l, &sum);
	if (!sh_ret)
		pthread_join(sh.thread, NULL);
	if (bar) {
		nz2 = count_not(bar, size, 0);
		munmap((void *)bar, size);
	}
	if (how != RESET) {
		/* The AER core's last lines ("recovery successful") first. */
		usleep(500 * 1000);
		ht_write_file("/dev/kmsg", "svod-expect-fault: end");
	}
	ret = ret ? ret : svod_tier_by_device(fd, bdf1, &t2);
	tap_ok(!ret && t2.id != t1.id && t2.free_bytes == t2.capacity,
	       "%s_under_load_back_in_service (%s in %.1f ms, tier %u -> %u)", name, ht_err(ret),
	       ms, t1.id, ret ? 0 : t2.id);
	tap_ok(sum.after_fill > 0 && sum.bad_after == 0,
	       "%s_every_call_after_enodev (%u ops, %u after, %u did not)", name, sum.ops,
	       sum.after_fill, sum.bad_after);
	tap_ok(sum.mismatches == 0 && sum.surprises == 0,
	       "%s_reads_match_and_errnos_documented (%u mismatches, %u surprises)", name,
	       sum.mismatches, sum.surprises);
	tap_ok(!sh_ret && !sh.setup && sh.after_fill > 0 && !sh.bad_after && !sh.surprises,
	       "%s_shared_allocation_enodev_and_sigbus (%s; %u ops, %u after, %u not ENODEV/SIGBUS)",
	       name, ht_err(sh_ret ? -sh_ret : sh.setup), sh.ops, sh.after_fill, sh.bad_after);
	tap_ok(size && nz1 == 0 && nz2 == 0,
	       "%s_bar_zero_once_back_and_after_load (%llu bytes, %llu then %llu not zero)", name,
	       (unsigned long long)size, (unsigned long long)nz1, (unsigned long long)nz2);
	old = dfd < 0 ? dfd : svod_read(dfd, da.handle, 0, back, sizeof(back), SVOD_XFER_CPU, NULL);
	if (dret == -EOPNOTSUPP) {
		tap_skip("no DMA_MEMCPY channel", "%s_async_dma_in_flight_ends", name);
	} else {
		dret = dret ? dret : svod_wait(dfd, dseq, -1, &dst, &ddone);
		close(dfd);
		dfd = -1;
		/* Unpinned by the job's cleanup, queued after its fence signalled. */
		for (i = 0; i < 200 && (ht_pinned_pages(&pinned) || pinned); i++)
			usleep(10000);
		tap_ok(!dret && dst == -ENODEV && pinned == 0,
		       "%s_async_dma_in_flight_ends_enodev (%s, status %d, done %llu of %u, %lld pages pinned after)",
		       name, ht_err(dret), dst, (unsigned long long)ddone, DMA_LEN, pinned);
	}
	if (dfd >= 0)
		close(dfd);
	free(dsrc);
	/* A new allocation works; the old one's handle names nothing. */
	dfd = ht_open();
	ht_fill_xorshift(pat, sizeof(pat), seed);
	fresh = dfd < 0 ? dfd : svod_alloc(dfd, ret ? 0 : t2.id, sizeof(pat), 0, &fa);
	fresh = fresh ? fresh : svod_stage(dfd, fa.handle, 0, pat, sizeof(pat), SVOD_XFER_CPU, NULL);
	fresh = fresh ? fresh : svod_read(dfd, fa.handle, 0, back, sizeof(back), SVOD_XFER_CPU, NULL);
	fresh = fresh ? fresh : memcmp(pat, back, sizeof(pat)) ? -EBADMSG : 0;
	tap_ok(!fresh && old == -ENODEV,
	       "%s_fresh_allocation_works_old_handle_does_not (%s; old: %s)", name,
	       ht_err(fresh), ht_err(old));
	if (dfd >= 0)
		close(dfd);
	if (kfd >= 0 && kfd2 >= 0) {
		out = ht_kmsg_find(kfd, "out of service");
		back_in = ht_kmsg_find(kfd2, "back in service");
	}
	if (kfd >= 0)
		close(kfd);
	if (kfd2 >= 0)
		close(kfd2);
	tap_ok(out == 1 && back_in == 1, "%s_logged (%d out of service, %d back in service)",
	       name, out, back_in);
}

static void test_unbind_load(uint64_t seed)
{
	struct loader l[NR_LOADERS], sum;
	struct svod_tier_info t1;
	unsigned int i, ops = 0, after = 0, bad = 0, mism = 0, surp = 0;
	uint64_t h1, h2, dseq = 0, ddone = 0;
	struct svod_alloc da = { 0 };
	uint8_t *dsrc = NULL;
	int ret, dfd = -1, dret, dst = 1;
	double ms;

	if (!have_dev1 || svod_tier_by_device(fd, bdf1, &t1)) {
		for (i = 0; i < 9; i++)
			tap_skip("no second device", "unbind_load case %u", i);
		return;
	}
	start_loaders(l, t1.id, seed);
	/* And an asynchronous DMA STAGE in flight (seconds under TCG). */
	dret = dma_in_flight(t1.id, &dfd, &da, &dsrc, &dseq);
	usleep(500 * 1000);
	ms = now_ms();
	ret = svod_driver_bind(bdf1, 0);
	ms = now_ms() - ms;
	__atomic_store_n(&unbound, 1, __ATOMIC_RELEASE);
	tap_errno(ret, 0, "unbind_under_load (%.1f ms)", ms);
	h1 = bar_hash(bdf1);
	usleep(300 * 1000);
	h2 = bar_hash(bdf1);
	stop_loaders(l, &sum);
	ops = sum.ops;
	after = sum.after;
	bad = sum.bad_after;
	mism = sum.mismatches;
	surp = sum.surprises;
	tap_ok(h1 && h1 == h2 && h2 == bar_hash(bdf1),
	       "bar_unchanged_after_unbind (0x%llx)", (unsigned long long)h1);
	tap_ok(ops > after && after > 0, "loaders_ran_before_and_after (%u ops, %u after)",
	       ops, after);
	tap_ok(bad == 0, "every_call_after_unbind_enodev (%u did not)", bad);
	tap_ok(mism == 0, "read_returns_what_stage_wrote (%u mismatches)", mism);
	tap_ok(surp == 0, "only_documented_errnos (%u surprises)", surp);
	if (dret == -EOPNOTSUPP) {
		tap_skip("no DMA_MEMCPY channel", "async_dma_in_flight_ends_at_unbind");
	} else {
		dret = dret ? dret : svod_wait(dfd, dseq, -1, &dst, &ddone);
		tap_ok(!dret && (dst == -ENODEV || (!dst && ddone == DMA_LEN)),
		       "async_dma_in_flight_ends_at_unbind (%s, status %d, done %llu of %u)",
		       ht_err(dret), dst, (unsigned long long)ddone, DMA_LEN);
	}
	if (dfd >= 0)
		close(dfd);
	free(dsrc);
	tap_errno(svod_driver_bind(bdf1, 1), 0, "rebind_after_load");
	ret = svod_tier_by_device(fd, bdf1, &t1);
	tap_ok(!ret && t1.free_bytes == t1.capacity && t1.nr_live == 0,
	       "rebound_tier_clean (%s)", ht_err(ret));
}

int main(void)
{
	char bdfs[4][SVOD_NAME_LEN];
	uint64_t seed;
	int n;

	tap_plan(NR_CASES);
	seed = ht_seed("t_unbind_load");
	fd = ht_open();
	n = svod_devices(bdfs, 4);
	if (fd < 0 || n < 1) {
		tap_diag("no device: %s", ht_err(fd < 0 ? fd : n));
		return tap_done();
	}
	memcpy(bdf0, bdfs[0], sizeof(bdf0));
	if (n > 1) {
		memcpy(bdf1, bdfs[1], sizeof(bdf1));
		have_dev1 = 1;
	}
	test_stall();
	test_unbind_load(seed);
	test_recover(seed, RESET);
	test_recover(seed, AER_NONFATAL);
	test_recover(seed, AER_FATAL);
	test_sentinel(seed);
	close(fd);
	/* Live tiers are back as they were: forget the declarations made. */
	ht_undeclare_all();
	return tap_done();
}
