/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * Realistic planner traces: the layers of a network, each allocating its
 * output activation (and sometimes a workspace freed at the end of the
 * layer), activations freed after their last consumer, skip connections
 * keeping some alive for several layers. Sizes range from 256 B to tens of
 * MiB, rounded up to 256. Deterministic for a given seed.
 */
#ifndef SVOD_PLAN_GEN_H
#define SVOD_PLAN_GEN_H

#include <stdint.h>
#include <linux/svod.h>

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

uint64_t plan_gen_rand(uint64_t *state);
uint32_t plan_gen_network(uint64_t seed, uint32_t max_events, struct svod_plan_event *ev);

#endif /* SVOD_PLAN_GEN_H */
