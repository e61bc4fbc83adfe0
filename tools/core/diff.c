// SPDX-License-Identifier: GPL-2.0
/*
 * Differential driver for the svod core: the byte string is a script, the
 * model (model.c) is the oracle. Every step is followed by a full check of
 * both structures against each other.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "diff.h"
#include "model.h"

unsigned long svod_diff_ops;

#define FAIL(...) do {							\
	fprintf(stderr, "svod core diff: " __VA_ARGS__);		\
	fputc('\n', stderr);						\
	abort();							\
} while (0)

#define EXPECT(cond, ...) do {						\
	if (!(cond))							\
		FAIL(__VA_ARGS__);					\
} while (0)

#define MAX_REGIONS	5
#define NR_STALE	16

struct reader {
	const u8 *p;
	size_t n;
};

/* Next @bytes bytes, big-endian; zeros once the script is exhausted. */
static u64 rd(struct reader *r, unsigned int bytes)
{
	u64 v = 0;

	while (bytes--) {
		v <<= 8;
		if (r->n) {
			v |= *r->p++;
			r->n--;
		}
	}
	return v;
}

struct rec {
	u64 start;
	u64 size;
};

struct state {
	struct svod_tier tier;
	struct svod_handle_table tbl;
	struct model_tier mt;
	struct model_handles mh;
	struct rec *recs;	/* the model's record of each slot's allocation */
	u32 nr_recs;
	u64 stale[NR_STALE];	/* recently freed handles */
	unsigned int nr_stale;
};

static u64 check_subtree(struct rb_node *rb)
{
	struct svod_tier_node *node;
	u64 max, l, r;

	if (!rb)
		return 0;
	node = rb_entry(rb, struct svod_tier_node, rb);
	l = check_subtree(rb->rb_left);
	r = check_subtree(rb->rb_right);
	max = node->size;
	if (l > max)
		max = l;
	if (r > max)
		max = r;
	EXPECT(node->subtree_max == max, "subtree_max %#llx, want %#llx at %#llx",
	       (unsigned long long)node->subtree_max, (unsigned long long)max,
	       (unsigned long long)node->start);
	return max;
}

static void check_tier(const struct state *s)
{
	const struct svod_tier *t = &s->tier;
	const struct model_tier *m = &s->mt;
	const struct svod_tier_node *node;
	u64 sum = 0, largest = 0, prev_end = 0;
	struct rb_node *rb;
	size_t i = 0;

	for (rb = rb_first(&t->free); rb; rb = rb_next(rb), i++) {
		node = rb_entry(rb, struct svod_tier_node, rb);
		EXPECT(node->size, "empty span at %#llx", (unsigned long long)node->start);
		EXPECT(node->start >= t->base &&
		       node->start + node->size <= t->base + t->capacity,
		       "span outside the tier");
		EXPECT(!i || node->start > prev_end,
		       "spans not sorted, disjoint and coalesced at %#llx",
		       (unsigned long long)node->start);
		EXPECT(i < m->nr_spans && m->spans[i].start == node->start &&
		       m->spans[i].end == node->start + node->size,
		       "span %zu [%#llx +%#llx) differs from the model", i,
		       (unsigned long long)node->start, (unsigned long long)node->size);
		prev_end = node->start + node->size;
		sum += node->size;
		if (node->size > largest)
			largest = node->size;
	}
	EXPECT(i == m->nr_spans, "%zu spans, model has %zu", i, m->nr_spans);
	EXPECT(i == t->nr_free_spans, "nr_free_spans %u, counted %zu", t->nr_free_spans, i);
	EXPECT(sum == t->free_bytes, "free_bytes off");
	EXPECT(t->live_bytes == m->live_bytes && t->nr_live == m->nr_live, "live counters off");
	EXPECT(t->free_bytes + t->live_bytes + t->reserved_bytes == t->capacity,
	       "free + live + reserved != capacity");
	EXPECT(check_subtree(t->free.rb_node) == largest, "root subtree_max off");
	EXPECT(svod_tier_largest_free(t) == largest, "largest_free off");
}

static void check_handles(const struct state *s)
{
	const struct svod_handle_table *t = &s->tbl;
	const struct model_handles *m = &s->mh;
	u32 id, n;

	EXPECT(t->nr_live == m->nr_live && t->nr_slots == m->nr_slots,
	       "table counters differ from the model");
	EXPECT(t->nr_slots <= t->cap_slots, "nr_slots > cap_slots");
	for (id = 0; id < t->nr_slots; id++)
		EXPECT(t->slots[id].obj == m->slots[id].obj &&
		       t->slots[id].gen == m->slots[id].gen &&
		       t->slots[id].retired == m->slots[id].retired,
		       "slot %u differs from the model", id);
	/* The free list is the model's stack, most recently freed first. */
	for (id = t->free_head, n = m->nr_free_ids; id != SVOD_HANDLE_NO_SLOT;
	     id = t->slots[id].next_free) {
		EXPECT(n && id == m->free_ids[n - 1], "free list order differs");
		n--;
	}
	EXPECT(!n, "free list too short");
}

static void check(const struct state *s)
{
	check_tier(s);
	check_handles(s);
}

static void remember_stale(struct state *s, u64 handle)
{
	s->stale[s->nr_stale++ % NR_STALE] = handle;
}

static void set_rec(struct state *s, u32 id, u64 start, u64 size)
{
	if (id >= s->nr_recs) {
		s->nr_recs = id + 1;
		s->recs = realloc(s->recs, s->nr_recs * sizeof(*s->recs));
		if (!s->recs)
			abort();
	}
	s->recs[id].start = start;
	s->recs[id].size = size;
}

static u64 pick_size(struct state *s, struct reader *r)
{
	switch (rd(r, 1) % 8) {
	case 0:
		return rd(r, 1) + 1;
	case 1: case 2: case 3:
		return rd(r, 2) + 1;
	case 4:
		return (rd(r, 1) + 1) * s->tier.align;
	case 5:
		return rd(r, 8);
	case 6:
		return s->tier.capacity - rd(r, 1);
	default:
		return 0;
	}
}

static u64 pick_align(struct state *s, struct reader *r)
{
	switch (rd(r, 1) % 6) {
	case 0: case 1:
		return 0;
	case 2:
		return s->tier.align;
	case 3:
		return 1ULL << (rd(r, 1) % 64);
	case 4:
		return 1ULL << (rd(r, 1) % 16);
	default:
		return rd(r, 1) % 70 + 3;
	}
}

/* Arm allocation failure injection for this operation, sometimes. */
static bool arm_failure(struct reader *r)
{
	u8 b = rd(r, 1);

	if (b >= 24)
		return false;
	svod_compat_fail_countdown = b % 3;
	return true;
}

static void op_alloc(struct state *s, struct reader *r)
{
	u64 size = pick_size(s, r), align = pick_align(s, r);
	struct svod_tier_node *node;
	bool armed = arm_failure(r);
	u64 mstart, h, mh;
	int err, merr;

	err = svod_tier_alloc(&s->tier, size, align, GFP_KERNEL, &node);
	if (err == -ENOMEM) {
		EXPECT(armed, "-ENOMEM without injection");
		svod_compat_fail_countdown = -1;
		check_tier(s);	/* unchanged: the model has not moved yet */
		EXPECT(!model_tier_alloc(&s->mt, size, align, &mstart),
		       "-ENOMEM where the model fails");
		model_tier_free(&s->mt, mstart, size);
		return;
	}
	merr = model_tier_alloc(&s->mt, size, align, &mstart);
	EXPECT(err == merr, "alloc(%#llx, align %#llx): %d, model %d",
	       (unsigned long long)size, (unsigned long long)align, err, merr);
	if (err) {
		svod_compat_fail_countdown = -1;
		return;
	}
	EXPECT(node->start == mstart && node->size == size,
	       "placed at %#llx, model at %#llx", (unsigned long long)node->start,
	       (unsigned long long)mstart);

	err = svod_handle_alloc(&s->tbl, node, GFP_KERNEL, &h);
	svod_compat_fail_countdown = -1;
	if (err == -ENOMEM) {
		EXPECT(armed, "-ENOMEM without injection");
		check_handles(s);
		svod_tier_free(&s->tier, node);
		model_tier_free(&s->mt, mstart, size);
		return;
	}
	merr = model_handle_alloc(&s->mh, node, &mh);
	EXPECT(err == merr, "handle alloc: %d, model %d", err, merr);
	if (err) {
		svod_tier_free(&s->tier, node);
		model_tier_free(&s->mt, mstart, size);
		return;
	}
	EXPECT(h == mh, "handle %#llx, model %#llx", (unsigned long long)h,
	       (unsigned long long)mh);
	set_rec(s, svod_handle_slot(h), mstart, size);
}

/* The model's @idx-th live handle (in slot order). */
static u64 live_handle(const struct state *s, u32 idx)
{
	u32 id;

	for (id = 0; id < s->mh.nr_slots; id++)
		if (s->mh.slots[id].obj && !idx--)
			return svod_handle_make(s->mh.slots[id].gen, s->mh.tag, id);
	abort();
}

static void free_handle(struct state *s, u64 h)
{
	struct svod_tier_node *node;
	u32 id = svod_handle_slot(h);
	void *obj, *mobj;

	EXPECT(!svod_handle_free(&s->tbl, h, &obj), "free of a live handle failed");
	EXPECT(!model_handle_free(&s->mh, h, &mobj) && obj == mobj, "model free differs");
	node = obj;
	EXPECT(node->start == s->recs[id].start && node->size == s->recs[id].size,
	       "live record differs from the model's");
	svod_tier_free(&s->tier, node);
	model_tier_free(&s->mt, s->recs[id].start, s->recs[id].size);
	remember_stale(s, h);
}

static void op_free(struct state *s, struct reader *r)
{
	if (s->mh.nr_live)
		free_handle(s, live_handle(s, rd(r, 2) % s->mh.nr_live));
}

static void op_bad_handle(struct state *s, struct reader *r)
{
	u8 kind = rd(r, 1) % 7;
	u64 h = 0, live = 0;
	void *obj, *mobj;

	if (s->mh.nr_live)
		live = live_handle(s, rd(r, 2) % s->mh.nr_live);
	switch (kind) {
	case 0:
		if (!s->nr_stale)
			return;
		h = s->stale[rd(r, 1) % (s->nr_stale < NR_STALE ? s->nr_stale : NR_STALE)];
		break;
	case 1:
		h = live + (1ULL << SVOD_HANDLE_GEN_SHIFT);
		break;
	case 2:
		h = live - (1ULL << SVOD_HANDLE_GEN_SHIFT);
		break;
	case 3:
		h = live ^ (1ULL << (SVOD_HANDLE_TAG_SHIFT + rd(r, 1) % 16));
		break;
	case 4:
		h = (live & ~(u64)SVOD_HANDLE_SLOT_MASK) | (s->tbl.nr_slots + rd(r, 1));
		break;
	case 5:
		h = rd(r, 8);
		break;
	default:
		h = 0;
		break;
	}
	obj = svod_handle_lookup(&s->tbl, h);
	mobj = model_handle_lookup(&s->mh, h);
	EXPECT(obj == mobj, "lookup(%#llx) differs from the model", (unsigned long long)h);
	if (kind == 0)
		EXPECT(!obj, "a freed handle resolves again");
	if (!obj)
		EXPECT(svod_handle_free(&s->tbl, h, &obj) == -ESTALE,
		       "free of a dead handle is not -ESTALE");
}

static void op_set_gen(struct state *s, struct reader *r)
{
	u32 slot = rd(r, 2) % (s->mh.nr_slots + 1), gen;

	switch (rd(r, 1) % 3) {
	case 0:
		gen = SVOD_HANDLE_GEN_MAX - rd(r, 1) % 4;
		break;
	case 1:
		gen = (slot < s->mh.nr_slots ? s->mh.slots[slot].gen : 0) + rd(r, 1) % 3;
		break;
	default:
		gen = rd(r, 3);
		break;
	}
	EXPECT(svod_handle_set_gen(&s->tbl, slot, gen) ==
	       model_handle_set_gen(&s->mh, slot, gen), "set_gen differs");
}

static void op_iterate(struct state *s)
{
	u32 pos = 0, n = 0, last = 0;
	void *obj;
	u64 h;

	while ((obj = svod_handle_next(&s->tbl, &pos, &h))) {
		EXPECT(model_handle_lookup(&s->mh, h) == obj, "iteration yields a dead handle");
		EXPECT(!n || svod_handle_slot(h) > last, "iteration out of order");
		last = svod_handle_slot(h);
		n++;
	}
	EXPECT(n == s->mh.nr_live, "iteration yields %u of %u", n, s->mh.nr_live);
}

/* @x * @num / 2^@shift, without overflow */
static u64 fraction(u64 x, u64 num, unsigned int shift)
{
	return (u64)(((unsigned __int128)x * num) >> shift);
}

static int setup(struct state *s, struct reader *r)
{
	struct svod_tier_region regions[MAX_REGIONS];
	u64 base, capacity, align;
	unsigned int nr, i;
	u8 sel = rd(r, 1), a;
	bool armed;
	int err, merr;

	switch (sel % 4) {
	case 0:
		base = 0;
		break;
	case 1:
		base = rd(r, 3);
		break;
	case 2:
		base = 0x100000000ULL - rd(r, 2) * 64;
		break;
	default:
		base = U64_MAX - rd(r, 4);
		break;
	}
	switch ((sel >> 2) % 4) {
	case 0:
		capacity = rd(r, 2);
		break;
	case 1:
		capacity = rd(r, 2) * 64;
		break;
	case 2:
		capacity = rd(r, 1) * 4096 + 0x100000000ULL;
		break;
	default:
		capacity = rd(r, 8);
		break;
	}
	a = rd(r, 1);
	align = a < 240 ? 1ULL << (a % 13) : a % 3 ? a : 0;
	nr = rd(r, 1) % (MAX_REGIONS + 1);
	for (i = 0; i < nr; i++) {
		regions[i].base = base + fraction(capacity, rd(r, 2), 16) - rd(r, 1) / 250;
		regions[i].size = fraction(capacity, rd(r, 2), 18) + rd(r, 1) % 3;
	}
	a = rd(r, 1);
	svod_handle_table_init(&s->tbl, rd(r, 2), a > 200 ? U32_MAX : a % 64U + 1);
	model_handles_init(&s->mh, s->tbl.tag, s->tbl.max_live);

	armed = arm_failure(r);
	err = svod_tier_init(&s->tier, base, capacity, align, regions, nr, GFP_KERNEL);
	svod_compat_fail_countdown = -1;
	merr = model_tier_init(&s->mt, base, capacity, align, regions, nr);
	if (err == -ENOMEM) {
		EXPECT(armed && !merr, "init -ENOMEM where the model says %d", merr);
		return err;
	}
	EXPECT(err == merr, "init(%#llx, %#llx, %#llx, %u regions): %d, model %d",
	       (unsigned long long)base, (unsigned long long)capacity,
	       (unsigned long long)align, nr, err, merr);
	return err;
}

void svod_core_diff(const uint8_t *data, size_t len)
{
	struct reader r = { data, len };
	struct state s;
	u32 pos = 0;
	void *obj;
	u64 h;

	memset(&s, 0, sizeof(s));
	svod_diff_ops = 0;
	if (setup(&s, &r))
		goto fini_models;
	check(&s);
	while (r.n) {
		switch (rd(&r, 1) % 10) {
		case 0: case 1: case 2: case 3:
			op_alloc(&s, &r);
			break;
		case 4: case 5: case 6:
			op_free(&s, &r);
			break;
		case 7:
			op_bad_handle(&s, &r);
			break;
		case 8:
			op_set_gen(&s, &r);
			break;
		default:
			op_iterate(&s);
			break;
		}
		svod_diff_ops++;
		check(&s);
	}
	/* Release everything the way a closing file does. */
	while ((obj = svod_handle_next(&s.tbl, &pos, &h))) {
		free_handle(&s, h);
		check(&s);
	}
	EXPECT(s.tier.free_bytes + s.tier.reserved_bytes == s.tier.capacity,
	       "bytes lost after releasing everything");
	svod_tier_fini(&s.tier);
fini_models:
	model_tier_fini(&s.mt);
	svod_handle_table_fini(&s.tbl);
	model_handles_fini(&s.mh);
	free(s.recs);
}
