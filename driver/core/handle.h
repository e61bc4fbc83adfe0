/* SPDX-License-Identifier: GPL-2.0 */
/*
 * svod handle table: slots with generations. A handle is a u64 that encodes
 * (generation, table tag, slot); it resolves only in the table that issued it,
 * only while that allocation is live.
 *
 *   bits [63:40] generation, 1..SVOD_HANDLE_GEN_MAX (0 is never issued, so
 *                the handle 0 never resolves)
 *   bits [39:24] tag of the issuing table
 *   bits [23:0]  slot
 *
 * Locking: none. The table is not thread-safe: the caller serialises every
 * call on one table (and holds its lock across them).
 */
#ifndef SVOD_CORE_HANDLE_H
#define SVOD_CORE_HANDLE_H

#include "compat.h"

/**
 * struct svod_handle_slot - one slot of a handle table
 * @obj: the live object, or NULL while the slot is free or retired
 * @gen: generation of the current (or last) occupant; 0 = never used
 * @next_free: index of the next free slot (valid while free)
 * @retired: the generation would wrap: the slot is never reused
 */
struct svod_handle_slot {
	void *obj;
	u32 gen;
	u32 next_free;
	bool retired;
};

/**
 * struct svod_handle_table - per-owner handle table
 * @slots: slot array, grown on demand
 * @nr_slots: slots in use (free, live or retired)
 * @cap_slots: slots allocated
 * @free_head: most recently freed slot, or SVOD_HANDLE_NO_SLOT
 * @nr_live: live handles
 * @max_live: bound on @nr_live
 * @tag: tag of this table, encoded in each handle it issues
 */
struct svod_handle_table {
	struct svod_handle_slot *slots;
	u32 nr_slots;
	u32 cap_slots;
	u32 free_head;
	u32 nr_live;
	u32 max_live;
	u16 tag;
};

#define SVOD_HANDLE_NO_SLOT	U32_MAX

#define SVOD_HANDLE_GEN_SHIFT	40
#define SVOD_HANDLE_TAG_SHIFT	24
#define SVOD_HANDLE_SLOT_MASK	0xffffffU
#define SVOD_HANDLE_TAG_MASK	0xffffU
#define SVOD_HANDLE_GEN_MAX	0xffffffU
/* Slots a table can ever have: every 24-bit slot id. */
#define SVOD_HANDLE_MAX_SLOTS	(SVOD_HANDLE_SLOT_MASK + 1)

static inline u64 svod_handle_make(u32 gen, u16 tag, u32 slot)
{
	return (u64)gen << SVOD_HANDLE_GEN_SHIFT |
	       (u64)tag << SVOD_HANDLE_TAG_SHIFT | slot;
}

static inline u32 svod_handle_gen(u64 handle)
{
	return handle >> SVOD_HANDLE_GEN_SHIFT;
}

static inline u16 svod_handle_tag(u64 handle)
{
	return (handle >> SVOD_HANDLE_TAG_SHIFT) & SVOD_HANDLE_TAG_MASK;
}

static inline u32 svod_handle_slot(u64 handle)
{
	return handle & SVOD_HANDLE_SLOT_MASK;
}

void svod_handle_table_init(struct svod_handle_table *tbl, u16 tag, u32 max_live);
void svod_handle_table_fini(struct svod_handle_table *tbl);
int svod_handle_alloc(struct svod_handle_table *tbl, void *obj, gfp_t gfp, u64 *handle);
void *svod_handle_lookup(const struct svod_handle_table *tbl, u64 handle);
int svod_handle_free(struct svod_handle_table *tbl, u64 handle, void **obj);
void *svod_handle_next(const struct svod_handle_table *tbl, u32 *pos, u64 *handle);

#if SVOD_CORE_TEST_HOOKS
int svod_handle_set_gen(struct svod_handle_table *tbl, u32 slot, u32 gen);
#endif

#endif /* SVOD_CORE_HANDLE_H */
