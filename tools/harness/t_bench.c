// SPDX-License-Identifier: GPL-2.0
/*
 * t_bench: figures, not verdicts. Prints "# bench: ..." lines (the rig
 * collects them into the run's summary) and one "ok" per measurement that
 * completed.
 *
 * 1. CPU engine STAGE and READ throughput against a direct userspace memcpy
 *    into (and out of) the same BAR range mapped through sysfs resource2_wc,
 *    4 KiB to 16 MiB, as MB/s and the ratio ioctl/direct.
 * 2. The ALLOC+FREE ioctl pair (4 KiB) against two null ioctls, an unknown
 *    command (ENOTTY) and QUERY with nr_tiers 0, at 0, 1k, 10k and 100k
 *    allocations live in the tier (held by other open files), with RESOLVE
 *    and the pair at the smallest size for where the time goes. Medians;
 *    the ratio to ENOTTY is the median of the rounds' own ratios.
 *
 * 3. Overlap, by the CPU engine and by DMA: a loop over a few buffers that
 *    stages buffer k+1 while it computes on buffer k (SVOD_XFER_ASYNC, then
 *    WAIT), against the same loop with synchronous stages. The compute is a fixed amount of CPU
 *    work per buffer, calibrated to one synchronous stage's own time, so
 *    transfer and compute are about equal (where overlap gains most:
 *    close to 2x). "bound" is max(total transfer, total compute) as the
 *    synchronous loop measured them in the same round; the ratio
 *    async/bound is 1.00 for a perfect overlap of infinitely many
 *    buffers, (n + 1) / n for n (the first transfer and the last compute
 *    run alone). Medians of the rounds.
 *
 * 4. mmap() of a dma-buf of an allocation (SVOD_IOCTL_EXPORT) against the
 *    allocation's own svod mapping: memcpy into and out of each, 64 KiB to
 *    16 MiB, MB/s and the ratio dma-buf/svod (the same pages, the same
 *    fault handler: about 1.00), after a control at 16 MiB, svod's mapping
 *    against a second one of its own: how far apart two equal sides come.
 *
 * Each CPU figure is the median of BENCH_ROUNDS timed batches of about
 * BENCH_ROUND_MS; the ioctl and the direct copy take turns batch by batch,
 * and the clock is read per batch, never per copy (see measure()); the
 * ratio printed is the median of the rounds' own ratios.
 * On the test kernel (SVOD_KERNEL=test: KASAN, lockdep, kmemleak make its
 * figures those of a debug build) each measurement still runs, smaller:
 * the ALLOC+FREE pair only at 0 and 1k live (the 10k and 100k fills are
 * skipped), the DMA overlap over 8 buffers, one round. The stock boot
 * measures everything at full size.
 * A kernel that refuses the sysfs mapping (CONFIG_IO_STRICT_DEVMEM while the
 * driver owns the BAR; boot with iomem=relaxed) gets the ioctl figures only.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "tap.h"

#define BENCH_ROUND_MS	40
#define BENCH_ROUNDS	9
#define MAX_SIZE	(16u << 20)
#define NULL_OPS	200
#define NULL_ROUNDS	31
#define NR_FILL_FILES	4
#define FILL_PER_FILE	50000u
/* An ioctl number svod does not know: the driver answers ENOTTY. */
#define SVOD_BENCH_ENOTTY	_IO(SVOD_IOCTL_MAGIC, 0x7f)

static const uint32_t sizes[] = {
	4u << 10, 64u << 10, 256u << 10, 1u << 20, 4u << 20, 16u << 20,
};

static const uint32_t dmabuf_sizes[] = { 64u << 10, 1u << 20, 16u << 20 };

/* Stage and read per size, then the ioctl pair at 4 levels of live allocations. */
#define NR_CASES	(ARRAY_SIZE(sizes) * 2 + 4 + 2 + ARRAY_SIZE(dmabuf_sizes) * 2 + 2)

static int fd = -1;
static struct svod_tier_info tier;

enum op { OP_STAGE, OP_READ, OP_MEMCPY_TO, OP_MEMCPY_FROM, OP_DMABUF_TO, OP_DMABUF_FROM };

/* The dma-buf mapping bench_dmabuf() copies into and out of. */
static volatile uint8_t *dmabuf_at;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Volatile-free copies the compiler cannot elide: the BAR is a side effect. */
static int run_op(enum op op, uint64_t h, uint8_t *buf, volatile uint8_t *bar,
		  uint32_t len)
{
	switch (op) {
	case OP_STAGE:
		return svod_stage(fd, h, 0, buf, len, SVOD_XFER_CPU, NULL);
	case OP_READ:
		return svod_read(fd, h, 0, buf, len, SVOD_XFER_CPU, NULL);
	case OP_MEMCPY_TO:
		memcpy((void *)bar, buf, len);
		__sync_synchronize();
		return 0;
	case OP_MEMCPY_FROM:
		memcpy(buf, (const void *)bar, len);
		return 0;
	case OP_DMABUF_TO:
		return run_op(OP_MEMCPY_TO, h, buf, dmabuf_at, len);
	case OP_DMABUF_FROM:
		return run_op(OP_MEMCPY_FROM, h, buf, dmabuf_at, len);
	}
	return -EINVAL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Seconds for @n back-to-back runs of @op, or a negative errno. */
static double time_batch(enum op op, uint64_t h, uint8_t *buf,
			 volatile uint8_t *bar, uint32_t len, unsigned int n)
{
	double t0 = now_s();
	unsigned int i;
	int ret;

	for (i = 0; i < n; i++) {
		ret = run_op(op, h, buf, bar, len);
		if (ret)
			return ret;
	}
	return now_s() - t0;
}

/* Enough runs of @op for one batch of about BENCH_ROUND_MS, or < 0. */
static double batch_size(enum op op, uint64_t h, uint8_t *buf,
			 volatile uint8_t *bar, uint32_t len)
{
	unsigned int n = 1;
	double dt;

	for (;;) {
		dt = time_batch(op, h, buf, bar, len, n);
		if (dt < 0)
			return dt;
		if (dt * 1000 >= BENCH_ROUND_MS / 4 || n >= (1u << 24))
			break;
		n *= 2;
	}
	return n * BENCH_ROUND_MS / 1000.0 / dt + 1;
}

/*
 * MB/s of the ioctl @op and of the direct copy @dop over the same length,
 * each the median of BENCH_ROUNDS batches of about BENCH_ROUND_MS, and in
 * @ratio the median over the rounds of the two sides' ratio in that round
 * (adjacent batches: a slow moment of a shared host cancels out). The two
 * sides take turns round by round (which goes first alternates), so a busy
 * host slows both alike, and the clock is read once per batch, not per
 * copy (a guest whose clocksource is HPET pays a syscall and an MMIO read
 * for each clock_gettime(), which would dilute both sides). Return: 0 or a
 * negative errno.
 */
static int measure(enum op op, uint64_t h, uint8_t *buf, enum op dop,
		   volatile uint8_t *bar, uint32_t len, double *mbs,
		   double *direct, double *ratio)
{
	double rate[2][BENCH_ROUNDS], rt[BENCH_ROUNDS], n[2], dt;
	unsigned int r, k, side, sides = bar ? 2 : 1;

	for (side = 0; side < sides; side++) {
		n[side] = side ? batch_size(dop, 0, buf, bar, len) :
			  batch_size(op, h, buf, NULL, len);
		if (n[side] < 0)
			return (int)n[side];
	}
	for (r = 0; r < BENCH_ROUNDS; r++) {
		for (k = 0; k < sides; k++) {
			side = (k + r) % sides;
			dt = side ? time_batch(dop, 0, buf, bar, len, n[side]) :
			     time_batch(op, h, buf, NULL, len, n[side]);
			if (dt < 0)
				return (int)dt;
			rate[side][r] = (double)len * n[side] / dt / 1e6;
		}
		rt[r] = bar ? rate[0][r] / rate[1][r] : 0;
	}
	for (side = 0; side < sides; side++)
		qsort(rate[side], BENCH_ROUNDS, sizeof(double), cmp_double);
	qsort(rt, BENCH_ROUNDS, sizeof(double), cmp_double);
	*mbs = rate[0][BENCH_ROUNDS / 2];
	*direct = bar ? rate[1][BENCH_ROUNDS / 2] : 0;
	*ratio = rt[BENCH_ROUNDS / 2];
	return 0;
}

static volatile uint8_t *map_wc(uint64_t *len)
{
	char path[256];
	void *p;
	int rfd;

	if (ht_bar_size(tier.device, 2, len))
		return NULL;
	snprintf(path, sizeof(path), SVOD_SYSFS_DEVICES "/%s/resource2_wc", tier.device);
	rfd = open(path, O_RDWR | O_SYNC | O_CLOEXEC);
	if (rfd < 0) {
		tap_diag("bench: open %s: %s", path, strerror(errno));
		return NULL;
	}
	p = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, rfd, 0);
	close(rfd);
	if (p == MAP_FAILED) {
		tap_diag("bench: mmap %s: %s (IO_STRICT_DEVMEM? boot with iomem=relaxed)",
			 path, strerror(errno));
		return NULL;
	}
	return p;
}

static void bench_cpu(uint8_t *buf, volatile uint8_t *wc)
{
	static const char *const names[] = { "stage", "read" };
	struct svod_alloc a;
	uint64_t off = 0;
	unsigned int i, dir;
	double mbs, direct, ratio;
	int ret, err;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		ret = svod_alloc(fd, tier.id, sizes[i], 0, &a);
		if (!ret && wc)
			ret = ht_bar2_offset(&tier, a.device_addr, &off);
		for (dir = 0; dir < 2; dir++) {
			mbs = direct = 0;
			err = ret ? ret :
			      measure(dir ? OP_READ : OP_STAGE, a.handle, buf,
				      dir ? OP_MEMCPY_FROM : OP_MEMCPY_TO,
				      wc ? wc + off : NULL, sizes[i], &mbs, &direct,
				      &ratio);
			if (err || mbs <= 0) {
				tap_ok(0, "bench_cpu_%s_%u (%d)", names[dir], sizes[i], err);
				continue;
			}
			if (direct > 0)
				printf("# bench: cpu %s %8u B: ioctl %9.1f MB/s, direct resource2_wc memcpy %9.1f MB/s, ratio %.2f\n",
				       names[dir], sizes[i], mbs, direct, ratio);
			else
				printf("# bench: cpu %s %8u B: ioctl %9.1f MB/s (no direct mapping)\n",
				       names[dir], sizes[i], mbs);
			tap_ok(1, "bench_cpu_%s_%u", names[dir], sizes[i]);
		}
		if (!ret)
			svod_free(fd, a.handle);
	}
}

/* Per-op ns of @what, median of NULL_ROUNDS rounds of NULL_OPS, or < 0. */
enum null_op { NOP_ENOTTY, NOP_QUERY, NOP_RESOLVE, NOP_PAIR_4K, NOP_PAIR_MIN };

static int run_null_op(enum null_op op, uint64_t h)
{
	struct svod_resolve res;
	struct svod_query q;
	struct svod_alloc a;
	int ret;

	switch (op) {
	case NOP_ENOTTY:
		ret = svod_ioctl(fd, SVOD_BENCH_ENOTTY, NULL);
		return ret == -ENOTTY ? 0 : (ret ? ret : -EPROTO);
	case NOP_QUERY:
		/* QUERY writes the tier count back: ask for none every time. */
		q = (struct svod_query){};
		return svod_ioctl(fd, SVOD_IOCTL_QUERY, &q);
	case NOP_RESOLVE:
		res = (struct svod_resolve){ .handle = h };
		return svod_ioctl(fd, SVOD_IOCTL_RESOLVE, &res);
	case NOP_PAIR_4K:
	case NOP_PAIR_MIN:
		ret = svod_alloc(fd, tier.id, op == NOP_PAIR_4K ? 4096 : tier.align,
				 0, &a);
		return ret ? ret : svod_free(fd, a.handle);
	}
	return -EINVAL;
}

/*
 * Per-op ns of each of @nr ops, median over NULL_ROUNDS rounds in which the
 * ops take turns (NULL_OPS each), so a busy host slows them alike; and in
 * @ratio[k] the median over the rounds of op k's time over twice op 0's in
 * the same round (a pair against two null ioctls measured a few ms apart,
 * so a slow moment of a shared host cancels out). 0 or the first negative
 * errno.
 */
static int null_ns(const enum null_op *ops, unsigned int nr, uint64_t h,
		   double *out, double *ratio)
{
	double t0, ns[8][NULL_ROUNDS], rt[8][NULL_ROUNDS];
	unsigned int r, i, k;
	int ret;

	for (r = 0; r < NULL_ROUNDS; r++) {
		for (k = 0; k < nr; k++) {
			t0 = now_s();
			for (i = 0; i < NULL_OPS; i++) {
				ret = run_null_op(ops[k], h);
				if (ret)
					return ret;
			}
			ns[k][r] = (now_s() - t0) * 1e9 / NULL_OPS;
		}
		for (k = 0; k < nr; k++)
			rt[k][r] = ns[k][r] / (2 * ns[0][r]);
	}
	for (k = 0; k < nr; k++) {
		qsort(ns[k], NULL_ROUNDS, sizeof(ns[k][0]), cmp_double);
		qsort(rt[k], NULL_ROUNDS, sizeof(rt[k][0]), cmp_double);
		out[k] = ns[k][NULL_ROUNDS / 2];
		ratio[k] = rt[k][NULL_ROUNDS / 2];
	}
	return 0;
}

/*
 * Bring the tier to @live allocations of the smallest size, spread over
 * fill files of at most FILL_PER_FILE each (a file holds at most the
 * module's max_handles). Return: 0 or a negative errno.
 */
static int fill_to(int *files, unsigned int *held, unsigned int live)
{
	struct svod_alloc a;
	unsigned int f;
	int ret;

	for (f = 0; f < NR_FILL_FILES && *held < live; f++) {
		if (files[f] < 0)
			files[f] = ht_open();
		if (files[f] < 0)
			return files[f];
		while (*held < live && *held < (f + 1) * FILL_PER_FILE) {
			ret = svod_alloc(files[f], tier.id, tier.align, 0, &a);
			if (ret)
				return ret;
			(*held)++;
		}
	}
	return *held == live ? 0 : -EMFILE;
}

/*
 * The ALLOC+FREE pair (4 KiB, scrub included) against two null ioctls: an
 * unknown command (ENOTTY, the floor every ioctl pays) and QUERY asking for
 * no tier; at 0, 1k, 10k and 100k allocations live in the tier. RESOLVE
 * (file lock and handle lookup) and the pair at the tier's smallest size
 * (a 64-byte scrub) show where the time goes.
 */
static int debug_kernel;	/* the test kernel: smaller runs (see the top) */

static void bench_alloc_free(void)
{
	static const unsigned int levels[] = { 0, 1000, 10000, 100000 };
	int files[NR_FILL_FILES] = { -1, -1, -1, -1 };
	static const enum null_op ops[] = {
		NOP_ENOTTY, NOP_QUERY, NOP_RESOLVE, NOP_PAIR_4K, NOP_PAIR_MIN,
	};
	double ns[ARRAY_SIZE(ops)], rt[ARRAY_SIZE(ops)], enotty, query, resolve;
	double pair, pair_min;
	unsigned int l, f, held = 0;
	struct svod_alloc a;
	int ret;

	for (l = 0; l < ARRAY_SIZE(levels); l++) {
		if (debug_kernel && levels[l] > 1000) {
			tap_skip("test kernel: the stock boot measures it",
				 "bench_alloc_free_pair_live_%u", levels[l]);
			continue;
		}
		ret = fill_to(files, &held, levels[l]);
		/* The file keeps one allocation: RESOLVE's handle. */
		if (!ret)
			ret = svod_alloc(fd, tier.id, tier.align, 0, &a);
		if (!ret) {
			ret = null_ns(ops, ARRAY_SIZE(ops), a.handle, ns, rt);
			svod_free(fd, a.handle);
		}
		if (ret) {
			tap_ok(0, "bench_alloc_free_pair_live_%u (%d)", levels[l], ret);
			continue;
		}
		enotty = ns[0];
		query = ns[1];
		resolve = ns[2];
		pair = ns[3];
		pair_min = ns[4];
		printf("# bench: ioctl live=%-6u alloc+free 4 KiB pair %6.0f ns: %.2fx two ENOTTY ioctls (%.0f ns each), %.2fx two QUERY nr_tiers=0 (%.0f ns each)\n",
		       levels[l], pair, rt[3], enotty, pair / (2 * query), query);
		printf("# bench: ioctl live=%-6u where it goes: pair at %llu B (scrub %llu B) %.0f ns, RESOLVE %.0f ns\n",
		       levels[l], (unsigned long long)tier.align,
		       (unsigned long long)tier.align, pair_min, resolve);
		tap_ok(1, "bench_alloc_free_pair_live_%u", levels[l]);
	}
	for (f = 0; f < NR_FILL_FILES; f++)
		if (files[f] >= 0)
			close(files[f]);
}

/* One overlap measurement: an engine and its sizes. */
struct ov {
	const char *name;
	uint32_t flags;		/* SVOD_XFER_CPU or SVOD_XFER_DMA */
	unsigned int bufs;
	uint32_t len;
	unsigned int rounds;
};

#define OV_MAX_BUFS	16
#define OV_MAX_ROUNDS	5

static volatile uint64_t ov_sink;

/* The "compute" of one buffer: a dependent chain of @iters multiplies. */
static void ov_compute(const uint8_t *buf, uint64_t iters)
{
	uint64_t x = buf[0] | 1, i;

	for (i = 0; i < iters; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	ov_sink = x;
}

/* Multiplies per second of ov_compute(), from a 50 ms run. */
static double ov_rate(const uint8_t *buf)
{
	uint64_t n = 1u << 20;
	double t;

	for (;;) {
		t = now_s();
		ov_compute(buf, n);
		t = now_s() - t;
		if (t > 0.05)
			return n / t;
		n *= 2;
	}
}

/*
 * One round of each loop. @xfer and @comp: the synchronous loop's time in
 * STAGE and in compute. Return: 0 or the first error.
 */
static int ov_round(const struct ov *o, uint64_t h, const uint8_t *src, uint64_t iters,
		    double *sync_s, double *async_s, double *xfer, double *comp)
{
	uint64_t seq[OV_MAX_BUFS];
	double t0, t1;
	unsigned int k;
	int ret = 0, st = 0;

	*xfer = *comp = 0;
	t0 = now_s();
	for (k = 0; k < o->bufs && !ret; k++) {
		t1 = now_s();
		ret = svod_stage(fd, h, (uint64_t)k * o->len, src + (size_t)k * o->len, o->len,
				 o->flags, NULL);
		*xfer += now_s() - t1;
		t1 = now_s();
		ov_compute(src + (size_t)k * o->len, iters);
		*comp += now_s() - t1;
	}
	*sync_s = now_s() - t0;

	t0 = now_s();
	ret = ret ? ret : svod_stage_async(fd, h, 0, src, o->len, o->flags, &seq[0], NULL);
	for (k = 0; k < o->bufs && !ret && !st; k++) {
		if (k + 1 < o->bufs)
			ret = svod_stage_async(fd, h, (uint64_t)(k + 1) * o->len,
					       src + (size_t)(k + 1) * o->len, o->len,
					       o->flags, &seq[k + 1], NULL);
		ret = ret ? ret : svod_wait(fd, seq[k], -1, &st, NULL);
		ov_compute(src + (size_t)k * o->len, iters);
	}
	*async_s = now_s() - t0;
	return ret ? ret : st;
}

static double ov_median(double *v, unsigned int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[n / 2];
}

static void bench_overlap(const struct ov *o)
{
	double sync_s[OV_MAX_ROUNDS], async_s[OV_MAX_ROUNDS], bound[OV_MAX_ROUNDS];
	double ratio[OV_MAX_ROUNDS], xfer, comp, one[3], rate, a_med;
	uint8_t *src = aligned_alloc(4096, (size_t)o->bufs * o->len);
	struct svod_alloc a = { 0 };
	unsigned int i;
	uint64_t iters;
	int ret;

	ret = src ? svod_alloc(fd, tier.id, (uint64_t)o->bufs * o->len, 0, &a) : -ENOMEM;
	if (!ret) {
		memset(src, 0x5c, (size_t)o->bufs * o->len);
		/* Calibrate: the compute of one buffer takes one STAGE's time. */
		for (i = 0; i < 3 && !ret; i++) {
			one[i] = now_s();
			ret = svod_stage(fd, a.handle, 0, src, o->len, o->flags, NULL);
			one[i] = now_s() - one[i];
		}
	}
	if (ret == -EOPNOTSUPP) {
		tap_skip("no DMA_MEMCPY channel", "bench_overlap_%s", o->name);
		goto out;
	}
	rate = ret ? 0 : ov_rate(src);
	iters = ret ? 0 : (uint64_t)(ov_median(one, 3) * rate);
	for (i = 0; i < o->rounds && !ret; i++) {
		ret = ov_round(o, a.handle, src, iters, &sync_s[i], &async_s[i], &xfer, &comp);
		bound[i] = xfer > comp ? xfer : comp;
		ratio[i] = async_s[i] / bound[i];
	}
	if (!ret) {
		a_med = ov_median(async_s, o->rounds);
		printf("# bench: overlap %s: sync %.1f ms, async %.1f ms, bound %.1f ms, ratio %.2f "
		       "(pipeline's own %.2f), sync/async %.2fx (%u buffers of %u KiB, one STAGE "
		       "%.1f ms, medians of %u rounds)\n",
		       o->name, ov_median(sync_s, o->rounds) * 1e3, a_med * 1e3,
		       ov_median(bound, o->rounds) * 1e3, ov_median(ratio, o->rounds),
		       (o->bufs + 1.0) / o->bufs,
		       ov_median(sync_s, o->rounds) / a_med, o->bufs, o->len >> 10,
		       one[1] * 1e3, o->rounds);
	}
	tap_ok(!ret, "bench_overlap_%s (%s)", o->name, ht_err(ret));
out:
	if (a.handle)
		svod_free(fd, a.handle);
	free(src);
}

/*
 * memcpy through a dma-buf's mapping against the allocation's own svod
 * mapping (measure(): batches alternate, medians, the median of the
 * rounds' ratios).
 */
static void bench_dmabuf(uint8_t *buf)
{
	const uint32_t max = dmabuf_sizes[ARRAY_SIZE(dmabuf_sizes) - 1];
	struct svod_export e = { .flags = SVOD_EXPORT_WRITE };
	double dmabuf_mbs, svod_mbs, ratio;
	struct svod_alloc a = { 0 };
	void *mine = NULL, *shared = MAP_FAILED, *second = MAP_FAILED;
	uint64_t len = 0, off = 0;
	unsigned int i, to;
	int ret, allocated;

	e.fd = -1;
	ret = svod_alloc_flags(fd, tier.id, max, 0, SVOD_ALLOC_MAPPABLE, &a);
	allocated = !ret;
	if (!ret)
		ret = svod_map(fd, a.handle, &mine, &len);
	if (!ret)
		ret = svod_map_offset(fd, a.handle, &off, NULL);
	e.handle = a.handle;
	if (!ret)
		ret = svod_ioctl(fd, SVOD_IOCTL_EXPORT, &e);
	if (!ret) {
		shared = mmap(NULL, max, PROT_READ | PROT_WRITE, MAP_SHARED, e.fd, 0);
		ret = shared == MAP_FAILED ? -errno : 0;
	}
	dmabuf_at = shared == MAP_FAILED ? NULL : shared;
	/*
	 * The control: the same measurement with svod's mapping on both sides
	 * (a second mapping of the allocation through /dev/svod in the
	 * dma-buf's place), at the largest size. A ratio away from 1.00 here is
	 * the bench's, not the dma-buf's: at 16 MiB, under TCG, one of the two
	 * sides sometimes runs 1.4-1.5 times faster for a whole measurement,
	 * whichever mapping it is (seen with both orders, with and without the
	 * warm-up below).
	 */
	if (!ret) {
		second = mmap(NULL, max, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)off);
		ret = second == MAP_FAILED ? -errno : 0;
	}
	dmabuf_at = second == MAP_FAILED ? NULL : second;
	/* Every page of the three mappings in before any clock is read. */
	for (to = 0; !ret && to < 2; to++) {
		memcpy(buf, (const void *)(to ? shared : second), max);
		memcpy(buf, mine, max);
	}
	for (to = 0; to < 2; to++) {
		int r = ret ? ret : measure(to ? OP_DMABUF_TO : OP_DMABUF_FROM, 0, buf,
					    to ? OP_MEMCPY_TO : OP_MEMCPY_FROM, mine, max,
					    &dmabuf_mbs, &svod_mbs, &ratio);

		if (!r)
			printf("# bench: dmabuf mmap control %s %8u B: second svod mapping %9.1f MB/s, svod mapping %9.1f MB/s, ratio %.2f\n",
			       to ? "write" : "read", max, dmabuf_mbs, svod_mbs, ratio);
		tap_ok(!r, "bench_dmabuf_mmap_control_%s (%s)", to ? "write" : "read", ht_err(r));
	}
	dmabuf_at = shared == MAP_FAILED ? NULL : shared;
	for (i = 0; i < ARRAY_SIZE(dmabuf_sizes); i++) {
		for (to = 0; to < 2; to++) {
			int r = ret ? ret : measure(to ? OP_DMABUF_TO : OP_DMABUF_FROM, 0, buf,
						    to ? OP_MEMCPY_TO : OP_MEMCPY_FROM, mine,
						    dmabuf_sizes[i], &dmabuf_mbs, &svod_mbs,
						    &ratio);

			/* measure()'s ratio is side 0 over side 1: dma-buf over svod. */
			if (!r)
				printf("# bench: dmabuf mmap %s %8u B: dma-buf mapping %9.1f MB/s, svod mapping %9.1f MB/s, ratio %.2f\n",
				       to ? "write" : "read", dmabuf_sizes[i], dmabuf_mbs,
				       svod_mbs, ratio);
			tap_ok(!r, "bench_dmabuf_mmap_%s_%u (%s)", to ? "write" : "read",
			       dmabuf_sizes[i], ht_err(r));
		}
	}
	if (second != MAP_FAILED)
		munmap(second, max);
	if (shared != MAP_FAILED)
		munmap(shared, max);
	if (mine)
		svod_unmap(mine, len);
	if (e.fd >= 0)
		close(e.fd);
	if (allocated)
		svod_free(fd, a.handle);
}

int main(void)
{
	volatile uint8_t *wc = NULL;
	uint64_t wc_len = 0;
	uint8_t *buf;
	int ret;

	tap_plan(NR_CASES);
	debug_kernel = getenv("SVOD_KERNEL") && !strcmp(getenv("SVOD_KERNEL"), "test");
	fd = ht_open();
	ret = fd < 0 ? fd : ht_first_tier(fd, &tier);
	buf = malloc(MAX_SIZE);
	if (ret || !buf) {
		tap_diag("bench: setup failed (%d)", ret);
		return tap_done();
	}
	memset(buf, 0x3c, MAX_SIZE);
	wc = map_wc(&wc_len);
	bench_cpu(buf, wc);
	bench_alloc_free();
	/*
	 * The first transfer and the last compute cannot overlap: a perfect
	 * pipeline of n buffers takes (n + 1) / n of the bound, 1.06 here.
	 */
	bench_overlap(&(struct ov){ "cpu", SVOD_XFER_CPU, 16, 2u << 20, 5 });
	/* About 300 ms per page through the guest's engine: pages, 3 rounds. */
	if (debug_kernel)
		bench_overlap(&(struct ov){ "dma", SVOD_XFER_DMA, 8, 4096, 1 });
	else
		bench_overlap(&(struct ov){ "dma", SVOD_XFER_DMA, 16, 4096, 3 });
	bench_dmabuf(buf);
	if (wc)
		munmap((void *)wc, wc_len);
	close(fd);
	return tap_done();
}
