// SPDX-License-Identifier: GPL-2.0
/*
 * svod_test.ko: runs svod's KUnit suites, loaded after svod.ko.
 *
 * The suites are not registered with kunit_test_suites(): on 6.1 KUnit runs
 * those from the MODULE_STATE_COMING notifier, before the module's
 * parameters are parsed, so a seed given to insmod would not reach them.
 * module_init runs them itself instead, with every parameter in place.
 *
 * Parameters: seed (every random case's seed) and filter (which suites or
 * cases run; 6.1's kunit.filter_glob only filters built-in suites).
 */
#include <kunit/test.h>
#include <linux/err.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "svod_test.h"

static unsigned long long seed;
module_param(seed, ullong, 0444);
MODULE_PARM_DESC(seed, "seed of every random KUnit case (0: a fresh one per case, logged)");

static char *filter;
module_param(filter, charp, 0444);
MODULE_PARM_DESC(filter, "run only these, comma-separated: <suite> or <suite>.<case> (default: all)");

static struct kunit_suite *svod_test_suites[] = {
	&svod_range_suite,
	&svod_handle_suite,
	&svod_tlsf_suite,
	&svod_plan_suite,
	&svod_stage_suite,
	&svod_async_suite,
	&svod_decl_suite,
	&svod_number_suite,
	&svod_mmap_suite,
	&svod_dmabuf_suite,
	&svod_tier_suite,
	&svod_alloc_suite,
	&svod_file_suite,
	&svod_dev_suite,
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

/* What this load runs: svod_test_suites, or filtered copies of them. */
static struct kunit_suite **svod_test_run = svod_test_suites;
static int svod_test_nr_run = ARRAY_SIZE(svod_test_suites);

/* One entry of the filter parameter: a suite, or one case of a suite. */
struct svod_test_pick {
	const char *suite;
	const char *kcase;
	bool used;
};

/* Whether any of the @nr @picks selects case @c of @suite; marks them used. */
static bool svod_test_picked(struct svod_test_pick *picks, unsigned int nr,
			     const struct kunit_suite *suite,
			     const struct kunit_case *c)
{
	bool hit = false;
	unsigned int i;

	for (i = 0; i < nr; i++) {
		if (strcmp(picks[i].suite, suite->name) ||
		    (picks[i].kcase && strcmp(picks[i].kcase, c->name)))
			continue;
		picks[i].used = true;
		hit = true;
	}
	return hit;
}

/* A copy of @suite with the picked cases only; NULL if none is picked. */
static struct kunit_suite *svod_test_filter_suite(const struct kunit_suite *suite,
						  struct svod_test_pick *picks,
						  unsigned int nr)
{
	struct kunit_case *c, *cases;
	struct kunit_suite *copy;
	unsigned int n = 0;

	kunit_suite_for_each_test_case(suite, c)
		n += svod_test_picked(picks, nr, suite, c);
	if (!n)
		return NULL;
	copy = kmemdup(suite, sizeof(*suite), GFP_KERNEL);
	cases = kcalloc(n + 1, sizeof(*cases), GFP_KERNEL);
	if (!copy || !cases) {
		kfree(cases);
		kfree(copy);
		return ERR_PTR(-ENOMEM);
	}
	n = 0;
	kunit_suite_for_each_test_case(suite, c)
		if (svod_test_picked(picks, nr, suite, c))
			cases[n++] = *c;
	copy->test_cases = cases;
	return copy;
}

static void svod_test_free_copies(struct kunit_suite **run, int nr)
{
	while (nr--) {
		kfree(run[nr]->test_cases);
		kfree(run[nr]);
	}
}

/* Fills @run with the filtered suites of @picks. Return: how many, or -errno. */
static int svod_test_pick_suites(struct kunit_suite **run,
				 struct svod_test_pick *picks, unsigned int nr)
{
	struct kunit_suite *copy;
	unsigned int i;
	int n = 0;

	for (i = 0; i < ARRAY_SIZE(svod_test_suites); i++) {
		copy = svod_test_filter_suite(svod_test_suites[i], picks, nr);
		if (IS_ERR(copy)) {
			svod_test_free_copies(run, n);
			return PTR_ERR(copy);
		}
		if (copy)
			run[n++] = copy;
	}
	for (i = 0; i < nr; i++) {
		if (picks[i].used)
			continue;
		pr_err("svod_test: filter: no suite or case %s%s%s\n", picks[i].suite,
		       picks[i].kcase ? "." : "", picks[i].kcase ?: "");
		svod_test_free_copies(run, n);
		return -EINVAL;
	}
	return n;
}

/*
 * Points svod_test_run at copies of the suites and cases @spec names
 * ("<suite>" or "<suite>.<case>", comma-separated). Return: 0 or -errno
 * (-EINVAL if an entry names nothing: a typo must not pass as an empty run).
 */
static int svod_test_filter(const char *spec)
{
	struct svod_test_pick *picks;
	struct kunit_suite **run;
	char *buf, *rest, *tok, *dot;
	unsigned int nr = 0;
	int ret = -ENOMEM;

	buf = kstrdup(spec, GFP_KERNEL);
	picks = kcalloc(strlen(spec) + 1, sizeof(*picks), GFP_KERNEL);
	run = kcalloc(ARRAY_SIZE(svod_test_suites), sizeof(*run), GFP_KERNEL);
	if (!buf || !picks || !run)
		goto out;
	rest = buf;
	while ((tok = strsep(&rest, ","))) {
		if (!*tok)
			continue;
		dot = strchr(tok, '.');
		if (dot)
			*dot++ = '\0';
		picks[nr].suite = tok;
		picks[nr++].kcase = dot;
	}
	ret = svod_test_pick_suites(run, picks, nr);
	if (ret >= 0) {
		svod_test_run = run;
		svod_test_nr_run = ret;
		run = NULL;
		ret = 0;
	}
out:
	kfree(run);
	kfree(picks);
	kfree(buf);
	return ret;
}

static int __init svod_test_init(void)
{
	int ret;

	if (filter && *filter) {
		ret = svod_test_filter(filter);
		if (ret)
			return ret;
	}
	return __kunit_test_suites_init(svod_test_run, svod_test_nr_run);
}
module_init(svod_test_init);

static void __exit svod_test_exit(void)
{
	__kunit_test_suites_exit(svod_test_run, svod_test_nr_run);
	if (svod_test_run != svod_test_suites) {
		svod_test_free_copies(svod_test_run, svod_test_nr_run);
		kfree(svod_test_run);
	}
}
module_exit(svod_test_exit);

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
MODULE_DESCRIPTION("KUnit suites of the svod driver (load after svod.ko)");
MODULE_LICENSE("GPL");
