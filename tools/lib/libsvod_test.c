// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * Host-side test of libsvod's pure parts (no /dev/svod needed): the tier
 * number grammar (svod_parse_size() on the cases of kunit/number_cases.h,
 * the table the kernel's KUnit suite, the guest harness and Python share),
 * the declaration parser (lines, sets, units) and formatter, errno names,
 * and -errno propagation from real system calls. Prints "ok - NAME" / "not ok - NAME" per check,
 * exits 1 if any failed. argv[1] names the library flavour under test.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "libsvod.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static const char *flavour = "";
static int failed;

static void check(int cond, const char *name)
{
	printf("%s - libsvod %s: %s\n", cond ? "ok" : "not ok", flavour, name);
	if (!cond)
		failed = 1;
}

static void test_decl_round_trip(void)
{
	const char *line = "hbm bar=2 offset=0x1000 size=0x100000 base=0x80000000 "
			   "align=64 reserved=0x80000000+0x1000,0x80010000+0x40";
	struct svod_tier_decl d, d2;
	char buf[SVOD_DECL_LINE_MAX];
	int n;

	check(svod_decl_parse(line, &d) == 0 && !strcmp(d.name, "hbm") &&
	      d.bar == 2 && d.offset == 0x1000 && d.size == 0x100000 &&
	      d.base == 0x80000000 && d.align == 64 && d.nr_reserved == 2 &&
	      d.reserved[0].base == 0x80000000 && d.reserved[0].size == 0x1000 &&
	      d.reserved[1].base == 0x80010000 && d.reserved[1].size == 0x40,
	      "decl_parse_full_line");
	n = svod_decl_format(&d, buf, sizeof(buf));
	check(n == (int)strlen(line) && !strcmp(buf, line), "decl_format_round_trip");
	check(svod_decl_parse(buf, &d2) == 0 && !memcmp(&d, &d2, sizeof(d)),
	      "decl_parse_of_format_identical");
	check(svod_decl_format(&d, buf, 20) == -ENOSPC, "decl_format_short_buffer_enospc");
	check(svod_decl_parse("a bar=2 offset=0 size=4096 base=8 align=64;b bar=2", &d) == 0 &&
	      !strcmp(d.name, "a") && d.size == 4096 && d.nr_reserved == 0,
	      "decl_parse_stops_at_semicolon");
	check(svod_decl_parse("t bar=2 offset=0x10 size=0x20", &d) == 0 && d.base == 0 &&
	      d.align == 64 && d.offset == 0x10 && d.size == 0x20,
	      "decl_parse_defaults_base_0_align_64");
}

static void test_decl_access(void)
{
	const char *line = "s bar=2 offset=0x0 size=0x1000 base=0x0 align=64 "
			   "owner=0 group=4242 mode=0660";
	struct svod_tier_decl d;
	char buf[SVOD_DECL_LINE_MAX];

	check(svod_decl_parse("t bar=2 offset=0 size=1", &d) == 0 && !d.has_access &&
	      svod_decl_format(&d, buf, sizeof(buf)) > 0 && !strstr(buf, "mode="),
	      "decl_default_access_not_printed");
	check(svod_decl_parse(line, &d) == 0 && d.has_access && d.owner == 0 &&
	      d.group == 4242 && d.mode == 0660 &&
	      svod_decl_format(&d, buf, sizeof(buf)) == (int)strlen(line) && !strcmp(buf, line),
	      "decl_access_round_trip");
	check(svod_decl_parse("t bar=2 offset=0 size=1 mode=660", &d) == 0 && d.mode == 0660 &&
	      d.owner == 0 && d.group == 0, "decl_mode_alone_others_default");
	check(svod_decl_parse("t bar=2 offset=0 size=1 mode=1000", &d) == -ERANGE &&
	      svod_decl_parse("t bar=2 offset=0 size=1 mode=8", &d) == -EINVAL &&
	      svod_decl_parse("t bar=2 offset=0 size=1 owner=0x10", &d) == -EINVAL &&
	      svod_decl_parse("t bar=2 offset=0 size=1 group=-1", &d) == -EINVAL &&
	      svod_decl_parse("t bar=2 offset=0 size=1 owner=4294967295", &d) == -ERANGE &&
	      svod_decl_parse("t bar=2 offset=0 size=1 mode=", &d) == -EINVAL &&
	      svod_decl_parse("t bar=2 offset=0 size=1 mode=600 mode=600", &d) == -EINVAL,
	      "decl_bad_access_einval_erange");
}

static void test_decl_malformed(void)
{
	static const char *const bad[] = {
		"",
		"   ",
		"bar=2 offset=0 size=1 base=0 align=1",
		"t bar=2 offset=0 base=0 align=1",
		"t offset=0 size=1",
		"t bar=2 offset=0 size=1 base=0 align=1 bogus=1",
		"t bar=2 bar=2 offset=0 size=1 base=0 align=1",
		"t bar=x offset=0 size=1 base=0 align=1",
		"t bar=2 offset=0 size=1z base=0 align=1",
		"t bar=2 offset=0 size=1 base=0 align=1 reserved=0x10",
		"t bar=2 offset=0 size=1 base=0 align=1 reserved=0x10+0x10,",
		"t bar=2 offset=0 size=-1 base=0 align=1",
		"t bar=2 offset=0 size=010 base=0 align=1",
		"t bar=2 offset=0 size=1MB base=0 align=1",
		"t bar=2 offset=0 size=1 base=0 align=1 reserved=0x10+1MB",
		"t bar=2 offset=0 size=1 base=0 align=1 reserved=+1",
		"name_that_is_far_too_long_for_svod_tiers bar=2 offset=0 size=1 base=0 align=1",
	};
	struct svod_tier_decl d;
	unsigned int i, ok = 0;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		if (svod_decl_parse(bad[i], &d) == -EINVAL)
			ok++;
		else
			printf("# accepted malformed line: \"%s\"\n", bad[i]);
	}
	check(ok == ARRAY_SIZE(bad), "decl_parse_malformed_einval");
	check(svod_decl_parse("t bar=2 offset=0 size=1 base=0 align=1 reserved="
			      "0+1,2+1,4+1,6+1,8+1,10+1,12+1,14+1,16+1", &d) == -EINVAL,
	      "decl_parse_too_many_reserved_einval");
}

static void test_decl_suffixes_and_sets(void)
{
	struct svod_tier_decl d, set[3];

	check(svod_decl_parse("t bar=2 offset=4k size=48MiB base=1G align=0x1000 "
			      "reserved=1G+64K,0x40020000+0x1EiB", &d) == 0 && d.offset == 4096 &&
	      d.size == 48ULL << 20 && d.base == 1ULL << 30 && d.align == 0x1000 &&
	      d.reserved[0].base == 1ULL << 30 && d.reserved[0].size == 64 << 10 &&
	      d.reserved[1].base == 0x40020000 && d.reserved[1].size == 1ULL << 60,
	      "decl_parse_units");
	check(svod_decl_parse("t bar=2 offset=0 size=16E", &d) == -ERANGE &&
	      svod_decl_parse("t bar=2 offset=0 size=99999999999999999999", &d) == -ERANGE &&
	      svod_decl_parse("t bar=2 offset=0 size=1 reserved=0+16EiB", &d) == -ERANGE &&
	      svod_decl_parse("t bar=0x100000000 offset=0 size=1", &d) == -ERANGE &&
	      svod_decl_parse("t bar=2 offset=0 size=1Q", &d) == -EINVAL &&
	      svod_decl_parse("t bar=2 offset=0 size=15E", &d) == 0 && d.size == 15ULL << 60,
	      "decl_parse_too_large_erange_unknown_unit_einval");
	check(svod_decl_parse_set("a bar=2 offset=0 size=1\n\n ;b bar=2 offset=1 size=1;",
				  set, 3) == 2 && !strcmp(set[1].name, "b") && set[1].offset == 1,
	      "decl_parse_set_lines_semicolons_blanks");
	check(svod_decl_parse_set("", set, 3) == 0 && svod_decl_parse_set(" \n;", set, 3) == 0,
	      "decl_parse_set_blank_is_empty_set");
	check(svod_decl_parse_set("a bar=2 offset=0 size=1;a bar=2 offset=1 size=1", set, 3) ==
	      -EINVAL, "decl_parse_set_name_twice_einval");
	check(svod_decl_parse_set("a bar=2 offset=0 size=1;b bar=2 offset=1 size=1;"
				  "c bar=2 offset=2 size=1;d bar=2 offset=3 size=1", set, 3) ==
	      -EINVAL, "decl_parse_set_more_than_cap_einval");
	check(svod_decl_parse_set("a bar=2 offset=0 size=1;b bar=2", set, 3) == -EINVAL,
	      "decl_parse_set_one_bad_line_einval");
}

/* The shared table: every parser of svod gives these answers. */
#define SVOD_NUMBER_CASE(t, v, e)	{ t, v, e },
static const struct {
	const char *text;
	uint64_t val;
	int err;
} number_cases[] = {
#include "../../kunit/number_cases.h"
};
#undef SVOD_NUMBER_CASE

static void test_parse_size(void)
{
	unsigned int i, wrong = 0;
	uint64_t v;
	int ret;

	for (i = 0; i < ARRAY_SIZE(number_cases); i++) {
		v = 0xdead;
		ret = svod_parse_size(number_cases[i].text, &v);
		if (ret != -number_cases[i].err ||
		    v != (number_cases[i].err ? 0xdead : number_cases[i].val)) {
			printf("# \"%s\": %d, %llu\n", number_cases[i].text, ret,
			       (unsigned long long)v);
			wrong++;
		}
	}
	check(!wrong && i > 50, "parse_size_number_cases_table");
	check(strstr(svod_size_forms(), "0x") && strstr(svod_size_forms(), "KiB") &&
	      strstr(svod_size_forms(), "1MiB"), "size_forms_names_hex_units_example");
}

static void test_errno_names(void)
{
	check(!strcmp(svod_errno_name(-ESTALE), "ESTALE") &&
	      !strcmp(svod_errno_name(ENOSPC), "ENOSPC") &&
	      !strcmp(svod_errno_name(-EDQUOT), "EDQUOT") &&
	      !strcmp(svod_errno_name(-ENOTTY), "ENOTTY"), "errno_name_known");
	check(!strcmp(svod_errno_name(-4095), "E?") && !strcmp(svod_errno_name(0), "E?"),
	      "errno_name_unknown");
	check(!strcmp(svod_strerror(-ESTALE), "stale handle"), "strerror_svod_terms");
}

static void test_syscall_errors(void)
{
	struct svod_tier_info *tiers = NULL;
	struct svod_import im;
	struct svod_alloc a;
	char buf[16];
	uint32_t nr = 7;
	uint64_t len = 7;
	void *addr = NULL;
	int fd, dfd;

	check(svod_open_path("/nonexistent/svod") == -ENOENT, "open_missing_enoent");
	fd = open("/dev/null", O_RDWR);
	check(svod_alloc(fd, 0, 4096, 0, &a) == -ENOTTY, "alloc_on_non_svod_enotty");
	check(svod_query_all(fd, &tiers, &nr) == -ENOTTY && nr == 7 && !tiers,
	      "query_all_error_leaves_outputs");
	check(svod_map(fd, 1, &addr, &len) == -ENOTTY && addr == NULL && len == 7,
	      "map_on_non_svod_enotty_leaves_outputs");
	check(svod_unmap(NULL, 4096) == 0 && svod_unmap((void *)1, 4096) == -EINVAL,
	      "unmap_unaligned_einval");
	check(svod_free(-1, 1) == -EBADF, "free_bad_fd_ebadf");
	dfd = 7;
	len = 7;
	check(svod_export(fd, 1, SVOD_EXPORT_WRITE, &dfd, &len) == -ENOTTY && dfd == 7 &&
	      len == 7, "export_on_non_svod_enotty_leaves_outputs");
	memset(&im, 0x5a, sizeof(im));
	check(svod_import(fd, fd, &im) == -ENOTTY && im.handle == 0x5a5a5a5a5a5a5a5aULL,
	      "import_on_non_svod_enotty_leaves_outputs");
	check(svod_import(-1, 0, &im) == -EBADF, "import_bad_fd_ebadf");
	check(svod_close(fd) == 0 && svod_close(fd) == -EBADF, "close_twice_ebadf");
	check(svod_tiers_read("9999:99:99.9", buf, sizeof(buf)) == -ENOENT,
	      "tiers_read_missing_device_enoent");
}

/* Saved declarations: lines added up per device, the bad line named. */
static void test_decl_file(void)
{
	static const char text[] =
		"# saved\n"
		"\n"
		"0000:00:04.0 w bar=2 offset=0 size=48M\n"
		"0000:00:05.0\n"
		"  0000:00:04.0 s bar=2 offset=48M size=16M reserved=0x3000+4k,0x1000+4k; t bar=2 offset=0 size=1\n";
	struct svod_dev_decl devs[8];
	struct svod_tier_decl a[2], b[2];
	char line[SVOD_DECL_LINE_MAX], file[2 * SVOD_DECL_LINE_MAX];
	unsigned int ln = 99;
	int n;

	n = svod_decl_file_parse(text, devs, 8, &ln);
	check(n == 2 && !strcmp(devs[0].bdf, "0000:00:04.0") && devs[0].nr == 3 &&
	      devs[0].line == 3 && !strcmp(devs[0].tiers[1].name, "s") &&
	      devs[0].tiers[1].nr_reserved == 2 && !strcmp(devs[0].tiers[2].name, "t") &&
	      !strcmp(devs[1].bdf, "0000:00:05.0") && devs[1].nr == 0 && devs[1].line == 4,
	      "decl_file_lines_added_per_device");
	/* What `declare --save` writes reads back as the same declaration. */
	n = svod_decl_format(&devs[0].tiers[1], line, sizeof(line));
	snprintf(file, sizeof(file), "0000:00:04.0 %s\n", n > 0 ? line : "");
	check(svod_decl_file_parse(file, &devs[2], 1, &ln) == 1 &&
	      svod_decl_equal(&devs[2].tiers[0], 1, &devs[0].tiers[1], 1),
	      "decl_file_format_round_trip");
	check(svod_decl_file_parse("# a\n0000:00:04.0 w bar=2\n", devs, 8, &ln) == -EINVAL &&
	      ln == 2, "decl_file_malformed_line_named");
	check(svod_decl_file_parse("0000:0:04.0 w bar=2 offset=0 size=1\n", devs, 8, &ln) ==
	      -EINVAL && ln == 1 &&
	      svod_decl_file_parse("w bar=2 offset=0 size=1\n", devs, 8, &ln) == -EINVAL &&
	      svod_decl_file_parse("0000:00:04.0 w bar=2 offset=0 size=16E\n", devs, 8, &ln) ==
	      -ERANGE, "decl_file_bad_pci_name_or_number");
	check(svod_decl_file_parse("0000:00:04.0 w bar=2 offset=0 size=1\n\n"
				   "0000:00:04.0 w bar=2 offset=1 size=1\n", devs, 8, &ln) ==
	      -EEXIST && ln == 3, "decl_file_tier_twice_eexist");
	check(svod_decl_file_parse("0000:00:04.0 a bar=2 offset=0 size=1; b bar=2 offset=0 size=1;"
				   "c bar=2 offset=0 size=1; d bar=2 offset=0 size=1\n"
				   "0000:00:04.0 e bar=2 offset=0 size=1; f bar=2 offset=0 size=1;"
				   "g bar=2 offset=0 size=1; h bar=2 offset=0 size=1\n"
				   "0000:00:04.0 i bar=2 offset=0 size=1\n", devs, 8, &ln) == -E2BIG &&
	      ln == 3, "decl_file_ninth_tier_e2big");
	check(svod_decl_file_parse("0000:00:04.0\n0000:00:05.0\n", devs, 1, &ln) == -ENOSPC,
	      "decl_file_beyond_cap_enospc");
	check(svod_decl_file_parse("", devs, 8, &ln) == 0 &&
	      svod_decl_file_parse("# only\n\n", devs, 8, &ln) == 0, "decl_file_empty_no_device");
	check(svod_pci_name_valid("0000:00:04.0") && svod_pci_name_valid("10000:ff:1f.7") &&
	      !svod_pci_name_valid("0000:00:04.8") && !svod_pci_name_valid("0000:00:4.0") &&
	      !svod_pci_name_valid("0000:00:0A.0") && !svod_pci_name_valid("0000:00:04.0 "),
	      "pci_name_valid_as_the_kernel_spells_it");
	svod_decl_parse("x bar=2 offset=0 size=1 reserved=0+1,8+1", &a[0]);
	svod_decl_parse("y bar=2 offset=9 size=1", &a[1]);
	svod_decl_parse("y bar=2 offset=9 size=1 owner=0 group=0 mode=666", &b[0]);
	svod_decl_parse("x bar=2 offset=0 size=1 reserved=8+1,0+1", &b[1]);
	check(svod_decl_equal(a, 2, b, 2), "decl_equal_any_order_default_access");
	b[0].mode = 0660;
	check(!svod_decl_equal(a, 2, b, 2) && !svod_decl_equal(a, 2, b, 1) &&
	      !svod_decl_equal(a, 1, &b[0], 1), "decl_equal_differences_seen");
}

int main(int argc, char **argv)
{
	if (argc > 1)
		flavour = argv[1];
	test_parse_size();
	test_decl_round_trip();
	test_decl_malformed();
	test_decl_suffixes_and_sets();
	test_decl_access();
	test_decl_file();
	test_errno_names();
	test_syscall_errors();
	return failed;
}
