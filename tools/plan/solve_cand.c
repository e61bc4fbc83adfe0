// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * What a node tries, in order: the candidates of its segment (one of those
 * alike in steps, size and alignment; maybe a random one first, or the
 * one the incumbent placed nearest the floor when guided), a buffer later
 * in the segment with the steps before it given up, then the waste
 * (solve_next()).
 */
#include "solve_internal.h"

static int solve_same(const struct solve_buf *x, const struct solve_buf *y)
{
	return x->lo == y->lo && x->hi == y->hi && x->size == y->size && x->align == y->align;
}

/* Can candidate @i go now: ends by the segment's end, not like one tried. */
static int solve_fits(const struct solver *s, const struct solve_frame *f, uint32_t i)
{
	if (f->side ? s->b[i].lo < f->a : s->b[i].hi > f->b)
		return 0;
	if (f->prev != SOLVE_NONE && solve_same(&s->b[i], &s->b[f->prev]))
		return 0;
	return f->pick == SOLVE_NONE || i == f->pick || !solve_same(&s->b[i], &s->b[f->pick]);
}

/*
 * Maybe a random candidate first: @s->shuffle percent of the nodes; on the
 * others, when @s->guide is set, the one the incumbent placed nearest the
 * floor (the search follows the best plan and departs from it where that
 * plan breaks the target: solution-guided search).
 */
void solve_shuffle(struct solver *s, struct solve_frame *f)
{
	uint32_t head = s->m + f->c, i, k = 0, *nxt = s->nxt[f->side];

	f->pick = SOLVE_NONE;
	if (s->guide && !(s->shuffle && solve_rand(s) % 100 < s->shuffle)) {
		uint64_t d, bd = UINT64_MAX;

		for (i = nxt[head]; i != head; i = nxt[i]) {
			if (!solve_fits(s, f, i))
				continue;
			d = s->best[i] > f->y0 ? s->best[i] - f->y0 : f->y0 - s->best[i];
			if (d < bd) {
				bd = d;
				f->pick = i;
			}
		}
		return;
	}
	if (!s->shuffle || solve_rand(s) % 100 >= s->shuffle)
		return;
	for (i = nxt[head]; i != head; i = nxt[i])
		k += solve_fits(s, f, i);
	if (k < 2)
		return;
	k = (uint32_t)(solve_rand(s) % k);
	for (i = nxt[head]; i != head; i = nxt[i])
		if (solve_fits(s, f, i) && !k--)
			break;
	f->pick = i;
}

/* Does buffer @i, placed at @y0, raise that floor by at most @cap? */
static int solve_under(const struct solver *s, uint32_t i, uint64_t y0, uint64_t cap)
{
	return cap == UINT64_MAX ||
	       solve_round_up(y0, s->b[i].align) - y0 + s->b[i].size <= cap;
}

/*
 * The next candidate of step @f->c raising its floor by at most @cap,
 * placed; 0 when none is left.
 */
static int solve_next_buf(struct solver *s, struct solve_frame *f, uint64_t cap)
{
	uint32_t head = s->m + f->c, i, *nxt = s->nxt[f->side];

	if (f->it == head && f->prev == SOLVE_NONE && f->pick != SOLVE_NONE &&
	    solve_under(s, f->pick, f->y0, cap)) {
		i = f->pick;
	} else {
		for (i = nxt[f->it]; i != head; i = nxt[i])
			if (i != f->pick && solve_fits(s, f, i) && solve_under(s, i, f->y0, cap))
				break;
		if (i == head)
			return 0;
		f->it = i;
	}
	f->prev = i;
	f->cur = i;
	solve_place(s, i, f->y0);
	return 1;
}

/*
 * The leftmost step c in (@f->a, @f->b) where an unplaced buffer starts
 * that ends by @f->b, if the cells at @f->y0 over [a, c) may stay empty
 * (their key is below the target), else SOLVE_NONE.
 */
static uint32_t solve_second(const struct solver *s, const struct solve_frame *f,
				 uint32_t from)
{
	uint32_t c, t;

	for (c = from; c < f->b; c++) {
		uint32_t tail = s->prv[0][s->m + c];

		if (tail != s->m + c && s->b[tail].hi <= f->b)
			break;
	}
	if (c >= f->b)
		return SOLVE_NONE;
	/* [a, @from - 1) was checked by the call that returned @from - 1. */
	for (t = from - 1; t < c; t++)
		if (s->kvals[t] >= s->target)
			return SOLVE_NONE;
	return c;
}

/*
 * Apply frame @f's next branch: a buffer at (a, y0), one at (c, y0) with
 * [a, c) given up, then the waste (the segment raised to its lower
 * neighbour). 0 when none left.
 */
int solve_next(struct solver *s, struct solve_frame *f)
{
	uint64_t up;
	uint32_t t;

	switch (f->phase) {
	case 0:
		if (solve_next_buf(s, f, UINT64_MAX))
			return 1;
		f->phase = 1;
		f->c = f->side ? SOLVE_NONE : f->a;
		/* fall through */
	case 1:
		while (f->c != SOLVE_NONE) {
			uint64_t k = 0, cap = UINT64_MAX;

			up = f->a ? s->vals[f->a - 1] : UINT64_MAX;
			/*
			 * [a, c) rises by the lower of its left wall and the
			 * buffer's top: a buffer that would take a key there
			 * past the target is not tried.
			 */
			for (t = f->a; t < f->c; t++)
				k = solve_max(k, s->kvals[t]);
			if (up == UINT64_MAX || k + (up - f->y0) > s->target)
				cap = s->target - k;
			if (f->c != f->a && solve_next_buf(s, f, cap)) {
				/* The leftmost on the floor: nothing below it in [a, c). */
				f->raise = solve_min(up, s->vals[f->c]) - f->y0;
				solve_waste(s, f->a, f->c, f->raise);
				return 1;
			}
			f->c = solve_second(s, f, f->c + 1);
			if (f->c == SOLVE_NONE)
				break;
			f->it = s->m + f->c;
			f->prev = SOLVE_NONE;
			solve_shuffle(s, f);
		}
		f->phase = 2;
		/* fall through */
	case 2:
		f->phase = 3;
		if (!f->a && f->b == s->steps)
			return 0;
		up = f->a ? s->vals[f->a - 1] : UINT64_MAX;
		if (f->b < s->steps)
			up = solve_min(up, s->vals[f->b]);
		/* A key it would take past the target: the branch fails. */
		for (t = f->a; t < f->b; t++)
			if (s->kvals[t] + (up - f->y0) > s->target)
				return 0;
		f->raise = up - f->y0;
		solve_waste(s, f->a, f->b, f->raise);
		return 1;
	default:
		return 0;
	}
}
