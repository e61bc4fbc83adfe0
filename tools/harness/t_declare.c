// SPDX-License-Identifier: GPL-2.0
/*
 * t_declare: tier declaration through configfs, /sys/kernel/config/svod/<bdf>/.
 * The default tier covers BAR 2 and the driver made no declaration;
 * values are staged (every case of svod's number grammar, kunit/number_cases.h,
 * gets the answer the KUnit suite and libsvod give; a malformed value fails at
 * once) and nothing changes before commit; commit refuses with
 * its errno (EPERM without CAP_SYS_ADMIN, EINVAL, ERANGE, EEXIST, EBUSY over
 * live allocations), logs one dev_err line and leaves the live set as it
 * was; rmdir of a tier removes it at the next commit; an unchanged tier
 * survives a commit with its allocations; reserved regions are reported and
 * never allocated. The shell session of Documentation/svod.rst runs as
 * written. The original declaration is restored at the end.
 */
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "tap.h"

#define NR_CASES	64

/* The cases of svod's one number grammar, shared with KUnit, libsvod, Python. */
#define SVOD_NUMBER_CASE(t, v, e)	{ t, v, e },
static const struct {
	const char *text;
	uint64_t val;
	int err;
} number_cases[] = {
#include "../../kunit/number_cases.h"
};
#undef SVOD_NUMBER_CASE

static char bdf[SVOD_NAME_LEN];
static char orig[4096];
static uint64_t bar_size;
static struct svod_tier_info def;
static int fd;

/* Tiers of the device that are not gone. */
static int live_tiers(void)
{
	struct svod_tier_info *tiers;
	uint32_t nr, i;
	int n = 0;

	if (svod_query_all(fd, &tiers, &nr))
		return -1;
	for (i = 0; i < nr; i++)
		n += !(tiers[i].flags & SVOD_TIER_GONE) &&
		     !strncmp(tiers[i].device, bdf, SVOD_NAME_LEN);
	free(tiers);
	return n;
}

/* The live set is the default tier alone, with the same id. */
static int live_unchanged(void)
{
	struct svod_tier_info t;

	return !svod_tier_by_name(fd, def.name, &t) && t.id == def.id &&
	       t.capacity == def.capacity && !(t.flags & SVOD_TIER_GONE) &&
	       live_tiers() == 1;
}

/* Staged tree and live set both as at the start. */
static int unchanged(void)
{
	char now[4096];

	return svod_tiers_read(bdf, now, sizeof(now)) >= 0 && !strcmp(now, orig) &&
	       live_unchanged();
}

static void refuse(const char *text, int want, const char *name)
{
	tap_errno(svod_tiers_write(bdf, text), want, "%s", name);
}

static int commit(void)
{
	return ht_cfs_write(bdf, "commit", "1");
}

static void test_default(void)
{
	char rel[128];
	struct svod_tier_decl d;
	int ok;

	ok = strchr(orig, '\n') == orig + strlen(orig) - 1 && !svod_decl_parse(orig, &d);
	tap_ok(ok && d.bar == 2 && d.offset == 0 && d.size == bar_size && d.base == 0 &&
	       d.align == 64 && d.nr_reserved == 0 && !strcmp(d.name, def.name),
	       "default_one_tier_covers_bar2 (%.*s)", (int)strcspn(orig, "\n"), orig);

	snprintf(rel, sizeof(rel), SVOD_CONFIGFS "/%s", bdf);
	tap_ok(access(rel, F_OK) && errno == ENOENT,
	       "no_declaration_made_by_the_driver_at_bind (%s)", ht_err(-errno));
}

static void test_eperm(void)
{
	char text[256];
	int status, kfd, logged;
	pid_t pid;

	snprintf(text, sizeof(text), "noadmin bar=2 offset=0 size=0x%llx",
		 (unsigned long long)bar_size);
	kfd = ht_kmsg_open();
	pid = fork();
	if (pid == 0) {
		int ret = ht_drop_cap(CAP_SYS_ADMIN);

		if (ret)
			_exit(200);
		_exit(-svod_tiers_write(bdf, text));
	}
	status = pid > 0 ? ht_wait_exit(pid) : -1;
	tap_errno(-status, -EPERM, "commit_without_cap_sys_admin_eperm");
	logged = kfd >= 0 ? ht_kmsg_find(kfd, bdf) : -1;
	tap_ok(logged == 1, "commit_eperm_logs_one_dev_err_line (%d lines)", logged);
	if (kfd >= 0)
		close(kfd);
	tap_ok(unchanged(), "commit_eperm_left_set_unchanged");
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
	refuse("t:x bar=2 offset=0 size=4096", -EINVAL, "declare_bad_name_einval");

	kfd = ht_kmsg_open();
	snprintf(text, sizeof(text), "t bar=2 offset=0 size=0x%llx", b + 4096);
	refuse(text, -ERANGE, "declare_larger_than_bar_erange");
	logged = kfd >= 0 ? ht_kmsg_find(kfd, bdf) : -1;
	tap_ok(logged == 1, "commit_refusal_logs_one_dev_err_line (%d lines)", logged);
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

/*
 * Each case of the number table written to a staged tier's size: refused
 * with its errno, or read back as its value. An empty text is left out:
 * write(2) of nothing never reaches the attribute.
 */
static void test_number_table(void)
{
	unsigned int i, n = 0, wrong = 0;
	char val[64], want[32];
	int ret;

	ret = ht_cfs_mkdir(bdf, "tiers/numbers");
	for (i = 0; !ret && i < ARRAY_SIZE(number_cases); i++) {
		if (!number_cases[i].text[0])
			continue;
		n++;
		val[0] = '\0';
		ret = ht_cfs_write(bdf, "tiers/numbers/size", number_cases[i].text);
		if (!ret)
			ret = ht_cfs_read(bdf, "tiers/numbers/size", val, sizeof(val));
		snprintf(want, sizeof(want), "0x%llx", (unsigned long long)number_cases[i].val);
		if (ret != -number_cases[i].err || (!ret && strcmp(val, want))) {
			tap_diag("size \"%s\": %s %s", number_cases[i].text, ht_err(ret), val);
			wrong++;
		}
		ret = 0;
	}
	ret = ret ?: ht_cfs_rmdir(bdf, "tiers/numbers");
	tap_ok(!ret && n && !wrong, "number_table_same_answers_from_configfs (%u cases, %u wrong, %s)",
	       n, wrong, ht_err(ret));
}

/* Values written to configfs: checked at once, applied only by commit. */
static void test_staging(void)
{
	static const char *const bad[] = { "\n", "1M\n\n", "\n1M" };
	char val[64], rel[128];
	unsigned int i, refused = 0;
	int ret;

	tap_errno(ht_cfs_mkdir(bdf, "tiers/t:x"), -EINVAL, "mkdir_bad_tier_name_einval");
	test_number_table();
	tap_errno(ht_cfs_mkdir(bdf, "tiers/staged"), 0, "mkdir_tier");
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		ret = ht_cfs_write(bdf, "tiers/staged/size", bad[i]);
		refused += ret == -EINVAL;
		if (ret != -EINVAL)
			tap_diag("size \"%s\": %s", bad[i], ht_err(ret));
	}
	ret = ht_cfs_write(bdf, "tiers/staged/bar", "two");
	tap_ok(refused == ARRAY_SIZE(bad) && ret == -EINVAL,
	       "malformed_values_fail_at_once_einval");
	tap_errno(ht_cfs_write(bdf, "tiers/staged/bar", "0x100000000"), -ERANGE,
		  "bar_beyond_32_bits_erange");
	ret = ht_cfs_read(bdf, "tiers/staged/size", val, sizeof(val));
	tap_ok(!ret && !val[0], "unwritten_size_reads_empty (\"%s\")", val);
	tap_errno(commit(), -EINVAL, "commit_tier_without_bar_offset_size_einval");
	tap_errno(ht_cfs_write(bdf, "commit", "2"), -EINVAL, "commit_value_other_than_1_einval");
	tap_errno(ht_cfs_rmdir(bdf, "tiers/staged"), 0, "rmdir_staged_tier");

	snprintf(rel, sizeof(rel), "tiers/%s", def.name);
	tap_errno(ht_cfs_rmdir(bdf, rel), 0, "rmdir_default_tier_dir");
	ret = ht_cfs_mkdir(bdf, "tiers/sfx");
	ret = ret ? ret : ht_cfs_write(bdf, "tiers/sfx/bar", "2");
	ret = ret ? ret : ht_cfs_write(bdf, "tiers/sfx/offset", "32M");
	ret = ret ? ret : ht_cfs_write(bdf, "tiers/sfx/size", "16m\n");
	ret = ret ? ret : ht_cfs_write(bdf, "tiers/sfx/base", "1G");
	ret = ret ? ret : ht_cfs_write(bdf, "tiers/sfx/align", "4K");
	tap_errno(ret, 0, "stage_tier_with_memparse_suffixes");
	val[0] = '\0';
	ret = ht_cfs_read(bdf, "tiers/sfx/offset", val, sizeof(val));
	tap_ok(!ret && !strcmp(val, "0x2000000"), "offset_32M_reads_0x2000000 (%s)", val);
	ret = ht_cfs_read(bdf, "tiers/sfx/base", val, sizeof(val));
	tap_ok(!ret && !strcmp(val, "0x40000000"), "base_1G_reads_0x40000000 (%s)", val);
	ret = ht_cfs_read(bdf, "tiers/sfx/align", val, sizeof(val));
	tap_ok(!ret && !strcmp(val, "4096"), "align_4K_reads_4096 (%s)", val);
	tap_ok(live_unchanged(), "staged_values_not_applied_before_commit");
}

static void test_staged_commit(void)
{
	struct svod_tier_info t;
	struct svod_alloc a;
	int ret;

	tap_errno(commit(), 0, "commit_staged_set");
	ret = svod_tier_by_name(fd, "sfx", &t);
	tap_ok(!ret && t.capacity == 16 << 20 && t.device_base == 1ULL << 30 &&
	       t.align == 4096 && live_tiers() == 1,
	       "committed_tier_live_with_suffixed_values (%s)", ht_err(ret));
	tap_errno(svod_alloc(fd, def.id, 4096, 0, &a), -ENOENT,
		  "rmdir_then_commit_removed_default_tier_enoent");
	tap_errno(svod_tiers_write(bdf, orig), 0, "declare_original_back");
	ret = svod_tier_by_device(fd, bdf, &def);
	tap_ok(!ret && unchanged(), "original_back_live_and_staged (%s)", ht_err(ret));
}

/* A failed commit changes nothing live, whichever check refuses it. */
static void test_atomic(void)
{
	char rel[128], size[32], num[32];
	struct svod_resolve r;
	struct svod_alloc a = {};
	unsigned int i, made = 0;
	int ret;

	ret = ht_cfs_mkdir(bdf, "tiers/extra");
	snprintf(num, sizeof(num), "0x%llx", (unsigned long long)bar_size);
	ret = ret ? ret : ht_cfs_write(bdf, "tiers/extra/bar", "2");
	ret = ret ? ret : ht_cfs_write(bdf, "tiers/extra/offset", num);
	ret = ret ? ret : ht_cfs_write(bdf, "tiers/extra/size", "4096");
	tap_errno(ret ? ret : commit(), -ERANGE, "commit_one_tier_beyond_bar_erange");
	tap_ok(live_unchanged(), "failed_commit_changed_nothing_live");
	ht_cfs_rmdir(bdf, "tiers/extra");

	ret = svod_alloc(fd, def.id, 4096, 0, &a);
	snprintf(rel, sizeof(rel), "tiers/%s/size", def.name);
	ret = ret ? ret : ht_cfs_write(bdf, rel, "4096");
	tap_errno(ret ? ret : commit(), -EBUSY, "commit_replacing_tier_with_live_allocation_ebusy");
	tap_ok(live_unchanged() && svod_resolve(fd, a.handle, &r) == 0 && r.tier == def.id,
	       "ebusy_left_set_and_allocation_alone");
	snprintf(size, sizeof(size), "0x%llx", (unsigned long long)bar_size);
	ht_cfs_write(bdf, rel, size);
	svod_free(fd, a.handle);

	for (i = 0; i < 8; i++) {
		snprintf(rel, sizeof(rel), "tiers/n%u", i);
		ret = ht_cfs_mkdir(bdf, rel);
		if (ret)
			break;
		made++;
	}
	tap_ok(made == 7 && ret == -ENOSPC, "mkdir_ninth_tier_enospc (%u made, %s)", made,
	       ht_err(ret));
	for (i = 0; i < made; i++) {
		snprintf(rel, sizeof(rel), "tiers/n%u", i);
		ht_cfs_rmdir(bdf, rel);
	}
	tap_ok(unchanged(), "staged_tree_back_to_original");
}

static void test_busy(void)
{
	struct svod_tier_info after;
	struct svod_resolve r;
	struct svod_alloc a = {};
	char text[4200];
	int ret;

	ret = svod_alloc(fd, def.id, 4096, 0, &a);
	refuse("other bar=2 offset=0 size=0x100000", -EBUSY,
	       "declare_over_live_allocation_ebusy");
	tap_ok(!ret && unchanged() && svod_resolve(fd, a.handle, &r) == 0,
	       "declare_ebusy_left_set_and_allocation_alone");

	/* The same tier again plus a new one on BAR 0: the live tier stays. */
	snprintf(text, sizeof(text), "%sregs bar=0 offset=0 size=0x100 base=0x80000000", orig);
	ret = svod_tiers_write(bdf, text);
	tap_ok(!ret && svod_resolve(fd, a.handle, &r) == 0 && r.tier == def.id &&
	       !svod_tier_by_name(fd, def.name, &after) && after.id == def.id &&
	       !svod_tier_by_name(fd, "regs", &after),
	       "declare_unchanged_tier_kept_with_its_allocations (%s)",
	       ret ? svod_errno_name(ret) : "ok");
	svod_free(fd, a.handle);
	tap_errno(svod_tiers_write(bdf, orig), 0, "declare_back_to_original");
}

/* Two tiers exist: a one-entry array gets one, and the true count. */
static void test_query_short_array(void)
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

static void test_reserved(void)
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
			       "reserved=0x10080000+0x10000,0x10000000+0x1000;"
			       "d1 bar=2 offset=0x100000 size=0x100000 base=0x20000000 align=4096");
	tap_errno(ret, 0, "declare_two_tiers_semicolons");
	second = NULL;
	if (svod_tiers_read(bdf, now, sizeof(now)) >= 0)
		second = strchr(now, '\n');
	tap_ok(second && !svod_decl_parse(now, &d[0]) && !svod_decl_parse(second + 1, &d[1]) &&
	       !strcmp(d[0].name, "d0") && d[0].nr_reserved == 2 &&
	       d[0].reserved[0].base == 0x10000000 && d[0].reserved[1].base == 0x10080000 &&
	       d[0].reserved[1].size == 0x10000 && !strcmp(d[1].name, "d1") &&
	       d[1].base == 0x20000000 && d[1].align == 4096,
	       "declare_reads_back_regions_sorted_by_base");
	tap_errno(svod_alloc(fd, def.id, 4096, 0, &a), -ENOENT,
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
	test_query_short_array();
	test_max_bytes_per_tier(t0.id, t1.id);
}

/*
 * The shell session of Documentation/svod.rst ("Declaring tiers"), run as
 * written there, with the rig's device in place of 0000:00:04.0.
 */
static const char doc_session[] =
	"cd /sys/kernel/config/svod/%s &&\n"
	"rmdir tiers/bar2 &&\n"
	"mkdir tiers/weights tiers/scratch &&\n"
	"echo 2 > tiers/weights/bar && echo 0 > tiers/weights/offset &&\n"
	"echo 48M > tiers/weights/size &&\n"
	"echo 2 > tiers/scratch/bar && echo 48M > tiers/scratch/offset &&\n"
	"echo 16M > tiers/scratch/size && echo 0x10000000 > tiers/scratch/base &&\n"
	"echo 4K > tiers/scratch/align &&\n"
	"mkdir tiers/scratch/reserved/0 &&\n"
	"echo 0x10000000 > tiers/scratch/reserved/0/base &&\n"
	"echo 64K > tiers/scratch/reserved/0/size &&\n"
	"echo 1 > commit\n";

static void test_doc_session(void)
{
	struct svod_region region = {};
	struct svod_tier_info w, s;
	char cmd[1024];
	int ret, rw, rs;

	if (strcmp(def.name, "bar2")) {
		tap_skip("the default tier is not named bar2", "documented_shell_session_runs");
		tap_skip("the default tier is not named bar2", "documented_session_tiers_live");
		return;
	}
	snprintf(cmd, sizeof(cmd), doc_session, bdf);
	ret = system(cmd);
	tap_ok(ret == 0, "documented_shell_session_runs (status %d)", ret);
	rw = svod_tier_by_name(fd, "weights", &w);
	rs = svod_tier_by_name(fd, "scratch", &s);
	if (!rs && svod_tier_regions(fd, s.id, &region, 1) != 1)
		rs = -EIO;
	tap_ok(!rw && !rs && w.capacity == 48 << 20 && s.capacity == 16 << 20 &&
	       s.device_base == 0x10000000 && s.align == 4096 && s.nr_reserved == 1 &&
	       region.base == 0x10000000 && region.size == 64 << 10 && live_tiers() == 2,
	       "documented_session_tiers_live (%s, %s)", ht_err(rw), ht_err(rs));
}

int main(void)
{
	char bdfs[4][SVOD_NAME_LEN];
	int ret;

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
	test_busy();
	test_staging();
	test_staged_commit();
	test_atomic();
	test_reserved();
	tap_errno(svod_tiers_write(bdf, orig), 0, "declare_original_before_documented_session");
	test_doc_session();
	tap_errno(svod_tiers_write(bdf, orig), 0, "declare_restore_original");
	ret = svod_tier_by_device(fd, bdf, &def);
	tap_ok(!ret && unchanged(), "declare_original_reads_back");
	svod_close(fd);
	/* Live tiers are back as they were: forget the declarations made. */
	ht_undeclare_all();
	return tap_done();
}
