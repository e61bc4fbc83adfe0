// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * `svodctl top`: which process holds what. Walks /proc/<pid>/fd for
 * descriptors of /dev/svod and prints, from their fdinfo, one row per tier
 * in which that open file holds allocations (drm-total-<tier> bytes and
 * svod-handles-<tier>), then debugfs svod/state when it is mounted. An open
 * file shared by several processes (fork, SCM_RIGHTS) shows up under each of
 * them, with the same figures.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "svodctl.h"

#define SVOD_DEBUGFS_STATE	"/sys/kernel/debug/svod/state"

static void read_comm(const char *pid, char *comm, size_t len)
{
	char path[300];
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

/* The per-tier fdinfo keys top shows, in the order of their columns. */
enum { TOP_BYTES, TOP_MAPPED, TOP_HANDLES, TOP_EXPORTED, TOP_IMPORTED, TOP_NR_KEYS };

static const char *const top_keys[TOP_NR_KEYS] = {
	[TOP_BYTES] = "drm-total-",
	[TOP_MAPPED] = "svod-mapped-",
	[TOP_HANDLES] = "svod-handles-",
	[TOP_EXPORTED] = "svod-exported-",
	[TOP_IMPORTED] = "svod-imported-",
};

/* The column of top_keys[0]. */
#define TOP_FIRST_KEY_COL	5

/**
 * struct top_tier - what one open file holds in one tier (from its fdinfo)
 * @name: tier name
 * @val: the value of each of top_keys for this tier, in bytes ("4160 KiB"
 *	is 4259840) or a count; 0 if absent
 */
struct top_tier {
	char name[SVOD_NAME_LEN];
	uint64_t val[TOP_NR_KEYS];
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
	return &t[(*nr)++];
}

static const struct svodctl_col top_cols[] = {
	{ "PID", "pid", SVODCTL_U64, SVODCTL_COL_DEFAULT },
	{ "COMM", "comm", SVODCTL_STR, SVODCTL_COL_DEFAULT },
	{ "FD", "fd", SVODCTL_U64, SVODCTL_COL_DEFAULT },
	{ "CLIENT", "client", SVODCTL_U64, SVODCTL_COL_DEFAULT },
	{ "TIER", "tier", SVODCTL_STR, SVODCTL_COL_DEFAULT },
	{ "BYTES", "bytes", SVODCTL_XSIZE, SVODCTL_COL_DEFAULT },
	{ "MAPPED", "mapped", SVODCTL_XSIZE, SVODCTL_COL_DEFAULT },
	{ "HANDLES", "handles", SVODCTL_U64, SVODCTL_COL_DEFAULT },
	{ "EXPORTED", "exported", SVODCTL_XSIZE, SVODCTL_COL_DEFAULT },
	{ "IMPORTED", "imported", SVODCTL_XSIZE, SVODCTL_COL_DEFAULT },
};

const struct svodctl_listing svodctl_top_listing = {
	.name = "processes", .cols = top_cols, .nr_cols = ARRAY_SIZE(top_cols),
};

/* An fdinfo value: "<n>", "<n> KiB", "<n> MiB" or "<n> GiB" (DRM's units). */
static uint64_t fdinfo_bytes(const char *val)
{
	char *unit;
	uint64_t v = strtoull(val, &unit, 10);

	unit += strspn(unit, " ");
	if (!strncmp(unit, "KiB", 3))
		return v << 10;
	if (!strncmp(unit, "MiB", 3))
		return v << 20;
	if (!strncmp(unit, "GiB", 3))
		return v << 30;
	return v;
}

static void top_row(struct svodctl_table *tbl, const char *pid, const char *comm,
		    const char *fd, const char *client, const struct top_tier *t)
{
	struct svodctl_cell *c = svodctl_table_row(tbl);
	unsigned int i;

	if (!c)
		return;
	svodctl_cell_u64(&c[0], strtoull(pid, NULL, 10));
	svodctl_cell_str(&c[1], comm);
	svodctl_cell_u64(&c[2], strtoull(fd, NULL, 10));
	if (strcmp(client, "?"))
		svodctl_cell_u64(&c[3], strtoull(client, NULL, 10));
	if (t)
		svodctl_cell_str(&c[4], t->name);
	for (i = 0; i < TOP_NR_KEYS; i++)
		svodctl_cell_u64(&c[TOP_FIRST_KEY_COL + i], t ? t->val[i] : 0);
}

/* One row per tier the file holds something in, or one row without a tier. */
static int show_fd(struct svodctl_table *tbl, const char *pid, const char *fd,
		   const char *comm)
{
	struct top_tier tiers[TOP_MAX_TIERS], *t;
	char path[600], line[256], client[32] = "?", *colon, *val;
	unsigned int nr = 0, i, k, shown = 0;
	size_t klen;
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
			continue;
		}
		for (k = 0; k < TOP_NR_KEYS; k++) {
			klen = strlen(top_keys[k]);
			if (strncmp(line, top_keys[k], klen))
				continue;
			t = top_find(tiers, &nr, line + klen, (size_t)(colon - line) - klen);
			if (t)
				t->val[k] = fdinfo_bytes(val);
			break;
		}
	}
	fclose(f);
	for (i = 0; i < nr; i++) {
		if (!tiers[i].val[TOP_HANDLES] && !tiers[i].val[TOP_BYTES])
			continue;
		top_row(tbl, pid, comm, fd, client, &tiers[i]);
		shown++;
	}
	if (!shown)
		top_row(tbl, pid, comm, fd, client, NULL);
	return 1;
}

static int scan_pid(struct svodctl_table *tbl, const char *pid)
{
	char dir[300], link[600], target[256], comm[64];
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
		shown += show_fd(tbl, pid, de->d_name, comm);
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

/* One snapshot: the table (and debugfs state in the plain table). */
static int top_once(const struct svodctl_out *o)
{
	struct svodctl_table tbl;
	struct dirent *de;
	int files = 0;
	DIR *proc;

	svodctl_table_of(&tbl, &svodctl_top_listing);
	if (svodctl_table_init(&tbl, o->columns))
		return -EINVAL;
	proc = opendir("/proc");
	if (!proc)
		return -errno;
	while ((de = readdir(proc))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		files += scan_pid(&tbl, de->d_name);
	}
	closedir(proc);
	svodctl_table_print(&tbl, o);
	if (!o->any) {
		if (!files)
			printf("(no process holds %s open)\n", SVOD_DEV_PATH);
		show_debugfs();
	}
	return 0;
}

static volatile sig_atomic_t top_stop;

static void top_signal(int sig)
{
	(void)sig;
	top_stop = 1;
}

/* -d SECONDS: a positive decimal number of seconds (0.1 is fine). */
static int parse_seconds(const char *s, struct timespec *ts)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(s, &end);
	if (errno || end == s || *end || !(d > 0) || d > 86400)
		return -EINVAL;
	ts->tv_sec = (time_t)d;
	ts->tv_nsec = (long)((d - (double)ts->tv_sec) * 1e9);
	return 0;
}

/*
 * top's options: -d SECONDS, -c COUNT and the output options. Return: 0, 1
 * for --help, or -EINVAL (a message said why).
 */
static int top_opts(int argc, char **argv, struct timespec *delay, long *count,
		    struct svodctl_out *o)
{
	static const struct option longopts[] = {
		{ "delay", required_argument, NULL, 'd' },
		{ "count", required_argument, NULL, 'c' },
		SVODCTL_OUT_LONGOPTS,
		{}
	};
	char *end;
	int c;

	*count = -1;
	delay->tv_sec = 0;
	delay->tv_nsec = 0;
	while ((c = svodctl_getopt(argc, argv, ":hd:c:" SVODCTL_OUT_SHORTOPTS, longopts)) != -1) {
		switch (c) {
		case 'h':
			return 1;
		case 'd':
			if (parse_seconds(optarg, delay)) {
				fprintf(stderr, "svodctl: %s: -d \"%s\": write a number of "
					"seconds above 0 and at most 86400 (0.5 is fine)\n",
					argv[0], optarg);
				return -EINVAL;
			}
			break;
		case 'c':
			*count = strtol(optarg, &end, 10);
			if (end == optarg || *end || *count <= 0) {
				fprintf(stderr, "svodctl: %s: -c \"%s\": write a count above 0\n",
					argv[0], optarg);
				return -EINVAL;
			}
			break;
		default:
			if (!svodctl_out_opt(c, optarg, o))
				return -EINVAL;
		}
	}
	if (optind != argc)
		return -EINVAL;
	return *count > 0 && !delay->tv_sec && !delay->tv_nsec ? -EINVAL : 0;
}

/**
 * svodctl_cmd_top() - `svodctl top [-d SECONDS [-c COUNT]] [output options]`
 * @argc: argument count
 * @argv: arguments
 *
 * With -d, prints a snapshot every SECONDS (a "--- HH:MM:SS" line before
 * each table; one JSON document per line group with --json) until SIGINT,
 * SIGTERM or COUNT snapshots.
 *
 * Context: main thread; needs root to see other users' processes.
 * Return: exit status.
 */
int svodctl_cmd_top(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = top_signal };
	struct svodctl_table probe;
	struct timespec delay;
	struct svodctl_out o = {};
	char stamp[32];
	time_t now;
	long count, n;
	int ret;

	ret = top_opts(argc, argv, &delay, &count, &o);
	if (ret)
		return svodctl_help(argv[0], ret > 0 ? 0 : SVODCTL_USAGE);
	svodctl_table_of(&probe, &svodctl_top_listing);
	if (svodctl_table_init(&probe, o.columns))
		return SVODCTL_USAGE;
	/* No /dev/svod: nothing can hold it; say why instead of an empty table. */
	if (access(getenv("SVOD_DEV") ? getenv("SVOD_DEV") : SVOD_DEV_PATH, F_OK))
		return svodctl_open_err(argv[0], -errno);
	if (!delay.tv_sec && !delay.tv_nsec) {
		ret = top_once(&o);
		return ret ? svodctl_err(argv[0], ret, "(reading /proc)") : 0;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	for (n = 0; !top_stop && (count < 0 || n < count); n++) {
		if (n)
			nanosleep(&delay, NULL);
		if (top_stop)
			break;
		if (!o.json) {
			now = time(NULL);
			strftime(stamp, sizeof(stamp), "%H:%M:%S", localtime(&now));
			printf("%s--- %s\n", n ? "\n" : "", stamp);
		}
		ret = top_once(&o);
		if (ret)
			return svodctl_err(argv[0], ret, "(reading /proc)");
		fflush(stdout);
	}
	return 0;
}
