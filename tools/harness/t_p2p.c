// SPDX-License-Identifier: GPL-2.0
/*
 * t_p2p: svod's dma-bufs attached by a device, peer-to-peer, by topology
 * (Documentation/svod.rst, "Peer-to-peer by topology"). The importer is
 * svod_p2p_importer.ko (tools/testing/p2p_importer), on behalf of QEMU's
 * edu device, as RDMA's importers attach: no driver in the guest attaches
 * a dma-buf peer-to-peer itself.
 *
 * For each device svod drives: a static attachment is EOPNOTSUPP (it never
 * allows peer-to-peer), and so is a dynamic one of a device that is not
 * PCI, and so is edu's pinned one (pin, then map, as RDMA without on-demand
 * paging does): svod revokes at unbind, which a pin forbids. Then edu's
 * dynamic attachment, whose outcome this program works out
 * on its own from sysfs (the devices' paths, the bridges' ACS control, the
 * CPU, SVOD_IOMMU from the rig), as 6.1's pci_p2pdma_distance() and
 * upstream's map types decide it:
 * - no CONFIG_PCI_P2PDMA (stock): EOPNOTSUPP;
 * - below a common bridge with no ACS redirect on the way (the rig's first
 *   device, behind edu's switch): the allocation's PCI bus address, its
 *   size long, whatever the IOMMU does (the switch routes it);
 * - otherwise through the host bridge, which 6.1 allows on AMD Zen CPUs
 *   (the test boot) and refuses on others (the direct boot): EOPNOTSUPP,
 *   or a mapping: an IOVA, not the bus address, with the IOMMU translating,
 *   the bus address without.
 * edu's DMA then writes 8 KiB across two entries through the table, which
 * a READ of the allocation then finds, and nothing else. QEMU sends every
 * DMA to the IOMMU when one translates (it routes no peer-to-peer in a
 * switch), so a bus-address table is written through only on the direct
 * boot, with the IOMMU off. A read-only dma-buf is EACCES where edu could
 * attach (edu maps it DMA_BIDIRECTIONAL).
 * Unbinding a device while edu holds a mapped attachment does not wait for
 * it: the unbind returns while edu still holds it, having told edu to move
 * (move_notify, on which edu unmaps); edu's next map is ENODEV, it lets go
 * cleanly, a new attachment of the gone device's dma-buf is ENODEV, and the
 * device binds again, clean.
 */
#include <errno.h>
#include <limits.h>
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
#define NR_ATTACH	8
#define NR_UNBIND	6
#define NR_CASES	(NR_DEVS * NR_ATTACH + NR_UNBIND)
#define SZ		(256u << 10)
/* edu's write: 8 KiB across the first two 64 KiB entries of edu's table. */
#define W_OFF		((64u << 10) - 2048)
#define W_LEN		8192u
#define W_SEED		77u


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

/* BAR 2's bus address of @bdf: sysfs resource (x86 has no bus offset). */
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

enum route { REFUSED, BUS_ADDR, MAPPED };
static const char *const route_name[] = { "refused", "bus address", "mapped" };

static int p2p_kernel, iommu_on, zen;
static char edu[SVOD_NAME_LEN];

/* Whether the PCI function at sysfs path @dir redirects peer-to-peer (ACS RR, CR or EC). */
static int acs_redir(const char *dir)
{
	char path[PATH_MAX + 16];
	uint8_t cfg[4096];
	unsigned int pos = 0x100, hdr, guard = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/config", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = pread(fd, cfg, sizeof(cfg), 0);
	close(fd);
	while (n == (ssize_t)sizeof(cfg) && pos >= 0x100 && pos < 0xffc && guard++ < 64) {
		memcpy(&hdr, cfg + pos, 4);
		if ((hdr & 0xffff) == 0x000d)	/* PCI_EXT_CAP_ID_ACS; control at +6 */
			return !!((cfg[pos + 6] | cfg[pos + 7] << 8) & (0x04 | 0x08 | 0x20));
		pos = hdr >> 20 & 0xffc;
	}
	return 0;
}

/*
 * The route 6.1 picks between @bdf's BAR and edu: the devices' sysfs paths
 * (/sys/devices/pci0000:00/<root port>/.../<function>) meet at their
 * lowest common bridge, if any; ACS redirect on the way up to it from
 * either side (it included) sends the requests through the host bridge.
 */
static enum route expected_route(const char *bdf)
{
	char a[PATH_MAX], b[PATH_MAX], path[PATH_MAX + 64];
	size_t common = 0, i, root;
	int redir = 0;

	snprintf(path, sizeof(path), SVOD_SYSFS_DEVICES "/%s", bdf);
	if (!p2p_kernel || !realpath(path, a))
		return REFUSED;
	snprintf(path, sizeof(path), SVOD_SYSFS_DEVICES "/%s", edu);
	if (!realpath(path, b))
		return REFUSED;
	/* Past "/sys/devices/pci0000:00/": each component is a function. */
	root = strlen("/sys/devices/pci0000:00/");
	for (i = root; a[i] && a[i] == b[i]; i++)
		if (a[i] == '/')
			common = i;
	if (common) {
		/* Walk up each side to the common bridge, the bridge included on a's. */
		for (i = strlen(a); i > common; i--)
			if (a[i] == '/' || !a[i]) {
				snprintf(path, sizeof(path), "%.*s", (int)i, a);
				redir |= acs_redir(path);
			}
		snprintf(path, sizeof(path), "%.*s", (int)common, a);
		redir |= acs_redir(path);
		for (i = strlen(b); i > common; i--)
			if (b[i] == '/' || !b[i]) {
				snprintf(path, sizeof(path), "%.*s", (int)i, b);
				redir |= acs_redir(path);
			}
		if (!redir)
			return BUS_ADDR;
	}
	return zen ? MAPPED : REFUSED;
}

/* Whether the CPU is an AMD Zen or later (6.1's cpu_supports_p2pdma()). */
static int cpu_is_zen(void)
{
	char line[256];
	int amd = 0, family = 0;
	FILE *f = fopen("/proc/cpuinfo", "r");

	while (f && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "vendor_id", 9))
			amd = !!strstr(line, "AuthenticAMD");
		if (!strncmp(line, "cpu family", 10) && strchr(line, ':'))
			family = atoi(strchr(line, ':') + 1);
		if (!strncmp(line, "processor", 9) && family)
			break;
	}
	if (f)
		fclose(f);
	return amd && family >= 0x17;
}

/* A mappable allocation of SZ on @t and its dma-buf (@flags). */
static int exported(const struct svod_tier_info *t, uint32_t flags, struct svod_alloc *a,
		    int *dmabuf)
{
	int ret = svod_alloc_flags(svod, t->id, SZ, 0, SVOD_ALLOC_MAPPABLE, a);

	return ret ? ret : svod_export(svod, a->handle, flags, dmabuf, NULL);
}

static void test_attach(const struct svod_tier_info *t, enum route route)
{
	static uint8_t want[SZ], got[SZ];
	struct svod_alloc pad = {}, a = {}, ro = {};
	struct svod_p2p_req r = {}, w;
	uint64_t bar = 0, off = 0;
	int d = -1, dro = -1, ret, held;
	const char *dev = t->device;

	tap_diag("%s and edu %s: expect %s (CONFIG_PCI_P2PDMA %d, IOMMU %s, Zen %d)", dev, edu,
		 route_name[route], p2p_kernel, iommu_on ? "on" : "off", zen);
	/* First fit: the exported allocation starts past this one, not at 0. */
	ret = svod_alloc_flags(svod, t->id, SZ, 0, SVOD_ALLOC_MAPPABLE, &pad);
	ret = ret ? ret : exported(t, SVOD_EXPORT_WRITE, &a, &d);
	ret = ret ? ret : exported(t, 0, &ro, &dro);
	tap_errno(ret, 0, "allocations_exported (%s)", dev);
	tap_errno(importer(SVOD_P2P_STATIC, d, NULL), -EOPNOTSUPP, "static_attachment_refused (%s)",
		  dev);
	tap_errno(importer(SVOD_P2P_NOT_PCI, d, NULL), -EOPNOTSUPP,
		  "importer_that_is_not_pci_refused (%s)", dev);
	/* Refused where edu attaches at all (its map); the HOLD below finds nothing left. */
	tap_errno(importer(SVOD_P2P_PIN, d, NULL), -EOPNOTSUPP, "pinned_importer_refused (%s)",
		  dev);

	ret = importer(SVOD_P2P_HOLD, d, &r);
	held = !ret;
	tap_errno(ret, route == REFUSED ? -EOPNOTSUPP : 0, "edu_attaches_as_its_route_allows (%s: %s)",
		  dev, route_name[route]);
	if (held) {
		ret = bar2_start(dev, &bar);
		ret = ret ? ret : ht_bar2_offset(t, a.device_addr, &off);
		tap_diag("table: %u entries from 0x%llx, %llu bytes; BAR 2 at bus 0x%llx, offset 0x%llx",
			 r.nents, (unsigned long long)r.addr, (unsigned long long)r.len,
			 (unsigned long long)bar, (unsigned long long)off);
		if (!ret && (!r.nents || !r.contiguous || r.len != SZ))
			ret = -ERANGE;
		/* An IOVA is not the bus address; a direct mapping is. */
		if (!ret && (r.addr == bar + off) != (route == BUS_ADDR || !iommu_on))
			ret = -EADDRNOTAVAIL;
		tap_ok(!ret, "table_matches_the_route (%s: %s, 0x%llx: %s)", dev, route_name[route],
		       (unsigned long long)r.addr,
		       route == BUS_ADDR || !iommu_on ? "the bus address" : "an IOVA");
		if (ret)
			tap_diag("table: %s", ht_err(ret));
	} else {
		tap_skip("edu did not attach", "table_matches_the_route (%s)", dev);
	}
	if (held && !(route == BUS_ADDR && iommu_on)) {
		/* edu's DMA into the BAR through the table; the rest stays zero. */
		w = (struct svod_p2p_req){ .op = SVOD_P2P_WRITE, .offset = W_OFF,
					   .length = W_LEN, .seed = W_SEED };
		ret = ioctl(ctl, SVOD_P2P_IOCTL, &w) ? -errno : 0;
		tap_diag("edu's write through the table: %s", ht_err(ret));
		memset(want, 0, sizeof(want));
		ht_fill_xorshift(want + W_OFF, W_LEN, W_SEED);
		ret = ret ? ret : svod_read(svod, a.handle, 0, got, SZ, 0, NULL);
		if (!ret && memcmp(got, want, SZ))
			ret = -EBADMSG;
		tap_ok(!ret, "edu_dma_through_the_table_lands_in_the_allocation (%s: %s)", dev,
		       ht_err(ret));
	} else {
		tap_skip(held ? "QEMU routes no peer-to-peer in a switch under its IOMMU: the direct boot"
			      : "edu did not attach",
			 "edu_dma_through_the_table_lands_in_the_allocation (%s)", dev);
	}
	if (held)
		importer(SVOD_P2P_RELEASE, -1, NULL);
	ret = importer(SVOD_P2P_HOLD, dro, NULL);
	if (!ret)
		importer(SVOD_P2P_RELEASE, -1, NULL);
	tap_errno(ret, route != REFUSED ? -EACCES : -EOPNOTSUPP,
		  "read_only_dmabuf_refused_a_writable_table (%s)", dev);
	close(d);
	close(dro);
	svod_free(svod, a.handle);
	svod_free(svod, ro.handle);
	svod_free(svod, pad.handle);
}

/*
 * The last device edu attaches to (or the last one), unbound while edu holds
 * a mapped attachment: the unbind revokes it instead of waiting.
 */
static void test_unbind(const char (*bdfs)[SVOD_NAME_LEN], int n)
{
	char bdf[SVOD_NAME_LEN];
	struct svod_tier_info tb, t;
	struct svod_p2p_req st = {};
	struct svod_alloc a = {};
	int d = -1, ret, i, prompt, p2p = 0;
	pid_t pid = -1;

	for (i = n - 1; i >= 0 && !p2p; i--)
		p2p = expected_route(bdfs[i]) != REFUSED;
	i = p2p ? i + 1 : n - 1;
	if (n < 1 || svod_tier_by_device(svod, bdfs[i], &tb)) {
		for (i = 0; i < NR_UNBIND; i++)
			tap_skip("no device", "p2p unbind case %d", i);
		return;
	}
	strcpy(bdf, bdfs[i]);
	ret = exported(&tb, SVOD_EXPORT_WRITE, &a, &d);
	if (p2p) {
		ret = ret ? ret : importer(SVOD_P2P_HOLD, d, NULL);
		prompt = !ret && ht_unbind_while_importer_holds(bdf, &pid);
		/* Asked before anything lets go: edu still holds its attachment. */
		st.op = SVOD_P2P_STATE;
		ret = ret ? ret : (ioctl(ctl, SVOD_P2P_IOCTL, &st) ? -errno : 0);
		tap_ok(prompt && !ret, "unbind_returns_while_edu_holds_its_attachment (%s: %s)", bdf,
		       ht_err(ret));
		tap_ok(!ret && st.moves >= 1 && !st.mapped,
		       "edu_told_to_move_and_unmapped (%u moves, mapped %u)", st.moves, st.mapped);
		tap_errno(importer(SVOD_P2P_MAP, -1, NULL), -ENODEV, "edu_map_after_the_unbind_enodev");
		ret = importer(SVOD_P2P_RELEASE, -1, NULL);
		tap_errno(ret, 0, "edu_lets_go_cleanly");
		if (pid > 0)
			tap_diag("the unbind ended once edu let go: status %d", ht_wait_exit(pid));
	} else {
		for (i = 0; i < 4; i++)
			tap_skip("edu attaches to no device here", "p2p unbind case %d", i);
		ret = ret ? ret : svod_driver_bind(bdf, 0);
		if (ret)
			tap_diag("unbind (%s): %s", bdf, ht_err(ret));
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
	const char *kernel = getenv("SVOD_KERNEL"), *iommu = getenv("SVOD_IOMMU");
	char bdfs[NR_DEVS][SVOD_NAME_LEN];
	struct svod_tier_info tier;
	int i, n;

	tap_plan(NR_CASES);
	p2p_kernel = kernel && !strcmp(kernel, "test");
	iommu_on = !iommu || strcmp(iommu, "off");
	zen = cpu_is_zen();
	svod = ht_open();
	ctl = open(SVOD_P2P_CTL, O_RDWR | O_CLOEXEC);
	n = svod_devices(bdfs, NR_DEVS);
	if (svod < 0 || ctl < 0 || ht_edu_bdf(edu, sizeof(edu)) || n != NR_DEVS) {
		tap_diag("setup: svod %s, %s: %s, edu %s, %d devices (want %d)", ht_err(svod), SVOD_P2P_CTL,
			 ht_err(ctl < 0 ? -errno : 0), edu[0] ? edu : "missing", n, NR_DEVS);
		for (i = 0; i < NR_CASES; i++)
			tap_ok(0, "p2p case %d", i);
		return tap_done();
	}
	for (i = 0; i < NR_DEVS; i++) {
		if (svod_tier_by_device(svod, bdfs[i], &tier)) {
			for (n = 0; n < NR_ATTACH; n++)
				tap_ok(0, "p2p case: no tier on %s", bdfs[i]);
			continue;
		}
		test_attach(&tier, expected_route(bdfs[i]));
	}
	test_unbind(bdfs, NR_DEVS);
	close(ctl);
	close(svod);
	return tap_done();
}
