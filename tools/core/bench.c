// SPDX-License-Identifier: GPL-2.0
/*
 * Tier allocator benchmark: at 1k, 10k and 100k live allocations of random
 * sizes (64 B .. 64 KiB, 64-byte aligned, so the tier is fragmented), time
 * batches of frees of random live allocations and the allocations that
 * replace them. Prints ns per alloc and per free at each level.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "tier.h"

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

static void bench_tier(unsigned int live)
{
	struct svod_tier_node **nodes = calloc(live, sizeof(*nodes));
	unsigned int idx[BATCH], i, round;
	uint64_t t0, t_alloc = 0, t_free = 0;
	struct svod_tier tier;

	/* Room for the live set with slack: fragmentation, never exhaustion. */
	if (!nodes || svod_tier_init(&tier, 0, (u64)live * 65536 * 2, 64, NULL, 0, GFP_KERNEL))
		abort();
	for (i = 0; i < live; i++)
		if (svod_tier_alloc(&tier, rand_size(), 0, GFP_KERNEL, &nodes[i]))
			abort();
	for (round = 0; round < ROUNDS; round++) {
		for (i = 0; i < BATCH; i++)
			idx[i] = next_rand() % live;
		t0 = now_ns();
		for (i = 0; i < BATCH; i++) {
			if (nodes[idx[i]]) {
				svod_tier_free(&tier, nodes[idx[i]]);
				nodes[idx[i]] = NULL;
			}
		}
		t_free += now_ns() - t0;
		t0 = now_ns();
		for (i = 0; i < BATCH; i++)
			if (!nodes[idx[i]] &&
			    svod_tier_alloc(&tier, rand_size(), 0, GFP_KERNEL, &nodes[idx[i]]))
				abort();
		t_alloc += now_ns() - t0;
	}
	printf("bench: tier live=%u free_spans=%u alloc_ns=%.0f free_ns=%.0f\n", live,
	       tier.nr_free_spans, (double)t_alloc / (ROUNDS * BATCH),
	       (double)t_free / (ROUNDS * BATCH));
	for (i = 0; i < live; i++)
		svod_tier_free(&tier, nodes[i]);
	svod_tier_fini(&tier);
	free(nodes);
}

int main(void)
{
	static const unsigned int levels[] = { 1000, 10000, 100000 };
	unsigned int i;

	for (i = 0; i < 3; i++)
		bench_tier(levels[i]);
	return 0;
}
