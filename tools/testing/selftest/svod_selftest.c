// SPDX-License-Identifier: GPL-2.0
/*
 * The rig's self-test: a module that fails on purpose. It holds one passing
 * KUnit case, one failing case and a WARN_ON at load; `make check` boots a
 * guest with it and requires the judge to report both failures. A judge
 * that cannot fail would pass this module, and so fail the check.
 *
 * It also plays t_failnth's page-allocation sweep: between the sweep's
 * kernel log markers it makes vmalloc() report a real allocation failure
 * (a size above the machine's memory, without __GFP_NOWARN), which the judge
 * must let through, and a WARN, which the judge must report. After the end
 * marker (and warn_alloc()'s 10 s rate limit) the same allocation failure
 * is reported again, which the judge must count as a splat there.
 */
#include <kunit/test.h>
#include <linux/bits.h>
#include <linux/bug.h>
#include <linux/delay.h>
#include <linux/module.h>
#include <linux/vmalloc.h>

/* The markers tools/harness/t_failnth.c writes; tools/rig/judge.py knows them. */
#define SWEEP_BEGIN	"svod-failnth: page-alloc sweep begin\n"
#define SWEEP_END	"svod-failnth: page-alloc sweep end\n"
/* More than any machine the rig boots has: vmalloc() refuses it, loudly. */
#define TOO_BIG		BIT_ULL(40)

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

/* The WARN inside the sweep: its own function, so the judge can name it. */
static noinline void svod_selftest_warn_in_sweep(void)
{
	WARN(1, "svod_selftest: a WARN inside the page-alloc sweep markers\n");
}

/* A real allocation-failure report with a call trace (warn_alloc()). */
static noinline void svod_selftest_alloc_report(void)
{
	void *p = vmalloc(TOO_BIG);

	vfree(p);
}

static int __init svod_selftest_init(void)
{
	WARN_ON(IS_ENABLED(CONFIG_KUNIT));
	pr_info(SWEEP_BEGIN);
	svod_selftest_alloc_report();
	svod_selftest_warn_in_sweep();
	pr_info(SWEEP_END);
	/* warn_alloc() reports at most once in 10 s. */
	msleep(10500);
	svod_selftest_alloc_report();
	return 0;
}
module_init(svod_selftest_init);

static void __exit svod_selftest_exit(void)
{
}
module_exit(svod_selftest_exit);

MODULE_DESCRIPTION("svod rig self-test: deliberate KUnit failure, WARNs, allocation reports");
MODULE_LICENSE("GPL");
