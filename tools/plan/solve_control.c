// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * The control of one search (solve_search()): the incumbent (the caller's
 * plan or a first dive), restarts on a Luby sequence from replayed
 * prefixes of the kept paths (solve_restarts()), the share of the budget
 * at the lower bound (solve_at_bound()), the bisection above it, and the
 * trade of paths between the portfolio's two searches (solve_exchange()).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "solve_internal.h"

/* Seed the incumbent with the caller's plan if it is valid. */
void solve_hint(struct solver *s, const uint64_t *hint)
{
	uint64_t peak = 0, e;
	uint32_t i, j;

	for (i = 0; i < s->m; i++) {
		uint64_t o = hint[s->b[i].event];

		if (o == UINT64_MAX || o % s->b[i].align)
			return;
		e = solve_add(o, s->b[i].size);
		for (j = i + 1; j < s->b[i].ahi; j++) {
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
	}
}

/*
 * One search for a plan whose key stays within @target, of at most @nodes
 * nodes, before @deadline. Return: 1 found, 0 none exists (the search
 * completed), -1 out of nodes or time, or -ENOMEM.
 */
static int solve_try(struct solver *s, uint64_t target, double deadline, uint64_t nodes)
{
	int err;

	s->node_limit = nodes > UINT64_MAX - s->nodes ? UINT64_MAX : s->nodes + nodes;
	s->target = target;
	solve_kcount(s);
	s->deadline = deadline;
	s->stop = 0;
	s->found = 0;
	s->timeout = 0;
	err = solve_dfs(s);
	if (err)
		return err;
	return s->found ? 1 : s->timeout ? -1 : 0;
}

#ifdef SOLVE_TEST
/* A frame replayed: its buffer not placed yet, on a floor flat at its y0. */
static void solve_test_frame(const struct solver *s, const struct solve_frame *f)
{
	int bad = s->off[f->cur] != UINT64_MAX;
	uint32_t t;

	for (t = s->b[f->cur].lo; t < s->b[f->cur].hi; t++)
		bad |= s->vals[t] != f->y0;
	if (bad)
		atomic_fetch_add(&solve_test_bad, 1);
}
#else
static void solve_test_frame(const struct solver *s, const struct solve_frame *f)
{
	(void)s;
	(void)f;
}
#endif

/* Replay the first @k frames of @path: the base of the next search. */
static void solve_replay(struct solver *s, const struct solve_frame *path, uint32_t k)
{
	uint32_t i;

	for (i = 0; i < k; i++) {
		const struct solve_frame *f = &path[i];

		if (f->cur != SOLVE_NONE) {
			solve_test_frame(s, f);
			solve_place(s, f->cur, f->y0);
		}
		if (f->raise)
			solve_waste(s, f->a, f->cur != SOLVE_NONE ? f->c : f->b, f->raise);
	}
	s->base = path;
	s->base_len = k;
}

/* The Luby sequence: 1 1 2 1 1 2 4 1 1 2 1 1 2 4 8 ... (@i from 1). */
static uint64_t solve_luby(uint64_t i)
{
	uint64_t k = 1;

	while ((1ULL << k) - 1 < i)
		k++;
	while ((1ULL << k) - 1 != i) {
		i -= (1ULL << (k - 1)) - 1;
		for (k = 1; (1ULL << k) - 1 < i; k++)
			;
	}
	return 1ULL << (k - 1);
}

/*
 * Searches for a plan within @target until @end, restarted with
 * Luby-scaled node limits (SOLVE_UNIT nodes times 1 1 2 1 1 2 4 ...), the
 * first in list order, then with shuffled candidates. Return: 1 found, 0
 * none exists (a search ended), -1 out of time, or -ENOMEM.
 */
static int solve_restarts(struct solver *s, uint64_t target, double end)
{
	uint64_t r;
	uint32_t i;
	int ret, base;

	for (r = 1; solve_now() < end; r++) {
		const struct solve_frame *path = s->path;
		uint32_t len = s->path_len;
		int reversed = s->path_reversed;

		s->shuffle = r > 2 ? SOLVE_SHUFFLE : 0;
		s->sweep = s->policy && (r & SOLVE_SWEEP);
		s->guide = target > s->lb && (r & SOLVE_GUIDE);
		/* Above the bound, a deeper path found there may be the base. */
		if (target > s->lb && s->up.len && s->up.placed > s->path_placed &&
		    solve_rand(s) % 100 < SOLVE_UP) {
			path = s->up.f;
			len = s->up.len;
			reversed = s->up.reversed;
		}
		base = len && (r > 2 || target > s->lb) && solve_rand(s) % 100 < SOLVE_BASE;
		/* A base is replayed in the direction it was found in. */
		if (base ? s->reversed != reversed : r > 1) {
			ret = solve_reverse(s);
			if (ret)
				return ret;
		}
		if (base) {
			uint64_t u = solve_rand(s) % len, v = solve_rand(s) % len;

			solve_replay(s, path, len - 1 - (uint32_t)(u * v / len));
		}
		ret = solve_try(s, target, end, solve_luby(r) * SOLVE_UNIT);
		/* @up may have moved (solve_save_up()): @base follows it. */
		for (i = s->base_len; i--;) {
			struct solve_frame f = s->base[i];

			solve_undo(s, &f);
		}
		s->base_len = 0;
		s->base = NULL;
		s->guide = 0;
		/* Below a base, a search that ends proves nothing. */
		if (ret == 0 && base)
			continue;
		if (ret != -1)
			return ret;
	}
	return -1;
}

/*
 * The portfolio's searches trade their paths at the lower bound: this one
 * takes the other's if it placed more buffers on the same segment, else
 * leaves its own for the other. Both number the buffers and steps of a
 * segment alike, so a path of one replays in the other. Return: 0 or
 * -ENOMEM.
 */
static int solve_exchange(struct solver *s)
{
	struct solve_share *sh = solve_shared;
	int err = 0;

	if (!sh)
		return 0;
	pthread_mutex_lock(&sh->mu);
	if (sh->key == s->key && sh->placed > s->path_placed) {
		err = solve_path_room(&s->path, &s->path_cap, sh->len);
		if (!err) {
			memcpy(s->path, sh->path, sh->len * sizeof(*s->path));
			s->path_len = sh->len;
			s->path_placed = sh->placed;
			s->path_reversed = sh->reversed;
			sh->adopted++;
		}
	} else if (s->path_len && (sh->key != s->key || s->path_placed > sh->placed)) {
		err = solve_path_room(&sh->path, &sh->cap, s->path_len);
		if (!err) {
			memcpy(sh->path, s->path, s->path_len * sizeof(*s->path));
			sh->key = s->key;
			sh->len = s->path_len;
			sh->placed = s->path_placed;
			sh->reversed = s->path_reversed;
		}
	}
	pthread_mutex_unlock(&sh->mu);
	return err;
}

/*
 * The search for a plan at the lower bound, until @end at most: half the
 * time left, and again half of what is left while the path grew in the
 * second half of the last share and more than a fifth of the @seconds are
 * left (above the bound the search works below that path: the deeper, the
 * better). Return: as solve_restarts().
 */
static int solve_at_bound(struct solver *s, double end, double seconds)
{
	double t0, t1;
	int ret;

	do {
		t0 = solve_now();
		t1 = t0 + (end - t0) / 2;
		ret = solve_restarts(s, s->lb, t1);
	} while (ret == -1 && s->path_time > t0 + (t1 - t0) / 2 &&
		 end - solve_now() > seconds / 5);
	return ret;
}

/*
 * Before the search at @target above the bound: @up holds for it only if
 * found at a target as low (the bisection may start again lower: then it
 * is dropped), and a copy is kept for the targets after it, since one that
 * is reached leaves @up found at its own target (or above it). Return: 0
 * or -ENOMEM.
 */
static int solve_keep_up(struct solver *s, uint64_t target)
{
	struct solve_up *u = &s->up, *k = &s->up_kept;

	if (u->target > target) {
		u->len = 0;
		u->placed = 0;
		u->target = 0;
	}
	if (solve_path_room(&k->f, &k->cap, u->len))
		return -ENOMEM;
	if (u->len)
		memcpy(k->f, u->f, u->len * sizeof(*k->f));
	k->len = u->len;
	k->placed = u->placed;
	k->reversed = u->reversed;
	k->target = u->target;
	return 0;
}

/*
 * The first dive (no target: always a plan), then half the budget for a
 * plan at the lower bound (the optimum of tilings; more while it gets
 * deeper: solve_at_bound()), then bisection between the lowest target not
 * reached and the best peak, a third of what is left for each target.
 * Return: 1 if the best plan is proven optimal (it meets the lower bound,
 * or a search found none below it), 0 if not, or -ENOMEM.
 */
int solve_search(struct solver *s, double seconds)
{
	double start = solve_now(), left;
	uint64_t lo = s->lb, proven = s->lb, c, again = UINT64_MAX;
	int ret;

	/* Without the caller's plan, the dive is the plan: it must end. */
	ret = solve_try(s, SOLVE_INF, s->best_peak == UINT64_MAX ? SOLVE_NEVER : start + seconds,
			UINT64_MAX);
	if (ret < -1)
		return ret;
	for (c = lo; lo < s->best_peak; c = lo + (s->best_peak - lo) / 2) {
		left = start + seconds - solve_now();
		if (left <= 0)
			break;
		/* Above the bound, from the deeper path of the portfolio's two. */
		if (c > s->lb && solve_exchange(s))
			return -ENOMEM;
		if (c > s->lb && solve_keep_up(s, c))
			return -ENOMEM;
		ret = c == s->lb ? solve_at_bound(s, start + seconds, seconds) :
				   solve_restarts(s, c, solve_now() + left / 3);
		if (ret < -1)
			return ret;
		/* A path found at a target reached holds for no later one. */
		if (c > s->lb && ret == 1) {
			struct solve_up t = s->up;

			s->up = s->up_kept;
			s->up_kept = t;
		}
		if (c == s->lb && solve_exchange(s))
			return -ENOMEM;
		/* Above the bound, after each target, cheaper: up to 2^22 visits. */
		if (ret < 1 && solve_complete(s, c == s->lb ? 28 : 22))
			return -ENOMEM;
		/* A search that ended without a plan: none has a peak <= c. */
		if (!ret)
			proven = c + 1;
		if (ret < 1)
			lo = c + 1;
		/*
		 * Out of time below every target, none proven: bisect again,
		 * unless no node was searched since the last time (the time
		 * left too short for one: the node clock would never move on).
		 */
		if (lo >= s->best_peak && proven < s->best_peak) {
			if (s->nodes == again)
				break;
			again = s->nodes;
			lo = proven;
		}
	}
	return s->best_peak <= proven;
}
