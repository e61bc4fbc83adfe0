// SPDX-License-Identifier: GPL-2.0
/*
 * t_dmashare: the DMA channel is shared by every file, and one user's
 * trouble must not break another's transfers (Documentation/staging.rst,
 * "One channel, many users"; issue 59).
 *
 * - file A's asynchronous DMA transfers end with status 0 and their bytes
 *   while file B's synchronous DMA STAGE is SIGKILLed: B's descriptors are
 *   waited out, the channel is not reset under A;
 * - the same while B's STAGE times out (dma_timeout_ms shorter than B's
 *   64 KiB chunks, longer than one descriptor): B gets ETIMEDOUT, A all 0;
 * - a storm of asynchronous DMA STAGEs and READs from three processes with
 *   dma_timeout_ms below the time of most descriptors, so the watchdog
 *   resets the channel again and again (SVOD_DMA_STORM_SECONDS, default
 *   5): every transfer ends with 0, ETIMEDOUT or ECANCELED (FREE while in
 *   flight), no byte of a READ's buffer changes once its WAIT returned (the
 *   engine no longer writes after a reset), no page stays pinned, the
 *   tier's bytes come back and the channel works afterwards.
 *
 * Without a DMA_MEMCPY channel in the guest every case is skipped.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "tap.h"

#define NR_CASES	4
#define KIB		1024u
#define FOREVER		INT64_MAX
#define NR_A		4
#define STORM_PROCS	3
#define STORM_BUFS	4
#define STORM_BUF	(16 * KIB)

static int fd = -1;
static struct svod_tier_info tier;
static uint8_t *src, *dst;

static int submit(int f, uint64_t h, uint64_t off, void *buf, uint64_t len,
		  int to_device, struct svod_xfer *x)
{
	*x = (struct svod_xfer){ .handle = h, .offset = off, .user_ptr = (uintptr_t)buf,
				 .length = len,
				 .flags = SVOD_XFER_DMA | SVOD_XFER_ASYNC };
	return svod_ioctl(f, to_device ? SVOD_IOCTL_STAGE : SVOD_IOCTL_READ, x);
}

static int wait_for(int f, uint64_t seqno, struct svod_wait *w)
{
	*w = (struct svod_wait){ .seqno = seqno, .deadline_ns = FOREVER };
	return svod_ioctl(f, SVOD_IOCTL_WAIT, w);
}

/*
 * B: a child with its own file doing one synchronous DMA STAGE of @len
 * (about 40 KiB/s through edu under TCG); says "s" through the pipe just
 * before it, then its errno (0 or negative) and done. Returns once B is
 * about to start, with the pipe's read end in *@rfd.
 */
static pid_t start_b(uint64_t len, int *rfd)
{
	struct svod_alloc a = { 0 };
	char msg[64] = "", go = 0;
	uint64_t done = 0;
	int p[2], f, ret;
	pid_t pid;

	if (pipe(p))
		return -errno;
	pid = fork();
	if (pid) {
		close(p[1]);
		*rfd = p[0];
		if (pid < 0 || ht_read_all(p[0], &go, 1) || go != 's') {
			close(p[0]);
			return pid < 0 ? -errno : -EPIPE;
		}
		return pid;
	}
	close(p[0]);
	f = ht_open();
	ret = f < 0 ? f : svod_alloc(f, tier.id, len, 0, &a);
	ht_write_all(p[1], "s", 1);
	ret = ret ? ret : svod_stage(f, a.handle, 0, src, len, SVOD_XFER_DMA, &done);
	snprintf(msg, sizeof(msg), "%d %llu", ret, (unsigned long long)done);
	ht_write_all(p[1], msg, sizeof(msg));
	_exit(0);
}

/*
 * A: NR_A asynchronous 4 KiB DMA STAGEs (each one descriptor of 4 KiB) of
 * distinct bytes into a fresh allocation, submitted while B's DMA runs;
 * B is SIGKILLed while they are queued if @kill_b > 0. Then every status
 * and every byte (read back with the CPU).
 */
static int run_a(pid_t kill_b, int *bad_status, char *why, size_t why_len)
{
	struct svod_xfer x[NR_A];
	struct svod_wait w;
	struct svod_alloc a = { 0 };
	uint64_t done = 0;
	int f = ht_open(), ret, i;

	*bad_status = 0;
	ret = f < 0 ? f : svod_alloc(f, tier.id, NR_A * 4 * KIB, 0, &a);
	/* B's first descriptors are on the channel. */
	usleep(500000);
	for (i = 0; i < NR_A && !ret; i++)
		ret = submit(f, a.handle, i * 4 * KIB, src + (i + 1) * 4 * KIB, 4 * KIB, 1, &x[i]);
	if (!ret && kill_b > 0) {
		usleep(300000);
		kill(kill_b, SIGKILL);
	}
	for (i = 0; i < NR_A && !ret; i++) {
		ret = wait_for(f, x[i].seqno, &w);
		if (!ret && (w.status || w.done != 4 * KIB)) {
			(*bad_status)++;
			snprintf(why, why_len, "transfer %d: status %d, done %llu", i, w.status,
				 (unsigned long long)w.done);
		}
	}
	memset(dst, 0, NR_A * 4 * KIB);
	ret = ret ? ret : svod_read(f, a.handle, 0, dst, NR_A * 4 * KIB, SVOD_XFER_CPU, &done);
	if (!ret && memcmp(dst, src + 4 * KIB, NR_A * 4 * KIB)) {
		(*bad_status)++;
		snprintf(why, why_len, "bytes differ");
	}
	if (f >= 0)
		close(f);
	return ret;
}

static void test_sigkill(void)
{
	int rfd = -1, ret, bad = 0, status = -1;
	char why[128] = "";
	pid_t b = -1;

	/* A wrong reset would leave A's jobs to their deadline: keep it short. */
	ret = svod_param_write("async_timeout_ms", 30000);
	if (!ret) {
		b = start_b(1024 * KIB, &rfd);
		ret = b < 0 ? (int)b : 0;
	}
	ret = ret ? ret : run_a(b, &bad, why, sizeof(why));
	if (b > 0) {
		kill(b, SIGKILL);
		status = ht_wait_exit(b);
		close(rfd);
	}
	svod_param_write("async_timeout_ms", 60000);
	tap_ok(!ret && !bad && status == 128 + SIGKILL,
	       "async_dma_of_a_survives_sigkilled_sync_dma_of_b (%s, %d bad: %s; B status %d)",
	       ht_err(ret), bad, why, status);
}

static void test_timeout(void)
{
	unsigned long long bdone = 0;
	int rfd = -1, ret, bad = 0, bret = 1;
	char why[128] = "", msg[64] = "";
	pid_t b = -1;

	ret = svod_param_write("async_timeout_ms", 30000);
	/* Longer than a 4 KiB descriptor (~0.1 s), shorter than a 64 KiB chunk. */
	ret = ret ? ret : svod_param_write("dma_timeout_ms", 1000);
	if (!ret) {
		b = start_b(256 * KIB, &rfd);
		ret = b < 0 ? (int)b : 0;
	}
	ret = ret ? ret : run_a(0, &bad, why, sizeof(why));
	if (b > 0) {
		if (!ht_read_all(rfd, msg, sizeof(msg)))
			sscanf(msg, "%d %llu", &bret, &bdone);
		ht_wait_exit(b);
		close(rfd);
	}
	svod_param_write("dma_timeout_ms", 20000);
	svod_param_write("async_timeout_ms", 60000);
	tap_ok(!ret && !bad && bret == -ETIMEDOUT && bdone < 256 * KIB && !(bdone % (64 * KIB)),
	       "async_dma_of_a_survives_timed_out_sync_dma_of_b (%s, %d bad: %s; B %s, done %llu)",
	       ht_err(ret), bad, why, ht_err(bret), bdone);
}

struct storm_counts {
	long ok, timedout, cancelled, bad_status, late_bytes, calls_failed;
};

/* One storming process: random asynchronous DMA on its own file. */
static void storm_proc(unsigned int idx, unsigned int seconds, int pipe_fd)
{
	struct storm_counts c = { 0 };
	uint8_t *bufs = mmap(NULL, STORM_BUFS * STORM_BUF, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *snap = malloc(STORM_BUF);
	uint64_t rng = ht_seed("t_dmashare") + idx * 0x9e3779b97f4a7c15ULL;
	struct svod_alloc a = { 0 };
	time_t end = time(NULL) + seconds;
	int f = ht_open(), ret;
	unsigned int i = 0, b;
	struct svod_xfer x;
	struct svod_wait w;

	ret = f < 0 || bufs == MAP_FAILED || !snap ? -ENOMEM :
	      svod_alloc(f, tier.id, 64 * KIB, 0, &a);
	while (!ret && time(NULL) < end) {
		uint64_t r = ht_rand(&rng);
		uint64_t len = 1 + r % (12 * KIB), off = (r >> 16) % (64 * KIB - len);
		unsigned int head = (r >> 32) % (STORM_BUF - len);
		int to_device = (r >> 48) & 1, free_it = !((r >> 50) & 7);

		b = i++ % STORM_BUFS;
		if (!to_device)
			memset(bufs + b * STORM_BUF, 0xa5, STORM_BUF);
		ret = submit(f, a.handle, off, bufs + b * STORM_BUF + head, len, to_device, &x);
		if (ret) {
			c.calls_failed++;
			break;
		}
		if (free_it) {
			ret = svod_free(f, a.handle);
			ret = ret ? ret : svod_alloc(f, tier.id, 64 * KIB, 0, &a);
		}
		ret = ret ? ret : wait_for(f, x.seqno, &w);
		if (ret)
			break;
		if (!w.status)
			c.ok++;
		else if (w.status == -ETIMEDOUT)
			c.timedout++;
		else if (w.status == -ECANCELED)
			c.cancelled++;
		else
			c.bad_status++;
		if (!to_device) {
			/*
			 * The READ's WAIT returned: the engine is done with its
			 * buffer. Not a byte of it may change across another
			 * transfer (a STAGE from the next buffer).
			 */
			memcpy(snap, bufs + b * STORM_BUF, STORM_BUF);
			ret = submit(f, a.handle, 0, bufs + ((b + 1) % STORM_BUFS) * STORM_BUF,
				     1 + r % (4 * KIB), 1, &x);
			ret = ret ? ret : wait_for(f, x.seqno, &w);
			if (ret)
				break;
			c.late_bytes += memcmp(snap, bufs + b * STORM_BUF, STORM_BUF) != 0;
		}
	}
	if (ret)
		c.calls_failed++;
	if (f >= 0)
		close(f);
	ht_write_all(pipe_fd, &c, sizeof(c));
	_exit(0);
}

static void test_storm(void)
{
	const char *env = getenv("SVOD_DMA_STORM_SECONDS");
	unsigned int seconds = env ? (unsigned int)strtoul(env, NULL, 10) : 5, i;
	struct storm_counts c, sum = { 0 };
	uint64_t free0 = 0, free1 = 0, done = 0;
	uint32_t live0 = 0, live1 = 0;
	long long pins = -1;
	struct svod_alloc a = { 0 };
	struct svod_xfer x;
	struct svod_wait w;
	pid_t pid[STORM_PROCS];
	int p[2], ret, got = 0;

	tap_diag("t_dmashare: DMA storm for %u s (SVOD_DMA_STORM_SECONDS)", seconds);
	ret = ht_tier_usage(fd, tier.id, &free0, &live0);
	/* Below a 4 KiB page's two edu hop pairs (~0.4 s): most descriptors hang. */
	ret = ret ? ret : svod_param_write("dma_timeout_ms", 250);
	ret = ret ? ret : (pipe(p) ? -errno : 0);
	for (i = 0; i < STORM_PROCS && !ret; i++) {
		pid[i] = fork();
		if (!pid[i])
			storm_proc(i, seconds, p[1]);
	}
	if (!ret) {
		close(p[1]);
		for (i = 0; i < STORM_PROCS; i++) {
			if (ht_read_all(p[0], &c, sizeof(c)) < 0)
				break;
			got++;
			sum.ok += c.ok;
			sum.timedout += c.timedout;
			sum.cancelled += c.cancelled;
			sum.bad_status += c.bad_status;
			sum.late_bytes += c.late_bytes;
			sum.calls_failed += c.calls_failed;
		}
		for (i = 0; i < STORM_PROCS; i++)
			ht_wait_exit(pid[i]);
		close(p[0]);
	}
	svod_param_write("dma_timeout_ms", 20000);
	ret = ret ? ret : ht_wait_free(fd, tier.id, free0, 10000);
	ret = ret ? ret : ht_tier_usage(fd, tier.id, &free1, &live1);
	if (ht_pinned_pages(&pins))
		pins = 0;
	tap_ok(!ret && got == STORM_PROCS && !sum.bad_status && !sum.late_bytes &&
	       !sum.calls_failed && sum.timedout > 0 && free1 == free0 && live1 == live0 &&
	       pins == 0,
	       "dma_storm_with_channel_resets_no_late_byte (%s; %ld ok, %ld reset (ETIMEDOUT), "
	       "%ld cancelled, %ld other status, %ld late, %ld failed calls; pinned %lld)",
	       ht_err(ret), sum.ok, sum.timedout, sum.cancelled, sum.bad_status,
	       sum.late_bytes, sum.calls_failed, pins);

	ret = svod_alloc(fd, tier.id, 64 * KIB, 0, &a);
	ret = ret ? ret : submit(fd, a.handle, 0, src + 7, 64 * KIB, 1, &x);
	ret = ret ? ret : wait_for(fd, x.seqno, &w);
	ret = ret ? ret : w.status;
	memset(dst, 0, 64 * KIB);
	ret = ret ? ret : svod_read(fd, a.handle, 0, dst, 64 * KIB, SVOD_XFER_CPU, &done);
	tap_ok(!ret && !memcmp(dst, src + 7, 64 * KIB),
	       "channel_works_after_the_storm (%s)", ht_err(ret));
	if (a.handle)
		svod_free(fd, a.handle);
}

int main(void)
{
	struct svod_alloc a = { 0 };
	struct svod_xfer x;
	int ret;

	tap_plan(NR_CASES);
	fd = ht_open();
	ret = fd < 0 ? fd : ht_first_tier(fd, &tier);
	src = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	dst = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ret || src == MAP_FAILED || dst == MAP_FAILED) {
		tap_diag("setup: %s", ht_err(ret));
		return tap_done();
	}
	ht_fill_xorshift(src, 1 << 20, 0xd3a);
	ret = svod_alloc(fd, tier.id, 4 * KIB, 0, &a);
	ret = ret ? ret : submit(fd, a.handle, 0, src, 1, 1, &x);
	if (ret == -EOPNOTSUPP) {
		tap_skip("no DMA_MEMCPY channel", "async_dma_of_a_survives_sigkilled_sync_dma_of_b");
		tap_skip("no DMA_MEMCPY channel", "async_dma_of_a_survives_timed_out_sync_dma_of_b");
		tap_skip("no DMA_MEMCPY channel", "dma_storm_with_channel_resets_no_late_byte");
		tap_skip("no DMA_MEMCPY channel", "channel_works_after_the_storm");
		return tap_done();
	}
	svod_free(fd, a.handle);
	test_sigkill();
	test_timeout();
	test_storm();
	return tap_done();
}
