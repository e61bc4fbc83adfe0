// SPDX-License-Identifier: GPL-2.0
/*
 * svod_plan_solve(): an exact-leaning arena planner for userspace, after
 * MiniMalloc (Moffitt, "MiniMalloc: A Lightweight Memory Allocator for
 * Hardware-Accelerated Machine Learning", ASPLOS 2023).
 *
 * A plan is searched in canonical form: buffers are placed in order of
 * nondecreasing offset, each at the lowest offset x where some unplaced
 * buffer can go (the highest end among the placed buffers it shares time
 * with, aligned). Every packing can be pushed down into such a form without
 * raising its peak. The search is a series of decision searches "a plan
 * with peak <= C?": C = the most occupied bytes live in one slot first (80%
 * of the budget: the optimum of most instances), then bisection between
 * the last failure and the best plan. At each node the candidates are the
 * buffers whose lowest offset is x; pruning:
 *
 * - lower bound: a time slot whose unplaced bytes do not fit between
 *   max(x, its skyline) and C ends the branch, and so does an unplaced
 *   buffer whose lowest offset plus size exceeds C;
 * - infeasible offsets: a tight slot (no byte to spare) must be filled from
 *   its floor: the branch ends if no unplaced buffer can still sit there,
 *   and at x only the buffers covering the tight slot with the fewest such
 *   candidates are tried (else the best time coverage first, then longest
 *   lifetime first);
 * - dominance: a candidate tried at x and abandoned may not be placed at x
 *   later in that subtree (only above a buffer placed after it), and a
 *   candidate identical in lifetime, size and alignment to the one just
 *   tried is skipped: both would lead to the same packings;
 * - early exit: the search stops when the best peak meets the lower bound,
 *   when a search completes, or when the time budget runs out.
 *
 * The first plan is a greedy dive with no target ("fill the lowest
 * valley"), kept if better than the caller's plan (the kernel heuristic's).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libsvod.h"

#define SOLVE_NONE	UINT32_MAX
/* Conflicting pairs beyond this are refused (-E2BIG): memory. */
#define SOLVE_MAX_PAIRS	(64u << 20)

/**
 * struct solve_buf - one buffer
 * @size: bytes it occupies: max(size, block_size)
 * @align: alignment, >= 1
 * @event: its ALLOC event
 * @lo: first time slot (its rank among the ALLOCs)
 * @hi: one past its last slot: it meets buffer j > self iff j < @hi
 */
struct solve_buf {
	uint64_t size;
	uint64_t align;
	uint32_t event;
	uint32_t lo;
	uint32_t hi;
};

/**
 * struct solve_trail - one undo record
 * @p: the value changed
 * @old: its old value
 */
struct solve_trail {
	uint64_t *p;
	uint64_t old;
};

/**
 * struct solver - search state
 * @b: buffers, @m of them, in ALLOC order
 * @prio: buffer indices, longest lifetime first, then largest
 * @back: CSR lists of the earlier buffers meeting each buffer (@back_at)
 * @end: per buffer, highest end of the placed buffers it meets
 * @minoff: per buffer, the lowest offset it may still take (dominance)
 * @off: per buffer, its offset, or UINT64_MAX while unplaced
 * @sky: per slot, highest end of the placed buffers live in it
 * @rem: per slot, bytes of the unplaced buffers live in it
 * @trail: undo records, @nr_trail used
 * @best: best plan so far (offset per buffer), @best_peak its peak
 * @target: peaks above this are pruned (@best_peak - 1)
 * @lb: the lower bound the search stops at
 * @cand: scratch: the candidates of one node, @dp their best coverage
 *	(or how many cover each slot)
 * @low: scratch: per slot, the lowest floor of an unplaced buffer there
 * @nodes: nodes visited
 * @deadline: CLOCK_MONOTONIC seconds
 * @node_limit: this search stops (as on time out) at this many nodes
 * @stop: end this search: a plan found or time out
 * @found: this search found a plan within @target
 * @timeout: this search ran out of time
 */
struct solver {
	struct solve_buf *b;
	uint32_t m;
	uint32_t *prio;
	uint32_t *back;
	uint64_t *back_at;
	uint64_t *end;
	uint64_t *minoff;
	uint64_t *off;
	uint64_t *sky;
	uint64_t *rem;
	struct solve_trail *trail;
	size_t nr_trail;
	size_t cap_trail;
	uint64_t *best;
	uint64_t best_peak;
	uint64_t target;
	uint64_t lb;
	uint32_t *cand;
	uint64_t *dp;
	uint64_t *low;
	uint64_t nodes;
	double deadline;
	uint64_t node_limit;
	int stop;
	int found;
	int timeout;
};

static double solve_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t solve_round_up(uint64_t v, uint64_t align)
{
	uint64_t r = v % align;

	if (!r)
		return v;
	return v > UINT64_MAX - (align - r) ? UINT64_MAX : v + (align - r);
}

static uint64_t solve_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static int solve_set(struct solver *s, uint64_t *p, uint64_t v)
{
	if (s->nr_trail == s->cap_trail) {
		size_t cap = s->cap_trail ? 2 * s->cap_trail : 4096;
		void *t = realloc(s->trail, cap * sizeof(*s->trail));

		if (!t)
			return -ENOMEM;
		s->trail = t;
		s->cap_trail = cap;
	}
	s->trail[s->nr_trail++] = (struct solve_trail){ p, *p };
	*p = v;
	return 0;
}

static void solve_undo(struct solver *s, size_t mark)
{
	while (s->nr_trail > mark) {
		s->nr_trail--;
		*s->trail[s->nr_trail].p = s->trail[s->nr_trail].old;
	}
}

/* Place buffer @i at @x: raise the buffers it meets, the skyline, the rest. */
static int solve_place(struct solver *s, uint32_t i, uint64_t x)
{
	const struct solve_buf *b = &s->b[i];
	uint64_t top = solve_add(x, b->size), k;
	int err = solve_set(s, &s->off[i], x);
	uint32_t j, t;

	for (j = i + 1; j < b->hi && !err; j++)
		if (s->off[j] == UINT64_MAX && s->end[j] < top)
			err = solve_set(s, &s->end[j], top);
	for (k = s->back_at[i]; k < s->back_at[i + 1] && !err; k++) {
		j = s->back[k];
		if (s->off[j] == UINT64_MAX && s->end[j] < top)
			err = solve_set(s, &s->end[j], top);
	}
	for (t = b->lo; t < b->hi && !err; t++) {
		err = solve_set(s, &s->sky[t], top);
		if (!err)
			err = solve_set(s, &s->rem[t], s->rem[t] - b->size);
	}
	return err;
}

/* The lowest offset buffer @i may take now, or UINT64_MAX. */
static uint64_t solve_lowest(const struct solver *s, uint32_t i)
{
	uint64_t d = solve_round_up(s->end[i], s->b[i].align);

	return d >= s->minoff[i] ? d : UINT64_MAX;
}

/*
 * Every slot's unplaced bytes fit between max(x, skyline) and the target.
 * *@tight gets the slot at or below x with no room to spare (a buffer live
 * there must start exactly at x) that the fewest candidates can fill, or
 * SOLVE_NONE if no slot is tight. 0 when some slot cannot be filled.
 */
static int solve_fits(struct solver *s, uint64_t x, uint32_t *tight)
{
	uint32_t t, i, best = UINT32_MAX;
	int64_t cover = 0;

	*tight = SOLVE_NONE;
	memset(s->dp, 0, (s->m + 1) * sizeof(*s->dp));
	for (t = 0; t < s->m; t++)
		s->low[t] = UINT64_MAX;
	for (i = 0; i < s->m; i++) {
		uint64_t d;

		if (s->off[i] != UINT64_MAX)
			continue;
		d = solve_round_up(s->end[i], s->b[i].align);
		for (t = s->b[i].lo; t < s->b[i].hi; t++)
			if (d < s->low[t])
				s->low[t] = d;
		if (solve_lowest(s, i) != x)
			continue;
		s->dp[s->b[i].lo]++;
		s->dp[s->b[i].hi]--;
	}
	for (t = 0; t < s->m; t++) {
		uint64_t floor = s->sky[t] > x ? s->sky[t] : x;

		cover += (int64_t)s->dp[t];
		if (s->rem[t] > s->target || floor > s->target - s->rem[t])
			return 0;
		/* Tight: the lowest buffer that can still sit here must fit. */
		if (s->rem[t] && floor == s->target - s->rem[t] && s->low[t] > floor)
			return 0;
		if (s->rem[t] && s->sky[t] <= x && floor == s->target - s->rem[t] &&
		    (uint64_t)cover < best) {
			if (!cover)
				return 0;
			best = (uint32_t)cover;
			*tight = t;
		}
	}
	return 1;
}

/* A complete plan within the target: keep it if best, end this search. */
static void solve_record(struct solver *s)
{
	uint64_t peak = 0;
	uint32_t i;

	for (i = 0; i < s->m; i++)
		if (solve_add(s->off[i], s->b[i].size) > peak)
			peak = solve_add(s->off[i], s->b[i].size);
	if (peak < s->best_peak) {
		memcpy(s->best, s->off, s->m * sizeof(*s->best));
		s->best_peak = peak;
	}
	s->found = 1;
	s->stop = 1;
}

static int solve_dfs(struct solver *s, uint32_t placed);

/* qsort has no context argument: the solver being sorted for. */
static const struct solver *solve_sort_ctx;

static int solve_hi_cmp(const void *a, const void *b)
{
	const struct solve_buf *x = &solve_sort_ctx->b[*(const uint32_t *)a];
	const struct solve_buf *y = &solve_sort_ctx->b[*(const uint32_t *)b];

	if (x->hi != y->hi)
		return x->hi < y->hi ? -1 : 1;
	return x->lo > y->lo ? -1 : x->lo < y->lo;
}

/*
 * The candidate to try first at @x: of the sets of candidates that can all
 * sit at x side by side in time, the one covering the most time slots
 * (weighted interval scheduling), its earliest member. A perfect packing
 * fills the lowest valley exactly, so this is the tiling's likely choice.
 */
static uint32_t solve_first(struct solver *s, uint64_t x)
{
	uint32_t k = 0, i, lo, hi, pick = SOLVE_NONE;

	for (i = 0; i < s->m; i++)
		if (s->off[i] == UINT64_MAX && solve_lowest(s, i) == x &&
		    solve_add(x, s->b[i].size) <= s->target)
			s->cand[k++] = i;
	if (!k)
		return SOLVE_NONE;
	solve_sort_ctx = s;
	qsort(s->cand, k, sizeof(*s->cand), solve_hi_cmp);
	for (i = 0; i < k; i++) {
		const struct solve_buf *b = &s->b[s->cand[i]];

		for (lo = 0, hi = i; lo < hi;) {
			uint32_t mid = lo + (hi - lo) / 2;

			if (s->b[s->cand[mid]].hi <= b->lo)
				lo = mid + 1;
			else
				hi = mid;
		}
		s->dp[i + 1] = (lo ? s->dp[lo] : 0) + (b->hi - b->lo);
		if (i && s->dp[i] > s->dp[i + 1])
			s->dp[i + 1] = s->dp[i];
	}
	/* Walk the optimum back; its last member visited is the earliest. */
	for (i = k; i > 0;) {
		const struct solve_buf *b = &s->b[s->cand[i - 1]];

		if (i > 1 && s->dp[i] == s->dp[i - 1]) {
			i--;
			continue;
		}
		pick = s->cand[i - 1];
		for (lo = 0, hi = i - 1; lo < hi;) {
			uint32_t mid = lo + (hi - lo) / 2;

			if (s->b[s->cand[mid]].hi <= b->lo)
				lo = mid + 1;
			else
				hi = mid;
		}
		i = lo;
	}
	return pick;
}

/* Branch over the candidates at @x, in priority order. */
static int solve_branch(struct solver *s, uint32_t placed, uint64_t x, uint32_t tight)
{
	const struct solve_buf *last = NULL;
	uint32_t k, i, first = tight == SOLVE_NONE ? solve_first(s, x) : SOLVE_NONE;
	size_t mark = s->nr_trail;
	int err;

	for (k = 0; k <= s->m && !s->stop; k++) {
		i = k ? s->prio[k - 1] : first;
		if (i == SOLVE_NONE || (k && i == first))
			continue;
		if (s->off[i] != UINT64_MAX || solve_lowest(s, i) != x)
			continue;
		/* A tight slot: only the buffers that can fill it from x. */
		if (tight != SOLVE_NONE && (s->b[i].lo > tight || s->b[i].hi <= tight))
			continue;
		if (solve_add(x, s->b[i].size) > s->target)
			continue;
		if (last && last->size == s->b[i].size && last->align == s->b[i].align &&
		    last->hi - last->lo == s->b[i].hi - s->b[i].lo && last->lo == s->b[i].lo)
			continue;
		err = solve_place(s, i, x);
		if (!err)
			err = solve_dfs(s, placed + 1);
		if (err)
			return err;
		solve_undo(s, mark);
		/* Dominance: abandoned at x, it may only go higher now. */
		if (x == UINT64_MAX)
			break;
		err = solve_set(s, &s->minoff[i], x + 1);
		if (err)
			return err;
		mark = s->nr_trail;
		last = &s->b[i];
	}
	return 0;
}

static int solve_dfs(struct solver *s, uint32_t placed)
{
	size_t mark = s->nr_trail;
	uint64_t x = UINT64_MAX, d;
	uint32_t i, tight;
	int err;

	if (s->stop)
		return 0;
	if (placed == s->m) {
		solve_record(s);
		return 0;
	}
	if (++s->nodes > s->node_limit ||
	    (!(s->nodes & 15) && solve_now() > s->deadline)) {
		s->stop = 1;
		s->timeout = 1;
		return 0;
	}
	for (i = 0; i < s->m; i++) {
		if (s->off[i] != UINT64_MAX)
			continue;
		/* Infeasible offsets: no room left above this one's floor. */
		d = solve_round_up(s->end[i] > s->minoff[i] ? s->end[i] : s->minoff[i],
				   s->b[i].align);
		if (solve_add(d, s->b[i].size) > s->target)
			return 0;
		d = solve_lowest(s, i);
		if (d < x)
			x = d;
	}
	if (x == UINT64_MAX || !solve_fits(s, x, &tight))
		return 0;
	err = solve_branch(s, placed, x, tight);
	solve_undo(s, mark);
	return err;
}

/* Pair every FREE with its ALLOC (as the kernel planner checks them). */
static int solve_pair(const struct svod_plan_event *ev, uint32_t n, uint32_t *last,
		      uint32_t *failed)
{
	size_t cap = 16, mask, h;
	uint32_t *slot_id, *slot_ev, i;
	int err = 0;

	while (cap < 2 * (size_t)n)
		cap <<= 1;
	mask = cap - 1;
	slot_id = calloc(cap, sizeof(*slot_id));
	slot_ev = malloc(cap * sizeof(*slot_ev));
	if (!slot_id || !slot_ev) {
		err = -ENOMEM;
		goto out;
	}
	memset(slot_ev, 0xff, cap * sizeof(*slot_ev));
	for (i = 0; i < n && !err; i++) {
		const struct svod_plan_event *e = &ev[i];

		h = (e->id * 0x9E3779B97F4A7C15ULL) >> 40 & mask;
		while (slot_ev[h] != SOLVE_NONE && slot_id[h] != e->id)
			h = (h + 1) & mask;
		/* slot_ev: the live ALLOC, or SOLVE_NONE - 1 once freed. */
		if (e->op == SVOD_PLAN_ALLOC && slot_ev[h] >= SOLVE_NONE - 1) {
			slot_id[h] = e->id;
			slot_ev[h] = i;
			last[i] = n;
		} else if (e->op == SVOD_PLAN_FREE && !e->size && !e->align &&
			   slot_ev[h] < SOLVE_NONE - 1) {
			last[slot_ev[h]] = i;
			slot_ev[h] = SOLVE_NONE - 1;
		} else {
			*failed = i;
			err = -EINVAL;
		}
	}
out:
	free(slot_id);
	free(slot_ev);
	return err;
}

static void solve_free(struct solver *s)
{
	free(s->b);
	free(s->prio);
	free(s->back);
	free(s->back_at);
	free(s->end);
	free(s->minoff);
	free(s->off);
	free(s->sky);
	free(s->rem);
	free(s->trail);
	free(s->best);
	free(s->cand);
	free(s->dp);
	free(s->low);
}

static int solve_prio_cmp(const void *a, const void *b)
{
	const struct solve_buf *x = &solve_sort_ctx->b[*(const uint32_t *)a];
	const struct solve_buf *y = &solve_sort_ctx->b[*(const uint32_t *)b];

	if (x->hi - x->lo != y->hi - y->lo)
		return x->hi - x->lo > y->hi - y->lo ? -1 : 1;
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	if (x->align != y->align)
		return x->align > y->align ? -1 : 1;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Buffers, slots, lower bound; @last from solve_pair(). */
static int solve_init(struct solver *s, const struct svod_plan_event *ev, uint32_t n,
		      const uint32_t *last, uint64_t block_size)
{
	uint64_t pairs = 0;
	uint32_t i, j, k = 0, lo, hi;

	for (i = 0; i < n; i++)
		s->m += ev[i].op == SVOD_PLAN_ALLOC;
	s->b = calloc(s->m + 1, sizeof(*s->b));
	if (!s->b)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (ev[i].op == SVOD_PLAN_FREE)
			continue;
		s->b[k] = (struct solve_buf){
			.size = ev[i].size > block_size ? ev[i].size : block_size,
			.align = ev[i].align > 1 ? ev[i].align : 1,
			.event = i, .lo = k,
		};
		k++;
	}
	for (i = 0; i < s->m; i++) {
		for (lo = i + 1, hi = s->m; lo < hi;) {
			uint32_t mid = lo + (hi - lo) / 2;

			if (s->b[mid].event < last[s->b[i].event])
				lo = mid + 1;
			else
				hi = mid;
		}
		s->b[i].hi = lo;
		pairs += lo - i - 1;
	}
	if (pairs > SOLVE_MAX_PAIRS)
		return -E2BIG;
	s->prio = malloc((s->m + 1) * sizeof(*s->prio));
	s->back = malloc((pairs + 1) * sizeof(*s->back));
	s->back_at = calloc(s->m + 2, sizeof(*s->back_at));
	s->end = calloc(s->m + 1, sizeof(*s->end));
	s->minoff = calloc(s->m + 1, sizeof(*s->minoff));
	s->off = malloc((s->m + 1) * sizeof(*s->off));
	s->sky = calloc(s->m + 1, sizeof(*s->sky));
	s->rem = calloc(s->m + 1, sizeof(*s->rem));
	s->best = malloc((s->m + 1) * sizeof(*s->best));
	s->cand = malloc((s->m + 1) * sizeof(*s->cand));
	s->dp = calloc(s->m + 2, sizeof(*s->dp));
	s->low = calloc(s->m + 1, sizeof(*s->low));
	if (!s->low || !s->cand || !s->dp || !s->prio || !s->back || !s->back_at || !s->end || !s->minoff || !s->off ||
	    !s->sky || !s->rem || !s->best)
		return -ENOMEM;
	/* back lists: j < i meets i iff i < b[j].hi; count, prefix, fill. */
	for (j = 0; j < s->m; j++)
		for (i = j + 1; i < s->b[j].hi; i++)
			s->back_at[i + 1]++;
	for (i = 0; i < s->m; i++)
		s->back_at[i + 1] += s->back_at[i];
	for (j = s->m; j-- > 0;)
		for (i = j + 1; i < s->b[j].hi; i++)
			s->back[s->back_at[i + 1] - 1 - s->end[i]++] = j;
	memset(s->end, 0, (s->m + 1) * sizeof(*s->end));
	for (i = 0; i < s->m; i++) {
		s->prio[i] = i;
		s->off[i] = UINT64_MAX;
		for (j = s->b[i].lo; j < s->b[i].hi; j++)
			s->rem[j] = solve_add(s->rem[j], s->b[i].size);
	}
	solve_sort_ctx = s;
	qsort(s->prio, s->m, sizeof(*s->prio), solve_prio_cmp);
	return 0;
}

/* Largest sum of requested live bytes, saturating (the kernel's bound). */
static uint64_t solve_lower_bound(const struct svod_plan_event *ev, uint32_t n,
				  const uint32_t *last)
{
	uint64_t *gone = calloc((size_t)n + 1, sizeof(*gone)), live = 0, lb = 0;
	int saturated = 0;
	uint32_t i;

	if (!gone)
		return 0;
	for (i = 0; i < n; i++) {
		if (ev[i].op != SVOD_PLAN_ALLOC) {
			live -= gone[i];
			continue;
		}
		gone[last[i]] = ev[i].size;
		if (live > UINT64_MAX - ev[i].size)
			saturated = 1;
		live += ev[i].size;
		if (saturated)
			lb = UINT64_MAX;
		else if (live > lb)
			lb = live;
	}
	free(gone);
	return lb;
}

/* Seed the incumbent with the caller's plan if it is valid. */
static void solve_hint(struct solver *s, const uint64_t *hint)
{
	uint64_t peak = 0, e;
	uint32_t i, j;

	for (i = 0; i < s->m; i++) {
		uint64_t o = hint[s->b[i].event];

		if (o == UINT64_MAX || o % s->b[i].align)
			return;
		e = solve_add(o, s->b[i].size);
		for (j = i + 1; j < s->b[i].hi; j++) {
			uint64_t p = hint[s->b[j].event];

			if (p < e && o < solve_add(p, s->b[j].size))
				return;
		}
		if (e > peak)
			peak = e;
	}
	if (peak < s->best_peak) {
		for (i = 0; i < s->m; i++)
			s->best[i] = hint[s->b[i].event];
		s->best_peak = peak;
		s->target = peak ? peak - 1 : 0;
	}
}

/*
 * One decision search: a plan with peak <= @target before @deadline?
 * Return: 1 found, 0 none exists (the search completed), -1 time out, or a
 * negative errno below -1.
 */
static int solve_try(struct solver *s, uint64_t target, double deadline, uint64_t nodes)
{
	int err;

	s->node_limit = nodes > UINT64_MAX - s->nodes ? UINT64_MAX : s->nodes + nodes;
	s->target = target;
	s->deadline = deadline;
	s->stop = 0;
	s->found = 0;
	s->timeout = 0;
	err = solve_dfs(s, 0);
	if (err)
		return err;
	return s->found ? 1 : s->timeout ? -1 : 0;
}

/*
 * Decision searches from the lowest target (the most bytes live in one
 * slot) up: the lowest first with half the time left, then bisection
 * between what failed and the best found. Return: 1 if the best is proven
 * optimal, 0 if not, or a negative errno.
 */
static int solve_search(struct solver *s, double seconds)
{
	double end = solve_now() + seconds, left;
	uint64_t lo = 0, lo0, c;
	int r, proven = 1;
	uint32_t t;

	for (t = 0; t < s->m; t++)
		lo = s->rem[t] > lo ? s->rem[t] : lo;
	lo0 = lo;
	if (lo < s->best_peak) {
		/* The first dive (no target) always completes: a greedy plan. */
		r = solve_try(s, UINT64_MAX - 1, 1e300, UINT64_MAX);
		if (r < -1)
			return r;
	}
	for (c = lo; lo < s->best_peak; c = lo + (s->best_peak - 1 - lo) / 2) {
		left = end - solve_now();
		if (left <= 0) {
			proven = 0;
			break;
		}
		/* Most of the time for the lower bound, the optimum of most. */
		r = solve_try(s, c, solve_now() + (c == lo0 ? left * 0.8 : left / 2),
			      UINT64_MAX);
		if (r < -1)
			return r;
		if (r == 1)
			continue;
		proven &= r == 0;
		lo = c + 1;
	}
	return proven;
}

/**
 * svod_plan_solve() - search for a plan with the lowest peak
 * @ev: @n events, as for SVOD_IOCTL_PLAN
 * @n: number of events
 * @p: block size, arena size, time budget
 * @hint: a plan of the same events to start from (offsets per event, e.g.
 *	the kernel heuristic's), or NULL; ignored unless valid
 * @offsets: out: @n offsets, SVOD_PLAN_NO_OFFSET for FREE events
 * @res: out: peak, lower bound, nodes, failing event, optimality
 *
 * Branch and bound (see the top of this file) until the peak meets the
 * lower bound, the search space is exhausted or @p->seconds have passed.
 *
 * Context: any thread; allocates memory (O(n + conflicting pairs)).
 * Return: 0; -EINVAL for a bad parameter or a malformed event
 * (@res->failed_event says which); -ENOSPC if the best plan does not fit
 * the arena; -E2BIG for more than 64M pairs of buffers live at once;
 * -ENOMEM.
 */
int svod_plan_solve(const struct svod_plan_event *ev, uint32_t n,
		    const struct svod_solve_params *p, const uint64_t *hint,
		    uint64_t *offsets, struct svod_solve_result *res)
{
	struct solver s = { .best_peak = UINT64_MAX, .target = UINT64_MAX };
	uint32_t *last = NULL, i;
	int err;

	*res = (struct svod_solve_result){ .failed_event = UINT32_MAX };
	for (i = 0; i < n; i++)
		offsets[i] = SVOD_PLAN_NO_OFFSET;
	if (!p->block_size || !p->arena_size || !(p->seconds >= 0))
		return -EINVAL;
	last = malloc(((size_t)n + 1) * sizeof(*last));
	if (!last)
		return -ENOMEM;
	err = solve_pair(ev, n, last, &res->failed_event);
	if (!err)
		err = solve_init(&s, ev, n, last, p->block_size);
	if (err)
		goto out;
	res->lower_bound = s.lb = solve_lower_bound(ev, n, last);
	if (hint)
		solve_hint(&s, hint);
	if (s.m) {
		err = solve_search(&s, p->seconds);
		if (err < 0)
			goto out;
		res->optimal = err;
		err = 0;
	} else {
		res->optimal = 1;
		s.best_peak = 0;
	}
	res->nodes = s.nodes;
	res->peak = s.best_peak;
	for (i = 0; i < s.m; i++)
		offsets[s.b[i].event] = s.best[i];
	if (res->peak > p->arena_size)
		err = -ENOSPC;
out:
	free(last);
	solve_free(&s);
	return err;
}
