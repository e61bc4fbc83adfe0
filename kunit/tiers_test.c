// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: svod_tiers, the tier declaration format of driver/tiers.c (parse,
 * check against a device's BARs, print, compare). Pure helpers: no device.
 */
#include <kunit/test.h>
#include <linux/string.h>

#include "svod.h"
#include "svod_test.h"

#define SZ_BAR2	(64ULL << 20)

/* BAR lengths of an ivshmem-plain: registers in BAR 0, memory in BAR 2. */
static const u64 ivshmem_bars[PCI_STD_NUM_BARS] = { 256, 0, SZ_BAR2 };

/* Parses @text (copied: parsing modifies it) into @specs. */
static int parse(struct kunit *test, const char *text,
		 struct svod_tier_spec *specs, unsigned int *nr)
{
	char *buf = kunit_kzalloc(test, strlen(text) + 1, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, buf);
	strcpy(buf, text);
	return svod_tier_spec_parse(buf, specs, SVOD_MAX_DEV_TIERS, nr);
}

static struct svod_tier_spec *specs_alloc(struct kunit *test)
{
	struct svod_tier_spec *specs;

	specs = kunit_kcalloc(test, SVOD_MAX_DEV_TIERS, sizeof(*specs),
			      GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, specs);
	return specs;
}

static const char every_key[] =
	"fast bar=2 offset=4096 size=8192 base=0x10000 align=128 reserved=0x10000+256,0x11000+64";

static void parse_every_key(struct kunit *test)
{
	struct svod_tier_spec *s = specs_alloc(test);
	unsigned int nr;

	KUNIT_ASSERT_EQ(test, parse(test, every_key, s, &nr), 0);
	KUNIT_ASSERT_EQ(test, nr, 1U);
	KUNIT_EXPECT_STREQ(test, s[0].name, "fast");
	KUNIT_EXPECT_EQ(test, s[0].bar, 2U);
	KUNIT_EXPECT_EQ(test, s[0].offset, 4096ULL);
	KUNIT_EXPECT_EQ(test, s[0].size, 8192ULL);
	KUNIT_EXPECT_EQ(test, s[0].base, 0x10000ULL);
	KUNIT_EXPECT_EQ(test, s[0].align, 128ULL);
	KUNIT_ASSERT_EQ(test, s[0].nr_reserved, 2U);
	KUNIT_EXPECT_EQ(test, s[0].reserved[0].base, 0x10000ULL);
	KUNIT_EXPECT_EQ(test, s[0].reserved[0].size, 256ULL);
	KUNIT_EXPECT_EQ(test, s[0].reserved[1].base, 0x11000ULL);
	KUNIT_EXPECT_EQ(test, s[0].reserved[1].size, 64ULL);
}

static void parse_defaults_base_and_align(struct kunit *test)
{
	struct svod_tier_spec *s = specs_alloc(test);
	unsigned int nr;

	KUNIT_ASSERT_EQ(test, parse(test, "t size=4096 offset=0 bar=2", s, &nr), 0);
	KUNIT_ASSERT_EQ(test, nr, 1U);
	KUNIT_EXPECT_EQ(test, s[0].base, 0ULL);
	KUNIT_EXPECT_EQ(test, s[0].align, (u64)SVOD_DEFAULT_ALIGN);
	KUNIT_EXPECT_EQ(test, s[0].nr_reserved, 0U);
}

static void parse_lines_and_semicolons(struct kunit *test)
{
	struct svod_tier_spec *s = specs_alloc(test);
	unsigned int nr;

	KUNIT_ASSERT_EQ(test, parse(test, "a bar=2 offset=0 size=4096; "
				    "b bar=2 offset=4096 size=4096\n"
				    "\tc bar=2 offset=8192 size=64\n\n", s, &nr), 0);
	KUNIT_ASSERT_EQ(test, nr, 3U);
	KUNIT_EXPECT_STREQ(test, s[0].name, "a");
	KUNIT_EXPECT_STREQ(test, s[1].name, "b");
	KUNIT_EXPECT_EQ(test, s[1].offset, 4096ULL);
	KUNIT_EXPECT_STREQ(test, s[2].name, "c");
	KUNIT_EXPECT_EQ(test, s[2].size, 64ULL);
}

static void parse_blank_is_empty_set(struct kunit *test)
{
	struct svod_tier_spec *s = specs_alloc(test);
	unsigned int nr = 99;

	KUNIT_EXPECT_EQ(test, parse(test, "\n;\t ;\n;", s, &nr), 0);
	KUNIT_EXPECT_EQ(test, nr, 0U);
	KUNIT_EXPECT_EQ(test, parse(test, "", s, &nr), 0);
	KUNIT_EXPECT_EQ(test, nr, 0U);
}

static const char * const malformed[] = {
	"t bar=2 offset=0",				/* size missing */
	"t offset=0 size=64",				/* bar missing */
	"t bar=2 size=64",				/* offset missing */
	"t bar=2 offset=0 size=64 colour=red",		/* unknown key */
	"t bar=2 offset=0 size=64 size=128",		/* key twice */
	"t bar=2 offset=0 size=0x",			/* not a number */
	"t bar=2 offset=0 size=-1",			/* not a number */
	"t bar=2 offset=0 size=18446744073709551616",	/* beyond u64 */
	"t bar=2 offset=0 size=64 align",		/* no '=' */
	"t bar=2 offset=0 size=64 reserved=0x10",	/* no '+' */
	"t bar=2 offset=0 size=64 reserved=0+1,",	/* empty region */
	"t bar=2 offset=0 size=64 reserved=0+1,2+1,4+1,6+1,8+1,10+1,12+1,14+1,16+1",
	"t/x bar=2 offset=0 size=64",			/* bad name */
	"t:x bar=2 offset=0 size=64",			/* bad name */
	"abcdefghijabcdefghijabcdefghijab bar=2 offset=0 size=64",
	"a bar=2 offset=0 size=64;b;c bar=2 offset=0 size=64",
	"a bar=2 offset=0 size=64;b bar=2 offset=64 size=64;c bar=2 offset=128 size=64;d bar=2 offset=192 size=64;"
	"e bar=2 offset=256 size=64;f bar=2 offset=320 size=64;g bar=2 offset=384 size=64;h bar=2 offset=448 size=64;"
	"i bar=2 offset=512 size=64",			/* too many tiers */
};

static void parse_malformed_einval(struct kunit *test)
{
	struct svod_tier_spec *s = specs_alloc(test);
	unsigned int nr, i;

	for (i = 0; i < ARRAY_SIZE(malformed); i++)
		KUNIT_EXPECT_EQ_MSG(test, parse(test, malformed[i], s, &nr),
				    -EINVAL, "%s", malformed[i]);
}

static void parse_longest_name(struct kunit *test)
{
	struct svod_tier_spec *s = specs_alloc(test);
	unsigned int nr;

	KUNIT_ASSERT_EQ(test, parse(test, "abcdefghijabcdefghijabcdefghij_ bar=2 offset=0 size=64",
				    s, &nr), 0);
	KUNIT_EXPECT_EQ(test, strlen(s[0].name), (size_t)SVOD_NAME_LEN - 1);
}

/* Checks a declaration; returns the errno, and the offending index in *bad. */
static int check(struct kunit *test, const char *text, unsigned int *bad)
{
	struct svod_tier_spec *s = specs_alloc(test);
	const char *why = NULL;
	unsigned int nr;
	int ret;

	KUNIT_ASSERT_EQ(test, parse(test, text, s, &nr), 0);
	*bad = ~0U;
	ret = svod_tier_spec_check(s, nr, ivshmem_bars, &why, bad);
	if (ret)
		KUNIT_EXPECT_NOT_NULL(test, why);
	return ret;
}

static void check_default_tier_ok(struct kunit *test)
{
	unsigned int bad;

	KUNIT_EXPECT_EQ(test, check(test, "bar2 bar=2 offset=0 size=0x4000000", &bad), 0);
}

static void check_not_memory_bar_einval(struct kunit *test)
{
	unsigned int bad;

	KUNIT_EXPECT_EQ(test, check(test, "a bar=2 offset=0 size=64;"
				    "b bar=1 offset=0 size=64", &bad), -EINVAL);
	KUNIT_EXPECT_EQ(test, bad, 1U);
	KUNIT_EXPECT_EQ(test, check(test, "a bar=6 offset=0 size=64", &bad), -EINVAL);
	KUNIT_EXPECT_EQ(test, bad, 0U);
}

static void check_outside_bar_erange(struct kunit *test)
{
	unsigned int bad;

	KUNIT_EXPECT_EQ(test, check(test, "a bar=2 offset=0 size=0x4000001", &bad), -ERANGE);
	KUNIT_EXPECT_EQ(test, check(test, "a bar=2 offset=0x4000000 size=1", &bad), -ERANGE);
	KUNIT_EXPECT_EQ(test, check(test, "a bar=0 offset=128 size=129", &bad), -ERANGE);
	/* offset + size wraps around u64 */
	KUNIT_EXPECT_EQ(test, check(test, "a bar=2 offset=0xffffffffffffffff size=2", &bad),
			-ERANGE);
	KUNIT_EXPECT_EQ(test, check(test, "a bar=2 offset=0x3ffffc0 size=64", &bad), 0);
}

static void check_overlap_eexist(struct kunit *test)
{
	unsigned int bad;

	KUNIT_EXPECT_EQ(test, check(test, "a bar=2 offset=0 size=4096;"
				    "b bar=2 offset=4095 size=4096", &bad), -EEXIST);
	KUNIT_EXPECT_EQ(test, bad, 1U);
	KUNIT_EXPECT_EQ(test, check(test, "a bar=2 offset=4096 size=4096;"
				    "b bar=2 offset=0 size=0x2000000", &bad), -EEXIST);
}

static void check_adjacent_and_other_bar_ok(struct kunit *test)
{
	unsigned int bad;

	KUNIT_EXPECT_EQ(test, check(test, "a bar=2 offset=0 size=4096;"
				    "b bar=2 offset=4096 size=4096", &bad), 0);
	KUNIT_EXPECT_EQ(test, check(test, "a bar=2 offset=0 size=128;"
				    "b bar=0 offset=0 size=128", &bad), 0);
}

static void check_duplicate_name_einval(struct kunit *test)
{
	unsigned int bad;

	KUNIT_EXPECT_EQ(test, check(test, "a bar=2 offset=0 size=64;"
				    "a bar=2 offset=64 size=64", &bad), -EINVAL);
	KUNIT_EXPECT_EQ(test, bad, 1U);
}

/* The canonical form: what the svod_tiers attribute shows. */
static const char printed[] =
	"a bar=2 offset=0x100 size=0x1000 base=0x8000 align=256 reserved=0x8000+0x10,0x8100+0x20\n"
	"b bar=0 offset=0x0 size=0x80 base=0x0 align=64\n";

static void print_parses_back_equal(struct kunit *test)
{
	struct svod_tier_spec *s = specs_alloc(test);
	struct svod_tier_spec *back = specs_alloc(test);
	char *page = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	unsigned int nr, i;
	int len = 0;

	KUNIT_ASSERT_NOT_NULL(test, page);
	KUNIT_ASSERT_EQ(test, parse(test, printed, s, &nr), 0);
	KUNIT_ASSERT_EQ(test, nr, 2U);
	for (i = 0; i < nr; i++)
		len += svod_tier_spec_print(&s[i], page, len);
	KUNIT_EXPECT_STREQ(test, page, printed);
	KUNIT_ASSERT_EQ(test, svod_tier_spec_parse(page, back, SVOD_MAX_DEV_TIERS, &i), 0);
	KUNIT_ASSERT_EQ(test, i, nr);
	KUNIT_EXPECT_TRUE(test, svod_tier_spec_equal(&s[0], &back[0]));
	KUNIT_EXPECT_TRUE(test, svod_tier_spec_equal(&s[1], &back[1]));
}

static void equal_any_field_differs(struct kunit *test)
{
	struct svod_tier_spec *s = specs_alloc(test);
	unsigned int nr, i;

	KUNIT_ASSERT_EQ(test, parse(test, "a bar=2 offset=0 size=4096 reserved=0+64;"
				    "b bar=2 offset=0 size=4096 reserved=0+64;"
				    "a bar=2 offset=0 size=4096 reserved=0+128;"
				    "a bar=2 offset=0 size=4096;"
				    "a bar=2 offset=64 size=4096 reserved=0+64;"
				    "a bar=2 offset=0 size=4096 base=64 reserved=64+64;"
				    "a bar=2 offset=0 size=4096 align=128 reserved=0+64;"
				    "a bar=0 offset=0 size=4096 reserved=0+64", s, &nr), 0);
	KUNIT_ASSERT_EQ(test, nr, 8U);
	KUNIT_EXPECT_TRUE(test, svod_tier_spec_equal(&s[0], &s[0]));
	for (i = 1; i < nr; i++)
		KUNIT_EXPECT_FALSE_MSG(test, svod_tier_spec_equal(&s[0], &s[i]),
				       "declaration %u", i);
}

static struct kunit_case svod_tiers_cases[] = {
	KUNIT_CASE(parse_every_key),
	KUNIT_CASE(parse_defaults_base_and_align),
	KUNIT_CASE(parse_lines_and_semicolons),
	KUNIT_CASE(parse_blank_is_empty_set),
	KUNIT_CASE(parse_malformed_einval),
	KUNIT_CASE(parse_longest_name),
	KUNIT_CASE(check_default_tier_ok),
	KUNIT_CASE(check_not_memory_bar_einval),
	KUNIT_CASE(check_outside_bar_erange),
	KUNIT_CASE(check_overlap_eexist),
	KUNIT_CASE(check_adjacent_and_other_bar_ok),
	KUNIT_CASE(check_duplicate_name_einval),
	KUNIT_CASE(print_parses_back_equal),
	KUNIT_CASE(equal_any_field_differs),
	{}
};

struct kunit_suite svod_decl_suite = {
	.name = "svod_tiers",
	.test_cases = svod_tiers_cases,
};
