// SPDX-License-Identifier: GPL-2.0
/*
 * t_batch: SVOD_IOCTL_BATCH, many transfers queued as one
 * (Documentation/uapi.rst, "BATCH"; staging.rst, "Batches").
 *
 * - a batch of mixed STAGE and READ entries takes one timeline value (the
 *   next single transfer takes the one after), WAIT reports status 0 and
 *   every byte, the entries run in order (a READ sees the STAGE before
 *   it), the bytes are in the BAR (sysfs resource2, not svod) and in the
 *   READ buffers; its sync_file signals; libsvod's svod_batch() does the
 *   same;
 * - a bad entry at index k for each kind (stale handle, beyond the grant,
 *   a range reaching into a freed neighbour, a STAGE after READs through
 *   a read-only handle (EACCES: a run of entries through one handle is
 *   looked up once per op), an unknown op, an unmapped
 *   buffer found only when pinning, entry flags; an entry size too small,
 *   a nonzero tail at entry k, a count past SVOD_BATCH_MAX_ENTRIES) fails
 *   with its errno and k in failed_entry; the timeline does not move
 *   (seqno 0, fence_fd -1, fdinfo's seqno unchanged), nothing is in flight,
 *   no page stays pinned (fdinfo and /proc/vmstat), no byte lands;
 * - FREE of one allocation a queued batch names cancels the batch
 *   (ECANCELED); close() with a batch queued behind 16 MiB leaves no page
 *   pinned (/proc/vmstat) and the tier's bytes back;
 * - bench "batch 4k": 256 STAGEs of 4 KiB in one batch (submission and
 *   WAIT) against a direct resource2_wc memcpy of the same 256 ranges;
 *   figures and their ratio, never a verdict on time.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/sync_file.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "tap.h"

#define NR_CASES	26

#define KIB		1024u
#define MIB		(1u << 20)
#define FOREVER		INT64_MAX
#define NR		8	/* entries of a refused batch */
#define BAD		5	/* its bad entry */

static struct svod_tier_info tier;
static uint8_t *src, *dst;

static int batch(int f, struct svod_batch_entry *e, uint32_t nr, uint32_t esize,
		 uint32_t flags, struct svod_batch *b)
{
	*b = (struct svod_batch){ .entries_ptr = (uintptr_t)e, .nr_entries = nr,
				  .entry_size = esize, .flags = flags };
	return svod_ioctl(f, SVOD_IOCTL_BATCH, b);
}

static int wait_for(int f, uint64_t seqno, struct svod_wait *w)
{
	*w = (struct svod_wait){ .seqno = seqno, .deadline_ns = FOREVER };
	return svod_ioctl(f, SVOD_IOCTL_WAIT, w);
}

static struct svod_batch_entry entry(uint32_t op, uint64_t h, uint64_t off, void *buf,
				     uint64_t len)
{
	return (struct svod_batch_entry){ .handle = h, .offset = off,
					  .user_ptr = (uintptr_t)buf, .length = len,
					  .op = op };
}

static int all_zero(const volatile uint8_t *p, size_t n)
{
	while (n--)
		if (*p++)
			return 0;
	return 1;
}

/* Mixed entries in order, one timeline value, the bytes, the fence. */
static void test_mixed(int f)
{
	struct svod_batch_entry e[16];
	struct svod_alloc a = { 0 }, a2 = { 0 };
	struct sync_file_info info = { 0 };
	struct svod_batch b = { 0 };
	struct svod_xfer x;
	struct svod_wait w = { 0 };
	volatile uint8_t *at;
	void *map = NULL;
	size_t map_len;
	uint64_t total = 0, seqno = 0;
	uint32_t failed = 0;
	unsigned int i;
	int ret, r2, st = -1;

	ret = svod_alloc(f, tier.id, MIB, 0, &a);
	ret = ret ? ret : svod_alloc(f, tier.id, 64 * KIB, 0, &a2);
	/* Eight STAGEs into two allocations, unaligned buffers and offsets. */
	for (i = 0; i < 6; i++) {
		e[i] = entry(SVOD_BATCH_STAGE, a.handle, i * 96 * KIB + i, src + i * 5000 + 3,
			     4 * KIB + 100 * i);
		total += e[i].length;
	}
	e[6] = entry(SVOD_BATCH_STAGE, a2.handle, 0, src + MIB, 64 * KIB);
	e[7] = entry(SVOD_BATCH_STAGE, a.handle, 900 * KIB, src + 2 * MIB, 0);
	total += 64 * KIB;
	/* READs of what the STAGEs before them wrote. */
	for (i = 8; i < 14; i++) {
		e[i] = entry(SVOD_BATCH_READ, a.handle, e[i - 8].offset, dst + (i - 8) * 8 * KIB + 1,
			     e[i - 8].length);
		total += e[i].length;
	}
	e[14] = entry(SVOD_BATCH_READ, a2.handle, 4 * KIB, dst + 100 * KIB, 60 * KIB);
	e[15] = entry(SVOD_BATCH_READ, a2.handle, 0, dst + 200 * KIB, 0);
	total += 60 * KIB;
	memset(dst, 0, 512 * KIB);

	ret = ret ? ret : batch(f, e, 16, 0, SVOD_BATCH_FENCE_FD, &b);
	tap_ok(!ret && b.seqno == 1 && b.fence_fd >= 0 && b.failed_entry == ~0U,
	       "mixed_batch_takes_seqno_1 (%s, seqno %llu, fence_fd %d, failed %u)",
	       ht_err(ret), (unsigned long long)b.seqno, b.fence_fd, b.failed_entry);
	x = (struct svod_xfer){ .handle = a.handle, .offset = 1000 * KIB,
				.user_ptr = (uintptr_t)src, .length = 4 * KIB,
				.flags = SVOD_XFER_ASYNC };
	r2 = ret ? ret : svod_ioctl(f, SVOD_IOCTL_STAGE, &x);
	tap_ok(!r2 && x.seqno == 2, "next_single_transfer_takes_seqno_2 (%s, %llu)", ht_err(r2),
	       (unsigned long long)x.seqno);
	ret = ret ? ret : wait_for(f, b.seqno, &w);
	tap_ok(!ret && !w.status && w.done == total,
	       "wait_batch_status_0_done_all (%s, status %d, done %llu of %llu)", ht_err(ret),
	       w.status, (unsigned long long)w.done, (unsigned long long)total);
	if (!ret) {
		struct pollfd pfd = { .fd = b.fence_fd, .events = POLLIN };

		st = poll(&pfd, 1, 0) == 1 && !ioctl(b.fence_fd, SYNC_IOC_FILE_INFO, &info) ?
		     info.status : -1;
		close(b.fence_fd);
	}
	tap_ok(st == 1, "batch_fence_signalled (status %d)", st);

	for (r2 = 0, i = 8; i < 14; i++)
		r2 |= memcmp(dst + (i - 8) * 8 * KIB + 1, src + (i - 8) * 5000 + 3, e[i].length);
	r2 |= memcmp(dst + 100 * KIB, src + MIB + 4 * KIB, 60 * KIB);
	tap_ok(!ret && !r2 && all_zero(dst + 200 * KIB, 4 * KIB),
	       "reads_see_the_stages_before_them");

	r2 = -1;
	if (!ret && !ht_bar2_map(&tier, a.device_addr, MIB, &at, &map, &map_len)) {
		for (r2 = 0, i = 0; i < 6; i++)
			for (size_t k = 0; k < e[i].length; k++)
				r2 |= at[e[i].offset + k] != src[i * 5000 + 3 + k];
		r2 |= !all_zero(at + 6 * 96 * KIB + 6, 64 * KIB);
		munmap(map, map_len);
	}
	tap_ok(!r2, "stages_land_in_the_bar (resource2)");

	/* libsvod: the same call. */
	e[0] = entry(SVOD_BATCH_STAGE, a2.handle, 32 * KIB, src + 3 * MIB, 8 * KIB);
	e[1] = entry(SVOD_BATCH_READ, a2.handle, 32 * KIB, dst + 300 * KIB, 8 * KIB);
	ret = svod_wait(f, 2, -1, &st, NULL);
	ret = ret ? ret : svod_batch(f, e, 2, &seqno, NULL, &failed);
	r2 = ret ? ret : svod_wait(f, seqno, -1, &st, NULL);
	tap_ok(!ret && !r2 && seqno == 3 && failed == ~0U && !st &&
	       !memcmp(dst + 300 * KIB, src + 3 * MIB, 8 * KIB),
	       "libsvod_batch (%s/%s, seqno %llu, failed %u, status %d)", ht_err(ret),
	       ht_err(r2), (unsigned long long)seqno, failed, st);
	svod_free(f, a.handle);
	svod_free(f, a2.handle);
}

/*
 * A refused batch: errno and failed entry as expected, the timeline where
 * it was, nothing in flight or pinned, no byte in @h's first 64 KiB.
 */
static void refused(int f, struct svod_batch_entry *e, uint32_t nr, uint32_t esize,
		    int want, uint32_t want_failed, uint64_t h, const char *what)
{
	struct svod_batch b = { 0 };
	long long pins0 = 0, pins1 = 0;
	int64_t seq0 = ht_fdinfo_value(getpid(), f, "svod-async-seqno"), seq1;
	int ret, pret;

	pret = ht_pinned_pages(&pins0);
	b.fence_fd = 77;
	ret = batch(f, e, nr, esize, SVOD_BATCH_FENCE_FD, &b);
	seq1 = ht_fdinfo_value(getpid(), f, "svod-async-seqno");
	pret = pret ? pret : ht_pinned_pages(&pins1);
	memset(dst, 0x55, 64 * KIB);
	if (svod_read(f, h, 0, dst, 64 * KIB, 0, NULL) || !all_zero(dst, 64 * KIB))
		pret = -EIO;
	tap_ok(ret == want && b.failed_entry == want_failed && !b.seqno && b.fence_fd == -1 &&
	       seq1 == seq0 && ht_fdinfo_value(getpid(), f, "svod-async-inflight") == 0 &&
	       ht_fdinfo_value(getpid(), f, "svod-async-pinned") == 0 &&
	       (pret == -ENOENT || (!pret && pins1 == pins0)),
	       "%s (%s, want %s; failed %u, want %u; seqno %llu, fence_fd %d, timeline %lld -> %lld, pins %lld -> %lld, %s)",
	       what, ht_err(ret), ht_err(want), b.failed_entry, want_failed,
	       (unsigned long long)b.seqno, b.fence_fd, (long long)seq0, (long long)seq1,
	       pins0, pins1, ht_err(pret));
}

/* One bad entry at BAD of NR (the others good STAGEs): nothing happens. */
static void test_refusals(int f)
{
	struct svod_batch_entry e[NR], *big;
	struct svod_alloc a = { 0 }, gone = { 0 }, next = { 0 }, b2 = { 0 };
	uint8_t *wide, *unmapped;
	unsigned int i;
	int ret;

	ret = svod_alloc(f, tier.id, MIB, 0, &a);
	ret = ret ? ret : svod_alloc(f, tier.id, 64 * KIB, 0, &gone);
	ret = ret ? ret : svod_free(f, gone.handle);
	if (ret) {
		tap_diag("refusals: setup %s", ht_err(ret));
		return;
	}
#define GOOD() do { for (i = 0; i < NR; i++) \
	e[i] = entry(SVOD_BATCH_STAGE, a.handle, i * 8 * KIB, src + i * 8 * KIB, 8 * KIB); \
	} while (0)

	GOOD();
	e[BAD].handle = gone.handle;
	refused(f, e, NR, 0, -ESTALE, BAD, a.handle, "freed_handle_estale_at_k");
	GOOD();
	e[BAD].handle = a.handle ^ 0x10000;
	refused(f, e, NR, 0, -ESTALE, BAD, a.handle, "forged_handle_estale_at_k");
	GOOD();
	e[BAD].offset = MIB - 4 * KIB;
	refused(f, e, NR, 0, -ERANGE, BAD, a.handle, "beyond_grant_erange_at_k");
	GOOD();
	e[BAD].offset = ~0ULL - 100;
	refused(f, e, NR, 0, -ERANGE, BAD, a.handle, "offset_overflow_erange_at_k");

	/* A neighbour allocated right after, freed: its range is no one's. */
	ret = svod_alloc(f, tier.id, 64 * KIB, 0, &b2);
	ret = ret ? ret : svod_alloc(f, tier.id, 64 * KIB, 0, &next);
	ret = ret ? ret : svod_free(f, next.handle);
	GOOD();
	e[BAD] = entry(SVOD_BATCH_STAGE, b2.handle, 60 * KIB, src, 8 * KIB);
	if (ret)
		tap_ok(0, "into_freed_neighbour_erange_at_k (setup %s)", ht_err(ret));
	else
		refused(f, e, NR, 0, -ERANGE, BAD, a.handle,
			"into_freed_neighbour_erange_at_k");
	if (!ret)
		svod_free(f, b2.handle);

	/* Through a read-only handle: READs are fine, a STAGE after them EACCES. */
	{
		struct svod_import im = { 0 };
		struct svod_alloc m = { 0 };
		int dfd = -1, r;

		r = svod_alloc_flags(f, tier.id, 64 * KIB, 0, SVOD_ALLOC_MAPPABLE, &m);
		r = r ? r : svod_export(f, m.handle, 0, &dfd, NULL);
		r = r ? r : svod_import(f, dfd, &im);
		for (i = 0; i < NR; i++)
			e[i] = entry(SVOD_BATCH_READ, im.handle, i * 4 * KIB,
				     dst + 128 * KIB + i * 4 * KIB, 4 * KIB);
		e[BAD].op = SVOD_BATCH_STAGE;
		e[BAD].user_ptr = (uintptr_t)src;
		if (r)
			tap_ok(0, "stage_through_read_only_handle_eacces_at_k (setup %s)",
			       ht_err(r));
		else
			refused(f, e, NR, 0, -EACCES, BAD, m.handle,
				"stage_through_read_only_handle_eacces_at_k");
		if (im.handle)
			svod_free(f, im.handle);
		if (dfd >= 0)
			close(dfd);
		if (m.handle)
			svod_free(f, m.handle);
	}
	GOOD();
	e[BAD].op = 3;
	refused(f, e, NR, 0, -EINVAL, BAD, a.handle, "unknown_op_einval_at_k");
	GOOD();
	e[BAD].flags = 1;
	refused(f, e, NR, 0, -EINVAL, BAD, a.handle, "entry_flags_einval_at_k");

	/* An address access_ok() takes but nothing maps: found when pinning. */
	unmapped = mmap(NULL, 64 * KIB, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	GOOD();
	e[BAD].user_ptr = (uintptr_t)unmapped;
	if (unmapped != MAP_FAILED)
		munmap(unmapped, 64 * KIB);
	refused(f, e, NR, 0, -EFAULT, BAD, a.handle, "unmapped_buffer_efault_at_k_unpins_earlier");

	GOOD();
	refused(f, e, NR, 32, -EINVAL, 0, a.handle, "entry_size_too_small_einval");
	refused(f, e, NR, 44, -EINVAL, 0, a.handle, "entry_size_not_multiple_of_8_einval");

	/* 48-byte entries: zero tails are fine, a nonzero one at k is E2BIG. */
	wide = calloc(NR, 48);
	for (i = 0; wide && i < NR; i++)
		memcpy(wide + i * 48, &e[i], sizeof(e[i]));
	if (wide)
		wide[BAD * 48 + 44] = 1;
	refused(f, (void *)wide, NR, 48, -E2BIG, BAD, a.handle, "nonzero_tail_e2big_at_k");

	big = calloc(SVOD_BATCH_MAX_ENTRIES + 1, sizeof(*big));
	for (i = 0; big && i <= SVOD_BATCH_MAX_ENTRIES; i++)
		big[i] = entry(SVOD_BATCH_STAGE, a.handle, 0, src, 4);
	refused(f, big, SVOD_BATCH_MAX_ENTRIES + 1, 0, -E2BIG, SVOD_BATCH_MAX_ENTRIES,
		a.handle, "count_past_cap_e2big_at_cap");
	refused(f, e, 0, 0, -EINVAL, ~0U, a.handle, "no_entries_einval");

	/* The cap itself is taken, and the wide entries with their tail zero. */
	{
		struct svod_batch b;
		struct svod_wait w;
		int r1, r2;

		for (i = 0; big && i < SVOD_BATCH_MAX_ENTRIES; i++)
			big[i] = entry(SVOD_BATCH_READ, a.handle, i * 4, dst + i * 4, 4);
		r1 = big ? batch(f, big, SVOD_BATCH_MAX_ENTRIES, 0, 0, &b) : -ENOMEM;
		r1 = r1 ? r1 : wait_for(f, b.seqno, &w);
		tap_ok(!r1 && !w.status && w.done == 4 * SVOD_BATCH_MAX_ENTRIES,
		       "count_at_cap_taken (%s, status %d)", ht_err(r1), w.status);
		if (wide)
			wide[BAD * 48 + 44] = 0;
		r2 = wide ? batch(f, (void *)wide, NR, 48, 0, &b) : -ENOMEM;
		r2 = r2 ? r2 : wait_for(f, b.seqno, &w);
		tap_ok(!r2 && !w.status && w.done == NR * 8 * KIB,
		       "wide_entries_zero_tail_taken (%s, status %d)", ht_err(r2), w.status);
	}
	free(big);
	free(wide);
	svod_free(f, a.handle);
}

/* FREE of one allocation a queued batch names cancels the batch. */
static void test_free_cancels(int f)
{
	struct svod_batch_entry e[2];
	struct svod_alloc big = { 0 }, a = { 0 };
	struct svod_xfer x;
	struct svod_batch b;
	struct svod_wait w = { 0 };
	int ret;

	ret = svod_alloc(f, tier.id, 16 * MIB, 0, &big);
	ret = ret ? ret : svod_alloc(f, tier.id, 64 * KIB, 0, &a);
	/* Queued behind 16 MiB, so the FREE finds the batch queued. */
	x = (struct svod_xfer){ .handle = big.handle, .user_ptr = (uintptr_t)src,
				.length = 16 * MIB, .flags = SVOD_XFER_ASYNC | SVOD_XFER_CPU };
	ret = ret ? ret : svod_ioctl(f, SVOD_IOCTL_STAGE, &x);
	e[0] = entry(SVOD_BATCH_STAGE, big.handle, 0, src, 4 * KIB);
	e[1] = entry(SVOD_BATCH_STAGE, a.handle, 0, src, 4 * KIB);
	ret = ret ? ret : batch(f, e, 2, 0, 0, &b);
	ret = ret ? ret : svod_free(f, a.handle);
	ret = ret ? ret : wait_for(f, b.seqno, &w);
	tap_ok(!ret && w.status == -ECANCELED,
	       "free_of_one_entry_cancels_queued_batch (%s, status %d)", ht_err(ret), w.status);
	svod_free(f, big.handle);
}

/* close() with a batch queued: no page stays pinned, the tier is back. */
static void test_close_cancels(int fq)
{
	struct svod_batch_entry e[32];
	struct svod_alloc big = { 0 }, a = { 0 };
	struct svod_batch b;
	struct svod_xfer x;
	long long pins0 = 0, pins1 = 0;
	uint64_t free0 = 0;
	unsigned int i;
	int f = ht_open(), ret, pret, waited = -1;

	ret = f < 0 ? f : ht_tier_usage(fq, tier.id, &free0, NULL);
	pret = ht_pinned_pages(&pins0);
	ret = ret ? ret : svod_alloc(f, tier.id, 16 * MIB, 0, &big);
	ret = ret ? ret : svod_alloc(f, tier.id, 128 * KIB, 0, &a);
	x = (struct svod_xfer){ .handle = big.handle, .user_ptr = (uintptr_t)src,
				.length = 16 * MIB, .flags = SVOD_XFER_ASYNC | SVOD_XFER_CPU };
	ret = ret ? ret : svod_ioctl(f, SVOD_IOCTL_STAGE, &x);
	for (i = 0; i < ARRAY_SIZE(e); i++)
		e[i] = entry(i % 2 ? SVOD_BATCH_READ : SVOD_BATCH_STAGE, a.handle,
			     i * 4 * KIB, (i % 2 ? dst : src) + i * 4 * KIB, 4 * KIB);
	ret = ret ? ret : batch(f, e, ARRAY_SIZE(e), 0, 0, &b);
	if (f >= 0)
		close(f);
	if (!ret)
		waited = ht_wait_free(fq, tier.id, free0, 10000);
	for (i = 0; !pret && i < 500; i++) {
		pret = ht_pinned_pages(&pins1);
		if (pret || pins1 == pins0)
			break;
		usleep(10000);
	}
	tap_ok(!ret && waited >= 0 && (pret == -ENOENT || (!pret && pins1 == pins0)),
	       "close_with_batch_queued_unpins_and_frees (%s, waited %d ms, pins %lld -> %lld, %s)",
	       ht_err(ret), waited, pins0, pins1, ht_err(pret));
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

#define BENCH_N		256
#define BENCH_LEN	(4 * KIB)
#define BENCH_ROUNDS	9
#define BENCH_REPS	16

/*
 * "batch 4k": 256 STAGEs of 4 KiB at every other 4 KiB of a 2 MiB
 * allocation in one batch, submitted and waited for, against memcpy of the
 * same 256 ranges through sysfs resource2_wc. Each side BENCH_REPS times
 * a round, the sides taking turns; medians of the rounds' rates and
 * ratios.
 */
static void bench_batch(int f)
{
	struct svod_batch_entry e[BENCH_N];
	double rate[2][BENCH_ROUNDS], rt[BENCH_ROUNDS], t0, dt;
	struct svod_alloc a = { 0 };
	volatile uint8_t *wc = NULL;
	uint64_t off = 0, bar_len = 0, seqno;
	unsigned int r, k, i, side;
	char path[256];
	void *p = MAP_FAILED;
	int ret, rfd, st;

	ret = svod_alloc(f, tier.id, 2 * BENCH_N * BENCH_LEN, 0, &a);
	ret = ret ? ret : ht_bar2_offset(&tier, a.device_addr, &off);
	if (!ret && !ht_bar_size(tier.device, 2, &bar_len)) {
		snprintf(path, sizeof(path), SVOD_SYSFS_DEVICES "/%s/resource2_wc", tier.device);
		rfd = open(path, O_RDWR | O_SYNC | O_CLOEXEC);
		if (rfd >= 0) {
			p = mmap(NULL, bar_len, PROT_READ | PROT_WRITE, MAP_SHARED, rfd, 0);
			close(rfd);
		}
		if (p != MAP_FAILED)
			wc = (volatile uint8_t *)p + off;
	}
	for (i = 0; i < BENCH_N; i++)
		e[i] = entry(SVOD_BATCH_STAGE, a.handle, 2 * i * BENCH_LEN,
			     src + 2 * i * BENCH_LEN, BENCH_LEN);
	for (r = 0; !ret && r < BENCH_ROUNDS; r++) {
		for (k = 0; !ret && k < 2; k++) {
			side = (k + r) % 2;
			if (side && !wc)
				continue;
			t0 = now_s();
			for (i = 0; !ret && i < BENCH_REPS; i++) {
				if (side) {
					for (unsigned int j = 0; j < BENCH_N; j++)
						memcpy((void *)(wc + 2 * j * BENCH_LEN),
						       src + 2 * j * BENCH_LEN, BENCH_LEN);
					continue;
				}
				ret = svod_batch(f, e, BENCH_N, &seqno, NULL, NULL);
				ret = ret ? ret : svod_wait(f, seqno, -1, &st, NULL);
				ret = ret ? ret : st;
			}
			dt = now_s() - t0;
			rate[side][r] = (double)BENCH_N * BENCH_LEN * BENCH_REPS / dt / 1e6;
		}
		rt[r] = wc ? rate[0][r] / rate[1][r] : 0;
	}
	if (ret) {
		tap_ok(0, "bench_batch_4k (%s)", ht_err(ret));
	} else {
		qsort(rate[0], BENCH_ROUNDS, sizeof(double), cmp_double);
		qsort(rate[1], BENCH_ROUNDS, sizeof(double), cmp_double);
		qsort(rt, BENCH_ROUNDS, sizeof(double), cmp_double);
		if (wc)
			printf("# bench: batch 4k: %u x %u B in one batch %9.1f MB/s, direct resource2_wc memcpy %9.1f MB/s, ratio %.2f\n",
			       BENCH_N, BENCH_LEN, rate[0][BENCH_ROUNDS / 2],
			       rate[1][BENCH_ROUNDS / 2], rt[BENCH_ROUNDS / 2]);
		else
			printf("# bench: batch 4k: %u x %u B in one batch %9.1f MB/s (no direct mapping)\n",
			       BENCH_N, BENCH_LEN, rate[0][BENCH_ROUNDS / 2]);
		tap_ok(1, "bench_batch_4k");
	}
	if (p != MAP_FAILED)
		munmap(p, bar_len);
	svod_free(f, a.handle);
}

int main(void)
{
	int f, ret;

	tap_plan(NR_CASES);
	f = ht_open();
	ret = f < 0 ? f : ht_first_tier(f, &tier);
	src = mmap(NULL, 16 * MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	dst = mmap(NULL, 16 * MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ret || src == MAP_FAILED || dst == MAP_FAILED) {
		tap_diag("setup: %s", ht_err(ret));
		return tap_done();
	}
	ht_fill_xorshift(src, 16 * MIB, 0xba7c);
	test_mixed(f);
	close(f);
	/* A file of its own: the refusals check its timeline stays at 0. */
	f = ht_open();
	test_refusals(f);
	test_free_cancels(f);
	test_close_cancels(f);
	bench_batch(f);
	close(f);
	return tap_done();
}
