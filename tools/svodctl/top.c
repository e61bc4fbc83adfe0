// SPDX-License-Identifier: GPL-2.0
/*
 * `svodctl top`: which process holds what. Walks /proc/<pid>/fd for
 * descriptors of /dev/svod and prints, from their fdinfo, one row per tier
 * in which that open file holds allocations (drm-total-<tier> bytes,
 * svod-handles-<tier>, svod-mapped-<tier>: the bytes a mapping maps), then
 * debugfs svod/state when it is mounted. An open file shared by several
 * processes (fork, SCM_RIGHTS) shows up under each of them, with the same
 * figures.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "svodctl.h"

#define SVOD_DEBUGFS_STATE	"/sys/kernel/debug/svod/state"

static void read_comm(const char *pid, char *comm, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/comm", pid);
	f = fopen(path, "re");
	if (!f || !fgets(comm, (int)len, f))
		snprintf(comm, len, "?");
	comm[strcspn(comm, "\n")] = '\0';
	if (f)
		fclose(f);
}

#define TOP_MAX_TIERS	64

/**
 * struct top_tier - what one open file holds in one tier (from its fdinfo)
 * @name: tier name
 * @bytes: the drm-total-<tier> value as printed ("4160 KiB")
 * @handles: the svod-handles-<tier> value
 * @mapped: the svod-mapped-<tier> value ("8 KiB"), "0" if absent
 */
struct top_tier {
	char name[SVOD_NAME_LEN];
	char bytes[32];
	unsigned long handles;
	char mapped[32];
};

static struct top_tier *top_find(struct top_tier *t, unsigned int *nr, const char *name,
				 size_t len)
{
	unsigned int i;

	if (len >= SVOD_NAME_LEN)
		len = SVOD_NAME_LEN - 1;
	for (i = 0; i < *nr; i++)
		if (strlen(t[i].name) == len && !strncmp(t[i].name, name, len))
			return &t[i];
	if (*nr == TOP_MAX_TIERS)
		return NULL;
	memset(&t[*nr], 0, sizeof(t[*nr]));
	memcpy(t[*nr].name, name, len);
	strcpy(t[*nr].mapped, "0");
	return &t[(*nr)++];
}

/* One row per tier the file holds something in, or one "-" row. */
static int show_fd(const char *pid, const char *fd, const char *comm)
{
	struct top_tier tiers[TOP_MAX_TIERS], *t;
	char path[320], line[256], client[32] = "?", *colon, *val;
	unsigned int nr = 0, i, shown = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/fdinfo/%s", pid, fd);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		colon = strchr(line, ':');
		if (!colon)
			continue;
		val = colon + 1 + strspn(colon + 1, " \t");
		if (!strncmp(line, "drm-client-id:", 14)) {
			snprintf(client, sizeof(client), "%s", val);
		} else if (!strncmp(line, "drm-total-", 10)) {
			t = top_find(tiers, &nr, line + 10, (size_t)(colon - line - 10));
			if (t)
				snprintf(t->bytes, sizeof(t->bytes), "%s", val);
		} else if (!strncmp(line, "svod-handles-", 13)) {
			t = top_find(tiers, &nr, line + 13, (size_t)(colon - line - 13));
			if (t)
				t->handles = strtoul(val, NULL, 10);
		} else if (!strncmp(line, "svod-mapped-", 12)) {
			t = top_find(tiers, &nr, line + 12, (size_t)(colon - line - 12));
			if (t)
				snprintf(t->mapped, sizeof(t->mapped), "%s", val);
		}
	}
	fclose(f);
	for (i = 0; i < nr; i++) {
		if (!tiers[i].handles)
			continue;
		printf("%-7s %-16s %-4s %-7s %-16s %12s %12s %8lu\n", pid, comm, fd, client,
		       tiers[i].name, tiers[i].bytes, tiers[i].mapped, tiers[i].handles);
		shown++;
	}
	if (!shown)
		printf("%-7s %-16s %-4s %-7s %-16s %12s %12s %8d\n", pid, comm, fd, client, "-",
		       "0", "0", 0);
	return 1;
}

static int scan_pid(const char *pid)
{
	char dir[64], link[320], target[256], comm[64];
	struct dirent *de;
	int shown = 0;
	ssize_t n;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%s/fd", pid);
	d = opendir(dir);
	if (!d)
		return 0;
	comm[0] = '\0';
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "%s/%s", dir, de->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (strcmp(target, SVOD_DEV_PATH))
			continue;
		if (!comm[0])
			read_comm(pid, comm, sizeof(comm));
		shown += show_fd(pid, de->d_name, comm);
	}
	closedir(d);
	return shown;
}

static void show_debugfs(void)
{
	char line[512];
	FILE *f;

	f = fopen(SVOD_DEBUGFS_STATE, "re");
	if (!f)
		return;
	printf("\n%s:\n", SVOD_DEBUGFS_STATE);
	while (fgets(line, sizeof(line), f))
		printf("  %s", line);
	fclose(f);
}

/**
 * svodctl_cmd_top() - `svodctl top`
 * @argc: argument count
 * @argv: arguments
 *
 * Context: main thread; needs root to see other users' processes.
 * Return: exit status.
 */
int svodctl_cmd_top(int argc, char **argv)
{
	struct dirent *de;
	int files = 0;
	DIR *proc;

	if (svodctl_wants_help(argc, argv))
		return svodctl_help(argv[0], 0);
	if (argc != 1)
		return svodctl_help(argv[0], SVODCTL_USAGE);
	proc = opendir("/proc");
	if (!proc)
		return svodctl_err(argv[0], -errno, "(opening /proc)");
	printf("%-7s %-16s %-4s %-7s %-16s %12s %12s %8s\n", "PID", "COMM", "FD", "CLIENT",
	       "TIER", "BYTES", "MAPPED", "HANDLES");
	while ((de = readdir(proc))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		files += scan_pid(de->d_name);
	}
	closedir(proc);
	if (!files)
		printf("(no process holds %s open)\n", SVOD_DEV_PATH);
	show_debugfs();
	return 0;
}
