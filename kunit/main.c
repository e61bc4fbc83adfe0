// SPDX-License-Identifier: GPL-2.0
/*
 * svod_test.ko: runs svod's KUnit suites, loaded after svod.ko.
 *
 * The suites are not registered with kunit_test_suites(): on 6.1 KUnit runs
 * those from the MODULE_STATE_COMING notifier, before the module's
 * parameters are parsed, so a seed given to insmod would not reach them.
 * module_init runs them itself instead, with every parameter in place.
 */
#include <kunit/test.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/random.h>

#include "svod_test.h"

static unsigned long long seed;
module_param(seed, ullong, 0444);
MODULE_PARM_DESC(seed, "seed of every random KUnit case (0: a fresh one per case, logged)");

static struct kunit_suite *svod_test_suites[] = {
	&svod_range_suite,
	&svod_handle_suite,
	&svod_tlsf_suite,
	&svod_stage_suite,
	&svod_decl_suite,
};

/**
 * svod_test_seed() - the seed of one random case
 * @test: the running case; the seed is logged in its KTAP output
 *
 * Every random case takes its seed from here and nowhere else, so the logged
 * line replays it: loading svod_test.ko with seed=<n> gives every random case
 * the seed <n>.
 *
 * Context: process context (a KUnit case).
 * Return: the seed module parameter if it is not 0, else a fresh random
 * seed (never 0).
 */
u64 svod_test_seed(struct kunit *test)
{
	u64 s = seed;

	/* 0 would not replay: it asks for a fresh seed. */
	while (!s)
		s = get_random_u64();
	kunit_info(test, "seed=%llu (replay: insmod svod_test.ko seed=%llu)\n", s, s);
	return s;
}

static int __init svod_test_init(void)
{
	return __kunit_test_suites_init(svod_test_suites,
					ARRAY_SIZE(svod_test_suites));
}
module_init(svod_test_init);

static void __exit svod_test_exit(void)
{
	__kunit_test_suites_exit(svod_test_suites, ARRAY_SIZE(svod_test_suites));
}
module_exit(svod_test_exit);

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
MODULE_DESCRIPTION("KUnit suites of the svod driver (load after svod.ko)");
MODULE_LICENSE("GPL");
