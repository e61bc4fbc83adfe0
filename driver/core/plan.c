// SPDX-License-Identifier: GPL-2.0
/*
 * svod planner: checks and pairs the event list, runs the reference TLSF
 * (tlsf.c) and, for SVOD_PLAN_BEST, offline greedy best-gap placements by
 * size and by size times lifetime (TFLite's arena planner; Pisarchyk & Lee,
 * "Efficient Memory Management for Deep Neural Net Inference", 2020), over
 * a segment tree of the time slots so that a buffer only meets the placed
 * buffers it shares time with.
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

/*
 * Set up the id table for @n events; *@max_live gets the most buffers live
 * at once before the first malformed event, or more: ALLOCs minus FREEs
 * (never below zero), a running count exact up to that event.
 */
static int svod_plan_ids_init(struct svod_plan_ids *t, const struct svod_plan_event *ev,
			      u32 n, u32 *max_live, gfp_t gfp)
{
	u64 nr_slots, max_id = 0, i;
	u32 live = 0, most = 0, a;

	for (i = 0; i < n; i++) {
		if (ev[i].id > max_id)
			max_id = ev[i].id;
		a = ev[i].op == SVOD_PLAN_ALLOC;
		live += a;
		live -= (a ^ 1) & (live != 0);
		most = max(most, live);
	}
	*max_live = most;
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

static void svod_plan_clear(u64 *offsets, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++)
		offsets[i] = SVOD_PLAN_NO_OFFSET;
}

/**
 * struct svod_plan_live - running totals of the pairing
 * @bytes: requested bytes live now (wrapped once saturated)
 * @nr: buffers live now
 * @saturated: @bytes overflowed once: the lower bound is U64_MAX
 */
struct svod_plan_live {
	u64 bytes;
	u32 nr;
	bool saturated;
};

/*
 * Check event @i against the id table and record it: an ALLOC takes its
 * id's slot (which then names event @i), a FREE releases it; the counts
 * and the lower bound follow. Return: 0, or -EINVAL (nothing recorded).
 */
static inline int svod_plan_step(struct svod_plan_ctx *c, struct svod_plan_ids *ids,
				 struct svod_plan_live *l, u32 i, u32 *alloc_ev)
{
	const struct svod_plan_event *e = &c->ev[i];
	struct svod_plan_slot *s = svod_plan_ids_find(ids, e->id);
	int err = svod_plan_check_event(e, s);

	if (err)
		return err;
	if (e->op == SVOD_PLAN_ALLOC) {
		s->id = e->id;
		s->ev = i;
		c->nr_allocs++;
		c->max_live = max(c->max_live, ++l->nr);
		if (check_add_overflow(l->bytes, e->size, &l->bytes))
			l->saturated = true;
		c->lower_bound = l->saturated ? U64_MAX : max(c->lower_bound, l->bytes);
		*alloc_ev = i;
	} else {
		*alloc_ev = s->ev;
		l->bytes -= c->ev[s->ev].size;
		s->ev = SVOD_PLAN_SLOT_DEAD;
		l->nr--;
	}
	return 0;
}

/*
 * Pair every FREE with its ALLOC through an id table, stop at the first
 * malformed event (unknown op, nonzero FREE fields, ALLOC of a live id,
 * FREE of an unknown or freed id), and count what the later passes size
 * their memory by.
 */
static int svod_plan_pair(struct svod_plan_ctx *c)
{
	struct svod_plan_live l = {};
	struct svod_plan_ids ids;
	u32 i, a, most;
	int err;

	err = svod_plan_ids_init(&ids, c->ev, c->n, &most, c->gfp);
	if (err)
		return err;

	for (i = 0; i < c->n; i++) {
		if (i % SVOD_PLAN_YIELD_EVENTS == SVOD_PLAN_YIELD_EVENTS - 1) {
			err = svod_yield();
			if (err)
				goto free_ids;
		}
		c->bad_err = svod_plan_step(c, &ids, &l, i, &a);
		if (c->bad_err)
			break;
		c->pair[i] = c->ev[i].op == SVOD_PLAN_ALLOC ? c->n : a;
		if (a != i)
			c->pair[a] = i;
	}
	c->valid = i;

free_ids:
	kvfree(ids.slots);
	return err;
}

/*
 * SVOD_PLAN_TLSF in one pass: pair each event and run it through TLSF at
 * once (the block of a live ALLOC is found through its event), stopping at
 * the first malformed event or allocation failure; after a failure the
 * pairing alone goes on, for the lower bound and the first malformed
 * event. Offsets are written as the events go, NO_OFFSET from the stop on.
 */
static int svod_plan_tlsf_fused(struct svod_plan_ctx *c, u64 *offsets,
				struct svod_plan_result *res)
{
	const struct svod_plan_params *p = c->p;
	struct svod_tlsf_block **blk;
	struct svod_plan_live l = {};
	struct svod_plan_ids ids;
	struct svod_tlsf t;
	int err, terr = 0;
	u32 i, a, most;

	blk = kvmalloc_array(max(c->n, 1U), sizeof(*blk), c->gfp);
	if (!blk)
		return -ENOMEM;
	err = svod_plan_ids_init(&ids, c->ev, c->n, &most, c->gfp);
	if (err)
		goto free_blk;
	err = svod_tlsf_init(&t, p->arena_size, p->block_size, p->lv2_cnt, most, c->gfp);
	if (err)
		goto free_ids;

	for (i = 0; i < c->n; i++) {
		const struct svod_plan_event *e = &c->ev[i];

		if (i % SVOD_PLAN_YIELD_EVENTS == SVOD_PLAN_YIELD_EVENTS - 1) {
			err = svod_yield();
			if (err)
				goto fini;
		}
		c->bad_err = svod_plan_step(c, &ids, &l, i, &a);
		if (c->bad_err)
			break;
		if (terr)
			continue;
		if (e->op == SVOD_PLAN_FREE) {
			svod_tlsf_free(&t, blk[a]);
			offsets[i] = SVOD_PLAN_NO_OFFSET;
			continue;
		}
		terr = svod_tlsf_alloc(&t, e->size, e->align, &blk[i]);
		if (terr) {
			res->failed_event = i;
			svod_plan_clear(offsets + i, c->n - i);
			continue;
		}
		offsets[i] = blk[i]->start;
	}
	c->valid = i;
	res->peak = t.peak;
	if (!terr) {
		svod_plan_clear(offsets + i, c->n - i);
		if (c->valid < c->n) {
			res->failed_event = c->valid;
			terr = c->bad_err;
		}
	}
	err = terr;

fini:
	svod_tlsf_fini(&t);
free_ids:
	kvfree(ids.slots);
free_blk:
	kvfree(blk);
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
 * @key: what the greedy order sorts by, largest first
 * @offset: where it was placed
 * @first: index of its ALLOC event
 * @lo: its ALLOC's rank among the ALLOCs (its first time slot)
 * @hi: ALLOCs before its FREE (or in the trace): it is live in slots
 *	[@lo, @hi), and two buffers share time exactly when their slots meet
 */
struct svod_plan_item {
	u64 size;
	u64 align;
	u64 key;
	u64 offset;
	u32 first;
	u32 lo;
	u32 hi;
};

/**
 * struct svod_plan_span - a placed buffer as a gap search sees it
 * @start: its offset
 * @end: its offset plus size (U64_MAX if that overflows)
 */
struct svod_plan_span {
	u64 start;
	u64 end;
};

/**
 * struct svod_plan_entry - a placed buffer filed under a tree node
 * @span: where it was placed
 * @lo: its first time slot
 * @next: the next entry of the node, or U32_MAX
 */
struct svod_plan_entry {
	struct svod_plan_span span;
	u32 lo;
	u32 next;
};

/**
 * struct svod_plan_greedy - state of the greedy placement
 * @items: the buffers
 * @m: number of buffers (= time slots)
 * @leaves: power of two >= @m: a segment tree over the time slots, node 1
 *	the root, node @leaves + t the slot t
 * @head: per node, the first entry of the buffers filed there: a placed
 *	buffer is filed under the O(log m) nodes whose slots tile its lifetime
 * @busy: per node, some node of its subtree has entries
 * @seen: per node, the last gather that visited it
 * @ent: the entries
 * @nr_ent: entries used
 * @cap_ent: entries allocated; the placement gives up beyond
 * @spans: the buffers one gather collected
 * @stamp: the current gather
 * @qlo: its first slot: a buffer is collected at the one node of its
 *	tiling that holds slot max(@qlo, its first slot), so exactly once
 * @levels: log2(@leaves)
 * @work: nodes and entries visited so far
 * @budget: the placement gives up when @work exceeds 2^24 plus its share
 *	for the buffers placed so far, which keeps its cost O(m log m)
 * @sky: per node of the same tree, the skyline pass's highest end placed
 *	in its slots (max of @tag over the node and its subtree)
 * @tag: per node, the highest end placed over all of its slots at once
 * @heap: the skyline pass's unplaced buffers, a binary min-heap by
 *	(@floor, index)
 * @floor: per buffer, a lower bound of the lowest offset it can take
 */
struct svod_plan_greedy {
	struct svod_plan_item *items;
	u32 m;
	u32 leaves;
	u32 *head;
	u8 *busy;
	u32 *seen;
	struct svod_plan_entry *ent;
	u64 nr_ent;
	u64 cap_ent;
	struct svod_plan_span *spans;
	u32 stamp;
	u32 qlo;
	u32 levels;
	u64 work;
	u64 budget;
	u64 *sky;
	u64 *tag;
	u32 *heap;
	u64 *floor;
};

/* Work per buffer and per tree level the greedy placement may spend. */
#define SVOD_PLAN_WORK_PER_LEVEL	8
/* Greedy orders BEST tries. */
#define SVOD_PLAN_NR_ORDERS		2
/* Most buffers the skyline passes run for. */
#define SVOD_PLAN_SKY_MAX_ITEMS		65536
/* Most skyline passes per plan, and their heap steps in all. */
#define SVOD_PLAN_SKY_PASSES		256
#define SVOD_PLAN_SKY_WORK		BIT(22)
/* Entries per buffer the tree may hold before the placement gives up. */
#define SVOD_PLAN_ENTRIES_PER_ITEM	16

static int svod_plan_key_cmp(const void *a, const void *b)
{
	const struct svod_plan_item *x = a, *y = b;

	if (x->key != y->key)
		return x->key > y->key ? -1 : 1;
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

static int svod_plan_span_cmp(const void *a, const void *b)
{
	const struct svod_plan_span *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Insertion sort by start: gathers are mostly short. */
static void svod_plan_span_isort(struct svod_plan_span *s, u32 k)
{
	struct svod_plan_span v;
	u32 i, j;

	for (i = 1; i < k; i++) {
		v = s[i];
		for (j = i; j && s[j - 1].start > v.start; j--)
			s[j] = s[j - 1];
		s[j] = v;
	}
}

/* Collect the buffers filed under node @u, once each (see @qlo). */
static u32 svod_plan_collect(struct svod_plan_greedy *g, u32 u, u32 k)
{
	u32 shift = g->levels + 1 - fls64(u), first = (u << shift) - g->leaves, e, p;

	for (e = g->head[u]; e != U32_MAX; e = g->ent[e].next) {
		const struct svod_plan_entry *en = &g->ent[e];

		g->work++;
		p = max(g->qlo, en->lo);
		if (p >= first && p - first < (1U << shift))
			g->spans[k++] = en->span;
	}
	return k;
}

/*
 * Collect every buffer filed at or under the canonical node @c of a query
 * (all of them live in the query's slots), and those filed at its
 * ancestors (their lifetime covers @c's slots).
 */
static u32 svod_plan_gather_node(struct svod_plan_greedy *g, u32 c, u32 k)
{
	u32 stack[64], sp = 0, u;

	for (u = c >> 1; u && g->seen[u] != g->stamp; u >>= 1) {
		g->seen[u] = g->stamp;
		g->work++;
		k = svod_plan_collect(g, u, k);
	}
	stack[sp++] = c;
	while (sp) {
		u = stack[--sp];
		g->work++;
		if (!g->busy[u])
			continue;
		k = svod_plan_collect(g, u, k);
		if (u < g->leaves) {
			stack[sp++] = 2 * u;
			stack[sp++] = 2 * u + 1;
		}
	}
	return k;
}

/* The placed buffers live in slots [lo, hi), in g->spans by offset. */
static u32 svod_plan_gather(struct svod_plan_greedy *g, u32 lo, u32 hi)
{
	u32 l = lo + g->leaves, r = hi + g->leaves, k = 0;

	g->stamp++;
	g->qlo = lo;
	for (; l < r; l >>= 1, r >>= 1) {
		if (l & 1)
			k = svod_plan_gather_node(g, l++, k);
		if (r & 1)
			k = svod_plan_gather_node(g, --r, k);
	}
	if (k > 16)
		sort(g->spans, k, sizeof(*g->spans), svod_plan_span_cmp, NULL);
	else
		svod_plan_span_isort(g->spans, k);
	/* Sorting costs k log k: a pass meeting thousands per buffer gives up. */
	g->work += (u64)k * fls64(k);
	return k;
}

/* File placed buffer @i under the nodes that tile its lifetime. */
static int svod_plan_file(struct svod_plan_greedy *g, u32 i, u64 end)
{
	const struct svod_plan_item *it = &g->items[i];
	u32 l = it->lo + g->leaves, r = it->hi + g->leaves, u, node;

	for (; l < r; l >>= 1, r >>= 1) {
		for (u = 0; u < 2; u++) {
			if (u ? !(r & 1) : !(l & 1))
				continue;
			node = u ? --r : l++;
			if (g->nr_ent == g->cap_ent)
				return -E2BIG;
			g->ent[g->nr_ent] = (struct svod_plan_entry){
				.span = { it->offset, end }, .lo = it->lo, .next = g->head[node],
			};
			g->head[node] = g->nr_ent++;
			for (; node && !g->busy[node]; node >>= 1)
				g->busy[node] = 1;
		}
	}
	return 0;
}

/*
 * The smallest gap among the @k spans (by offset) that holds @it aligned,
 * or above them all when none does.
 */
static u64 svod_plan_best_offset(const struct svod_plan_span *s, u32 k,
				 const struct svod_plan_item *it)
{
	u64 prev_end = 0, best = 0, best_gap = U64_MAX, at;
	u32 j;

	for (j = 0; j < k; j++) {
		at = svod_round_up(prev_end, it->align);
		if (s[j].start >= at && s[j].start - at >= it->size &&
		    s[j].start - prev_end < best_gap) {
			best_gap = s[j].start - prev_end;
			best = at;
		}
		prev_end = max(prev_end, s[j].end);
	}
	return best_gap != U64_MAX ? best : svod_round_up(prev_end, it->align);
}

static void svod_plan_greedy_reset(struct svod_plan_greedy *g)
{
	u32 i;

	for (i = 0; i < 2 * g->leaves; i++) {
		g->head[i] = U32_MAX;
		g->busy[i] = 0;
		g->seen[i] = 0;
	}
	g->stamp = 0;
	g->nr_ent = 0;
	g->work = 0;
}

/*
 * One greedy pass: the buffers in @g->items order, each into the smallest
 * gap among the placed buffers it shares time with (found through the
 * tree: O(log m) plus what it collects). -E2BIG when the work budget runs
 * out, so adversarial traces cost O(m log m) too; -ERANGE as soon as the
 * peak reaches @limit (the best plan so far, which it could not beat).
 */
static int svod_plan_greedy_pass(struct svod_plan_greedy *g, u64 *offsets,
				 u64 *peak, u32 *failed, u64 limit)
{
	struct svod_plan_item *it;
	u64 end, top = 0;
	u32 i, k;
	int err;

	svod_plan_greedy_reset(g);
	for (i = 0; i < g->m; i++) {
		it = &g->items[i];
		if (i % 64 == 63) {
			err = svod_yield();
			if (err)
				return err;
		}
		k = svod_plan_gather(g, it->lo, it->hi);
		/* The budget accrues per buffer placed: hopeless passes end early. */
		if (g->work > g->budget / g->m * (i + 1) + BIT(24))
			return -E2BIG;
		it->offset = svod_plan_best_offset(g->spans, k, it);
		if (check_add_overflow(it->offset, it->size, &end))
			end = U64_MAX;
		err = svod_plan_file(g, i, end);
		if (err)
			return err;
		if (end > top) {
			top = end;
			*failed = it->first;
			/* It cannot beat the plan it would have to beat. */
			if (top >= limit)
				return -ERANGE;
		}
		offsets[it->first] = it->offset;
	}
	*peak = top;
	return 0;
}

/* Raise the skyline to @v over slots [lo, hi) (@v is above all of it). */
static void svod_plan_sky_raise(struct svod_plan_greedy *g, u32 lo, u32 hi, u64 v)
{
	u32 l = lo + g->leaves, r = hi + g->leaves, u;

	for (; l < r; l >>= 1, r >>= 1) {
		if (l & 1) {
			g->tag[l] = v;
			g->sky[l++] = v;
		}
		if (r & 1) {
			g->tag[--r] = v;
			g->sky[r] = v;
		}
	}
	for (u = (lo + g->leaves) >> 1; u; u >>= 1)
		g->sky[u] = max(g->sky[u], v);
	for (u = (hi - 1 + g->leaves) >> 1; u; u >>= 1)
		g->sky[u] = max(g->sky[u], v);
}

/*
 * The skyline's highest point over slots [lo, hi): the nodes that tile the
 * range, and the tags of their ancestors, all ancestors of slot lo or hi-1.
 */
static u64 svod_plan_sky_max(const struct svod_plan_greedy *g, u32 lo, u32 hi)
{
	u32 l = lo + g->leaves, r = hi + g->leaves, u;
	u64 v = 0;

	for (; l < r; l >>= 1, r >>= 1) {
		if (l & 1)
			v = max(v, g->sky[l++]);
		if (r & 1)
			v = max(v, g->sky[--r]);
	}
	for (u = (lo + g->leaves) >> 1; u; u >>= 1)
		v = max(v, g->tag[u]);
	for (u = (hi - 1 + g->leaves) >> 1; u; u >>= 1)
		v = max(v, g->tag[u]);
	return v;
}

static bool svod_plan_heap_less(const struct svod_plan_greedy *g, u32 a, u32 b)
{
	return g->floor[a] < g->floor[b] || (g->floor[a] == g->floor[b] && a < b);
}

/* Restore the heap of @nr entries below position @k. */
static void svod_plan_heap_down(struct svod_plan_greedy *g, u32 nr, u32 k)
{
	u32 v = g->heap[k], c;

	for (; (c = 2 * k + 1) < nr; k = c) {
		if (c + 1 < nr && svod_plan_heap_less(g, g->heap[c + 1], g->heap[c]))
			c++;
		if (!svod_plan_heap_less(g, g->heap[c], v))
			break;
		g->heap[k] = g->heap[c];
	}
	g->heap[k] = v;
}

/*
 * One skyline pass: always at the lowest offset any unplaced buffer can
 * take (the highest end placed over its lifetime, aligned), the first
 * buffer in @g->items order that can go there. A packing in this canonical
 * form exists at every peak a packing exists, and filling the lowest
 * valley first is how a tiling is rebuilt. Floors in the heap are lower
 * bounds (placements only raise them): a buffer whose floor rose is put
 * back, else it is the lowest. O(log m) per heap step, at most @budget
 * steps (-E2BIG); -ERANGE if an end overflows.
 */
static int svod_plan_sky_pass(struct svod_plan_greedy *g, u64 *offsets, u64 *peak,
			      u32 *failed, u64 budget)
{
	struct svod_plan_item *it;
	u32 nr = g->m, i, done = 0;
	u64 f, end, top = 0;
	int err;

	for (i = 0; i < 2 * g->leaves; i++) {
		g->sky[i] = 0;
		g->tag[i] = 0;
	}
	for (i = 0; i < g->m; i++) {
		g->heap[i] = i;
		g->floor[i] = 0;
	}
	g->work = 0;
	while (nr) {
		i = g->heap[0];
		it = &g->items[i];
		if (++g->work > budget)
			return -E2BIG;
		f = svod_round_up(svod_plan_sky_max(g, it->lo, it->hi), it->align);
		if (f > g->floor[i]) {
			g->floor[i] = f;
			svod_plan_heap_down(g, nr, 0);
			continue;
		}
		g->heap[0] = g->heap[--nr];
		svod_plan_heap_down(g, nr, 0);
		if (check_add_overflow(f, it->size, &end) || end == U64_MAX)
			return -ERANGE;
		it->offset = f;
		offsets[it->first] = f;
		svod_plan_sky_raise(g, it->lo, it->hi, end);
		if (end > top) {
			top = end;
			*failed = it->first;
		}
		if (++done % 64 == 0) {
			err = svod_yield();
			if (err)
				return err;
		}
	}
	*peak = top;
	return 0;
}

/* The key of buffer @it for greedy order @used (SVOD_PLAN_USED_*). */
static u64 svod_plan_key(const struct svod_plan_item *it, u32 used)
{
	u64 len = it->hi - it->lo;

	if (used == SVOD_PLAN_USED_SIZE)
		return it->size;
	return it->size > U64_MAX / len ? U64_MAX : it->size * len;
}

/* Buffers in ALLOC order, with their time slots. */
static void svod_plan_items_init(struct svod_plan_ctx *c, struct svod_plan_item *items)
{
	u32 i, k = 0, lo, hi, mid;

	for (i = 0; i < c->n; i++) {
		const struct svod_plan_event *e = &c->ev[i];

		if (e->op != SVOD_PLAN_ALLOC)
			continue;
		items[k] = (struct svod_plan_item){
			.size = max(e->size, c->p->block_size),
			.align = max(e->align, 1ULL),
			.first = i,
			.lo = k,
		};
		k++;
	}
	/* hi: the ALLOCs before the FREE, by binary search over first. */
	for (i = 0; i < k; i++) {
		u32 last = c->pair[items[i].first];

		lo = i + 1;
		hi = k;
		while (lo < hi) {
			mid = lo + (hi - lo) / 2;
			if (items[mid].first < last)
				lo = mid + 1;
			else
				hi = mid;
		}
		items[i].hi = lo;
	}
}

static void svod_plan_greedy_free(struct svod_plan_greedy *g)
{
	kvfree(g->items);
	kvfree(g->head);
	kvfree(g->busy);
	kvfree(g->seen);
	kvfree(g->ent);
	kvfree(g->spans);
	kvfree(g->sky);
	kvfree(g->tag);
	kvfree(g->heap);
	kvfree(g->floor);
}

static int svod_plan_greedy_init(struct svod_plan_greedy *g, struct svod_plan_ctx *c)
{
	u32 m = c->nr_allocs;

	*g = (struct svod_plan_greedy){ .m = m, .leaves = 1 };
	while (g->leaves < m) {
		g->leaves <<= 1;
		g->levels++;
	}
	g->cap_ent = (u64)SVOD_PLAN_ENTRIES_PER_ITEM * m + 64;
	g->budget = (u64)SVOD_PLAN_WORK_PER_LEVEL * max(m, 1U) * (fls64(m) + 1);
	g->items = kvmalloc_array(max(m, 1U), sizeof(*g->items), c->gfp);
	g->head = kvmalloc_array(2 * g->leaves, sizeof(*g->head), c->gfp);
	g->busy = kvmalloc_array(2 * g->leaves, sizeof(*g->busy), c->gfp);
	g->seen = kvmalloc_array(2 * g->leaves, sizeof(*g->seen), c->gfp);
	g->ent = kvmalloc_array(g->cap_ent, sizeof(*g->ent), c->gfp);
	g->spans = kvmalloc_array(max(m, 1U), sizeof(*g->spans), c->gfp);
	g->sky = kvmalloc_array(2 * g->leaves, sizeof(*g->sky), c->gfp);
	g->tag = kvmalloc_array(2 * g->leaves, sizeof(*g->tag), c->gfp);
	g->heap = kvmalloc_array(max(m, 1U), sizeof(*g->heap), c->gfp);
	g->floor = kvmalloc_array(max(m, 1U), sizeof(*g->floor), c->gfp);
	if (!g->items || !g->head || !g->busy || !g->seen || !g->ent || !g->spans ||
	    !g->sky || !g->tag || !g->heap || !g->floor) {
		svod_plan_greedy_free(g);
		return -ENOMEM;
	}
	svod_plan_items_init(c, g->items);
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

/* Keep the plan in @scratch in @out if it is the first or lower. */
static void svod_plan_keep(struct svod_plan_ctx *c, struct svod_plan_out *out, int *ret,
			   const u64 *scratch, u64 peak, u32 failed, u32 used)
{
	if (!*ret && peak >= out->peak)
		return;
	memcpy(out->offsets, scratch, sizeof(*scratch) * c->n);
	out->peak = peak;
	out->failed = failed;
	out->used = used;
	*ret = 0;
}

/*
 * Squeaky wheel: every buffer that ended above the lower bound @lb moves
 * up the order, its key times 1 + 4 (its end - @lb) / @lb (16-bit fixed
 * point, saturating), so that the next pass places it before the buffers
 * that pushed it up.
 */
static void svod_plan_squeak(struct svod_plan_greedy *g, u64 lb)
{
	u64 end, frac, inc, rem;
	u32 i;

	for (i = 0; i < g->m; i++) {
		struct svod_plan_item *it = &g->items[i];

		if (check_add_overflow(it->offset, it->size, &end) || end <= lb)
			continue;
		frac = end - lb >= U64_MAX >> 16 ? U64_MAX :
		       div64_u64_rem((end - lb) << 18, lb, &rem);
		inc = it->key >> 16;
		if ((frac && inc > U64_MAX / frac) ||
		    check_add_overflow(it->key, max(inc * frac, 1ULL), &it->key))
			it->key = U64_MAX;
	}
}

/*
 * The greedy plans, best gap first, by size and by size times lifetime,
 * then (for at most SVOD_PLAN_SKY_MAX_ITEMS buffers) skyline passes: by
 * size times lifetime, then squeaky-wheel reorderings of it, while the
 * passes stay within SVOD_PLAN_SKY_PASSES and SVOD_PLAN_SKY_WORK heap
 * steps. @out gets the plan with the lowest peak (the earliest on a tie);
 * everything stops at the lower bound. -E2BIG when every pass ran out of
 * its work budget.
 */
static int svod_plan_best(struct svod_plan_ctx *c, struct svod_plan_out *out,
			  u64 *scratch)
{
	static const u32 orders[SVOD_PLAN_NR_ORDERS] = {
		SVOD_PLAN_USED_SIZE, SVOD_PLAN_USED_AREA,
	};
	struct svod_plan_greedy g;
	u64 peak, sky_work = 0, lb = max(c->lower_bound, 1ULL);
	u32 o, i, failed = U32_MAX;
	int err, ret = -E2BIG;

	err = svod_plan_greedy_init(&g, c);
	if (err)
		return err;
	for (o = 0; o < SVOD_PLAN_NR_ORDERS; o++) {
		if (!ret && out->peak <= c->lower_bound)
			goto out;
		for (i = 0; i < g.m; i++)
			g.items[i].key = svod_plan_key(&g.items[i], orders[o]);
		sort(g.items, g.m, sizeof(*g.items), svod_plan_key_cmp, NULL);
		err = svod_plan_greedy_pass(&g, scratch, &peak, &failed,
					    ret ? U64_MAX : out->peak);
		if (err == -E2BIG || err == -ERANGE)
			continue;
		if (err) {
			ret = err;
			goto out;
		}
		svod_plan_keep(c, out, &ret, scratch, peak, failed, orders[o]);
	}
	if (g.m > SVOD_PLAN_SKY_MAX_ITEMS)
		goto out;

	for (i = 0; i < g.m; i++)
		g.items[i].key = svod_plan_key(&g.items[i], SVOD_PLAN_USED_AREA);
	for (o = 0; o < SVOD_PLAN_SKY_PASSES; o++) {
		if (!ret && out->peak <= c->lower_bound)
			break;
		if (o)
			svod_plan_squeak(&g, lb);
		sort(g.items, g.m, sizeof(*g.items), svod_plan_key_cmp, NULL);
		err = svod_plan_sky_pass(&g, scratch, &peak, &failed,
					 SVOD_PLAN_SKY_WORK - sky_work);
		sky_work += g.work;
		if (err == -E2BIG || err == -ERANGE)
			break;
		if (err) {
			ret = err;
			break;
		}
		svod_plan_keep(c, out, &ret, scratch, peak, failed,
			       o ? SVOD_PLAN_USED_SQUEAKY : SVOD_PLAN_USED_SKY);
	}
out:
	svod_plan_greedy_free(&g);
	return ret;
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

/*
 * SVOD_PLAN_BEST: the better greedy plan unless TLSF fits with a lower
 * peak (or the greedy passes ran out of budget). Malformed events are
 * reported first: greedy needs the whole trace.
 */
static int svod_plan_run_best(struct svod_plan_ctx *c, u64 *offsets,
			      struct svod_plan_result *res)
{
	struct svod_plan_out best = { .failed = U32_MAX };
	u32 tlsf_failed = U32_MAX;
	int tlsf_err, err;
	u64 tlsf_peak = 0;

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
	if (err && err != -E2BIG)
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
		/* Greedy out of budget, TLSF does not fit: TLSF's failure. */
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
 *	failing event, or the arena size the greedy plan would need
 * @gfp: flags for the planner's temporary memory (GFP_KERNEL_ACCOUNT when
 *	planning for userspace); all of it is freed before returning
 *
 * SVOD_PLAN_TLSF processes the events in order, as the reference does, and
 * fails at the first event that is malformed or does not fit.
 * SVOD_PLAN_BEST checks every event first, then returns the better of two
 * greedy plans (by size, by size times lifetime; O(m log m) for m ALLOCs),
 * or the TLSF plan where that one fits with a strictly lower peak or the
 * greedy passes gave up (their work is capped).
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
	int err;

	*res = (struct svod_plan_result){ .failed_event = U32_MAX,
					   .used = SVOD_PLAN_USED_TLSF };
	if (n > SVOD_PLAN_MAX_EVENTS)
		return -E2BIG;
	err = svod_plan_check_params(p);
	if (err) {
		svod_plan_clear(offsets, n);
		return err;
	}
	if (p->strategy == SVOD_PLAN_TLSF) {
		err = svod_plan_tlsf_fused(&c, offsets, res);
		if (err == -ENOMEM || err == -EINTR)
			svod_plan_clear(offsets, n);
		res->lower_bound = c.lower_bound;
		return err;
	}
	svod_plan_clear(offsets, n);

	c.pair = kvmalloc_array(max(n, 1U), sizeof(*c.pair), gfp);
	if (!c.pair)
		return -ENOMEM;
	err = svod_plan_pair(&c);
	if (err)
		goto free_pair;
	res->lower_bound = c.lower_bound;

	err = svod_plan_run_best(&c, offsets, res);
	if (err)
		svod_plan_clear(offsets, n);

free_pair:
	kvfree(c.pair);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(svod_plan_run);
