// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * The search's state and its moves (every node runs through here): the
 * floors (a segment tree above SOLVE_SCAN_STEPS steps, else the lowest
 * floor per block of SOLVE_BLOCK), the edge bits where the floor changes,
 * the keys and the count of steps above the target, the hash of a state
 * and the table of proven states, and placing a buffer, wasting a
 * segment and undoing either (each move has its inverse).
 */
#include <errno.h>
#include <stdlib.h>

#include "solve_internal.h"

/* A tree over @steps values @val (all 0 if NULL). */
int tree_init(struct solve_tree *t, uint32_t steps, const uint64_t *val)
{
	struct solve_node *n;
	uint32_t x;

	t->steps = steps;
	for (t->leaves = 1; t->leaves < steps; t->leaves <<= 1)
		;
	t->n = calloc(2 * (size_t)t->leaves, sizeof(*t->n));
	if (!t->n)
		return -ENOMEM;
	n = t->n;
	for (x = 0; x < t->leaves; x++) {
		uint64_t v = x < steps && val ? val[x] : 0;

		n[t->leaves + x] = (struct solve_node){
			.mn = x < steps ? v : UINT64_MAX, .mx = v, .ad = v,
		};
	}
	for (x = t->leaves - 1; x > 0; x--) {
		n[x].mn = solve_min(n[2 * x].mn, n[2 * x + 1].mn);
		n[x].mx = solve_max(n[2 * x].mx, n[2 * x + 1].mx);
	}
	return 0;
}

void tree_free(struct solve_tree *t)
{
	free(t->n);
	t->n = NULL;
}

/* Node @x's minimum and maximum again from its children and its own add. */
static void tree_pull(struct solve_node *n, uint32_t x)
{
	n[x].mn = n[x].ad + solve_min(n[2 * x].mn, n[2 * x + 1].mn);
	n[x].mx = n[x].ad + solve_max(n[2 * x].mx, n[2 * x + 1].mx);
}

/*
 * Add @v (modulo 2^64: undo adds the negation) to steps [@l, @r), bottom
 * up: the nodes covering the range, then the ancestors of its two ends.
 */
static void tree_add(struct solve_tree *t, uint32_t l, uint32_t r, uint64_t v)
{
	struct solve_node *n = t->n;
	uint32_t lo = l + t->leaves, hi = r - 1 + t->leaves;

	for (l += t->leaves, r += t->leaves; l < r; l >>= 1, r >>= 1) {
		if (l & 1) {
			n[l].ad += v;
			n[l].mn += v;
			n[l++].mx += v;
		}
		if (r & 1) {
			n[--r].ad += v;
			n[r].mn += v;
			n[r].mx += v;
		}
	}
	for (lo >>= 1, hi >>= 1; lo; lo >>= 1, hi >>= 1) {
		tree_pull(n, lo);
		if (hi != lo)
			tree_pull(n, hi);
	}
}

/* The leftmost step holding the minimum. */
uint32_t tree_argmin(const struct solve_tree *t)
{
	const struct solve_node *n = t->n;
	uint32_t x = 1;

	while (x < t->leaves) {
		uint64_t below = n[x].mn - n[x].ad;

		x = n[2 * x].mn == below ? 2 * x : 2 * x + 1;
	}
	return x - t->leaves;
}

/* The first step >= @l above @y in node @x (@acc: its ancestors' adds). */
static uint32_t tree_above_node(const struct solve_tree *t, uint32_t x, uint32_t nl,
				uint32_t nr, uint32_t l, uint64_t y, uint64_t acc)
{
	uint32_t mid = nl + (nr - nl) / 2, r;

	if (nr <= l || t->n[x].mx + acc <= y || nl >= t->steps)
		return SOLVE_NONE;
	if (x >= t->leaves)
		return nl;
	r = tree_above_node(t, 2 * x, nl, mid, l, y, acc + t->n[x].ad);
	if (r == SOLVE_NONE)
		r = tree_above_node(t, 2 * x + 1, mid, nr, l, y, acc + t->n[x].ad);
	return r;
}

/* The first step >= @l whose value is above @y, or the number of steps. */
uint32_t tree_above(const struct solve_tree *t, uint32_t l, uint64_t y)
{
	uint32_t r = tree_above_node(t, 1, 0, t->leaves, l, y, 0);

	return r == SOLVE_NONE ? t->steps : r;
}

/* Is any byte to spare (a key below the target)? Before solve_slack(). */
void solve_kvals(struct solver *s)
{
	s->spare = s->full < s->steps;
}

/* Bytes to spare at step @t (after solve_kvals()). */
uint64_t solve_slack(const struct solver *s, uint32_t t)
{
	return s->spare ? s->target - s->kvals[t] : 0;
}

/* Take buffer @i out of its step's candidate list. */
static void solve_unlink(struct solver *s, uint32_t i)
{
	int k;

	for (k = 0; k < 2; k++) {
		s->nxt[k][s->prv[k][i]] = s->nxt[k][i];
		s->prv[k][s->nxt[k][i]] = s->prv[k][i];
	}
}

/* Put it back where it was (moves are undone in reverse order). */
static void solve_relink(struct solver *s, uint32_t i)
{
	int k;

	for (k = 0; k < 2; k++) {
		s->nxt[k][s->prv[k][i]] = i;
		s->prv[k][s->nxt[k][i]] = i;
	}
}

/* The floors of [@a, @b) rise by @d (mod 2^64): @prof follows. */
static void solve_prof(struct solver *s, uint32_t a, uint32_t b, uint64_t d)
{
	uint32_t l = s->reversed ? s->steps - b : a, r = s->reversed ? s->steps - a : b;

	s->prof += d * (s->rpre[r] - s->rpre[l]);
}

/* The state: which buffers are placed, and the floors. */
uint64_t solve_hash(const struct solver *s)
{
	return s->zob ^ (s->prof * 0x9E3779B97F4A7C15ULL + 0x632BE59BD9B4E019ULL);
}

/* Steps [*@l, *@r) in forward time, or back (the same mapping both ways). */
static void solve_forward(const struct solver *s, uint32_t *l, uint32_t *r)
{
	uint32_t t = *l;

	if (!s->reversed)
		return;
	*l = s->steps - *r;
	*r = s->steps - t;
}

/*
 * The current state was proven to have no completion within the target:
 * the steps the proof depends on in [*@cl, *@cr).
 */
int solve_tt_failed(const struct solver *s, uint32_t *cl, uint32_t *cr)
{
	uint64_t h = solve_hash(s);
	const uint64_t *e = &s->tt[3 * (h & s->tt_mask)];

	if (e[0] != h || e[1] < s->target)
		return 0;
	*cl = (uint32_t)e[2];
	*cr = (uint32_t)(e[2] >> 32);
	solve_forward(s, cl, cr);
	return 1;
}

/* Prove it so: its search ended without a plan. The newest proof stays. */
void solve_tt_store(struct solver *s, uint32_t cl, uint32_t cr)
{
	uint64_t h = solve_hash(s), *e = &s->tt[3 * (h & s->tt_mask)];

	/* Kept in forward time. */
	solve_forward(s, &cl, &cr);
	if (e[0] != h || e[1] < s->target) {
		e[0] = h;
		e[1] = s->target;
		e[2] = cl | (uint64_t)cr << 32;
	}
}

/* Add @d (mod 2^64) to the per-step values @v over [@l, @r). */
static void solve_vadd(uint64_t *v, uint32_t l, uint32_t r, uint64_t d)
{
	for (; l < r; l++)
		v[l] += d;
}

/* Mark step @t an edge if its floor differs from the one before it. */
static void solve_edge_set(struct solver *s, uint32_t t)
{
	uint64_t bit = 1ULL << (t % 64);

	if (t >= s->steps || !t || s->vals[t] != s->vals[t - 1])
		s->edge[t / 64] |= bit;
	else
		s->edge[t / 64] &= ~bit;
}

/* The first edge at or after step @t (@s->steps at the end). */
uint32_t solve_edge_next(const struct solver *s, uint32_t t)
{
	uint32_t w = t / 64;
	uint64_t x = s->edge[w] & (~0ULL << (t % 64));

	while (!x)
		x = s->edge[++w];
	return w * 64 + (uint32_t)__builtin_ctzll(x);
}

/* The last edge at or before step @t. */
uint32_t solve_edge_prev(const struct solver *s, uint32_t t)
{
	uint32_t w = t / 64;
	uint64_t x = s->edge[w] & (~0ULL >> (63 - t % 64));

	while (!x)
		x = s->edge[--w];
	return w * 64 + 63 - (uint32_t)__builtin_clzll(x);
}

/*
 * Raise the floors of [@l, @r) by @d (mod 2^64): the tree over them, or
 * the minimum of each block (a block wholly in the range moves with it;
 * one partly in it is marked UINT64_MAX, for solve_lowest() to scan again:
 * most moves are undone before the next lowest floor is asked for).
 */
static void solve_floor_add(struct solver *s, uint32_t l, uint32_t r, uint64_t d)
{
	uint32_t k, lo, hi;

	solve_vadd(s->vals, l, r, d);
	solve_edge_set(s, l);
	solve_edge_set(s, r);
	if (s->floor.n) {
		tree_add(&s->floor, l, r, d);
		return;
	}
	for (k = l / SOLVE_BLOCK; k * SOLVE_BLOCK < r; k++) {
		lo = k * SOLVE_BLOCK;
		hi = solve_min(lo + SOLVE_BLOCK, s->steps);
		if (l <= lo && hi <= r) {
			if (s->bmin[k] != UINT64_MAX)
				s->bmin[k] += d;
			continue;
		}
		s->bmin[k] = UINT64_MAX;
	}
}

/* The same for the keys, counting the steps at and above the target. */
static void solve_kadd(struct solver *s, uint32_t l, uint32_t r, uint64_t d)
{
	uint64_t *v = s->kvals, o;

	for (; l < r; l++) {
		o = v[l];
		v[l] += d;
		s->full += (v[l] >= s->target) - (o >= s->target);
		s->over += (v[l] > s->target) - (o > s->target);
	}
}

/* Count them again: the target changed. */
void solve_kcount(struct solver *s)
{
	uint32_t t;

	s->full = 0;
	s->over = 0;
	for (t = 0; t < s->steps; t++) {
		s->full += s->kvals[t] >= s->target;
		s->over += s->kvals[t] > s->target;
	}
}

/*
 * Place buffer @i on the flat floor @y0 of its steps: at y0 rounded up to
 * its alignment. The floor rises by the padding and the size, the key by
 * the padding only (its bytes move from the unplaced to the floor).
 */
void solve_place(struct solver *s, uint32_t i, uint64_t y0)
{
	const struct solve_buf *b = &s->b[i];
	uint64_t x = solve_round_up(y0, b->align);

	s->off[i] = x;
	solve_unlink(s, i);
	solve_floor_add(s, b->lo, b->hi, x - y0 + b->size);
	solve_prof(s, b->lo, b->hi, x - y0 + b->size);
	s->zob ^= s->zkey[i];
	if (x != y0)
		solve_kadd(s, b->lo, b->hi, x - y0);
	s->placed++;
}

static void solve_unplace(struct solver *s, uint32_t i, uint64_t y0)
{
	const struct solve_buf *b = &s->b[i];
	uint64_t x = s->off[i];

	s->placed--;
	s->off[i] = UINT64_MAX;
	if (x != y0)
		solve_kadd(s, b->lo, b->hi, y0 - x);
	solve_floor_add(s, b->lo, b->hi, -(x - y0 + b->size));
	solve_prof(s, b->lo, b->hi, -(x - y0 + b->size));
	s->zob ^= s->zkey[i];
	solve_relink(s, i);
}

/* Give up [@a, @b) up to @d bytes higher: the floor and the key rise. */
void solve_waste(struct solver *s, uint32_t a, uint32_t b, uint64_t d)
{
	solve_floor_add(s, a, b, d);
	solve_kadd(s, a, b, d);
	solve_prof(s, a, b, d);
}

/* Undo what frame @f did last. */
void solve_undo(struct solver *s, struct solve_frame *f)
{
	if (f->raise)
		solve_waste(s, f->a, f->cur != SOLVE_NONE ? f->c : f->b, -f->raise);
	if (f->cur != SOLVE_NONE)
		solve_unplace(s, f->cur, f->y0);
	f->cur = SOLVE_NONE;
	f->raise = 0;
}
