// SPDX-License-Identifier: GPL-2.0
/*
 * t_scrub: no byte svod did not write or scrub reaches an owner. BAR 2 of
 * the first device is filled with a pattern through sysfs resource2 (as
 * firmware, an ivshmem peer or root could leave it) where svod hands out
 * nothing yet: the whole BAR while the device is unbound, then a reserved
 * region of a declared tier and the BAR bytes past the tier. A bind, and a
 * commit that makes those bytes allocatable, must zero them before any
 * ALLOC: everything allocatable is allocated, READ, mapped through
 * /dev/svod and through a dma-buf, and must be zero. Prints how long the
 * zeroing of the whole BAR adds to a bind, next to the time userspace took to
 * fill it. The device ends with its default tier and no declaration.
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

#define NR_CASES	13

/* What the pattern leaves in every byte: never zero. */
#define STALE		0xc3

/* The declared tier: reserved bytes inside it, unused BAR bytes after it. */
#define TIER_SIZE	0x200000ULL
#define RES_OFF		0x100000ULL
#define RES_SIZE	0x10000ULL
#define GROWN_SIZE	0x300000ULL

static char bdf[SVOD_NAME_LEN];

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Offset of the first nonzero byte of @p, or -1 if all @len are zero. */
static long long first_nonzero(const volatile uint8_t *p, uint64_t len)
{
	uint64_t i;

	for (i = 0; i < len; i++) {
		if (p[i])
			return (long long)i;
	}
	return -1;
}

/* Writes STALE to BAR 2 bytes [@off, @off + @len) through resource2. */
static int fill_bar2(uint64_t off, uint64_t len)
{
	size_t n = ((off + len - 1) | 4095) + 1;
	volatile uint8_t *p;
	char path[256];
	void *m;
	int rfd, ret = 0;

	snprintf(path, sizeof(path), SVOD_SYSFS_DEVICES "/%s/resource2", bdf);
	rfd = open(path, O_RDWR);
	if (rfd < 0)
		return -errno;
	m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, rfd, 0);
	close(rfd);
	if (m == MAP_FAILED)
		return -errno;
	memset((uint8_t *)m + off, STALE, len);
	__sync_synchronize();
	/* Read back: the pattern is in the BAR itself. */
	p = (volatile uint8_t *)m + off;
	if (p[0] != STALE || p[len - 1] != STALE)
		ret = -EIO;
	munmap(m, n);
	return ret;
}

/* " at <offset>" of the first stale byte, or "" if none (@bad is -1). */
static const char *where(long long bad)
{
	static char buf[8][40];
	static unsigned int n;
	char *b = buf[n++ % 8];

	if (bad < 0)
		return "";
	snprintf(b, sizeof(buf[0]), ", stale byte at 0x%llx", bad);
	return b;
}

/* READ of @h's bytes [@off, @off + @len): first nonzero offset, or -1. */
static long long read_zero(int fd, uint64_t h, uint64_t off, uint64_t len, int *err)
{
	static uint8_t buf[1 << 20];
	uint64_t at, n;
	long long bad;

	*err = 0;
	for (at = 0; at < len; at += n) {
		n = len - at < sizeof(buf) ? len - at : sizeof(buf);
		memset(buf, 0xff, n);
		*err = svod_read(fd, h, off + at, buf, n, 0, NULL);
		if (*err)
			return -1;
		bad = first_nonzero(buf, n);
		if (bad >= 0)
			return (long long)(off + at) + bad;
	}
	return -1;
}

/*
 * Allocates all of tier @id (@len bytes, mappable), then checks READ, a
 * mapping of /dev/svod and a mapping of a dma-buf: each must be all zero.
 * @what names the cases; @sub_off/@sub_len, if @sub_len, is a part that
 * gets a READ case of its own (reported first).
 */
static void check_all_zero(int fd, uint32_t id, uint64_t len, const char *what,
			   uint64_t sub_off, uint64_t sub_len, const char *sub_what)
{
	struct svod_alloc a;
	uint64_t size = 0;
	long long bad;
	void *map = NULL;
	int ret, err = 0, dfd = -1;

	ret = svod_alloc_flags(fd, id, len, 0, SVOD_ALLOC_MAPPABLE, &a);
	tap_errno(ret, 0, "%s_alloc_everything (%llu bytes)", what, (unsigned long long)len);
	if (ret) {
		tap_skip("no allocation", "%s_read_zero", what);
		tap_skip("no allocation", "%s_mmap_zero", what);
		tap_skip("no allocation", "%s_dmabuf_mmap_zero", what);
		if (sub_len)
			tap_skip("no allocation", "%s_read_zero", sub_what);
		return;
	}
	if (sub_len) {
		bad = read_zero(fd, a.handle, sub_off, sub_len, &err);
		tap_ok(!err && bad < 0, "%s_read_zero (%s%s)", sub_what, ht_err(err),
		       where(bad));
	}
	bad = read_zero(fd, a.handle, 0, len, &err);
	tap_ok(!err && bad < 0, "%s_read_zero (%s%s)", what, ht_err(err), where(bad));

	ret = svod_map(fd, a.handle, &map, &size);
	bad = ret ? -1 : first_nonzero(map, size);
	tap_ok(!ret && size == len && bad < 0,
	       "%s_mmap_zero (%s%s)", what, ht_err(ret), where(bad));
	if (!ret)
		svod_unmap(map, size);

	ret = svod_export(fd, a.handle, 0, &dfd, &size);
	map = ret ? MAP_FAILED : mmap(NULL, len, PROT_READ, MAP_SHARED, dfd, 0);
	if (!ret && map == MAP_FAILED)
		ret = -errno;
	bad = ret ? -1 : first_nonzero(map, len);
	tap_ok(!ret && bad < 0, "%s_dmabuf_mmap_zero (%s%s)", what, ht_err(ret),
	       where(bad));
	if (!ret)
		munmap(map, len);
	if (dfd >= 0)
		close(dfd);
	svod_free(fd, a.handle);
}

/*
 * The whole BAR, stale while the device is unbound, is zero after bind.
 * First a bind with a 4 KiB tier declared: what a bind costs without the
 * zeroing of 64 MiB, to measure that zeroing alone.
 */
static void test_bind(int fd, uint64_t bar)
{
	struct svod_tier_info t;
	double t0, fill_ms, small_ms = -1, bind_ms;
	int ret;

	ret = svod_driver_bind(bdf, 0);
	if (!ret && !svod_tiers_write(bdf, "scrubsmall bar=2 offset=0 size=4K")) {
		t0 = now_ms();
		if (!svod_driver_bind(bdf, 1))
			small_ms = now_ms() - t0;
		ret = svod_driver_bind(bdf, 0);
		svod_undeclare(bdf);
	}
	t0 = now_ms();
	ret = ret ?: fill_bar2(0, bar);
	fill_ms = now_ms() - t0;
	tap_errno(ret, 0, "unbound_bar_filled_through_resource2");
	t0 = now_ms();
	ret = svod_driver_bind(bdf, 1);
	bind_ms = now_ms() - t0;
	tap_errno(ret, 0, "bind");
	tap_diag("bench: t_scrub: zeroing the %llu MiB BAR 2 at bind: %.1f ms (a bind with it as "
		 "the default tier: %.1f ms; with a 4 KiB tier declared: %.1f ms); userspace "
		 "filling it through resource2: %.1f ms",
		 (unsigned long long)(bar >> 20), bind_ms - small_ms, bind_ms, small_ms, fill_ms);
	ret = ret ?: svod_tier_by_device(fd, bdf, &t);
	if (ret || t.free_bytes != bar) {
		tap_diag("no whole default tier after bind (%s)", ht_err(ret));
		t.id = UINT32_MAX;
	}
	check_all_zero(fd, t.id, bar, "bind_default_tier", 0, 0, NULL);
}

/*
 * A reserved region and the BAR bytes past a tier, stale, are zero once a
 * commit makes them allocatable.
 */
static void test_commit(int fd)
{
	struct svod_tier_info t;
	char text[256];
	int ret;

	snprintf(text, sizeof(text), "scrub bar=2 offset=0 size=0x%llx reserved=0x%llx+0x%llx",
		 TIER_SIZE, RES_OFF, RES_SIZE);
	ret = svod_tiers_write(bdf, text);
	ret = ret ?: fill_bar2(RES_OFF, RES_SIZE);
	ret = ret ?: fill_bar2(TIER_SIZE, GROWN_SIZE - TIER_SIZE);
	tap_errno(ret, 0, "reserved_region_and_bytes_past_tier_filled_through_resource2");
	snprintf(text, sizeof(text), "scrub bar=2 offset=0 size=0x%llx", GROWN_SIZE);
	ret = ret ?: svod_tiers_write(bdf, text);
	ret = ret ?: svod_tier_by_name(fd, "scrub", &t);
	if (ret || t.free_bytes != GROWN_SIZE) {
		tap_diag("no grown tier after commit (%s)", ht_err(ret));
		t.id = UINT32_MAX;
	}
	check_all_zero(fd, t.id, GROWN_SIZE, "commit_grown_tier", RES_OFF, RES_SIZE,
		       "commit_former_reserved_region");
}

int main(void)
{
	char bdfs[4][SVOD_NAME_LEN], orig[4096];
	struct svod_tier_info t;
	uint64_t bar = 0;
	int fd, nr, ret;
	double t0;

	tap_plan(NR_CASES);
	fd = ht_open();
	nr = svod_devices(bdfs, 4);
	if (fd < 0 || nr <= 0) {
		tap_diag("no device bound to svod (fd %d, devices %d)", fd, nr);
		return tap_done();
	}
	strcpy(bdf, bdfs[0]);
	ret = svod_tier_by_device(fd, bdf, &t);
	if (ret || svod_tiers_read(bdf, orig, sizeof(orig)) < 0 || ht_bar_size(bdf, 2, &bar) ||
	    bar < GROWN_SIZE) {
		tap_diag("device %s: no tier (%s)", bdf, svod_errno_name(ret));
		return tap_done();
	}

	test_bind(fd, bar);
	test_commit(fd);

	/* Replaces a 3 MiB tier: zeroes the 64 MiB of the original one. */
	t0 = now_ms();
	ret = svod_tiers_write(bdf, orig);
	tap_errno(ret, 0, "original_declared_back");
	tap_diag("bench: t_scrub: the commit that declares the %llu MiB tier back (zeroes it): "
		 "%.1f ms", (unsigned long long)(bar >> 20), now_ms() - t0);
	/* Live tiers are back as they were: forget the declarations made. */
	ht_undeclare_all();
	svod_close(fd);
	return tap_done();
}
