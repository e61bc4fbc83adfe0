// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * svod handle tables and the owner registry.
 *
 * Slots are recycled most recently freed first (a LIFO free list threaded
 * through the slots), and a slot's generation is incremented each time it
 * is handed out, so a freed handle never resolves again: its slot is either
 * free or holds a later generation. A slot whose generation would pass
 * SVOD_HANDLE_GEN_MAX is retired for good instead of wrapping.
 *
 * Tables take their owner tag from the registry in order, skipping tags a
 * live table holds and tags with no generation left, and start their
 * generations above the tag's floor: the highest generation any earlier
 * holder issued. Until the 2^20 tags have all been handed out once, every
 * floor is 0 and a table's generations start at 1.
 *
 * The slot array is a directory of fixed-size chunks, so no allocation is
 * larger than one chunk or the directory (32 KiB at most on 64-bit); all
 * use __GFP_NOWARN and fail with -ENOMEM.
 *
 * Locking: none. This file is not thread-safe; callers lock (see handle.h).
 */
#include "handle.h"

#define SVOD_HANDLE_TAG_LIVE	BIT(31)
#define SVOD_HANDLE_FLOOR_MASK	SVOD_HANDLE_GEN_MAX
/* Directory entries a table can ever need. */
#define SVOD_HANDLE_MAX_CHUNKS	(SVOD_HANDLE_MAX_SLOTS / SVOD_HANDLE_CHUNK)
/* First directory; it doubles from there. */
#define SVOD_HANDLE_FIRST_CHUNKS	4U

/**
 * svod_handle_owners_init() - set up an empty owner registry
 * @owners: the registry
 *
 * Allocates nothing: tag chunks are allocated as tags are first handed out.
 *
 * Context: any.
 */
void svod_handle_owners_init(struct svod_handle_owners *owners)
{
	memset(owners, 0, sizeof(*owners));
}
EXPORT_SYMBOL_IF_KUNIT(svod_handle_owners_init);

/**
 * svod_handle_owners_fini() - free an owner registry
 * @owners: the registry; no table may hold a tag (warns otherwise)
 *
 * Context: any; the caller serialises calls on @owners.
 */
void svod_handle_owners_fini(struct svod_handle_owners *owners)
{
	u32 i;

	WARN_ON(owners->nr_live);
	for (i = 0; i < SVOD_HANDLE_TAG_CHUNKS; i++)
		kvfree(owners->floor[i]);
	memset(owners, 0, sizeof(*owners));
}
EXPORT_SYMBOL_IF_KUNIT(svod_handle_owners_fini);

/* The registry word of @tag, its chunk allocated first; NULL on -ENOMEM. */
static u32 *svod_handle_tag_word(struct svod_handle_owners *owners, u32 tag,
				 gfp_t gfp)
{
	u32 **chunk = &owners->floor[tag >> SVOD_HANDLE_TAG_CHUNK_SHIFT];

	if (!*chunk) {
		*chunk = kvcalloc(SVOD_HANDLE_TAG_CHUNK, sizeof(**chunk),
				  gfp | __GFP_NOWARN);
		if (!*chunk)
			return NULL;
	}
	return &(*chunk)[tag & (SVOD_HANDLE_TAG_CHUNK - 1)];
}

/**
 * svod_handle_table_init() - set up an empty handle table with its own tag
 * @tbl: the table
 * @owners: the system's owner registry, its lock held by the caller
 * @max_live: bound on live handles; svod_handle_alloc() fails beyond it
 * @gfp: allocation flags for a registry chunk
 *
 * Takes the first tag from the registry's cursor on that no live table
 * holds and that has a generation left, and starts the table's generations
 * above the tag's floor. The slot array grows on svod_handle_alloc().
 *
 * Context: any context @gfp allows; the caller serialises calls on @owners
 * (and on @tbl).
 * Return: 0; -ENOMEM if a registry chunk cannot be allocated; -ENFILE if
 * every tag is held or used up. On error @tbl is unusable and the registry
 * holds no tag for it.
 */
int svod_handle_table_init(struct svod_handle_table *tbl,
			   struct svod_handle_owners *owners, u32 max_live,
			   gfp_t gfp)
{
	u32 n, tag, *word;

	memset(tbl, 0, sizeof(*tbl));
	tbl->free_head = SVOD_HANDLE_NO_SLOT;
	tbl->max_live = max_live;
	for (n = 0; n < SVOD_HANDLE_NR_TAGS; n++) {
		tag = (owners->next + n) & SVOD_HANDLE_TAG_MASK;
		word = svod_handle_tag_word(owners, tag, gfp);
		if (!word)
			return -ENOMEM;
		if (*word & SVOD_HANDLE_TAG_LIVE ||
		    (*word & SVOD_HANDLE_FLOOR_MASK) >= SVOD_HANDLE_GEN_MAX)
			continue;
		*word |= SVOD_HANDLE_TAG_LIVE;
		owners->next = (tag + 1) & SVOD_HANDLE_TAG_MASK;
		owners->nr_live++;
		tbl->tag = tag;
		tbl->base = *word & SVOD_HANDLE_FLOOR_MASK;
		tbl->top_gen = tbl->base;
		return 0;
	}
	return -ENFILE;
}
EXPORT_SYMBOL_IF_KUNIT(svod_handle_table_init);

/**
 * svod_handle_table_fini() - free a handle table and give its tag back
 * @tbl: the table; every handle should have been freed (warns otherwise:
 *	 the objects of live handles are the caller's to release first)
 * @owners: the registry @tbl's tag came from, its lock held by the caller
 *
 * The tag's floor becomes the highest generation @tbl issued, so the next
 * holder of the tag issues none of @tbl's handles again.
 *
 * Context: any; the caller serialises calls on @owners and @tbl.
 */
void svod_handle_table_fini(struct svod_handle_table *tbl,
			    struct svod_handle_owners *owners)
{
	u32 *word = &owners->floor[tbl->tag >> SVOD_HANDLE_TAG_CHUNK_SHIFT]
				  [tbl->tag & (SVOD_HANDLE_TAG_CHUNK - 1)];
	u32 i;

	WARN_ON(tbl->nr_live);
	WARN_ON(!(*word & SVOD_HANDLE_TAG_LIVE));
	*word = max(*word & SVOD_HANDLE_FLOOR_MASK, tbl->top_gen);
	owners->nr_live--;
	for (i = 0; i < tbl->cap_chunks; i++)
		kfree(tbl->chunks[i]);
	kvfree(tbl->chunks);
	memset(tbl, 0, sizeof(*tbl));
	tbl->free_head = SVOD_HANDLE_NO_SLOT;
}
EXPORT_SYMBOL_IF_KUNIT(svod_handle_table_fini);

/* Makes room for slot nr_slots: a chunk, and a larger directory first. */
static int svod_handle_grow(struct svod_handle_table *tbl, gfp_t gfp)
{
	u32 idx = tbl->nr_slots >> SVOD_HANDLE_CHUNK_SHIFT;
	struct svod_handle_slot **dir;
	u32 cap;

	if (idx >= tbl->cap_chunks) {
		cap = tbl->cap_chunks ? tbl->cap_chunks * 2 : SVOD_HANDLE_FIRST_CHUNKS;
		if (cap > SVOD_HANDLE_MAX_CHUNKS)
			cap = SVOD_HANDLE_MAX_CHUNKS;
		dir = kvmalloc_array(cap, sizeof(*dir), gfp | __GFP_NOWARN);
		if (!dir)
			return -ENOMEM;
		if (tbl->cap_chunks)
			memcpy(dir, tbl->chunks, tbl->cap_chunks * sizeof(*dir));
		memset(dir + tbl->cap_chunks, 0,
		       (cap - tbl->cap_chunks) * sizeof(*dir));
		kvfree(tbl->chunks);
		tbl->chunks = dir;
		tbl->cap_chunks = cap;
	}
	if (!tbl->chunks[idx]) {
		tbl->chunks[idx] = kmalloc_array(SVOD_HANDLE_CHUNK,
						 sizeof(*tbl->chunks[idx]),
						 gfp | __GFP_NOWARN);
		if (!tbl->chunks[idx])
			return -ENOMEM;
	}
	return 0;
}

/* A free slot: the most recently freed one, else a new one; or an error. */
static int svod_handle_take(struct svod_handle_table *tbl, gfp_t gfp, u32 *id)
{
	struct svod_handle_slot *slot;
	int ret;

	if (tbl->free_head != SVOD_HANDLE_NO_SLOT) {
		*id = tbl->free_head;
		tbl->free_head = svod_handle_at(tbl, *id)->next_free;
		return 0;
	}
	if (tbl->nr_slots == SVOD_HANDLE_MAX_SLOTS)
		return -EMFILE;
	if (!(tbl->nr_slots & (SVOD_HANDLE_CHUNK - 1))) {
		ret = svod_handle_grow(tbl, gfp);
		if (ret)
			return ret;
	}
	*id = tbl->nr_slots++;
	slot = svod_handle_at(tbl, *id);
	slot->obj = NULL;
	slot->gen = tbl->base;
	return 0;
}

/**
 * svod_handle_alloc() - issue a handle for an object
 * @tbl: the table
 * @obj: the object the handle names, not NULL
 * @gfp: allocation flags, used if the slot array must grow
 * @handle: on success, the new handle
 *
 * Takes the most recently freed slot, else a new one, and increments the
 * slot's generation.
 *
 * Context: any context @gfp allows; the caller serialises calls on @tbl.
 * Return: 0 on success; -EMFILE if @tbl already holds max_live live handles
 * or every slot id is live or retired; -ENOMEM if the slot array cannot
 * grow; -EINVAL if @obj is NULL (warns). On any error the table is unchanged
 * (bar a larger, still empty slot array).
 */
int svod_handle_alloc(struct svod_handle_table *tbl, void *obj, gfp_t gfp, u64 *handle)
{
	struct svod_handle_slot *slot;
	u32 id;
	int ret;

	if (WARN_ON(!obj))
		return -EINVAL;
	if (tbl->nr_live >= tbl->max_live)
		return -EMFILE;
	ret = svod_handle_take(tbl, gfp, &id);
	if (ret)
		return ret;
	slot = svod_handle_at(tbl, id);
	slot->gen++;
	slot->obj = obj;
	slot->next_free = SVOD_HANDLE_NO_SLOT;
	tbl->top_gen = max(tbl->top_gen, slot->gen);
	tbl->nr_live++;
	*handle = svod_handle_make(slot->gen, tbl->tag, id);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(svod_handle_alloc);

/* The live slot @handle names in @tbl, or NULL. */
static struct svod_handle_slot *svod_handle_find(const struct svod_handle_table *tbl,
						 u64 handle)
{
	u32 id = svod_handle_slot(handle);
	struct svod_handle_slot *slot;

	if (svod_handle_tag(handle) != tbl->tag || id >= tbl->nr_slots)
		return NULL;
	slot = svod_handle_at(tbl, id);
	if (!slot->obj || slot->gen != svod_handle_gen(handle))
		return NULL;
	return slot;
}

/**
 * svod_handle_lookup() - resolve a handle
 * @tbl: the table
 * @handle: a handle, from anywhere
 *
 * Context: any; the caller serialises calls on @tbl.
 * Return: the object @handle names, or NULL if @handle is not live in @tbl
 * (freed, stale or forged generation, another table's handle, live or
 * not, a slot this table never issued, a retired slot).
 */
void *svod_handle_lookup(const struct svod_handle_table *tbl, u64 handle)
{
	struct svod_handle_slot *slot = svod_handle_find(tbl, handle);

	return slot ? slot->obj : NULL;
}
EXPORT_SYMBOL_IF_KUNIT(svod_handle_lookup);

/**
 * svod_handle_free() - release a handle
 * @tbl: the table
 * @handle: the handle to release
 * @obj: if not NULL, receives the object @handle named
 *
 * The slot becomes the first to be reused, unless its generation has
 * reached SVOD_HANDLE_GEN_MAX: then it is retired and never reused.
 *
 * Context: any; never allocates; the caller serialises calls on @tbl.
 * Return: 0 on success; -ESTALE if @handle is not live in @tbl (as for
 * svod_handle_lookup(); a double free is -ESTALE). On error nothing changes.
 */
int svod_handle_free(struct svod_handle_table *tbl, u64 handle, void **obj)
{
	struct svod_handle_slot *slot = svod_handle_find(tbl, handle);
	u32 id = svod_handle_slot(handle);

	if (!slot)
		return -ESTALE;
	if (obj)
		*obj = slot->obj;
	slot->obj = NULL;
	tbl->nr_live--;
	if (slot->gen == SVOD_HANDLE_GEN_MAX) {
		slot->next_free = SVOD_HANDLE_RETIRED;
	} else {
		slot->next_free = tbl->free_head;
		tbl->free_head = id;
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(svod_handle_free);

/**
 * svod_handle_next() - iterate over the live handles in slot order
 * @tbl: the table
 * @pos: cursor; set to 0 before the first call
 * @handle: receives the handle of the entry returned
 *
 * Freeing the entry just returned (and any other) between calls is fine.
 *
 * Context: any; the caller serialises calls on @tbl.
 * Return: the object of the next live handle, or NULL when there is none.
 */
void *svod_handle_next(const struct svod_handle_table *tbl, u32 *pos, u64 *handle)
{
	const struct svod_handle_slot *slot;
	u32 id;

	for (id = *pos; id < tbl->nr_slots; id++) {
		slot = svod_handle_at(tbl, id);
		if (slot->obj) {
			*pos = id + 1;
			*handle = svod_handle_make(slot->gen, tbl->tag, id);
			return slot->obj;
		}
	}
	*pos = tbl->nr_slots;
	return NULL;
}
EXPORT_SYMBOL_IF_KUNIT(svod_handle_next);

#if SVOD_CORE_TEST_HOOKS
/**
 * svod_handle_set_gen() - test hook: set the generation of a free slot
 * @tbl: the table
 * @slot: a slot that was issued and is now free (not live, not retired)
 * @gen: its new generation, not below the current one and below
 *	 SVOD_HANDLE_GEN_MAX; the next handle the slot issues has generation
 *	 @gen + 1 (never going back keeps freed handles stale)
 *
 * Lets tests reach the generation wrap without 16 million allocations. The
 * table's top generation follows, so the tag's floor stays above it. Built
 * (and exported to svod_test.ko) only when the target kernel has KUnit, and
 * always in the userspace library.
 *
 * Context: any; the caller serialises calls on @tbl.
 * Return: 0 on success; -EINVAL if @slot is not a free slot or @gen is out
 * of range.
 */
int svod_handle_set_gen(struct svod_handle_table *tbl, u32 slot, u32 gen)
{
	struct svod_handle_slot *s;

	if (slot >= tbl->nr_slots)
		return -EINVAL;
	s = svod_handle_at(tbl, slot);
	if (s->obj || s->next_free == SVOD_HANDLE_RETIRED || gen < s->gen ||
	    gen >= SVOD_HANDLE_GEN_MAX)
		return -EINVAL;
	s->gen = gen;
	tbl->top_gen = max(tbl->top_gen, gen);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(svod_handle_set_gen);

/**
 * svod_handle_owners_set_next() - test hook: move the registry's tag cursor
 * @owners: the registry, its lock held by the caller
 * @tag: the tag the next svod_handle_table_init() tries first (masked to
 *	 20 bits)
 *
 * Lets tests reach the tag wrap without a million tables.
 *
 * Context: any; the caller serialises calls on @owners.
 */
void svod_handle_owners_set_next(struct svod_handle_owners *owners, u32 tag)
{
	owners->next = tag & SVOD_HANDLE_TAG_MASK;
}
EXPORT_SYMBOL_IF_KUNIT(svod_handle_owners_set_next);
#endif
