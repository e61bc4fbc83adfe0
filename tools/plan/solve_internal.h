/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * What the files of libsvodplan's search share (solve.c's top comment says
 * how the search works): its limits and switches, the solver's state
 * (struct solver), the clock and small arithmetic, and the functions one
 * file calls in another. Internal: none of it is libsvodplan's API, and
 * every symbol declared here is hidden (not exported by libsvodplan.so;
 * tools/plan's Makefile makes them local in libsvodplan.a's one object).
 *
 * Source layout (Documentation/planner-search.rst, "Source layout"):
 * solve.c (entry point, time segments, portfolio), solve_input.c (input
 * checks, lower bound), solve_setup.c (a segment's solver), solve_state.c
 * (floors, keys, proven states), solve_cand.c (candidates),
 * solve_valley.c (where a node branches), solve_dfs.c (the search),
 * solve_complete.c (first-fit completion), solve_control.c (restarts,
 * bisection, the trade of paths).
 */
#ifndef SOLVE_INTERNAL_H
#define SOLVE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "libsvodplan.h"

#ifdef SOLVE_TEST
/*
 * tools/plan's check (a build with SOLVE_TEST): paths one search took from
 * the other in the last svod_plan_solve(), and frames replayed so far that
 * did not fit the state they were replayed on (solve_replay()), runs of
 * equal floors found from the edge bits (solve_run()) and those of them
 * that a scan of the floors finds otherwise.
 */
extern uint32_t solve_test_adopted;
extern atomic_uint solve_test_bad;
extern atomic_ulong solve_test_runs;
extern atomic_uint solve_test_run_bad;
#endif

#pragma GCC visibility push(hidden)

#ifdef SOLVE_NODE_CLOCK
/*
 * tools/plan's check (a build with SOLVE_NODE_CLOCK): the clock reads this
 * thread's nodes, a million a second, so that a run is the same search
 * every time.
 */
extern __thread uint64_t solve_clock_nodes;
#define SOLVE_TICK()	(solve_clock_nodes++)
#else
#define SOLVE_TICK()	((void)0)
#endif

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
 * proven its plan optimal: this one has nothing left to find (solve.c).
 */
extern __thread atomic_int *solve_done;

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

/* This thread's search shares its path there, if it has a partner (solve.c). */
extern __thread struct solve_share *solve_shared;

/* The solver whose buffers qsort()'s comparisons read (solve_setup.c). */
extern __thread const struct solver *solve_sort_ctx;

/*
 * The clock: past every deadline (SOLVE_NEVER) once @solve_done is set,
 * so every search stops as on time out; a dive without a deadline (and
 * without a plan to fall back on) still runs to its end.
 */
static inline double solve_now(void)
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

static inline uint64_t solve_round_up(uint64_t v, uint64_t align)
{
	uint64_t r = v % align;

	return r ? v + (align - r) : v;
}

static inline uint64_t solve_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static inline uint64_t solve_min(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static inline uint64_t solve_max(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* xorshift64*: the search's only randomness, seeded from the instance. */
static inline uint64_t solve_rand(struct solver *s)
{
	s->rng ^= s->rng >> 12;
	s->rng ^= s->rng << 25;
	s->rng ^= s->rng >> 27;
	return s->rng * 0x2545F4914F6CDD1DULL;
}

/* solve_state.c */
int tree_init(struct solve_tree *t, uint32_t steps, const uint64_t *val);
void tree_free(struct solve_tree *t);
uint32_t tree_argmin(const struct solve_tree *t);
uint32_t tree_above(const struct solve_tree *t, uint32_t l, uint64_t y);
void solve_kvals(struct solver *s);
uint64_t solve_slack(const struct solver *s, uint32_t t);
uint64_t solve_hash(const struct solver *s);
int solve_tt_failed(const struct solver *s, uint32_t *cl, uint32_t *cr);
void solve_tt_store(struct solver *s, uint32_t cl, uint32_t cr);
uint32_t solve_edge_next(const struct solver *s, uint32_t t);
uint32_t solve_edge_prev(const struct solver *s, uint32_t t);
void solve_kcount(struct solver *s);
void solve_place(struct solver *s, uint32_t i, uint64_t y0);
void solve_waste(struct solver *s, uint32_t a, uint32_t b, uint64_t d);
void solve_undo(struct solver *s, struct solve_frame *f);

/* solve_cand.c */
void solve_shuffle(struct solver *s, struct solve_frame *f);
int solve_next(struct solver *s, struct solve_frame *f);

/* solve_valley.c */
int solve_valleys(struct solver *s, const struct solve_frame *f);
void solve_valley(struct solver *s, struct solve_frame *f);
void solve_sweep(const struct solver *s, struct solve_frame *f);
void solve_lowest(struct solver *s, struct solve_frame *f);
void solve_focus(struct solver *s, struct solve_frame *f, const struct solve_frame *up);

/* solve_dfs.c */
int solve_path_room(struct solve_frame **path, uint32_t *cap, uint32_t n);
int solve_dfs(struct solver *s);

/* solve_setup.c */
void solve_free(struct solver *s);
int solve_init(struct solver *s, const struct svod_plan_event *ev, uint32_t n,
	       const uint32_t *last, uint64_t block_size, uint64_t *bytes);
int solve_reverse(struct solver *s);
int solve_alloc(struct solver *s);

/* solve_input.c */
int solve_pair(const struct svod_plan_event *ev, uint32_t n, uint32_t *last,
	       uint32_t *failed);
int solve_check_sizes(const struct svod_plan_event *ev, uint32_t n,
		      uint64_t block_size, uint32_t *failed);
uint32_t solve_highest(const struct svod_plan_event *ev, uint32_t n,
		       uint64_t block_size, const uint64_t *offsets, uint64_t peak);
uint64_t solve_lower_bound(const struct svod_plan_event *ev, uint32_t n,
			   const uint32_t *last);

/* solve_control.c */
void solve_hint(struct solver *s, const uint64_t *hint);
int solve_search(struct solver *s, double seconds);

/* solve_complete.c */
int solve_complete(struct solver *s, unsigned int bits);

#pragma GCC visibility pop

#endif /* SOLVE_INTERNAL_H */
