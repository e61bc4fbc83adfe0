// SPDX-License-Identifier: GPL-2.0
/*
 * svod handle table.
 *
 * Slots are recycled most recently freed first (a LIFO free list threaded
 * through the slots), and a slot's generation is incremented each time it
 * is handed out, so a freed handle never resolves again: its slot is either
 * free or holds a later generation. A slot whose generation would pass
 * SVOD_HANDLE_GEN_MAX is retired for good instead of wrapping.
 *
 * Locking: none. This file is not thread-safe; callers lock. The slot array
 * grows with the caller's gfp before any state changes.
 */
#include "handle.h"

/* First slot array; it doubles from there. */
#define SVOD_HANDLE_FIRST_SLOTS	16U

/**
 * svod_handle_table_init() - set up an empty handle table
 * @tbl: the table
 * @tag: tag encoded in every handle this table issues; tables that may see
 *	 each other's handles should use different tags
 * @max_live: bound on live handles; svod_handle_alloc() fails beyond it
 *
 * Allocates nothing: the slot array grows on the first svod_handle_alloc().
 *
 * Context: any; the caller serialises calls on @tbl.
 */
void svod_handle_table_init(struct svod_handle_table *tbl, u16 tag, u32 max_live)
{
	tbl->slots = NULL;
	tbl->nr_slots = 0;
	tbl->cap_slots = 0;
	tbl->free_head = SVOD_HANDLE_NO_SLOT;
	tbl->nr_live = 0;
	tbl->max_live = max_live;
	tbl->tag = tag;
}
EXPORT_SYMBOL_IF_KUNIT(svod_handle_table_init);

/**
 * svod_handle_table_fini() - free a handle table's slots
 * @tbl: the table; every handle should have been freed (warns otherwise:
 *	 the objects of live handles are the caller's to release first)
 *
 * Context: any; the caller serialises calls on @tbl.
 */
void svod_handle_table_fini(struct svod_handle_table *tbl)
{
	WARN_ON(tbl->nr_live);
	kfree(tbl->slots);
	tbl->slots = NULL;
	tbl->nr_slots = 0;
	tbl->cap_slots = 0;
	tbl->free_head = SVOD_HANDLE_NO_SLOT;
	tbl->nr_live = 0;
}
EXPORT_SYMBOL_IF_KUNIT(svod_handle_table_fini);

static int svod_handle_grow(struct svod_handle_table *tbl, gfp_t gfp)
{
	struct svod_handle_slot *slots;
	u32 cap;

	if (tbl->cap_slots >= SVOD_HANDLE_MAX_SLOTS / 2)
		cap = SVOD_HANDLE_MAX_SLOTS;
	else if (tbl->cap_slots)
		cap = tbl->cap_slots * 2;
	else
		cap = SVOD_HANDLE_FIRST_SLOTS;
	slots = krealloc_array(tbl->slots, cap, sizeof(*slots), gfp);
	if (!slots)
		return -ENOMEM;
	tbl->slots = slots;
	tbl->cap_slots = cap;
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
 * grow; -EINVAL if @obj is NULL (warns). On any error the table is unchanged.
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

	if (tbl->free_head != SVOD_HANDLE_NO_SLOT) {
		id = tbl->free_head;
		slot = &tbl->slots[id];
		tbl->free_head = slot->next_free;
	} else {
		if (tbl->nr_slots == SVOD_HANDLE_MAX_SLOTS)
			return -EMFILE;
		if (tbl->nr_slots == tbl->cap_slots) {
			ret = svod_handle_grow(tbl, gfp);
			if (ret)
				return ret;
		}
		id = tbl->nr_slots++;
		slot = &tbl->slots[id];
		slot->gen = 0;
		slot->retired = false;
	}
	slot->gen++;
	slot->obj = obj;
	slot->next_free = SVOD_HANDLE_NO_SLOT;
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
	slot = &tbl->slots[id];
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
 * (freed, stale or forged generation, another table's tag, a slot this
 * table never issued, a retired slot).
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
		slot->retired = true;
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
		slot = &tbl->slots[id];
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
 * Lets tests reach the generation wrap without 16 million allocations. Built
 * (and exported to svod_test.ko) only when the target kernel has KUnit, and
 * always in the userspace library.
 *
 * Context: any; the caller serialises calls on @tbl.
 * Return: 0 on success; -EINVAL if @slot is not a free slot or @gen is out
 * of range.
 */
int svod_handle_set_gen(struct svod_handle_table *tbl, u32 slot, u32 gen)
{
	if (slot >= tbl->nr_slots || tbl->slots[slot].obj ||
	    tbl->slots[slot].retired || gen < tbl->slots[slot].gen ||
	    gen >= SVOD_HANDLE_GEN_MAX)
		return -EINVAL;
	tbl->slots[slot].gen = gen;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(svod_handle_set_gen);
#endif
