// SPDX-License-Identifier: GPL-2.0
/*
 * t_unbind: removing the device while files are open. After an unbind
 * through /sys/bus/pci/drivers/svod/unbind, calls on the gone device's tiers
 * fail with -ENODEV (FREE still succeeds and releases the record), close
 * works, a process storming the tier during the unbind sees only the
 * documented errnos. The device's declaration in configfs is the
 * administrator's and stays: a process inside one of its tier directories
 * keeps using it, status reads "unbound", commit fails with -ENODEV. At
 * rebind the declaration is applied: an incomplete one is refused, the
 * default tier comes back clean and last_apply says why; completed, it is
 * live after the next rebind. Runs last (by name) because it re-creates the
 * device's tiers.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"
#include "tap.h"

#define NR_CASES	26

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

/*
 * Child: inside @bdf's declared tier "uncommitted" with its size file open,
 * reports "ready" on @ready, waits for a byte on @go (sent after the
 * unbind), then uses the directory again. Exit status: 0 if the
 * declaration is still all there, else the step that failed.
 */
static void sit_in_configfs(const char *bdf, int ready, int go)
{
	char dir[256], buf[64];
	ssize_t n;
	int f;

	snprintf(dir, sizeof(dir), SVOD_CONFIGFS "/%s/tiers/uncommitted", bdf);
	if (chdir(dir) || (f = open("size", O_RDONLY)) < 0)
		_exit(101);
	if (write(ready, "r", 1) != 1 || read(go, buf, 1) != 1)
		_exit(102);
	n = pread(f, buf, sizeof(buf) - 1, 0);
	if (n < 0 || (buf[n] = '\0', strcmp(buf, "0x1000\n")))
		_exit(1);
	if (mkdir("reserved/late", 0755) || rmdir("reserved/late"))
		_exit(2);
	if (access("../../status", F_OK))
		_exit(3);
	close(f);
	_exit(0);
}

/* Declare a tier without bar and offset, and a region: applying it fails. */
static int stage_uncommitted(const char *bdf)
{
	int ret = ht_cfs_mkdir(bdf, "tiers/uncommitted");

	ret = ret ? ret : ht_cfs_write(bdf, "tiers/uncommitted/size", "4K");
	ret = ret ? ret : ht_cfs_mkdir(bdf, "tiers/uncommitted/reserved/r0");
	return ret ? ret : ht_cfs_write(bdf, "tiers/uncommitted/reserved/r0/base", "0");
}

int main(void)
{
	char bdfs[4][SVOD_NAME_LEN], bdf[SVOD_NAME_LEN], orig[4096], now[4096], path[256];
	struct svod_tier_info tier, t;
	struct svod_alloc a = {}, b;
	struct svod_resolve r;
	unsigned char buf[16] = {};
	int *stop;
	uint64_t bar = 0;
	int fd, fd2, ret, nr, i, gone, status, ready[2], go[2];
	pid_t pid, sitter;

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

	tap_errno(stage_uncommitted(bdf), 0, "stage_uncommitted_tier_and_region");
	if (pipe(ready) || pipe(go))
		return tap_done();
	sitter = fork();
	if (sitter == 0)
		sit_in_configfs(bdf, ready[1], go[0]);
	ret = sitter > 0 && read(ready[0], now, 1) == 1 ? 0 : -EIO;
	tap_errno(ret, 0, "process_inside_declared_tier_dir_with_file_open");

	ret = svod_alloc(fd, tier.id, 4096, 0, &a);
	pid = fork();
	if (pid == 0)
		hammer(tier.id, stop);
	usleep(100000);

	tap_errno(svod_driver_bind(bdf, 0), 0, "unbind_with_open_files_and_live_allocation");
	ret = ht_cfs_read(bdf, "status", now, sizeof(now));
	tap_ok(!ret && !strcmp(now, "unbound"), "unbind_keeps_declaration_status_unbound (%s %s)",
	       ht_err(ret), now);
	tap_errno(svod_tiers_read(bdf, now, sizeof(now)), -ENOENT,
		  "live_tiers_of_unbound_device_enoent");
	status = write(go[1], "g", 1) == 1 && sitter > 0 ? ht_wait_exit(sitter) : -1;
	tap_ok(status == 0, "process_inside_declaration_keeps_using_it_after_unbind (step %d)",
	       status);
	tap_errno(ht_cfs_write(bdf, "commit", "1"), -ENODEV, "commit_on_unbound_device_enodev");
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
	tap_ok(!ret && t.capacity == bar && !strcmp(now, orig),
	       "rebind_refused_declaration_leaves_default_tier (%.*s)", (int)strcspn(now, "\n"),
	       now);
	ht_cfs_read(bdf, "last_apply", path, sizeof(path));
	tap_ok(!strcmp(path, "bind: error -22: tier uncommitted: bar, offset and size must be written"),
	       "last_apply_says_why_bind_refused (%s)", path);
	ret = ret ? ret : svod_alloc(fd2, t.id, 4096, 0, &b);
	tap_ok(!ret && svod_free(fd2, b.handle) == 0, "rebound_tier_allocates");
	tap_ok(!svod_tier_by_id(fd2, t.id, &t) && t.free_bytes == t.capacity && t.nr_live == 0,
	       "rebound_tier_clean");

	/* Completed, the declaration is what the next bind applies. */
	ret = ht_cfs_write(bdf, "tiers/uncommitted/bar", "2");
	ret = ret ?: ht_cfs_write(bdf, "tiers/uncommitted/offset", "0");
	ret = ret ?: ht_cfs_write(bdf, "tiers/uncommitted/reserved/r0/size", "64");
	ret = ret ?: svod_driver_bind(bdf, 0);
	ret = ret ?: svod_driver_bind(bdf, 1);
	ht_cfs_read(bdf, "last_apply", path, sizeof(path));
	if (svod_tiers_read(bdf, now, sizeof(now)) < 0)
		now[0] = '\0';
	tap_ok(!ret && !strcmp(path, "bind: ok") &&
	       !strcmp(now, "uncommitted bar=2 offset=0x0 size=0x1000 base=0x0 align=64 "
			    "reserved=0x0+0x40\n"),
	       "completed_declaration_live_after_rebind (%s, %s, %.*s)", ht_err(ret), path,
	       (int)strcspn(now, "\n"), now);
	tap_errno(svod_tiers_write(bdf, orig), 0, "original_declared_back");
	ret = svod_tier_by_device(fd2, bdf, &t);
	tap_ok(!ret && t.capacity == bar && t.nr_live == 0, "original_tier_live_again");
	svod_close(fd2);
	/* Live tiers are back as they were: forget the declarations made. */
	ht_undeclare_all();
	return tap_done();
}
