// SPDX-License-Identifier: GPL-2.0
/*
 * t_iommu: the rig's IOMMU is what the rig says it is (Documentation/
 * testing.rst, "The machine"), and it catches a wrong mapping.
 *
 * run.sh tells the guest SVOD_IOMMU: strict (test and stock boots) or off
 * (the direct boot). Strict: edu and every device svod drives sit in an
 * IOMMU group whose domain translates with every unmap flushed at once
 * (type "DMA", not "DMA-FQ" or "identity"). Off: none is in a group.
 *
 * Then a mapping made wrongly on purpose (svod_p2p_importer's WRONG op:
 * edu writes 4 KiB to a kernel page by its CPU physical address, which
 * nothing mapped for edu). Strict: no byte of the page changes and the IOMMU
 * reports the fault, for edu, in the kernel log; the fault is asked for
 * between svod-expect-fault marks, which the judge requires to hold one
 * (so this check fails if the IOMMU is silently off) and outside which any
 * fault fails the run. Off: the same write lands, all 4 KiB of it, and no
 * fault is reported, so the check tells the two apart.
 *
 * And every DMA path of svod on each device (the one behind edu's switch
 * and the one behind its own root port): a synchronous DMA STAGE and READ
 * and an asynchronous DMA STAGE and READ of 6 KiB (two of edu's hops, one
 * of them partial) at an unaligned offset, the bytes read back exact and
 * the tier's DMA count grown by each. Under the strict IOMMU a missing,
 * wrong or early-released mapping would be a fault, which the judge fails.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "common.h"
#include "p2p_importer.h"
#include "tap.h"

#define NR_DEVS		2
#define NR_CASES	(2 + NR_DEVS)
#define XFER_LEN	6144u
#define XFER_OFF	1000u
#define WRONG_LEN	4096u
/* Polls of 10 ms without a new fault report that end the expected block. */
#define QUIET_POLLS	200


/* @bdf's IOMMU group type ("DMA", ...) into @type; -ENOENT: no group. */
static int group_type(const char *bdf, char *type, size_t len)
{
	char path[512];

	snprintf(path, sizeof(path), SVOD_SYSFS_DEVICES "/%s/iommu_group/type", bdf);
	return ht_read_line(path, type, len);
}

static void test_mode(const char *mode, const char *edu)
{
	char bdfs[8][SVOD_NAME_LEN], type[32], what[512] = "";
	int n = svod_devices(bdfs, 8), i, good = n > 0, strict = !strcmp(mode, "strict");
	size_t used = 0;

	for (i = -1; i < n; i++) {
		const char *bdf = i < 0 ? edu : bdfs[i];
		int ret = group_type(bdf, type, sizeof(type));

		good &= strict ? !ret && !strcmp(type, "DMA") : ret == -ENOENT;
		used += (size_t)snprintf(what + used, sizeof(what) - used, "%s%s %s",
					 i < 0 ? "" : ", ", bdf, ret ? "no group" : type);
		if (used >= sizeof(what))
			break;
	}
	tap_ok(good, "iommu_is_the_rigs (SVOD_IOMMU=%s: %s)", mode, what);
}

static void test_wrong(const char *mode, const char *edu)
{
	struct svod_p2p_req r = { .op = SVOD_P2P_WRONG, .length = WRONG_LEN, .seed = 5 };
	int strict = !strcmp(mode, "strict"), kfd = ht_kmsg_open(), ctl, ret, i, faults = 0;
	int found, quiet;
	char needle[64];

	/* The IOMMU names the requester by bus:device.function, no domain. */
	snprintf(needle, sizeof(needle), "Request device [%s]", edu + 5);
	ctl = open(SVOD_P2P_CTL, O_RDWR | O_CLOEXEC);
	if (strict)
		ht_write_file("/dev/kmsg", "svod-expect-fault: begin t_iommu edu's wrong mapping");
	ret = ctl < 0 ? -errno : ioctl(ctl, SVOD_P2P_IOCTL, &r) ? -errno : 0;
	/*
	 * The fault is reported from the IOMMU's interrupt: wait up to 10 s
	 * for the first report. QEMU writes the page in pieces, each faulting
	 * again, and its IOMMU records one fault at a time: a piece that
	 * faults after the guest cleared the record is reported again, later.
	 * So the block stays open until no report came for QUIET_POLLS polls
	 * after the last one (the copy itself ended when the ioctl returned).
	 */
	for (i = 0, quiet = 0; kfd >= 0 &&
	     (faults ? quiet < QUIET_POLLS : i < (strict ? 1000 : 100)); i++) {
		found = ht_kmsg_find(kfd, needle);
		faults += found;
		quiet = found ? 0 : quiet + 1;
		usleep(10000);
	}
	if (strict)
		ht_write_file("/dev/kmsg", "svod-expect-fault: end");
	if (strict)
		tap_ok(!ret && r.len == 0 && faults > 0,
		       "wrong_mapping_is_an_iommu_fault (%s, %llu bytes landed, %d faults for %s)",
		       ht_err(ret), (unsigned long long)r.len, faults, edu);
	else
		tap_ok(!ret && r.len == WRONG_LEN && faults == 0,
		       "wrong_mapping_lands_without_an_iommu (%s, %llu bytes landed, %d faults)",
		       ht_err(ret), (unsigned long long)r.len, faults);
	if (ctl >= 0)
		close(ctl);
	if (kfd >= 0)
		close(kfd);
}

/* One device's four DMA paths under the rig's IOMMU mode. */
static void test_dma(int fd, const char *bdf)
{
	static uint8_t src[4][XFER_LEN], dst[4][XFER_LEN];
	struct svod_tier_info t;
	struct svod_alloc a = {};
	uint64_t before = 0, seqno;
	int ret, st = 0, i, bad = 0;

	for (i = 0; i < 4; i++) {
		ht_fill_xorshift(src[i], XFER_LEN, 100 + i);
		memset(dst[i], 0, XFER_LEN);
	}
	ret = svod_tier_by_device(fd, bdf, &t);
	ret = ret ? ret : svod_alloc(fd, t.id, 64 << 10, 0, &a);
	before = ret ? 0 : ht_engine_bytes(fd, t.id, 1);
	/* Synchronous STAGE and READ, then asynchronous ones, each DMA only. */
	ret = ret ? ret : svod_stage(fd, a.handle, XFER_OFF, src[0], XFER_LEN, SVOD_XFER_DMA, NULL);
	ret = ret ? ret : svod_read(fd, a.handle, XFER_OFF, dst[0], XFER_LEN, SVOD_XFER_DMA, NULL);
	ret = ret ? ret : svod_stage_async(fd, a.handle, XFER_OFF + XFER_LEN, src[1], XFER_LEN,
					   SVOD_XFER_DMA, &seqno, NULL);
	ret = ret ? ret : svod_wait(fd, seqno, -1, &st, NULL);
	ret = ret ? ret : st;
	ret = ret ? ret : svod_read_async(fd, a.handle, XFER_OFF + XFER_LEN, dst[1], XFER_LEN,
					  SVOD_XFER_DMA, &seqno, NULL);
	ret = ret ? ret : svod_wait(fd, seqno, -1, &st, NULL);
	ret = ret ? ret : st;
	for (i = 0; i < 2 && !ret; i++)
		bad += memcmp(src[i], dst[i], XFER_LEN) != 0;
	if (!ret && bad)
		ret = -EBADMSG;
	if (!ret && ht_engine_bytes(fd, t.id, 1) - before != 4 * XFER_LEN)
		ret = -ERANGE;
	tap_ok(!ret, "dma_stage_read_sync_and_async (%s: %s, DMA bytes %llu of %u)", bdf, ht_err(ret),
	       (unsigned long long)(ht_engine_bytes(fd, t.id, 1) - before), 4 * XFER_LEN);
	if (a.handle)
		svod_free(fd, a.handle);
}

int main(void)
{
	const char *mode = getenv("SVOD_IOMMU");
	char edu[SVOD_NAME_LEN], bdfs[NR_DEVS][SVOD_NAME_LEN];
	int i, n, fd;

	tap_plan(NR_CASES);
	if (!mode || (strcmp(mode, "strict") && strcmp(mode, "off")) ||
	    ht_edu_bdf(edu, sizeof(edu))) {
		tap_diag("SVOD_IOMMU=%s (the rig sets strict or off), edu %s", mode ? mode : "unset",
			 ht_edu_bdf(edu, sizeof(edu)) ? "missing" : edu);
		for (i = 0; i < NR_CASES; i++)
			tap_ok(0, "iommu case %d", i);
		return tap_done();
	}
	test_mode(mode, edu);
	test_wrong(mode, edu);
	fd = ht_open();
	n = svod_devices(bdfs, NR_DEVS);
	for (i = 0; i < NR_DEVS; i++) {
		if (fd < 0 || i >= n)
			tap_ok(0, "dma case %d (svod %s, %d devices)", i, ht_err(fd), n);
		else
			test_dma(fd, bdfs[i]);
	}
	if (fd >= 0)
		close(fd);
	return tap_done();
}
