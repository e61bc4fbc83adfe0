// SPDX-License-Identifier: GPL-2.0
/*
 * t_persist: declarations saved and restored through real configfs
 * (`svodctl declare --save`, `svodctl restore`). Tiers with reserved
 * regions and access are declared on both svod devices (and, pending, on
 * QEMU's edu device, which svod does not bind, with no tier); the saved
 * file, every declaration removed, the file restored: the configfs tree
 * and the live tiers are what they were, byte for byte, and a second save
 * is the same file. A second restore changes nothing; a device declared
 * otherwise is left alone (exit 1) until --force; a file naming an absent
 * device restores the others (exit 4); a malformed file applies nothing
 * (exit 2, its line named); a tier missing a value makes --save fail and
 * keep the file. The devices' live tiers are put back and every
 * declaration removed at the end, as found.
 * Runs the svodctl that sits next to this binary.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"
#include "tap.h"

#define NR_CASES	19
#define SAVED		"/tmp/t_persist.saved"
#define DUMP_LEN	65536

static char svodctl[4200];
static char out[16384], err[4096];

/* The whole of @path into @buf (NUL-terminated, at most @len - 1 bytes). */
static void slurp(const char *path, char *buf, size_t len)
{
	int f = open(path, O_RDONLY | O_CLOEXEC);
	size_t used = 0;
	ssize_t n;

	while (f >= 0 && used < len - 1 && (n = read(f, buf + used, len - 1 - used)) > 0)
		used += (size_t)n;
	buf[used] = '\0';
	if (f >= 0)
		close(f);
}

/* Run svodctl with @args (NULL-terminated); its exit status. */
static int run(const char *const *args)
{
	const char *argv[16] = { svodctl };
	int status, i;
	pid_t pid;

	for (i = 0; args[i] && i < 14; i++)
		argv[i + 1] = args[i];
	pid = fork();
	if (pid == 0) {
		int o = open("/tmp/t_persist.out", O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int e = open("/tmp/t_persist.err", O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int n = open("/dev/null", O_RDONLY);

		dup2(n, 0);
		dup2(o, 1);
		dup2(e, 2);
		execv(svodctl, (char **)argv);
		_exit(127);
	}
	status = pid > 0 ? ht_wait_exit(pid) : -1;
	slurp("/tmp/t_persist.out", out, sizeof(out));
	slurp("/tmp/t_persist.err", err, sizeof(err));
	return status;
}

#define ARGS(...)	((const char *const[]){ __VA_ARGS__, NULL })

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Append the tree under @dir to @buf: "rel/" per directory, "rel=value"
 * per attribute (commit aside: it cannot be read), names sorted.
 */
static void dump_dir(const char *dir, const char *rel, char *buf, size_t len)
{
	char *names[64], path[512], sub[512], val[256];
	struct dirent *de;
	unsigned int nr = 0, i;
	struct stat sb;
	DIR *d = opendir(dir);

	while (d && nr < 64 && (de = readdir(d)))
		if (de->d_name[0] != '.')
			names[nr++] = strdup(de->d_name);
	if (d)
		closedir(d);
	qsort(names, nr, sizeof(names[0]), cmp_name);
	for (i = 0; i < nr; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		snprintf(sub, sizeof(sub), "%s%s%s", rel, *rel ? "/" : "", names[i]);
		if (!stat(path, &sb) && S_ISDIR(sb.st_mode)) {
			snprintf(buf + strlen(buf), len - strlen(buf), "%s/\n", sub);
			dump_dir(path, sub, buf, len);
		} else if (strcmp(names[i], "commit")) {
			slurp(path, val, sizeof(val));
			snprintf(buf + strlen(buf), len - strlen(buf), "%s=%s", sub, val);
		}
		free(names[i]);
	}
}

/* Every declaration in configfs, and every svod device's live tiers. */
static void dump(char *buf, size_t len, char (*bdfs)[SVOD_NAME_LEN], int nr)
{
	char live[4096];
	int i;

	buf[0] = '\0';
	dump_dir(SVOD_CONFIGFS, "", buf, len);
	for (i = 0; i < nr; i++) {
		if (svod_tiers_read(bdfs[i], live, sizeof(live)) < 0)
			snprintf(live, sizeof(live), "(unreadable)\n");
		snprintf(buf + strlen(buf), len - strlen(buf), "live %s:\n%s", bdfs[i], live);
	}
}

/* The ids of the live tiers, in QUERY's order: kept tiers keep them. */
static void tier_ids(char *buf, size_t len)
{
	struct svod_tier_info *tiers = NULL;
	uint32_t nr = 0, i;
	int fd = svod_open();

	buf[0] = '\0';
	if (fd >= 0 && !svod_query_all(fd, &tiers, &nr))
		for (i = 0; i < nr; i++)
			snprintf(buf + strlen(buf), len - strlen(buf), "%u:%.*s ", tiers[i].id,
				 SVOD_NAME_LEN, tiers[i].name);
	free(tiers);
	if (fd >= 0)
		svod_close(fd);
}

static int write_text(const char *path, const char *text)
{
	int f = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int ret = f < 0 ? -errno : ht_write_all(f, text, strlen(text));

	if (f >= 0)
		close(f);
	return ret;
}

int main(void)
{
	static char before[DUMP_LEN], now[DUMP_LEN], again[DUMP_LEN], saved[16384];
	static char orig[2][4096], ids[2048], ids2[2048], text[DUMP_LEN];
	char bdfs[2][SVOD_NAME_LEN], edu[SVOD_NAME_LEN], *p;
	uint64_t bar[2] = { 0, 0 };
	int nr, st, i, ret, have_edu;

	tap_plan(NR_CASES);
	{
		ssize_t n = readlink("/proc/self/exe", svodctl, sizeof(svodctl) - 16);

		if (n <= 0)
			return tap_done();
		svodctl[n] = '\0';
		strcpy(strrchr(svodctl, '/') + 1, "svodctl");
	}
	nr = svod_devices(bdfs, 2);
	if (svod_declared_devices(NULL, 0) != 0 || nr < 2 || ht_bar_size(bdfs[0], 2, &bar[0]) ||
	    ht_bar_size(bdfs[1], 2, &bar[1]) || bar[0] < (64 << 20) || bar[1] < (16 << 20)) {
		tap_diag("needs two svod devices (BAR 2 of 64 and 16 MiB at least) and no "
			 "declaration (%d devices, %d declarations)", nr,
			 svod_declared_devices(NULL, 0));
		return tap_done();
	}
	for (i = 0; i < 2; i++)
		if (svod_tiers_read(bdfs[i], orig[i], sizeof(orig[i])) < 0)
			return tap_done();
	have_edu = !ht_edu_bdf(edu, sizeof(edu));

	/* Tiers with reserved regions and access; edu pending with none. */
	st = run(ARGS("declare", bdfs[0], "pa bar=2 offset=0 size=32M; pb bar=2 offset=32M "
		      "size=16M base=0x10000000 align=4K reserved=0x10000000+64K,0x10020000+4K "
		      "group=4242 mode=0660"));
	if (!st)
		st = run(ARGS("declare", bdfs[1], "pc bar=2 offset=0 size=8M reserved=0x1000+4K; "
			      "pd bar=2 offset=8M size=4M owner=7"));
	if (!st && have_edu)
		st = ht_cfs_mkdir(edu, "tiers") == -EEXIST ? 0 : 1;
	tap_ok(st == 0, "declare_two_devices_and_a_pending_one (%d: %.*s)", st,
	       (int)strcspn(err, "\n"), err);
	dump(before, sizeof(before), bdfs, 2);
	tier_ids(ids, sizeof(ids));

	st = run(ARGS("declare", "--save", SAVED));
	slurp(SAVED, saved, sizeof(saved));
	tap_ok(st == 0 && !out[0] && saved[0] == '#' &&
	       strstr(saved, "\npb bar") == NULL && strstr(saved, " pb bar=2 offset=0x2000000 ") &&
	       strstr(saved, "reserved=0x10000000+0x10000,0x10020000+0x1000 owner=0 group=4242 "
		      "mode=0660\n") && (!have_edu || strstr(saved, edu)),
	       "save_writes_every_declaration (%d)", st);
	tap_diag("saved:\n%s", saved);
	st = run(ARGS("declare", "--save"));
	tap_ok(st == 0 && !strcmp(out, saved), "save_to_stdout_is_the_file (%d)", st);

	/* Round trip: nothing declared, then the file restored. */
	tap_ok(ht_undeclare_all() >= 2 && svod_declared_devices(NULL, 0) == 0,
	       "undeclare_all_then_none");
	st = run(ARGS("restore", SAVED));
	dump(now, sizeof(now), bdfs, 2);
	tap_ok(st == 0 && strstr(out, ": restored, 2 tiers\n"), "restore_exit_0 (%d: %.*s)", st,
	       (int)strcspn(err, "\n"), err);
	tap_ok(!strcmp(now, before), "restore_configfs_and_live_tiers_byte_for_byte");
	if (strcmp(now, before))
		tap_diag("before:\n%s\nafter:\n%s", before, now);
	tier_ids(ids2, sizeof(ids2));
	tap_ok(!strcmp(ids, ids2), "restore_kept_the_live_tiers_ids (%s)", ids2);
	st = run(ARGS("declare", "--save", "-"));
	tap_ok(st == 0 && !strcmp(out, saved), "save_after_restore_same_file (%d)", st);

	/* Twice: a no-op. */
	st = run(ARGS("restore", SAVED));
	dump(now, sizeof(now), bdfs, 2);
	tap_ok(st == 0 && strstr(out, ": declared so already: left alone\n") &&
	       !strstr(out, "restored"), "restore_twice_exit_0_left_alone (%d)", st);
	tap_ok(!strcmp(now, before), "restore_twice_changed_nothing");

	/* Declared otherwise: left alone, then replaced with --force. */
	run(ARGS("declare", bdfs[1], "pc bar=2 offset=0 size=4M"));
	dump(again, sizeof(again), bdfs, 2);
	st = run(ARGS("restore", SAVED));
	dump(now, sizeof(now), bdfs, 2);
	tap_ok(st == 1 && strstr(err, "declared otherwise") && strstr(err, bdfs[1]) &&
	       !strcmp(now, again), "restore_declared_otherwise_left_alone_exit_1 (%d: %.*s)", st,
	       (int)strcspn(err, "\n"), err);
	st = run(ARGS("restore", "--force", SAVED));
	dump(now, sizeof(now), bdfs, 2);
	tap_ok(st == 0 && strstr(out, ": replaced, 2 tiers\n") && !strcmp(now, before),
	       "restore_force_replaces (%d)", st);

	/* An absent device: reported, the others restored, exit 4. */
	snprintf(text, sizeof(text), "%s0000:00:1e.0 ghost bar=2 offset=0 size=4K\n", saved);
	write_text("/tmp/t_persist.absent", text);
	ht_undeclare_all();
	st = run(ARGS("restore", "/tmp/t_persist.absent"));
	dump(now, sizeof(now), bdfs, 2);
	tap_ok(st == 4 && strstr(err, "0000:00:1e.0 is not present") &&
	       access(SVOD_CONFIGFS "/0000:00:1e.0", F_OK), "restore_absent_device_exit_4 (%d: %.*s)",
	       st, (int)strcspn(err, "\n"), err);
	tap_ok(!strcmp(now, before), "restore_absent_device_others_restored");

	/* A malformed file: nothing applied, from nothing or over declarations. */
	for (i = 0, p = saved; (p = strchr(p, '\n')); p++)
		i++;
	snprintf(text, sizeof(text), "%s%s pz bar=2 offset=0 size=1MB\n", saved, bdfs[1]);
	write_text("/tmp/t_persist.bad", text);
	{
		char want[64];

		snprintf(want, sizeof(want), "t_persist.bad:%d: ", i + 1);
		ht_undeclare_all();
		st = run(ARGS("restore", "/tmp/t_persist.bad"));
		tap_ok(st == 2 && strstr(err, want) && svod_declared_devices(NULL, 0) == 0,
		       "restore_malformed_applies_nothing_exit_2 (%d: %.*s)", st,
		       (int)strcspn(err, "\n"), err);
	}
	run(ARGS("restore", SAVED));
	run(ARGS("declare", bdfs[1], "pc bar=2 offset=0 size=4M"));
	st = run(ARGS("restore", "--force", "/tmp/t_persist.bad"));
	dump(now, sizeof(now), bdfs, 2);
	tap_ok(st == 2 && !strcmp(now, again), "restore_force_malformed_changes_nothing (%d)", st);

	/* A tier without its values: --save fails and keeps the file. */
	run(ARGS("restore", "--force", SAVED));
	ht_cfs_mkdir(bdfs[0], "tiers/half");
	st = run(ARGS("declare", "--save", SAVED));
	slurp(SAVED, text, sizeof(text));
	tap_ok(st == 1 && strstr(err, "ENODATA") && !strcmp(text, saved),
	       "save_incomplete_tier_exit_1_file_kept (%d: %.*s)", st, (int)strcspn(err, "\n"),
	       err);
	ht_cfs_rmdir(bdfs[0], "tiers/half");
	st = run(ARGS("restore", "-"));
	tap_ok(st == 0 && !out[0], "restore_empty_stdin_exit_0 (%d)", st);

	/* As found: the live tiers back, no declaration. */
	for (i = 0, ret = 0; i < 2 && !ret; i++)
		ret = svod_tiers_write(bdfs[i], orig[i]);
	tap_ok(ht_undeclare_all() >= 0 && svod_declared_devices(NULL, 0) == 0 && !ret,
	       "declarations_and_live_tiers_as_found (%d)", ret);
	unlink(SAVED);
	unlink("/tmp/t_persist.absent");
	unlink("/tmp/t_persist.bad");
	return tap_done();
}
