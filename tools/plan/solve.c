// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * libsvodplan: svod_plan_solve(), a branch-and-bound arena planner for
 * userspace. It takes the event list of SVOD_IOCTL_PLAN, checks it by the
 * ioctl's rules (same errno, same failed event) and searches, within a
 * budget of CPU time per search thread, for the plan with the lowest peak.
 * Documentation/planner.rst ("Search") says what each part is worth;
 * Documentation/planner-search.rst keeps how each rule was measured and
 * what was tried and dropped.
 *
 * This file holds the entry point, the portfolio's threads and the time
 * segments; the rest of the search is in the solve_*.c files beside it,
 * one per concern (solve_internal.h lists them and what they share).
 *
 * Time steps. Each run of ALLOC events with no FREE between is one step;
 * buffer b lives over steps [lo, hi): lo its run, hi the runs begun before
 * its FREE (all of them if never freed). Two buffers meet in the events iff
 * their steps meet. A plan is then a packing of rectangles (steps x bytes).
 * The events split where nothing is live; each such time segment is a
 * problem of its own (solve_plan(), solve_segment()).
 *
 * Canonical form: fill the lowest segment first. The state is a floor per
 * step (the top of what was placed there, or given up); buffers are only
 * placed on it, never in holes below. The lowest segment [a, b) is the
 * leftmost run of steps at the lowest floor y0: a buffer covering (a, y0)
 * starts at a and ends by b. A node tries (i) the unplaced buffers starting
 * at a and ending by b, at y0 rounded up to their alignment, (ii) with
 * bytes to spare, those starting at a later step c of the segment, the
 * steps [a, c) then raised to the lower of their neighbours (the buffer
 * is the leftmost on the floor: none is placed in [a, c) at y0 after it,
 * so the same packing is not reached again by (i) below), (iii) the
 * waste: the segment raised to the lower of its neighbours. The form is
 * complete: push every buffer of a packing down as far as it goes; the
 * leftmost one then sitting on the segment's floor (aligned) is a branch,
 * nothing lies below the lower neighbour left of it, and without one,
 * nothing lies below the lower neighbour at all. So a search
 * that ends without a plan proves there is none within its target (for
 * tilings, with no byte to spare anywhere, (i) alone is complete). The
 * argument holds in any valley (a run of steps whose neighbours are both
 * higher), not only the lowest: a node may fill another one (first fail,
 * below; above the lower bound, the one beside the last move:
 * solve_focus()).
 *
 * Bound: key[t] = floor[t] + the bytes of the unplaced buffers live at t.
 * Placing on a flat floor leaves it unchanged but for alignment padding;
 * a waste raises it. No completion has a lower peak than its maximum, so
 * a branch ends when it passes the target: a count of the steps above the
 * target, kept as keys change (O(steps changed)), says when. A waste that
 * would pass it (a segment raised, or [a, c) under a buffer at c) is not
 * made: the keys it would raise are read first. Floors and keys are kept
 * per step; a scan of the floors gives y0, a and b (on more than
 * SOLVE_SCAN_STEPS steps, a segment tree over them, range add and min, in
 * O(log S) for S steps). The scan reads the lowest floor of each block of
 * SOLVE_BLOCK steps first, then the block. A bit per step says where the
 * floor changes (it moves only at the ends of a raised range): the runs
 * of equal floors, valleys among them, are found a word of 64 steps at a
 * time, and a block's lowest floor from its first step and its edges
 * alone. Undo is the inverse add; the search runs on an explicit stack
 * (its depth reaches the number of buffers).
 *
 * A cell must be covered where its step has no byte to spare (its key at
 * the target). So in every valley (a run of steps between higher floors)
 * unplaced buffers within it, lying end to end, must cover the bottom row
 * but for cells that may stay empty, and each step up to the lower wall
 * but for the bytes it may spare: a placement leaving a valley that cannot
 * be filled so ends the branch (solve_chain()). And the node fills, among
 * the valleys whose first (or last) cell must be covered, the one with the
 * fewest candidates such a chain can follow (first fail; O(S) per node);
 * when the lowest segment's first cell may stay empty, another valley only
 * if dead or forced.
 * Dominance: of the candidates identical in steps, size and alignment,
 * one is tried. Candidates: longest lifetime first, then largest.
 *
 * Proven states: a state whose search ended without a plan within the
 * target is kept in a table (SOLVE_TT_BITS) under a hash of the placed
 * buffers and the floors, with the highest target so proven; a node that
 * reaches it again at that target or lower tries nothing.
 *
 * Backjumping: a node that fails is explained by a range of steps (its
 * valley, its walls, the runs its valley checks read, and what its
 * children's failures were explained by). A frame above it whose move
 * (buffer or waste) lies outside that range cannot change the outcome:
 * the search below branched only on valleys within it, and with those
 * steps alike every branch fails alike. Such frames are undone with
 * their other branches untried (conflict-directed backjumping); the
 * range goes to the frame that did touch it. The table of proven states
 * keeps each state's range, so a state found there explains its failure
 * too.
 *
 * Control (solve_search()): the incumbent is the caller's plan (if valid)
 * or the first dive (no target); half the budget searches for a plan at
 * the lower bound (and half of what is left again, while more than a fifth
 * is, as long as the path below grew in the second half of the last share:
 * solve_at_bound()), with restarts (Luby sequence times SOLVE_UNIT nodes)
 * that alternate the direction of time and, after the first two, try a
 * random candidate first at SOLVE_SHUFFLE percent of the nodes (a PRNG
 * seeded from the instance: same inputs, same search but for the clock).
 * The path to the deepest partial plan at the lower bound is kept
 * (solve_save_path()); half of the shuffled restarts replay a prefix of
 * it (deep ones likelier) and search below it, and such a search that
 * ends proves nothing. The deepest partial plan is then completed by first
 * fit (largest first, then in the incumbent's offset order:
 * solve_complete()), as it is again after every target not reached when
 * the search got deeper, and the rest of the budget bisects between the
 * lowest target not reached and the best peak (a third of what is left per
 * target; when every target timed out, again from the highest proven).
 * The path holds for any target above the bound, so there half the
 * restarts, from the first, begin below a prefix of it: the bottom of the
 * packing stays waste-free, only the top has bytes to spare. A path found
 * at a target above the bound holds for any target as high, and the
 * bisection only goes up after a target not reached: the deepest path at
 * such a target is kept too (solve_save_up(); solve_keep_up() drops it
 * when the bisection starts again lower), and where it holds more buffers
 * than the one at the bound, half of those restarts begin below it
 * instead. And every other restart there, from the first, is guided by
 * the incumbent (solution-guided search): at each node the candidate it
 * placed nearest the floor first (but on the shuffled nodes), so the
 * search rebuilds the best plan and departs from it where that plan
 * breaks the target.
 *
 * Portfolio: with two CPUs online, svod_plan_solve() runs two such
 * searches side by side, one on a thread it starts and joins (the only
 * thread of libsvodplan), and keeps the better plan. The second (policy 1)
 * differs in one thing: on restarts 2, 3, 6, 7, ... at the lower bound it
 * fills the leftmost valley below the target, a sweep through time
 * (solve_sweep()), instead of the first-fail one. The one that proves its
 * plan optimal stops the other (solve_now()). Above the bound both search
 * below the deeper of their two paths (solve_exchange(), under struct
 * solve_share's lock): the one that got less far at the bound takes the
 * other's, so both work on the top of the best partial plan either found.
 *
 * Input: solve_pair() and solve_check_sizes() refuse what the ioctl's
 * SVOD_PLAN_BEST refuses, with its errno and failed event, before any
 * search (svod_plan_solve()'s kernel-doc lists them).
 *
 * Locking: none across calls (no state is kept between them); within a
 * call the two searches share only struct solve_share (its mutex) and the
 * stop flag (atomic).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "solve_internal.h"

__thread atomic_int *solve_done;
__thread struct solve_share *solve_shared;

#ifdef SOLVE_TEST
uint32_t solve_test_adopted;
atomic_uint solve_test_bad;
atomic_ulong solve_test_runs;
atomic_uint solve_test_run_bad;
#endif

/**
 * struct solve_seg - a time segment: events with nothing live around them
 * @first: its first event
 * @end: one past its last event
 * @bufs: its ALLOC events
 * @optimal: its plan is proven optimal (or meets the goal)
 * @peak: its plan's peak
 */
struct solve_seg {
	uint32_t first;
	uint32_t end;
	uint32_t bufs;
	int optimal;
	uint64_t peak;
};

static int solve_seg_cmp(const void *pa, const void *pb)
{
	const struct solve_seg *x = pa, *y = pb;

	if (x->bufs != y->bufs)
		return x->bufs < y->bufs ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

/*
 * One time segment: @n events with nothing live before or after them,
 * paired by solve_pair() (@last relative to @ev). Its plan is searched
 * down to @goal at best (the whole trace's lower bound, never below the
 * segment's own: no lower peak helps). *@peak, *@nodes and *@optimal (the peak is
 * the segment's optimum, or within @goal) are set on success. Return: 0,
 * -ENOSPC (sizes past 2^62 and no valid hint), -E2BIG or -ENOMEM.
 */
static int solve_segment(const struct svod_plan_event *ev, uint32_t n, const uint32_t *last,
			 uint64_t block_size, uint64_t goal, double seconds, const uint64_t *hint,
			 uint64_t *offsets, uint64_t *peak, uint64_t *nodes, int *optimal,
			 int policy)
{
	struct solver s = { .best_peak = UINT64_MAX, .target = SOLVE_INF, .lb = goal,
			    .policy = policy, .key = ev };
	uint64_t bytes;
	uint32_t i;
	int err;

	err = solve_init(&s, ev, n, last, block_size, &bytes);
	if (!err) {
		s.best = malloc(((size_t)s.m + 1) * sizeof(*s.best));
		err = s.best ? 0 : -ENOMEM;
	}
	if (err)
		goto out;
	if (hint)
		solve_hint(&s, hint);
	if (s.m && bytes < SOLVE_MAX_BYTES) {
		err = solve_alloc(&s);
		if (!err)
			err = solve_search(&s, seconds);
		if (err < 0)
			goto out;
		*optimal = err;
		err = 0;
	} else if (!s.m) {
		*optimal = 1;
		s.best_peak = 0;
	} else if (s.best_peak == UINT64_MAX) {
		err = -ENOSPC;
		goto out;
	}
	*nodes += s.nodes;
	*peak = s.best_peak;
	for (i = 0; i < s.m; i++)
		offsets[s.b[i].event] = s.best[i];
out:
	solve_free(&s);
	return err;
}

/*
 * Search segment @sg again for @seconds, from its plan in @offsets (the
 * whole trace's), which it replaces when better. Return: as solve_segment().
 */
static int solve_seg_again(const struct svod_plan_event *ev, const uint32_t *last,
			   uint64_t block_size, uint64_t goal, double seconds,
			   struct solve_seg *sg, uint64_t *offsets, uint64_t *nodes, int policy)
{
	uint32_t n = sg->end - sg->first;
	uint64_t *plan = malloc(((size_t)n + 1) * sizeof(*plan)), *hint = offsets + sg->first;
	int err;

	if (!plan)
		return -ENOMEM;
	/* Its FREE events keep SVOD_PLAN_NO_OFFSET. */
	memcpy(plan, hint, n * sizeof(*plan));
	err = solve_segment(ev + sg->first, n, last + sg->first, block_size, goal, seconds,
			    hint, plan, &sg->peak, nodes, &sg->optimal, policy);
	/* Never worse than the hint: it is valid, the search starts from it. */
	if (!err)
		memcpy(hint, plan, n * sizeof(*plan));
	free(plan);
	return err;
}

/* svod_plan_solve() with one search policy (0 or 1: struct solver). */
static int solve_plan(const struct svod_plan_event *ev, uint32_t n,
		      const struct svod_solve_params *p, const uint64_t *hint,
		      uint64_t *offsets, struct svod_solve_result *res, int policy)
{
	double end = solve_now() + p->seconds, left;
	uint32_t *last = NULL, i, j, k = 0, bufs = 0;
	struct solve_seg *seg = NULL;
	uint64_t live = 0, peak;
	int err;

	*res = (struct svod_solve_result){ .failed_event = UINT32_MAX, .optimal = 1 };
	for (i = 0; i < n; i++)
		offsets[i] = SVOD_PLAN_NO_OFFSET;
	if (!p->block_size || !p->arena_size || !(p->seconds >= 0))
		return -EINVAL;
	last = malloc(((size_t)n + 1) * sizeof(*last));
	seg = malloc(((size_t)n + 1) * sizeof(*seg));
	if (!last || !seg) {
		err = -ENOMEM;
		goto out;
	}
	err = solve_pair(ev, n, last, &res->failed_event);
	if (!err)
		err = solve_check_sizes(ev, n, p->block_size, &res->failed_event);
	if (err)
		goto out;
	res->lower_bound = solve_lower_bound(ev, n, last);
	/* The segments end where nothing is live. */
	for (i = 0; i < n; i++) {
		if (!i || !live)
			seg[k++] = (struct solve_seg){ .first = i };
		/* A buffer is freed within its segment: make @last relative. */
		if (ev[i].op == SVOD_PLAN_ALLOC)
			last[i] -= seg[k - 1].first;
		seg[k - 1].bufs += ev[i].op == SVOD_PLAN_ALLOC;
		seg[k - 1].end = i + 1;
		bufs += ev[i].op == SVOD_PLAN_ALLOC;
		live += ev[i].op == SVOD_PLAN_ALLOC ? 1 : -1;
	}
	/* The smallest first: what they leave of their share goes to the rest. */
	qsort(seg, k, sizeof(*seg), solve_seg_cmp);
	for (i = 0; i < k; i++) {
		left = end - solve_now();
		left = left > 0 && bufs ? left * seg[i].bufs / bufs : 0;
		err = solve_segment(ev + seg[i].first, seg[i].end - seg[i].first,
				    last + seg[i].first, p->block_size, res->lower_bound, left,
				    hint ? hint + seg[i].first : NULL, offsets + seg[i].first,
				    &seg[i].peak, &res->nodes, &seg[i].optimal, policy);
		if (err)
			goto out;
		bufs -= seg[i].bufs;
	}
	/*
	 * The peak is the highest segment's: what time is left goes to it,
	 * from its plan so far, while it is not proven optimal.
	 */
	while (k > 1 && (left = end - solve_now()) > 0) {
		for (i = 0, j = 0; i < k; i++)
			if (seg[i].peak > seg[j].peak ||
			    (seg[i].peak == seg[j].peak && !seg[i].optimal))
				j = i;
		if (seg[j].optimal)
			break;
		peak = seg[j].peak;
		err = solve_seg_again(ev, last, p->block_size, res->lower_bound, left, &seg[j],
				      offsets, &res->nodes, policy);
		if (err)
			goto out;
		/* No better and not proven: it had all the time there was. */
		if (seg[j].peak >= peak && !seg[j].optimal)
			break;
	}
	for (i = 0; i < k; i++) {
		/* The plan is optimal if a segment with its peak is. */
		if (seg[i].peak > res->peak)
			res->optimal = seg[i].optimal;
		else if (seg[i].peak == res->peak)
			res->optimal |= seg[i].optimal;
		res->peak = solve_max(res->peak, seg[i].peak);
	}
	if (res->peak <= res->lower_bound)
		res->optimal = 1;
	if (res->peak > p->arena_size) {
		res->failed_event = solve_highest(ev, n, p->block_size, offsets, res->peak);
		err = -ENOSPC;
	}
out:
	free(seg);
	free(last);
	return err;
}

/**
 * struct solve_job - one search of the portfolio
 * @ev: @n events
 * @n: number of events
 * @p: block size, arena size, time budget
 * @hint: the caller's plan, or NULL
 * @offsets: out: its plan
 * @res: out: its result
 * @policy: 0 or 1 (@sweep of struct solver)
 * @done: set by the one that proves its plan optimal
 * @share: the path the two trade (solve_exchange()), NULL if alone
 * @err: what solve_plan() returned
 */
struct solve_job {
	const struct svod_plan_event *ev;
	uint32_t n;
	const struct svod_solve_params *p;
	const uint64_t *hint;
	uint64_t *offsets;
	struct svod_solve_result res;
	int policy;
	atomic_int *done;
	struct solve_share *share;
	int err;
};

static void *solve_job_run(void *arg)
{
	struct solve_job *j = arg;

	solve_done = j->done;
	solve_shared = j->share;
	j->err = solve_plan(j->ev, j->n, j->p, j->hint, j->offsets, &j->res, j->policy);
	if (!j->err && j->res.optimal)
		atomic_store(j->done, 1);
	solve_done = NULL;
	solve_shared = NULL;
	return NULL;
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
 * With two or more CPUs online, two searches run side by side, one per
 * thread (policy 0 and 1 of struct solver), and the better plan is kept
 * (the first search's on a tie); the one that proves its plan optimal
 * stops the other. With one CPU, the first search alone.
 *
 * The events split where nothing is live: each time segment is its own
 * problem, searched on its own (in order, each given the budget left in
 * proportion to its buffers; then the time left goes to the one with the
 * highest peak, searched again from its plan). Branch and bound (see the
 * top of this file) until its peak meets the lower bound or its time has
 * passed (without a valid @hint, its first greedy dive always runs to its
 * end).
 * @res->optimal is set when the peak meets the lower bound or a search
 * ended without a plan below it.
 *
 * Malformed input is refused as SVOD_IOCTL_PLAN's SVOD_PLAN_BEST refuses
 * it, with the same errno and @res->failed_event, before any search: an
 * unknown op, a FREE with nonzero size or align, an ALLOC of a live id, a
 * FREE of an id that is not live (never allocated, freed already, or
 * freed before its ALLOC) first, then an ALLOC whose size (at least
 * @p->block_size) plus align minus one, rounded up to its TLSF bucket's
 * granule, does not fit in 64 bits. The search has no lv2_cnt: it takes
 * the reference's, 32; with another one the ioctl's granule differs, and
 * the two may disagree on sizes above 2^63.
 *
 * Context: any thread; allocates memory (O(n)).
 * Return: 0; -EINVAL for a bad parameter (@res->failed_event ~0U) or a
 * malformed event (@res->failed_event says which; @offsets all
 * SVOD_PLAN_NO_OFFSET); -ENOSPC if the best plan does not fit the arena
 * (@offsets hold it, @res->peak is the arena it needs and
 * @res->failed_event the ALLOC it placed highest; or, without a valid
 * @hint, if the sizes and alignments of a segment sum to 2^62 bytes or
 * more: not searched, @res->failed_event ~0U); -E2BIG for more than 64M
 * pairs of buffers live at once in a segment; -ENOMEM.
 */
int svod_plan_solve(const struct svod_plan_event *ev, uint32_t n,
		    const struct svod_solve_params *p, const uint64_t *hint,
		    uint64_t *offsets, struct svod_solve_result *res)
{
	struct solve_share share = { .mu = PTHREAD_MUTEX_INITIALIZER };
	atomic_int done = 0;
	struct solve_job job[2] = {
		{ ev, n, p, hint, offsets, { 0 }, SOLVE_POLICY, &done, NULL, 0 },
		{ ev, n, p, hint, NULL, { 0 }, SOLVE_POLICY + 1, &done, &share, 0 },
	};
	pthread_t th;
	int two = SOLVE_THREADS > 1 && n && sysconf(_SC_NPROCESSORS_ONLN) > 1, w = 0;

	if (two) {
		job[1].offsets = malloc((size_t)n * sizeof(*offsets));
		two = job[1].offsets && !pthread_create(&th, NULL, solve_job_run, &job[1]);
		job[0].share = two ? &share : NULL;
	}
	solve_job_run(&job[0]);
	if (two) {
		pthread_join(th, NULL);
		/* The second's plan if it is lower (or the first has none). */
		w = !job[1].err && (job[0].err ? job[0].err == -ENOSPC :
				    job[1].res.peak < job[0].res.peak);
		if (w)
			memcpy(offsets, job[1].offsets, (size_t)n * sizeof(*offsets));
		/* The other's nodes count; its proof holds for any plan as low. */
		if (w || !job[1].err) {
			job[w].res.nodes += job[!w].res.nodes;
			job[w].res.optimal |= job[!w].res.optimal &&
					      job[!w].res.peak >= job[w].res.peak;
		}
	}
	free(job[1].offsets);
	free(share.path);
	pthread_mutex_destroy(&share.mu);
#ifdef SOLVE_TEST
	solve_test_adopted = share.adopted;
#endif
	*res = job[w].res;
	return job[w].err;
}
