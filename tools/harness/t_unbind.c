// SPDX-License-Identifier: GPL-2.0
/*
 * t_unbind: removing the device while files are open. After an unbind
 * through /sys/bus/pci/drivers/svod/unbind, calls on the gone device's tiers
 * fail with -ENODEV (FREE still succeeds and releases the record), close
 * works, a process storming the tier during the unbind sees only the
 * documented errnos; a rebind brings the default tier back, clean.
 * Runs last (by name) because it re-creates the device's tiers.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common.h"
#include "tap.h"

#define NR_CASES	16

/* Child: alloc/resolve/free on @id until *stop; exit status = surprises. */
static void hammer(uint32_t id, int *stop)
{
	unsigned int surprises = 0;
	struct svod_resolve r;
	struct svod_alloc a;
	int cfd, ret;

	cfd = ht_open();
	if (cfd < 0)
		_exit(100);
	while (!__atomic_load_n(stop, __ATOMIC_RELAXED) && surprises < 100) {
		ret = svod_alloc(cfd, id, 4096, 0, &a);
		if (ret == -ENODEV || ret == -ENOENT)
			continue;
		if (ret) {
			surprises++;
			continue;
		}
		ret = svod_resolve(cfd, a.handle, &r);
		surprises += ret && ret != -ENODEV;
		surprises += svod_free(cfd, a.handle) != 0;
	}
	_exit((int)surprises);
}

int main(void)
{
	char bdfs[4][SVOD_NAME_LEN], bdf[SVOD_NAME_LEN], orig[4096], now[4096];
	struct svod_tier_info tier, t;
	struct svod_alloc a = {}, b;
	struct svod_resolve r;
	unsigned char buf[16] = {};
	int *stop;
	uint64_t bar = 0;
	int fd, fd2, ret, nr, i, gone, status;
	pid_t pid;

	tap_plan(NR_CASES);
	fd = ht_open();
	nr = svod_devices(bdfs, 4);
	if (fd < 0 || nr <= 0) {
		tap_diag("no device bound to svod (fd %d, devices %d)", fd, nr);
		return tap_done();
	}
	strcpy(bdf, bdfs[0]);
	ret = svod_tier_by_device(fd, bdf, &tier);
	if (ret || svod_tiers_read(bdf, orig, sizeof(orig)) < 0 || ht_bar_size(bdf, 2, &bar)) {
		tap_diag("device %s: no tier (%s)", bdf, svod_errno_name(ret));
		return tap_done();
	}
	stop = mmap(NULL, sizeof(*stop), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		    -1, 0);
	if (stop == MAP_FAILED)
		return tap_done();
	*stop = 0;

	ret = svod_alloc(fd, tier.id, 4096, 0, &a);
	pid = fork();
	if (pid == 0)
		hammer(tier.id, stop);
	usleep(100000);

	tap_errno(svod_driver_bind(bdf, 0), 0, "unbind_with_open_files_and_live_allocation");
	usleep(100000);
	__atomic_store_n(stop, 1, __ATOMIC_RELAXED);
	nr = svod_devices(bdfs, 4);
	gone = 1;
	for (i = 0; i < nr && i < 4; i++)
		gone &= strcmp(bdfs[i], bdf) != 0;
	tap_ok(gone, "unbound_device_left_the_driver");
	ret = svod_tier_by_id(fd, tier.id, &t);
	tap_ok(ret == -ENOENT || (ret == 0 && (t.flags & SVOD_TIER_GONE)),
	       "query_marks_tier_gone_or_drops_it (%s, flags 0x%x)",
	       ret ? svod_errno_name(ret) : "listed", ret ? 0 : t.flags);
	tap_errno(svod_alloc(fd, tier.id, 4096, 0, &b), -ENODEV, "alloc_on_gone_tier_enodev");
	tap_errno(svod_resolve(fd, a.handle, &r), -ENODEV, "resolve_on_gone_tier_enodev");
	tap_errno(svod_stage(fd, a.handle, 0, buf, sizeof(buf), 0, NULL), -ENODEV,
		  "stage_on_gone_tier_enodev");
	tap_errno(svod_read(fd, a.handle, 0, buf, sizeof(buf), 0, NULL), -ENODEV,
		  "read_on_gone_tier_enodev");
	tap_errno(svod_free(fd, a.handle), 0, "free_on_gone_tier_succeeds");
	tap_errno(svod_free(fd, a.handle), -ESTALE, "second_free_after_unbind_estale");
	status = pid > 0 ? ht_wait_exit(pid) : -1;
	tap_ok(status == 0, "storming_process_saw_only_documented_errnos (%d surprises)", status);
	tap_errno(svod_close(fd), 0, "close_after_unbind");

	fd2 = ht_open();
	tap_ok(fd2 >= 0 && svod_tier_by_device(fd2, bdf, &t) == -ENODEV,
	       "open_after_unbind_works_and_lists_no_live_tier");

	tap_errno(svod_driver_bind(bdf, 1), 0, "rebind");
	ret = svod_tier_by_device(fd2, bdf, &t);
	if (svod_tiers_read(bdf, now, sizeof(now)) < 0)
		now[0] = '\0';
	tap_ok(!ret && t.capacity == bar && !strncmp(now, orig, strcspn(orig, " ")) &&
	       strstr(now, "bar=2 offset=0x0"),
	       "rebind_default_tier_back (%.*s)", (int)strcspn(now, "\n"), now);
	ret = ret ? ret : svod_alloc(fd2, t.id, 4096, 0, &b);
	tap_ok(!ret && svod_free(fd2, b.handle) == 0, "rebound_tier_allocates");
	tap_ok(!svod_tier_by_id(fd2, t.id, &t) && t.free_bytes == t.capacity && t.nr_live == 0,
	       "rebound_tier_clean");
	svod_close(fd2);
	return tap_done();
}
