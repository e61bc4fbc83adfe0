// SPDX-License-Identifier: GPL-2.0
/*
 * Range allocator benchmark: at 1k, 10k and 100k live allocations of random
 * sizes (64 B .. 64 KiB, 64-byte aligned, so the range is fragmented), time
 * batches of removals of random live allocations and the insertions that
 * replace them. Prints ns per alloc (insert) and per free (remove) at each
 * level. The nodes are embedded in the caller's records (one array here),
 * as struct svod_allocation embeds its node: no malloc is timed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "handle.h"
#include "range.h"

#define BATCH	1000
#define ROUNDS	50

static uint64_t rng = 0x5eed;

static uint64_t next_rand(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static u64 rand_size(void)
{
	return (next_rand() % 1024 + 1) * 64;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void bench_range(unsigned int live)
{
	struct svod_range_node *nodes = calloc(live, sizeof(*nodes));
	unsigned int idx[BATCH], i, round;
	uint64_t t0, t_alloc = 0, t_free = 0;
	struct svod_range range;

	/* Room for the live set with slack: fragmentation, never exhaustion. */
	if (!nodes || svod_range_init(&range, 0, (u64)live * 65536 * 2, 64, NULL, 0, GFP_KERNEL))
		abort();
	for (i = 0; i < live; i++)
		if (svod_range_insert(&range, &nodes[i], rand_size(), 0))
			abort();
	for (round = 0; round < ROUNDS; round++) {
		for (i = 0; i < BATCH; i++)
			idx[i] = next_rand() % live;
		t0 = now_ns();
		for (i = 0; i < BATCH; i++)
			if (svod_range_node_allocated(&nodes[idx[i]]))
				svod_range_remove(&range, &nodes[idx[i]]);
		t_free += now_ns() - t0;
		t0 = now_ns();
		for (i = 0; i < BATCH; i++)
			if (!svod_range_node_allocated(&nodes[idx[i]]) &&
			    svod_range_insert(&range, &nodes[idx[i]], rand_size(), 0))
				abort();
		t_alloc += now_ns() - t0;
	}
	printf("bench: range live=%u free_spans=%u alloc_ns=%.0f free_ns=%.0f\n", live,
	       range.nr_free_spans, (double)t_alloc / (ROUNDS * BATCH),
	       (double)t_free / (ROUNDS * BATCH));
	for (i = 0; i < live; i++)
		svod_range_remove(&range, &nodes[i]);
	svod_range_fini(&range);
	free(nodes);
}

static int cmp_u64(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

/*
 * Handle table at @live live handles: fill (growth included), then ROUNDS
 * of BATCH frees of random live handles and BATCH allocations refilling
 * them, and BATCH lookups; medians of the per-round ns per operation.
 */
static void bench_handle(unsigned int live)
{
	uint64_t *h = calloc(live, sizeof(*h)), t0, fill;
	uint64_t ta[ROUNDS], tf[ROUNDS], tl[ROUNDS];
	struct svod_handle_owners owners;
	struct svod_handle_table tbl;
	unsigned int idx[BATCH], i, round;
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
			idx[i] = next_rand() % live;
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
	qsort(ta, ROUNDS, sizeof(*ta), cmp_u64);
	qsort(tf, ROUNDS, sizeof(*tf), cmp_u64);
	qsort(tl, ROUNDS, sizeof(*tl), cmp_u64);
	printf("bench: handle live=%u fill_ns=%.1f alloc_ns=%.1f free_ns=%.1f lookup_ns=%.1f%s\n",
	       live, (double)fill / live, (double)ta[ROUNDS / 2] / BATCH,
	       (double)tf[ROUNDS / 2] / BATCH, (double)tl[ROUNDS / 2] / BATCH,
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
	unsigned int i;

	printf("bench: range node embedded in the caller's record (%zu bytes), no allocation per insert\n",
	       sizeof(struct svod_range_node));
	for (i = 0; i < 3; i++)
		bench_range(levels[i]);
	printf("bench: handle table, medians of %u rounds of %u operations\n", ROUNDS, BATCH);
	for (i = 0; i < 3; i++)
		bench_handle(handle_levels[i]);
	return 0;
}
