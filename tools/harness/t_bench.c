// SPDX-License-Identifier: GPL-2.0
/*
 * t_bench: figures, not verdicts. Prints "# bench: ..." lines (the rig
 * collects them into the run's summary) and one "ok" per measurement that
 * completed.
 *
 * 1. CPU engine STAGE and READ throughput against a direct userspace memcpy
 *    into (and out of) the same BAR range mapped through sysfs resource2_wc,
 *    4 KiB to 16 MiB, as MB/s and the ratio ioctl/direct.
 * 2. The ALLOC+FREE ioctl pair against a null ioctl (QUERY with nr_tiers 0).
 *
 * Each figure is the best of several timed rounds of at least
 * BENCH_ROUND_MS, so a descheduled round on a shared host does not count.
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

#define BENCH_ROUND_MS	100
#define BENCH_ROUNDS	2
#define MAX_SIZE	(16u << 20)
#define NULL_OPS	2000

static const uint32_t sizes[] = {
	4u << 10, 64u << 10, 256u << 10, 1u << 20, 4u << 20, 16u << 20,
};

/* The CPU figures: stage, read, direct write, direct read per size. */
#define NR_CASES	(ARRAY_SIZE(sizes) * 2 + 2)

static int fd = -1;
static struct svod_tier_info tier;

enum op { OP_STAGE, OP_READ, OP_MEMCPY_TO, OP_MEMCPY_FROM };

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
	}
	return -EINVAL;
}

/* Best MB/s over BENCH_ROUNDS rounds, or a negative errno. */
static double measure(enum op op, uint64_t h, uint8_t *buf,
		      volatile uint8_t *bar, uint32_t len)
{
	double best = 0, t0, dt;
	unsigned int r, n;
	int ret;

	for (r = 0; r < BENCH_ROUNDS; r++) {
		n = 0;
		t0 = now_s();
		do {
			ret = run_op(op, h, buf, bar, len);
			if (ret)
				return ret;
			n++;
			dt = now_s() - t0;
		} while (dt * 1000 < BENCH_ROUND_MS);
		if ((double)len * n / dt / 1e6 > best)
			best = (double)len * n / dt / 1e6;
	}
	return best;
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
	double mbs, direct;
	int ret;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		ret = svod_alloc(fd, tier.id, sizes[i], 0, &a);
		if (!ret && wc)
			ret = ht_bar2_offset(&tier, a.device_addr, &off);
		for (dir = 0; dir < 2; dir++) {
			mbs = ret ? ret : measure(dir ? OP_READ : OP_STAGE, a.handle,
						  buf, NULL, sizes[i]);
			direct = !ret && wc ?
				 measure(dir ? OP_MEMCPY_FROM : OP_MEMCPY_TO, 0, buf,
					 wc + off, sizes[i]) : 0;
			if (mbs <= 0) {
				tap_ok(0, "bench_cpu_%s_%u (%d)", names[dir], sizes[i], (int)mbs);
				continue;
			}
			if (direct > 0)
				printf("# bench: cpu %s %8u B: ioctl %9.1f MB/s, direct resource2_wc memcpy %9.1f MB/s, ratio %.2f\n",
				       names[dir], sizes[i], mbs, direct, mbs / direct);
			else
				printf("# bench: cpu %s %8u B: ioctl %9.1f MB/s (no direct mapping)\n",
				       names[dir], sizes[i], mbs);
			tap_ok(1, "bench_cpu_%s_%u", names[dir], sizes[i]);
		}
		if (!ret)
			svod_free(fd, a.handle);
	}
}

static void bench_alloc_free(void)
{
	struct svod_query q;
	struct svod_alloc a;
	double t0, null_ns, pair_ns;
	unsigned int i;
	int ret = 0;

	t0 = now_s();
	for (i = 0; i < NULL_OPS && !ret; i++) {
		/* QUERY writes the tier count back: ask for none every time. */
		q = (struct svod_query){};
		ret = svod_ioctl(fd, SVOD_IOCTL_QUERY, &q);
	}
	null_ns = (now_s() - t0) * 1e9 / NULL_OPS;
	tap_ok(!ret, "bench_null_ioctl (%d)", ret);

	t0 = now_s();
	for (i = 0; i < NULL_OPS && !ret; i++) {
		ret = svod_alloc(fd, tier.id, 4096, 0, &a);
		if (!ret)
			ret = svod_free(fd, a.handle);
	}
	pair_ns = (now_s() - t0) * 1e9 / NULL_OPS;
	if (!ret)
		printf("# bench: alloc+free pair %.0f ns, null ioctl (QUERY nr_tiers=0) %.0f ns, ratio %.2f\n",
		       pair_ns, null_ns, pair_ns / null_ns);
	tap_ok(!ret, "bench_alloc_free_pair (%d)", ret);
}

int main(void)
{
	volatile uint8_t *wc = NULL;
	uint64_t wc_len = 0;
	uint8_t *buf;
	int ret;

	tap_plan(NR_CASES);
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
	if (wc)
		munmap((void *)wc, wc_len);
	close(fd);
	return tap_done();
}
