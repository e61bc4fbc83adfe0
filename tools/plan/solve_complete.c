// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * Completing a partial plan by first fit (solve_complete()): the deepest
 * partial plan found, finished largest first and then in the order of the
 * incumbent's offsets; the better completion, if below the best plan,
 * becomes the incumbent.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "solve_internal.h"

/* By offset in the best plan: the other order it is completed in. */
static int solve_off_cmp(const void *pa, const void *pb)
{
	uint64_t x = solve_sort_ctx->best[*(const uint32_t *)pa];
	uint64_t y = solve_sort_ctx->best[*(const uint32_t *)pb];

	return x < y ? -1 : x > y;
}

/* Largest first: the order the partial plan is completed in. */
static int solve_size_cmp(const void *pa, const void *pb)
{
	const struct solve_buf *x = &solve_sort_ctx->b[*(const uint32_t *)pa];
	const struct solve_buf *y = &solve_sort_ctx->b[*(const uint32_t *)pb];

	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return (x->hi - x->lo > y->hi - y->lo) ? -1 : (x->hi - x->lo < y->hi - y->lo);
}

/**
 * struct solve_iv - a buffer placed in a plan being completed
 * @lo: its offset
 * @hi: one past its last byte
 * @t0: its first step
 * @t1: one past its last
 */
struct solve_iv {
	uint64_t lo;
	uint64_t hi;
	uint32_t t0;
	uint32_t t1;
};

/* Buffer @i placed at @off. */
static struct solve_iv solve_iv_of(const struct solver *s, uint32_t i, uint64_t off)
{
	const struct solve_buf *b = &s->b[i];

	return (struct solve_iv){ off, off + b->size, b->lo, b->hi };
}

static int solve_iv_cmp(const void *pa, const void *pb)
{
	const struct solve_iv *x = pa, *y = pb;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/*
 * Buffer @i in @plan at the lowest offset free over its steps (first fit),
 * from the @n buffers placed (@iv, by offset: those live with it, read in
 * that order, are what a sort of them gave, without a sort per buffer);
 * @iv then holds it too. Return: @n + 1.
 */
static uint32_t solve_first_fit(struct solver *s, uint64_t *plan, uint32_t i,
				struct solve_iv *iv, uint32_t n)
{
	const struct solve_buf *b = &s->b[i];
	uint32_t j, lo, hi;
	uint64_t x = 0;

	for (j = 0; j < n; j++) {
		if (iv[j].t1 <= b->lo || b->hi <= iv[j].t0)
			continue;
		if (solve_round_up(x, b->align) + b->size <= iv[j].lo)
			break;
		x = solve_max(x, iv[j].hi);
	}
	x = solve_round_up(x, b->align);
	plan[i] = x;
	/* After the last one at or below @x (ties in any order give one fit). */
	for (lo = 0, hi = n; lo < hi;) {
		j = lo + (hi - lo) / 2;
		if (iv[j].lo <= x)
			lo = j + 1;
		else
			hi = j;
	}
	memmove(iv + lo + 1, iv + lo, (n - lo) * sizeof(*iv));
	iv[lo] = solve_iv_of(s, i, x);
	return n + 1;
}

/*
 * The deepest partial plan completed by first fit, largest buffers first,
 * then in the order of their offsets in the incumbent: the incumbent if
 * lower. At most 2^@bits buffer visits per pass (else skipped); a plan
 * completed before is not completed again. Return: 0 or -ENOMEM.
 */
int solve_complete(struct solver *s, unsigned int bits)
{
	uint32_t left = s->m - s->part_placed, *order, i, k = 0, n, pass;
	struct solve_iv *iv;
	uint64_t peak;

	if (!s->part_placed || !left || s->part_done == s->part_placed ||
	    (uint64_t)left * s->m > (1ULL << bits))
		return 0;
	s->part_done = s->part_placed;
	order = malloc((size_t)left * sizeof(*order));
	iv = malloc(((size_t)s->m + 1) * sizeof(*iv));
	if (!order || !iv) {
		free(order);
		free(iv);
		return -ENOMEM;
	}
	for (i = 0; i < s->m; i++)
		if (s->part[i] == UINT64_MAX)
			order[k++] = i;
	solve_sort_ctx = s;
	for (pass = 0; pass < 2; pass++) {
		qsort(order, k, sizeof(*order), pass ? solve_off_cmp : solve_size_cmp);
		for (i = 0, n = 0; i < s->m; i++)
			if (s->part[i] != UINT64_MAX)
				iv[n++] = solve_iv_of(s, i, s->part[i]);
		qsort(iv, n, sizeof(*iv), solve_iv_cmp);
		for (i = 0; i < k; i++)
			n = solve_first_fit(s, s->part, order[i], iv, n);
		for (i = 0, peak = 0; i < s->m; i++)
			peak = solve_max(peak, s->part[i] + s->b[i].size);
		if (peak < s->best_peak) {
			memcpy(s->best, s->part, s->m * sizeof(*s->best));
			s->best_peak = peak;
		}
		for (i = 0; i < k; i++)
			s->part[order[i]] = UINT64_MAX;
	}
	free(order);
	free(iv);
	return 0;
}
