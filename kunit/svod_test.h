/* SPDX-License-Identifier: GPL-2.0 */
/*
 * svod_test.ko: every KUnit suite of svod, in one module of its own. Each
 * kunit/<area>_test.c defines one suite object declared here; kunit/main.c
 * runs them all from its module_init, once the module's parameters are
 * parsed, so a seed given on the insmod line reaches every random case.
 */
#ifndef SVOD_TEST_H
#define SVOD_TEST_H

#include <kunit/test.h>
#include <linux/types.h>

extern struct kunit_suite svod_range_suite;
extern struct kunit_suite svod_handle_suite;
extern struct kunit_suite svod_tlsf_suite;
extern struct kunit_suite svod_plan_suite;
extern struct kunit_suite svod_stage_suite;
extern struct kunit_suite svod_async_suite;
extern struct kunit_suite svod_decl_suite;
extern struct kunit_suite svod_number_suite;
extern struct kunit_suite svod_mmap_suite;
extern struct kunit_suite svod_dmabuf_suite;
extern struct kunit_suite svod_tier_suite;
extern struct kunit_suite svod_alloc_suite;
extern struct kunit_suite svod_file_suite;
extern struct kunit_suite svod_dev_suite;

u64 svod_test_seed(struct kunit *test);

#endif /* SVOD_TEST_H */
