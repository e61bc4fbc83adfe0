// SPDX-License-Identifier: GPL-2.0
/*
 * t_ioctl: every ioctl of /dev/svod, happy paths and each error path with
 * its exact errno (Documentation/uapi.rst): unknown flags, nonzero pad,
 * wrong size or direction, unknown command, bad pointers, structs at the end
 * of a mapped page, size and alignment rules, unknown tier, stale and forged
 * handles, per-file caps, scrubbing, release on close.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common.h"
#include "tap.h"

#define NR_CASES	94

struct ioc {
	const char *name;
	unsigned long cmd;
};

static const struct ioc iocs[] = {
	{ "query", SVOD_IOCTL_QUERY },
	{ "alloc", SVOD_IOCTL_ALLOC },
	{ "free", SVOD_IOCTL_FREE },
	{ "resolve", SVOD_IOCTL_RESOLVE },
	{ "stage", SVOD_IOCTL_STAGE },
	{ "read", SVOD_IOCTL_READ },
	{ "plan", SVOD_IOCTL_PLAN },
};

static int fd = -1;
static struct svod_tier_info tier;

static uint64_t tier_free(void)
{
	uint64_t f = 0;

	ht_tier_usage(fd, tier.id, &f, NULL);
	return f;
}

static uint32_t tier_live(void)
{
	uint32_t n = 0;

	ht_tier_usage(fd, tier.id, NULL, &n);
	return n;
}

static int is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

static void test_query(void)
{
	struct svod_tier_info arr[2];
	struct svod_query q = {};
	int ret, sane;

	ret = svod_query(fd, &q);
	tap_ok(ret == 0 && q.abi_version == SVOD_ABI_VERSION && q.nr_tiers >= 1,
	       "query_count_only (abi %u, %u tiers, ret %d)", q.abi_version,
	       q.nr_tiers, ret);

	memset(arr, 0xa5, sizeof(arr));
	q = (struct svod_query){ .nr_tiers = 1, .tiers_ptr = (uintptr_t)arr };
	ret = svod_query(fd, &q);
	tap_ok(ret == 0 && q.nr_tiers >= 1 && arr[0].capacity != 0xa5a5a5a5a5a5a5a5ULL &&
	       arr[1].id == 0xa5a5a5a5U, "query_fills_min_in_out");

	sane = tier.capacity > 0 && is_pow2(tier.align) &&
	       tier.free_bytes <= tier.capacity &&
	       tier.largest_free <= tier.free_bytes &&
	       tier.reserved_bytes <= tier.capacity &&
	       memchr(tier.name, 0, SVOD_NAME_LEN) && tier.name[0] &&
	       memchr(tier.device, 0, SVOD_NAME_LEN) && tier.device[0] &&
	       tier.first_reserved == 0 && !(tier.flags & ~SVOD_TIER_GONE) &&
	       tier.nr_reserved == 0 && tier.nr_live == 0 &&
	       tier.free_bytes + tier.reserved_bytes == tier.capacity;
	tap_ok(sane, "query_tier_record_sane (%s on %s: base 0x%llx cap 0x%llx align %llu)",
	       tier.name, tier.device, (unsigned long long)tier.device_base,
	       (unsigned long long)tier.capacity, (unsigned long long)tier.align);
}

static void test_alloc_happy(void)
{
	uint64_t before = tier_free();
	struct svod_resolve r;
	struct svod_alloc a = {};
	int ret, ok;

	ret = svod_alloc(fd, tier.id, 4096, 0, &a);
	ok = ret == 0 && a.handle != 0 && a.capacity == 4096 &&
	     a.device_addr >= tier.device_base &&
	     a.device_addr + 4096 <= tier.device_base + tier.capacity &&
	     a.device_addr % tier.align == 0;
	tap_ok(ok, "alloc_happy (ret %d, addr 0x%llx)", ret,
	       (unsigned long long)a.device_addr);
	tap_ok(tier_free() == before - 4096 && tier_live() == 1,
	       "alloc_accounts_free_bytes_and_live");

	ret = svod_resolve(fd, a.handle, &r);
	tap_ok(ret == 0 && r.tier == tier.id && r.device_addr == a.device_addr &&
	       r.capacity == 4096 && r.flags == 0, "resolve_happy");

	tap_errno(svod_free(fd, a.handle), 0, "free_happy");
	tap_ok(tier_free() == before && tier_live() == 0, "free_returns_bytes");
}

static void test_alloc_align(void)
{
	struct svod_alloc a = {};
	int ret;

	ret = svod_alloc(fd, tier.id, 4096, 1 << 20, &a);
	tap_ok(ret == 0 && a.device_addr % (1 << 20) == 0,
	       "alloc_align_1m_honoured (ret %d, addr 0x%llx)", ret,
	       (unsigned long long)a.device_addr);
	if (!ret)
		svod_free(fd, a.handle);

	ret = svod_alloc(fd, tier.id, 100, 1, &a);
	tap_ok(ret == 0 && a.device_addr % tier.align == 0 && a.capacity == 100,
	       "alloc_align_below_tier_align_uses_tier_align");
	if (!ret)
		svod_free(fd, a.handle);
}

static void test_alloc_errors(void)
{
	struct svod_tier_info *tiers;
	struct svod_alloc a = {};
	uint32_t nr = 0, i, max_id = 0;
	uint64_t before = tier_free();

	tap_errno(svod_alloc(fd, tier.id, 0, 0, &a), -EINVAL, "alloc_size_zero_einval");
	tap_errno(svod_alloc(fd, tier.id, 4096, 3, &a), -EINVAL, "alloc_align_3_einval");
	tap_errno(svod_alloc(fd, tier.id, 4096, 96, &a), -EINVAL, "alloc_align_96_einval");
	tap_errno(svod_alloc(fd, tier.id, 4096, (1ULL << 63) | 1, &a), -EINVAL,
		  "alloc_align_top_bit_plus_one_einval");

	if (!svod_query_all(fd, &tiers, &nr)) {
		for (i = 0; i < nr; i++)
			if (tiers[i].id > max_id)
				max_id = tiers[i].id;
		free(tiers);
	}
	tap_errno(svod_alloc(fd, max_id + 1, 4096, 0, &a), -ENOENT,
		  "alloc_unknown_tier_enoent");
	tap_errno(svod_alloc(fd, UINT32_MAX, 4096, 0, &a), -ENOENT,
		  "alloc_tier_u32_max_enoent");
	tap_errno(svod_alloc(fd, tier.id, tier.capacity + 1, 0, &a), -ENOSPC,
		  "alloc_beyond_tier_enospc");
	tap_errno(svod_alloc(fd, tier.id, (1ULL << 32) + 4096, 0, &a), -ENOSPC,
		  "alloc_4g_plus_4k_enospc_no_truncation");
	tap_errno(svod_alloc(fd, tier.id, UINT64_MAX, 0, &a), -ENOSPC,
		  "alloc_u64_max_enospc");
	tap_errno(svod_alloc(fd, tier.id, UINT64_MAX - 4095, 4096, &a), -ENOSPC,
		  "alloc_size_rounding_overflow_enospc");
	tap_ok(tier_free() == before && tier_live() == 0,
	       "alloc_errors_leave_tier_unchanged");
}

static void test_alloc_fill(void)
{
	struct svod_tier_info t;
	struct svod_alloc a = {}, b = {};
	int ret;

	svod_tier_by_id(fd, tier.id, &t);
	ret = svod_alloc(fd, tier.id, t.largest_free, 0, &a);
	tap_errno(ret, 0, "alloc_largest_free_span");
	tap_errno(svod_alloc(fd, tier.id, tier.align, 0, &b), -ENOSPC,
		  "alloc_in_full_tier_enospc");
	if (!ret)
		svod_free(fd, a.handle);
}

/* Calls with every field valid except the one under test. */
static void test_flags_and_pad(void)
{
	struct svod_query q = {};
	struct svod_alloc a = {}, live = {};
	struct svod_free f = {};
	struct svod_resolve r = {};
	struct svod_xfer x = {};
	struct svod_plan p = {};
	struct svod_plan_event ev = { .op = SVOD_PLAN_ALLOC, .id = 1, .size = 256 };
	uint64_t off = 0;
	char buf[64] = {};

	q.flags = 1;
	tap_errno(svod_query(fd, &q), -EINVAL, "query_flags_bit0_einval");
	q.flags = 1U << 31;
	tap_errno(svod_query(fd, &q), -EINVAL, "query_flags_bit31_einval");
	q = (struct svod_query){ .pad = 1 };
	tap_errno(svod_query(fd, &q), -EINVAL, "query_nonzero_pad_einval");

	/* Bit 0 is SVOD_ALLOC_MAPPABLE: bit 1 is the first unknown one. */
	a = (struct svod_alloc){ .tier = tier.id, .size = 4096, .flags = 2 };
	tap_errno(svod_ioctl(fd, SVOD_IOCTL_ALLOC, &a), -EINVAL, "alloc_flags_bit1_einval");
	a.flags = 1U << 31;
	tap_errno(svod_ioctl(fd, SVOD_IOCTL_ALLOC, &a), -EINVAL, "alloc_flags_bit31_einval");

	if (svod_alloc(fd, tier.id, 4096, 0, &live))
		tap_diag("setup alloc failed");
	f = (struct svod_free){ .handle = live.handle, .flags = 1U << 31 };
	tap_errno(svod_ioctl(fd, SVOD_IOCTL_FREE, &f), -EINVAL, "free_flags_einval");
	f = (struct svod_free){ .handle = live.handle, .pad = 1 };
	tap_errno(svod_ioctl(fd, SVOD_IOCTL_FREE, &f), -EINVAL, "free_nonzero_pad_einval");
	r = (struct svod_resolve){ .handle = live.handle, .flags = 1 };
	tap_errno(svod_ioctl(fd, SVOD_IOCTL_RESOLVE, &r), -EINVAL, "resolve_flags_einval");
	tap_errno(svod_resolve(fd, live.handle, &r), 0,
		  "handle_survives_rejected_free_and_resolve");

	x = (struct svod_xfer){ .handle = live.handle, .user_ptr = (uintptr_t)buf,
				.length = sizeof(buf), .flags = 1U << 31 };
	tap_errno(svod_ioctl(fd, SVOD_IOCTL_STAGE, &x), -EINVAL, "stage_unknown_flag_einval");
	x.flags = SVOD_XFER_CPU | SVOD_XFER_DMA;
	tap_errno(svod_ioctl(fd, SVOD_IOCTL_STAGE, &x), -EINVAL, "stage_both_engines_einval");
	x.flags = 0;
	x.pad = 1;
	tap_errno(svod_ioctl(fd, SVOD_IOCTL_STAGE, &x), -EINVAL, "stage_nonzero_pad_einval");
	x.pad = 0;
	x.flags = 1U << 31;
	tap_errno(svod_ioctl(fd, SVOD_IOCTL_READ, &x), -EINVAL, "read_unknown_flag_einval");
	x.flags = 0;
	x.pad = 1;
	tap_errno(svod_ioctl(fd, SVOD_IOCTL_READ, &x), -EINVAL, "read_nonzero_pad_einval");
	svod_free(fd, live.handle);

	p = (struct svod_plan){ .arena_size = 1 << 20, .block_size = 256, .lv2_cnt = 32,
				.nr_events = 1, .events_ptr = (uintptr_t)&ev,
				.offsets_ptr = (uintptr_t)&off, .flags = 1 };
	tap_errno(svod_plan(fd, &p), -EINVAL, "plan_flags_einval");
}

static void test_bad_commands(void)
{
	char buf[512] = {};

	/* Sizes other than the header's: t_abi. */
	((struct svod_alloc *)buf)->tier = tier.id;
	((struct svod_alloc *)buf)->size = 4096;
	tap_errno(svod_ioctl(fd, _IOW(SVOD_IOCTL_MAGIC, 0x01, struct svod_alloc), buf),
		  -ENOTTY, "alloc_iow_direction_enotty");
	tap_errno(svod_ioctl(fd, _IOR(SVOD_IOCTL_MAGIC, 0x01, struct svod_alloc), buf),
		  -ENOTTY, "alloc_ior_direction_enotty");
	tap_errno(svod_ioctl(fd, _IO(SVOD_IOCTL_MAGIC, 0x01), buf), -ENOTTY,
		  "alloc_io_no_data_enotty");
	memset(buf, 0, sizeof(buf));
	tap_errno(svod_ioctl(fd, _IOWR(SVOD_IOCTL_MAGIC, 0x02, struct svod_free), buf),
		  -ENOTTY, "free_iowr_direction_enotty");
	/* 0x0c: the first number past BATCH's. */
	tap_errno(svod_ioctl(fd, _IOWR(SVOD_IOCTL_MAGIC, 0x0c, struct svod_xfer), buf),
		  -ENOTTY, "unknown_nr_12_enotty");
	tap_errno(svod_ioctl(fd, _IOWR(SVOD_IOCTL_MAGIC, 0xff, struct svod_query), buf),
		  -ENOTTY, "unknown_nr_255_enotty");
	tap_errno(svod_ioctl(fd, _IOWR(SVOD_IOCTL_MAGIC + 1, 0x00, struct svod_query), buf),
		  -ENOTTY, "other_magic_enotty");
	tap_errno(svod_ioctl(fd, 0, buf), -ENOTTY, "command_zero_enotty");
}

static void test_bad_pointers(void)
{
	struct svod_query q = {};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(iocs); i++)
		tap_errno(svod_ioctl(fd, iocs[i].cmd, NULL), -EFAULT,
			  "%s_null_arg_efault", iocs[i].name);
	tap_errno(svod_ioctl(fd, SVOD_IOCTL_ALLOC, (void *)16), -EFAULT,
		  "alloc_low_pointer_efault");
	tap_errno(svod_ioctl(fd, SVOD_IOCTL_QUERY, (void *)0xffffffff81000000UL),
		  -EFAULT, "query_kernel_pointer_efault");

	q.nr_tiers = 1;
	tap_errno(svod_query(fd, &q), -EFAULT, "query_tiers_ptr_zero_with_count_efault");
	q = (struct svod_query){ .nr_tiers = 1, .tiers_ptr = 4096 };
	tap_errno(svod_query(fd, &q), -EFAULT, "query_tiers_ptr_unmapped_efault");
	q = (struct svod_query){ .nr_tiers = 1, .tiers_ptr = 0xffff888000000000ULL };
	tap_errno(svod_query(fd, &q), -EFAULT, "query_tiers_ptr_kernel_efault");
}

/* Structs that end exactly at a PROT_NONE page work; one byte more faults. */
static void test_page_end(void)
{
	struct svod_alloc *a, live = {};
	struct svod_free *f;
	struct svod_resolve *r;
	struct svod_query *q;
	struct svod_tier_info *ti;
	struct svod_xfer *x;
	uint32_t live_before;
	size_t ps;
	char *page, *end;
	int ret;

	page = ht_guarded_page(&ps);
	if (!page) {
		tap_diag("guard page: mmap failed");
		return;
	}
	end = page + ps;
	live_before = tier_live();

	a = (struct svod_alloc *)(end - sizeof(*a));
	*a = (struct svod_alloc){ .tier = tier.id, .size = 4096 };
	ret = svod_ioctl(fd, SVOD_IOCTL_ALLOC, a);
	tap_ok(ret == 0 && a->capacity == 4096, "alloc_struct_at_page_end_works");
	live = *a;

	a = (struct svod_alloc *)(end - sizeof(*a) + 8);
	memset(a, 0, sizeof(*a) - 8);
	a->tier = tier.id;
	a->size = 4096;
	tap_errno(svod_ioctl(fd, SVOD_IOCTL_ALLOC, a), -EFAULT,
		  "alloc_struct_crossing_page_efault");
	tap_ok(tier_live() == live_before + 1, "alloc_crossing_allocates_nothing");

	r = (struct svod_resolve *)(end - sizeof(*r));
	*r = (struct svod_resolve){ .handle = live.handle };
	ret = svod_ioctl(fd, SVOD_IOCTL_RESOLVE, r);
	tap_ok(ret == 0 && r->device_addr == live.device_addr,
	       "resolve_struct_at_page_end_works");
	r = (struct svod_resolve *)(end - sizeof(*r) + 8);
	r->handle = live.handle;
	r->flags = 0;
	tap_errno(svod_ioctl(fd, SVOD_IOCTL_RESOLVE, r), -EFAULT,
		  "resolve_struct_crossing_page_efault");

	x = (struct svod_xfer *)(end - sizeof(*x) + 8);
	memset(x, 0, sizeof(*x) - 8);
	x->handle = live.handle;
	tap_errno(svod_ioctl(fd, SVOD_IOCTL_STAGE, x), -EFAULT,
		  "stage_struct_crossing_page_efault");

	f = (struct svod_free *)(end - sizeof(*f) + 8);
	f->handle = live.handle;
	tap_errno(svod_ioctl(fd, SVOD_IOCTL_FREE, f), -EFAULT,
		  "free_struct_crossing_page_efault");
	f = (struct svod_free *)(end - sizeof(*f));
	*f = (struct svod_free){ .handle = live.handle };
	tap_errno(svod_ioctl(fd, SVOD_IOCTL_FREE, f), 0,
		  "free_struct_at_page_end_works_after_crossing_refused");

	q = (struct svod_query *)(end - sizeof(*q));
	*q = (struct svod_query){};
	tap_errno(svod_query(fd, q), 0, "query_struct_at_page_end_works");
	q = (struct svod_query *)(end - sizeof(*q) + 8);
	memset(q, 0, sizeof(*q) - 8);
	tap_errno(svod_query(fd, q), -EFAULT, "query_struct_crossing_page_efault");

	ti = (struct svod_tier_info *)(end - sizeof(*ti));
	q = (struct svod_query *)page;
	*q = (struct svod_query){ .nr_tiers = 1, .tiers_ptr = (uintptr_t)ti };
	ret = svod_query(fd, q);
	tap_ok(ret == 0 && ti->capacity != 0, "query_array_at_page_end_works");
	ti = (struct svod_tier_info *)(end - sizeof(*ti) + 8);
	*q = (struct svod_query){ .nr_tiers = 1, .tiers_ptr = (uintptr_t)ti };
	tap_errno(svod_query(fd, q), -EFAULT, "query_array_crossing_page_efault");

	/* A readable struct whose reply cannot be written: nothing may stay allocated. */
	a = (struct svod_alloc *)page;
	*a = (struct svod_alloc){ .tier = tier.id, .size = 4096 };
	mprotect(page, ps, PROT_READ);
	tap_errno(svod_ioctl(fd, SVOD_IOCTL_ALLOC, a), -EFAULT,
		  "alloc_readonly_struct_efault");
	tap_ok(tier_live() == live_before, "alloc_readonly_struct_allocates_nothing");
	ht_unguard_page(page, ps);
}

static void test_stale(void)
{
	struct svod_alloc a = {}, b = {};
	struct svod_resolve r;
	unsigned int bit, bad = 0;
	int ret;

	svod_alloc(fd, tier.id, 4096, 0, &a);
	tap_errno(svod_free(fd, a.handle), 0, "stale_setup_free");
	tap_errno(svod_free(fd, a.handle), -ESTALE, "double_free_estale");
	tap_errno(svod_resolve(fd, a.handle, &r), -ESTALE, "resolve_after_free_estale");

	ret = svod_alloc(fd, tier.id, 4096, 0, &b);
	tap_ok(ret == 0 && b.handle != a.handle && svod_resolve(fd, a.handle, &r) == -ESTALE &&
	       svod_resolve(fd, b.handle, &r) == 0,
	       "reused_storage_old_handle_estale (old 0x%llx new 0x%llx)",
	       (unsigned long long)a.handle, (unsigned long long)b.handle);

	tap_errno(svod_resolve(fd, 0, &r), -ESTALE, "resolve_handle_zero_estale");
	tap_errno(svod_free(fd, UINT64_MAX), -ESTALE, "free_handle_all_ones_estale");
	tap_errno(svod_resolve(fd, 0x123456789abcdef0ULL, &r), -ESTALE,
		  "resolve_never_issued_estale");

	for (bit = 0; bit < 64; bit++) {
		ret = svod_resolve(fd, b.handle ^ (1ULL << bit), &r);
		if (ret != -ESTALE) {
			tap_diag("handle ^ bit %u resolved with %d", bit, ret);
			bad++;
		}
		ret = svod_free(fd, b.handle ^ (1ULL << bit));
		if (ret != -ESTALE) {
			tap_diag("free(handle ^ bit %u) returned %d", bit, ret);
			bad++;
		}
	}
	tap_ok(bad == 0 && svod_resolve(fd, b.handle, &r) == 0,
	       "forged_bitflips_estale_and_original_survives");
	svod_free(fd, b.handle);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void test_generations(void)
{
	enum { CYCLES = 500 };
	uint64_t *h = calloc(CYCLES, sizeof(*h));
	struct svod_resolve r;
	struct svod_alloc a;
	unsigned int i, errs = 0, dups = 0, steps = 0;
	uint32_t id = 0, gen = 0;

	for (i = 0; h && i < CYCLES; i++) {
		if (svod_alloc(fd, tier.id, 64, 0, &a) || svod_free(fd, a.handle)) {
			errs++;
			continue;
		}
		h[i] = a.handle;
		/* The freed id comes back first, each time one generation on. */
		steps += i && (a.id != id || a.generation != gen + 1);
		id = a.id;
		gen = a.generation;
	}
	tap_ok(h && errs == 0 && steps == 0,
	       "alloc_reports_the_freed_id_again_one_generation_on (%u of %u cycles not)",
	       steps, CYCLES);
	for (i = 0; h && i < CYCLES; i += 50)
		if (svod_resolve(fd, h[i], &r) != -ESTALE)
			errs++;
	if (h) {
		qsort(h, CYCLES, sizeof(*h), cmp_u64);
		for (i = 1; i < CYCLES; i++)
			dups += h[i] == h[i - 1];
	}
	tap_ok(h && errs == 0 && dups == 0,
	       "alloc_free_cycles_never_repeat_a_handle (%u cycles, %u errors, %u repeats)",
	       CYCLES, errs, dups);
	free(h);
}

static void test_many_handles(void)
{
	enum { N = 1000 };
	struct svod_alloc *a = calloc(N, sizeof(*a));
	uint64_t before = tier_free();
	struct svod_resolve r;
	unsigned int i, errs = 0;

	for (i = 0; a && i < N; i++)
		errs += svod_alloc(fd, tier.id, 64, 0, &a[i]) != 0;
	for (i = 0; a && i < N; i++)
		errs += svod_resolve(fd, a[i].handle, &r) != 0 ||
			r.device_addr != a[i].device_addr;
	tap_ok(a && errs == 0 && tier_live() == N, "thousand_live_handles_resolve (%u errors)",
	       errs);
	for (i = 0; a && i < N; i++)
		svod_free(fd, a[i].handle);
	tap_ok(tier_free() == before && tier_live() == 0, "thousand_freed_bytes_back");
	free(a);
}

static void test_close_releases(void)
{
	uint64_t before = tier_free();
	struct svod_alloc a;
	int fd2, i, errs = 0;

	fd2 = ht_open();
	for (i = 0; i < 3; i++)
		errs += svod_alloc(fd2, tier.id, 1 << 16, 0, &a) != 0;
	tap_ok(fd2 >= 0 && errs == 0 && tier_free() == before - 3 * (1 << 16),
	       "second_file_allocations_counted");
	tap_errno(svod_close(fd2), 0, "close_with_live_allocations");
	tap_ok(tier_free() == before && tier_live() == 0, "close_releases_every_allocation");
}

static void test_scrub(void)
{
	static unsigned char pat[4096], back[4096];
	struct svod_alloc a = {}, b = {};
	unsigned int i, dirty = 0;
	int ret;

	memset(pat, 0xa5, sizeof(pat));
	ret = svod_alloc(fd, tier.id, sizeof(pat), 0, &a);
	if (!ret)
		ret = svod_stage(fd, a.handle, 0, pat, sizeof(pat), SVOD_XFER_CPU, NULL);
	if (!ret)
		ret = svod_free(fd, a.handle);
	if (!ret)
		ret = svod_alloc(fd, tier.id, sizeof(pat), 0, &b);
	memset(back, 0x5a, sizeof(back));
	if (!ret)
		ret = svod_read(fd, b.handle, 0, back, sizeof(back), SVOD_XFER_CPU, NULL);
	for (i = 0; i < sizeof(back); i++)
		dirty += back[i] != 0;
	tap_ok(ret == 0 && dirty == 0,
	       "reallocated_memory_reads_zero (ret %d, same addr %d, %u dirty bytes)",
	       ret, a.device_addr == b.device_addr, dirty);
	if (b.handle)
		svod_free(fd, b.handle);
}

static int set_param(const char *name, uint64_t val, uint64_t *old)
{
	int ret = svod_param_read(name, old);

	return ret ? ret : svod_param_write(name, val);
}

static void test_caps(void)
{
	struct svod_alloc a[9], extra;
	uint64_t old, val = 1;
	unsigned int i, errs = 0;
	int fd2, ret;

	tap_ok(svod_param_read("max_handles", &val) == 0 && val == 65536,
	       "param_max_handles_default_65536 (%llu)", (unsigned long long)val);
	ret = set_param("max_handles", 8, &old);
	if (ret) {
		tap_skip(svod_errno_name(ret), "max_handles_cap_emfile");
		tap_skip(svod_errno_name(ret), "max_handles_free_makes_room");
	} else {
		fd2 = ht_open();
		for (i = 0; i < 8; i++)
			errs += svod_alloc(fd2, tier.id, 64, 0, &a[i]) != 0;
		ret = svod_alloc(fd2, tier.id, 64, 0, &a[8]);
		tap_ok(errs == 0 && ret == -EMFILE,
		       "max_handles_cap_emfile (%u errors, ninth %s)", errs,
		       svod_errno_name(ret));
		svod_free(fd2, a[3].handle);
		tap_errno(svod_alloc(fd2, tier.id, 64, 0, &extra), 0,
			  "max_handles_free_makes_room");
		svod_close(fd2);
		svod_param_write("max_handles", old);
	}

	val = 1;
	tap_ok(svod_param_read("max_bytes", &val) == 0 && val == 0,
	       "param_max_bytes_default_0 (%llu)", (unsigned long long)val);
	ret = set_param("max_bytes", 1 << 16, &old);
	if (ret) {
		tap_skip(svod_errno_name(ret), "max_bytes_cap_edquot");
		tap_skip(svod_errno_name(ret), "max_bytes_free_makes_room");
	} else {
		fd2 = ht_open();
		errs = svod_alloc(fd2, tier.id, 1 << 15, 0, &a[0]) != 0;
		errs += svod_alloc(fd2, tier.id, 1 << 15, 0, &a[1]) != 0;
		ret = svod_alloc(fd2, tier.id, 64, 0, &a[2]);
		tap_ok(errs == 0 && ret == -EDQUOT, "max_bytes_cap_edquot (%u errors, %s)",
		       errs, svod_errno_name(ret));
		svod_free(fd2, a[0].handle);
		tap_errno(svod_alloc(fd2, tier.id, 1 << 15, 0, &extra), 0,
			  "max_bytes_free_makes_room");
		svod_close(fd2);
		svod_param_write("max_bytes", old);
	}
}

int main(void)
{
	int ret;

	tap_plan(NR_CASES);
	fd = ht_open();
	if (fd < 0) {
		tap_diag("open /dev/svod: %s", svod_errno_name(fd));
		return tap_done();
	}
	ret = ht_first_tier(fd, &tier);
	if (ret) {
		tap_diag("no tier: %s", svod_errno_name(ret));
		if (!getenv("SVOD_DEV"))
			return tap_done();
	}
	test_query();
	test_alloc_happy();
	test_alloc_align();
	test_alloc_errors();
	test_alloc_fill();
	test_flags_and_pad();
	test_bad_commands();
	test_bad_pointers();
	test_page_end();
	test_stale();
	test_generations();
	test_many_handles();
	test_close_releases();
	test_scrub();
	test_caps();
	svod_close(fd);
	return tap_done();
}
