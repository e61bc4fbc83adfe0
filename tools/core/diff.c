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
#define NR_SPARE	8

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

/*
 * One allocation record, the way svod_allocation embeds its node: the
 * handle table's object. The model's placement is kept next to it.
 */
struct rec {
	struct svod_range_node node;
	u64 mstart;
	u64 msize;
};

struct state {
	struct svod_range range;
	struct svod_handle_owners owners;
	struct svod_handle_table tbl;
	struct model_range mr;
	struct model_handles mh;
	struct rec *spare[NR_SPARE];	/* removed records, inserted again */
	unsigned int nr_spare;
	u64 stale[NR_STALE];	/* recently freed handles */
	unsigned int nr_stale;
};

static u64 check_subtree(struct rb_node *rb)
{
	struct svod_range_node *node;
	u64 max, l, r;

	if (!rb)
		return 0;
	node = rb_entry(rb, struct svod_range_node, rb_hole);
	EXPECT(node->hole_size, "empty hole in the hole tree at %#llx",
	       (unsigned long long)node->start);
	l = check_subtree(rb->rb_left);
	r = check_subtree(rb->rb_right);
	max = node->hole_size;
	if (l > max)
		max = l;
	if (r > max)
		max = r;
	EXPECT(node->subtree_max_hole == max, "subtree_max_hole %#llx, want %#llx at %#llx",
	       (unsigned long long)node->subtree_max_hole, (unsigned long long)max,
	       (unsigned long long)node->start);
	return max;
}

/* The node list: address order, holes exact, every node where it belongs. */
static void check_nodes(const struct svod_range *t)
{
	const struct svod_range_node *node, *next;
	u64 live = 0, holes = 0, reserved = 0;
	u32 nr_live = 0, nr_holes = 0;

	EXPECT(t->head.start == t->base && !t->head.size && !t->head.flags,
	       "head sentinel moved");
	for (node = &t->head; ; node = next) {
		next = list_entry(node->link.next, struct svod_range_node, link);
		EXPECT(next->link.prev == &node->link, "list links broken");
		EXPECT(node->hole_size == (next == &t->head ?
					   t->base + t->capacity : next->start) -
		       (node->start + node->size),
		       "hole after %#llx is %#llx", (unsigned long long)node->start,
		       (unsigned long long)node->hole_size);
		EXPECT(!node->hole_size == RB_EMPTY_NODE(&node->rb_hole),
		       "node at %#llx: hole %#llx, in the hole tree %d",
		       (unsigned long long)node->start,
		       (unsigned long long)node->hole_size,
		       !RB_EMPTY_NODE(&node->rb_hole));
		holes += node->hole_size;
		nr_holes += !!node->hole_size;
		if (node != &t->head && svod_range_node_allocated(node)) {
			live += node->size;
			nr_live++;
		} else {
			reserved += node->size;
		}
		if (next == &t->head)
			break;
		EXPECT(next->start >= node->start + node->size,
		       "nodes overlap or are out of order at %#llx",
		       (unsigned long long)next->start);
	}
	EXPECT(holes == t->free_bytes && nr_holes == t->nr_free_spans,
	       "hole counters off");
	EXPECT(live == t->live_bytes && nr_live == t->nr_live, "live counters off");
	EXPECT(reserved == t->reserved_bytes, "reserved_bytes off");
}

static void check_range(const struct state *s)
{
	const struct svod_range *t = &s->range;
	const struct model_range *m = &s->mr;
	struct svod_range_node *pos;
	u64 sum = 0, largest = 0, prev_end = 0, start, size;
	size_t i = 0;

	svod_range_for_each_free(pos, t, start, size) {
		EXPECT(size, "empty span at %#llx", (unsigned long long)start);
		EXPECT(start == pos->start + pos->size, "span does not follow its node");
		EXPECT(start >= t->base && start + size <= t->base + t->capacity,
		       "span outside the range");
		EXPECT(!i || start > prev_end,
		       "spans not sorted, disjoint and coalesced at %#llx",
		       (unsigned long long)start);
		EXPECT(i < m->nr_spans && m->spans[i].start == start &&
		       m->spans[i].end == start + size,
		       "span %zu [%#llx +%#llx) differs from the model", i,
		       (unsigned long long)start, (unsigned long long)size);
		prev_end = start + size;
		sum += size;
		if (size > largest)
			largest = size;
		i++;
	}
	EXPECT(i == m->nr_spans, "%zu spans, model has %zu", i, m->nr_spans);
	EXPECT(i == t->nr_free_spans, "nr_free_spans %u, counted %zu", t->nr_free_spans, i);
	EXPECT(sum == t->free_bytes, "free_bytes off");
	EXPECT(t->live_bytes == m->live_bytes && t->nr_live == m->nr_live, "live counters off");
	EXPECT(t->free_bytes + t->live_bytes + t->reserved_bytes == t->capacity,
	       "free + live + reserved != capacity");
	EXPECT(check_subtree(t->holes.rb_node) == largest, "root subtree_max_hole off");
	EXPECT(svod_range_largest_free(t) == largest, "largest_free off");
	check_nodes(t);
}

static void check_handles(const struct state *s)
{
	const struct svod_handle_table *t = &s->tbl;
	const struct model_handles *m = &s->mh;
	u32 id, n;

	EXPECT(t->nr_live == m->nr_live && t->nr_slots == m->nr_slots,
	       "table counters differ from the model");
	EXPECT(t->nr_slots <= (u64)t->cap_chunks * SVOD_HANDLE_CHUNK,
	       "nr_slots beyond the directory");
	for (id = 0; id < t->nr_slots; id++)
		EXPECT(svod_handle_at(t, id)->obj == m->slots[id].obj &&
		       svod_handle_at(t, id)->gen == m->slots[id].gen &&
		       (svod_handle_at(t, id)->next_free == SVOD_HANDLE_RETIRED) ==
		       m->slots[id].retired,
		       "slot %u differs from the model", id);
	/* The free list is the model's stack, most recently freed first. */
	for (id = t->free_head, n = m->nr_free_ids; id != SVOD_HANDLE_NO_SLOT;
	     id = svod_handle_at(t, id)->next_free) {
		EXPECT(n && id == m->free_ids[n - 1], "free list order differs");
		n--;
	}
	EXPECT(!n, "free list too short");
}

static void check(const struct state *s)
{
	check_range(s);
	check_handles(s);
}

static void remember_stale(struct state *s, u64 handle)
{
	s->stale[s->nr_stale++ % NR_STALE] = handle;
}

static u64 pick_size(struct state *s, struct reader *r)
{
	switch (rd(r, 1) % 8) {
	case 0:
		return rd(r, 1) + 1;
	case 1: case 2: case 3:
		return rd(r, 2) + 1;
	case 4:
		return (rd(r, 1) + 1) * s->range.align;
	case 5:
		return rd(r, 8);
	case 6:
		return s->range.capacity - rd(r, 1);
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
		return s->range.align;
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

/* A zeroed record, or one removed earlier (a node may be inserted again). */
static struct rec *get_rec(struct state *s, struct reader *r)
{
	struct rec *rec;

	if (s->nr_spare && rd(r, 1) % 2) {
		rec = s->spare[--s->nr_spare];
		EXPECT(!svod_range_node_allocated(&rec->node), "removed node still allocated");
		return rec;
	}
	rec = calloc(1, sizeof(*rec));
	if (!rec)
		abort();
	return rec;
}

static void put_rec(struct state *s, struct rec *rec)
{
	if (s->nr_spare < NR_SPARE)
		s->spare[s->nr_spare++] = rec;
	else
		free(rec);
}

/* Remove @rec from the range and the model; insert/remove never allocate. */
static void remove_rec(struct state *s, struct rec *rec)
{
	svod_compat_fail_countdown = 0;
	svod_range_remove(&s->range, &rec->node);
	EXPECT(svod_compat_fail_countdown == 0, "remove allocated");
	svod_compat_fail_countdown = -1;
	EXPECT(!svod_range_node_allocated(&rec->node), "removed node still allocated");
	model_range_free(&s->mr, rec->mstart, rec->msize);
	put_rec(s, rec);
}

static void op_alloc(struct state *s, struct reader *r)
{
	u64 size = pick_size(s, r), align = pick_align(s, r);
	struct rec *rec = get_rec(s, r);
	u64 mstart, h, mh;
	int err, merr;
	bool armed;

	/* Armed to fail the very next allocation: insert must not make one. */
	svod_compat_fail_countdown = 0;
	err = svod_range_insert(&s->range, &rec->node, size, align);
	EXPECT(svod_compat_fail_countdown == 0, "insert allocated");
	svod_compat_fail_countdown = -1;
	merr = model_range_alloc(&s->mr, size, align, &mstart);
	EXPECT(err == merr, "alloc(%#llx, align %#llx): %d, model %d",
	       (unsigned long long)size, (unsigned long long)align, err, merr);
	EXPECT(svod_range_node_allocated(&rec->node) == !err, "allocated flag off");
	if (err) {
		put_rec(s, rec);
		return;
	}
	EXPECT(rec->node.start == mstart && rec->node.size == size,
	       "placed at %#llx, model at %#llx", (unsigned long long)rec->node.start,
	       (unsigned long long)mstart);
	rec->mstart = mstart;
	rec->msize = size;

	armed = arm_failure(r);
	err = svod_handle_alloc(&s->tbl, rec, GFP_KERNEL, &h);
	svod_compat_fail_countdown = -1;
	if (err == -ENOMEM) {
		EXPECT(armed, "-ENOMEM without injection");
		check_handles(s);
		remove_rec(s, rec);
		return;
	}
	merr = model_handle_alloc(&s->mh, rec, &mh);
	EXPECT(err == merr, "handle alloc: %d, model %d", err, merr);
	if (err) {
		remove_rec(s, rec);
		return;
	}
	EXPECT(h == mh, "handle %#llx, model %#llx", (unsigned long long)h,
	       (unsigned long long)mh);
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
	struct rec *rec;
	void *obj, *mobj;

	EXPECT(!svod_handle_free(&s->tbl, h, &obj), "free of a live handle failed");
	EXPECT(!model_handle_free(&s->mh, h, &mobj) && obj == mobj, "model free differs");
	rec = obj;
	EXPECT(rec->node.start == rec->mstart && rec->node.size == rec->msize,
	       "live node differs from the model's record");
	remove_rec(s, rec);
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
		h = live ^ (1ULL << (SVOD_HANDLE_TAG_SHIFT + rd(r, 1) % 20));
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

/*
 * The owner registry and the table, with a tag from the input. Mode 1 lets
 * an earlier table hold the tag first (freed handle, raised floor) so the
 * table starts above the floor; mode 2 keeps that earlier table live while
 * the table takes the next tag. Either way the earlier table's handle must
 * never resolve in the table: it joins the stale handles.
 */
static void setup_handles(struct state *s, struct reader *r, u32 max_live)
{
	u32 tag = rd(r, 3), mode = rd(r, 1) % 3, gen = rd(r, 3);
	struct svod_handle_table prev;
	u64 h = 0;

	svod_handle_owners_init(&s->owners);
	svod_handle_owners_set_next(&s->owners, tag);
	if (mode) {
		EXPECT(!svod_handle_table_init(&prev, &s->owners, 1, GFP_KERNEL),
		       "init of the earlier table failed");
		EXPECT(!svod_handle_alloc(&prev, s, GFP_KERNEL, &h), "earlier alloc failed");
		if (mode == 1) {
			EXPECT(!svod_handle_free(&prev, h, NULL), "earlier free failed");
			svod_handle_set_gen(&prev, 0, gen % SVOD_HANDLE_GEN_MAX);
			svod_handle_table_fini(&prev, &s->owners);
			svod_handle_owners_set_next(&s->owners, tag);
		}
	}
	EXPECT(!svod_handle_table_init(&s->tbl, &s->owners, max_live, GFP_KERNEL),
	       "table init failed");
	EXPECT(s->tbl.tag == ((tag + (mode == 2)) & SVOD_HANDLE_TAG_MASK),
	       "tag %#x, expected %#x", s->tbl.tag, tag + (mode == 2));
	if (mode == 2) {
		EXPECT(!svod_handle_lookup(&s->tbl, h), "a live foreign handle resolves");
		EXPECT(!svod_handle_free(&prev, h, NULL), "earlier free failed");
		svod_handle_table_fini(&prev, &s->owners);
	}
	if (mode)
		s->stale[s->nr_stale++ % NR_STALE] = h;
	model_handles_init(&s->mh, s->tbl.tag, s->tbl.base, s->tbl.max_live);
}

static int setup(struct state *s, struct reader *r)
{
	struct svod_range_region regions[MAX_REGIONS];
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
	setup_handles(s, r, a > 200 ? U32_MAX : a % 64U + 1);

	armed = arm_failure(r);
	err = svod_range_init(&s->range, base, capacity, align, regions, nr, GFP_KERNEL);
	svod_compat_fail_countdown = -1;
	merr = model_range_init(&s->mr, base, capacity, align, regions, nr);
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
	EXPECT(s.range.free_bytes + s.range.reserved_bytes == s.range.capacity,
	       "bytes lost after releasing everything");
	svod_range_fini(&s.range);
fini_models:
	model_range_fini(&s.mr);
	svod_handle_table_fini(&s.tbl, &s.owners);
	svod_handle_owners_fini(&s.owners);
	model_handles_fini(&s.mh);
	while (s.nr_spare)
		free(s.spare[--s.nr_spare]);
}
