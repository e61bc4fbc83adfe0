// SPDX-License-Identifier: GPL-2.0
/*
 * t_infence: in-fences of asynchronous transfers (SVOD_XFER_IN_FENCE,
 * SVOD_BATCH_IN_FENCE; Documentation/staging.rst, "In-fences").
 *
 * - order: another file's READ (through an imported dma-buf of the
 *   allocation) of the last MiB of a 32 MiB STAGE, with that STAGE's fence
 *   as its in-fence, reads the staged bytes, and its fence signals after
 *   the STAGE's; a batch's in-fence the same;
 * - an in-fence that signals an error (a cancelled svod transfer's:
 *   ECANCELED) fails the transfer, single or batch, with that errno, done 0,
 *   and the allocation stays zero (read back);
 * - bad in-fences: a closed fd (EBADF), a pipe, a dma-buf, /dev/svod itself,
 *   a negative fd (EINVAL), an fd without the flag, the flag without ASYNC,
 *   pad3 or pad2, the flag in the 72-byte (40-byte batch) layout (EINVAL):
 *   no timeline value used, nothing in flight, no page pinned;
 * - a fence that does not signal during the case (the last of a file's 64
 *   queued 16 MiB STAGEs): FREE of the waiting transfer's allocation and
 *   close() of its file end it with ECANCELED, async_timeout_ms with
 *   ETIMEDOUT, each with done 0 and before the awaited fence signalled;
 *   the device's unbind ends it with ENODEV and returns;
 * - libsvod's svod_read_async_after() (the order case again) and
 *   svod_batch_after() (EBADF for a closed in-fence, nothing queued);
 * - vgem, another driver (Debian's stock kernel; the test kernel has no
 *   DRM: skipped): a vgem fence (VGEM_FENCE_ATTACH on a dumb buffer,
 *   DMA_BUF_IOCTL_EXPORT_SYNC_FILE from its PRIME fd) holds a STAGE: no byte
 *   of the BAR (sysfs resource2) changes until VGEM_FENCE_SIGNAL, then every
 *   byte does; one never signalled ends with ETIMEDOUT after a lowered
 *   async_timeout_ms, no byte moved; close() and unbind end a STAGE waiting
 *   for one with ECANCELED and ENODEV while the vgem fence is still active.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/dma-buf.h>
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
#include "drm_uapi.h"
#include "tap.h"

#define NR_VGEM		5
#define NR_CASES	(26 + NR_VGEM)

#define MIB		(1u << 20)
#define BIG		(16 * MIB)
#define NR_LONG		64
#define FOREVER		INT64_MAX

static int fd = -1;
static struct svod_tier_info tier;
static uint8_t *src, *dst;

/* Async STAGE or READ; @in_fd >= 0 adds SVOD_XFER_IN_FENCE. */
static int submit(int f, uint64_t h, uint64_t off, void *buf, uint64_t len,
		  uint32_t flags, int to_device, int in_fd, struct svod_xfer *x)
{
	*x = (struct svod_xfer){ .handle = h, .offset = off, .user_ptr = (uintptr_t)buf,
				 .length = len, .flags = flags | SVOD_XFER_ASYNC };
	if (in_fd >= 0) {
		x->flags |= SVOD_XFER_IN_FENCE;
		x->in_fence_fd = in_fd;
	}
	return svod_ioctl(f, to_device ? SVOD_IOCTL_STAGE : SVOD_IOCTL_READ, x);
}

static int wait_for(int f, uint64_t seqno, struct svod_wait *w)
{
	*w = (struct svod_wait){ .seqno = seqno, .deadline_ns = FOREVER };
	return svod_ioctl(f, SVOD_IOCTL_WAIT, w);
}

/* Status of a sync_file: 1 signalled, 0 active, < 0 its error. */
static int fence_status(int sfd)
{
	struct sync_file_info info = { 0 };

	if (ioctl(sfd, SYNC_IOC_FILE_INFO, &info))
		return -1000 - errno;
	return info.status;
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

/* A number from this process's fdinfo of @f, or -1. */
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

static int all_byte(const uint8_t *p, size_t n, uint8_t b)
{
	while (n--)
		if (*p++ != b)
			return 0;
	return 1;
}

/*
 * A fence that does not signal while a case runs: a new file (*@lf) queues
 * NR_LONG (max_inflight) STAGEs of 16 MiB into one allocation, 1 GiB to
 * copy (max_pinned_pages raised for the submissions); *@sfd is the last
 * one's sync_file. Closing *@lf ends them (ECANCELED).
 */
static int long_fence(int *lf, int *sfd)
{
	struct svod_alloc a = { 0 };
	uint64_t pinned0 = 0;
	struct svod_xfer x;
	int i, ret;

	*sfd = -1;
	*lf = ht_open();
	ret = *lf < 0 ? *lf : svod_alloc(*lf, tier.id, BIG, 0, &a);
	ret = ret ? ret : svod_param_read("max_pinned_pages", &pinned0);
	ret = ret ? ret : svod_param_write("max_pinned_pages", NR_LONG * (BIG / 4096));
	for (i = 0; i < NR_LONG && !ret; i++)
		ret = submit(*lf, a.handle, 0, src, BIG,
			     i == NR_LONG - 1 ? SVOD_XFER_FENCE_FD : 0, 1, -1, &x);
	if (pinned0)
		svod_param_write("max_pinned_pages", pinned0);
	if (!ret)
		*sfd = x.fence_fd;
	return ret;
}

static void long_fence_end(int lf, int sfd)
{
	if (lf >= 0)
		close(lf);
	if (sfd >= 0)
		close(sfd);
}

/* A READ in another file waits for a STAGE's fence: it sees every byte. */
static void test_order(void)
{
	struct svod_alloc a = { 0 };
	struct svod_import im = { 0 };
	struct svod_batch_entry e;
	struct svod_batch b;
	struct svod_xfer x, y;
	struct svod_wait w;
	int f = ht_open(), g = ht_open(), d = -1, ret, r2 = -1;
	long long ta = -1, tb = -1;

	ret = f < 0 ? f : g < 0 ? g : svod_alloc_flags(f, tier.id, 2 * BIG, 0,
						       SVOD_ALLOC_MAPPABLE, &a);
	ret = ret ? ret : svod_export(f, a.handle, SVOD_EXPORT_WRITE, &d, NULL);
	ret = ret ? ret : svod_import(g, d, &im);
	memset(src, 0x5a, 2 * BIG);
	memset(dst, 0, MIB);
	ret = ret ? ret : submit(f, a.handle, 0, src, 2 * BIG, SVOD_XFER_FENCE_FD, 1, -1, &x);
	ret = ret ? ret : submit(g, im.handle, 2 * BIG - MIB, dst, MIB, SVOD_XFER_FENCE_FD |
				 SVOD_XFER_CPU, 0, x.fence_fd, &y);
	r2 = ret ? ret : wait_for(g, y.seqno, &w);
	if (!ret) {
		ta = fence_stamp(x.fence_fd);
		tb = fence_stamp(y.fence_fd);
	}
	tap_ok(!ret && !r2 && !w.status && w.done == MIB && all_byte(dst, MIB, 0x5a) &&
	       ta > 0 && tb >= ta,
	       "read_after_other_files_stage_sees_every_byte (%s/%s, status %d, done %llu, last byte %#x, signalled %lld ns after)",
	       ht_err(ret), ht_err(r2), w.status, (unsigned long long)w.done, dst[MIB - 1],
	       tb - ta);
	if (!ret) {
		close(x.fence_fd);
		close(y.fence_fd);
	}

	/* A batch's in-fence: the same. */
	memset(src, 0x3c, 2 * BIG);
	memset(dst, 0, MIB);
	ret = ret ? ret : submit(f, a.handle, 0, src, 2 * BIG, SVOD_XFER_FENCE_FD, 1, -1, &x);
	e = (struct svod_batch_entry){ .handle = im.handle, .offset = 2 * BIG - MIB,
				       .user_ptr = (uintptr_t)dst, .length = MIB,
				       .op = SVOD_BATCH_READ };
	b = (struct svod_batch){ .entries_ptr = (uintptr_t)&e, .nr_entries = 1,
				 .flags = SVOD_BATCH_IN_FENCE, .in_fence_fd = x.fence_fd };
	ret = ret ? ret : svod_ioctl(g, SVOD_IOCTL_BATCH, &b);
	r2 = ret ? ret : wait_for(g, b.seqno, &w);
	tap_ok(!ret && !r2 && !w.status && w.done == MIB && all_byte(dst, MIB, 0x3c),
	       "batch_after_other_files_stage_sees_every_byte (%s/%s, status %d, last byte %#x)",
	       ht_err(ret), ht_err(r2), w.status, dst[MIB - 1]);
	if (!ret)
		close(x.fence_fd);
	if (d >= 0)
		close(d);
	if (g >= 0)
		close(g);
	if (f >= 0)
		close(f);
}

/* libsvod: svod_stage_async(), svod_read_async_after(), svod_batch_after(). */
static void test_libsvod(void)
{
	struct svod_alloc a = { 0 };
	struct svod_import im = { 0 };
	struct svod_batch_entry e;
	uint64_t s1 = 0, s2 = 0, done = 0, s3 = 7;
	uint32_t failed = 0;
	int f = ht_open(), g = ht_open(), d = -1, sfd = -1, ret, r2 = -1, st = 1, closed;

	ret = f < 0 ? f : g < 0 ? g : svod_alloc_flags(f, tier.id, 2 * BIG, 0,
						       SVOD_ALLOC_MAPPABLE, &a);
	ret = ret ? ret : svod_export(f, a.handle, SVOD_EXPORT_WRITE, &d, NULL);
	ret = ret ? ret : svod_import(g, d, &im);
	memset(src, 0x6b, 2 * BIG);
	memset(dst, 0, MIB);
	ret = ret ? ret : svod_stage_async(f, a.handle, 0, src, 2 * BIG, 0, &s1, &sfd);
	ret = ret ? ret : svod_read_async_after(g, im.handle, 2 * BIG - MIB, dst, MIB,
						SVOD_XFER_CPU, sfd, &s2, NULL);
	r2 = ret ? ret : svod_wait(g, s2, -1, &st, &done);
	tap_ok(!ret && !r2 && !st && done == MIB && all_byte(dst, MIB, 0x6b),
	       "libsvod_read_async_after_sees_every_byte (%s/%s, status %d, last byte %#x)",
	       ht_err(ret), ht_err(r2), st, dst[MIB - 1]);

	closed = dup(0);
	if (closed >= 0)
		close(closed);
	e = (struct svod_batch_entry){ .handle = im.handle, .user_ptr = (uintptr_t)dst,
				       .length = 4096, .op = SVOD_BATCH_READ };
	r2 = ret ? ret : svod_batch_after(g, &e, 1, closed, &s3, NULL, &failed);
	tap_ok(r2 == -EBADF && s3 == 7 && failed == ~0U &&
	       fdinfo_num(g, "svod-async-seqno") == 1,
	       "libsvod_batch_after_closed_fd_ebadf_nothing_queued (%s, failed %u)",
	       ht_err(r2), failed);
	if (sfd >= 0)
		close(sfd);
	if (d >= 0)
		close(d);
	if (g >= 0)
		close(g);
	if (f >= 0)
		close(f);
}

/* An in-fence signalled with ECANCELED: the dependent transfer fails so. */
static void test_error(void)
{
	struct svod_alloc a = { 0 }, y = { 0 }, z = { 0 };
	struct svod_batch_entry e;
	struct svod_batch b;
	struct svod_xfer big, q, t;
	struct svod_wait w;
	int f = ht_open(), g = ht_open(), ret, r2 = -1, st = 0, zero = 0;

	ret = f < 0 ? f : g < 0 ? g : svod_alloc(f, tier.id, BIG, 0, &a);
	ret = ret ? ret : svod_alloc(f, tier.id, MIB, 0, &y);
	ret = ret ? ret : svod_alloc(g, tier.id, MIB, 0, &z);
	ret = ret ? ret : submit(f, a.handle, 0, src, BIG, 0, 1, -1, &big);
	ret = ret ? ret : submit(f, y.handle, 0, src, MIB, SVOD_XFER_FENCE_FD, 1, -1, &q);
	ret = ret ? ret : svod_free(f, y.handle);

	memset(src, 0x77, MIB);
	ret = ret ? ret : submit(g, z.handle, 0, src, MIB, SVOD_XFER_FENCE_FD, 1, q.fence_fd, &t);
	r2 = ret ? ret : wait_for(g, t.seqno, &w);
	st = ret ? 0 : fence_status(q.fence_fd);
	memset(dst, 0xa5, MIB);
	if (!ret && !r2 && !svod_read(g, z.handle, 0, dst, MIB, 0, NULL))
		zero = all_byte(dst, MIB, 0);
	tap_ok(!ret && !r2 && st == -ECANCELED && w.status == -ECANCELED && !w.done && zero &&
	       fence_status(t.fence_fd) == -ECANCELED,
	       "in_fence_error_fails_stage_no_byte (%s/%s, in-fence %d, status %d, done %llu, zero %d)",
	       ht_err(ret), ht_err(r2), st, w.status, (unsigned long long)w.done, zero);
	if (!ret)
		close(t.fence_fd);

	e = (struct svod_batch_entry){ .handle = z.handle, .user_ptr = (uintptr_t)src,
				       .length = MIB, .op = SVOD_BATCH_STAGE };
	b = (struct svod_batch){ .entries_ptr = (uintptr_t)&e, .nr_entries = 1,
				 .flags = SVOD_BATCH_IN_FENCE, .in_fence_fd = q.fence_fd };
	ret = ret ? ret : svod_ioctl(g, SVOD_IOCTL_BATCH, &b);
	r2 = ret ? ret : wait_for(g, b.seqno, &w);
	memset(dst, 0xa5, MIB);
	zero = 0;
	if (!ret && !r2 && !svod_read(g, z.handle, 0, dst, MIB, 0, NULL))
		zero = all_byte(dst, MIB, 0);
	tap_ok(!ret && !r2 && w.status == -ECANCELED && !w.done && zero,
	       "in_fence_error_fails_batch_no_byte (%s/%s, status %d, done %llu, zero %d)",
	       ht_err(ret), ht_err(r2), w.status, (unsigned long long)w.done, zero);
	if (!ret)
		close(q.fence_fd);
	if (g >= 0)
		close(g);
	if (f >= 0)
		close(f);
}

/* Bad in-fences: the documented errnos, and nothing queued or pinned. */
static void test_bad_fds(void)
{
	struct svod_alloc a = { 0 }, ex = { 0 };
	struct svod_batch_entry e;
	struct svod_batch b;
	struct svod_xfer x;
	long long pins0 = 0, pins1 = 0;
	int f = ht_open(), ret, p[2] = { -1, -1 }, d = -1, closed, pret;
	long long seq0, seq1, infl;

	ret = f < 0 ? f : svod_alloc(f, tier.id, MIB, 0, &a);
	ret = ret ? ret : svod_alloc_flags(f, tier.id, MIB, 0, SVOD_ALLOC_MAPPABLE, &ex);
	ret = ret ? ret : svod_export(f, ex.handle, 0, &d, NULL);
	if (!ret && pipe(p))
		ret = -errno;
	closed = dup(0);
	if (closed >= 0)
		close(closed);
	pret = ht_pinned_pages(&pins0);
	seq0 = fdinfo_num(f, "svod-async-seqno");

	tap_errno(ret ? ret : submit(f, a.handle, 0, src, 4096, 0, 1, closed, &x), -EBADF,
		  "stage_closed_fd_ebadf");
	tap_errno(ret ? ret : submit(f, a.handle, 0, src, 4096, 0, 1, p[0], &x), -EINVAL,
		  "stage_pipe_einval");
	tap_errno(ret ? ret : submit(f, a.handle, 0, src, 4096, 0, 0, d, &x), -EINVAL,
		  "read_dmabuf_fd_einval");
	tap_errno(ret ? ret : submit(f, a.handle, 0, src, 4096, 0, 1, f, &x), -EINVAL,
		  "stage_svod_fd_einval");
	x = (struct svod_xfer){ .handle = a.handle, .user_ptr = (uintptr_t)src, .length = 4096,
				.flags = SVOD_XFER_ASYNC | SVOD_XFER_IN_FENCE, .in_fence_fd = -1 };
	tap_errno(ret ? ret : svod_ioctl(f, SVOD_IOCTL_STAGE, &x), -EINVAL,
		  "stage_negative_fd_einval");
	x = (struct svod_xfer){ .handle = a.handle, .user_ptr = (uintptr_t)src, .length = 4096,
				.flags = SVOD_XFER_ASYNC, .in_fence_fd = p[0] };
	tap_errno(ret ? ret : svod_ioctl(f, SVOD_IOCTL_STAGE, &x), -EINVAL,
		  "fd_without_flag_einval");
	x = (struct svod_xfer){ .handle = a.handle, .user_ptr = (uintptr_t)src, .length = 4096,
				.flags = SVOD_XFER_IN_FENCE, .in_fence_fd = p[0] };
	tap_errno(ret ? ret : svod_ioctl(f, SVOD_IOCTL_STAGE, &x), -EINVAL,
		  "in_fence_without_async_einval");
	x = (struct svod_xfer){ .handle = a.handle, .user_ptr = (uintptr_t)src, .length = 4096,
				.flags = SVOD_XFER_ASYNC, .pad3 = 1 };
	tap_errno(ret ? ret : svod_ioctl(f, SVOD_IOCTL_STAGE, &x), -EINVAL, "pad3_einval");
	x = (struct svod_xfer){ .handle = a.handle, .user_ptr = (uintptr_t)src, .length = 4096,
				.flags = SVOD_XFER_ASYNC | SVOD_XFER_IN_FENCE };
	tap_errno(ret ? ret : svod_ioctl(f, _IOC(_IOC_READ | _IOC_WRITE, SVOD_IOCTL_MAGIC,
						 _IOC_NR(SVOD_IOCTL_STAGE), SVOD_XFER_SIZE_VER2),
					 &x), -EINVAL, "in_fence_in_72_byte_struct_einval");

	e = (struct svod_batch_entry){ .handle = a.handle, .user_ptr = (uintptr_t)src,
				       .length = 4096, .op = SVOD_BATCH_STAGE };
	b = (struct svod_batch){ .entries_ptr = (uintptr_t)&e, .nr_entries = 1,
				 .flags = SVOD_BATCH_IN_FENCE, .in_fence_fd = closed };
	tap_errno(ret ? ret : svod_ioctl(f, SVOD_IOCTL_BATCH, &b), -EBADF, "batch_closed_fd_ebadf");
	b.in_fence_fd = d;
	tap_errno(ret ? ret : svod_ioctl(f, SVOD_IOCTL_BATCH, &b), -EINVAL, "batch_dmabuf_fd_einval");
	b.flags = 0;
	tap_errno(ret ? ret : svod_ioctl(f, SVOD_IOCTL_BATCH, &b), -EINVAL,
		  "batch_fd_without_flag_einval");
	b.in_fence_fd = 0;
	b.pad2 = 1;
	tap_errno(ret ? ret : svod_ioctl(f, SVOD_IOCTL_BATCH, &b), -EINVAL, "batch_pad2_einval");
	b.pad2 = 0;
	b.flags = SVOD_BATCH_IN_FENCE;
	tap_errno(ret ? ret : svod_ioctl(f, _IOC(_IOC_READ | _IOC_WRITE, SVOD_IOCTL_MAGIC,
						 _IOC_NR(SVOD_IOCTL_BATCH), SVOD_BATCH_SIZE_VER0),
					 &b), -EINVAL, "batch_in_fence_in_40_byte_struct_einval");

	seq1 = fdinfo_num(f, "svod-async-seqno");
	infl = fdinfo_num(f, "svod-async-inflight");
	if (!pret)
		pret = ht_pinned_pages(&pins1);
	tap_ok(!ret && seq1 == seq0 && seq0 >= 0 && infl == 0 && !pret && pins1 == pins0,
	       "bad_in_fences_queue_nothing_pin_nothing (%s, seqno %lld -> %lld, inflight %lld, pinned %lld -> %lld)",
	       ht_err(ret), seq0, seq1, infl, pins0, pins1);
	if (p[0] >= 0) {
		close(p[0]);
		close(p[1]);
	}
	if (d >= 0)
		close(d);
	if (f >= 0)
		close(f);
}

/*
 * A transfer waiting for a fence that does not signal meanwhile: FREE,
 * close and the timeout end it, before that fence, without a byte.
 */
static void test_never(void)
{
	struct svod_alloc z = { 0 };
	struct svod_xfer t;
	struct svod_wait w;
	uint64_t timeout0 = 0;
	int f = -1, lf = -1, sfd = -1, ret, r2 = -1, lst = -2, zero = 0, st = 0;

	/* FREE. */
	ret = long_fence(&lf, &sfd);
	f = ret ? -1 : ht_open();
	ret = ret ? ret : f < 0 ? f : svod_alloc(f, tier.id, MIB, 0, &z);
	ret = ret ? ret : submit(f, z.handle, 0, src, MIB, 0, 1, sfd, &t);
	ret = ret ? ret : svod_free(f, z.handle);
	r2 = ret ? ret : wait_for(f, t.seqno, &w);
	lst = ret ? -2 : fence_status(sfd);
	tap_ok(!ret && !r2 && w.status == -ECANCELED && !w.done && lst == 0,
	       "free_ends_waiting_transfer_ecanceled (%s/%s, status %d, done %llu, awaited fence %d)",
	       ht_err(ret), ht_err(r2), w.status, (unsigned long long)w.done, lst);

	/* close(): the fence of the waiting transfer signals ECANCELED. */
	ret = ret ? ret : svod_alloc(f, tier.id, MIB, 0, &z);
	ret = ret ? ret : submit(f, z.handle, 0, src, MIB, SVOD_XFER_FENCE_FD, 1, sfd, &t);
	if (f >= 0)
		close(f);
	f = -1;
	st = ret ? 0 : fence_status(t.fence_fd);
	lst = ret ? -2 : fence_status(sfd);
	tap_ok(!ret && st == -ECANCELED && lst == 0,
	       "close_ends_waiting_transfer_ecanceled (%s, fence %d, awaited fence %d)",
	       ht_err(ret), st, lst);
	if (!ret)
		close(t.fence_fd);
	long_fence_end(lf, sfd);

	/* async_timeout_ms, counted from the submission. */
	ret = svod_param_read("async_timeout_ms", &timeout0);
	ret = ret ? ret : long_fence(&lf, &sfd);
	f = ret ? -1 : ht_open();
	ret = ret ? ret : f < 0 ? f : svod_alloc(f, tier.id, MIB, 0, &z);
	ret = ret ? ret : svod_param_write("async_timeout_ms", 100);
	ret = ret ? ret : submit(f, z.handle, 0, src, MIB, 0, 1, sfd, &t);
	r2 = ret ? ret : wait_for(f, t.seqno, &w);
	lst = ret ? -2 : fence_status(sfd);
	if (timeout0)
		svod_param_write("async_timeout_ms", timeout0);
	memset(dst, 0xa5, MIB);
	if (!ret && !r2 && !svod_read(f, z.handle, 0, dst, MIB, 0, NULL))
		zero = all_byte(dst, MIB, 0);
	tap_ok(!ret && !r2 && w.status == -ETIMEDOUT && !w.done && zero && lst == 0,
	       "never_signalled_in_fence_etimedout_no_byte (%s/%s, status %d, done %llu, zero %d, awaited fence %d)",
	       ht_err(ret), ht_err(r2), w.status, (unsigned long long)w.done, zero, lst);
	if (f >= 0)
		close(f);
	long_fence_end(lf, sfd);
}

/* Unbind with a transfer waiting: it ends with ENODEV and unbind returns. */
static void test_unbind(void)
{
	char bdf[SVOD_NAME_LEN];
	struct svod_alloc z = { 0 };
	struct svod_tier_info t2;
	struct svod_xfer t;
	int f = -1, lf = -1, sfd = -1, ret, rb = -1, st = 0;

	snprintf(bdf, sizeof(bdf), "%s", tier.device);
	ret = long_fence(&lf, &sfd);
	f = ret ? -1 : ht_open();
	ret = ret ? ret : f < 0 ? f : svod_alloc(f, tier.id, MIB, 0, &z);
	ret = ret ? ret : submit(f, z.handle, 0, src, MIB, SVOD_XFER_FENCE_FD, 1, sfd, &t);
	rb = ret ? ret : svod_driver_bind(bdf, 0);
	st = ret ? 0 : fence_status(t.fence_fd);
	/* The awaited fence's own transfers end ENODEV too: st settles. */
	if (!ret && !st) {
		struct pollfd pf = { .fd = t.fence_fd, .events = POLLIN };

		poll(&pf, 1, 20000);
		st = fence_status(t.fence_fd);
	}
	tap_ok(!ret && !rb && st == -ENODEV,
	       "unbind_ends_waiting_transfer_enodev (%s/%s, fence %d)", ht_err(ret), ht_err(rb), st);
	if (!ret)
		close(t.fence_fd);
	if (f >= 0)
		close(f);
	long_fence_end(lf, sfd);
	if (!rb)
		rb = svod_driver_bind(bdf, 1);
	ret = rb ? rb : svod_tier_by_device(fd, bdf, &t2);
	tap_ok(!ret && t2.free_bytes == t2.capacity,
	       "rebound_tier_whole (%s)", ht_err(ret));
	if (!ret)
		tier = t2;
}

/*
 * A vgem fence, unsignalled: a new dumb buffer with a write fence attached
 * (*@fence, for VGEM_FENCE_SIGNAL), exported as a sync_file (*@sfd) from
 * the buffer's dma-buf (*@dbuf). vgem signals it itself after 10 s.
 */
static int vgem_fence(int card, uint32_t *fence, int *sfd, int *dbuf)
{
	struct drm_mode_create_dumb dumb = { .height = 1, .width = 1024, .bpp = 32 };
	struct drm_prime_handle p = { 0 };
	struct drm_vgem_fence_attach at = { 0 };
	struct dma_buf_export_sync_file ex = { .flags = DMA_BUF_SYNC_RW, .fd = -1 };

	*sfd = -1;
	*dbuf = -1;
	if (ioctl(card, DRM_IOCTL_MODE_CREATE_DUMB, &dumb))
		return -errno;
	at.handle = dumb.handle;
	at.flags = VGEM_FENCE_WRITE;
	if (ioctl(card, DRM_IOCTL_VGEM_FENCE_ATTACH, &at))
		return -errno;
	*fence = at.out_fence;
	p.handle = dumb.handle;
	p.flags = O_CLOEXEC | O_RDWR;
	if (ioctl(card, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p))
		return -errno;
	*dbuf = p.fd;
	if (ioctl(p.fd, DMA_BUF_IOCTL_EXPORT_SYNC_FILE, &ex))
		return -errno;
	*sfd = ex.fd;
	return fence_status(ex.fd) == 0 ? 0 : -EALREADY;
}

static int vgem_signal(int card, uint32_t fence)
{
	struct drm_vgem_fence_signal sg = { .fence = fence };

	return ioctl(card, DRM_IOCTL_VGEM_FENCE_SIGNAL, &sg) ? -errno : 0;
}

static void vgem_fence_end(int sfd, int dbuf)
{
	if (sfd >= 0)
		close(sfd);
	if (dbuf >= 0)
		close(dbuf);
}

/* Every byte of the BAR at @at is @b. */
static int bar_all(volatile uint8_t *at, size_t n, uint8_t b)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (at[i] != b)
			return 0;
	return 1;
}

/* svod waits for vgem: the BAR, the timeout, close and unbind. */
static void test_vgem(void)
{
	char bdf[SVOD_NAME_LEN];
	volatile uint8_t *at = NULL;
	struct svod_alloc z = { 0 };
	struct svod_tier_info t2;
	struct svod_xfer t;
	struct svod_wait w;
	uint64_t timeout0 = 0;
	uint32_t vf = 0;
	void *map = NULL;
	size_t map_len = 0;
	int card = ht_open_vgem(), f = -1, sfd = -1, dbuf = -1, ret, r2 = -1, held = 0, moved = 0;
	int st = 0, vst = -2, rb = -1, i;

	if (card < 0) {
		for (i = 0; i < NR_VGEM; i++)
			tap_skip("no vgem card: the test kernel has no DRM (CONFIG_DRM_VGEM), the stock one loads vgem.ko",
				 "vgem case %d", i);
		return;
	}
	snprintf(bdf, sizeof(bdf), "%s", tier.device);

	/* Held until VGEM_FENCE_SIGNAL: resource2 before and after. */
	f = ht_open();
	ret = f < 0 ? f : svod_alloc(f, tier.id, MIB, 0, &z);
	ret = ret ? ret : ht_bar2_map(&tier, z.device_addr, MIB, &at, &map, &map_len);
	ret = ret ? ret : vgem_fence(card, &vf, &sfd, &dbuf);
	memset(src, 0x5a, MIB);
	ret = ret ? ret : submit(f, z.handle, 0, src, MIB, SVOD_XFER_CPU, 1, sfd, &t);
	if (!ret) {
		usleep(300000);
		w = (struct svod_wait){ .seqno = t.seqno, .deadline_ns = 0 };
		r2 = svod_ioctl(f, SVOD_IOCTL_WAIT, &w);
		held = r2 == -ETIME && bar_all(at, MIB, 0);
	}
	tap_ok(!ret && held, "vgem_fence_holds_stage_bar_unchanged (%s, wait %s)",
	       ht_err(ret), ht_err(r2));
	ret = ret ? ret : vgem_signal(card, vf);
	r2 = ret ? ret : wait_for(f, t.seqno, &w);
	if (!ret && !r2)
		moved = bar_all(at, MIB, 0x5a);
	tap_ok(!ret && !r2 && !w.status && w.done == MIB && moved,
	       "vgem_signal_releases_stage_every_byte (%s/%s, status %d, done %llu, byte %#x)",
	       ht_err(ret), ht_err(r2), w.status, (unsigned long long)w.done,
	       at ? at[MIB - 1] : 0);
	vgem_fence_end(sfd, dbuf);

	/* Never signalled (before vgem's own 10 s): async_timeout_ms. */
	ret = ret ? ret : svod_free(f, z.handle);
	ret = ret ? ret : svod_alloc(f, tier.id, MIB, 0, &z);
	if (map)
		munmap(map, map_len);
	map = NULL;
	ret = ret ? ret : ht_bar2_map(&tier, z.device_addr, MIB, &at, &map, &map_len);
	ret = ret ? ret : vgem_fence(card, &vf, &sfd, &dbuf);
	ret = ret ? ret : svod_param_read("async_timeout_ms", &timeout0);
	ret = ret ? ret : svod_param_write("async_timeout_ms", 500);
	ret = ret ? ret : submit(f, z.handle, 0, src, MIB, 0, 1, sfd, &t);
	r2 = ret ? ret : wait_for(f, t.seqno, &w);
	vst = ret ? -2 : fence_status(sfd);
	if (timeout0)
		svod_param_write("async_timeout_ms", timeout0);
	tap_ok(!ret && !r2 && w.status == -ETIMEDOUT && !w.done && vst == 0 && bar_all(at, MIB, 0),
	       "vgem_fence_never_signalled_etimedout_no_byte (%s/%s, status %d, done %llu, vgem fence %d)",
	       ht_err(ret), ht_err(r2), w.status, (unsigned long long)w.done, vst);

	/* close() while waiting for the same, still unsignalled, fence. */
	ret = ret ? ret : submit(f, z.handle, 0, src, MIB, SVOD_XFER_FENCE_FD, 1, sfd, &t);
	if (f >= 0)
		close(f);
	f = -1;
	st = ret ? 0 : fence_status(t.fence_fd);
	vst = ret ? -2 : fence_status(sfd);
	tap_ok(!ret && st == -ECANCELED && vst == 0 && bar_all(at, MIB, 0),
	       "close_ends_stage_waiting_for_vgem_ecanceled (%s, fence %d, vgem fence %d)",
	       ht_err(ret), st, vst);
	if (!ret)
		close(t.fence_fd);
	if (map)
		munmap(map, map_len);
	map = NULL;

	/* Unbind while waiting: ENODEV, and the unbind returns. */
	f = ret ? -1 : ht_open();
	ret = ret ? ret : f < 0 ? f : svod_alloc(f, tier.id, MIB, 0, &z);
	ret = ret ? ret : submit(f, z.handle, 0, src, MIB, SVOD_XFER_FENCE_FD, 1, sfd, &t);
	rb = ret ? ret : svod_driver_bind(bdf, 0);
	/* The worker ends it once the unbind has kicked it: soon after. */
	if (!ret) {
		struct pollfd pf = { .fd = t.fence_fd, .events = POLLIN };

		poll(&pf, 1, 5000);
		st = fence_status(t.fence_fd);
	}
	vst = ret ? -2 : fence_status(sfd);
	tap_ok(!ret && !rb && st == -ENODEV && vst == 0,
	       "unbind_ends_stage_waiting_for_vgem_enodev (%s/%s, fence %d, vgem fence %d)",
	       ht_err(ret), ht_err(rb), st, vst);
	if (!ret)
		close(t.fence_fd);
	if (f >= 0)
		close(f);
	if (!rb)
		rb = svod_driver_bind(bdf, 1);
	if (!rb && svod_tier_by_device(fd, bdf, &t2))
		rb = -ENODEV;
	if (!rb)
		tier = t2;
	if (rb)
		tap_diag("rebind %s: %s", bdf, ht_err(rb));
	vgem_signal(card, vf);
	vgem_fence_end(sfd, dbuf);
	close(card);
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
	test_order();
	test_libsvod();
	test_error();
	test_bad_fds();
	test_never();
	test_unbind();
	test_vgem();
	return tap_done();
}
