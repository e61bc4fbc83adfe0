// SPDX-License-Identifier: GPL-2.0
/*
 * t_uring: io_uring waits on svod's fences (Documentation/staging.rst,
 * "Asynchronous transfers", "Who waits on svod's fences"). liburing
 * (Debian's liburing-dev, linked statically) is the client: nothing here
 * is svod's own waiting code.
 *
 * - 64 asynchronous transfers with FENCE_FD on two files (STAGE and READ,
 *   sizes from 1 byte to 1 MiB, four of them on the DMA engine where the
 *   guest has a channel), then one io_uring_submit() of 64
 *   IORING_OP_POLL_ADD (POLLIN) on their sync_files, and 64 CQEs reaped:
 *   each one POLLIN, each transfer once;
 * - when a CQE is reaped its transfer is done: WAIT with deadline 0 says
 *   status 0 and every byte, SYNC_IOC_FILE_INFO says signalled, and the
 *   bytes are there (a READ's in its buffer, a STAGE's read back);
 * - the order is the timeline's: when a CQE is reaped every earlier
 *   transfer of its file is done too, and each file's fences signalled in
 *   timeline order (their timestamps). The order of the CQEs in the ring
 *   is io_uring's (6.1 runs a batch of task work last in, first out) and
 *   only printed;
 * - a POLL_ADD on the fence of a transfer queued behind a long one posts
 *   no CQE while WAIT says the transfer has not ended (a non-blocking peek
 *   first, then WAIT), and its CQE, once it comes, finds it done.
 *
 * The test kernel is built without CONFIG_IO_URING (tinyconfig): there
 * io_uring_setup() is ENOSYS and every case is skipped, saying so.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <liburing.h>
#include <linux/sync_file.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common.h"
#include "tap.h"

#define NR_CASES	10

#define MIB		(1u << 20)
#define NR_XFER		64
#define NR_FILES	2
#define REGION		(8 * MIB)	/* each file's allocation */
#define DMA_LEN		2000		/* one or two edu hops */
#define FOREVER		INT64_MAX

struct xfer {
	int file;		/* index in files[] */
	int to_device;		/* STAGE, else READ */
	uint32_t engine;	/* SVOD_XFER_CPU or SVOD_XFER_DMA */
	uint64_t off, len;
	uint64_t seqno;
	int fence_fd;
	uint8_t *buf;		/* a READ's own buffer */
};

static struct svod_tier_info tier;
static int files[NR_FILES] = { -1, -1 };
static uint64_t handles[NR_FILES];
static uint8_t *pat_bar, *pat_user, *scratch;
static struct xfer xs[NR_XFER];

static int submit(int f, uint64_t h, uint64_t off, void *buf, uint64_t len, uint32_t flags,
		  int to_device, uint64_t *seqno, int *fence_fd)
{
	struct svod_xfer x = { .handle = h, .offset = off, .user_ptr = (uintptr_t)buf,
			       .length = len, .flags = flags | SVOD_XFER_ASYNC };
	int ret = svod_ioctl(f, to_device ? SVOD_IOCTL_STAGE : SVOD_IOCTL_READ, &x);

	*seqno = x.seqno;
	if (fence_fd)
		*fence_fd = ret ? -1 : x.fence_fd;
	return ret;
}

/* WAIT with deadline 0: 1 ended (its status and done out), 0 not yet, or -errno. */
static int peek_done(int f, uint64_t seqno, int *status, uint64_t *done)
{
	struct svod_wait w = { .seqno = seqno, .deadline_ns = 0 };
	int ret = svod_ioctl(f, SVOD_IOCTL_WAIT, &w);

	if (ret == -ETIME)
		return 0;
	if (ret)
		return ret;
	*status = w.status;
	*done = w.done;
	return 1;
}

/* A sync_file's status (1 signalled, 0 active, < 0 its error) and timestamp. */
static int fence_info(int sfd, long long *stamp)
{
	struct sync_fence_info fi = { 0 };
	struct sync_file_info info = { .num_fences = 1, .sync_fence_info = (uintptr_t)&fi };

	if (ioctl(sfd, SYNC_IOC_FILE_INFO, &info))
		return -1000 - errno;
	if (stamp)
		*stamp = info.status ? (long long)fi.timestamp_ns : -1;
	return info.status;
}

/* Sizes of the 64 transfers: odd ones, page-sized ones, up to 1 MiB. */
static const uint64_t sizes[] = { 1, 777, 4096, 12345, 65536, 200000, MIB, 3000 };

/*
 * Submits the 64 transfers; *has_dma says whether the DMA engine took its
 * four. Return: 0, or the -errno of the transfer *err_at.
 */
static int submit_all(int *has_dma, int *err_at)
{
	uint64_t next_off[NR_FILES] = { 0 };
	int i, ret;

	*has_dma = 1;
	for (i = 0; i < NR_XFER; i++) {
		struct xfer *x = &xs[i];

		x->file = i % NR_FILES;
		x->to_device = (i / NR_FILES) % 2;
		/* Two DMA transfers early on each file, two later. */
		x->engine = (i == 2 || i == 3 || i == 34 || i == 35) && *has_dma ?
			    SVOD_XFER_DMA : SVOD_XFER_CPU;
		x->len = x->engine == SVOD_XFER_DMA ? DMA_LEN : sizes[(i / NR_FILES) % 8];
		x->off = next_off[x->file] + 13;
		next_off[x->file] = (x->off + x->len + 4095) & ~4095ull;
		x->buf = scratch + (x->file * REGION) + x->off;
		if (!x->to_device)
			memset(x->buf, 0, x->len);
		ret = submit(files[x->file], handles[x->file], x->off,
			     x->to_device ? pat_user + x->off : x->buf, x->len,
			     x->engine | SVOD_XFER_FENCE_FD, x->to_device, &x->seqno,
			     &x->fence_fd);
		if (ret == -EOPNOTSUPP && x->engine == SVOD_XFER_DMA) {
			*has_dma = 0;
			i--;
			continue;
		}
		if (ret) {
			*err_at = i;
			return ret;
		}
	}
	return 0;
}

/* The bytes of @x where they belong: its READ buffer, or read back from svod. */
static int bytes_right(const struct xfer *x)
{
	static uint8_t back[MIB];

	if (!x->to_device)
		return !memcmp(x->buf, pat_bar + x->off, x->len);
	if (svod_read(files[x->file], handles[x->file], x->off, back, x->len, SVOD_XFER_CPU,
		      NULL))
		return 0;
	return !memcmp(back, pat_user + x->off, x->len);
}

static void test_64(struct io_uring *ring)
{
	int has_dma = 0, err_at = -1, ret, wret = 0, i, j, got = 0, bad_res = 0, not_done = 0;
	int bad_bytes = 0, early = 0, inversions = 0, out_of_order = 0, status, submitted;
	uint64_t last_seq[NR_FILES] = { 0 }, done;
	long long stamp[NR_XFER], prev[NR_FILES];
	bool seen[NR_XFER] = { false };
	int pending_at_submit = 0;
	struct io_uring_cqe *cqe;
	struct __kernel_timespec ts = { .tv_sec = 120 };

	ret = submit_all(&has_dma, &err_at);
	if (ret)
		tap_diag("transfer %d of 64: %s", err_at, ht_err(ret));
	tap_ok(!ret, "submit_64_async_transfers_with_fences (%s; %s)", ht_err(ret),
	       has_dma ? "4 on the DMA engine" : "no DMA_MEMCPY channel: all on the CPU");
	if (ret) {
		for (i = 0; i < 6; i++)
			tap_ok(0, "64 transfers case %d (not submitted)", i);
		return;
	}

	for (i = 0; i < NR_XFER; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

		if (!sqe)
			break;
		io_uring_prep_poll_add(sqe, xs[i].fence_fd, POLLIN);
		io_uring_sqe_set_data64(sqe, i);
	}
	for (j = 0; j < NR_XFER; j++)
		pending_at_submit += fence_info(xs[j].fence_fd, NULL) == 0;
	submitted = io_uring_submit(ring);
	tap_ok(submitted == NR_XFER,
	       "one_io_uring_submit_of_64_poll_add (%d; %d of the fences pending just before)",
	       submitted, pending_at_submit);

	while (got < submitted) {
		wret = io_uring_wait_cqe_timeout(ring, &cqe, &ts);
		if (wret)
			break;
		i = (int)io_uring_cqe_get_data64(cqe);
		if (i < 0 || i >= NR_XFER || seen[i] || cqe->res <= 0 || !(cqe->res & POLLIN)) {
			bad_res++;
			io_uring_cqe_seen(ring, cqe);
			got++;
			continue;
		}
		seen[i] = true;
		got++;
		/* At reap: this transfer has ended, with every byte. */
		ret = peek_done(files[xs[i].file], xs[i].seqno, &status, &done);
		if (ret != 1 || status || done != xs[i].len ||
		    fence_info(xs[i].fence_fd, NULL) != 1)
			not_done++;
		if (!bytes_right(&xs[i]))
			bad_bytes++;
		/* And so has every earlier transfer of its file. */
		for (j = 0; j < NR_XFER; j++)
			if (xs[j].file == xs[i].file && xs[j].seqno < xs[i].seqno &&
			    peek_done(files[xs[j].file], xs[j].seqno, &status, &done) != 1)
				early++;
		if (xs[i].seqno < last_seq[xs[i].file])
			inversions++;
		else
			last_seq[xs[i].file] = xs[i].seqno;
		io_uring_cqe_seen(ring, cqe);
	}
	tap_ok(got == NR_XFER && !bad_res,
	       "reaped_64_cqes_pollin_each_transfer_once (%d reaped, %d bad; last wait %s)",
	       got, bad_res, ht_err(wret));
	tap_ok(got == NR_XFER && !not_done,
	       "each_cqe_finds_its_transfer_done_wait_0_and_fence_status (%d not done)",
	       not_done);
	tap_ok(got == NR_XFER && !bad_bytes,
	       "each_cqe_finds_its_bytes_in_place (%d wrong)", bad_bytes);
	tap_diag("CQEs reaped after a later transfer's of the same file: %d of %d "
		 "(io_uring's order, not svod's)", inversions, got);
	tap_ok(got == NR_XFER && !early,
	       "no_cqe_before_an_earlier_transfer_of_its_file_ended (%d early)", early);

	prev[0] = prev[1] = -1;
	for (i = 0; i < NR_XFER; i++) {
		if (fence_info(xs[i].fence_fd, &stamp[i]) != 1 || stamp[i] < 0) {
			out_of_order++;
			continue;
		}
		/* xs[] of one file are in submission (timeline) order. */
		if (stamp[i] < prev[xs[i].file])
			out_of_order++;
		prev[xs[i].file] = stamp[i];
	}
	tap_ok(!out_of_order, "each_files_fences_signalled_in_timeline_order (%d out of order)",
	       out_of_order);
	for (i = 0; i < NR_XFER; i++)
		if (xs[i].fence_fd >= 0)
			close(xs[i].fence_fd);
}

/*
 * A transfer queued behind a long one (a DMA transfer of 8 KiB, seconds
 * under TCG; without a channel 32 MiB on the CPU): the POLL_ADD on its
 * fence must not complete before it. The peek comes first and WAIT after,
 * so a CQE seen with WAIT then saying "not ended" was a CQE too early.
 */
static void test_blocked(struct io_uring *ring)
{
	int f = ht_open(), ret, fence_fd = -1, have, running = -1, status = 1, r2;
	uint64_t blocker = 0, target = 0, done = 0;
	struct svod_alloc a = { 0 };
	struct io_uring_cqe *cqe = NULL;
	struct io_uring_sqe *sqe;
	struct __kernel_timespec ts = { .tv_sec = 120 };
	const char *what = "DMA 8 KiB";

	ret = f < 0 ? f : svod_alloc(f, tier.id, 32 * MIB, 0, &a);
	r2 = ret ? ret : submit(f, a.handle, 0, pat_user, 8192, SVOD_XFER_DMA, 1, &blocker, NULL);
	if (r2 == -EOPNOTSUPP) {
		what = "CPU 32 MiB";
		r2 = submit(f, a.handle, 0, pat_bar, 32 * MIB, SVOD_XFER_CPU, 1, &blocker, NULL);
	}
	ret = r2 ? r2 : submit(f, a.handle, 0, pat_user, 4096, SVOD_XFER_CPU | SVOD_XFER_FENCE_FD,
			       1, &target, &fence_fd);
	sqe = ret ? NULL : io_uring_get_sqe(ring);
	if (sqe) {
		io_uring_prep_poll_add(sqe, fence_fd, POLLIN);
		io_uring_sqe_set_data64(sqe, 1000);
		ret = io_uring_submit(ring) == 1 ? 0 : -EIO;
	}
	have = ret ? -1 : io_uring_peek_cqe(ring, &cqe) == 0;
	if (!ret)
		running = !peek_done(f, target, &status, &done);
	tap_ok(!ret && !have && running == 1,
	       "poll_add_on_blocked_fence_no_cqe_while_wait_says_running (%s; behind %s: "
	       "peek %s, then WAIT %s)", ht_err(ret), what,
	       have < 0 ? "-" : have ? "had a CQE" : "none",
	       running < 0 ? "-" : running ? "not ended" : "ended");
	if (!ret && !have)
		ret = io_uring_wait_cqe_timeout(ring, &cqe, &ts);
	r2 = ret ? ret : peek_done(f, target, &status, &done);
	tap_ok(!ret && cqe && cqe->user_data == 1000 && (cqe->res & POLLIN) && r2 == 1 &&
	       !status && done == 4096 && fence_info(fence_fd, NULL) == 1,
	       "poll_add_cqe_finds_the_blocked_transfer_done (%s; WAIT %d, status %d, done %llu)",
	       ht_err(ret), r2, status, (unsigned long long)done);
	if (!ret && cqe)
		io_uring_cqe_seen(ring, cqe);
	if (fence_fd >= 0)
		close(fence_fd);
	if (f >= 0)
		close(f);
}

int main(void)
{
	struct io_uring ring;
	struct svod_alloc a;
	char why[160];
	int fd, ret, i;

	tap_plan(NR_CASES);
	ret = io_uring_queue_init(NR_XFER, &ring, 0);
	if (ret) {
		snprintf(why, sizeof(why), "io_uring_setup: %s%s", ht_err(ret),
			 ret == -ENOSYS ? " (a kernel without CONFIG_IO_URING: the test kernel)" :
			 "");
		for (i = 0; i < NR_CASES; i++)
			tap_skip(why, "io_uring case %d", i);
		return tap_done();
	}
	tap_ok(1, "io_uring_queue_init_64_entries");

	fd = ht_open();
	ret = fd < 0 ? fd : ht_first_tier(fd, &tier);
	/* 32 MiB: the BAR's pattern, the STAGEs', a scratch region per file. */
	pat_bar = mmap(NULL, (2 + NR_FILES) * REGION, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pat_bar == MAP_FAILED)
		ret = ret ? ret : -ENOMEM;
	for (i = 0; i < NR_FILES && !ret; i++) {
		files[i] = ht_open();
		ret = files[i] < 0 ? files[i] : svod_alloc(files[i], tier.id, REGION, 0, &a);
		handles[i] = a.handle;
	}
	if (!ret) {
		/* The BAR holds one pattern, STAGEs bring another. */
		pat_user = pat_bar + REGION;
		scratch = pat_bar + 2 * REGION;
		ht_fill_xorshift(pat_bar, REGION, 0x64b);
		ht_fill_xorshift(pat_user, REGION, 0x64c);
		for (i = 0; i < NR_FILES && !ret; i++)
			ret = svod_stage(files[i], handles[i], 0, pat_bar, REGION, SVOD_XFER_CPU,
					 NULL);
	}
	if (ret) {
		tap_diag("setup: %s", ht_err(ret));
		return tap_done();
	}
	test_64(&ring);
	test_blocked(&ring);
	io_uring_queue_exit(&ring);
	for (i = 0; i < NR_FILES; i++)
		close(files[i]);
	close(fd);
	return tap_done();
}
