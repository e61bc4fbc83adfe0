// SPDX-License-Identifier: GPL-2.0
/*
 * t_svodctl: the CLI in the guest. Help and usage exit codes, the one-line
 * errors with the errno name ("svodctl: alloc: ENOSPC: no space in tier 0"),
 * a `svodctl run` session (alloc, resolve, stage, read, free, stale handle),
 * `alloc --hold`, `tiers`, `declare` (the round trip of
 * Documentation/svod.rst's example through configfs: declare, read back,
 * a refusal that changes nothing, the original back from stdin), `declare`
 * for a device that is not bound (pending, printed as such), `undeclare`,
 * `top`, and `svodctl demo` (make demo's session) with every step as expected.
 * Runs the svodctl that sits next to this binary.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"
#include "tap.h"

#define NR_CASES	21

static char svodctl[4200];
static char out[8192], err[4096];

static void slurp(const char *path, char *buf, size_t len)
{
	int f = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = f < 0 ? 0 : read(f, buf, len - 1);

	buf[n > 0 ? n : 0] = '\0';
	if (f >= 0)
		close(f);
}

/* Run svodctl with @args (NULL-terminated) and @input on stdin; exit status. */
static int run(const char *input, const char *const *args)
{
	const char *argv[16] = { svodctl };
	int in[2], status, i;
	pid_t pid;

	for (i = 0; args[i] && i < 14; i++)
		argv[i + 1] = args[i];
	if (pipe(in))
		return -1;
	pid = fork();
	if (pid == 0) {
		int o = open("/tmp/t_svodctl.out", O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int e = open("/tmp/t_svodctl.err", O_WRONLY | O_CREAT | O_TRUNC, 0600);

		dup2(in[0], 0);
		dup2(o, 1);
		dup2(e, 2);
		close(in[1]);
		execv(svodctl, (char **)argv);
		_exit(127);
	}
	close(in[0]);
	if (input && ht_write_all(in[1], input, strlen(input)))
		tap_diag("stdin of svodctl: write failed");
	close(in[1]);
	status = pid > 0 ? ht_wait_exit(pid) : -1;
	slurp("/tmp/t_svodctl.out", out, sizeof(out));
	slurp("/tmp/t_svodctl.err", err, sizeof(err));
	return status;
}

static void test_help(void)
{
	int st;

	st = run(NULL, (const char *[]){ "--help", NULL });
	tap_ok(st == 0 && strstr(out, "svodctl tiers") && strstr(out, "svodctl demo") &&
	       strstr(out, "svodctl declare"), "help_exit_0_lists_commands");
	st = run(NULL, (const char *[]){ "frobnicate", NULL });
	tap_ok(st == 2 && strstr(err, "unknown command"), "unknown_command_exit_2 (%d)", st);
	st = run(NULL, (const char *[]){ "alloc", "--help", NULL });
	tap_ok(st == 0 && strstr(out, "usage: svodctl alloc TIER SIZE"),
	       "alloc_help_exit_0 (%d)", st);
}

static void test_errors(const struct svod_tier_info *t)
{
	char id[16], want[128];
	int st;

	snprintf(id, sizeof(id), "%u", t->id);
	snprintf(want, sizeof(want), "svodctl: alloc: ENOSPC: no space in tier %u\n", t->id);
	st = run(NULL, (const char *[]){ "alloc", id, "1G", NULL });
	tap_ok(st == 1 && !strcmp(err, want), "alloc_too_big_enospc_line (%d: %.*s)", st,
	       (int)strcspn(err, "\n"), err);
	st = run(NULL, (const char *[]){ "alloc", id, "0", NULL });
	tap_ok(st == 1 && !strncmp(err, "svodctl: alloc: EINVAL: ", 24),
	       "alloc_size_zero_einval_line (%d: %.*s)", st, (int)strcspn(err, "\n"), err);
	st = run(NULL, (const char *[]){ "alloc", "no-such-tier", "4k", NULL });
	tap_ok(st == 1 && !strncmp(err, "svodctl: alloc: ENOENT: ", 24),
	       "alloc_unknown_tier_name_enoent_line (%d)", st);
	/* Outside `svodctl run` no handle can resolve: it says so, never ESTALE. */
	st = run(NULL, (const char *[]){ "resolve", "0x10001000000", NULL });
	tap_ok(st == 2 && !strncmp(err, "svodctl: resolve: only inside `svodctl run`: a handle "
				   "lives in the open file", 76),
	       "resolve_outside_run_explains (%d: %.*s)", st, (int)strcspn(err, "\n"), err);
}

static void test_session(const struct svod_tier_info *t)
{
	char script[512];
	int st;

	snprintf(script, sizeof(script),
		 "alloc %s 64k\n"
		 "resolve %%\n"
		 "stage %% 0 --pattern 7 --length 4096 --cpu\n"
		 "read %% 0 16 --cpu\n"
		 "free %%1\n"
		 "resolve %%1\n", t->name);
	st = run(script, (const char *[]){ "run", NULL });
	tap_ok(st == 1 && strstr(out, "$ alloc") && strstr(out, "capacity 65536") &&
	       strstr(out, "staged 4096 bytes") &&
	       strstr(out, "07 8a 0d 90 13 96 19 9c 1f a2 25 a8 2b ae 31 b4\n") &&
	       strstr(out, "freed 0x") && strstr(err, "svodctl: resolve: ESTALE: stale handle"),
	       "run_session_alloc_stage_read_free_stale (%d)", st);
	if (st != 1)
		tap_diag("stdout: %s stderr: %s", out, err);
}

static void test_hold(int fd, const struct svod_tier_info *t)
{
	const char *argv[] = { svodctl, "alloc", t->name, "1M", "--hold", NULL };
	uint64_t before = 0, during = 0;
	int in[2], status, waited = -1;
	char line[128] = "";
	FILE *o;
	pid_t pid;
	int p[2];

	ht_tier_usage(fd, t->id, &before, NULL);
	if (pipe(in) || pipe(p))
		return;
	pid = fork();
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(p[1], 1);
		close(in[1]);
		close(p[0]);
		execv(svodctl, (char **)argv);
		_exit(127);
	}
	close(in[0]);
	close(p[1]);
	o = fdopen(p[0], "r");
	if (o && fgets(line, sizeof(line), o))
		ht_tier_usage(fd, t->id, &during, NULL);
	close(in[1]);
	status = pid > 0 ? ht_wait_exit(pid) : -1;
	if (o)
		fclose(o);
	if (status == 0)
		waited = ht_wait_free(fd, t->id, before, 2000);
	tap_ok(!strncmp(line, "handle 0x", 9) && during == before - (1 << 20) &&
	       status == 0 && waited >= 0, "alloc_hold_keeps_bytes_until_stdin_closes");
}

/* Documentation/svod.rst, "svodctl declare": the command and its output. */
static const char doc_declaration[] =
	"weights bar=2 offset=0 size=48M; scratch bar=2 offset=48M size=16M "
	"base=0x10000000 align=4K reserved=0x10000000+64K";
static const char doc_output[] =
	"%s:\n"
	"weights bar=2 offset=0x0 size=0x3000000 base=0x0 align=64\n"
	"scratch bar=2 offset=0x3000000 size=0x1000000 base=0x10000000 align=4096 "
	"reserved=0x10000000+0x10000\n";

static void test_declare_round_trip(const char *bdf)
{
	char orig[4096], want[4200], now[4096];
	uint64_t bar = 0;
	int st;

	if (svod_tiers_read(bdf, orig, sizeof(orig)) < 0 || ht_bar_size(bdf, 2, &bar) ||
	    bar != 64 << 20) {
		tap_skip("first device's BAR 2 is not 64 MiB", "declare_documented_example");
		tap_skip("first device's BAR 2 is not 64 MiB", "declare_refusal_erange_line");
		tap_skip("first device's BAR 2 is not 64 MiB", "declare_refusal_changed_nothing");
		tap_skip("first device's BAR 2 is not 64 MiB", "declare_stdin_restores_original");
		return;
	}
	snprintf(want, sizeof(want), doc_output, bdf);
	st = run(NULL, (const char *[]){ "declare", bdf, doc_declaration, NULL });
	tap_ok(st == 0 && !strcmp(out, want), "declare_documented_example (%d)", st);
	if (strcmp(out, want))
		tap_diag("stdout: %s stderr: %s", out, err);
	st = run(NULL, (const char *[]){ "declare", bdf, "big bar=2 offset=0 size=1G", NULL });
	tap_ok(st == 1 && !strncmp(err, "svodctl: declare: ERANGE: ", 26),
	       "declare_refusal_erange_line (%d: %.*s)", st, (int)strcspn(err, "\n"), err);
	tap_ok(svod_tiers_read(bdf, now, sizeof(now)) >= 0 && !strcmp(now, strchr(want, '\n') + 1),
	       "declare_refusal_changed_nothing");
	snprintf(want, sizeof(want), "%s:\n%s", bdf, orig);
	st = run(orig, (const char *[]){ "declare", bdf, "-", NULL });
	tap_ok(st == 0 && !strcmp(out, want), "declare_stdin_restores_original (%d)", st);
}

/* A device that is not bound: the declaration waits; undeclare forgets it. */
static void test_declare_unbound(void)
{
	static const char absent[] = "0000:00:1e.0";
	int st;

	st = run(NULL, (const char *[]){ "declare", absent, "later bar=2 offset=0 size=4K", NULL });
	tap_ok(st == 0 && strstr(out, "0000:00:1e.0: not bound; declared, applied when it binds "
				      "(last apply: none):\nlater bar=2 offset=0x0 size=0x1000"),
	       "declare_unbound_device_prints_pending (%d: %.*s)", st, (int)strcspn(out, "\n"),
	       out);
	st = run(NULL, (const char *[]){ "declare", absent, NULL });
	tap_ok(st == 0 && strstr(out, "not bound; declared"), "declare_shows_pending (%d)", st);
	st = run(NULL, (const char *[]){ "undeclare", absent, NULL });
	tap_ok(st == 0 && svod_decl_status(absent, NULL, 0) == -ENOENT,
	       "undeclare_removes_declaration (%d)", st);
	st = run(NULL, (const char *[]){ "undeclare", absent, NULL });
	tap_ok(st == 1 && !strncmp(err, "svodctl: undeclare: ENOENT: ", 28),
	       "undeclare_without_declaration_enoent_line (%d: %.*s)", st,
	       (int)strcspn(err, "\n"), err);
}

int main(void)
{
	struct svod_tier_info t;
	ssize_t n;
	int fd, ret, st;

	tap_plan(NR_CASES);
	n = readlink("/proc/self/exe", svodctl, sizeof(svodctl) - 16);
	if (n <= 0)
		return tap_done();
	svodctl[n] = '\0';
	strcpy(strrchr(svodctl, '/') + 1, "svodctl");
	fd = ht_open();
	ret = fd < 0 ? fd : ht_first_tier(fd, &t);
	if (ret) {
		tap_diag("no tier: %s", svod_errno_name(ret));
		return tap_done();
	}
	test_help();
	test_errors(&t);
	test_session(&t);
	test_hold(fd, &t);

	st = run(NULL, (const char *[]){ "tiers", NULL });
	tap_ok(st == 0 && strstr(out, t.name) && strstr(out, t.device),
	       "tiers_lists_the_tier (%d)", st);
	st = run(NULL, (const char *[]){ "declare", NULL });
	tap_ok(st == 0 && strstr(out, t.device) && strstr(out, " bar=2 "),
	       "declare_shows_each_device (%d)", st);
	st = run(NULL, (const char *[]){ "top", NULL });
	tap_ok(st == 0 && strstr(out, "PID"), "top_runs (%d)", st);
	/* make demo's session: exits 0 only if every step was as expected. */
	st = run(NULL, (const char *[]){ "demo", NULL });
	if (st)
		tap_diag("svodctl demo: %s%s", out, err);
	tap_ok(st == 0 && strstr(out, "wait on its fence") && strstr(out, "share it:"),
	       "demo_every_step_as_expected (%d)", st);
	svod_close(fd);
	test_declare_round_trip(t.device);
	test_declare_unbound();
	/* Live tiers are back as they were: forget the declarations made. */
	ht_undeclare_all();
	return tap_done();
}
