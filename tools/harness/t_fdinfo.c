// SPDX-License-Identifier: GPL-2.0
/*
 * t_fdinfo: introspection. /proc/<pid>/fdinfo/<fd> of /dev/svod carries
 * DRM-style keys per tier (drm-total-<tier>, svod-handles-<tier>) for that
 * open file only; debugfs svod/state lists every file with its pid; and
 * `svodctl top` shows both.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"
#include "tap.h"

#define NR_CASES	12

#define DEBUGFS_STATE	"/sys/kernel/debug/svod/state"

static int fd = -1;
static struct svod_tier_info tier;

static int fdinfo_has(int which, const char *line_prefix, unsigned int *count)
{
	char path[64], line[256];
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", which);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (count)
		*count = 0;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, line_prefix, strlen(line_prefix))) {
			found = 1;
			if (count)
				(*count)++;
		}
	}
	fclose(f);
	return found;
}

static int64_t tier_bytes(pid_t pid, int which)
{
	char key[80];

	snprintf(key, sizeof(key), "drm-total-%s", tier.name);
	return ht_fdinfo_value(pid, which, key);
}

static int64_t tier_handles(pid_t pid, int which)
{
	char key[80];

	snprintf(key, sizeof(key), "svod-handles-%s", tier.name);
	return ht_fdinfo_value(pid, which, key);
}

/*
 * Does `svodctl top` print a row for our pid with every one of @needles?
 * Its columns: PID, TIER, BYTES, HANDLES.
 */
static int top_shows(const char *const *needles)
{
	char line[512], pid[32];
	int found = 0, all, i;
	FILE *p;

	snprintf(pid, sizeof(pid), "%d ", (int)getpid());
	p = popen("svodctl top -o pid,tier,bytes,handles 2>&1", "r");
	if (!p)
		return 0;
	while (fgets(line, sizeof(line), p)) {
		/* The PID column is right-aligned: a short pid has spaces before it. */
		if (strncmp(line + strspn(line, " "), pid, strlen(pid)))
			continue;
		all = 1;
		for (i = 0; needles[i]; i++)
			all &= strstr(line, needles[i]) != NULL;
		found |= all;
	}
	return pclose(p) == 0 && found;
}

static int debugfs_shows(unsigned int handles)
{
	char line[512], want[96];
	FILE *f;
	int found = 0;

	snprintf(want, sizeof(want), "pid=%d comm=t_fdinfo handles=%u", (int)getpid(), handles);
	f = fopen(DEBUGFS_STATE, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, want))
			found = 1;
	fclose(f);
	return found;
}

int main(void)
{
	struct svod_alloc a[3] = {};
	int fd2, d, ret, status, errs = 0;
	char needle[96];
	int64_t id1, id2;
	unsigned int lines = 0;
	uint32_t nr = 0;
	pid_t pid;

	tap_plan(NR_CASES);
	fd = ht_open();
	fd2 = ht_open();
	if (fd < 0 || fd2 < 0) {
		tap_diag("open /dev/svod: %s", svod_errno_name(fd < 0 ? fd : fd2));
		return tap_done();
	}
	ret = ht_first_tier(fd, &tier);
	if (ret) {
		tap_diag("no tier: %s", svod_errno_name(ret));
		if (!getenv("SVOD_DEV"))
			return tap_done();
	}

	tap_ok(fdinfo_has(fd, "drm-driver:\tsvod", NULL), "fdinfo_drm_driver_svod");
	id1 = ht_fdinfo_value(getpid(), fd, "drm-client-id");
	id2 = ht_fdinfo_value(getpid(), fd2, "drm-client-id");
	d = dup(fd);
	tap_ok(id1 >= 0 && id2 >= 0 && id1 != id2 &&
	       ht_fdinfo_value(getpid(), d, "drm-client-id") == id1,
	       "fdinfo_client_id_per_open_file (%lld, %lld)", (long long)id1, (long long)id2);
	close(d);
	tap_ok(tier_bytes(getpid(), fd) == 0 && tier_handles(getpid(), fd) == 0,
	       "fdinfo_fresh_file_holds_nothing");

	errs += svod_alloc(fd, tier.id, 1 << 20, 0, &a[0]) != 0;
	errs += svod_alloc(fd, tier.id, 4096, 0, &a[1]) != 0;
	errs += svod_alloc(fd, tier.id, 100, 0, &a[2]) != 0;
	tap_eq_u64((uint64_t)tier_bytes(getpid(), fd), errs ? 0 : (1 << 20) + 4096 + 100,
		   "fdinfo_total_bytes_after_three_allocs");
	tap_eq_u64((uint64_t)tier_handles(getpid(), fd), 3, "fdinfo_handles_after_three_allocs");
	tap_ok(tier_bytes(getpid(), fd2) == 0 && tier_handles(getpid(), fd2) == 0,
	       "fdinfo_other_file_unaffected");

	svod_free(fd, a[2].handle);
	tap_ok(tier_bytes(getpid(), fd) == (1 << 20) + 4096 && tier_handles(getpid(), fd) == 2,
	       "fdinfo_after_free (%lld bytes)", (long long)tier_bytes(getpid(), fd));

	pid = fork();
	if (pid == 0)
		_exit(tier_bytes(getpid(), fd) == (1 << 20) + 4096 ? 0 : 1);
	status = pid > 0 ? ht_wait_exit(pid) : -1;
	tap_ok(status == 0, "fdinfo_fork_shared_file_same_figures");

	ret = svod_query_tiers(fd, NULL, 0, NULL);
	nr = ret > 0 ? (uint32_t)ret : 0;
	fdinfo_has(fd, "drm-total-", &lines);
	tap_ok(nr && lines == nr, "fdinfo_one_total_line_per_tier (%u lines, %u tiers)", lines, nr);

	snprintf(needle, sizeof(needle), " %s ", tier.name);
	tap_ok(top_shows((const char *[]){ needle, " 1028 KiB ", " 2\n", NULL }),
	       "svodctl_top_shows_this_process_its_bytes_and_handles");

	ret = debugfs_shows(2);
	if (ret < 0)
		tap_skip(svod_errno_name(ret), "debugfs_state_lists_file_with_pid");
	else
		tap_ok(ret, "debugfs_state_lists_file_with_pid");

	svod_close(fd2);
	svod_free(fd, a[0].handle);
	svod_free(fd, a[1].handle);
	tap_ok(tier_bytes(getpid(), fd) == 0 && tier_handles(getpid(), fd) == 0,
	       "fdinfo_all_freed_back_to_zero");
	svod_close(fd);
	return tap_done();
}
