// SPDX-License-Identifier: GPL-2.0
/*
 * The rig's self-test: a module that fails on purpose. It holds one passing
 * KUnit case, one failing case and a WARN_ON at load; `make check` boots a
 * guest with it and requires the judge to report both failures. A judge
 * that cannot fail would pass this module, and so fail the check.
 */
#include <kunit/test.h>
#include <linux/bug.h>
#include <linux/module.h>

static void rig_passes(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, 2 + 2, 4);
}

static void rig_fails_on_purpose(struct kunit *test)
{
	KUNIT_EXPECT_EQ_MSG(test, 1, 2, "deliberate failure: the judge must report it");
}

static struct kunit_case svod_rig_selftest_cases[] = {
	KUNIT_CASE(rig_passes),
	KUNIT_CASE(rig_fails_on_purpose),
	{}
};

static struct kunit_suite svod_rig_selftest_suite = {
	.name = "svod_rig_selftest",
	.test_cases = svod_rig_selftest_cases,
};

kunit_test_suite(svod_rig_selftest_suite);

static int __init svod_selftest_init(void)
{
	WARN_ON(IS_ENABLED(CONFIG_KUNIT));
	return 0;
}
module_init(svod_selftest_init);

static void __exit svod_selftest_exit(void)
{
}
module_exit(svod_selftest_exit);

MODULE_DESCRIPTION("svod rig self-test: deliberate KUnit failure and WARN_ON");
MODULE_LICENSE("GPL");
