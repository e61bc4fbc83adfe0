// SPDX-License-Identifier: GPL-2.0
/*
 * `svodctl top`: which process holds what. Walks /proc/<pid>/fd for
 * descriptors of /dev/svod and prints the svod lines of their fdinfo (per
 * tier bytes and handles held by that open file), then debugfs svod/state
 * when it is mounted. An open file shared by several processes (fork,
 * SCM_RIGHTS) shows up under each of them, with the same figures.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
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

/* The fdinfo lines every file has; everything else is svod's. */
static int generic_fdinfo_key(const char *line)
{
	static const char *const keys[] = { "pos:", "flags:", "mnt_id:", "ino:" };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(keys); i++)
		if (!strncmp(line, keys[i], strlen(keys[i])))
			return 1;
	return 0;
}

static int show_fd(const char *pid, const char *fd, const char *comm)
{
	char path[320], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/fdinfo/%s", pid, fd);
	f = fopen(path, "re");
	if (!f)
		return 0;
	printf("%-7s %-16s fd %s\n", pid, comm, fd);
	while (fgets(line, sizeof(line), f)) {
		if (generic_fdinfo_key(line))
			continue;
		printf("        %s", line);
	}
	fclose(f);
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
	printf("%-7s %-16s %s\n", "PID", "COMM", "OPEN FILE OF " SVOD_DEV_PATH);
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
