// SPDX-License-Identifier: GPL-2.0
/*
 * t_uevent: the kernel's uevents for svod's tiers, read from a
 * NETLINK_KOBJECT_UEVENT socket (group 1, the kernel's own messages).
 * Each live tier is a device tier<id> of the class "svod" under its PCI
 * device; its "add" and "remove" carry SVOD_TIER, SVOD_TIER_ID and
 * SVOD_PCI_DEVICE. Checked, in this order:
 *  - staging values in configfs without commit sends no svod event;
 *  - a commit that replaces the tier set sends "remove" for each retired
 *    tier, then "add" for each new one (the order svod documents);
 *  - a refused commit sends no svod event, whether refused before it made
 *    the new tiers (a tier past the end of its BAR) or after (EBUSY: their
 *    devices were added, silently, and go again);
 *  - the commit that puts the original declaration back does the same;
 *  - unbind sends "remove" for each tier before the PCI device's "unbind";
 *  - bind sends "add" for the default tier before the PCI device's "bind"
 *    (svod adds its tiers in probe; the driver core sends "bind" after);
 *  - bind with a declaration made while unbound sends "add" for each
 *    declared tier and nothing for the default tier, which never exists.
 * Every event awaited has a 5 s timeout; other subsystems' events are
 * skipped. The device ends as it began: its default tier, and its
 * declaration in configfs as it was (none, in a harness run).
 */
#include <errno.h>
#include <linux/netlink.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "tap.h"

#define NR_CASES	33
#define WAIT_MS		5000
/* How long "no event" is watched for. */
#define QUIET_MS	700
#define MAX_EVENTS	32

/* One uevent of svod's class or of the PCI device under test. */
struct ev {
	char action[16];
	char devpath[256];
	char subsystem[32];
	char tier[SVOD_NAME_LEN];
	char pci[SVOD_NAME_LEN];
	long tier_id;
};

struct evlog {
	struct ev ev[MAX_EVENTS];
	int n;
};

static char bdf[SVOD_NAME_LEN];

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void copy_val(char *dst, size_t len, const char *val)
{
	snprintf(dst, len, "%s", val);
}

/*
 * Parses one kernel message, "ACTION@DEVPATH\0KEY=VAL\0...": 1 if it is
 * svod's or the device's, 0 if another's, -1 if it is not a uevent.
 */
static int parse(const char *buf, size_t len, struct ev *e)
{
	const char *p = buf, *end = buf + len;
	size_t dlen = strlen(bdf);

	memset(e, 0, sizeof(*e));
	e->tier_id = -1;
	if (!memchr(buf, '@', strnlen(buf, len)))
		return -1;
	for (p += strnlen(p, end - p) + 1; p < end; p += strnlen(p, end - p) + 1) {
		if (!strncmp(p, "ACTION=", 7))
			copy_val(e->action, sizeof(e->action), p + 7);
		else if (!strncmp(p, "DEVPATH=", 8))
			copy_val(e->devpath, sizeof(e->devpath), p + 8);
		else if (!strncmp(p, "SUBSYSTEM=", 10))
			copy_val(e->subsystem, sizeof(e->subsystem), p + 10);
		else if (!strncmp(p, "SVOD_TIER=", 10))
			copy_val(e->tier, sizeof(e->tier), p + 10);
		else if (!strncmp(p, "SVOD_PCI_DEVICE=", 16))
			copy_val(e->pci, sizeof(e->pci), p + 16);
		else if (!strncmp(p, "SVOD_TIER_ID=", 13))
			e->tier_id = strtol(p + 13, NULL, 10);
	}
	if (!strcmp(e->subsystem, "svod"))
		return 1;
	dlen = strlen(e->devpath) >= dlen ? strlen(e->devpath) - dlen : 0;
	return !strcmp(e->subsystem, "pci") && dlen && e->devpath[dlen - 1] == '/' &&
	       !strcmp(e->devpath + dlen, bdf);
}

static int count(const struct evlog *log, const char *action, int svod)
{
	int i, n = 0;

	for (i = 0; i < log->n; i++)
		n += !strcmp(log->ev[i].action, action) &&
		     !strcmp(log->ev[i].subsystem, svod ? "svod" : "pci");
	return n;
}

/* What a step waits for: this many svod removes, svod adds, PCI @pci_action. */
struct want {
	int removes, adds;
	const char *pci_action;
};

static int satisfied(const struct evlog *log, const struct want *w)
{
	return count(log, "remove", 1) >= w->removes && count(log, "add", 1) >= w->adds &&
	       (!w->pci_action || count(log, w->pci_action, 0));
}

/*
 * Appends svod's and the device's events to @log until @w is satisfied, or
 * no such event came for WAIT_MS; with @w NULL, watches QUIET_MS for any.
 */
static void gather(int s, struct evlog *log, const struct want *w)
{
	long long deadline = now_ms() + (w ? WAIT_MS : QUIET_MS);
	char buf[8192];
	struct pollfd pfd = { .fd = s, .events = POLLIN };
	struct ev e;
	ssize_t n;

	log->n = 0;
	while (!(w && satisfied(log, w))) {
		long long left = deadline - now_ms();

		if (left <= 0 || poll(&pfd, 1, (int)left) <= 0)
			break;
		n = recv(s, buf, sizeof(buf) - 1, MSG_DONTWAIT);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		if (parse(buf, n, &e) != 1)
			continue;
		tap_diag("  event %d: %s %s%s%s%s%s", log->n, e.action, e.devpath,
			 e.tier[0] ? " SVOD_TIER=" : "", e.tier,
			 e.pci[0] ? " SVOD_PCI_DEVICE=" : "", e.pci);
		if (log->n < MAX_EVENTS)
			log->ev[log->n++] = e;
		if (w)
			deadline = now_ms() + WAIT_MS;
	}
}

/* Drops whatever is queued: each step reads only its own events. */
static void drain(int s)
{
	char buf[8192];

	while (recv(s, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
}

/* Index of @action for tier @name (svod) in @log, or -1. */
static int find_tier(const struct evlog *log, const char *action, const char *name)
{
	int i;

	for (i = 0; i < log->n; i++)
		if (!strcmp(log->ev[i].subsystem, "svod") &&
		    !strcmp(log->ev[i].action, action) && !strcmp(log->ev[i].tier, name))
			return i;
	return -1;
}

static int find_pci(const struct evlog *log, const char *action)
{
	int i;

	for (i = 0; i < log->n; i++)
		if (!strcmp(log->ev[i].subsystem, "pci") && !strcmp(log->ev[i].action, action))
			return i;
	return -1;
}

/*
 * Is event @i right for tier @id: its keys, and its path
 * .../<bdf>/svod/tier<id>?
 */
static int event_right(const struct evlog *log, int i, long id)
{
	char tail[96];
	const struct ev *e;
	size_t len;

	if (i < 0)
		return 0;
	e = &log->ev[i];
	snprintf(tail, sizeof(tail), "/%s/svod/tier%ld", bdf, id);
	len = strlen(e->devpath);
	return e->tier_id == id && !strcmp(e->pci, bdf) && len > strlen(tail) &&
	       !strcmp(e->devpath + len - strlen(tail), tail);
}

static int open_uevents(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = 1 };
	int s, size = 4 << 20;

	s = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT);
	if (s < 0)
		return -errno;
	if (setsockopt(s, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)))
		setsockopt(s, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	if (bind(s, (struct sockaddr *)&sa, sizeof(sa))) {
		close(s);
		return -errno;
	}
	return s;
}

/* The values of a tier's configfs directory that a commit reads. */
static const char *const fields[] = { "bar", "offset", "size", "base", "align" };

static int stage_tier(const char *name, const char *bar, const char *offset,
		      const char *size)
{
	char rel[128];
	int ret;

	snprintf(rel, sizeof(rel), "tiers/%s", name);
	ret = ht_cfs_mkdir(bdf, rel);
	snprintf(rel, sizeof(rel), "tiers/%s/bar", name);
	ret = ret ? ret : ht_cfs_write(bdf, rel, bar);
	snprintf(rel, sizeof(rel), "tiers/%s/offset", name);
	ret = ret ? ret : ht_cfs_write(bdf, rel, offset);
	snprintf(rel, sizeof(rel), "tiers/%s/size", name);
	return ret ? ret : ht_cfs_write(bdf, rel, size);
}

/* Reads a small file, newline dropped: 1 on success. */
static int read_text(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, len - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = '\0';
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return n > 0;
}

static int tier_id(int fd, const char *name, long *id)
{
	struct svod_tier_info t;
	int ret = svod_tier_by_name(fd, name, &t);

	*id = ret ? -1 : (long)t.id;
	return ret;
}

int main(void)
{
	char orig[ARRAY_SIZE(fields)][64], rel[160], path[320], text[256], num[32];
	struct svod_tier_info tier, t;
	char bdfs[4][SVOD_NAME_LEN];
	long id_orig, id_a, id_b, id;
	struct svod_alloc a = {};
	struct evlog log;
	int s, fd, nr, ret, i, ok, had_cfs_dir;
	uint64_t bar = 0;
	struct want w;

	tap_plan(NR_CASES);
	fd = ht_open();
	nr = svod_devices(bdfs, 4);
	s = open_uevents();
	if (fd < 0 || nr <= 0 || s < 0) {
		tap_diag("no device bound to svod, or no uevent socket (fd %d, devices %d, %s)",
			 fd, nr, ht_err(s < 0 ? s : 0));
		return tap_done();
	}
	strcpy(bdf, bdfs[0]);
	if (svod_tier_by_device(fd, bdf, &tier) || ht_bar_size(bdf, 2, &bar)) {
		tap_diag("device %s: no tier", bdf);
		return tap_done();
	}
	id_orig = tier.id;
	snprintf(path, sizeof(path), SVOD_CONFIGFS "/%s", bdf);
	had_cfs_dir = !access(path, F_OK);
	ret = mkdir(path, 0755) ? -errno : 0;
	tap_ok(!ret || ret == -EEXIST, "mkdir_configfs_device_dir (%s)", ht_err(ret));
	/* Declare the live tier as it is (kept as it is: no event). */
	ret = svod_tiers_read(bdf, text, sizeof(text)) < 0 ? -EIO : 0;
	ret = ret ? ret : had_cfs_dir ? 0 : svod_tiers_write(bdf, text);
	for (i = 0; i < (int)ARRAY_SIZE(fields); i++) {
		snprintf(rel, sizeof(rel), "tiers/%s/%s", tier.name, fields[i]);
		ret = ret ? ret : ht_cfs_read(bdf, rel, orig[i], sizeof(orig[i]));
	}
	tap_errno(ret, 0, "read_original_declaration_of_%s", tier.name);

	/* The class and the tier's device, as they are before any change. */
	snprintf(path, sizeof(path), "/sys/class/svod/tier%ld/uevent", id_orig);
	ok = read_text(path, text, sizeof(text));
	snprintf(rel, sizeof(rel), "SVOD_TIER=%s\n", tier.name);
	tap_ok(ok && strstr(text, rel) && strstr(text, "SVOD_PCI_DEVICE=") &&
	       strstr(text, bdf), "class_link_uevent_file_has_keys_of_%s", tier.name);
	snprintf(path, sizeof(path), SVOD_SYSFS_DEVICES "/%s/svod/tier%ld/name", bdf, id_orig);
	ok = read_text(path, text, sizeof(text));
	tap_ok(ok && !strcmp(text, tier.name), "tier_dir_under_pci_device_names_%s", tier.name);

	/* (d) Staged values alone change nothing. */
	drain(s);
	snprintf(num, sizeof(num), "%llu", (unsigned long long)bar / 2);
	ret = stage_tier("uev_b", "2", num, num);
	snprintf(rel, sizeof(rel), "tiers/%s/size", tier.name);
	ret = ret ? ret : ht_cfs_write(bdf, rel, num);
	tap_errno(ret, 0, "stage_two_tiers_without_commit");
	gather(s, &log, NULL);
	tap_ok(log.n == 0, "staging_without_commit_sends_no_event (%d)", log.n);

	/* (c) A commit that replaces the set: removes first, then adds. */
	drain(s);
	ret = ht_cfs_write(bdf, "commit", "1");
	tap_errno(ret, 0, "commit_replacing_set");
	w = (struct want){ .removes = 1, .adds = 2 };
	gather(s, &log, &w);
	tier_id(fd, tier.name, &id_a);
	tier_id(fd, "uev_b", &id_b);
	i = find_tier(&log, "remove", tier.name);
	tap_ok(event_right(&log, i, id_orig), "commit_remove_of_retired_tier%ld", id_orig);
	tap_ok(event_right(&log, find_tier(&log, "add", tier.name), id_a) &&
	       event_right(&log, find_tier(&log, "add", "uev_b"), id_b),
	       "commit_add_of_each_new_tier (tier%ld, tier%ld)", id_a, id_b);
	tap_ok(log.n == 3 && i == 0, "commit_sends_remove_then_adds_only (%d events)", log.n);

	/*
	 * A commit refused after it made the new tiers' devices (EBUSY: the
	 * tier it would retire has a live allocation): no event either.
	 */
	ret = svod_alloc(fd, (uint32_t)id_b, 4096, 0, &a);
	snprintf(num, sizeof(num), "%llu", (unsigned long long)bar / 4);
	ret = ret ? ret : ht_cfs_write(bdf, "tiers/uev_b/size", num);
	drain(s);
	tap_errno(ret ? ret : ht_cfs_write(bdf, "commit", "1"), -EBUSY,
		  "commit_retiring_tier_with_allocation_ebusy");
	gather(s, &log, NULL);
	tap_ok(log.n == 0, "busy_commit_sends_no_event (%d)", log.n);
	snprintf(num, sizeof(num), "%llu", (unsigned long long)bar / 2);
	ret = ht_cfs_write(bdf, "tiers/uev_b/size", num);
	tap_errno(ret ? ret : svod_free(fd, a.handle), 0, "uev_b_size_back_and_allocation_freed");

	/* A refused commit: no event at all. */
	drain(s);
	ret = stage_tier("uev_c", "2", "0", "4096");
	snprintf(num, sizeof(num), "%llu", (unsigned long long)bar);
	ret = ret ? ret : ht_cfs_write(bdf, "tiers/uev_c/offset", num);
	tap_errno(ret ? ret : ht_cfs_write(bdf, "commit", "1"), -ERANGE,
		  "commit_tier_past_bar_erange");
	gather(s, &log, NULL);
	tap_ok(log.n == 0, "refused_commit_sends_no_event (%d)", log.n);
	tap_errno(ht_cfs_rmdir(bdf, "tiers/uev_c"), 0, "rmdir_refused_tier");

	/* The original declaration back: two removes, then one add. */
	drain(s);
	ret = ht_cfs_rmdir(bdf, "tiers/uev_b");
	for (i = 0; i < (int)ARRAY_SIZE(fields); i++) {
		snprintf(rel, sizeof(rel), "tiers/%s/%s", tier.name, fields[i]);
		ret = ret ? ret : ht_cfs_write(bdf, rel, orig[i]);
	}
	tap_errno(ret ? ret : ht_cfs_write(bdf, "commit", "1"), 0, "commit_original_back");
	w = (struct want){ .removes = 2, .adds = 1 };
	gather(s, &log, &w);
	tier_id(fd, tier.name, &id);
	ok = event_right(&log, find_tier(&log, "remove", tier.name), id_a) &&
	     event_right(&log, find_tier(&log, "remove", "uev_b"), id_b) &&
	     event_right(&log, find_tier(&log, "add", tier.name), id);
	tap_ok(ok && log.n == 3 && !strcmp(log.ev[2].action, "add"),
	       "commit_back_removes_both_then_adds_tier%ld", id);

	/* (a) Unbind: each tier's remove, then the device's unbind. */
	drain(s);
	tap_errno(svod_driver_bind(bdf, 0), 0, "unbind");
	w = (struct want){ .removes = 1, .pci_action = "unbind" };
	gather(s, &log, &w);
	i = find_tier(&log, "remove", tier.name);
	tap_ok(event_right(&log, i, id), "unbind_removes_tier%ld", id);
	tap_ok(i >= 0 && find_pci(&log, "unbind") > i && count(&log, "remove", 1) == 1,
	       "unbind_tier_remove_before_pci_unbind");
	snprintf(path, sizeof(path), SVOD_SYSFS_DEVICES "/%s/svod", bdf);
	tap_ok(access(path, F_OK) && errno == ENOENT, "unbound_device_has_no_svod_dir");

	/* (b) Bind: the default tier's add, then the device's bind. */
	drain(s);
	tap_errno(svod_driver_bind(bdf, 1), 0, "bind");
	w = (struct want){ .adds = 1, .pci_action = "bind" };
	gather(s, &log, &w);
	ret = svod_tier_by_device(fd, bdf, &t);
	id = ret ? -1 : (long)t.id;
	i = find_tier(&log, "add", tier.name);
	tap_ok(event_right(&log, i, id), "bind_adds_default_tier%ld", id);
	tap_ok(i >= 0 && find_pci(&log, "bind") > i && count(&log, "add", 1) == 1,
	       "bind_tier_add_before_pci_bind");
	tap_ok(!ret && !strcmp(t.name, tier.name) && t.capacity == tier.capacity &&
	       t.align == tier.align && t.device_base == tier.device_base,
	       "default_tier_back_as_it_was (%s)", ht_err(ret));

	/* Declared while unbound: bind adds those tiers, never the default. */
	snprintf(text, sizeof(text), "uev_p bar=2 offset=0 size=%llu;uev_q bar=2 offset=%llu size=%llu",
		 (unsigned long long)bar / 2, (unsigned long long)bar / 2,
		 (unsigned long long)bar / 2);
	ret = svod_driver_bind(bdf, 0);
	ret = ret ?: svod_tiers_write(bdf, text);
	tap_errno(ret, 0, "declare_two_tiers_while_unbound");
	drain(s);
	tap_errno(svod_driver_bind(bdf, 1), 0, "bind_with_declaration");
	w = (struct want){ .adds = 2, .pci_action = "bind" };
	gather(s, &log, &w);
	tier_id(fd, "uev_p", &id_a);
	tier_id(fd, "uev_q", &id_b);
	i = find_pci(&log, "bind");
	tap_ok(event_right(&log, find_tier(&log, "add", "uev_p"), id_a) &&
	       event_right(&log, find_tier(&log, "add", "uev_q"), id_b) && log.n == 3 && i == 2 &&
	       find_tier(&log, "add", tier.name) < 0,
	       "bind_adds_declared_tiers_only_then_pci_bind (%d events)", log.n);
	/* Back to the default tier, declared as at the start. */
	ret = 0;
	for (i = 0; !ret && i < (int)ARRAY_SIZE(fields); i++) {
		snprintf(rel, sizeof(rel), "tiers/%s", tier.name);
		ret = i ? 0 : ht_cfs_mkdir(bdf, rel);
		snprintf(rel, sizeof(rel), "tiers/%s/%s", tier.name, fields[i]);
		ret = ret ? ret : ht_cfs_write(bdf, rel, orig[i]);
	}
	ret = ret ?: ht_cfs_rmdir(bdf, "tiers/uev_p");
	ret = ret ?: ht_cfs_rmdir(bdf, "tiers/uev_q");
	ret = ret ?: ht_cfs_write(bdf, "commit", "1");
	tap_ok(!ret && !svod_tier_by_device(fd, bdf, &t) && !strcmp(t.name, tier.name),
	       "default_tier_declared_back (%s)", ht_err(ret));

	/* Put configfs back as it was: the device dir, no staged tier. */
	snprintf(path, sizeof(path), SVOD_CONFIGFS "/%s", bdf);
	ret = mkdir(path, 0755) ? -errno : 0;
	tap_ok(!ret || ret == -EEXIST, "mkdir_configfs_device_dir_after_bind (%s)", ht_err(ret));
	ht_cfs_rmdir(bdf, "tiers/uev_b");
	ht_cfs_rmdir(bdf, "tiers/uev_c");
	snprintf(path, sizeof(path), SVOD_CONFIGFS "/%s/tiers/uev_b", bdf);
	snprintf(text, sizeof(text), SVOD_CONFIGFS "/%s/tiers/uev_c", bdf);
	tap_ok(access(path, F_OK) && access(text, F_OK), "no_staged_dir_left");
	if (had_cfs_dir) {
		for (i = 0, ok = 1; i < (int)ARRAY_SIZE(fields); i++) {
			snprintf(rel, sizeof(rel), "tiers/%s/%s", tier.name, fields[i]);
			ok &= !ht_cfs_read(bdf, rel, text, sizeof(text)) &&
			      !strcmp(text, orig[i]);
		}
		tap_ok(ok, "configfs_declaration_as_it_was");
	} else {
		/* This program made the declaration: it goes. */
		tap_errno(svod_undeclare(bdf), 0, "declaration_made_here_removed");
	}
	close(s);
	svod_close(fd);
	return tap_done();
}
