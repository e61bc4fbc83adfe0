// SPDX-License-Identifier: GPL-2.0
/*
 * t_lastuse: FREE with SVOD_FREE_AFTER_USE, release after last use
 * (Documentation/uapi.rst, "FREE"; staging.rst, "Release after last use").
 *
 * - a READ queued behind a long STAGE of another allocation, then FREE
 *   after use: FREE returns at once, the handle is stale at once (STAGE,
 *   FREE: ESTALE), the READ ends with status 0 and every byte of what was
 *   staged, and while its fence has not signalled the tier (QUERY) and
 *   fdinfo still count the bytes; once it signalled they come back;
 * - an ALLOC of the same size while the transfer is pending never gets the
 *   freed range, and with the rest of the tier allocated it fails with
 *   ENOSPC; after the signal an ALLOC of that size gets it back, zeroed;
 * - close() with an after-use FREE pending: the fence signals ECANCELED
 *   (or the transfer had ended), no page stays pinned, the bytes are back;
 * - unknown FREE flags and a nonzero pad: EINVAL, the handle stays live;
 * - unbind with an after-use FREE pending: the fence signals ENODEV (or
 *   the transfer had ended), no page stays pinned; after the rebind the
 *   tier is whole and empty.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/sync_file.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common.h"
#include "tap.h"

#define NR_CASES	15

#define MIB		(1u << 20)
#define BIG		(32 * MIB)	/* the long transfer in front */
#define SMALL		(4 * MIB)	/* the transfer of the freed allocation */
#define FOREVER		INT64_MAX

static int fd = -1;
static struct svod_tier_info tier;
static char bdf[SVOD_NAME_LEN];
static uint8_t *src, *dst;

static int submit(int f, uint64_t h, void *buf, uint64_t len, uint32_t flags,
		  int to_device, struct svod_xfer *x)
{
	*x = (struct svod_xfer){ .handle = h, .user_ptr = (uintptr_t)buf, .length = len,
				 .flags = flags | SVOD_XFER_ASYNC | SVOD_XFER_CPU };
	return svod_ioctl(f, to_device ? SVOD_IOCTL_STAGE : SVOD_IOCTL_READ, x);
}

static int free_flags(int f, uint64_t h, uint32_t flags, uint32_t pad)
{
	struct svod_free fr = { .handle = h, .flags = flags, .pad = pad };

	return svod_ioctl(f, SVOD_IOCTL_FREE, &fr);
}

static int wait_for(int f, uint64_t seqno, struct svod_wait *w)
{
	*w = (struct svod_wait){ .seqno = seqno, .deadline_ns = FOREVER };
	return svod_ioctl(f, SVOD_IOCTL_WAIT, w);
}

/* A sync_file's status: 1 signalled, 0 active, < 0 its error. */
static int fence_status(int sfd)
{
	struct sync_file_info info = { 0 };

	if (ioctl(sfd, SYNC_IOC_FILE_INFO, &info))
		return -1000 - errno;
	return info.status;
}

/* The fence's status once it signalled (polled, 30 s at most). */
static int fence_settles(int sfd)
{
	int i, st = 0;

	for (i = 0; i < 30000 && !(st = fence_status(sfd)); i++)
		usleep(1000);
	return st;
}

static int all_zero(const uint8_t *p, size_t n)
{
	while (n--)
		if (*p++)
			return 0;
	return 1;
}

static long long drm_total(int f)
{
	char key[64];

	snprintf(key, sizeof(key), "drm-total-%s", tier.name);
	return ht_fdinfo_value(getpid(), f, key);
}

/*
 * A long STAGE into @front, then a READ of @back's first SMALL bytes into
 * dst with a sync_file (*@sfd): the READ waits its turn behind the STAGE.
 */
static int queue_behind(int f, uint64_t front, uint64_t back, struct svod_xfer *x, int *sfd)
{
	struct svod_xfer y;
	int ret = submit(f, front, src, BIG, 0, 1, &y);

	ret = ret ? ret : submit(f, back, dst, SMALL, SVOD_XFER_FENCE_FD, 0, x);
	*sfd = ret ? -1 : x->fence_fd;
	return ret;
}

static void test_after_use(void)
{
	struct svod_alloc b = { 0 }, a = { 0 }, c = { 0 }, d = { 0 }, e = { 0 };
	uint64_t free0 = 0, free1 = 0, rest = 0;
	long long total = -1;
	struct svod_xfer x, z;
	struct svod_wait w;
	int f = ht_open(), ret, sfd = -1, st = -1, waited;

	ht_tier_usage(fd, tier.id, &free0, NULL);
	ret = f < 0 ? f : svod_alloc(f, tier.id, BIG, 0, &b);
	ret = ret ? ret : svod_alloc(f, tier.id, SMALL, 0, &a);
	ret = ret ? ret : svod_stage(f, a.handle, 0, src + 7, SMALL, 0, NULL);
	memset(dst, 0, SMALL);
	ret = ret ? ret : queue_behind(f, b.handle, a.handle, &x, &sfd);
	ret = ret ? ret : free_flags(f, a.handle, SVOD_FREE_AFTER_USE, 0);
	tap_errno(ret, 0, "free_after_use_returns_0");
	tap_errno(ret ? ret : submit(f, a.handle, src, 4096, 0, 1, &z), -ESTALE,
		  "after_use_handle_stale_at_once");
	tap_errno(ret ? ret : free_flags(f, a.handle, SVOD_FREE_AFTER_USE, 0), -ESTALE,
		  "second_free_after_use_estale");

	/* Read usage first: if the fence is active after, it was before. */
	ht_tier_usage(fd, tier.id, &free1, NULL);
	total = drm_total(f);
	if (!ret)
		ret = svod_alloc(f, tier.id, SMALL, 0, &c);
	st = ret ? -1 : fence_status(sfd);
	tap_ok(!ret && (st != 0 || (free1 == free0 - BIG - SMALL &&
				    total == (long long)(BIG + SMALL))),
	       "pending_bytes_in_use_until_signal (%s, fence %d, used %llu, fdinfo %lld)",
	       ht_err(ret), st, (unsigned long long)(free0 - free1), total);
	tap_ok(!ret && (st != 0 || c.device_addr != a.device_addr),
	       "alloc_never_gets_pending_range (%s, fence %d, old 0x%llx new 0x%llx)",
	       ht_err(ret), st, (unsigned long long)a.device_addr,
	       (unsigned long long)c.device_addr);
	/* The rest of the tier taken: nothing is left while it is pending. */
	if (!ret)
		ht_tier_usage(fd, tier.id, &rest, NULL);
	ret = ret ? ret : svod_alloc(f, tier.id, rest, 0, &e);
	if (!ret) {
		int r2 = svod_alloc(f, tier.id, SMALL, 0, &d);

		st = st ? st : fence_status(sfd);
		tap_ok(r2 == -ENOSPC || st != 0,
		       "full_tier_enospc_while_pending (%s, fence %d)", ht_err(r2), st);
		if (!r2)
			svod_free(f, d.handle);
		ret = svod_free(f, e.handle);
	} else {
		tap_ok(0, "full_tier_enospc_while_pending (%s)", ht_err(ret));
	}
	if (st)
		tap_diag("the transfer ended before the checks: they proved nothing");

	ret = ret ? ret : wait_for(f, x.seqno, &w);
	tap_ok(!ret && !w.status && w.done == SMALL && !memcmp(dst, src + 7, SMALL),
	       "after_use_transfer_completes_all_bytes (%s, status %d, done %llu)",
	       ht_err(ret), w.status, (unsigned long long)w.done);
	if (!ret)
		ret = svod_free(f, c.handle);
	waited = ret ? -1 : ht_wait_free(fd, tier.id, free0 - BIG, 20000);
	tap_ok(waited >= 0 && drm_total(f) == BIG,
	       "bytes_back_after_signal (%s, after %d ms, fdinfo %lld)", ht_err(ret), waited,
	       drm_total(f));

	/* First fit: the freed range is the lowest hole of its size. */
	ret = ret ? ret : svod_alloc(f, tier.id, SMALL, 0, &d);
	memset(dst, 0xa5, SMALL);
	ret = ret ? ret : svod_read(f, d.handle, 0, dst, SMALL, 0, NULL);
	tap_ok(!ret && d.device_addr == a.device_addr && all_zero(dst, SMALL),
	       "released_range_zeroed (%s, same place %d)", ht_err(ret),
	       d.device_addr == a.device_addr);
	if (sfd >= 0)
		close(sfd);
	if (f >= 0)
		close(f);
}

static void test_flags(void)
{
	struct svod_alloc a = { 0 };
	int f = ht_open(), ret;

	ret = f < 0 ? f : svod_alloc(f, tier.id, 4096, 0, &a);
	tap_errno(ret ? ret : free_flags(f, a.handle, 2, 0), -EINVAL, "free_unknown_flag_einval");
	tap_errno(ret ? ret : free_flags(f, a.handle, SVOD_FREE_AFTER_USE, 1), -EINVAL,
		  "free_after_use_pad_einval");
	tap_errno(ret ? ret : free_flags(f, a.handle, SVOD_FREE_AFTER_USE, 0), 0,
		  "refused_free_leaves_handle_live");
	if (f >= 0)
		close(f);
}

/* close() or unbind (@unbind) with an after-use FREE pending. */
static void test_end(int unbind)
{
	struct svod_alloc b = { 0 }, a = { 0 };
	long long pins0 = 0, pins1 = 0;
	struct svod_tier_info t;
	uint64_t free0 = 0;
	struct svod_xfer x;
	int f = ht_open(), ret, pret, sfd = -1, st = -1, waited = -1;

	pret = ht_pinned_pages(&pins0);
	ht_tier_usage(fd, tier.id, &free0, NULL);
	ret = f < 0 ? f : svod_alloc(f, tier.id, BIG, 0, &b);
	ret = ret ? ret : svod_alloc(f, tier.id, SMALL, 0, &a);
	ret = ret ? ret : queue_behind(f, b.handle, a.handle, &x, &sfd);
	ret = ret ? ret : free_flags(f, a.handle, SVOD_FREE_AFTER_USE, 0);
	if (unbind) {
		ret = ret ? ret : svod_driver_bind(bdf, 0);
		st = ret ? -1 : fence_settles(sfd);
		if (f >= 0)
			close(f);
		pret = pret ? pret : ht_pinned_pages(&pins1);
		tap_ok(!ret && (st == -ENODEV || st == 1) && !pret && pins1 == pins0,
		       "unbind_ends_after_use_enodev_unpins (%s, fence %d, pinned %lld -> %lld)",
		       ht_err(ret), st, pins0, pins1);
		ret = ret ? ret : svod_driver_bind(bdf, 1);
		ret = ret ? ret : svod_tier_by_device(fd, bdf, &t);
		tap_ok(!ret && t.free_bytes == t.capacity && t.nr_live == 0,
		       "rebound_tier_whole_and_empty (%s, free %llu of %llu, %u live)",
		       ht_err(ret), (unsigned long long)t.free_bytes,
		       (unsigned long long)t.capacity, t.nr_live);
	} else {
		if (f >= 0)
			close(f);
		st = ret ? -1 : fence_settles(sfd);
		waited = ret ? -1 : ht_wait_free(fd, tier.id, free0, 20000);
		pret = pret ? pret : ht_pinned_pages(&pins1);
		tap_ok(!ret && (st == -ECANCELED || st == 1) && waited >= 0 && !pret &&
		       pins1 == pins0,
		       "close_ends_after_use_ecanceled_releases (%s, fence %d, back after %d ms, pinned %lld -> %lld)",
		       ht_err(ret), st, waited, pins0, pins1);
	}
	if (sfd >= 0)
		close(sfd);
}

int main(void)
{
	char bdfs[4][SVOD_NAME_LEN];
	int ret;

	tap_plan(NR_CASES);
	fd = ht_open();
	ret = fd < 0 ? fd : svod_devices(bdfs, 4);
	if (ret > 0) {
		strcpy(bdf, bdfs[0]);
		ret = svod_tier_by_device(fd, bdf, &tier);
	} else if (!ret) {
		ret = -ENODEV;
	}
	src = mmap(NULL, BIG + MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	dst = mmap(NULL, BIG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ret || src == MAP_FAILED || dst == MAP_FAILED) {
		tap_diag("setup: %s", ht_err(ret));
		return tap_done();
	}
	ht_fill_xorshift(src, BIG + MIB, 0x1a57);
	test_after_use();
	test_flags();
	test_end(0);
	test_end(1);
	return tap_done();
}
