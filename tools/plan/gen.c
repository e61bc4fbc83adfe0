// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * Trace generator: see gen.h. Every buffer it allocates is freed before the
 * trace ends, so traces are complete schedules.
 */
#include <string.h>

#include "gen.h"

#define GEN_MAX_SKIP	12
#define GEN_MAX_LIVE	64

/**
 * plan_gen_rand() - splitmix64
 * @state: generator state, advanced
 *
 * Context: any thread (one state per thread).
 * Return: the next 64 random bits.
 */
uint64_t plan_gen_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

/* Log-uniform in [2^lo, 2^hi), rounded up to 256. */
static uint64_t gen_size(uint64_t *st, unsigned int lo, unsigned int hi)
{
	unsigned int bits = lo + plan_gen_rand(st) % (hi - lo);
	uint64_t v = (1ULL << bits) + plan_gen_rand(st) % (1ULL << bits);

	return (v + 255) & ~255ULL;
}

static uint64_t gen_align(uint64_t *st)
{
	static const uint64_t aligns[] = { 256, 256, 256, 256, 256, 256, 64, 64, 4096, 0 };

	return aligns[plan_gen_rand(st) % ARRAY_SIZE(aligns)];
}

/**
 * plan_gen_network() - generate one schedule
 * @seed: seed
 * @max_events: room in @ev (at least 16)
 * @ev: out: the events
 *
 * The network's scale (the size of a typical activation, 64 KiB to
 * 8 MiB) is drawn from @seed; each layer's output is that scale times a
 * log-uniform factor in [1/64, 4], small tensors (256 B to 4 KiB) are
 * mixed in, and a quarter of the layers take a workspace.
 *
 * Context: any thread.
 * Return: the number of events written, at most @max_events.
 */
uint32_t plan_gen_network(uint64_t seed, uint32_t max_events, struct svod_plan_event *ev)
{
	struct { uint32_t id; uint32_t last; } live[GEN_MAX_LIVE];
	unsigned int scale, nr_live = 0, i, j;
	uint64_t st = seed;
	uint32_t n = 0, id = 0, layer;

	scale = 16 + plan_gen_rand(&st) % 8;
	for (layer = 0; n + nr_live + 4 <= max_events && nr_live < GEN_MAX_LIVE; layer++) {
		uint32_t ws = 0, skip = 1;
		uint64_t size;
		int has_ws = plan_gen_rand(&st) % 4 == 0;

		if (has_ws) {
			ws = id++;
			ev[n++] = (struct svod_plan_event){ .op = SVOD_PLAN_ALLOC, .id = ws,
				.size = gen_size(&st, 12, 23), .align = gen_align(&st) };
		}
		if (plan_gen_rand(&st) % 8 == 0)
			size = gen_size(&st, 8, 12);
		else
			size = gen_size(&st, scale - 6, scale + 2);
		if (plan_gen_rand(&st) % 6 == 0)
			skip = 2 + plan_gen_rand(&st) % (GEN_MAX_SKIP - 1);
		live[nr_live].id = id;
		live[nr_live++].last = layer + skip;
		ev[n++] = (struct svod_plan_event){ .op = SVOD_PLAN_ALLOC, .id = id++,
			.size = size, .align = gen_align(&st) };
		if (has_ws)
			ev[n++] = (struct svod_plan_event){ .op = SVOD_PLAN_FREE, .id = ws };
		for (i = 0, j = 0; i < nr_live; i++) {
			if (live[i].last == layer)
				ev[n++] = (struct svod_plan_event){ .op = SVOD_PLAN_FREE,
					.id = live[i].id };
			else
				live[j++] = live[i];
		}
		nr_live = j;
	}
	for (i = 0; i < nr_live; i++)
		ev[n++] = (struct svod_plan_event){ .op = SVOD_PLAN_FREE, .id = live[i].id };
	return n;
}
