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
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "libsvodplan.h"

#define SOLVE_NONE	UINT32_MAX
/* bit_length(32): the reference TLSF's second level, for its size rule. */
#define SOLVE_L2_BITS	6
/* Conflicting pairs beyond this are refused (-E2BIG): hint check cost. */
#define SOLVE_MAX_PAIRS	(64u << 20)
/* Padded sizes summing to this or more are not searched (overflow). */
#define SOLVE_MAX_BYTES	(1ULL << 62)
/* Restarts: nodes of the first (times the Luby sequence), shuffle percent. */
#define SOLVE_UNIT	400
#define SOLVE_SHUFFLE	10
/* Percent of the shuffled restarts that begin below a prefix of the path. */
#define SOLVE_BASE	50
/*
 * Above the bound, percent of the restarts that take the deeper path found
 * there (struct solver's @up) for that base instead (0: never).
 */
#ifndef SOLVE_UP
#define SOLVE_UP	50
#endif
/* Above the bound, the restarts r with r & this follow the incumbent. */
#define SOLVE_GUIDE	1
/*
 * Proven states kept: at most 2^this (24 bytes each), 256 per buffer; 0
 * keeps none (tools/plan's test build compares the two searches).
 */
#ifndef SOLVE_TT_BITS
#define SOLVE_TT_BITS	20
#endif
/*
 * Up to this many steps, the lowest floor is found by a scan of the
 * minimum of each block of SOLVE_BLOCK steps, not by a tree.
 */
#define SOLVE_SCAN_STEPS	4096
#define SOLVE_BLOCK	32
/* No target: larger than any floor the search can build. */
#define SOLVE_INF	(1ULL << 63)
/*
 * The portfolio (svod_plan_solve()): up to SOLVE_THREADS searches side by
 * side, of policies SOLVE_POLICY, SOLVE_POLICY + 1 (struct solver); policy
 * 1 sweeps on the restarts r with r & SOLVE_SWEEP (2, 3, 6, 7, ...).
 * tools/plan's test build runs policy 1 alone, sweeping on every restart.
 */
#ifndef SOLVE_THREADS
#define SOLVE_THREADS	2
#endif
#ifndef SOLVE_POLICY
#define SOLVE_POLICY	0
#endif
#ifndef SOLVE_SWEEP
#define SOLVE_SWEEP	2
#endif
/* No deadline (a dive that must end); the clock once stopped (solve_now()). */
#define SOLVE_NEVER	1e300

/**
 * struct solve_buf - one buffer
 * @size: bytes it occupies: max(size, block_size)
 * @align: alignment, >= 1
 * @event: its ALLOC event
 * @lo: first time step (the run of ALLOCs it is allocated in)
 * @hi: one past its last step: the runs of ALLOCs begun before its FREE
 *	(@lo and @hi mirrored while the solver's time runs backwards)
 * @ahi: in ALLOC order, one past the last buffer allocated while it lives
 */
struct solve_buf {
	uint64_t size;
	uint64_t align;
	uint32_t event;
	uint32_t lo;
	uint32_t hi;
	uint32_t ahi;
};

/**
 * struct solve_node - one node of a segment tree
 * @mn: the minimum of its range (its own @ad included)
 * @mx: the maximum of its range
 * @ad: what was added to its whole range (a leaf: its value)
 */
struct solve_node {
	uint64_t mn;
	uint64_t mx;
	uint64_t ad;
};

/**
 * struct solve_tree - segment tree over the steps: range add, min, max
 * @n: nodes, heap order (root 1, leaves from @leaves)
 * @leaves: leaves, a power of two >= the steps
 * @steps: steps; the leaves beyond hold no value
 */
struct solve_tree {
	struct solve_node *n;
	uint32_t leaves;
	uint32_t steps;
};

/**
 * struct solve_frame - one node of the depth-first search
 * @y0: the floor of the segment filled ([@a, @b))
 * @raise: what this node raised [@a, @b) by (its waste branch), or
 *	[@a, @c) (under the buffer it placed at @c), 0 if none
 * @a: first step of the segment filled: the lowest (the leftmost run of
 *	steps at the lowest floor) or a valley (solve_valley(), solve_focus())
 * @b: one past its last step
 * @c: step whose candidates are being tried
 * @it: the candidate last tried (list order), or the list head of @c
 * @cur: the buffer this node placed, SOLVE_NONE if none
 * @prev: the buffer last tried (dominance), SOLVE_NONE if none
 * @pick: the candidate tried first out of order, SOLVE_NONE if none
 * @side: 0 fill the segment from its first step, 1 from its last
 * @phase: 0 buffers at @a (or ending at @b), 1 at @c > @a, 2 waste, 3 done
 * @cl: first step its failures so far depend on (backjumping, solve_dfs())
 * @cr: one past the last; @cl >= @cr while none
 */
struct solve_frame {
	uint64_t y0;
	uint64_t raise;
	uint32_t a;
	uint32_t b;
	uint32_t c;
	uint32_t it;
	uint32_t cur;
	uint32_t prev;
	uint32_t pick;
	int side;
	int phase;
	uint32_t cl;
	uint32_t cr;
};

/**
 * struct solve_up - the deepest search path at a target above the bound
 * @f: its frames (as struct solver's @path)
 * @len: frames on @f
 * @cap: room on @f
 * @placed: buffers placed along it
 * @reversed: the direction of time it was found in
 * @target: the target it was found at: it holds for any target as high
 */
struct solve_up {
	struct solve_frame *f;
	uint32_t len;
	uint32_t cap;
	uint32_t placed;
	int reversed;
	uint64_t target;
};

/**
 * struct solver - search state
 * @b: buffers, in ALLOC order
 * @m: buffers
 * @steps: time steps (runs of ALLOCs)
 * @nxt: candidate lists (solve_lists()): side 0 per first step, side 1 per
 *	last step, of the unplaced buffers (heads at @m + step), longest
 *	lifetime first, then largest; circular, doubly linked
 * @prv: the other direction of @nxt
 * @order: the buffers in @nxt's order, per direction of time (@reversed)
 *	and side, sorted once: each restart that turns time around relinks
 *	the lists from them
 * @off: per buffer, its offset while placed, else UINT64_MAX
 * @part: the deepest partial plan of the searches with a target (offsets,
 *	UINT64_MAX where unplaced)
 * @part_placed: buffers placed in @part
 * @part_done: @part_placed when @part was last completed (solve_complete())
 * @path: the search path (frames: what each placed or gave up) to the
 *	deepest partial plan at the lower bound; it holds for any target, and
 *	later restarts may begin below a prefix of it
 * @path_len: frames on @path
 * @path_cap: room on @path
 * @path_placed: buffers placed along @path
 * @path_reversed: @reversed when @path was taken
 * @path_time: solve_now() when @path last grew
 * @base_len: frames replayed before this search (its base)
 * @base: the path they were replayed from: @path or @up.f
 * @up: the deepest path at a target above the bound not reached
 *	(solve_save_up()); restarts above the bound may begin below it
 * @up_kept: @up as it was before the current target (solve_search())
 * @floor: per step, the top of what was placed (or given up) there, as a
 *	tree (range add, min) when there are more than SOLVE_SCAN_STEPS steps,
 *	else none (@floor.n NULL: @vals is scanned)
 * @reach: scratch: per step, the @stamp of the last chain search reaching it
 * @stamp: the current chain search
 * @dfs: scratch: the stack of solve_follows(), 2 * (@steps + 1)
 * @vals: per step, its floor (as @floor; read in O(1))
 * @bmin: per block of SOLVE_BLOCK steps, its lowest floor, or UINT64_MAX
 *	until it is scanned again (without @floor.n: the scan for the lowest
 *	segment reads these first)
 * @edge: bit per step, set where a run of equal floors begins (at step 0,
 *	and at @steps as the end of the last)
 * @cover: scratch: per step, bytes of the buffers within a valley
 * @kvals: per step, its key: its floor plus the bytes of the unplaced
 *	buffers live there (no completion has a lower peak than their maximum)
 * @full: steps whose key is at or above @target (none to spare)
 * @over: steps whose key is above @target (the branch ends)
 * @spare: some step has bytes to spare (solve_kvals())
 * @stack: the search path
 * @depth: frames on @stack
 * @cap: room on @stack
 * @placed: buffers placed
 * @best: best plan so far (offset per buffer)
 * @best_peak: its peak
 * @target: plans with a key above it are pruned
 * @lb: the lower bound the search stops at
 * @rng: PRNG state (seeded from the instance)
 * @shuffle: percent of the nodes trying a random candidate first
 * @policy: 1 for the portfolio's second search (solve_restarts())
 * @sweep: at the lower bound, fill the leftmost valley (solve_sweep()),
 *	not the one with the fewest candidates
 * @guide: above the bound, try first the candidate whose offset in @best
 *	is nearest the floor (solve_shuffle())
 * @reversed: time runs backwards (solve_reverse())
 * @nodes: nodes visited
 * @node_limit: this search stops (as on time out) at this many nodes
 * @deadline: this thread's CPU seconds (CLOCK_THREAD_CPUTIME_ID)
 * @clock_mask: the clock is read every @clock_mask + 1 nodes
 * @stop: end this search: a plan found or out of nodes or time
 * @found: this search found a plan within @target
 * @timeout: this search ran out of nodes or time
 * @zob: XOR of @zkey over the placed buffers
 * @prof: sum over the steps of floor[t] times a random weight (the weights
 *	of steps in forward time, whichever way it runs)
 * @zkey: per buffer, a random key
 * @rpre: prefix sums of the random step weights, @steps + 1 of them
 * @tt: the states proven to have no completion (solve_tt_store()): a hash
 *	of @zob and @prof, the highest target proven so, and the steps the
 *	proof depends on (forward time; low and high 32 bits)
 * @tt_mask: entries in @tt minus one (a power of two minus one)
 * @key: the segment's first event: the same segment in both searches of
 *	the portfolio (their buffers and steps are numbered alike)
 */
struct solver {
	struct solve_buf *b;
	uint32_t m;
	uint32_t steps;
	uint32_t *nxt[2];
	uint32_t *prv[2];
	uint32_t *order[2][2];
	uint64_t *off;
	uint64_t *part;
	uint32_t part_placed;
	uint32_t part_done;
	struct solve_frame *path;
	uint32_t path_len;
	uint32_t path_cap;
	uint32_t path_placed;
	int path_reversed;
	double path_time;
	uint32_t base_len;
	const struct solve_frame *base;
	struct solve_up up;
	struct solve_up up_kept;
	struct solve_tree floor;
	uint32_t *reach;
	uint32_t stamp;
	uint32_t *dfs;
	uint64_t *vals;
	uint64_t *bmin;
	uint64_t *edge;
	uint64_t *cover;
	uint64_t *kvals;
	uint32_t full;
	uint32_t over;
	int spare;
	struct solve_frame *stack;
	uint32_t depth;
	uint32_t cap;
	uint32_t placed;
	uint64_t *best;
	uint64_t best_peak;
	uint64_t target;
	uint64_t lb;
	uint64_t rng;
	unsigned int shuffle;
	int policy;
	int sweep;
	int guide;
	int reversed;
	uint64_t nodes;
	uint64_t node_limit;
	double deadline;
	uint64_t clock_mask;
	int stop;
	int found;
	int timeout;
	uint64_t zob;
	uint64_t prof;
	uint64_t *zkey;
	uint64_t *rpre;
	uint64_t *tt;
	uint64_t tt_mask;
	const void *key;
};

/*
 * Set when the other search of the portfolio (svod_plan_solve()) has
 * proven its plan optimal: this one has nothing left to find.
 */
static __thread atomic_int *solve_done;

/**
 * struct solve_share - the deepest path at the lower bound, between the
 *	two searches of the portfolio (solve_exchange())
 * @mu: guards the rest
 * @key: the segment it belongs to (struct solver's @key), NULL if none
 * @path: its frames (as struct solver's @path)
 * @len: frames on @path
 * @cap: room on @path
 * @placed: buffers placed along it
 * @reversed: the direction of time it was found in
 * @adopted: paths taken from the other search (tools/plan's check)
 */
struct solve_share {
	pthread_mutex_t mu;
	const void *key;
	struct solve_frame *path;
	uint32_t len;
	uint32_t cap;
	uint32_t placed;
	int reversed;
	uint32_t adopted;
};

/* This thread's search shares its path there, if it has a partner. */
static __thread struct solve_share *solve_shared;

#ifdef SOLVE_TEST
/*
 * tools/plan's check (a build with SOLVE_TEST): paths one search took from
 * the other in the last svod_plan_solve(), and frames replayed so far that
 * did not fit the state they were replayed on (solve_replay()), runs of
 * equal floors found from the edge bits (solve_run()) and those of them
 * that a scan of the floors finds otherwise.
 */
uint32_t solve_test_adopted;
atomic_uint solve_test_bad;
atomic_ulong solve_test_runs;
atomic_uint solve_test_run_bad;
#endif

#ifdef SOLVE_NODE_CLOCK
/*
 * tools/plan's check (a build with SOLVE_NODE_CLOCK): the clock reads this
 * thread's nodes, a million a second, so that a run is the same search
 * every time.
 */
static __thread uint64_t solve_clock_nodes;
#define SOLVE_TICK()	(solve_clock_nodes++)
#else
#define SOLVE_TICK()	((void)0)
#endif

/*
 * The clock: past every deadline (SOLVE_NEVER) once @solve_done is set,
 * so every search stops as on time out; a dive without a deadline (and
 * without a plan to fall back on) still runs to its end.
 */
static double solve_now(void)
{
	struct timespec ts;

	if (solve_done && atomic_load_explicit(solve_done, memory_order_relaxed))
		return SOLVE_NEVER;
#ifdef SOLVE_NODE_CLOCK
	(void)ts;
	return solve_clock_nodes / 1e6;
#else
	/*
	 * The search's own CPU time, not the wall clock: a budget buys the
	 * same search on an idle and on a loaded machine (a descheduled
	 * thread's clock stands still), so its plan does not depend on what
	 * else runs. Every search reads only its own thread's clock.
	 */
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
#endif
}

static uint64_t solve_round_up(uint64_t v, uint64_t align)
{
	uint64_t r = v % align;

	return r ? v + (align - r) : v;
}

static uint64_t solve_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t solve_min(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static uint64_t solve_max(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* xorshift64*: the search's only randomness, seeded from the instance. */
static uint64_t solve_rand(struct solver *s)
{
	s->rng ^= s->rng >> 12;
	s->rng ^= s->rng << 25;
	s->rng ^= s->rng >> 27;
	return s->rng * 0x2545F4914F6CDD1DULL;
}

/* A tree over @steps values @val (all 0 if NULL). */
static int tree_init(struct solve_tree *t, uint32_t steps, const uint64_t *val)
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

static void tree_free(struct solve_tree *t)
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
static uint32_t tree_argmin(const struct solve_tree *t)
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
static uint32_t tree_above(const struct solve_tree *t, uint32_t l, uint64_t y)
{
	uint32_t r = tree_above_node(t, 1, 0, t->leaves, l, y, 0);

	return r == SOLVE_NONE ? t->steps : r;
}

/* Is any byte to spare (a key below the target)? Before solve_slack(). */
static void solve_kvals(struct solver *s)
{
	s->spare = s->full < s->steps;
}

/* Bytes to spare at step @t (after solve_kvals()). */
static uint64_t solve_slack(const struct solver *s, uint32_t t)
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
static uint64_t solve_hash(const struct solver *s)
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
static int solve_tt_failed(const struct solver *s, uint32_t *cl, uint32_t *cr)
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
static void solve_tt_store(struct solver *s, uint32_t cl, uint32_t cr)
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
static uint32_t solve_edge_next(const struct solver *s, uint32_t t)
{
	uint32_t w = t / 64;
	uint64_t x = s->edge[w] & (~0ULL << (t % 64));

	while (!x)
		x = s->edge[++w];
	return w * 64 + (uint32_t)__builtin_ctzll(x);
}

/* The last edge at or before step @t. */
static uint32_t solve_edge_prev(const struct solver *s, uint32_t t)
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
static void solve_kcount(struct solver *s)
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
static void solve_place(struct solver *s, uint32_t i, uint64_t y0)
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
static void solve_waste(struct solver *s, uint32_t a, uint32_t b, uint64_t d)
{
	solve_floor_add(s, a, b, d);
	solve_kadd(s, a, b, d);
	solve_prof(s, a, b, d);
}

/* Undo what frame @f did last. */
static void solve_undo(struct solver *s, struct solve_frame *f)
{
	if (f->raise)
		solve_waste(s, f->a, f->cur != SOLVE_NONE ? f->c : f->b, -f->raise);
	if (f->cur != SOLVE_NONE)
		solve_unplace(s, f->cur, f->y0);
	f->cur = SOLVE_NONE;
	f->raise = 0;
}

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
static void solve_shuffle(struct solver *s, struct solve_frame *f)
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
static int solve_next(struct solver *s, struct solve_frame *f)
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
static int solve_valleys(struct solver *s, const struct solve_frame *f)
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
static void solve_valley(struct solver *s, struct solve_frame *f)
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
static void solve_sweep(const struct solver *s, struct solve_frame *f)
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
static void solve_lowest(struct solver *s, struct solve_frame *f)
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
static void solve_focus(struct solver *s, struct solve_frame *f, const struct solve_frame *up)
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
static int solve_path_room(struct solve_frame **path, uint32_t *cap, uint32_t n)
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
static int solve_dfs(struct solver *s)
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

static void solve_free(struct solver *s)
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
static __thread const struct solver *solve_sort_ctx;

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
static int solve_init(struct solver *s, const struct svod_plan_event *ev, uint32_t n,
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
static int solve_reverse(struct solver *s)
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
static int solve_alloc(struct solver *s)
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

/*
 * An ALLOC is malformed where its size (at least @block_size) plus its
 * alignment minus one, rounded up to the granule of its TLSF bucket, does
 * not fit in 64 bits: the ioctl's rule, with the reference's 32
 * second-level buckets (SOLVE_L2_BITS). Reported after solve_pair()'s
 * errors, as SVOD_PLAN_BEST does.
 */
static int solve_check_sizes(const struct svod_plan_event *ev, uint32_t n,
			     uint64_t block_size, uint32_t *failed)
{
	uint64_t need, align, granule;
	uint32_t i;
	int msb;

	for (i = 0; i < n; i++) {
		if (ev[i].op != SVOD_PLAN_ALLOC)
			continue;
		need = solve_max(ev[i].size, block_size);
		align = solve_max(ev[i].align, 1);
		if (need > UINT64_MAX - (align - 1)) {
			*failed = i;
			return -EINVAL;
		}
		need += align - 1;
		msb = 64 - __builtin_clzll(need);
		granule = msb > SOLVE_L2_BITS ? 1ULL << (msb - SOLVE_L2_BITS) : 1;
		if (need > UINT64_MAX - (granule - 1)) {
			*failed = i;
			return -EINVAL;
		}
	}
	return 0;
}

/* The ALLOC whose end is the plan's peak (the first such), else ~0U. */
static uint32_t solve_highest(const struct svod_plan_event *ev, uint32_t n,
			      uint64_t block_size, const uint64_t *offsets, uint64_t peak)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (ev[i].op == SVOD_PLAN_ALLOC && offsets[i] != SVOD_PLAN_NO_OFFSET &&
		    offsets[i] + solve_max(ev[i].size, block_size) == peak)
			return i;
	return UINT32_MAX;
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
static int solve_complete(struct solver *s, unsigned int bits)
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
static int solve_search(struct solver *s, double seconds)
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
