/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Hard planner instances with a known optimum: a rectangle (width = arena
 * bytes, height = time) cut into pieces by random guillotine cuts and
 * non-guillotine "pinwheels"; each piece is a buffer (size = its width,
 * live for its height). The pieces tile the rectangle, so the largest sum
 * of live bytes, the lower bound, is the width at every time and the
 * optimum peak is exactly that width. Deterministic for a given seed.
 */
#ifndef SVOD_PLAN_RECT_H
#define SVOD_PLAN_RECT_H

#include <stdint.h>
#include <linux/svod.h>

uint32_t plan_gen_rect(uint64_t seed, uint32_t nr_bufs, uint64_t granule,
		       unsigned int pinwheel_pct, struct svod_plan_event *ev,
		       uint64_t *optimum);

#endif /* SVOD_PLAN_RECT_H */
