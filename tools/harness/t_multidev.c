// SPDX-License-Identifier: GPL-2.0
/*
 * t_multidev: several devices bound at once, all their tiers under the one
 * /dev/svod. The rig gives the guest two ivshmem-plain devices, a 64 MiB
 * BAR 2 first and a 16 MiB one second. QUERY lists a tier of each with
 * distinct ids and names, the right owning device and capacity; ALLOC lands
 * in the tier asked for; STAGE/READ (CPU engine) round-trip on each BAR
 * without touching the other; a handle never frees or resolves as another
 * tier's allocation; unbinding the second device makes only its tier gone
 * and a rebind brings its default tier back (in configfs too); the second
 * device's declaration (its own configfs directory) works without touching
 * the first's, and a name of the first device's tiers is refused (EEXIST).
 * The second device is left bound with its default tier.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "tap.h"

#define NR_CASES	52

#define DEV0_BAR2	(64ULL << 20)
#define DEV1_BAR2	(16ULL << 20)
#define ALLOC_LEN	(64u << 10)
#define XFER_LEN	(4096u + 123u)
#define XFER_OFF	61u

static int fd = -1;
static char bdf0[SVOD_NAME_LEN], bdf1[SVOD_NAME_LEN];
static char orig0[4096], orig1[4096];
static struct svod_tier_info t0, t1;

/* The default tier name a device gets when another one already has "bar2". */
static void default_name(const char *bdf, char *name, size_t len)
{
	char *p;

	snprintf(name, len, "bar2-%s", bdf);
	for (p = name; *p; p++)
		if (*p == ':')
			*p = '-';
}

static void fill(uint8_t *p, size_t len, uint8_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(seed + i * 7 + (i >> 8));
}

/* Number of present tiers of @bdf in QUERY, or -errno. */
static int present_tiers_of(const char *bdf)
{
	struct svod_tier_info *tiers;
	uint32_t nr, i;
	int n = 0, ret;

	ret = svod_query_all(fd, &tiers, &nr);
	if (ret)
		return ret;
	for (i = 0; i < nr; i++)
		n += !(tiers[i].flags & SVOD_TIER_GONE) &&
		     !strncmp(tiers[i].device, bdf, SVOD_NAME_LEN);
	free(tiers);
	return n;
}

/* STAGE @len bytes of @seed's pattern at XFER_OFF, READ them back, compare. */
static int roundtrip(uint64_t handle, uint8_t seed)
{
	uint8_t src[XFER_LEN], dst[XFER_LEN];
	uint64_t done = 0;
	int ret;

	fill(src, sizeof(src), seed);
	memset(dst, 0, sizeof(dst));
	ret = svod_stage(fd, handle, XFER_OFF, src, sizeof(src), SVOD_XFER_CPU, &done);
	if (ret || done != sizeof(src))
		return ret ? ret : -EIO;
	done = 0;
	ret = svod_read(fd, handle, XFER_OFF, dst, sizeof(dst), SVOD_XFER_CPU, &done);
	if (ret || done != sizeof(dst))
		return ret ? ret : -EIO;
	return memcmp(src, dst, sizeof(src)) ? -EILSEQ : 0;
}

/* READ back and compare with @seed's pattern, without staging. */
static int still_holds(uint64_t handle, uint8_t seed)
{
	uint8_t want[XFER_LEN], dst[XFER_LEN];
	uint64_t done = 0;
	int ret;

	fill(want, sizeof(want), seed);
	ret = svod_read(fd, handle, XFER_OFF, dst, sizeof(dst), SVOD_XFER_CPU, &done);
	if (ret || done != sizeof(dst))
		return ret ? ret : -EIO;
	return memcmp(want, dst, sizeof(dst)) ? -EILSEQ : 0;
}

/* @text (a device's declaration, read back) declares exactly one tier, @t. */
static int one_line_of(const char *text, const struct svod_tier_info *t)
{
	struct svod_tier_decl d;
	const char *nl = strchr(text, '\n');

	return nl && nl[1] == '\0' && !svod_decl_parse(text, &d) &&
	       !strncmp(d.name, t->name, SVOD_NAME_LEN) && d.size == t->capacity &&
	       d.base == t->device_base;
}

static int in_tier(const struct svod_tier_info *t, const struct svod_alloc *a)
{
	return a->device_addr >= t->device_base &&
	       a->device_addr - t->device_base <= t->capacity &&
	       a->capacity <= t->capacity - (a->device_addr - t->device_base);
}

static void test_listing(void)
{
	struct svod_tier_info n0, n1;
	char name1[SVOD_NAME_LEN + 8];
	int r0, r1;

	tap_ok(t0.id != t1.id, "tier_ids_distinct (%u, %u)", t0.id, t1.id);
	tap_ok(strncmp(t0.name, t1.name, SVOD_NAME_LEN) != 0, "tier_names_distinct (%.32s, %.32s)",
	       t0.name, t1.name);
	tap_ok(!strncmp(t0.device, bdf0, SVOD_NAME_LEN) && !strncmp(t1.device, bdf1, SVOD_NAME_LEN),
	       "tiers_name_their_owning_device (%.32s, %.32s)", t0.device, t1.device);
	tap_eq_u64(t0.capacity, DEV0_BAR2, "first_device_tier_capacity_64MiB");
	tap_eq_u64(t1.capacity, DEV1_BAR2, "second_device_tier_capacity_16MiB");

	default_name(bdf1, name1, sizeof(name1));
	r0 = svod_tier_by_name(fd, "bar2", &n0);
	r1 = svod_tier_by_name(fd, name1, &n1);
	tap_ok(!r0 && !r1 && !strncmp(n0.device, bdf0, SVOD_NAME_LEN) &&
	       !strncmp(n1.device, bdf1, SVOD_NAME_LEN) && n0.capacity == DEV0_BAR2 &&
	       n1.capacity == DEV1_BAR2,
	       "default_names_bar2_and_%s_by_device (%s, %s)", name1, ht_err(r0), ht_err(r1));
	tap_ok(present_tiers_of(bdf0) == 1 && present_tiers_of(bdf1) == 1,
	       "query_lists_one_tier_per_device");
	tap_ok(one_line_of(orig0, &t0) && one_line_of(orig1, &t1),
	       "each_configfs_device_dir_lists_only_its_tiers");
}

static void test_alloc_and_stage(void)
{
	struct svod_alloc a0 = {}, a1 = {}, c = {};
	struct svod_tier_info now0, now1;
	struct svod_resolve r0 = {}, r1 = {};
	int ret0, ret1, rr0, rr1;

	ret0 = svod_alloc(fd, t0.id, ALLOC_LEN, 0, &a0);
	ret1 = svod_alloc(fd, t1.id, ALLOC_LEN, 0, &a1);
	tap_ok(!ret0 && !ret1 && in_tier(&t0, &a0) && in_tier(&t1, &a1) &&
	       a0.handle != a1.handle,
	       "alloc_in_each_tier (%s, %s; addr 0x%llx, 0x%llx)", ht_err(ret0), ht_err(ret1),
	       (unsigned long long)a0.device_addr, (unsigned long long)a1.device_addr);
	rr0 = svod_resolve(fd, a0.handle, &r0);
	rr1 = svod_resolve(fd, a1.handle, &r1);
	tap_ok(!rr0 && r0.tier == t0.id && r0.device_addr == a0.device_addr &&
	       r0.capacity == ALLOC_LEN,
	       "resolve_first_alloc_names_first_tier (%s, tier %u)", ht_err(rr0), r0.tier);
	tap_ok(!rr1 && r1.tier == t1.id && r1.device_addr == a1.device_addr &&
	       r1.capacity == ALLOC_LEN,
	       "resolve_second_alloc_names_second_tier (%s, tier %u)", ht_err(rr1), r1.tier);
	ret0 = svod_tier_by_id(fd, t0.id, &now0);
	ret1 = svod_tier_by_id(fd, t1.id, &now1);
	tap_ok(!ret0 && !ret1 && now0.nr_live == t0.nr_live + 1 &&
	       now0.free_bytes == t0.free_bytes - ALLOC_LEN && now1.nr_live == t1.nr_live + 1 &&
	       now1.free_bytes == t1.free_bytes - ALLOC_LEN,
	       "each_alloc_counted_in_its_own_tier");

	tap_errno(roundtrip(a0.handle, 0x11), 0, "stage_read_roundtrip_first_tier_cpu");
	tap_errno(roundtrip(a1.handle, 0x5c), 0, "stage_read_roundtrip_second_tier_cpu");
	tap_errno(still_holds(a0.handle, 0x11), 0, "second_tier_stage_left_first_bar_alone");
	ret0 = svod_tier_by_id(fd, t0.id, &now0);
	ret1 = svod_tier_by_id(fd, t1.id, &now1);
	tap_ok(!ret0 && !ret1 && now0.cpu_bytes >= t0.cpu_bytes + 3 * XFER_LEN &&
	       now1.cpu_bytes >= t1.cpu_bytes + 2 * XFER_LEN &&
	       now1.cpu_bytes < t1.cpu_bytes + 3 * XFER_LEN,
	       "cpu_bytes_counted_per_tier");

	/* FREE of the first tier's handle releases only the first tier's bytes. */
	tap_errno(svod_free(fd, a0.handle), 0, "free_first_tier_alloc");
	ret0 = svod_tier_by_id(fd, t0.id, &now0);
	ret1 = svod_tier_by_id(fd, t1.id, &now1);
	tap_ok(!ret0 && !ret1 && now0.free_bytes == t0.free_bytes && now0.nr_live == t0.nr_live &&
	       now1.free_bytes == t1.free_bytes - ALLOC_LEN && now1.nr_live == t1.nr_live + 1,
	       "free_releases_only_its_tier");
	/* The freed slot is likely reused here, now for the other tier. */
	ret1 = svod_alloc(fd, t1.id, ALLOC_LEN, 0, &c);
	rr0 = svod_resolve(fd, a0.handle, &r0);
	tap_ok(!ret1 && rr0 == -ESTALE && c.handle != a0.handle,
	       "freed_first_handle_never_resolves_as_second_tier_alloc (%s, %s)", ht_err(ret1),
	       ht_err(rr0));
	tap_errno(svod_free(fd, a0.handle), -ESTALE, "freed_first_handle_never_frees_second");
	rr0 = svod_resolve(fd, c.handle, &r0);
	rr1 = svod_resolve(fd, a1.handle, &r1);
	ret1 = svod_tier_by_id(fd, t1.id, &now1);
	tap_ok(!rr0 && !rr1 && !ret1 && r0.tier == t1.id && r1.tier == t1.id &&
	       now1.nr_live == t1.nr_live + 2 && still_holds(a1.handle, 0x5c) == 0,
	       "second_tier_allocs_intact_after_stale_calls");
	svod_free(fd, c.handle);
	tap_errno(svod_free(fd, a1.handle), 0, "free_second_tier_alloc");
	ret0 = svod_tier_by_id(fd, t0.id, &now0);
	ret1 = svod_tier_by_id(fd, t1.id, &now1);
	tap_ok(!ret0 && !ret1 && now0.free_bytes == t0.free_bytes &&
	       now1.free_bytes == t1.free_bytes && now0.nr_live == t0.nr_live &&
	       now1.nr_live == t1.nr_live,
	       "both_tiers_back_to_start");
}

static void test_unbind_second(void)
{
	char bdfs[4][SVOD_NAME_LEN], now[4096], name1[SVOD_NAME_LEN + 8];
	struct svod_alloc a1 = {}, a0 = {}, b;
	struct svod_tier_info t, back;
	struct svod_resolve r;
	uint8_t buf[16] = {};
	int ret, nr, i, has0 = 0, has1 = 0;

	ret = svod_alloc(fd, t1.id, ALLOC_LEN, 0, &a1);
	if (!ret)
		ret = roundtrip(a1.handle, 0x77);
	tap_errno(ret, 0, "second_tier_holds_allocation_before_unbind");
	tap_errno(svod_driver_bind(bdf1, 0), 0, "unbind_second_device");
	nr = svod_devices(bdfs, 4);
	for (i = 0; i < nr && i < 4; i++) {
		has0 |= !strcmp(bdfs[i], bdf0);
		has1 |= !strcmp(bdfs[i], bdf1);
	}
	tap_ok(has0 && !has1, "only_second_device_left_the_driver (%d bound)", nr);
	ret = svod_tier_by_id(fd, t1.id, &t);
	tap_ok(!ret && (t.flags & SVOD_TIER_GONE), "second_tier_listed_gone_while_held (%s)",
	       ht_err(ret));
	tap_errno(svod_alloc(fd, t1.id, 4096, 0, &b), -ENODEV, "alloc_on_second_tier_enodev");
	tap_errno(svod_resolve(fd, a1.handle, &r), -ENODEV, "resolve_second_tier_alloc_enodev");
	tap_errno(svod_stage(fd, a1.handle, 0, buf, sizeof(buf), SVOD_XFER_CPU, NULL), -ENODEV,
		  "stage_second_tier_alloc_enodev");

	ret = svod_tier_by_id(fd, t0.id, &t);
	tap_ok(!ret && !(t.flags & SVOD_TIER_GONE) && !strncmp(t.device, bdf0, SVOD_NAME_LEN),
	       "first_tier_still_present (%s, flags 0x%x)", ht_err(ret), ret ? 0 : t.flags);
	ret = svod_alloc(fd, t0.id, ALLOC_LEN, 0, &a0);
	if (!ret)
		ret = roundtrip(a0.handle, 0x3a);
	tap_errno(ret, 0, "first_tier_allocates_and_stages_after_second_unbind");
	if (!ret)
		svod_free(fd, a0.handle);

	tap_errno(svod_free(fd, a1.handle), 0, "free_on_gone_second_tier");
	tap_errno(svod_tier_by_id(fd, t1.id, &t), -ENOENT, "gone_second_tier_id_disappears");

	tap_errno(svod_driver_bind(bdf1, 1), 0, "rebind_second_device");
	default_name(bdf1, name1, sizeof(name1));
	ret = svod_tier_by_device(fd, bdf1, &back);
	tap_ok(!ret && !strncmp(back.name, name1, SVOD_NAME_LEN) && back.capacity == DEV1_BAR2 &&
	       back.free_bytes == DEV1_BAR2 && back.nr_live == 0 && back.id != t0.id,
	       "rebind_second_default_tier_back (%s, %.32s)", ht_err(ret), ret ? "" : back.name);
	if (svod_tiers_read(bdf1, now, sizeof(now)) < 0)
		now[0] = '\0';
	tap_ok(!strcmp(now, orig1), "rebound_second_declaration_as_before (%.*s)",
	       (int)strcspn(now, "\n"), now);
	ret = ret ? ret : svod_alloc(fd, back.id, ALLOC_LEN, 0, &b);
	tap_ok(!ret && in_tier(&back, &b) && roundtrip(b.handle, 0x42) == 0 &&
	       svod_free(fd, b.handle) == 0,
	       "rebound_second_tier_allocates_and_stages (%s)", ht_err(ret));
	if (!ret)
		t1 = back;
}

static void test_declare_second(void)
{
	char now[4096], text[512];
	struct svod_tier_info m0, m1, t;
	struct svod_alloc a0 = {}, b = {};
	struct svod_resolve r;
	int ret, held, r0, r1;

	held = svod_alloc(fd, t0.id, ALLOC_LEN, 0, &a0) == 0 && roundtrip(a0.handle, 0x29) == 0;

	snprintf(text, sizeof(text), "oversize bar=2 offset=0 size=0x%llx",
		 (unsigned long long)DEV1_BAR2 + 4096);
	tap_errno(svod_tiers_write(bdf1, text), -ERANGE,
		  "second_declaration_checked_against_its_own_bar_erange");
	tap_errno(svod_tiers_write(bdf1, "bar2 bar=2 offset=0 size=0x1000"), -EEXIST,
		  "second_declaration_name_of_first_device_eexist");

	ret = svod_tiers_write(bdf1, "m0 bar=2 offset=0 size=0x800000;"
				     "m1 bar=2 offset=0x800000 size=0x800000 base=0x800000 align=4096");
	tap_errno(ret, 0, "declare_two_tiers_on_second_device");
	r0 = svod_tier_by_name(fd, "m0", &m0);
	r1 = svod_tier_by_name(fd, "m1", &m1);
	tap_ok(!r0 && !r1 && !strncmp(m0.device, bdf1, SVOD_NAME_LEN) &&
	       !strncmp(m1.device, bdf1, SVOD_NAME_LEN) && m0.capacity == 0x800000 &&
	       m1.capacity == 0x800000 && m1.device_base == 0x800000 && m1.align == 4096 &&
	       present_tiers_of(bdf1) == 2,
	       "second_device_lists_its_declared_tiers (%s, %s)", ht_err(r0), ht_err(r1));
	tap_errno(svod_alloc(fd, t1.id, 4096, 0, &b), -ENOENT,
		  "second_default_tier_replaced_enoent");

	if (svod_tiers_read(bdf0, now, sizeof(now)) < 0)
		now[0] = '\0';
	ret = svod_tier_by_id(fd, t0.id, &t);
	tap_ok(held && !strcmp(now, orig0) && !ret && !(t.flags & SVOD_TIER_GONE) &&
	       t.nr_live == t0.nr_live + 1 && present_tiers_of(bdf0) == 1 &&
	       still_holds(a0.handle, 0x29) == 0,
	       "first_device_untouched_by_second_declaration (%s)", ht_err(ret));

	ret = r1 ? r1 : svod_alloc(fd, m1.id, ALLOC_LEN, 0, &b);
	r0 = ret ? ret : svod_resolve(fd, b.handle, &r);
	tap_ok(!ret && !r0 && r.tier == m1.id && in_tier(&m1, &b) && b.device_addr >= 0x800000 &&
	       roundtrip(b.handle, 0x6e) == 0,
	       "declared_second_device_tier_allocates_at_its_base (%s, 0x%llx)", ht_err(r0),
	       (unsigned long long)b.device_addr);
	tap_errno(svod_tiers_write(bdf1, orig1), -EBUSY, "second_redeclare_over_live_alloc_ebusy");
	if (!ret)
		svod_free(fd, b.handle);
	if (held)
		svod_free(fd, a0.handle);

	tap_errno(svod_tiers_write(bdf1, orig1), 0, "second_declaration_restored");
	if (svod_tiers_read(bdf1, now, sizeof(now)) < 0)
		now[0] = '\0';
	ret = svod_tier_by_device(fd, bdf1, &t);
	tap_ok(!strcmp(now, orig1) && !ret && t.capacity == DEV1_BAR2 &&
	       !strncmp(t.name, t1.name, SVOD_NAME_LEN) && present_tiers_of(bdf1) == 1,
	       "second_declaration_reads_back (%.*s)", (int)strcspn(now, "\n"), now);
	tap_errno(svod_tiers_read(bdf0, now, sizeof(now)) >= 0 && !strcmp(now, orig0) ? 0 : -EIO,
		  0, "first_declaration_still_original");
}

int main(void)
{
	char bdfs[4][SVOD_NAME_LEN];
	int nr, ret0, ret1;

	tap_plan(NR_CASES);
	fd = ht_open();
	nr = svod_devices(bdfs, 4);
	if (!tap_ok(fd >= 0 && nr >= 2, "two_devices_bound (fd %d, %d devices)", fd, nr))
		return tap_done();
	strcpy(bdf0, bdfs[0]);
	strcpy(bdf1, bdfs[1]);
	tap_diag("devices %s and %s", bdf0, bdf1);
	ret0 = svod_tier_by_device(fd, bdf0, &t0);
	ret1 = svod_tier_by_device(fd, bdf1, &t1);
	if (!tap_ok(!ret0 && !ret1, "query_lists_a_tier_of_each_device (%s, %s)", ht_err(ret0),
		    ht_err(ret1)))
		return tap_done();
	if (!tap_ok(svod_tiers_read(bdf0, orig0, sizeof(orig0)) >= 0 &&
		    svod_tiers_read(bdf1, orig1, sizeof(orig1)) >= 0,
		    "both_configfs_declarations_readable"))
		return tap_done();
	tap_diag("%s: %.*s", bdf0, (int)strcspn(orig0, "\n"), orig0);
	tap_diag("%s: %.*s", bdf1, (int)strcspn(orig1, "\n"), orig1);

	test_listing();
	test_alloc_and_stage();
	test_unbind_second();
	test_declare_second();
	svod_close(fd);
	/* Live tiers are back as they were: forget the declarations made. */
	ht_undeclare_all();
	return tap_done();
}
