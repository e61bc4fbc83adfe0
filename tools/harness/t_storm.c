// SPDX-License-Identifier: GPL-2.0
/*
 * t_storm: threaded alloc/resolve/free storms across three tiers declared on
 * the first device's BAR 2 (through configfs), two threads sharing one open
 * file and two with their own. Checks every reply (alignment, bounds,
 * reserved regions), that all live allocations of all threads are disjoint,
 * that every byte comes back (also after a storming process is SIGKILLed),
 * and restores the device's declaration at the end. Seeded: SVOD_SEED.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "tap.h"

#define NR_CASES	9
#define NR_TIERS	3
#define NR_THREADS	4
#define MAX_LIVE	32
#define ITERS		1500

struct live {
	uint64_t handle;
	uint64_t addr;
	uint64_t size;
	unsigned int t;
};

struct worker {
	pthread_t thread;
	int fd;
	uint64_t rng;
	struct live live[MAX_LIVE];
	unsigned int nr_live;
	unsigned int ops, enospc, errors, misplaced, mismatched;
};

static struct svod_tier_info tiers[NR_TIERS];
/* Each tier's reserved regions, as QUERY reports them. */
#define MAX_REGIONS	4
static struct svod_region regions[NR_TIERS][MAX_REGIONS];
static int nr_regions[NR_TIERS];
static pthread_barrier_t barrier;

static int in_reserved(unsigned int t, uint64_t addr, uint64_t size)
{
	const struct svod_region *r = regions[t];
	int i;

	for (i = 0; i < nr_regions[t] && i < MAX_REGIONS; i++)
		if (addr < r[i].base + r[i].size && r[i].base < addr + size)
			return 1;
	return 0;
}

static void do_alloc(struct worker *w)
{
	static const uint64_t aligns[] = { 0, 64, 4096, 65536 };
	unsigned int t = (unsigned int)(ht_rand(&w->rng) % NR_TIERS);
	uint64_t size = 1 + ht_rand(&w->rng) % (128 << 10);
	uint64_t align = aligns[ht_rand(&w->rng) % 4];
	const struct svod_tier_info *ti = &tiers[t];
	uint64_t need = align > ti->align ? align : ti->align;
	struct svod_alloc a;
	int ret;

	ret = svod_alloc(w->fd, ti->id, size, align, &a);
	w->ops++;
	if (ret == -ENOSPC) {
		w->enospc++;
		return;
	}
	if (ret) {
		w->errors++;
		return;
	}
	if (a.device_addr % need || a.capacity != size || a.device_addr < ti->device_base ||
	    a.device_addr + size > ti->device_base + ti->capacity ||
	    in_reserved(t, a.device_addr, size))
		w->misplaced++;
	w->live[w->nr_live++] = (struct live){ a.handle, a.device_addr, size, t };
}

static void do_free(struct worker *w, unsigned int i)
{
	w->ops++;
	if (svod_free(w->fd, w->live[i].handle))
		w->errors++;
	w->live[i] = w->live[--w->nr_live];
}

static void do_resolve(struct worker *w, unsigned int i)
{
	struct svod_resolve r;

	w->ops++;
	if (svod_resolve(w->fd, w->live[i].handle, &r)) {
		w->errors++;
		return;
	}
	if (r.tier != tiers[w->live[i].t].id || r.device_addr != w->live[i].addr ||
	    r.capacity != w->live[i].size)
		w->mismatched++;
}

static void storm(struct worker *w, unsigned int iters)
{
	unsigned int i, op;

	for (i = 0; i < iters; i++) {
		op = (unsigned int)(ht_rand(&w->rng) % 10);
		if (op < 5 && w->nr_live < MAX_LIVE)
			do_alloc(w);
		else if (op < 8 && w->nr_live)
			do_free(w, (unsigned int)(ht_rand(&w->rng) % w->nr_live));
		else if (w->nr_live)
			do_resolve(w, (unsigned int)(ht_rand(&w->rng) % w->nr_live));
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	storm(w, ITERS);
	while (w->nr_live < MAX_LIVE / 2 && w->ops < 4 * ITERS)
		do_alloc(w);
	/* Hold still while the main thread checks every thread's live set. */
	pthread_barrier_wait(&barrier);
	pthread_barrier_wait(&barrier);
	while (w->nr_live)
		do_free(w, w->nr_live - 1);
	return NULL;
}

static int cmp_live(const void *a, const void *b)
{
	const struct live *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static unsigned int count_overlaps(struct worker *ws)
{
	struct live all[NR_THREADS * MAX_LIVE];
	unsigned int n = 0, i, j, bad = 0;

	for (i = 0; i < NR_THREADS; i++)
		for (j = 0; j < ws[i].nr_live; j++)
			all[n++] = ws[i].live[j];
	qsort(all, n, sizeof(all[0]), cmp_live);
	for (i = 1; i < n; i++)
		if (all[i - 1].addr + all[i - 1].size > all[i].addr)
			bad++;
	tap_diag("%u live allocations checked for overlap", n);
	return bad;
}

static int find_tiers(int fd)
{
	static const char *const names[NR_TIERS] = { "storm0", "storm1", "storm2" };
	unsigned int i;
	int ret;

	for (i = 0; i < NR_TIERS; i++) {
		ret = svod_tier_by_name(fd, names[i], &tiers[i]);
		if (ret)
			return ret;
		nr_regions[i] = svod_tier_regions(fd, tiers[i].id, regions[i],
						  MAX_REGIONS);
		if (nr_regions[i] < 0)
			return nr_regions[i];
	}
	return 0;
}

static int tiers_empty(int fd)
{
	struct svod_tier_info t;
	unsigned int i;
	int ok = 1;

	for (i = 0; i < NR_TIERS; i++) {
		if (svod_tier_by_id(fd, tiers[i].id, &t) || t.nr_live ||
		    t.free_bytes + t.reserved_bytes != t.capacity) {
			tap_diag("tier %s: live %u free 0x%llx", tiers[i].name, t.nr_live,
				 (unsigned long long)t.free_bytes);
			ok = 0;
		}
	}
	return ok;
}

static void *storm_forever(void *arg)
{
	for (;;)
		storm(arg, 100);
	return NULL;
}

static void test_kill_mid_storm(int fd, uint64_t seed)
{
	struct worker w[2] = {};
	int status, waited = 0;
	unsigned int i;
	pid_t pid;

	pid = fork();
	if (pid == 0) {
		int cfd = ht_open();

		for (i = 0; i < 2; i++) {
			w[i].fd = cfd;
			w[i].rng = seed ^ (0x1000 + i);
		}
		pthread_create(&w[1].thread, NULL, storm_forever, &w[1]);
		storm_forever(&w[0]);
	}
	usleep(300000);
	if (pid > 0)
		kill(pid, SIGKILL);
	status = pid > 0 ? ht_wait_exit(pid) : -1;
	for (i = 0; i < NR_TIERS && waited >= 0; i++)
		waited = ht_wait_free(fd, tiers[i].id, tiers[i].capacity - tiers[i].reserved_bytes,
				      2000);
	tap_ok(status == 128 + SIGKILL && waited >= 0 && tiers_empty(fd),
	       "storm_sigkill_mid_storm_bytes_back (status %d)", status);
}

int main(void)
{
	char bdfs[4][SVOD_NAME_LEN], orig[4096], decl[1024], back[4096];
	unsigned int i, ops = 0, enospc = 0, errors = 0, misplaced = 0, mismatched = 0;
	struct worker ws[NR_THREADS] = {};
	uint64_t seed, bar, q;
	int fd, shared_fd, ret;

	tap_plan(NR_CASES);
	seed = ht_seed("t_storm");
	fd = ht_open();
	ret = svod_devices(bdfs, 4);
	if (fd < 0 || ret <= 0 || svod_tiers_read(bdfs[0], orig, sizeof(orig)) < 0 ||
	    ht_bar_size(bdfs[0], 2, &bar)) {
		tap_diag("no device bound to svod (fd %d, devices %d)", fd, ret);
		return tap_done();
	}
	tap_diag("device %s, BAR2 0x%llx bytes, declaration: %.*s", bdfs[0],
		 (unsigned long long)bar, (int)strcspn(orig, "\n"), orig);
	q = bar / 4;
	snprintf(decl, sizeof(decl),
		 "storm0 bar=2 offset=0x0 size=0x%llx base=0x0 align=64;"
		 "storm1 bar=2 offset=0x%llx size=0x%llx base=0x40000000 align=4096;"
		 "storm2 bar=2 offset=0x%llx size=0x%llx base=0x%llx align=256 reserved=0x%llx+0x%llx",
		 (unsigned long long)q, (unsigned long long)q, (unsigned long long)q,
		 (unsigned long long)(2 * q), (unsigned long long)(2 * q),
		 (unsigned long long)(2 * q), (unsigned long long)(3 * q),
		 (unsigned long long)(q / 16));
	ret = svod_tiers_write(bdfs[0], decl);
	if (!ret)
		ret = find_tiers(fd);
	tap_ok(!ret && tiers[1].device_base == 0x40000000 && tiers[1].align == 4096 &&
	       tiers[2].nr_reserved == 1 && tiers[2].reserved_bytes == q / 16 &&
	       nr_regions[2] == 1 && regions[2][0].base == 3 * q &&
	       regions[2][0].size == q / 16 &&
	       tiers[0].capacity == q && tiers[2].capacity == 2 * q,
	       "storm_declare_three_tiers (%s)", ret ? svod_errno_name(ret) : "ok");
	if (ret)
		goto restore;

	shared_fd = ht_open();
	pthread_barrier_init(&barrier, NULL, NR_THREADS + 1);
	for (i = 0; i < NR_THREADS; i++) {
		ws[i].fd = i < 2 ? shared_fd : ht_open();
		ws[i].rng = seed + 0x9e3779b97f4a7c15ULL * (i + 1);
		pthread_create(&ws[i].thread, NULL, worker_main, &ws[i]);
	}
	pthread_barrier_wait(&barrier);
	tap_ok(count_overlaps(ws) == 0, "storm_live_allocations_disjoint_across_threads");
	pthread_barrier_wait(&barrier);
	for (i = 0; i < NR_THREADS; i++) {
		pthread_join(ws[i].thread, NULL);
		ops += ws[i].ops;
		enospc += ws[i].enospc;
		errors += ws[i].errors;
		misplaced += ws[i].misplaced;
		mismatched += ws[i].mismatched;
		if (i >= 2)
			svod_close(ws[i].fd);
	}
	svod_close(shared_fd);
	tap_diag("%u ops, %u ENOSPC", ops, enospc);
	tap_ok(errors == 0, "storm_no_unexpected_errors (%u)", errors);
	tap_ok(misplaced == 0, "storm_alignment_bounds_reserved_honoured (%u misplaced)",
	       misplaced);
	tap_ok(mismatched == 0, "storm_resolve_consistent (%u mismatched)", mismatched);
	tap_ok(ops >= NR_THREADS * ITERS / 2 && enospc < ops / 4,
	       "storm_ran_mostly_successful_ops");
	tap_ok(tiers_empty(fd), "storm_all_bytes_back");
	test_kill_mid_storm(fd, seed);

restore:
	ret = svod_tiers_write(bdfs[0], orig);
	tap_ok(!ret && svod_tiers_read(bdfs[0], back, sizeof(back)) >= 0 && !strcmp(back, orig),
	       "storm_restore_declaration (%s)", ret ? svod_errno_name(ret) : "ok");
	svod_close(fd);
	/* Live tiers are back as they were: forget the declarations made. */
	ht_undeclare_all();
	return tap_done();
}
