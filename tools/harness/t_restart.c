// SPDX-License-Identifier: GPL-2.0
/*
 * t_restart: STAGE and READ survive signals.
 *
 * A storm thread (SIGCHLD blocked in it) vforks children that exit at once,
 * so SIGCHLD keeps arriving at the main thread while it transfers:
 *
 * - with an SA_RESTART handler, 16 MiB CPU and 256 KiB DMA STAGEs and READs
 *   never fail, every byte is right, and the engine's byte counter grew by
 *   exactly what was asked: a restart goes on from where the driver stopped
 *   (struct svod_xfer's resume), it never moves a chunk twice;
 * - the first layout of the struct (48 bytes, no resume) cannot carry that
 *   state: its callers get EINTR, as before;
 * - without SA_RESTART, EINTR with done in whole chunks and resume == done,
 *   the bytes before done written and none after (through READ, and in the
 *   BAR itself through sysfs resource2); issuing the same struct again goes
 *   on from resume until it completes;
 * - libsvod's svod_stage()/svod_read() resume by themselves and complete;
 *   svod_stage_interruptible() returns EINTR;
 * - SIGKILL during a transfer: the process goes away, no page stays pinned
 *   (/proc/vmstat nr_foll_pin_acquired - nr_foll_pin_released is back), the
 *   tier's free bytes are back.
 *
 * Signal counts, restarts and transfers are printed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"
#include "tap.h"

#define NR_CASES	15

#define BIG_LEN		(16u << 20)	/* 16 CPU chunks */
#define CHUNK_CPU	(1u << 20)
#define DMA_LEN		(256u << 10)	/* 4 DMA chunks: seconds under TCG */
#define CPU_ROUNDS	3

/* struct svod_xfer as first published (SVOD_XFER_SIZE_VER0: no resume). */
struct xfer_v0 {
	uint64_t handle, offset, user_ptr, length;
	uint32_t flags, pad;
	uint64_t done;
};

static int fd = -1;
static struct svod_tier_info tier;
static uint8_t *src, *dst, *zeros;

static volatile sig_atomic_t in_call;
static unsigned int signals, signals_in_call, storm_stop;

static void on_sigchld(int sig)
{
	(void)sig;
	__atomic_add_fetch(&signals, 1, __ATOMIC_RELAXED);
	if (in_call)
		__atomic_add_fetch(&signals_in_call, 1, __ATOMIC_RELAXED);
}

static void handle_sigchld(int flags)
{
	struct sigaction sa = { .sa_handler = on_sigchld, .sa_flags = flags };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, NULL);
}

/* vfork()ed children that exit at once: a SIGCHLD each, for the main thread. */
static void *storm(void *arg)
{
	unsigned long *forks = arg;
	sigset_t set;
	pid_t pid;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	while (!__atomic_load_n(&storm_stop, __ATOMIC_ACQUIRE)) {
		pid = vfork();
		if (pid == 0)
			_exit(0);
		if (pid > 0 && waitpid(pid, NULL, 0) == pid)
			(*forks)++;
	}
	return NULL;
}

struct storm_run {
	pthread_t th;
	unsigned long forks;
	unsigned int signals0, in_call0;
	int started;
};

static void storm_start(struct storm_run *s, int sa_flags)
{
	handle_sigchld(sa_flags);
	s->forks = 0;
	s->signals0 = __atomic_load_n(&signals, __ATOMIC_RELAXED);
	s->in_call0 = __atomic_load_n(&signals_in_call, __ATOMIC_RELAXED);
	__atomic_store_n(&storm_stop, 0, __ATOMIC_RELEASE);
	s->started = !pthread_create(&s->th, NULL, storm, &s->forks);
}

/* Stops the storm; returns the signals that arrived during a call. */
static unsigned int storm_stop_count(struct storm_run *s, const char *what)
{
	unsigned int sig, in;

	__atomic_store_n(&storm_stop, 1, __ATOMIC_RELEASE);
	if (s->started)
		pthread_join(s->th, NULL);
	signal(SIGCHLD, SIG_DFL);
	sig = __atomic_load_n(&signals, __ATOMIC_RELAXED) - s->signals0;
	in = __atomic_load_n(&signals_in_call, __ATOMIC_RELAXED) - s->in_call0;
	tap_diag("%s: %lu children, %u SIGCHLD delivered, %u of them during a transfer",
		 what, s->forks, sig, in);
	return in;
}

static int xfer(unsigned long cmd, void *x)
{
	int ret;

	in_call = 1;
	ret = svod_ioctl(fd, cmd, x);
	in_call = 0;
	return ret;
}

static int alloc_big(uint64_t len, uint64_t *h)
{
	struct svod_alloc a;
	int ret = svod_alloc(fd, tier.id, len, 0, &a);

	if (!ret)
		*h = a.handle;
	return ret;
}

/*
 * The BAR itself, not svod's READ: [off, off + len) of @h's allocation,
 * read through the device's sysfs resource2, equals @want.
 */
static int bar_holds(uint64_t h, const uint8_t *want, uint64_t off, uint64_t len)
{
	volatile uint8_t *at;
	struct svod_resolve r;
	size_t map_len;
	void *map;
	int same;

	if (svod_resolve(fd, h, &r) ||
	    ht_bar2_map(&tier, r.device_addr + off, len, &at, &map, &map_len))
		return 0;
	same = !memcmp((const uint8_t *)at, want, len);
	munmap(map, map_len);
	return same;
}

/* The allocation reads back as @want over [off, off + len). */
static int holds(uint64_t h, const uint8_t *want, uint64_t off, uint64_t len)
{
	return !svod_read(fd, h, off, dst, len, SVOD_XFER_CPU, NULL) && !memcmp(dst, want, len);
}

static void test_arguments(uint64_t h)
{
	struct svod_xfer x = { .handle = h, .user_ptr = (uintptr_t)src, .length = 4096,
			       .flags = SVOD_XFER_CPU, .resume = 4097, .done = 7 };
	uint64_t before = ht_engine_bytes(fd, tier.id, 0);
	int ret;

	ret = xfer(SVOD_IOCTL_STAGE, &x);
	tap_ok(ret == -EINVAL && x.done == 0 && ht_engine_bytes(fd, tier.id, 0) == before,
	       "resume_beyond_length_einval_nothing_moved (%s, done %llu)", ht_err(ret),
	       (unsigned long long)x.done);
	x.resume = 4096;
	ret = xfer(SVOD_IOCTL_STAGE, &x);
	tap_ok(ret == 0 && x.done == 4096 && ht_engine_bytes(fd, tier.id, 0) == before,
	       "resume_at_length_nothing_left_done_is_length (%s, done %llu)", ht_err(ret),
	       (unsigned long long)x.done);
}

/* SA_RESTART: no call fails, no chunk moves twice, every byte right. */
static void test_sa_restart(uint64_t h, uint64_t len, uint32_t engine, unsigned int rounds,
			    const char *name)
{
	uint64_t before = ht_engine_bytes(fd, tier.id, engine == SVOD_XFER_DMA), moved;
	unsigned int r, failed = 0, bad = 0, in;
	struct storm_run s;
	int ret;

	storm_start(&s, SA_RESTART);
	for (r = 0; r < rounds; r++) {
		struct svod_xfer st = { .handle = h, .user_ptr = (uintptr_t)src, .length = len,
					.flags = engine };
		struct svod_xfer rd = { .handle = h, .user_ptr = (uintptr_t)dst, .length = len,
					.flags = engine };

		ht_fill_xorshift(src, len, 0x5eed + r);
		memset(dst, 0, len);
		ret = xfer(SVOD_IOCTL_STAGE, &st);
		failed += ret != 0 || st.done != len;
		if (ret)
			tap_diag("%s stage: %s, done %llu", name, ht_err(ret),
				 (unsigned long long)st.done);
		ret = xfer(SVOD_IOCTL_READ, &rd);
		failed += ret != 0 || rd.done != len;
		if (ret)
			tap_diag("%s read: %s, done %llu", name, ht_err(ret),
				 (unsigned long long)rd.done);
		bad += !!memcmp(src, dst, len);
	}
	in = storm_stop_count(&s, name);
	moved = ht_engine_bytes(fd, tier.id, engine == SVOD_XFER_DMA) - before;
	tap_ok(!failed && !bad && in > 0,
	       "sa_restart_storm_%s_stage_and_read_complete (%u rounds, %u failed, %u differ, "
	       "%u signals in calls)", name, rounds, failed, bad, in);
	tap_ok(moved == 2ull * rounds * len,
	       "sa_restart_storm_%s_no_chunk_moved_twice (%llu bytes counted for %llu asked)",
	       name, (unsigned long long)moved, 2ull * rounds * len);
}

/* The 48-byte layout has no resume: EINTR, whatever SA_RESTART says. */
static void test_old_layout(uint64_t h)
{
	struct xfer_v0 x;
	struct storm_run s;
	unsigned int tries;
	int ret = 0;

	storm_start(&s, SA_RESTART);
	for (tries = 0; tries < 8; tries++) {
		x = (struct xfer_v0){ .handle = h, .user_ptr = (uintptr_t)src, .length = BIG_LEN,
				      .flags = SVOD_XFER_CPU };
		ret = xfer(_IOWR(SVOD_IOCTL_MAGIC, 0x04, struct xfer_v0), &x);
		if (ret)
			break;
	}
	storm_stop_count(&s, "first layout");
	tap_ok(ret == -EINTR && x.done > 0 && x.done < BIG_LEN && x.done % CHUNK_CPU == 0,
	       "first_layout_gets_eintr_with_done_under_sa_restart (%s after %u complete, "
	       "done %llu)", ht_err(ret), tries, (unsigned long long)x.done);
}

/* No SA_RESTART: EINTR with done and resume; the same struct goes on. */
static void test_no_restart(void)
{
	struct svod_xfer x;
	uint64_t h = 0, before, last = 0, left, moved;
	unsigned int calls = 0, backwards = 0;
	struct storm_run s;
	int ret, first;

	if (alloc_big(BIG_LEN, &h)) {
		tap_skip("no 16 MiB allocation", "eintr_with_done_and_resume");
		tap_skip("no 16 MiB allocation", "eintr_bytes_before_done_written_none_after");
		tap_skip("no 16 MiB allocation", "same_struct_again_resumes_to_the_end");
		return;
	}
	ht_fill_xorshift(src, BIG_LEN, 0xabc);
	x = (struct svod_xfer){ .handle = h, .user_ptr = (uintptr_t)src, .length = BIG_LEN,
				.flags = SVOD_XFER_CPU };
	storm_start(&s, 0);
	first = xfer(SVOD_IOCTL_STAGE, &x);
	storm_stop_count(&s, "no SA_RESTART, first call");
	tap_ok(first == -EINTR && x.done > 0 && x.done < BIG_LEN && x.done % CHUNK_CPU == 0 &&
	       x.resume == x.done,
	       "eintr_with_done_and_resume (%s, done %llu, resume %llu)", ht_err(first),
	       (unsigned long long)x.done, (unsigned long long)x.resume);
	tap_ok(first == -EINTR && holds(h, src, 0, x.done) &&
	       holds(h, zeros, x.done, BIG_LEN - x.done) && bar_holds(h, src, 0, x.done) &&
	       bar_holds(h, zeros, x.done, BIG_LEN - x.done),
	       "eintr_bytes_before_done_written_none_after (done %llu; READ and the BAR "
	       "through resource2 agree)", (unsigned long long)x.done);

	/* The reads above count too: the counter from here on. */
	before = ht_engine_bytes(fd, tier.id, 0);
	left = BIG_LEN - x.done;
	storm_start(&s, 0);
	last = x.done;
	do {
		ret = xfer(SVOD_IOCTL_STAGE, &x);
		calls++;
		backwards += x.done <= last && ret == -EINTR;
		last = x.done;
	} while (ret == -EINTR && calls < 1000);
	storm_stop_count(&s, "no SA_RESTART, the same struct again");
	moved = ht_engine_bytes(fd, tier.id, 0) - before;
	tap_ok(first == -EINTR && !ret && x.done == BIG_LEN && !backwards && moved == left &&
	       holds(h, src, 0, BIG_LEN),
	       "same_struct_again_resumes_to_the_end (%u calls, %s, %u without progress, "
	       "%llu bytes counted for %llu left)", calls, ht_err(ret), backwards,
	       (unsigned long long)moved, (unsigned long long)left);
	svod_free(fd, h);
}

static void test_libsvod(uint64_t h)
{
	uint64_t done = 0, rdone = 0;
	struct storm_run s;
	int ret, rret, iret;

	ht_fill_xorshift(src, BIG_LEN, 0x11b);
	memset(dst, 0, BIG_LEN);
	storm_start(&s, 0);
	in_call = 1;
	ret = svod_stage(fd, h, 0, src, BIG_LEN, SVOD_XFER_CPU, &done);
	rret = svod_read(fd, h, 0, dst, BIG_LEN, SVOD_XFER_CPU, &rdone);
	in_call = 0;
	storm_stop_count(&s, "libsvod");
	tap_ok(!ret && !rret && done == BIG_LEN && rdone == BIG_LEN && !memcmp(src, dst, BIG_LEN),
	       "libsvod_stage_and_read_resume_after_eintr (%s/%s, done %llu/%llu)", ht_err(ret),
	       ht_err(rret), (unsigned long long)done, (unsigned long long)rdone);

	storm_start(&s, 0);
	in_call = 1;
	iret = svod_stage_interruptible(fd, h, 0, src, BIG_LEN, SVOD_XFER_CPU, &done);
	in_call = 0;
	storm_stop_count(&s, "libsvod interruptible");
	tap_ok(iret == -EINTR && done < BIG_LEN && done % CHUNK_CPU == 0,
	       "libsvod_interruptible_returns_eintr_with_done (%s, done %llu)", ht_err(iret),
	       (unsigned long long)done);
}

/* SIGKILL while a child stages 16 MiB in a loop, each STAGE pinning pages. */
static void test_sigkill(void)
{
	long long pins0 = 0, pins1 = 0;
	uint64_t free0 = 0, moved0 = ht_engine_bytes(fd, tier.id, 0);
	int p[2], status, waited, pret, polls = 0;
	char c = 0;
	pid_t pid;

	pret = ht_pinned_pages(&pins0);
	ht_tier_usage(fd, tier.id, &free0, NULL);
	if (pipe(p)) {
		tap_ok(0, "sigkill_mid_transfer (pipe: %s)", strerror(errno));
		tap_ok(0, "sigkill_mid_transfer_unpins_and_releases");
		return;
	}
	pid = fork();
	if (pid == 0) {
		int cfd = ht_open();
		struct svod_alloc a;

		close(p[0]);
		if (cfd < 0 || svod_alloc(cfd, tier.id, BIG_LEN, 0, &a))
			_exit(2);
		if (ht_write_all(p[1], "r", 1))
			_exit(3);
		for (;;)
			svod_stage(cfd, a.handle, 0, src, BIG_LEN, SVOD_XFER_CPU, NULL);
	}
	close(p[1]);
	/* Killed once its transfers move bytes (a cap of 20000 polls, a net). */
	if (pid > 0 && !ht_read_all(p[0], &c, 1))
		while (ht_engine_bytes(fd, tier.id, 0) == moved0 && polls++ < 20000)
			usleep(1000);
	if (pid > 0)
		kill(pid, SIGKILL);
	close(p[0]);
	status = pid > 0 ? ht_wait_exit(pid) : -1;
	tap_ok(c == 'r' && status == 128 + SIGKILL && ht_engine_bytes(fd, tier.id, 0) > moved0,
	       "sigkill_mid_transfer_kills (status %d, %llu bytes moved before)", status,
	       (unsigned long long)(ht_engine_bytes(fd, tier.id, 0) - moved0));
	waited = ht_wait_free(fd, tier.id, free0, 20000);
	if (!pret)
		pret = ht_pinned_pages(&pins1);
	tap_ok(waited >= 0 && !pret && pins1 == pins0,
	       "sigkill_mid_transfer_unpins_and_releases (free back after %d ms, pinned pages "
	       "%lld before, %lld after: %s)", waited, pins0, pins1, ht_err(pret));
}

int main(void)
{
	uint64_t h = 0, hd = 0;
	int ret, have_dma;

	tap_plan(NR_CASES);
	fd = ht_open();
	ret = fd < 0 ? fd : ht_first_tier(fd, &tier);
	if (!ret)
		ret = alloc_big(BIG_LEN, &h);
	src = malloc(BIG_LEN);
	dst = malloc(BIG_LEN);
	zeros = calloc(1, BIG_LEN);
	if (!tap_ok(!ret && src && dst && zeros, "setup_open_tier_alloc_16MiB (%s)", ht_err(ret)))
		return tap_done();
	memset(src, 0, BIG_LEN);
	memset(dst, 0, BIG_LEN);

	test_arguments(h);
	test_sa_restart(h, BIG_LEN, SVOD_XFER_CPU, CPU_ROUNDS, "cpu_16m");
	ret = alloc_big(DMA_LEN, &hd);
	have_dma = !ret && !svod_stage(fd, hd, 0, src, 1, SVOD_XFER_DMA, NULL);
	if (have_dma) {
		test_sa_restart(hd, DMA_LEN, SVOD_XFER_DMA, 1, "dma_256k");
	} else {
		tap_skip("no DMA_MEMCPY channel", "sa_restart_storm_dma_256k_stage_and_read_complete");
		tap_skip("no DMA_MEMCPY channel", "sa_restart_storm_dma_256k_no_chunk_moved_twice");
	}
	test_old_layout(h);
	svod_free(fd, h);
	test_no_restart();
	if (!alloc_big(BIG_LEN, &h)) {
		test_libsvod(h);
	} else {
		tap_skip("no 16 MiB allocation", "libsvod_stage_and_read_resume_after_eintr");
		tap_skip("no 16 MiB allocation", "libsvod_interruptible_returns_eintr_with_done");
	}
	svod_free(fd, h);
	if (hd)
		svod_free(fd, hd);
	test_sigkill();
	close(fd);
	return tap_done();
}
