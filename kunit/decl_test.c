// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: svod_decl, the parts of tier declaration that stay in the kernel:
 * a value written to configfs (svod_number's grammar plus one newline),
 * tier names, the canonical order of reserved regions, comparing
 * declarations, and checking a tier set against a device's BARs. Pure
 * helpers: no device, no configfs.
 */
#include <kunit/test.h>
#include <linux/string.h>

#include "configfs.h"
#include "dev.h"
#include "svod_test.h"
#include "tier.h"

#define SZ_BAR2	(64ULL << 20)

/* BAR lengths of an ivshmem-plain: registers in BAR 0, memory in BAR 2. */
static const u64 ivshmem_bars[PCI_STD_NUM_BARS] = { 256, 0, SZ_BAR2 };

/* The grammar is svod_number's; configfs adds only echo's one newline. */
static void parse_u64_one_trailing_newline(struct kunit *test)
{
	static const struct {
		const char *text;
		u64 val;
		int err;
	} newline_cases[] = {
		{ "4096\n", 4096, 0 },
		{ "16m\n", 16ULL << 20, 0 },
		{ "1MiB\n", 1ULL << 20, 0 },
		{ "0x1E\n", 0x1e, 0 },
		{ "1MiB", 1ULL << 20, 0 },
		{ "\n", 0, -EINVAL },
		{ "1M\n\n", 0, -EINVAL },
		{ "\n1M", 0, -EINVAL },
		{ "1MB\n", 0, -EINVAL },
		{ "010\n", 0, -EINVAL },
		{ "16E\n", 0, -ERANGE },
	};
	unsigned int i;
	u64 val, want;

	for (i = 0; i < ARRAY_SIZE(newline_cases); i++) {
		val = 0xdead;
		want = newline_cases[i].err ? val : newline_cases[i].val;
		KUNIT_EXPECT_EQ_MSG(test, svod_decl_parse_u64(newline_cases[i].text, &val),
				    newline_cases[i].err, "\"%s\"", newline_cases[i].text);
		KUNIT_EXPECT_EQ_MSG(test, val, want, "\"%s\"", newline_cases[i].text);
	}
}

static void name_valid_chars_and_length(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, svod_tier_name_valid("bar2"));
	KUNIT_EXPECT_TRUE(test, svod_tier_name_valid("hbm_0.fast-1"));
	KUNIT_EXPECT_TRUE(test, svod_tier_name_valid("abcdefghijabcdefghijabcdefghij_"));
	KUNIT_EXPECT_FALSE(test, svod_tier_name_valid(""));
	KUNIT_EXPECT_FALSE(test, svod_tier_name_valid("abcdefghijabcdefghijabcdefghijab"));
	KUNIT_EXPECT_FALSE(test, svod_tier_name_valid("t/x"));
	KUNIT_EXPECT_FALSE(test, svod_tier_name_valid("t:x"));
	KUNIT_EXPECT_FALSE(test, svod_tier_name_valid("t x"));
	KUNIT_EXPECT_FALSE(test, svod_tier_name_valid("t\n"));
}

/* A declaration's directory is named exactly as pci_name() names a device. */
static void pci_name_only_as_the_kernel_spells_it(struct kunit *test)
{
	static const char *const bad[] = {
		"", "svod", "0000:00:04", "0000:00:04.0x", "0000:00:0A.0", "00:04.0",
		"0:00:04.0", "0000:00:20.0", "0000:00:04.8", "0000:100:04.0",
		"0000:00:04.0\n", " 0000:00:04.0", "+000:00:04.0",
	};
	unsigned int i;

	KUNIT_EXPECT_TRUE(test, svod_decl_pci_name_valid("0000:00:04.0"));
	KUNIT_EXPECT_TRUE(test, svod_decl_pci_name_valid("0000:ff:1f.7"));
	KUNIT_EXPECT_TRUE(test, svod_decl_pci_name_valid("10000:00:00.0"));
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		KUNIT_EXPECT_FALSE_MSG(test, svod_decl_pci_name_valid(bad[i]), "\"%s\"", bad[i]);
}

static struct svod_tier_spec spec(const char *name, unsigned int bar,
				  u64 offset, u64 size)
{
	struct svod_tier_spec s = {
		.bar = bar,
		.offset = offset,
		.size = size,
		.align = SVOD_DEFAULT_ALIGN,
		.access.mode = SVOD_TIER_DEFAULT_MODE,
	};

	strscpy(s.name, name, sizeof(s.name));
	return s;
}

static void add_region(struct svod_tier_spec *s, u64 base, u64 size)
{
	s->reserved[s->nr_reserved].base = base;
	s->reserved[s->nr_reserved].size = size;
	s->nr_reserved++;
}

static void sort_reserved_by_base_then_size(struct kunit *test)
{
	struct svod_tier_spec a = spec("a", 2, 0, 0x10000);
	struct svod_tier_spec b = spec("a", 2, 0, 0x10000);

	add_region(&a, 0x8000, 0x100);
	add_region(&a, 0x1000, 0x40);
	add_region(&a, 0x1000, 0x20);
	add_region(&b, 0x1000, 0x20);
	add_region(&b, 0x8000, 0x100);
	add_region(&b, 0x1000, 0x40);
	KUNIT_EXPECT_FALSE(test, svod_tier_spec_equal(&a, &b));
	svod_tier_spec_sort_reserved(&a);
	svod_tier_spec_sort_reserved(&b);
	KUNIT_EXPECT_TRUE(test, svod_tier_spec_equal(&a, &b));
	KUNIT_EXPECT_EQ(test, a.reserved[0].base, 0x1000ULL);
	KUNIT_EXPECT_EQ(test, a.reserved[0].size, 0x20ULL);
	KUNIT_EXPECT_EQ(test, a.reserved[1].size, 0x40ULL);
	KUNIT_EXPECT_EQ(test, a.reserved[2].base, 0x8000ULL);
}

static void equal_any_field_differs(struct kunit *test)
{
	struct svod_tier_spec a = spec("a", 2, 0, 4096), *s;
	unsigned int i, nr = 8;

	s = kunit_kcalloc(test, nr, sizeof(*s), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	add_region(&a, 0, 64);
	for (i = 0; i < nr; i++)
		s[i] = a;
	strscpy(s[1].name, "b", sizeof(s[1].name));
	s[2].reserved[0].size = 128;
	s[3].nr_reserved = 0;
	s[4].offset = 64;
	s[5].base = 64;
	s[6].align = 128;
	s[7].bar = 0;
	KUNIT_EXPECT_TRUE(test, svod_tier_spec_equal(&a, &s[0]));
	for (i = 1; i < nr; i++)
		KUNIT_EXPECT_FALSE_MSG(test, svod_tier_spec_equal(&a, &s[i]),
				       "declaration %u", i);
}

/* Checks a set; returns the errno, and the offending index in *bad. */
static int check(struct kunit *test, const struct svod_tier_spec *s,
		 unsigned int nr, unsigned int *bad)
{
	const char *why = NULL;
	int ret;

	*bad = ~0U;
	ret = svod_tier_spec_check(s, nr, ivshmem_bars, &why, bad);
	if (ret)
		KUNIT_EXPECT_NOT_NULL(test, why);
	return ret;
}

static void check_default_tier_ok(struct kunit *test)
{
	struct svod_tier_spec s = spec("bar2", 2, 0, SZ_BAR2);
	unsigned int bad;

	KUNIT_EXPECT_EQ(test, check(test, &s, 1, &bad), 0);
	KUNIT_EXPECT_EQ(test, check(test, &s, 0, &bad), 0);
}

static void check_not_memory_bar_einval(struct kunit *test)
{
	struct svod_tier_spec s[2] = { spec("a", 2, 0, 64), spec("b", 1, 0, 64) };
	unsigned int bad;

	KUNIT_EXPECT_EQ(test, check(test, s, 2, &bad), -EINVAL);
	KUNIT_EXPECT_EQ(test, bad, 1U);
	s[0].bar = 6;
	KUNIT_EXPECT_EQ(test, check(test, s, 1, &bad), -EINVAL);
	KUNIT_EXPECT_EQ(test, bad, 0U);
}

static void check_outside_bar_erange(struct kunit *test)
{
	struct svod_tier_spec s;
	unsigned int bad;

	s = spec("a", 2, 0, SZ_BAR2 + 1);
	KUNIT_EXPECT_EQ(test, check(test, &s, 1, &bad), -ERANGE);
	s = spec("a", 2, SZ_BAR2, 1);
	KUNIT_EXPECT_EQ(test, check(test, &s, 1, &bad), -ERANGE);
	s = spec("a", 0, 128, 129);
	KUNIT_EXPECT_EQ(test, check(test, &s, 1, &bad), -ERANGE);
	/* offset + size wraps around u64 */
	s = spec("a", 2, U64_MAX, 2);
	KUNIT_EXPECT_EQ(test, check(test, &s, 1, &bad), -ERANGE);
	s = spec("a", 2, SZ_BAR2 - 64, 64);
	KUNIT_EXPECT_EQ(test, check(test, &s, 1, &bad), 0);
}

static void check_overlap_eexist(struct kunit *test)
{
	struct svod_tier_spec s[2] = { spec("a", 2, 0, 4096), spec("b", 2, 4095, 4096) };
	unsigned int bad;

	KUNIT_EXPECT_EQ(test, check(test, s, 2, &bad), -EEXIST);
	KUNIT_EXPECT_EQ(test, bad, 1U);
	s[0] = spec("a", 2, 4096, 4096);
	s[1] = spec("b", 2, 0, SZ_BAR2 / 2);
	KUNIT_EXPECT_EQ(test, check(test, s, 2, &bad), -EEXIST);
}

static void check_adjacent_and_other_bar_ok(struct kunit *test)
{
	struct svod_tier_spec s[2] = { spec("a", 2, 0, 4096), spec("b", 2, 4096, 4096) };
	unsigned int bad;

	KUNIT_EXPECT_EQ(test, check(test, s, 2, &bad), 0);
	s[0] = spec("a", 2, 0, 128);
	s[1] = spec("b", 0, 0, 128);
	KUNIT_EXPECT_EQ(test, check(test, s, 2, &bad), 0);
}

static void check_duplicate_name_einval(struct kunit *test)
{
	struct svod_tier_spec s[2] = { spec("a", 2, 0, 64), spec("a", 2, 64, 64) };
	unsigned int bad;

	KUNIT_EXPECT_EQ(test, check(test, s, 2, &bad), -EINVAL);
	KUNIT_EXPECT_EQ(test, bad, 1U);
}

static struct kunit_case svod_decl_cases[] = {
	KUNIT_CASE(parse_u64_one_trailing_newline),
	KUNIT_CASE(name_valid_chars_and_length),
	KUNIT_CASE(pci_name_only_as_the_kernel_spells_it),
	KUNIT_CASE(sort_reserved_by_base_then_size),
	KUNIT_CASE(equal_any_field_differs),
	KUNIT_CASE(check_default_tier_ok),
	KUNIT_CASE(check_not_memory_bar_einval),
	KUNIT_CASE(check_outside_bar_erange),
	KUNIT_CASE(check_overlap_eexist),
	KUNIT_CASE(check_adjacent_and_other_bar_ok),
	KUNIT_CASE(check_duplicate_name_einval),
	{}
};

struct kunit_suite svod_decl_suite = {
	.name = "svod_decl",
	.test_cases = svod_decl_cases,
};
