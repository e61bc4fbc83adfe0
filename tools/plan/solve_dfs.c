// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * The depth-first search (solve_dfs()): an explicit stack of frames, the
 * table of proven states looked up and filled, conflict-directed
 * backjumping, the best plan kept, and the search paths kept for the
 * restarts (solve_save_path(), solve_save_up()).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "solve_internal.h"

#ifdef SOLVE_NODE_CLOCK
__thread uint64_t solve_clock_nodes;
#endif

/*
 * Backjumping (solve_dfs()): 0 turns it off (tools/plan's test build
 * compares the two searches).
 */
#ifndef SOLVE_CBJ
#define SOLVE_CBJ 1
#endif

/* Frame @f's failures so far depend on steps [@l, @r) too (clipped). */
static void solve_conf(const struct solver *s, struct solve_frame *f, int64_t l, int64_t r)
{
	if (l < 0)
		l = 0;
	if (r > (int64_t)s->steps)
		r = s->steps;
	if (l >= r)
		return;
	if ((uint32_t)l < f->cl)
		f->cl = (uint32_t)l;
	if ((uint32_t)r > f->cr)
		f->cr = (uint32_t)r;
}

/* The steps frame @f's current branch changed: [*@l, *@r). */
static void solve_touched(const struct solver *s, const struct solve_frame *f, uint32_t *l,
			  uint32_t *r)
{
	if (f->cur == SOLVE_NONE) {
		*l = f->a;
		*r = f->b;
		return;
	}
	*l = f->raise ? f->a : s->b[f->cur].lo;
	*r = s->b[f->cur].hi;
}

/* A new frame for the current state: its lowest segment. */
static int solve_push(struct solver *s)
{
	struct solve_frame *f;

	if (s->depth == s->cap) {
		uint32_t cap = s->cap ? 2 * s->cap : 1024;
		void *p = realloc(s->stack, cap * sizeof(*s->stack));

		if (!p)
			return -ENOMEM;
		s->stack = p;
		s->cap = cap;
	}
	f = &s->stack[s->depth++];
	solve_lowest(s, f);
	if (s->depth > 1)
		solve_focus(s, f, f - 1);
	f->side = 0;
	if (s->sweep && s->target == s->lb)
		solve_sweep(s, f);
	else
		solve_valley(s, f);
	f->c = f->side ? f->b - 1 : f->a;
	f->it = s->m + f->c;
	f->cur = SOLVE_NONE;
	f->prev = SOLVE_NONE;
	f->raise = 0;
	f->phase = 0;
	f->cl = s->steps;
	f->cr = 0;
	solve_shuffle(s, f);
	/* Reached before and searched to its end: nothing to try. */
	if (s->tt && s->target < SOLVE_INF && solve_tt_failed(s, &f->cl, &f->cr))
		f->phase = 3;
	return 0;
}

/* A complete plan within the target: keep it if best. */
static void solve_record(struct solver *s)
{
	uint64_t peak = 0;
	uint32_t i;

	for (i = 0; i < s->m; i++)
		peak = solve_max(peak, s->off[i] + s->b[i].size);
	if (peak < s->best_peak) {
		memcpy(s->best, s->off, s->m * sizeof(*s->best));
		s->best_peak = peak;
	}
	s->found = 1;
	s->stop = 1;
}

/* Room for @n frames at *@path (of *@cap). Return: 0 or -ENOMEM. */
int solve_path_room(struct solve_frame **path, uint32_t *cap, uint32_t n)
{
	void *p;

	if (n <= *cap)
		return 0;
	p = realloc(*path, n * sizeof(**path));
	if (!p)
		return -ENOMEM;
	*path = p;
	*cap = n;
	return 0;
}

/*
 * Copy the search path to this node (the restart's base, then the stack)
 * to *@path (room for *@cap frames). Below that path itself, its prefix
 * is in place (perhaps moved: the base follows it). Its frames: @base_len
 * + @depth. Return: 0 or -ENOMEM.
 */
static int solve_copy_path(struct solver *s, struct solve_frame **path, uint32_t *cap)
{
	int in_place = s->base_len && s->base == *path;

	if (solve_path_room(path, cap, s->base_len + s->depth))
		return -ENOMEM;
	if (in_place)
		s->base = *path;
	else if (s->base_len)
		memcpy(*path, s->base, s->base_len * sizeof(**path));
	memcpy(*path + s->base_len, s->stack, s->depth * sizeof(**path));
	return 0;
}

/* Keep the search path to this node (at the bound: its base is @path). */
static int solve_save_path(struct solver *s)
{
	if (solve_copy_path(s, &s->path, &s->path_cap))
		return -ENOMEM;
	s->path_len = s->base_len + s->depth;
	s->path_reversed = s->reversed;
	return 0;
}

/*
 * Keep the search path to this node (above the bound) as @up: it holds
 * for any target as high as this one.
 */
static int solve_save_up(struct solver *s)
{
	struct solve_up *u = &s->up;
	if (solve_copy_path(s, &u->f, &u->cap))
		return -ENOMEM;
	u->len = s->base_len + s->depth;
	u->reversed = s->reversed;
	u->target = s->target;
	return 0;
}

/*
 * Depth-first search, with an explicit stack (its depth reaches the number
 * of buffers and of wastes). Return: 0 or -ENOMEM.
 *
 * Backjumping: a frame's failures depend only on some steps, [cl, cr):
 * those of its valley and its walls, and of the runs a placement's
 * valley check read (a key above the target lies within the valley). The
 * frames above it that changed none of those steps (their buffers or
 * wastes lie elsewhere in time) cannot mend them: they are undone with
 * their other branches untried, and the failure's steps go to the frame
 * that did change one. A state proven failed keeps its steps in the
 * table (solve_tt_store()), in forward time.
 */
int solve_dfs(struct solver *s)
{
	struct solve_frame *f;
	int err = solve_push(s);

	while (s->depth) {
		f = &s->stack[s->depth - 1];
		solve_undo(s, f);
		if (err || s->stop || !solve_next(s, f)) {
			s->depth--;
			if (err || s->stop || s->target >= SOLVE_INF)
				continue;
			/* Its valley and walls: what its branches were. */
			solve_conf(s, f, (int64_t)f->a - 1, (int64_t)f->b + 1);
			if (s->tt)
				solve_tt_store(s, f->cl, f->cr);
			if (SOLVE_CBJ) {
				uint32_t cl, cr, tl, tr;

				cl = f->cl;
				cr = f->cr;
				/* Frames that changed none of those steps: skipped. */
				while (s->depth) {
					struct solve_frame *g = &s->stack[s->depth - 1];

					solve_touched(s, g, &tl, &tr);
					if (tl < cr && cl < tr) {
						solve_conf(s, g, cl, cr);
						break;
					}
					solve_undo(s, g);
					s->depth--;
				}
			}
			continue;
		}
		/* Keys above the target: within its valley (its failures' steps). */
		if (s->over)
			continue;
		/* solve_push() reads its entry: load it while the checks run. */
		if (s->tt)
			__builtin_prefetch(&s->tt[3 * (solve_hash(s) & s->tt_mask)]);
		if (f->phase == 0 && f->cur != SOLVE_NONE && !solve_valleys(s, f)) {
			const struct solve_buf *x = &s->b[f->cur];
			uint32_t l = solve_edge_prev(s, x->lo ? x->lo - 1 : 0);
			uint32_t r = solve_edge_next(s, x->hi < s->steps ? x->hi + 1 : s->steps);

			solve_conf(s, f, (int64_t)l - 1, (int64_t)r + 1);
			continue;
		}
		/* Keep deeper partial plans (in strides: each costs O(m)). */
		if (s->target < SOLVE_INF &&
		    s->placed >= s->part_placed + (s->m >> 6) + (s->placed > s->part_placed)) {
			memcpy(s->part, s->off, s->m * sizeof(*s->part));
			s->part_placed = s->placed;
		}
		if (s->target == s->lb &&
		    s->placed >= s->path_placed + (s->m >> 6) + (s->placed > s->path_placed) &&
		    !solve_save_path(s)) {
			s->path_placed = s->placed;
			s->path_time = solve_now();
		}
		if (s->target > s->lb && s->target < SOLVE_INF &&
		    s->placed >= s->up.placed + (s->m >> 6) + (s->placed > s->up.placed) &&
		    !solve_save_up(s))
			s->up.placed = s->placed;
		if (s->placed == s->m) {
			solve_record(s);
			continue;
		}
		SOLVE_TICK();
		if (++s->nodes >= s->node_limit ||
		    (!(s->nodes & s->clock_mask) && solve_now() > s->deadline)) {
			s->stop = 1;
			s->timeout = 1;
			continue;
		}
		err = solve_push(s);
	}
	return err;
}
