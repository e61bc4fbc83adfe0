/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * svod handle tables: slots with generations, and the registry of owner
 * tags that makes a handle of one table never resolve in another.
 *
 * A handle is a u64 with three fields, stable ABI (uapi.rst "Handles"):
 *
 *   bits [63:40] generation, 1..SVOD_HANDLE_GEN_MAX (0 is never issued, so
 *                the handle 0 never resolves)
 *   bits [39:20] owner tag of the issuing table
 *   bits [19:0]  slot (the handle's id)
 *
 * Every table holds a tag no other live table holds, and its generations
 * start above every generation any earlier holder of the tag issued (the
 * tag's floor). So no (tag, slot, generation) is ever issued twice: a
 * handle, live or stale, resolves in no table but the one that issued it,
 * and there only while live. A tag whose floor leaves no generation is
 * never handed out again.
 *
 * Locking: none. A table is not thread-safe: the caller serialises calls
 * on one table. The owner registry is one per system and is not
 * thread-safe either: the caller serialises svod_handle_table_init(),
 * svod_handle_table_fini() and the registry's own calls with one lock.
 * Alloc, lookup, free and iteration never touch the registry.
 */
#ifndef SVOD_CORE_HANDLE_H
#define SVOD_CORE_HANDLE_H

#include "compat.h"

#define SVOD_HANDLE_GEN_SHIFT	40
#define SVOD_HANDLE_TAG_SHIFT	20
#define SVOD_HANDLE_SLOT_MASK	0xfffffU
#define SVOD_HANDLE_TAG_MASK	0xfffffU
#define SVOD_HANDLE_GEN_MAX	0xffffffU
/* Slots a table can ever have: every 20-bit slot id. */
#define SVOD_HANDLE_MAX_SLOTS	(SVOD_HANDLE_SLOT_MASK + 1)
/* Owner tags: every 20-bit value. */
#define SVOD_HANDLE_NR_TAGS	(SVOD_HANDLE_TAG_MASK + 1)

#define SVOD_HANDLE_NO_SLOT	U32_MAX
/* next_free of a retired slot. */
#define SVOD_HANDLE_RETIRED	(U32_MAX - 1)

/* Slots per chunk of a table (one 4 KiB page on 64-bit). */
#define SVOD_HANDLE_CHUNK_SHIFT	8
#define SVOD_HANDLE_CHUNK	BIT(SVOD_HANDLE_CHUNK_SHIFT)
/* Tags per chunk of the registry. */
#define SVOD_HANDLE_TAG_CHUNK_SHIFT	12
#define SVOD_HANDLE_TAG_CHUNK	BIT(SVOD_HANDLE_TAG_CHUNK_SHIFT)
#define SVOD_HANDLE_TAG_CHUNKS	(SVOD_HANDLE_NR_TAGS / SVOD_HANDLE_TAG_CHUNK)

/**
 * struct svod_handle_slot - one slot of a handle table
 * @obj: the live object, or NULL while the slot is free or retired
 * @gen: generation of the current (or last) occupant; the table's base
 *	 while never used
 * @next_free: index of the next free slot while free; SVOD_HANDLE_RETIRED
 *	 once the generation would pass SVOD_HANDLE_GEN_MAX (never reused)
 */
struct svod_handle_slot {
	void *obj;
	u32 gen;
	u32 next_free;
};

/**
 * struct svod_handle_table - per-owner handle table
 * @chunks: directory of slot chunks (SVOD_HANDLE_CHUNK slots each); slot
 *	 i is chunks[i >> SVOD_HANDLE_CHUNK_SHIFT][i % SVOD_HANDLE_CHUNK]
 * @cap_chunks: entries in @chunks
 * @nr_slots: slots in use (free, live or retired)
 * @free_head: most recently freed slot, or SVOD_HANDLE_NO_SLOT
 * @nr_live: live handles
 * @max_live: bound on @nr_live
 * @tag: owner tag, encoded in each handle the table issues
 * @base: the tag's floor when the table took it: generations are above it
 * @top_gen: highest generation issued (@base while none)
 */
struct svod_handle_table {
	struct svod_handle_slot **chunks;
	u32 cap_chunks;
	u32 nr_slots;
	u32 free_head;
	u32 nr_live;
	u32 max_live;
	u32 tag;
	u32 base;
	u32 top_gen;
};

/**
 * struct svod_handle_owners - registry of owner tags, one per system
 * @floor: per tag, in chunks of SVOD_HANDLE_TAG_CHUNK allocated when first
 *	 reached: bit 31 set while a table holds the tag, bits [23:0] the
 *	 highest generation any table that held it issued
 * @next: the tag tried first by the next svod_handle_table_init()
 * @nr_live: tags held by live tables
 */
struct svod_handle_owners {
	u32 *floor[SVOD_HANDLE_TAG_CHUNKS];
	u32 next;
	u32 nr_live;
};

/* Slot @id of @tbl, which must be below @tbl->nr_slots. */
static inline struct svod_handle_slot *svod_handle_at(const struct svod_handle_table *tbl,
						      u32 id)
{
	return &tbl->chunks[id >> SVOD_HANDLE_CHUNK_SHIFT][id & (SVOD_HANDLE_CHUNK - 1)];
}

static inline u64 svod_handle_make(u32 gen, u32 tag, u32 slot)
{
	return (u64)gen << SVOD_HANDLE_GEN_SHIFT |
	       (u64)(tag & SVOD_HANDLE_TAG_MASK) << SVOD_HANDLE_TAG_SHIFT |
	       (slot & SVOD_HANDLE_SLOT_MASK);
}

static inline u32 svod_handle_gen(u64 handle)
{
	return handle >> SVOD_HANDLE_GEN_SHIFT;
}

static inline u32 svod_handle_tag(u64 handle)
{
	return (handle >> SVOD_HANDLE_TAG_SHIFT) & SVOD_HANDLE_TAG_MASK;
}

static inline u32 svod_handle_slot(u64 handle)
{
	return handle & SVOD_HANDLE_SLOT_MASK;
}

void svod_handle_owners_init(struct svod_handle_owners *owners);
void svod_handle_owners_fini(struct svod_handle_owners *owners);
int svod_handle_table_init(struct svod_handle_table *tbl,
			   struct svod_handle_owners *owners, u32 max_live,
			   gfp_t gfp);
void svod_handle_table_fini(struct svod_handle_table *tbl,
			    struct svod_handle_owners *owners);
int svod_handle_alloc(struct svod_handle_table *tbl, void *obj, gfp_t gfp, u64 *handle);
void *svod_handle_lookup(const struct svod_handle_table *tbl, u64 handle);
int svod_handle_free(struct svod_handle_table *tbl, u64 handle, void **obj);
void *svod_handle_next(const struct svod_handle_table *tbl, u32 *pos, u64 *handle);

#if SVOD_CORE_TEST_HOOKS
int svod_handle_set_gen(struct svod_handle_table *tbl, u32 slot, u32 gen);
void svod_handle_owners_set_next(struct svod_handle_owners *owners, u32 tag);
#endif

#endif /* SVOD_CORE_HANDLE_H */
