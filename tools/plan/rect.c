// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * Known-optimum instance generator: see rect.h.
 */
#include <stdlib.h>

#include "gen.h"
#include "rect.h"

/* A piece: bytes [x, x + w) over time [t, t + h). */
struct rect {
	uint64_t x, w;
	uint32_t t, h;
};

/* Sort key of an event: time, FREE before ALLOC, then random. */
struct rect_ev {
	uint64_t key;
	struct svod_plan_event ev;
};

static int rect_ev_cmp(const void *a, const void *b)
{
	const struct rect_ev *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

/* A cut inside (0, len), on the granule, in the middle 80% when it can. */
static uint64_t rect_cut(uint64_t *st, uint64_t len, uint64_t granule)
{
	uint64_t units = len / granule, lo = units / 10, hi = units - units / 10;

	if (lo < 1)
		lo = 1;
	if (hi <= lo)
		hi = lo + 1;
	return (lo + plan_gen_rand(st) % (hi - lo)) * granule;
}

/* Split piece @r (index @i) in two along bytes or time: 1 on success. */
static int rect_split(uint64_t *st, struct rect *r, uint32_t *nr, uint32_t i,
		      uint64_t granule)
{
	struct rect a = r[i], b = r[i];
	int by_time = plan_gen_rand(st) % 2;

	if (a.w < 2 * granule)
		by_time = 1;
	if (a.h < 2)
		by_time = 0;
	if (by_time ? a.h < 2 : a.w < 2 * granule)
		return 0;
	if (by_time) {
		a.h = (uint32_t)rect_cut(st, a.h, 1);
		b.t = a.t + a.h;
		b.h -= a.h;
	} else {
		a.w = rect_cut(st, a.w, granule);
		b.x = a.x + a.w;
		b.w -= a.w;
	}
	r[i] = a;
	r[(*nr)++] = b;
	return 1;
}

/* Cut piece @i into a pinwheel of five (four around a centre): 1 on success. */
static int rect_pinwheel(uint64_t *st, struct rect *r, uint32_t *nr, uint32_t i,
			 uint64_t granule)
{
	struct rect o = r[i];
	uint64_t x1, x2;
	uint32_t t1, t2;

	if (o.w < 3 * granule || o.h < 3)
		return 0;
	x1 = rect_cut(st, o.w - granule, granule);
	x2 = x1 + rect_cut(st, o.w - x1, granule);
	t1 = (uint32_t)rect_cut(st, o.h - 1, 1);
	t2 = t1 + (uint32_t)rect_cut(st, o.h - t1, 1);
	r[i] = (struct rect){ o.x, x2, o.t, t1 };
	r[(*nr)++] = (struct rect){ o.x + x2, o.w - x2, o.t, t2 };
	r[(*nr)++] = (struct rect){ o.x + x1, o.w - x1, o.t + t2, o.h - t2 };
	r[(*nr)++] = (struct rect){ o.x, x1, o.t + t1, o.h - t1 };
	r[(*nr)++] = (struct rect){ o.x + x1, x2 - x1, o.t + t1, t2 - t1 };
	return 1;
}

/*
 * Index of the largest of three random pieces (relative width + height),
 * or with @uniform of one random piece.
 */
static uint32_t rect_pick(uint64_t *st, const struct rect *r, uint32_t nr,
			  uint64_t width, uint32_t height, int uniform)
{
	uint32_t best = 0, k, i;
	double score, best_score = -1;

	if (uniform)
		return (uint32_t)(plan_gen_rand(st) % nr);
	for (k = 0; k < 3; k++) {
		i = plan_gen_rand(st) % nr;
		score = (double)r[i].w / width + (double)r[i].h / height;
		if (score > best_score) {
			best_score = score;
			best = i;
		}
	}
	return best;
}

/*
 * PLAN_RECT_SLACK: a fifth of the pieces not live at one random time t*
 * (at least one, if one is wider than a granule) keep only their first 1
 * to all but one of their granules (the rest stays empty): the pieces
 * live at t* still tile the width, so it is still the lower bound and the
 * optimum, but few other times are tight.
 */
static void rect_slack(uint64_t *st, struct rect *r, uint32_t nr, uint32_t height,
		       uint64_t granule)
{
	uint32_t ts = (uint32_t)(plan_gen_rand(st) % height), i, last = nr;
	int shrunk = 0;

	for (i = 0; i < nr; i++) {
		if ((r[i].t <= ts && ts < r[i].t + r[i].h) || r[i].w < 2 * granule)
			continue;
		last = i;
		if (plan_gen_rand(st) % 5)
			continue;
		r[i].w = granule * (1 + plan_gen_rand(st) % (r[i].w / granule - 1));
		shrunk = 1;
	}
	if (!shrunk && last < nr)
		r[last].w = granule * (1 + plan_gen_rand(st) % (r[last].w / granule - 1));
}

static uint32_t rect_events(uint64_t *st, const struct rect *r, uint32_t nr,
			    struct svod_plan_event *ev)
{
	struct rect_ev *e = calloc(2 * (size_t)nr, sizeof(*e));
	uint32_t i;

	if (!e)
		return 0;
	for (i = 0; i < nr; i++) {
		uint64_t noise = plan_gen_rand(st) & 0xffffffffULL;

		e[2 * i] = (struct rect_ev){ ((uint64_t)r[i].t << 33) | 1ULL << 32 | noise,
			{ .op = SVOD_PLAN_ALLOC, .id = i, .size = r[i].w } };
		e[2 * i + 1] = (struct rect_ev){ ((uint64_t)(r[i].t + r[i].h) << 33) | noise,
			{ .op = SVOD_PLAN_FREE, .id = i } };
	}
	qsort(e, 2 * (size_t)nr, sizeof(*e), rect_ev_cmp);
	for (i = 0; i < 2 * nr; i++)
		ev[i] = e[i].ev;
	free(e);
	return 2 * nr;
}

/**
 * plan_gen_rect_shape() - generate one known-optimum instance
 * @seed: seed
 * @nr_bufs: buffers wanted (at least 1)
 * @granule: every size and cut is a multiple of it (256, or 1 for any size)
 * @pinwheel_pct: percent of the cuts that are non-guillotine pinwheels
 * @shape: PLAN_RECT_* flags (rect.h), 0 for the default shape
 * @ev: out: 2 * @nr_bufs events (each buffer allocated and freed once,
 *	alignment 0: the planner must run with block size 1 for the sizes to
 *	count as they are)
 * @optimum: out: the rectangle's width, the optimum peak and lower bound
 *
 * Context: any thread.
 * Return: the number of events written (2 * @nr_bufs), 0 without memory.
 */
uint32_t plan_gen_rect_shape(uint64_t seed, uint32_t nr_bufs, uint64_t granule,
			     unsigned int pinwheel_pct, unsigned int shape,
			     struct svod_plan_event *ev, uint64_t *optimum)
{
	uint64_t st = seed, width;
	uint32_t height, nr = 1, i, tries = 0;
	struct rect *r = calloc(nr_bufs + 4, sizeof(*r));

	if (!r)
		return 0;
	height = shape & PLAN_RECT_COARSE ? nr_bufs / 2 + 4 : 4 * nr_bufs + 16;
	width = granule * (4096 + plan_gen_rand(&st) % 61440);
	if (granule == 1)
		width += plan_gen_rand(&st) % (16 << 20);
	r[0] = (struct rect){ 0, width, 0, height };
	while (nr < nr_bufs && tries++ < 64 * nr_bufs) {
		i = rect_pick(&st, r, nr, width, height, shape & PLAN_RECT_UNIFORM);
		if (nr + 4 <= nr_bufs && plan_gen_rand(&st) % 100 < pinwheel_pct &&
		    rect_pinwheel(&st, r, &nr, i, granule))
			continue;
		rect_split(&st, r, &nr, i, granule);
	}
	*optimum = width;
	if (shape & PLAN_RECT_SLACK)
		rect_slack(&st, r, nr, height, granule);
	nr = rect_events(&st, r, nr, ev);
	free(r);
	return nr;
}

/* The default shape: plan_gen_rect_shape() with @shape 0. */
uint32_t plan_gen_rect(uint64_t seed, uint32_t nr_bufs, uint64_t granule,
		       unsigned int pinwheel_pct, struct svod_plan_event *ev,
		       uint64_t *optimum)
{
	return plan_gen_rect_shape(seed, nr_bufs, granule, pinwheel_pct, 0, ev, optimum);
}
