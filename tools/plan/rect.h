/* SPDX-License-Identifier: MIT OR GPL-2.0 */
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

/*
 * Other shapes of the same instances (plan_gen_rect_shape()'s @shape, ORed):
 * UNIFORM cuts a piece picked uniformly at random (not the largest of
 * three: small pieces are cut again, into many short-lived ones); COARSE
 * gives time nr_bufs / 2 + 4 units instead of 4 * nr_bufs + 16 (many
 * buffers begin and end together); SLACK shrinks a fifth of the pieces not
 * live at one random time (each keeps 1 to all but one of its granules;
 * at least one shrinks, if one is wider than a granule): that time
 * stays tight, so the optimum is still the width, but few others are, as
 * in MiniMalloc's instances (D: 5 of 99 steps at the bound, J: 2 of 193).
 */
#define PLAN_RECT_UNIFORM	1u
#define PLAN_RECT_COARSE	2u
#define PLAN_RECT_SLACK		4u
/* All of them: the highest @shape. */
#define PLAN_RECT_SHAPES	7u

uint32_t plan_gen_rect_shape(uint64_t seed, uint32_t nr_bufs, uint64_t granule,
			     unsigned int pinwheel_pct, unsigned int shape,
			     struct svod_plan_event *ev, uint64_t *optimum);

#endif /* SVOD_PLAN_RECT_H */
