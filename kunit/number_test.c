// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: svod_number, the one number grammar (driver/core/number.c), on the
 * table of cases libsvod, the guest harness and Python share
 * (kunit/number_cases.h), plus what the table cannot say: lengths that stop
 * short of a NUL, and a refusal leaving the output alone.
 */
#include <kunit/test.h>
#include <linux/errno.h>
#include <linux/string.h>

#include "core/number.h"
#include "svod_test.h"

struct number_case {
	const char *text;
	u64 val;
	int err;
};

#define SVOD_NUMBER_CASE(t, v, e)	{ .text = t, .val = v, .err = e },

static const struct number_case number_cases[] = {
#include "number_cases.h"
};

#undef SVOD_NUMBER_CASE

static void table_cases_value_or_errno(struct kunit *test)
{
	unsigned int i;
	u64 val;
	int ret;

	for (i = 0; i < ARRAY_SIZE(number_cases); i++) {
		const struct number_case *c = &number_cases[i];

		val = 0xdead;
		ret = svod_number_parse(c->text, strlen(c->text), &val);
		KUNIT_EXPECT_EQ_MSG(test, ret, -c->err, "\"%s\"", c->text);
		KUNIT_EXPECT_EQ_MSG(test, val, c->err ? 0xdeadULL : c->val,
				    "\"%s\"", c->text);
	}
}

static void length_bounds_the_text(struct kunit *test)
{
	u64 val = 0;

	KUNIT_EXPECT_EQ(test, svod_number_parse("4096+64K", 4, &val), 0);
	KUNIT_EXPECT_EQ(test, val, 4096ULL);
	KUNIT_EXPECT_EQ(test, svod_number_parse("64K,1M", 3, &val), 0);
	KUNIT_EXPECT_EQ(test, val, 64ULL << 10);
	KUNIT_EXPECT_EQ(test, svod_number_parse("1MiB", 3, &val), -EINVAL);
	KUNIT_EXPECT_EQ(test, svod_number_parse("1", 0, &val), -EINVAL);
	KUNIT_EXPECT_EQ(test, svod_number_parse("1\0", 2, &val), -EINVAL);
	KUNIT_EXPECT_EQ(test, val, 64ULL << 10);
}

static struct kunit_case svod_number_cases[] = {
	KUNIT_CASE(table_cases_value_or_errno),
	KUNIT_CASE(length_bounds_the_text),
	{}
};

struct kunit_suite svod_number_suite = {
	.name = "svod_number",
	.test_cases = svod_number_cases,
};
