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
 * @budget: the placement gives up when @work exceeds it, which keeps its
 *	cost O(m log m)
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
};

/* Work per buffer and per tree level the greedy placement may spend. */
#define SVOD_PLAN_WORK_PER_LEVEL	48
/* Greedy orders BEST tries. */
#define SVOD_PLAN_NR_ORDERS		2
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
	g->work += k;
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
		if (g->work > g->budget)
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
	g->budget = (u64)SVOD_PLAN_WORK_PER_LEVEL * m * (fls64(m) + 1) + BIT(24);
	g->items = kvmalloc_array(max(m, 1U), sizeof(*g->items), c->gfp);
	g->head = kvmalloc_array(2 * g->leaves, sizeof(*g->head), c->gfp);
	g->busy = kvmalloc_array(2 * g->leaves, sizeof(*g->busy), c->gfp);
	g->seen = kvmalloc_array(2 * g->leaves, sizeof(*g->seen), c->gfp);
	g->ent = kvmalloc_array(g->cap_ent, sizeof(*g->ent), c->gfp);
	g->spans = kvmalloc_array(max(m, 1U), sizeof(*g->spans), c->gfp);
	if (!g->items || !g->head || !g->busy || !g->seen || !g->ent || !g->spans) {
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

/*
 * The greedy plans, best gap first, in two orders: by size, and by size
 * times lifetime; @out gets the one with the lower peak (by size on a
 * tie). -E2BIG when a pass ran out of its work budget and none finished.
 */
static int svod_plan_best(struct svod_plan_ctx *c, struct svod_plan_out *out,
			  u64 *scratch)
{
	static const u32 orders[SVOD_PLAN_NR_ORDERS] = {
		SVOD_PLAN_USED_SIZE, SVOD_PLAN_USED_AREA,
	};
	struct svod_plan_greedy g;
	u64 peak;
	u32 o, i, failed = U32_MAX;
	int err, ret = -E2BIG;

	err = svod_plan_greedy_init(&g, c);
	if (err)
		return err;
	for (o = 0; o < SVOD_PLAN_NR_ORDERS; o++) {
		for (i = 0; i < g.m; i++)
			g.items[i].key = svod_plan_key(&g.items[i], orders[o]);
		sort(g.items, g.m, sizeof(*g.items), svod_plan_key_cmp, NULL);
		err = svod_plan_greedy_pass(&g, scratch, &peak, &failed,
					    ret ? U64_MAX : out->peak);
		if (err == -E2BIG || err == -ERANGE)
			continue;
		if (err) {
			ret = err;
			break;
		}
		if (ret || peak < out->peak) {
			memcpy(out->offsets, scratch, sizeof(*scratch) * c->n);
			out->peak = peak;
			out->failed = failed;
			out->used = orders[o];
			ret = 0;
		}
	}
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

static void svod_plan_clear(u64 *offsets, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++)
		offsets[i] = SVOD_PLAN_NO_OFFSET;
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
