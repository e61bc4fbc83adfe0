// SPDX-License-Identifier: GPL-2.0
/*
 * t_async: asynchronous STAGE and READ (SVOD_XFER_ASYNC), SVOD_IOCTL_WAIT
 * and the sync_file fences (Documentation/staging.rst, "Asynchronous
 * transfers").
 *
 * - a submission returns the file's next timeline value (1, 2, ...) and
 *   nothing else; WAIT reports status 0 and done == length, and the bytes
 *   are in the BAR (read back synchronously) or in the user buffer (READ);
 * - WAIT refuses seqno 0, a seqno not given yet, flags and a negative
 *   deadline (EINVAL); a deadline already past on a transfer queued behind
 *   64 MiB gives ETIME, then waiting for ever gives its result;
 * - argument errors as for the synchronous calls (EINVAL for FENCE_FD
 *   without ASYNC and for pad2, EFAULT for a bad buffer) and none of them
 *   uses a timeline value;
 * - FENCE_FD: an O_CLOEXEC sync_file that poll() sees signalled,
 *   SYNC_IOC_FILE_INFO names driver "svod" and timeline "svod-<client>",
 *   SYNC_IOC_MERGE of two of them works;
 * - FREE cancels the allocation's queued transfers (status and fence error
 *   ECANCELED, nothing moved), its handle is stale at once, and a running
 *   transfer stops in whole chunks: memory allocated again at the same
 *   place after FREE stays zero (no late byte);
 * - close() cancels what is queued, no page stays pinned, the tier's bytes
 *   are back; a SIGKILLed submitter leaves nothing either;
 * - max_inflight and max_pinned_pages: EAGAIN past them (EFBIG for one
 *   transfer larger than the page cap), nothing queued; bad values EINVAL;
 * - async_timeout_ms: a transfer past it fails with ETIMEDOUT in whole
 *   chunks and the next one works;
 * - the pins are long-term and charged to RLIMIT_MEMLOCK (ENOMEM past it,
 *   given back at the end); a READ that ends early dirties the pages it
 *   wrote (/proc/kpageflags after MADV_FREE cleaned them); FENCE_FD in the
 *   56-byte layout is EINVAL and leaves no fd;
 * - a fence keeps svod.ko referenced (/sys/module/svod/refcnt) until its
 *   last holder closes it; fdinfo shows what is in flight;
 * - libsvod's svod_stage_async(), svod_read_async() and svod_wait();
 * - the DMA engine (where the guest has a channel): a transfer moves on
 *   from the engine's completions; a file's transfers of both engines end
 *   one after another and their fences signal in timeline order (the
 *   cancelled ones in their turn); FREE stops a transfer at a descriptor's end,
 *   and one past async_timeout_ms resets the channel (ETIMEDOUT), which
 *   then works.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/sync_file.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "tap.h"

#define NR_CASES	40

#define MIB		(1u << 20)
#define BIG		(16 * MIB)
#define FOREVER		INT64_MAX

static int fd = -1;
static struct svod_tier_info tier;
static uint8_t *src, *dst;

static int submit(int f, uint64_t h, uint64_t off, void *buf, uint64_t len,
		  uint32_t flags, int to_device, struct svod_xfer *x)
{
	*x = (struct svod_xfer){ .handle = h, .offset = off, .user_ptr = (uintptr_t)buf,
				 .length = len, .flags = flags | SVOD_XFER_ASYNC };
	return svod_ioctl(f, to_device ? SVOD_IOCTL_STAGE : SVOD_IOCTL_READ, x);
}

static int wait_for(int f, uint64_t seqno, int64_t deadline, struct svod_wait *w)
{
	*w = (struct svod_wait){ .seqno = seqno, .deadline_ns = deadline };
	return svod_ioctl(f, SVOD_IOCTL_WAIT, w);
}

/* Status of a sync_file: 1 signalled, 0 active, < 0 its error. */
static int fence_status(int sfd, struct sync_file_info *info)
{
	memset(info, 0, sizeof(*info));
	if (ioctl(sfd, SYNC_IOC_FILE_INFO, info))
		return -1000 - errno;
	return info->status;
}

/* When a sync_file's one fence signalled (CLOCK_MONOTONIC ns), or -1. */
static long long fence_stamp(int sfd)
{
	struct sync_fence_info fi = { 0 };
	struct sync_file_info info = { .num_fences = 1,
				       .sync_fence_info = (uintptr_t)&fi };

	if (ioctl(sfd, SYNC_IOC_FILE_INFO, &info) || !info.status)
		return -1;
	return fi.timestamp_ns;
}

/* A number from this file's fdinfo, or -1. */
static long long fdinfo_num(int f, const char *key)
{
	char path[64], line[256];
	long long v = -1;
	size_t klen = strlen(key);
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", f);
	fp = fopen(path, "r");
	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp))
		if (!strncmp(line, key, klen) && line[klen] == ':')
			v = strtoll(line + klen + 1, NULL, 10);
	fclose(fp);
	return v;
}

/*
 * svod.ko's refcount once it holds still for 0.3 s (a closed fence lets go
 * of the module after an RCU grace period), or after 10 s what it is.
 */
static long long refcnt_settled(void)
{
	long long ref = ht_module_refcnt(), prev;
	int i, still = 0;

	for (i = 0; i < 1000 && still < 30; i++) {
		usleep(10000);
		prev = ref;
		ref = ht_module_refcnt();
		still = ref == prev ? still + 1 : 0;
	}
	return ref;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int all_zero(const uint8_t *p, size_t n)
{
	while (n--)
		if (*p++)
			return 0;
	return 1;
}

/* Submission, WAIT, the bytes; the timeline's first values. */
static void test_basic(void)
{
	struct svod_alloc a = { 0 };
	struct svod_xfer x, y;
	struct svod_wait w;
	int f = ht_open(), ret, r2;

	ret = f < 0 ? f : svod_alloc(f, tier.id, 4 * MIB, 0, &a);
	if (!ret)
		ret = submit(f, a.handle, 0, src, 4 * MIB, 0, 1, &x);
	tap_ok(!ret && x.seqno == 1 && x.fence_fd == -1 && x.done == 0,
	       "stage_async_returns_seqno_1 (%s, seqno %llu, fence_fd %d, done %llu)",
	       ht_err(ret), (unsigned long long)x.seqno, x.fence_fd,
	       (unsigned long long)x.done);
	ret = ret ? ret : wait_for(f, 1, FOREVER, &w);
	tap_ok(!ret && w.status == 0 && w.done == 4 * MIB,
	       "wait_reports_status_0_done_length (%s, status %d, done %llu)", ht_err(ret),
	       w.status, (unsigned long long)w.done);
	memset(dst, 0, 4 * MIB);
	r2 = ret ? ret : svod_read(f, a.handle, 0, dst, 4 * MIB, 0, NULL);
	tap_ok(!r2 && !memcmp(src, dst, 4 * MIB), "stage_async_bytes_in_bar (%s)", ht_err(r2));

	memset(dst, 0, 4 * MIB);
	ret = ret ? ret : submit(f, a.handle, MIB, dst + 1, 2 * MIB, SVOD_XFER_CPU, 0, &y);
	r2 = ret ? ret : wait_for(f, y.seqno, FOREVER, &w);
	tap_ok(!ret && !r2 && y.seqno == 2 && !w.status && !memcmp(dst + 1, src + MIB, 2 * MIB),
	       "read_async_unaligned_buffer_matches (%s/%s, seqno %llu, status %d)",
	       ht_err(ret), ht_err(r2), (unsigned long long)y.seqno, w.status);

	tap_errno(wait_for(f, 0, FOREVER, &w), -EINVAL, "wait_seqno_0_einval");
	tap_errno(wait_for(f, 3, FOREVER, &w), -EINVAL, "wait_seqno_not_given_einval");
	w = (struct svod_wait){ .seqno = 1, .flags = 1 };
	tap_errno(svod_ioctl(f, SVOD_IOCTL_WAIT, &w), -EINVAL, "wait_flags_einval");
	tap_errno(wait_for(f, 1, -1, &w), -EINVAL, "wait_negative_deadline_einval");
	if (f >= 0)
		close(f);
}

/* Argument errors: the synchronous errnos, and no timeline value used. */
static void test_refusals(void)
{
	struct svod_alloc a = { 0 };
	struct svod_xfer x;
	struct svod_wait w;
	int f = ht_open(), ret, r56, low, low2;

	ret = f < 0 ? f : svod_alloc(f, tier.id, MIB, 0, &a);
	x = (struct svod_xfer){ .handle = a.handle, .user_ptr = (uintptr_t)src,
				.length = 4096, .flags = SVOD_XFER_FENCE_FD };
	tap_errno(ret ? ret : svod_ioctl(f, SVOD_IOCTL_STAGE, &x), -EINVAL,
		  "fence_fd_without_async_einval");
	x = (struct svod_xfer){ .handle = a.handle, .user_ptr = (uintptr_t)src,
				.length = 4096, .flags = SVOD_XFER_ASYNC, .pad2 = 1 };
	tap_errno(ret ? ret : svod_ioctl(f, SVOD_IOCTL_STAGE, &x), -EINVAL, "pad2_einval");
	/*
	 * The 56-byte layout has no fence_fd: FENCE_FD there would install an
	 * fd the caller can never learn of. Refused, nothing installed.
	 */
	x = (struct svod_xfer){ .handle = a.handle, .user_ptr = (uintptr_t)src,
				.length = 4096, .flags = SVOD_XFER_ASYNC | SVOD_XFER_FENCE_FD };
	low = dup(0);
	if (low >= 0)
		close(low);
	r56 = ret ? ret : svod_ioctl(f, _IOC(_IOC_READ | _IOC_WRITE, SVOD_IOCTL_MAGIC,
					     _IOC_NR(SVOD_IOCTL_STAGE), SVOD_XFER_SIZE_VER1), &x);
	low2 = dup(0);
	if (low2 >= 0)
		close(low2);
	tap_ok(r56 == -EINVAL && low == low2,
	       "fence_fd_in_56_byte_struct_einval_no_fd (%s, lowest free fd %d -> %d)",
	       ht_err(r56), low, low2);
	tap_errno(ret ? ret : submit(f, a.handle, 0, (void *)16, 4096, 0, 1, &x), -EFAULT,
		  "async_bad_buffer_efault");
	tap_errno(ret ? ret : submit(f, a.handle, 4096, src, MIB, 0, 1, &x), -ERANGE,
		  "async_beyond_grant_erange");
	tap_errno(ret ? ret : submit(f, a.handle + 1, 0, src, 4096, 0, 1, &x), -ESTALE,
		  "async_forged_handle_estale");
	ret = ret ? ret : submit(f, a.handle, 0, src, 4096, 0, 1, &x);
	tap_ok(!ret && x.seqno == 1 && !wait_for(f, 1, FOREVER, &w) && !w.status &&
	       fdinfo_num(f, "svod-async-inflight") == 0,
	       "refusals_use_no_seqno_queue_nothing (%s, seqno %llu)", ht_err(ret),
	       (unsigned long long)x.seqno);
	if (f >= 0)
		close(f);
}

/* ETIME, the fence fd, poll, FILE_INFO, MERGE, fdinfo, the module reference. */
static void test_fences(void)
{
	struct sync_fence_info fi[2];
	struct sync_file_info info;
	struct sync_merge_data merge = { .name = "t_async" };
	struct svod_alloc a = { 0 }, a2 = { 0 };
	struct svod_xfer x[4], y;
	struct svod_wait w;
	struct pollfd pfd;
	long long ref0 = refcnt_settled(), ref1, ref2, ref3, inflight;
	int f = ht_open(), f2, ret = 0, i, st, cloexec;
	unsigned int n;
	bool y_done;

	ret = f < 0 ? f : svod_alloc(f, tier.id, BIG, 0, &a);
	for (i = 0; i < 4 && !ret; i++)
		ret = submit(f, a.handle, 0, src, BIG, i == 3 ? SVOD_XFER_FENCE_FD : 0, 1, &x[i]);
	inflight = ret ? -1 : fdinfo_num(f, "svod-async-inflight");
	tap_errno(ret ? ret : wait_for(f, x[3].seqno, 0, &w), -ETIME,
		  "wait_deadline_past_behind_64mib_etime (fdinfo inflight %lld)", inflight);
	cloexec = ret ? 0 : fcntl(x[3].fence_fd, F_GETFD);
	tap_ok(!ret && x[3].fence_fd >= 0 && cloexec >= 0 && (cloexec & FD_CLOEXEC) &&
	       x[0].fence_fd == -1, "fence_fd_is_cloexec (fd %d, flags %d)",
	       ret ? -1 : x[3].fence_fd, cloexec);
	/*
	 * Another file's fence (another timeline), merged while both are
	 * pending: the merge holds both and signals when both have. Files run
	 * side by side, so the other file's 16 MiB may already be done when
	 * the merge is made (a fast guest): then the merge rightly drops it
	 * (one fence), and y is signalled when looked at just after.
	 */
	f2 = ht_open();
	ret = ret ? ret : f2 < 0 ? f2 : svod_alloc(f2, tier.id, BIG, 0, &a2);
	ret = ret ? ret : submit(f2, a2.handle, 0, src, BIG, SVOD_XFER_FENCE_FD, 1, &y);
	merge.fd2 = ret ? -1 : y.fence_fd;
	st = ret ? -1 : ioctl(x[3].fence_fd, SYNC_IOC_MERGE, &merge);
	n = st ? 0 : (fence_status(merge.fence, &info), info.num_fences);
	y_done = !ret && fence_status(y.fence_fd, &info) == 1;
	pfd = (struct pollfd){ .fd = st ? -1 : merge.fence, .events = POLLIN };
	i = st ? -1 : poll(&pfd, 1, 300000);
	tap_ok(!st && (n == 2 || (n == 1 && y_done)) && i == 1 &&
	       fence_status(merge.fence, &info) == 1 && fence_status(y.fence_fd, &info) == 1,
	       "sync_file_merge_of_two_timelines_signals (%s, %u fences%s, poll %d)",
	       st ? strerror(errno) : "ok", n, n == 1 && y_done ? ", the other already done" : "",
	       i);
	if (!st)
		close(merge.fence);
	if (!ret)
		close(y.fence_fd);
	if (f2 >= 0)
		close(f2);

	pfd = (struct pollfd){ .fd = ret ? -1 : x[3].fence_fd, .events = POLLIN };
	i = ret ? -1 : poll(&pfd, 1, 300000);
	st = ret ? 0 : fence_status(x[3].fence_fd, &info);
	tap_ok(i == 1 && (pfd.revents & POLLIN) && st == 1 && info.num_fences == 1 &&
	       !wait_for(f, x[3].seqno, 0, &w) && !w.status && w.done == BIG,
	       "fence_fd_polls_signalled_then_wait_0 (poll %d, status %d)", i, st);
	memset(fi, 0, sizeof(fi));
	info = (struct sync_file_info){ .num_fences = 1, .sync_fence_info = (uintptr_t)fi };
	st = ret ? -1 : ioctl(x[3].fence_fd, SYNC_IOC_FILE_INFO, &info);
	tap_ok(!st && !strcmp(fi[0].driver_name, "svod") &&
	       !strncmp(fi[0].obj_name, "svod-", 5) && fi[0].status == 1,
	       "sync_file_info_names_svod (driver '%s', timeline '%s', status %d)",
	       fi[0].driver_name, fi[0].obj_name, fi[0].status);

	/*
	 * A fence outlives its file and holds the module until closed. A
	 * fence's last reference frees it after an RCU grace period: the
	 * counts settle.
	 */
	ref1 = ht_module_refcnt();
	if (f >= 0)
		close(f);
	ref2 = refcnt_settled();
	if (!ret)
		close(x[3].fence_fd);
	ref3 = refcnt_settled();
	tap_ok(ref0 >= 0 && ref1 > ref2 && ref2 == ref0 + 1 && ref3 == ref0,
	       "fence_holds_module_until_closed (refcnt %lld before, %lld with file, %lld fence only, %lld after)",
	       ref0, ref1, ref2, ref3);
}

/* FREE with transfers queued and running. */
static void test_free(void)
{
	struct svod_alloc ax = { 0 }, ay = { 0 }, az = { 0 };
	struct sync_file_info info;
	struct svod_xfer big, q[3], z;
	struct svod_wait w, wb;
	uint64_t moved0;
	int f = ht_open(), ret, i, bad = 0, st = 0, polls = 0;

	ret = f < 0 ? f : svod_alloc(f, tier.id, 2 * BIG, 0, &ax);
	ret = ret ? ret : svod_alloc(f, tier.id, MIB, 0, &ay);
	ret = ret ? ret : submit(f, ax.handle, 0, src, BIG, 0, 1, &big);
	for (i = 0; i < 3 && !ret; i++)
		ret = submit(f, ay.handle, 0, src, MIB, i == 2 ? SVOD_XFER_FENCE_FD : 0, 1, &q[i]);
	ret = ret ? ret : svod_free(f, ay.handle);
	for (i = 0; i < 3 && !ret; i++)
		if (wait_for(f, q[i].seqno, FOREVER, &w) || w.status != -ECANCELED || w.done)
			bad++;
	if (!ret)
		st = fence_status(q[2].fence_fd, &info);
	tap_ok(!ret && !bad && st == -ECANCELED,
	       "free_cancels_queued_ecanceled_nothing_moved (%s, %d bad, fence status %d)",
	       ht_err(ret), bad, st);
	if (!ret)
		close(q[2].fence_fd);
	tap_errno(ret ? ret : submit(f, ay.handle, 0, src, 4096, 0, 1, &z), -ESTALE,
		  "freed_handle_stale_at_once");

	/* A running 32 MiB transfer, then FREE: it stops in whole chunks. */
	ret = ret ? ret : wait_for(f, big.seqno, FOREVER, &wb);
	moved0 = ht_engine_bytes(fd, tier.id, 0);
	ret = ret ? ret : submit(f, ax.handle, 0, src, 2 * BIG, 0, 1, &big);
	/* Once it moves bytes (a cap of 20000 polls, a net). */
	while (!ret && ht_engine_bytes(fd, tier.id, 0) == moved0 && polls++ < 20000)
		usleep(100);
	ret = ret ? ret : svod_free(f, ax.handle);
	ret = ret ? ret : wait_for(f, big.seqno, FOREVER, &wb);
	tap_ok(!ret && ((wb.status == -ECANCELED && wb.done && wb.done < 2 * BIG &&
			 !(wb.done % MIB)) || (!wb.status && wb.done == 2 * BIG)),
	       "free_stops_running_in_whole_chunks (%s, status %d, done %llu of %u after %d polls)",
	       ht_err(ret), wb.status, (unsigned long long)wb.done, 2 * BIG, polls);
	/* The same place again: scrubbed, and nothing writes it later. */
	ret = ret ? ret : svod_alloc(f, tier.id, 2 * BIG, 0, &az);
	ret = ret ? ret : submit(f, az.handle, 0, dst, MIB, SVOD_XFER_CPU, 0, &z);
	ret = ret ? ret : wait_for(f, z.seqno, FOREVER, &w);
	memset(dst, 0xa5, 2 * BIG);
	ret = ret ? ret : svod_read(f, az.handle, 0, dst, 2 * BIG, 0, NULL);
	tap_ok(!ret && az.device_addr == ax.device_addr && all_zero(dst, 2 * BIG),
	       "no_byte_after_free_reaches_reused_range (%s, same place %d)", ht_err(ret),
	       az.device_addr == ax.device_addr);
	if (f >= 0)
		close(f);
}

/* close() and SIGKILL with transfers queued: nothing left behind. */
static void test_close_and_kill(void)
{
	long long pins0 = 0, pins1 = 0;
	uint64_t free0 = 0;
	struct sync_file_info info;
	struct svod_alloc a = { 0 };
	struct svod_xfer x[4];
	int f = ht_open(), ret, pret, i, st = 0, waited, p[2], status;
	char c = 0;
	pid_t pid;

	pret = ht_pinned_pages(&pins0);
	ht_tier_usage(fd, tier.id, &free0, NULL);
	ret = f < 0 ? f : svod_alloc(f, tier.id, BIG, 0, &a);
	for (i = 0; i < 4 && !ret; i++)
		ret = submit(f, a.handle, 0, src, BIG, i == 3 ? SVOD_XFER_FENCE_FD : 0, 1, &x[i]);
	if (f >= 0)
		close(f);
	if (!ret)
		st = fence_status(x[3].fence_fd, &info);
	waited = ht_wait_free(fd, tier.id, free0, 20000);
	if (!pret)
		pret = ht_pinned_pages(&pins1);
	tap_ok(!ret && st == -ECANCELED && waited >= 0 && !pret && pins1 == pins0,
	       "close_cancels_unpins_releases (%s, last fence %d, free back after %d ms, pinned %lld -> %lld)",
	       ht_err(ret), st, waited, pins0, pins1);
	if (!ret)
		close(x[3].fence_fd);

	if (pipe(p)) {
		tap_ok(0, "sigkill_submitter_leaves_nothing (pipe: %s)", strerror(errno));
		return;
	}
	pid = fork();
	if (pid == 0) {
		struct svod_xfer cx;
		int cfd = ht_open();

		close(p[0]);
		if (cfd < 0 || svod_alloc(cfd, tier.id, BIG, 0, &a))
			_exit(2);
		for (i = 0; i < 8; i++)
			if (submit(cfd, a.handle, 0, src, BIG, 0, i & 1, &cx))
				_exit(3);
		if (ht_write_all(p[1], "r", 1))
			_exit(4);
		for (;;)
			pause();
	}
	close(p[1]);
	if (pid > 0 && !ht_read_all(p[0], &c, 1))
		kill(pid, SIGKILL);
	else if (pid > 0)
		kill(pid, SIGKILL);
	close(p[0]);
	status = pid > 0 ? ht_wait_exit(pid) : -1;
	waited = ht_wait_free(fd, tier.id, free0, 20000);
	pret = ht_pinned_pages(&pins1);
	tap_ok(c == 'r' && status == 128 + SIGKILL && waited >= 0 && !pret && pins1 == pins0,
	       "sigkill_submitter_leaves_nothing (status %d, free back after %d ms, pinned %lld -> %lld)",
	       status, waited, pins0, pins1);
}

static int param(const char *name, uint64_t v)
{
	return svod_param_write(name, v);
}

/* Write @val as it is to svod's parameter @name: 0 or -errno. */
static int raw_param(const char *name, const char *val)
{
	char path[96];

	snprintf(path, sizeof(path), "/sys/module/svod/parameters/%s", name);
	return ht_write_file(path, val);
}

/* The caps and the timeout, and their refusals. */
static void test_limits(void)
{
	uint64_t v0 = 0, v1 = 0, v2 = 0, v3 = 0, v4 = 0;
	struct svod_alloc a = { 0 };
	struct svod_xfer x[3];
	struct svod_wait w;
	int f = ht_open(), ret, r3, bad = 0;

	ret = f < 0 ? f : svod_alloc(f, tier.id, 2 * BIG, 0, &a);
	ret = ret ? ret : param("max_inflight", 2);
	ret = ret ? ret : submit(f, a.handle, 0, src, BIG, 0, 1, &x[0]);
	ret = ret ? ret : submit(f, a.handle, 0, src, BIG, 0, 1, &x[1]);
	r3 = ret ? ret : submit(f, a.handle, 0, src, 4096, 0, 1, &x[2]);
	if (!ret) {
		wait_for(f, x[1].seqno, FOREVER, &w);
		ret = submit(f, a.handle, 0, src, 4096, 0, 1, &x[2]);
	}
	tap_ok(r3 == -EAGAIN && !ret && x[2].seqno == x[1].seqno + 1,
	       "max_inflight_eagain_nothing_queued (%s, then seqno %llu after %llu)",
	       ht_err(r3), (unsigned long long)x[2].seqno, (unsigned long long)x[1].seqno);
	param("max_inflight", 64);

	ret = ret ? ret : param("max_pinned_pages", 16);
	tap_errno(ret ? ret : submit(f, a.handle, 0, src, 17 * 4096, 0, 1, &x[0]), -EFBIG,
		  "one_transfer_past_max_pinned_efbig");
	ret = ret ? ret : param("max_pinned_pages", 4096);
	ret = ret ? ret : submit(f, a.handle, 0, src, 12 * MIB, 0, 1, &x[0]);
	r3 = ret ? ret : submit(f, a.handle, 0, src, 8 * MIB, 0, 1, &x[1]);
	tap_ok(!ret && r3 == -EAGAIN, "pinned_past_max_pinned_eagain (%s, %s)", ht_err(ret),
	       ht_err(r3));
	if (!ret)
		wait_for(f, x[0].seqno, FOREVER, &w);
	param("max_pinned_pages", 65536);

	bad += param("max_inflight", 0) != -EINVAL;
	bad += param("max_inflight", 257) != -EINVAL;
	bad += param("max_pinned_pages", 0) != -EINVAL;
	bad += param("max_pinned_pages", (1u << 24) + 1) != -EINVAL;
	bad += param("async_timeout_ms", 0) != -EINVAL;
	bad += param("dma_timeout_ms", 0) != -EINVAL;
	bad += param("dma_timeout_ms", 86400001) != -EINVAL;
	svod_param_read("max_inflight", &v0);
	svod_param_read("max_pinned_pages", &v1);
	svod_param_read("async_timeout_ms", &v2);
	svod_param_read("dma_timeout_ms", &v3);
	/* Decimal only: 010 is ten, hex is refused (svod.rst, "Limits"). */
	bad += raw_param("dma_timeout_ms", "0x10") != -EINVAL;
	bad += raw_param("max_bytes", "0x10") != -EINVAL;
	bad += raw_param("dma_threshold", "0x10") != -EINVAL;
	bad += raw_param("dma_threshold", "010") != 0;
	svod_param_read("dma_threshold", &v4);
	bad += v4 != 10;
	bad += raw_param("dma_threshold", "0") != 0;
	tap_ok(!bad && v0 == 64 && v1 == 65536 && v2 == 60000 && v3 == 20000,
	       "params_refuse_bad_values_unchanged (%d accepted, now %llu %llu %llu)", bad,
	       (unsigned long long)v0, (unsigned long long)v1, (unsigned long long)v2);

	ret = ret ? ret : param("async_timeout_ms", 1);
	ret = ret ? ret : submit(f, a.handle, 0, src, 2 * BIG, 0, 1, &x[0]);
	ret = ret ? ret : wait_for(f, x[0].seqno, FOREVER, &w);
	param("async_timeout_ms", 60000);
	tap_ok(!ret && w.status == -ETIMEDOUT && w.done >= MIB && w.done < 2 * BIG &&
	       !(w.done % MIB), "timeout_etimedout_in_whole_chunks (%s, status %d, done %llu)",
	       ht_err(ret), w.status, (unsigned long long)w.done);
	ret = ret ? ret : submit(f, a.handle, 0, src, MIB, 0, 1, &x[1]);
	ret = ret ? ret : wait_for(f, x[1].seqno, FOREVER, &w);
	tap_ok(!ret && !w.status && w.done == MIB, "after_timeout_next_transfer_works (%s, %d)",
	       ht_err(ret), w.status);
	if (f >= 0)
		close(f);
}

/* kB of locked memory in /proc/self/status (VmLck), or -1. */
static long vm_locked_kb(void)
{
	char line[128];
	long kb = -1;
	FILE *fp = fopen("/proc/self/status", "r");

	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp))
		if (!strncmp(line, "VmLck:", 6))
			kb = strtol(line + 6, NULL, 10);
	fclose(fp);
	return kb;
}

/* VmLck once it reaches @want, or after 10 s what it is. */
static long vm_locked_settles(long want)
{
	long kb = vm_locked_kb();
	int i;

	for (i = 0; i < 1000 && kb != want; i++) {
		usleep(10000);
		kb = vm_locked_kb();
	}
	return kb;
}

/*
 * Issue 59: an asynchronous transfer's pages are pinned long-term and
 * charged to the process's locked memory. A child without CAP_IPC_LOCK and
 * with an RLIMIT_MEMLOCK of 64 KiB has a 32 KiB DMA transfer in flight
 * (seconds under TCG; VmLck shows it), cannot add 48 KiB or 128 KiB
 * (ENOMEM, nothing queued), and once the transfer ended the charge is back
 * and 48 KiB goes through.
 */
static void test_memlock(void)
{
	struct rlimit rl = { .rlim_cur = 64 << 10, .rlim_max = 64 << 10 };
	int p[2], ret = -1, r2 = -1, r3 = -1, r4 = -1;
	long held = -1, after = -1, base = -1;
	struct svod_alloc a = { 0 };
	struct svod_xfer x, y, z;
	struct svod_wait w;
	char msg[200] = "";
	pid_t pid;

	if (pipe(p)) {
		tap_ok(0, "async_pins_charge_rlimit_memlock (pipe: %s)", ht_err(-errno));
		return;
	}
	pid = fork();
	if (!pid) {
		int f = ht_open();

		close(p[0]);
		ret = f < 0 ? f : svod_alloc(f, tier.id, MIB, 0, &a);
		ret = ret ? ret : ht_drop_cap(CAP_IPC_LOCK);
		ret = ret ? ret : (setrlimit(RLIMIT_MEMLOCK, &rl) ? -errno : 0);
		base = vm_locked_kb();
		/* One DMA transfer of 32 KiB (seconds under TCG), else CPU. */
		ret = ret ? ret : submit(f, a.handle, 0, src, 32 << 10, SVOD_XFER_DMA, 1, &x);
		held = vm_locked_kb();
		r2 = ret ? ret : submit(f, a.handle, 0, src, 48 << 10, 0, 1, &y);
		r3 = ret ? ret : submit(f, a.handle, 0, src, 128 << 10, 0, 1, &z);
		ret = ret ? ret : wait_for(f, x.seqno, FOREVER, &w);
		if (!ret && w.status)
			ret = w.status;
		after = vm_locked_settles(base);
		r4 = ret ? ret : submit(f, a.handle, 0, src, 48 << 10, 0, 1, &y);
		r4 = r4 ? r4 : wait_for(f, y.seqno, FOREVER, &w);
		snprintf(msg, sizeof(msg), "%d %d %d %d %ld %ld %ld", ret, r2, r3, r4, base, held,
			 after);
		ht_write_all(p[1], msg, sizeof(msg));
		_exit(0);
	}
	close(p[1]);
	if (pid > 0 && !ht_read_all(p[0], msg, sizeof(msg)))
		sscanf(msg, "%d %d %d %d %ld %ld %ld", &ret, &r2, &r3, &r4, &base, &held, &after);
	close(p[0]);
	if (pid > 0)
		ht_wait_exit(pid);
	if (ret == -EOPNOTSUPP) {
		tap_skip("no DMA_MEMCPY channel", "async_pins_charge_rlimit_memlock");
		return;
	}
	tap_ok(!ret && r2 == -ENOMEM && r3 == -ENOMEM && !r4 && base >= 0 && after == base &&
	       held == base + 32,
	       "async_pins_charge_rlimit_memlock (%s; 32+48 KiB %s, 128 KiB %s, after %s; "
	       "VmLck %ld -> %ld -> %ld kB)", ht_err(ret), ht_err(r2), ht_err(r3), ht_err(r4),
	       base, held, after);
}

/* The page flags (/proc/kpageflags) of the page mapped at @addr, or -1. */
static long long page_flags(const void *addr)
{
	uint64_t ent = 0, flags = 0;
	int pm = open("/proc/self/pagemap", O_RDONLY), kf = open("/proc/kpageflags", O_RDONLY);
	long long ret = -1;

	if (pm >= 0 && kf >= 0 &&
	    pread(pm, &ent, 8, (off_t)((uintptr_t)addr / 4096) * 8) == 8 &&
	    (ent >> 63) && (ent & ((1ULL << 55) - 1)) &&
	    pread(kf, &flags, 8, (off_t)(ent & ((1ULL << 55) - 1)) * 8) == 8)
		ret = (long long)flags;
	if (pm >= 0)
		close(pm);
	if (kf >= 0)
		close(kf);
	return ret;
}

#define KPF_DIRTY_BIT	4

/*
 * Issue 59: a READ that ends early (here ETIMEDOUT after some of its 1 MiB
 * chunks) reports those bytes as moved, so it must dirty the pages it wrote
 * when it unpins them, or reclaim may drop the bytes. The buffer is made
 * clean while the READ is queued (MADV_FREE clears a private page's dirty
 * bit, pinned or not; a lazy-free page that stays clean is discarded under
 * memory pressure), the READ is queued behind a DMA STAGE of seconds, and
 * async_timeout_ms is set to 1 before it starts: the first chunk always
 * moves, and of 16 chunks the last cannot start within 1 ms (one chunk of a
 * BAR read can take under half a millisecond under TCG: two chunks were
 * seen to finish within 1 ms).
 */
static void test_partial_read_dirties(void)
{
	long long before = -1, after = -1;
	struct svod_alloc a = { 0 };
	int f = ht_open(), ret, i;
	struct svod_xfer x0, x1;
	struct svod_wait w0 = { 0 }, w1 = { 0 };
	uint8_t *buf;

	buf = mmap(NULL, BIG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ret = buf == MAP_FAILED ? -ENOMEM : f < 0 ? f : svod_alloc(f, tier.id, BIG, 0, &a);
	if (!ret)
		memset(buf, 1, BIG);
	ret = ret ? ret : submit(f, a.handle, 0, src, 64 << 10, SVOD_XFER_DMA, 1, &x0);
	if (ret == -EOPNOTSUPP) {
		tap_skip("no DMA_MEMCPY channel", "partial_read_dirties_its_pages");
		goto out;
	}
	ret = ret ? ret : submit(f, a.handle, 0, buf, BIG, SVOD_XFER_CPU, 0, &x1);
	ret = ret ? ret : (madvise(buf, BIG, MADV_FREE) ? -errno : 0);
	before = ret ? -1 : page_flags(buf);
	ret = ret ? ret : param("async_timeout_ms", 1);
	ret = ret ? ret : wait_for(f, x0.seqno, FOREVER, &w0);
	ret = ret ? ret : wait_for(f, x1.seqno, FOREVER, &w1);
	param("async_timeout_ms", 60000);
	/* The pages are unpinned once nothing is in flight. */
	for (i = 0; !ret && i < 1000 && fdinfo_num(f, "svod-async-inflight"); i++)
		usleep(10000);
	after = ret ? -1 : page_flags(buf);
	tap_ok(!ret && !w0.status && w1.status == -ETIMEDOUT && w1.done >= MIB &&
	       w1.done < BIG && !(w1.done % MIB) &&
	       before >= 0 && !(before & (1 << KPF_DIRTY_BIT)) &&
	       after >= 0 && (after & (1 << KPF_DIRTY_BIT)),
	       "partial_read_dirties_its_pages (%s; DMA status %d, done %llu; READ status %d, "
	       "done %llu; page flags %#llx clean -> %#llx)", ht_err(ret), w0.status,
	       (unsigned long long)w0.done, w1.status, (unsigned long long)w1.done,
	       before, after);
out:
	if (buf != MAP_FAILED)
		munmap(buf, BIG);
	if (f >= 0)
		close(f);
}

/* libsvod's wrappers: the same calls, the fence fd on request. */
static void test_libsvod(void)
{
	struct svod_alloc a = { 0 };
	uint64_t s1 = 0, s2 = 0, done = 0, done2 = 0;
	int f = ht_open(), ret, st = -1, st2 = -1, ffd = -1, einval;

	ret = f < 0 ? f : svod_alloc(f, tier.id, MIB, 0, &a);
	ret = ret ? ret : svod_stage_async(f, a.handle, 0, src, MIB, 0, &s1, &ffd);
	memset(dst, 0, MIB);
	ret = ret ? ret : svod_read_async(f, a.handle, 0, dst, MIB, 0, &s2, NULL);
	ret = ret ? ret : svod_wait(f, s2, -1, &st2, &done2);
	ret = ret ? ret : svod_wait(f, s1, 0, &st, &done);
	einval = f < 0 ? 0 : svod_wait(f, s2 + 1, 0, NULL, NULL);
	tap_ok(!ret && s1 == 1 && s2 == 2 && ffd >= 0 && !st && !st2 && done == MIB &&
	       done2 == MIB && !memcmp(src, dst, MIB) && einval == -EINVAL,
	       "libsvod_stage_read_async_wait (%s, seqnos %llu %llu, fd %d, status %d %d, "
	       "beyond: %s)", ht_err(ret), (unsigned long long)s1, (unsigned long long)s2, ffd,
	       st, st2, ht_err(einval));
	if (ffd >= 0)
		close(ffd);
	if (f >= 0)
		close(f);
}

/*
 * The DMA engine: its completions move a transfer on, descriptor after
 * descriptor (64 KiB each, seconds under TCG). Without a channel, DMA is
 * EOPNOTSUPP as for the synchronous call.
 */
static void test_dma(void)
{
	uint64_t moved0;
	struct svod_alloc a = { 0 }, b = { 0 };
	struct sync_file_info info;
	struct svod_xfer x, y, o[4];
	struct svod_wait w, w2;
	int f = ht_open(), ret, r2, polls = 0, i, bad = 0, st[4] = { 0 };
	long long stamp[4];
	double t;

	ret = f < 0 ? f : svod_alloc(f, tier.id, MIB, 0, &a);
	r2 = ret ? ret : submit(f, a.handle, 0, src + 5, 64 << 10, SVOD_XFER_DMA, 1, &x);
	if (r2 == -EOPNOTSUPP) {
		tap_ok(1, "async_dma_eopnotsupp_without_channel");
		tap_skip("no DMA_MEMCPY channel", "async_file_transfers_end_in_timeline_order");
		tap_skip("no DMA_MEMCPY channel", "async_dma_free_stops_in_whole_descriptors");
		tap_skip("no DMA_MEMCPY channel", "async_dma_timeout_resets_channel");
		if (f >= 0)
			close(f);
		return;
	}
	ret = r2 ? r2 : wait_for(f, x.seqno, FOREVER, &w);
	memset(dst, 0, 64 << 10);
	ret = ret ? ret : submit(f, a.handle, 0, dst, 64 << 10, SVOD_XFER_DMA, 0, &y);
	ret = ret ? ret : wait_for(f, y.seqno, FOREVER, &w2);
	tap_ok(!ret && !w.status && w.done == 64 << 10 && !w2.status &&
	       !memcmp(dst, src + 5, 64 << 10),
	       "async_dma_stage_and_read_back (%s, status %d %d)", ht_err(ret), w.status,
	       w2.status);

	/*
	 * One file's transfers run one after another, whatever their engines,
	 * and their fences signal in timeline order, cancelled ones in their
	 * turn too (SYNC_IOC_MERGE keeps only the later fence of a timeline,
	 * so an early one would end a merged wait too soon). Two transfers on
	 * @a behind a 16 KiB DMA (seconds), two on @b that FREE cancels.
	 */
	ret = ret ? ret : svod_alloc(f, tier.id, MIB, 0, &b);
	for (i = 0; i < 4 && !ret; i++)
		ret = submit(f, i < 2 ? a.handle : b.handle, 64 << 10, src, i ? 4096 : 16 << 10,
			     (i % 2 ? SVOD_XFER_CPU : SVOD_XFER_DMA) | SVOD_XFER_FENCE_FD, 1,
			     &o[i]);
	ret = ret ? ret : svod_free(f, b.handle);
	ret = ret ? ret : wait_for(f, o[3].seqno, FOREVER, &w);
	for (i = 0; i < 4 && !ret; i++) {
		stamp[i] = fence_stamp(o[i].fence_fd);
		st[i] = fence_status(o[i].fence_fd, &info);
		if (stamp[i] < 0 || (i && stamp[i] < stamp[i - 1]))
			bad++;
	}
	tap_ok(!ret && !bad && st[0] == 1 && st[1] == 1 && st[2] == -ECANCELED &&
	       st[3] == -ECANCELED,
	       "async_file_transfers_end_in_timeline_order (%s, %d out of order, status %d %d "
	       "%d %d)", ht_err(ret), bad, st[0], st[1], st[2], st[3]);
	for (i = 0; i < 4 && !ret; i++)
		close(o[i].fence_fd);

	/*
	 * FREE while a 256 KiB transfer runs: it stops at a descriptor's end
	 * (a descriptor is one mapped segment, here a page of the buffer).
	 */
	moved0 = ht_engine_bytes(fd, tier.id, 1);
	ret = ret ? ret : submit(f, a.handle, 0, src, 256 << 10, SVOD_XFER_DMA, 1, &x);
	while (!ret && ht_engine_bytes(fd, tier.id, 1) == moved0 && polls++ < 100000)
		usleep(1000);
	t = now_ms();
	ret = ret ? ret : svod_free(f, a.handle);
	t = now_ms() - t;
	ret = ret ? ret : wait_for(f, x.seqno, FOREVER, &w);
	tap_ok(!ret && ((w.status == -ECANCELED && w.done && w.done < 256 << 10 &&
			 !(w.done % 4096)) || (!w.status && w.done == 256 << 10)),
	       "async_dma_free_stops_in_whole_descriptors (%s, status %d, done %llu, FREE took "
	       "%.0f ms)", ht_err(ret), w.status, (unsigned long long)w.done, t);

	/* A descriptor past the limit: the channel is reset, and works after. */
	ret = ret ? ret : svod_alloc(f, tier.id, MIB, 0, &a);
	ret = ret ? ret : svod_param_write("async_timeout_ms", 1);
	ret = ret ? ret : submit(f, a.handle, 0, src, 128 << 10, SVOD_XFER_DMA, 1, &x);
	ret = ret ? ret : wait_for(f, x.seqno, FOREVER, &w);
	svod_param_write("async_timeout_ms", 60000);
	ret = ret ? ret : submit(f, a.handle, 0, src, 4096, SVOD_XFER_DMA, 1, &y);
	ret = ret ? ret : wait_for(f, y.seqno, FOREVER, &w2);
	tap_ok(!ret && w.status == -ETIMEDOUT && w.done < 128 << 10 && !w2.status,
	       "async_dma_timeout_resets_channel (%s, status %d, done %llu; next %d)",
	       ht_err(ret), w.status, (unsigned long long)w.done, w2.status);
	if (f >= 0)
		close(f);
}

int main(void)
{
	int ret;

	tap_plan(NR_CASES);
	fd = ht_open();
	ret = fd < 0 ? fd : ht_first_tier(fd, &tier);
	src = mmap(NULL, 2 * BIG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	dst = mmap(NULL, 2 * BIG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ret || src == MAP_FAILED || dst == MAP_FAILED) {
		tap_diag("setup: %s", ht_err(ret));
		return tap_done();
	}
	ht_fill_xorshift(src, 2 * BIG, 0x5eed);
	test_basic();
	test_refusals();
	test_fences();
	test_free();
	test_close_and_kill();
	test_limits();
	test_memlock();
	test_partial_read_dirties();
	test_libsvod();
	test_dma();
	return tap_done();
}
