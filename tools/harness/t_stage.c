// SPDX-License-Identifier: GPL-2.0
/*
 * t_stage: SVOD_IOCTL_STAGE and SVOD_IOCTL_READ with both engines.
 *
 * Round trips at random sizes and offsets (1 byte, page-crossing, unaligned
 * heads and tails) from anonymous, memfd, tmpfs-file and read-only buffers;
 * every error path with its errno and the device region unchanged after it;
 * stage/free and stage/close races from threads (the range must come back
 * zeroed: no transfer may land after the scrub); a fatal and a non-fatal
 * signal during a DMA stage; the per-engine byte counters; auto mode above
 * dma_threshold.
 *
 * `t_stage --manifest` (run by the guest's init after the harness and the
 * unload test, with svod.ko loaded again) is the host proof instead: a keeper
 * process (its own session, so no timeout reaches it) stages xorshift32
 * patterns with both engines, prints one
 * "# svod-manifest: <bar2-offset-hex> <length> <seed>" line per range and
 * sleeps with its file open until power-off; tools/testing/verify_bar.py
 * then checks the ivshmem backing file on the host. Its pid is in
 * /tmp/svod-keeper.pid.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
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

#define NR_CASES	34

#define ALLOC_LEN	(1u << 20)
#define RANDOM_ROUNDS	200
#define RACE_LEN	(256u << 10)
#define RACE_ROUNDS	20
#define DMA_SIG_LEN	((64u << 10) + 300)	/* two DMA chunks */
#define BIG_LEN		((3u << 20) + 5)	/* four CPU chunks */
#define DMA_KILL_LEN	(256u << 10)

static int fd = -1;
static struct svod_tier_info tier;
static size_t page;
static uint64_t rng;
static int have_dma;

static void fill_random(uint8_t *p, size_t len)
{
	ht_fill_xorshift(p, len, (uint32_t)ht_rand(&rng) | 1);
}

static uint64_t rand_below(uint64_t n)
{
	return n ? ht_rand(&rng) % n : 0;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int alloc_on(int f, uint64_t size, uint64_t *handle)
{
	struct svod_alloc a;
	int ret;

	ret = svod_alloc(f, tier.id, size, 0, &a);
	if (!ret)
		*handle = a.handle;
	return ret;
}

/* A copy of the whole allocation, read with the CPU engine. */
static int snapshot(uint64_t h, uint8_t *out, uint64_t len)
{
	return svod_read(fd, h, 0, out, len, SVOD_XFER_CPU, NULL);
}

static int region_unchanged(uint64_t h, const uint8_t *before, uint64_t len)
{
	uint8_t *now = malloc(len);
	int same;

	if (!now)
		return 0;
	same = !snapshot(h, now, len) && !memcmp(now, before, len);
	free(now);
	return same;
}

static int all_zero(const uint8_t *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i])
			return 0;
	return 1;
}

/* Stage @len bytes at @off from @src, read them back into @dst, compare. */
static int roundtrip(uint64_t h, uint64_t off, const uint8_t *src, uint8_t *dst,
		     uint64_t len, uint32_t flags)
{
	uint64_t done = ~0ULL;
	int ret;

	ret = svod_stage(fd, h, off, src, len, flags, &done);
	if (ret || done != len) {
		tap_diag("stage off %llu len %llu flags %u: %d done %llu",
			 (unsigned long long)off, (unsigned long long)len, flags,
			 ret, (unsigned long long)done);
		return 0;
	}
	memset(dst, 0x5a, len);
	ret = svod_read(fd, h, off, dst, len, flags, &done);
	if (ret || done != len) {
		tap_diag("read off %llu len %llu flags %u: %d done %llu",
			 (unsigned long long)off, (unsigned long long)len, flags,
			 ret, (unsigned long long)done);
		return 0;
	}
	if (memcmp(src, dst, len)) {
		tap_diag("mismatch off %llu len %llu flags %u",
			 (unsigned long long)off, (unsigned long long)len, flags);
		return 0;
	}
	return 1;
}

static void test_cpu_roundtrips(uint64_t h, uint8_t *src, uint8_t *dst)
{
	uint8_t *shadow = calloc(1, ALLOC_LEN), *all = malloc(ALLOC_LEN);
	uint64_t off, len, head;
	unsigned int i;
	int ok = 1;

	tap_ok(roundtrip(h, 0, src, dst, 1, SVOD_XFER_CPU), "cpu_1_byte");
	tap_ok(roundtrip(h, page - 1, src + page - 1, dst + 3, 2, SVOD_XFER_CPU),
	       "cpu_page_crossing_2_bytes");
	tap_ok(roundtrip(h, 3, src + 7, dst + 1, 3 * page + 5, SVOD_XFER_CPU),
	       "cpu_unaligned_head_and_tail");
	tap_ok(roundtrip(h, 0, src, dst, ALLOC_LEN, SVOD_XFER_CPU),
	       "cpu_whole_allocation_1MiB");

	if (!shadow || !all || snapshot(h, shadow, ALLOC_LEN))
		ok = 0;
	for (i = 0; ok && i < RANDOM_ROUNDS; i++) {
		switch (i % 4) {
		case 0:
			len = 1 + rand_below(16);
			break;
		case 1:
			len = 1 + rand_below(3 * page);
			break;
		default:
			len = 1 + rand_below(ALLOC_LEN / 4);
		}
		off = rand_below(ALLOC_LEN - len + 1);
		head = rand_below(page);
		fill_random(src + head, len);
		ok = roundtrip(h, off, src + head, dst + rand_below(page), len,
			       i & 1 ? SVOD_XFER_CPU : 0);
		memcpy(shadow + off, src + head, len);
	}
	ok = ok && !snapshot(h, all, ALLOC_LEN) && !memcmp(all, shadow, ALLOC_LEN);
	tap_ok(ok, "cpu_random_roundtrips_%u_and_neighbours_intact", RANDOM_ROUNDS);
	free(shadow);
	free(all);
}

/* Unaligned on both sides and longer than three 1 MiB pinning chunks. */
static void test_cpu_big(void)
{
	uint8_t *src = malloc(BIG_LEN + 64), *dst = malloc(BIG_LEN + 64);
	uint64_t h;
	int ok;

	ok = src && dst && !alloc_on(fd, BIG_LEN + 64, &h);
	if (ok) {
		fill_random(src, BIG_LEN + 64);
		ok = roundtrip(h, 7, src + 3, dst + 5, BIG_LEN, SVOD_XFER_CPU);
		svod_free(fd, h);
	}
	tap_ok(ok, "cpu_3MiB_unaligned_across_chunks");
	free(src);
	free(dst);
}

/* Buffers that are not plain anonymous memory. */
static void test_buffer_kinds(uint64_t h, uint8_t *dst)
{
	char path[] = "/tmp/t_stage.XXXXXX";
	uint8_t *map, *ro;
	int mfd, tfd, ok;
	uint64_t done;

	mfd = memfd_create("t_stage", 0);
	ok = mfd >= 0 && !ftruncate(mfd, 4 * page);
	map = ok ? mmap(NULL, 4 * page, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0) :
		   MAP_FAILED;
	if (map != MAP_FAILED) {
		fill_random(map, 4 * page);
		ok = roundtrip(h, 11, map + 13, dst, 3 * page, SVOD_XFER_CPU);
		munmap(map, 4 * page);
	} else {
		ok = 0;
	}
	tap_ok(ok, "memfd_mapping_stage_and_read");
	if (mfd >= 0)
		close(mfd);

	/* READ into a shared tmpfs file mapping: the bytes reach the file. */
	tfd = mkstemp(path);
	ok = tfd >= 0 && !ftruncate(tfd, 2 * page);
	map = ok ? mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_SHARED, tfd, 0) :
		   MAP_FAILED;
	if (map != MAP_FAILED) {
		fill_random(dst, 2 * page);
		ok = !svod_stage(fd, h, 0, dst, 2 * page, SVOD_XFER_CPU, NULL) &&
		     !svod_read(fd, h, 1, map + 5, page + 17, SVOD_XFER_CPU, NULL) &&
		     msync(map, 2 * page, MS_SYNC) == 0;
		munmap(map, 2 * page);
		ok = ok && pread(tfd, dst + 4 * page, page + 17, 5) == (ssize_t)(page + 17) &&
		     !memcmp(dst + 4 * page, dst + 1, page + 17);
	} else {
		ok = 0;
	}
	tap_ok(ok, "tmpfs_file_mapping_read");
	if (tfd >= 0) {
		close(tfd);
		unlink(path);
	}

	/* A read-only mapping is a fine source and a forbidden destination. */
	ro = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ro == MAP_FAILED) {
		tap_ok(0, "readonly_mapping_stage");
		tap_ok(0, "readonly_mapping_read_efault");
		return;
	}
	fill_random(ro, 2 * page);
	mprotect(ro, 2 * page, PROT_READ);
	ok = !svod_stage(fd, h, 100, ro + 1, page + 1, SVOD_XFER_CPU, &done) &&
	     !svod_read(fd, h, 100, dst, page + 1, SVOD_XFER_CPU, NULL) &&
	     !memcmp(dst, ro + 1, page + 1);
	tap_ok(ok, "readonly_mapping_stage");
	tap_errno(svod_read(fd, h, 0, ro, page, SVOD_XFER_CPU, NULL), -EFAULT,
		  "readonly_mapping_read_efault");
	munmap(ro, 2 * page);
}

static void test_errors(uint64_t h, uint8_t *src)
{
	uint8_t *before = malloc(ALLOC_LEN);
	uint64_t stale, done;
	uint8_t *guard;
	size_t ps;
	int ret;

	if (!before || snapshot(h, before, ALLOC_LEN)) {
		for (ret = 0; ret < 12; ret++)
			tap_ok(0, "errors: no snapshot");
		free(before);
		return;
	}

	done = 7;
	ret = svod_stage(fd, h, 0, NULL, 0, 0, &done);
	tap_ok(ret == 0 && done == 0, "zero_length_is_a_noop (ret %d)", ret);
	tap_errno(svod_stage(fd, h, ALLOC_LEN, src, 0, 0, NULL), 0,
		  "zero_length_at_end_of_grant");
	tap_errno(svod_stage(fd, h, ALLOC_LEN + 1, src, 0, 0, NULL), -ERANGE,
		  "zero_length_beyond_grant_erange");
	tap_errno(svod_stage(fd, h, ALLOC_LEN - 10, src, 11, 0, NULL), -ERANGE,
		  "stage_tail_beyond_grant_erange");
	tap_errno(svod_stage(fd, h, 8, src, UINT64_MAX - 4, SVOD_XFER_CPU, NULL),
		  -ERANGE, "stage_offset_plus_length_wraps_erange");
	tap_errno(svod_read(fd, h, UINT64_MAX, src, 2, 0, NULL), -ERANGE,
		  "read_offset_u64_max_erange");
	tap_errno(svod_stage(fd, h, 0, src, 1, SVOD_XFER_CPU | SVOD_XFER_DMA, NULL),
		  -EINVAL, "both_engines_einval");
	tap_errno(svod_stage(fd, h, 0, NULL, 64, SVOD_XFER_CPU, NULL), -EFAULT,
		  "null_user_buffer_efault");

	/* A source whose second page is unmapped: the stage faults. */
	guard = ht_guarded_page(&ps);
	tap_errno(guard ? svod_stage(fd, h, 0, guard, 2 * ps, SVOD_XFER_CPU, NULL) : -ENOMEM,
		  -EFAULT, "source_runs_into_unmapped_page_efault");
	if (guard)
		ht_unguard_page(guard, ps);
	/* The faulting stage may have moved its first page; put it back. */
	svod_stage(fd, h, 0, before, page, SVOD_XFER_CPU, NULL);

	ret = alloc_on(fd, page, &stale);
	if (!ret)
		ret = svod_free(fd, stale);
	tap_errno(ret ? ret : svod_stage(fd, stale, 0, src, 1, 0, NULL), -ESTALE,
		  "stage_freed_handle_estale");
	tap_errno(svod_read(fd, h ^ (1ULL << 40), 0, src, 1, 0, NULL), -ESTALE,
		  "read_forged_handle_estale");
	tap_ok(region_unchanged(h, before, ALLOC_LEN),
	       "device_region_unchanged_after_every_error");
	free(before);
}

static void test_stats(uint64_t h, uint8_t *src)
{
	uint64_t before = ht_engine_bytes(fd, tier.id, 0);
	int ret;

	ret = svod_stage(fd, h, 5, src, 12345, SVOD_XFER_CPU, NULL);
	tap_ok(!ret && ht_engine_bytes(fd, tier.id, 0) - before == 12345,
	       "cpu_bytes_counts_a_stage (ret %d, delta %llu)", ret,
	       (unsigned long long)(ht_engine_bytes(fd, tier.id, 0) - before));
}

struct racer {
	int fd;
	uint64_t handle;
	const uint8_t *src;
	volatile int stop;
	int bad;
	unsigned int oks;
	int last;
};

static void *race_stage(void *arg)
{
	struct racer *r = arg;
	int ret;

	do {
		ret = svod_stage(r->fd, r->handle, 0, r->src, RACE_LEN, SVOD_XFER_CPU, NULL);
		if (!ret)
			r->oks++;
		else if (ret != -ESTALE && ret != -EBADF)
			r->bad = ret;
		r->last = ret;
	} while (!ret && !r->stop);
	return NULL;
}

/* A range freed under a running stage comes back scrubbed: never data. */
static int reread_zero(void)
{
	uint8_t *buf = malloc(RACE_LEN);
	uint64_t h;
	int ok;

	ok = buf && !alloc_on(fd, RACE_LEN, &h);
	ok = ok && !svod_read(fd, h, 0, buf, RACE_LEN, SVOD_XFER_CPU, NULL) &&
	     all_zero(buf, RACE_LEN);
	if (buf && ok)
		svod_free(fd, h);
	free(buf);
	return ok;
}

static void test_races(const uint8_t *src)
{
	struct racer r;
	pthread_t t;
	unsigned int i, oks = 0;
	uint64_t free0 = 0;
	int ok = 1, fd2;

	ht_tier_usage(fd, tier.id, &free0, NULL);
	for (i = 0; ok && i < RACE_ROUNDS; i++) {
		memset(&r, 0, sizeof(r));
		r.fd = fd;
		r.src = src;
		if (alloc_on(fd, RACE_LEN, &r.handle) ||
		    pthread_create(&t, NULL, race_stage, &r)) {
			ok = 0;
			break;
		}
		usleep(rand_below(3000));
		ok = !svod_free(fd, r.handle);
		pthread_join(t, NULL);
		oks += r.oks;
		ok = ok && !r.bad && r.last == -ESTALE && reread_zero();
	}
	tap_ok(ok, "stage_free_race_range_returns_zeroed (%u rounds, %u stages won)",
	       i, oks);

	ok = 1;
	for (i = 0; ok && i < RACE_ROUNDS; i++) {
		memset(&r, 0, sizeof(r));
		fd2 = ht_open();
		r.fd = fd2;
		r.src = src;
		if (fd2 < 0 || alloc_on(fd2, RACE_LEN, &r.handle) ||
		    pthread_create(&t, NULL, race_stage, &r)) {
			ok = 0;
			break;
		}
		usleep(rand_below(3000));
		r.stop = 1;
		close(fd2);
		pthread_join(t, NULL);
		ok = !r.bad && ht_wait_free(fd, tier.id, free0, 3000) >= 0 &&
		     reread_zero();
	}
	tap_ok(ok, "stage_close_race_release_completes_zeroed (%u rounds)", i);
}

static void on_usr1(int sig)
{
	(void)sig;
}

struct kicker {
	pthread_t target;
	unsigned int delay_ms;
};

static void *kick(void *arg)
{
	struct kicker *k = arg;

	usleep(k->delay_ms * 1000);
	pthread_kill(k->target, SIGUSR1);
	return NULL;
}

static void test_dma(uint64_t h, uint8_t *src, uint8_t *dst)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	struct kicker k = { .target = pthread_self(), .delay_ms = 300 };
	uint64_t before, done, free0 = 0, t0, h2, moved;
	uint8_t *ro;
	pthread_t t;
	pid_t pid;
	int ret, status, ok;

	if (!have_dma) {
		for (ret = 0; ret < 7; ret++)
			tap_skip("no DMA_MEMCPY channel in this guest", "dma case %d", ret);
		return;
	}
	before = ht_engine_bytes(fd, tier.id, 1);
	fill_random(src, 3 * page);
	tap_ok(roundtrip(h, 100, src + 5, dst + 9, 2 * page + 77, SVOD_XFER_DMA),
	       "dma_unaligned_page_crossing_roundtrip");
	tap_ok(roundtrip(h, 4097, src + page - 1, dst, 1, SVOD_XFER_DMA), "dma_1_byte");
	tap_ok(ht_engine_bytes(fd, tier.id, 1) - before == 2 * (2 * page + 77 + 1),
	       "dma_bytes_counts_stage_and_read (delta %llu)",
	       (unsigned long long)(ht_engine_bytes(fd, tier.id, 1) - before));

	ro = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	tap_errno(ro == MAP_FAILED ? -ENOMEM :
		  svod_read(fd, h, 0, ro, 16, SVOD_XFER_DMA, NULL), -EFAULT,
		  "dma_read_into_readonly_mapping_efault");
	if (ro != MAP_FAILED)
		munmap(ro, page);

	/* Auto mode picks DMA above dma_threshold (0, the default, means never). */
	before = ht_engine_bytes(fd, tier.id, 1);
	ret = svod_param_write("dma_threshold", 4096);
	if (!ret) {
		ret = svod_stage(fd, h, 0, src, 2 * page, 0, NULL);
		svod_param_write("dma_threshold", 0);
	}
	tap_ok(!ret && ht_engine_bytes(fd, tier.id, 1) - before == 2 * page,
	       "auto_mode_uses_dma_above_threshold (ret %d)", ret);

	/*
	 * A non-fatal signal during the first DMA chunk: the chunk completes
	 * (killable wait), the transfer stops before the second with EINTR and
	 * done says one chunk moved; those bytes are in the BAR.
	 */
	sigaction(SIGUSR1, &sa, NULL);
	fill_random(src, DMA_SIG_LEN + 1);
	ret = pthread_create(&t, NULL, kick, &k);
	if (!ret) {
		ret = svod_stage_interruptible(fd, h, 1, src + 1, DMA_SIG_LEN, SVOD_XFER_DMA,
					       &done);
		pthread_join(t, NULL);
	}
	ok = ret == -EINTR && done == 64 << 10 &&
	     !svod_read(fd, h, 1, dst, done, SVOD_XFER_CPU, NULL) &&
	     !memcmp(src + 1, dst, done);
	tap_ok(ok, "dma_nonfatal_signal_stops_between_chunks_with_done (%s, done %llu)",
	       ht_err(ret), (unsigned long long)done);

	/*
	 * SIGKILL during a long DMA stage (four chunks, over 6 s here; the
	 * kill comes 1.5 s in): the process dies without waiting for the
	 * rest, which the tier's DMA byte count shows, not a clock: the
	 * transfer's bytes are counted when its ioctl returns, before the
	 * process can die, and a transfer that ran on to its end would count
	 * them all. Its allocation is released.
	 */
	ht_tier_usage(fd, tier.id, &free0, NULL);
	before = ht_engine_bytes(fd, tier.id, 1);
	pid = fork();
	if (!pid) {
		int cfd = ht_open();

		if (cfd < 0 || alloc_on(cfd, DMA_KILL_LEN, &h2))
			_exit(2);
		svod_stage(cfd, h2, 0, src, DMA_KILL_LEN, SVOD_XFER_DMA, NULL);
		_exit(3);
	}
	usleep(1500 * 1000);
	t0 = now_ms();
	kill(pid, SIGKILL);
	status = ht_wait_exit(pid);
	moved = ht_engine_bytes(fd, tier.id, 1) - before;
	tap_diag("dma stage killed: reaped after %llu ms, %llu of %u bytes moved",
		 (unsigned long long)(now_ms() - t0), (unsigned long long)moved, DMA_KILL_LEN);
	ok = status == 128 + SIGKILL && moved < DMA_KILL_LEN && moved % (64 << 10) == 0 &&
	     ht_wait_free(fd, tier.id, free0, 5000) >= 0;
	tap_ok(ok, "dma_stage_sigkill_stops_before_the_rest_and_releases (status %d)", status);
}

/* Child of the keeper: stage the manifest ranges, report, then hold them. */
static void keeper(int report, uint32_t seed0)
{
	static const struct { uint64_t len; uint32_t flags; } ranges[] = {
		{ 1, SVOD_XFER_CPU }, { 4095, SVOD_XFER_CPU }, { 3 * 4096 + 7, 0 },
		{ 200000, SVOD_XFER_CPU }, { 2 * 4096 + 3, SVOD_XFER_DMA }, { 17, SVOD_XFER_DMA },
	};
	char msg[64] = "ok";
	struct svod_alloc a;
	uint64_t off, skip;
	uint8_t *buf;
	unsigned int i;
	FILE *pidf;
	int kfd, ret;

	setsid();
	pidf = fopen("/tmp/svod-keeper.pid", "we");
	if (pidf) {
		fprintf(pidf, "%d\n", (int)getpid());
		fclose(pidf);
	}
	kfd = ht_open();
	buf = malloc(256 << 10);
	for (i = 0; i < ARRAY_SIZE(ranges) && kfd >= 0 && buf; i++) {
		ret = svod_alloc(kfd, tier.id, ranges[i].len + 64, 0, &a);
		skip = 1 + i * 7 % 60;
		ht_fill_xorshift(buf, ranges[i].len, seed0 + i);
		if (!ret)
			ret = svod_stage(kfd, a.handle, skip, buf, ranges[i].len,
					 ranges[i].flags, NULL);
		if (ret == -EOPNOTSUPP) {
			printf("# keeper: no DMA channel, range %u staged by the CPU\n", i);
			ret = svod_stage(kfd, a.handle, skip, buf, ranges[i].len,
					 SVOD_XFER_CPU, NULL);
		}
		if (!ret)
			ret = ht_bar2_offset(&tier, a.device_addr + skip, &off);
		if (ret) {
			snprintf(msg, sizeof(msg), "range %u: %d", i, ret);
			break;
		}
		printf("# svod-manifest: %llx %llu %u\n", (unsigned long long)off,
		       (unsigned long long)ranges[i].len, seed0 + i);
	}
	if (kfd < 0 || !buf)
		snprintf(msg, sizeof(msg), "open/malloc failed");
	ht_write_all(report, msg, sizeof(msg));
	close(report);
	for (;;)
		pause();
}

static void test_manifest(void)
{
	uint32_t seed0 = (uint32_t)ht_rand(&rng) | 1;
	char msg[64] = "";
	int p[2], ret;
	pid_t pid;

	if (pipe(p)) {
		tap_ok(0, "manifest_keeper_staged_and_holds");
		return;
	}
	pid = fork();
	if (!pid) {
		close(p[0]);
		/* Detach twice: the keeper is nobody's child we wait for. */
		if (fork())
			_exit(0);
		keeper(p[1], seed0);
	}
	close(p[1]);
	ht_wait_exit(pid);
	ret = ht_read_all(p[0], msg, sizeof(msg));
	close(p[0]);
	msg[sizeof(msg) - 1] = '\0';
	tap_ok(!ret && !strcmp(msg, "ok"), "manifest_keeper_staged_and_holds (%s)",
	       ret ? "no report" : msg);
}

static int run_manifest(void)
{
	int ret;

	tap_plan(1);
	rng = ht_seed("t_stage --manifest");
	fd = ht_open();
	ret = fd < 0 ? fd : ht_first_tier(fd, &tier);
	if (ret) {
		tap_ok(0, "manifest_keeper_staged_and_holds (setup %d)", ret);
		return tap_done();
	}
	close(fd);
	test_manifest();
	return tap_done();
}

int main(int argc, char **argv)
{
	uint8_t *src, *dst;
	uint64_t h = 0;
	int ret;

	if (argc == 2 && !strcmp(argv[1], "--manifest"))
		return run_manifest();

	tap_plan(NR_CASES);
	rng = ht_seed("t_stage");
	page = (size_t)sysconf(_SC_PAGESIZE);
	fd = ht_open();
	ret = fd < 0 ? fd : ht_first_tier(fd, &tier);
	if (!ret)
		ret = alloc_on(fd, ALLOC_LEN, &h);
	src = malloc(ALLOC_LEN + 2 * page);
	dst = malloc(ALLOC_LEN + 2 * page);
	if (!tap_ok(!ret && src && dst, "setup_open_tier_alloc_1MiB (%d)", ret))
		return tap_done();
	fill_random(src, ALLOC_LEN + 2 * page);
	ret = svod_stage(fd, h, 0, src, 1, SVOD_XFER_DMA, NULL);
	have_dma = ret == 0;
	tap_ok(ret == 0 || ret == -EOPNOTSUPP,
	       "forced_dma_works_or_eopnotsupp (%d: %s)", ret,
	       have_dma ? "DMA channel present" : "no DMA channel");

	test_cpu_roundtrips(h, src, dst);
	test_cpu_big();
	test_buffer_kinds(h, dst);
	test_errors(h, src);
	test_stats(h, src);
	test_races(src);
	test_dma(h, src, dst);
	svod_free(fd, h);
	close(fd);
	return tap_done();
}
