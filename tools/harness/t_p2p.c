// SPDX-License-Identifier: GPL-2.0
/*
 * t_p2p: svod's dma-bufs attached by a device, peer-to-peer
 * (Documentation/svod.rst, "Sharing"). The importer is
 * svod_p2p_importer.ko (tools/testing/p2p_importer), on behalf of QEMU's
 * edu device, as RDMA's pinned importers attach: no driver in the guest
 * attaches a dma-buf peer-to-peer itself.
 *
 * On both kernels: a static attachment is EOPNOTSUPP (it never allows
 * peer-to-peer), and so is a dynamic one of a device that is not PCI.
 * On the test kernel (CONFIG_PCI_P2PDMA, a Zen CPU for
 * pci_p2pdma_distance() through the host bridge; tools/rig/run.sh) the
 * edu device gets a table of the allocation's bus addresses: one range,
 * the BAR's (sysfs resource) plus the allocation's offset in it, its size
 * long, and edu's DMA (its second channel, svod_edu_dma) through that
 * table writes 8 KiB across two entries, which a READ of the allocation
 * then finds, and nothing else; a read-only dma-buf is EACCES (the core
 * maps it DMA_BIDIRECTIONAL). On stock (no CONFIG_PCI_P2PDMA) edu is EOPNOTSUPP.
 * Unbinding the second device while edu holds an attachment waits, saying
 * so in the kernel log, until it lets go; then an attachment of the gone
 * device's dma-buf is ENODEV, and the device binds again, clean.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "common.h"
#include "tap.h"

#define NR_CASES	11
#define SZ		(256u << 10)
/* edu's write: 8 KiB across the first two 64 KiB entries of edu's table. */
#define W_OFF		((64u << 10) - 2048)
#define W_LEN		8192u
#define W_SEED		77u

/* tools/testing/p2p_importer/svod_p2p_importer.c */
struct svod_p2p_req {
	int32_t fd;
	uint32_t op;
	uint64_t addr;
	uint64_t len;
	uint32_t nents;
	uint32_t contiguous;
	uint64_t offset;
	uint32_t length;
	uint32_t seed;
};

enum { SVOD_P2P_STATIC, SVOD_P2P_HOLD, SVOD_P2P_RELEASE, SVOD_P2P_NOT_PCI, SVOD_P2P_WRITE };

#define SVOD_P2P_IOCTL	_IOWR('S', 0x70, struct svod_p2p_req)
#define CTL		"/sys/kernel/debug/svod_p2p_importer/ctl"

static int ctl = -1;
static int svod = -1;

static int importer(int op, int dmabuf, struct svod_p2p_req *out)
{
	struct svod_p2p_req req = { .fd = dmabuf, .op = op };
	int ret = ioctl(ctl, SVOD_P2P_IOCTL, &req) ? -errno : 0;

	if (out)
		*out = req;
	return ret;
}

/* BAR 2's bus address of @bdf, from sysfs resource (no IOMMU here). */
static int bar2_start(const char *bdf, uint64_t *start)
{
	char path[256];
	unsigned long long s, e, f;
	FILE *r;
	int i, ok = 0;

	snprintf(path, sizeof(path), SVOD_SYSFS_DEVICES "/%s/resource", bdf);
	r = fopen(path, "r");
	if (!r)
		return -errno;
	for (i = 0; i <= 2; i++)
		ok = fscanf(r, "%llx %llx %llx", &s, &e, &f) == 3;
	fclose(r);
	*start = s;
	return ok ? 0 : -EIO;
}

/* A mappable allocation of SZ on @t and its dma-buf (@flags). */
static int exported(const struct svod_tier_info *t, uint32_t flags, struct svod_alloc *a,
		    int *dmabuf)
{
	int ret = svod_alloc_flags(svod, t->id, SZ, 0, SVOD_ALLOC_MAPPABLE, a);

	return ret ? ret : svod_export(svod, a->handle, flags, dmabuf, NULL);
}

static void test_attach(const struct svod_tier_info *t, int p2p)
{
	static uint8_t want[SZ], got[SZ];
	struct svod_alloc pad = {}, a = {}, ro = {};
	struct svod_p2p_req r = {}, w;
	uint64_t bar = 0, off = 0;
	int d = -1, dro = -1, ret, held;

	/* First fit: the exported allocation starts past this one, not at 0. */
	ret = svod_alloc_flags(svod, t->id, SZ, 0, SVOD_ALLOC_MAPPABLE, &pad);
	ret = ret ? ret : exported(t, SVOD_EXPORT_WRITE, &a, &d);
	ret = ret ? ret : exported(t, 0, &ro, &dro);
	tap_errno(ret, 0, "allocations_exported");
	tap_errno(importer(SVOD_P2P_STATIC, d, NULL), -EOPNOTSUPP, "static_attachment_refused");
	tap_errno(importer(SVOD_P2P_NOT_PCI, d, NULL), -EOPNOTSUPP,
		  "importer_that_is_not_pci_refused");

	ret = importer(SVOD_P2P_HOLD, d, &r);
	held = !ret;
	tap_errno(ret, p2p ? 0 : -EOPNOTSUPP, "edu_attaches_peer_to_peer (%s kernel)",
		  p2p ? "test" : "stock");
	if (p2p) {
		ret = bar2_start(t->device, &bar);
		ret = ret ? ret : ht_bar2_offset(t, a.device_addr, &off);
		tap_diag("table: %u entries from 0x%llx, %llu bytes; BAR 2 at 0x%llx, offset 0x%llx",
			 r.nents, (unsigned long long)r.addr, (unsigned long long)r.len,
			 (unsigned long long)bar, (unsigned long long)off);
		if (!ret && (!r.nents || !r.contiguous || r.len != SZ || r.addr != bar + off))
			ret = -ERANGE;
		tap_ok(!ret, "table_is_the_allocations_bus_range (%s)", ht_err(ret));
		/* edu's DMA into the BAR through the table; the rest stays zero. */
		w = (struct svod_p2p_req){ .op = SVOD_P2P_WRITE, .offset = W_OFF,
					   .length = W_LEN, .seed = W_SEED };
		ret = held ? (ioctl(ctl, SVOD_P2P_IOCTL, &w) ? -errno : 0) : -ENOENT;
		tap_diag("edu's write through the table: %s", ht_err(ret));
		ht_fill_xorshift(want + W_OFF, W_LEN, W_SEED);
		ret = ret ? ret : svod_read(svod, a.handle, 0, got, SZ, 0, NULL);
		if (!ret && memcmp(got, want, SZ))
			ret = -EBADMSG;
		tap_ok(!ret, "edu_dma_through_the_table_lands_in_the_allocation (%s)", ht_err(ret));
	} else {
		tap_skip("no CONFIG_PCI_P2PDMA", "table_is_the_allocations_bus_range");
		tap_skip("no CONFIG_PCI_P2PDMA",
			 "edu_dma_through_the_table_lands_in_the_allocation");
	}
	if (held)
		importer(SVOD_P2P_RELEASE, -1, NULL);
	ret = importer(SVOD_P2P_HOLD, dro, NULL);
	if (!ret)
		importer(SVOD_P2P_RELEASE, -1, NULL);
	tap_errno(ret, p2p ? -EACCES : -EOPNOTSUPP, "read_only_dmabuf_refused_a_writable_table");
	close(d);
	close(dro);
	svod_free(svod, a.handle);
	svod_free(svod, ro.handle);
	svod_free(svod, pad.handle);
}

/* The second device, unbound while edu holds an attachment. */
static void test_unbind(int p2p)
{
	char bdfs[4][SVOD_NAME_LEN], bdf[SVOD_NAME_LEN];
	struct svod_tier_info tb, t;
	struct svod_alloc a = {};
	int d = -1, ret, i, waiting, st = -1;
	pid_t pid = -1;

	if (svod_devices(bdfs, 4) < 2 || svod_tier_by_device(svod, bdfs[1], &tb)) {
		for (i = 0; i < 4; i++)
			tap_skip("no second device", "p2p unbind case %d", i);
		return;
	}
	strcpy(bdf, bdfs[1]);
	ret = exported(&tb, SVOD_EXPORT_WRITE, &a, &d);
	if (p2p) {
		ret = ret ? ret : importer(SVOD_P2P_HOLD, d, NULL);
		waiting = !ret && ht_unbind_waits_for_importer(bdf, &pid);
		tap_ok(waiting, "unbind_waits_while_edu_holds_an_attachment (%s)", ht_err(ret));
		importer(SVOD_P2P_RELEASE, -1, NULL);
		st = pid > 0 ? ht_wait_exit(pid) : -1;
		tap_ok(st == 0, "unbind_returns_once_edu_lets_go (status %d)", st);
	} else {
		tap_skip("no CONFIG_PCI_P2PDMA: no attachment to hold",
			 "unbind_waits_while_edu_holds_an_attachment");
		ret = ret ? ret : svod_driver_bind(bdf, 0);
		tap_errno(ret, 0, "unbind");
	}
	ret = importer(SVOD_P2P_HOLD, d, NULL);
	if (!ret)
		importer(SVOD_P2P_RELEASE, -1, NULL);
	tap_errno(ret, -ENODEV, "attachment_of_gone_devices_dmabuf_enodev");
	close(d);
	svod_free(svod, a.handle);
	ret = svod_driver_bind(bdf, 1);
	ret = ret ? ret : svod_tier_by_device(svod, bdf, &t);
	tap_ok(!ret && t.free_bytes == t.capacity && t.nr_live == 0,
	       "rebound_tier_clean (%s)", ht_err(ret));
}

int main(void)
{
	const char *kernel = getenv("SVOD_KERNEL");
	int p2p = kernel && !strcmp(kernel, "test");
	struct svod_tier_info tier;
	int i;

	tap_plan(NR_CASES);
	svod = ht_open();
	ctl = open(CTL, O_RDWR | O_CLOEXEC);
	if (svod < 0 || ctl < 0 || ht_first_tier(svod, &tier)) {
		tap_diag("setup: svod %s, %s: %s", ht_err(svod), CTL, ht_err(ctl < 0 ? -errno : 0));
		for (i = 0; i < NR_CASES; i++)
			tap_ok(0, "p2p case %d", i);
		return tap_done();
	}
	test_attach(&tier, p2p);
	test_unbind(p2p);
	close(ctl);
	close(svod);
	return tap_done();
}
