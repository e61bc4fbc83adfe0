// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * svod planner: checks and pairs the event list, runs the reference TLSF
 * (tlsf.c) and, for SVOD_PLAN_BEST, skyline passes: the buffers are
 * rectangles (time steps x bytes) packed bottom-up, always into a lowest
 * segment of the skyline, from its first step (the "best fit" of skyline
 * strip packing, Burke, Kendall & Whitwell, Operations Research 52(4),
 * 2004, turned to rectangles whose time is fixed). Up to
 * SVOD_PLAN_SKY_PASSES passes within a fixed number of steps vary the
 * pick (direction of time, random ties, the best pass redone up to its
 * first waste); Documentation/planner.rst has the measurements.
 *
 * Locking: none; see plan.h.
 */
#include "plan.h"
#include "tlsf.h"

/* Id-table slot states besides "live since event N". */
#define SVOD_PLAN_SLOT_EMPTY	U32_MAX
#define SVOD_PLAN_SLOT_DEAD	(U32_MAX - 1)

/**
 * struct svod_plan_slot - one entry of the id table (open addressing)
 * @id: buffer id
 * @ev: index of the live ALLOC of @id, SVOD_PLAN_SLOT_DEAD once freed, or
 *	SVOD_PLAN_SLOT_EMPTY for an unused slot
 */
struct svod_plan_slot {
	u32 id;
	u32 ev;
};

/**
 * struct svod_plan_ctx - one planning call
 * @p: parameters
 * @ev: events
 * @n: number of events
 * @valid: events before the first malformed one (== @n if none)
 * @bad_err: errno of event @valid when @valid < @n
 * @pair: per event: FREE: index of its ALLOC; ALLOC: index of its FREE, or
 *	@n if never freed
 * @nr_allocs: ALLOC events among the first @valid
 * @max_live: most buffers live at once among the first @valid events
 * @lower_bound: most requested bytes live at once, saturating
 * @gfp: allocation flags
 */
struct svod_plan_ctx {
	const struct svod_plan_params *p;
	const struct svod_plan_event *ev;
	u32 n;
	u32 valid;
	int bad_err;
	u32 *pair;
	u32 nr_allocs;
	u32 max_live;
	u64 lower_bound;
	gfp_t gfp;
};

/**
 * struct svod_plan_ids - the id table
 * @slots: direct-mapped by id when the ids are dense (below 4 slots per
 *	event), else a linear-probing hash table at most half full
 * @bits: 0 when direct-mapped, else log2 of the number of hash slots
 * @key: odd multiplier of the hash, random in the kernel, so that no
 *	chosen set of ids can make the probes long
 */
struct svod_plan_ids {
	struct svod_plan_slot *slots;
	unsigned int bits;
	u64 key;
};

static int svod_plan_ids_init(struct svod_plan_ids *t, const struct svod_plan_event *ev,
			      u32 n, gfp_t gfp)
{
	u64 nr_slots, max_id = 0, i;

	for (i = 0; i < n; i++)
		if (ev[i].id > max_id)
			max_id = ev[i].id;
	*t = (struct svod_plan_ids){ .key = svod_plan_hash_key() };
	if (max_id < 4ULL * n) {
		nr_slots = max_id + 1;
	} else {
		t->bits = fls64(n) + 1;
		nr_slots = 1ULL << t->bits;
	}
	t->slots = kvmalloc_array(nr_slots, sizeof(*t->slots), gfp);
	if (!t->slots)
		return -ENOMEM;
	for (i = 0; i < nr_slots; i++)
		t->slots[i].ev = SVOD_PLAN_SLOT_EMPTY;
	return 0;
}

static struct svod_plan_slot *svod_plan_ids_find(struct svod_plan_ids *t, u32 id)
{
	u32 mask = (1U << t->bits) - 1, i;

	if (!t->bits)
		return &t->slots[id];
	i = (id * t->key) >> (64 - t->bits);
	while (t->slots[i].ev != SVOD_PLAN_SLOT_EMPTY && t->slots[i].id != id)
		i = (i + 1) & mask;
	return &t->slots[i];
}

static int svod_plan_check_event(const struct svod_plan_event *e,
				 struct svod_plan_slot *s)
{
	if (e->op == SVOD_PLAN_ALLOC)
		return s->ev < SVOD_PLAN_SLOT_DEAD ? -EINVAL : 0;
	if (e->op != SVOD_PLAN_FREE || e->size || e->align)
		return -EINVAL;
	return s->ev < SVOD_PLAN_SLOT_DEAD ? 0 : -EINVAL;
}

/*
 * Pair every FREE with its ALLOC through an id table, stop at the first
 * malformed event (unknown op, nonzero FREE fields, ALLOC of a live id,
 * FREE of an unknown or freed id), and count what the later passes size
 * their memory by.
 */
static int svod_plan_pair(struct svod_plan_ctx *c)
{
	struct svod_plan_ids ids;
	struct svod_plan_slot *s;
	u64 live_bytes = 0;
	bool saturated = false;
	u32 i, live = 0;
	int err;

	err = svod_plan_ids_init(&ids, c->ev, c->n, c->gfp);
	if (err)
		return err;

	for (i = 0; i < c->n; i++) {
		const struct svod_plan_event *e = &c->ev[i];

		if (i % SVOD_PLAN_YIELD_EVENTS == SVOD_PLAN_YIELD_EVENTS - 1) {
			err = svod_yield();
			if (err)
				goto free_ids;
		}
		s = svod_plan_ids_find(&ids, e->id);
		c->bad_err = svod_plan_check_event(e, s);
		if (c->bad_err)
			break;
		if (e->op == SVOD_PLAN_ALLOC) {
			s->id = e->id;
			s->ev = i;
			c->pair[i] = c->n;
			c->nr_allocs++;
			c->max_live = max(c->max_live, ++live);
			if (check_add_overflow(live_bytes, e->size, &live_bytes))
				saturated = true;
			c->lower_bound = saturated ? U64_MAX : max(c->lower_bound, live_bytes);
		} else {
			c->pair[i] = s->ev;
			c->pair[s->ev] = i;
			live_bytes -= c->ev[s->ev].size;
			s->ev = SVOD_PLAN_SLOT_DEAD;
			live--;
		}
	}
	c->valid = i;

free_ids:
	kvfree(ids.slots);
	return err;
}

/* The reference TLSF over the well-formed events, in order. */
static int svod_plan_tlsf(struct svod_plan_ctx *c, u64 *offsets, u64 *peak, u32 *failed)
{
	const struct svod_plan_params *p = c->p;
	struct svod_tlsf_block **blk;
	struct svod_tlsf t;
	int err;
	u32 i;

	blk = kvmalloc_array(max(c->valid, 1U), sizeof(*blk), c->gfp);
	if (!blk)
		return -ENOMEM;
	err = svod_tlsf_init(&t, p->arena_size, p->block_size, p->lv2_cnt,
			     c->max_live, c->gfp);
	if (err)
		goto free_blk;

	for (i = 0; i < c->valid; i++) {
		const struct svod_plan_event *e = &c->ev[i];

		if (i % SVOD_PLAN_YIELD_EVENTS == SVOD_PLAN_YIELD_EVENTS - 1) {
			err = svod_yield();
			if (err)
				break;
		}
		if (e->op == SVOD_PLAN_FREE) {
			svod_tlsf_free(&t, blk[c->pair[i]]);
			continue;
		}
		err = svod_tlsf_alloc(&t, e->size, e->align, &blk[i]);
		if (err)
			break;
		offsets[i] = blk[i]->start;
	}
	if (err)
		*failed = i;
	*peak = t.peak;

	svod_tlsf_fini(&t);
free_blk:
	kvfree(blk);
	return err;
}

/**
 * struct svod_plan_item - one buffer for SVOD_PLAN_BEST
 * @size: bytes it occupies: max(size, block_size)
 * @align: alignment, >= 1
 * @offset: where the current pass placed it
 * @first: index of its ALLOC event
 * @lo: its first time step (see svod_plan_items_init())
 * @hi: one past its last time step
 */
struct svod_plan_item {
	u64 size;
	u64 align;
	u64 offset;
	u32 first;
	u32 lo;
	u32 hi;
};

/*
 * Buffers in ALLOC order, with their time steps: a step is a run of ALLOC
 * events with no FREE between them, and a buffer is live in steps [lo, hi)
 * from the run of its ALLOC to the last run begun before its FREE (or the
 * last run). Two buffers share time exactly when their steps meet. @item
 * (one per event) gets each ALLOC's buffer index. Return: the number of
 * steps.
 */
static u32 svod_plan_items_init(struct svod_plan_ctx *c, struct svod_plan_item *items,
				u32 *item)
{
	u32 i, k = 0, steps = 0;
	bool in_run = false;

	for (i = 0; i < c->n; i++) {
		const struct svod_plan_event *e = &c->ev[i];

		if (e->op != SVOD_PLAN_ALLOC) {
			items[item[c->pair[i]]].hi = steps;
			in_run = false;
			continue;
		}
		if (!in_run)
			steps++;
		in_run = true;
		item[i] = k;
		items[k++] = (struct svod_plan_item){
			.size = max(e->size, c->p->block_size),
			.align = max(e->align, 1ULL),
			.first = i,
			.lo = steps - 1,
			.hi = U32_MAX,
		};
	}
	for (i = 0; i < k; i++)
		if (items[i].hi == U32_MAX)
			items[i].hi = steps;
	return steps;
}

/**
 * struct svod_plan_seg - a run of time steps at one height of the skyline
 * @level: the highest end placed in its steps
 * @start: its first step
 * @end: one past its last step
 * @prev: the segment before it, or U32_MAX
 * @next: the segment after it, or U32_MAX
 */
struct svod_plan_seg {
	u64 level;
	u32 start;
	u32 end;
	u32 prev;
	u32 next;
};

/**
 * struct svod_plan_dir - the buffers in one direction of time
 * @ord: buffer indices by (first step, last step, size, ALLOC event): their
 *	rank
 * @hi: per rank, one past the buffer's last step
 * @first: per step, the first rank starting there (@first[steps] = m)
 * @rank: per buffer, its rank
 */
struct svod_plan_dir {
	u32 *ord;
	u32 *hi;
	u32 *first;
	u32 *rank;
};

/**
 * struct svod_plan_sky - state of the skyline passes
 * @items: the buffers
 * @m: number of buffers
 * @steps: number of time steps
 * @dir: the buffers forwards (0) and backwards in time (1)
 * @d: the direction of this pass
 * @down: union-find over rank + 1: the nearest unplaced rank at or below,
 *	0 when none
 * @up: the same upwards, @m + 1 when none
 * @leaves: power of two >= @steps
 * @minhi: tree over the steps: the earliest end among the unplaced
 *	buffers starting there, U32_MAX when none; node 1 the root
 * @seg: the segments, a list from step 0 to the last
 * @nr_seg: segments in use
 * @cur: the segment the last decision left (the search for the next
 *	local minimum starts there)
 * @log: this pass's decisions: per step of the pass, the buffer placed or
 *	U32_MAX for a raise
 * @best_log: the decisions of the best pass so far
 * @waste: the first decision of this pass that wasted bytes (a raise, or a
 *	buffer starting after its segment's first step), or its number of
 *	decisions if none did
 * @best_waste: the same for the best pass
 * @replay: this pass repeats the first @replay decisions of the best one
 * @noise: random tie-breaks and one pick in 20 at random
 * @best_d: direction of the best pass (index into @dir)
 * @rng: xorshift64 state, fixed seed: plans are deterministic
 * @ticks: steps since the last svod_yield()
 */
struct svod_plan_sky {
	struct svod_plan_item *items;
	u32 m;
	u32 steps;
	struct svod_plan_dir dir[2];
	struct svod_plan_dir *d;
	u32 *down;
	u32 *up;
	u32 leaves;
	u32 *minhi;
	struct svod_plan_seg *seg;
	u32 nr_seg;
	u32 cur;
	u32 *log;
	u32 *best_log;
	u32 waste;
	u32 best_waste;
	u32 replay;
	bool noise;
	u32 best_d;
	u64 rng;
	u32 ticks;
};

/*
 * Segments and decisions a skyline pass may need: a placement splits off
 * at most two segments, a raise merges at least one away.
 */
#define SVOD_PLAN_SKY_SEGS(m)	(2 * (size_t)(m) + 2)
#define SVOD_PLAN_SKY_LOG(m)	(3 * (size_t)(m) + 2)
/* Candidates one pick weighs, from the one that ends last. */
#define SVOD_PLAN_SKY_SCAN	16
/* Skyline passes per plan: at most this many, and about this many steps. */
#define SVOD_PLAN_SKY_PASSES	1024
#define SVOD_PLAN_SKY_WORK	BIT(19)

/* Passes within SVOD_PLAN_SKY_WORK steps: 1 to SVOD_PLAN_SKY_PASSES. */
static u32 svod_plan_sky_passes(const struct svod_plan_sky *k)
{
	u32 passes = SVOD_PLAN_SKY_WORK / max(k->m, 1U);

	return clamp_t(u32, passes, 1, SVOD_PLAN_SKY_PASSES);
}

static u64 svod_plan_sky_rand(struct svod_plan_sky *k)
{
	k->rng ^= k->rng << 13;
	k->rng ^= k->rng >> 7;
	k->rng ^= k->rng << 17;
	return k->rng;
}

/* Buffer @i's first step and end in direction @back. */
static u32 svod_plan_lo(const struct svod_plan_sky *k, u32 i, bool back)
{
	return back ? k->steps - k->items[i].hi : k->items[i].lo;
}

static u32 svod_plan_hi(const struct svod_plan_sky *k, u32 i, bool back)
{
	return back ? k->steps - k->items[i].lo : k->items[i].hi;
}

/*
 * A local minimum of the skyline: a segment lower than both neighbours
 * (neighbours are never level: they merge), the one downhill of the last
 * change. The walk passes over fewer segments than there are decisions in
 * practice (0.7 per decision on a 1M-event random trace).
 */
static u32 svod_plan_sky_lowest(struct svod_plan_sky *k)
{
	u32 i = k->cur;

	while (k->seg[i].prev != U32_MAX && k->seg[k->seg[i].prev].level < k->seg[i].level)
		i = k->seg[i].prev;
	while (k->seg[i].next != U32_MAX && k->seg[k->seg[i].next].level < k->seg[i].level)
		i = k->seg[i].next;
	return i;
}

/* Union-find: the representative of @x, compressing the path. */
static u32 svod_plan_find(u32 *p, u32 x)
{
	u32 r = x, t;

	while (p[r] != r)
		r = p[r];
	for (; p[x] != r; x = t) {
		t = p[x];
		p[x] = r;
	}
	return r;
}

/* Set the tree's leaf of step @s to the earliest end left there. */
static void svod_plan_sky_minhi(struct svod_plan_sky *k, u32 s)
{
	u32 r = svod_plan_find(k->up, k->d->first[s] + 1) - 1, u = s + k->leaves;

	k->minhi[u] = r < k->d->first[s + 1] ? k->d->hi[r] : U32_MAX;
	for (u >>= 1; u; u >>= 1)
		k->minhi[u] = min(k->minhi[2 * u], k->minhi[2 * u + 1]);
}

/*
 * The unplaced buffer starting at step @s that ends last but by step @b
 * (the largest on a tie): its rank, or U32_MAX when none ends by @b.
 */
static u32 svod_plan_sky_fit(struct svod_plan_sky *k, u32 s, u32 b)
{
	u32 lo = k->d->first[s], hi = k->d->first[s + 1], mid, r;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (k->d->hi[mid] <= b)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Rank lo - 1 ends by b; down[] is indexed by rank + 1. */
	r = svod_plan_find(k->down, lo);
	return r > k->d->first[s] ? r - 1 : U32_MAX;
}

/* The next candidate below rank @r at step @s, or U32_MAX. */
static u32 svod_plan_sky_below(struct svod_plan_sky *k, u32 s, u32 r)
{
	r = svod_plan_find(k->down, r);
	return r > k->d->first[s] ? r - 1 : U32_MAX;
}

/* The first step in [@a, @b) where a buffer ending by @b starts, or U32_MAX. */
static u32 svod_plan_sky_first_fit(struct svod_plan_sky *k, u32 a, u32 b)
{
	u32 l = a + k->leaves, r = b + k->leaves, u = U32_MAX, stack[64], sp = 0;

	/* Most often the first step itself. */
	if (a < b && k->minhi[l] <= b)
		return a;
	/* The range's tree nodes left to right: left ones now, right ones stacked. */
	for (; l < r; l >>= 1, r >>= 1) {
		if ((l & 1) && u == U32_MAX && k->minhi[l] <= b)
			u = l;
		l += l & 1;
		if (r & 1)
			stack[sp++] = --r;
	}
	while (u == U32_MAX && sp) {
		r = stack[--sp];
		if (k->minhi[r] <= b)
			u = r;
	}
	if (u == U32_MAX)
		return U32_MAX;
	while (u < k->leaves)
		u = k->minhi[2 * u] <= b ? 2 * u : 2 * u + 1;
	return u - k->leaves;
}

/*
 * The key of rank @r (starting at step @s) in segment @i: what placing it
 * there leaves. Its end meeting the segment's leaves no gap at its end;
 * its top meeting the level before it flattens the skyline, and one below
 * that level needs another buffer starting at @s.
 */
static u32 svod_plan_sky_key(struct svod_plan_sky *k, u32 i, u32 r, u32 s)
{
	const struct svod_plan_seg *sg = &k->seg[i];
	const struct svod_plan_item *it = &k->items[k->d->ord[r]];
	u64 top = svod_round_up(sg->level, it->align) + it->size, before;
	u32 hi = k->d->hi[r], key = 0;

	if (hi == sg->end) {
		key += 4;
		if (sg->next != U32_MAX && k->seg[sg->next].level == top)
			key += 2;
	}
	if (s == sg->start && sg->prev != U32_MAX) {
		before = k->seg[sg->prev].level;
		if (before == top)
			key += 3;
		else if (before < top)
			key += 1;
		else if (svod_plan_find(k->up, k->d->first[s] + 1) !=
			 svod_plan_find(k->down, k->d->first[s + 1]))
			key += 2;
	}
	return key;
}

/*
 * The buffer to place at step @s of segment @i: among the first
 * SVOD_PLAN_SKY_SCAN that end by the segment's end, latest end first, the
 * one with the highest key (with @noise: ties broken at random, and one
 * pick in 20 made at random), other than @avoid unless that is the only
 * one. Its rank, or U32_MAX when none ends by the segment's end.
 */
static u32 svod_plan_sky_pick(struct svod_plan_sky *k, u32 i, u32 s, u32 avoid)
{
	u32 r = svod_plan_sky_fit(k, s, k->seg[i].end), best = U32_MAX, n;
	u64 key, best_key = 0, rnd;
	u8 tie, best_tie = 0;
	bool avoided = false;

	for (n = 0; r != U32_MAX && n < SVOD_PLAN_SKY_SCAN; n++) {
		key = svod_plan_sky_key(k, i, r, s);
		tie = 0;
		if (k->noise) {
			rnd = svod_plan_sky_rand(k);
			tie = rnd;
			if ((rnd >> 8) % 20 == 0)
				key = U64_MAX;
		}
		avoided |= r == avoid;
		if (r != avoid && (best == U32_MAX || key > best_key ||
				   (key == best_key && tie > best_tie))) {
			best = r;
			best_key = key;
			best_tie = tie;
		}
		r = svod_plan_sky_below(k, s, r);
	}
	/* The only buffer that fits: a raise instead would waste bytes. */
	return best == U32_MAX && avoided ? avoid : best;
}

/* Mark rank @r (starting at step @s) placed. */
static void svod_plan_sky_take(struct svod_plan_sky *k, u32 r, u32 s)
{
	k->down[r + 1] = r;
	k->up[r + 1] = r + 2;
	svod_plan_sky_minhi(k, s);
}

/* Merge segment @i into its neighbour @into; both are at one level. */
static void svod_plan_sky_merge(struct svod_plan_sky *k, u32 i, u32 into)
{
	struct svod_plan_seg *a = &k->seg[i], *b = &k->seg[into];

	if (b->next == i) {
		b->end = a->end;
		b->next = a->next;
		if (a->next != U32_MAX)
			k->seg[a->next].prev = into;
	} else {
		b->start = a->start;
		b->prev = a->prev;
		if (a->prev != U32_MAX)
			k->seg[a->prev].next = into;
	}
}

/* Merge segment @i with its neighbours at its level; the walk goes on from it. */
static void svod_plan_sky_settle(struct svod_plan_sky *k, u32 i)
{
	u32 n = k->seg[i].prev;

	if (n != U32_MAX && k->seg[n].level == k->seg[i].level) {
		svod_plan_sky_merge(k, i, n);
		i = n;
	}
	n = k->seg[i].next;
	if (n != U32_MAX && k->seg[n].level == k->seg[i].level)
		svod_plan_sky_merge(k, n, i);
	k->cur = i;
}

/* A new segment [@start, @end) at @level after segment @prev. */
static u32 svod_plan_sky_new(struct svod_plan_sky *k, u32 prev, u32 start, u32 end, u64 level)
{
	u32 i = k->nr_seg++, next = k->seg[prev].next;

	k->seg[i] = (struct svod_plan_seg){ level, start, end, prev, next };
	k->seg[prev].next = i;
	if (next != U32_MAX)
		k->seg[next].prev = i;
	return i;
}

/*
 * Place rank @r, steps [@s, hi), inside the low segment @i: at the
 * segment's level (aligned). The segment splits into what is left of it on
 * each side and the buffer's steps, which merge with a neighbour at their
 * new level. Return: the buffer's end, U64_MAX if it overflows.
 */
static u64 svod_plan_sky_place(struct svod_plan_sky *k, u32 i, u32 r, u32 s)
{
	struct svod_plan_item *it = &k->items[k->d->ord[r]];
	u64 level = k->seg[i].level, top;
	u32 end = k->seg[i].end, hi = k->d->hi[r], mid = i;

	it->offset = svod_round_up(level, it->align);
	if (check_add_overflow(it->offset, it->size, &top) || top == U64_MAX)
		return U64_MAX;
	if (s > k->seg[i].start) {
		k->seg[i].end = s;
		mid = svod_plan_sky_new(k, i, s, hi, top);
	} else {
		k->seg[i].end = hi;
		k->seg[i].level = top;
	}
	if (hi < end)
		svod_plan_sky_new(k, mid, hi, end, level);
	svod_plan_sky_settle(k, mid);
	return top;
}

/*
 * Nothing fits segment @i: raise it to its lower neighbour. (A segment
 * without neighbours spans every step, so the unplaced buffers' steps lie
 * in it and one of them fits.)
 */
static void svod_plan_sky_raise(struct svod_plan_sky *k, u32 i)
{
	u32 p = k->seg[i].prev, n = k->seg[i].next;

	k->seg[i].level = min(p != U32_MAX ? k->seg[p].level : U64_MAX,
			      n != U32_MAX ? k->seg[n].level : U64_MAX);
	svod_plan_sky_settle(k, i);
}

static void svod_plan_sky_reset(struct svod_plan_sky *k)
{
	u32 s, i;

	for (i = 0; i <= k->m + 1; i++) {
		if (i <= k->m)
			k->down[i] = i;
		k->up[i] = i;
	}
	for (s = 0; s < k->leaves; s++)
		k->minhi[k->leaves + s] = s < k->steps && k->d->first[s] < k->d->first[s + 1] ?
					  k->d->hi[k->d->first[s]] : U32_MAX;
	for (s = k->leaves - 1; s; s--)
		k->minhi[s] = min(k->minhi[2 * s], k->minhi[2 * s + 1]);
	k->seg[0] = (struct svod_plan_seg){ 0, 0, k->steps, U32_MAX, U32_MAX };
	k->nr_seg = 1;
	k->cur = 0;
	k->waste = U32_MAX;
}

/*
 * Decision @t of a pass in segment @i: the rank to place and its first
 * step (@s), or U32_MAX to raise the segment. The first @k->replay
 * decisions repeat the best pass's.
 */
static u32 svod_plan_sky_decide(struct svod_plan_sky *k, u32 i, u32 t, u32 *s)
{
	bool back = k->d == &k->dir[1];
	u32 r, avoid, b = t <= k->replay && k->replay ? k->best_log[t] : U32_MAX;

	if (t < k->replay) {
		if (b == U32_MAX)
			return U32_MAX;
		*s = svod_plan_lo(k, b, back);
		return k->d->rank[b];
	}
	/* At the replay point, another choice than the best pass's. */
	avoid = b != U32_MAX ? k->d->rank[b] : U32_MAX;
	*s = k->seg[i].start;
	r = svod_plan_sky_pick(k, i, *s, avoid);
	if (r != U32_MAX)
		return r;
	*s = svod_plan_sky_first_fit(k, *s + 1, k->seg[i].end);
	if (*s == U32_MAX)
		return U32_MAX;
	r = svod_plan_sky_pick(k, i, *s, avoid);
	if (r != U32_MAX && k->waste == U32_MAX)
		k->waste = t;
	return r;
}

/*
 * One skyline pass: always at a segment of the skyline lower than both its
 * neighbours, a buffer that starts at its first step and ends within it:
 * the buffer that covers that corner in a packing without a hole there.
 * Else a buffer starting further in the segment (the first step where one
 * ends within it); else the segment is raised to its lower neighbour
 * (wasted bytes). Every decision places a buffer or removes a segment:
 * O(m log m).
 * Return: 0, -ERANGE if an end overflows, -EINTR.
 */
static int svod_plan_sky_pass(struct svod_plan_sky *k, u64 *offsets, u64 *peak, u32 *failed)
{
	u32 left = k->m, i, r, s = 0, t;
	u64 top;
	int err;

	svod_plan_sky_reset(k);
	*peak = 0;
	for (t = 0; left; t++) {
		if (++k->ticks == SVOD_PLAN_YIELD_EVENTS) {
			k->ticks = 0;
			err = svod_yield();
			if (err)
				return err;
		}
		i = svod_plan_sky_lowest(k);
		r = svod_plan_sky_decide(k, i, t, &s);
		k->log[t] = r == U32_MAX ? U32_MAX : k->d->ord[r];
		if (r == U32_MAX) {
			if (k->waste == U32_MAX)
				k->waste = t;
			svod_plan_sky_raise(k, i);
			continue;
		}
		svod_plan_sky_take(k, r, s);
		top = svod_plan_sky_place(k, i, r, s);
		if (top == U64_MAX)
			return -ERANGE;
		offsets[k->items[k->d->ord[r]].first] = k->items[k->d->ord[r]].offset;
		if (top > *peak) {
			*peak = top;
			*failed = k->items[k->d->ord[r]].first;
		}
		left--;
	}
	if (k->waste == U32_MAX)
		k->waste = t;
	return 0;
}

/*
 * Pass @p's settings: the first two are plain (forwards, backwards); then
 * each is at random either a fresh pass (direction in turn, with noise)
 * or the best pass so far up to a random decision before its first waste,
 * with another choice there (when there is one) and noise after.
 */
static void svod_plan_sky_setup(struct svod_plan_sky *k, u32 p)
{
	u64 rnd = svod_plan_sky_rand(k);

	k->noise = p >= 2;
	k->replay = 0;
	if (p < 2 || rnd % 2) {
		k->d = &k->dir[p % 2];
		return;
	}
	k->d = &k->dir[k->best_d];
	k->replay = k->best_waste ? (u32)((rnd >> 1) % k->best_waste) : 0;
}

/*
 * The skyline passes within their budget (SVOD_PLAN_SKY_WORK steps, at
 * most SVOD_PLAN_SKY_PASSES passes): the best plan in @offsets, @scratch
 * for the others. The best has the lowest peak, then the latest first
 * waste; the passes stop at the lower bound @lb. A pass whose end
 * overflows is dropped; -ERANGE only when every pass overflowed.
 */
static int svod_plan_sky_best(struct svod_plan_sky *k, u64 lb, u32 n, u64 *offsets,
			      u64 *scratch, u64 *peak, u32 *failed)
{
	u32 passes = svod_plan_sky_passes(k), p, f = U32_MAX, *t;
	u64 pk;
	int err;

	*peak = U64_MAX;
	for (p = 0; p < passes && (!p || *peak > lb); p++) {
		svod_plan_sky_setup(k, p);
		err = svod_plan_sky_pass(k, scratch, &pk, &f);
		if (err == -ERANGE)
			continue;
		if (err)
			return err;
		if (pk < *peak || (pk == *peak && k->waste > k->best_waste)) {
			*peak = pk;
			*failed = f;
			memcpy(offsets, scratch, sizeof(*offsets) * n);
			t = k->log;
			k->log = k->best_log;
			k->best_log = t;
			k->best_waste = k->waste;
			k->best_d = k->d - k->dir;
		}
	}
	return *peak == U64_MAX ? -ERANGE : 0;
}

/**
 * struct svod_plan_rkey - what a direction sorts its buffers by
 * @lo: first step
 * @hi: one past the last step
 * @size: bytes
 * @first: ALLOC event
 * @idx: buffer index
 */
struct svod_plan_rkey {
	u32 lo;
	u32 hi;
	u64 size;
	u32 first;
	u32 idx;
};

static int svod_plan_rkey_cmp(const void *a, const void *b)
{
	const struct svod_plan_rkey *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->hi != y->hi)
		return x->hi < y->hi ? -1 : 1;
	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

/* Rank the buffers in direction @back (forwards or backwards in time). */
static void svod_plan_dir_init(struct svod_plan_sky *k, bool back, struct svod_plan_rkey *key)
{
	struct svod_plan_dir *d = &k->dir[back];
	u32 i, s;

	for (i = 0; i < k->m; i++)
		key[i] = (struct svod_plan_rkey){
			svod_plan_lo(k, i, back), svod_plan_hi(k, i, back),
			k->items[i].size, k->items[i].first, i,
		};
	sort(key, k->m, sizeof(*key), svod_plan_rkey_cmp, NULL);
	for (i = 0, s = 0; i < k->m; i++) {
		d->ord[i] = key[i].idx;
		d->hi[i] = key[i].hi;
		d->rank[key[i].idx] = i;
		for (; s <= key[i].lo; s++)
			d->first[s] = i;
	}
	for (; s <= k->steps; s++)
		d->first[s] = k->m;
}

static void svod_plan_sky_free(struct svod_plan_sky *k)
{
	u32 d;

	for (d = 0; d < 2; d++) {
		kvfree(k->dir[d].ord);
		kvfree(k->dir[d].hi);
		kvfree(k->dir[d].first);
		kvfree(k->dir[d].rank);
	}
	kvfree(k->down);
	kvfree(k->up);
	kvfree(k->minhi);
	kvfree(k->seg);
	kvfree(k->log);
	kvfree(k->best_log);
	kvfree(k->items);
}

/*
 * The buffers of @c with their steps, memory, and the ranks of both
 * directions (backwards only when there is more than one pass).
 */
static int svod_plan_sky_init(struct svod_plan_sky *k, struct svod_plan_ctx *c)
{
	size_t m = max(c->nr_allocs, 1U);
	struct svod_plan_rkey *key;
	gfp_t gfp = c->gfp;
	u32 d, dirs, *item;
	bool ok = true;

	*k = (struct svod_plan_sky){ .m = c->nr_allocs, .leaves = 1,
				     .rng = 0x9e3779b97f4a7c15ULL };
	k->items = kvmalloc_array(m, sizeof(*k->items), gfp);
	item = kvmalloc_array(max(c->n, 1U), sizeof(*item), gfp);
	if (!k->items || !item) {
		kvfree(item);
		kvfree(k->items);
		return -ENOMEM;
	}
	k->steps = svod_plan_items_init(c, k->items, item);
	kvfree(item);
	while (k->leaves < k->steps)
		k->leaves <<= 1;
	dirs = svod_plan_sky_passes(k) > 1 ? 2 : 1;
	for (d = 0; d < dirs; d++) {
		k->dir[d].ord = kvmalloc_array(m, sizeof(u32), gfp);
		k->dir[d].hi = kvmalloc_array(m, sizeof(u32), gfp);
		k->dir[d].rank = kvmalloc_array(m, sizeof(u32), gfp);
		k->dir[d].first = kvmalloc_array(k->steps + 1, sizeof(u32), gfp);
		ok &= k->dir[d].ord && k->dir[d].hi && k->dir[d].rank && k->dir[d].first;
	}
	k->down = kvmalloc_array(m + 1, sizeof(*k->down), gfp);
	k->up = kvmalloc_array(m + 2, sizeof(*k->up), gfp);
	k->minhi = kvmalloc_array(2 * k->leaves, sizeof(*k->minhi), gfp);
	k->seg = kvmalloc_array(SVOD_PLAN_SKY_SEGS(m), sizeof(*k->seg), gfp);
	k->log = kvmalloc_array(SVOD_PLAN_SKY_LOG(m), sizeof(*k->log), gfp);
	k->best_log = kvmalloc_array(SVOD_PLAN_SKY_LOG(m), sizeof(*k->best_log), gfp);
	key = kvmalloc_array(m, sizeof(*key), gfp);
	if (!ok || !k->down || !k->up || !k->minhi || !k->seg || !k->log || !k->best_log || !key) {
		kvfree(key);
		svod_plan_sky_free(k);
		return -ENOMEM;
	}
	for (d = 0; d < dirs; d++)
		svod_plan_dir_init(k, d, key);
	kvfree(key);
	return 0;
}

/**
 * struct svod_plan_out - a candidate plan
 * @offsets: per event
 * @peak: its peak
 * @failed: the ALLOC it placed highest
 * @used: SVOD_PLAN_USED_*
 */
struct svod_plan_out {
	u64 *offsets;
	u64 peak;
	u32 failed;
	u32 used;
};

/*
 * The skyline passes' best plan in @out (@scratch: room for another).
 * -ERANGE when an end overflows.
 */
static int svod_plan_best(struct svod_plan_ctx *c, struct svod_plan_out *out, u64 *scratch)
{
	struct svod_plan_sky k;
	int err;

	err = svod_plan_sky_init(&k, c);
	if (err)
		return err;
	err = svod_plan_sky_best(&k, c->lower_bound, c->n, out->offsets, scratch, &out->peak,
				 &out->failed);
	out->used = SVOD_PLAN_USED_SKY;
	svod_plan_sky_free(&k);
	return err;
}

/**
 * svod_plan_check_params() - the parameter errors of a plan
 * @p: the parameters
 *
 * svod_plan_run() refuses the same; callers check first so that an argument
 * error wins over every other state (memory included).
 *
 * Return: 0, or -EINVAL for arena_size or block_size 0, lv2_cnt above
 * SVOD_TLSF_MAX_LV2_CNT, or an unknown strategy.
 */
int svod_plan_check_params(const struct svod_plan_params *p)
{
	if (!p->arena_size || !p->block_size || p->lv2_cnt > SVOD_TLSF_MAX_LV2_CNT)
		return -EINVAL;
	if (p->strategy != SVOD_PLAN_TLSF && p->strategy != SVOD_PLAN_BEST)
		return -EINVAL;
	return 0;
}

static void svod_plan_clear(u64 *offsets, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++)
		offsets[i] = SVOD_PLAN_NO_OFFSET;
}

/*
 * SVOD_PLAN_BEST: the skyline plan unless TLSF fits with a lower peak (or
 * a skyline end overflowed). Malformed events are reported first: the
 * skyline needs the whole trace.
 */
static int svod_plan_run_best(struct svod_plan_ctx *c, u64 *offsets,
			      struct svod_plan_result *res)
{
	struct svod_plan_out best = { .failed = U32_MAX };
	u32 tlsf_failed = U32_MAX;
	int tlsf_err, err;
	u64 tlsf_peak;

	if (c->valid < c->n) {
		res->failed_event = c->valid;
		return c->bad_err;
	}
	tlsf_err = svod_plan_tlsf(c, offsets, &tlsf_peak, &tlsf_failed);
	if (tlsf_err && tlsf_err != -ENOSPC) {
		res->failed_event = tlsf_failed;
		return tlsf_err;
	}

	best.offsets = kvmalloc_array(2 * (size_t)max(c->n, 1U), sizeof(u64), c->gfp);
	if (!best.offsets)
		return -ENOMEM;
	svod_plan_clear(best.offsets, 2 * c->n);
	err = svod_plan_best(c, &best, best.offsets + c->n);
	if (err && err != -ERANGE)
		goto free_best;
	if (!err && best.peak > c->p->arena_size)
		err = -ENOSPC;

	if (!tlsf_err && (err || tlsf_peak < best.peak)) {
		res->used = SVOD_PLAN_USED_TLSF;
		res->peak = tlsf_peak;
		err = 0;
	} else if (!err) {
		res->used = best.used;
		res->peak = best.peak;
		memcpy(offsets, best.offsets, sizeof(*offsets) * c->n);
	} else if (err == -ENOSPC) {
		res->peak = best.peak;
		res->failed_event = best.failed;
	} else {
		/* An end overflowed, TLSF does not fit: TLSF's failure. */
		res->peak = tlsf_peak;
		res->failed_event = tlsf_failed;
		err = tlsf_err;
	}

free_best:
	kvfree(best.offsets);
	return err;
}

/**
 * svod_plan_run() - plan an arena for an event list
 * @p: parameters (see struct svod_plan_params)
 * @ev: @n events in schedule order
 * @n: number of events, at most SVOD_PLAN_MAX_EVENTS
 * @offsets: @n entries, out: the offset of each ALLOC event,
 *	SVOD_PLAN_NO_OFFSET for each FREE event. On failure: with
 *	SVOD_PLAN_TLSF, what TLSF placed before @res->failed_event;
 *	otherwise all SVOD_PLAN_NO_OFFSET. Untouched only when @n is above
 *	SVOD_PLAN_MAX_EVENTS (-E2BIG).
 * @res: out: peak, lower bound, failing event, strategy used. On -ENOSPC
 *	the peak is how far the failed plan reached: TLSF's peak before the
 *	failing event, or the arena size the skyline plan would need
 * @gfp: flags for the planner's temporary memory (GFP_KERNEL_ACCOUNT when
 *	planning for userspace); all of it is freed before returning
 *
 * SVOD_PLAN_TLSF processes the events in order, as the reference does, and
 * fails at the first event that is malformed or does not fit.
 * SVOD_PLAN_BEST checks every event first, then returns the best of the
 * skyline passes (each O(m log m) for m ALLOCs; at most
 * SVOD_PLAN_SKY_PASSES of them and SVOD_PLAN_SKY_WORK placements in all,
 * but always one; deterministic), or the
 * TLSF plan where that one fits with a strictly lower peak or a skyline
 * end overflows u64.
 *
 * Context: process context; may sleep. Gives up the CPU every
 * SVOD_PLAN_YIELD_EVENTS steps and stops on a fatal signal.
 * Return: 0; -EINVAL for bad parameters (@res->failed_event U32_MAX) or a
 * malformed event (unknown op, FREE with nonzero size or align, ALLOC of a
 * live id, FREE of an unknown or already freed id, ALLOC whose size plus
 * alignment overflows); -ENOSPC when the plan does not fit the arena;
 * -E2BIG for more than SVOD_PLAN_MAX_EVENTS events; -ENOMEM; -EINTR on a fatal
 * signal.
 */
int svod_plan_run(const struct svod_plan_params *p, const struct svod_plan_event *ev,
		  u32 n, u64 *offsets, struct svod_plan_result *res, gfp_t gfp)
{
	struct svod_plan_ctx c = { .p = p, .ev = ev, .n = n, .gfp = gfp };
	u32 failed = U32_MAX;
	int err;

	*res = (struct svod_plan_result){ .failed_event = U32_MAX,
					   .used = SVOD_PLAN_USED_TLSF };
	if (n > SVOD_PLAN_MAX_EVENTS)
		return -E2BIG;
	svod_plan_clear(offsets, n);
	err = svod_plan_check_params(p);
	if (err)
		return err;

	c.pair = kvmalloc_array(max(n, 1U), sizeof(*c.pair), gfp);
	if (!c.pair)
		return -ENOMEM;
	err = svod_plan_pair(&c);
	if (err)
		goto free_pair;
	res->lower_bound = c.lower_bound;

	if (p->strategy == SVOD_PLAN_BEST) {
		err = svod_plan_run_best(&c, offsets, res);
		if (err)
			svod_plan_clear(offsets, n);
		goto free_pair;
	}

	err = svod_plan_tlsf(&c, offsets, &res->peak, &failed);
	if (err) {
		res->failed_event = failed;
	} else if (c.valid < n) {
		res->failed_event = c.valid;
		err = c.bad_err;
	}

free_pair:
	kvfree(c.pair);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(svod_plan_run);
