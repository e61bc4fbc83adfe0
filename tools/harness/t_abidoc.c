// SPDX-License-Identifier: GPL-2.0
/*
 * t_abidoc: the ABI documents match what the driver really makes. Every
 * file and directory under each bound device's svod/ in sysfs, and its
 * svod_state (but the
 * driver core's generic entries of a tier's device, driver_core_entries[]),
 * under /sys/class/svod/, under /sys/kernel/config/svod/ and under
 * /sys/module/svod/parameters/ matches a
 * What: of Documentation/ABI/testing/{sysfs-driver-svod,configfs-svod}
 * (<...> there stands for the rest of one path component, as in
 * tier<id>), and every What matches at
 * least one of them; each mismatch is printed. So that every documented
 * directory exists, a tier and a reserved region are staged (mkdir only,
 * never committed: nothing live changes) on the first device and removed
 * again. The documents are built into the binary (t_abidoc.mk): the guest
 * sees no source tree.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"
#include "tap.h"

#define NR_CASES	12

#define MAX_PATHS	512
#define SVOD_SYSFS_CLASS	"/sys/class/svod"
#define STAGED_TIER	"t_abidoc"
#define STAGED_REGION	"r0"

/* The two documents, NUL-terminated (assembled from SVOD_ABI_DIR). */
extern const char abi_sysfs[], abi_configfs[];
__asm__(".section .rodata\n"
	".global abi_sysfs\n"
	"abi_sysfs:\n"
	".incbin \"" SVOD_ABI_DIR "/sysfs-driver-svod\"\n"
	".byte 0\n"
	".global abi_configfs\n"
	"abi_configfs:\n"
	".incbin \"" SVOD_ABI_DIR "/configfs-svod\"\n"
	".byte 0\n"
	".previous\n");

/* A set of paths: documented Whats or paths found, with a match count. */
struct paths {
	char *path[MAX_PATHS];
	unsigned int hits[MAX_PATHS];
	unsigned int nr;
	int overflow;
};

/* One tree of the driver: where it starts and the prefix of its Whats. */
struct tree {
	const char *name;
	const char *what_prefix;
	struct paths doc, found;
};

static struct tree trees[] = {
	{ .name = "sysfs tiers", .what_prefix = SVOD_SYSFS_DEVICES "/" },
	{ .name = "configfs", .what_prefix = SVOD_CONFIGFS },
	{ .name = "module parameters", .what_prefix = SVOD_SYSFS_PARAMS "/" },
	{ .name = "sysfs class", .what_prefix = SVOD_SYSFS_CLASS },
};

/*
 * A tier is a struct device: the driver core gives its directory these
 * entries, as it does every device's. They are the kernel's ABI
 * (Documentation/ABI/testing/sysfs-devices-*), not svod's, and vary with the
 * kernel's configuration (power/), so they are skipped here. The driver
 * core's uevent is not: svod documents it, it shows svod's SVOD_* keys.
 */
static const char *const driver_core_entries[] = { "subsystem", "device", "power" };

/* Is @dir a tier's directory, .../svod/tier<id>? */
static int is_tier_dir(const char *dir)
{
	const char *base = strrchr(dir, '/');

	return base && base - dir >= 5 && !strncmp(base - 5, "/svod/tier", 10) &&
	       base[5] && strspn(base + 5, "0123456789") == strlen(base + 5);
}

static int driver_core_entry(const char *dir, const char *name)
{
	unsigned int i;

	for (i = 0; is_tier_dir(dir) && i < ARRAY_SIZE(driver_core_entries); i++)
		if (!strcmp(name, driver_core_entries[i]))
			return 1;
	return 0;
}

static void paths_add(struct paths *p, const char *path)
{
	if (p->nr == MAX_PATHS) {
		p->overflow = 1;
		return;
	}
	p->path[p->nr++] = strdup(path);
}

/*
 * Adds the Whats of @doc to their trees; returns the number of entries that
 * lack one of What, Date, KernelVersion, Contact, Description (each
 * printed), or -1 for a What under no tree.
 */
static int parse_doc(const char *name, const char *doc)
{
	static const char *const fields[] = {
		"Date:", "KernelVersion:", "Contact:", "Description:",
	};
	const char *line = doc, *end;
	char text[512];
	unsigned int seen = 0, i, entries = 0;
	int bad = 0, in_entry = 0;

	for (; *line; line = *end ? end + 1 : end) {
		end = strchr(line, '\n');
		if (!end)
			end = line + strlen(line);
		snprintf(text, sizeof(text), "%.*s", (int)(end - line), line);
		if (!strncmp(text, "What:", 5)) {
			const char *what = text + 5 + strspn(text + 5, " \t");

			if (in_entry && seen != (1U << ARRAY_SIZE(fields)) - 1) {
				tap_diag("%s: an entry before %s lacks a field", name, what);
				bad++;
			}
			if (!in_entry || seen) {
				entries++;
				seen = 0;
			}
			in_entry = 1;
			for (i = 0; i < ARRAY_SIZE(trees); i++) {
				if (!strncmp(what, trees[i].what_prefix,
					     strlen(trees[i].what_prefix))) {
					paths_add(&trees[i].doc, what);
					break;
				}
			}
			if (i == ARRAY_SIZE(trees)) {
				tap_diag("%s: What under no tree svod makes: %s", name, what);
				bad++;
			}
			continue;
		}
		for (i = 0; i < ARRAY_SIZE(fields); i++) {
			size_t len = strlen(fields[i]);

			if (!strncmp(text, fields[i], len) &&
			    (text[len + strspn(text + len, " \t")] || i == 3))
				seen |= 1U << i;
		}
	}
	if (in_entry && seen != (1U << ARRAY_SIZE(fields)) - 1) {
		tap_diag("%s: its last entry lacks a field", name);
		bad++;
	}
	tap_diag("%s: %u entries", name, entries);
	return bad;
}

/*
 * Does @path match @what, where a component of @what that ends in <...>
 * matches any component that starts with what comes before the '<' and has
 * at least one more character ("<bdf>", "tier<id>")?
 */
static int path_matches(const char *what, const char *path)
{
	while (*what && *path) {
		size_t wl = strcspn(what, "/"), pl = strcspn(path, "/");
		const char *lt = memchr(what, '<', wl);
		size_t fixed = lt ? (size_t)(lt - what) : 0;

		if (!(lt && what[wl - 1] == '>' && pl > fixed && !strncmp(what, path, fixed)) &&
		    (wl != pl || strncmp(what, path, wl)))
			return 0;
		what += wl;
		path += pl;
		if (*what != *path)
			return 0;
		what += !!*what;
		path += !!*path;
	}
	return !*what && !*path;
}

/* Adds @dir and everything below it (no symlink followed) to @p. */
static void walk(struct paths *p, const char *dir, int add_self)
{
	char path[1024];
	struct dirent *d;
	struct stat st;
	DIR *dp;

	if (add_self)
		paths_add(p, dir);
	dp = opendir(dir);
	if (!dp) {
		tap_diag("opendir %s: %s", dir, strerror(errno));
		return;
	}
	while ((d = readdir(dp))) {
		if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, "..") ||
		    driver_core_entry(dir, d->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		if (lstat(path, &st))
			continue;
		if (S_ISDIR(st.st_mode))
			walk(p, path, 1);
		else
			paths_add(p, path);
	}
	closedir(dp);
}

/* The bound devices' PCI names, sorted; returns how many. */
static int bound_devices(char names[][SVOD_NAME_LEN], int max)
{
	struct dirent **list;
	int n, i, nr = 0;

	n = scandir(SVOD_SYSFS_DRIVER, &list, NULL, alphasort);
	for (i = 0; i < n; i++) {
		if (strchr(list[i]->d_name, ':') && nr < max &&
		    strlen(list[i]->d_name) < SVOD_NAME_LEN)
			memcpy(names[nr++], list[i]->d_name,
			       strlen(list[i]->d_name) + 1);
		free(list[i]);
	}
	if (n >= 0)
		free(list);
	return nr;
}

/* One case per direction: found but not documented, documented but absent. */
static void compare(struct tree *t)
{
	unsigned int i, j, undocumented = 0, absent = 0;

	for (i = 0; i < t->found.nr; i++) {
		for (j = 0; j < t->doc.nr; j++) {
			if (path_matches(t->doc.path[j], t->found.path[i])) {
				t->doc.hits[j]++;
				t->found.hits[i]++;
			}
		}
		if (!t->found.hits[i]) {
			tap_diag("%s: not documented: %s", t->name, t->found.path[i]);
			undocumented++;
		}
	}
	for (j = 0; j < t->doc.nr; j++) {
		if (!t->doc.hits[j]) {
			tap_diag("%s: documented, not found: %s", t->name, t->doc.path[j]);
			absent++;
		}
	}
	tap_ok(!undocumented && t->found.nr && !t->found.overflow,
	       "%s: all %u paths the driver made are documented (%u not)",
	       t->name, t->found.nr, undocumented);
	tap_ok(!absent && t->doc.nr && !t->doc.overflow,
	       "%s: all %u documented Whats exist (%u not)", t->name, t->doc.nr, absent);
}

int main(void)
{
	char devs[8][SVOD_NAME_LEN], dir[512];
	int nr_devs, bad, staged, i, ret;

	tap_plan(NR_CASES);
	bad = parse_doc("sysfs-driver-svod", abi_sysfs);
	bad += parse_doc("configfs-svod", abi_configfs);
	tap_ok(!bad, "the ABI documents have What, Date, KernelVersion, Contact and Description in every entry");

	nr_devs = bound_devices(devs, ARRAY_SIZE(devs));
	tap_ok(nr_devs > 0, "%d bound svod devices", nr_devs);
	if (nr_devs <= 0)
		return tap_done();

	/* Every documented directory exists once a tier and a region are staged. */
	ret = ht_cfs_mkdir(devs[0], "tiers/" STAGED_TIER);
	staged = !ret;
	if (!ret)
		ret = ht_cfs_mkdir(devs[0], "tiers/" STAGED_TIER "/reserved/" STAGED_REGION);
	tap_ok(!ret, "%s: staged tier %s with region %s (%s)", devs[0], STAGED_TIER,
	       STAGED_REGION, ht_err(ret));

	for (i = 0; i < nr_devs; i++) {
		snprintf(dir, sizeof(dir), SVOD_SYSFS_DEVICES "/%s/svod", devs[i]);
		walk(&trees[0].found, dir, 1);
		/* svod's own attribute of the PCI device (driver/pci.c). */
		snprintf(dir, sizeof(dir), SVOD_SYSFS_DEVICES "/%s/svod_state", devs[i]);
		if (!access(dir, F_OK))
			paths_add(&trees[0].found, dir);
	}
	walk(&trees[1].found, SVOD_CONFIGFS, 1);
	walk(&trees[2].found, SVOD_SYSFS_PARAMS, 0);
	walk(&trees[3].found, SVOD_SYSFS_CLASS, 1);

	ret = 0;
	if (staged) {
		ht_cfs_rmdir(devs[0], "tiers/" STAGED_TIER "/reserved/" STAGED_REGION);
		ret = ht_cfs_rmdir(devs[0], "tiers/" STAGED_TIER);
	}
	tap_ok(!ret, "%s: the staged tier is removed again (%s)", devs[0], ht_err(ret));

	for (i = 0; i < (int)ARRAY_SIZE(trees); i++)
		compare(&trees[i]);
	/* Live tiers are back as they were: forget the declarations made. */
	ht_undeclare_all();
	return tap_done();
}
