// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * A time segment's solver (struct solver): its buffers and time steps
 * (solve_init()), the candidate lists in both directions of time
 * (solve_lists(), solve_reverse()), the search's arrays and the table of
 * proven states (solve_alloc()), and their release (solve_free()).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "solve_internal.h"

void solve_free(struct solver *s)
{
	int i;

	free(s->b);
	free(s->nxt[0]);
	free(s->prv[0]);
	free(s->nxt[1]);
	free(s->prv[1]);
	for (i = 0; i < 4; i++)
		free(s->order[i / 2][i % 2]);
	free(s->off);
	free(s->best);
	free(s->stack);
	free(s->path);
	free(s->up.f);
	free(s->up_kept.f);
	free(s->reach);
	free(s->dfs);
	free(s->part);
	free(s->vals);
	free(s->bmin);
	free(s->edge);
	free(s->cover);
	free(s->kvals);
	free(s->zkey);
	free(s->rpre);
	free(s->tt);
	tree_free(&s->floor);
}

/* qsort has no context argument: the solver being sorted for (per thread). */
__thread const struct solver *solve_sort_ctx;

/* Candidate order: by first step, then longest lifetime, largest first. */
static int solve_cand_cmp(const void *pa, const void *pb)
{
	uint32_t i = *(const uint32_t *)pa, j = *(const uint32_t *)pb;
	const struct solve_buf *x = &solve_sort_ctx->b[i];
	const struct solve_buf *y = &solve_sort_ctx->b[j];

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->hi != y->hi)
		return x->hi > y->hi ? -1 : 1;
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	if (x->align != y->align)
		return x->align > y->align ? -1 : 1;
	return i < j ? -1 : i > j;
}

/* Side 1 order: by last step, then longest lifetime, largest first. */
static int solve_end_cmp(const void *pa, const void *pb)
{
	uint32_t i = *(const uint32_t *)pa, j = *(const uint32_t *)pb;
	const struct solve_buf *x = &solve_sort_ctx->b[i];
	const struct solve_buf *y = &solve_sort_ctx->b[j];

	if (x->hi != y->hi)
		return x->hi < y->hi ? -1 : 1;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	if (x->align != y->align)
		return x->align > y->align ? -1 : 1;
	return i < j ? -1 : i > j;
}

/*
 * The candidate lists: side 0 per first step, in solve_cand_cmp() order;
 * side 1 per last step, in solve_end_cmp() order. Each order is sorted
 * once per direction of time and kept: restarts turn time around often,
 * and on 5000 buffers sorting again each time cost a tenth of the search
 * (the same search, 4.2 s -> 3.8 s for two million nodes).
 */
static int solve_lists(struct solver *s)
{
	uint32_t i, t, *nxt, *prv, *order;
	int side;

	solve_sort_ctx = s;
	for (side = 0; side < 2; side++) {
		nxt = s->nxt[side];
		prv = s->prv[side];
		order = s->order[s->reversed][side];
		if (!order) {
			order = malloc(((size_t)s->m + 1) * sizeof(*order));
			if (!order)
				return -ENOMEM;
			for (i = 0; i < s->m; i++)
				order[i] = i;
			qsort(order, s->m, sizeof(*order), side ? solve_end_cmp : solve_cand_cmp);
			s->order[s->reversed][side] = order;
		}
		for (t = 0; t < s->steps; t++)
			nxt[s->m + t] = prv[s->m + t] = s->m + t;
		for (i = 0; i < s->m; i++) {
			const struct solve_buf *b = &s->b[order[i]];
			uint32_t head = s->m + (side ? b->hi - 1 : b->lo), k = order[i];

			prv[k] = prv[head];
			nxt[k] = head;
			nxt[prv[head]] = k;
			prv[head] = k;
		}
	}
	return 0;
}

/*
 * Buffers and time steps: a step is a run of ALLOCs with no FREE between;
 * buffer b lives over steps [lo, hi): lo its run, hi the runs begun before
 * its FREE. Two buffers meet in the events iff their steps meet. @last
 * from solve_pair(); *@bytes gets the sum of the padded sizes (saturated).
 */
int solve_init(struct solver *s, const struct svod_plan_event *ev, uint32_t n,
	       const uint32_t *last, uint64_t block_size, uint64_t *bytes)
{
	uint32_t *runs = malloc(((size_t)n + 1) * sizeof(*runs)), i, k = 0, lo, hi;
	uint64_t pairs = 0;

	if (!runs)
		return -ENOMEM;
	*bytes = 0;
	for (i = 0; i < n; i++) {
		if (ev[i].op == SVOD_PLAN_ALLOC && (!i || ev[i - 1].op != SVOD_PLAN_ALLOC))
			s->steps++;
		runs[i] = s->steps;
		s->m += ev[i].op == SVOD_PLAN_ALLOC;
	}
	runs[n] = s->steps;
	s->b = calloc((size_t)s->m + 1, sizeof(*s->b));
	if (!s->b) {
		free(runs);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		if (ev[i].op == SVOD_PLAN_FREE)
			continue;
		s->b[k] = (struct solve_buf){
			.size = ev[i].size > block_size ? ev[i].size : block_size,
			.align = ev[i].align > 1 ? ev[i].align : 1,
			.event = i, .lo = runs[i] - 1, .hi = runs[last[i]],
		};
		*bytes = solve_add(*bytes, solve_add(s->b[k].size, s->b[k].align - 1));
		k++;
	}
	free(runs);
	for (i = 0; i < s->m; i++) {
		for (lo = i + 1, hi = s->m; lo < hi;) {
			uint32_t mid = lo + (hi - lo) / 2;

			if (s->b[mid].event < last[s->b[i].event])
				lo = mid + 1;
			else
				hi = mid;
		}
		s->b[i].ahi = lo;
		pairs += lo - i - 1;
	}
	return pairs > SOLVE_MAX_PAIRS ? -E2BIG : 0;
}

/* The key: per step, the bytes of the buffers live there (no floor yet). */
static void solve_keys(struct solver *s)
{
	uint64_t *k = s->kvals;
	uint32_t i, t;

	memset(k, 0, ((size_t)s->steps + 1) * sizeof(*k));
	for (i = 0; i < s->m; i++) {
		k[s->b[i].lo] += s->b[i].size;
		k[s->b[i].hi] -= s->b[i].size;
	}
	for (t = 1; t < s->steps; t++)
		k[t] += k[t - 1];
}

/*
 * Turn time around (steps t -> steps - 1 - t), between searches: the same
 * problem, searched from its other end. Return: 0 or -ENOMEM.
 */
int solve_reverse(struct solver *s)
{
	uint32_t i, lo;

	for (i = 0; i < s->m; i++) {
		lo = s->b[i].lo;
		s->b[i].lo = s->steps - s->b[i].hi;
		s->b[i].hi = s->steps - lo;
	}
	s->reversed = !s->reversed;
	solve_keys(s);
	return solve_lists(s);
}

/*
 * The table of proven states, @n words zeroed: on huge pages where it
 * spans them (a lookup a node, at a random entry: on 4K pages nearly
 * each one a TLB miss; about 2% of the time at 100-5000 buffers).
 */
static uint64_t *solve_tt_alloc(size_t n)
{
	size_t huge = 2 << 20, bytes = n * sizeof(uint64_t);
	uint64_t *tt;

	if (bytes < huge)
		return calloc(n, sizeof(*tt));
	bytes = (bytes + huge - 1) & ~(huge - 1);
	tt = aligned_alloc(huge, bytes);
	if (!tt)
		return NULL;
	madvise(tt, bytes, MADV_HUGEPAGE);
	memset(tt, 0, bytes);
	return tt;
}

/* The search's arrays, once the sizes are known to fit in 62 bits. */
int solve_alloc(struct solver *s)
{
	uint32_t i, bits;
	int err;

	for (i = 0; i < 2; i++) {
		s->nxt[i] = malloc(((size_t)s->m + s->steps) * sizeof(*s->nxt[i]));
		s->prv[i] = malloc(((size_t)s->m + s->steps) * sizeof(*s->prv[i]));
		if (!s->nxt[i] || !s->prv[i])
			return -ENOMEM;
	}
	s->off = malloc(((size_t)s->m + 1) * sizeof(*s->off));
	s->part = malloc(((size_t)s->m + 1) * sizeof(*s->part));
	s->reach = calloc((size_t)s->steps + 1, sizeof(*s->reach));
	s->dfs = malloc(2 * ((size_t)s->steps + 1) * sizeof(*s->dfs));
	if (!s->off || !s->part || !s->reach || !s->dfs)
		return -ENOMEM;
	memset(s->off, 0xff, ((size_t)s->m + 1) * sizeof(*s->off));
	memset(s->part, 0xff, ((size_t)s->m + 1) * sizeof(*s->part));
	err = s->steps > SOLVE_SCAN_STEPS ? tree_init(&s->floor, s->steps, NULL) : 0;
	if (!err) {
		s->vals = calloc((size_t)s->steps + 1, sizeof(*s->vals));
		s->bmin = calloc((size_t)s->steps / SOLVE_BLOCK + 1, sizeof(*s->bmin));
		s->edge = calloc((size_t)s->steps / 64 + 1, sizeof(*s->edge));
		s->cover = malloc(((size_t)s->steps + 1) * sizeof(*s->cover));
		s->kvals = malloc(((size_t)s->steps + 1) * sizeof(*s->kvals));
		err = s->vals && s->bmin && s->edge && s->cover && s->kvals ? 0 : -ENOMEM;
		if (!err) {
			s->edge[0] |= 1;
			s->edge[s->steps / 64] |= 1ULL << (s->steps % 64);
			solve_keys(s);
		}
	}
	if (!err)
		err = solve_lists(s);
	for (i = 0; i < s->m; i++)
		s->rng = (s->rng ^ s->b[i].size ^ (uint64_t)s->b[i].hi << 32) *
			 0x9E3779B97F4A7C15ULL + s->b[i].lo;
	s->rng |= 1;
	for (bits = 8; (int)bits < SOLVE_TT_BITS && (1ULL << bits) < 256ULL * s->m; bits++)
		;
	s->zkey = malloc(((size_t)s->m + 1) * sizeof(*s->zkey));
	s->rpre = malloc(((size_t)s->steps + 1) * sizeof(*s->rpre));
	if (SOLVE_TT_BITS)
		s->tt = solve_tt_alloc(3ULL << bits);
	if (!s->zkey || !s->rpre || (SOLVE_TT_BITS && !s->tt))
		return -ENOMEM;
	s->tt_mask = (1ULL << bits) - 1;
	for (i = 0; i < s->m; i++)
		s->zkey[i] = solve_rand(s);
	s->rpre[0] = 0;
	for (i = 0; i < s->steps; i++)
		s->rpre[i + 1] = s->rpre[i] + (solve_rand(s) | 1);
	/* A node costs O(steps) at worst: read the clock often on long traces. */
	s->clock_mask = s->steps > 1024 ? 0 : 1023;
	return err;
}
