// SPDX-License-Identifier: GPL-2.0
/*
 * Range allocator benchmark, userspace build: the workload of the guest's
 * side-by-side benchmark (tools/testing/mm_bench, same seed and sequence).
 * At 1k, 10k and 100k live allocations of log-uniform sizes from 64 B to
 * 1 MiB (multiples of 64, alignment 64) in an address space of at least
 * 256 MiB and 2.5 times the mean live bytes (32 GiB at 100k), first fit:
 * fill, then rounds of 1000 removals of random live allocations and the
 * insertions that replace them. Prints the medians of ns per alloc and per
 * free over the rounds, for:
 *
 *   svod        a record malloc'ed per allocation (embedding the node, as
 *               struct svod_allocation does), inserted, and a handle issued;
 *               a free resolves the handle, removes the node, frees the record
 *   svod-range  the same without the handle table: the difference is what
 *               the handle table costs
 *
 * drm_mm and gen_pool are kernel-only: their figures come from the guest.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "handle.h"
#include "range.h"

#define BATCH	1000
#define ROUNDS	9
#define ALIGN	64
#define BASE	(1ULL << 40)

struct rec {
	struct svod_range_node node;
	u64 handle;
};

struct slot {
	struct rec *rec;
	u64 handle;
	bool live;
};

struct ctx {
	bool handles;
	struct svod_range range;
	struct svod_handle_owners owners;
	struct svod_handle_table tbl;
	struct slot *slots;
};

static u64 seed = 0x5eed;

static u64 next_rand(u64 *s)
{
	u64 z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Log-uniform in [64 B, 1 MiB), a multiple of 64: as mm_bench. */
static u64 rand_size(u64 *s)
{
	u64 r = next_rand(s);
	unsigned int e = r % 14;
	u64 lo = 64ULL << e;

	return lo + ((r >> 8) % lo & ~(u64)(ALIGN - 1));
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int do_alloc(struct ctx *c, struct slot *s, u64 size)
{
	struct rec *rec = calloc(1, sizeof(*rec));
	int ret;

	if (!rec)
		return -ENOMEM;
	ret = svod_range_insert(&c->range, &rec->node, size, 0);
	if (!ret && c->handles) {
		ret = svod_handle_alloc(&c->tbl, rec, GFP_KERNEL, &s->handle);
		if (ret)
			svod_range_remove(&c->range, &rec->node);
	}
	if (ret) {
		free(rec);
		return ret;
	}
	s->rec = rec;
	s->live = true;
	return 0;
}

static void do_free(struct ctx *c, struct slot *s)
{
	struct rec *rec = s->rec;
	void *obj;

	if (c->handles) {
		if (svod_handle_free(&c->tbl, s->handle, &obj))
			abort();
		rec = obj;
	}
	svod_range_remove(&c->range, &rec->node);
	free(rec);
	s->rec = NULL;
	s->live = false;
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static u64 median(u64 *v, unsigned int n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	return n & 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void bench(unsigned int live, bool handles, u64 *alloc_med, u64 *free_med)
{
	u64 rng = seed ^ live, rs, t0, space, a_ns[ROUNDS], f_ns[ROUNDS];
	unsigned int idx[BATCH], i, r, nr;
	struct ctx c = { .handles = handles };

	space = 1ULL << 28;
	while (space < (u64)live * (1ULL << 18))
		space <<= 1;
	c.slots = calloc(live, sizeof(*c.slots));
	svod_handle_owners_init(&c.owners);
	if (!c.slots || svod_handle_table_init(&c.tbl, &c.owners, U32_MAX, GFP_KERNEL) ||
	    svod_range_init(&c.range, BASE, space, ALIGN, NULL, 0, GFP_KERNEL))
		abort();
	for (i = 0; i < live; i++)
		if (do_alloc(&c, &c.slots[i], rand_size(&rng)))
			abort();
	for (r = 0; r < ROUNDS; r++) {
		rs = next_rand(&rng);
		for (i = 0; i < BATCH; i++)
			idx[i] = next_rand(&rs) % live;
		nr = 0;
		t0 = now_ns();
		for (i = 0; i < BATCH; i++) {
			if (c.slots[idx[i]].live) {
				do_free(&c, &c.slots[idx[i]]);
				nr++;
			}
		}
		f_ns[r] = (now_ns() - t0) / nr;
		t0 = now_ns();
		for (i = 0; i < BATCH; i++)
			if (!c.slots[idx[i]].live && do_alloc(&c, &c.slots[idx[i]], rand_size(&rs)))
				abort();
		a_ns[r] = (now_ns() - t0) / nr;
	}
	*alloc_med = median(a_ns, ROUNDS);
	*free_med = median(f_ns, ROUNDS);
	for (i = 0; i < live; i++)
		if (c.slots[i].live)
			do_free(&c, &c.slots[i]);
	svod_range_fini(&c.range);
	svod_handle_table_fini(&c.tbl, &c.owners);
	svod_handle_owners_fini(&c.owners);
	free(c.slots);
}

/*
 * Handle table at @live live handles: fill (growth included), then ROUNDS
 * of BATCH frees of random live handles and BATCH allocations refilling
 * them, and BATCH lookups; medians of the per-round ns per operation.
 */
static void bench_handle(unsigned int live)
{
	u64 *h = calloc(live, sizeof(*h)), t0, fill;
	u64 ta[ROUNDS], tf[ROUNDS], tl[ROUNDS];
	struct svod_handle_owners owners;
	struct svod_handle_table tbl;
	unsigned int idx[BATCH], i, round;
	u64 rng = seed ^ live;
	static int obj;
	void *sink = NULL;

	svod_handle_owners_init(&owners);
	if (!h || svod_handle_table_init(&tbl, &owners, U32_MAX, GFP_KERNEL))
		abort();
	t0 = now_ns();
	for (i = 0; i < live; i++)
		if (svod_handle_alloc(&tbl, &obj, GFP_KERNEL, &h[i]))
			abort();
	fill = now_ns() - t0;
	for (round = 0; round < ROUNDS; round++) {
		for (i = 0; i < BATCH; i++)
			idx[i] = next_rand(&rng) % live;
		t0 = now_ns();
		for (i = 0; i < BATCH; i++)
			sink = svod_handle_lookup(&tbl, h[idx[i]]);
		tl[round] = now_ns() - t0;
		t0 = now_ns();
		for (i = 0; i < BATCH; i++)
			if (h[idx[i]] && svod_handle_free(&tbl, h[idx[i]], NULL))
				abort();
			else
				h[idx[i]] = 0;
		tf[round] = now_ns() - t0;
		t0 = now_ns();
		for (i = 0; i < BATCH; i++)
			if (!h[idx[i]] && svod_handle_alloc(&tbl, &obj, GFP_KERNEL, &h[idx[i]]))
				abort();
		ta[round] = now_ns() - t0;
	}
	printf("bench: handle live=%u fill_ns=%.1f alloc_ns=%.1f free_ns=%.1f lookup_ns=%.1f%s\n",
	       live, (double)fill / live, (double)median(ta, ROUNDS) / BATCH,
	       (double)median(tf, ROUNDS) / BATCH, (double)median(tl, ROUNDS) / BATCH,
	       sink ? "" : " (no hit)");
	for (i = 0; i < live; i++)
		svod_handle_free(&tbl, h[i], NULL);
	svod_handle_table_fini(&tbl, &owners);
	svod_handle_owners_fini(&owners);
	free(h);
}

int main(void)
{
	static const unsigned int levels[] = { 1000, 10000, 100000 };
	static const unsigned int handle_levels[] = { 1000, 65536, 262144 };
	u64 a[3][2], f[3][2];
	unsigned int i, h;

	printf("bench: range workload of tools/testing/mm_bench (seed %#llx, 64 B..1 MiB log-uniform, first fit, %u rounds of %u frees + %u allocs); record %zu B malloc'ed per allocation (range node %zu B)\n",
	       (unsigned long long)seed, ROUNDS, BATCH, BATCH, sizeof(struct rec),
	       sizeof(struct svod_range_node));
	for (i = 0; i < 3; i++) {
		for (h = 0; h < 2; h++) {
			bench(levels[i], !h, &a[i][h], &f[i][h]);
			printf("bench: range live=%u %-10s alloc_ns=%llu free_ns=%llu\n", levels[i],
			       h ? "svod-range" : "svod", (unsigned long long)a[i][h],
			       (unsigned long long)f[i][h]);
		}
		printf("bench: range live=%u handle table costs alloc %lld ns free %lld ns\n", levels[i],
		       (long long)(a[i][0] - a[i][1]), (long long)(f[i][0] - f[i][1]));
	}
	printf("bench: range growth svod 100k/1k alloc %.2f free %.2f (drm_mm and gen_pool: kernel only, see the guest's figures)\n",
	       (double)a[2][0] / a[0][0], (double)f[2][0] / f[0][0]);
	printf("bench: handle table alone, medians of %u rounds of %u operations\n", ROUNDS, BATCH);
	for (i = 0; i < 3; i++)
		bench_handle(handle_levels[i]);
	return 0;
}
