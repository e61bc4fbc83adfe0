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

int main(void)
{
	static const unsigned int levels[] = { 1000, 10000, 100000 };
	unsigned int i;

	printf("bench: range node embedded in the caller's record (%zu bytes), no allocation per insert\n",
	       sizeof(struct svod_range_node));
	for (i = 0; i < 3; i++)
		bench_range(levels[i]);
	return 0;
}
