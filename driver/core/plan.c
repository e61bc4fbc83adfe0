// SPDX-License-Identifier: GPL-2.0
/*
 * svod planner: checks and pairs the event list, runs the reference TLSF
 * (tlsf.c) and, for SVOD_PLAN_BEST, an offline greedy-by-size placement
 * (TFLite's arena planner; Pisarchyk & Lee, "Efficient Memory Management
 * for Deep Neural Net Inference", 2020).
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
 * @first: index of its ALLOC event
 * @last: index of its FREE event, or the number of events
 * @offset: where it was placed
 * @next: index of the placed item with the next higher offset, or U32_MAX
 */
struct svod_plan_item {
	u64 size;
	u64 align;
	u32 first;
	u32 last;
	u64 offset;
	u32 next;
};

static int svod_plan_item_cmp(const void *a, const void *b)
{
	const struct svod_plan_item *x = a, *y = b;

	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

/*
 * Place @it in the smallest gap, among the items already placed that are
 * live at the same time, that holds it aligned; above them all otherwise.
 */
static u64 svod_plan_best_offset(const struct svod_plan_item *items, u32 head,
				 const struct svod_plan_item *it)
{
	u64 prev_end = 0, best = U64_MAX, best_gap = U64_MAX, at, end;
	u32 j;

	for (j = head; j != U32_MAX; j = items[j].next) {
		const struct svod_plan_item *o = &items[j];

		if (o->first >= it->last || it->first >= o->last)
			continue;
		at = svod_round_up(prev_end, it->align);
		if (o->offset >= at && o->offset - at >= it->size &&
		    o->offset - prev_end < best_gap) {
			best_gap = o->offset - prev_end;
			best = at;
		}
		if (check_add_overflow(o->offset, o->size, &end))
			end = U64_MAX;
		prev_end = max(prev_end, end);
	}
	return best_gap != U64_MAX ? best : svod_round_up(prev_end, it->align);
}

/* Link @it (index @k) into the offset-ordered list at @head. */
static void svod_plan_best_link(struct svod_plan_item *items, u32 *head, u32 k)
{
	u32 *link = head;

	while (*link != U32_MAX && items[*link].offset <= items[k].offset)
		link = &items[*link].next;
	items[k].next = *link;
	*link = k;
}

/*
 * Greedy by size: largest buffer first (ties: earliest ALLOC first), each
 * into the best gap over the buffers it shares time with.
 */
static int svod_plan_best(struct svod_plan_ctx *c, u64 *offsets, u64 *peak, u32 *failed)
{
	u32 i, k = 0, head = U32_MAX;
	struct svod_plan_item *items;
	u64 end, top = 0;
	int err = 0;

	items = kvmalloc_array(max(c->nr_allocs, 1U), sizeof(*items), c->gfp);
	if (!items)
		return -ENOMEM;

	for (i = 0; i < c->n; i++) {
		const struct svod_plan_event *e = &c->ev[i];

		if (e->op != SVOD_PLAN_ALLOC)
			continue;
		items[k] = (struct svod_plan_item){
			.size = max(e->size, c->p->block_size),
			.align = max(e->align, 1ULL),
			.first = i,
			.last = c->pair[i],
		};
		k++;
	}
	sort(items, k, sizeof(*items), svod_plan_item_cmp, NULL);

	for (i = 0; i < k; i++) {
		if (i % 64 == 63) {
			err = svod_yield();
			if (err)
				goto free_items;
		}
		items[i].offset = svod_plan_best_offset(items, head, &items[i]);
		svod_plan_best_link(items, &head, i);
		if (check_add_overflow(items[i].offset, items[i].size, &end))
			end = U64_MAX;
		if (end > top) {
			top = end;
			*failed = items[i].first;
		}
		offsets[items[i].first] = items[i].offset;
	}
	*peak = top;
	if (top > c->p->arena_size)
		err = -ENOSPC;

free_items:
	kvfree(items);
	return err;
}

static int svod_plan_check_params(const struct svod_plan_params *p)
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
 * SVOD_PLAN_BEST: the greedy plan unless TLSF fits with a lower peak.
 * Malformed events are reported first: greedy needs the whole trace.
 */
static int svod_plan_run_best(struct svod_plan_ctx *c, u64 *offsets,
			      struct svod_plan_result *res)
{
	u64 *best, tlsf_peak, best_peak = 0;
	u32 tlsf_failed = U32_MAX, best_failed = U32_MAX;
	int tlsf_err, err;

	if (c->valid < c->n) {
		res->failed_event = c->valid;
		return c->bad_err;
	}
	if (c->nr_allocs > SVOD_PLAN_BEST_MAX_ALLOCS)
		return -E2BIG;

	tlsf_err = svod_plan_tlsf(c, offsets, &tlsf_peak, &tlsf_failed);
	if (tlsf_err && tlsf_err != -ENOSPC) {
		res->failed_event = tlsf_failed;
		return tlsf_err;
	}

	best = kvmalloc_array(max(c->n, 1U), sizeof(*best), c->gfp);
	if (!best)
		return -ENOMEM;
	svod_plan_clear(best, c->n);
	err = svod_plan_best(c, best, &best_peak, &best_failed);
	if (err && err != -ENOSPC)
		goto free_best;

	if (!tlsf_err && (err || tlsf_peak < best_peak)) {
		res->used = SVOD_PLAN_TLSF;
		res->peak = tlsf_peak;
		err = 0;
	} else if (!err) {
		res->used = SVOD_PLAN_BEST;
		res->peak = best_peak;
		memcpy(offsets, best, sizeof(*best) * c->n);
	} else {
		res->peak = best_peak;
		res->failed_event = best_failed;
	}

free_best:
	kvfree(best);
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
 * SVOD_PLAN_BEST checks every event first, then returns the greedy plan,
 * or the TLSF plan where that one fits with a strictly lower peak.
 *
 * Context: process context; may sleep. Gives up the CPU every
 * SVOD_PLAN_YIELD_EVENTS steps and stops on a fatal signal.
 * Return: 0; -EINVAL for bad parameters (@res->failed_event U32_MAX) or a
 * malformed event (unknown op, FREE with nonzero size or align, ALLOC of a
 * live id, FREE of an unknown or already freed id, ALLOC whose size plus
 * alignment overflows); -ENOSPC when the plan does not fit the arena;
 * -E2BIG for more than SVOD_PLAN_MAX_EVENTS events, or for SVOD_PLAN_BEST,
 * more than SVOD_PLAN_BEST_MAX_ALLOCS allocs; -ENOMEM; -EINTR on a fatal
 * signal.
 */
int svod_plan_run(const struct svod_plan_params *p, const struct svod_plan_event *ev,
		  u32 n, u64 *offsets, struct svod_plan_result *res, gfp_t gfp)
{
	struct svod_plan_ctx c = { .p = p, .ev = ev, .n = n, .gfp = gfp };
	u32 failed = U32_MAX;
	int err;

	*res = (struct svod_plan_result){ .failed_event = U32_MAX, .used = p->strategy };
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
