// SPDX-License-Identifier: GPL-2.0
/*
 * t_access: who may use which tier. The device's BAR 2 is declared as two
 * tiers, "acc-open" (the default access, 0 0 0666) and "acc-scarce" (group
 * SCARCE_GID, mode 0660). configfs takes owner and group in decimal and mode
 * in octal, 0 to 0777 (else -EINVAL or -ERANGE); a commit that changes only
 * the access keeps the tier (same id) and sysfs shows it. Children run with
 * setresuid/setresgid as an unprivileged user: a non-member is refused
 * ALLOC on the scarce tier with -EACCES (counted in sysfs "denied") and sees
 * it marked SVOD_TIER_NO_ACCESS in QUERY, but allocates on the open tier; a
 * member (supplementary group or fsgid) allocates. The opener's credentials
 * count, not the caller's: a file opened by a member and passed by
 * SCM_RIGHTS to a non-member allocates; one opened by a non-member and
 * passed to a member does not. A dma-buf of the scarce tier is refused at
 * IMPORT by a non-member's file, taken by a member's. A mode changed while
 * a member holds an allocation leaves that allocation working (stage, read,
 * free) and refuses its next ALLOC. Root passes by CAP_DAC_OVERRIDE, and
 * without it is judged by the bits like anyone. A process in a user
 * namespace is judged by its outer ids: "root" of a rootless container is
 * refused (skipped, naming the errno, where unshare() is refused). Puts the device
 * back with its default tier.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"
#include "tap.h"

#define NR_CASES	26

#define USER_UID	5000
#define USER_GID	5000
#define SCARCE_GID	4242

/* Who a child runs as. */
enum who { NONMEMBER, MEMBER_SUPP, MEMBER_FSGID };

static char bdf[SVOD_NAME_LEN];
static char orig[4096];
static struct svod_tier_info open_tier, scarce;
static int root_fd = -1;
/*
 * /dev and /proc, opened by root: an unprivileged user may not search the
 * initramfs's root.
 */
static int dev_dir = -1, proc_dir = -1;

/* /dev/svod, opened by whoever the caller is now. */
static int user_open(void)
{
	int fd = openat(dev_dir, "svod", O_RDWR | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/* Becomes the unprivileged user: no capability left, groups as @who says. */
static int become(enum who who)
{
	gid_t supp = SCARCE_GID;
	gid_t gid = who == MEMBER_FSGID ? SCARCE_GID : USER_GID;

	if (setgroups(who == MEMBER_SUPP, &supp) || setresgid(gid, gid, gid) ||
	    setresuid(USER_UID, USER_UID, USER_UID))
		return -errno;
	return 0;
}

/* ALLOC of 4 KiB in @tier: 0 or -errno (the allocation is kept). */
static int alloc_in(int sfd, uint32_t tier)
{
	struct svod_alloc a;

	return svod_alloc(sfd, tier, 4096, 0, &a);
}

/*
 * Runs @fn in a child as @who (after opening /dev/svod as that user) and
 * returns what it returned: 0 or a negative errno, -EBADE if it could not
 * set up.
 */
static int as_user(enum who who, int (*fn)(int fd, void *arg), void *arg)
{
	pid_t pid = fork();
	int fd, ret;

	if (pid < 0)
		return -errno;
	if (!pid) {
		if (become(who))
			_exit(EBADE);
		fd = user_open();
		if (fd < 0)
			_exit(EBADE);
		ret = fn(fd, arg);
		_exit(ret < 0 ? -ret : 0);
	}
	ret = ht_wait_exit(pid);
	return ret > 0 ? -ret : ret;
}

static int do_alloc(int fd, void *arg)
{
	return alloc_in(fd, *(uint32_t *)arg);
}

/* 0 if QUERY marks the scarce tier and not the open one, as @arg says. */
static int do_query_marks(int fd, void *arg)
{
	struct svod_tier_info s, o;
	int marked = *(int *)arg;

	if (svod_tier_by_name(fd, scarce.name, &s) || svod_tier_by_name(fd, open_tier.name, &o))
		return -EBADE;
	if (!!(s.flags & SVOD_TIER_NO_ACCESS) != marked || (o.flags & SVOD_TIER_NO_ACCESS))
		return -EPROTO;
	return 0;
}

static int sysfs_tier_read(uint32_t id, const char *attr, char *buf, size_t len)
{
	char path[128];
	int f;
	ssize_t n;

	snprintf(path, sizeof(path), "/sys/class/svod/tier%u/%s", id, attr);
	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return -errno;
	n = read(f, buf, len - 1);
	close(f);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static long long denied(void)
{
	char buf[32];

	return sysfs_tier_read(scarce.id, "denied", buf, sizeof(buf)) ? -1 : atoll(buf);
}

static int set_scarce(const char *attr, const char *val)
{
	char rel[96];

	snprintf(rel, sizeof(rel), "tiers/acc-scarce/%s", attr);
	return ht_cfs_write(bdf, rel, val);
}

static int commit(void)
{
	return ht_cfs_write(bdf, "commit", "1");
}

static void test_configfs(void)
{
	static const struct { const char *attr, *val; int err; } bad[] = {
		{ "mode", "1000", -ERANGE }, { "mode", "8", -EINVAL },
		{ "mode", "rw", -EINVAL }, { "mode", "-1", -EINVAL },
		{ "owner", "4294967295", -ERANGE }, { "owner", "0x10", -EINVAL },
		{ "group", "-1", -EINVAL }, { "group", "\n", -EINVAL },
	};
	char mode[16], owner[16], buf[64];
	unsigned int i, ok = 0;
	uint32_t id = scarce.id;
	int ret;

	ret = ht_cfs_read(bdf, "tiers/acc-scarce/mode", mode, sizeof(mode));
	ret = ret ? ret : ht_cfs_read(bdf, "tiers/acc-scarce/owner", owner, sizeof(owner));
	tap_ok(!ret && !strcmp(mode, "0666") && !strcmp(owner, "0"),
	       "configfs_default_access_0_0_0666 (%s, %s)", mode, owner);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		ret = set_scarce(bad[i].attr, bad[i].val);
		ok += ret == bad[i].err;
		if (ret != bad[i].err)
			tap_diag("%s \"%s\": %s", bad[i].attr, bad[i].val, ht_err(ret));
	}
	tap_ok(ok == ARRAY_SIZE(bad), "configfs_bad_owner_group_mode_einval_erange (%u of %zu)",
	       ok, ARRAY_SIZE(bad));

	snprintf(buf, sizeof(buf), "%u\n", SCARCE_GID);
	ret = set_scarce("group", buf);
	ret = ret ? ret : set_scarce("mode", "660");
	ret = ret ? ret : commit();
	tap_errno(ret, 0, "commit_group_only_access");
	ret = svod_tier_by_name(root_fd, scarce.name, &scarce);
	tap_ok(!ret && scarce.id == id, "access_change_keeps_the_tier (id %u -> %u)", id,
	       scarce.id);
	ret = sysfs_tier_read(scarce.id, "mode", mode, sizeof(mode));
	ret = ret ? ret : sysfs_tier_read(scarce.id, "group", buf, sizeof(buf));
	tap_ok(!ret && !strcmp(mode, "0660") && atoi(buf) == SCARCE_GID,
	       "sysfs_shows_group_and_mode (%s, %s)", mode, buf);
}

static void test_alloc(void)
{
	long long before = denied();
	int marked = 1, unmarked = 0;

	tap_errno(as_user(NONMEMBER, do_alloc, &scarce.id), -EACCES,
		  "nonmember_alloc_group_only_tier_eacces");
	tap_ok(before >= 0 && denied() == before + 1, "refusal_counted_in_sysfs_denied (%lld -> %lld)",
	       before, denied());
	tap_errno(as_user(NONMEMBER, do_alloc, &open_tier.id), 0, "nonmember_alloc_open_tier");
	tap_errno(as_user(MEMBER_SUPP, do_alloc, &scarce.id), 0,
		  "member_by_supplementary_group_allocs");
	tap_errno(as_user(MEMBER_FSGID, do_alloc, &scarce.id), 0, "member_by_gid_allocs");
	tap_errno(as_user(NONMEMBER, do_query_marks, &marked), 0,
		  "nonmember_query_marks_scarce_no_access");
	tap_errno(as_user(MEMBER_SUPP, do_query_marks, &unmarked), 0,
		  "member_query_marks_nothing");
}

/*
 * A child as @opener opens /dev/svod and passes it by SCM_RIGHTS to a child
 * as @user, which allocates in the scarce tier through it: that ALLOC's
 * result.
 */
static int passed_alloc(enum who opener, enum who user)
{
	int sv[2], ret, st;
	pid_t a, b;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return -EBADE;
	a = fork();
	if (!a) {
		int fd;

		close(sv[1]);
		fd = become(opener) ? -1 : user_open();
		_exit(fd < 0 || ht_send_fd(sv[0], fd) ? EBADE : 0);
	}
	b = fork();
	if (!b) {
		int fd;

		close(sv[0]);
		if (become(user))
			_exit(EBADE);
		fd = ht_recv_fd(sv[1]);
		if (fd < 0)
			_exit(EBADE);
		ret = alloc_in(fd, scarce.id);
		_exit(ret < 0 ? -ret : 0);
	}
	close(sv[0]);
	close(sv[1]);
	st = a > 0 ? ht_wait_exit(a) : -1;
	ret = b > 0 ? ht_wait_exit(b) : -1;
	return st ? -EBADE : (ret > 0 ? -ret : ret);
}

static void test_passed(void)
{
	tap_errno(passed_alloc(MEMBER_SUPP, NONMEMBER), 0,
		  "file_of_member_passed_to_nonmember_allocs");
	tap_errno(passed_alloc(NONMEMBER, MEMBER_SUPP), -EACCES,
		  "file_of_nonmember_passed_to_member_eacces");
}

static int dmabuf_fd = -1;

static int do_import(int fd, void *arg)
{
	struct svod_import imp;

	(void)arg;
	return svod_import(fd, dmabuf_fd, &imp);
}

static void test_import(void)
{
	struct svod_alloc a;
	uint64_t size;
	int rfd = svod_open(), ret;

	ret = rfd < 0 ? rfd : svod_alloc_flags(rfd, scarce.id, 4096, 0, SVOD_ALLOC_MAPPABLE, &a);
	ret = ret ? ret : svod_export(rfd, a.handle, SVOD_EXPORT_WRITE, &dmabuf_fd, &size);
	tap_errno(ret, 0, "root_allocs_and_exports_from_scarce_tier");
	tap_errno(as_user(NONMEMBER, do_import, NULL), -EACCES,
		  "nonmember_import_of_scarce_dmabuf_eacces");
	tap_errno(as_user(MEMBER_SUPP, do_import, NULL), 0, "member_import_of_scarce_dmabuf");
	if (dmabuf_fd >= 0)
		close(dmabuf_fd);
	if (rfd >= 0)
		svod_close(rfd);
}

/*
 * A member allocates, tells the parent, waits while the parent makes the
 * tier owner-only (0600), then uses its allocation and asks for another.
 * Exit: 0 if the allocation still stages, reads and frees and the new ALLOC
 * is -EACCES; else a code saying which step failed.
 */
static void test_mode_change(void)
{
	int up[2], down[2], ret, st;
	uint32_t nr_live = 0;
	char c = 0;
	pid_t pid;

	if (pipe(up) || pipe(down)) {
		tap_skip("pipe failed", "mode_change_keeps_live_allocation");
		tap_skip("pipe failed", "mode_change_refuses_next_alloc");
		return;
	}
	pid = fork();
	if (!pid) {
		struct svod_alloc a;
		char buf[64] = "kept", back[64] = "";
		uint64_t done;
		int fd;

		close(up[0]);
		close(down[1]);
		fd = become(MEMBER_SUPP) ? -1 : user_open();
		if (fd < 0 || svod_alloc(fd, scarce.id, 4096, 0, &a))
			_exit(10);
		if (write(up[1], &c, 1) != 1 || read(down[0], &c, 1) != 1)
			_exit(11);
		if (svod_stage(fd, a.handle, 0, buf, sizeof(buf), 0, &done) ||
		    svod_read(fd, a.handle, 0, back, sizeof(back), 0, &done) ||
		    strcmp(back, "kept") || svod_free(fd, a.handle))
			_exit(12);
		_exit(alloc_in(fd, scarce.id) == -EACCES ? 0 : 13);
	}
	close(up[1]);
	close(down[0]);
	ret = read(up[0], &c, 1) == 1 ? set_scarce("mode", "0600") : -EBADE;
	ret = ret ? ret : commit();
	if (!ret)
		ht_tier_usage(root_fd, scarce.id, NULL, &nr_live);
	if (write(down[1], &c, 1) != 1)
		ret = -EPIPE;
	st = ht_wait_exit(pid);
	tap_ok(!ret && st != 10 && st != 11 && st != 12 && nr_live >= 1,
	       "mode_change_keeps_live_allocation (%s, child %d, %u live)", ht_err(ret), st,
	       nr_live);
	tap_ok(!ret && st == 0, "mode_change_refuses_next_alloc (child %d)", st);
	close(up[0]);
	close(down[1]);
}

static void test_root(void)
{
	int rfd, ret, st;
	pid_t pid;

	ret = set_scarce("mode", "0");
	ret = ret ? ret : commit();
	rfd = svod_open();
	tap_errno(ret ? ret : alloc_in(rfd, scarce.id), 0, "root_allocs_mode_0_by_cap_dac_override");
	svod_close(rfd);
	pid = fork();
	if (!pid) {
		rfd = ht_drop_cap(CAP_DAC_OVERRIDE) ? -1 : user_open();
		if (rfd < 0)
			_exit(EBADE);
		ret = alloc_in(rfd, scarce.id);
		_exit(ret < 0 ? -ret : 0);
	}
	st = ht_wait_exit(pid);
	tap_errno(st > 0 ? -st : st, -EACCES, "root_without_cap_dac_override_eacces");
}

/*
 * In a new user namespace as its root (uid 0 inside mapped to USER_UID
 * outside, every capability there): judged as USER_UID.
 */
static int userns_alloc(uint32_t tier)
{
	pid_t pid = fork();
	int fd, ret, f;
	char map[64];

	if (!pid) {
		/* Dumpable again, so /proc/self/uid_map is ours to write. */
		if (become(NONMEMBER) || prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
			_exit(EBADE);
		/* Refused (no CONFIG_USER_NS, a sysctl, a chroot): 200 + errno. */
		if (unshare(CLONE_NEWUSER))
			_exit(200 + (errno & 31));
		snprintf(map, sizeof(map), "0 %u 1\n", USER_UID);
		f = openat(proc_dir, "self/uid_map", O_WRONLY);
		if (f < 0 || write(f, map, strlen(map)) < 0)
			_exit(EBADE);
		close(f);
		if (getuid() != 0)
			_exit(EBADE);
		fd = user_open();
		if (fd < 0)
			_exit(EBADE);
		ret = alloc_in(fd, tier);
		_exit(ret < 0 ? -ret : 0);
	}
	ret = ht_wait_exit(pid);
	return ret > 0 ? -ret : ret;
}

static void test_userns(void)
{
	char buf[16], why[64];
	int ret;

	snprintf(buf, sizeof(buf), "%u", USER_UID);
	ret = set_scarce("mode", "0600");
	ret = ret ? ret : set_scarce("owner", "0");
	ret = ret ? ret : commit();
	ret = ret ? ret : userns_alloc(scarce.id);
	if (ret <= -200 && ret > -232) {
		snprintf(why, sizeof(why), "unshare(CLONE_NEWUSER) refused: %s", ht_err(200 + ret));
		tap_skip(why, "userns_root_is_its_outer_uid_eacces");
		tap_skip(why, "userns_owner_by_outer_uid_allocs");
		return;
	}
	tap_errno(ret, -EACCES, "userns_root_is_its_outer_uid_eacces");
	ret = set_scarce("owner", buf);
	ret = ret ? ret : commit();
	tap_errno(ret ? ret : userns_alloc(scarce.id), 0, "userns_owner_by_outer_uid_allocs");
}

static int setup(void)
{
	uint64_t bar_size;
	char text[512];
	int ret;

	if (ht_bar_size(bdf, 2, &bar_size) || bar_size < (2 << 20))
		return -ENODEV;
	snprintf(text, sizeof(text),
		 "acc-open bar=2 offset=0 size=0x%llx\nacc-scarce bar=2 offset=0x%llx size=0x%llx\n",
		 (unsigned long long)bar_size / 2, (unsigned long long)bar_size / 2,
		 (unsigned long long)bar_size / 2);
	ret = svod_tiers_write(bdf, text);
	ret = ret ? ret : svod_tier_by_name(root_fd, "acc-open", &open_tier);
	return ret ? ret : svod_tier_by_name(root_fd, "acc-scarce", &scarce);
}

int main(void)
{
	char bdfs[4][SVOD_NAME_LEN];
	struct stat node;
	int ret;

	tap_plan(NR_CASES);
	root_fd = ht_open();
	ret = svod_devices(bdfs, 4);
	if (root_fd < 0 || ret <= 0 || stat("/dev/svod", &node)) {
		tap_diag("no device bound to svod (fd %d, devices %d)", root_fd, ret);
		return tap_done();
	}
	strcpy(bdf, bdfs[0]);
	if (svod_tiers_read(bdf, orig, sizeof(orig)) < 0) {
		tap_diag("cannot read %s's tiers", bdf);
		return tap_done();
	}
	dev_dir = open("/dev", O_PATH | O_DIRECTORY | O_CLOEXEC);
	proc_dir = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	/* The node lets everyone open; the tiers decide. */
	tap_errno(chmod("/dev/svod", 0666) ? -errno : 0, 0, "dev_svod_open_to_all");
	ret = setup();
	tap_errno(ret, 0, "declare_open_and_scarce_tiers");
	if (!ret) {
		test_configfs();
		test_alloc();
		test_passed();
		test_import();
		test_mode_change();
		test_root();
		test_userns();
	}
	tap_errno(svod_tiers_write(bdf, orig), 0, "declare_restore_original");
	chmod("/dev/svod", node.st_mode & 07777);
	svod_close(root_fd);
	ht_undeclare_all();
	return tap_done();
}
