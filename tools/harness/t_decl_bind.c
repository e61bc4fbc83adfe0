// SPDX-License-Identifier: GPL-2.0
/*
 * t_decl_bind: declarations are the administrator's, bound or not.
 * /sys/kernel/config/svod/<bdf>/ is made by mkdir only (a PCI name, once;
 * each directory holds a reference to svod.ko), reads "bound" or
 * "unbound", refuses commit with -ENODEV while unbound. A declaration made
 * while the device is unbound is live after bind; one committed while bound
 * is live again after unbind and rebind; one refused at bind leaves the
 * default tier and says why in last_apply and the kernel log; rmdir forgets
 * it without touching the live tiers. Last, a writer of the tree and a
 * binder/unbinder of the device race for a fixed number of rounds: each
 * bind leaves the device with exactly the default tier or the declared
 * one, never both, never none. Uses the last bound device and puts it back
 * with its default tier.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"
#include "tap.h"

#define NR_CASES	27

/* Rounds of the race; SVOD_RACE_ROUNDS=N runs more. */
#define RACE_ROUNDS	40

static char bdf[SVOD_NAME_LEN];
static char orig[4096];
static uint64_t bar_size;

static int cfs_mkdir_top(const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), SVOD_CONFIGFS "/%s", name);
	return mkdir(path, 0755) ? -errno : 0;
}

static int cfs_rmdir_top(const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), SVOD_CONFIGFS "/%s", name);
	return rmdir(path) ? -errno : 0;
}

/* The device's live tiers as text ("" when unbound or on error). */
static const char *live(void)
{
	static char now[4096];

	if (svod_tiers_read(bdf, now, sizeof(now)) < 0)
		now[0] = '\0';
	return now;
}

/*
 * The names of the device's live tiers, from one QUERY (a consistent
 * snapshot even while a commit runs), ';'-separated.
 */
static const char *live_names(int fd)
{
	static char names[512];
	struct svod_tier_info *tiers;
	uint32_t nr, i;
	size_t len = 0;

	names[0] = '\0';
	if (svod_query_all(fd, &tiers, &nr))
		return "(query failed)";
	for (i = 0; i < nr; i++) {
		if ((tiers[i].flags & SVOD_TIER_GONE) || strcmp(tiers[i].device, bdf))
			continue;
		len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s",
					len ? ";" : "", tiers[i].name);
		if (len >= sizeof(names))
			break;
	}
	free(tiers);
	return names;
}

static const char *last_apply(void)
{
	static char buf[256];

	if (svod_decl_status(bdf, buf, sizeof(buf)) < 0)
		strcpy(buf, "(none)");
	return buf;
}

static int rebind(void)
{
	int ret = svod_driver_bind(bdf, 0);

	return ret ? ret : svod_driver_bind(bdf, 1);
}

static void test_names(void)
{
	static const char *const bad[] = {
		"svod", "0000:00:04", "0000:00:04.0x", "0000:00:0A.0", "00:04.0",
		"0000:00:20.0", "0000:00:04.8", "0000:100:04.0",
	};
	unsigned int i, refused = 0;
	long long before, during, after;
	char val[64];
	int ret;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		ret = cfs_mkdir_top(bad[i]);
		refused += ret == -EINVAL;
		if (ret != -EINVAL) {
			tap_diag("mkdir %s: %s", bad[i], ht_err(ret));
			if (!ret)
				cfs_rmdir_top(bad[i]);
		}
	}
	tap_ok(refused == ARRAY_SIZE(bad), "mkdir_not_a_pci_name_einval (%u of %zu)", refused,
	       ARRAY_SIZE(bad));

	before = ht_module_refcnt();
	ret = cfs_mkdir_top(bdf);
	during = ht_module_refcnt();
	tap_errno(ret, 0, "mkdir_declaration_of_bound_device");
	tap_errno(cfs_mkdir_top(bdf), -EEXIST, "second_mkdir_eexist");
	tap_ok(before >= 0 && during > before, "declaration_holds_module_reference (%lld -> %lld)",
	       before, during);
	ret = ht_cfs_read(bdf, "status", val, sizeof(val));
	tap_ok(!ret && !strcmp(val, "bound"), "status_bound (%s)", val);
	ret = ht_cfs_read(bdf, "last_apply", val, sizeof(val));
	tap_ok(!ret && !strcmp(val, "none"), "last_apply_none_before_any_apply (%s)", val);
	tap_errno(ht_cfs_mkdir(bdf, "tiers/t:x"), -EINVAL, "mkdir_bad_tier_name_einval");
	tap_errno(cfs_rmdir_top(bdf), 0, "rmdir_empty_declaration");
	after = ht_module_refcnt();
	tap_ok(after == before, "rmdir_drops_module_reference (%lld -> %lld)", before, after);
	tap_ok(!strcmp(live(), orig), "live_tiers_untouched_by_empty_declaration");
}

/* A device that does not exist: declared all the same, never applied. */
static void test_absent_device(void)
{
	static const char absent[] = "0000:00:1f.7";
	char val[64];
	int ret;

	ret = svod_tiers_write(absent, "ghost bar=2 offset=0 size=4K");
	tap_errno(ret, 0, "declare_for_absent_device");
	ret = svod_decl_status(absent, val, sizeof(val));
	tap_ok(ret == 0 && !strcmp(val, "none"), "absent_device_unbound_never_applied (%d, %s)",
	       ret, val);
	tap_errno(ht_cfs_write(absent, "commit", "1"), -ENODEV, "commit_for_absent_device_enodev");
	tap_errno(svod_undeclare(absent), 0, "undeclare_absent_device");
}

static void test_bind_apply(void)
{
	char text[512], want[512];
	int ret, kfd, logged;

	/* Declared while unbound: live after bind. */
	ret = svod_driver_bind(bdf, 0);
	snprintf(text, sizeof(text), "pre0 bar=2 offset=0x0 size=0x100000 base=0x0 align=64\n"
		 "pre1 bar=2 offset=0x100000 size=0x100000 base=0x40000000 align=4096 "
		 "reserved=0x40000000+0x1000\n");
	ret = ret ?: svod_tiers_write(bdf, text);
	tap_ok(!ret && svod_decl_status(bdf, NULL, 0) == 0,
	       "declare_while_unbound_is_pending (%s)", ht_err(ret));
	ret = svod_driver_bind(bdf, 1);
	tap_ok(!ret && !strcmp(live(), text), "declaration_made_unbound_live_after_bind (%s)",
	       ht_err(ret));
	if (strcmp(live(), text))
		tap_diag("live: %s", live());
	tap_ok(!strcmp(last_apply(), "bind: ok"), "last_apply_bind_ok (%s)", last_apply());

	/* Committed while bound: live again after unbind and rebind. */
	snprintf(text, sizeof(text), "kept bar=2 offset=0x200000 size=0x200000 base=0x0 align=64\n");
	ret = svod_tiers_write(bdf, text);
	tap_ok(!ret && !strcmp(live(), text) && !strcmp(last_apply(), "commit: ok"),
	       "commit_while_bound (%s, %s)", ht_err(ret), last_apply());
	ret = rebind();
	tap_ok(!ret && !strcmp(live(), text) && !strcmp(last_apply(), "bind: ok"),
	       "committed_declaration_survives_unbind_rebind (%s)", ht_err(ret));

	/* Refused at bind: the default tier, and why. */
	ret = svod_driver_bind(bdf, 0);
	snprintf(text, sizeof(text), "big bar=2 offset=0 size=0x%llx",
		 (unsigned long long)bar_size * 2);
	ret = ret ?: svod_tiers_write(bdf, text);
	kfd = ht_kmsg_open();
	ret = ret ?: svod_driver_bind(bdf, 1);
	logged = kfd >= 0 ? ht_kmsg_find(kfd, "the declaration in configfs is refused") : -1;
	if (kfd >= 0)
		close(kfd);
	tap_ok(!ret && !strcmp(live(), orig), "refused_at_bind_leaves_default_tier (%s)",
	       ht_err(ret));
	snprintf(want, sizeof(want), "bind: error %d: tier big: does not fit inside the BAR",
		 -ERANGE);
	tap_ok(!strcmp(last_apply(), want), "last_apply_says_why_bind_refused (%s)",
	       last_apply());
	tap_ok(logged == 1, "kernel_log_says_bind_refused (%d lines)", logged);

	/* rmdir forgets the declaration; the live tiers stay until rebind. */
	ret = svod_tiers_write(bdf, "mine bar=2 offset=0 size=0x10000");
	ret = ret ?: svod_undeclare(bdf);
	tap_ok(!ret && !strcmp(live(), "mine bar=2 offset=0x0 size=0x10000 base=0x0 align=64\n"),
	       "rmdir_keeps_live_tiers (%s)", ht_err(ret));
	ret = rebind();
	tap_ok(!ret && !strcmp(live(), orig), "rebind_after_rmdir_gives_default_tier (%s)",
	       ht_err(ret));
}

/*
 * Child: @rounds times, declare the tier "race" (mkdir of the device's
 * directory and the tier, values, commit when bound), then remove it all.
 * Exit status: the number of unexpected errnos (capped).
 */
static void writer(unsigned int rounds)
{
	unsigned int i, surprises = 0;
	int ret;

	for (i = 0; i < rounds && surprises < 100; i++) {
		ret = ht_cfs_mkdir(bdf, "tiers/race");
		ret = ret ?: ht_cfs_write(bdf, "tiers/race/bar", "2");
		ret = ret ?: ht_cfs_write(bdf, "tiers/race/offset", "0");
		ret = ret ?: ht_cfs_write(bdf, "tiers/race/size", "1M");
		if (!ret) {
			ret = ht_cfs_write(bdf, "commit", "1");
			/* Unbound, or bound with a live allocation elsewhere: fine. */
			if (ret == -ENODEV)
				ret = 0;
		}
		surprises += ret != 0;
		if (ret)
			tap_diag("writer round %u: %s", i, ht_err(ret));
		ret = ht_cfs_rmdir(bdf, "tiers/race");
		ret = ret ?: cfs_rmdir_top(bdf);
		surprises += ret != 0;
	}
	_exit((int)surprises);
}

static void test_race(void)
{
	unsigned int rounds = RACE_ROUNDS, i, bad = 0, binds = 0, declared = 0;
	const char *env = getenv("SVOD_RACE_ROUNDS");
	char def_name[SVOD_NAME_LEN + 1];
	const char *now;
	int status, ret, fd;
	pid_t pid;

	fd = ht_open();
	snprintf(def_name, sizeof(def_name), "%.*s", (int)strcspn(orig, " "), orig);

	if (env && atoi(env) > 0)
		rounds = (unsigned int)atoi(env);
	tap_diag("race: %u writer rounds against %u unbind/bind rounds", rounds * 4, rounds);
	pid = fork();
	if (pid == 0)
		writer(rounds * 4);
	for (i = 0; i < rounds; i++) {
		ret = rebind();
		binds += !ret;
		now = live_names(fd);
		/* Either the default tier or the declared one, exactly. */
		declared += !strcmp(now, "race");
		if (strcmp(now, def_name) && strcmp(now, "race")) {
			bad++;
			tap_diag("after bind %u: %s", i, now);
		}
	}
	svod_close(fd);
	status = pid > 0 ? ht_wait_exit(pid) : -1;
	tap_ok(status == 0, "race_writer_saw_only_documented_errnos (%d)", status);
	tap_ok(binds == rounds && bad == 0,
	       "race_each_bind_one_whole_set (%u of %u binds, %u with the declared tier, %u bad)",
	       binds, rounds, declared, bad);
	ht_undeclare_all();
	ret = rebind();
	tap_ok(!ret && !strcmp(live(), orig), "race_over_default_tier_back (%s)", ht_err(ret));
}

int main(void)
{
	char bdfs[4][SVOD_NAME_LEN];
	int nr;

	tap_plan(NR_CASES);
	nr = svod_devices(bdfs, 4);
	if (nr <= 0 || access(SVOD_CONFIGFS, F_OK)) {
		tap_diag("no device bound to svod (%d) or no configfs", nr);
		return tap_done();
	}
	strcpy(bdf, bdfs[(nr < 4 ? nr : 4) - 1]);
	if (svod_tiers_read(bdf, orig, sizeof(orig)) < 0 || ht_bar_size(bdf, 2, &bar_size) ||
	    access(SVOD_CONFIGFS "/", F_OK) || ht_undeclare_all() != 0) {
		tap_diag("%s: cannot read its tiers or BAR 2, or a declaration exists", bdf);
		return tap_done();
	}
	tap_diag("device %s, BAR2 0x%llx bytes: %.*s", bdf, (unsigned long long)bar_size,
		 (int)strcspn(orig, "\n"), orig);
	test_names();
	test_absent_device();
	test_bind_apply();
	test_race();
	ht_undeclare_all();
	return tap_done();
}
