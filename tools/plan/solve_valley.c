// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * Where a node branches: the runs of equal floors (from the edge bits),
 * the valleys among them and whether each can still be covered where no
 * byte is to spare (solve_chain(), solve_valleys()), the first-fail valley
 * (solve_valley()), the sweep of the portfolio's second search
 * (solve_sweep()), the lowest segment (solve_lowest()) and, above the
 * bound, the valley beside the last move (solve_focus()).
 */
#include <string.h>

#include "solve_internal.h"

/* A new stamp for the reach marks (clearing them when it wraps). */
static uint32_t solve_stamp(struct solver *s)
{
	if (++s->stamp == 0) {
		memset(s->reach, 0, ((size_t)s->steps + 1) * sizeof(*s->reach));
		s->stamp = 1;
	}
	return s->stamp;
}

#ifdef SOLVE_TEST
/* The run [@l, @r) around step @t, checked against a scan of the floors. */
static void solve_test_run(const struct solver *s, uint32_t t, uint32_t l, uint32_t r)
{
	const uint64_t *v = s->vals;
	uint32_t a, b;

	for (a = t; a && v[a - 1] == v[t]; a--)
		;
	for (b = t + 1; b < s->steps && v[b] == v[t]; b++)
		;
	atomic_fetch_add(&solve_test_runs, 1);
	if (a != l || b != r)
		atomic_fetch_add(&solve_test_run_bad, 1);
}
#else
static void solve_test_run(const struct solver *s, uint32_t t, uint32_t l, uint32_t r)
{
	(void)s;
	(void)t;
	(void)l;
	(void)r;
}
#endif

/*
 * The run of steps around step @t at its floor, [@l, @r) (as long as it
 * is: no longer than what solve_chain() then scans). 1 if it is a valley:
 * both its neighbours higher (or the ends of time).
 */
static int solve_run(const struct solver *s, uint32_t t, uint32_t *l, uint32_t *r)
{
	const uint64_t *v = s->vals, y = v[t];

	*l = solve_edge_prev(s, t);
	*r = solve_edge_next(s, t + 1);
	solve_test_run(s, t, *l, *r);
	return (!*l || v[*l - 1] > y) && (*r == s->steps || v[*r] > y);
}

/*
 * Can the valley [@l, @r) at floor @y (walls higher on both sides) still
 * be filled? Where no byte is to spare (every key at the target), its
 * bottom row must be covered by unplaced buffers within the valley lying
 * end to end, and each of its steps up to the lower wall by buffers
 * within it (any other buffer there sits above a wall).
 */
static int solve_chain(struct solver *s, uint32_t l, uint32_t r, uint64_t y)
{
	const struct solve_buf *b = s->b;
	const uint32_t *prv = s->prv[0], m = s->m;
	uint64_t depth = UINT64_MAX, *cover = s->cover, sum = 0, add, slack;
	uint32_t t, i, h, st = solve_stamp(s), far = l, *reach = s->reach;
	int on;

	/* Below the lower wall, only buffers within the valley can go. */
	if (l)
		depth = s->vals[l - 1] - y;
	if (r < s->steps)
		depth = solve_min(depth, s->vals[r] - y);
	reach[l] = st;
	memset(cover + l, 0, (r - l + 1) * sizeof(*cover));
	/*
	 * One pass, locals for what the stores to @reach and @cover would
	 * have the compiler read again: step @t's cover is complete once the
	 * buffers from it are read (those ending there came before).
	 */
	for (t = l; t < r; t++) {
		/* Nothing reached reaches past @far: the row stays open. */
		if (t > far)
			return 0;
		on = reach[t] == st;
		slack = solve_slack(s, t);
		/* A cell with a byte to spare may stay empty. */
		if (on && slack) {
			reach[t + 1] = st;
			far = solve_max(far, t + 1);
		}
		add = 0;
		for (i = prv[m + t]; i != m + t && (h = b[i].hi) <= r; i = prv[i]) {
			if (on) {
				reach[h] = st;
				far = solve_max(far, h);
			}
			add += b[i].size;
			cover[h] -= b[i].size;
		}
		sum += cover[t] + add;
		if (depth != UINT64_MAX && sum + slack < depth)
			return 0;
	}
	return reach[r] == st;
}

/*
 * Is the run of steps around step @t at its floor (the maximal run at the
 * same height) a valley whose bottom row cannot be covered? 0 if so.
 */
static int solve_run_ok(struct solver *s, uint32_t t, uint32_t *l, uint32_t *r)
{
	*l = t;
	*r = t;
	if (s->vals[t] >= s->target || !solve_run(s, t, l, r))
		return 1;
	return solve_chain(s, *l, *r, s->vals[t]);
}

/*
 * After frame @f placed a buffer: the valleys it may have made (the run on
 * its top, the runs beside it, now walled by it) must still be coverable.
 */
int solve_valleys(struct solver *s, const struct solve_frame *f)
{
	const struct solve_buf *x = &s->b[f->cur];
	uint32_t l, r, u, v;

	solve_kvals(s);
	if (!solve_run_ok(s, x->lo, &l, &r))
		return 0;
	/* A run beside it at the height of its top: the one just checked. */
	return (x->hi == s->steps || (x->hi >= l && x->hi < r) ||
		solve_run_ok(s, x->hi, &u, &v)) &&
	       (!x->lo || (x->lo - 1 >= l && x->lo - 1 < r) || solve_run_ok(s, x->lo - 1, &u, &v));
}

/*
 * Candidates (up to @cap) for the first step of [@l, @r) (starting at @l,
 * ending by @r) if @side is 0, else for its last (ending at @r, starting
 * at @l or later).
 */
static uint32_t solve_count(const struct solver *s, int side, uint32_t l, uint32_t r,
			    uint32_t cap)
{
	uint32_t head = s->m + (side ? r - 1 : l), i, k = 0;
	const uint32_t *prv = s->prv[side];

	for (i = prv[head]; i != head && k < cap; i = prv[i]) {
		if (side ? s->b[i].lo < l : s->b[i].hi > r)
			break;
		k++;
	}
	return k;
}

/*
 * Can the row of [@l, @r) be followed from step boundary @t to its end
 * (@side 0: to @r, forward; 1: to @l, back) by cells with a byte to spare
 * and unplaced buffers within it lying end to end? Memoised in @reach (@yes,
 * @no) across the calls of one count; a depth-first search from @t that
 * ends as soon as the end is reached, on an explicit stack (@dfs: step
 * and iterator per level; the row is a DAG, time only moves on).
 */
static int solve_follows(struct solver *s, int side, uint32_t l, uint32_t r, uint32_t t,
			 uint32_t yes, uint32_t no)
{
	uint32_t *st = s->dfs, *it = s->dfs + s->steps + 1, d = 0, u, i, head;
	const uint32_t *nxt = s->nxt[side];
	uint32_t *reach = s->reach;

	if (reach[t] == yes || reach[t] == no)
		return reach[t] == yes;
	st[0] = t;
	it[0] = SOLVE_NONE;
	for (;;) {
		t = st[d];
		head = s->m + (side ? t - 1 : t);
		/* First the cell beside it, if it may stay empty. */
		if (it[d] == SOLVE_NONE) {
			it[d] = head;
			u = side ? t - 1 : t + 1;
			if (solve_slack(s, side ? t - 1 : t) && reach[u] != no)
				goto down;
		}
		/* Then the buffers from it: longest first, within the row. */
		for (;;) {
			i = nxt[it[d]];
			if (i == head)
				break;
			it[d] = i;
			if (side ? s->b[i].lo < l : s->b[i].hi > r)
				continue;
			u = side ? s->b[i].lo : s->b[i].hi;
			if (reach[u] != no)
				goto down;
		}
		/* None: no way on from @t. */
		reach[t] = no;
		if (!d)
			return 0;
		d--;
		continue;
down:
		if (reach[u] == yes) {
			/* The end reached: so is every step on the stack. */
			for (;; d--) {
				reach[st[d]] = yes;
				if (!d)
					return 1;
			}
		}
		d++;
		st[d] = u;
		it[d] = SOLVE_NONE;
	}
}

/*
 * As solve_count(), counting only the candidates that the rest of the row
 * [@l, @r) can follow (or precede, @side 1): unplaced buffers within it
 * lying end to end. Only what the candidates' ends reach is searched.
 */
static uint32_t solve_count_chain(struct solver *s, int side, uint32_t l, uint32_t r,
				  uint32_t cap)
{
	uint32_t yes = solve_stamp(s), no = solve_stamp(s), head, i, k = 0;
	const uint32_t *prv = s->prv[side];

	s->reach[side ? l : r] = yes;
	head = s->m + (side ? r - 1 : l);
	for (i = prv[head]; i != head && k < cap; i = prv[i]) {
		if (side ? s->b[i].lo < l : s->b[i].hi > r)
			break;
		k += solve_follows(s, side, l, r, side ? s->b[i].lo : s->b[i].hi, yes, no);
	}
	return k;
}

/*
 * Where no byte is to spare, any valley (a run of steps between higher
 * floors) may be filled next, not only the lowest: frame @f gets the one
 * with the fewest candidates at its first step (first fail).
 */
void solve_valley(struct solver *s, struct solve_frame *f)
{
	uint32_t l, r, k, best = solve_count(s, 0, f->a, f->b, UINT32_MAX);
	uint64_t *v = s->vals, y;
	int side;

	if (best <= 1 || s->target >= SOLVE_INF)
		return;
	solve_kvals(s);
	if (solve_slack(s, f->a)) {
		/* Its first cell may stay empty: another valley if dead or forced. */
		best = 2;
	} else {
		best = solve_count_chain(s, 0, f->a, f->b, best);
		k = solve_slack(s, f->b - 1) ? best : solve_count(s, 1, f->a, f->b, best);
		if (k < best)
			k = solve_count_chain(s, 1, f->a, f->b, best);
		if (k < best) {
			best = k;
			f->side = 1;
		}
	}
	for (l = 0; l < s->steps; l = r) {
		y = v[l];
		r = solve_edge_next(s, l + 1);
		if ((l && v[l - 1] < y) || (r < s->steps && v[r] < y) || y >= s->target ||
		    l == f->a)
			continue;
		for (side = 0; side < 2 && best > 1; side++) {
			/* The cell the valley is filled from must be covered. */
			if (solve_slack(s, side ? r - 1 : l))
				continue;
			k = solve_count(s, side, l, r, best);
			if (k >= best)
				continue;
			k = solve_count_chain(s, side, l, r, best);
			if (k >= best)
				continue;
			best = k;
			f->a = l;
			f->b = r;
			f->y0 = y;
			f->side = side;
		}
		if (best <= 1)
			break;
	}
}

/*
 * At the lower bound, frame @f may fill the leftmost valley below the
 * target instead (a sweep through time): a dead end then shows near the
 * choices that made it. Any valley is a complete branch point.
 */
void solve_sweep(const struct solver *s, struct solve_frame *f)
{
	const uint64_t *v = s->vals;
	uint32_t l, r;

	for (l = 0; l < s->steps; l = r) {
		r = solve_edge_next(s, l + 1);
		if ((l && v[l - 1] < v[l]) || (r < s->steps && v[r] < v[l]) ||
		    v[l] >= s->target)
			continue;
		f->y0 = v[l];
		f->a = l;
		f->b = r;
		return;
	}
}

/*
 * The edge bits of the block of SOLVE_BLOCK steps from step @lo (a block
 * lies within one word of them), bit j for step @lo + j, but for its
 * first step.
 */
static uint64_t solve_block_edges(const struct solver *s, uint32_t lo)
{
	uint32_t n = solve_min(SOLVE_BLOCK, s->steps - lo);

	return s->edge[lo / 64] >> (lo % 64) & (~0ULL >> (64 - n)) & ~1ULL;
}

/*
 * The lowest floor of block @k: that of its first step and of the steps
 * within it where a run of equal floors begins (the floor changes only
 * at an edge), a few reads where a scan of the block took SOLVE_BLOCK.
 */
static uint64_t solve_block_min(const struct solver *s, uint32_t k)
{
	const uint64_t *v = s->vals + k * SOLVE_BLOCK;
	uint64_t m = v[0], x;

	for (x = solve_block_edges(s, k * SOLVE_BLOCK); x; x &= x - 1)
		m = solve_min(m, v[__builtin_ctzll(x)]);
	return m;
}

/*
 * The lowest segment: from the tree over the floors on long traces, else
 * by a scan of them (cheaper than keeping the tree).
 */
void solve_lowest(struct solver *s, struct solve_frame *f)
{
	const uint64_t *v = s->vals;
	uint32_t t, a, k = 0;

	if (s->floor.n) {
		f->y0 = s->floor.n[1].mn;
		f->a = tree_argmin(&s->floor);
		f->b = tree_above(&s->floor, f->a, f->y0);
		return;
	}
	/* The leftmost block holding the minimum holds its leftmost step. */
	for (t = 0; t * SOLVE_BLOCK < s->steps; t++) {
		if (s->bmin[t] == UINT64_MAX)
			s->bmin[t] = solve_block_min(s, t);
		if (s->bmin[t] < s->bmin[k])
			k = t;
	}
	a = k * SOLVE_BLOCK;
	if (v[a] != s->bmin[k]) {
		/* Not its first step: the first edge in it at that floor. */
		uint64_t x = solve_block_edges(s, a);

		while (v[a + __builtin_ctzll(x)] != s->bmin[k])
			x &= x - 1;
		a += __builtin_ctzll(x);
	}
	t = solve_edge_next(s, a + 1);
	f->y0 = v[a];
	f->a = a;
	f->b = t;
}

/*
 * Above the lower bound, with bytes to spare: fill the valley beside what
 * frame @up just did (on it, left or right of it), the lowest of them, not
 * the lowest segment anywhere. Any valley is a complete branch point (see
 * the top of this file), and this one keeps the search in one part of
 * time until it is closed: filling the lowest segment first interleaves
 * independent parts, and a dead end in one was searched again under every
 * choice made meanwhile in the others.
 */
void solve_focus(struct solver *s, struct solve_frame *f, const struct solve_frame *up)
{
	uint32_t lo = up->a, hi = up->b, t[3], k, l, r, a = 0, b = 0;
	uint64_t y = UINT64_MAX;

	if (s->target <= s->lb)
		return;
	solve_kvals(s);
	if (!s->spare)
		return;
	if (up->cur != SOLVE_NONE) {
		lo = s->b[up->cur].lo;
		hi = s->b[up->cur].hi;
	}
	t[0] = lo;
	t[1] = lo ? lo - 1 : lo;
	t[2] = hi < s->steps ? hi : lo;
	for (k = 0; k < 3; k++) {
		if (!solve_run(s, t[k], &l, &r))
			continue;
		if (s->vals[l] < y || (s->vals[l] == y && l < a)) {
			y = s->vals[l];
			a = l;
			b = r;
		}
	}
	if (y != UINT64_MAX) {
		f->y0 = y;
		f->a = a;
		f->b = b;
	}
}
