// SPDX-License-Identifier: GPL-2.0
/*
 * t_vgem: another driver waits on svod's fences (Documentation/staging.rst,
 * "Who waits on svod's fences"). vgem (Debian's stock kernel; the guest's
 * /init loads it) makes a dumb buffer, exported as a dma-buf; svod's
 * transfer fence goes into its reservation object as a write with
 * DMA_BUF_IOCTL_IMPORT_SYNC_FILE, and the dma-buf layer's own waiters see
 * it. Ordering, not seconds: the transfer is a STAGE of 8 KiB on the DMA
 * engine (seconds under TCG; without a channel, 32 MiB on the CPU), and
 * what the dma-buf says is checked against what WAIT says just after.
 *
 * - poll() on the dma-buf (POLLIN waits for the write fences, POLLOUT for
 *   all: dma_buf_poll() in 6.1) with timeout 0 is not ready while WAIT,
 *   asked after it, says the transfer has not ended; a blocking poll
 *   returns, and WAIT then says it ended with status 0;
 * - with a second transfer imported, once WAIT (waiting for ever) returns,
 *   a poll with timeout 0 is ready at once, both ways;
 * - DMA_BUF_IOCTL_EXPORT_SYNC_FILE (DMA_BUF_SYNC_READ: what a reader waits
 *   for) gives a sync_file holding svod's fence, which SYNC_IOC_MERGE with
 *   svod's own fd keeps as one; both pending while the transfer runs and
 *   signalled as soon as WAIT returns;
 * - a transfer cancelled by FREE: the fence vgem exports carries its
 *   ECANCELED, and poll() on the dma-buf does not wait for ever.
 *
 * The test kernel has no DRM: there every case is skipped, saying so.
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
#include <unistd.h>

#include "common.h"
#include "drm_uapi.h"
#include "tap.h"

#define NR_CASES	7

#define MIB		(1u << 20)
#define LONG_CPU	(32 * MIB)
#define FOREVER		INT64_MAX
#define POLL_NET_MS	120000	/* a net for a hang, never a verdict */

static struct svod_tier_info tier;
static uint8_t *src;

/* A transfer whose fence goes into vgem's dma-buf. */
struct longx {
	uint64_t seqno;
	int fence_fd;
};

/*
 * An asynchronous STAGE with a fence that takes seconds: 8 KiB on the DMA
 * engine (four edu hops), else 32 MiB on the CPU. 0 or -errno.
 */
static int long_stage(int f, uint64_t h, struct longx *lx, const char **what)
{
	struct svod_xfer x = { .handle = h, .user_ptr = (uintptr_t)src, .length = 8192,
			       .flags = SVOD_XFER_DMA | SVOD_XFER_ASYNC | SVOD_XFER_FENCE_FD };
	int ret = svod_ioctl(f, SVOD_IOCTL_STAGE, &x);

	*what = "DMA 8 KiB";
	if (ret == -EOPNOTSUPP) {
		*what = "CPU 32 MiB";
		x = (struct svod_xfer){ .handle = h, .user_ptr = (uintptr_t)src,
					.length = LONG_CPU, .flags = SVOD_XFER_CPU |
					SVOD_XFER_ASYNC | SVOD_XFER_FENCE_FD };
		ret = svod_ioctl(f, SVOD_IOCTL_STAGE, &x);
	}
	lx->seqno = ret ? 0 : x.seqno;
	lx->fence_fd = ret ? -1 : x.fence_fd;
	return ret;
}

/* WAIT with deadline 0: 1 ended (*status out), 0 not yet, or -errno. */
static int ended(int f, uint64_t seqno, int *status)
{
	struct svod_wait w = { .seqno = seqno, .deadline_ns = 0 };
	int ret = svod_ioctl(f, SVOD_IOCTL_WAIT, &w);

	if (ret == -ETIME)
		return 0;
	if (ret)
		return ret;
	*status = w.status;
	return 1;
}

static int wait_forever(int f, uint64_t seqno, int *status)
{
	struct svod_wait w = { .seqno = seqno, .deadline_ns = FOREVER };
	int ret = svod_ioctl(f, SVOD_IOCTL_WAIT, &w);

	*status = ret ? 1 : w.status;
	return ret;
}

/* poll() of @events on @pfd: the events ready, 0 for none, or -errno. */
static int poll_one(int pfd, short events, int timeout_ms)
{
	struct pollfd p = { .fd = pfd, .events = events };
	int n = poll(&p, 1, timeout_ms);

	if (n < 0)
		return -errno;
	return n ? p.revents : 0;
}

static int import_fence(int dmabuf, int fence_fd)
{
	struct dma_buf_import_sync_file im = { .flags = DMA_BUF_SYNC_WRITE, .fd = fence_fd };

	return ioctl(dmabuf, DMA_BUF_IOCTL_IMPORT_SYNC_FILE, &im) ? -errno : 0;
}

/* A sync_file's status (1 signalled, 0 active, < 0 its error), its fence count and driver. */
static int fence_info(int sfd, unsigned int *nr, char *driver, size_t len)
{
	struct sync_fence_info fi[2];
	struct sync_file_info info = { .num_fences = 2, .sync_fence_info = (uintptr_t)fi };

	memset(fi, 0, sizeof(fi));
	if (ioctl(sfd, SYNC_IOC_FILE_INFO, &info))
		return -1000 - errno;
	if (nr)
		*nr = info.num_fences;
	if (driver)
		snprintf(driver, len, "%s", info.num_fences ? fi[0].driver_name : "");
	return info.status;
}

/* vgem's dma-buf of a new 4 KiB dumb buffer (O_RDWR), or -errno. */
static int vgem_dmabuf(int card)
{
	struct drm_mode_create_dumb dumb = { .height = 1, .width = 1024, .bpp = 32 };
	struct drm_prime_handle p = { 0 };

	if (ioctl(card, DRM_IOCTL_MODE_CREATE_DUMB, &dumb))
		return -errno;
	p.handle = dumb.handle;
	p.flags = O_CLOEXEC | O_RDWR;
	if (ioctl(card, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p))
		return -errno;
	return p.fd;
}

/* poll() on the dma-buf waits for svod's transfer, and not past its end. */
static void test_poll(int f, uint64_t h, int card)
{
	int dmabuf = vgem_dmabuf(card), ret, in0 = -1, out0 = -1, run0 = -1, in1 = -1, ran = -1;
	int status = 1, ready = -1;
	struct longx lx = { .fence_fd = -1 }, ly = { .fence_fd = -1 };
	const char *what = "-";

	ret = dmabuf < 0 ? dmabuf : long_stage(f, h, &lx, &what);
	ret = ret ? ret : import_fence(dmabuf, lx.fence_fd);
	tap_ok(!ret, "import_svod_fence_into_vgem_dmabuf_as_write (%s; %s)", ht_err(ret), what);
	if (!ret) {
		in0 = poll_one(dmabuf, POLLIN, 0);
		out0 = poll_one(dmabuf, POLLOUT, 0);
		run0 = !ended(f, lx.seqno, &status);
	}
	tap_ok(!ret && in0 == 0 && out0 == 0 && run0 == 1,
	       "dmabuf_poll_not_ready_while_wait_says_running (POLLIN %#x, POLLOUT %#x, then "
	       "WAIT %s)", in0, out0, run0 < 0 ? "-" : run0 ? "not ended" : "ended");
	if (!ret) {
		in1 = poll_one(dmabuf, POLLIN, POLL_NET_MS);
		ran = ended(f, lx.seqno, &status);
	}
	tap_ok(!ret && in1 == POLLIN && ran == 1 && !status,
	       "blocking_dmabuf_poll_returns_with_the_transfer_ended (POLLIN %#x, then WAIT %d, "
	       "status %d)", in1, ran, status);

	/* The other way round: WAIT returns first, the dma-buf is ready then. */
	status = 1;
	ret = ret ? ret : long_stage(f, h, &ly, &what);
	ret = ret ? ret : import_fence(dmabuf, ly.fence_fd);
	ret = ret ? ret : wait_forever(f, ly.seqno, &status);
	if (!ret)
		ready = poll_one(dmabuf, POLLIN | POLLOUT, 0);
	tap_ok(!ret && !status && ready == (POLLIN | POLLOUT),
	       "dmabuf_poll_ready_at_once_after_wait_returns (%s, status %d, poll %#x)",
	       ht_err(ret), status, ready);
	if (lx.fence_fd >= 0)
		close(lx.fence_fd);
	if (ly.fence_fd >= 0)
		close(ly.fence_fd);
	if (dmabuf >= 0)
		close(dmabuf);
}

/* vgem's exported sync_file is svod's fence: merged, one; signalled together. */
static void test_export(int f, uint64_t h, int card)
{
	struct dma_buf_export_sync_file ex = { .flags = DMA_BUF_SYNC_READ, .fd = -1 };
	struct sync_merge_data merge = { .name = "t_vgem", .fence = -1 };
	int dmabuf = vgem_dmabuf(card), ret, st_ex = -9, st_mg = -9, run = -1, status = 1;
	unsigned int nr_ex = 0, nr_mg = 0;
	struct longx lx = { .fence_fd = -1 };
	char drv[32] = "", drv_mg[32] = "";
	const char *what = "-";

	ret = dmabuf < 0 ? dmabuf : long_stage(f, h, &lx, &what);
	ret = ret ? ret : import_fence(dmabuf, lx.fence_fd);
	ret = ret ? ret : ioctl(dmabuf, DMA_BUF_IOCTL_EXPORT_SYNC_FILE, &ex) ? -errno : 0;
	merge.fd2 = lx.fence_fd;
	ret = ret ? ret : ioctl(ex.fd, SYNC_IOC_MERGE, &merge) ? -errno : 0;
	if (!ret) {
		st_ex = fence_info(ex.fd, &nr_ex, drv, sizeof(drv));
		st_mg = fence_info(merge.fence, &nr_mg, drv_mg, sizeof(drv_mg));
		run = !ended(f, lx.seqno, &status);
	}
	tap_ok(!ret && nr_ex == 1 && nr_mg == 1 && !strcmp(drv, "svod") &&
	       !strcmp(drv_mg, "svod") && st_ex == 0 && st_mg == 0 && run == 1,
	       "vgem_export_sync_file_is_svods_fence_pending_while_running (%s; %s; exported %u "
	       "fence of '%s' status %d, merged %u of '%s' status %d, then WAIT %s)", ht_err(ret),
	       what, nr_ex, drv, st_ex, nr_mg, drv_mg, st_mg,
	       run < 0 ? "-" : run ? "not ended" : "ended");
	ret = ret ? ret : wait_forever(f, lx.seqno, &status);
	if (!ret) {
		st_ex = fence_info(ex.fd, NULL, NULL, 0);
		st_mg = fence_info(merge.fence, NULL, NULL, 0);
	}
	tap_ok(!ret && !status && st_ex == 1 && st_mg == 1,
	       "exported_and_merged_signalled_once_wait_returns (%s, status %d; exported %d, "
	       "merged %d)", ht_err(ret), status, st_ex, st_mg);
	if (merge.fence >= 0)
		close(merge.fence);
	if (ex.fd >= 0)
		close(ex.fd);
	if (lx.fence_fd >= 0)
		close(lx.fence_fd);
	if (dmabuf >= 0)
		close(dmabuf);
}

/*
 * A transfer queued behind a long one and cancelled by FREE: its error
 * reaches whoever waits through vgem, and poll() ends.
 */
static void test_cancelled(int f, uint64_t h, int card)
{
	struct dma_buf_export_sync_file ex = { .flags = DMA_BUF_SYNC_READ, .fd = -1 };
	int dmabuf = vgem_dmabuf(card), ret, st = -9, ready = -1, status = 1;
	struct svod_alloc b = { 0 };
	struct longx lx = { .fence_fd = -1 };
	struct svod_xfer x;
	const char *what = "-";

	ret = dmabuf < 0 ? dmabuf : svod_alloc(f, tier.id, MIB, 0, &b);
	ret = ret ? ret : long_stage(f, h, &lx, &what);
	x = (struct svod_xfer){ .handle = b.handle, .user_ptr = (uintptr_t)src, .length = 4096,
				.flags = SVOD_XFER_CPU | SVOD_XFER_ASYNC | SVOD_XFER_FENCE_FD,
				.fence_fd = -1 };
	ret = ret ? ret : svod_ioctl(f, SVOD_IOCTL_STAGE, &x);
	ret = ret ? ret : import_fence(dmabuf, x.fence_fd);
	ret = ret ? ret : svod_free(f, b.handle);
	ret = ret ? ret : ioctl(dmabuf, DMA_BUF_IOCTL_EXPORT_SYNC_FILE, &ex) ? -errno : 0;
	if (!ret) {
		ready = poll_one(dmabuf, POLLIN, POLL_NET_MS);
		st = fence_info(ex.fd, NULL, NULL, 0);
		ret = wait_forever(f, x.seqno, &status);
	}
	tap_ok(!ret && ready == POLLIN && st == -ECANCELED && status == -ECANCELED,
	       "cancelled_transfer_error_reaches_vgem_export_poll_ends (%s; behind %s: poll %#x, "
	       "exported status %d, WAIT status %d)", ht_err(ret), what, ready, st, status);
	if (!ret)
		wait_forever(f, lx.seqno, &status);
	if (ex.fd >= 0)
		close(ex.fd);
	if (x.fence_fd >= 0)
		close(x.fence_fd);
	if (lx.fence_fd >= 0)
		close(lx.fence_fd);
	if (dmabuf >= 0)
		close(dmabuf);
}

int main(void)
{
	struct svod_alloc a = { 0 };
	int fd, card, ret, i;

	tap_plan(NR_CASES);
	card = ht_open_vgem();
	if (card < 0) {
		for (i = 0; i < NR_CASES; i++)
			tap_skip("no vgem card (the test kernel has no DRM)", "vgem case %d", i);
		return tap_done();
	}
	fd = ht_open();
	ret = fd < 0 ? fd : ht_first_tier(fd, &tier);
	src = mmap(NULL, LONG_CPU, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (src == MAP_FAILED)
		ret = ret ? ret : -ENOMEM;
	ret = ret ? ret : svod_alloc(fd, tier.id, LONG_CPU, 0, &a);
	if (ret) {
		tap_diag("setup: %s", ht_err(ret));
		return tap_done();
	}
	ht_fill_xorshift(src, LONG_CPU, 0x7e6);
	test_poll(fd, a.handle, card);
	test_export(fd, a.handle, card);
	test_cancelled(fd, a.handle, card);
	close(card);
	close(fd);
	return tap_done();
}
