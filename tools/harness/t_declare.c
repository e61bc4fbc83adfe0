// SPDX-License-Identifier: GPL-2.0
/*
 * t_declare: tier declaration through /sys/bus/pci/devices/<bdf>/svod_tiers.
 * The default tier covers BAR 2; every refusal has its errno (EPERM without
 * CAP_SYS_ADMIN, EINVAL malformed, ERANGE outside the BAR, EEXIST overlap,
 * EBUSY over live allocations), logs one dev_err line and leaves the set
 * unchanged; an unchanged tier survives a redeclaration with its
 * allocations; reserved regions are reported and never allocated. The
 * original declaration is restored at the end.
 */
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "tap.h"

#define NR_CASES	32

static char bdf[SVOD_NAME_LEN];
static char orig[4096];
static uint64_t bar_size;

static int unchanged(void)
{
	char now[4096];

	return svod_tiers_read(bdf, now, sizeof(now)) >= 0 && !strcmp(now, orig);
}

static void refuse(const char *text, int want, const char *name)
{
	tap_errno(svod_tiers_write(bdf, text), want, "%s", name);
}

static void test_default(void)
{
	struct svod_tier_decl d;
	int ok;

	ok = strchr(orig, '\n') == orig + strlen(orig) - 1 && !svod_decl_parse(orig, &d);
	tap_ok(ok && d.bar == 2 && d.offset == 0 && d.size == bar_size && d.base == 0 &&
	       d.align == 64 && d.nr_reserved == 0,
	       "default_one_tier_covers_bar2 (%.*s)", (int)strcspn(orig, "\n"), orig);
}

static void test_eperm(void)
{
	char text[256];
	int status;
	pid_t pid;

	snprintf(text, sizeof(text), "noadmin bar=2 offset=0 size=0x%llx",
		 (unsigned long long)bar_size);
	pid = fork();
	if (pid == 0) {
		int ret = ht_drop_cap(CAP_SYS_ADMIN);

		if (ret)
			_exit(200);
		_exit(-svod_tiers_write(bdf, text));
	}
	status = pid > 0 ? ht_wait_exit(pid) : -1;
	tap_errno(-status, -EPERM, "declare_without_cap_sys_admin_eperm");
	tap_ok(unchanged(), "declare_eperm_left_set_unchanged");
}

static void test_refusals(void)
{
	unsigned long long b = (unsigned long long)bar_size;
	char text[512];
	int kfd, logged;

	refuse("this is not a declaration", -EINVAL, "declare_garbage_einval");
	refuse("t bar=2 offset=0", -EINVAL, "declare_missing_size_einval");
	refuse("t bar=2 offset=0 size=4096 colour=blue", -EINVAL, "declare_unknown_key_einval");
	refuse("t bar=2 offset=0 size=0", -EINVAL, "declare_size_zero_einval");
	refuse("t bar=2 offset=0 size=4096 align=96", -EINVAL, "declare_align_96_einval");
	refuse("t bar=6 offset=0 size=4096", -EINVAL, "declare_bar_6_einval");
	refuse("t bar=2 offset=0 size=0x10000 base=0x100000 reserved=0x0+0x1000", -EINVAL,
	       "declare_reserved_outside_tier_einval");
	refuse("t bar=2 offset=0 size=4096;t bar=2 offset=4096 size=4096", -EINVAL,
	       "declare_name_twice_einval");

	kfd = ht_kmsg_open();
	snprintf(text, sizeof(text), "t bar=2 offset=0 size=0x%llx", b + 4096);
	refuse(text, -ERANGE, "declare_larger_than_bar_erange");
	logged = kfd >= 0 ? ht_kmsg_find(kfd, bdf) : -1;
	tap_ok(logged == 1, "declare_refusal_logs_one_dev_err_line (%d lines)", logged);
	if (kfd >= 0)
		close(kfd);
	snprintf(text, sizeof(text), "t bar=2 offset=0x%llx size=0x2000", b - 4096);
	refuse(text, -ERANGE, "declare_end_beyond_bar_erange");
	refuse("t bar=2 offset=0xfffffffffffff000 size=0x2000", -ERANGE,
	       "declare_offset_plus_size_wraps_erange");
	refuse("a bar=2 offset=0 size=0x2000;b bar=2 offset=0x1000 size=0x2000", -EEXIST,
	       "declare_overlap_eexist");
	snprintf(text, sizeof(text), "ok bar=2 offset=0 size=0x1000;bad bar=2 offset=0 size=0x%llx",
		 b + 1);
	refuse(text, -ERANGE, "declare_one_bad_tier_refuses_all_erange");
	tap_ok(unchanged(), "declare_refusals_left_set_unchanged");
}

static void test_busy(int fd, struct svod_tier_info *def)
{
	struct svod_tier_info after;
	struct svod_resolve r;
	struct svod_alloc a = {};
	char text[4200];
	int ret;

	ret = svod_alloc(fd, def->id, 4096, 0, &a);
	refuse("other bar=2 offset=0 size=0x100000", -EBUSY,
	       "declare_over_live_allocation_ebusy");
	tap_ok(!ret && unchanged() && svod_resolve(fd, a.handle, &r) == 0,
	       "declare_ebusy_left_set_and_allocation_alone");

	/* The same tier again plus a new one on BAR 0: the live tier stays. */
	snprintf(text, sizeof(text), "%sregs bar=0 offset=0 size=0x100 base=0x80000000", orig);
	ret = svod_tiers_write(bdf, text);
	tap_ok(!ret && svod_resolve(fd, a.handle, &r) == 0 && r.tier == def->id &&
	       !svod_tier_by_name(fd, def->name, &after) && after.id == def->id &&
	       !svod_tier_by_name(fd, "regs", &after),
	       "declare_unchanged_tier_kept_with_its_allocations (%s)",
	       ret ? svod_errno_name(ret) : "ok");
	svod_free(fd, a.handle);
	tap_errno(svod_tiers_write(bdf, orig), 0, "declare_back_to_original");
}

/* Two tiers exist: a one-entry array gets one, and the true count. */
static void test_query_short_array(int fd)
{
	struct svod_tier_info arr[2];
	struct svod_query q = { .nr_tiers = 1, .tiers_ptr = (uintptr_t)arr };
	int ret;

	memset(arr, 0xa5, sizeof(arr));
	ret = svod_query(fd, &q);
	tap_ok(!ret && q.nr_tiers >= 2 && arr[0].capacity != 0xa5a5a5a5a5a5a5a5ULL &&
	       arr[1].id == 0xa5a5a5a5U,
	       "query_more_tiers_than_array_fills_min (%u tiers)", q.nr_tiers);
}

/* max_bytes caps each tier separately: a full tier does not block another. */
static void test_max_bytes_per_tier(uint32_t t0, uint32_t t1)
{
	struct svod_alloc a, b, c;
	uint64_t old = 0;
	int fd2, r1, r2, r3;

	if (svod_param_read("max_bytes", &old) || svod_param_write("max_bytes", 1 << 16)) {
		tap_skip("max_bytes not writable", "max_bytes_is_per_tier");
		return;
	}
	fd2 = ht_open();
	r1 = svod_alloc(fd2, t0, 1 << 16, 0, &a);
	r2 = svod_alloc(fd2, t0, 4096, 0, &b);
	r3 = svod_alloc(fd2, t1, 1 << 16, 0, &c);
	tap_ok(!r1 && r2 == -EDQUOT && !r3, "max_bytes_is_per_tier (%s, %s, %s)",
	       ht_err(r1), ht_err(r2), ht_err(r3));
	svod_close(fd2);
	svod_param_write("max_bytes", old);
}

static void test_reserved(int fd, uint32_t old_id)
{
	struct svod_tier_info t0, t1;
	struct svod_region regions[2] = {};
	struct svod_tier_decl d[2];
	struct svod_alloc a, *held;
	char now[4096], *second;
	uint64_t got = 0;
	unsigned int n = 0, bad = 0, i;
	int ret;

	ret = svod_tiers_write(bdf, "d0 bar=2 offset=0 size=0x100000 base=0x10000000 align=64 "
			       "reserved=0x10000000+0x1000,0x10080000+0x10000;"
			       "d1 bar=2 offset=0x100000 size=0x100000 base=0x20000000 align=4096");
	tap_errno(ret, 0, "declare_two_tiers_semicolons");
	second = NULL;
	if (svod_tiers_read(bdf, now, sizeof(now)) >= 0)
		second = strchr(now, '\n');
	tap_ok(second && !svod_decl_parse(now, &d[0]) && !svod_decl_parse(second + 1, &d[1]) &&
	       !strcmp(d[0].name, "d0") && d[0].nr_reserved == 2 &&
	       d[0].reserved[1].base == 0x10080000 && d[0].reserved[1].size == 0x10000 &&
	       !strcmp(d[1].name, "d1") && d[1].base == 0x20000000 && d[1].align == 4096,
	       "declare_reads_back_as_written");
	tap_errno(svod_alloc(fd, old_id, 4096, 0, &a), -ENOENT,
		  "alloc_on_replaced_tier_enoent");

	ret = svod_tier_by_name(fd, "d0", &t0);
	if (!ret && svod_tier_regions(fd, t0.id, regions, 2) != 2)
		ret = -EIO;
	tap_ok(!ret && t0.nr_reserved == 2 && t0.reserved_bytes == 0x11000 &&
	       regions[1].base == 0x10080000 && regions[1].size == 0x10000 &&
	       t0.free_bytes == 0x100000 - 0x11000 && t0.device_base == 0x10000000,
	       "query_reports_reserved_regions");

	held = calloc(64, sizeof(*held));
	while (!ret && held && n < 64) {
		if (svod_tier_by_id(fd, t0.id, &t1) || !t1.largest_free ||
		    svod_alloc(fd, t0.id, t1.largest_free, 0, &held[n]))
			break;
		a = held[n++];
		got += a.capacity;
		for (i = 0; i < t0.nr_reserved; i++)
			if (a.device_addr < regions[i].base + regions[i].size &&
			    regions[i].base < a.device_addr + a.capacity)
				bad++;
	}
	tap_ok(!ret && bad == 0 && got == 0x100000 - 0x11000,
	       "reserved_regions_never_allocated (%u spans, 0x%llx bytes)", n,
	       (unsigned long long)got);
	for (i = 0; i < n; i++)
		svod_free(fd, held[i].handle);
	free(held);

	ret = svod_tier_by_name(fd, "d1", &t1);
	if (!ret)
		ret = svod_alloc(fd, t1.id, 4096, 0, &a);
	tap_ok(!ret && a.device_addr >= 0x20000000 && a.device_addr < 0x20100000 &&
	       svod_free(fd, a.handle) == 0, "second_declared_tier_allocates_at_its_base");
	test_query_short_array(fd);
	test_max_bytes_per_tier(t0.id, t1.id);
}

int main(void)
{
	char bdfs[4][SVOD_NAME_LEN];
	struct svod_tier_info def;
	int fd, ret;

	tap_plan(NR_CASES);
	fd = ht_open();
	ret = svod_devices(bdfs, 4);
	if (fd < 0 || ret <= 0) {
		tap_diag("no device bound to svod (fd %d, devices %d)", fd, ret);
		return tap_done();
	}
	strcpy(bdf, bdfs[0]);
	if (svod_tiers_read(bdf, orig, sizeof(orig)) < 0 || ht_bar_size(bdf, 2, &bar_size) ||
	    svod_tier_by_device(fd, bdf, &def)) {
		tap_diag("cannot read %s's declaration, BAR2 or tier", bdf);
		return tap_done();
	}
	tap_diag("device %s, BAR2 0x%llx bytes", bdf, (unsigned long long)bar_size);
	test_default();
	test_eperm();
	test_refusals();
	test_busy(fd, &def);
	test_reserved(fd, def.id);
	tap_errno(svod_tiers_write(bdf, orig), 0, "declare_restore_original");
	tap_ok(unchanged(), "declare_original_reads_back");
	svod_close(fd);
	return tap_done();
}
